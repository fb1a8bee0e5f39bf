// graft/autodiff/rules/tensor_array.hpp — gradients of the tensor_array family (graft/exec/kernels/tensor_array.hpp).
#pragma once

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

inline void register_tensor_array(gradient_registry& r) {
    (void)r;
}

}  // namespace graft::autodiff::rules
