// One built-in kernel family of graft::compiled (see exec_kernels.cpp).
#include "graft/exec/cpu_kernels/checkpoint_ops.hpp"

namespace graft::exec::kernels {
void register_builtin_checkpoint_ops(kernel_registry& r) { register_checkpoint_ops(r); }
}  // namespace graft::exec::kernels
