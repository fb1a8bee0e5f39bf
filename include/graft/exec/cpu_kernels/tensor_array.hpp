// graft/exec/cpu_kernels/tensor_array.hpp — TF1 control flow's data structures bound to their TF op
// types: TensorArray (V3 with resource handles, V2 with string handles: graft gives both the same
// handle tensor) and Stack (StackV2, and the ref-typed V1 names). The objects live in
// graft/exec/resources.hpp; handles flow along edges as resource tensors.
#pragma once

#include <string>
#include <vector>

#include "graft/exec/kernel.hpp"
#include "graft/exec/resources.hpp"

namespace graft::exec::kernels {

namespace ta_detail {

/// The TensorArray behind input i. Throws graph_error naming the node.
inline tensor_array& array_at(kernel_context& c, int i) {
    return *resource_of<tensor_array>(c.input(i), c.n().op.c_str());
}
inline tensor_stack& stack_at(kernel_context& c, int i) {
    return *resource_of<tensor_stack>(c.input(i), c.n().op.c_str());
}
/// Input i as a scalar index (int32 as in TF, int64 accepted).
inline std::int64_t scalar_index(kernel_context& c, int i, const char* what) {
    tensor t = c.input(i);
    if (t.rank() != 0 || (t.type() != dtype::int32 && t.type() != dtype::int64)) {
        c.fail(detail::cat("TensorArray ", what, " must be an int32 scalar, but had ", t.describe()));
    }
    return t.type() == dtype::int32 ? t.data<std::int32_t>()[0] : t.data<std::int64_t>()[0];
}
/// Input i as a vector of int32/int64 values.
inline std::vector<std::int64_t> index_vector(kernel_context& c, int i, const char* what) {
    tensor t = c.input(i);
    if (t.rank() != 1 || (t.type() != dtype::int32 && t.type() != dtype::int64)) {
        c.fail(detail::cat("Expected ", what, " to be a vector of int32, but received ", t.describe()));
    }
    std::vector<std::int64_t> v(static_cast<std::size_t>(t.num_elements()));
    for (std::size_t k = 0; k < v.size(); ++k) {
        v[k] = t.type() == dtype::int32 ? t.data<std::int32_t>()[k] : t.data<std::int64_t>()[k];
    }
    return v;
}
inline shape shape_attr(kernel_context& c, const char* name) {
    const attr_value* a = c.find_attr(name);
    if (!a) {
        try {
            a = &c.attr(name);
        } catch (const graft::error&) {
            return shape::unknown_rank();
        }
    }
    return a->which() == attr_value::kind::shape ? a->shape() : shape::unknown_rank();
}
/// The dtype attr the op asks for must be the array's.
inline void check_dtype(kernel_context& c, tensor_array& ta, const char* attr) {
    dtype want = c.attr_type(attr);
    if (want != ta.type()) {
        c.fail(detail::cat("TensorArray dtype is ", dtype_name(ta.type()), " but Op requested dtype ", dtype_name(want),
                           "."));
    }
}

/// TensorArrayV3 / TensorArrayV2: a new array of `size` slots; V3 also outputs the flow (0.0).
inline void create(kernel_context& c, bool with_flow) {
    tensor_array::options o;
    o.type = c.attr_type("dtype");
    o.element_shape = shape_attr(c, "element_shape");
    o.dynamic_size = c.attr_or("dynamic_size", false);
    o.clear_after_read = c.attr_or("clear_after_read", true);
    o.identical_element_shapes = c.attr_or("identical_element_shapes", false);
    o.name = c.attr_or("tensor_array_name", std::string());
    if (o.name.empty()) o.name = c.name();
    std::int64_t size = scalar_index(c, 0, "size");
    if (size < 0) c.fail(detail::cat("TensorArray size must be >= 0, given ", size));
    c.set_output(0, handle_of(std::make_shared<tensor_array>(std::move(o), size)));
    if (with_flow) c.set_output(1, tensor::scalar_of(0.0f));
}

/// TensorArrayGradV3 / GradV2 / GradWithShape: the gradient array of input 0 for attr `source`.
inline void grad(kernel_context& c, bool with_flow, bool with_shape) {
    tensor_array& fwd = array_at(c, 0);
    std::vector<std::int64_t> prepend;
    if (with_shape) prepend = index_vector(c, 2, "shape_to_prepend");
    auto g = fwd.grad(c.attr_string("source"), with_shape ? &prepend : nullptr);
    c.set_output(0, handle_of(std::move(g)));
    if (with_flow) c.set_output(1, c.input(1));
}

}  // namespace ta_detail

inline void register_tensor_array(kernel_registry& r) {
    using namespace ta_detail;
    auto host = [](std::vector<int> in) {
        kernel_def d;
        d.host_inputs = std::move(in);
        return d;
    };
    r.add("TensorArrayV3", [](kernel_context& c) { create(c, true); }, host({0}));
    r.add("TensorArrayV2", [](kernel_context& c) { create(c, false); }, host({0}));
    r.add("TensorArrayGradV3", [](kernel_context& c) { grad(c, true, false); }, host({0}));
    r.add("TensorArrayGradV2", [](kernel_context& c) { grad(c, false, false); }, host({0}));
    r.add("TensorArrayGradWithShape", [](kernel_context& c) { grad(c, true, true); }, host({0, 2}));
    for (const char* op : {"TensorArrayWriteV3", "TensorArrayWriteV2"}) {
        r.add(op, [](kernel_context& c) {
            array_at(c, 0).write(scalar_index(c, 1, "index"), c.input(2));
            c.set_output(0, c.input(3));
        }, host({0, 1}));
    }
    for (const char* op : {"TensorArrayReadV3", "TensorArrayReadV2"}) {
        r.add(op, [](kernel_context& c) {
            tensor_array& ta = array_at(c, 0);
            check_dtype(c, ta, "dtype");
            c.set_output(0, ta.read(scalar_index(c, 1, "index")));
        }, host({0, 1}));
    }
    for (const char* op : {"TensorArrayGatherV3", "TensorArrayGatherV2"}) {
        r.add(op, [](kernel_context& c) {
            tensor_array& ta = array_at(c, 0);
            check_dtype(c, ta, "dtype");
            c.set_output(0, ta.gather(index_vector(c, 1, "indices"), shape_attr(c, "element_shape")));
        }, host({0, 1}));
    }
    for (const char* op : {"TensorArrayScatterV3", "TensorArrayScatterV2"}) {
        r.add(op, [](kernel_context& c) {
            array_at(c, 0).scatter(index_vector(c, 1, "indices"), c.input(2));
            c.set_output(0, c.input(3));
        }, host({0, 1}));
    }
    for (const char* op : {"TensorArrayConcatV3", "TensorArrayConcatV2"}) {
        r.add(op, [](kernel_context& c) {
            tensor_array& ta = array_at(c, 0);
            check_dtype(c, ta, "dtype");
            auto [value, lengths] = ta.concat(shape_attr(c, "element_shape_except0"));
            c.set_output(0, std::move(value));
            c.set_output(1, std::move(lengths));
        }, host({0}));
    }
    for (const char* op : {"TensorArraySplitV3", "TensorArraySplitV2"}) {
        r.add(op, [](kernel_context& c) {
            array_at(c, 0).split(c.input(1), index_vector(c, 2, "lengths"));
            c.set_output(0, c.input(3));
        }, host({0, 2}));
    }
    for (const char* op : {"TensorArraySizeV3", "TensorArraySizeV2"}) {
        r.add(op, [](kernel_context& c) {
            c.set_output(0, tensor::scalar_of(static_cast<std::int32_t>(array_at(c, 0).size())));
        }, host({0}));
    }
    for (const char* op : {"TensorArrayCloseV3", "TensorArrayCloseV2"}) {
        r.add(op, [](kernel_context& c) { array_at(c, 0).close(); }, host({0}));
    }

    // Stacks: StackV2 (max_size input) and the ref-typed V1 Stack (unbounded).
    auto make_stack = [](kernel_context& c, std::int64_t max_size) {
        std::string name = c.attr_or("stack_name", std::string());
        if (name.empty()) name = c.name();
        c.set_output(0, handle_of(std::make_shared<tensor_stack>(c.attr_type("elem_type"), max_size, std::move(name))));
    };
    r.add("StackV2", [make_stack](kernel_context& c) { make_stack(c, scalar_index(c, 0, "max_size")); }, host({0}));
    r.add("Stack", [make_stack](kernel_context& c) { make_stack(c, -1); });
    for (const char* op : {"StackPushV2", "StackPush"}) {
        r.add(op, [](kernel_context& c) {
            tensor v = c.input(1);
            stack_at(c, 0).push(v);
            c.set_output(0, std::move(v));
        }, host({0}));
    }
    for (const char* op : {"StackPopV2", "StackPop"}) {
        r.add(op, [](kernel_context& c) { c.set_output(0, stack_at(c, 0).pop(c.attr_type("elem_type"))); }, host({0}));
    }
    for (const char* op : {"StackCloseV2", "StackClose"}) {
        r.add(op, [](kernel_context& c) { stack_at(c, 0).close(); }, host({0}));
    }
}

}  // namespace graft::exec::kernels
