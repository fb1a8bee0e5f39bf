// The graph IR on its own: endpoints, attrs, op specs and the registry, graph editing, consumers,
// topological order, names and scopes.
#include <doctest/doctest.h>

#include <stdexcept>

#include "graft/graph/graph.hpp"
#include "graft/graph/inline.hpp"

using graft::attr_value;
using graft::dtype;
using graft::endpoint;

TEST_CASE("endpoint: TF's tensor-name grammar") {
    CHECK(endpoint::parse("x") == endpoint{"x", 0});
    CHECK(endpoint::parse("dense/MatMul:2") == endpoint{"dense/MatMul", 2});
    CHECK(endpoint{"x", 0}.str() == "x:0");
    CHECK(endpoint{"x", 0}.input_str() == "x");
    CHECK(endpoint{"x", 3}.input_str() == "x:3");
    CHECK_THROWS_AS(endpoint::parse("^x"), graft::invalid_argument_error);
    CHECK_THROWS_AS(endpoint::parse(""), graft::invalid_argument_error);
    CHECK_THROWS_AS(endpoint::parse("x:99999999999"), graft::invalid_argument_error);
    // function-body references keep their spelling
    endpoint f;
    REQUIRE(endpoint::try_split("Identity:output:0", f));
    CHECK(f.node == "Identity:output");
    CHECK(f.input_str() == "Identity:output:0");
    auto r = graft::split_function_ref(f);
    CHECK(r.node == "Identity");
    CHECK(r.output_arg == "output");
    CHECK(r.index == 0);
}

TEST_CASE("attrs: kinds, typed access, order, equality") {
    graft::attr_map m;
    m.set("T", dtype::float32);
    m.set("strides", attr_value::list_of(std::vector<std::int64_t>{1, 2, 2, 1}));
    m.set("padding", "SAME");
    m.set("alpha", 0.2f);
    m.set("shape", graft::shape{-1, 784});
    m.set("f", graft::func_attr{"fn", {}});
    m.set("Tin", attr_value::empty_list());
    CHECK(m.size() == 7);
    std::vector<std::string> names;
    for (auto& [k, v] : m) names.push_back(k);
    CHECK(names == std::vector<std::string>{"T", "Tin", "alpha", "f", "padding", "shape", "strides"});
    CHECK(m.at("T").type() == dtype::float32);
    CHECK(m.at("strides").list_of<std::int64_t>()[1] == 2);
    CHECK(m.at("strides").type_name() == "list(int)");
    CHECK(m.at("strides").str() == "[1,2,2,1]");
    CHECK(m.at("Tin").list_of<dtype>().empty());
    CHECK(m.at("Tin").matches_type("list(type)"));
    CHECK(m.at("shape").shape().str() == "[?,784]");
    CHECK(m.at("f").func().name == "fn");
    CHECK_THROWS_AS((void)m.at("padding").i(), graft::graph_error);
    CHECK_THROWS_AS((void)m.at("nope"), graft::not_found_error);
    auto copy = m;
    CHECK(copy == m);
    copy.set("alpha", 0.3f);
    CHECK(!(copy == m));
    CHECK(m.erase("alpha"));
    CHECK(!m.contains("alpha"));
    // tensors: built from a graft::tensor, encoded on demand, decoded back
    graft::tensor t = graft::tensor::from_vector<std::int64_t>({2}, {7, -8});
    attr_value tv(t);
    auto back = graft::tensor_value::from_proto(tv.tensor().proto_bytes()).tensor();
    CHECK(back.describe() == "int64[2]");
    CHECK(back.data<std::int64_t>()[1] == -8);
    CHECK(graft::tensor_value::from_proto(tv.tensor().proto_bytes()) == tv.tensor());
    // strings and shapes sit behind pointers: equality is by value, and a value is 24 bytes
    CHECK(attr_value(std::string("SAME")) == attr_value("SAME"));
    CHECK(!(attr_value("SAME") == attr_value("VALID")));
    CHECK(attr_value(graft::shape{2, 3}) == attr_value(graft::shape{2, 3}));
    CHECK(!(attr_value(graft::shape{2, 3}) == attr_value(graft::shape{3, 2})));
    CHECK(attr_value::make_placeholder("T") == attr_value::make_placeholder("T"));
    CHECK(!(attr_value::make_placeholder("T") == attr_value("T")));
    static_assert(sizeof(attr_value) <= 24);
}

TEST_CASE("compact_string: one pointer while empty, any bytes when set") {
    static_assert(sizeof(graft::compact_string) == sizeof(void*));
    graft::compact_string s;
    CHECK(s.empty());
    CHECK(s.size() == 0);
    CHECK(std::string(s.c_str()).empty());
    s = "/device:GPU:0";
    CHECK(s == "/device:GPU:0");
    CHECK(s.size() == 13);
    CHECK(s.view() == std::string_view("/device:GPU:0"));
    auto copy = s;
    CHECK(copy == s);
    auto moved = std::move(copy);
    CHECK(moved == "/device:GPU:0");
    CHECK(copy.empty());  // NOLINT: a moved-from compact_string is empty by contract
    const std::string with_nul("a\0b", 3);
    graft::compact_string bytes(with_nul);
    CHECK(bytes.size() == 3);
    CHECK(bytes.str() == with_nul);
    s = std::string_view();
    CHECK(s.empty());
    graft::node n("x", "NoOp");
    n.device = "/device:CPU:0";
    graft::node m = n;
    CHECK(m == n);
    m.device.clear();
    CHECK(!(m == n));
}

TEST_CASE("same_signature: what graft computes with, not docs or allowed values") {
    auto a = graft::op_def::parse("MatMul(a: T, b: T) -> (product: T); transpose_a: bool = false; transpose_b: bool = false; T: type");
    auto b = a;
    b.description = "Multiply the matrix a by the matrix b.";
    b.attrs[2].allowed_values = attr_value::list_of(std::vector<dtype>{dtype::float32, dtype::float64});
    std::swap(b.attrs[0], b.attrs[1]);  // attr order does not matter
    CHECK(graft::same_signature(a, b));
    auto c = a;
    c.attrs[0].default_value = attr_value(true);
    CHECK(!graft::same_signature(a, c));
    auto d = a;
    d.outputs[0].type_attr = "U";
    CHECK(!graft::same_signature(a, d));
    auto e = a;
    e.is_stateful = true;
    CHECK(!graft::same_signature(a, e));
    auto f = a;
    f.attrs.pop_back();
    CHECK(!graft::same_signature(a, f));
}

TEST_CASE("op specs and the registry: output counts and dtypes from attrs") {
    auto& r = graft::op_registry::global();
    graft::attr_map a;
    a.set("num_split", 3);
    a.set("T", dtype::float32);
    CHECK(r.num_outputs("Split", a) == 3);
    CHECK(r.output_dtypes("Split", a) == std::vector<dtype>(3, dtype::float32));
    a.set("num", 4);
    CHECK(r.num_outputs("Unpack", a) == 4);
    graft::attr_map bn;
    bn.set("T", dtype::float16);
    bn.set("U", dtype::float32);
    CHECK(r.num_outputs("FusedBatchNorm", bn) == 5);
    CHECK(r.num_outputs("FusedBatchNormV3", bn) == 6);  // y, batch_mean, batch_variance, reserve_space_1..3
    CHECK(r.output_dtypes("FusedBatchNormV3", bn)[0] == dtype::float16);
    CHECK(r.output_dtypes("FusedBatchNormV3", bn)[5] == dtype::float32);
    graft::attr_map idn;
    idn.set("T", attr_value::list_of(std::vector<dtype>{dtype::int32, dtype::string}));
    CHECK(r.output_dtypes("IdentityN", idn) == std::vector<dtype>{dtype::int32, dtype::string});
    graft::attr_map var;
    var.set("dtype", dtype::float32);
    var.set("shape", graft::shape{2});
    CHECK(r.output_dtypes("VariableV2", var)[0] == dtype(101));  // DT_FLOAT_REF
    CHECK(r.output_dtypes("VarHandleOp", var)[0] == dtype::resource);
    CHECK(r.output_dtypes("ReadVariableOp", var)[0] == dtype::float32);
    CHECK(r.num_outputs("AssignVariableOp", var) == 0);
    // defaults fill stripped attrs
    graft::attr_map shp;
    shp.set("T", dtype::float32);
    CHECK(r.output_dtypes("Shape", shp)[0] == dtype::int32);
    CHECK(r.output_dtypes("ArgMax", shp)[0] == dtype::int64);
    CHECK(r.output_range("Unique", shp, "idx") == std::pair<int, int>{1, 2});
    // a missing required attr is named
    CHECK_THROWS_WITH_AS((void)r.num_outputs("Split", graft::attr_map{}, "s"), doctest::Contains("num_split"),
                         graft::graph_error);
    // every op the executor will run is known
    for (const char* op : {"Const", "Placeholder", "PlaceholderWithDefault", "Identity", "IdentityN", "NoOp",
                           "StopGradient", "PreventGradient", "Shape", "ShapeN", "Size", "Rank", "Reshape", "Squeeze",
                           "ExpandDims", "Transpose", "ConcatV2", "Pack", "Unpack", "Slice", "StridedSlice", "Split",
                           "SplitV", "Tile", "Fill", "ZerosLike", "OnesLike", "Range", "Cast", "Pad", "PadV2",
                           "MirrorPad", "GatherV2", "OneHot", "Select", "SelectV2", "Where", "AddN", "BiasAdd",
                           "MatMul", "BatchMatMulV2", "Conv2D", "DepthwiseConv2dNative", "Conv2DBackpropInput",
                           "Conv2DBackpropFilter", "MaxPool", "AvgPool", "FusedBatchNorm", "FusedBatchNormV2",
                           "FusedBatchNormV3", "FusedBatchNormGradV3", "Softmax", "LogSoftmax",
                           "SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits", "Sum", "Mean",
                           "Max", "Min", "Prod", "ArgMax", "ArgMin", "L2Loss", "RandomUniform", "RandomStandardNormal",
                           "TruncatedNormal", "BroadcastGradientArgs", "DynamicStitch", "ReluGrad", "MaxPoolGrad",
                           "ApplyGradientDescent", "ApplyAdam", "ResourceApplyAdam", "VariableV2", "Variable",
                           "Assign", "AssignAdd", "AssignSub", "VarHandleOp", "ReadVariableOp", "AssignVariableOp",
                           "AssignAddVariableOp", "AssignSubVariableOp", "VarIsInitializedOp", "Switch", "Merge",
                           "Enter", "Exit", "NextIteration", "LoopCond", "SaveV2", "RestoreV2", "MergeV2Checkpoints",
                           "Save", "Restore", "RestoreSlice", "ShardedFilename", "StringJoin", "PartitionedCall",
                           "StatefulPartitionedCall", "Add", "AddV2", "Mul", "Sqrt", "Relu", "Sigmoid", "Equal"}) {
        CHECK_MESSAGE(r.contains(op), op);
    }
    // users register ops; a graph's registry overlays the global one
    graft::op_registry mine(&r);
    mine.add("MyOp(x: T, y: int32) -> (a: T, b: N * int64); T: type = float; N: int >= 0");
    graft::attr_map my;
    my.set("N", 2);
    CHECK(mine.output_dtypes("MyOp", my) == std::vector<dtype>{dtype::float32, dtype::int64, dtype::int64});
    CHECK(mine.contains("MatMul"));
    CHECK(!r.contains("MyOp"));
    CHECK_THROWS_AS(graft::op_def::parse("Bad(x: NotAType) -> (y: float)"), graft::invalid_argument_error);
}

TEST_CASE("graph: add, find, at, remove, rename, consumers, order, names, scopes") {
    graft::graph g;
    g.add_node({"x", "Placeholder"}).attrs.set("dtype", dtype::float32);
    g.add_node({"y", "Identity", {{"x", 0}}}).attrs.set("T", dtype::float32);
    auto& z = g.add_node({"z", "AddV2", {{"x", 0}, {"y", 0}}});
    z.attrs.set("T", dtype::float32);
    z.add_control_input("y");
    CHECK(g.size() == 3);
    CHECK(g.find("y") != nullptr);
    CHECK(g.find("nope") == nullptr);
    CHECK_THROWS_WITH_AS((void)g.at("yy"), doctest::Contains("close names: y"), graft::not_found_error);
    CHECK(g.consumers({"x", 0}).size() == 2);
    CHECK(g.consumers({"y", 0})[0].consumer->name == "z");
    CHECK(g.consumers({"y", 0})[0].input == 1);
    CHECK(g.control_consumers("y").size() == 1);
    std::vector<std::string> order;
    for (auto* n : g.topological_order()) order.push_back(n->name);
    CHECK(order == std::vector<std::string>{"x", "y", "z"});
    std::vector<std::string> insertion;
    for (const auto& n : g) insertion.push_back(n.name);
    CHECK(insertion == std::vector<std::string>{"x", "y", "z"});

    g.rename("y", "y2");
    CHECK(g.at("z").inputs[1] == endpoint{"y2", 0});
    CHECK(g.at("z").control_inputs[0] == "y2");
    CHECK(g.consumers({"y2", 0}).size() == 1);

    CHECK(g.unique_name("z") == "z_1");
    CHECK(g.unique_name("z") == "z_2");
    CHECK(g.unique_name("w") == "w");
    auto s = g.with_scope("block");
    CHECK(s.prefix() == "block");
    CHECK(s.add_node({"conv", "NoOp"}).name == "block/conv");
    CHECK(s.add_node({"conv", "NoOp"}).name == "block/conv_1");
    CHECK(g.with_scope("block").prefix() == "block_1");

    g.remove_node("block/conv");
    CHECK(!g.contains("block/conv"));
    CHECK(g.size() == 4);
    graft::graph copy = g;
    CHECK(copy == g);
    copy.at("z").device = "/device:GPU:0";
    CHECK(!(copy == g));

    // many nodes: the index stays consistent through removals
    graft::graph big;
    for (int i = 0; i < 5000; ++i) big.add_node({"n" + std::to_string(i), "NoOp"});
    big.remove_if([](const graft::node& n) { return n.name.size() == 4; });  // n100..n999
    CHECK(big.size() == 5000 - 900);
    for (int i = 0; i < 5000; ++i) {
        auto nm = "n" + std::to_string(i);
        CHECK((big.find(nm) != nullptr) == (nm.size() != 4));
    }
}

TEST_CASE("graph: add_node and add_node_with share their checks; a failed add changes nothing") {
    graft::graph g;
    auto& a = g.add_node({"a", "NoOp"});
    for (int kind = 0; kind < 4; ++kind) {
        CAPTURE(kind);
        switch (kind) {
            case 0: CHECK_THROWS_WITH_AS(g.add_node({"", "NoOp"}), doctest::Contains("without a name"), graft::graph_error); break;
            case 1: CHECK_THROWS_WITH_AS(g.add_node({"a", "NoOp"}), doctest::Contains("duplicate"), graft::graph_error); break;
            case 2:
                CHECK_THROWS_WITH_AS(g.add_node_with([](graft::node& n) { n.op = "NoOp"; }),
                                     doctest::Contains("without a name"), graft::graph_error);
                break;
            default:
                CHECK_THROWS_WITH_AS(g.add_node_with([](graft::node& n) { n.name = "a"; n.op = "Const"; }),
                                     doctest::Contains("node 'a' (op Const)"), graft::graph_error);
        }
        CHECK(g.size() == 1);
        CHECK(&g.at("a") == &a);
    }
    CHECK_THROWS_AS(g.add_node_with([](graft::node&) { throw std::runtime_error("fill failed"); }), std::runtime_error);
    // every failed add gave its chunk slot back: the next node sits right after `a`
    auto& b = g.add_node_with([](graft::node& n) { n.name = "b"; n.op = "NoOp"; });
    CHECK(&b == &a + 1);
    CHECK(g.size() == 2);
    std::vector<std::string> names;
    for (const auto& n : g) names.push_back(n.name);
    CHECK(names == std::vector<std::string>{"a", "b"});
}

TEST_CASE("graph: TF1 while loops may cycle through NextIteration") {
    graft::graph g;
    g.add_node({"init", "Const"});
    g.add_node({"enter", "Enter", {{"init", 0}}});
    g.add_node({"merge", "Merge", {{"enter", 0}, {"next", 0}}});
    g.add_node({"body", "Identity", {{"merge", 0}}});
    g.add_node({"next", "NextIteration", {{"body", 0}}});
    auto order = g.topological_order();
    CHECK(order.size() == 5);
    CHECK(order.front()->name == "init");
}

TEST_CASE("inline: a call with control inputs, nested calls and several outputs") {
    graft::graph g;
    graft::function_def inner;
    inner.signature = graft::op_def::parse("inner(a: float) -> (o: float)");
    graft::node neg("neg", "Neg", {{"a", 0}});
    neg.attrs.set("T", dtype::float32);
    inner.nodes.push_back(neg);
    inner.ret["o"] = "neg:y:0";
    g.add_function(inner);

    graft::function_def outer;
    outer.signature = graft::op_def::parse("outer(x: float, y: float) -> (s: float, d: float)");
    graft::node call("c", "inner", {{"x", 0}});
    outer.nodes.push_back(call);
    graft::node add("add", "AddV2", {{"c:o", 0}, {"y", 0}});
    add.attrs.set("T", dtype::float32);
    outer.nodes.push_back(add);
    graft::node k("k", "Const");
    k.attrs.set("dtype", dtype::float32);
    k.attrs.set("value", graft::tensor::scalar_of(2.0f));
    outer.nodes.push_back(k);
    outer.ret["s"] = "add:z:0";
    outer.ret["d"] = "k:output:0";
    outer.control_ret["side"] = "k";
    g.add_function(outer);

    g.add_node({"p", "Placeholder"}).attrs.set("dtype", dtype::float32);
    g.add_node({"q", "Placeholder"}).attrs.set("dtype", dtype::float32);
    g.add_node({"gate", "NoOp"});
    auto& pc = g.add_node({"call", "StatefulPartitionedCall", {{"p", 0}, {"q", 0}}});
    pc.attrs.set("f", graft::func_attr{"outer", {}});
    pc.attrs.set("Tin", attr_value::list_of(std::vector<dtype>{dtype::float32, dtype::float32}));
    pc.attrs.set("Tout", attr_value::list_of(std::vector<dtype>{dtype::float32, dtype::float32}));
    pc.add_control_input("gate");
    g.add_node({"use", "Identity", {{"call", 1}}}).attrs.set("T", dtype::float32);

    CHECK(graft::inline_functions(g) == 2);
    g.validate();
    const auto& out = g.at("call");
    CHECK(out.op == "IdentityN");
    CHECK(out.inputs == std::vector<endpoint>{{"call/add", 0}, {"call/k", 0}});
    CHECK(out.control_inputs == std::vector<std::string>{"call/k"});
    CHECK(g.at("call/add").inputs == std::vector<endpoint>{{"call/c", 0}, {"q", 0}});
    CHECK(g.at("call/c").op == "Identity");
    CHECK(g.at("call/c/neg").inputs[0] == endpoint{"p", 0});
    // the Const reads nothing from the body: it waits for the call's control input
    CHECK(g.at("call/k").control_inputs == std::vector<std::string>{"call/input_control_node"});
    CHECK(g.at("call/input_control_node").control_inputs == std::vector<std::string>{"gate"});
    CHECK(g.num_outputs(g.at("call")) == 2);
}
