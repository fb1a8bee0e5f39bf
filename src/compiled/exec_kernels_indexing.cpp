// One built-in kernel family of graft::compiled (see exec_kernels.cpp).
#include "graft/exec/cpu_kernels/indexing.hpp"

namespace graft::exec::kernels {
void register_builtin_indexing(kernel_registry& r) { register_indexing(r); }
}  // namespace graft::exec::kernels
