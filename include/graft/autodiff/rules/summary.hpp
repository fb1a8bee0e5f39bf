// graft/autodiff/rules/summary.hpp — gradients of the summary family (graft/exec/cpu_kernels/summary.hpp).
#pragma once

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

inline void register_summary(gradient_registry& r) {
    (void)r;
}

}  // namespace graft::autodiff::rules
