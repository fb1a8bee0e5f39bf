// graft/ops/shape_ops.hpp — ops that read or change only the shape: Shape, ShapeN, Size, Rank,
// Reshape, Squeeze, ExpandDims, Identity; and the zeros/copy helpers other kernels use.
//
//   tensor s = ops::shape_of(x);                 // int32 [rank]
//   tensor y = ops::reshape(x, {-1, 4});         // a view: shares x's buffer
//   tensor z = ops::squeeze(y, {1});
//
// Reshape, Squeeze, ExpandDims and Identity return views that share the input's buffer, like TF;
// these and the shape-only ops take a tensor on any device (a GPU tensor is not copied).
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "graft/ops/detail/op_support.hpp"

namespace graft::ops {

namespace op_detail {

/// A 1-D int32/int64 tensor of the dims (out_type must be int32 or int64).
inline tensor dims_tensor(std::string_view op, const std::vector<std::int64_t>& d, dtype out_type) {
    if (out_type != dtype::int32 && out_type != dtype::int64) {
        throw invalid_argument_error(
            cat(op, ": out_type must be int32 or int64, got ", dtype_name(out_type)));
    }
    tensor r = tensor::uninitialized(out_type, shape{static_cast<std::int64_t>(d.size())});
    for (std::size_t i = 0; i < d.size(); ++i) {
        if (out_type == dtype::int64) {
            r.data<std::int64_t>()[i] = d[i];
        } else {
            if (d[i] > std::numeric_limits<std::int32_t>::max()) {
                throw invalid_argument_error(
                    cat(op, ": value ", d[i], " does not fit out_type int32"), {},
                    "use out_type int64");
            }
            r.data<std::int32_t>()[i] = static_cast<std::int32_t>(d[i]);
        }
    }
    return r;
}

/// Throws unless `t` is valid with a fully defined shape. Unlike require_input, `t` may live on a
/// device: the ops below read only its dtype and shape (Shape, Size, Rank) or return a view of
/// its buffer (Reshape, Squeeze, ExpandDims), so a GPU tensor stays where it is.
inline void require_shaped(std::string_view op, const tensor& t, std::string_view what) {
    if (!t.valid()) throw invalid_argument_error(cat(op, ": ", what, " is an empty (invalid) tensor"));
    if (!t.shape().fully_defined()) {
        throw shape_error(cat(op, ": ", what, " has shape ", t.shape().str(), " that is not fully defined"));
    }
}

}  // namespace op_detail

/// A new zero-filled tensor (empty strings for string). Throws as tensor's constructor.
inline tensor zeros(dtype t, const shape& s) {
    return tensor(t, s);
}

/// A deep copy of x in fresh aligned memory. Throws invalid_argument_error for an invalid tensor.
inline tensor copy(const tensor& x) {
    op_detail::require_input("copy", x, "x");
    tensor out = tensor::uninitialized(x.type(), x.shape());
    op_detail::visit_element_bytes(x.type(), "copy", [&](auto tag) {
        using U = decltype(tag);
        op_detail::parallel_copy(op_detail::elements_as<U>(x), op_detail::elements_as<U>(out),
                                 x.num_elements());
    });
    return out;
}

/// Identity: x itself (same buffer). Throws invalid_argument_error for an invalid tensor.
inline tensor identity(const tensor& x) {
    if (!x.valid()) throw invalid_argument_error("Identity: input is an empty (invalid) tensor");
    return x;
}

/// Shape: x's dims as an int32 (default) or int64 vector. Throws invalid_argument_error when a dim
/// does not fit int32 or out_type is not an int type.
inline tensor shape_of(const tensor& x, dtype out_type = dtype::int32) {
    op_detail::require_shaped("Shape", x, "input");
    return op_detail::dims_tensor("Shape", x.shape().dims(), out_type);
}

/// ShapeN: the shape of each input. Throws as shape_of().
inline std::vector<tensor> shape_n(const std::vector<tensor>& xs, dtype out_type = dtype::int32) {
    std::vector<tensor> r;
    r.reserve(xs.size());
    for (const auto& x : xs) {
        op_detail::require_shaped("ShapeN", x, "input");
        r.push_back(op_detail::dims_tensor("ShapeN", x.shape().dims(), out_type));
    }
    return r;
}

/// Size: the element count as an int32 (default) or int64 scalar. Throws as shape_of().
inline tensor size_of(const tensor& x, dtype out_type = dtype::int32) {
    op_detail::require_shaped("Size", x, "input");
    return op_detail::dims_tensor("Size", {x.num_elements()}, out_type).reshaped(shape{});
}

/// Rank: the rank as an int32 scalar.
inline tensor rank_of(const tensor& x) {
    op_detail::require_shaped("Rank", x, "input");
    return tensor::scalar_of(static_cast<std::int32_t>(x.rank()));
}

/// The shape Reshape gives `in` for the requested dims (at most one -1, inferred). Throws
/// invalid_argument_error for a bad request, shape_error when the counts differ.
inline shape reshape_shape(const shape& in, const std::vector<std::int64_t>& dims) {
    const char* op = "Reshape";
    std::int64_t known = 1;
    int infer = -1;
    for (std::size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] == -1) {
            if (infer >= 0) {
                throw invalid_argument_error(
                    op_detail::cat(op, ": only one dim may be -1, not both ", infer, " and ", i,
                                   " in ", op_detail::list_str(dims)));
            }
            infer = static_cast<int>(i);
        } else if (dims[i] < 0) {
            throw invalid_argument_error(op_detail::cat(op, ": size ", i,
                                                        " must be non-negative, not ", dims[i],
                                                        " in ", op_detail::list_str(dims)));
        } else {
            known *= dims[i];
        }
    }
    const std::int64_t n = in.num_elements();
    std::vector<std::int64_t> out = dims;
    if (infer >= 0) {
        if (known == 0) {
            throw invalid_argument_error(op_detail::cat(op, ": cannot infer the -1 in ",
                                                        op_detail::list_str(dims),
                                                        " when the other dims multiply to 0"));
        }
        if (n % known != 0) {
            throw shape_error(op_detail::cat(op, ": cannot reshape ", in.str(), " (", n,
                                             " elements) to ", op_detail::list_str(dims), ": ", n,
                                             " is not a multiple of ", known));
        }
        out[static_cast<std::size_t>(infer)] = n / known;
    } else if (known != n) {
        throw shape_error(op_detail::cat(op, ": cannot reshape ", in.str(), " (", n,
                                         " elements) to ", op_detail::list_str(dims), " (", known,
                                         " elements)"));
    }
    return shape(out);
}

/// Reshape: a view of x with the requested dims (one may be -1). Throws as reshape_shape().
inline tensor reshape(const tensor& x, const std::vector<std::int64_t>& dims) {
    op_detail::require_shaped("Reshape", x, "tensor");
    return x.reshaped(reshape_shape(x.shape(), dims));
}
/// Reshape with the dims as an int32/int64 vector tensor (TF's "shape" input). Throws as above.
inline tensor reshape(const tensor& x, const tensor& dims) {
    return reshape(x, op_detail::int_list("Reshape", dims, "shape"));
}

/// Squeeze: a view of x without the listed size-1 dims (all size-1 dims when `axes` is empty).
/// Throws invalid_argument_error for an axis out of range or of size != 1.
inline tensor squeeze(const tensor& x, const std::vector<std::int64_t>& axes = {}) {
    const char* op = "Squeeze";
    op_detail::require_shaped(op, x, "input");
    const auto& d = x.shape().dims();
    std::vector<bool> drop(d.size(), false);
    for (auto a : axes) {
        const int ax = op_detail::normalize_axis(op, a, x.rank(), "squeeze_dims entry");
        if (d[static_cast<std::size_t>(ax)] != 1) {
            throw invalid_argument_error(op_detail::cat(op, ": cannot squeeze dim ", ax, " of ",
                                                        x.shape().str(), ": expected size 1, got ",
                                                        d[static_cast<std::size_t>(ax)]));
        }
        drop[static_cast<std::size_t>(ax)] = true;
    }
    std::vector<std::int64_t> od;
    for (std::size_t i = 0; i < d.size(); ++i) {
        if (axes.empty() ? d[i] != 1 : !drop[i]) od.push_back(d[i]);
    }
    return x.reshaped(shape(od));
}

/// ExpandDims: a view of x with a size-1 dim inserted at `axis` in [-rank-1, rank]. Throws
/// invalid_argument_error for an axis out of range.
inline tensor expand_dims(const tensor& x, std::int64_t axis) {
    const char* op = "ExpandDims";
    op_detail::require_shaped(op, x, "input");
    const int ax = op_detail::normalize_axis(op, axis, x.rank() + 1, "dim");
    auto d = x.shape().dims();
    d.insert(d.begin() + ax, 1);
    return x.reshaped(shape(d));
}
/// ExpandDims with the axis as an int32/int64 tensor holding one value.
inline tensor expand_dims(const tensor& x, const tensor& axis) {
    return expand_dims(x, op_detail::int_scalar("ExpandDims", axis, "dim"));
}

}  // namespace graft::ops
