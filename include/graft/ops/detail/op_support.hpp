// graft/ops/detail/op_support.hpp — what the array/elementwise/reduction kernels share: argument checks
// with errors that name the op, reading int32/int64 index tensors, axis normalisation, dtype
// dispatch over a fixed type list, and a parallel loop on graft's thread pool.
//
//   auto axes = op_detail::int_list("Sum", axis_tensor, "reduction_indices");   // int32 or int64
//   int ax = op_detail::normalize_axis("ConcatV2", -1, 3);                        // -> 2
//   return op_detail::dispatch<float, double>(x.type(), "Sqrt", [&](auto tag) { ... });
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "graft/core/config.hpp"
#include "graft/core/dtype.hpp"
#include "graft/core/error.hpp"
#include "graft/core/shape.hpp"
#include "graft/core/tensor.hpp"
#include "graft/core/threads.hpp"

namespace graft::ops::op_detail {

using graft::detail::cat;

/// The channel dim of x for TF's data_format attr: last for "NHWC" (or ""), 1 for "NCHW" (the
/// N-d spellings NWC/NDHWC and NCW/NCDHW too). Throws invalid_argument_error for other names.
inline int channel_dim(std::string_view op, const tensor& x, std::string_view data_format) {
    if (x.rank() < 2) {
        throw shape_error(cat(op, ": value must have rank >= 2 but has shape ", x.shape().str()));
    }
    if (data_format.empty() || data_format == "NHWC" || data_format == "NWC" ||
        data_format == "NDHWC") {
        return x.rank() - 1;
    }
    if (data_format == "NCHW" || data_format == "NCW" || data_format == "NCDHW") return 1;
    throw invalid_argument_error(
        cat(op, ": data_format must be NHWC or NCHW, got '", data_format, "'"));
}

/// "[1,2,3]" for a list of ints (axes, perms, multiples).
template <class V>
std::string list_str(const V& v) {
    std::string s = "[";
    bool first = true;
    for (auto x : v) {
        if (!first) s += ',';
        s += std::to_string(x);
        first = false;
    }
    return s + "]";
}

/// Throws invalid_argument_error unless `t` is a valid host tensor; `what` names the input.
inline void require_input(std::string_view op, const tensor& t, std::string_view what) {
    if (!t.valid())
        throw invalid_argument_error(
            op_detail::cat(op, ": ", what, " is an empty (invalid) tensor"));
    if (!t.on_host()) {
        throw invalid_argument_error(
            op_detail::cat(op, ": ", what, " lives on ", t.dev().str()), {},
            "the CPU kernels need host tensors; copy it to the host first");
    }
    if (!t.shape().fully_defined()) {
        throw shape_error(op_detail::cat(op, ": ", what, " has shape ", t.shape().str(),
                                         " that is not fully defined"));
    }
}

/// Throws invalid_argument_error unless `t` has dtype `want`.
inline void require_dtype(std::string_view op, const tensor& t, std::string_view what, dtype want) {
    if (base_type(t.type()) != want) {
        throw invalid_argument_error(op_detail::cat(op, ": ", what, " must be ", dtype_name(want),
                                                    " but is ", t.describe()));
    }
}

/// Throws invalid_argument_error unless `a` and `b` have the same dtype.
inline void require_same_dtype(std::string_view op, const tensor& a, std::string_view an,
                               const tensor& b, std::string_view bn) {
    if (base_type(a.type()) != base_type(b.type())) {
        throw invalid_argument_error(op_detail::cat(op, ": ", an, " is ", a.describe(), " but ", bn,
                                                    " is ", b.describe(),
                                                    ": the dtypes must match"));
    }
}

/// Throws shape_error unless `t` has rank `r`.
inline void require_rank(std::string_view op, const tensor& t, std::string_view what, int r) {
    if (t.rank() != r) {
        throw shape_error(op_detail::cat(op, ": ", what, " must have rank ", r, " but has shape ",
                                         t.shape().str()));
    }
}

/// The values of an int32/int64 tensor of rank 0 or 1 as int64. Throws invalid_argument_error for
/// another dtype or rank.
inline std::vector<std::int64_t> int_list(std::string_view op, const tensor& t,
                                          std::string_view what) {
    require_input(op, t, what);
    if (t.rank() > 1) {
        throw shape_error(op_detail::cat(
            op, ": ", what, " must be a scalar or a vector but has shape ", t.shape().str()));
    }
    std::vector<std::int64_t> v(static_cast<std::size_t>(t.num_elements()));
    if (base_type(t.type()) == dtype::int32) {
        const auto* p = t.data<std::int32_t>();
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = p[i];
    } else if (base_type(t.type()) == dtype::int64) {
        const auto* p = t.data<std::int64_t>();
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = p[i];
    } else {
        throw invalid_argument_error(
            op_detail::cat(op, ": ", what, " must be int32 or int64 but is ", t.describe()));
    }
    return v;
}

/// The single value of an int32/int64 tensor with one element (shape [] or [1]).
inline std::int64_t int_scalar(std::string_view op, const tensor& t, std::string_view what) {
    auto v = int_list(op, t, what);
    if (v.size() != 1) {
        throw shape_error(
            op_detail::cat(op, ": ", what, " must hold one value but has shape ", t.shape().str()));
    }
    return v[0];
}

/// `axis` in [-rank, rank) mapped to [0, rank). Throws invalid_argument_error naming the op.
inline int normalize_axis(std::string_view op, std::int64_t axis, int rank,
                          std::string_view what = "axis") {
    if (axis < -rank || axis >= rank) {
        throw invalid_argument_error(op_detail::cat(op, ": ", what, " ", axis,
                                                    " is out of range for rank ", rank,
                                                    " (expected [", -rank, ", ", rank, "))"));
    }
    return static_cast<int>(axis < 0 ? axis + rank : axis);
}

/// Product of dims[b, e).
inline std::int64_t dim_product(const std::vector<std::int64_t>& d, std::size_t b, std::size_t e) {
    std::int64_t p = 1;
    for (std::size_t i = b; i < e && i < d.size(); ++i) p *= d[i];
    return p;
}

/// Runs f(first, last) over [0, n) on graft's thread pool, the caller taking the first share;
/// `bytes` and `cycles` are the cost of one unit of work (Eigen's cost model decides how many
/// threads it is worth; small n runs inline). Shares are contiguous and near-equal.
inline void parallel_for(std::int64_t n, double bytes, double cycles,
                         callable_ref<void(std::int64_t, std::int64_t)> f) {
    if (n <= 0) return;
    // Below ~32 KiB of traffic the pool's hand-off costs more than it saves.
    if (static_cast<double>(n) * (bytes + cycles) < 32768.0) {
        f(0, n);
        return;
    }
    const int tasks = Eigen::TensorCostModel<Eigen::ThreadPoolDevice>::numThreads(
        static_cast<double>(n), Eigen::TensorOpCost(bytes * 0.5, bytes * 0.5, cycles), num_threads());
    if (tasks <= 1) {
        f(0, n);
        return;
    }
    run_tasks(tasks, [&](int t) {
        const std::int64_t b = n * t / tasks, e = n * (t + 1) / tasks;
        if (b < e) f(b, e);
    });
}

/// A list of C++ element types.
template <class... Ts>
struct types {};

template <class... Ts>
std::string type_names() {
    std::string s;
    ((s += (s.empty() ? "" : ", ") + dtype_name(dtype_of<Ts>)), ...);
    return s;
}

template <class All, class T0, class... Ts, class F>
auto dispatch_rec(dtype t, std::string_view op, std::string_view what, F& f) -> decltype(f(T0{})) {
    if (base_type(t) == dtype_of<T0>) return f(T0{});
    if constexpr (sizeof...(Ts) > 0) {
        return dispatch_rec<All, Ts...>(t, op, what, f);
    } else {
        throw invalid_argument_error(
            op_detail::cat(op, ": ", what, " has dtype ", dtype_name(t),
                           ", which this kernel does not support (supported: ", All::names(), ")"));
    }
}
template <class... Ts>
struct names_of {
    static std::string names() { return type_names<Ts...>(); }
};

/// Calls f(T{}) for the T in Ts whose dtype is `t`; throws invalid_argument_error naming the op and
/// the supported dtypes otherwise.
template <class... Ts, class F>
auto dispatch(dtype t, std::string_view op, F&& f, std::string_view what = "input") {
    return dispatch_rec<names_of<Ts...>, Ts...>(t, op, what, f);
}

/// A 16-byte element (complex128) moved as raw bytes.
struct bytes16 {
    std::uint64_t lo, hi;
};

/// Calls f(U{}) where U is an unsigned integer (or bytes16) of the element size of `t`, or
/// std::string for string tensors: kernels that only move elements use it to share code between
/// dtypes of one size. Throws unimplemented_error for resource/variant.
template <class F>
auto visit_element_bytes(dtype t, std::string_view op, F&& f) {
    switch (dtype_size(t)) {
        case 1:
            return f(std::uint8_t{});
        case 2:
            return f(std::uint16_t{});
        case 4:
            return f(std::uint32_t{});
        case 8:
            return f(std::uint64_t{});
        case 16:
            return f(bytes16{});
        default:
            break;
    }
    if (base_type(t) == dtype::string) return f(std::string{});
    throw unimplemented_error(
        op_detail::cat(op, ": dtype ", dtype_name(t), " has no dense layout to copy"));
}

/// Element pointer of `t` read as U (the byte-size stand-in from visit_element_bytes).
template <class U>
U* elements_as(const tensor& t) {
    if constexpr (std::is_same_v<U, std::string>)
        return t.data<std::string>();
    else
        return static_cast<U*>(t.raw_data());
}

/// Copies n elements (std::copy), cut into blocks over the thread pool when large.
template <class U>
void parallel_copy(const U* src, U* dst, std::int64_t n) {
    parallel_for(n, 2.0 * sizeof(U), 0.5,
                 [&](std::int64_t a, std::int64_t b) { std::copy(src + a, src + b, dst + a); });
}

}  // namespace graft::ops::op_detail
