// graft/ops/fill.hpp — ops that make tensors from scalars: Fill, ZerosLike, OnesLike, Range; and
// Cast with TensorFlow's conversion rules.
//
//   tensor a = ops::fill({2, 3}, tensor::scalar_of(1.5f));      // float32 [2,3] of 1.5
//   tensor r = ops::range(tensor::scalar_of(0), tensor::scalar_of(10), tensor::scalar_of(3));  //
//   [0 3 6 9] tensor i = ops::cast_to(x, dtype::int32);                   // 2.7 -> 2, -2.7 -> -2
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/ops/detail/op_support.hpp"

namespace graft::ops {

/// Fill: a tensor of shape `dims` with every element equal to the scalar `value` (any dtype).
/// Throws invalid_argument_error when value is not a scalar or a dim is negative.
inline tensor fill(const std::vector<std::int64_t>& dims, const tensor& value) {
    const char* op = "Fill";
    op_detail::require_input(op, value, "value");
    if (value.rank() != 0) {
        throw invalid_argument_error(
            op_detail::cat(op, ": value must be a scalar but has shape ", value.shape().str()));
    }
    for (auto d : dims) {
        if (d < 0)
            throw invalid_argument_error(
                op_detail::cat(op, ": dims ", op_detail::list_str(dims), " has a negative dim"));
    }
    tensor out = tensor::uninitialized(value.type(), shape(dims));
    op_detail::visit_element_bytes(value.type(), op, [&](auto tag) {
        using U = decltype(tag);
        const U v = *op_detail::elements_as<U>(value);
        U* o = op_detail::elements_as<U>(out);
        op_detail::parallel_for(
            out.num_elements(), sizeof(U), 0.5,
            [&](std::int64_t a, std::int64_t b) { std::fill(o + a, o + b, v); });
    });
    return out;
}
/// Fill with the dims as an int32/int64 vector tensor (TF's "dims" input). Throws as above.
inline tensor fill(const tensor& dims, const tensor& value) {
    return fill(op_detail::int_list("Fill", dims, "dims"), value);
}

/// ZerosLike: zeros of x's shape and dtype (false for bool, "" for string).
inline tensor zeros_like(const tensor& x) {
    op_detail::require_input("ZerosLike", x, "x");
    return tensor(x.type(), x.shape());
}

/// OnesLike: ones of x's shape and dtype (numeric and bool). Throws invalid_argument_error for
/// string and other dtypes without a 1.
inline tensor ones_like(const tensor& x) {
    const char* op = "OnesLike";
    op_detail::require_input(op, x, "x");
    return op_detail::dispatch<float, double, std::int32_t, std::int64_t, std::int8_t, std::int16_t,
                               std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t, bool>(
        x.type(), op,
        [&](auto tag) {
            using T = decltype(tag);
            return fill(x.shape().dims(), tensor::scalar_of(T(1)));
        },
        "x");
}

/// Range: [start, start + delta, ...) up to (excluding) limit, as TF computes it (the values are
/// accumulated by repeated addition). start/limit/delta are scalars of one dtype: int32, int64,
/// float32 or float64. Throws invalid_argument_error for delta == 0 or a range going the wrong way.
inline tensor range(const tensor& start, const tensor& limit, const tensor& delta) {
    const char* op = "Range";
    for (auto* t : {&start, &limit, &delta}) {
        op_detail::require_input(op, *t, "start/limit/delta");
        if (t->num_elements() != 1 || t->rank() > 1) {
            throw invalid_argument_error(op_detail::cat(
                op, ": start, limit and delta must be scalars, got shape ", t->shape().str()));
        }
    }
    op_detail::require_same_dtype(op, start, "start", limit, "limit");
    op_detail::require_same_dtype(op, start, "start", delta, "delta");
    return op_detail::dispatch<std::int32_t, std::int64_t, float, double>(
        start.type(), op,
        [&](auto tag) {
            using T = decltype(tag);
            const T s = *start.data<T>(), l = *limit.data<T>(), d = *delta.data<T>();
            if (d == 0) throw invalid_argument_error(op_detail::cat(op, ": requires delta != 0"));
            if (d > 0 && s > l) {
                throw invalid_argument_error(op_detail::cat(
                    op, ": requires start <= limit when delta > 0, got ", s, "/", l));
            }
            if (d < 0 && s < l) {
                throw invalid_argument_error(op_detail::cat(
                    op, ": requires start >= limit when delta < 0, got ", s, "/", l));
            }
            std::int64_t n;
            if constexpr (std::is_integral_v<T>) {
                const auto lo = static_cast<std::int64_t>(s), hi = static_cast<std::int64_t>(l);
                const std::int64_t span = hi > lo ? hi - lo : lo - hi;
                const std::int64_t step =
                    d > 0 ? static_cast<std::int64_t>(d) : -static_cast<std::int64_t>(d);
                n = (span + step - 1) / step;
            } else {
                const double v = std::ceil(std::abs((static_cast<double>(l) - s) / d));
                if (!(v < 9.0e18))
                    throw invalid_argument_error(
                        op_detail::cat(op, ": the range has too many elements"));
                n = static_cast<std::int64_t>(v);
            }
            tensor out = tensor::uninitialized(dtype_of<T>, shape{n});
            T* o = out.data<T>();
            T v = s;
            for (std::int64_t i = 0; i < n; ++i, v += d) o[i] = v;
            return out;
        },
        "start");
}

namespace op_detail {

/// TF's float -> integer conversion: truncation toward zero; NaN gives 0 and values outside the
/// target range saturate (C++ leaves those undefined).
template <class To, class From>
To float_to_int(From v) {
    if (std::isnan(v)) return To(0);
    if (v <= static_cast<From>(std::numeric_limits<To>::lowest()))
        return std::numeric_limits<To>::lowest();
    if (v >= static_cast<From>(std::numeric_limits<To>::max()))
        return std::numeric_limits<To>::max();
    return static_cast<To>(v);
}

}  // namespace op_detail

/// Cast: x converted to dtype `to` (same dtype: x itself). Floats to integers truncate toward zero
/// (NaN -> 0, out of range saturates); numbers to bool are `!= 0`; complex to real keeps the real
/// part; other pairs follow C++ conversions. Throws unimplemented_error for string <-> numbers.
inline tensor cast_to(const tensor& x, dtype to) {
    const char* op = "Cast";
    op_detail::require_input(op, x, "x");
    to = base_type(to);
    if (base_type(x.type()) == to) return x;
    const bool from_float =
        base_type(x.type()) == dtype::float32 || base_type(x.type()) == dtype::float64;
    if (!(from_float && is_integer(to))) return graft::cast(x, to);
    tensor out = tensor::uninitialized(to, x.shape());
    op_detail::dispatch<float, double>(
        x.type(), op,
        [&](auto ftag) {
            using F = decltype(ftag);
            const F* in = x.data<F>();
            visit_dtype(to, [&](auto ttag) {
                using T = decltype(ttag);
                if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
                    T* o = out.data<T>();
                    op_detail::parallel_for(x.num_elements(), sizeof(F) + sizeof(T), 2,
                                            [&](std::int64_t a, std::int64_t b) {
                                                for (std::int64_t i = a; i < b; ++i)
                                                    o[i] = op_detail::float_to_int<T>(in[i]);
                                            });
                }
            });
        },
        "x");
    return out;
}

}  // namespace graft::ops
