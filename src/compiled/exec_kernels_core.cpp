// One built-in kernel family of graft::compiled (see exec_kernels.cpp).
#include "graft/exec/cpu_kernels/core.hpp"

namespace graft::exec::kernels {
void register_builtin_core(kernel_registry& r) { register_core(r); }
}  // namespace graft::exec::kernels
