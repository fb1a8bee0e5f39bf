// graft/autodiff/rules/image.hpp — gradients of the image family (graft/exec/kernels/image.hpp).
#pragma once

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

inline void register_image(gradient_registry& r) {
    (void)r;
}

}  // namespace graft::autodiff::rules
