// graft/ops/activation_grad.hpp — the gradient kernels of the unary activations that TF gradient
// graphs contain (ReluGrad, SigmoidGrad, TanhGrad, ...). Inputs have equal shapes (no
// broadcasting).
//
//   tensor dx = ops::relu_grad(dy, x);        // ReluGrad(gradients, features)
//   tensor dz = ops::sigmoid_grad(y, dy);     // SigmoidGrad(y, dy): note TF's argument order
//
// Argument order follows the TF op: the *Grad ops of Relu, Relu6, Softplus and LeakyRelu take
// (gradients, features), Elu and Selu take (gradients, outputs), and Sigmoid, Tanh, Rsqrt, Sqrt and
// Reciprocal take (y, dy) where y is the forward output.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "graft/ops/gemm.hpp"
#include "graft/ops/unary.hpp"

namespace graft::ops {

namespace op_detail {

/// A float32 kernel o[0, n) = f(a[0, n), b[0, n)) for an op's fast path (AVX-512 or AVX2), or none.
using f32_pair_kernel = void (*)(const float*, const float*, float*, std::int64_t);

}  // namespace op_detail
}  // namespace graft::ops

// The AVX-512 and AVX2 ReluGrad loops: ops/arch/x86/activation_grad.hpp.
#include "graft/ops/arch/x86/activation_grad.hpp"

namespace graft::ops {
namespace op_detail {

#ifdef GRAFT_X86_DISPATCH
/// ReluGrad on the vector ISA in force (gemm::active_kernel(): AVX-512 or AVX2; same_shape_op runs
/// the portable loop for neither).
inline void relu_grad_x86(const float* a, const float* b, float* o, std::int64_t n) {
    if (gemm::active_kernel() == gemm::kernel_isa::avx512) relu_grad_avx512(a, b, o, n);
    else relu_grad_avx2(a, b, o, n);
}
#endif

/// out = build(a, b) for two inputs of one shape and dtype (Ts); a and b name the TF inputs.
/// `fast`, when given, computes float32 instead under AVX-512 or AVX2 (same values).
template <class... Ts, class Build>
tensor same_shape_op(types<Ts...>, std::string_view op, const tensor& a, std::string_view an,
                     const tensor& b, std::string_view bn, const tensor* out, double cycles,
                     const Build& build, f32_pair_kernel fast = nullptr) {
    require_input(op, a, an);
    require_input(op, b, bn);
    require_same_dtype(op, a, an, b, bn);
    if (!(a.shape() == b.shape())) {
        throw shape_error(cat(op, ": ", an, " has shape ", a.shape().str(), " but ", bn, " has ",
                              b.shape().str(), ": they must be equal"));
    }
    check_alias(op, out, a, an, a.shape());
    check_alias(op, out, b, bn, a.shape());
    return dispatch<Ts...>(
        a.type(), op,
        [&](auto tag) {
            using T = decltype(tag);
            tensor r = prepare_out(op, dtype_of<T>, a.shape(), out);
            const T* pa = a.data<T>();
            const T* pb = b.data<T>();
            T* po = r.data<T>();
#ifdef GRAFT_X86_DISPATCH
            if constexpr (std::is_same_v<T, float>) {
                if (fast && gemm::active_kernel() != gemm::kernel_isa::portable) {
                    parallel_for(a.num_elements(), 3.0 * sizeof(T), cycles,
                                 [&](std::int64_t i, std::int64_t j) { fast(pa + i, pb + i, po + i, j - i); });
                    return r;
                }
            }
#else
            (void)fast;
#endif
            parallel_for(a.num_elements(), 3.0 * sizeof(T), cycles,
                         [&](std::int64_t i, std::int64_t j) {
                             const_tensor_map<T, 1> x(pa + i, j - i);
                             const_tensor_map<T, 1> y(pb + i, j - i);
                             tensor_map<T, 1> o(po + i, j - i);
                             o = build(x, y, T{});
                         });
            return r;
        },
        an);
}

}  // namespace op_detail

// Each throws shape_error when the two inputs' shapes differ, invalid_argument_error when their
// dtypes differ or are not float32/float64 (ReluGrad and Relu6Grad also take int32/int64).
// `out`, when given, receives the result (same shape and dtype; it may be one of the inputs).

/// ReluGrad(gradients, features): gradients where features > 0, else 0; throws as above.
tensor relu_grad(const tensor& gradients, const tensor& features,
                 const tensor* out = nullptr);
/// Relu6Grad(gradients, features): gradients where 0 < features < 6, else 0; throws as above.
tensor relu6_grad(const tensor& gradients, const tensor& features,
                  const tensor* out = nullptr);
/// EluGrad(gradients, outputs): gradients * (outputs + 1) where outputs < 0, else gradients; throws
/// as above.
tensor elu_grad(const tensor& gradients, const tensor& outputs,
                const tensor* out = nullptr);
/// SeluGrad(gradients, outputs): gradients * (outputs + scale*alpha) where outputs < 0, else
/// gradients * scale; throws as above.
tensor selu_grad(const tensor& gradients, const tensor& outputs,
                 const tensor* out = nullptr);
/// SoftplusGrad(gradients, features): gradients * sigmoid(features); throws as above.
tensor softplus_grad(const tensor& gradients, const tensor& features,
                     const tensor* out = nullptr);
/// LeakyReluGrad(gradients, features, alpha): gradients where features > 0, else alpha * gradients.
/// Throws as above.
tensor leaky_relu_grad(const tensor& gradients, const tensor& features, float alpha = 0.2f,
                       const tensor* out = nullptr);
/// SigmoidGrad(y, dy): dy * y * (1 - y); throws as above.
tensor sigmoid_grad(const tensor& y, const tensor& dy, const tensor* out = nullptr);
/// TanhGrad(y, dy): dy * (1 - y^2); throws as above.
tensor tanh_grad(const tensor& y, const tensor& dy, const tensor* out = nullptr);
/// RsqrtGrad(y, dy): dy * -0.5 * y^3 (y = rsqrt(x)); throws as above.
tensor rsqrt_grad(const tensor& y, const tensor& dy, const tensor* out = nullptr);
/// SqrtGrad(y, dy): dy * 0.5 / y (y = sqrt(x)); throws as above.
tensor sqrt_grad(const tensor& y, const tensor& dy, const tensor* out = nullptr);
/// ReciprocalGrad (alias InvGrad)(y, dy): -dy * y^2 (y = 1/x); throws as above.
tensor reciprocal_grad(const tensor& y, const tensor& dy, const tensor* out = nullptr);

}  // namespace graft::ops

// The ops above are a compiled part (core/config.hpp): with graft::compiled,
// src/compiled/elementwise_ops.cpp compiles them once (every dtype of every op is a lot of code);
// without it they are defined inline here.
#if !defined(GRAFT_SEPARATE_COMPILATION) || defined(GRAFT_COMPILING_ELEMENTWISE)
#include "graft/ops/detail/activation_grad_impl.hpp"
#endif
