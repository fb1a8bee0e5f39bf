// One built-in kernel family of graft::compiled (see exec_kernels.cpp).
#include "graft/exec/cpu_kernels/nn.hpp"

namespace graft::exec::kernels {
void register_builtin_nn(kernel_registry& r) { register_nn(r); }
}  // namespace graft::exec::kernels
