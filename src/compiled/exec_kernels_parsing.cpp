// One built-in kernel family of graft::compiled (see exec_kernels.cpp).
#include "graft/exec/cpu_kernels/parsing.hpp"

namespace graft::exec::kernels {
void register_builtin_parsing(kernel_registry& r) { register_parsing(r); }
}  // namespace graft::exec::kernels
