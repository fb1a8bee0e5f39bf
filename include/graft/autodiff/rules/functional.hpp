// graft/autodiff/rules/functional.hpp — gradients of the functional family (graft/exec/kernels/functional.hpp).
#pragma once

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

inline void register_functional(gradient_registry& r) {
    (void)r;
}

}  // namespace graft::autodiff::rules
