// The built-in CPU kernels, compiled once into graft::compiled. This file defines
// kernel_registry::global() (what graft/exec/cpu_kernels/all.hpp does for programs without graft::compiled);
// the families compile in their own translation units (exec_kernels_*.cpp) so a parallel build
// spreads them over cores instead of waiting on one large file.
#include "graft/exec/kernel.hpp"

namespace graft::exec::kernels {
void register_builtin_core(kernel_registry& r);
void register_builtin_elementwise(kernel_registry& r);
void register_builtin_array(kernel_registry& r);
void register_builtin_nn(kernel_registry& r);
void register_builtin_checkpoint_ops(kernel_registry& r);
void register_builtin_tensor_array(kernel_registry& r);
void register_builtin_math_more(kernel_registry& r);
void register_builtin_array_more(kernel_registry& r);
void register_builtin_nn_more(kernel_registry& r);
void register_builtin_image(kernel_registry& r);
void register_builtin_linalg(kernel_registry& r);
void register_builtin_functional(kernel_registry& r);
void register_builtin_indexing(kernel_registry& r);
void register_builtin_clustering(kernel_registry& r);
void register_builtin_summary(kernel_registry& r);
void register_builtin_parsing(kernel_registry& r);
void register_builtin_queue(kernel_registry& r);
void register_builtin_saver_v1(kernel_registry& r);
void register_builtin_collective(kernel_registry& r);
}  // namespace graft::exec::kernels

namespace graft::exec {

kernel_registry& kernel_registry::global() {
    static kernel_registry* r = [] {
        auto* reg = new kernel_registry();
        kernels::register_builtin_core(*reg);
        kernels::register_builtin_elementwise(*reg);
        kernels::register_builtin_array(*reg);
        kernels::register_builtin_nn(*reg);
        kernels::register_builtin_checkpoint_ops(*reg);
        kernels::register_builtin_tensor_array(*reg);
        kernels::register_builtin_math_more(*reg);
        kernels::register_builtin_array_more(*reg);
        kernels::register_builtin_nn_more(*reg);
        kernels::register_builtin_image(*reg);
        kernels::register_builtin_linalg(*reg);
        kernels::register_builtin_functional(*reg);
        kernels::register_builtin_indexing(*reg);
        kernels::register_builtin_clustering(*reg);
        kernels::register_builtin_summary(*reg);
        kernels::register_builtin_parsing(*reg);
        kernels::register_builtin_queue(*reg);
        kernels::register_builtin_saver_v1(*reg);
        kernels::register_builtin_collective(*reg);
        return reg;
    }();
    return *r;
}

}  // namespace graft::exec
