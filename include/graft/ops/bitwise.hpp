// graft/ops/bitwise.hpp — bit-level ops as TensorFlow defines them: Invert, PopulationCount, BitwiseAnd/Or/Xor,
// LeftShift/RightShift (integer types, broadcasting), Bitcast (reinterpret the bytes as another
// dtype, sharing the buffer) and CompareAndBitpack (threshold tests packed 8 to a uint8).
//
//   tensor m = ops::bitwise_binary("BitwiseAnd", a, b);
//   tensor i = ops::bitcast(f, dtype::int32);           // float32[3] -> int32[3], same bytes
//   tensor h = ops::bitcast(f, dtype::float16);         // float32[3] -> float16[3,2]
//   tensor p = ops::compare_and_bitpack(x, thr);       // [..., 8k] -> uint8[..., k]
#pragma once

#include <bit>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "graft/ops/math_more.hpp"

namespace graft::ops {

namespace math_detail {
/// TF's shift semantics: the shift amount is clamped to [0, bits - 1]; left shifts work on the
/// unsigned pattern (no overflow), right shifts of signed values are arithmetic.
template <class T>
T shift_amount(T y) {
    constexpr T bits = static_cast<T>(sizeof(T) * CHAR_BIT - 1);
    if constexpr (std::is_signed_v<T>) {
        if (y < 0) return T(0);
    }
    return y > bits ? bits : y;
}
}  // namespace math_detail

/// Invert: ~x on int8..int64 and uint8..uint64. Throws invalid_argument_error for other dtypes.
inline tensor invert(const tensor& x) {
    return math_detail::map_unary<void>(math_detail::int_types{}, "Invert", x, 1, [](auto v) {
        return static_cast<decltype(v)>(~v);
    });
}

/// BitwiseAnd, BitwiseOr, BitwiseXor, LeftShift, RightShift by TF name on int8..uint64, with
/// broadcasting. Throws invalid_argument_error for mixed or unsupported dtypes, shape_error when the
/// shapes do not broadcast, unimplemented_error for an unknown name.
inline tensor bitwise_binary(std::string_view op, const tensor& x, const tensor& y) {
    using namespace math_detail;
    auto run = [&](auto f) { return map_binary<void>(int_types{}, op, x, y, 1, f); };
    if (op == "BitwiseAnd") return run([](auto a, auto b) { return static_cast<decltype(a)>(a & b); });
    if (op == "BitwiseOr") return run([](auto a, auto b) { return static_cast<decltype(a)>(a | b); });
    if (op == "BitwiseXor") return run([](auto a, auto b) { return static_cast<decltype(a)>(a ^ b); });
    if (op == "LeftShift")
        return run([](auto a, auto b) {
            using T = decltype(a);
            using U = std::make_unsigned_t<T>;
            return static_cast<T>(static_cast<U>(static_cast<U>(a) << static_cast<U>(shift_amount(b))));
        });
    if (op == "RightShift")
        return run([](auto a, auto b) { return static_cast<decltype(a)>(a >> shift_amount(b)); });
    throw unimplemented_error(cat("bitwise_binary: no kernel for op '", op, "'"));
}

/// Bitcast: x's bytes read as dtype `to` (no copy: the result shares x's buffer). Equal element
/// sizes keep the shape; a wider x gains a last dim of size(x)/size(to); a narrower x must end in
/// a dim of size(to)/size(x), which is dropped. Throws invalid_argument_error for a dtype without a
/// fixed size (string, resource, variant) or bool, shape_error when the last dim does not fit.
inline tensor bitcast(const tensor& x, dtype to) {
    using math_detail::cat;
    constexpr std::string_view op = "Bitcast";
    op_detail::require_input(op, x, "input");
    const dtype from = base_type(x.type());
    to = base_type(to);
    auto usable = [](dtype t) { return dtype_size(t) != 0 && t != dtype::bool_; };
    if (!usable(from) || !usable(to))
        throw invalid_argument_error(cat(op, ": cannot bitcast ", dtype_name(from), " to ", dtype_name(to),
                                         ": both must be numeric dtypes of a fixed size"));
    const std::size_t in = dtype_size(from), out = dtype_size(to);
    std::vector<std::int64_t> dims = x.shape().dims();
    if (in > out) {
        dims.push_back(static_cast<std::int64_t>(in / out));
    } else if (in < out) {
        const auto k = static_cast<std::int64_t>(out / in);
        if (dims.empty() || dims.back() != k)
            throw shape_error(cat(op, ": cannot bitcast ", x.describe(), " to ", dtype_name(to), ": the last dim must be ",
                                  k, " (", out, " bytes / ", in, " bytes)"));
        dims.pop_back();
    }
    return tensor::from_buffer(to, shape(std::move(dims)), x.buf(), x.byte_offset());
}

/// CompareAndBitpack: for input [..., n] (n a multiple of 8), uint8[..., n/8] whose bit 7 - j of
/// byte k is input[..., 8k + j] > threshold (for bool input: the value itself). bool, float16,
/// float32, float64, int8, int16, int32, int64; threshold a scalar of input's dtype. Throws
/// invalid_argument_error for bad dtypes or a non-scalar threshold, shape_error for bad shapes.
inline tensor compare_and_bitpack(const tensor& x, const tensor& threshold) {
    using math_detail::cat;
    constexpr std::string_view op = "CompareAndBitpack";
    op_detail::require_input(op, x, "input");
    op_detail::require_input(op, threshold, "threshold");
    op_detail::require_same_dtype(op, x, "input", threshold, "threshold");
    if (threshold.rank() != 0)
        throw invalid_argument_error(cat(op, ": threshold must be a scalar but has shape ", threshold.shape().str()));
    if (x.rank() < 1) throw shape_error(cat(op, ": input must have rank >= 1 but is a scalar"));
    const std::int64_t n = x.dim(-1);
    if (n % 8 != 0)
        throw shape_error(cat(op, ": the last dim of input must be a multiple of 8 but input has shape ", x.shape().str()));
    std::vector<std::int64_t> dims = x.shape().dims();
    dims.back() = n / 8;
    tensor out = tensor::uninitialized(dtype::uint8, shape(std::move(dims)));
    return op_detail::dispatch<bool, half, float, double, std::int8_t, std::int16_t, std::int32_t, std::int64_t>(
        x.type(), op,
        [&](auto tag) {
            using T = decltype(tag);
            const T* in = x.data<T>();
            const T thr = threshold.data<T>()[0];
            std::uint8_t* o = out.data<std::uint8_t>();
            op_detail::parallel_for(out.num_elements(), 8.0 * sizeof(T) + 1, 8, [&](std::int64_t a, std::int64_t b) {
                for (std::int64_t k = a; k < b; ++k) {
                    unsigned byte = 0;
                    for (int j = 0; j < 8; ++j) {
                        const T v = in[8 * k + j];
                        bool bit;
                        if constexpr (std::is_same_v<T, bool>) bit = v;
                        else bit = v > thr;
                        byte |= (bit ? 1u : 0u) << (7 - j);
                    }
                    o[k] = static_cast<std::uint8_t>(byte);
                }
            });
            return out;
        },
        "input");
}

/// PopulationCount: the number of set bits of each element (uint8), int8..uint64. Throws
/// invalid_argument_error for other dtypes.
inline tensor population_count(const tensor& x) {
    return math_detail::map_unary<std::uint8_t>(math_detail::int_types{}, "PopulationCount", x, 2, [](auto v) {
        using U = std::make_unsigned_t<decltype(v)>;
        return static_cast<std::uint8_t>(std::popcount(static_cast<U>(v)));
    });
}

}  // namespace graft::ops
