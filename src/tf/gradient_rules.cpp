// graft's built-in gradient rules (autodiff/rules/*.hpp), compiled once into graft::tf: programs that
// link graft::tf see only gradient_registry::global()'s declaration (GRAFT_GRADIENT_RULES_COMPILED),
// so a new rule recompiles this file.
#include "graft/autodiff/registry.hpp"
#include "graft/autodiff/rules/all.hpp"

namespace graft::autodiff {
gradient_registry& gradient_registry::global() { return rules::builtin_registry(); }
}  // namespace graft::autodiff
