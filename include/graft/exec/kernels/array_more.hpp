// graft/exec/kernels/array_more.hpp — the array_more family's CPU kernels bound to their TF op types.
#pragma once

#include "graft/exec/kernel.hpp"

namespace graft::exec::kernels {

inline void register_array_more(kernel_registry& r) {
    (void)r;
}

}  // namespace graft::exec::kernels
