// graft/autodiff/rules/clustering.hpp — gradients of the clustering family (graft/exec/cpu_kernels/clustering.hpp).
#pragma once

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

inline void register_clustering(gradient_registry& r) {
    (void)r;
}

}  // namespace graft::autodiff::rules
