// graft/exec/kernels/tensor_array.hpp — the tensor_array family's CPU kernels bound to their TF op types.
#pragma once

#include "graft/exec/kernel.hpp"

namespace graft::exec::kernels {

inline void register_tensor_array(kernel_registry& r) {
    (void)r;
}

}  // namespace graft::exec::kernels
