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

/// A float32 kernel o[0, n) = f(a[0, n), b[0, n)) for an op's fast path (AVX-512), or none.
using f32_pair_kernel = void (*)(const float*, const float*, float*, std::int64_t);

}  // namespace op_detail
}  // namespace graft::ops

// The AVX-512 ReluGrad loop: ops/arch/x86/activation_grad.hpp.
#include "graft/ops/arch/x86/activation_grad.hpp"

namespace graft::ops {
namespace op_detail {

/// out = build(a, b) for two inputs of one shape and dtype (Ts); a and b name the TF inputs.
/// `fast`, when given, computes float32 instead under AVX-512 (same values).
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
                if (fast && gemm::active_kernel() == gemm::kernel_isa::avx512) {
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
inline tensor relu_grad(const tensor& gradients, const tensor& features,
                        const tensor* out = nullptr) {
    return op_detail::same_shape_op(op_detail::real_types{}, "ReluGrad", gradients, "gradients",
                                    features, "features", out, 1,
                                    [](const auto& g, const auto& f, auto tag) {
                                        using T = decltype(tag);
                                        return (f > f.constant(T(0))).select(g, g.constant(T(0)));
                                    },
#ifdef GRAFT_X86_DISPATCH
                                    &op_detail::relu_grad_avx512
#else
                                    nullptr
#endif
    );
}
/// Relu6Grad(gradients, features): gradients where 0 < features < 6, else 0; throws as above.
inline tensor relu6_grad(const tensor& gradients, const tensor& features,
                         const tensor* out = nullptr) {
    return op_detail::same_shape_op(
        op_detail::real_types{}, "Relu6Grad", gradients, "gradients", features, "features", out, 2,
        [](const auto& g, const auto& f, auto tag) {
            using T = decltype(tag);
            return ((f > f.constant(T(0))) && (f < f.constant(T(6)))).select(g, g.constant(T(0)));
        });
}
/// EluGrad(gradients, outputs): gradients * (outputs + 1) where outputs < 0, else gradients; throws
/// as above.
inline tensor elu_grad(const tensor& gradients, const tensor& outputs,
                       const tensor* out = nullptr) {
    return op_detail::same_shape_op(
        op_detail::float_types{}, "EluGrad", gradients, "gradients", outputs, "outputs", out, 3,
        [](const auto& g, const auto& y, auto tag) {
            using T = decltype(tag);
            return (y < y.constant(T(0))).select(g * (y + y.constant(T(1))), g);
        });
}
/// SeluGrad(gradients, outputs): gradients * (outputs + scale*alpha) where outputs < 0, else
/// gradients * scale; throws as above.
inline tensor selu_grad(const tensor& gradients, const tensor& outputs,
                        const tensor* out = nullptr) {
    return op_detail::same_shape_op(
        op_detail::float_types{}, "SeluGrad", gradients, "gradients", outputs, "outputs", out, 3,
        [](const auto& g, const auto& y, auto tag) {
            using T = decltype(tag);
            const T scale = static_cast<T>(op_detail::selu_scale);
            const T scale_alpha = static_cast<T>(op_detail::selu_scale * op_detail::selu_alpha);
            return (y < y.constant(T(0)))
                .select(g * (y + y.constant(scale_alpha)), g * g.constant(scale));
        });
}
/// SoftplusGrad(gradients, features): gradients * sigmoid(features); throws as above.
inline tensor softplus_grad(const tensor& gradients, const tensor& features,
                            const tensor* out = nullptr) {
    return op_detail::same_shape_op(
        op_detail::float_types{}, "SoftplusGrad", gradients, "gradients", features, "features", out,
        14, [](const auto& g, const auto& f, auto) { return g * f.sigmoid(); });
}
/// LeakyReluGrad(gradients, features, alpha): gradients where features > 0, else alpha * gradients.
/// Throws as above.
inline tensor leaky_relu_grad(const tensor& gradients, const tensor& features, float alpha = 0.2f,
                              const tensor* out = nullptr) {
    return op_detail::same_shape_op(
        op_detail::float_types{}, "LeakyReluGrad", gradients, "gradients", features, "features",
        out, 2, [alpha](const auto& g, const auto& f, auto tag) {
            using T = decltype(tag);
            return (f > f.constant(T(0))).select(g, g * g.constant(static_cast<T>(alpha)));
        });
}
/// SigmoidGrad(y, dy): dy * y * (1 - y); throws as above.
inline tensor sigmoid_grad(const tensor& y, const tensor& dy, const tensor* out = nullptr) {
    return op_detail::same_shape_op(op_detail::float_types{}, "SigmoidGrad", y, "y", dy, "dy", out,
                                    3, [](const auto& v, const auto& d, auto tag) {
                                        using T = decltype(tag);
                                        return d * v * (v.constant(T(1)) - v);
                                    });
}
/// TanhGrad(y, dy): dy * (1 - y^2); throws as above.
inline tensor tanh_grad(const tensor& y, const tensor& dy, const tensor* out = nullptr) {
    return op_detail::same_shape_op(op_detail::float_types{}, "TanhGrad", y, "y", dy, "dy", out, 3,
                                    [](const auto& v, const auto& d, auto tag) {
                                        using T = decltype(tag);
                                        return d * (v.constant(T(1)) - v * v);
                                    });
}
/// RsqrtGrad(y, dy): dy * -0.5 * y^3 (y = rsqrt(x)); throws as above.
inline tensor rsqrt_grad(const tensor& y, const tensor& dy, const tensor* out = nullptr) {
    return op_detail::same_shape_op(op_detail::float_types{}, "RsqrtGrad", y, "y", dy, "dy", out, 4,
                                    [](const auto& v, const auto& d, auto tag) {
                                        using T = decltype(tag);
                                        return v * v * v * d * v.constant(T(-0.5));
                                    });
}
/// SqrtGrad(y, dy): dy * 0.5 / y (y = sqrt(x)); throws as above.
inline tensor sqrt_grad(const tensor& y, const tensor& dy, const tensor* out = nullptr) {
    return op_detail::same_shape_op(op_detail::float_types{}, "SqrtGrad", y, "y", dy, "dy", out, 6,
                                    [](const auto& v, const auto& d, auto tag) {
                                        using T = decltype(tag);
                                        return d * v.constant(T(0.5)) / v;
                                    });
}
/// ReciprocalGrad (alias InvGrad)(y, dy): -dy * y^2 (y = 1/x); throws as above.
inline tensor reciprocal_grad(const tensor& y, const tensor& dy, const tensor* out = nullptr) {
    return op_detail::same_shape_op(op_detail::float_types{}, "ReciprocalGrad", y, "y", dy, "dy",
                                    out, 3,
                                    [](const auto& v, const auto& d, auto) { return -d * v * v; });
}

}  // namespace graft::ops
