// graft/ops/detail/widen.hpp — how the elementwise and reduction kernels run the narrow dtypes: each
// element type T computes in compute_t<T> (float16/bfloat16 in float32, as TF's Eigen::half
// arithmetic does; int8/int16 in int32 and uint8/uint16/uint32 in uint64, whose wrap-around
// results narrow back to the same bits as T's own modular arithmetic). A kernel widens its inputs, runs
// the compute type's own code (so each op's arithmetic is compiled once per compute type, not
// once per dtype) and narrows the result.
//
//   using C = op_detail::compute_t<half>;              // float
//   tensor w = op_detail::widen_tensor<C, half>(x);    // half -> float
//   op_detail::narrow_tensor<half, C>(w, out);         // float -> half, round to nearest even
//
// float32, float64, int32, int64, uint64 and bool are their own compute type, so their kernels
// never pass through here.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include "graft/ops/detail/op_support.hpp"

namespace graft::ops::op_detail {

template <class T>
struct compute_type {
    using type = T;
};
template <>
struct compute_type<half> {
    using type = float;
};
template <>
struct compute_type<bfloat16> {
    using type = float;
};
template <>
struct compute_type<std::int8_t> {
    using type = std::int32_t;
};
template <>
struct compute_type<std::int16_t> {
    using type = std::int32_t;
};
template <>
struct compute_type<std::uint8_t> {
    using type = std::uint64_t;
};
template <>
struct compute_type<std::uint16_t> {
    using type = std::uint64_t;
};
template <>
struct compute_type<std::uint32_t> {
    using type = std::uint64_t;
};
/// The type T's elementwise arithmetic runs in (T itself for the wide types).
template <class T>
using compute_t = typename compute_type<T>::type;
/// True when T computes in a wider type (float16, bfloat16, 8- and 16-bit integers, uint32).
template <class T>
inline constexpr bool is_widened = !std::is_same_v<compute_t<T>, T>;

/// Elements per block of the widened kernels (their stack buffers).
inline constexpr std::int64_t widen_block = 512;

/// out[i] = C(in[i]) for i < n.
template <class T, class C>
void widen_run(const T* in, C* out, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<C>(in[i]);
}
/// out[i] = T(in[i]) for i < n: floats round to nearest even, integers keep their low bits.
template <class C, class T>
void narrow_run(const C* in, T* out, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(in[i]);
}

/// x (of element type T) converted to a new tensor of element type C, in parallel.
template <class C, class T>
tensor widen_tensor(const tensor& x) {
    tensor out = tensor::uninitialized(dtype_of<C>, x.shape());
    const T* in = x.data<T>();
    C* o = out.data<C>();
    parallel_for(x.num_elements(), sizeof(T) + sizeof(C), 2,
                 [&](std::int64_t a, std::int64_t b) { widen_run(in + a, o + a, b - a); });
    return out;
}
/// w (of element type C) converted into `out` (element type T, same element count), in parallel.
template <class T, class C>
void narrow_tensor(const tensor& w, const tensor& out) {
    const C* in = w.data<C>();
    T* o = out.data<T>();
    parallel_for(w.num_elements(), sizeof(T) + sizeof(C), 2,
                 [&](std::int64_t a, std::int64_t b) { narrow_run(in + a, o + a, b - a); });
}

// dtype lists of TF's CPU registrations (fast types first: dispatch tries them in order).
/// TF_CALL_REAL_NUMBER_TYPES: every real number type.
using all_real_types = types<float, double, std::int32_t, std::int64_t, half, bfloat16,
                             std::int8_t, std::int16_t, std::uint8_t, std::uint16_t,
                             std::uint32_t, std::uint64_t>;
/// The real types with a sign (Abs, Neg, Sign, Pow).
using signed_real_types =
    types<float, double, std::int32_t, std::int64_t, half, bfloat16, std::int8_t, std::int16_t>;
/// TF_CALL_FLOAT_TYPES: float32, float64, float16, bfloat16.
using all_float_types = types<float, double, half, bfloat16>;
/// The float types plus int32/int64.
using float_and_int_types = types<float, double, std::int32_t, std::int64_t, half, bfloat16>;
/// Every real type and bool (Equal, NotEqual).
using all_real_and_bool_types = types<float, double, std::int32_t, std::int64_t, bool, half,
                                      bfloat16, std::int8_t, std::int16_t, std::uint8_t,
                                      std::uint16_t, std::uint32_t, std::uint64_t>;

/// dispatch<Ts...>(t, op, f, what) for a types<Ts...> list.
template <class... Ts, class F>
auto dispatch_list(types<Ts...>, dtype t, std::string_view op, F&& f,
                   std::string_view what = "input") {
    return dispatch<Ts...>(t, op, std::forward<F>(f), what);
}

}  // namespace graft::ops::op_detail
