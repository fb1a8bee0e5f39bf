// graft/ops/softmax.hpp — Softmax, LogSoftmax, SoftmaxCrossEntropyWithLogits and
// SparseSoftmaxCrossEntropyWithLogits as TensorFlow defines them (last axis, max-shifted so that
// large logits do not overflow).
//
//   tensor p = graft::ops::softmax(logits);                                   // [..., C]
//   auto [loss, backprop] = graft::ops::softmax_cross_entropy_with_logits(logits, labels);
//   auto s = graft::ops::sparse_softmax_cross_entropy_with_logits(logits, class_ids);   // int32/int64 ids
//
// float32 and float64 (Softmax and LogSoftmax also float16/bfloat16); rows run in parallel on
// graft's thread pool.
#pragma once

#include "graft/core/config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/core/threads.hpp"
#include "graft/ops/detail/nn_util.hpp"

namespace graft::ops {

/// Outputs of the two cross-entropy ops: loss [batch] and backprop [batch, classes] (= softmax - labels).
struct softmax_xent_result {
    tensor loss;
    tensor backprop;
};

namespace nn_detail {

template <class T>
using row_array = Eigen::Map<Eigen::Array<T, 1, Eigen::Dynamic>>;
template <class T>
using const_row_array = Eigen::Map<const Eigen::Array<T, 1, Eigen::Dynamic>>;

/// out = x - max(x); returns log(sum(exp(out))).
template <class T>
T shifted_logsumexp(const T* x, T* out, std::int64_t n) {
    const_row_array<T> xr(x, n);
    row_array<T> o(out, n);
    o = xr - xr.maxCoeff();
    return std::log(o.exp().sum());
}

template <class F>
void for_rows(std::int64_t rows, std::int64_t cols, F&& f) {
    parallel_for(rows, std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(1, cols)),
                 [&](std::int64_t r0, std::int64_t r1) {
                     for (std::int64_t r = r0; r < r1; ++r) f(r);
                 });
}

/// One row of Softmax / LogSoftmax for a 16-bit float T (float16, bfloat16) as TF's Eigen::half
/// arithmetic runs it: each step computes in float32 and rounds to T (the shifted logits, each
/// exp, the running sum, its log or reciprocal, the result). `buf` holds n floats.
template <bool Log, class T>
void softmax_row_16(const T* x, T* y, std::int64_t n, float* buf) {
    const auto rnd = [](float v) { return static_cast<float>(static_cast<T>(v)); };
    float m = -std::numeric_limits<float>::infinity();
    for (std::int64_t i = 0; i < n; ++i) m = std::max(m, static_cast<float>(x[i]));
    for (std::int64_t i = 0; i < n; ++i) buf[i] = rnd(static_cast<float>(x[i]) - m);
    float sum = 0;
    if constexpr (Log) {
        for (std::int64_t i = 0; i < n; ++i) sum = rnd(sum + rnd(std::exp(buf[i])));
        const float lse = rnd(std::log(sum));
        for (std::int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(buf[i] - lse);
    } else {
        for (std::int64_t i = 0; i < n; ++i) {
            buf[i] = rnd(std::exp(buf[i]));
            sum = rnd(sum + buf[i]);
        }
        const float inv = rnd(1.0f / sum);
        for (std::int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(buf[i] * inv);
    }
}

template <bool Log>
tensor softmax_op(const char* op, const tensor& logits) {
    if (!is_floating(logits.type()) || is_ref(logits.type())) {
        throw invalid_argument_error(detail::cat(
            op, ": logits must be float16, bfloat16, float32 or float64, given ", logits.describe()));
    }
    if (logits.rank() < 1) {
        throw shape_error(detail::cat(op, ": logits must have rank >= 1, given ", logits.shape().str()));
    }
    const std::int64_t cols = logits.dim(logits.rank() - 1);
    const std::int64_t rows = cols == 0 ? 0 : logits.num_elements() / cols;
    tensor out = tensor::uninitialized(logits.type(), logits.shape());
    visit_dtype(logits.type(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_floating_point_v<T>) {
            const T* x = logits.data<T>();
            T* y = out.data<T>();
            for_rows(rows, cols, [&](std::int64_t r) {
                T* o = y + r * cols;
                const T lse = shifted_logsumexp(x + r * cols, o, cols);
                row_array<T> orow(o, cols);
                if constexpr (Log) orow -= lse;
                else orow = (orow - lse).exp();
            });
        } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
            const T* x = logits.data<T>();
            T* y = out.data<T>();
            parallel_for(rows, std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(1, cols)),
                         [&](std::int64_t r0, std::int64_t r1) {
                             std::vector<float> buf(static_cast<std::size_t>(cols));
                             for (std::int64_t r = r0; r < r1; ++r)
                                 softmax_row_16<Log>(x + r * cols, y + r * cols, cols, buf.data());
                         });
        }
    });
    return out;
}

}  // namespace nn_detail

/// Softmax over the last axis: exp(x - max) / sum(exp(x - max)). float32/float64, and
/// float16/bfloat16 (each step in float32 rounded back, as TF); rank >= 1. Throws shape_error
/// (rank 0) or invalid_argument_error (dtype).
inline tensor softmax(const tensor& logits) { return nn_detail::softmax_op<false>("Softmax", logits); }

/// LogSoftmax over the last axis: x - max - log(sum(exp(x - max))). Throws as softmax.
inline tensor log_softmax(const tensor& logits) { return nn_detail::softmax_op<true>("LogSoftmax", logits); }

namespace nn_detail {
/// SoftmaxCrossEntropyWithLogits' [B, C] and the broadcast strides (batch, class) of its operands.
struct xent_layout {
    std::int64_t B = 0, C = 0;
    std::int64_t fb = 0, fc = 0, lb = 0, lc = 0;  ///< features / labels strides; 0 = broadcast
};
/// Checks the operands (float, same dtype, rank <= 2, broadcastable to a matrix) and lays them out.
/// Throws shape_error / invalid_argument_error naming the op and the shapes.
inline xent_layout xent_layout_of(const char* op, const tensor& features, const tensor& labels) {
    check_float(op, "features", features);
    check_same_dtype(op, "features", features, "labels", labels);
    shape bs;
    try {
        bs = broadcast_shapes(features.shape(), labels.shape());
    } catch (const shape_error&) {
        throw shape_error(detail::cat(op, ": logits and labels must be broadcastable: logits ", features.shape().str(),
                                      ", labels ", labels.shape().str()));
    }
    if (bs.rank() != 2 || features.rank() > 2 || labels.rank() > 2) {
        throw shape_error(detail::cat(op, ": logits and labels must be 2-D or broadcast to 2-D, given logits ",
                                      features.shape().str(), " and labels ", labels.shape().str()));
    }
    xent_layout l;
    l.B = bs.dim(0);
    l.C = bs.dim(1);
    // broadcast strides of a rank <= 2 operand into [B, C]
    auto strides = [&](const tensor& t, std::int64_t& sb, std::int64_t& sc) {
        const int r = t.rank();
        const std::int64_t db = r == 2 ? t.dim(0) : 1, dc = r >= 1 ? t.dim(r - 1) : 1;
        sc = dc == 1 ? 0 : 1;
        sb = db == 1 ? 0 : dc;
    };
    strides(features, l.fb, l.fc);
    strides(labels, l.lb, l.lc);
    return l;
}
}  // namespace nn_detail

/// SoftmaxCrossEntropyWithLogits: features and labels broadcast (NumPy rules) to [batch, classes];
/// loss[b] = -sum(labels * log_softmax(features)), backprop = softmax(features) - labels. float32/
/// float64. Throws shape_error when the shapes do not broadcast to a matrix, invalid_argument_error on dtype.
inline softmax_xent_result softmax_cross_entropy_with_logits(const tensor& features, const tensor& labels) {
    const auto l = nn_detail::xent_layout_of("SoftmaxCrossEntropyWithLogits", features, labels);
    const std::int64_t B = l.B, C = l.C, fb = l.fb, fc = l.fc, lb = l.lb, lc = l.lc;
    softmax_xent_result r{tensor::uninitialized(features.type(), {B}), tensor::uninitialized(features.type(), {B, C})};
    visit_dtype(features.type(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_floating_point_v<T>) {
            const T* f = features.data<T>();
            const T* lab = labels.data<T>();
            T* loss = r.loss.data<T>();
            T* bp = r.backprop.data<T>();
            if (C == 0) {
                std::fill(loss, loss + B, T(0));
                return;
            }
            nn_detail::for_rows(B, C, [&](std::int64_t b) {
                T* o = bp + b * C;
                for (std::int64_t c = 0; c < C; ++c) o[c] = f[b * fb + c * fc];
                const T lse = nn_detail::shifted_logsumexp(o, o, C);  // o = shifted logits
                T l = T(0);
                for (std::int64_t c = 0; c < C; ++c) {
                    const T y = lab[b * lb + c * lc];
                    l += y * (lse - o[c]);
                    o[c] = std::exp(o[c] - lse) - y;
                }
                loss[b] = l;
            });
        }
    });
    return r;
}

/// SparseSoftmaxCrossEntropyWithLogits: features [batch, classes], labels [batch] of int32/int64
/// class ids; loss[b] = logsumexp(features[b]) - features[b, labels[b]], backprop = softmax - one_hot.
/// Throws invalid_argument_error for a label outside [0, classes) (naming its index and value),
/// shape_error for mismatched shapes.
inline softmax_xent_result sparse_softmax_cross_entropy_with_logits(const tensor& features, const tensor& labels) {
    const char* op = "SparseSoftmaxCrossEntropyWithLogits";
    nn_detail::check_float(op, "features", features);
    if (labels.type() != dtype::int32 && labels.type() != dtype::int64) {
        throw invalid_argument_error(detail::cat(op, ": labels must be int32 or int64, given ", labels.describe()));
    }
    if (features.rank() != 2 || labels.rank() != 1 || labels.dim(0) != features.dim(0)) {
        throw shape_error(detail::cat(op, ": features must be [batch, classes] and labels [batch], given features ",
                                      features.shape().str(), " and labels ", labels.shape().str()));
    }
    const std::int64_t B = features.dim(0), C = features.dim(1);
    auto label = [&](std::int64_t b) -> std::int64_t {
        return labels.type() == dtype::int32 ? labels.data<std::int32_t>()[b] : labels.data<std::int64_t>()[b];
    };
    for (std::int64_t b = 0; b < B; ++b) {
        const std::int64_t y = label(b);
        if (y < 0 || y >= C) {
            throw invalid_argument_error(detail::cat(op, ": received a label value of ", y, " at index ", b,
                                                     ", which is outside the valid range of [0, ", C, ")"));
        }
    }
    softmax_xent_result r{tensor::uninitialized(features.type(), {B}), tensor::uninitialized(features.type(), {B, C})};
    visit_dtype(features.type(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_floating_point_v<T>) {
            const T* f = features.data<T>();
            T* loss = r.loss.data<T>();
            T* bp = r.backprop.data<T>();
            nn_detail::for_rows(B, C, [&](std::int64_t b) {
                T* o = bp + b * C;
                const T lse = nn_detail::shifted_logsumexp(f + b * C, o, C);
                const std::int64_t y = label(b);
                loss[b] = lse - o[y];
                nn_detail::row_array<T> orow(o, C);
                orow = (orow - lse).exp();
                o[y] -= T(1);
            });
        }
    });
    return r;
}

}  // namespace graft::ops
