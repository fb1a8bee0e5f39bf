// graft/ops/scatter.hpp — index-driven writes and reads: GatherNd, ScatterNd, TensorScatter*
// (update/add/sub/min/max) and the row and N-d scatters TF1 variables use (ScatterAdd,
// ScatterNdUpdate, ...), in place on a tensor the caller owns or into a copy.
//
//   tensor t = ops::scatter_nd(idx, upd, tensor::from_vector<std::int32_t>({4, 4}));  // zeros, += upd
//   tensor u = ops::tensor_scatter(ops::scatter_kind::max, t, idx, upd);               // copy of t
//   ops::scatter_rows_into(ops::scatter_kind::add, var_value, rows, upd, "ScatterAdd");  // in place
//   tensor g = ops::gather_nd(params, idx);                                           // params[idx]
//
// Every index is checked before anything is written, so a bad index leaves the target unchanged.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "graft/core/half.hpp"
#include "graft/ops/gather.hpp"
#include "graft/ops/detail/op_support.hpp"

namespace graft::ops {

/// How a scatter combines an update u with the value d it lands on.
enum class scatter_kind { update, add, sub, mul, div, min, max };

namespace scatter_detail {

using op_detail::cat;
using op_detail::list_str;

/// Calls f(T{}) for the real number dtypes the arithmetic scatters and segment reductions take.
template <class F>
auto dispatch_real(dtype t, std::string_view op, F&& f, std::string_view what) {
    return op_detail::dispatch<float, double, half, bfloat16, std::int32_t, std::int64_t, std::int8_t,
                               std::int16_t, std::uint8_t, std::uint16_t>(t, op, f, what);
}

/// Applies update i (slice elements, or one broadcast scalar) to destination slice rows[i] of dst.
inline void apply_slices(scatter_kind k, const tensor& dst, const tensor& upd, const std::vector<std::int64_t>& rows,
                         std::int64_t slice, std::string_view op) {
    const bool scalar = upd.rank() == 0;  // one value for every picked element
    if (k == scatter_kind::update) {
        op_detail::visit_element_bytes(dst.type(), op, [&](auto tag) {
            using U = decltype(tag);
            U* d = op_detail::elements_as<U>(dst);
            const U* u = op_detail::elements_as<U>(upd);
            for (std::size_t i = 0; i < rows.size(); ++i) {
                U* to = d + rows[i] * slice;
                if (scalar) std::fill(to, to + slice, u[0]);
                else std::copy(u + static_cast<std::int64_t>(i) * slice, u + static_cast<std::int64_t>(i + 1) * slice,
                               to);
            }
        });
        return;
    }
    dispatch_real(dst.type(), op, [&](auto tag) {
        using T = decltype(tag);
        T* d = dst.data<T>();
        const T* u = upd.data<T>();
        if constexpr (std::is_integral_v<T>) {
            if (k == scatter_kind::div && std::find(u, u + upd.num_elements(), T(0)) != u + upd.num_elements()) {
                throw invalid_argument_error(cat(op, ": integer division by zero: the updates hold a 0"));
            }
        }
        auto run = [&](auto f) {
            for (std::size_t i = 0; i < rows.size(); ++i) {
                T* to = d + rows[i] * slice;
                if (scalar) {
                    for (std::int64_t j = 0; j < slice; ++j) f(to[j], u[0]);
                } else {
                    const T* from = u + static_cast<std::int64_t>(i) * slice;
                    for (std::int64_t j = 0; j < slice; ++j) f(to[j], from[j]);
                }
            }
        };
        switch (k) {
            case scatter_kind::update: run([](T& x, T y) { x = y; }); break;
            case scatter_kind::add: run([](T& x, T y) { x = static_cast<T>(x + y); }); break;
            case scatter_kind::sub: run([](T& x, T y) { x = static_cast<T>(x - y); }); break;
            case scatter_kind::mul: run([](T& x, T y) { x = static_cast<T>(x * y); }); break;
            case scatter_kind::div: run([](T& x, T y) { x = static_cast<T>(x / y); }); break;
            case scatter_kind::min: run([](T& x, T y) { x = y < x ? y : x; }); break;
            case scatter_kind::max: run([](T& x, T y) { x = x < y ? y : x; }); break;
        }
    }, "updates");
}

/// The destination slices of an N-d scatter/gather: indices [..., K] into `target` (rank >= K);
/// each index row picks the slice target[i0, ..., iK-1, :]. Throws invalid_argument_error naming
/// the first index row outside `target`.
struct nd_plan {
    std::vector<std::int64_t> rows;  ///< slice number (in target's [prod(dims[:K]), slice] view) per index row
    std::vector<std::int64_t> batch_dims;  ///< indices.shape[:-1]
    std::int64_t slice = 1;          ///< prod(target.dims[K:])
    std::size_t k = 0;
};

inline nd_plan plan_nd(std::string_view op, const shape& target, const tensor& indices, std::string_view target_name) {
    op_detail::require_input(op, indices, "indices");
    if (indices.rank() < 1) {
        throw invalid_argument_error(cat(op, ": indices must be at least 1-D (the last dim holds the index "
                                             "depth), got shape ", indices.shape().str()));
    }
    const auto& id = indices.shape().dims();
    const auto& td = target.dims();
    nd_plan p;
    p.k = static_cast<std::size_t>(id.back());
    if (p.k > td.size()) {
        throw invalid_argument_error(cat(op, ": the last dim of indices ", indices.shape().str(), " (", p.k,
                                         ") is larger than the rank of ", target_name, " ", target.str()));
    }
    p.batch_dims.assign(id.begin(), id.end() - 1);
    p.slice = op_detail::dim_product(td, p.k, td.size());
    const auto vals = op_detail::index_values(op, indices, "indices");
    const std::int64_t n = op_detail::dim_product(p.batch_dims, 0, p.batch_dims.size());
    p.rows.resize(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        std::int64_t row = 0;
        for (std::size_t j = 0; j < p.k; ++j) {
            const std::int64_t v = vals[static_cast<std::size_t>(i) * p.k + j];
            if (v < 0 || v >= td[j]) {
                const auto first = vals.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(i) * p.k);
                const std::vector<std::int64_t> bad(first, first + static_cast<std::ptrdiff_t>(p.k));
                throw invalid_argument_error(cat(op, ": indices[", i, "] = ", list_str(bad),
                                                 " does not index into ", target_name, " of shape ", target.str(),
                                                 " (entry ", j, " must be in [0, ", td[j], "))"));
            }
            row = row * td[j] + v;
        }
        p.rows[static_cast<std::size_t>(i)] = row;
    }
    return p;
}

/// Throws invalid_argument_error unless updates has shape batch_dims + target.dims[K:].
inline void check_nd_updates(std::string_view op, const nd_plan& p, const shape& target, const tensor& indices,
                             const tensor& updates) {
    op_detail::require_input(op, updates, "updates");
    std::vector<std::int64_t> want = p.batch_dims;
    want.insert(want.end(), target.dims().begin() + static_cast<std::ptrdiff_t>(p.k), target.dims().end());
    if (!(updates.shape() == shape(want))) {
        throw invalid_argument_error(cat(op, ": updates has shape ", updates.shape().str(), " but indices ",
                                         indices.shape().str(), " into shape ", target.str(), " need updates of shape ",
                                         shape(want).str()));
    }
}

inline void check_same_dtype(std::string_view op, const tensor& target, std::string_view tn, const tensor& updates) {
    if (base_type(target.type()) != base_type(updates.type())) {
        throw invalid_argument_error(cat(op, ": updates is ", updates.describe(), " but ", tn, " is ",
                                         target.describe(), ": the dtypes must match"));
    }
}

}  // namespace scatter_detail

/// GatherNd: output[i...] = params[indices[i..., :]] — indices [..., K] (int32/int64, K <=
/// rank(params)); output shape indices.shape[:-1] + params.shape[K:]. Any dtype. Throws
/// invalid_argument_error for an index row outside params (naming it) or a bad indices shape.
inline tensor gather_nd(const tensor& params, const tensor& indices) {
    const char* op = "GatherNd";
    op_detail::require_input(op, params, "params");
    auto p = scatter_detail::plan_nd(op, params.shape(), indices, "params");
    std::vector<std::int64_t> od = p.batch_dims;
    od.insert(od.end(), params.shape().dims().begin() + static_cast<std::ptrdiff_t>(p.k), params.shape().dims().end());
    tensor out = tensor::uninitialized(params.type(), shape(od));
    if (out.num_elements() == 0) return out;
    op_detail::visit_element_bytes(params.type(), op, [&](auto tag) {
        using U = decltype(tag);
        const U* src = op_detail::elements_as<U>(params);
        U* dst = op_detail::elements_as<U>(out);
        for (std::size_t i = 0; i < p.rows.size(); ++i) {
            std::copy(src + p.rows[i] * p.slice, src + (p.rows[i] + 1) * p.slice,
                      dst + static_cast<std::int64_t>(i) * p.slice);
        }
    });
    return out;
}

/// Applies `updates` to `target` in place at the N-d `indices` ([..., K]; updates shaped
/// indices.shape[:-1] + target.shape[K:]); duplicate indices combine in order. The caller owns
/// target's buffer. `op` names the op in errors. Throws invalid_argument_error for an index row
/// outside target (before writing anything), mismatched shapes or dtypes, or a dtype the kind
/// does not take (update: any; the others: real numbers).
inline void scatter_nd_into(scatter_kind k, const tensor& target, const tensor& indices, const tensor& updates,
                            std::string_view op) {
    op_detail::require_input(op, target, "ref");
    auto p = scatter_detail::plan_nd(op, target.shape(), indices, "the target");
    scatter_detail::check_nd_updates(op, p, target.shape(), indices, updates);
    scatter_detail::check_same_dtype(op, target, "the target", updates);
    if (p.rows.empty() || p.slice == 0) return;
    scatter_detail::apply_slices(k, target, updates, p.rows, p.slice, op);
}

/// TensorScatterUpdate/Add/Sub/Min/Max: a copy of `input` with scatter_nd_into applied. Throws as
/// scatter_nd_into.
inline tensor tensor_scatter(scatter_kind k, const tensor& input, const tensor& indices, const tensor& updates,
                             std::string_view op = "TensorScatterUpdate") {
    op_detail::require_input(op, input, "tensor");
    tensor out = input.clone();
    scatter_nd_into(k, out, indices, updates, op);
    return out;
}

/// ScatterNd: zeros of `shape` (an int32/int64 vector) with the updates added at `indices`
/// (duplicates summed). Real-number updates. Throws invalid_argument_error for a negative or
/// empty shape, an index outside it, or mismatched updates.
inline tensor scatter_nd(const tensor& indices, const tensor& updates, const tensor& out_shape) {
    const char* op = "ScatterNd";
    op_detail::require_input(op, updates, "updates");
    const auto dims = op_detail::int_list(op, out_shape, "shape");
    for (auto d : dims) {
        if (d < 0) {
            throw invalid_argument_error(op_detail::cat(op, ": shape ", op_detail::list_str(dims),
                                                        " has a negative dim"));
        }
    }
    if (out_shape.rank() != 1 || dims.empty()) {
        throw invalid_argument_error(op_detail::cat(op, ": shape must be a non-empty vector, got ",
                                                    out_shape.shape().str()));
    }
    tensor out(updates.type(), shape(dims));
    scatter_nd_into(scatter_kind::add, out, indices, updates, op);
    return out;
}

/// ScatterUpdate/Add/Sub/Mul/Div/Min/Max on rows: target[indices[i...], ...] (op)= updates[i...,
/// ...], in place (the caller owns target's buffer). indices int32/int64 of any shape; updates
/// shaped indices.shape + target.shape[1:], or a scalar applied to every picked row. Throws
/// invalid_argument_error for an index outside [0, target.dim(0)) (before writing), mismatched
/// shapes or dtypes.
inline void scatter_rows_into(scatter_kind k, const tensor& target, const tensor& indices, const tensor& updates,
                              std::string_view op) {
    op_detail::require_input(op, target, "ref");
    op_detail::require_input(op, updates, "updates");
    scatter_detail::check_same_dtype(op, target, "ref", updates);
    if (target.rank() < 1) {
        throw invalid_argument_error(op_detail::cat(op, ": ref must be at least 1-D, got ", target.describe()));
    }
    const auto idx = op_detail::index_values(op, indices, "indices");
    std::vector<std::int64_t> want = indices.shape().dims();
    want.insert(want.end(), target.shape().dims().begin() + 1, target.shape().dims().end());
    if (updates.rank() != 0 && !(updates.shape() == shape(want))) {
        throw invalid_argument_error(op_detail::cat(op, ": updates has shape ", updates.shape().str(), " but indices ",
                                                    indices.shape().str(), " and ref ", target.shape().str(),
                                                    " need ", shape(want).str(), " (or a scalar)"));
    }
    const std::int64_t n = target.dim(0);
    for (std::size_t i = 0; i < idx.size(); ++i) {
        if (idx[i] < 0 || idx[i] >= n) {
            throw invalid_argument_error(op_detail::cat(op, ": indices[", i, "] = ", idx[i], " is not in [0, ", n,
                                                        ") (ref ", target.shape().str(), ")"));
        }
    }
    const std::int64_t slice = op_detail::dim_product(target.shape().dims(), 1, target.shape().dims().size());
    if (idx.empty() || slice == 0) return;
    scatter_detail::apply_slices(k, target, updates, idx, slice, op);
}

/// scatter_rows_into applied to a copy of `input`. Throws as scatter_rows_into.
inline tensor scatter_rows(scatter_kind k, const tensor& input, const tensor& indices, const tensor& updates,
                           std::string_view op = "ScatterUpdate") {
    op_detail::require_input(op, input, "ref");
    tensor out = input.clone();
    scatter_rows_into(k, out, indices, updates, op);
    return out;
}

}  // namespace graft::ops
