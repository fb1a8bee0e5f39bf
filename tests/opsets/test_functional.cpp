// TF2 functional control flow (While / StatelessWhile, If / StatelessIf, Case) run as functional
// ops over functions of the graph's library, and TensorList ops: against the same computation
// written without them (a loop unrolled by hand) or float64 references written here; the errors
// TF raises, naming the node; TensorList gradients through graft's checker.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "graft/autodiff/check.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "support/tensors.hpp"

// One namespace per file: the opsets tests build as one binary in unity batches.
namespace graft_test_functional {

using namespace graft::test;  // f32, f64, i32, i64, values

using graft::dtype;
using graft::endpoint;
using graft::shape;
using graft::tensor;

namespace {

std::vector<float> floats(const tensor& t) {
    auto d = graft::cast(t, dtype::float32);
    return {d.data<float>(), d.data<float>() + d.num_elements()};
}

/// A library function written with a graph_builder: arguments are placeholders named like the
/// arguments, results any endpoints (body nodes refer to each other as "node:index").
struct fn_builder {
    graft::graph scratch;
    graft::graph_builder b{scratch};
    std::vector<graft::arg_def> args;

    endpoint arg(const std::string& name, dtype t) {
        graft::arg_def a;
        a.name = name;
        a.type = t;
        args.push_back(a);
        return b.placeholder(name, t);
    }
    graft::function_def done(const std::string& name, const std::vector<endpoint>& outs) {
        graft::function_def f;
        f.signature.name = name;
        f.signature.inputs = args;
        for (std::size_t i = 0; i < outs.size(); ++i) {
            graft::arg_def o;
            o.name = "out" + std::to_string(i);
            o.type = b.dtype_of(outs[i]);
            f.signature.outputs.push_back(o);
            f.ret[o.name] = outs[i].str();
        }
        for (const auto& n : scratch) {
            bool is_arg = false;
            for (auto& a : args) is_arg = is_arg || a.name == n.name;
            if (!is_arg) f.nodes.push_back(n);
        }
        return f;
    }
};

graft::attr_value fn(const std::string& name) { return graft::func_attr{name, {}}; }

/// cond(i, ...) = i < limit, for `types` loop variables (i first).
graft::function_def less_than(const std::string& name, const std::vector<dtype>& types, int limit) {
    fn_builder f;
    endpoint i = f.arg("i", types[0]);
    for (std::size_t k = 1; k < types.size(); ++k) (void)f.arg("v" + std::to_string(k), types[k]);
    return f.done(name, {f.b.op("Less", {i, f.b.constant(tensor::scalar_of(limit))})});
}

endpoint scalar_shape(const graft::graph_builder& b) { return b.constant(i32({0}, {})); }

}  // namespace

TEST_CASE("While with a TensorList: SetItem per step and Stack after the loop equal the loop unrolled by hand") {
    graft::graph g;
    graft::graph_builder b(g);
    g.add_function(less_than("cond", {dtype::int32, dtype::float32, dtype::float32, dtype::variant}, 4));
    {
        fn_builder f;
        auto i = f.arg("i", dtype::int32), acc = f.arg("acc", dtype::float32), x = f.arg("x", dtype::float32);
        auto l = f.arg("l", dtype::variant);
        auto l2 = f.b.op("TensorListSetItem", {l, i, acc});
        auto acc2 = f.b.op("AddV2", {f.b.op("Mul", {acc, x}), f.b.constant(tensor::scalar_of(1.0f))});
        auto i2 = f.b.op("AddV2", {i, f.b.constant(tensor::scalar_of(1))});
        g.add_function(f.done("body", {i2, acc2, x, l2}));
    }
    auto x = b.placeholder("x", dtype::float32);
    auto l0 = b.op("TensorListReserve", {scalar_shape(b), b.constant(tensor::scalar_of(4))},
                   {{"element_dtype", dtype::float32}});
    for (const char* op : {"While", "StatelessWhile"}) {
        CAPTURE(op);
        auto w = b.op_n(op, {b.constant(tensor::scalar_of(0)), b.constant(tensor::scalar_of(1.0f)), x, l0},
                        {{"cond", fn("cond")}, {"body", fn("body")}}, std::string(op) + "_loop");
        auto stacked = b.op("TensorListStack", {w[3], b.constant(tensor::scalar_of(-1))},
                            {{"element_dtype", dtype::float32}, {"num_elements", std::int64_t{4}}});
        // unrolled: acc_{k+1} = acc_k * x + 1
        std::vector<endpoint> accs{b.constant(tensor::scalar_of(1.0f))};
        for (int k = 0; k < 4; ++k) {
            accs.push_back(b.op("AddV2", {b.op("Mul", {accs.back(), x}), b.constant(tensor::scalar_of(1.0f))}));
        }
        auto unrolled = b.op("Pack", {accs[0], accs[1], accs[2], accs[3]});
        graft::exec::session s(g);
        auto out = s.run({{"x", tensor::scalar_of(2.0f)}}, {w[0].str(), w[1].str(), stacked.str(), unrolled.str(),
                                                            accs[4].str()});
        CHECK(out[0].data<std::int32_t>()[0] == 4);
        CHECK(out[1].data<float>()[0] == doctest::Approx(31.0));
        CHECK(floats(out[2]) == std::vector<float>{1, 3, 7, 15});
        CHECK(graft::equal(out[2], out[3]));
        CHECK(graft::equal(out[1], out[4]));
        // a second run reuses the bodies (memo) with another x
        auto again = s.run({{"x", tensor::scalar_of(-1.0f)}}, {stacked.str(), unrolled.str()});
        CHECK(graft::equal(again[0], again[1]));
        CHECK(floats(again[0]) == std::vector<float>{1, 0, 1, 0});
    }
}

TEST_CASE("While runs zero times when cond is false at once; a resource variable passes through the loop") {
    graft::graph g;
    graft::graph_builder b(g);
    g.add_function(less_than("cond", {dtype::int32, dtype::float32, dtype::resource}, 3));
    {
        fn_builder f;
        auto i = f.arg("i", dtype::int32), acc = f.arg("acc", dtype::float32), v = f.arg("v", dtype::resource);
        auto w = f.b.op("ReadVariableOp", {v}, {{"dtype", dtype::float32}});
        g.add_function(f.done("body", {f.b.op("AddV2", {i, f.b.constant(tensor::scalar_of(1))}),
                                       f.b.op("AddV2", {acc, w}), v}));
    }
    auto v = b.op("VarHandleOp", {}, {{"dtype", dtype::float32}, {"shape", shape{}}, {"shared_name", std::string("v")}},
                  "v");
    auto init = b.op_n("AssignVariableOp", {v, b.constant(tensor::scalar_of(0.5f))}, {}, "init");
    (void)init;
    auto start = b.placeholder("start", dtype::int32);
    auto w = b.op_n("While", {start, b.constant(tensor::scalar_of(0.0f)), v}, {{"cond", fn("cond")}, {"body", fn("body")}});
    graft::exec::session s(g);
    s.run({}, {}, {"init"});
    auto out = s.run({{"start", tensor::scalar_of(0)}}, {w[0].str(), w[1].str()});
    CHECK(out[0].data<std::int32_t>()[0] == 3);
    CHECK(out[1].data<float>()[0] == doctest::Approx(1.5));
    out = s.run({{"start", tensor::scalar_of(5)}}, {w[0].str(), w[1].str()});
    CHECK(out[0].data<std::int32_t>()[0] == 5);
    CHECK(out[1].data<float>()[0] == 0.0f);
}

TEST_CASE("If / StatelessIf pick a branch by TF's truth of the cond tensor") {
    graft::graph g;
    graft::graph_builder b(g);
    {
        fn_builder f;
        auto x = f.arg("x", dtype::float32);
        g.add_function(f.done("twice", {f.b.op("Mul", {x, f.b.constant(tensor::scalar_of(2.0f))})}));
    }
    {
        fn_builder f;
        auto x = f.arg("x", dtype::float32);
        g.add_function(f.done("minus_one", {f.b.op("Sub", {x, f.b.constant(tensor::scalar_of(1.0f))})}));
    }
    auto x = b.placeholder("x", dtype::float32);
    auto out_list = graft::attr_value::list_of(std::vector<dtype>{dtype::float32});
    struct cond_case {
        tensor c;
        float want;
    };
    std::vector<cond_case> cases{{tensor::scalar_of(true), 20},  {tensor::scalar_of(false), 9},
                                 {tensor::scalar_of(3), 20},     {tensor::scalar_of(0), 9},
                                 {tensor::scalar_of(0.5f), 20},  {i32({2}, {0, 0}), 20},
                                 {i32({0}, {}), 9},              {tensor::scalar_of(std::string("a")), 20},
                                 {tensor::scalar_of(std::string()), 9}};
    int k = 0;
    for (auto& cc : cases) {
        CAPTURE(cc.c.describe());
        graft::graph gk = g;
        graft::graph_builder bk(gk);
        auto c = bk.placeholder("c", cc.c.type());
        auto y = bk.op(k % 2 ? "If" : "StatelessIf", {c, x},
                       {{"then_branch", fn("twice")}, {"else_branch", fn("minus_one")}, {"Tout", out_list}});
        graft::exec::session s(gk);
        auto out = s.run({{"c", cc.c}, {"x", tensor::scalar_of(10.0f)}}, {y.str()});
        CHECK(out[0].data<float>()[0] == cc.want);
        ++k;
    }
}

TEST_CASE("a function whose If calls itself again is a graph_error past 64 nested calls, not a stack overflow") {
    graft::graph g;
    graft::graph_builder b(g);
    auto out_list = graft::attr_value::list_of(std::vector<dtype>{dtype::float32});
    {
        fn_builder f;
        auto x = f.arg("x", dtype::float32);
        g.add_function(f.done("minus_one", {f.b.op("Sub", {x, f.b.constant(tensor::scalar_of(1.0f))})}));
    }
    {
        fn_builder f;  // rec(x) = If(true, rec, minus_one)(x): recursion without end
        auto x = f.arg("x", dtype::float32);
        auto y = f.b.op("StatelessIf", {f.b.constant(tensor::scalar_of(true)), x},
                        {{"then_branch", fn("rec")}, {"else_branch", fn("minus_one")}, {"Tout", out_list}});
        g.add_function(f.done("rec", {y}));
    }
    auto x = b.placeholder("x", dtype::float32);
    auto y = b.op("StatelessIf", {b.constant(tensor::scalar_of(true)), x},
                  {{"then_branch", fn("rec")}, {"else_branch", fn("minus_one")}, {"Tout", out_list}});
    graft::exec::session s(g);
    try {
        (void)s.run({{"x", tensor::scalar_of(1.0f)}}, {y.str()});
        FAIL("endless recursion returned");
    } catch (const graft::error& e) {
        CHECK(std::string(e.what()).find("nest deeper than 64") != std::string::npos);
    }
}

TEST_CASE("Case runs branch_index, and the last branch for an index out of range") {
    graft::graph g;
    graft::graph_builder b(g);
    const char* ops[] = {"AddV2", "Mul", "Sub"};
    for (int k = 0; k < 3; ++k) {
        fn_builder f;
        auto x = f.arg("x", dtype::float32);
        g.add_function(f.done("branch" + std::to_string(k), {f.b.op(ops[k], {x, f.b.constant(tensor::scalar_of(10.0f))})}));
    }
    auto i = b.placeholder("i", dtype::int32);
    auto x = b.placeholder("x", dtype::float32);
    auto y = b.op("Case", {i, x},
                  {{"branches", graft::attr_value::list_of(std::vector<graft::func_attr>{
                                    {"branch0", {}}, {"branch1", {}}, {"branch2", {}}})},
                   {"Tout", graft::attr_value::list_of(std::vector<dtype>{dtype::float32})}});
    graft::exec::session s(g);
    auto run = [&](int idx) { return s.run({{"i", tensor::scalar_of(idx)}, {"x", tensor::scalar_of(3.0f)}}, {y.str()})[0].data<float>()[0]; };
    CHECK(run(0) == 13.0f);
    CHECK(run(1) == 30.0f);
    CHECK(run(2) == -7.0f);
    CHECK(run(7) == -7.0f);
    CHECK(run(-1) == -7.0f);
}

TEST_CASE("a While body holding another While and a PartitionedCall") {
    graft::graph g;
    graft::graph_builder b(g);
    // inner loop: (k, t) -> k < 2: (k + 1, t + 1)
    g.add_function(less_than("inner_cond", {dtype::int32, dtype::float32}, 2));
    {
        fn_builder f;
        auto k = f.arg("k", dtype::int32), t = f.arg("t", dtype::float32);
        g.add_function(f.done("inner_body", {f.b.op("AddV2", {k, f.b.constant(tensor::scalar_of(1))}),
                                             f.b.op("AddV2", {t, f.b.constant(tensor::scalar_of(1.0f))})}));
    }
    {
        fn_builder f;
        auto t = f.arg("t", dtype::float32);
        g.add_function(f.done("double_it", {f.b.op("Mul", {t, f.b.constant(tensor::scalar_of(2.0f))})}));
    }
    // outer loop: (j, s) -> j < 3: (j + 1, double_it(inner(s)))
    g.add_function(less_than("outer_cond", {dtype::int32, dtype::float32}, 3));
    {
        fn_builder f;
        auto j = f.arg("j", dtype::int32), s = f.arg("s", dtype::float32);
        auto inner = f.b.op_n("While", {f.b.constant(tensor::scalar_of(0)), s},
                              {{"cond", fn("inner_cond")}, {"body", fn("inner_body")}});
        auto call = f.b.op("StatefulPartitionedCall", {inner[1]},
                           {{"f", fn("double_it")},
                            {"Tout", graft::attr_value::list_of(std::vector<dtype>{dtype::float32})}});
        g.add_function(f.done("outer_body", {f.b.op("AddV2", {j, f.b.constant(tensor::scalar_of(1))}), call}));
    }
    auto w = b.op_n("While", {b.constant(tensor::scalar_of(0)), b.placeholder("s0", dtype::float32)},
                    {{"cond", fn("outer_cond")}, {"body", fn("outer_body")}});
    graft::exec::session s(g);
    auto out = s.run({{"s0", tensor::scalar_of(1.0f)}}, {w[1].str()});
    double want = 1;
    for (int j = 0; j < 3; ++j) want = (want + 2) * 2;
    CHECK(out[0].data<float>()[0] == doctest::Approx(want));
}

TEST_CASE("While errors name the node and the function: cond results, body outputs, a missing function") {
    graft::graph g;
    graft::graph_builder b(g);
    {
        fn_builder f;
        auto i = f.arg("i", dtype::int32);
        auto lt = f.b.op("Less", {i, f.b.constant(tensor::scalar_of(2))});
        g.add_function(f.done("two_results", {lt, lt}));
    }
    {
        fn_builder f;
        auto i = f.arg("i", dtype::int32);
        g.add_function(f.done("as_float", {f.b.op("Cast", {i}, {{"DstT", dtype::float32}})}));
    }
    {
        fn_builder f;
        auto i = f.arg("i", dtype::int32);
        g.add_function(f.done("two_outputs", {i, i}));
    }
    g.add_function(less_than("ok_cond", {dtype::int32}, 2));
    auto zero = b.constant(tensor::scalar_of(0));
    auto bad_cond = b.op("While", {zero}, {{"cond", fn("two_results")}, {"body", fn("ok_cond")}}, "bad_cond");
    auto bad_type = b.op("While", {zero}, {{"cond", fn("ok_cond")}, {"body", fn("as_float")}}, "bad_type");
    auto bad_count = b.op("While", {zero}, {{"cond", fn("ok_cond")}, {"body", fn("two_outputs")}}, "bad_count");
    auto missing = b.op("While", {zero}, {{"cond", fn("ok_cond")}, {"body", fn("nowhere")}}, "missing");
    graft::exec::session s(g);
    auto message = [&](const endpoint& e) -> std::string {
        try {
            s.run({}, {e.str()});
        } catch (const graft::error& err) {
            return std::string(err.what());
        }
        return "no error";
    };
    auto m = message(bad_cond);
    CHECK(m.find("bad_cond") != std::string::npos);
    CHECK(m.find("two_results") != std::string::npos);
    CHECK(m.find("returns 2") != std::string::npos);
    m = message(bad_type);
    CHECK(m.find("bad_type") != std::string::npos);
    CHECK(m.find("as_float") != std::string::npos);
    CHECK(m.find("float32") != std::string::npos);
    m = message(bad_count);
    CHECK(m.find("bad_count") != std::string::npos);
    CHECK(m.find("returns 2 values for 1 loop variables") != std::string::npos);
    m = message(missing);
    CHECK(m.find("missing") != std::string::npos);
    CHECK(m.find("nowhere") != std::string::npos);
}

TEST_CASE("TensorList ops: FromTensor, GetItem, PushBack/PopBack, Length, ElementShape, Gather, Scatter, Concat, Resize") {
    graft::graph g;
    graft::graph_builder b(g);
    auto el = [](dtype t) { return graft::attr_list{{"element_dtype", t}}; };
    auto x = b.constant(f32({3, 2}, {1, 2, 3, 4, 5, 6}));
    auto l = b.op("TensorListFromTensor", {x, b.constant(i32({1}, {2}))}, el(dtype::float32));
    auto item1 = b.op("TensorListGetItem", {l, b.constant(tensor::scalar_of(1)), b.constant(tensor::scalar_of(-1))},
                      el(dtype::float32));
    auto pushed = b.op("TensorListPushBack", {l, b.constant(f32({2}, {7, 8}))});
    auto len = b.op("TensorListLength", {pushed});
    auto popped = b.op_n("TensorListPopBack", {pushed, b.constant(tensor::scalar_of(-1))}, el(dtype::float32));
    auto es = b.op("TensorListElementShape", {l}, {{"shape_type", dtype::int32}});
    auto gathered = b.op("TensorListGather", {pushed, b.constant(i32({2}, {3, 0})), b.constant(tensor::scalar_of(-1))},
                         el(dtype::float32));
    auto scattered = b.op("TensorListScatterV2", {b.constant(f32({2, 2}, {9, 9, 8, 8})), b.constant(i32({2}, {2, 0})),
                                                  b.constant(i32({1}, {2})), b.constant(tensor::scalar_of(4))});
    auto sc_stack = b.op("TensorListStack", {scattered, b.constant(i32({1}, {2}))}, el(dtype::float32));
    auto into = b.op("TensorListScatterIntoExistingList", {l, b.constant(f32({1, 2}, {0, -1})), b.constant(i32({1}, {1}))});
    auto into_stack = b.op("TensorListStack", {into, b.constant(tensor::scalar_of(-1))}, el(dtype::float32));
    auto cat = b.op_n("TensorListConcatV2", {l, b.constant(tensor::scalar_of(-1)), b.constant(tensor::scalar_of(std::int64_t{0}))},
                      el(dtype::float32));
    auto resized = b.op("TensorListResize", {l, b.constant(tensor::scalar_of(5))});
    auto rs_stack = b.op("TensorListStack", {resized, b.constant(i32({1}, {2}))}, el(dtype::float32));
    auto empty = b.op("EmptyTensorList", {b.constant(i32({1}, {2})), b.constant(tensor::scalar_of(-1))}, el(dtype::float32));
    auto empty_stack = b.op("TensorListStack", {empty, b.constant(tensor::scalar_of(-1))}, el(dtype::float32));
    auto rest_len = b.op("TensorListLength", {popped[0]});
    graft::exec::session s(g);
    auto out = s.run({}, {item1.str(), len.str(), popped[1].str(), es.str(), gathered.str(), sc_stack.str(),
                          into_stack.str(), cat[0].str(), cat[1].str(), rs_stack.str(), empty_stack.str(),
                          rest_len.str()});
    CHECK(floats(out[0]) == std::vector<float>{3, 4});
    CHECK(out[1].data<std::int32_t>()[0] == 4);
    CHECK(floats(out[2]) == std::vector<float>{7, 8});
    CHECK(graft::equal(out[3], i32({1}, {2})));
    CHECK(floats(out[4]) == std::vector<float>{7, 8, 1, 2});
    CHECK(out[4].shape() == shape{2, 2});
    CHECK(floats(out[5]) == std::vector<float>{8, 8, 0, 0, 9, 9, 0, 0});  // unset elements read as zeros
    CHECK(floats(out[6]) == std::vector<float>{1, 2, 0, -1, 5, 6});
    CHECK(floats(out[7]) == std::vector<float>{1, 2, 3, 4, 5, 6});
    CHECK(graft::equal(out[8], tensor::from_vector<std::int64_t>({3}, {2, 2, 2})));
    CHECK(floats(out[9]) == std::vector<float>{1, 2, 3, 4, 5, 6, 0, 0, 0, 0});
    CHECK(out[10].shape() == shape{0, 2});
    CHECK(out[11].data<std::int32_t>()[0] == 3);
}

TEST_CASE("TensorList errors name the node: index out of range, pop from an empty list, dtype mismatch") {
    graft::graph g;
    graft::graph_builder b(g);
    auto l = b.op("TensorListFromTensor", {b.constant(f32({2}, {1, 2})), b.constant(i32({0}, {}))},
                  {{"element_dtype", dtype::float32}});
    auto m1 = b.constant(tensor::scalar_of(-1));
    auto far = b.op("TensorListGetItem", {l, b.constant(tensor::scalar_of(5)), m1}, {{"element_dtype", dtype::float32}},
                    "far");
    auto set_far = b.op("TensorListSetItem", {l, b.constant(tensor::scalar_of(2)), b.constant(tensor::scalar_of(1.0f))},
                        {}, "set_far");
    auto empty = b.op("EmptyTensorList", {m1, m1}, {{"element_dtype", dtype::float32}});
    auto pop = b.op_n("TensorListPopBack", {empty, m1}, {{"element_dtype", dtype::float32}}, "pop");
    auto wrong = b.op("TensorListGetItem", {l, b.constant(tensor::scalar_of(0)), m1}, {{"element_dtype", dtype::int32}},
                      "wrong");
    auto push_wrong = b.op("TensorListPushBack", {l, b.constant(tensor::scalar_of(1))}, {}, "push_wrong");
    auto unknown = b.op("TensorListGetItem", {b.op("TensorListReserve", {m1, b.constant(tensor::scalar_of(2))},
                                                   {{"element_dtype", dtype::float32}}),
                                              b.constant(tensor::scalar_of(0)), m1},
                        {{"element_dtype", dtype::float32}}, "unknown");
    graft::exec::session s(g);
    auto message = [&](const endpoint& e) -> std::string {
        try {
            s.run({}, {e.str()});
        } catch (const graft::error& err) {
            return std::string(err.what());
        }
        return "no error";
    };
    auto m = message(far);
    CHECK(m.find("far") != std::string::npos);
    CHECK(m.find("Trying to access element 5 in a list with 2 elements") != std::string::npos);
    m = message(set_far);
    CHECK(m.find("set_far") != std::string::npos);
    CHECK(m.find("Trying to modify element 2 in a list with 2 elements") != std::string::npos);
    m = message(pop[1]);
    CHECK(m.find("pop") != std::string::npos);
    CHECK(m.find("Trying to pop from an empty list") != std::string::npos);
    m = message(wrong);
    CHECK(m.find("wrong") != std::string::npos);
    CHECK(m.find("op elements int32 but list elements float32") != std::string::npos);
    m = message(push_wrong);
    CHECK(m.find("push_wrong") != std::string::npos);
    CHECK(m.find("int32") != std::string::npos);
    m = message(unknown);
    CHECK(m.find("unknown") != std::string::npos);
    CHECK(m.find("not fully defined") != std::string::npos);
}

TEST_CASE("TensorList gradients: FromTensor/GetItem/SetItem/Stack, PushBack/PopBack, Gather/Scatter") {
    auto el = graft::attr_list{{"element_dtype", dtype::float64}};
    auto check = [&](const graft::autodiff::check_graph_fn& f, std::vector<tensor> xs) {
        auto r = graft::autodiff::check_gradients(f, xs);
        INFO(r.str());
        CHECK(r.checked > 0);
        CHECK(r.max_rel_error < 1e-6);
    };
    tensor x = tensor::from_vector<double>({3, 2}, {0.5, -1.0, 2.0, 0.25, 1.5, -0.75});
    // y = Stack(SetItem(FromTensor(x), 2, 3 * GetItem(FromTensor(x), 0) ** 2))
    check([&](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
        auto es = b.constant(i32({1}, {2}));
        auto l1 = b.op("TensorListFromTensor", {xs[0], es});
        auto l2 = b.op("TensorListFromTensor", {xs[0], es});
        auto first = b.op("TensorListGetItem", {l2, b.constant(tensor::scalar_of(0)), es}, el);
        auto v = b.op("Mul", {b.op("Square", {first}), b.scalar_as(dtype::float64, 3.0)});
        auto set = b.op("TensorListSetItem", {l1, b.constant(tensor::scalar_of(2)), v});
        return std::vector<endpoint>{b.op("TensorListStack", {set, es}, el)};
    }, {x});
    // PushBack then PopBack: the popped element and the rest
    check([&](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
        auto es = b.constant(i32({1}, {2}));
        auto l = b.op("TensorListFromTensor", {xs[0], es});
        auto pushed = b.op("TensorListPushBack", {l, b.op("Sin", {xs[1]})});
        auto popped = b.op_n("TensorListPopBack", {pushed, es}, el);
        auto rest = b.op("TensorListStack", {popped[0], es}, el);
        return std::vector<endpoint>{b.op("Mul", {popped[1], popped[1]}), rest};
    }, {x, tensor::from_vector<double>({2}, {0.3, -0.4})});
    // Gather of a scattered list
    check([&](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
        auto es = b.constant(i32({1}, {2}));
        auto l = b.op("TensorListScatterV2", {xs[0], b.constant(i32({3}, {4, 0, 2})), es, b.constant(tensor::scalar_of(5))});
        auto into = b.op("TensorListScatterIntoExistingList", {l, b.op("Exp", {xs[1]}), b.constant(i32({1}, {1}))});
        return std::vector<endpoint>{b.op("TensorListGather", {into, b.constant(i32({4}, {0, 1, 4, 3})), es}, el)};
    }, {x, tensor::from_vector<double>({1, 2}, {0.1, 0.2})});
}

namespace {

/// Adds to g's library (once) the loop of the gradient tests: loop variables (i, acc, x, l);
/// cond i < 3; body acc' = sin(acc) * x, l' = SetItem(l, i, acc' * acc), i' = i + 1 (x passes through).
void add_grad_loop(graft::graph& g) {
    if (g.library.find("gcond")) return;
    g.add_function(less_than("gcond", {dtype::int32, dtype::float64, dtype::float64, dtype::variant}, 3));
    fn_builder f;
    auto i = f.arg("i", dtype::int32), acc = f.arg("acc", dtype::float64), x = f.arg("x", dtype::float64);
    auto l = f.arg("l", dtype::variant);
    auto acc2 = f.b.op("Mul", {f.b.op("Sin", {acc}), x});
    auto l2 = f.b.op("TensorListSetItem", {l, i, f.b.op("Mul", {acc2, acc})});
    auto x2 = f.b.op("Identity", {x});
    g.add_function(f.done("gbody", {f.b.op("AddV2", {i, f.b.constant(tensor::scalar_of(1))}), acc2, x2, l2}));
}

/// The loop as a While (op) or unrolled by hand (op empty): (acc after 3 steps, Stack(l)).
std::vector<endpoint> grad_loop(const graft::graph_builder& b, const endpoint& acc0, const endpoint& x,
                                const std::string& op) {
    auto el = graft::attr_list{{"element_dtype", dtype::float64}};
    auto l0 = b.op("TensorListReserve", {b.constant(i32({0}, {})), b.constant(tensor::scalar_of(3))}, el);
    if (op.empty()) {
        endpoint acc = acc0;
        std::vector<endpoint> items;
        for (int k = 0; k < 3; ++k) {
            auto next = b.op("Mul", {b.op("Sin", {acc}), x});
            items.push_back(b.op("Mul", {next, acc}));
            acc = next;
        }
        return {acc, b.op("Pack", {items[0], items[1], items[2]})};
    }
    add_grad_loop(b.g());
    auto w = b.op_n(op, {b.constant(tensor::scalar_of(0)), acc0, x, l0}, {{"cond", fn("gcond")}, {"body", fn("gbody")}});
    return {w[1], b.op("TensorListStack", {w[3], b.constant(i32({0}, {}))}, el)};
}

}  // namespace

TEST_CASE("While gradient (accumulate loop variables, backward While over the body's gradient) equals the unrolled loop's") {
    for (const char* op : {"While", "StatelessWhile"}) {
        CAPTURE(op);
        graft::graph g;
        graft::graph_builder b(g);
        auto acc0 = b.placeholder("acc0", dtype::float64), x = b.placeholder("x", dtype::float64);
        auto loop = grad_loop(b, acc0, x, op);
        auto flat = grad_loop(b, acc0, x, "");
        auto weights = b.constant(tensor::from_vector<double>({3}, {0.5, -2.0, 1.25}));
        auto loss = [&](const std::vector<endpoint>& ys) {
            return b.op("AddV2", {ys[0], b.op("Sum", {b.op("Mul", {ys[1], weights}), b.constant(i32({1}, {0}))})});
        };
        auto gl = graft::gradients(g, {loss(loop)}, {acc0, x});
        auto gf = graft::gradients(g, {loss(flat)}, {acc0, x});
        REQUIRE(gl[0]);
        REQUIRE(gl[1]);
        graft::exec::session s(g);
        auto out = s.run({{"acc0", tensor::scalar_of(0.7)}, {"x", tensor::scalar_of(1.3)}},
                         {gl[0]->str(), gl[1]->str(), gf[0]->str(), gf[1]->str(), loop[1].str(), flat[1].str()});
        CHECK(graft::allclose(out[4], out[5], 1e-12, 1e-12));
        CHECK(out[0].data<double>()[0] == doctest::Approx(out[2].data<double>()[0]).epsilon(1e-12));
        CHECK(out[1].data<double>()[0] == doctest::Approx(out[3].data<double>()[0]).epsilon(1e-12));
    }
    // and against finite differences
    auto r = graft::autodiff::check_gradients(
        [](const graft::graph_builder& b, const std::vector<endpoint>& xs) { return grad_loop(b, xs[0], xs[1], "While"); },
        {tensor::scalar_of(0.4), tensor::scalar_of(-0.9)});
    INFO(r.str());
    CHECK(r.checked > 0);
    CHECK(r.max_rel_error < 1e-6);
}

TEST_CASE("If gradient: grad(then) / grad(else) on the branch taken") {
    for (bool c : {true, false}) {
        CAPTURE(c);
        auto r = graft::autodiff::check_gradients(
            [c](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
                auto& g = b.g();
                if (!g.library.find("mul_xy")) {
                    fn_builder t;
                    auto x = t.arg("x", dtype::float64), y = t.arg("y", dtype::float64);
                    g.add_function(t.done("mul_xy", {t.b.op("Mul", {x, y}), x}));
                    fn_builder e;
                    auto x2 = e.arg("x", dtype::float64), y2 = e.arg("y", dtype::float64);
                    g.add_function(e.done("add_yy", {e.b.op("AddV2", {x2, e.b.op("Mul", {y2, y2})}),
                                                     e.b.op("Sin", {y2})}));
                }
                auto out = b.op_n("StatelessIf", {b.constant(tensor::scalar_of(c)), xs[0], xs[1]},
                                  {{"then_branch", fn("mul_xy")}, {"else_branch", fn("add_yy")},
                                   {"Tout", graft::attr_value::list_of(std::vector<dtype>{dtype::float64, dtype::float64})}});
                return out;
            },
            {tensor::from_vector<double>({2}, {0.3, -1.2}), tensor::from_vector<double>({2}, {2.0, 0.7})});
        INFO(r.str());
        CHECK(r.checked > 0);
        CHECK(r.max_rel_error < 1e-6);
    }
}

TEST_CASE("While gradient w.r.t. a resource variable the body reads: summed over the iterations, equal to the unrolled loop's") {
    graft::graph g;
    graft::graph_builder b(g);
    g.add_function(less_than("rcond", {dtype::int32, dtype::float64, dtype::resource}, 3));
    {
        fn_builder f;
        auto i = f.arg("i", dtype::int32), acc = f.arg("acc", dtype::float64), v = f.arg("v", dtype::resource);
        auto w = f.b.op("ReadVariableOp", {v}, {{"dtype", dtype::float64}});
        auto acc2 = f.b.op("AddV2", {f.b.op("Mul", {acc, w}), f.b.op("Sin", {w})});
        g.add_function(f.done("rbody", {f.b.op("AddV2", {i, f.b.constant(tensor::scalar_of(1))}), acc2, v}));
    }
    auto v = b.op("VarHandleOp", {}, {{"dtype", dtype::float64}, {"shape", shape{}}, {"shared_name", std::string("w")}}, "w");
    auto init = b.op_n("AssignVariableOp", {v, b.placeholder("w0", dtype::float64)}, {}, "init");
    (void)init;
    auto acc0 = b.placeholder("acc0", dtype::float64);
    auto loop = b.op_n("While", {b.constant(tensor::scalar_of(0)), acc0, v}, {{"cond", fn("rcond")}, {"body", fn("rbody")}});
    endpoint acc = acc0;
    for (int k = 0; k < 3; ++k) {
        auto w = b.op("ReadVariableOp", {v}, {{"dtype", dtype::float64}});
        acc = b.op("AddV2", {b.op("Mul", {acc, w}), b.op("Sin", {w})});
    }
    auto gl = graft::gradients(g, {loop[1]}, {v, acc0});
    auto gf = graft::gradients(g, {acc}, {v, acc0});
    REQUIRE(gl[0]);
    REQUIRE(gl[1]);
    graft::exec::session s(g);
    s.run({{"w0", tensor::scalar_of(0.8)}}, {}, {"init"});
    auto out = s.run({{"acc0", tensor::scalar_of(1.5)}}, {loop[1].str(), acc.str(), gl[0]->str(), gf[0]->str(),
                                                          gl[1]->str(), gf[1]->str()});
    CHECK(out[0].data<double>()[0] == doctest::Approx(out[1].data<double>()[0]).epsilon(1e-12));
    CHECK(out[2].data<double>()[0] == doctest::Approx(out[3].data<double>()[0]).epsilon(1e-12));
    CHECK(out[4].data<double>()[0] == doctest::Approx(out[5].data<double>()[0]).epsilon(1e-12));
    CHECK(out[2].data<double>()[0] != 0.0);
}

TEST_CASE("TensorListSplit and TensorListConcatV2: rows by lengths, unset elements by leading_dims, gradients of each other") {
    graft::graph g;
    graft::graph_builder b(g);
    auto el = graft::attr_list{{"element_dtype", dtype::float32}};
    auto x = b.constant(f32({3, 2}, {1, 2, 3, 4, 5, 6}));
    auto l = b.op("TensorListSplit", {x, b.constant(i32({2}, {-1, 2})),
                                      b.constant(tensor::from_vector<std::int64_t>({2}, {1, 2}))});
    auto second = b.op("TensorListGetItem", {l, b.constant(tensor::scalar_of(1)), b.constant(tensor::scalar_of(-1))}, el);
    auto grown = b.op("TensorListResize", {l, b.constant(tensor::scalar_of(3))});
    auto cat = b.op_n("TensorListConcatV2", {grown, b.constant(i32({2}, {-1, 2})),
                                             b.constant(tensor::from_vector<std::int64_t>({3}, {1, 2, 2}))}, el);
    auto bad = b.op("TensorListSplit", {x, b.constant(i32({2}, {-1, 2})),
                                        b.constant(tensor::from_vector<std::int64_t>({2}, {1, 1}))}, {}, "bad_split");
    graft::exec::session s(g);
    auto out = s.run({}, {second.str(), cat[0].str(), cat[1].str()});
    CHECK(out[0].shape() == shape{2, 2});
    CHECK(floats(out[0]) == std::vector<float>{3, 4, 5, 6});
    CHECK(floats(out[1]) == std::vector<float>{1, 2, 3, 4, 5, 6, 0, 0, 0, 0});
    CHECK(graft::equal(out[2], tensor::from_vector<std::int64_t>({3}, {1, 2, 2})));
    try {
        s.run({}, {}, {"bad_split"});
        FAIL("no error");
    } catch (const graft::error& e) {
        CHECK(std::string(e.what()).find("bad_split") != std::string::npos);
        CHECK(std::string(e.what()).find("Unused values in tensor") != std::string::npos);
    }
    auto r = graft::autodiff::check_gradients(
        [](const graft::graph_builder& gb, const std::vector<endpoint>& xs) {
            auto es = gb.constant(i32({2}, {-1, 2}));
            auto lengths = gb.constant(tensor::from_vector<std::int64_t>({3}, {2, 0, 1}));
            auto split = gb.op("TensorListSplit", {xs[0], es, lengths});
            auto cat2 = gb.op_n("TensorListConcatV2", {split, es, lengths}, {{"element_dtype", dtype::float64}});
            return std::vector<endpoint>{gb.op("Mul", {cat2[0], gb.op("Cos", {xs[0]})})};
        },
        {tensor::from_vector<double>({3, 2}, {0.5, -1.0, 2.0, 0.25, 1.5, -0.75})});
    INFO(r.str());
    CHECK(r.checked > 0);
    CHECK(r.max_rel_error < 1e-6);
}

TEST_CASE("Case gradient: the taken branch's gradient, the last branch's for an index out of range") {
    for (int idx : {0, 1, 5}) {
        CAPTURE(idx);
        auto r = graft::autodiff::check_gradients(
            [idx](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
                auto& g = b.g();
                if (!g.library.find("c0")) {
                    fn_builder f0;
                    auto x0 = f0.arg("x", dtype::float64);
                    g.add_function(f0.done("c0", {f0.b.op("Sin", {x0})}));
                    fn_builder f1;
                    auto x1 = f1.arg("x", dtype::float64);
                    g.add_function(f1.done("c1", {f1.b.op("Mul", {x1, x1})}));
                }
                return b.op_n("Case", {b.constant(tensor::scalar_of(idx)), xs[0]},
                              {{"branches", graft::attr_value::list_of(std::vector<graft::func_attr>{{"c0", {}}, {"c1", {}}})},
                               {"Tout", graft::attr_value::list_of(std::vector<dtype>{dtype::float64})}});
            },
            {tensor::from_vector<double>({3}, {0.3, -1.2, 2.0})});
        INFO(r.str());
        CHECK(r.checked > 0);
        CHECK(r.max_rel_error < 1e-6);
    }
}

}  // namespace graft_test_functional
