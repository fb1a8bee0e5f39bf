// One built-in kernel family of graft::compiled (see exec_kernels.cpp).
#include "graft/exec/cpu_kernels/queue.hpp"

namespace graft::exec::kernels {
void register_builtin_queue(kernel_registry& r) { register_queue(r); }
}  // namespace graft::exec::kernels
