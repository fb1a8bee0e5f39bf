// One built-in kernel family of graft::compiled (see exec_kernels.cpp).
#include "graft/exec/cpu_kernels/linalg.hpp"

namespace graft::exec::kernels {
void register_builtin_linalg(kernel_registry& r) { register_linalg(r); }
}  // namespace graft::exec::kernels
