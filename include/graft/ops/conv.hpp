// graft/ops/conv.hpp — Conv2D, Conv2DBackpropInput (also the transposed convolution) and
// Conv2DBackpropFilter as TensorFlow defines them; DepthwiseConv2dNative and its gradients come with
// ops/conv_depthwise.hpp, included below.
//
//   graft::ops::conv2d_params p;          // TF's attrs: strides, padding, explicit_paddings, data_format, dilations
//   p.padding = "SAME";
//   tensor y  = graft::ops::conv2d(x, w, p);                              // x [N,H,W,C], w [KH,KW,C,OC]
//   tensor dx = graft::ops::conv2d_backprop_input(x.shape(), w, dy, p);   // d loss / d x
//   tensor dw = graft::ops::conv2d_backprop_filter(x, w.shape(), dy, p);  // d loss / d w
//
// Kernels: implicit im2col + GEMM (ops/gemm.hpp) — the forward pass and the filter gradient pack GEMM
// panels straight from the input (a zero-bordered copy when padded); the input gradient runs GEMM into
// a bounded column buffer and scatters it back (col2im). Under AVX-512 and AVX2, NHWC float32 layers
// with <= 8 output channels and unit column stride run direct kernels for the forward pass and the
// filter gradient instead (conv_narrow_forward, conv_narrow_filter_grad). float32 and float64; NHWC
// and NCHW; SAME, VALID and EXPLICIT padding; any strides and dilations.
#pragma once

#include "graft/core/config.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/core/threads.hpp"
#include "graft/ops/detail/conv_geom.hpp"
#include "graft/ops/bias_add.hpp"
#include "graft/ops/gemm.hpp"
#include "graft/ops/detail/nn_util.hpp"

// The narrow convolution (few output channels: taps spread over 16- or 8-lane vectors) and its filter gradient:
// ops/arch/x86/conv.hpp.
#include "graft/ops/arch/x86/conv.hpp"

namespace graft::ops {
namespace nn_detail {

/// y = the convolution; with `epilogue` (float32 NHWC only) then act(y + bias): on each row as the
/// direct kernel writes it, else in one pass after the GEMM.
template <class T>
void conv_forward(const conv_geom& g, const T* x, const T* f, T* y, const bias_act_epilogue* epilogue = nullptr) {
    const std::int64_t K = g.K(), P = g.out_pixels();
    if (g.n * P * g.oc == 0) return;
    if constexpr (std::is_same_v<T, float>) {
        if (epilogue) {
#ifdef GRAFT_X86_DISPATCH
            if (conv_narrow_fits(g)) {
                conv_narrow_forward(g, x, f, y, epilogue);
                return;
            }
#endif
            conv_forward<T>(g, x, f, y);
            epilogue->apply_all(y, g.n * P);
            return;
        }
    }
    const gemm::matrix_source<T> filter_by_k{f, 1, g.oc, g.oc};  // outer oc, depth k
    if (g.nhwc && g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.pt == 0 && g.pl == 0 && g.oh == g.ih &&
        g.ow == g.iw) {  // 1x1: the input is the im2col matrix
        const std::int64_t M = g.n * P;
        gemm::run(M, g.oc, K, gemm::matrix_source<T>{x, g.ic, 1, M}, filter_by_k, y, g.oc, 1, false);
        return;
    }
#ifdef GRAFT_X86_DISPATCH
    if constexpr (std::is_same_v<T, float>) {
        if (conv_narrow_fits(g)) {
            conv_narrow_forward(g, x, f, y);
            return;
        }
    }
#endif
    const padded_input<T> in(g, x);
    const im2col_tables tab(in.g);
    if (g.nhwc) {
        const std::int64_t M = g.n * P;
        gemm::run(M, g.oc, K, im2col_source<T>{in.data, &in.g, &tab, 0, M, false}, filter_by_k, y, g.oc, 1, false);
        return;
    }
    // NCHW: per image, y_n [OC, P] = filter^T [OC, K] * im2col_n^T [K, P].
    auto image = [&](std::int64_t b, int threads) {
        gemm::run(g.oc, P, K, filter_by_k, im2col_source<T>{in.data, &in.g, &tab, b * P, P, false}, y + b * g.out_sn,
                  P, 1, false, threads);
    };
    const double flops = 2.0 * static_cast<double>(P * K) * static_cast<double>(g.oc);
    if (g.n >= num_threads() && num_threads() > 1 && flops < 5.0e7) {
        parallel_for(g.n, 1, [&](std::int64_t b0, std::int64_t b1) {
            for (std::int64_t b = b0; b < b1; ++b) image(b, 1);
        });
    } else {
        for (std::int64_t b = 0; b < g.n; ++b) image(b, 0);
    }
}

template <class T>
void conv_filter_grad(const conv_geom& g, const T* x, const T* dy, T* df) {
    const std::int64_t K = g.K(), OC = g.oc, P = g.out_pixels(), NP = g.n * P;
    std::fill(df, df + K * OC, T(0));
    if (NP == 0 || K == 0 || OC == 0) return;
#ifdef GRAFT_X86_DISPATCH
    if constexpr (std::is_same_v<T, float>) {
        if (conv_narrow_fits(g)) {
            conv_narrow_filter_grad(g, x, dy, df);
            return;
        }
    }
#endif
    const padded_input<T> in(g, x);
    const im2col_tables tab(in.g);
    const double flops = 2.0 * static_cast<double>(NP) * static_cast<double>(K * OC);
    const int tasks = static_cast<int>(std::min<double>({static_cast<double>(num_threads()),
                                                          std::max(1.0, flops / 2.0e6), static_cast<double>(NP)}));
    const std::int64_t chunk = (NP + tasks - 1) / tasks;
    std::vector<std::vector<T>> partial(static_cast<std::size_t>(tasks > 1 ? tasks - 1 : 0),
                                        std::vector<T>(static_cast<std::size_t>(K * OC), T(0)));
    run_tasks(tasks, [&](int t) {
        T* acc = t == 0 ? df : partial[static_cast<std::size_t>(t - 1)].data();
        const std::int64_t q1 = std::min(NP, (t + 1) * chunk);
        for (std::int64_t q = t * chunk; q < q1;) {
            const std::int64_t b = q / P, e = g.nhwc ? q1 : std::min(q1, (b + 1) * P);
            const im2col_source<T> cols{in.data, &in.g, &tab, q, e - q, true};  // outer k, depth pixel
            const gemm::matrix_source<T> grad = g.nhwc ? gemm::matrix_source<T>{dy + q * OC, 1, OC, OC}
                                                       : gemm::matrix_source<T>{dy + b * OC * P + (q - b * P), P, 1, OC};
            gemm::run(K, OC, e - q, cols, grad, acc, OC, 1, true, 1);
            q = e;
        }
    });
    for (const auto& part : partial)
        for (std::int64_t i = 0; i < K * OC; ++i) df[i] += part[static_cast<std::size_t>(i)];
}

/// Floats of the input gradient's column buffer (dy rows times the filter, before col2im).
inline constexpr std::int64_t kInputGradChunkFloats = std::int64_t{1} << 17;

template <class T>
void conv_input_grad(const conv_geom& g, const T* f, const T* dy, T* dx) {
    const std::int64_t K = g.K(), OC = g.oc, P = g.out_pixels();
    std::fill(dx, dx + g.n * g.in_sn, T(0));
    if (K == 0 || P == 0 || OC == 0 || g.n == 0) return;
    const std::int64_t chunk = std::min(g.nhwc ? g.n * P : P, std::max<std::int64_t>(kInputGradChunkFloats / K, 16));
    const gemm::matrix_source<T> filter_by_oc{f, OC, 1, K};  // outer k, depth oc
    // dcol [cnt, K] = dy rows [cnt, OC] * filter^T, then col2im into dx.
    auto chunk_grad = [&](std::int64_t q, std::int64_t cnt, T* dcol, bool all_threads) {
        const std::int64_t b = q / P;
        const gemm::matrix_source<T> rows = g.nhwc ? gemm::matrix_source<T>{dy + q * OC, OC, 1, cnt}
                                                   : gemm::matrix_source<T>{dy + b * OC * P + (q - b * P), 1, P, cnt};
        gemm::run(cnt, K, OC, rows, filter_by_oc, dcol, K, 1, false, all_threads ? 0 : 1);
        if (all_threads) {
            parallel_for(g.ic, std::max<std::int64_t>(1, g.ic / std::max(1, num_threads())),
                         [&](std::int64_t c0, std::int64_t c1) { col2im(g, dcol, q, cnt, c0, c1, dx); });
        } else {
            col2im(g, dcol, q, cnt, std::int64_t{0}, g.ic, dx);
        }
    };
    // Pixels [q0, q1) of whole images. NHWC: dy's rows run on across images, so a chunk may span
    // several (the filter is packed once per chunk, not once per image); NCHW: one image at a time.
    auto pixels = [&](std::int64_t q0, std::int64_t q1, std::vector<T>& buf, bool all_threads) {
        for (std::int64_t q = q0; q < q1;) {
            const std::int64_t e = std::min({q1, q + chunk, g.nhwc ? q1 : (q / P + 1) * P});
            chunk_grad(q, e - q, buf.data(), all_threads);
            q = e;
        }
    };
    if (g.n >= num_threads() && num_threads() > 1) {
        parallel_for(g.n, 1, [&](std::int64_t b0, std::int64_t b1) {  // no two threads write one image
            std::vector<T> buf(static_cast<std::size_t>(chunk * K));
            pixels(b0 * P, b1 * P, buf, false);
        });
    } else {
        std::vector<T> buf(static_cast<std::size_t>(chunk * K));
        pixels(0, g.n * P, buf, num_threads() > 1);
    }
}

inline void check_out_backprop(const char* op, const conv_geom& g, const tensor& dy, const shape& in_shape,
                               const shape& filter_shape) {
    const shape want = activation_shape(g.out_dims(), g.nhwc);
    if (!(dy.shape() == want)) {
        throw shape_error(detail::cat(op, ": out_backprop ", dy.shape().str(), " does not match the forward output ",
                                      want.str(), " of input ", in_shape.str(), " and filter ", filter_shape.str()));
    }
}

}  // namespace nn_detail

/// Conv2D: input [N,H,W,C] (NHWC) or [N,C,H,W] (NCHW) with filter [KH,KW,C,OC] -> [N,OH,OW,OC] or
/// [N,OC,OH,OW]. float32/float64. Throws shape_error (ranks, channel mismatch, negative output) or
/// invalid_argument_error (dtype, attrs). `epilogue` (float32 NHWC): act(y + bias) applied as the
/// output is produced, the bits of bias_activation_inplace on the result (_FusedConv2D).
inline tensor conv2d(const tensor& input, const tensor& filter, const conv2d_params& p,
                     const bias_act_epilogue* epilogue = nullptr) {
    const char* op = "Conv2D";
    nn_detail::check_float(op, "input", input);
    nn_detail::check_same_dtype(op, "input", input, "filter", filter);
    const bool nhwc = nn_detail::is_nhwc(op, p.data_format);
    const auto in = nn_detail::activation_dims(op, "input", input, nhwc);
    const auto g = nn_detail::make_conv_geom(op, in, filter.shape(), p, false, input.shape());
    if (epilogue && (!nhwc || input.type() != dtype::float32 || epilogue->channels() != g.oc)) {
        throw invalid_argument_error(detail::cat(op, ": a fused bias epilogue needs float32 NHWC and one bias per output ",
                                                 "channel (", g.oc, "), given ", dtype_name(input.type()), " ",
                                                 p.data_format, " and ", epilogue->channels()));
    }
    tensor out = tensor::uninitialized(input.type(), nn_detail::activation_shape(g.out_dims(), nhwc));
    if (input.type() == dtype::float32) {
        nn_detail::conv_forward(g, input.data<float>(), filter.data<float>(), out.data<float>(), epilogue);
    } else {
        nn_detail::conv_forward(g, input.data<double>(), filter.data<double>(), out.data<double>());
    }
    return out;
}

/// Conv2DBackpropInput: the gradient of Conv2D with respect to its input (and TF's transposed
/// convolution): input_shape is the forward input's shape, out_backprop the gradient of the forward
/// output. float32/float64. Throws shape_error when out_backprop does not match the forward output.
inline tensor conv2d_backprop_input(const shape& input_shape, const tensor& filter, const tensor& out_backprop,
                                    const conv2d_params& p) {
    const char* op = "Conv2DBackpropInput";
    nn_detail::check_float(op, "filter", filter);
    nn_detail::check_same_dtype(op, "filter", filter, "out_backprop", out_backprop);
    const bool nhwc = nn_detail::is_nhwc(op, p.data_format);
    if (input_shape.rank() != 4) {
        throw shape_error(detail::cat(op, ": input_sizes must have 4 entries, given ", input_shape.str()));
    }
    const auto in = nhwc ? nn_detail::dims4{input_shape.dim(0), input_shape.dim(1), input_shape.dim(2), input_shape.dim(3)}
                         : nn_detail::dims4{input_shape.dim(0), input_shape.dim(2), input_shape.dim(3), input_shape.dim(1)};
    const auto g = nn_detail::make_conv_geom(op, in, filter.shape(), p, false, input_shape);
    nn_detail::check_out_backprop(op, g, out_backprop, input_shape, filter.shape());
    tensor dx = tensor::uninitialized(filter.type(), input_shape);
    if (filter.type() == dtype::float32) {
        nn_detail::conv_input_grad(g, filter.data<float>(), out_backprop.data<float>(), dx.data<float>());
    } else {
        nn_detail::conv_input_grad(g, filter.data<double>(), out_backprop.data<double>(), dx.data<double>());
    }
    return dx;
}

/// Conv2DBackpropInput with TF's `input_sizes` tensor (int32/int64: 4 dims, or 2 spatial dims taking
/// batch from out_backprop and channels from filter). Throws as the shape overload.
inline tensor conv2d_backprop_input(const tensor& input_sizes, const tensor& filter, const tensor& out_backprop,
                                    const conv2d_params& p) {
    const char* op = "Conv2DBackpropInput";
    shape s = nn_detail::shape_from_tensor(op, "input_sizes", input_sizes);
    if (s.rank() == 2) {
        const bool nhwc = nn_detail::is_nhwc(op, p.data_format);
        if (out_backprop.rank() != 4 || filter.rank() != 4) {
            throw shape_error(detail::cat(op, ": out_backprop and filter must be rank 4, given ", out_backprop.shape().str(),
                                          " and ", filter.shape().str()));
        }
        const std::int64_t n = out_backprop.dim(0), c = filter.dim(2);
        s = nhwc ? shape{n, s.dim(0), s.dim(1), c} : shape{n, c, s.dim(0), s.dim(1)};
    }
    return conv2d_backprop_input(s, filter, out_backprop, p);
}

/// Conv2DBackpropFilter: the gradient of Conv2D with respect to its filter [KH,KW,C,OC]. float32/
/// float64. Throws shape_error when filter_shape or out_backprop does not fit the input.
inline tensor conv2d_backprop_filter(const tensor& input, const shape& filter_shape, const tensor& out_backprop,
                                     const conv2d_params& p) {
    const char* op = "Conv2DBackpropFilter";
    nn_detail::check_float(op, "input", input);
    nn_detail::check_same_dtype(op, "input", input, "out_backprop", out_backprop);
    const bool nhwc = nn_detail::is_nhwc(op, p.data_format);
    const auto in = nn_detail::activation_dims(op, "input", input, nhwc);
    const auto g = nn_detail::make_conv_geom(op, in, filter_shape, p, false, input.shape());
    nn_detail::check_out_backprop(op, g, out_backprop, input.shape(), filter_shape);
    tensor df = tensor::uninitialized(input.type(), filter_shape);
    if (input.type() == dtype::float32) {
        nn_detail::conv_filter_grad(g, input.data<float>(), out_backprop.data<float>(), df.data<float>());
    } else {
        nn_detail::conv_filter_grad(g, input.data<double>(), out_backprop.data<double>(), df.data<double>());
    }
    return df;
}

/// Conv2DBackpropFilter with TF's `filter_sizes` tensor (int32/int64, 4 entries). Throws as above.
inline tensor conv2d_backprop_filter(const tensor& input, const tensor& filter_sizes, const tensor& out_backprop,
                                     const conv2d_params& p) {
    return conv2d_backprop_filter(input, nn_detail::shape_from_tensor("Conv2DBackpropFilter", "filter_sizes", filter_sizes),
                                  out_backprop, p);
}

}  // namespace graft::ops

#include "graft/ops/conv_depthwise.hpp"
