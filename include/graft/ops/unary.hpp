// graft/ops/unary.hpp — elementwise unary ops (Neg, Exp, Relu, Round, ...) as TF defines them.
//
//   tensor y = ops::relu(x);                  // new tensor, same shape and dtype
//   ops::tanh(x, &x);                         // in place: `out` may be the input itself
//   tensor z = ops::leaky_relu(x, 0.1f);
//
// Every kernel maps the input in contiguous runs onto an Eigen expression (vectorized with Eigen's
// packet math) and spreads the runs over graft's thread pool. dtypes follow TF's CPU registrations:
// float32/float64/float16/bfloat16 for the transcendental ops; also int8..int64 for Neg, Abs, Sign;
// every real type for Square, Relu, Relu6; int32/int64 for Round; bool for LogicalNot. float16 and
// bfloat16 compute in float32 and round each result back, 8/16-bit integers in 32 bits (widen.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

#include "graft/ops/detail/op_support.hpp"
#include "graft/ops/detail/widen.hpp"

namespace graft::ops {

namespace op_detail {

using real_types = types<float, double, std::int32_t, std::int64_t>;
using float_types = types<float, double>;

/// Throws invalid_argument_error unless `out` is free of overlap with input `in` (or is `in`
/// itself with the result's shape, which elementwise kernels can overwrite safely).
inline void check_alias(std::string_view op, const tensor* out, const tensor& in,
                        std::string_view what, const shape& result) {
    if (!out || !out->shares_buffer_with(in)) return;
    if (out->raw_data() == in.raw_data() && in.shape() == result) return;
    const auto* o = static_cast<const char*>(out->raw_data());
    const auto* i = static_cast<const char*>(in.raw_data());
    if (o + out->nbytes() <= i || i + in.nbytes() <= o) return;  // disjoint views of one buffer
    throw invalid_argument_error(cat(op, ": out shares memory with ", what, " ", in.describe(),
                                     " but the result is ", result.str(),
                                     ": in-place needs the same shape"));
}

/// Checks `out` (when given) against the result's dtype and shape, else allocates the result.
/// Throws invalid_argument_error when they differ.
inline tensor prepare_out(std::string_view op, dtype t, const shape& s, const tensor* out) {
    if (!out) return tensor::uninitialized(t, s);
    require_input(op, *out, "out");
    if (base_type(out->type()) != t || !(out->shape() == s)) {
        throw invalid_argument_error(
            cat(op, ": out is ", out->describe(), " but the result is ", dtype_name(t), s.str()));
    }
    return *out;
}
/// The same, moving `s` into the new tensor (a broadcast plan's output shape, not needed after).
inline tensor prepare_out(std::string_view op, dtype t, shape&& s, const tensor* out) {
    if (!out) return tensor::uninitialized(t, std::move(s));
    return prepare_out(op, t, static_cast<const shape&>(s), out);
}

/// out[i] = build(x)[i] where build maps an Eigen view of a run of x to an expression of the same
/// length; `cycles` is the cost of one element.
template <class T, class R, class Build>
void unary_runs(const tensor& x, const tensor& out, double cycles, const Build& build) {
    const T* in = x.data<T>();
    R* o = out.data<R>();
    parallel_for(x.num_elements(), sizeof(T) + sizeof(R), cycles,
                 [&](std::int64_t a, std::int64_t b) {
                     const_tensor_map<T, 1> xm(in + a, b - a);
                     tensor_map<R, 1> om(o + a, b - a);
                     om = build(xm, T{});
                 });
}

/// unary_runs for a T that computes in C = compute_t<T>: x is widened to C, the op runs as C's own
/// kernel (the same code, compiled once) and the result narrows back into out.
template <class T, class R, class Build>
void unary_runs_widened(const tensor& x, const tensor& out, double cycles, const Build& build) {
    using C = compute_t<T>;
    using CR = std::conditional_t<std::is_same_v<R, bool>, bool, compute_t<R>>;
    tensor xw = widen_tensor<C, T>(x);
    tensor ow = tensor::uninitialized(dtype_of<CR>, x.shape());
    unary_runs<C, CR>(xw, ow, cycles, build);
    narrow_tensor<R, CR>(ow, out);
}

/// A same-dtype unary op over the types Ts: validates, allocates (or checks out), runs.
template <class... Ts, class Build>
tensor unary_op(types<Ts...>, std::string_view op, const tensor& x, const tensor* out,
                double cycles, const Build& build) {
    require_input(op, x, "x");
    check_alias(op, out, x, "x", x.shape());
    return dispatch<Ts...>(
        x.type(), op,
        [&](auto tag) {
            using T = decltype(tag);
            tensor r = prepare_out(op, dtype_of<T>, x.shape(), out);
            if constexpr (is_widened<T>)
                unary_runs_widened<T, T>(x, r, cycles, build);
            else
                unary_runs<T, T>(x, r, cycles, build);
            return r;
        },
        "x");
}

// SELU constants (Klambauer et al. 2017), as TF's selu kernel.
inline constexpr double selu_scale = 1.0507009873554804934193349852946;
inline constexpr double selu_alpha = 1.6732632423543772848170429916717;

}  // namespace op_detail

// Each op: x -> a new tensor (or writes into *out, which must have x's shape and the result dtype
// and may be x itself). Each throws invalid_argument_error for a dtype outside its list.

/// Neg: -x. float16/32/64, bfloat16, int8..int64; throws invalid_argument_error for other dtypes.
tensor neg(const tensor& x, const tensor* out = nullptr);
/// Abs: |x|. float16/32/64, bfloat16, int8..int64; throws invalid_argument_error for other dtypes.
tensor abs(const tensor& x, const tensor* out = nullptr);
/// Sign: -1, 0 or 1 (NaN stays NaN). float16/32/64, bfloat16, int8..int64.
/// Throws invalid_argument_error for other dtypes.
tensor sign(const tensor& x, const tensor* out = nullptr);
/// Square: x*x (integers wrap). Every real type (float16/32/64, bfloat16, int8..int64,
/// uint8..uint64); throws invalid_argument_error for other dtypes.
tensor square(const tensor& x, const tensor* out = nullptr);
/// Sqrt. float16/32/64, bfloat16; throws invalid_argument_error for other dtypes.
tensor sqrt(const tensor& x, const tensor* out = nullptr);
/// Rsqrt: 1/sqrt(x). float16/32/64, bfloat16; throws invalid_argument_error for other dtypes.
tensor rsqrt(const tensor& x, const tensor* out = nullptr);
/// Reciprocal (alias Inv): 1/x. float16/32/64, bfloat16; throws invalid_argument_error for other
/// dtypes.
tensor reciprocal(const tensor& x, const tensor* out = nullptr);
/// Exp. float16/32/64, bfloat16; throws invalid_argument_error for other dtypes.
tensor exp(const tensor& x, const tensor* out = nullptr);
/// Log (natural). float16/32/64, bfloat16; throws invalid_argument_error for other dtypes.
tensor log(const tensor& x, const tensor* out = nullptr);
/// Log1p: log(1 + x), accurate near 0. float16/32/64, bfloat16; throws invalid_argument_error for
/// other dtypes.
tensor log1p(const tensor& x, const tensor* out = nullptr);
/// Tanh. float16/32/64, bfloat16; throws invalid_argument_error for other dtypes.
tensor tanh(const tensor& x, const tensor* out = nullptr);
/// Sigmoid: 1 / (1 + exp(-x)). float16/32/64, bfloat16; throws invalid_argument_error for other
/// dtypes.
tensor sigmoid(const tensor& x, const tensor* out = nullptr);
/// Relu: max(x, 0), NaN propagates. Every real type (float16/32/64, bfloat16, int8..int64,
/// uint8..uint64). Throws invalid_argument_error for other dtypes.
tensor relu(const tensor& x, const tensor* out = nullptr);
/// Relu6: min(max(x, 0), 6), NaN propagates. Every real type (float16/32/64, bfloat16, int8..int64,
/// uint8..uint64). Throws invalid_argument_error for other dtypes.
tensor relu6(const tensor& x, const tensor* out = nullptr);
/// Elu: x if x >= 0 else exp(x) - 1. float16/32/64, bfloat16; throws invalid_argument_error for
/// other dtypes.
tensor elu(const tensor& x, const tensor* out = nullptr);
/// Selu: scale * (x if x >= 0 else alpha * (exp(x) - 1)). float16/32/64, bfloat16.
/// Throws invalid_argument_error for other dtypes.
tensor selu(const tensor& x, const tensor* out = nullptr);
/// Softplus: log(1 + exp(x)), computed without overflow as TF does. float16/32/64, bfloat16.
/// Throws invalid_argument_error for other dtypes.
tensor softplus(const tensor& x, const tensor* out = nullptr);
/// LeakyRelu: x if x > 0 else alpha * x. float16/32/64, bfloat16; throws invalid_argument_error for
/// other dtypes.
tensor leaky_relu(const tensor& x, float alpha = 0.2f, const tensor* out = nullptr);
/// Floor. float16/32/64, bfloat16; throws invalid_argument_error for other dtypes.
tensor floor(const tensor& x, const tensor* out = nullptr);
/// Ceil. float16/32/64, bfloat16; throws invalid_argument_error for other dtypes.
tensor ceil(const tensor& x, const tensor* out = nullptr);
/// Round: to nearest, halves to even (banker's rounding, as TF). float16/32/64, bfloat16; int32
/// and int64 unchanged.
/// Throws invalid_argument_error for other dtypes.
tensor round(const tensor& x, const tensor* out = nullptr);
/// Sin. float16/32/64, bfloat16; throws invalid_argument_error for other dtypes.
tensor sin(const tensor& x, const tensor* out = nullptr);
/// Cos. float16/32/64, bfloat16; throws invalid_argument_error for other dtypes.
tensor cos(const tensor& x, const tensor* out = nullptr);
/// Erf: the error function. float16/32/64, bfloat16; throws invalid_argument_error for other
/// dtypes.
tensor erf(const tensor& x, const tensor* out = nullptr);
/// LogicalNot. bool only; throws invalid_argument_error for other dtypes.
tensor logical_not(const tensor& x, const tensor* out = nullptr);

}  // namespace graft::ops

// The ops above are a compiled part (core/config.hpp): with graft::compiled,
// src/compiled/elementwise_ops.cpp compiles them once (every dtype of every op is a lot of code);
// without it they are defined inline here.
#if !defined(GRAFT_SEPARATE_COMPILATION) || defined(GRAFT_COMPILING_ELEMENTWISE)
#include "graft/ops/detail/unary_impl.hpp"
#endif
