// graft/autodiff/rules/all.hpp — graft's built-in gradient rules, one header per op family.
#pragma once

#include "graft/autodiff/rules/array.hpp"
#include "graft/autodiff/rules/core.hpp"
#include "graft/autodiff/rules/math.hpp"
#include "graft/autodiff/rules/nn.hpp"
#include "graft/autodiff/rules/reduce.hpp"

namespace graft::autodiff::rules {

/// Registers every built-in rule into `r`.
inline void register_all(gradient_registry& r) {
    register_core(r);
    register_math(r);
    register_reduce(r);
    register_array(r);
    register_nn(r);
}

}  // namespace graft::autodiff::rules
