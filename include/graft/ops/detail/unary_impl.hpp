// graft/ops/detail/unary_impl.hpp — the definitions of the ops graft/ops/unary.hpp declares: inline when
// graft is used header-only, compiled once into graft::compiled by src/compiled/elementwise_ops.cpp
// otherwise (core/config.hpp). Included by unary.hpp only.
#pragma once

#include "graft/ops/unary.hpp"

namespace graft::ops {

GRAFT_INLINE tensor neg(const tensor& x, const tensor* out) {
    return op_detail::unary_op(op_detail::signed_real_types{}, "Neg", x, out, 1,
                               [](const auto& v, auto) { return -v; });
}

GRAFT_INLINE tensor abs(const tensor& x, const tensor* out) {
    return op_detail::unary_op(op_detail::signed_real_types{}, "Abs", x, out, 1,
                               [](const auto& v, auto) { return v.abs(); });
}

GRAFT_INLINE tensor sign(const tensor& x, const tensor* out) {
    return op_detail::unary_op(op_detail::signed_real_types{}, "Sign", x, out, 2,
                               [](const auto& v, auto) { return v.sign(); });
}

GRAFT_INLINE tensor square(const tensor& x, const tensor* out) {
    return op_detail::unary_op(op_detail::all_real_types{}, "Square", x, out, 1,
                               [](const auto& v, auto) { return v.square(); });
}

GRAFT_INLINE tensor sqrt(const tensor& x, const tensor* out) {
    return op_detail::unary_op(op_detail::all_float_types{}, "Sqrt", x, out, 4,
                               [](const auto& v, auto) { return v.sqrt(); });
}

GRAFT_INLINE tensor rsqrt(const tensor& x, const tensor* out) {
    return op_detail::unary_op(op_detail::all_float_types{}, "Rsqrt", x, out, 5,
                               [](const auto& v, auto) { return v.rsqrt(); });
}

GRAFT_INLINE tensor reciprocal(const tensor& x, const tensor* out) {
    return op_detail::unary_op(op_detail::all_float_types{}, "Reciprocal", x, out, 4,
                               [](const auto& v, auto) { return v.inverse(); });
}

GRAFT_INLINE tensor exp(const tensor& x, const tensor* out) {
    return op_detail::unary_op(op_detail::all_float_types{}, "Exp", x, out, 10,
                               [](const auto& v, auto) { return v.exp(); });
}

GRAFT_INLINE tensor log(const tensor& x, const tensor* out) {
    return op_detail::unary_op(op_detail::all_float_types{}, "Log", x, out, 10,
                               [](const auto& v, auto) { return v.log(); });
}

GRAFT_INLINE tensor log1p(const tensor& x, const tensor* out) {
    return op_detail::unary_op(op_detail::all_float_types{}, "Log1p", x, out, 12,
                               [](const auto& v, auto) { return v.log1p(); });
}

GRAFT_INLINE tensor tanh(const tensor& x, const tensor* out) {
    return op_detail::unary_op(op_detail::all_float_types{}, "Tanh", x, out, 10,
                               [](const auto& v, auto) { return v.tanh(); });
}

GRAFT_INLINE tensor sigmoid(const tensor& x, const tensor* out) {
    return op_detail::unary_op(op_detail::all_float_types{}, "Sigmoid", x, out, 12,
                               [](const auto& v, auto) { return v.sigmoid(); });
}

GRAFT_INLINE tensor relu(const tensor& x, const tensor* out) {
    return op_detail::unary_op(
        op_detail::all_real_types{}, "Relu", x, out, 1, [](const auto& v, auto tag) {
            using T = decltype(tag);
            return v.template cwiseMax<Eigen::PropagateNaN>(v.constant(T(0)));
        });
}

GRAFT_INLINE tensor relu6(const tensor& x, const tensor* out) {
    return op_detail::unary_op(op_detail::all_real_types{}, "Relu6", x, out, 2,
                               [](const auto& v, auto tag) {
                                   using T = decltype(tag);
                                   return v.template cwiseMax<Eigen::PropagateNaN>(v.constant(T(0)))
                                       .template cwiseMin<Eigen::PropagateNaN>(v.constant(T(6)));
                               });
}

GRAFT_INLINE tensor elu(const tensor& x, const tensor* out) {
    return op_detail::unary_op(op_detail::all_float_types{}, "Elu", x, out, 12,
                               [](const auto& v, auto tag) {
                                   using T = decltype(tag);
                                   return (v < v.constant(T(0))).select(v.expm1(), v);
                               });
}

GRAFT_INLINE tensor selu(const tensor& x, const tensor* out) {
    return op_detail::unary_op(
        op_detail::all_float_types{}, "Selu", x, out, 14, [](const auto& v, auto tag) {
            using T = decltype(tag);
            const T scale = static_cast<T>(op_detail::selu_scale);
            const T scale_alpha = static_cast<T>(op_detail::selu_scale * op_detail::selu_alpha);
            return (v < v.constant(T(0)))
                .select(v.expm1() * v.constant(scale_alpha), v * v.constant(scale));
        });
}

GRAFT_INLINE tensor softplus(const tensor& x, const tensor* out) {
    return op_detail::unary_op(
        op_detail::all_float_types{}, "Softplus", x, out, 24, [](const auto& v, auto tag) {
            using T = decltype(tag);
            // Beyond |x| > -log(eps) - 2, log1p(exp(x)) equals x (large x) or exp(x) (very negative
            // x).
            const T threshold = static_cast<T>(std::log(std::numeric_limits<T>::epsilon()) + 2);
            return (v > v.constant(-threshold))
                .select(v, (v < v.constant(threshold)).select(v.exp(), v.exp().log1p()));
        });
}

GRAFT_INLINE tensor leaky_relu(const tensor& x, float alpha, const tensor* out) {
    return op_detail::unary_op(
        op_detail::all_float_types{}, "LeakyRelu", x, out, 2, [alpha](const auto& v, auto tag) {
            using T = decltype(tag);
            return (v > v.constant(T(0))).select(v, v * v.constant(static_cast<T>(alpha)));
        });
}

GRAFT_INLINE tensor floor(const tensor& x, const tensor* out) {
    return op_detail::unary_op(op_detail::all_float_types{}, "Floor", x, out, 1,
                               [](const auto& v, auto) { return v.floor(); });
}

GRAFT_INLINE tensor ceil(const tensor& x, const tensor* out) {
    return op_detail::unary_op(op_detail::all_float_types{}, "Ceil", x, out, 1,
                               [](const auto& v, auto) { return v.ceil(); });
}

GRAFT_INLINE tensor round(const tensor& x, const tensor* out) {
    return op_detail::unary_op(
        op_detail::float_and_int_types{}, "Round", x, out, 2, [](const auto& v, auto tag) {
            using T = decltype(tag);
            if constexpr (std::is_integral_v<T>)
                return v + v.constant(T(0));
            else
                return v.rint();  // the default rounding mode rounds halves to even
        });
}

GRAFT_INLINE tensor sin(const tensor& x, const tensor* out) {
    return op_detail::unary_op(
        op_detail::all_float_types{}, "Sin", x, out, 10, [](const auto& v, auto tag) {
            return v.unaryExpr(Eigen::internal::scalar_sin_op<decltype(tag)>());
        });
}

GRAFT_INLINE tensor cos(const tensor& x, const tensor* out) {
    return op_detail::unary_op(
        op_detail::all_float_types{}, "Cos", x, out, 10, [](const auto& v, auto tag) {
            return v.unaryExpr(Eigen::internal::scalar_cos_op<decltype(tag)>());
        });
}

GRAFT_INLINE tensor erf(const tensor& x, const tensor* out) {
    return op_detail::unary_op(op_detail::all_float_types{}, "Erf", x, out, 20,
                               [](const auto& v, auto) { return v.erf(); });
}

GRAFT_INLINE tensor logical_not(const tensor& x, const tensor* out) {
    return op_detail::unary_op(
        op_detail::types<bool>{}, "LogicalNot", x, out, 1, [](const auto& v, auto) {
            return v.unaryExpr(Eigen::internal::scalar_boolean_not_op<bool>());
        });
}

}  // namespace graft::ops
