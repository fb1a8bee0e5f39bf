// One built-in kernel family of graft::compiled (see exec_kernels.cpp).
#include "graft/exec/cpu_kernels/array_more.hpp"

namespace graft::exec::kernels {
void register_builtin_array_more(kernel_registry& r) { register_array_more(r); }
}  // namespace graft::exec::kernels
