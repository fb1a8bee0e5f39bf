// graft/exec/cpu_kernels/queue.hpp — TF1 input-pipeline queues bound to their TF op types:
// FIFOQueueV2, RandomShuffleQueueV2, PaddingFIFOQueueV2 and PriorityQueueV2 (the queue lives in the
// session, keyed like TF's resource manager, so one run's enqueues are the next run's dequeues), QueueEnqueueV2 / EnqueueManyV2,
// QueueDequeueV2 / DequeueManyV2 / DequeueUpToV2, QueueCloseV2, QueueSizeV2, QueueIsClosedV2.
// The queue itself: graft/exec/queues.hpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graft/exec/kernel.hpp"
#include "graft/exec/queues.hpp"
#include "graft/exec/session.hpp"

namespace graft::exec::kernels {

namespace queue_detail {

inline location where(const kernel_context& c) { return location::at_node(c.name(), c.n().op); }

/// The queue behind input 0. Throws invalid_argument_error naming the node for another handle.
inline tensor_queue& queue_at(kernel_context& c) {
    try {
        return *resource_of<tensor_queue>(c.input(0), c.n().op.c_str());
    } catch (const invalid_argument_error& e) {
        c.fail(e.message(), e.hint());
    }
}

/// FIFOQueueV2 / RandomShuffleQueueV2 / PaddingFIFOQueueV2 / PriorityQueueV2: the session's queue
/// for this node's resource key, made on the first run; every run outputs a handle to the same queue.
/// A PriorityQueue's tuples start with the int64 priority its component_types leave out (as TF's).
inline void create(kernel_context& c, tensor_queue::order kind) {
    std::string shared = c.attr_or<std::string>("shared_name", ""), container = c.attr_or<std::string>("container", "");
    std::string key = (container.empty() ? "" : container + "/") + (shared.empty() ? c.name() : shared);
    auto& q = c.state().node_state<std::shared_ptr<tensor_queue>>("\x01queue:" + key, [&] {
        tensor_queue::options o;
        o.name = shared.empty() ? c.name() : shared;
        o.types = c.attr("component_types").list_of<dtype>();
        o.shapes = c.attr("shapes").list_of<graft::shape>();
        if (kind == tensor_queue::order::priority) {
            o.types.insert(o.types.begin(), dtype::int64);
            if (!o.shapes.empty()) o.shapes.insert(o.shapes.begin(), graft::shape{});
        }
        o.capacity = c.attr_or<std::int64_t>("capacity", -1);
        o.kind = kind;
        if (kind == tensor_queue::order::shuffle) {
            o.min_after_dequeue = c.attr_or<std::int64_t>("min_after_dequeue", 0);
            o.seed = c.attr_or<std::int64_t>("seed", 0);
            o.seed2 = c.attr_or<std::int64_t>("seed2", 0);
        }
        return std::make_shared<tensor_queue>(std::move(o), where(c));
    });
    c.set_output(0, handle_of(q));
}

/// The components (inputs 1..) as a tuple.
inline tensor_queue::tuple components(kernel_context& c) {
    tensor_queue::tuple t;
    for (int i = 1; i < c.num_inputs(); ++i) t.push_back(c.input(i));
    return t;
}

/// The queue behind input 0, checked against the dequeue op's component_types.
inline tensor_queue& dequeue_queue(kernel_context& c) {
    tensor_queue& q = queue_at(c);
    const auto& want = c.attr("component_types").list_of<dtype>();
    if (want != q.opts().types || static_cast<int>(want.size()) != c.num_outputs()) {
        std::string have, asked;
        for (auto d : q.opts().types) have += (have.empty() ? "" : ", ") + dtype_name(d);
        for (auto d : want) asked += (asked.empty() ? "" : ", ") + dtype_name(d);
        c.fail(detail::cat("the queue's component types are [", have, "] but this op's component_types are [", asked,
                           "]"));
    }
    return q;
}
/// Outputs a dequeued tuple.
inline void output(kernel_context& c, const tensor_queue::tuple& t) {
    for (std::size_t i = 0; i < t.size(); ++i) c.set_output(static_cast<int>(i), t[i]);
}

/// Input 1 of DequeueMany / DequeueUpTo: the int32 scalar n.
inline std::int64_t count(kernel_context& c) {
    tensor n = c.input(1);
    if (n.rank() != 0 || n.type() != dtype::int32) c.fail("n must be an int32 scalar, given " + n.describe());
    return n.data<std::int32_t>()[0];
}

}  // namespace queue_detail

inline void register_queue(kernel_registry& r) {
    namespace d = queue_detail;
    using order = tensor_queue::order;
    kernel_def count_on_host;  // the element count input
    count_on_host.host_inputs = {1};
    // The V2 ops (resource handles) and TF1's first forms (Ref(string) handles): the same kernels.
    for (const std::string v : {"V2", ""}) {
        r.add("FIFOQueue" + v, [](kernel_context& c) { d::create(c, order::fifo); });
        r.add("RandomShuffleQueue" + v, [](kernel_context& c) { d::create(c, order::shuffle); });
        r.add("PaddingFIFOQueue" + v, [](kernel_context& c) { d::create(c, order::padding); });
        r.add("PriorityQueue" + v, [](kernel_context& c) { d::create(c, order::priority); });
        r.add("QueueEnqueue" + v, [](kernel_context& c) { d::queue_at(c).enqueue(d::components(c), d::where(c)); });
        r.add("QueueEnqueueMany" + v,
              [](kernel_context& c) { d::queue_at(c).enqueue_many(d::components(c), d::where(c)); });
        r.add("QueueDequeue" + v, [](kernel_context& c) { d::output(c, d::dequeue_queue(c).dequeue(d::where(c))); });
        r.add("QueueDequeueMany" + v, [](kernel_context& c) {
            auto& q = d::dequeue_queue(c);
            d::output(c, q.dequeue_many(d::count(c), false, d::where(c)));
        }, count_on_host);
        r.add("QueueDequeueUpTo" + v, [](kernel_context& c) {
            auto& q = d::dequeue_queue(c);
            d::output(c, q.dequeue_many(d::count(c), true, d::where(c)));
        }, count_on_host);
        r.add("QueueClose" + v, [](kernel_context& c) { d::queue_at(c).close(); });
        r.add("QueueSize" + v, [](kernel_context& c) {
            c.set_output(0, tensor::scalar_of(static_cast<std::int32_t>(d::queue_at(c).size())));
        });
        r.add("QueueIsClosed" + v, [](kernel_context& c) { c.set_output(0, tensor::scalar_of(d::queue_at(c).closed())); });
    }
}

}  // namespace graft::exec::kernels
