// One built-in kernel family of graft::compiled (see exec_kernels.cpp).
#include "graft/exec/cpu_kernels/summary.hpp"

namespace graft::exec::kernels {
void register_builtin_summary(kernel_registry& r) { register_summary(r); }
}  // namespace graft::exec::kernels
