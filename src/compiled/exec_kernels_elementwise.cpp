// One built-in kernel family of graft::compiled (see exec_kernels.cpp).
#include "graft/exec/cpu_kernels/elementwise.hpp"

namespace graft::exec::kernels {
void register_builtin_elementwise(kernel_registry& r) { register_elementwise(r); }
}  // namespace graft::exec::kernels
