// graft/autodiff/rules/math_more.hpp — gradients of the math_more family (graft/exec/kernels/math_more.hpp).
#pragma once

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

inline void register_math_more(gradient_registry& r) {
    (void)r;
}

}  // namespace graft::autodiff::rules
