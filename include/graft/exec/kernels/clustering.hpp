// graft/exec/kernels/clustering.hpp — the clustering family's CPU kernels bound to their TF op types.
#pragma once

#include "graft/exec/kernel.hpp"

namespace graft::exec::kernels {

inline void register_clustering(kernel_registry& r) {
    (void)r;
}

}  // namespace graft::exec::kernels
