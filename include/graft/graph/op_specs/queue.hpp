// graft/graph/op_specs/queue.hpp — the queue family's lines of graft's op table (op_table.hpp reads
// them into builtin_op_specs(); syntax and traits in op_def.hpp): TF1 input-pipeline queues with
// resource handles, as TF's data_flow_ops.cc declares them. None is differentiable.
#pragma once

#include <string>
#include <vector>

namespace graft::detail {

inline void queue_op_specs(std::vector<std::string>& s) {
    const std::string common = "component_types: list(type) >= 1; shapes: list(shape) >= 0 = []; capacity: int = -1";
    const std::string where = "; container: string = \"\"; shared_name: string = \"\"; stateful; nograd";
    s.push_back("FIFOQueueV2() -> (handle: resource); " + common + where);
    s.push_back("RandomShuffleQueueV2() -> (handle: resource); " + common +
                "; min_after_dequeue: int = 0; seed: int = 0; seed2: int = 0" + where);
    s.push_back("QueueEnqueueV2(handle: resource, components: Tcomponents); Tcomponents: list(type) >= 1; "
                "timeout_ms: int = -1; nograd");
    s.push_back("QueueEnqueueManyV2(handle: resource, components: Tcomponents); Tcomponents: list(type) >= 1; "
                "timeout_ms: int = -1; nograd");
    s.push_back("QueueDequeueV2(handle: resource) -> (components: component_types); "
                "component_types: list(type) >= 1; timeout_ms: int = -1; nograd");
    s.push_back("QueueDequeueManyV2(handle: resource, n: int32) -> (components: component_types); "
                "component_types: list(type) >= 1; timeout_ms: int = -1; nograd");
    s.push_back("QueueDequeueUpToV2(handle: resource, n: int32) -> (components: component_types); "
                "component_types: list(type) >= 1; timeout_ms: int = -1; nograd");
    s.push_back("QueueCloseV2(handle: resource); cancel_pending_enqueues: bool = false; nograd");
    s.push_back("QueueIsClosedV2(handle: resource) -> (is_closed: bool); nograd");
    s.push_back("QueueSizeV2(handle: resource) -> (size: int32); nograd");
}

}  // namespace graft::detail
