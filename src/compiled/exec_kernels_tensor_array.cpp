// One built-in kernel family of graft::compiled (see exec_kernels.cpp).
#include "graft/exec/cpu_kernels/tensor_array.hpp"

namespace graft::exec::kernels {
void register_builtin_tensor_array(kernel_registry& r) { register_tensor_array(r); }
}  // namespace graft::exec::kernels
