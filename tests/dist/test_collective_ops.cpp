// TF's collective ops and Horovod's in one process (graft::dist::world() is the local, 1-rank
// communicator): what each computes for a group of one, their checks (group_size, dtypes, Adasum,
// broadcast roots), a GraphDef written as TF writes it, HorovodAllreduce's gradient, and a TF1
// parameter-server graph (/job:ps, /job:worker devices) run in one session and reported by
// `graft inspect`.
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "dist/support.hpp"
#include "graft/autodiff/gradients.hpp"
#include "graft/dist/communicator.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "support/fixtures.hpp"

namespace graft_test_collective_ops {  // named: test_dist is a unity build

using graft::dtype;
using graft::endpoint;
using graft::tensor;

/// The keys TF's V2 ops take as inputs: group_size, group_key, instance_key (int32 scalars).
struct keys {
    endpoint size, group, instance;
};
inline keys make_keys(const graft::graph_builder& b, int group_size, int instance, const std::string& tag) {
    return {b.scalar<std::int32_t>(group_size, tag + "/group_size"), b.scalar<std::int32_t>(1, tag + "/group_key"),
            b.scalar<std::int32_t>(instance, tag + "/instance_key")};
}

inline std::vector<float> floats(const tensor& t) {
    return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}
inline std::vector<std::int32_t> ints(const tensor& t) {
    return std::vector<std::int32_t>(t.data<std::int32_t>(), t.data<std::int32_t>() + t.num_elements());
}

using graft::test::dist::has;
using graft::test::dist::run_error;

/// A TF1 graph as tf.train.replica_device_setter places it: variables on the ps tasks, the model
/// on worker devices (a GPU of task 0, a CPU of task 1), a node with no device at all.
inline const char* ps_graph_text = R"PB(
node { name: "w" op: "VariableV2" device: "/job:ps/replica:0/task:0/device:CPU:0"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: 2 } } } }
  attr { key: "container" value { s: "" } } attr { key: "shared_name" value { s: "" } } }
node { name: "w/initial_value" op: "Const" device: "/job:ps/replica:0/task:0/device:CPU:0"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 2 float_val: 3 } } } }
node { name: "w/Assign" op: "Assign" input: "w" input: "w/initial_value" device: "/job:ps/replica:0/task:0/device:CPU:0"
  attr { key: "T" value { type: DT_FLOAT } } attr { key: "use_locking" value { b: true } }
  attr { key: "validate_shape" value { b: true } } }
node { name: "w/read" op: "Identity" input: "w" device: "/job:ps/replica:0/task:0/device:CPU:0"
  attr { key: "T" value { type: DT_FLOAT } } }
node { name: "b" op: "Const" device: "/job:ps/task:1"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 10 float_val: 20 } } } }
node { name: "x" op: "Placeholder" device: "/job:worker/replica:0/task:0/device:GPU:0"
  attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 2 } } } } }
node { name: "mul" op: "Mul" input: "x" input: "w/read" device: "/job:worker/replica:0/task:0/device:GPU:0"
  attr { key: "T" value { type: DT_FLOAT } } }
node { name: "add" op: "AddV2" input: "mul" input: "b" device: "/job:worker/replica:0/task:1/device:CPU:0"
  attr { key: "T" value { type: DT_FLOAT } } }
node { name: "out" op: "Identity" input: "add"
  attr { key: "T" value { type: DT_FLOAT } } }
)PB";


TEST_CASE("collective ops: the op table holds TF's and Horovod's signatures") {
    auto& ops = graft::op_registry::global();
    const auto* r = ops.find("CollectiveReduceV2");
    REQUIRE(r);
    REQUIRE(r->inputs.size() == 5);
    CHECK(r->inputs[1].name == "group_size");
    CHECK(r->inputs[4].name == "ordering_token");
    CHECK(r->inputs[4].number_attr == "Nordering_token");
    CHECK(r->is_stateful);
    CHECK(r->find_attr("max_subdivs_per_device")->default_value == graft::attr_value(std::int64_t{-1}));
    const auto* recv = ops.find("CollectiveBcastRecvV2");
    REQUIRE(recv);
    CHECK(recv->inputs.size() == 4);
    CHECK(recv->inputs[3].type_attr == "Tshape");
    const auto* v1 = ops.find("CollectiveReduce");
    REQUIRE(v1);
    CHECK(v1->find_attr("subdiv_offsets")->type == "list(int)");
    const auto* h = ops.find("HorovodAllreduce");
    REQUIRE(h);
    CHECK_FALSE(h->is_stateful);  // as Horovod registers it
    CHECK(h->outputs[0].name == "sum");
    CHECK(graft::traits_of("CollectiveGatherV2").nograd);
    CHECK(graft::traits_of("HorovodBroadcast").grad_missing);
    CHECK_FALSE(graft::traits_of("HorovodAllreduce").nograd);
}

TEST_CASE("collective ops on one rank: reduce, gather and broadcast give a group of one's values") {
    REQUIRE(graft::dist::world()->size() == 1);
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.constant(tensor::from_vector<float>({2, 2}, {1.5f, -2.f, 3.f, 4.25f}), "x");
    auto xi = b.constant(tensor::from_vector<std::int32_t>({3}, {7, -8, 9}), "xi");
    auto k = make_keys(b, 1, 1, "k");
    b.op("CollectiveReduceV2", {x, k.size, k.group, k.instance}, {{"merge_op", "Add"}, {"final_op", "Div"}}, "mean");
    b.op("CollectiveReduceV2", {xi, k.size, k.group, k.instance}, {{"merge_op", "Max"}, {"final_op", "Div"}}, "max_div");
    b.op("CollectiveReduceV2", {xi, k.size, k.group, k.instance}, {{"merge_op", "Mul"}, {"final_op", "Id"}}, "prod");
    b.op("CollectiveGatherV2", {x, k.size, k.group, k.instance}, {}, "gather");
    b.op("CollectiveBcastSendV2", {xi, k.size, k.group, k.instance}, {}, "send");
    b.op("CollectiveReduce", {x},
         {{"group_size", 1}, {"group_key", 1}, {"instance_key", 2}, {"merge_op", "Min"}, {"final_op", "Id"},
          {"subdiv_offsets", graft::attr_value::list_of(std::vector<std::int64_t>{0})}},
         "v1_min");
    b.op("CollectiveGather", {xi}, {{"group_size", 1}, {"group_key", 1}, {"instance_key", 3}, {"shape", graft::shape{3}}},
         "v1_gather");
    b.op("CollectiveBcastSend", {x}, {{"group_size", 1}, {"group_key", 1}, {"instance_key", 4}, {"shape", graft::shape{2, 2}}},
         "v1_send");
    graft::exec::session s{g};
    auto r = s.run({}, {"mean:0", "max_div:0", "prod:0", "gather:0", "send:0", "v1_min:0", "v1_gather:0", "v1_send:0"});
    CHECK(floats(r[0]) == std::vector<float>{1.5f, -2.f, 3.f, 4.25f});  // Div by a group of 1
    CHECK(r[0].shape() == graft::shape{2, 2});
    CHECK(ints(r[1]) == std::vector<std::int32_t>{7, -8, 9});
    CHECK(ints(r[2]) == std::vector<std::int32_t>{7, -8, 9});
    CHECK(r[3].shape() == graft::shape{2, 2});  // one rank's rows
    CHECK(floats(r[3]) == std::vector<float>{1.5f, -2.f, 3.f, 4.25f});
    CHECK(ints(r[4]) == std::vector<std::int32_t>{7, -8, 9});
    CHECK(floats(r[5]) == std::vector<float>{1.5f, -2.f, 3.f, 4.25f});
    CHECK(ints(r[6]) == std::vector<std::int32_t>{7, -8, 9});
    CHECK(floats(r[7]) == std::vector<float>{1.5f, -2.f, 3.f, 4.25f});
}

TEST_CASE("collective ops on one rank: what they refuse names the node") {
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.constant(tensor::from_vector<float>({2}, {1.f, 2.f}), "x");
    auto two = make_keys(b, 2, 1, "two");
    auto one = make_keys(b, 1, 1, "one");
    b.op("CollectiveReduceV2", {x, two.size, two.group, two.instance}, {{"merge_op", "Add"}, {"final_op", "Id"}},
         "allreduce_of_two");
    b.op("CollectiveReduce", {x},
         {{"group_size", 2}, {"group_key", 1}, {"instance_key", 1}, {"merge_op", "Add"}, {"final_op", "Id"},
          {"subdiv_offsets", graft::attr_value::list_of(std::vector<std::int64_t>{0})}},
         "v1_of_two");
    b.op("CollectiveReduceV2", {x, one.size, one.group, one.instance}, {{"merge_op", "Sub"}, {"final_op", "Id"}}, "bad_merge");
    auto shape = b.constant(tensor::from_vector<std::int32_t>({2}, {2, 3}), "recv_shape");
    b.op("CollectiveBcastRecvV2", {one.size, one.group, one.instance, shape}, {{"T", dtype::float32}}, "lonely_recv");
    b.op("CollectiveBcastSend", {x}, {{"group_size", 1}, {"group_key", 1}, {"instance_key", 4}, {"shape", graft::shape{3}}},
         "wrong_shape_send");
    auto half = b.constant(tensor(dtype::float16, graft::shape{2}), "half");
    b.op("CollectiveReduceV2", {half, one.size, one.group, one.instance}, {{"merge_op", "Add"}, {"final_op", "Id"}}, "half_sum");
    auto text = b.constant(tensor::from_vector<std::string>({1}, {"a"}), "text");
    b.op("CollectiveGatherV2", {text, one.size, one.group, one.instance}, {}, "text_gather");
    auto scalar = b.scalar(1.f, "scalar");
    b.op("CollectiveGatherV2", {scalar, one.size, one.group, one.instance}, {}, "scalar_gather");

    auto e = run_error(g, "allreduce_of_two:0");
    CHECK(has(e, "allreduce_of_two"));
    CHECK(has(e, "group_size 2"));
    CHECK(has(e, "1-rank world"));
    CHECK(has(e, "mpirun -np 2"));
    e = run_error(g, "v1_of_two:0");
    CHECK(has(e, "v1_of_two"));
    CHECK(has(e, "group_size 2"));
    CHECK(has(run_error(g, "bad_merge:0"), "merge_op 'Sub'"));
    e = run_error(g, "lonely_recv:0");
    CHECK(has(e, "lonely_recv"));
    CHECK(has(e, "no rank sends"));
    CHECK(has(run_error(g, "wrong_shape_send:0"), "shape attr says [3]"));
    e = run_error(g, "half_sum:0");
    CHECK(has(e, "half_sum"));
    CHECK(has(e, "float16 is not supported"));
    CHECK(has(run_error(g, "text_gather:0"), "string is not supported"));
    CHECK(has(run_error(g, "scalar_gather:0"), "scalar"));
}

TEST_CASE("Horovod ops on one rank: average and sum with prescale/postscale, min, allgather, broadcast") {
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.constant(tensor::from_vector<float>({3}, {1.f, -2.f, 4.f}), "x");
    auto xi = b.constant(tensor::from_vector<std::int32_t>({2}, {5, -7}), "xi");
    auto hvd = [&](int op, float pre, float post) -> graft::attr_list {
        return {{"reduce_op", op}, {"prescale_factor", pre}, {"postscale_factor", post}};
    };
    b.op("HorovodAllreduce", {x}, hvd(0, 3.f, 0.5f), "average");
    b.op("HorovodAllreduce", {xi}, hvd(1, 2.f, 1.f), "sum_int");
    b.op("HorovodAllreduce", {x}, hvd(3, 1.f, 1.f), "min");
    b.op("HorovodAllreduce", {x}, hvd(2, 1.f, 1.f), "adasum");
    b.op("HorovodAllreduce", {x}, {{"reduce_op", 1}, {"prescale_factor", 1.f}, {"postscale_factor", 1.f}, {"process_set_id", 2}},
         "subset");
    b.op("HorovodAllgather", {xi}, {}, "gather");
    b.op("HorovodBroadcast", {x}, {{"root_rank", 0}}, "bcast");
    b.op("HorovodBroadcast", {x}, {{"root_rank", 1}}, "bcast_from_1");
    graft::exec::session s{g};
    auto r = s.run({}, {"average:0", "sum_int:0", "min:0", "gather:0", "bcast:0"});
    CHECK(floats(r[0]) == std::vector<float>{1.5f, -3.f, 6.f});  // 3x, summed over 1 rank, x 0.5 / 1
    CHECK(ints(r[1]) == std::vector<std::int32_t>{10, -14});
    CHECK(floats(r[2]) == std::vector<float>{1.f, -2.f, 4.f});
    CHECK(ints(r[3]) == std::vector<std::int32_t>{5, -7});
    CHECK(floats(r[4]) == std::vector<float>{1.f, -2.f, 4.f});
    auto e = run_error(g, "adasum:0");
    CHECK(has(e, "adasum"));
    CHECK(has(e, "Adasum"));
    CHECK(has(run_error(g, "subset:0"), "process_set_id 2"));
    CHECK(has(run_error(g, "bcast_from_1:0"), "root_rank 1 is not a rank"));
}

TEST_CASE("HorovodAllreduce's gradient is the allreduce of the gradient, with the same scaling") {
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.placeholder("x", dtype::float32, graft::shape{2});
    auto y = b.op("HorovodAllreduce", {x}, {{"reduce_op", 1}, {"prescale_factor", 2.f}, {"postscale_factor", 0.25f}}, "y");
    auto d = graft::gradients(g, {y}, {x});  // d sum(y) / dx
    REQUIRE(d[0]);
    graft::exec::session s{g};
    auto r = s.run({{"x:0", tensor::from_vector<float>({2}, {1.f, 2.f})}}, {d[0]->str(), "y:0"});
    CHECK(floats(r[0]) == std::vector<float>{0.5f, 0.5f});  // d/dx of 0.25 * sum(2x) over one rank
    CHECK(floats(r[1]) == std::vector<float>{0.5f, 1.f});
}

TEST_CASE("a GraphDef as TF writes it, with CollectiveReduceV2 and an ordering token, runs") {
    const std::string text = R"PB(
node { name: "x" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } } float_val: 2 float_val: 4 float_val: 8 } } } }
node { name: "group_size" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }
node { name: "group_key" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }
node { name: "instance_key" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 5 } } } }
node { name: "token" op: "VarHandleOp"
  attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { } } }
  attr { key: "container" value { s: "" } } attr { key: "shared_name" value { s: "token" } }
  attr { key: "allowed_devices" value { list { } } } }
node { name: "CollectiveReduceV2" op: "CollectiveReduceV2"
  input: "x" input: "group_size" input: "group_key" input: "instance_key" input: "token"
  device: "/job:worker/replica:0/task:0/device:CPU:0"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "merge_op" value { s: "Add" } }
  attr { key: "final_op" value { s: "Div" } }
  attr { key: "communication_hint" value { s: "auto" } }
  attr { key: "timeout_seconds" value { f: 0 } }
  attr { key: "is_stateless" value { b: false } }
  attr { key: "Nordering_token" value { i: 1 } }
  attr { key: "max_subdivs_per_device" value { i: -1 } } }
versions { producer: 1205 }
)PB";
    auto g = graft::tf::parse_graph_def(graft::tf::from_text(text, graft::tf::file_format::graph_def), "reduce.pbtxt");
    graft::exec::session s{g};
    auto r = s.run({}, {"CollectiveReduceV2:0"});
    CHECK(floats(r[0]) == std::vector<float>{2.f, 4.f, 8.f});
}

TEST_CASE("a TF1 parameter-server graph runs in one process and `graft inspect` reports its devices") {
    auto g = graft::tf::parse_graph_def(graft::tf::from_text(ps_graph_text, graft::tf::file_format::graph_def), "ps.pbtxt");
    graft::exec::session s{g};
    s.run({}, {}, {"w/Assign"});
    auto r = s.run({{"x:0", tensor::from_vector<float>({2}, {1.f, -1.f})}}, {"out:0"});
    CHECK(floats(r[0]) == std::vector<float>{12.f, 17.f});  // x * w + b: job/task ignored, GPU:0 soft-placed

    auto dir = graft::test::scratch("collective_ps_graph");
    const auto path = (dir / "ps.pbtxt").string();
    {
        std::ofstream f(path);
        f << ps_graph_text;
    }
    std::string out;
    REQUIRE(graft::test::run_cli("inspect " + path, out) == 0);
    CHECK(has(out, "devices:   5 distinct"));
    CHECK(has(out, "4\t/job:ps/replica:0/task:0/device:CPU:0"));
    CHECK(has(out, "2\t/job:worker/replica:0/task:0/device:GPU:0"));
    CHECK(has(out, "1\t/job:ps/task:1"));
    CHECK(has(out, "1\t(none)"));
    CHECK(has(out, "written for a distributed job: ps (tasks 0, 1), worker (tasks 0, 1); graft runs it in one process"));
    REQUIRE(graft::test::run_cli("inspect --json " + path, out) == 0);
    CHECK(has(out, "\"devices\":{\"\":1,\"/job:ps/replica:0/task:0/device:CPU:0\":4,\"/job:ps/task:1\":1,"));
    CHECK(has(out, "\"distributed_jobs\":{\"ps\":[0,1],\"worker\":[0,1]}"));
}

#if defined(GRAFT_MPIEXEC)
TEST_CASE("`mpirun -np 2 graft run` runs a graph's CollectiveReduceV2 and HorovodAllreduce across the ranks") {
    auto dir = graft::test::scratch("collective_graft_run");
    const auto path = (dir / "allreduce.pbtxt").string();
    {
        std::ofstream f(path);
        f << R"PB(
node { name: "x" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } } float_val: 2 float_val: 4 float_val: 8 } } } }
node { name: "group_size" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 2 } } } }
node { name: "key" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }
node { name: "sum" op: "CollectiveReduceV2" input: "x" input: "group_size" input: "key" input: "key"
  attr { key: "T" value { type: DT_FLOAT } } attr { key: "merge_op" value { s: "Add" } }
  attr { key: "final_op" value { s: "Id" } } }
node { name: "hvd" op: "HorovodAllreduce" input: "x"
  attr { key: "T" value { type: DT_FLOAT } } attr { key: "reduce_op" value { i: 0 } }
  attr { key: "prescale_factor" value { f: 3 } } attr { key: "postscale_factor" value { f: 1 } } }
)PB";
    }
    std::string out;
    const int code = graft::test::run_command(std::string("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -s KILL 120 ") +
                                                  GRAFT_MPIEXEC + " --oversubscribe -np 2 " + GRAFT_CLI + " run " + path +
                                                  " --fetch sum:0 hvd:0",
                                              out);
    INFO(out);
    CHECK(code == 0);
    // Both ranks print the sum over 2 ranks, and Horovod's average of 3x.
    auto count = [&](const std::string& s) {
        int n = 0;
        for (auto p = out.find(s); p != std::string::npos; p = out.find(s, p + 1)) ++n;
        return n;
    };
    CHECK(count("[4 8 16]") == 2);
    CHECK(count("[6 12 24]") == 2);
}
#endif

}  // namespace graft_test_collective_ops
