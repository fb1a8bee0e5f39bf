// graft/autodiff/rules/core.hpp — gradients of identities, AddN and variable reads, mirroring
// graft/exec/kernels/core.hpp. The ops no gradient flows through (shape queries, comparisons,
// random ops, ...) say so with `nograd` on their line of the op table (rules/all.hpp reads it).
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
    r.add("PreventGradient", [](grad_context& c) -> grad_list {
        std::string why;
        if (auto* m = c.find_attr("message")) why = m->s();
        c.fail(detail::cat("gradient explicitly disabled by PreventGradient", why.empty() ? "" : ": ", why),
               "take the PreventGradient node off the path from the xs to the ys, or stop the gradient "
               "before it (StopGradient)");
    });
}

}  // namespace graft::autodiff::rules
