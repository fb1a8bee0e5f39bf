// graft/ops/conv_depthwise.hpp — DepthwiseConv2dNative and its two gradients, as TensorFlow defines
// them: filter [KH, KW, C, M] turns input channel c into output channels c*M .. c*M+M-1.
//
//   tensor y = graft::ops::depthwise_conv2d_native(x, w, p);   // x [N,H,W,C], w [KH,KW,C,M] -> [N,OH,OW,C*M]
//
// Direct loops over NHWC (NCHW is transposed in and out), parallel over output rows; float32/float64.
#pragma once

#include "graft/core/config.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/core/threads.hpp"
#include "graft/ops/detail/conv_geom.hpp"
#include "graft/ops/detail/nn_util.hpp"

namespace graft::ops {
namespace nn_detail {

/// The same geometry with NHWC element strides (the depthwise kernels work on NHWC copies).
inline conv_geom as_nhwc(conv_geom g) {
    g.nhwc = true;
    g.in_sn = g.ih * g.iw * g.ic, g.in_sh = g.iw * g.ic, g.in_sw = g.ic, g.in_sc = 1;
    g.out_sn = g.oh * g.ow * g.oc, g.out_sh = g.ow * g.oc, g.out_sw = g.oc, g.out_sc = 1;
    return g;
}

/// NCHW <-> NHWC copies of a rank-4 tensor.
inline tensor nchw_to_nhwc(const tensor& t) {
    tensor r = tensor::uninitialized(t.type(), {t.dim(0), t.dim(2), t.dim(3), t.dim(1)});
    visit_dtype(t.type(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_arithmetic_v<T>) {
            r.nd<T, 4>().device(cpu_device()) = t.nd<T, 4>().shuffle(Eigen::array<int, 4>{0, 2, 3, 1});
        }
    });
    return r;
}
inline tensor nhwc_to_nchw(const tensor& t) {
    tensor r = tensor::uninitialized(t.type(), {t.dim(0), t.dim(3), t.dim(1), t.dim(2)});
    visit_dtype(t.type(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_arithmetic_v<T>) {
            r.nd<T, 4>().device(cpu_device()) = t.nd<T, 4>().shuffle(Eigen::array<int, 4>{0, 3, 1, 2});
        }
    });
    return r;
}

template <class T>
void depthwise_forward(const conv_geom& g, std::int64_t mult, const T* x, const T* f, T* y) {
    parallel_for(g.n * g.oh, std::max<std::int64_t>(1, 4096 / std::max<std::int64_t>(1, g.ow * g.oc * g.kh * g.kw)),
                 [&](std::int64_t r0, std::int64_t r1) {
        std::vector<T> acc(static_cast<std::size_t>(g.oc));
        for (std::int64_t row = r0; row < r1; ++row) {
            const std::int64_t b = row / g.oh, oy = row % g.oh;
            for (std::int64_t ox = 0; ox < g.ow; ++ox) {
                std::fill(acc.begin(), acc.end(), T(0));
                const std::int64_t ih0 = oy * g.sh - g.pt, iw0 = ox * g.sw - g.pl;
                for (std::int64_t ky = 0; ky < g.kh; ++ky) {
                    const std::int64_t yy = ih0 + ky * g.dh;
                    if (yy < 0 || yy >= g.ih) continue;
                    for (std::int64_t kx = 0; kx < g.kw; ++kx) {
                        const std::int64_t xx = iw0 + kx * g.dw;
                        if (xx < 0 || xx >= g.iw) continue;
                        const T* xin = x + b * g.in_sn + yy * g.in_sh + xx * g.in_sw;
                        const T* w = f + (ky * g.kw + kx) * g.oc;
                        T* a = acc.data();
                        if (mult == 1) {
                            for (std::int64_t c = 0; c < g.ic; ++c) a[c] += xin[c] * w[c];
                        } else {
                            for (std::int64_t c = 0; c < g.ic; ++c)
                                for (std::int64_t m = 0; m < mult; ++m) a[c * mult + m] += xin[c] * w[c * mult + m];
                        }
                    }
                }
                std::copy(acc.begin(), acc.end(), y + b * g.out_sn + oy * g.out_sh + ox * g.out_sw);
            }
        }
    });
}

/// dx[b, y, x, c] = sum over the output pixels whose window covers (y, x) (a gather, so rows of dx
/// are independent and run in parallel).
template <class T>
void depthwise_input_grad(const conv_geom& g, std::int64_t mult, const T* f, const T* dy, T* dx) {
    parallel_for(g.n * g.ih, 1, [&](std::int64_t r0, std::int64_t r1) {
        for (std::int64_t row = r0; row < r1; ++row) {
            const std::int64_t b = row / g.ih, yy = row % g.ih;
            for (std::int64_t xx = 0; xx < g.iw; ++xx) {
                T* out = dx + b * g.in_sn + yy * g.in_sh + xx * g.in_sw;
                std::fill(out, out + g.ic, T(0));
                for (std::int64_t ky = 0; ky < g.kh; ++ky) {
                    const std::int64_t ty = yy + g.pt - ky * g.dh;
                    if (ty < 0 || ty % g.sh != 0 || ty / g.sh >= g.oh) continue;
                    for (std::int64_t kx = 0; kx < g.kw; ++kx) {
                        const std::int64_t tx = xx + g.pl - kx * g.dw;
                        if (tx < 0 || tx % g.sw != 0 || tx / g.sw >= g.ow) continue;
                        const T* d = dy + b * g.out_sn + (ty / g.sh) * g.out_sh + (tx / g.sw) * g.out_sw;
                        const T* w = f + (ky * g.kw + kx) * g.oc;
                        for (std::int64_t c = 0; c < g.ic; ++c) {
                            T s = T(0);
                            for (std::int64_t m = 0; m < mult; ++m) s += d[c * mult + m] * w[c * mult + m];
                            out[c] += s;
                        }
                    }
                }
            }
        }
    });
}

template <class T>
void depthwise_filter_grad(const conv_geom& g, std::int64_t mult, const T* x, const T* dy, T* df) {
    const std::int64_t F = g.kh * g.kw * g.oc, rows = g.n * g.oh;
    std::fill(df, df + F, T(0));
    if (rows == 0) return;
    const int tasks = static_cast<int>(std::min<std::int64_t>(num_threads(), rows));
    const std::int64_t chunk = (rows + tasks - 1) / tasks;
    std::vector<std::vector<T>> partial(static_cast<std::size_t>(tasks > 1 ? tasks - 1 : 0),
                                        std::vector<T>(static_cast<std::size_t>(F), T(0)));
    run_tasks(tasks, [&](int t) {
        T* acc = t == 0 ? df : partial[static_cast<std::size_t>(t - 1)].data();
        for (std::int64_t row = t * chunk; row < std::min(rows, (t + 1) * chunk); ++row) {
            const std::int64_t b = row / g.oh, oy = row % g.oh;
            for (std::int64_t ox = 0; ox < g.ow; ++ox) {
                const T* d = dy + b * g.out_sn + oy * g.out_sh + ox * g.out_sw;
                for (std::int64_t ky = 0; ky < g.kh; ++ky) {
                    const std::int64_t yy = oy * g.sh - g.pt + ky * g.dh;
                    if (yy < 0 || yy >= g.ih) continue;
                    for (std::int64_t kx = 0; kx < g.kw; ++kx) {
                        const std::int64_t xx = ox * g.sw - g.pl + kx * g.dw;
                        if (xx < 0 || xx >= g.iw) continue;
                        const T* xin = x + b * g.in_sn + yy * g.in_sh + xx * g.in_sw;
                        T* a = acc + (ky * g.kw + kx) * g.oc;
                        for (std::int64_t c = 0; c < g.ic; ++c)
                            for (std::int64_t m = 0; m < mult; ++m) a[c * mult + m] += xin[c] * d[c * mult + m];
                    }
                }
            }
        }
    });
    for (const auto& part : partial)
        for (std::int64_t i = 0; i < F; ++i) df[i] += part[static_cast<std::size_t>(i)];
}

}  // namespace nn_detail

/// DepthwiseConv2dNative: input [N,H,W,C] (or NCHW) with filter [KH,KW,C,M] -> C*M output channels.
/// float32/float64. Throws shape_error (ranks, channel mismatch) or invalid_argument_error (dtype, attrs).
inline tensor depthwise_conv2d_native(const tensor& input, const tensor& filter, const conv2d_params& p) {
    const char* op = "DepthwiseConv2dNative";
    nn_detail::check_float(op, "input", input);
    nn_detail::check_same_dtype(op, "input", input, "filter", filter);
    const bool nhwc = nn_detail::is_nhwc(op, p.data_format);
    const auto in = nn_detail::activation_dims(op, "input", input, nhwc);
    const auto g = nn_detail::as_nhwc(nn_detail::make_conv_geom(op, in, filter.shape(), p, true, input.shape()));
    const tensor x = nhwc ? input : nn_detail::nchw_to_nhwc(input);
    tensor y = tensor::uninitialized(input.type(), nn_detail::activation_shape(g.out_dims(), true));
    if (input.type() == dtype::float32) {
        nn_detail::depthwise_forward(g, filter.dim(3), x.data<float>(), filter.data<float>(), y.data<float>());
    } else {
        nn_detail::depthwise_forward(g, filter.dim(3), x.data<double>(), filter.data<double>(), y.data<double>());
    }
    return nhwc ? y : nn_detail::nhwc_to_nchw(y);
}

/// DepthwiseConv2dNativeBackpropInput: gradient of DepthwiseConv2dNative with respect to its input
/// (input_sizes: int32/int64 vector of 4). Throws shape_error when out_backprop does not fit.
inline tensor depthwise_conv2d_native_backprop_input(const tensor& input_sizes, const tensor& filter,
                                                     const tensor& out_backprop, const conv2d_params& p) {
    const char* op = "DepthwiseConv2dNativeBackpropInput";
    nn_detail::check_float(op, "filter", filter);
    nn_detail::check_same_dtype(op, "filter", filter, "out_backprop", out_backprop);
    const bool nhwc = nn_detail::is_nhwc(op, p.data_format);
    const shape s = nn_detail::shape_from_tensor(op, "input_sizes", input_sizes);
    if (s.rank() != 4) throw shape_error(detail::cat(op, ": input_sizes must have 4 entries, given ", s.str()));
    const auto in = nhwc ? nn_detail::dims4{s.dim(0), s.dim(1), s.dim(2), s.dim(3)}
                         : nn_detail::dims4{s.dim(0), s.dim(2), s.dim(3), s.dim(1)};
    const auto g0 = nn_detail::make_conv_geom(op, in, filter.shape(), p, true, s);
    nn_detail::check_out_backprop(op, g0, out_backprop, s, filter.shape());
    const auto g = nn_detail::as_nhwc(g0);
    const tensor dy = nhwc ? out_backprop : nn_detail::nchw_to_nhwc(out_backprop);
    tensor dx = tensor::uninitialized(filter.type(), nn_detail::activation_shape(in, true));
    if (filter.type() == dtype::float32) {
        nn_detail::depthwise_input_grad(g, filter.dim(3), filter.data<float>(), dy.data<float>(), dx.data<float>());
    } else {
        nn_detail::depthwise_input_grad(g, filter.dim(3), filter.data<double>(), dy.data<double>(), dx.data<double>());
    }
    return nhwc ? dx : nn_detail::nhwc_to_nchw(dx);
}

/// DepthwiseConv2dNativeBackpropFilter: gradient with respect to the filter (filter_sizes: int32/
/// int64 vector of 4). Throws shape_error when out_backprop does not fit.
inline tensor depthwise_conv2d_native_backprop_filter(const tensor& input, const tensor& filter_sizes,
                                                      const tensor& out_backprop, const conv2d_params& p) {
    const char* op = "DepthwiseConv2dNativeBackpropFilter";
    nn_detail::check_float(op, "input", input);
    nn_detail::check_same_dtype(op, "input", input, "out_backprop", out_backprop);
    const bool nhwc = nn_detail::is_nhwc(op, p.data_format);
    const shape fs = nn_detail::shape_from_tensor(op, "filter_sizes", filter_sizes);
    const auto in = nn_detail::activation_dims(op, "input", input, nhwc);
    const auto g0 = nn_detail::make_conv_geom(op, in, fs, p, true, input.shape());
    nn_detail::check_out_backprop(op, g0, out_backprop, input.shape(), fs);
    const auto g = nn_detail::as_nhwc(g0);
    const tensor x = nhwc ? input : nn_detail::nchw_to_nhwc(input);
    const tensor dy = nhwc ? out_backprop : nn_detail::nchw_to_nhwc(out_backprop);
    tensor df = tensor::uninitialized(input.type(), fs);
    if (input.type() == dtype::float32) {
        nn_detail::depthwise_filter_grad(g, fs.dim(3), x.data<float>(), dy.data<float>(), df.data<float>());
    } else {
        nn_detail::depthwise_filter_grad(g, fs.dim(3), x.data<double>(), dy.data<double>(), df.data<double>());
    }
    return df;
}

}  // namespace graft::ops
