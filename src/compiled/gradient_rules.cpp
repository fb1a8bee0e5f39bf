// graft's built-in gradient rules (autodiff/rules/*.hpp), a compiled part of graft::compiled
// (core/config.hpp): programs that link graft::compiled see only gradient_registry::global()'s
// declaration, so a new rule recompiles this file.
#define GRAFT_COMPILING_GRADIENT_RULES
#include "graft/autodiff/registry.hpp"
