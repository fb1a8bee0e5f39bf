// graft/ops/pool.hpp — MaxPool, AvgPool, MaxPoolGrad and AvgPoolGrad as TensorFlow defines them.
//
//   graft::ops::pool_params p{.ksize = {1, 2, 2, 1}, .strides = {1, 2, 2, 1}, .padding = "SAME"};
//   tensor y  = graft::ops::max_pool(x, p);
//   tensor dx = graft::ops::max_pool_grad(x, y, dy, p);   // each dy goes to the first max of its window
//
// TF semantics: padded positions never win a max and never count in an average (AvgPool SAME divides
// by the number of input elements under the window); MaxPoolGrad routes to the first maximum in
// row-major window order (TF's CPU kernel). float32/float64; NHWC and NCHW.
#pragma once

#include "graft/core/config.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/core/threads.hpp"
#include "graft/ops/gemm.hpp"
#include "graft/ops/detail/nn_util.hpp"

namespace graft::ops {

/// Attributes of MaxPool / AvgPool and their gradients (4-entry lists in data_format order).
struct pool_params {
    std::vector<std::int64_t> ksize{1, 1, 1, 1};
    std::vector<std::int64_t> strides{1, 1, 1, 1};
    std::string padding = "VALID";                  ///< "SAME", "VALID" ("EXPLICIT": MaxPool only)
    std::vector<std::int64_t> explicit_paddings{};  ///< 8 values with EXPLICIT
    std::string data_format = "NHWC";
};

namespace nn_detail {

struct pool_geom {
    bool nhwc = true;
    dims4 in, out;
    std::int64_t kh = 1, kw = 1, sh = 1, sw = 1, pt = 0, pl = 0;
    std::int64_t sn = 0, sy = 0, sx = 0, sc = 0;      ///< input strides
    std::int64_t on = 0, oy = 0, ox = 0, oc = 0;      ///< output strides
    /// The window of output (y, x), clipped to the input: [y0, y1) x [x0, x1).
    void window(std::int64_t y, std::int64_t x, std::int64_t& y0, std::int64_t& y1, std::int64_t& x0,
                std::int64_t& x1) const {
        y0 = y * sh - pt, x0 = x * sw - pl;
        y1 = std::min(y0 + kh, in.h), x1 = std::min(x0 + kw, in.w);
        y0 = std::max<std::int64_t>(y0, 0), x0 = std::max<std::int64_t>(x0, 0);
    }
};

inline pool_geom make_pool_geom(const char* op, const dims4& in, const pool_params& p, bool allow_explicit,
                                const shape& input_shape) {
    pool_geom g;
    g.nhwc = is_nhwc(op, p.data_format);
    check_padding(op, p.padding, allow_explicit);
    const hw k = spatial_attr(op, "ksize", p.ksize, g.nhwc);
    const hw s = spatial_attr(op, "strides", p.strides, g.nhwc);
    const pads ex = explicit_pads(op, p.padding, p.explicit_paddings, g.nhwc);
    if (p.padding == "VALID" && (k.h > in.h || k.w > in.w)) {
        throw invalid_argument_error(detail::cat(op, ": ksize [", k.h, ",", k.w, "] is larger than the input ",
                                                 input_shape.str(), " with VALID padding"));
    }
    const window_geom wh = window(op, in.h, k.h, s.h, 1, p.padding, ex.top, ex.bottom);
    const window_geom ww = window(op, in.w, k.w, s.w, 1, p.padding, ex.left, ex.right);
    g.in = in;
    g.out = {in.n, wh.out, ww.out, in.c};
    g.kh = k.h, g.kw = k.w, g.sh = s.h, g.sw = s.w, g.pt = wh.pad_before, g.pl = ww.pad_before;
    if (g.nhwc) {
        g.sn = in.h * in.w * in.c, g.sy = in.w * in.c, g.sx = in.c, g.sc = 1;
        g.on = g.out.h * g.out.w * in.c, g.oy = g.out.w * in.c, g.ox = in.c, g.oc = 1;
    } else {
        g.sn = in.c * in.h * in.w, g.sy = in.w, g.sx = 1, g.sc = in.h * in.w;
        g.on = in.c * g.out.h * g.out.w, g.oy = g.out.w, g.ox = 1, g.oc = g.out.h * g.out.w;
    }
    return g;
}

/// Runs fn(b, y, c0, c1) over output rows (and channel blocks for NCHW) in parallel.
template <class F>
void pool_rows(const pool_geom& g, F&& fn) {
    const std::int64_t rows = g.out.n * g.out.h;
    const std::int64_t per_row = std::max<std::int64_t>(1, g.out.w * g.out.c * g.kh * g.kw);
    parallel_for(rows, std::max<std::int64_t>(1, 16384 / per_row), [&](std::int64_t r0, std::int64_t r1) {
        for (std::int64_t r = r0; r < r1; ++r) fn(r / g.out.h, r % g.out.h);
    });
}

/// MaxPool, NHWC: a whole output row at a time. Every output pixel of a row shares its window's
/// rows, so for each window row and column offset kx one loop runs along the row over the pixels
/// whose column is inside the input, with no per-pixel window set-up (with few channels, such as
/// LeNet's 6, that set-up was most of the time). Compares the same elements in the same order as
/// the per-pixel loop (window rows, then columns), so results are identical, NaN included.
template <class T>
void max_pool_nhwc(const pool_geom& g, const T* x, T* y) {
    const std::int64_t C = g.in.c, OW = g.out.w;
    pool_rows(g, [&](std::int64_t b, std::int64_t oy) {
        std::int64_t y0, y1, x0, x1;
        g.window(oy, 0, y0, y1, x0, x1);
        T* out = y + b * g.on + oy * g.oy;
        std::fill(out, out + OW * C, -std::numeric_limits<T>::infinity());
        const T* img = x + b * g.sn;
        for (std::int64_t yy = y0; yy < y1; ++yy) {
            const T* row = img + yy * g.sy;
            for (std::int64_t kx = 0; kx < g.kw; ++kx) {
                // input column ox * sw + kx - pl must lie in [0, in.w)
                const std::int64_t first = kx >= g.pl ? 0 : (g.pl - kx + g.sw - 1) / g.sw;
                const std::int64_t last_col = g.in.w - 1 + g.pl - kx;  // ox * sw <= last_col
                const std::int64_t end = last_col < 0 ? 0 : std::min(OW, last_col / g.sw + 1);
                for (std::int64_t ox = first; ox < end; ++ox) {
                    const T* px = row + (ox * g.sw + kx - g.pl) * C;
                    T* o = out + ox * C;
                    for (std::int64_t c = 0; c < C; ++c) o[c] = px[c] > o[c] ? px[c] : o[c];
                }
            }
        }
    });
}

}  // namespace nn_detail
}  // namespace graft::ops

// The AVX-512 and AVX2 max pooling rows and MaxPoolGrads: ops/arch/x86/pool.hpp.
#include "graft/ops/arch/x86/pool.hpp"

namespace graft::ops {
namespace nn_detail {

template <class T, bool IsMax>
void pool_forward(const pool_geom& g, const T* x, T* y) {
    if constexpr (IsMax) {
#ifdef GRAFT_X86_DISPATCH
        if constexpr (std::is_same_v<T, float>) {
            if (g.nhwc && gemm::active_kernel() == gemm::kernel_isa::avx512) {
                pool_rows(g, [&](std::int64_t b, std::int64_t oy) { max_pool_row_avx512(g, x, y, b, oy); });
                return;
            }
            if (g.nhwc && gemm::active_kernel() == gemm::kernel_isa::avx2) {
                const float* x_end = x + g.in.n * g.sn;
                pool_rows(g, [&](std::int64_t b, std::int64_t oy) { max_pool_row_avx2(g, x, x_end, y, b, oy); });
                return;
            }
        }
#endif
        if (g.nhwc) {
            max_pool_nhwc(g, x, y);
            return;
        }
    }
    pool_rows(g, [&](std::int64_t b, std::int64_t oy) {
        std::vector<T> acc(static_cast<std::size_t>(g.in.c));
        for (std::int64_t ox = 0; ox < g.out.w; ++ox) {
            std::int64_t y0, y1, x0, x1;
            g.window(oy, ox, y0, y1, x0, x1);
            T* out = y + b * g.on + oy * g.oy + ox * g.ox;
            const T* img = x + b * g.sn;
            if (g.nhwc) {
                std::fill(acc.begin(), acc.end(), IsMax ? -std::numeric_limits<T>::infinity() : T(0));
                for (std::int64_t yy = y0; yy < y1; ++yy)
                    for (std::int64_t xx = x0; xx < x1; ++xx) {
                        const T* px = img + yy * g.sy + xx * g.sx;
                        T* a = acc.data();
                        for (std::int64_t c = 0; c < g.in.c; ++c) {
                            if constexpr (IsMax) a[c] = px[c] > a[c] ? px[c] : a[c];
                            else a[c] += px[c];
                        }
                    }
                const T scale = IsMax ? T(1) : T(1) / static_cast<T>(std::max<std::int64_t>(1, (y1 - y0) * (x1 - x0)));
                for (std::int64_t c = 0; c < g.in.c; ++c) out[c] = IsMax ? acc[static_cast<std::size_t>(c)] : acc[static_cast<std::size_t>(c)] * scale;
            } else {
                const T scale = T(1) / static_cast<T>(std::max<std::int64_t>(1, (y1 - y0) * (x1 - x0)));
                for (std::int64_t c = 0; c < g.in.c; ++c) {
                    const T* plane = img + c * g.sc;
                    T a = IsMax ? -std::numeric_limits<T>::infinity() : T(0);
                    for (std::int64_t yy = y0; yy < y1; ++yy)
                        for (std::int64_t xx = x0; xx < x1; ++xx) {
                            const T v = plane[yy * g.sy + xx];
                            if constexpr (IsMax) a = v > a ? v : a;
                            else a += v;
                        }
                    out[c * g.oc] = IsMax ? a : a * scale;
                }
            }
        }
    });
}

/// MaxPoolGrad scatters each output gradient to its window's argmax; images run in parallel.
template <class T>
void max_pool_backward(const pool_geom& g, const T* x, const T* dy, T* dx) {
#ifdef GRAFT_X86_DISPATCH
    if constexpr (std::is_same_v<T, float>) {
        if (g.nhwc && gemm::active_kernel() != gemm::kernel_isa::portable) {
            const bool avx512 = gemm::active_kernel() == gemm::kernel_isa::avx512;
            const bool tiled = g.kh == g.sh && g.kw == g.sw && g.pt == 0 && g.pl == 0 && g.out.h * g.sh == g.in.h &&
                               g.out.w * g.sw == g.in.w;
            parallel_for(g.in.n, 1, [&](std::int64_t b0, std::int64_t b1) {
                std::vector<std::int64_t> off(static_cast<std::size_t>(g.kh * g.kw));
                thread_local gemm::detail::scratch<float> vectors;  // 64-byte aligned: AVX2's per-row winners
                float* const rows = avx512 ? nullptr : vectors.get(static_cast<std::size_t>(16 * g.out.w));
                for (std::int64_t b = b0; b < b1; ++b) {
                    if (avx512) max_pool_backward_nhwc_avx512(g, x + b * g.sn, dy + b * g.on, dx + b * g.sn, tiled, off.data());
                    else max_pool_backward_nhwc_avx2(g, x + b * g.sn, dy + b * g.on, dx + b * g.sn, tiled, off.data(),
                                                     reinterpret_cast<__m256*>(rows));
                }
            });
            return;
        }
    }
#endif
    parallel_for(g.in.n, 1, [&](std::int64_t b0, std::int64_t b1) {
        for (std::int64_t b = b0; b < b1; ++b) {
            const T* img = x + b * g.sn;
            T* dimg = dx + b * g.sn;
            std::fill(dimg, dimg + g.sn, T(0));
            for (std::int64_t oy = 0; oy < g.out.h; ++oy)
                for (std::int64_t ox = 0; ox < g.out.w; ++ox) {
                    std::int64_t y0, y1, x0, x1;
                    g.window(oy, ox, y0, y1, x0, x1);
                    if (y0 >= y1 || x0 >= x1) continue;  // an empty window passes no gradient
                    const T* d = dy + b * g.on + oy * g.oy + ox * g.ox;
                    // Per channel one sweep of the window keeps the first strict maximum: it starts
                    // from the window's first element and moves only on a strictly greater one (a
                    // NaN first stays; later NaNs never win), the running best in registers.
                    const std::int64_t first = y0 * g.sy + x0 * g.sx;
                    for (std::int64_t c = 0; c < g.in.c; ++c) {
                        std::int64_t bi = first + c * g.sc;
                        T bv = img[bi];
                        for (std::int64_t yy = y0; yy < y1; ++yy)
                            for (std::int64_t xx = (yy == y0 ? x0 + 1 : x0); xx < x1; ++xx) {
                                const std::int64_t idx = yy * g.sy + xx * g.sx + c * g.sc;
                                if (img[idx] > bv) bv = img[idx], bi = idx;
                            }
                        dimg[bi] += d[c * g.oc];
                    }
                }
        }
    });
}

template <class T>
void avg_pool_backward(const pool_geom& g, const T* dy, T* dx) {
    parallel_for(g.in.n, 1, [&](std::int64_t b0, std::int64_t b1) {
        for (std::int64_t b = b0; b < b1; ++b) {
            T* dimg = dx + b * g.sn;
            std::fill(dimg, dimg + g.sn, T(0));
            for (std::int64_t oy = 0; oy < g.out.h; ++oy)
                for (std::int64_t ox = 0; ox < g.out.w; ++ox) {
                    std::int64_t y0, y1, x0, x1;
                    g.window(oy, ox, y0, y1, x0, x1);
                    const T scale = T(1) / static_cast<T>(std::max<std::int64_t>(1, (y1 - y0) * (x1 - x0)));
                    const T* d = dy + b * g.on + oy * g.oy + ox * g.ox;
                    for (std::int64_t yy = y0; yy < y1; ++yy)
                        for (std::int64_t xx = x0; xx < x1; ++xx) {
                            T* px = dimg + yy * g.sy + xx * g.sx;
                            for (std::int64_t c = 0; c < g.in.c; ++c) px[c * g.sc] += d[c * g.oc] * scale;
                        }
                }
        }
    });
}

template <bool IsMax>
tensor pool_op(const char* op, const tensor& input, const pool_params& p) {
    check_float(op, "input", input);
    const bool nhwc = is_nhwc(op, p.data_format);
    const pool_geom g = make_pool_geom(op, activation_dims(op, "input", input, nhwc), p, IsMax, input.shape());
    tensor out = tensor::uninitialized(input.type(), activation_shape(g.out, nhwc));
    if (input.type() == dtype::float32) pool_forward<float, IsMax>(g, input.data<float>(), out.data<float>());
    else pool_forward<double, IsMax>(g, input.data<double>(), out.data<double>());
    return out;
}

}  // namespace nn_detail

/// MaxPool: the maximum of each window (padding never wins). float32/float64, NHWC/NCHW, SAME/VALID/
/// EXPLICIT. Throws shape_error (rank) or invalid_argument_error (dtype, ksize/strides, padding).
inline tensor max_pool(const tensor& input, const pool_params& p) {
    return nn_detail::pool_op<true>("MaxPool", input, p);
}

/// AvgPool: the mean of each window over the input elements under it (SAME pads are not counted).
/// float32/float64, NHWC/NCHW, SAME/VALID. Throws as max_pool.
inline tensor avg_pool(const tensor& input, const pool_params& p) {
    return nn_detail::pool_op<false>("AvgPool", input, p);
}

/// MaxPoolGrad: routes grad (the gradient of MaxPool's output) to the first maximum of each window of
/// orig_input; orig_output is only shape-checked (TF's CPU kernel recomputes the argmax too).
/// Throws shape_error when the three shapes do not fit together.
inline tensor max_pool_grad(const tensor& orig_input, const tensor& orig_output, const tensor& grad,
                            const pool_params& p) {
    const char* op = "MaxPoolGrad";
    nn_detail::check_float(op, "orig_input", orig_input);
    nn_detail::check_same_dtype(op, "orig_input", orig_input, "grad", grad);
    const bool nhwc = nn_detail::is_nhwc(op, p.data_format);
    const auto g = nn_detail::make_pool_geom(op, nn_detail::activation_dims(op, "orig_input", orig_input, nhwc), p,
                                             true, orig_input.shape());
    const shape want = nn_detail::activation_shape(g.out, nhwc);
    if (!(grad.shape() == want) || !(orig_output.shape() == want)) {
        throw shape_error(detail::cat(op, ": orig_output ", orig_output.shape().str(), " and grad ", grad.shape().str(),
                                      " must both be ", want.str(), " (MaxPool of ", orig_input.shape().str(), ")"));
    }
    tensor dx = tensor::uninitialized(orig_input.type(), orig_input.shape());
    if (orig_input.type() == dtype::float32) {
        nn_detail::max_pool_backward(g, orig_input.data<float>(), grad.data<float>(), dx.data<float>());
    } else {
        nn_detail::max_pool_backward(g, orig_input.data<double>(), grad.data<double>(), dx.data<double>());
    }
    return dx;
}

/// AvgPoolGrad: spreads each grad value evenly over the input elements of its window.
/// orig_input_shape is the shape of AvgPool's input. Throws shape_error when grad does not fit.
inline tensor avg_pool_grad(const shape& orig_input_shape, const tensor& grad, const pool_params& p) {
    const char* op = "AvgPoolGrad";
    nn_detail::check_float(op, "grad", grad);
    const bool nhwc = nn_detail::is_nhwc(op, p.data_format);
    if (orig_input_shape.rank() != 4) {
        throw shape_error(detail::cat(op, ": orig_input_shape must have 4 entries, given ", orig_input_shape.str()));
    }
    const auto& d = orig_input_shape.dims();
    const nn_detail::dims4 in = nhwc ? nn_detail::dims4{d[0], d[1], d[2], d[3]} : nn_detail::dims4{d[0], d[2], d[3], d[1]};
    const auto g = nn_detail::make_pool_geom(op, in, p, false, orig_input_shape);
    const shape want = nn_detail::activation_shape(g.out, nhwc);
    if (!(grad.shape() == want)) {
        throw shape_error(detail::cat(op, ": grad ", grad.shape().str(), " must be ", want.str(), " (AvgPool of ",
                                      orig_input_shape.str(), ")"));
    }
    tensor dx = tensor::uninitialized(grad.type(), orig_input_shape);
    if (grad.type() == dtype::float32) nn_detail::avg_pool_backward(g, grad.data<float>(), dx.data<float>());
    else nn_detail::avg_pool_backward(g, grad.data<double>(), dx.data<double>());
    return dx;
}

/// AvgPoolGrad with TF's orig_input_shape tensor (int32/int64 vector of 4). Throws as above.
inline tensor avg_pool_grad(const tensor& orig_input_shape, const tensor& grad, const pool_params& p) {
    return avg_pool_grad(nn_detail::shape_from_tensor("AvgPoolGrad", "orig_input_shape", orig_input_shape), grad, p);
}

}  // namespace graft::ops
