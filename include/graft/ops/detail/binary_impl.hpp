// graft/ops/detail/binary_impl.hpp — the definitions of the ops graft/ops/binary.hpp declares: inline when
// graft is used header-only, compiled once into graft::compiled by src/compiled/elementwise_ops.cpp
// otherwise (core/config.hpp). Included by binary.hpp only.
#pragma once

#include "graft/ops/binary.hpp"

namespace graft::ops {

GRAFT_INLINE tensor add(const tensor& x, const tensor& y, const tensor* out) {
    return op_detail::binary_op<false>(op_detail::all_real_types{}, "Add", x, y, out, 1,
                                       [](const auto& a, const auto& b, auto) { return a + b; });
}

GRAFT_INLINE tensor sub(const tensor& x, const tensor& y, const tensor* out) {
    return op_detail::binary_op<false>(op_detail::all_real_types{}, "Sub", x, y, out, 1,
                                       [](const auto& a, const auto& b, auto) { return a - b; });
}

GRAFT_INLINE tensor mul(const tensor& x, const tensor& y, const tensor* out) {
    return op_detail::binary_op<false>(op_detail::all_real_types{}, "Mul", x, y, out, 1,
                                       [](const auto& a, const auto& b, auto) { return a * b; });
}

GRAFT_INLINE tensor div(const tensor& x, const tensor& y, const tensor* out) {
    return op_detail::binary_op<false>(
        op_detail::all_real_types{}, "Div", x, y, out, 5,
        [](const auto& a, const auto& b, auto tag) {
            using T = decltype(tag);
            if constexpr (std::is_integral_v<T>)
                return a.binaryExpr(b, op_detail::trunc_div_op<T>());
            else
                return a / b;
        },
        op_detail::nonzero_divisor_check{"Div"});
}

GRAFT_INLINE tensor real_div(const tensor& x, const tensor& y, const tensor* out) {
    return op_detail::binary_op<false>(op_detail::all_float_types{}, "RealDiv", x, y, out, 5,
                                       [](const auto& a, const auto& b, auto) { return a / b; });
}

GRAFT_INLINE tensor floor_div(const tensor& x, const tensor& y, const tensor* out) {
    return op_detail::binary_op<false>(
        op_detail::all_real_types{}, "FloorDiv", x, y, out, 8,
        [](const auto& a, const auto& b, auto tag) {
            using T = decltype(tag);
            if constexpr (std::is_integral_v<T>)
                return a.binaryExpr(b, op_detail::floor_div_int_op<T>());
            else
                return (a / b).floor();
        },
        op_detail::nonzero_divisor_check{"FloorDiv"});
}

GRAFT_INLINE tensor floor_mod(const tensor& x, const tensor& y, const tensor* out) {
    return op_detail::binary_op<false>(
        op_detail::all_real_types{}, "FloorMod", x, y, out, 20,
        [](const auto& a, const auto& b, auto tag) {
            using T = decltype(tag);
            if constexpr (std::is_integral_v<T>)
                return a.binaryExpr(b, op_detail::floor_mod_int_op<T>());
            else
                return a.binaryExpr(b, op_detail::floor_fmod_op<T>());
        },
        op_detail::nonzero_divisor_check{"FloorMod"});
}

GRAFT_INLINE tensor maximum(const tensor& x, const tensor& y, const tensor* out) {
    return op_detail::binary_op<false>(op_detail::all_real_types{}, "Maximum", x, y, out, 1,
                                       [](const auto& a, const auto& b, auto) {
                                           return a.template cwiseMax<Eigen::PropagateNaN>(b);
                                       });
}

GRAFT_INLINE tensor minimum(const tensor& x, const tensor& y, const tensor* out) {
    return op_detail::binary_op<false>(op_detail::all_real_types{}, "Minimum", x, y, out, 1,
                                       [](const auto& a, const auto& b, auto) {
                                           return a.template cwiseMin<Eigen::PropagateNaN>(b);
                                       });
}

GRAFT_INLINE tensor pow(const tensor& x, const tensor& y, const tensor* out) {
    return op_detail::binary_op<false>(
        op_detail::signed_real_types{}, "Pow", x, y, out, 30,
        [](const auto& a, const auto& b, auto tag) {
            using T = decltype(tag);
            if constexpr (std::is_integral_v<T>)
                return a.binaryExpr(b, op_detail::int_pow_op<T>());
            else
                return a.binaryExpr(b, Eigen::internal::scalar_pow_op<T, T>());
        },
        op_detail::nonnegative_exponent_check{});
}

GRAFT_INLINE tensor squared_difference(const tensor& x, const tensor& y, const tensor* out) {
    return op_detail::binary_op<false>(
        op_detail::float_and_int_types{}, "SquaredDifference", x, y, out, 2,
        [](const auto& a, const auto& b, auto) { return (a - b).square(); });
}

GRAFT_INLINE tensor equal_to(const tensor& x, const tensor& y, const tensor* out) {
    return op_detail::binary_op<true>(
        op_detail::all_real_and_bool_types{}, "Equal", x, y, out, 1,
        [](const auto& a, const auto& b, auto tag) {
            // binaryExpr, not a == b: C++20's reversed candidates make
            // Eigen's member operator== ambiguous under clang
            using T = decltype(tag);
            return a.binaryExpr(b, Eigen::internal::scalar_cmp_op<T, T, Eigen::internal::cmp_EQ>());
        });
}

GRAFT_INLINE tensor not_equal_to(const tensor& x, const tensor& y, const tensor* out) {
    return op_detail::binary_op<true>(
        op_detail::all_real_and_bool_types{}, "NotEqual", x, y, out, 1,
        [](const auto& a, const auto& b, auto tag) {
            using T = decltype(tag);  // binaryExpr: see equal_to
            return a.binaryExpr(b,
                                Eigen::internal::scalar_cmp_op<T, T, Eigen::internal::cmp_NEQ>());
        });
}

GRAFT_INLINE tensor less(const tensor& x, const tensor& y, const tensor* out) {
    return op_detail::binary_op<true>(op_detail::all_real_types{}, "Less", x, y, out, 1,
                                      [](const auto& a, const auto& b, auto) { return a < b; });
}

GRAFT_INLINE tensor less_equal(const tensor& x, const tensor& y, const tensor* out) {
    return op_detail::binary_op<true>(op_detail::all_real_types{}, "LessEqual", x, y, out, 1,
                                      [](const auto& a, const auto& b, auto) { return a <= b; });
}

GRAFT_INLINE tensor greater(const tensor& x, const tensor& y, const tensor* out) {
    return op_detail::binary_op<true>(op_detail::all_real_types{}, "Greater", x, y, out, 1,
                                      [](const auto& a, const auto& b, auto) { return a > b; });
}

GRAFT_INLINE tensor greater_equal(const tensor& x, const tensor& y, const tensor* out) {
    return op_detail::binary_op<true>(op_detail::all_real_types{}, "GreaterEqual", x, y, out, 1,
                                      [](const auto& a, const auto& b, auto) { return a >= b; });
}

GRAFT_INLINE tensor logical_and(const tensor& x, const tensor& y, const tensor* out) {
    return op_detail::binary_op<true>(op_detail::types<bool>{}, "LogicalAnd", x, y, out, 1,
                                      [](const auto& a, const auto& b, auto) { return a && b; });
}

GRAFT_INLINE tensor logical_or(const tensor& x, const tensor& y, const tensor* out) {
    return op_detail::binary_op<true>(op_detail::types<bool>{}, "LogicalOr", x, y, out, 1,
                                      [](const auto& a, const auto& b, auto) { return a || b; });
}

}  // namespace graft::ops
