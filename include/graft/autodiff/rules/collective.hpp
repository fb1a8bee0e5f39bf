// graft/autodiff/rules/collective.hpp — gradients of the collective family (graft/exec/cpu_kernels/collective.hpp).
// HorovodAllreduce: Horovod's _allreduce_grad (horovod/tensorflow/mpi_ops.py) — the gradient is the
// allreduce of the incoming gradient with the forward op's reduce_op and scale factors (for Average
// and Sum, the linear reductions). TF's collective ops register no gradient (nograd in the table);
// HorovodAllgather/HorovodBroadcast's gradients depend on the rank when the graph is built
// (grad_missing).
#pragma once

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

inline void register_collective(gradient_registry& r) {
    r.add("HorovodAllreduce", [](grad_context& c) {
        grad_list out(static_cast<std::size_t>(c.num_inputs()));
        const auto& g = c.grad(0);
        if (!g) return out;
        const auto op = c.attr("reduce_op").i();
        if (op != 0 && op != 1) {
            c.fail(graft::detail::cat("reduce_op ", op, " is not linear; only Average (0) and Sum (1) have a gradient"));
        }
        out[0] = c.b().op("HorovodAllreduce", {*g},
                          {{"reduce_op", c.attr("reduce_op")},
                           {"prescale_factor", c.attr("prescale_factor")},
                           {"postscale_factor", c.attr("postscale_factor")},
                           {"ignore_name_scope", c.attr("ignore_name_scope")},
                           {"process_set_id", c.attr("process_set_id")}});
        return out;
    });
}

}  // namespace graft::autodiff::rules
