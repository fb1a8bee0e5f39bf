// graft/ops/concat_split.hpp — joining and cutting along an axis: ConcatV2, Pack, Unpack, Split,
// SplitV. Any dense dtype, strings included.
//
//   tensor c = ops::concat({a, b}, 1);                  // [3,4] ++ [3,5] -> [3,9]
//   tensor s = ops::pack({a, b}, 0);                    // [3,4], [3,4] -> [2,3,4]
//   auto parts = ops::split_v(x, {2, -1}, 1);           // [3,9] -> [3,2], [3,7]
//
// Pieces cut along the outermost non-trivial axis are views that share the input's buffer.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "graft/ops/detail/op_support.hpp"

namespace graft::ops {

namespace op_detail {

/// out is [outer, sum(widths)]; source k is [outer, widths[k]] and lands at column offset
/// sum(widths[:k]).
template <class U>
void concat_rows(const std::vector<const U*>& srcs, const std::vector<std::int64_t>& widths, U* out,
                 std::int64_t outer) {
    std::int64_t total = 0;
    for (auto w : widths) total += w;
    if (outer >= 16) {
        parallel_for(outer, 2.0 * sizeof(U) * static_cast<double>(total),
                     static_cast<double>(total) * 0.25, [&](std::int64_t a, std::int64_t b) {
                         for (std::int64_t r = a; r < b; ++r) {
                             U* o = out + r * total;
                             for (std::size_t k = 0; k < srcs.size(); ++k) {
                                 std::copy(srcs[k] + r * widths[k], srcs[k] + (r + 1) * widths[k],
                                           o);
                                 o += widths[k];
                             }
                         }
                     });
        return;
    }
    for (std::int64_t r = 0; r < outer; ++r) {  // few long rows: split each copy instead
        U* o = out + r * total;
        for (std::size_t k = 0; k < srcs.size(); ++k) {
            parallel_copy(srcs[k] + r * widths[k], o, widths[k]);
            o += widths[k];
        }
    }
}

/// The inverse of concat_rows: src is [outer, sum(widths)]; piece k receives its columns.
template <class U>
void split_rows(const U* src, const std::vector<std::int64_t>& widths, const std::vector<U*>& dsts,
                std::int64_t outer) {
    std::int64_t total = 0;
    for (auto w : widths) total += w;
    parallel_for(outer, 2.0 * sizeof(U) * static_cast<double>(total),
                 static_cast<double>(total) * 0.25, [&](std::int64_t a, std::int64_t b) {
                     for (std::int64_t r = a; r < b; ++r) {
                         const U* s = src + r * total;
                         for (std::size_t k = 0; k < dsts.size(); ++k) {
                             std::copy(s, s + widths[k], dsts[k] + r * widths[k]);
                             s += widths[k];
                         }
                     }
                 });
}

/// Cuts `x` along `axis` into pieces of the given sizes (already validated to sum to the dim).
inline std::vector<tensor> split_sizes(std::string_view op, const tensor& x, int axis,
                                       const std::vector<std::int64_t>& sizes) {
    const auto& d = x.shape().dims();
    const auto ax = static_cast<std::size_t>(axis);
    const std::int64_t outer = dim_product(d, 0, ax);
    const std::int64_t inner = dim_product(d, ax + 1, d.size());
    std::vector<tensor> out;
    std::vector<std::int64_t> widths;
    for (auto s : sizes) {
        auto od = d;
        od[ax] = s;
        widths.push_back(s * inner);
        out.push_back(tensor::uninitialized(x.type(), shape(od)));
    }
    if (outer == 1) {  // contiguous pieces: views of x
        const std::size_t esize =
            x.type() == dtype::string ? sizeof(std::string) : dtype_size(x.type());
        std::size_t off = x.byte_offset();
        for (std::size_t k = 0; k < sizes.size(); ++k) {
            out[k] = tensor::from_buffer(x.type(), out[k].shape(), x.buf(), off);
            off += static_cast<std::size_t>(widths[k]) * esize;
        }
        return out;
    }
    visit_element_bytes(x.type(), op, [&](auto tag) {
        using U = decltype(tag);
        std::vector<U*> dsts;
        for (auto& t : out) dsts.push_back(elements_as<U>(t));
        split_rows(elements_as<U>(x), widths, dsts, outer);
    });
    return out;
}

}  // namespace op_detail

namespace op_detail {

inline tensor concat_impl(const char* op, const std::vector<tensor>& values, std::int64_t axis) {
    if (values.empty())
        throw invalid_argument_error(op_detail::cat(op, ": needs at least one input"));
    for (std::size_t k = 0; k < values.size(); ++k)
        op_detail::require_input(op, values[k], op_detail::cat("input ", k));
    const tensor& v0 = values[0];
    if (v0.rank() == 0) {
        throw invalid_argument_error(op_detail::cat(op, ": cannot concatenate scalars"), {},
                                     "use Pack (ops::pack) instead");
    }
    const int ax = op_detail::normalize_axis(op, axis, v0.rank());
    const auto& d0 = v0.shape().dims();
    std::vector<std::int64_t> od = d0;
    od[static_cast<std::size_t>(ax)] = 0;
    for (std::size_t k = 0; k < values.size(); ++k) {
        const auto& v = values[k];
        if (base_type(v.type()) != base_type(v0.type())) {
            throw invalid_argument_error(op_detail::cat(op, ": input ", k, " is ", v.describe(),
                                                        " but input 0 is ", v0.describe(),
                                                        ": the dtypes must match"));
        }
        if (v.rank() != v0.rank()) {
            throw shape_error(op_detail::cat(op, ": input ", k, " has shape ", v.shape().str(),
                                             " but input 0 has ", v0.shape().str(),
                                             ": the ranks must match"));
        }
        for (int i = 0; i < v.rank(); ++i) {
            if (i != ax && v.dim(i) != v0.dim(i)) {
                throw shape_error(op_detail::cat(op, ": input ", k, " has shape ", v.shape().str(),
                                                 " but input 0 has ", v0.shape().str(),
                                                 ": all dims but axis ", ax, " must match"));
            }
        }
        od[static_cast<std::size_t>(ax)] += v.dim(ax);
    }
    if (values.size() == 1) return v0;
    tensor out = tensor::uninitialized(v0.type(), shape(od));
    const std::int64_t outer = op_detail::dim_product(d0, 0, static_cast<std::size_t>(ax));
    const std::int64_t inner =
        op_detail::dim_product(d0, static_cast<std::size_t>(ax) + 1, d0.size());
    op_detail::visit_element_bytes(v0.type(), op, [&](auto tag) {
        using U = decltype(tag);
        std::vector<const U*> srcs;
        std::vector<std::int64_t> widths;
        for (const auto& v : values) {
            srcs.push_back(op_detail::elements_as<U>(v));
            widths.push_back(v.dim(ax) * inner);
        }
        op_detail::concat_rows(srcs, widths, op_detail::elements_as<U>(out), outer);
    });
    return out;
}

}  // namespace op_detail

/// ConcatV2: values joined along `axis` (in [-rank, rank)). All values must have one dtype and rank
/// and equal dims except at axis. A single value is returned as is. Throws invalid_argument_error
/// (no values, dtype, axis) or shape_error (rank, dims) naming the input.
inline tensor concat(const std::vector<tensor>& values, std::int64_t axis) {
    return op_detail::concat_impl("ConcatV2", values, axis);
}
/// ConcatV2 with the axis as an int32/int64 scalar tensor. Throws as above.
inline tensor concat(const std::vector<tensor>& values, const tensor& axis) {
    return concat(values, op_detail::int_scalar("ConcatV2", axis, "axis"));
}

/// Pack (tf.stack): N tensors of one shape stacked into a new dim at `axis` in [-rank-1, rank].
/// Throws invalid_argument_error (no values, dtype, axis) or shape_error (shapes differ).
inline tensor pack(const std::vector<tensor>& values, std::int64_t axis = 0) {
    const char* op = "Pack";
    if (values.empty())
        throw invalid_argument_error(op_detail::cat(op, ": needs at least one input"));
    for (std::size_t k = 0; k < values.size(); ++k) {
        op_detail::require_input(op, values[k], op_detail::cat("input ", k));
        if (!(values[k].shape() == values[0].shape())) {
            throw shape_error(op_detail::cat(op, ": input ", k, " has shape ",
                                             values[k].shape().str(), " but input 0 has ",
                                             values[0].shape().str(), ": all must match"));
        }
    }
    const int ax = op_detail::normalize_axis(op, axis, values[0].rank() + 1);
    std::vector<tensor> expanded;
    for (const auto& v : values) {
        auto d = v.shape().dims();
        d.insert(d.begin() + ax, 1);
        expanded.push_back(v.reshaped(shape(d)));
    }
    if (expanded.size() == 1) return expanded[0];
    return op_detail::concat_impl(op, expanded, ax);
}

/// Unpack (tf.unstack): the `num` slices of x along `axis` (in [-rank, rank)), each without that
/// dim; num = -1 takes the dim size. Throws invalid_argument_error for a scalar, a bad axis or a
/// num that differs from the dim.
inline std::vector<tensor> unpack(const tensor& x, std::int64_t axis = 0, std::int64_t num = -1) {
    const char* op = "Unpack";
    op_detail::require_input(op, x, "value");
    if (x.rank() == 0) throw invalid_argument_error(op_detail::cat(op, ": cannot unpack a scalar"));
    const int ax = op_detail::normalize_axis(op, axis, x.rank());
    const std::int64_t n = x.dim(ax);
    if (num >= 0 && num != n) {
        throw invalid_argument_error(op_detail::cat(op, ": num is ", num, " but value ",
                                                    x.shape().str(), " has ", n,
                                                    " slices along axis ", ax));
    }
    auto parts = op_detail::split_sizes(op, x, ax,
                                        std::vector<std::int64_t>(static_cast<std::size_t>(n), 1));
    auto d = x.shape().dims();
    d.erase(d.begin() + ax);
    for (auto& p : parts) p = p.reshaped(shape(d));
    return parts;
}

/// Split: x cut into num_split equal pieces along `axis` (TF's Split takes (split_dim, value)).
/// Throws invalid_argument_error when num_split < 1 or does not divide the dim, or for a bad axis.
inline std::vector<tensor> split(const tensor& x, std::int64_t num_split, std::int64_t axis) {
    const char* op = "Split";
    op_detail::require_input(op, x, "value");
    const int ax = op_detail::normalize_axis(op, axis, x.rank(), "split_dim");
    const std::int64_t n = x.dim(ax);
    if (num_split < 1 || n % num_split != 0) {
        throw invalid_argument_error(op_detail::cat(op, ": num_split ", num_split,
                                                    " does not evenly divide dim ", ax, " (", n,
                                                    ") of ", x.shape().str()));
    }
    return op_detail::split_sizes(
        op, x, ax, std::vector<std::int64_t>(static_cast<std::size_t>(num_split), n / num_split));
}
/// Split with the axis as an int32/int64 scalar tensor. Throws as above.
inline std::vector<tensor> split(const tensor& x, std::int64_t num_split, const tensor& axis) {
    return split(x, num_split, op_detail::int_scalar("Split", axis, "split_dim"));
}

namespace op_detail {
/// SplitV's piece sizes along dim `ax` of `x`: size_splits with its one -1 (if any) made the rest.
/// Throws invalid_argument_error for two -1s, a negative size, or sizes that do not add up.
inline std::vector<std::int64_t> resolve_split_sizes(const char* op, const std::vector<std::int64_t>& size_splits,
                                                     const tensor& x, int ax) {
    const std::int64_t n = x.dim(ax);
    auto sizes = size_splits;
    std::int64_t known = 0;
    int infer = -1;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i] == -1) {
            if (infer >= 0) {
                throw invalid_argument_error(op_detail::cat(op, ": size_splits ",
                                                            op_detail::list_str(size_splits),
                                                            " has more than one -1"));
            }
            infer = static_cast<int>(i);
        } else if (sizes[i] < 0) {
            throw invalid_argument_error(op_detail::cat(
                op, ": size_splits ", op_detail::list_str(size_splits), " has a negative size"));
        } else {
            known += sizes[i];
        }
    }
    if (sizes.empty() || (infer < 0 && known != n) || (infer >= 0 && known > n)) {
        throw invalid_argument_error(
            op_detail::cat(op, ": size_splits ", op_detail::list_str(size_splits),
                           " must add up to dim ", ax, " (", n, ") of ", x.shape().str()));
    }
    if (infer >= 0) sizes[static_cast<std::size_t>(infer)] = n - known;
    return sizes;
}
}  // namespace op_detail

/// SplitV: x cut along `axis` into pieces of size_splits (one entry may be -1: the rest).
/// Throws invalid_argument_error when the sizes do not add up to the dim, or for a bad axis.
inline std::vector<tensor> split_v(const tensor& x, const std::vector<std::int64_t>& size_splits,
                                   std::int64_t axis) {
    const char* op = "SplitV";
    op_detail::require_input(op, x, "value");
    const int ax = op_detail::normalize_axis(op, axis, x.rank(), "split_dim");
    return op_detail::split_sizes(op, x, ax, op_detail::resolve_split_sizes(op, size_splits, x, ax));
}
/// SplitV with size_splits and axis as int32/int64 tensors. Throws as above.
inline std::vector<tensor> split_v(const tensor& x, const tensor& size_splits, const tensor& axis) {
    return split_v(x, op_detail::int_list("SplitV", size_splits, "size_splits"),
                   op_detail::int_scalar("SplitV", axis, "split_dim"));
}

}  // namespace graft::ops
