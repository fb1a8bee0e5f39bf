// graft/exec/kernels/nn_more.hpp — the nn_more family's CPU kernels bound to their TF op types.
#pragma once

#include "graft/exec/kernel.hpp"

namespace graft::exec::kernels {

inline void register_nn_more(kernel_registry& r) {
    (void)r;
}

}  // namespace graft::exec::kernels
