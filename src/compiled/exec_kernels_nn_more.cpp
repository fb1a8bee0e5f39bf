// One built-in kernel family of graft::compiled (see exec_kernels.cpp).
#include "graft/exec/cpu_kernels/nn_more.hpp"

namespace graft::exec::kernels {
void register_builtin_nn_more(kernel_registry& r) { register_nn_more(r); }
}  // namespace graft::exec::kernels
