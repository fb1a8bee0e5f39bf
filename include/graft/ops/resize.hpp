// graft/ops/resize.hpp — image resizing as TF's CPU kernels do it (resize_*_op.cc and
// image_resizer_state.h): ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic, ResizeArea and the
// gradients ResizeBilinearGrad / ResizeNearestNeighborGrad. Images are NHWC; the sampling
// arithmetic is float32 whatever the input dtype, as in TF.
//
//   tensor y = ops::resize_bilinear(img, tensor::from_vector<std::int32_t>({8, 8}), {.align_corners = true});
//   tensor dx = ops::resize_bilinear_grad(dy, img, {.align_corners = true});
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/ops/detail/op_support.hpp"

namespace graft::ops {

/// TF's align_corners / half_pixel_centers attrs of the resize ops.
struct resize_options {
    bool align_corners = false;
    bool half_pixel_centers = false;
};

namespace resize_detail {

using op_detail::cat;

/// TF's CalculateResizeScale: in/out, or (in-1)/(out-1) when aligning corners.
inline float resize_scale(std::int64_t in, std::int64_t out, bool align_corners) {
    return (align_corners && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                      : static_cast<float>(in) / static_cast<float>(out);
}

/// Pixel x of the output in input coordinates (TF's HalfPixelScaler / LegacyScaler).
inline float scaled(std::int64_t x, float scale, bool half_pixel) {
    return half_pixel ? (static_cast<float>(x) + 0.5f) * scale - 0.5f : static_cast<float>(x) * scale;
}

/// Sizes of one resize (TF's ImageResizerState).
struct geometry {
    std::int64_t batch = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0, channels = 0;
    float h_scale = 1, w_scale = 1;
};

inline void check_options(std::string_view op, const resize_options& o) {
    if (o.half_pixel_centers && o.align_corners) {
        throw invalid_argument_error(cat(op, ": half_pixel_centers is true, so align_corners must be false"));
    }
}

/// Validates images [batch, h, w, c] and size (int32 [2], positive) as TF does.
inline geometry forward_geometry(std::string_view op, const tensor& images, const tensor& size,
                                 const resize_options& o) {
    check_options(op, o);
    op_detail::require_input(op, images, "images");
    op_detail::require_input(op, size, "size");
    if (images.rank() != 4) {
        throw shape_error(cat(op, ": images must be 4-D [batch, height, width, channels] but has shape ",
                              images.shape().str()));
    }
    if (size.rank() != 1 || size.num_elements() != 2) {
        throw shape_error(cat(op, ": size must be a vector of 2 elements (new_height, new_width) but has shape ",
                              size.shape().str()));
    }
    auto sz = op_detail::int_list(op, size, "size");
    geometry g;
    g.batch = images.dim(0);
    g.in_h = images.dim(1);
    g.in_w = images.dim(2);
    g.channels = images.dim(3);
    g.out_h = sz[0];
    g.out_w = sz[1];
    if (g.channels <= 0) throw invalid_argument_error(cat(op, ": images must have at least one channel, got ", images.shape().str()));
    if (g.in_h <= 0 || g.in_w <= 0) {
        throw invalid_argument_error(cat(op, ": images must have a non-zero height and width, got ", images.shape().str()));
    }
    if (g.out_h <= 0 || g.out_w <= 0) {
        throw invalid_argument_error(cat(op, ": size must be positive, got [", g.out_h, ",", g.out_w, "]"));
    }
    g.h_scale = resize_scale(g.in_h, g.out_h, o.align_corners);
    g.w_scale = resize_scale(g.in_w, g.out_w, o.align_corners);
    return g;
}

/// The input as float32 (what TF's kernels compute in), a copy only when it is another dtype.
inline tensor as_float(std::string_view op, const tensor& t) {
    if (!is_floating(t.type()) && !is_integer(t.type())) {
        throw invalid_argument_error(cat(op, ": images must be a real number dtype but is ", t.describe()));
    }
    return base_type(t.type()) == dtype::float32 ? t : cast(t, dtype::float32);
}

/// One output coordinate's two input neighbours and the weight of the upper one.
struct lerp_point {
    std::int64_t lower = 0, upper = 0;
    float lerp = 0;
};

inline std::vector<lerp_point> lerp_points(std::int64_t out, std::int64_t in, float scale, bool half_pixel) {
    std::vector<lerp_point> v(static_cast<std::size_t>(out));
    for (std::int64_t i = 0; i < out; ++i) {
        const float x = scaled(i, scale, half_pixel);
        const float xf = std::floor(x);
        auto& p = v[static_cast<std::size_t>(i)];
        p.lower = std::max(static_cast<std::int64_t>(xf), std::int64_t{0});
        p.upper = std::min(static_cast<std::int64_t>(std::ceil(x)), in - 1);
        p.lerp = x - xf;
    }
    return v;
}

/// The input index nearest output index i (TF's nearest-neighbour rule; its half-pixel scaler
/// does not subtract 0.5).
inline std::int64_t nearest(std::int64_t i, float scale, std::int64_t in, const resize_options& o) {
    const float x = o.half_pixel_centers ? (static_cast<float>(i) + 0.5f) * scale : static_cast<float>(i) * scale;
    std::int64_t r = o.align_corners ? static_cast<std::int64_t>(std::round(x)) : static_cast<std::int64_t>(std::floor(x));
    r = std::min(r, in - 1);
    if (o.half_pixel_centers) r = std::max(r, std::int64_t{0});
    return r;
}

/// Keys' cubic convolution weights sampled at 1/1024 steps (TF's GetCoeffsTable): A = -0.5
/// with half-pixel centers, else the legacy -0.75.
constexpr int cubic_table_size = 1024;
inline const std::vector<float>& cubic_table(bool keys) {
    auto make = [](float a) {
        std::vector<float> t(2 * (cubic_table_size + 1));
        for (int i = 0; i <= cubic_table_size; ++i) {
            float x = static_cast<float>(i * 1.0 / cubic_table_size);
            t[static_cast<std::size_t>(i * 2)] = ((a + 2) * x - (a + 3)) * x * x + 1;
            x += 1.0f;
            t[static_cast<std::size_t>(i * 2 + 1)] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
        }
        return t;
    };
    static const std::vector<float> keys_table = make(-0.5f), legacy_table = make(-0.75f);
    return keys ? keys_table : legacy_table;
}

struct cubic_point {
    std::array<float, 4> w{};
    std::array<std::int64_t, 4> idx{};
};

inline std::vector<cubic_point> cubic_points(std::int64_t out, std::int64_t in, float scale, bool half_pixel) {
    const auto& tab = cubic_table(half_pixel);
    auto bound = [in](std::int64_t v) { return std::min(in - 1, std::max(std::int64_t{0}, v)); };
    std::vector<cubic_point> v(static_cast<std::size_t>(out));
    for (std::int64_t i = 0; i < out; ++i) {
        const float xf = scaled(i, scale, half_pixel);
        const auto loc = static_cast<std::int64_t>(std::floor(xf));
        const float delta = xf - static_cast<float>(loc);
        const auto off = static_cast<std::size_t>(std::lrint(delta * cubic_table_size));
        const auto n = static_cast<std::size_t>(cubic_table_size);
        auto& p = v[static_cast<std::size_t>(i)];
        const std::array<float, 4> w{tab[off * 2 + 1], tab[off * 2], tab[(n - off) * 2], tab[(n - off) * 2 + 1]};
        for (int k = 0; k < 4; ++k) {
            const std::int64_t want = loc - 1 + k;
            p.idx[static_cast<std::size_t>(k)] = bound(want);
            // Half-pixel (Keys) sampling drops taps outside the image and renormalises.
            p.w[static_cast<std::size_t>(k)] =
                half_pixel && p.idx[static_cast<std::size_t>(k)] != want ? 0.0f : w[static_cast<std::size_t>(k)];
        }
        if (half_pixel) {
            const float sum = p.w[0] + p.w[1] + p.w[2] + p.w[3];
            if (std::abs(sum) >= 1000.0f * std::numeric_limits<float>::min()) {
                const float inv = 1.0f / sum;
                for (auto& x : p.w) x *= inv;
            }
        }
    }
    return v;
}

}  // namespace resize_detail

/// ResizeBilinear: images [b,h,w,c] (any real dtype) to float32 [b, size[0], size[1], c].
/// Throws invalid_argument_error / shape_error for a bad rank, size or option pair.
inline tensor resize_bilinear(const tensor& images, const tensor& size, const resize_options& o = {}) {
    using namespace resize_detail;
    const auto g = forward_geometry("ResizeBilinear", images, size, o);
    const tensor in = as_float("ResizeBilinear", images);
    tensor out = tensor::uninitialized(dtype::float32, shape{g.batch, g.out_h, g.out_w, g.channels});
    const auto ys = lerp_points(g.out_h, g.in_h, g.h_scale, o.half_pixel_centers);
    const auto xs = lerp_points(g.out_w, g.in_w, g.w_scale, o.half_pixel_centers);
    const float* src = in.data<float>();
    float* dst = out.data<float>();
    const std::int64_t c = g.channels;
    op_detail::parallel_for(g.batch * g.out_h, static_cast<double>(g.out_w * c) * 20.0, static_cast<double>(g.out_w * c) * 10.0,
                            [&](std::int64_t first, std::int64_t last) {
        for (std::int64_t by = first; by < last; ++by) {
            const std::int64_t b = by / g.out_h, y = by % g.out_h;
            const auto& yp = ys[static_cast<std::size_t>(y)];
            const float* top = src + (b * g.in_h + yp.lower) * g.in_w * c;
            const float* bot = src + (b * g.in_h + yp.upper) * g.in_w * c;
            float* o_row = dst + by * g.out_w * c;
            for (std::int64_t x = 0; x < g.out_w; ++x) {
                const auto& xp = xs[static_cast<std::size_t>(x)];
                for (std::int64_t ch = 0; ch < c; ++ch) {
                    const float tl = top[xp.lower * c + ch], tr = top[xp.upper * c + ch];
                    const float bl = bot[xp.lower * c + ch], br = bot[xp.upper * c + ch];
                    const float t = tl + (tr - tl) * xp.lerp;
                    const float bo = bl + (br - bl) * xp.lerp;
                    o_row[x * c + ch] = t + (bo - t) * yp.lerp;
                }
            }
        }
    });
    return out;
}

/// ResizeBilinearGrad: grads (float32 [b, rh, rw, c]) spread back onto original_image's shape,
/// in original_image's dtype (float32/float64/float16). Throws invalid_argument_error /
/// shape_error for bad ranks, dtypes or sizes.
inline tensor resize_bilinear_grad(const tensor& grads, const tensor& original_image, const resize_options& o = {}) {
    using namespace resize_detail;
    const char* op = "ResizeBilinearGrad";
    check_options(op, o);
    op_detail::require_input(op, grads, "grads");
    op_detail::require_input(op, original_image, "original_image");
    op_detail::require_dtype(op, grads, "grads", dtype::float32);
    if (grads.rank() != 4 || original_image.rank() != 4) {
        throw shape_error(cat(op, ": grads and original_image must be 4-D but have shapes ", grads.shape().str(),
                              " and ", original_image.shape().str()));
    }
    if (!is_floating(original_image.type())) {
        throw invalid_argument_error(cat(op, ": original_image must be a float dtype but is ", original_image.describe()));
    }
    const std::int64_t b = grads.dim(0), rh = grads.dim(1), rw = grads.dim(2), c = grads.dim(3);
    const std::int64_t oh = original_image.dim(1), ow = original_image.dim(2);
    if (rh <= 0 || rw <= 0 || oh <= 0 || ow <= 0) {
        throw invalid_argument_error(cat(op, ": resized and original sizes must be positive, got ", grads.shape().str(),
                                         " and ", original_image.shape().str()));
    }
    tensor acc(dtype::float32, shape{b, oh, ow, c});
    const auto ys = lerp_points(rh, oh, resize_scale(oh, rh, o.align_corners), o.half_pixel_centers);
    const auto xs = lerp_points(rw, ow, resize_scale(ow, rw, o.align_corners), o.half_pixel_centers);
    const float* g = grads.data<float>();
    float* d = acc.data<float>();
    for (std::int64_t bi = 0; bi < b; ++bi) {
        for (std::int64_t y = 0; y < rh; ++y) {
            const auto& yp = ys[static_cast<std::size_t>(y)];
            const float iy = 1.0f - yp.lerp;
            for (std::int64_t x = 0; x < rw; ++x) {
                const auto& xp = xs[static_cast<std::size_t>(x)];
                const float ix = 1.0f - xp.lerp;
                const float* gp = g + ((bi * rh + y) * rw + x) * c;
                float* top = d + (bi * oh + yp.lower) * ow * c;
                float* bot = d + (bi * oh + yp.upper) * ow * c;
                for (std::int64_t ch = 0; ch < c; ++ch) {
                    const float v = gp[ch];
                    top[xp.lower * c + ch] += v * iy * ix;
                    top[xp.upper * c + ch] += v * iy * xp.lerp;
                    bot[xp.lower * c + ch] += v * yp.lerp * ix;
                    bot[xp.upper * c + ch] += v * yp.lerp * xp.lerp;
                }
            }
        }
    }
    return base_type(original_image.type()) == dtype::float32 ? acc : cast(acc, base_type(original_image.type()));
}

/// ResizeNearestNeighbor: images [b,h,w,c] of any dtype to [b, size[0], size[1], c] of the same
/// dtype. Throws invalid_argument_error / shape_error for a bad rank, size or option pair.
inline tensor resize_nearest_neighbor(const tensor& images, const tensor& size, const resize_options& o = {}) {
    using namespace resize_detail;
    const auto g = forward_geometry("ResizeNearestNeighbor", images, size, o);
    tensor out = tensor::uninitialized(images.type(), shape{g.batch, g.out_h, g.out_w, g.channels});
    std::vector<std::int64_t> ys(static_cast<std::size_t>(g.out_h)), xs(static_cast<std::size_t>(g.out_w));
    for (std::int64_t y = 0; y < g.out_h; ++y) ys[static_cast<std::size_t>(y)] = nearest(y, g.h_scale, g.in_h, o);
    for (std::int64_t x = 0; x < g.out_w; ++x) xs[static_cast<std::size_t>(x)] = nearest(x, g.w_scale, g.in_w, o);
    op_detail::visit_element_bytes(images.type(), "ResizeNearestNeighbor", [&](auto tag) {
        using U = decltype(tag);
        const U* src = op_detail::elements_as<U>(images);
        U* dst = op_detail::elements_as<U>(out);
        const std::int64_t c = g.channels;
        for (std::int64_t b = 0; b < g.batch; ++b) {
            for (std::int64_t y = 0; y < g.out_h; ++y) {
                const U* row = src + (b * g.in_h + ys[static_cast<std::size_t>(y)]) * g.in_w * c;
                U* o_row = dst + (b * g.out_h + y) * g.out_w * c;
                for (std::int64_t x = 0; x < g.out_w; ++x) {
                    std::copy(row + xs[static_cast<std::size_t>(x)] * c, row + (xs[static_cast<std::size_t>(x)] + 1) * c,
                              o_row + x * c);
                }
            }
        }
        return 0;
    });
    return out;
}

/// ResizeNearestNeighborGrad: grads [b, rh, rw, c] summed into [b, size[0], size[1], c] at the
/// pixels the forward op read (same dtype; float32/float64/float16/int32 and other reals).
/// Throws invalid_argument_error / shape_error for bad ranks or sizes.
inline tensor resize_nearest_neighbor_grad(const tensor& grads, const tensor& size, const resize_options& o = {}) {
    using namespace resize_detail;
    const char* op = "ResizeNearestNeighborGrad";
    check_options(op, o);
    op_detail::require_input(op, grads, "grads");
    if (grads.rank() != 4) throw shape_error(cat(op, ": grads must be 4-D but has shape ", grads.shape().str()));
    if (size.rank() != 1 || size.num_elements() != 2) {
        throw shape_error(cat(op, ": size must be a vector of 2 elements but has shape ", size.shape().str()));
    }
    auto sz = op_detail::int_list(op, size, "size");
    const std::int64_t b = grads.dim(0), rh = grads.dim(1), rw = grads.dim(2), c = grads.dim(3);
    const std::int64_t oh = sz[0], ow = sz[1];
    if (oh <= 0 || ow <= 0 || rh <= 0 || rw <= 0) {
        throw invalid_argument_error(cat(op, ": sizes must be positive, got grads ", grads.shape().str(), " and size [",
                                         oh, ",", ow, "]"));
    }
    const float hs = resize_scale(oh, rh, o.align_corners), ws = resize_scale(ow, rw, o.align_corners);
    tensor d = cast(grads, dtype::float64);
    tensor acc(dtype::float64, shape{b, oh, ow, c});
    const double* gp = d.data<double>();
    double* ap = acc.data<double>();
    for (std::int64_t bi = 0; bi < b; ++bi) {
        for (std::int64_t y = 0; y < rh; ++y) {
            const std::int64_t oy = nearest(y, hs, oh, o);
            for (std::int64_t x = 0; x < rw; ++x) {
                const std::int64_t ox = nearest(x, ws, ow, o);
                for (std::int64_t ch = 0; ch < c; ++ch) {
                    ap[((bi * oh + oy) * ow + ox) * c + ch] += gp[((bi * rh + y) * rw + x) * c + ch];
                }
            }
        }
    }
    return cast(acc, base_type(grads.type()));
}

/// ResizeBicubic: images [b,h,w,c] (any real dtype) to float32 [b, size[0], size[1], c] with
/// TF's cubic kernels (Keys A=-0.5 and edge renormalisation with half_pixel_centers, else the
/// legacy A=-0.75 with clamped taps). Throws as resize_bilinear.
inline tensor resize_bicubic(const tensor& images, const tensor& size, const resize_options& o = {}) {
    using namespace resize_detail;
    const auto g = forward_geometry("ResizeBicubic", images, size, o);
    const tensor in = as_float("ResizeBicubic", images);
    tensor out = tensor::uninitialized(dtype::float32, shape{g.batch, g.out_h, g.out_w, g.channels});
    const auto ys = cubic_points(g.out_h, g.in_h, g.h_scale, o.half_pixel_centers);
    const auto xs = cubic_points(g.out_w, g.in_w, g.w_scale, o.half_pixel_centers);
    const float* src = in.data<float>();
    float* dst = out.data<float>();
    const std::int64_t c = g.channels;
    for (std::int64_t b = 0; b < g.batch; ++b) {
        for (std::int64_t y = 0; y < g.out_h; ++y) {
            const auto& yp = ys[static_cast<std::size_t>(y)];
            std::array<const float*, 4> rows{};
            for (std::size_t k = 0; k < 4; ++k) rows[k] = src + (b * g.in_h + yp.idx[k]) * g.in_w * c;
            float* o_row = dst + (b * g.out_h + y) * g.out_w * c;
            for (std::int64_t x = 0; x < g.out_w; ++x) {
                const auto& xp = xs[static_cast<std::size_t>(x)];
                for (std::int64_t ch = 0; ch < c; ++ch) {
                    // Down each of the 4 source columns first, then across them (TF's order).
                    std::array<float, 4> col{};
                    for (std::size_t k = 0; k < 4; ++k) {
                        const std::int64_t p = xp.idx[k] * c + ch;
                        col[k] = rows[0][p] * yp.w[0] + rows[1][p] * yp.w[1] + rows[2][p] * yp.w[2] + rows[3][p] * yp.w[3];
                    }
                    o_row[x * c + ch] = col[0] * xp.w[0] + col[1] * xp.w[1] + col[2] * xp.w[2] + col[3] * xp.w[3];
                }
            }
        }
    }
    return out;
}

/// ResizeArea: each output pixel is the area-weighted mean of the input pixels its footprint
/// covers (float32 out, any real dtype in). Throws as resize_bilinear.
inline tensor resize_area(const tensor& images, const tensor& size, bool align_corners = false) {
    using namespace resize_detail;
    const auto g = forward_geometry("ResizeArea", images, size, {align_corners, false});
    const tensor in = as_float("ResizeArea", images);
    tensor out = tensor::uninitialized(dtype::float32, shape{g.batch, g.out_h, g.out_w, g.channels});
    // The [start, end) input span of each output coordinate with the weights of its cells.
    struct span {
        std::vector<std::int64_t> idx;
        std::vector<float> w;
    };
    auto spans = [](std::int64_t out_n, std::int64_t in_n, float scale) {
        std::vector<span> v(static_cast<std::size_t>(out_n));
        for (std::int64_t i = 0; i < out_n; ++i) {
            const float a = static_cast<float>(i) * scale, e = static_cast<float>(i + 1) * scale;
            const auto start = static_cast<std::int64_t>(std::floor(a)), end = static_cast<std::int64_t>(std::ceil(e));
            auto& s = v[static_cast<std::size_t>(i)];
            for (std::int64_t k = start; k < end; ++k) {
                const auto kf = static_cast<float>(k);
                float w;
                if (kf < a) w = kf + 1 > e ? scale : kf + 1 - a;
                else w = kf + 1 > e ? e - kf : 1.0f;
                s.idx.push_back(std::min(k, in_n - 1));
                s.w.push_back(w);
            }
        }
        return v;
    };
    const auto ys = spans(g.out_h, g.in_h, g.h_scale), xs = spans(g.out_w, g.in_w, g.w_scale);
    const float norm = 1.0f / (g.h_scale * g.w_scale);
    const float* src = in.data<float>();
    float* dst = out.data<float>();
    const std::int64_t c = g.channels;
    for (std::int64_t b = 0; b < g.batch; ++b) {
        for (std::int64_t y = 0; y < g.out_h; ++y) {
            const auto& ys_ = ys[static_cast<std::size_t>(y)];
            for (std::int64_t x = 0; x < g.out_w; ++x) {
                const auto& xs_ = xs[static_cast<std::size_t>(x)];
                for (std::int64_t ch = 0; ch < c; ++ch) {
                    float sum = 0;
                    for (std::size_t i = 0; i < ys_.idx.size(); ++i) {
                        const float* row = src + (b * g.in_h + ys_.idx[i]) * g.in_w * c;
                        float sx = 0;
                        for (std::size_t j = 0; j < xs_.idx.size(); ++j) sx += row[xs_.idx[j] * c + ch] * xs_.w[j];
                        sum += sx * ys_.w[i];
                    }
                    dst[((b * g.out_h + y) * g.out_w + x) * c + ch] = sum * norm;
                }
            }
        }
    }
    return out;
}

}  // namespace graft::ops
