// Every op of graft's conformance list run as a node through graft::exec::session: the kernel is
// registered under the TF name, reads its inputs in TF's order and its attrs under TF's names, and
// gives TF's figures (cited per case) or closed-form float64 values. The op library's own tests
// (tests/ops) cover shapes, dtypes and broadcasting in depth; this file checks the bindings.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/ops/elementwise_names.hpp"
#include "graft/ops/random.hpp"
#include "ops/array_testing.hpp"

using graft::attr_value;
using graft::dtype;
using graft::node;
using graft::shape;
using graft::tensor;
using namespace graft::test;

namespace {

using attrs = std::vector<std::pair<std::string, attr_value>>;
using ints = std::vector<std::int64_t>;

attr_value int_list(ints v) { return attr_value::list_of(std::move(v)); }

/// Builds a graph node by node: constants get fresh names; op nodes take inputs as "name" or
/// "name:i" and default T to the dtype of their first input when it is a constant.
struct graph_builder {
    graft::graph g;
    int n = 0;

    std::string c(const tensor& t) {
        std::string name = "c" + std::to_string(n++);
        node k(name, "Const");
        k.attrs.set("dtype", t.type());
        k.attrs.set("value", t);
        g.add_node(std::move(k));
        return name;
    }
    std::string op(const std::string& type, const std::vector<std::string>& inputs, const attrs& a = {},
                   std::string name = {}) {
        if (name.empty()) name = type + std::to_string(n++);
        node k(name, type);
        for (const auto& i : inputs) k.inputs.push_back(graft::endpoint::parse(i));
        for (const auto& [key, v] : a) k.attrs.set(key, v);
        if (!k.attr("T") && !inputs.empty()) {
            const node& first = g.at(k.inputs[0].node);
            if (first.op == "Const") k.attrs.set("T", first.attr_at("dtype").type());
        }
        g.add_node(std::move(k));
        return name;
    }
    /// Fetches of all outputs of node `name`.
    std::vector<std::string> outputs(const std::string& name) const {
        std::vector<std::string> f;
        for (int i = 0; i < g.at(name).num_outputs(); ++i) f.push_back(name + ":" + std::to_string(i));
        return f;
    }
};

/// Runs one node of type `op` on constant inputs and returns all its outputs. Runs the plan twice
/// and checks the runs agree: a kernel that wrote into a constant's buffer would change the second.
std::vector<tensor> run_op(const std::string& op, const std::vector<tensor>& inputs, const attrs& a = {}) {
    graph_builder b;
    std::vector<std::string> in;
    for (const auto& t : inputs) in.push_back(b.c(t));
    const std::string name = b.op(op, in, a, "op");
    graft::exec::session s(b.g);
    auto first = s.run({}, b.outputs(name));
    auto second = s.run({}, b.outputs(name));
    REQUIRE(first.size() == second.size());
    for (std::size_t i = 0; i < first.size(); ++i) CHECK_MESSAGE(graft::equal(first[i], second[i]), op << " output " << i);
    return first;
}

struct kernel_case {
    std::string op;
    std::vector<tensor> in;
    attrs a;
    std::vector<tensor> want;
    double tol = 0;
};

void check_cases(const std::vector<kernel_case>& cases) {
    for (const auto& k : cases) {
        CAPTURE(k.op);
        const auto got = run_op(k.op, k.in, k.a);
        REQUIRE(got.size() == k.want.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            CAPTURE(i);
            check_values(got[i], k.want[i], k.tol, k.tol);
        }
    }
}

tensor strings(const shape& s, const std::vector<std::string>& v) { return tensor::from_vector<std::string>(s, v); }

}  // namespace

TEST_CASE("every op of the conformance list has a kernel and an op def under its TF name") {
    const char* names[] = {
        "Const", "Placeholder", "PlaceholderWithDefault", "Identity", "IdentityN", "NoOp", "StopGradient",
        "PreventGradient", "Shape", "ShapeN", "Size", "Rank", "Reshape", "Squeeze", "ExpandDims", "Transpose",
        "ConcatV2", "Pack", "Unpack", "Slice", "StridedSlice", "Split", "SplitV", "Tile", "Fill", "ZerosLike",
        "OnesLike", "Range", "Cast", "Pad", "PadV2", "MirrorPad", "GatherV2", "OneHot", "Select", "SelectV2",
        "Where", "Neg", "Abs", "Sign", "Square", "Sqrt", "Rsqrt", "Reciprocal", "Exp", "Log", "Log1p", "Tanh",
        "Sigmoid", "Relu", "Relu6", "Elu", "Selu", "Softplus", "LeakyRelu", "Floor", "Ceil", "Round", "Sin", "Cos",
        "Erf", "LogicalNot", "Add", "AddV2", "Sub", "Mul", "Div", "RealDiv", "FloorDiv", "FloorMod", "Maximum",
        "Minimum", "Pow", "SquaredDifference", "Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual",
        "LogicalAnd", "LogicalOr", "AddN", "BiasAdd", "MatMul", "BatchMatMulV2", "Conv2D", "DepthwiseConv2dNative",
        "Conv2DBackpropInput", "MaxPool", "AvgPool", "FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3",
        "Softmax", "LogSoftmax", "SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits", "Sum",
        "Mean", "Max", "Min", "Prod", "ArgMax", "ArgMin", "L2Loss", "RandomUniform", "RandomStandardNormal",
        "TruncatedNormal", "RandomUniformInt", "BroadcastGradientArgs", "DynamicStitch", "ReluGrad", "Relu6Grad",
        "SigmoidGrad", "TanhGrad", "RsqrtGrad", "SqrtGrad", "BiasAddGrad", "Conv2DBackpropFilter", "MaxPoolGrad",
        "AvgPoolGrad", "FusedBatchNormGradV3", "ApplyGradientDescent", "ApplyMomentum", "ApplyAdam", "ApplyRMSProp",
        "ApplyAdagrad", "ResourceApplyGradientDescent", "ResourceApplyMomentum", "ResourceApplyAdam",
        "ResourceApplyRMSProp", "ResourceApplyAdagrad",
    };
    for (const char* op : names) {
        CHECK_MESSAGE(graft::exec::kernel_registry::global().find(op) != nullptr, "no kernel for " << op);
        CHECK_MESSAGE(graft::op_registry::global().find(op) != nullptr, "no op def for " << op);
    }
}

TEST_CASE("Identity, StopGradient, PreventGradient, IdentityN, PlaceholderWithDefault pass values through") {
    const tensor f = make(dtype::float32, {2, 2}, {1.5, -2, 0, 7});
    const tensor i = make(dtype::int64, {3}, {4, 5, 6});
    const tensor s = strings({2}, {"a", "bc"});
    for (const char* op : {"Identity", "StopGradient", "PreventGradient"}) {
        CAPTURE(op);
        check_values(run_op(op, {f})[0], f);
        check_values(run_op(op, {i})[0], i);
        CHECK(run_op(op, {s})[0].data<std::string>()[1] == "bc");
    }
    const auto n = run_op("IdentityN", {f, i}, {{"T", attr_value::list_of(std::vector<dtype>{dtype::float32, dtype::int64})}});
    REQUIRE(n.size() == 2);
    check_values(n[0], f);
    check_values(n[1], i);

    // PlaceholderWithDefault: the default unless fed.
    graph_builder b;
    const std::string d = b.c(f);
    b.op("PlaceholderWithDefault", {d}, {{"dtype", dtype::float32}, {"shape", shape{2, 2}}}, "p");
    graft::exec::session sess(b.g);
    check_values(sess.run({}, {"p:0"})[0], f);
    const tensor fed = make(dtype::float32, {2, 2}, {9, 8, 7, 6});
    check_values(sess.run({{"p:0", fed}}, {"p:0"})[0], fed);
    // Placeholder: the fed value.
    graph_builder b2;
    node ph("x", "Placeholder");
    ph.attrs.set("dtype", dtype::int64);
    b2.g.add_node(std::move(ph));
    b2.op("Identity", {"x"}, {{"T", dtype::int64}}, "y");
    graft::exec::session s2(b2.g);
    check_values(s2.run({{"x", i}}, {"y"})[0], i);
}

TEST_CASE("NoOp groups updates through control inputs (tf.group) and runs as a target") {
    graph_builder b;
    for (const char* v : {"u", "w"}) {
        node var(v, "VariableV2");
        var.attrs.set("dtype", dtype::float32);
        var.attrs.set("shape", shape{2});
        b.g.add_node(std::move(var));
        b.op("Assign", {v, b.c(make(dtype::float32, {2}, {1, 2}))}, {{"T", dtype::float32}}, std::string(v) + "/Assign");
        b.op("AssignAdd", {v, b.c(make(dtype::float32, {2}, {10, 20}))}, {{"T", dtype::float32}},
             std::string(v) + "/AssignAdd");
    }
    node init("init", "NoOp"), train("train", "NoOp");
    init.control_inputs = {"u/Assign", "w/Assign"};
    train.control_inputs = {"u/AssignAdd", "w/AssignAdd"};
    b.g.add_node(std::move(init));
    b.g.add_node(std::move(train));
    graft::exec::session s(b.g);
    CHECK(s.run({}, {}, {"init"}).empty());
    s.run({}, {}, {"train"});
    s.run({}, {}, {"train"});
    check_values(s.variable_value("u"), dtype::float32, shape{2}, {21, 42});
    check_values(s.variable_value("w"), dtype::float32, shape{2}, {21, 42});
}

TEST_CASE("Shape, ShapeN, Size, Rank read out_type and N") {
    const tensor x(dtype::float32, {2, 0, 3}), y(dtype::int32, {4, 5});
    check_values(run_op("Shape", {x})[0], dtype::int32, shape{3}, {2, 0, 3});
    check_values(run_op("Shape", {x}, {{"out_type", dtype::int64}})[0], dtype::int64, shape{3}, {2, 0, 3});
    const auto sn = run_op("ShapeN", {x, y}, {{"N", 2}, {"out_type", dtype::int64}});
    REQUIRE(sn.size() == 2);
    check_values(sn[0], dtype::int64, shape{3}, {2, 0, 3});
    check_values(sn[1], dtype::int64, shape{2}, {4, 5});
    check_values(run_op("Size", {y})[0], dtype::int32, shape{}, {20});
    check_values(run_op("Size", {x}, {{"out_type", dtype::int64}})[0], dtype::int64, shape{}, {0});
    check_values(run_op("Rank", {x})[0], dtype::int32, shape{}, {3});
    check_values(run_op("Rank", {tensor::scalar_of(1.0)})[0], dtype::int32, shape{}, {0});
}

TEST_CASE("Where, DynamicStitch and BroadcastGradientArgs give TF's figures through the executor") {
    // tensorflow/python/kernel_tests/array_ops/where_op_test.py _testBasic3Tensor.
    check_values(run_op("Where", {bools({3, 2, 2}, {1, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 1})})[0], dtype::int64,
                 shape{5, 3}, {0, 0, 0, 0, 1, 0, 1, 0, 1, 1, 1, 1, 2, 1, 1});
    check_values(run_op("Where", {make(dtype::float32, {2, 3}, {0, -1.5, 0, 0, 0, 2})})[0], dtype::int64, shape{2, 2},
                 {0, 1, 1, 2});
    // tensorflow/python/kernel_tests/data_structures/dynamic_stitch_op_test.py testSimpleOneDimensional
    // and testSimpleTwoDimensional (indices first, then data; N = number of pairs).
    check_values(run_op("DynamicStitch",
                        {i32({3}, {0, 4, 7}), i32({5}, {1, 6, 2, 3, 5}), f32({3}, {0, 40, 70}),
                         f32({5}, {10, 60, 20, 30, 50})},
                        {{"N", 2}, {"T", dtype::float32}})[0],
                 dtype::float32, shape{8}, {0, 10, 20, 30, 40, 50, 60, 70});
    check_values(run_op("DynamicStitch",
                        {i32({3}, {0, 4, 7}), i32({2}, {1, 6}), i32({3}, {2, 3, 5}), i32({3, 2}, {0, 1, 40, 41, 70, 71}),
                         i32({2, 2}, {10, 11, 60, 61}), i32({3, 2}, {20, 21, 30, 31, 50, 51})},
                        {{"N", 3}})[0],
                 dtype::int32, shape{8, 2}, {0, 1, 10, 11, 20, 21, 30, 31, 40, 41, 50, 51, 60, 61, 70, 71});
    // tensorflow/python/kernel_tests/array_ops/bcast_ops_test.py testBasicGradient.
    struct row {
        std::vector<double> a, b, r0, r1;
    };
    const row rows[] = {{{2, 3, 5}, {1}, {}, {0, 1, 2}},
                        {{2, 3, 5}, {3, 1}, {}, {0, 2}},
                        {{2, 1, 5}, {3, 1}, {1}, {0, 2}},
                        {{3, 1}, {2, 1, 5}, {0, 2}, {1}}};
    for (dtype t : {dtype::int32, dtype::int64})
        for (const auto& r : rows) {
            const auto out = run_op("BroadcastGradientArgs",
                                    {make(t, {static_cast<std::int64_t>(r.a.size())}, r.a),
                                     make(t, {static_cast<std::int64_t>(r.b.size())}, r.b)});
            REQUIRE(out.size() == 2);
            check_values(out[0], t, shape{static_cast<std::int64_t>(r.r0.size())}, r.r0);
            check_values(out[1], t, shape{static_cast<std::int64_t>(r.r1.size())}, r.r1);
        }
}

TEST_CASE("shape, slicing, joining and filling kernels read TF's input order and attrs") {
    const tensor x23 = iota(dtype::float32, {2, 3});
    const tensor x24 = iota(dtype::float32, {2, 4});
    // tensorflow/python/kernel_tests/array_ops/array_ops_test.py: REF_TENSOR = arange(1, 19).reshape(3, 2, 3).
    const tensor ref = iota(dtype::float32, {3, 2, 3}, 1);
    const tensor pad_a = i32({3, 2}, {3, 3, 4, 4, 5, 5}), mirror_b = f32({2, 3}, {0, 1, 2, 3, 4, 9});
    check_cases({
        {"Reshape", {x23, i32({2}, {3, -1})}, {}, {f32({3, 2}, {0, 1, 2, 3, 4, 5})}},
        {"Squeeze", {iota(dtype::float32, {1, 2, 1, 3})}, {{"squeeze_dims", int_list({2})}}, {f32({1, 2, 3}, {0, 1, 2, 3, 4, 5})}},
        {"Squeeze", {iota(dtype::float32, {1, 2, 1, 3})}, {}, {x23}},
        {"ExpandDims", {f32({2}, {1, 2}), i32({}, {-1})}, {}, {f32({2, 1}, {1, 2})}},
        {"Transpose", {x23, i32({2}, {1, 0})}, {}, {f32({3, 2}, {0, 3, 1, 4, 2, 5})}},
        {"ConcatV2", {f32({2, 2}, {1, 2, 3, 4}), f32({2, 1}, {5, 6}), i32({}, {1})}, {{"N", 2}},
         {f32({2, 3}, {1, 2, 5, 3, 4, 6})}},
        {"ConcatV2", {f32({1, 2}, {1, 2}), f32({2, 2}, {3, 4, 5, 6}), i64({}, {-2})}, {{"N", 2}},
         {f32({3, 2}, {1, 2, 3, 4, 5, 6})}},
        {"Pack", {f32({2}, {1, 2}), f32({2}, {3, 4})}, {{"N", 2}, {"axis", 1}}, {f32({2, 2}, {1, 3, 2, 4})}},
        {"Unpack", {x23}, {{"num", 3}, {"axis", 1}}, {f32({2}, {0, 3}), f32({2}, {1, 4}), f32({2}, {2, 5})}},
        {"Unpack", {x23}, {{"num", 2}}, {f32({3}, {0, 1, 2}), f32({3}, {3, 4, 5})}},
        {"Slice", {iota(dtype::float32, {3, 4}), i32({2}, {1, 1}), i32({2}, {2, -1})}, {}, {f32({2, 3}, {5, 6, 7, 9, 10, 11})}},
        // ref[1, :, ::-1]: shrink dim 0, full dim 1 (begin/end masks), reversed dim 2.
        {"StridedSlice", {ref, i32({3}, {1, 0, 0}), i32({3}, {2, 0, 0}), i32({3}, {1, 1, -1})},
         {{"begin_mask", 6}, {"end_mask", 6}, {"shrink_axis_mask", 1}, {"Index", dtype::int32}},
         {f32({2, 3}, {9, 8, 7, 12, 11, 10})}},
        // ref[..., tf.newaxis, 0]: ellipsis, new axis, shrink.
        {"StridedSlice", {ref, i32({3}, {0, 0, 0}), i32({3}, {0, 0, 1}), i32({3}, {1, 1, 1})},
         {{"ellipsis_mask", 1}, {"new_axis_mask", 2}, {"shrink_axis_mask", 4}},
         {f32({3, 2, 1}, {1, 4, 7, 10, 13, 16})}},
        // ref[-1:0:-1, 1:, ::2] in int64 indices.
        {"StridedSlice", {ref, i64({3}, {-1, 1, 0}), i64({3}, {0, 2, 0}), i64({3}, {-1, 1, 2})}, {{"end_mask", 4}},
         {f32({2, 1, 2}, {16, 18, 10, 12})}},
        // Split(split_dim, value): the axis comes first.
        {"Split", {i32({}, {1}), x24}, {{"num_split", 2}}, {f32({2, 2}, {0, 1, 4, 5}), f32({2, 2}, {2, 3, 6, 7})}},
        {"Split", {i32({}, {0}), x24}, {{"num_split", 2}}, {f32({1, 4}, {0, 1, 2, 3}), f32({1, 4}, {4, 5, 6, 7})}},
        // SplitV(value, size_splits, split_dim).
        {"SplitV", {x24, i32({2}, {1, -1}), i32({}, {1})}, {{"num_split", 2}},
         {f32({2, 1}, {0, 4}), f32({2, 3}, {1, 2, 3, 5, 6, 7})}},
        {"Tile", {f32({2}, {1, 2}), i32({1}, {2})}, {}, {f32({4}, {1, 2, 1, 2})}},
        {"Tile", {f32({1, 2}, {1, 2}), i64({2}, {2, 1})}, {}, {f32({2, 2}, {1, 2, 1, 2})}},
        {"Fill", {i32({2}, {2, 2}), f32({}, {1.5})}, {{"T", dtype::float32}}, {f32({2, 2}, {1.5, 1.5, 1.5, 1.5})}},
        {"ZerosLike", {i64({2}, {5, 6})}, {}, {i64({2}, {0, 0})}},
        {"OnesLike", {f32({3}, {5, 6, 7})}, {}, {f32({3}, {1, 1, 1})}},
        // tensorflow/python/kernel_tests/array_ops/init_ops_test.py RangeTest.testBasic.
        {"Range", {i32({}, {13}), i32({}, {32}), i32({}, {7})}, {{"Tidx", dtype::int32}}, {i32({3}, {13, 20, 27})}},
        {"Range", {f32({}, {0}), f32({}, {2}), f32({}, {0.5})}, {{"Tidx", dtype::float32}}, {f32({4}, {0, 0.5, 1, 1.5})}},
        {"Cast", {f32({3}, {2.7, -2.7, 0.5})}, {{"SrcT", dtype::float32}, {"DstT", dtype::int32}}, {i32({3}, {2, -2, 0})}},
        {"Cast", {i64({2}, {0, 3})}, {{"SrcT", dtype::int64}, {"DstT", dtype::bool_}}, {bools({2}, {0, 1})}},
        // tensorflow/python/kernel_tests/array_ops/pad_op_test.py testNpPad.
        {"Pad", {pad_a, i32({2, 2}, {1, 2, 1, 3})}, {},
         {i32({6, 6}, {0, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 0, 0, 4, 4, 0, 0, 0,
                       0, 5, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})}},
        {"PadV2", {pad_a, i64({2, 2}, {1, 2, 1, 3}), i32({}, {1})}, {{"Tpaddings", dtype::int64}},
         {i32({6, 6}, {1, 1, 1, 1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 4, 4, 1, 1, 1,
                       1, 5, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})}},
        {"MirrorPad", {mirror_b, i32({2, 2}, {1, 1, 1, 2})}, {{"mode", "REFLECT"}},
         {f32({4, 6}, {4, 3, 4, 9, 4, 3, 1, 0, 1, 2, 1, 0, 4, 3, 4, 9, 4, 3, 1, 0, 1, 2, 1, 0})}},
        {"MirrorPad", {mirror_b, i32({2, 2}, {1, 1, 1, 2})}, {{"mode", "SYMMETRIC"}},
         {f32({4, 6}, {0, 0, 1, 2, 2, 1, 0, 0, 1, 2, 2, 1, 3, 3, 4, 9, 9, 4, 3, 3, 4, 9, 9, 4})}},
        // tensorflow/python/kernel_tests/array_ops/gather_op_test.py testScalar1D; then batch_dims 1.
        {"GatherV2", {i64({6}, {0, 1, 2, 3, 7, 5}), i32({}, {4}), i32({}, {0})}, {}, {i64({}, {7})}},
        {"GatherV2", {iota(dtype::int32, {2, 3}), i64({2}, {2, 0}), i64({}, {1})}, {}, {i32({2, 2}, {2, 0, 5, 3})}},
        {"GatherV2", {iota(dtype::int32, {2, 3, 4}), i32({2, 2}, {2, 0, 1, 1}), i32({}, {1})}, {{"batch_dims", 1}},
         {i32({2, 2, 4}, {8, 9, 10, 11, 0, 1, 2, 3, 16, 17, 18, 19, 16, 17, 18, 19})}},
        // tensorflow/python/kernel_tests/array_ops/one_hot_op_test.py _testBasic (axis -1 and 0).
        {"OneHot", {i64({4}, {0, 2, -1, 1}), i32({}, {3}), f32({}, {1}), f32({}, {-1})}, {{"TI", dtype::int64}},
         {f32({4, 3}, {1, -1, -1, -1, -1, 1, -1, -1, -1, -1, 1, -1})}},
        {"OneHot", {i64({4}, {0, 2, -1, 1}), i32({}, {3}), f32({}, {1}), f32({}, {-1})}, {{"axis", 0}},
         {f32({3, 4}, {1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1})}},
        // tensorflow/python/kernel_tests/array_ops/where_op_test.py _testThreeArgument:
        // x = [[-2, 3, -1], [1, -3, -3]], where(x > 0, x * x, -x).
        {"Select", {bools({2, 3}, {0, 1, 0, 1, 0, 0}), i32({2, 3}, {4, 9, 1, 1, 9, 9}), i32({2, 3}, {2, -3, 1, -1, 3, 3})},
         {{"T", dtype::int32}}, {i32({2, 3}, {2, 9, 1, 1, 3, 3})}},
        {"Select", {bools({2}, {0, 1}), i32({2, 3}, {4, 9, 1, 1, 9, 9}), i32({2, 3}, {2, -3, 1, -1, 3, 3})},
         {{"T", dtype::int32}}, {i32({2, 3}, {2, -3, 1, 1, 9, 9})}},
        {"SelectV2", {bools({3, 1}, {1, 0, 0}), iota(dtype::float64, {3, 2}), f64({}, {-1})}, {{"T", dtype::float64}},
         {f64({3, 2}, {0, 1, -1, -1, -1, -1})}},
        {"AddN", {f32({2}, {1, 2}), f32({2}, {10, 20}), f32({2}, {100, 200})}, {{"N", 3}}, {f32({2}, {111, 222})}},
        {"BiasAdd", {f64({2, 2}, {1, 2, 3, 4}), f64({2}, {10, 20})}, {}, {f64({2, 2}, {11, 22, 13, 24})}},
        {"BiasAdd", {iota(dtype::float32, {1, 2, 1, 2}), f32({2}, {10, 20})}, {{"data_format", "NCHW"}},
         {f32({1, 2, 1, 2}, {10, 11, 22, 23})}},
        {"BiasAddV1", {f64({2, 2}, {1, 2, 3, 4}), f64({2}, {10, 20})}, {}, {f64({2, 2}, {11, 22, 13, 24})}},
        // BiasAddGrad on iota [2,3,2]: NHWC sums to 30 + 6c, NCHW (channel dim 1) to 14 + 8c.
        {"BiasAddGrad", {iota(dtype::float32, {2, 3, 2})}, {}, {f32({2}, {30, 36})}},
        {"BiasAddGrad", {iota(dtype::float32, {2, 3, 2})}, {{"data_format", "NCHW"}}, {f32({3}, {14, 22, 30})}},
        {"Sum", {x23, i32({1}, {1})}, {{"keep_dims", true}}, {f32({2, 1}, {3, 12})}},
        {"Sum", {x23, i64({}, {0})}, {{"Tidx", dtype::int64}}, {f32({3}, {3, 5, 7})}},
        {"Mean", {x23, i32({1}, {0})}, {}, {f32({3}, {1.5, 2.5, 3.5})}},
        {"Max", {x23, i32({1}, {-1})}, {}, {f32({2}, {2, 5})}},
        {"Min", {x23, i32({2}, {0, 1})}, {{"keep_dims", true}}, {f32({1, 1}, {0})}},
        {"Prod", {x23, i32({}, {1})}, {}, {f32({2}, {0, 60})}},
        {"ArgMax", {f32({2, 3}, {1, 5, 3, 9, 2, 9}), i32({}, {1})}, {{"output_type", dtype::int32}}, {i32({2}, {1, 0})}},
        {"ArgMin", {f32({2, 3}, {1, 5, 3, 9, 2, 9}), i32({}, {1})}, {}, {i64({2}, {0, 1})}},
        {"ArgMax", {f32({2, 3}, {1, 5, 3, 9, 2, 9}), i64({}, {0})}, {}, {i64({3}, {1, 0, 1})}},
        // tensorflow/python/ops/nn_test.py L2LossTest.testL2Loss.
        {"L2Loss", {f32({2, 2}, {1, 0, 3, 2})}, {}, {f32({}, {7})}},
    });
}

TEST_CASE("every unary and binary op by TF name gives the same in place as on a constant's buffer") {
    // x is negative, so Neg(x) (a fresh buffer the executor lets the next kernel overwrite) is
    // positive: inside every op's domain. Running twice also shows the constant stays intact. The
    // reference is the same op on constant inputs (run_op: never written in place); ops::unary and
    // ops::binary themselves are checked value by value in tests/ops (test_elementwise_*), and this
    // file includes only their names: their kernels would cost this binary 40 s of -O0 compile.
    const tensor x = make(dtype::float32, {2, 3}, noise(6, -2, -0.2, 3));
    const tensor row = make(dtype::float32, {3}, noise(3, 0.3, 1.7, 4));
    const tensor full = make(dtype::float32, {2, 3}, noise(6, 0.3, 1.7, 5));
    const tensor pos = run_op("Neg", {x})[0];
    CHECK(pos.data<float>()[0] == doctest::Approx(-x.data<float>()[0]));
    for (auto name : graft::ops::unary_op_names()) {
        const std::string op(name);
        if (op == "LogicalNot") continue;
        CAPTURE(op);
        graph_builder b;
        const std::string n = b.op("Neg", {b.c(x)});
        b.op(op, {n}, {{"T", dtype::float32}}, "y");
        graft::exec::session s(b.g);
        const tensor want = run_op(op, {pos}, {{"T", dtype::float32}})[0];
        check_values(s.run({}, {"y"})[0], want);
        check_values(s.run({}, {"y"})[0], want);
    }
    check_values(run_op("LogicalNot", {bools({3}, {1, 0, 1})})[0], bools({3}, {0, 1, 0}));
    check_values(run_op("LeakyRelu", {f32({4}, {-2, -0.5, 0, 3})}, {{"alpha", 0.1f}})[0], f32({4}, {-0.2, -0.05, 0, 3}),
                 1e-6, 1e-6);
    check_values(run_op("LeakyRelu", {f32({2}, {-2, 3})})[0], f32({2}, {-0.4, 3}), 1e-6, 1e-6);  // alpha default 0.2
    check_values(run_op("LeakyReluGrad", {f32({3}, {1, 2, 3}), f32({3}, {-1, 0.5, 2})}, {{"alpha", 0.3f}})[0],
                 f32({3}, {0.3, 2, 3}), 1e-6, 1e-6);
    for (auto name : graft::ops::binary_op_names()) {
        const std::string op(name);
        if (op == "LogicalAnd" || op == "LogicalOr" || op == "LeakyReluGrad") continue;
        CAPTURE(op);
        // [2,3] (fresh) with [3], then a scalar constant with [2,3] (fresh): both forwarding paths.
        // The activation gradients take two same-shaped inputs instead.
        const bool grad = op.size() > 4 && op.compare(op.size() - 4, 4, "Grad") == 0;
        const tensor other = grad ? full : row, scalar = grad ? full : f32({}, {1.25});
        graph_builder b;
        const std::string n = b.op("Neg", {b.c(x)});
        b.op(op, {n, b.c(other)}, {{"T", dtype::float32}}, "y");
        const std::string m = b.op("Neg", {b.c(x)});
        b.op(op, {b.c(scalar), m}, {{"T", dtype::float32}}, "z");
        graft::exec::session s(b.g);
        const tensor want_y = run_op(op, {pos, other}, {{"T", dtype::float32}})[0];
        const tensor want_z = run_op(op, {scalar, pos}, {{"T", dtype::float32}})[0];
        for (int run = 0; run < 2; ++run) {
            const auto got = s.run({}, {"y", "z"});
            check_values(got[0], want_y);
            check_values(got[1], want_z);
        }
    }
    check_values(run_op("LogicalAnd", {bools({2, 2}, {1, 1, 0, 0}), bools({2}, {1, 0})})[0], bools({2, 2}, {1, 0, 0, 0}));
    check_values(run_op("LogicalOr", {bools({2, 2}, {1, 1, 0, 0}), bools({2}, {1, 0})})[0], bools({2, 2}, {1, 1, 1, 0}));
    // Integer ops keep TF's integer semantics through the kernel.
    check_values(run_op("FloorDiv", {i32({4}, {7, -7, 7, -7}), i32({4}, {2, 2, -2, -2})})[0], i32({4}, {3, -4, -4, 3}));
    check_values(run_op("Div", {i32({4}, {7, -7, 7, -7}), i32({4}, {2, 2, -2, -2})})[0], i32({4}, {3, -3, -3, 3}));
    check_values(run_op("FloorMod", {i64({4}, {7, -7, 7, -7}), i64({}, {3})})[0], i64({4}, {1, 2, 1, 2}));
}

TEST_CASE("MatMul and BatchMatMulV2 read transpose_a/b and adj_x/y") {
    const tensor want = f32({2, 2}, {58, 64, 139, 154});
    const tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6}), at = f32({3, 2}, {1, 4, 2, 5, 3, 6});
    const tensor b = f32({3, 2}, {7, 8, 9, 10, 11, 12}), bt = f32({2, 3}, {7, 9, 11, 8, 10, 12});
    check_values(run_op("MatMul", {a, b})[0], want);
    check_values(run_op("MatMul", {at, b}, {{"transpose_a", true}})[0], want);
    check_values(run_op("MatMul", {a, bt}, {{"transpose_b", true}})[0], want);
    check_values(run_op("MatMul", {at, bt}, {{"transpose_a", true}, {"transpose_b", true}})[0], want);
    // [1,2,2] x [2,2,1] broadcasts the batch: [[1,2],[3,4]] times [1,2] and [2,0].
    const tensor want_b = f32({2, 2, 1}, {3, 7, 2, 6});
    check_values(run_op("BatchMatMulV2", {f32({1, 2, 2}, {1, 2, 3, 4}), f32({2, 2, 1}, {1, 1, 2, 0})})[0], want_b);
    check_values(run_op("BatchMatMulV2", {f32({1, 2, 2}, {1, 3, 2, 4}), f32({2, 1, 2}, {1, 1, 2, 0})},
                        {{"adj_x", true}, {"adj_y", true}})[0],
                 want_b);
    check_values(run_op("BatchMatMul", {f32({1, 2, 2}, {1, 2, 3, 4}), f32({1, 2, 1}, {1, 1})})[0], f32({1, 2, 1}, {3, 7}));
}

namespace {

/// Runs `op` on NHWC constants either directly or as NCHW between two Transpose nodes, so that the
/// kernel's data_format attr is exercised with the same expected NHWC figures. strides, ksize,
/// dilations and explicit_paddings are given in NHWC order and permuted for NCHW; `image_out`
/// says whether the output is an image to transpose back.
tensor run_layout(const std::string& op, const std::vector<tensor>& nhwc_inputs, std::vector<bool> is_image,
                  attrs a, bool nhwc, bool image_out = true) {
    const std::vector<std::string> four{"strides", "ksize", "dilations"};
    graph_builder b;
    std::vector<std::string> in;
    for (std::size_t i = 0; i < nhwc_inputs.size(); ++i) {
        std::string c = b.c(nhwc_inputs[i]);
        if (!nhwc && is_image[i]) c = b.op("Transpose", {c, b.c(i32({4}, {0, 3, 1, 2}))});
        in.push_back(c);
    }
    if (!nhwc) {
        for (auto& [k, v] : a) {
            for (const auto& f : four)
                if (k == f) {
                    const auto& l = v.list_of<std::int64_t>();
                    v = int_list({l[0], l[3], l[1], l[2]});
                }
            if (k == "explicit_paddings") {
                const auto& e = v.list_of<std::int64_t>();
                v = int_list({e[0], e[1], e[6], e[7], e[2], e[3], e[4], e[5]});
            }
        }
        a.emplace_back("data_format", "NCHW");
    }
    if (!std::any_of(a.begin(), a.end(), [](const auto& p) { return p.first == "T"; }))
        a.emplace_back("T", dtype::float32);
    std::string y = b.op(op, in, a);
    if (!nhwc && image_out) y = b.op("Transpose", {y, b.c(i32({4}, {0, 2, 3, 1}))});
    graft::exec::session s(b.g);
    return s.run({}, {y})[0];
}

tensor iota1(const shape& s) { return iota(dtype::float32, s, 1); }

}  // namespace

TEST_CASE("Conv2D, DepthwiseConv2dNative and the conv gradients read strides, padding, dilations, data_format") {
    for (bool nhwc : {true, false}) {
        CAPTURE(nhwc);
        // tensorflow/python/kernel_tests/nn_ops/conv_ops_test.py testConv2D2x2FilterStride2Same and
        // testConv2D1x2Filter (inputs and filters 1, 2, 3, ...).
        check_values(run_layout("Conv2D", {iota1({1, 2, 3, 3}), iota1({2, 2, 3, 3})}, {true, false},
                                {{"strides", int_list({1, 2, 2, 1})}, {"padding", "SAME"}}, nhwc),
                     f32({1, 1, 2, 3}, {2271, 2367, 2463, 1230, 1305, 1380}));
        check_values(run_layout("Conv2D", {iota1({1, 2, 3, 3}), iota1({1, 2, 3, 3})}, {true, false},
                                {{"strides", int_list({1, 1, 1, 1})}, {"padding", "VALID"}}, nhwc),
                     f32({1, 2, 2, 3}, {231, 252, 273, 384, 423, 462, 690, 765, 840, 843, 936, 1029}));
        // EXPLICIT padding equals Pad + VALID; a dilation-2 2x2 filter equals the 3x3 filter with
        // zeros between its taps (as conv_ops_test.py's explicit-padding and dilation tests check).
        const tensor x = make(dtype::float32, {1, 5, 6, 2}, noise(60, -1, 1, 5));
        const tensor f = make(dtype::float32, {2, 2, 2, 3}, noise(24, -1, 1, 6));
        std::vector<double> fd(3 * 3 * 2 * 3, 0.0);
        const auto fv = values(f);
        for (int ky = 0; ky < 2; ++ky)
            for (int kx = 0; kx < 2; ++kx)
                for (int k = 0; k < 6; ++k) fd[static_cast<std::size_t>(((ky * 2) * 3 + kx * 2) * 6 + k)] = fv[static_cast<std::size_t>((ky * 2 + kx) * 6 + k)];
        const tensor f_dilated = make(dtype::float32, {3, 3, 2, 3}, fd);
        graph_builder p;
        const std::string padded = p.op("Pad", {p.c(x), p.c(i32({4, 2}, {0, 0, 1, 2, 2, 0, 0, 0}))});
        p.op("Conv2D", {padded, p.c(f_dilated)},
             {{"strides", int_list({1, 1, 2, 1})}, {"padding", "VALID"}, {"T", dtype::float32}}, "y");
        const tensor want = graft::exec::session(p.g).run({}, {"y"})[0];
        check_values(run_layout("Conv2D", {x, f}, {true, false},
                                {{"strides", int_list({1, 1, 2, 1})},
                                 {"padding", "EXPLICIT"},
                                 {"explicit_paddings", int_list({0, 0, 1, 2, 2, 0, 0, 0})},
                                 {"dilations", int_list({1, 2, 2, 1})}},
                                nhwc),
                     want, 1e-5, 1e-5);
        // tensorflow/python/kernel_tests/nn_ops/depthwise_conv_op_base.py testConv2D2x2Filter.
        check_values(run_layout("DepthwiseConv2dNative", {iota1({1, 2, 3, 2}), iota1({2, 2, 2, 2})}, {true, false},
                                {{"strides", int_list({1, 1, 1, 1})}, {"padding", "VALID"}}, nhwc),
                     f32({1, 1, 2, 4}, {196, 216, 272, 296, 252, 280, 344, 376}));
        // conv_ops_test.py testConv2D2x2Depth3ValidBackpropFilter (input, filter_sizes, out_backprop).
        const tensor df = run_layout(
            "Conv2DBackpropFilter", {iota1({1, 2, 3, 3}), i32({4}, {2, 2, 3, 3}), iota1({1, 1, 2, 3})}, {true, false, true},
            {{"strides", int_list({1, 1, 1, 1})}, {"padding", "VALID"}}, nhwc, false);
        check_values(df, f32({2, 2, 3, 3}, {17, 22, 27, 22, 29, 36, 27, 36, 45, 32, 43, 54, 37, 50, 63, 42, 57, 72,
                                            62, 85, 108, 67, 92, 117, 72, 99, 126, 77, 106, 135, 82, 113, 144, 87, 120, 153}));
    }
    // conv_ops_test.py testConv2D2x2Depth3ValidBackpropInput (input_sizes, filter, out_backprop), NHWC
    // and NCHW (input_sizes in the layout's order).
    const tensor dx = run_op("Conv2DBackpropInput", {i32({4}, {1, 2, 3, 3}), iota1({2, 2, 3, 3}), iota1({1, 1, 2, 3})},
                             {{"strides", int_list({1, 1, 1, 1})}, {"padding", "VALID"}})[0];
    const tensor want_dx = f32({1, 2, 3, 3}, {14, 32, 50, 100, 163, 226, 167, 212, 257, 122, 140, 158, 478, 541, 604,
                                              437, 482, 527});
    check_values(dx, want_dx);
    graph_builder b;
    const std::string dy = b.op("Transpose", {b.c(iota1({1, 1, 2, 3})), b.c(i32({4}, {0, 3, 1, 2}))});
    const std::string g = b.op("Conv2DBackpropInput", {b.c(i32({4}, {1, 3, 2, 3})), b.c(iota1({2, 2, 3, 3})), dy},
                               {{"strides", int_list({1, 1, 1, 1})}, {"padding", "VALID"}, {"data_format", "NCHW"},
                                {"T", dtype::float32}});
    const std::string back = b.op("Transpose", {g, b.c(i32({4}, {0, 2, 3, 1}))});
    check_values(graft::exec::session(b.g).run({}, {back})[0], want_dx);
}

TEST_CASE("MaxPool, AvgPool and their gradients read ksize, strides, padding, data_format") {
    // tensorflow/python/kernel_tests/nn_ops/pooling_ops_test.py: inputs 1, 2, 3, ...
    for (bool nhwc : {true, false}) {
        CAPTURE(nhwc);
        const attrs p2s2same{{"ksize", int_list({1, 2, 2, 1})}, {"strides", int_list({1, 2, 2, 1})}, {"padding", "SAME"}};
        check_values(run_layout("AvgPool", {iota1({1, 2, 4, 3})}, {true}, p2s2same, nhwc),
                     f32({1, 1, 2, 3}, {8.5, 9.5, 10.5, 14.5, 15.5, 16.5}));  // testAvgPoolSamePadding
        check_values(run_layout("MaxPool", {iota1({1, 2, 3, 3})}, {true}, p2s2same, nhwc),
                     f32({1, 1, 2, 3}, {13, 14, 15, 16, 17, 18}));  // testMaxPoolSamePadding
        check_values(run_layout("MaxPool", {iota1({1, 4, 4, 1})}, {true},
                                {{"ksize", int_list({1, 2, 2, 1})}, {"strides", int_list({1, 1, 2, 1})}, {"padding", "VALID"}},
                                nhwc),
                     f32({1, 3, 2, 1}, {6, 8, 10, 12, 14, 16}));  // testMaxPoolValidPaddingUnevenStride
    }
    // pooling_ops_test.py _testMaxPoolGradDirect1_2: MaxPoolGrad(orig_input, orig_output, grad).
    graph_builder b;
    const std::string x = b.c(f32({1, 4, 4, 1}, {1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0, 1}));
    const attrs p{{"ksize", int_list({1, 2, 2, 1})}, {"strides", int_list({1, 1, 1, 1})}, {"padding", "VALID"}};
    const std::string y = b.op("MaxPool", {x}, p);
    b.op("MaxPoolGrad", {x, y, b.c(f32({1, 3, 3, 1}, {11, 12, 13, 15, 16, 17, 19, 20, 21}))}, p, "dx");
    check_values(graft::exec::session(b.g).run({}, {"dx"})[0],
                 f32({1, 4, 4, 1}, {11, 0, 25, 0, 0, 31, 0, 17, 19, 0, 41, 0, 0, 0, 0, 0}));
    // AvgPoolGrad(orig_input_shape, grad): each 2x2 window spreads a quarter of its gradient.
    check_values(run_op("AvgPoolGrad", {i32({4}, {1, 2, 4, 1}), f32({1, 1, 2, 1}, {4, 8})},
                        {{"ksize", int_list({1, 2, 2, 1})}, {"strides", int_list({1, 2, 2, 1})}, {"padding", "VALID"},
                         {"T", dtype::float32}})[0],
                 f32({1, 2, 4, 1}, {1, 1, 2, 2, 1, 1, 2, 2}));
}

TEST_CASE("FusedBatchNorm, V2, V3 (training and inference) and FusedBatchNormGradV3 through the executor") {
    // x [1,2,1,2] NHWC: channel 0 holds {1, 3} (mean 2, variance 1), channel 1 {10, 20} (mean 15,
    // variance 25); scale [1, 2], offset [0, 1], epsilon 0.001.
    const tensor x = f32({1, 2, 1, 2}, {1, 10, 3, 20}), scale = f32({2}, {1, 2}), offset = f32({2}, {0, 1});
    const double eps = 0.001;
    auto norm = [&](double v, double m, double var, double s, double o) { return (v - m) / std::sqrt(var + eps) * s + o; };
    for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}) {
        CAPTURE(op);
        attrs a{{"epsilon", static_cast<float>(eps)}, {"T", dtype::float32}};
        if (std::string(op) != "FusedBatchNorm") a.emplace_back("U", dtype::float32);
        const auto tr = run_op(op, {x, scale, offset, f32({0}, {}), f32({0}, {})}, a);
        REQUIRE(tr.size() == (std::string(op) == "FusedBatchNormV3" ? 6u : 5u));
        check_values(tr[0], f32({1, 2, 1, 2}, {norm(1, 2, 1, 1, 0), norm(10, 15, 25, 2, 1), norm(3, 2, 1, 1, 0),
                                               norm(20, 15, 25, 2, 1)}),
                     1e-5, 1e-5);
        check_values(tr[1], f32({2}, {2, 15}), 1e-6, 1e-6);
        check_values(tr[2], f32({2}, {2, 50}), 1e-6, 1e-6);  // running variance: Bessel-corrected
        a.emplace_back("is_training", false);
        const auto inf = run_op(op, {x, scale, offset, f32({2}, {1, 12}), f32({2}, {4, 9})}, a);
        check_values(inf[0], f32({1, 2, 1, 2}, {norm(1, 1, 4, 1, 0), norm(10, 12, 9, 2, 1), norm(3, 1, 4, 1, 0),
                                                norm(20, 12, 9, 2, 1)}),
                     1e-5, 1e-5);
        check_values(inf[1], f32({2}, {1, 12}));
        check_values(inf[2], f32({2}, {4, 9}));
    }
    // Inference-mode gradient in closed form: dx = dy * scale / sqrt(var + eps),
    // dscale = sum(dy * (x - mean) / sqrt(var + eps)), doffset = sum(dy).
    const tensor dy = f32({1, 2, 1, 2}, {0.5, -1, 2, 3});
    const auto g = run_op("FusedBatchNormGradV3", {dy, x, scale, f32({2}, {1, 12}), f32({2}, {4, 9}), f32({0}, {})},
                          {{"epsilon", static_cast<float>(eps)}, {"is_training", false}, {"U", dtype::float32}});
    REQUIRE(g.size() == 5);
    const double r0 = 1 / std::sqrt(4 + eps), r1 = 1 / std::sqrt(9 + eps);
    check_values(g[0], f32({1, 2, 1, 2}, {0.5 * r0, -1 * 2 * r1, 2 * r0, 3 * 2 * r1}), 1e-5, 1e-5);
    check_values(g[1], f32({2}, {0.5 * 0 * r0 + 2 * 2 * r0, -1 * -2 * r1 + 3 * 8 * r1}), 1e-5, 1e-5);
    check_values(g[2], f32({2}, {2.5, 2}), 1e-6, 1e-6);
}

TEST_CASE("Softmax, LogSoftmax and the cross-entropy ops give TF's figures through the executor") {
    check_values(run_op("Softmax", {f32({1, 3}, {1, 2, 3})})[0],
                 f32({1, 3}, {0.09003057317038046, 0.24472847105479767, 0.6652409557748219}), 1e-6, 1e-7);
    check_values(run_op("LogSoftmax", {f64({1, 3}, {1, 2, 3})})[0],
                 f64({1, 3}, {std::log(0.09003057317038046), std::log(0.24472847105479767), std::log(0.6652409557748219)}),
                 1e-12, 1e-12);
    // tensorflow/python/kernel_tests/nn_ops/xent_op_test_base.py testNpXent (to 1e-3).
    const tensor logits = f32({2, 4}, {1, 1, 1, 1, 1, 2, 3, 4});
    const auto dense = run_op("SoftmaxCrossEntropyWithLogits", {logits, f32({2, 4}, {0, 0, 0, 1, 0, 0.5, 0.5, 0})});
    REQUIRE(dense.size() == 2);
    check_values(dense[0], f32({2}, {1.3862, 1.9401}), 1e-3, 1e-3);
    check_values(dense[1], f32({2, 4}, {0.25, 0.25, 0.25, -0.75, 0.0321, -0.4129, -0.2632, 0.6439}), 1e-3, 1e-3);
    // tensorflow/python/kernel_tests/sparse_ops/sparse_xent_op_test_base.py testNpXent: labels [3, 0].
    for (dtype lt : {dtype::int32, dtype::int64}) {
        const auto sparse = run_op("SparseSoftmaxCrossEntropyWithLogits", {logits, make(lt, {2}, {3, 0})},
                                   {{"Tlabels", lt}});
        REQUIRE(sparse.size() == 2);
        check_values(sparse[0], f32({2}, {1.3862, 3.4420}), 1e-3, 1e-3);
        check_values(sparse[1], f32({2, 4}, {0.25, 0.25, 0.25, -0.75, -0.968, 0.087, 0.237, 0.6439}), 1e-3, 1e-3);
    }
}

TEST_CASE("seeded random ops draw Philox(seed, seed2) like ops:: and continue the stream on the next run") {
    struct rcase {
        const char* op;
        dtype t;
    };
    for (const rcase r : {rcase{"RandomUniform", dtype::float32}, rcase{"RandomStandardNormal", dtype::float64},
                          rcase{"TruncatedNormal", dtype::float32}, rcase{"RandomUniformInt", dtype::int32}}) {
        CAPTURE(r.op);
        graph_builder b;
        std::vector<std::string> in{b.c(i32({2}, {3, 4}))};
        attrs a{{"seed", 87654321}, {"seed2", 7}, {"T", dtype::int32}};
        const bool is_int = r.t == dtype::int32;
        if (is_int) {
            in.push_back(b.c(i32({}, {-3})));
            in.push_back(b.c(i32({}, {4})));
            a.emplace_back("Tout", r.t);
        } else {
            a.emplace_back("dtype", r.t);
        }
        b.op(r.op, in, a, "r");
        graft::exec::session s(b.g);
        graft::ops::guarded_philox gen(87654321, 7);
        for (int run = 0; run < 2; ++run) {
            const tensor got = s.run({}, {"r"})[0];
            CHECK(got.shape() == shape{3, 4});
            tensor want;
            const std::string op = r.op;
            if (op == "RandomUniform") want = graft::ops::random_uniform(shape{3, 4}, r.t, gen);
            if (op == "RandomStandardNormal") want = graft::ops::random_standard_normal(shape{3, 4}, r.t, gen);
            if (op == "TruncatedNormal") want = graft::ops::truncated_normal(shape{3, 4}, r.t, gen);
            if (is_int) want = graft::ops::random_uniform_int(shape{3, 4}, i32({}, {-3}), i32({}, {4}), gen);
            CHECK(graft::equal(got, want));
        }
    }
}

namespace {

/// A graph with variables (TF1 VariableV2 + Assign, or VarHandleOp + AssignVariableOp) and one
/// optimizer apply node; runs the initializers, then `steps` updates; returns the variables.
std::vector<tensor> run_apply(const std::string& op, bool resource, const std::vector<tensor>& vars,
                              const std::vector<tensor>& rest, int steps, const attrs& extra = {}) {
    graph_builder b;
    std::vector<std::string> inits, in;
    for (std::size_t i = 0; i < vars.size(); ++i) {
        const std::string name = "v" + std::to_string(i);
        node v(name, resource ? "VarHandleOp" : "VariableV2");
        v.attrs.set("dtype", vars[i].type());
        v.attrs.set("shape", vars[i].shape());
        if (resource) v.attrs.set("shared_name", name);
        b.g.add_node(std::move(v));
        const std::string c = b.c(vars[i]);
        inits.push_back(resource ? b.op("AssignVariableOp", {name, c}, {{"dtype", vars[i].type()}})
                                 : b.op("Assign", {name, c}, {{"T", vars[i].type()}}));
        in.push_back(name);
    }
    for (const auto& t : rest) in.push_back(b.c(t));
    attrs a = extra;
    a.emplace_back("T", vars[0].type());
    const std::string apply = b.op(resource ? "Resource" + op : op, in, a);
    graft::exec::session s(b.g);
    s.run({}, {}, inits);
    for (int i = 0; i < steps; ++i) s.run({}, {}, {apply});
    std::vector<tensor> out;
    for (std::size_t i = 0; i < vars.size(); ++i) out.push_back(s.variable_value("v" + std::to_string(i)));
    return out;
}

}  // namespace

TEST_CASE("Apply* and ResourceApply* update their variables (TF's optimizer test figures)") {
    for (bool resource : {false, true}) {
        CAPTURE(resource);
        const tensor v = f32({2}, {1, 2}), g = f32({2}, {0.1, 0.1});
        // tensorflow/python/training/gradient_descent_test.py testBasic.
        auto sgd = run_apply("ApplyGradientDescent", resource, {v}, {f32({}, {3}), g}, 1);
        check_values(sgd[0], f32({2}, {1.0 - 3.0 * 0.1, 2.0 - 3.0 * 0.1}), 1e-6, 1e-6);
        // tensorflow/python/training/momentum_test.py doTestBasic: two steps at lr 2.0, momentum 0.9.
        auto mom = run_apply("ApplyMomentum", resource, {v, f32({2}, {0, 0})}, {f32({}, {2}), g, f32({}, {0.9})}, 2);
        check_values(mom[0],
                     f32({2}, {1.0 - (0.1 * 2.0) - ((0.9 * 0.1 + 0.1) * 2.0), 2.0 - (0.1 * 2.0) - ((0.9 * 0.1 + 0.1) * 2.0)}),
                     1e-6, 1e-6);
        check_values(mom[1], f32({2}, {0.9 * 0.1 + 0.1, 0.9 * 0.1 + 0.1}), 1e-6, 1e-6);
        // Nesterov: var -= lr * (grad + momentum * accum) after accum = momentum * accum + grad.
        auto nes = run_apply("ApplyMomentum", resource, {v, f32({2}, {0, 0})}, {f32({}, {2}), g, f32({}, {0.9})}, 1,
                             {{"use_nesterov", true}});
        check_values(nes[0], f32({2}, {1 - 2 * (0.1 + 0.9 * 0.1), 2 - 2 * (0.1 + 0.9 * 0.1)}), 1e-6, 1e-6);
        // tensorflow/python/training/adagrad_test.py doTestBasic: three steps, lr 3.0, accumulator 0.1.
        auto ada = run_apply("ApplyAdagrad", resource, {v, f32({2}, {0.1, 0.1})}, {f32({}, {3}), g}, 3);
        check_values(ada[0], f32({2}, {-1.6026098728179932, -0.6026098728179932}), 1e-6, 1e-6);
        // Adam and RMSProp: one step in closed form (training_ops.cc), float64.
        const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-7, b1p = 0.9, b2p = 0.999;
        auto adam = run_apply("ApplyAdam", resource, {f64({2}, {1, 2}), f64({2}, {0, 0}), f64({2}, {0, 0})},
                              {f64({}, {b1p}), f64({}, {b2p}), f64({}, {lr}), f64({}, {b1}), f64({}, {b2}), f64({}, {eps}),
                               f64({2}, {0.1, -0.3})},
                              1);
        const double alpha = lr * std::sqrt(1 - b2p) / (1 - b1p);
        std::vector<double> w{1, 2}, m(2), vv(2);
        const double gg[] = {0.1, -0.3};
        for (int i = 0; i < 2; ++i) {
            m[i] = (1 - b1) * gg[i];
            vv[i] = (1 - b2) * gg[i] * gg[i];
            w[i] -= alpha * m[i] / (std::sqrt(vv[i]) + eps);
        }
        check_values(adam[0], f64({2}, w), 1e-12, 1e-14);
        check_values(adam[1], f64({2}, m), 1e-12, 1e-14);
        check_values(adam[2], f64({2}, vv), 1e-12, 1e-16);
        const double rho = 0.9, momentum = 0.5, reps = 1e-6;
        auto rms = run_apply("ApplyRMSProp", resource, {f64({2}, {1, 2}), f64({2}, {1, 1}), f64({2}, {0, 0})},
                             {f64({}, {lr}), f64({}, {rho}), f64({}, {momentum}), f64({}, {reps}), f64({2}, {0.1, -0.3})}, 1);
        std::vector<double> rw{1, 2}, ms(2), mo(2);
        for (int i = 0; i < 2; ++i) {
            ms[i] = rho * 1 + (1 - rho) * gg[i] * gg[i];
            mo[i] = lr * gg[i] / std::sqrt(ms[i] + reps);
            rw[i] -= mo[i];
        }
        check_values(rms[0], f64({2}, rw), 1e-12, 1e-14);
        check_values(rms[1], f64({2}, ms), 1e-12, 1e-14);
        check_values(rms[2], f64({2}, mo), 1e-12, 1e-14);
    }
}
