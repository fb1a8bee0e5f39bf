// graft/ops/sparse_dense.hpp — sparse (COO) values written into dense tensors: SparseToDense and
// SparseTensorDenseAdd.
//
//   tensor d = ops::sparse_to_dense(idx, tensor::from_vector<std::int64_t>({3, 4}), vals, zero);
//   tensor s = ops::sparse_tensor_dense_add(a_indices, a_values, a_shape, b);   // b + A
#pragma once

#include <cstdint>
#include <vector>

#include "graft/ops/scatter.hpp"

namespace graft::ops {

/// SparseToDense: a tensor of `output_shape` (int32/int64, rank <= 1) filled with default_value
/// (a scalar) and sparse_values (a scalar for all, or one per index) at sparse_indices (0-D, 1-D
/// [N] for a 1-D output, or [N, rank]); a later index wins over an earlier equal one. With
/// validate_indices the indices must be in lexicographic order without repeats. Any dtype. Throws
/// invalid_argument_error for an index out of bounds, out of order or repeated (naming it) or
/// mismatched shapes or dtypes.
inline tensor sparse_to_dense(const tensor& sparse_indices, const tensor& output_shape, const tensor& sparse_values,
                              const tensor& default_value, bool validate_indices = true) {
    const char* op = "SparseToDense";
    op_detail::require_input(op, sparse_indices, "sparse_indices");
    op_detail::require_input(op, sparse_values, "sparse_values");
    op_detail::require_input(op, default_value, "default_value");
    if (sparse_indices.rank() > 2) {
        throw invalid_argument_error(op_detail::cat(op, ": sparse_indices must be 0-D, 1-D or 2-D, got ",
                                                    sparse_indices.shape().str()));
    }
    const auto dims = op_detail::int_list(op, output_shape, "output_shape");
    const std::int64_t n = sparse_indices.rank() > 0 ? sparse_indices.dim(0) : 1;
    const std::int64_t rank = sparse_indices.rank() > 1 ? sparse_indices.dim(1) : 1;
    if (static_cast<std::int64_t>(dims.size()) != rank) {
        throw invalid_argument_error(op_detail::cat(op, ": output_shape ", op_detail::list_str(dims), " has ",
                                                    dims.size(), " dims but sparse_indices ",
                                                    sparse_indices.shape().str(), " index ", rank));
    }
    for (auto d : dims) {
        if (d < 0) {
            throw invalid_argument_error(op_detail::cat(op, ": output_shape ", op_detail::list_str(dims),
                                                        " has a negative dim"));
        }
    }
    if (!(sparse_values.rank() == 0 || (sparse_values.rank() == 1 && sparse_values.dim(0) == n))) {
        throw invalid_argument_error(op_detail::cat(op, ": sparse_values must be a scalar or hold ", n,
                                                    " values (one per index), got ", sparse_values.shape().str()));
    }
    if (default_value.rank() != 0) {
        throw invalid_argument_error(op_detail::cat(op, ": default_value must be a scalar, got ",
                                                    default_value.shape().str()));
    }
    scatter_detail::check_same_dtype(op, default_value, "default_value", sparse_values);
    const shape out_shape(dims);
    const tensor idx2 = sparse_indices.reshaped(shape{n, rank});
    if (validate_indices) {
        const auto v = op_detail::index_values(op, idx2, "sparse_indices");
        for (std::int64_t i = 1; i < n; ++i) {
            const auto* a = v.data() + (i - 1) * rank;
            const auto* b = v.data() + i * rank;
            const int c = std::lexicographical_compare(a, a + rank, b, b + rank) ? -1
                          : std::equal(a, a + rank, b)                         ? 0
                                                                              : 1;
            if (c >= 0) {
                throw invalid_argument_error(op_detail::cat(op, ": sparse_indices[", i, "] = ",
                                                            op_detail::list_str(std::vector<std::int64_t>(b, b + rank)),
                                                            c == 0 ? " is repeated" : " is out of order"),
                                             {}, "sort the indices (tf.sparse.reorder) or set validate_indices=false");
            }
        }
    }
    auto p = scatter_detail::plan_nd(op, out_shape, idx2, "output_shape");
    tensor out = tensor::uninitialized(default_value.type(), out_shape);
    op_detail::visit_element_bytes(out.type(), op, [&](auto tag) {
        using U = decltype(tag);
        U* o = op_detail::elements_as<U>(out);
        std::fill(o, o + out.num_elements(), op_detail::elements_as<U>(default_value)[0]);
    });
    if (!p.rows.empty()) scatter_detail::apply_slices(scatter_kind::update, out, sparse_values, p.rows, 1, op);
    return out;
}

/// SparseTensorDenseAdd: b + the sparse tensor (a_indices [nnz, ndims], a_values [nnz], a_shape
/// [ndims] equal to b's shape); repeated indices add up. Real-number values. Throws
/// invalid_argument_error for an index out of bounds (naming it) or mismatched shapes or dtypes.
inline tensor sparse_tensor_dense_add(const tensor& a_indices, const tensor& a_values, const tensor& a_shape,
                                      const tensor& b) {
    const char* op = "SparseTensorDenseAdd";
    op_detail::require_input(op, b, "b");
    op_detail::require_input(op, a_values, "a_values");
    op_detail::require_rank(op, a_indices, "a_indices", 2);
    op_detail::require_rank(op, a_values, "a_values", 1);
    const auto dims = op_detail::int_list(op, a_shape, "a_shape");
    if (!(shape(dims) == b.shape())) {
        throw invalid_argument_error(op_detail::cat(op, ": a_shape ", op_detail::list_str(dims),
                                                    " must equal b's shape ", b.shape().str()));
    }
    if (a_indices.dim(1) != static_cast<std::int64_t>(dims.size()) || a_indices.dim(0) != a_values.dim(0)) {
        throw invalid_argument_error(op_detail::cat(op, ": a_indices ", a_indices.shape().str(), " must be [nnz, ",
                                                    dims.size(), "] with nnz = a_values' ", a_values.dim(0)));
    }
    scatter_detail::check_same_dtype(op, b, "b", a_values);
    tensor out = b.clone();
    auto p = scatter_detail::plan_nd(op, b.shape(), a_indices, "b");
    if (!p.rows.empty()) scatter_detail::apply_slices(scatter_kind::add, out, a_values, p.rows, 1, op);
    return out;
}

}  // namespace graft::ops
