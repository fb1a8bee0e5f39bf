// graft/autodiff/rules/array_more.hpp — gradients of the array_more family (graft/exec/kernels/array_more.hpp).
#pragma once

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

inline void register_array_more(gradient_registry& r) {
    (void)r;
}

}  // namespace graft::autodiff::rules
