// One built-in kernel family of graft::compiled (see exec_kernels.cpp).
#include "graft/exec/cpu_kernels/saver_v1.hpp"

namespace graft::exec::kernels {
void register_builtin_saver_v1(kernel_registry& r) { register_saver_v1(r); }
}  // namespace graft::exec::kernels
