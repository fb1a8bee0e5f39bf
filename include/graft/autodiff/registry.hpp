// graft/autodiff/registry.hpp — gradient rules by op type: what gradients() calls for each node
// between the xs and the ys.
//
// A rule reads its node, the gradients arriving at the node's outputs and returns one gradient per
// data input (nullopt: none), built as ordinary graph ops with the context's builder:
//
//   graft::autodiff::register_gradient("Square", [](graft::autodiff::grad_context& c) {
//       auto& b = c.b();                                  // names under gradients/<node>_grad/
//       auto two = b.scalar_as(c.dtype_of(c.input(0)), 2.0);
//       return graft::autodiff::grad_list{b.op("Mul", {*c.grad(0), b.op("Mul", {c.input(0), two})})};
//   });
//   graft::autodiff::no_gradient("Shape");               // never carries a gradient
//
// The built-in rules (rules/*.hpp, one header per op family) are registered on first use of
// gradient_registry::global(). Registering is not thread-safe against a running gradients().
#pragma once

#include <string>
#include <utility>

#include "graft/autodiff/rule.hpp"

// The built-in rules are a compiled part (core/config.hpp): with graft::compiled, src/compiled/gradient_rules.cpp
// compiles them once, so a new rule recompiles one file; a program without graft::compiled gets them inline.
#if !defined(GRAFT_SEPARATE_COMPILATION) || defined(GRAFT_COMPILING_GRADIENT_RULES)
#include "graft/autodiff/rules/all.hpp"

namespace graft::autodiff {
GRAFT_INLINE gradient_registry& gradient_registry::global() { return rules::builtin_registry(); }
}  // namespace graft::autodiff
#endif

namespace graft::autodiff {

/// Registers the gradient rule of `op` in the global registry (replacing graft's own, if any).
inline void register_gradient(std::string op, gradient_fn fn) { gradient_registry::global().add(std::move(op), std::move(fn)); }
/// Declares `op` not differentiable in the global registry (tf.no_gradient).
inline void no_gradient(std::string op) { gradient_registry::global().add_none(std::move(op)); }

}  // namespace graft::autodiff
