// graft/exec/kernels/parsing.hpp — the parsing family's CPU kernels bound to their TF op types.
#pragma once

#include "graft/exec/kernel.hpp"

namespace graft::exec::kernels {

inline void register_parsing(kernel_registry& r) {
    (void)r;
}

}  // namespace graft::exec::kernels
