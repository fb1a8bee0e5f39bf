// graft/autodiff/rules/tensor_array.hpp — gradients of the tensor_array family (graft/exec/cpu_kernels/tensor_array.hpp),
// as TF's tensor_array_grad.py builds them: gradients flow through the float "flow" edges, and each
// rule reaches the gradient TensorArray of its forward array (TensorArrayGradV3, keyed by the
// gradients scope as source) to write, read, scatter, gather, split or concat there.
// TensorArrayV3/GradV3/Size/Close and the Stack ops are nograd on their op-table lines.
#pragma once

#include <string>
#include <utility>

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

namespace ta_grad_detail {

/// TF's _GetGradSource: the scope prefix up to the first component starting with "gradients"
/// ("gradients", "gradients_1", "outer/gradients"). Throws graph_error when there is none.
inline std::string grad_source(const grad_context& c) {
    const std::string& scope = c.b().scope();
    std::size_t start = 0;
    while (start <= scope.size()) {
        std::size_t end = scope.find('/', start);
        if (end == std::string::npos) end = scope.size();
        if (scope.compare(start, 9, "gradients") == 0) return scope.substr(0, end);
        start = end + 1;
    }
    c.fail("the gradient scope '" + scope + "' has no component starting with \"gradients\"",
           "TensorArray gradients are keyed by the gradients scope; keep the default scope name");
}

/// The op's version suffix ("V3" or "V2").
inline std::string version(const grad_context& c) { return c.op().op.substr(c.op().op.size() - 2); }

/// TensorArrayGrad of the forward handle (input 0) with `flow`: {grad handle, grad flow}.
inline std::pair<endpoint, endpoint> grad_array(const grad_context& c, const endpoint& flow) {
    attr_list a{{"source", grad_source(c)}};
    if (version(c) == "V3") {
        auto g = c.b().op_n("TensorArrayGradV3", {c.input(0), flow}, std::move(a));
        return {g[0], g[1]};
    }
    endpoint h = c.b().op("TensorArrayGradV2", {c.input(0), flow}, std::move(a));
    return {h, flow};
}

inline dtype value_type(const grad_context& c) {
    if (auto* t = c.find_attr("T")) return t->type();
    return c.attr("dtype").type();
}

}  // namespace ta_grad_detail

inline void register_tensor_array(gradient_registry& r) {
    using namespace ta_grad_detail;
    // Read(handle, index, flow) -> value and Gather(handle, indices, flow) -> value: put the value's
    // gradient back at the index (Write) or rows (Scatter) of the grad array.
    auto put_back = [](const char* op) {
        return [op](grad_context& c) {
            grad_list out(3);
            auto [h, flow] = grad_array(c, c.input(2));
            out[2] = c.b().op(op + version(c), {h, c.input(1), c.grad_or_zeros(0), flow});
            return out;
        };
    };
    auto read = put_back("TensorArrayWrite");
    auto gather = put_back("TensorArrayScatter");
    // Write(handle, index, value, flow_in) -> flow_out and Scatter(handle, indices, value, flow_in):
    // take the value's gradient back out of the grad array (Read / Gather).
    auto take_back = [](const char* op) {
        return [op](grad_context& c) {
            grad_list out(4);
            endpoint fg = c.grad_or_zeros(0);
            auto [h, flow] = grad_array(c, fg);
            out[2] = c.b().op(op + version(c), {h, c.input(1), flow}, {{"dtype", value_type(c)}});
            out[3] = fg;
            return out;
        };
    };
    auto write = take_back("TensorArrayRead");
    auto scatter = take_back("TensorArrayGather");
    // Concat(handle, flow) -> (value, lengths): split the gradient at the lengths.
    auto concat = [](grad_context& c) {
        grad_list out(2);
        auto [h, flow] = grad_array(c, c.input(1));
        out[1] = c.b().op("TensorArraySplit" + version(c), {h, c.grad_or_zeros(0), c.output(1), flow});
        return out;
    };
    // Split(handle, value, lengths, flow_in) -> flow_out: concat the pieces' gradients.
    auto split = [](grad_context& c) {
        grad_list out(4);
        endpoint fg = c.grad_or_zeros(0);
        auto [h, flow] = grad_array(c, fg);
        out[1] = c.b().op_n("TensorArrayConcat" + version(c), {h, flow}, {{"dtype", value_type(c)}})[0];
        out[3] = fg;
        return out;
    };
    for (const char* v : {"V3", "V2"}) {
        const std::string s = v;
        r.add("TensorArrayRead" + s, read);
        r.add("TensorArrayWrite" + s, write);
        r.add("TensorArrayGather" + s, gather);
        r.add("TensorArrayScatter" + s, scatter);
        r.add("TensorArrayConcat" + s, concat);
        r.add("TensorArraySplit" + s, split);
    }
}

}  // namespace graft::autodiff::rules
