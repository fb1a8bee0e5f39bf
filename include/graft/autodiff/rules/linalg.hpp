// graft/autodiff/rules/linalg.hpp — gradients of the linalg family (graft/exec/kernels/linalg.hpp).
#pragma once

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

inline void register_linalg(gradient_registry& r) {
    (void)r;
}

}  // namespace graft::autodiff::rules
