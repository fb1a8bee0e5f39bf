// graft/ops/special_functions.hpp — TensorFlow's special-function ops: Lgamma, Digamma, Erfc
// (unary), Igamma, Igammac, IgammaGradA, Polygamma, Zeta (broadcasting binaries) and Betainc
// (three inputs), with Eigen's implementations (unsupported/Eigen/SpecialFunctions), the ones TF's
// CPU kernels call, so the values are TF's.
//
//   tensor p = ops::special_binary("Igamma", a, x);     // P(a, x), the regularized lower gamma
//   tensor i = ops::betainc(a, b, x);                    // I_x(a, b)
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include <unsupported/Eigen/SpecialFunctions>

#include "graft/ops/math_more.hpp"

namespace graft::ops {

/// Lgamma (log|Gamma(x)|), Digamma (psi(x)) or Erfc by TF name, on float32/float64/float16/bfloat16.
/// Throws invalid_argument_error for another dtype, unimplemented_error for an unknown name.
inline tensor special_unary(std::string_view op, const tensor& x) {
    using namespace math_detail;
    if (op == "Lgamma") return map_unary<void>(float_types{}, op, x, 40, [](auto v) { return Eigen::numext::lgamma(v); });
    if (op == "Digamma")
        return map_unary<void>(float_types{}, op, x, 40, [](auto v) { return Eigen::numext::digamma(v); });
    if (op == "Erfc") return map_unary<void>(float_types{}, op, x, 30, [](auto v) { return Eigen::numext::erfc(v); });
    throw unimplemented_error(cat("special_unary: no kernel for op '", op, "'"));
}

/// Igamma(a, x) and Igammac(a, x) (regularized lower/upper incomplete gamma, float32/float64/
/// float16/bfloat16), IgammaGradA(a, x) (d Igamma / da), Polygamma(n, x) and Zeta(x, q) (Hurwitz;
/// float32/float64), with broadcasting. Throws invalid_argument_error for mixed or unsupported
/// dtypes, shape_error when the shapes do not broadcast, unimplemented_error for an unknown name.
inline tensor special_binary(std::string_view op, const tensor& a, const tensor& b) {
    using namespace math_detail;
    using f64 = types<float, double>;
    if (op == "Igamma")
        return map_binary<void>(float_types{}, op, a, b, 200, [](auto p, auto q) { return Eigen::numext::igamma(p, q); });
    if (op == "Igammac")
        return map_binary<void>(float_types{}, op, a, b, 200, [](auto p, auto q) { return Eigen::numext::igammac(p, q); });
    if (op == "IgammaGradA")
        return map_binary<void>(f64{}, op, a, b, 400, [](auto p, auto q) { return Eigen::numext::igamma_der_a(p, q); });
    if (op == "Polygamma")
        return map_binary<void>(f64{}, op, a, b, 200, [](auto p, auto q) { return Eigen::numext::polygamma(p, q); });
    if (op == "Zeta")
        return map_binary<void>(f64{}, op, a, b, 200, [](auto p, auto q) { return Eigen::numext::zeta(p, q); });
    throw unimplemented_error(cat("special_binary: no kernel for op '", op, "'"));
}

/// Betainc(a, b, x): the regularized incomplete beta function I_x(a, b), float32/float64. As in
/// TF, each input is a scalar or has the one shape all non-scalar inputs share. Throws
/// invalid_argument_error for mixed or unsupported dtypes, shape_error for inconsistent shapes.
inline tensor betainc(const tensor& a, const tensor& b, const tensor& x) {
    using namespace math_detail;
    constexpr std::string_view op = "Betainc";
    op_detail::require_input(op, a, "a");
    op_detail::require_input(op, b, "b");
    op_detail::require_input(op, x, "x");
    op_detail::require_same_dtype(op, a, "a", b, "b");
    op_detail::require_same_dtype(op, a, "a", x, "x");
    const shape* common = nullptr;
    for (const tensor* t : {&a, &b, &x}) {
        if (t->rank() == 0) continue;
        if (common && !(*common == t->shape()))
            throw shape_error(cat(op, ": shapes of a, b and x are inconsistent: ", a.shape().str(), ", ",
                                  b.shape().str(), ", ", x.shape().str(), " (each must be a scalar or share one shape)"));
        common = &t->shape();
    }
    return op_detail::dispatch<float, double>(
        a.type(), op,
        [&](auto tag) {
            using T = decltype(tag);
            const shape* shapes[] = {&a.shape(), &b.shape(), &x.shape()};
            auto plan = op_detail::plan_broadcast(op, std::span<const shape* const>(shapes, 3));
            tensor out = tensor::uninitialized(dtype_of<T>, std::move(plan.out_shape));  // (the runs read dims, strides)
            const T* pa = a.data<T>();
            const T* pb = b.data<T>();
            const T* px = x.data<T>();
            T* po = out.data<T>();
            op_detail::for_each_run<3>(plan, 4.0 * sizeof(T), 300,
                                       [&](std::int64_t i, std::int64_t len, const auto& off, const auto& contig) {
                                           for (std::int64_t j = 0; j < len; ++j) {
                                               po[i + j] = Eigen::numext::betainc(pa[off[0] + (contig[0] ? j : 0)],
                                                                                  pb[off[1] + (contig[1] ? j : 0)],
                                                                                  px[off[2] + (contig[2] ? j : 0)]);
                                           }
                                       });
            return out;
        },
        "a");
}

}  // namespace graft::ops
