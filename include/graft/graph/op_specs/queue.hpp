// graft/graph/op_specs/queue.hpp — the queue family's lines of graft's op table (op_table.hpp reads
// them into builtin_op_specs(); syntax and traits in op_def.hpp): TF1 input-pipeline queues with
// resource handles (V2) and
// Ref(string) handles (TF1's first forms), as TF's data_flow_ops.cc declares them. None is differentiable.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace graft::detail {

inline void queue_op_specs(std::vector<std::string>& s) {
    const std::string common = "component_types: list(type) >= 1; shapes: list(shape) >= 0 = []; capacity: int = -1";
    const std::string where = "; container: string = \"\"; shared_name: string = \"\"; stateful; nograd";
    // Each op twice: the V2 form with a resource handle, and TF1's first form (no suffix) with a
    // Ref(string) handle, which older graphs hold; graft gives both the same queue.
    for (const auto& [v, handle] : {std::pair<std::string, std::string>{"V2", "resource"}, {"", "Ref(string)"}}) {
        s.push_back("FIFOQueue" + v + "() -> (handle: " + handle + "); " + common + where);
        s.push_back("RandomShuffleQueue" + v + "() -> (handle: " + handle + "); " + common +
                    "; min_after_dequeue: int = 0; seed: int = 0; seed2: int = 0" + where);
        s.push_back("PaddingFIFOQueue" + v + "() -> (handle: " + handle + "); " + common + where);
        s.push_back("PriorityQueue" + v + "() -> (handle: " + handle + "); component_types: list(type) >= 0 = []; "
                    "shapes: list(shape) >= 0; capacity: int = -1" + where);
        s.push_back("QueueEnqueue" + v + "(handle: " + handle + ", components: Tcomponents); "
                    "Tcomponents: list(type) >= 1; timeout_ms: int = -1; nograd");
        s.push_back("QueueEnqueueMany" + v + "(handle: " + handle + ", components: Tcomponents); "
                    "Tcomponents: list(type) >= 1; timeout_ms: int = -1; nograd");
        s.push_back("QueueDequeue" + v + "(handle: " + handle + ") -> (components: component_types); "
                    "component_types: list(type) >= 1; timeout_ms: int = -1; nograd");
        s.push_back("QueueDequeueMany" + v + "(handle: " + handle + ", n: int32) -> (components: component_types); "
                    "component_types: list(type) >= 1; timeout_ms: int = -1; nograd");
        s.push_back("QueueDequeueUpTo" + v + "(handle: " + handle + ", n: int32) -> (components: component_types); "
                    "component_types: list(type) >= 1; timeout_ms: int = -1; nograd");
        s.push_back("QueueClose" + v + "(handle: " + handle + "); cancel_pending_enqueues: bool = false; nograd");
        s.push_back("QueueIsClosed" + v + "(handle: " + handle + ") -> (is_closed: bool); nograd");
        s.push_back("QueueSize" + v + "(handle: " + handle + ") -> (size: int32); nograd");
    }
}

}  // namespace graft::detail
