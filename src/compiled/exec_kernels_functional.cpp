// One built-in kernel family of graft::compiled (see exec_kernels.cpp).
#include "graft/exec/cpu_kernels/functional.hpp"

namespace graft::exec::kernels {
void register_builtin_functional(kernel_registry& r) { register_functional(r); }
}  // namespace graft::exec::kernels
