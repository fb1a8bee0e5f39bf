// graft/dist/fusion.hpp — the engine behind data-parallel training's gradient allreduce: gradients
// are put into buckets (Horovod's tensor fusion, PyTorch DDP's buckets); when the last member of a
// bucket arrives, the bucket is packed into one buffer and allreduced on the engine's own thread
// while the executor goes on with the backward pass; a member's result is taken when it is needed.
//
//   auto& e = graft::dist::fusion_engine::instance();
//   e.put("DistributedAllreduce", /*bucket=*/0, /*members=*/2, /*slot=*/0, reduce_op::mean, g0);
//   e.put("DistributedAllreduce", 0, 2, 1, reduce_op::mean, g1);     // bucket 0 full: allreduce starts
//   tensor m0 = e.take("DistributedAllreduce", 0, 0);                // waits for bucket 0
//
// The kernels of GraftAllreduceStart / GraftAllreduceWait (graft/exec/cpu_kernels/collective.hpp) call
// it; graft/dist/data_parallel.hpp builds those ops into a training graph. Buckets are fixed when
// the graph is built (same members in the same slots on every rank) and run on world() in the order
// they fill, which is the same on every rank because every rank runs the same plan: no negotiation
// is needed, and the same ranks and data give the same bits run to run. One step at a time per
// group (two sessions running the same graph at once would mix their buckets).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "graft/dist/communicator.hpp"

namespace graft::dist {

class fusion_engine {
public:
    /// The process's engine (its thread starts on first use).
    static fusion_engine& instance() {
        static fusion_engine e;
        return e;
    }
    fusion_engine() = default;
    fusion_engine(const fusion_engine&) = delete;
    fusion_engine& operator=(const fusion_engine&) = delete;
    ~fusion_engine() {
        {
            std::lock_guard lock(mu_);
            stop_ = true;
        }
        cv_.notify_all();
        if (worker_.joinable()) worker_.join();
    }

    /// Adds `t` (host; every member of a bucket has the same dtype) as member `slot` of `bucket` of
    /// `group`, which has `members` members; the bucket's allreduce starts when it is full. The
    /// tensor is held, not copied (the executor does not overwrite a buffer someone else holds).
    /// Throws invalid_argument_error (slot out of range, mixed dtypes, device tensor).
    void put(const std::string& group, int bucket, int members, int slot, reduce_op op, tensor t) {
        if (members < 1 || slot < 0 || slot >= members) {
            throw invalid_argument_error(graft::detail::cat("gradient allreduce: slot ", slot, " of a bucket of ", members, " members"),
                                         location::at_tensor(group));
        }
        if (!t.on_host()) {
            throw invalid_argument_error("gradient allreduce on the " + world()->backend() + " backend takes host tensors",
                                         location::at_tensor(group), "run the gradient on the CPU");
        }
        std::unique_lock lock(mu_);
        auto& b = buckets_[key(group, bucket)];
        // A bucket still held by the previous step (a step that failed half-way): finish it first.
        cv_.wait(lock, [&] { return !b.launched || b.done; });
        if (b.done) b = bucket_state{};
        if (b.in.empty()) {
            b.in.resize(static_cast<std::size_t>(members));
            b.members = members;
            b.op = op;
            b.group = group;
            b.index = bucket;
        } else if (b.members != members) {
            throw invalid_argument_error(graft::detail::cat("gradient allreduce bucket ", bucket, " has ", b.members,
                                                            " members, a member says ", members),
                                         location::at_tensor(group));
        }
        auto& cell = b.in[static_cast<std::size_t>(slot)];
        if (!cell.valid()) ++b.arrived;
        cell = std::move(t);
        if (b.arrived == b.members) {
            b.launched = true;
            queue_.push_back(&b);
            if (!worker_.joinable()) worker_ = std::thread([this] { run(); });
            cv_.notify_all();
        }
    }

    /// Member `slot`'s reduced value, once its bucket is done. Throws dist_error (the allreduce
    /// failed: peer died, timeout) and graph_error when the bucket never filled (a member's put is
    /// missing: the graph lacks the control edges data_parallel.hpp adds).
    tensor take(const std::string& group, int bucket, int slot) {
        std::unique_lock lock(mu_);
        auto it = buckets_.find(key(group, bucket));
        if (it == buckets_.end() || !it->second.launched) {
            int have = it == buckets_.end() ? 0 : it->second.arrived;
            int want = it == buckets_.end() ? 0 : it->second.members;
            throw graph_error(graft::detail::cat("gradient allreduce bucket ", bucket, " is waited for with ", have, " of ", want,
                                                 " members put"),
                              location::at_tensor(group),
                              "every GraftAllreduceWait needs control edges from all GraftAllreduceStart ops of its bucket");
        }
        auto& b = it->second;
        cv_.wait(lock, [&] { return b.done; });
        if (b.error) std::rethrow_exception(b.error);
        if (slot < 0 || slot >= b.members) {
            throw invalid_argument_error(graft::detail::cat("gradient allreduce: slot ", slot, " of a bucket of ", b.members, " members"),
                                         location::at_tensor(group));
        }
        tensor r = b.out[static_cast<std::size_t>(slot)];
        if (++b.taken == b.members) b = bucket_state{};
        return r;
    }

    /// Bytes allreduced and buckets run since the process started (for benchmarks and tests).
    struct stats {
        std::uint64_t buckets = 0, bytes = 0;
        double seconds = 0;  ///< time spent inside allreduce calls
    };
    [[nodiscard]] stats totals() const {
        std::lock_guard lock(mu_);
        return stats_;
    }

private:
    struct bucket_state {
        std::vector<tensor> in, out;
        int members = 0, arrived = 0, taken = 0, index = 0;
        reduce_op op = reduce_op::mean;
        std::string group;
        bool launched = false, done = false;
        std::exception_ptr error;
    };
    static std::string key(const std::string& group, int bucket) { return group + '\x01' + std::to_string(bucket); }

    void run() {
        std::unique_lock lock(mu_);
        for (;;) {
            cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
            if (queue_.empty()) return;  // stop_
            bucket_state* b = queue_.front();
            queue_.pop_front();
            std::vector<tensor> in = b->in;
            const reduce_op op = b->op;
            const std::string name = graft::detail::cat(b->group, " bucket ", b->index);
            lock.unlock();
            std::vector<tensor> out;
            std::exception_ptr err;
            const auto t0 = std::chrono::steady_clock::now();
            std::size_t bytes = 0;
            try {
                out = reduce(in, op, name, bytes);
            } catch (...) {
                err = std::current_exception();
            }
            const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            lock.lock();
            b->out = std::move(out);
            b->error = err;
            b->done = true;
            b->in.clear();
            stats_.buckets += 1;
            stats_.bytes += bytes;
            stats_.seconds += secs;
            cv_.notify_all();
        }
    }

    /// Packs the members into one buffer, allreduces it, unpacks.
    static std::vector<tensor> reduce(const std::vector<tensor>& in, reduce_op op, const std::string& name, std::size_t& bytes) {
        auto comm = world();
        const dtype t = in.at(0).type();
        std::int64_t total = 0;
        for (const auto& m : in) {
            if (m.type() != t) {
                throw invalid_argument_error(graft::detail::cat("gradient allreduce bucket mixes ", dtype_name(t), " and ",
                                                                dtype_name(m.type())),
                                             location::at_tensor(name), "put tensors of one dtype in a bucket");
            }
            total += m.num_elements();
        }
        std::vector<tensor> out;
        out.reserve(in.size());
        if (in.size() == 1) {  // one member: reduce a private copy of it, no packing
            tensor r = in[0].clone();
            comm->allreduce(r, op, name);
            bytes = r.nbytes();
            out.push_back(std::move(r));
            return out;
        }
        tensor packed = tensor::uninitialized(t, graft::shape{total});
        const std::size_t es = dtype_size(t);
        std::size_t at = 0;
        for (const auto& m : in) {
            if (m.nbytes()) std::memcpy(static_cast<char*>(packed.raw_data()) + at, m.raw_data(), m.nbytes());
            at += m.nbytes();
        }
        comm->allreduce(packed, op, name);
        bytes = packed.nbytes();
        at = 0;
        for (const auto& m : in) {
            tensor r = tensor::uninitialized(t, m.shape());
            if (r.nbytes()) std::memcpy(r.raw_data(), static_cast<const char*>(packed.raw_data()) + at, r.nbytes());
            at += static_cast<std::size_t>(m.num_elements()) * es;
            out.push_back(std::move(r));
        }
        return out;
    }

    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::map<std::string, bucket_state> buckets_;  // node-stable: the queue holds pointers
    std::deque<bucket_state*> queue_;
    std::thread worker_;
    bool stop_ = false;
    stats stats_;
};

}  // namespace graft::dist
