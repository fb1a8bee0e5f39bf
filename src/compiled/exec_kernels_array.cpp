// One built-in kernel family of graft::compiled (see exec_kernels.cpp).
#include "graft/exec/cpu_kernels/array.hpp"

namespace graft::exec::kernels {
void register_builtin_array(kernel_registry& r) { register_array(r); }
}  // namespace graft::exec::kernels
