// graft/exec/kernels/math_more.hpp — the math_more family's CPU kernels bound to their TF op types.
#pragma once

#include "graft/exec/kernel.hpp"

namespace graft::exec::kernels {

inline void register_math_more(kernel_registry& r) {
    (void)r;
}

}  // namespace graft::exec::kernels
