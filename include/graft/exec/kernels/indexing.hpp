// graft/exec/kernels/indexing.hpp — the indexing family's CPU kernels bound to their TF op types.
#pragma once

#include "graft/exec/kernel.hpp"

namespace graft::exec::kernels {

inline void register_indexing(kernel_registry& r) {
    (void)r;
}

}  // namespace graft::exec::kernels
