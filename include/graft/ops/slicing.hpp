// graft/ops/slicing.hpp — Slice, StridedSlice (all five masks, negative strides) and
// StridedSliceGrad.
//
//   tensor a = ops::slice(x, {1, 0}, {2, -1});            // rows 1..2, all columns
//   // x[..., ::-1, tf.newaxis] on a rank-3 x:
//   tensor b = ops::strided_slice(x, {0, 0, 0}, {0, 0, 0}, {1, -1, 1},
//                                 {.begin_mask = 0b010, .end_mask = 0b010, .ellipsis_mask = 0b001,
//                                  .new_axis_mask = 0b100});
//
// StridedSlice follows TF's ValidateStridedSliceOp step by step: the sparse spec (with ellipsis
// and new axes) is expanded to one entry per input dim, begin/end are made explicit (masks,
// negative indices, clamping), then a strided box is copied; shrunk dims are dropped and new axes
// added only in the final reshape.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "graft/ops/detail/op_support.hpp"

namespace graft::ops {

/// StridedSlice's bit masks; bit i refers to entry i of begin/end/strides.
struct strided_slice_masks {
    std::int32_t begin_mask =
        0;  ///< ignore begin[i]: start at the first (last if stride < 0) element
    std::int32_t end_mask = 0;  ///< ignore end[i]: run to the end
    std::int32_t ellipsis_mask =
        0;  ///< entry i is "...": as many full dims as needed (at most one bit)
    std::int32_t new_axis_mask = 0;     ///< entry i inserts a size-1 dim
    std::int32_t shrink_axis_mask = 0;  ///< entry i indexes one element and drops the dim
};

namespace op_detail {

/// A strided box inside a tensor of dims `dims`: `extent` elements per dim from `begin` by `step`.
struct strided_box {
    std::vector<std::int64_t> begin, step, extent;
};

/// Gather (dense = big[box]) or scatter (big[box] = dense) between a dense tensor of the box's
/// extent and the strided box of `big`, over the thread pool.
template <bool Scatter, class U>
void strided_copy(U* big, const std::vector<std::int64_t>& dims, const strided_box& box, U* dense) {
    const std::size_t r = dims.size();
    if (r == 0) {
        if (Scatter)
            *big = *dense;
        else
            *dense = *big;
        return;
    }
    for (auto e : box.extent) {
        if (e == 0) return;
    }
    const auto strides = row_major_strides(shape(dims));
    const std::int64_t inner = box.extent[r - 1];
    const std::int64_t inner_step = box.step[r - 1];
    const std::int64_t rows = dim_product(box.extent, 0, r - 1);
    parallel_for(rows, 2.0 * sizeof(U) * static_cast<double>(inner), static_cast<double>(inner),
                 [&](std::int64_t first, std::int64_t last) {
                     std::vector<std::int64_t> idx(r, 0);
                     std::int64_t rem = first;
                     for (std::size_t d = r - 1; d-- > 0;) {
                         idx[d] = rem % box.extent[d];
                         rem /= box.extent[d];
                     }
                     std::int64_t base = 0;
                     for (std::size_t d = 0; d + 1 < r; ++d)
                         base += (box.begin[d] + idx[d] * box.step[d]) * strides[d];
                     base += box.begin[r - 1];
                     for (std::int64_t row = first; row < last; ++row) {
                         U* dn = dense + row * inner;
                         U* bg = big + base;
                         if (inner_step == 1) {
                             if (Scatter)
                                 std::copy(dn, dn + inner, bg);
                             else
                                 std::copy(bg, bg + inner, dn);
                         } else {
                             for (std::int64_t j = 0; j < inner; ++j) {
                                 if (Scatter)
                                     bg[j * inner_step] = dn[j];
                                 else
                                     dn[j] = bg[j * inner_step];
                             }
                         }
                         for (std::size_t d = r - 1; d-- > 0;) {
                             ++idx[d];
                             base += box.step[d] * strides[d];
                             if (idx[d] < box.extent[d]) break;
                             base -= box.step[d] * strides[d] * box.extent[d];
                             idx[d] = 0;
                         }
                     }
                 });
}

/// Copies box of x into a new tensor of the box's extent.
inline tensor gather_box(std::string_view op, const tensor& x, const strided_box& box) {
    tensor out = tensor::uninitialized(x.type(), shape(box.extent));
    visit_element_bytes(x.type(), op, [&](auto tag) {
        using U = decltype(tag);
        strided_copy<false>(elements_as<U>(x), x.shape().dims(), box, elements_as<U>(out));
    });
    return out;
}

/// The result of TF's StridedSlice validation for one input shape.
struct strided_slice_plan {
    strided_box box;       ///< begin/step/extent per input dim (extent = processing shape)
    shape final_shape;     ///< after dropping shrunk dims and adding new axes
    bool identity = true;  ///< the box is the whole input with step 1
};

inline strided_slice_plan plan_strided_slice(std::string_view op,
                                             const std::vector<std::int64_t>& dims,
                                             const std::vector<std::int64_t>& begin,
                                             const std::vector<std::int64_t>& end,
                                             const std::vector<std::int64_t>& strides,
                                             const strided_slice_masks& m) {
    if (begin.size() != strides.size() || end.size() != strides.size() || strides.size() >= 32) {
        throw invalid_argument_error(
            cat(op, ": begin, end and strides must be vectors of one length below 32, got ",
                begin.size(), ", ", end.size(), " and ", strides.size(), " entries"));
    }
    const auto ell = static_cast<std::uint32_t>(m.ellipsis_mask);
    if (ell & (ell - 1)) {
        throw invalid_argument_error(
            cat(op, ": ellipsis_mask ", m.ellipsis_mask, " has more than one bit set"));
    }
    auto bit = [](std::int32_t mask, std::size_t i) {
        return (static_cast<std::uint32_t>(mask) >> i & 1u) != 0;
    };
    // Step 1: the sparse spec, with an ellipsis appended when there is none.
    std::size_t sparse_dims = strides.size();
    std::uint64_t sparse_ellipsis = ell;
    std::int64_t new_axes_after_ellipsis = 0;
    bool seen = false;
    for (std::size_t i = 0; i < sparse_dims; ++i) {
        if (seen && bit(m.new_axis_mask, i)) ++new_axes_after_ellipsis;
        if (bit(m.ellipsis_mask, i)) seen = true;
    }
    if (!seen) sparse_ellipsis |= std::uint64_t{1} << sparse_dims++;
    // Step 2: the dense spec, one entry per input dim.
    const auto n = static_cast<std::int64_t>(dims.size());
    const std::size_t un = dims.size();
    std::vector<std::int64_t> b(un, 0), e(un, 0), s(un, 1);
    std::vector<bool> bmask(un, false), emask(un, false), shrink(un, false);
    constexpr std::int64_t new_axis = -2, shrunk = -1;
    std::vector<std::int64_t> gather;
    std::int64_t full = 0;
    for (std::size_t i = 0; i < sparse_dims; ++i) {
        if (sparse_ellipsis >> i & 1u) {
            const std::int64_t next = std::min(
                n - (static_cast<std::int64_t>(sparse_dims) - static_cast<std::int64_t>(i)) + 1 +
                    new_axes_after_ellipsis,
                n);
            for (; full < next; ++full) {
                const auto f = static_cast<std::size_t>(full);
                bmask[f] = emask[f] = true;
                gather.push_back(full);
            }
        } else if (bit(m.new_axis_mask, i)) {
            gather.push_back(new_axis);
        } else {
            if (full == n) {
                throw invalid_argument_error(cat(op, ": index out of range using input dim ", full,
                                                 "; input ", shape(dims).str(), " has only ", n,
                                                 " dims"));
            }
            const auto f = static_cast<std::size_t>(full);
            b[f] = begin[i];
            e[f] = end[i];
            s[f] = strides[i];
            bmask[f] = bit(m.begin_mask, i);
            emask[f] = bit(m.end_mask, i);
            shrink[f] = bit(m.shrink_axis_mask, i);
            gather.push_back(shrink[f] ? shrunk : full);
            ++full;
        }
    }
    // Step 3: explicit, clamped begin/end and the processing shape.
    strided_slice_plan p;
    p.box.begin.resize(un);
    p.box.step = s;
    p.box.extent.resize(un);
    for (std::size_t i = 0; i < un; ++i) {
        const std::int64_t d = dims[i], st = s[i];
        if (st == 0) throw invalid_argument_error(cat(op, ": strides[", i, "] must be non-zero"));
        std::int64_t bi, ei;
        if (shrink[i]) {
            if (st <= 0)
                throw invalid_argument_error(
                    cat(op, ": only stride 1 is allowed on a shrunk (indexed) dim ", i));
            bi = b[i] < 0 ? d + b[i] : b[i];
            if (bi < 0 || bi >= d) {
                throw invalid_argument_error(cat(op, ": slice index ", b[i], " of dimension ", i,
                                                 " is out of bounds for size ", d));
            }
            ei = bi + 1;
        } else {
            const std::int64_t lo = st > 0 ? 0 : -1, hi = st > 0 ? d : d - 1;
            auto canonical = [&](std::int64_t x, bool masked, bool is_end) {
                if (masked) return (st > 0) != is_end ? lo : hi;
                const std::int64_t fwd = x < 0 ? d + x : x;
                return fwd < lo ? lo : (fwd > hi ? hi : fwd);
            };
            bi = canonical(b[i], bmask[i], false);
            ei = canonical(e[i], emask[i], true);
        }
        const std::int64_t interval = ei - bi;
        std::int64_t size = 0;
        if (interval != 0 && (interval < 0) == (st < 0))
            size = interval / st + (interval % st != 0 ? 1 : 0);
        p.box.begin[i] = bi;
        p.box.extent[i] = size;
        p.identity = p.identity && st == 1 && bi == 0 && size == d;
    }
    // Step 4: the final shape.
    std::vector<std::int64_t> fd;
    for (auto g : gather) {
        if (g >= 0)
            fd.push_back(p.box.extent[static_cast<std::size_t>(g)]);
        else if (g == new_axis)
            fd.push_back(1);
    }
    p.final_shape = shape(fd);
    return p;
}

}  // namespace op_detail

/// Slice: the block of x starting at `begin` with `size` elements per dim (-1: to the end).
/// Throws invalid_argument_error when the lengths differ from x's rank or the block leaves x.
inline tensor slice(const tensor& x, const std::vector<std::int64_t>& begin,
                    const std::vector<std::int64_t>& size) {
    const char* op = "Slice";
    op_detail::require_input(op, x, "input");
    const auto r = static_cast<std::size_t>(x.rank());
    if (begin.size() != r || size.size() != r) {
        throw invalid_argument_error(op_detail::cat(
            op, ": begin ", op_detail::list_str(begin), " and size ", op_detail::list_str(size),
            " must have one entry per dim of ", x.shape().str()));
    }
    op_detail::strided_box box{begin, std::vector<std::int64_t>(r, 1), size};
    bool whole = true;
    for (std::size_t i = 0; i < r; ++i) {
        const std::int64_t d = x.shape().dims()[i];
        if (box.extent[i] == -1) box.extent[i] = d - begin[i];
        if (begin[i] < 0 || begin[i] > d || box.extent[i] < 0 || begin[i] + box.extent[i] > d) {
            throw invalid_argument_error(op_detail::cat(
                op, ": expected 0 <= begin[", i, "] <= begin[", i, "] + size[", i, "] <= ", d,
                " but got begin ", begin[i], ", size ", size[i], " for input ", x.shape().str()));
        }
        whole = whole && begin[i] == 0 && box.extent[i] == d;
    }
    if (whole) return x;
    return op_detail::gather_box(op, x, box);
}
/// Slice with begin and size as int32/int64 vector tensors. Throws as above.
inline tensor slice(const tensor& x, const tensor& begin, const tensor& size) {
    return slice(x, op_detail::int_list("Slice", begin, "begin"),
                 op_detail::int_list("Slice", size, "size"));
}

/// StridedSlice (Python's x[b:e:s, ..., tf.newaxis, i]) with TF's masks. An identity slice returns
/// a view of x. Throws invalid_argument_error for inconsistent begin/end/strides, a zero stride,
/// several ellipses or an index out of range on a shrunk dim.
inline tensor strided_slice(const tensor& x, const std::vector<std::int64_t>& begin,
                            const std::vector<std::int64_t>& end,
                            const std::vector<std::int64_t>& strides,
                            const strided_slice_masks& masks = {}) {
    const char* op = "StridedSlice";
    op_detail::require_input(op, x, "input");
    auto p = op_detail::plan_strided_slice(op, x.shape().dims(), begin, end, strides, masks);
    if (p.identity) return x.reshaped(p.final_shape);
    return op_detail::gather_box(op, x, p.box).reshaped(p.final_shape);
}
/// StridedSlice with begin/end/strides as int32/int64 vector tensors. Throws as above.
inline tensor strided_slice(const tensor& x, const tensor& begin, const tensor& end,
                            const tensor& strides, const strided_slice_masks& masks = {}) {
    const char* op = "StridedSlice";
    return strided_slice(x, op_detail::int_list(op, begin, "begin"),
                         op_detail::int_list(op, end, "end"),
                         op_detail::int_list(op, strides, "strides"), masks);
}

/// StridedSliceGrad: a zero tensor of `input_shape` (dy's dtype) with dy written where
/// StridedSlice(input, begin, end, strides, masks) reads. Throws as strided_slice(), and
/// shape_error when dy's shape is not the slice's shape.
inline tensor strided_slice_grad(const shape& input_shape, const std::vector<std::int64_t>& begin,
                                 const std::vector<std::int64_t>& end,
                                 const std::vector<std::int64_t>& strides, const tensor& dy,
                                 const strided_slice_masks& masks = {}) {
    const char* op = "StridedSliceGrad";
    op_detail::require_input(op, dy, "dy");
    auto p = op_detail::plan_strided_slice(op, input_shape.dims(), begin, end, strides, masks);
    if (!(dy.shape() == p.final_shape)) {
        throw shape_error(op_detail::cat(op, ": dy has shape ", dy.shape().str(),
                                         " but the slice of ", input_shape.str(), " has shape ",
                                         p.final_shape.str()));
    }
    tensor out(dy.type(), input_shape);
    op_detail::visit_element_bytes(dy.type(), op, [&](auto tag) {
        using U = decltype(tag);
        op_detail::strided_copy<true>(op_detail::elements_as<U>(out), input_shape.dims(), p.box,
                                      op_detail::elements_as<U>(dy));
    });
    return out;
}
/// StridedSliceGrad with the shape and begin/end/strides as int32/int64 vector tensors.
inline tensor strided_slice_grad(const tensor& input_shape, const tensor& begin, const tensor& end,
                                 const tensor& strides, const tensor& dy,
                                 const strided_slice_masks& masks = {}) {
    const char* op = "StridedSliceGrad";
    auto dims = op_detail::int_list(op, input_shape, "shape");
    for (auto d : dims) {
        if (d < 0)
            throw invalid_argument_error(
                op_detail::cat(op, ": shape ", op_detail::list_str(dims), " has a negative dim"));
    }
    return strided_slice_grad(shape(dims), op_detail::int_list(op, begin, "begin"),
                              op_detail::int_list(op, end, "end"),
                              op_detail::int_list(op, strides, "strides"), dy, masks);
}

}  // namespace graft::ops
