// src/cuda/launch_elementwise.hpp — launchers of kernels/elementwise.cu: unary and broadcasting
// binary math, activation gradients, Select, Cast, fills, AddN, BiasAddGrad and L2Loss. Raw device
// pointers, int64 sizes, the stream as void* (a cudaStream_t); every launcher queues its work on
// `stream` and throws graft::error (through GRAFT_CUDA_CHECK) when a launch fails. None
// synchronizes. No CUDA header here: exec_elementwise.cpp (g++) includes it too.
#pragma once

#include <cstdint>

namespace graft::cuda::launch {

/// Most merged output dims a broadcast may have (make_broadcast merges runs of equal pattern).
inline constexpr int max_broadcast_rank = 8;

/// Up to three inputs broadcast to one output of `rank` merged dims (outermost first): input k's
/// element at output multi-index (i_0, ..., i_{rank-1}) is at sum_j i_j * strides[k][j] (0 where
/// input k repeats). Unused inputs and dims are ignored.
struct broadcast_desc {
    int rank = 1;
    std::int64_t dims[max_broadcast_rank] = {};
    std::int64_t strides[3][max_broadcast_rank] = {};
};

/// The float32 unary ops (TF names in exec_elementwise.cpp).
// clang-format off
enum class unary_op : int {
    neg, abs, sign, square, sqrt, rsqrt, reciprocal, exp, log, log1p, tanh, sigmoid, relu, relu6, elu,
    selu, softplus, leaky_relu, floor, ceil, round, sin, cos, erf
};
// clang-format on

/// The float32 binary ops: arithmetic (float output), comparisons (bool output) and the
/// activation gradients (same-shape inputs in TF's order).
// clang-format off
enum class binary_op : int {
    add, sub, mul, div, floor_div, floor_mod, maximum, minimum, pow, squared_difference,
    equal, not_equal, less, less_equal, greater, greater_equal,
    relu_grad, relu6_grad, elu_grad, selu_grad, softplus_grad, leaky_relu_grad, sigmoid_grad,
    tanh_grad, rsqrt_grad, sqrt_grad, reciprocal_grad
};
// clang-format on

/// True for the ops whose output is bool.
constexpr bool is_comparison(binary_op op) {
    return op >= binary_op::equal && op <= binary_op::greater_equal;
}

/// Element types Cast moves on the device.
enum class elem : int { f32, f64, f16, bf16, i32, i64, boolean, u8 };

/// y[i] = op(x[i]) for i < n; `param` is LeakyRelu's alpha or Softplus's threshold
/// (log(FLT_EPSILON) + 2), unused otherwise. y may be x.
void unary_f32(unary_op op, const float* x, float* y, std::int64_t n, float param, void* stream);

/// out = op(a, b) broadcast per `d` over n output elements; `out` is float* or, for a comparison,
/// bool*. `param` is LeakyReluGrad's alpha. out may be an input that has the output's shape.
void binary_f32(binary_op op, const float* a, const float* b, void* out, std::int64_t n,
                const broadcast_desc& d, float param, void* stream);

/// LogicalNot: y[i] = !x[i] for i < n.
void logical_not(const bool* x, bool* y, std::int64_t n, void* stream);
/// LogicalAnd (`is_and`) or LogicalOr of a and b broadcast per `d`.
void logical_binary(bool is_and, const bool* a, const bool* b, bool* out, std::int64_t n,
                    const broadcast_desc& d, void* stream);

/// out = cond ? t : e with inputs 0 (cond), 1 (t), 2 (e) broadcast per `d`; elements of
/// `element_bytes` (1, 2, 4 or 8) bytes are moved as they are. Throws error for other sizes.
void select(const bool* cond, const void* t, const void* e, void* out, int element_bytes,
            std::int64_t n, const broadcast_desc& d, void* stream);

/// Every element of `out` (n elements of `element_bytes` = 1, 2, 4 or 8 bytes) set to the low
/// bytes of `pattern`. Throws error for other sizes.
void fill(void* out, int element_bytes, std::uint64_t pattern, std::int64_t n, void* stream);

/// out[i] = inputs[0][i] + inputs[1][i] + ... (left to right, as the CPU's AddN) for `count` >= 1
/// inputs (a host array of device pointers; any count, taken 8 at a time).
void add_n_f32(const float* const* inputs, int count, float* out, std::int64_t n, void* stream);

/// y = x converted from `from` to `to` with TF's Cast rules (graft::ops::cast_to): floats to
/// integers truncate toward zero, NaN gives 0, out of range saturates; to bool is != 0; half and
/// bfloat16 round to nearest even through float.
void cast(const void* x, elem from, void* y, elem to, std::int64_t n, void* stream);

/// BiasAddGrad: db[c] = sum over o < outer, i < inner of dy[(o * channels + c) * inner + i]
/// (NHWC: inner = 1; NCHW: inner = H*W), accumulated in double.
void bias_add_grad_f32(const float* dy, float* db, std::int64_t outer, std::int64_t channels,
                       std::int64_t inner, void* stream);

/// Bytes of device scratch l2_loss_f32 needs for n elements.
std::int64_t l2_loss_scratch_bytes(std::int64_t n);
/// L2Loss: out[0] = sum(x^2) / 2 (accumulated in double), using `scratch` of
/// l2_loss_scratch_bytes(n) bytes (device memory, 8-byte aligned).
void l2_loss_f32(const float* x, float* out, std::int64_t n, void* scratch, void* stream);

}  // namespace graft::cuda::launch
