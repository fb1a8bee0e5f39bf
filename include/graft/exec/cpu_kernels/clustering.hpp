// graft/exec/cpu_kernels/clustering.hpp — the clustering family's CPU kernels bound to their TF op types
// (graft/ops/clustering.hpp).
#pragma once

#include "graft/exec/kernel.hpp"
#include "graft/ops/clustering.hpp"

namespace graft::exec::kernels {

inline void register_clustering(kernel_registry& r) {
    kernel_def host_k;
    host_k.host_inputs = {2};
    r.add("NearestNeighbors", [](kernel_context& c) {
        tensor k = c.input(2);
        if (k.type() != dtype::int64 || k.rank() != 0) c.fail("input k should be an int64 scalar, given " + k.describe());
        auto res = ops::nearest_neighbors(c.input(0), c.input(1), k.data<std::int64_t>()[0]);
        c.set_output(0, res.indices);
        c.set_output(1, res.distances);
    }, host_k);
}

}  // namespace graft::exec::kernels
