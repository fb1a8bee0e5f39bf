// graft/exec/cpu_kernels/all.hpp — graft's built-in CPU kernels, registered into
// kernel_registry::global() on its first use. This header defines global(): graft::compiled compiles it
// once (src/compiled/exec_kernels.cpp), so programs link graft::compiled and never include it themselves —
// unless they build without graft::compiled, in which case exactly one of their files includes it.
#pragma once

#include "graft/exec/cpu_kernels/core.hpp"
#include "graft/exec/cpu_kernels/elementwise.hpp"
#include "graft/exec/cpu_kernels/array.hpp"
#include "graft/exec/cpu_kernels/nn.hpp"
#include "graft/exec/cpu_kernels/checkpoint_ops.hpp"
#include "graft/exec/cpu_kernels/tensor_array.hpp"
#include "graft/exec/cpu_kernels/math_more.hpp"
#include "graft/exec/cpu_kernels/array_more.hpp"
#include "graft/exec/cpu_kernels/nn_more.hpp"
#include "graft/exec/cpu_kernels/image.hpp"
#include "graft/exec/cpu_kernels/linalg.hpp"
#include "graft/exec/cpu_kernels/functional.hpp"
#include "graft/exec/cpu_kernels/indexing.hpp"
#include "graft/exec/cpu_kernels/clustering.hpp"
#include "graft/exec/cpu_kernels/summary.hpp"
#include "graft/exec/cpu_kernels/parsing.hpp"
#include "graft/exec/cpu_kernels/queue.hpp"
#include "graft/exec/cpu_kernels/saver_v1.hpp"
#include "graft/exec/cpu_kernels/collective.hpp"

namespace graft::exec {

namespace kernels {
/// Every built-in kernel family, in registration order.
inline void register_builtin(kernel_registry& r) {
    register_core(r);
    register_elementwise(r);
    register_array(r);
    register_nn(r);
    register_checkpoint_ops(r);
    register_tensor_array(r);
    register_math_more(r);
    register_array_more(r);
    register_nn_more(r);
    register_image(r);
    register_linalg(r);
    register_functional(r);
    register_indexing(r);
    register_clustering(r);
    register_summary(r);
    register_parsing(r);
    register_queue(r);
    register_saver_v1(r);
    register_collective(r);
}
}  // namespace kernels

kernel_registry& kernel_registry::global() {  // not inline: one definition, in one file
    static kernel_registry* r = [] {
        auto* reg = new kernel_registry();
        kernels::register_builtin(*reg);
        return reg;
    }();
    return *r;
}

}  // namespace graft::exec
