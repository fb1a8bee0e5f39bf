// graft/ops/binary.hpp — elementwise binary ops with NumPy/TensorFlow broadcasting: arithmetic
// (Add, Sub, Mul, Div, RealDiv, FloorDiv, FloorMod, Maximum, Minimum, Pow, SquaredDifference),
// comparisons (Equal ... GreaterEqual, bool result) and LogicalAnd/LogicalOr.
//
//   tensor c = ops::add(a, b);                 // [2,1,3] + [4,1] -> [2,4,3]
//   tensor m = ops::less(x, tensor::scalar_of(0.f));   // bool mask
//   ops::mul(a, b, &a);                        // in place when a already has the result's shape
//
// The broadcast plan (broadcast.hpp) cuts the output into contiguous runs; each run is one Eigen
// expression over two runs, or a run and a constant (the scalar / broadcast-row case), so the
// common cases (same shape, scalar, bias row) are vectorized loops spread over the thread pool.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <memory>
#include <type_traits>

#include "graft/ops/broadcast.hpp"
#include "graft/ops/unary.hpp"

namespace graft::ops {

namespace op_detail {

/// The row case with short rows: one input is a whole [rows, inner] matrix and the other a single
/// row of `inner` elements repeated down it ([N,H,W,6] + [6], a BiasAdd with few channels). Walked
/// run by run, every `inner` elements would pay an expression's set-up (with 6 channels ~14x the
/// cost of the arithmetic); instead the row is repeated into a block of >= 256 elements once and
/// build runs on whole blocks of rows. Returns false (nothing done) for any other plan.
template <class T, class R, class Build>
bool binary_row_blocks(const broadcast_plan& p, const T* pa, const T* pb, R* po, double cycles, const Build& build) {
    if (p.dims.size() != 2 || p.dims[1] >= 64) return false;
    const std::int64_t rows = p.dims[0], inner = p.dims[1];
    const auto& sa = p.strides[0];
    const auto& sb = p.strides[1];
    const bool a_row = sa[0] == 0 && sa[1] == 1 && sb[0] == inner && sb[1] == 1;
    const bool b_row = sb[0] == 0 && sb[1] == 1 && sa[0] == inner && sa[1] == 1;
    if (!a_row && !b_row) return false;
    const std::int64_t per = (256 + inner - 1) / inner, width = per * inner;
    std::unique_ptr<T[]> pattern(new T[static_cast<std::size_t>(width)]);  // T may be bool: no vector
    const T* row = a_row ? pa : pb;
    for (std::int64_t r = 0; r < per; ++r) std::copy(row, row + inner, pattern.get() + r * inner);
    const T* whole = a_row ? pb : pa;
    parallel_for((rows + per - 1) / per, (2.0 * sizeof(T) + sizeof(R)) * static_cast<double>(width),
                 cycles * static_cast<double>(width), [&](std::int64_t b0, std::int64_t b1) {
                     for (std::int64_t blk = b0; blk < b1; ++blk) {
                         const std::int64_t first = blk * width, len = std::min(per, rows - blk * per) * inner;
                         tensor_map<R, 1> o(po + first, len);
                         const_tensor_map<T, 1> w(whole + first, len);
                         const_tensor_map<T, 1> r(pattern.get(), len);
                         if (a_row) o = build(r, w, T{});
                         else o = build(w, r, T{});
                     }
                 });
    return true;
}

/// out = build(a, b) broadcast per plan `p`; build gets two Eigen views (or a view and a constant)
/// of equal length and a tag of the input type.
template <class T, class R, class Build>
void binary_runs(const broadcast_plan& p, const tensor& a, const tensor& b, const tensor& out,
                 double cycles, const Build& build) {
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    R* po = out.data<R>();
    if (binary_row_blocks<T, R>(p, pa, pb, po, cycles, build)) return;
    for_each_run<2>(
        p, 2.0 * sizeof(T) + sizeof(R), cycles,
        [&](std::int64_t i, std::int64_t len, const auto& off, const auto& contig) {
            tensor_map<R, 1> o(po + i, len);
            const_tensor_map<T, 1> x(pa + off[0], contig[0] ? len : 1);
            const_tensor_map<T, 1> y(pb + off[1], contig[1] ? len : 1);
            if (contig[0] && contig[1]) {
                o = build(x, y, T{});
            } else if (contig[1]) {
                o = build(y.constant(pa[off[0]]), y, T{});
            } else if (contig[0]) {
                o = build(x, x.constant(pb[off[1]]), T{});
            } else {  // the plan never repeats both inputs along the innermost merged dim
                throw error(cat("binary_runs: both inputs repeat along a run of ", len,
                                " (internal error)"));
            }
        });
}

/// binary_runs for a T that computes in C = compute_t<T> (widen.hpp): the inputs are widened to
/// C, the op runs as C's own kernel (the same code, compiled once) and the result narrows back into
/// out (R = bool stays bool).
template <class T, class R, class Build>
void binary_runs_widened(const broadcast_plan& p, const tensor& a, const tensor& b,
                         const tensor& out, double cycles, const Build& build) {
    using C = compute_t<T>;
    using CR = std::conditional_t<std::is_same_v<R, bool>, bool, compute_t<R>>;
    tensor aw = widen_tensor<C, T>(a);
    tensor bw = widen_tensor<C, T>(b);
    if constexpr (std::is_same_v<R, bool>) {
        binary_runs<C, bool>(p, aw, bw, out, cycles, build);
    } else {
        tensor ow = tensor::uninitialized(dtype_of<CR>, out.shape());
        binary_runs<C, CR>(p, aw, bw, ow, cycles, build);
        narrow_tensor<R, CR>(ow, out);
    }
}

struct no_check {
    template <class T>
    void operator()(const tensor&, const tensor&, T) const {}
};

/// A binary op over the types Ts; the result is bool when BoolOut, else the input type.
template <bool BoolOut, class... Ts, class Build, class Check = no_check>
tensor binary_op(types<Ts...>, std::string_view op, const tensor& a, const tensor& b,
                 const tensor* out, double cycles, const Build& build, const Check& check = {}) {
    require_input(op, a, "x");
    require_input(op, b, "y");
    require_same_dtype(op, a, "x", b, "y");
    return dispatch<Ts...>(
        a.type(), op,
        [&](auto tag) {
            using T = decltype(tag);
            using R = std::conditional_t<BoolOut, bool, T>;
            auto plan = make_broadcast(op, a.shape(), b.shape());
            check(a, b, tag);
            check_alias(op, out, a, "x", plan.out_shape);
            check_alias(op, out, b, "y", plan.out_shape);
            tensor r = prepare_out(op, dtype_of<R>, std::move(plan.out_shape), out);  // (runs read dims, strides)
            if constexpr (is_widened<T>)
                binary_runs_widened<T, R>(plan, a, b, r, cycles, build);
            else
                binary_runs<T, R>(plan, a, b, r, cycles, build);
            return r;
        },
        "x");
}

/// Integer division and modulo by zero is an error in TF (not a crash): scans y first.
struct nonzero_divisor_check {
    std::string_view op;
    template <class T>
    void operator()(const tensor&, const tensor& y, T) const {
        if constexpr (std::is_integral_v<T>) {
            const T* p = y.data<T>();
            const auto n = y.num_elements();
            for (std::int64_t i = 0; i < n; ++i) {
                if (p[i] == 0) {
                    throw invalid_argument_error(
                        cat(op, ": integer division by zero (y is 0 at flat index ", i, " of ",
                            y.shape().str(), ")"));
                }
            }
        }
    }
};

/// Integer x ** y with y >= 0 (wraps on overflow like TF's two's-complement arithmetic).
template <class T>
struct int_pow_op {
    T operator()(const T& x, const T& y) const {
        using U = std::make_unsigned_t<T>;
        U base = static_cast<U>(x), r = 1;
        for (T e = y; e > 0; e >>= 1) {
            if (e & 1) r = static_cast<U>(r * base);
            base = static_cast<U>(base * base);
        }
        return static_cast<T>(r);
    }
};

struct nonnegative_exponent_check {
    template <class T>
    void operator()(const tensor&, const tensor& y, T) const {
        if constexpr (std::is_integral_v<T>) {
            const T* p = y.data<T>();
            const auto n = y.num_elements();
            for (std::int64_t i = 0; i < n; ++i) {
                if (p[i] < 0) {
                    throw invalid_argument_error(
                        cat("Pow: integers to negative integer powers are not allowed (y is ",
                            static_cast<std::int64_t>(p[i]),
                            " at flat index ", i, ")"));
                }
            }
        }
    }
};

/// C++ (truncating) integer division; x / -1 wraps instead of trapping on the most negative x.
template <class T>
struct trunc_div_op {
    T operator()(const T& x, const T& y) const {
        if constexpr (std::is_signed_v<T>) {
            if (y == T(-1))
                return static_cast<T>(std::make_unsigned_t<T>(0) -
                                      static_cast<std::make_unsigned_t<T>>(x));
        }
        return static_cast<T>(x / y);
    }
};
/// Division rounding toward -inf (TF FloorDiv on integers; unsigned: plain division).
template <class T>
struct floor_div_int_op {
    T operator()(const T& x, const T& y) const {
        if constexpr (std::is_signed_v<T>) {
            if (y == T(-1)) return trunc_div_op<T>()(x, y);
            const T q = x / y;
            return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
        } else {
            return static_cast<T>(x / y);
        }
    }
};
/// Modulo with the sign of y (TF FloorMod on integers; unsigned: plain modulo).
template <class T>
struct floor_mod_int_op {
    T operator()(const T& x, const T& y) const {
        if constexpr (std::is_signed_v<T>) {
            if (y == T(-1)) return 0;
            const T m = x % y;
            return (m != 0 && ((y < 0) != (m < 0))) ? m + y : m;
        } else {
            return static_cast<T>(x % y);
        }
    }
};
/// fmod with the sign of y (TF FloorMod on floats).
template <class T>
struct floor_fmod_op {
    T operator()(const T& x, const T& y) const {
        const T m = std::fmod(x, y);
        return (m != 0 && ((y < 0) != (m < 0))) ? m + y : m;
    }
};


}  // namespace op_detail

// Each op: (x, y) broadcast together -> a new tensor, or written into *out (which must have the
// broadcast shape and result dtype; it may be x or y when that input already has the result's
// shape). Each throws shape_error when x and y do not broadcast, invalid_argument_error when their
// dtypes differ or are outside the op's list.

/// Add / AddV2: x + y. Every real type (float16/32/64, bfloat16, int8..int64, uint8..uint64).
/// Throws shape_error / invalid_argument_error (see above).
tensor add(const tensor& x, const tensor& y, const tensor* out = nullptr);
/// Sub: x - y. Every real type (float16/32/64, bfloat16, int8..int64, uint8..uint64); throws
/// shape_error / invalid_argument_error (see above).
tensor sub(const tensor& x, const tensor& y, const tensor* out = nullptr);
/// Mul: x * y. Every real type (float16/32/64, bfloat16, int8..int64, uint8..uint64); throws
/// shape_error / invalid_argument_error (see above).
tensor mul(const tensor& x, const tensor& y, const tensor* out = nullptr);
/// Div: x / y; integer division truncates toward zero as TF's Div (a 0 in y is an error). Every
/// real type (float16/32/64, bfloat16, int8..int64, uint8..uint64); throws shape_error /
/// invalid_argument_error (see above).
tensor div(const tensor& x, const tensor& y, const tensor* out = nullptr);
/// RealDiv: x / y. float16/32/64, bfloat16; throws shape_error / invalid_argument_error (see
/// above).
tensor real_div(const tensor& x, const tensor& y, const tensor* out = nullptr);
/// FloorDiv: floor(x / y); integers round toward -inf (a 0 in y is an error). Every real type
/// (float16/32/64, bfloat16, int8..int64, uint8..uint64); throws shape_error /
/// invalid_argument_error (see above).
tensor floor_div(const tensor& x, const tensor& y, const tensor* out = nullptr);
/// FloorMod: x - floor(x / y) * y, i.e. the remainder takes the sign of y (as Python's %).
/// Integers: a 0 in y is an error. Every real type (float16/32/64, bfloat16, int8..int64,
/// uint8..uint64). Throws shape_error / invalid_argument_error (see above).
tensor floor_mod(const tensor& x, const tensor& y, const tensor* out = nullptr);
/// Maximum: the larger of x and y; NaN propagates. Every real type (float16/32/64, bfloat16,
/// int8..int64, uint8..uint64). Throws shape_error / invalid_argument_error (see above).
tensor maximum(const tensor& x, const tensor& y, const tensor* out = nullptr);
/// Minimum: the smaller of x and y; NaN propagates. Every real type (float16/32/64, bfloat16,
/// int8..int64, uint8..uint64). Throws shape_error / invalid_argument_error (see above).
tensor minimum(const tensor& x, const tensor& y, const tensor* out = nullptr);
/// Pow: x ** y. float16/32/64, bfloat16, int8..int64 (a negative integer exponent is an error).
/// Throws shape_error / invalid_argument_error (see above).
tensor pow(const tensor& x, const tensor& y, const tensor* out = nullptr);
/// SquaredDifference: (x - y)^2. float16/32/64, bfloat16, int32, int64. Throws shape_error /
/// invalid_argument_error (see above).
tensor squared_difference(const tensor& x, const tensor& y, const tensor* out = nullptr);

/// Equal: x == y -> bool. Every real type and bool. Throws shape_error / invalid_argument_error
/// (see above).
tensor equal_to(const tensor& x, const tensor& y, const tensor* out = nullptr);
/// NotEqual: x != y -> bool. Every real type and bool. Throws shape_error / invalid_argument_error
/// (see above).
tensor not_equal_to(const tensor& x, const tensor& y, const tensor* out = nullptr);
/// Less: x < y -> bool. Every real type (float16/32/64, bfloat16, int8..int64, uint8..uint64).
/// Throws shape_error / invalid_argument_error (see above).
tensor less(const tensor& x, const tensor& y, const tensor* out = nullptr);
/// LessEqual: x <= y -> bool. Every real type (float16/32/64, bfloat16, int8..int64,
/// uint8..uint64). Throws shape_error / invalid_argument_error (see above).
tensor less_equal(const tensor& x, const tensor& y, const tensor* out = nullptr);
/// Greater: x > y -> bool. Every real type (float16/32/64, bfloat16, int8..int64, uint8..uint64).
/// Throws shape_error / invalid_argument_error (see above).
tensor greater(const tensor& x, const tensor& y, const tensor* out = nullptr);
/// GreaterEqual: x >= y -> bool. Every real type (float16/32/64, bfloat16, int8..int64,
/// uint8..uint64). Throws shape_error / invalid_argument_error (see above).
tensor greater_equal(const tensor& x, const tensor& y, const tensor* out = nullptr);
/// LogicalAnd. bool only; throws shape_error / invalid_argument_error (see above).
tensor logical_and(const tensor& x, const tensor& y, const tensor* out = nullptr);
/// LogicalOr. bool only; throws shape_error / invalid_argument_error (see above).
tensor logical_or(const tensor& x, const tensor& y, const tensor* out = nullptr);

}  // namespace graft::ops

// The ops above are a compiled part (core/config.hpp): with graft::compiled,
// src/compiled/elementwise_ops.cpp compiles them once (every dtype of every op is a lot of code);
// without it they are defined inline here.
#if !defined(GRAFT_SEPARATE_COMPILATION) || defined(GRAFT_COMPILING_ELEMENTWISE)
#include "graft/ops/detail/binary_impl.hpp"
#endif
