// src/cuda/launch_reduce.hpp — launchers of kernels/reduce.cu: reductions of a [K1, R, K2] view
// over its middle dim, ArgMax/ArgMin, and the softmax cross-entropy ops. Raw device pointers, int64
// sizes, the stream as void*.
#pragma once

#include <cstdint>

namespace graft::cuda::launch {

/// The reductions reduce_f32 knows (Mean: the sum divided by R).
enum class reduce_op : int { sum, mean, max, min, prod };

/// out[k1 * K2 + k2] = op over r < R of in[(k1 * R + r) * K2 + k2] (float32; sums and products
/// accumulate in double; Max/Min propagate NaN). R == 0 writes the identity (0, 1, -inf, +inf, NaN
/// for Mean) and does not read `in`. Queued on `stream`; throws graft::error on a CUDA failure.
void reduce_f32(const float* in, float* out, std::int64_t K1, std::int64_t R, std::int64_t K2,
                reduce_op op, void* stream);

/// out[o * inner + i] = index a < n of the largest (is_max) or smallest in[(o * n + a) * inner +
/// i]: the first one on ties, NaN counting as largest / smallest (TF's CPU rule). n >= 1. `out` is
/// int64 when out_int64, else int32. Queued on `stream`.
void arg_reduce_f32(const float* in, void* out, bool out_int64, std::int64_t outer, std::int64_t n,
                    std::int64_t inner, bool is_max, void* stream);

/// SoftmaxCrossEntropyWithLogits over [B, C] with broadcast element strides (features element
/// (b, c) at b * fb + c * fc, labels at b * lb + c * lc): loss[b] = sum_c y * (lse - z_c) with
/// z = x - max(x), lse = log(sum(exp(z))); backprop[b, c] = exp(z_c - lse) - y. C == 0 gives zero
/// losses. Queued on `stream`.
void softmax_xent_f32(const float* features, const float* labels, float* loss, float* backprop,
                      std::int64_t B, std::int64_t C, std::int64_t fb, std::int64_t fc,
                      std::int64_t lb, std::int64_t lc, void* stream);

/// SparseSoftmaxCrossEntropyWithLogits over features [B, C] and int32 / int64 labels [B]:
/// loss[b] = lse - z[y], backprop = exp(z - lse) minus 1 at y. A label outside [0, C) gives NaN
/// in its row's loss and backprop (TF's GPU kernel: device labels are not checked on the host).
/// Queued on `stream`.
void sparse_softmax_xent_f32(const float* features, const void* labels, bool labels_int64,
                             float* loss, float* backprop, std::int64_t B, std::int64_t C,
                             void* stream);

}  // namespace graft::cuda::launch
