// graft/ops/array_more.hpp — element-moving array ops: ReverseV2 / Reverse, Roll, ReverseSequence,
// ConcatOffset, ParallelConcat, Empty and DeepCopy. Every dtype (strings too): they copy elements.
//
//   tensor r = ops::reverse(x, {0, -1});                          // flip the first and last dims
//   tensor s = ops::roll(x, {2}, {1});                            // x[:, (j - 2) mod n]
//   tensor q = ops::reverse_sequence(x, lengths, /*seq*/ 1, /*batch*/ 0);
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "graft/ops/concat_split.hpp"
#include "graft/ops/detail/op_support.hpp"
#include "graft/ops/shape_ops.hpp"

namespace graft::ops {

namespace op_detail {

/// Copies x into a new tensor whose element at multi-index (i0, ..., ir-1) is
/// x[map[0][i0], ..., map[r-1][ir-1]]; an empty map[d] is the identity on dim d. Trailing identity
/// dims move as contiguous blocks; the outer index space is split over the thread pool.
inline tensor remap_axes(std::string_view op, const tensor& x, const std::vector<std::vector<std::int64_t>>& map) {
    tensor out = tensor::uninitialized(x.type(), x.shape());
    const auto& d = x.shape().dims();
    const std::size_t r = d.size();
    if (out.num_elements() == 0) return out;
    // k: dims [0, k) are walked, dims [k, r) form one contiguous block of `inner` elements.
    std::size_t k = r;
    while (k > 0 && map[k - 1].empty()) --k;
    const std::int64_t inner = dim_product(d, k, r);
    std::vector<std::int64_t> stride(r, 1);  // elements between neighbours along dim i
    for (std::size_t i = r; i-- > 1;) stride[i - 1] = stride[i] * d[i];
    const std::int64_t blocks = dim_product(d, 0, k);
    visit_element_bytes(x.type(), op, [&](auto tag) {
        using U = decltype(tag);
        const U* in = elements_as<U>(x);
        U* o = elements_as<U>(out);
        parallel_for(blocks, 2.0 * static_cast<double>(sizeof(U) * static_cast<std::size_t>(inner)), 4.0,
                     [&](std::int64_t b0, std::int64_t b1) {
                         std::vector<std::int64_t> idx(k);
                         std::int64_t t = b0;
                         for (std::size_t i = k; i-- > 0;) {
                             idx[i] = t % d[i];
                             t /= d[i];
                         }
                         for (std::int64_t b = b0; b < b1; ++b) {
                             std::int64_t src = 0;
                             for (std::size_t i = 0; i < k; ++i) {
                                 const std::int64_t j = map[i].empty() ? idx[i] : map[i][static_cast<std::size_t>(idx[i])];
                                 src += j * stride[i];
                             }
                             std::copy(in + src, in + src + inner, o + b * inner);
                             for (std::size_t i = k; i-- > 0;) {
                                 if (++idx[i] < d[i]) break;
                                 idx[i] = 0;
                             }
                         }
                     });
    });
    return out;
}

}  // namespace op_detail

/// ReverseV2: x with the order of elements along each of `axes` reversed (negative axes count from
/// the end). Throws invalid_argument_error for an axis out of range or given twice.
inline tensor reverse(const tensor& x, const std::vector<std::int64_t>& axes) {
    const char* op = "ReverseV2";
    op_detail::require_input(op, x, "tensor");
    const int r = x.rank();
    std::vector<std::vector<std::int64_t>> map(static_cast<std::size_t>(r));
    std::vector<bool> seen(static_cast<std::size_t>(r), false);
    for (auto a : axes) {
        const int ax = op_detail::normalize_axis(op, a, r);
        if (seen[static_cast<std::size_t>(ax)]) {
            throw invalid_argument_error(op_detail::cat(op, ": axis ", ax, " is given more than once in ",
                                                        op_detail::list_str(axes)));
        }
        seen[static_cast<std::size_t>(ax)] = true;
    }
    bool any = false;
    for (int i = 0; i < r; ++i) {
        const std::int64_t n = x.dim(i);
        if (!seen[static_cast<std::size_t>(i)] || n <= 1) continue;
        auto& m = map[static_cast<std::size_t>(i)];
        m.resize(static_cast<std::size_t>(n));
        for (std::int64_t j = 0; j < n; ++j) m[static_cast<std::size_t>(j)] = n - 1 - j;
        any = true;
    }
    if (!any) return x;
    return op_detail::remap_axes(op, x, map);
}
/// ReverseV2 with the axes as an int32/int64 vector tensor. Throws as above.
inline tensor reverse(const tensor& x, const tensor& axes) {
    return reverse(x, op_detail::int_list("ReverseV2", axes, "axis"));
}

/// Reverse (v1): `dims` is a bool vector with one entry per dim of x; true dims are reversed.
/// Throws invalid_argument_error when dims is not bool or its length is not x's rank.
inline tensor reverse_dims(const tensor& x, const tensor& dims) {
    const char* op = "Reverse";
    op_detail::require_input(op, x, "tensor");
    op_detail::require_input(op, dims, "dims");
    op_detail::require_dtype(op, dims, "dims", dtype::bool_);
    if (dims.rank() != 1 || dims.dim(0) != x.rank()) {
        throw invalid_argument_error(op_detail::cat(op, ": dims must be a bool vector of length ", x.rank(),
                                                    " (the rank of tensor ", x.shape().str(), ") but has shape ",
                                                    dims.shape().str()));
    }
    std::vector<std::int64_t> axes;
    for (int i = 0; i < x.rank(); ++i) {
        if (dims.data<bool>()[i]) axes.push_back(i);
    }
    return reverse(x, axes);
}

/// Roll: elements shifted by shift[i] positions along axis[i] (wrapping around; shifts on the same
/// axis add up). Throws invalid_argument_error when shift and axis differ in length or an axis is
/// out of range.
inline tensor roll(const tensor& x, const std::vector<std::int64_t>& shift, const std::vector<std::int64_t>& axis) {
    const char* op = "Roll";
    op_detail::require_input(op, x, "input");
    if (shift.size() != axis.size()) {
        throw invalid_argument_error(op_detail::cat(op, ": shift ", op_detail::list_str(shift), " and axis ",
                                                    op_detail::list_str(axis), " must have the same length"));
    }
    const int r = x.rank();
    if (r == 0 && !axis.empty()) {
        throw invalid_argument_error(op_detail::cat(op, ": input must have rank >= 1 but is a scalar"));
    }
    std::vector<std::int64_t> total(static_cast<std::size_t>(r), 0);
    for (std::size_t i = 0; i < axis.size(); ++i) {
        total[static_cast<std::size_t>(op_detail::normalize_axis(op, axis[i], r))] += shift[i];
    }
    std::vector<std::vector<std::int64_t>> map(static_cast<std::size_t>(r));
    bool any = false;
    for (int i = 0; i < r; ++i) {
        const std::int64_t n = x.dim(i);
        if (n == 0) continue;
        const std::int64_t s = ((total[static_cast<std::size_t>(i)] % n) + n) % n;
        if (s == 0) continue;
        auto& m = map[static_cast<std::size_t>(i)];
        m.resize(static_cast<std::size_t>(n));
        for (std::int64_t j = 0; j < n; ++j) m[static_cast<std::size_t>(j)] = (j - s + n) % n;
        any = true;
    }
    if (!any) return x;
    return op_detail::remap_axes(op, x, map);
}
/// Roll with shift and axis as int32/int64 scalars or vectors. Throws as above.
inline tensor roll(const tensor& x, const tensor& shift, const tensor& axis) {
    return roll(x, op_detail::int_list("Roll", shift, "shift"), op_detail::int_list("Roll", axis, "axis"));
}

/// ReverseSequence: for each b along batch_dim, the first seq_lengths[b] elements along seq_dim
/// reversed, the rest copied. Throws invalid_argument_error for bad dims, a seq_lengths of the
/// wrong size, or a length outside [0, x.dim(seq_dim)].
inline tensor reverse_sequence(const tensor& x, const tensor& seq_lengths, std::int64_t seq_dim,
                               std::int64_t batch_dim) {
    const char* op = "ReverseSequence";
    op_detail::require_input(op, x, "input");
    const int r = x.rank();
    if (seq_dim < 0 || seq_dim >= r || batch_dim < 0 || batch_dim >= r || seq_dim == batch_dim) {
        throw invalid_argument_error(op_detail::cat(op, ": seq_dim ", seq_dim, " and batch_dim ", batch_dim,
                                                    " must be two different dims of input ", x.shape().str()));
    }
    if (seq_lengths.valid() && seq_lengths.rank() != 1) {
        throw invalid_argument_error(op_detail::cat(op, ": seq_lengths must be a vector but has shape ",
                                                    seq_lengths.shape().str()));
    }
    auto lens = op_detail::int_list(op, seq_lengths, "seq_lengths");
    const auto bd = static_cast<std::size_t>(batch_dim), sd = static_cast<std::size_t>(seq_dim);
    const auto& d = x.shape().dims();
    if (static_cast<std::int64_t>(lens.size()) != d[bd]) {
        throw invalid_argument_error(op_detail::cat(op, ": seq_lengths has ", lens.size(), " entries but dim ",
                                                    batch_dim, " of input ", x.shape().str(), " is ", d[bd]));
    }
    for (std::size_t b = 0; b < lens.size(); ++b) {
        if (lens[b] < 0 || lens[b] > d[sd]) {
            throw invalid_argument_error(op_detail::cat(op, ": seq_lengths[", b, "] = ", lens[b],
                                                        " is outside [0, ", d[sd], "] (dim ", seq_dim, " of input ",
                                                        x.shape().str(), ")"));
        }
    }
    tensor out = tensor::uninitialized(x.type(), x.shape());
    if (out.num_elements() == 0) return out;
    const std::size_t k = std::max(bd, sd) + 1;  // dims [0, k) walked; [k, r) contiguous
    const std::int64_t inner = op_detail::dim_product(d, k, d.size());
    std::vector<std::int64_t> stride(d.size(), 1);  // elements between neighbours along dim i
    for (std::size_t i = d.size(); i-- > 1;) stride[i - 1] = stride[i] * d[i];
    const std::int64_t blocks = op_detail::dim_product(d, 0, k);
    op_detail::visit_element_bytes(x.type(), op, [&](auto tag) {
        using U = decltype(tag);
        const U* in = op_detail::elements_as<U>(x);
        U* o = op_detail::elements_as<U>(out);
        std::vector<std::int64_t> idx(k, 0);
        for (std::int64_t b = 0; b < blocks; ++b) {
            std::int64_t src = b * inner;
            const std::int64_t len = lens[static_cast<std::size_t>(idx[bd])];
            if (idx[sd] < len) src += (len - 1 - 2 * idx[sd]) * stride[sd];
            std::copy(in + src, in + src + inner, o + b * inner);
            for (std::size_t i = k; i-- > 0;) {
                if (++idx[i] < d[i]) break;
                idx[i] = 0;
            }
        }
    });
    return out;
}

/// ConcatOffset: for shapes s_0..s_{n-1} (int32/int64 vectors of one rank, equal except at
/// concat_dim), the offset of each input inside their concatenation along concat_dim. Throws
/// invalid_argument_error for mismatched ranks, dims or dtypes, or concat_dim out of range.
inline std::vector<tensor> concat_offset(std::int64_t concat_dim, const std::vector<tensor>& shapes) {
    const char* op = "ConcatOffset";
    if (shapes.empty()) throw invalid_argument_error(op_detail::cat(op, ": needs at least one shape"));
    auto s0 = op_detail::int_list(op, shapes[0], "shape 0");
    const int r = static_cast<int>(s0.size());
    const int axis = op_detail::normalize_axis(op, concat_dim, r, "concat_dim");
    std::vector<tensor> out;
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        op_detail::require_same_dtype(op, shapes[i], op_detail::cat("shape ", i), shapes[0], "shape 0");
        auto s = op_detail::int_list(op, shapes[i], op_detail::cat("shape ", i));
        if (s.size() != s0.size()) {
            throw invalid_argument_error(op_detail::cat(op, ": shape ", i, " ", op_detail::list_str(s),
                                                        " has another rank than shape 0 ", op_detail::list_str(s0)));
        }
        for (int j = 0; j < r; ++j) {
            const auto u = static_cast<std::size_t>(j);
            if (j != axis && s[u] != s0[u]) {
                throw invalid_argument_error(op_detail::cat(op, ": shape ", i, " ", op_detail::list_str(s),
                                                            " differs from shape 0 ", op_detail::list_str(s0),
                                                            " in dim ", j, " (only dim ", axis, " may differ)"));
            }
        }
        std::vector<std::int64_t> off(static_cast<std::size_t>(r), 0);
        off[static_cast<std::size_t>(axis)] = offset;
        offset += s[static_cast<std::size_t>(axis)];
        out.push_back(op_detail::dims_tensor(op, off, base_type(shapes[0].type())));
    }
    return out;
}

/// ParallelConcat: the values (each of shape [1, ...], all alike) stacked along dim 0; `declared`
/// is the op's shape attr (checked where it is fully defined). Throws invalid_argument_error for
/// values of another shape.
inline tensor parallel_concat(const std::vector<tensor>& values, const shape& declared) {
    const char* op = "ParallelConcat";
    if (values.empty()) throw invalid_argument_error(op_detail::cat(op, ": needs at least one value"));
    for (std::size_t i = 0; i < values.size(); ++i) {
        op_detail::require_input(op, values[i], op_detail::cat("values[", i, "]"));
        if (values[i].rank() < 1 || values[i].dim(0) != 1 || !(values[i].shape() == values[0].shape())) {
            throw invalid_argument_error(op_detail::cat(op, ": every value must have shape [1, ...] like values[0] ",
                                                        values[0].shape().str(), " but values[", i, "] is ",
                                                        values[i].shape().str()));
        }
    }
    tensor out = concat(values, 0);
    if (declared.rank_known() && declared.fully_defined() && !(declared == out.shape())) {
        throw invalid_argument_error(op_detail::cat(op, ": the values stack to ", out.shape().str(),
                                                    " but the shape attr says ", declared.str()));
    }
    return out;
}

/// Empty: a new tensor of `dims` and dtype t; graft always zero-fills it (TF leaves it
/// uninitialized unless init is set). Throws invalid_argument_error for a negative dim.
inline tensor empty(const tensor& dims, dtype t) {
    const char* op = "Empty";
    auto d = op_detail::int_list(op, dims, "shape");
    for (auto v : d) {
        if (v < 0) {
            throw invalid_argument_error(op_detail::cat(op, ": shape ", op_detail::list_str(d),
                                                        " has a negative dim"));
        }
    }
    return zeros(t, shape(d));
}

/// DeepCopy: x in fresh memory. Throws invalid_argument_error for an invalid tensor.
inline tensor deep_copy(const tensor& x) { return copy(x); }

}  // namespace graft::ops
