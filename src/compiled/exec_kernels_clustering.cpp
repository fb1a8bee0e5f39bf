// One built-in kernel family of graft::compiled (see exec_kernels.cpp).
#include "graft/exec/cpu_kernels/clustering.hpp"

namespace graft::exec::kernels {
void register_builtin_clustering(kernel_registry& r) { register_clustering(r); }
}  // namespace graft::exec::kernels
