// graft/autodiff/rules/indexing.hpp — gradients of the indexing family (graft/exec/kernels/indexing.hpp).
#pragma once

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

inline void register_indexing(gradient_registry& r) {
    (void)r;
}

}  // namespace graft::autodiff::rules
