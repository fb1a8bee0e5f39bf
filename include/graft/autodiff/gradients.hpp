// graft/autodiff/gradients.hpp — reverse-mode gradients built as ordinary graph ops (tf.gradients).
//
// f(x) = a * x^2 + b, forward and backward:
//
//   graft::graph g;
//   graft::graph_builder b(g);
//   auto x = b.placeholder("x", graft::dtype::float64);
//   auto a = b.scalar(3.0), c = b.scalar(1.0);
//   auto f = b.op("AddV2", {b.op("Mul", {a, b.op("Square", {x})}), c});
//   auto dx = graft::gradients(g, {f}, {x});                  // nodes under "gradients/"
//   graft::exec::session s{g};
//   s.run({{"x:0", graft::tensor::scalar_of(2.0)}}, {dx[0]->str()});   // 12 = 2 * a * x
//
// The gradient nodes are graph ops like any other: they run through the session, export to
// GraphDef and can be differentiated again (gradients of a gradient). Rules per op type live in
// rules/*.hpp and are extended with register_gradient() / no_gradient() (registry.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "graft/autodiff/registry.hpp"
#include "graft/graph/build.hpp"

namespace graft::autodiff {

/// Options of gradients().
struct gradient_options {
    /// TF's name scope for the gradient nodes, made unique in the graph: "gradients",
    /// "gradients_1", ...
    std::string scope = "gradients";
    /// tf.UnconnectedGradients.ZERO: an x that no y depends on gets ZerosLike(x) instead of nullopt.
    bool zeros_for_unconnected = false;
};

/// d(sum of ys)/d(xs) with tf.gradients semantics: gradients summed over every path (AddN),
/// StopGradient and the ops declared not differentiable block, paths through integer or bool
/// tensors carry nothing, grad_ys (one per y, same dtype and shape; default OnesLike(y)) weight
/// the ys. xs may be any tensor, a TF1 ref variable's output ({"w", 0}, read through
/// "w/read") or a resource handle (VarHandleOp output, read through ReadVariableOp). Returns one
/// entry per x: nullopt when no y depends on it (ZerosLike(x) with zeros_for_unconnected).
/// Adds nodes under a fresh `options.scope`. Throws graph_error naming the node and op when an op
/// on a path has no gradient rule (the hint says how to register one), at a PreventGradient
/// node, or when a path goes through a loop; invalid_argument_error for missing tensors, a
/// grad_ys of the wrong count or a non-float y without grad_ys. The graph may then hold some of
/// the new nodes.
std::vector<std::optional<endpoint>> gradients(graph& g, const std::vector<endpoint>& ys,
                                               const std::vector<endpoint>& xs,
                                               const std::vector<endpoint>& grad_ys = {},
                                               const gradient_options& options = {});

/// True for the dtypes a gradient flows through: floating point, complex, resource handles and
/// variants (TensorLists: their gradients are lists, TF's _IsBackpropagatable).
inline bool is_differentiable(dtype t) {
    dtype b = base_type(t);
    return is_floating(b) || is_complex(b) || b == dtype::resource || b == dtype::variant;
}

}  // namespace graft::autodiff

namespace graft {
using autodiff::gradients;
}  // namespace graft

// gradients() is a compiled part (core/config.hpp): src/compiled/gradients.cpp with graft::compiled.
#if !defined(GRAFT_SEPARATE_COMPILATION) || defined(GRAFT_COMPILING_GRADIENTS)
#include "graft/autodiff/detail/gradients_impl.hpp"
#endif
