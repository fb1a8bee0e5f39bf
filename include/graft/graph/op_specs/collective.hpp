// graft/graph/op_specs/collective.hpp — the collective family's lines of graft's op table
// (op_table.hpp reads them into builtin_op_specs(); syntax and traits in op_def.hpp): the ops that
// run on graft::dist's communicator (graft/dist/communicator.hpp).
#pragma once

#include <string>
#include <vector>

namespace graft::detail {

inline void collective_op_specs(std::vector<std::string>& s) {
    // graft's data-parallel gradient allreduce (graft/dist/data_parallel.hpp builds them): Start puts
    // the gradient into its bucket of `group` (fusion_engine) as soon as it exists; Wait returns the
    // bucket's reduced member `slot` when nothing else is left to run. `reduction`: "mean" or "sum".
    s.push_back("GraftAllreduceStart(input: T) -> (token: int64); T: type; group: string; bucket: int >= 0; members: int >= 1; "
                "slot: int >= 0; reduction: string = \"mean\"; stateful; nograd; run_early");
    s.push_back("GraftAllreduceWait(token: int64) -> (output: T); T: type; group: string; bucket: int >= 0; slot: int >= 0; "
                "stateful; nograd; run_late");

    // TensorFlow's collective ops (tensorflow/core/ops/collective_ops.cc; TF2's MultiWorkerMirrored
    // strategy writes the V2 forms, TF1's CollectiveAllReduceStrategy the V1 forms) and Horovod's
    // (horovod/tensorflow/mpi_ops.cc), with their signatures as the sources register them, so a
    // graph's stripped_op_list matches graft's lines. They run on graft::dist::world()
    // (exec/cpu_kernels/collective.hpp): graft runs one group, every rank of the job. TF restricts T to
    // {bfloat16, float, float16, float64, int32, int64} (bool too for the broadcasts); the kernels
    // take what the communicator handles and refuse the rest naming the node. TF's
    // is_distributed_communication flag is not modelled by the spec syntax.
    const std::string v1 = "T: type; group_size: int; group_key: int; instance_key: int; ";
    const std::string hint = "communication_hint: string = \"auto\"; timeout_seconds: float = 0; ";
    s.push_back("CollectiveReduce(input: T) -> (data: T); " + v1 +
                "merge_op: string; final_op: string; subdiv_offsets: list(int); wait_for: list(int) = []; " + hint +
                "stateful; nograd; shape_preserving");
    s.push_back("CollectiveGather(input: T) -> (data: T); " + v1 + "shape: shape; " + hint + "stateful; nograd");
    s.push_back("CollectiveBcastSend(input: T) -> (data: T); " + v1 + "shape: shape; " + hint + "stateful; nograd");
    s.push_back("CollectiveBcastRecv() -> (data: T); " + v1 + "shape: shape; " + hint + "stateful; nograd");
    const std::string v2_in = "group_size: int32, group_key: int32, instance_key: int32";
    const std::string v2_tokens = "is_stateless: bool = false; Nordering_token: int >= 0 = 0; ";
    s.push_back("CollectiveReduceV2(input: T, " + v2_in + ", ordering_token: Nordering_token * resource) -> (data: T); "
                "T: type; merge_op: string; final_op: string; " + hint + v2_tokens +
                "max_subdivs_per_device: int = -1; stateful; nograd; shape_preserving");
    s.push_back("CollectiveGatherV2(input: T, " + v2_in + ", ordering_token: Nordering_token * resource) -> (data: T); "
                "T: type; " + hint + v2_tokens + "stateful; nograd");
    s.push_back("CollectiveBcastSendV2(input: T, " + v2_in + ") -> (data: T); T: type; " + hint +
                "stateful; nograd; shape_preserving");
    s.push_back("CollectiveBcastRecvV2(" + v2_in + ", shape: Tshape) -> (data: T); T: type; Tshape: type = int32; " + hint +
                "stateful; nograd");
    // Horovod's ops are not stateful in its registration (kept so, for same_signature). reduce_op:
    // Average 0, Sum 1, Adasum 2, Min 3, Max 4, Product 5 (horovod/common/message.h ReduceOp).
    // HorovodAllreduce's gradient is the allreduce of the gradient (autodiff/rules/collective.hpp);
    // Horovod's allgather/broadcast gradients depend on the rank at graph-building time: not here.
    const std::string hvd = "ignore_name_scope: bool = false; process_set_id: int = 0";
    s.push_back("HorovodAllreduce(tensor: T) -> (sum: T); T: type; reduce_op: int; prescale_factor: float; "
                "postscale_factor: float; " + hvd + "; shape_preserving");
    s.push_back("HorovodAllgather(tensor: T) -> (output: T); T: type; " + hvd + "; grad_missing");
    s.push_back("HorovodBroadcast(tensor: T) -> (output: T); T: type; root_rank: int; " + hvd + "; grad_missing; shape_preserving");
}

}  // namespace graft::detail
