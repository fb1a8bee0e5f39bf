// One built-in kernel family of graft::compiled (see exec_kernels.cpp).
#include "graft/exec/cpu_kernels/image.hpp"

namespace graft::exec::kernels {
void register_builtin_image(kernel_registry& r) { register_image(r); }
}  // namespace graft::exec::kernels
