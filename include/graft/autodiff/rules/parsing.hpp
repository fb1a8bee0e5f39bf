// graft/autodiff/rules/parsing.hpp — gradients of the parsing family (graft/exec/cpu_kernels/parsing.hpp).
#pragma once

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

inline void register_parsing(gradient_registry& r) {
    (void)r;
}

}  // namespace graft::autodiff::rules
