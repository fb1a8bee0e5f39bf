// One built-in kernel family of graft::compiled (see exec_kernels.cpp).
#include "graft/exec/cpu_kernels/collective.hpp"

namespace graft::exec::kernels {
void register_builtin_collective(kernel_registry& r) { register_collective(r); }
}  // namespace graft::exec::kernels
