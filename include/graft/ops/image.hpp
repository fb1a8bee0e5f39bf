// graft/ops/image.hpp — colour-space and per-pixel image ops as TF's CPU kernels compute them:
// RGBToHSV, HSVToRGB, AdjustContrastv2, AdjustSaturation, AdjustHue, DrawBoundingBoxesV2.
// Channels are the last dim; float16 images are computed in float32 and rounded back.
//
//   tensor hsv = ops::rgb_to_hsv(rgb);                 // [..., 3] -> [..., 3], h/s/v in [0, 1]
//   tensor c = ops::adjust_contrast(images, 2.0f);     // (x - mean) * 2 + mean per image/channel
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/ops/detail/op_support.hpp"

namespace graft::ops {

namespace image_detail {

using op_detail::cat;

/// Calls f(T{}) with T = float or double for a float16/float32/float64 tensor `x`, passing the
/// tensor converted to T; the result is converted back to x's dtype.
template <class F>
tensor on_float(std::string_view op, const tensor& x, F&& f) {
    op_detail::require_input(op, x, "images");
    const dtype t = base_type(x.type());
    if (t == dtype::float64) return f(double{}, x);
    if (t == dtype::float32) return f(float{}, x);
    if (t == dtype::float16 || t == dtype::bfloat16) return cast(f(float{}, cast(x, dtype::float32)), t);
    throw invalid_argument_error(cat(op, ": images must be float16, float32 or float64 but is ", x.describe()));
}

inline void require_rgb(std::string_view op, const tensor& x) {
    if (x.rank() < 1 || x.dim(x.rank() - 1) != 3) {
        throw shape_error(cat(op, ": the last dim of images must be 3 (the colour channels) but the shape is ",
                              x.shape().str()));
    }
}

/// TF's per-pixel RGB -> HSV (colorspace_op.h); h in [0, 1).
template <class T>
void rgb_to_hsv_px(T r, T g, T b, T& h, T& s, T& v) {
    const T vv = std::max(r, std::max(g, b));
    const T range = vv - std::min(r, std::min(g, b));
    s = vv > T(0) ? range / vv : T(0);
    const T norm = T(1) / (T(6) * range);
    T hh;
    if (r == vv) hh = norm * (g - b);
    else if (g == vv) hh = norm * (b - r) + T(2) / T(6);
    else hh = norm * (r - g) + T(4) / T(6);
    if (!(range > T(0))) hh = T(0);
    if (hh < T(0)) hh += T(1);
    h = hh;
    v = vv;
}

/// TF's HSVToRGB kernel: piecewise-linear channel ramps of 6h.
template <class T>
void hsv_to_rgb_px(T h, T s, T v, T& r, T& g, T& b) {
    auto clamp01 = [](T x) { return std::min(T(1), std::max(T(0), x)); };
    const T dh = h * T(6);
    const T dr = clamp01(std::abs(dh - T(3)) - T(1));
    const T dg = clamp01(T(2) - std::abs(dh - T(2)));
    const T db = clamp01(T(2) - std::abs(dh - T(4)));
    const T one_minus_s = T(1) - s;
    r = (one_minus_s + s * dr) * v;
    g = (one_minus_s + s * dg) * v;
    b = (one_minus_s + s * db) * v;
}

/// The HSV -> RGB of TF's adjust_saturation / adjust_hue kernels (sector switch on int(6h)).
inline void hsv_sector_to_rgb(float h, float s, float v, float& r, float& g, float& b) {
    const float c = s * v, m = v - c, dh = h * 6;
    const int sector = static_cast<int>(dh);
    float fm = dh;
    while (fm <= 0) fm += 2.0f;
    while (fm >= 2.0f) fm -= 2.0f;
    const float x = c * (1 - std::abs(fm - 1));
    float rr = 0, gg = 0, bb = 0;
    switch (sector) {
        case 0: rr = c; gg = x; break;
        case 1: rr = x; gg = c; break;
        case 2: gg = c; bb = x; break;
        case 3: gg = x; bb = c; break;
        case 4: rr = x; bb = c; break;
        case 5: rr = c; bb = x; break;
        default: break;
    }
    r = rr + m;
    g = gg + m;
    b = bb + m;
}

/// Applies f(h, s, v) -> (h, s, v) to every pixel of float32-ish images [..., 3].
template <class F>
tensor map_hsv(std::string_view op, const tensor& images, F&& f) {
    require_rgb(op, images);
    return on_float(op, images, [&](auto, const tensor& x) {
        const tensor xf = base_type(x.type()) == dtype::float32 ? x : cast(x, dtype::float32);
        tensor out = tensor::uninitialized(dtype::float32, x.shape());
        const float* p = xf.data<float>();
        float* o = out.data<float>();
        const std::int64_t n = x.num_elements() / 3;
        for (std::int64_t i = 0; i < n; ++i) {
            float h, s, v;
            rgb_to_hsv_px(p[3 * i], p[3 * i + 1], p[3 * i + 2], h, s, v);
            f(h, s, v);
            hsv_sector_to_rgb(h, s, v, o[3 * i], o[3 * i + 1], o[3 * i + 2]);
        }
        return base_type(x.type()) == dtype::float32 ? out : cast(out, x.type());
    });
}

inline float float_scalar(std::string_view op, const tensor& t, std::string_view what) {
    op_detail::require_input(op, t, what);
    if (t.num_elements() != 1 || t.rank() > 1) {
        throw shape_error(cat(op, ": ", what, " must be a scalar but has shape ", t.shape().str()));
    }
    return static_cast<float>(cast(t, dtype::float64).data<double>()[0]);
}

}  // namespace image_detail

/// RGBToHSV: images [..., 3] (float16/32/64) to hue, saturation, value in [0, 1]. Throws
/// shape_error when the last dim is not 3, invalid_argument_error for another dtype.
inline tensor rgb_to_hsv(const tensor& images) {
    image_detail::require_rgb("RGBToHSV", images);
    return image_detail::on_float("RGBToHSV", images, [](auto tag, const tensor& x) {
        using T = decltype(tag);
        tensor out = tensor::uninitialized(x.type(), x.shape());
        const T* p = x.data<T>();
        T* o = out.data<T>();
        for (std::int64_t i = 0, n = x.num_elements() / 3; i < n; ++i) {
            image_detail::rgb_to_hsv_px(p[3 * i], p[3 * i + 1], p[3 * i + 2], o[3 * i], o[3 * i + 1], o[3 * i + 2]);
        }
        return out;
    });
}

/// HSVToRGB: the inverse of rgb_to_hsv. Throws as rgb_to_hsv.
inline tensor hsv_to_rgb(const tensor& images) {
    image_detail::require_rgb("HSVToRGB", images);
    return image_detail::on_float("HSVToRGB", images, [](auto tag, const tensor& x) {
        using T = decltype(tag);
        tensor out = tensor::uninitialized(x.type(), x.shape());
        const T* p = x.data<T>();
        T* o = out.data<T>();
        for (std::int64_t i = 0, n = x.num_elements() / 3; i < n; ++i) {
            image_detail::hsv_to_rgb_px(p[3 * i], p[3 * i + 1], p[3 * i + 2], o[3 * i], o[3 * i + 1], o[3 * i + 2]);
        }
        return out;
    });
}

/// AdjustContrastv2: per image and channel, (x - mean) * factor + mean over the [h, w] dims of
/// images [..., h, w, c] (rank >= 3). Throws shape_error for rank < 3 or a non-scalar factor.
inline tensor adjust_contrast(const tensor& images, const tensor& contrast_factor) {
    const char* op = "AdjustContrastv2";
    op_detail::require_input(op, images, "images");
    if (images.rank() < 3) {
        throw shape_error(image_detail::cat(op, ": images must be at least 3-D [..., height, width, channels] but has shape ",
                                            images.shape().str()));
    }
    const float factor = image_detail::float_scalar(op, contrast_factor, "contrast_factor");
    return image_detail::on_float(op, images, [&](auto tag, const tensor& x) {
        using T = decltype(tag);
        const int r = x.rank();
        const std::int64_t c = x.dim(r - 1), hw = x.dim(r - 2) * x.dim(r - 3);
        const std::int64_t batch = hw * c == 0 ? 0 : x.num_elements() / (hw * c);
        tensor out = tensor::uninitialized(x.type(), x.shape());
        const T* p = x.data<T>();
        T* o = out.data<T>();
        std::vector<T> mean(static_cast<std::size_t>(c));
        for (std::int64_t b = 0; b < batch; ++b) {
            std::fill(mean.begin(), mean.end(), T(0));
            const T* img = p + b * hw * c;
            for (std::int64_t i = 0; i < hw; ++i)
                for (std::int64_t ch = 0; ch < c; ++ch) mean[static_cast<std::size_t>(ch)] += img[i * c + ch];
            for (auto& m : mean) m /= static_cast<T>(hw);
            T* oi = o + b * hw * c;
            for (std::int64_t i = 0; i < hw; ++i) {
                for (std::int64_t ch = 0; ch < c; ++ch) {
                    const T m = mean[static_cast<std::size_t>(ch)];
                    oi[i * c + ch] = (img[i * c + ch] - m) * static_cast<T>(factor) + m;
                }
            }
        }
        return out;
    });
}

/// AdjustSaturation: saturation scaled by `scale` and clamped to [0, 1] in HSV space. Throws as
/// rgb_to_hsv, and shape_error for a non-scalar scale.
inline tensor adjust_saturation(const tensor& images, const tensor& scale) {
    const float s = image_detail::float_scalar("AdjustSaturation", scale, "scale");
    return image_detail::map_hsv("AdjustSaturation", images, [s](float&, float& sat, float&) {
        sat = std::min(1.0f, std::max(0.0f, sat * s));
    });
}

/// AdjustHue: hue rotated by `delta` (wrapped into [0, 1)) in HSV space. Throws as
/// adjust_saturation.
inline tensor adjust_hue(const tensor& images, const tensor& delta) {
    const float d = image_detail::float_scalar("AdjustHue", delta, "delta");
    return image_detail::map_hsv("AdjustHue", images, [d](float& h, float&, float&) {
        h = std::fmod(h + d, 1.0f);
        if (h < 0) h += 1.0f;
    });
}

/// DrawBoundingBoxes(V2): a copy of images [b, h, w, depth] with each box of boxes [b, n, 4]
/// (y_min, x_min, y_max, x_max in [0, 1]) outlined one pixel wide in colours [k, >= depth]
/// cycled by box (TF's ten default colours when colours is empty or absent). Throws shape_error
/// for bad ranks or too few colour channels.
inline tensor draw_bounding_boxes(const tensor& images, const tensor& boxes, const tensor& colors = {}) {
    const char* op = "DrawBoundingBoxesV2";
    using image_detail::cat;
    op_detail::require_input(op, images, "images");
    op_detail::require_input(op, boxes, "boxes");
    if (images.rank() != 4) throw shape_error(cat(op, ": images must be 4-D but has shape ", images.shape().str()));
    const std::int64_t batch = images.dim(0), height = images.dim(1), width = images.dim(2), depth = images.dim(3);
    if (depth != 1 && depth != 3 && depth != 4) {
        throw invalid_argument_error(cat(op, ": images must have 1 (grey), 3 (RGB) or 4 (RGBA) channels but have ", depth));
    }
    if (boxes.rank() != 3 || boxes.dim(2) != 4 || boxes.dim(0) != batch) {
        throw shape_error(cat(op, ": boxes must be [batch ", batch, ", num_boxes, 4] but has shape ", boxes.shape().str()));
    }
    std::vector<std::array<float, 4>> table;
    if (colors.valid() && (colors.rank() != 2 || colors.dim(1) < depth)) {
        throw shape_error(cat(op, ": colors must be [num_colors, >= ", depth, "] but has shape ", colors.shape().str()));
    }
    if (colors.valid() && colors.num_elements() > 0) {
        const tensor cf = cast(colors, dtype::float32);
        for (std::int64_t i = 0; i < colors.dim(0); ++i) {
            std::array<float, 4> c{0, 0, 0, 1};
            for (std::int64_t k = 0; k < std::min<std::int64_t>(4, colors.dim(1)); ++k)
                c[static_cast<std::size_t>(k)] = cf.data<float>()[i * colors.dim(1) + k];
            table.push_back(c);
        }
    } else {
        table = {{1, 1, 0, 1}, {0, 0, 1, 1}, {1, 0, 0, 1}, {0, 1, 0, 1}, {0.5f, 0, 0.5f, 1},
                 {0.5f, 0.5f, 0, 1}, {0.5f, 0, 0, 1}, {0, 0, 0.5f, 1}, {0, 1, 1, 1}, {1, 0, 1, 1}};
        if (depth == 1) for (auto& c : table) c[0] = 1;  // grey images: every box white
    }
    const tensor bx = cast(boxes, dtype::float32);
    return image_detail::on_float(op, images, [&](auto tag, const tensor& x) {
        using T = decltype(tag);
        tensor out = x.clone();
        T* o = out.data<T>();
        const float* bp = bx.data<float>();
        const std::int64_t nb = boxes.dim(1);
        auto put = [&](std::int64_t b, std::int64_t y, std::int64_t xx, const std::array<float, 4>& c) {
            for (std::int64_t k = 0; k < depth; ++k)
                o[((b * height + y) * width + xx) * depth + k] = static_cast<T>(c[static_cast<std::size_t>(k)]);
        };
        for (std::int64_t b = 0; b < batch; ++b) {
            for (std::int64_t i = 0; i < nb; ++i) {
                const auto& c = table[static_cast<std::size_t>(i % static_cast<std::int64_t>(table.size()))];
                const float* q = bp + (b * nb + i) * 4;
                const auto y0 = static_cast<std::int64_t>(q[0] * static_cast<float>(height - 1));
                const auto x0 = static_cast<std::int64_t>(q[1] * static_cast<float>(width - 1));
                const auto y1 = static_cast<std::int64_t>(q[2] * static_cast<float>(height - 1));
                const auto x1 = static_cast<std::int64_t>(q[3] * static_cast<float>(width - 1));
                if (y0 > y1 || x0 > x1) continue;                                    // inverted box
                if (y0 >= height || y1 < 0 || x0 >= width || x1 < 0) continue;       // off the image
                const std::int64_t y0c = std::max<std::int64_t>(y0, 0), y1c = std::min(y1, height - 1);
                const std::int64_t x0c = std::max<std::int64_t>(x0, 0), x1c = std::min(x1, width - 1);
                if (y0 >= 0) for (std::int64_t j = x0c; j <= x1c; ++j) put(b, y0, j, c);
                if (y1 < height) for (std::int64_t j = x0c; j <= x1c; ++j) put(b, y1, j, c);
                if (x0 >= 0) for (std::int64_t j = y0c; j <= y1c; ++j) put(b, j, x0, c);
                if (x1 < width) for (std::int64_t j = y0c; j <= y1c; ++j) put(b, j, x1, c);
            }
        }
        return out;
    });
}

}  // namespace graft::ops
