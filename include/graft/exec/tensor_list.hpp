// graft/exec/tensor_list.hpp — TF2's TensorList (list_kernels.h semantics): a list of tensors of
// one dtype with a (partial) element shape, carried along edges as a dtype::variant scalar whose
// buffer keeps the list alive (as graft/exec/resources.hpp carries TensorArrays).
//
// A list is a value: every op that "changes" a list makes a new one (the tensors themselves are
// shared, so a copy costs one pointer per element), so a loop's earlier lists never change.
//
//   auto l = std::make_shared<graft::exec::tensor_list>(graft::dtype::float32, graft::shape{2});
//   l->items.resize(3);                                   // three unset elements (TensorListReserve)
//   graft::tensor h = graft::exec::list_handle(l);        // what TensorListReserve outputs
//   graft::exec::list_at(h, "TensorListGetItem").get(0, graft::shape::unknown_rank());  // zeros [2]
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/exec/resources.hpp"

namespace graft::exec {

/// The shape both `a` and `b` allow (TF's PartialTensorShape::MergeWith). Throws
/// invalid_argument_error naming both when they disagree.
inline shape merge_shapes(const shape& a, const shape& b) {
    if (!a.rank_known()) return b;
    if (!b.rank_known()) return a;
    if (a.rank() != b.rank()) {
        throw invalid_argument_error(detail::cat("Incompatible shapes during merge: ", a.str(), " vs. ", b.str()));
    }
    std::vector<std::int64_t> d(a.dims());
    for (std::size_t i = 0; i < d.size(); ++i) {
        auto bd = b.dims()[i];
        if (d[i] < 0) d[i] = bd;
        else if (bd >= 0 && bd != d[i]) {
            throw invalid_argument_error(detail::cat("Incompatible shapes during merge: ", a.str(), " vs. ", b.str()));
        }
    }
    return shape(d);
}

/// A partial shape from a shape tensor (TF's element_shape inputs): a scalar -1 is an unknown
/// rank, -1 entries of a vector are unknown dims. Throws invalid_argument_error for another
/// dtype, rank or a dim below -1.
inline shape shape_from_tensor(const tensor& t, const char* who) {
    if (!t.valid() || (t.type() != dtype::int32 && t.type() != dtype::int64)) {
        throw invalid_argument_error(detail::cat(who, ": element_shape must be an int32 or int64 tensor, given ",
                                                 t.valid() ? t.describe() : std::string("nothing")));
    }
    auto at = [&](std::int64_t i) -> std::int64_t {
        return t.type() == dtype::int32 ? t.data<std::int32_t>()[i] : t.data<std::int64_t>()[i];
    };
    if (t.rank() == 0) {
        if (at(0) != -1) {
            throw invalid_argument_error(detail::cat(who, ": a scalar element_shape must be -1 (unknown rank), given ",
                                                     at(0)));
        }
        return shape::unknown_rank();
    }
    if (t.rank() != 1) {
        throw invalid_argument_error(detail::cat(who, ": element_shape must be a scalar or a vector, given shape ",
                                                 t.shape().str()));
    }
    std::vector<std::int64_t> d(static_cast<std::size_t>(t.num_elements()));
    for (std::size_t i = 0; i < d.size(); ++i) {
        d[i] = at(static_cast<std::int64_t>(i));
        if (d[i] < -1) throw invalid_argument_error(detail::cat(who, ": element_shape dims must be >= -1, given ", d[i]));
    }
    return shape(d);
}

/// `s` as a shape tensor of dtype `type` (int32/int64): -1 for an unknown rank, -1 per unknown dim.
inline tensor shape_to_tensor(const shape& s, dtype type) {
    std::vector<std::int64_t> d = s.rank_known() ? s.dims() : std::vector<std::int64_t>{};
    tensor t = s.rank_known() ? tensor(type, shape{static_cast<std::int64_t>(d.size())}) : tensor(type, shape{});
    if (!s.rank_known()) d = {-1};
    for (std::size_t i = 0; i < d.size(); ++i) {
        if (type == dtype::int32) t.data<std::int32_t>()[i] = static_cast<std::int32_t>(d[i]);
        else t.data<std::int64_t>()[i] = d[i];
    }
    return t;
}

/// `items` (same dtype and shape) stacked along a new dim 0; `element` shapes an empty result.
/// Throws invalid_argument_error when shapes differ.
inline tensor stack_tensors(const std::vector<tensor>& items, dtype type, const shape& element) {
    shape es = items.empty() ? element : items[0].shape();
    auto d = es.dims();
    d.insert(d.begin(), static_cast<std::int64_t>(items.size()));
    tensor out = tensor::uninitialized(type, shape(d));
    auto rows = es.dims();
    rows.insert(rows.begin(), 1);
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (items[i].shape() != es) {
            throw invalid_argument_error(detail::cat("Incompatible shapes during merge: ", es.str(), " vs. ",
                                                     items[i].shape().str()));
        }
        out.slice(static_cast<std::int64_t>(i), 1).copy_from(to_host(items[i]).reshaped(shape(rows)));
    }
    return out;
}

/// One TensorList. Methods throw invalid_argument_error with TF's messages on misuse.
class tensor_list : public run_resource {
public:
    static constexpr const char* kind_name = "TensorList";
    tensor_list(dtype type, shape shape_of_elements, std::int64_t max_elements = -1)
        : element_dtype(type), element_shape(std::move(shape_of_elements)), max_num_elements(max_elements) {}
    [[nodiscard]] const char* kind() const override { return kind_name; }

    dtype element_dtype;
    shape element_shape;
    std::int64_t max_num_elements = -1;
    std::vector<tensor> items;  ///< an invalid tensor is an element never set

    [[nodiscard]] std::int64_t size() const { return static_cast<std::int64_t>(items.size()); }
    /// A new list with this one's dtype, element shape and elements.
    [[nodiscard]] std::shared_ptr<tensor_list> copy() const {
        auto l = std::make_shared<tensor_list>(element_dtype, element_shape, max_num_elements);
        l->items = items;
        return l;
    }
    /// Throws unless `want` (the op's element_dtype attr) is this list's dtype.
    void check_dtype(dtype want) const {
        if (want != element_dtype) {
            throw invalid_argument_error(detail::cat("Invalid data types; op elements ", dtype_name(want),
                                                     " but list elements ", dtype_name(element_dtype)));
        }
    }
    /// Throws unless `t` fits the list (dtype and element shape); `what` words the message.
    void check_item(const tensor& t, const char* what) const {
        if (t.type() != element_dtype) {
            throw invalid_argument_error(detail::cat("Invalid data types; list elements ", dtype_name(element_dtype),
                                                     " but tried to ", what, " ", dtype_name(t.type())));
        }
        if (!element_shape.compatible_with(t.shape())) {
            throw invalid_argument_error(detail::cat("Tried to ", what, " a tensor with incompatible shape to a list. "
                                                     "Item element shape: ", t.shape().str(),
                                                     " list shape: ", element_shape.str()));
        }
    }
    /// Element `i`, or zeros when never set (the list's element shape merged with `want` must then
    /// be fully defined). Throws for an index out of range.
    [[nodiscard]] tensor get(std::int64_t i, const shape& want) const {
        if (i < 0 || i >= size()) {
            throw invalid_argument_error(detail::cat("Trying to access element ", i, " in a list with ", size(),
                                                     " elements."));
        }
        const tensor& t = items[static_cast<std::size_t>(i)];
        if (t.valid()) return t;
        return zeros(want, "read an uninitialized tensor");
    }
    /// Zeros of the element shape merged with `want`. Throws when it is not fully defined.
    [[nodiscard]] tensor zeros(const shape& want, const char* doing) const {
        shape s = merge_shapes(element_shape, want);
        if (!s.fully_defined()) {
            throw invalid_argument_error(detail::cat("Trying to ", doing, " but element_shape is not fully defined: ",
                                                     s.str(), ". Set the list's element_shape or pass one to the op."));
        }
        return tensor(element_dtype, s);
    }
    /// Elements `idx` stacked along a new dim 0 (unset ones as zeros); `want` is the op's
    /// element_shape input. Throws for an index out of range or elements of different shapes.
    [[nodiscard]] tensor gather(const std::vector<std::int64_t>& idx, const shape& want) const {
        shape s = merge_shapes(element_shape, want);
        if (!s.fully_defined()) {  // learn the shape from a set element
            for (auto i : idx) {
                if (i >= 0 && i < size() && items[static_cast<std::size_t>(i)].valid()) {
                    s = merge_shapes(s, items[static_cast<std::size_t>(i)].shape());
                    break;
                }
            }
        }
        if (idx.empty() && !s.fully_defined()) {
            throw invalid_argument_error(detail::cat("Tried to stack elements of an empty list with non-fully-defined "
                                                     "element_shape: ", s.str()));
        }
        std::vector<tensor> v;
        v.reserve(idx.size());
        for (auto i : idx) v.push_back(get(i, s));
        return stack_tensors(v, element_dtype, s);
    }
};

/// The variant scalar that refers to `l` and keeps it alive. Never throws (except bad_alloc).
inline tensor list_handle(std::shared_ptr<tensor_list> l) {
    auto* base = static_cast<run_resource*>(l.get());
    return tensor::from_buffer(dtype::variant, shape{}, buffer::wrap(base, 0, std::move(l)));
}

/// The list behind `handle` (made by list_handle). Throws invalid_argument_error naming `who` when
/// the tensor is no TensorList.
inline const tensor_list& list_at(const tensor& handle, const char* who) {
    auto bad = [&](const std::string& why) -> const tensor_list& {
        throw invalid_argument_error(detail::cat(who, " needs a TensorList (a variant made by a TensorList op), but "
                                                 "its list input ", why),
                                     {}, "feed the output of EmptyTensorList, TensorListReserve or another list op");
    };
    if (!handle.valid()) return bad("is empty");
    if (handle.type() != dtype::variant || handle.rank() != 0) return bad("is " + handle.describe());
    auto* base = static_cast<run_resource*>(handle.buf()->data());
    if (!base || handle.buf()->owns_memory() || handle.buf()->size() != 0 || handle.byte_offset() != 0 ||
        !base->tagged()) {
        return bad("is a variant that is no TensorList");
    }
    auto* l = dynamic_cast<tensor_list*>(base);
    if (!l) return bad(std::string("refers to a ") + base->kind());
    return *l;
}

}  // namespace graft::exec
