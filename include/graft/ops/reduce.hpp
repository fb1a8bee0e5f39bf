// graft/ops/reduce.hpp — reductions as TensorFlow has them: Sum, Mean, Max, Min, Prod, Any, All
// over a set of axes (negative allowed, duplicates rejected, keep_dims), ArgMax/ArgMin over one
// axis, and L2Loss.
//
//   tensor s = ops::reduce_sum(x, {1});                 // [2,3] -> [2]
//   tensor m = ops::reduce_mean(x, {-1}, true);         // [2,3] -> [2,1]
//   tensor i = ops::arg_max(x, 1, dtype::int64);        // index of the largest along axis 1
//   tensor t = ops::reduce("Max", x, axis_tensor, keep_dims);   // by TF op name
//
// The input is first simplified to alternating runs of kept and reduced dims (size-1 dims dropped,
// neighbours merged); then each reduced run is folded away, innermost first, as a [K1, R, K2] view
// (reduce_kernels.hpp): a full reduction, the innermost axis of a 2-D view ([k, r]), the outermost
// ([r, k]) and BiasAddGrad's patterns are one or two vectorized passes spread over the thread pool.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "graft/ops/detail/reduce_kernels.hpp"
#include "graft/ops/detail/widen.hpp"

namespace graft::ops {

/// The reductions reduce() knows, by TF op name.
enum class reduction { sum, mean, max, min, prod, any, all };

namespace op_detail {

inline const char* reduction_name(reduction r) {
    switch (r) {
        case reduction::sum:
            return "Sum";
        case reduction::mean:
            return "Mean";
        case reduction::max:
            return "Max";
        case reduction::min:
            return "Min";
        case reduction::prod:
            return "Prod";
        case reduction::any:
            return "Any";
        case reduction::all:
            return "All";
    }
    return "?";
}

/// The shape of a reduction after simplification.
struct reduce_plan {
    shape out_shape;                 ///< with keep_dims applied
    std::vector<std::int64_t> dims;  ///< runs of the input (size-1 dims dropped)
    std::vector<bool> reduced;       ///< per run
    std::int64_t count = 1;          ///< input elements per output element
};

inline reduce_plan plan_reduce(std::string_view op, const shape& in,
                               const std::vector<std::int64_t>& axes, bool keep_dims) {
    const int r = in.rank();
    std::vector<bool> red(static_cast<std::size_t>(r), false);
    for (auto a : axes) {
        const int ax = normalize_axis(op, a, r, "reduction axis");
        if (red[static_cast<std::size_t>(ax)]) {
            throw invalid_argument_error(
                cat(op, ": reduction axes ", list_str(axes), " contain axis ", ax, " twice"));
        }
        red[static_cast<std::size_t>(ax)] = true;
    }
    reduce_plan p;
    std::vector<std::int64_t> od;
    const auto& d = in.dims();
    for (std::size_t i = 0; i < d.size(); ++i) {
        if (red[i]) {
            p.count *= d[i];
            if (keep_dims) od.push_back(1);
        } else {
            od.push_back(d[i]);
        }
        if (d[i] == 1) continue;
        if (!p.reduced.empty() && p.reduced.back() == red[i]) {
            p.dims.back() *= d[i];
        } else {
            p.dims.push_back(d[i]);
            p.reduced.push_back(red[i]);
        }
    }
    p.out_shape = shape(od);
    return p;
}

/// The value an empty reduction gives.
template <class T>
T reduction_identity(reduction k) {
    switch (k) {
        case reduction::sum:
        case reduction::any:
            return T(0);
        case reduction::prod:
        case reduction::all:
            return T(1);
        case reduction::max:
            if constexpr (std::numeric_limits<T>::has_infinity)
                return -std::numeric_limits<T>::infinity();
            else
                return std::numeric_limits<T>::lowest();
        case reduction::min:
            if constexpr (std::numeric_limits<T>::has_infinity)
                return std::numeric_limits<T>::infinity();
            else
                return std::numeric_limits<T>::max();
        case reduction::mean:
            if constexpr (std::numeric_limits<T>::has_quiet_NaN)
                return std::numeric_limits<T>::quiet_NaN();
            else
                return T(0);
    }
    return T(0);
}

/// Calls f(reducer{}) for reduction k (Mean reduces as Sum; the division comes after).
template <class T, class F>
void with_reducer(reduction k, F&& f) {
    if constexpr (std::is_same_v<T, bool>) {
        if (k == reduction::any)
            f(any_reducer{});
        else
            f(all_reducer{});
    } else {
        switch (k) {
            case reduction::prod:
                f(prod_reducer{});
                break;
            case reduction::max:
                f(max_reducer{});
                break;
            case reduction::min:
                f(min_reducer{});
                break;
            default:
                f(sum_reducer{});
                break;
        }
    }
}

/// Reduces per plan `p`: one pass per reduced run, innermost first, each pass a [K1, R, K2] fold.
template <class T>
void run_reduce(reduction k, const reduce_plan& p, const tensor& x, const tensor& out) {
    const T* in = x.data<T>();
    T* o = out.data<T>();
    const auto n_out = out.num_elements();
    if (n_out == 0) return;
    if (x.num_elements() == 0) {
        std::fill(o, o + n_out, reduction_identity<T>(k));
        return;
    }
    std::vector<std::int64_t> dims = p.dims;
    std::vector<bool> red = p.reduced;
    if (std::find(red.begin(), red.end(), true) ==
        red.end()) {  // nothing to reduce: values pass through
        std::copy(in, in + n_out, o);
        return;
    }
    with_reducer<T>(k, [&](auto reducer) {
        using Red = decltype(reducer);
        const T* cur = in;
        tensor scratch;
        while (true) {
            std::size_t j = red.size();
            while (j-- > 0 && !red[j]) {
            }
            const bool last = std::find(red.begin(), red.begin() + static_cast<std::ptrdiff_t>(j),
                                        true) == red.begin() + static_cast<std::ptrdiff_t>(j);
            const std::int64_t K1 = dim_product(dims, 0, j), R = dims[j],
                               K2 = dim_product(dims, j + 1, dims.size());
            tensor next = last ? tensor() : tensor::uninitialized(dtype_of<T>, shape{K1 * K2});
            T* dst = last ? o : next.data<T>();
            if (K2 == 1)
                reduce_rows<Red>(cur, dst, K1, R);
            else
                reduce_columns<Red>(cur, dst, K1, R, K2);
            if (last) break;
            dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(j));
            red.erase(red.begin() + static_cast<std::ptrdiff_t>(j));
            scratch = next;
            cur = scratch.data<T>();
        }
    });
    if (k == reduction::mean) {
        if constexpr (!std::is_same_v<T, bool>) {
            const T count = static_cast<T>(p.count);
            parallel_for(n_out, 2.0 * sizeof(T), 1, [&](std::int64_t a, std::int64_t b) {
                for (std::int64_t i = a; i < b; ++i) o[i] /= count;
            });
        }
    }
}

}  // namespace op_detail

/// Reduction `k` of x over `axes` (each in [-rank, rank), no duplicates; empty = no reduction),
/// keeping reduced dims as size 1 when keep_dims. Sum/Mean/Max/Min/Prod: every real type
/// (float16/bfloat16 sum in float32 and round once; integer sums and products wrap; an integer
/// Mean sums in 64 bits, as TF); Any/All: bool. Max/Min propagate NaN; an empty reduction gives the
/// identity (0, 1, -inf, +inf; NaN for a float Mean). Throws invalid_argument_error for a bad axis
/// or dtype.
tensor reduce(reduction k, const tensor& x, const std::vector<std::int64_t>& axes,
              bool keep_dims = false);

/// Sum over axes. Throws as reduce().
tensor reduce_sum(const tensor& x, const std::vector<std::int64_t>& axes,
                  bool keep_dims = false);
/// Mean over axes (integer inputs: the 64-bit sum divided with truncation). Throws as reduce().
tensor reduce_mean(const tensor& x, const std::vector<std::int64_t>& axes,
                   bool keep_dims = false);
/// Max over axes. Throws as reduce().
tensor reduce_max(const tensor& x, const std::vector<std::int64_t>& axes,
                  bool keep_dims = false);
/// Min over axes. Throws as reduce().
tensor reduce_min(const tensor& x, const std::vector<std::int64_t>& axes,
                  bool keep_dims = false);
/// Prod over axes. Throws as reduce().
tensor reduce_prod(const tensor& x, const std::vector<std::int64_t>& axes,
                   bool keep_dims = false);
/// Any (logical or) over axes of a bool tensor. Throws as reduce().
tensor reduce_any(const tensor& x, const std::vector<std::int64_t>& axes,
                  bool keep_dims = false);
/// All (logical and) over axes of a bool tensor. Throws as reduce().
tensor reduce_all(const tensor& x, const std::vector<std::int64_t>& axes,
                  bool keep_dims = false);

/// A reduction by TF op name ("Sum", "Mean", "Max", "Min", "Prod", "Any", "All") with the axes as
/// an int32/int64 tensor (scalar or vector), as the graph node has them. Throws unimplemented_error
/// for another name, else as reduce().
tensor reduce(std::string_view op, const tensor& x, const tensor& axes,
              bool keep_dims = false);

namespace op_detail {

template <class T, bool Max>
void arg_reduce(const T* in, std::int64_t outer, std::int64_t n, std::int64_t inner,
                std::int64_t* idx) {
    auto better = [](T v, T best) {
        if constexpr (std::is_floating_point_v<T>) {
            if (std::isnan(best)) return false;
            if (std::isnan(v)) return true;
        }
        return Max ? v > best : v < best;
    };
    parallel_for(outer, sizeof(T) * static_cast<double>(n * inner), static_cast<double>(n * inner),
                 [&](std::int64_t first, std::int64_t last) {
                     std::vector<T> best(static_cast<std::size_t>(inner));
                     for (std::int64_t o = first; o < last; ++o) {
                         const T* row = in + o * n * inner;
                         std::int64_t* out = idx + o * inner;
                         for (std::int64_t j = 0; j < inner; ++j) {
                             best[static_cast<std::size_t>(j)] = row[j];
                             out[j] = 0;
                         }
                         for (std::int64_t a = 1; a < n; ++a) {
                             const T* r = row + a * inner;
                             for (std::int64_t j = 0; j < inner; ++j) {
                                 if (better(r[j], best[static_cast<std::size_t>(j)])) {
                                     best[static_cast<std::size_t>(j)] = r[j];
                                     out[j] = a;
                                 }
                             }
                         }
                     }
                 });
}

template <bool Max>
tensor arg_op(const char* op, const tensor& x, std::int64_t axis, dtype output_type) {
    require_input(op, x, "input");
    if (output_type != dtype::int64 && output_type != dtype::int32) {
        throw invalid_argument_error(
            cat(op, ": output_type must be int32 or int64, got ", dtype_name(output_type)));
    }
    const int ax = normalize_axis(op, axis, x.rank(), "dimension");
    const auto& d = x.shape().dims();
    if (d[static_cast<std::size_t>(ax)] == 0) {
        throw invalid_argument_error(
            cat(op, ": reduction axis ", ax, " is empty in shape ", x.shape().str()));
    }
    std::vector<std::int64_t> od;
    for (std::size_t i = 0; i < d.size(); ++i) {
        if (static_cast<int>(i) != ax) od.push_back(d[i]);
    }
    const auto outer = dim_product(d, 0, static_cast<std::size_t>(ax));
    const auto n = d[static_cast<std::size_t>(ax)];
    const auto inner = dim_product(d, static_cast<std::size_t>(ax) + 1, d.size());
    tensor idx = tensor::uninitialized(dtype::int64, shape(od));
    dispatch_list(
        all_real_and_bool_types{}, x.type(), op,
        [&](auto tag) {
            using T = decltype(tag);
            if constexpr (is_widened<T>) {  // the order-preserving compute type
                using C = compute_t<T>;
                tensor xw = widen_tensor<C, T>(x);
                arg_reduce<C, Max>(xw.data<C>(), outer, n, inner, idx.data<std::int64_t>());
            } else {
                arg_reduce<T, Max>(x.data<T>(), outer, n, inner, idx.data<std::int64_t>());
            }
        },
        "input");
    if (output_type == dtype::int64) return idx;
    tensor r = tensor::uninitialized(dtype::int32, shape(od));
    for (std::int64_t i = 0; i < idx.num_elements(); ++i) {
        r.data<std::int32_t>()[i] = static_cast<std::int32_t>(idx.data<std::int64_t>()[i]);
    }
    return r;
}

}  // namespace op_detail

/// ArgMax: index of the largest value along `axis` (first one on ties; NaN counts as largest).
/// Every real type and bool in; int64 or int32 out. Throws invalid_argument_error for a bad axis,
/// an empty axis or a bad dtype.
tensor arg_max(const tensor& x, std::int64_t axis, dtype output_type = dtype::int64);
/// ArgMin: index of the smallest value along `axis` (first one on ties; NaN counts as smallest).
/// Throws as arg_max().
tensor arg_min(const tensor& x, std::int64_t axis, dtype output_type = dtype::int64);
/// ArgMax with the axis as an int32/int64 scalar tensor ("dimension" input).
tensor arg_max(const tensor& x, const tensor& axis, dtype output_type = dtype::int64);
/// ArgMin with the axis as an int32/int64 scalar tensor ("dimension" input).
tensor arg_min(const tensor& x, const tensor& axis, dtype output_type = dtype::int64);

/// L2Loss: sum(x^2) / 2 as a scalar. float32, float64, float16 and bfloat16 (summed in float32).
/// Throws invalid_argument_error otherwise.
tensor l2_loss(const tensor& x);

}  // namespace graft::ops

// The ops above are a compiled part (core/config.hpp): with graft::compiled,
// src/compiled/elementwise_ops.cpp compiles them once (every dtype of every op is a lot of code);
// without it they are defined inline here.
#if !defined(GRAFT_SEPARATE_COMPILATION) || defined(GRAFT_COMPILING_ELEMENTWISE)
#include "graft/ops/detail/reduce_impl.hpp"
#endif
