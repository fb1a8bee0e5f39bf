// graft/autodiff/rules/core.hpp — gradients of identities, AddN and variable reads, mirroring
// graft/exec/cpu_kernels/core.hpp. The ops no gradient flows through (shape queries, comparisons,
// random ops, ...) say so with `nograd` on their line of the op table (rules/all.hpp reads it).
// TF1 control flow: a tf.cond's Switch and Merge (outside loops) as TF's control_flow_grad.py
// (Merge -> Switch of the gradient on the taken input, which Merge's value_index names; Switch ->
// Merge of its two outputs' gradients, the untaken one dead). A while loop's Enter, Merge, Switch,
// NextIteration and Exit are differentiated by gradients() as one unit (detail/tf1_loops.hpp);
// their rules here only run for a loop that is not well formed, and say so.
#pragma once

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

inline void register_core(gradient_registry& r) {
    // The incoming gradient passes through unchanged.
    auto pass = [](grad_context& c) {
        grad_list out(static_cast<std::size_t>(c.num_inputs()));
        if (c.num_inputs() > 0) out[0] = c.grad(0);
        return out;
    };
    for (const char* op : {"Identity", "Snapshot", "RefIdentity", "EnsureShape", "PlaceholderWithDefault",
                           "DebugIdentity", "ReadVariableOp"}) {
        r.add(op, pass);
    }
    r.add("CheckNumerics", [](grad_context& c) {
        // TF checks the gradient too.
        grad_list out(1);
        if (auto& g = c.grad(0)) {
            std::string msg = "Not a number (NaN) or infinity (Inf) values detected in gradient. ";
            if (auto* m = c.find_attr("message")) msg += m->s();
            out[0] = c.b().op("CheckNumerics", {*g}, {{"message", msg}});
        }
        return out;
    });
    // Print passes its input through (and its data carry no gradient).
    r.add("Print", [](grad_context& c) {
        grad_list out(static_cast<std::size_t>(c.num_inputs()));
        out[0] = c.grad(0);
        return out;
    });
    r.add("IdentityN", [](grad_context& c) {
        grad_list out(static_cast<std::size_t>(c.num_inputs()));
        for (int i = 0; i < c.num_inputs() && i < c.num_outputs(); ++i) out[static_cast<std::size_t>(i)] = c.grad(i);
        return out;
    });
    r.add("AddN", [](grad_context& c) {
        return grad_list(static_cast<std::size_t>(c.num_inputs()), c.grad(0));
    });
    // tf.cond: only the taken input of a Merge gets the gradient (the others turn dead).
    auto merge = [](grad_context& c) {
        grad_list out(static_cast<std::size_t>(c.num_inputs()));
        if (!c.grad(0)) return out;
        const auto& b = c.b();
        for (int k = 0; k < c.num_inputs(); ++k) {
            auto taken = b.op("Equal", {c.output(1), b.scalar(static_cast<std::int32_t>(k))});
            out[static_cast<std::size_t>(k)] = b.op_n(c.op().op == "RefMerge" ? "RefSwitch" : "Switch", {*c.grad(0), taken})[1];
        }
        return out;
    };
    r.add("Merge", merge);
    r.add("RefMerge", merge);
    auto cond_switch = [](grad_context& c) {
        grad_list out(2);
        if (!c.grad(0) && !c.grad(1)) return out;
        out[0] = c.b().op("Merge", {c.grad_or_zeros(0), c.grad_or_zeros(1)});
        return out;
    };
    r.add("Switch", cond_switch);
    r.add("RefSwitch", cond_switch);
    auto loop_part = [](grad_context& c) -> grad_list {
        c.fail("this while-loop node is not part of a well-formed TF1 loop (Enter -> Merge(Enter, NextIteration) -> "
               "Switch(LoopCond) -> Exit / body -> NextIteration)",
               "gradients() differentiates whole tf.while_loop frames; check the loop's structure");
    };
    for (const char* op : {"Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration"}) r.add(op, loop_part);
    r.add("PreventGradient", [](grad_context& c) -> grad_list {
        std::string why;
        if (auto* m = c.find_attr("message")) why = m->s();
        c.fail(detail::cat("gradient explicitly disabled by PreventGradient", why.empty() ? "" : ": ", why),
               "take the PreventGradient node off the path from the xs to the ys, or stop the gradient "
               "before it (StopGradient)");
    });
}

}  // namespace graft::autodiff::rules
