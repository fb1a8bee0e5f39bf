// graft/autodiff/rules/core.hpp — gradients of identities, AddN, variable reads and the ops no
// gradient flows through (shape queries, comparisons, random ops, ...), mirroring
// graft/exec/kernels/core.hpp.
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

    // No gradient flows through these (TF's ops.NotDifferentiable list for graft's kernels).
    for (const char* op :
         {"StopGradient", "Shape", "ShapeN", "Size", "Rank", "ZerosLike", "OnesLike", "Fill", "Range",
          "ArgMax", "ArgMin", "OneHot", "Where", "BroadcastGradientArgs", "InvertPermutation", "Const",
          "Placeholder", "PlaceholderV2", "VariableV2", "Variable", "VarHandleOp", "VarIsInitializedOp",
          "IsVariableInitialized", "Assign", "AssignAdd", "AssignSub", "AssignVariableOp", "AssignAddVariableOp",
          "AssignSubVariableOp", "NoOp", "ControlTrigger", "RandomUniform", "RandomStandardNormal",
          "TruncatedNormal", "RandomUniformInt", "Equal", "NotEqual", "Less", "LessEqual", "Greater",
          "GreaterEqual", "LogicalAnd", "LogicalOr", "LogicalNot", "Any", "All", "FloorDiv", "Floor", "Ceil",
          "Round", "Rint", "SaveV2", "RestoreV2", "MergeV2Checkpoints", "ShardedFilename", "ShardedFilespec",
          "StringJoin", "Restore", "RestoreSlice", "DestroyResourceOp", "ConcatOffset"}) {
        r.add_none(op);
    }
}

}  // namespace graft::autodiff::rules
