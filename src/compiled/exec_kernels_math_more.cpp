// One built-in kernel family of graft::compiled (see exec_kernels.cpp).
#include "graft/exec/cpu_kernels/math_more.hpp"

namespace graft::exec::kernels {
void register_builtin_math_more(kernel_registry& r) { register_math_more(r); }
}  // namespace graft::exec::kernels
