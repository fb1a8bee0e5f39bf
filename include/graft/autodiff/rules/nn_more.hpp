// graft/autodiff/rules/nn_more.hpp — gradients of the nn_more family (graft/exec/kernels/nn_more.hpp).
#pragma once

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

inline void register_nn_more(gradient_registry& r) {
    (void)r;
}

}  // namespace graft::autodiff::rules
