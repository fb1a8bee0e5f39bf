// graft/ops/math_more.hpp — the elementwise math ops beyond ops/unary.hpp and ops/binary.hpp:
// hyperbolic and inverse trigonometric functions, Expm1, Rint, Softsign, the IsNan/IsInf/IsFinite
// tests, and the broadcasting binaries Atan2, Mod/TruncateMod, TruncateDiv, Xdivy, Xlogy, Xlog1py,
// DivNoNan, MulNoNan, SoftsignGrad and ApproximateEqual, as TensorFlow's CPU kernels define them.
//
//   tensor y = ops::math_unary("Cosh", x);              // float32/float64/float16/bfloat16
//   tensor z = ops::math_binary("Atan2", y_, x_);       // with broadcasting
//   tensor m = ops::math_unary("IsNan", x);             // bool result
//
// Each op maps one element at a time through a scalar function (float16 and bfloat16 are computed
// in float32 and rounded back, as Eigen's half arithmetic does); runs are spread over graft's pool.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>
#include <vector>

#include "graft/core/half.hpp"
#include "graft/ops/binary.hpp"
#include "graft/ops/broadcast.hpp"

namespace graft::ops {

namespace math_detail {

using op_detail::cat;
using op_detail::types;

/// The float types of TF's transcendental CPU kernels.
using float_types = types<float, double, half, bfloat16>;
/// The integer types of TF's bitwise and integer-division kernels.
using int_types = types<std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint16_t,
                        std::uint32_t, std::uint64_t>;
/// TF's "numbertype" minus the complex types.
using real_number_types = types<float, double, half, bfloat16, std::int8_t, std::int16_t, std::int32_t,
                                std::int64_t, std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t>;

template <class T>
inline constexpr bool is_half_like = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;
/// The type a T element is computed in: float for the 16-bit floats, T otherwise.
template <class T>
using compute_t = std::conditional_t<is_half_like<T>, float, T>;

/// out[i] = f(x[i]) over the types Ts; the result dtype is R, or x's when R is void. f takes and
/// returns compute_t<T> (or R). Throws invalid_argument_error for a dtype outside Ts.
template <class R, class... Ts, class F>
tensor map_unary(types<Ts...>, std::string_view op, const tensor& x, double cycles, const F& f) {
    op_detail::require_input(op, x, "x");
    return op_detail::dispatch<Ts...>(
        x.type(), op,
        [&](auto tag) {
            using T = decltype(tag);
            using C = compute_t<T>;
            using O = std::conditional_t<std::is_void_v<R>, T, R>;
            tensor out = tensor::uninitialized(dtype_of<O>, x.shape());
            const T* in = x.data<T>();
            O* o = out.data<O>();
            op_detail::parallel_for(x.num_elements(), sizeof(T) + sizeof(O), cycles,
                                    [&](std::int64_t a, std::int64_t b) {
                                        for (std::int64_t i = a; i < b; ++i)
                                            o[i] = static_cast<O>(f(static_cast<C>(in[i])));
                                    });
            return out;
        },
        "x");
}

/// out = f(a, b) with NumPy broadcasting over the types Ts (a and b of one dtype); the result
/// dtype is R, or the inputs' when R is void. `check(a, b, T{})` runs before (e.g. a zero-divisor
/// scan). Throws invalid_argument_error for mixed or unsupported dtypes, shape_error when the
/// shapes do not broadcast.
template <class R, class... Ts, class F, class Check = op_detail::no_check>
tensor map_binary(types<Ts...>, std::string_view op, const tensor& a, const tensor& b, double cycles, const F& f,
                  const Check& check = {}) {
    op_detail::require_input(op, a, "x");
    op_detail::require_input(op, b, "y");
    op_detail::require_same_dtype(op, a, "x", b, "y");
    return op_detail::dispatch<Ts...>(
        a.type(), op,
        [&](auto tag) {
            using T = decltype(tag);
            using C = compute_t<T>;
            using O = std::conditional_t<std::is_void_v<R>, T, R>;
            auto plan = make_broadcast(op, a.shape(), b.shape());
            check(a, b, tag);
            tensor out = tensor::uninitialized(dtype_of<O>, std::move(plan.out_shape));  // (the runs read dims, strides)
            const T* pa = a.data<T>();
            const T* pb = b.data<T>();
            O* po = out.data<O>();
            op_detail::for_each_run<2>(plan, 2.0 * sizeof(T) + sizeof(O), cycles,
                                       [&](std::int64_t i, std::int64_t len, const auto& off, const auto& contig) {
                                           const T* xa = pa + off[0];
                                           const T* xb = pb + off[1];
                                           const std::int64_t sa = contig[0] ? 1 : 0, sb = contig[1] ? 1 : 0;
                                           for (std::int64_t j = 0; j < len; ++j) {
                                               po[i + j] = static_cast<O>(
                                                   f(static_cast<C>(xa[j * sa]), static_cast<C>(xb[j * sb])));
                                           }
                                       });
            return out;
        },
        "x");
}

/// Integer division and remainder by zero are errors in TF's CPU kernels: scans y first.
struct int_divisor_check {
    std::string_view op;
    template <class T>
    void operator()(const tensor&, const tensor& y, T) const {
        if constexpr (std::is_integral_v<T>) {
            const T* p = y.data<T>();
            for (std::int64_t i = 0, n = y.num_elements(); i < n; ++i) {
                if (p[i] == 0)
                    throw invalid_argument_error(cat(op, ": integer division by zero (y is 0 at flat index ", i,
                                                     " of ", y.shape().str(), ")"));
            }
        }
    }
};

/// x / y rounded toward zero; for integers x / -1 wraps like two's complement instead of trapping.
template <class C>
C truncate_div(C x, C y) {
    if constexpr (std::is_integral_v<C>) {
        if constexpr (std::is_signed_v<C>) {
            if (y == C(-1)) return static_cast<C>(C(0) - static_cast<std::make_unsigned_t<C>>(x));
        }
        return static_cast<C>(x / y);
    } else {
        return std::trunc(x / y);
    }
}
/// The remainder of truncate_div (C's % or fmod: the sign of x).
template <class C>
C truncate_mod(C x, C y) {
    if constexpr (std::is_integral_v<C>) {
        if constexpr (std::is_signed_v<C>) {
            if (y == C(-1)) return C(0);
        }
        return static_cast<C>(x % y);
    } else {
        return std::fmod(x, y);
    }
}

}  // namespace math_detail

// ---------------------------------------------------------------- unary

/// The unary ops of this header by TF name (Cosh, Sinh, Tan, Asin, Acos, Atan, Asinh, Acosh, Atanh,
/// Expm1, Rint, Softsign on float32/float64/float16/bfloat16; IsNan, IsInf, IsFinite -> bool).
/// Throws invalid_argument_error for another dtype, unimplemented_error for an unknown name.
inline tensor math_unary(std::string_view op, const tensor& x) {
    using namespace math_detail;
    auto same = [&](double cycles, auto f) { return map_unary<void>(float_types{}, op, x, cycles, f); };
    auto test = [&](auto f) { return map_unary<bool>(float_types{}, op, x, 2, f); };
    if (op == "Cosh") return same(20, [](auto v) { return std::cosh(v); });
    if (op == "Sinh") return same(20, [](auto v) { return std::sinh(v); });
    if (op == "Tan") return same(20, [](auto v) { return std::tan(v); });
    if (op == "Asin") return same(20, [](auto v) { return std::asin(v); });
    if (op == "Acos") return same(20, [](auto v) { return std::acos(v); });
    if (op == "Atan") return same(20, [](auto v) { return std::atan(v); });
    if (op == "Asinh") return same(20, [](auto v) { return std::asinh(v); });
    if (op == "Acosh") return same(20, [](auto v) { return std::acosh(v); });
    if (op == "Atanh") return same(20, [](auto v) { return std::atanh(v); });
    if (op == "Expm1") return same(12, [](auto v) { return std::expm1(v); });
    // nearbyint under the default rounding mode: halves to even, like TF's rint
    if (op == "Rint") return same(2, [](auto v) { return std::nearbyint(v); });
    if (op == "Softsign") return same(4, [](auto v) { return v / (decltype(v)(1) + std::abs(v)); });
    if (op == "IsNan") return test([](auto v) { return std::isnan(v); });
    if (op == "IsInf") return test([](auto v) { return std::isinf(v); });
    if (op == "IsFinite") return test([](auto v) { return std::isfinite(v); });
    throw unimplemented_error(cat("math_unary: no kernel for op '", op, "'"));
}

/// The TF op names math_unary() knows.
inline const std::vector<std::string_view>& math_unary_op_names() {
    static const std::vector<std::string_view> n = {"Cosh",  "Sinh",  "Tan",  "Asin",     "Acos",  "Atan",
                                                    "Asinh", "Acosh", "Atanh", "Expm1",   "Rint",  "Softsign",
                                                    "IsNan", "IsInf", "IsFinite"};
    return n;
}

// ---------------------------------------------------------------- binary

/// The broadcasting binary ops of this header by TF name, inputs in TF's order:
/// Atan2(y, x), Xdivy, Xlogy, Xlog1py, DivNoNan, MulNoNan, SoftsignGrad(gradients, features) on
/// float32/float64/float16/bfloat16; Mod and TruncateMod (remainder with the sign of x) on those and
/// int8..uint64; TruncateDiv (quotient rounded toward zero) on the same. Throws
/// invalid_argument_error for mixed or unsupported dtypes and for an integer division by zero,
/// shape_error when the shapes do not broadcast, unimplemented_error for an unknown name.
inline tensor math_binary(std::string_view op, const tensor& x, const tensor& y) {
    using namespace math_detail;
    auto fl = [&](double cycles, auto f) { return map_binary<void>(float_types{}, op, x, y, cycles, f); };
    using all_types = real_number_types;
    if (op == "Atan2") return fl(20, [](auto a, auto b) { return std::atan2(a, b); });
    if (op == "Xdivy") return fl(4, [](auto a, auto b) { return a == decltype(a)(0) ? decltype(a)(0) : a / b; });
    if (op == "Xlogy")
        return fl(12, [](auto a, auto b) { return a == decltype(a)(0) ? decltype(a)(0) : a * std::log(b); });
    if (op == "Xlog1py")
        return fl(12, [](auto a, auto b) { return a == decltype(a)(0) ? decltype(a)(0) : a * std::log1p(b); });
    if (op == "DivNoNan") return fl(4, [](auto a, auto b) { return b == decltype(b)(0) ? decltype(a)(0) : a / b; });
    if (op == "MulNoNan") return fl(2, [](auto a, auto b) { return b == decltype(b)(0) ? decltype(a)(0) : a * b; });
    if (op == "SoftsignGrad")
        return fl(6, [](auto g, auto f) {
            auto d = decltype(f)(1) + std::abs(f);
            return g / (d * d);
        });
    if (op == "Mod" || op == "TruncateMod")
        return map_binary<void>(all_types{}, op, x, y, 8, [](auto a, auto b) { return truncate_mod(a, b); },
                                int_divisor_check{op});
    if (op == "TruncateDiv")
        return map_binary<void>(all_types{}, op, x, y, 8, [](auto a, auto b) { return truncate_div(a, b); },
                                int_divisor_check{op});
    throw unimplemented_error(cat("math_binary: no kernel for op '", op, "'"));
}

/// The TF op names math_binary() knows.
inline const std::vector<std::string_view>& math_binary_op_names() {
    static const std::vector<std::string_view> n = {"Atan2",    "Xdivy",    "Xlogy",        "Xlog1py",
                                                    "DivNoNan", "MulNoNan", "SoftsignGrad", "Mod",
                                                    "TruncateMod", "TruncateDiv"};
    return n;
}

/// ApproximateEqual: |x - y| < tolerance elementwise (bool), x and y of one shape (no
/// broadcasting, as TF). Throws shape_error when the shapes differ, invalid_argument_error for
/// mixed or unsupported dtypes.
inline tensor approximate_equal(const tensor& x, const tensor& y, float tolerance) {
    using math_detail::cat;
    constexpr std::string_view op = "ApproximateEqual";
    op_detail::require_input(op, x, "x");
    op_detail::require_input(op, y, "y");
    if (!(x.shape() == y.shape()))
        throw shape_error(cat(op, ": x and y must have the same shape but are ", x.shape().str(), " and ",
                              y.shape().str()));
    return math_detail::map_binary<bool>(math_detail::real_number_types{}, op, x, y, 3, [tolerance](auto a, auto b) {
        using C = decltype(a);
        if constexpr (std::is_integral_v<C>) {
            const double d = static_cast<double>(a) - static_cast<double>(b);
            return std::abs(d) < static_cast<double>(static_cast<C>(tolerance));
        } else {
            return std::abs(a - b) < static_cast<C>(tolerance);
        }
    });
}

/// AccumulateNV2 / AddN over same-shape inputs of one dtype: their elementwise sum, added in input
/// order. Throws invalid_argument_error for an empty list, mixed dtypes or an unsupported dtype,
/// shape_error for differing shapes.
inline tensor accumulate_n(std::string_view op, const std::vector<tensor>& xs) {
    using math_detail::cat;
    if (xs.empty()) throw invalid_argument_error(cat(op, ": needs at least one input"));
    for (std::size_t k = 0; k < xs.size(); ++k) {
        op_detail::require_input(op, xs[k], cat("inputs[", k, "]"));
        op_detail::require_same_dtype(op, xs[0], "inputs[0]", xs[k], cat("inputs[", k, "]"));
        if (!(xs[k].shape() == xs[0].shape()))
            throw shape_error(cat(op, ": inputs[", k, "] has shape ", xs[k].shape().str(), " but inputs[0] has ",
                                  xs[0].shape().str(), ": all inputs must have one shape"));
    }
    return op_detail::dispatch<float, double, half, bfloat16, std::int8_t, std::int16_t, std::int32_t, std::int64_t,
                               std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t>(
        xs[0].type(), op,
        [&](auto tag) {
            using T = decltype(tag);
            tensor out = tensor::uninitialized(dtype_of<T>, xs[0].shape());
            T* o = out.data<T>();
            op_detail::parallel_for(out.num_elements(), sizeof(T) * static_cast<double>(xs.size() + 1),
                                    static_cast<double>(xs.size()), [&](std::int64_t a, std::int64_t b) {
                                        for (std::int64_t i = a; i < b; ++i) {
                                            T s = xs[0].data<T>()[i];
                                            for (std::size_t k = 1; k < xs.size(); ++k)
                                                s = static_cast<T>(s + xs[k].data<T>()[i]);
                                            o[i] = s;
                                        }
                                    });
            return out;
        },
        "inputs");
}

}  // namespace graft::ops
