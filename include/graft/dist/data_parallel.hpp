// graft/dist/data_parallel.hpp — data-parallel training (Horovod's DistributedOptimizer, PyTorch's
// DDP) on a TF1 training graph: every rank runs the same graph on its own slice of each global
// batch; the gradients are averaged across ranks before the optimizer applies them, so every rank
// makes the same update as one process on the global batch. Link graft::compiled (and graft::mpi to run
// it past one process: graft::dist::init_mpi).
//
//   auto mpi = graft::dist::init_mpi(&argc, &argv);                      // under mpirun
//   graft::train::gradient_descent sgd(0.1);
//   graft::dist::distributed_optimizer opt(sgd, {.bucket_bytes = 1 << 20});
//   std::string train = opt.minimize(mg, loss);                          // allreduce built in
//   graft::exec::session s{mg.graph};
//   s.run({}, {}, {"init"});
//   graft::dist::broadcast_variables(s);                                 // rank 0's initial values
//   for (const auto& b : batches)                                        // global batches
//       s.run({{"x:0", graft::dist::local_rows(b[0])}, {"y:0", graft::dist::local_rows(b[1])}}, {}, {train});
//
// How: allreduce_gradients() puts a GraftAllreduceStart after each gradient (it runs as soon as the
// gradient exists: op trait run_early) and a GraftAllreduceWait before its apply op (it runs only
// when nothing else is ready: run_late). Gradients are grouped into buckets of about bucket_bytes in
// the order backprop produces them (last layer first), one dtype per bucket; a bucket's allreduce
// runs on the fusion engine's thread (graft/dist/fusion.hpp) once all its members exist, while the
// executor continues the backward pass. Buckets are fixed at build time, so every rank reduces the
// same buffers in the same order: the same ranks and data give the same bits run to run.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graft/dist/communicator.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/variables.hpp"
#include "graft/train/optimizer.hpp"

namespace graft::dist {

struct allreduce_options {
    /// A bucket closes once its gradients hold at least this many bytes (Horovod's fusion
    /// threshold, DDP's bucket_cap_mb). 0: one bucket per gradient.
    std::size_t bucket_bytes = std::size_t{4} << 20;
    /// mean (data-parallel SGD: each rank's loss is a mean over its rows) or sum.
    reduce_op op = reduce_op::mean;
    /// Op scope of the allreduce nodes (made unique); also names the fusion engine's group.
    std::string scope = "DistributedAllreduce";
};

/// How allreduce_gradients grouped the gradients (for tests, logs and benchmarks).
struct bucket_plan {
    struct bucket {
        std::vector<std::string> vars;  ///< variables whose gradients it holds, in slot order
        std::size_t bytes = 0;          ///< from the variables' static shapes (0 where unknown)
    };
    std::string group;                  ///< the fusion engine's group (the op scope)
    std::vector<bucket> buckets;        ///< in launch order
};

/// Replaces every gradient of `gv` by its reduction across the ranks of world() (see the header
/// comment), returning the new pairs (same order, same variables). `plan` receives the buckets.
/// Throws invalid_argument_error (a gradient's dtype cannot be reduced), graph_error.
inline train::grads_and_vars allreduce_gradients(meta_graph& mg, const train::grads_and_vars& gv,
                                                 const allreduce_options& o = {}, bucket_plan* plan = nullptr) {
    graph& g = mg.graph;
    graph_builder top(g);
    const std::string scope = train::detail::free_scope(g, o.scope);
    graph_builder in = top.at_scope(scope);
    const char* reduction = o.op == reduce_op::sum ? "sum" : o.op == reduce_op::mean ? "mean" : nullptr;
    if (!reduction) throw invalid_argument_error("gradient allreduce takes reduce_op::mean or reduce_op::sum");

    // Backprop makes the last variables' gradients first: fill buckets in reverse order.
    struct member { std::size_t pair; std::size_t bytes; dtype type; };
    std::vector<std::vector<member>> buckets;
    std::size_t open_bytes = 0;
    for (std::size_t k = gv.size(); k-- > 0;) {
        if (!gv[k].grad) continue;
        const dtype t = base_type(in.dtype_of(*gv[k].grad));
        if (!reducible(t)) {
            throw invalid_argument_error("cannot allreduce the gradient of '" + gv[k].var.name + "': dtype " + dtype_name(t),
                                         location::at_tensor(gv[k].grad->str()), "train float32 or float64 variables");
        }
        auto [vt, vs] = train::detail::variable_type(g, gv[k].var.name);
        (void)vt;
        const std::size_t bytes = vs.fully_defined() ? static_cast<std::size_t>(vs.num_elements()) * dtype_size(t) : 0;
        const bool new_bucket = buckets.empty() || buckets.back().back().type != t || open_bytes >= o.bucket_bytes ||
                                o.bucket_bytes == 0;
        if (new_bucket) {
            buckets.emplace_back();
            open_bytes = 0;
        }
        buckets.back().push_back({k, bytes, t});
        open_bytes += bytes;
    }
    train::grads_and_vars out = gv;
    if (plan) {
        plan->group = scope;
        plan->buckets.clear();
    }
    for (std::size_t b = 0; b < buckets.size(); ++b) {
        const auto& members = buckets[b];
        std::vector<std::string> starts;
        bucket_plan::bucket pb;
        for (std::size_t s = 0; s < members.size(); ++s) {
            const auto& p = gv[members[s].pair];
            node& n = in.add("GraftAllreduceStart", {*p.grad},
                             {{"group", scope}, {"bucket", static_cast<std::int64_t>(b)},
                              {"members", static_cast<std::int64_t>(members.size())}, {"slot", static_cast<std::int64_t>(s)},
                              {"reduction", std::string(reduction)}},
                             "start_" + std::to_string(b) + "_" + std::to_string(s));
            starts.push_back(n.name);
            pb.vars.push_back(p.var.name);
            pb.bytes += members[s].bytes;
        }
        // Every Wait of a bucket runs after every Start of it (the engine reduces a full bucket).
        graph_builder after = in.with_control_dependencies(starts);
        for (std::size_t s = 0; s < members.size(); ++s) {
            const auto& p = gv[members[s].pair];
            out[members[s].pair].grad =
                after.op("GraftAllreduceWait", {endpoint{starts[s], 0}},
                         {{"T", members[s].type}, {"group", scope}, {"bucket", static_cast<std::int64_t>(b)},
                          {"slot", static_cast<std::int64_t>(s)}},
                         "wait_" + std::to_string(b) + "_" + std::to_string(s));
            (void)p;
        }
        if (plan) plan->buckets.push_back(std::move(pb));
    }
    return out;
}

/// An optimizer whose gradients are averaged across ranks before they are applied (Horovod's
/// DistributedOptimizer): compute_gradients, allreduce_gradients, apply_gradients of `base`.
class distributed_optimizer {
public:
    explicit distributed_optimizer(train::optimizer& base, allreduce_options o = {}) : base_(&base), opt_(std::move(o)) {}

    /// Builds the data-parallel training step; returns the train op's name. Throws like
    /// optimizer::minimize and allreduce_gradients.
    std::string minimize(meta_graph& mg, const endpoint& loss, const train::var_list& vars = train::var_list::trainable(),
                         const std::optional<train::variable>& global_step = std::nullopt, std::string_view name = {}) {
        auto gv = base_->compute_gradients(mg, loss, vars);
        gv = allreduce_gradients(mg, gv, opt_, &plan_);
        return base_->apply_gradients(mg, gv, global_step, name);
    }
    /// The wrapped optimizer (its slots, name).
    [[nodiscard]] train::optimizer& base() const { return *base_; }
    /// The buckets of the last minimize().
    [[nodiscard]] const bucket_plan& plan() const { return plan_; }

private:
    train::optimizer* base_;
    allreduce_options opt_;
    bucket_plan plan_;
};

/// Gives every variable of the session the value it has on `root` (after init or a restore on
/// root), in the sorted order of the session's variable keys (the same on every rank running the
/// same graph). Throws dist_error (ranks disagree on the variables or their shapes), graph_error
/// (a variable is not initialized on this rank).
inline void broadcast_variables(exec::session& s, int root = 0, communicator* comm = nullptr) {
    std::shared_ptr<communicator> keep;
    if (!comm) {
        keep = world();
        comm = keep.get();
    }
    if (comm->size() == 1) return;
    const auto keys = s.variables().keys();
    // Agree on how many variables there are before moving any.
    auto count = tensor::scalar_of<std::int64_t>(static_cast<std::int64_t>(keys.size()));
    tensor mine = count.clone();
    comm->allreduce(count, reduce_op::max, "variable count");
    if (*count.data<std::int64_t>() != *mine.data<std::int64_t>()) {
        throw dist_error(graft::detail::cat("rank ", comm->rank(), " has ", keys.size(), " variables, another rank ",
                                            *count.data<std::int64_t>()),
                         {}, "every rank must run the same graph");
    }
    for (const auto& k : keys) {
        auto v = s.variables().at(k);
        tensor t = v->read();
        tensor c = t.clone();
        comm->broadcast(c, root, k);
        v->assign(c, false);
    }
}

/// This rank's rows of a global batch: rows [r*n/N, (r+1)*n/N) of dimension 0 for rank r of N
/// (n divisible by N gives every rank n/N rows: then the averaged gradient is exactly the global
/// batch's). A view, no copy. Throws invalid_argument_error for a scalar.
[[nodiscard]] inline tensor local_rows(const tensor& global, const communicator& comm) {
    if (global.rank() == 0) throw invalid_argument_error("local_rows: a scalar has no rows to split across ranks");
    const std::int64_t n = global.dim(0), r = comm.rank(), N = comm.size();
    const std::int64_t lo = n * r / N, hi = n * (r + 1) / N;
    return global.slice(lo, hi - lo);
}
[[nodiscard]] inline tensor local_rows(const tensor& global) { return local_rows(global, *world()); }

}  // namespace graft::dist
