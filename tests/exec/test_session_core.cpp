#include <doctest/doctest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"

using graft::dtype;
using graft::node;
using graft::tensor;

namespace {
node placeholder(std::string name, dtype t, graft::shape s = graft::shape::unknown_rank()) {
    node n(std::move(name), "Placeholder");
    n.attrs.set("dtype", t);
    n.attrs.set("shape", s);
    return n;
}
node constant(std::string name, tensor v) {
    node n(std::move(name), "Const");
    n.attrs.set("dtype", v.type());
    n.attrs.set("value", std::move(v));
    return n;
}
node op(std::string name, std::string type, std::vector<graft::endpoint> in, dtype t = dtype::float32) {
    node n(std::move(name), std::move(type), std::move(in));
    n.attrs.set("T", t);
    return n;
}
}  // namespace

TEST_CASE("feeds, fetches, constants and identities") {
    graft::graph g;
    g.add_node(placeholder("x", dtype::float32, graft::shape{-1}));
    g.add_node(constant("c", tensor::from_vector<float>({1.f, 2.f})));
    g.add_node(op("y", "Identity", {{"x", 0}}));
    graft::exec::session s(g);
    auto x = tensor::from_vector<float>({5.f, 6.f});
    auto out = s.run({{"x:0", x}}, {"y:0", "c"});
    REQUIRE(out.size() == 2);
    CHECK(graft::equal(out[0], x));
    CHECK(out[1].flat<float>()(1) == 2.f);
    // A second run reuses the plan with new values.
    auto out2 = s.run({{"x", tensor::from_vector<float>({7.f})}}, {"y:0"});
    CHECK(out2[0].flat<float>()(0) == 7.f);
}

TEST_CASE("errors name the node: unfed placeholder, wrong feed dtype/shape, missing names") {
    graft::graph g;
    g.add_node(placeholder("x", dtype::float32, graft::shape{2}));
    g.add_node(op("y", "Identity", {{"x", 0}}));
    graft::exec::session s(g);
    CHECK_THROWS_WITH_AS(s.run({}, {"y:0"}), doctest::Contains("placeholder tensor 'x:0'"), graft::graph_error);
    CHECK_THROWS_WITH_AS(s.run({{"x:0", tensor::from_vector<std::int32_t>({1, 2})}}, {"y:0"}),
                         doctest::Contains("int32"), graft::invalid_argument_error);
    CHECK_THROWS_WITH_AS(s.run({{"x:0", tensor::from_vector<float>({1, 2, 3})}}, {"y:0"}),
                         doctest::Contains("[3]"), graft::invalid_argument_error);
    CHECK_THROWS_AS(s.run({}, {"nope:0"}), graft::not_found_error);
    CHECK_THROWS_AS(s.run({}, {"y:3"}), graft::not_found_error);
}

TEST_CASE("an op without a kernel is reported at plan time with all its nodes") {
    graft::graph g;
    g.add_node(placeholder("x", dtype::float32));
    g.add_node(op("a", "Erfinv", {{"x", 0}}));
    g.add_node(op("b", "Erfinv", {{"a", 0}}));
    graft::exec::session s(g);
    try {
        s.run({{"x", tensor::from_vector<float>({0.5f})}}, {"b:0"});
        FAIL("expected unimplemented_error");
    } catch (const graft::unimplemented_error& e) {
        std::string m = e.what();
        CHECK(m.find("Erfinv") != std::string::npos);
        CHECK(m.find("'a'") != std::string::npos);
        CHECK(m.find("'b'") != std::string::npos);
        CHECK(m.find("kernel_registry::global().add") != std::string::npos);
    }
}

TEST_CASE("pruning: only what the fetches need runs") {
    graft::graph g;
    g.add_node(placeholder("unfed", dtype::float32));
    g.add_node(op("unused", "Identity", {{"unfed", 0}}));
    g.add_node(constant("c", tensor::scalar_of(3.f)));
    g.add_node(op("y", "Identity", {{"c", 0}}));
    graft::exec::session s(g);
    CHECK(s.run({}, {"y"})[0].scalar<float>()() == 3.f);
}

TEST_CASE("cond: Switch and Merge take one branch, dead tensors do not run") {
    graft::graph g;
    g.add_node(placeholder("pred", dtype::bool_));
    g.add_node(placeholder("x", dtype::float32));
    g.add_node(op("sw", "Switch", {{"x", 0}, {"pred", 0}}));
    g.add_node(constant("two", tensor::scalar_of(2.f)));
    g.add_node(op("f", "Identity", {{"sw", 0}}));                 // false branch: x
    g.add_node(op("t", "AddV2", {{"sw", 1}, {"two", 0}}));        // true branch: x + 2
    g.add_node(op("m", "Merge", {{"f", 0}, {"t", 0}}));
    g.at("m").attrs.set("N", 2);
    graft::exec::session s(g);
    auto x = tensor::scalar_of(5.f);
    auto r1 = s.run({{"pred", tensor::scalar_of(true)}, {"x", x}}, {"m:0", "m:1"});
    CHECK(r1[0].scalar<float>()() == 7.f);
    CHECK(r1[1].scalar<std::int32_t>()() == 1);
    auto r0 = s.run({{"pred", tensor::scalar_of(false)}, {"x", x}}, {"m:0", "m:1"});
    CHECK(r0[0].scalar<float>()() == 5.f);
    CHECK(r0[1].scalar<std::int32_t>()() == 0);
    CHECK_THROWS_WITH_AS(s.run({{"pred", tensor::scalar_of(false)}, {"x", x}}, {"t:0"}),
                         doctest::Contains("dead"), graft::graph_error);
}

TEST_CASE("ref variables: init, read, assign, assign_add; uninitialized read names the variable") {
    graft::graph g;
    node v("w", "VariableV2");
    v.attrs.set("dtype", dtype::float32);
    v.attrs.set("shape", graft::shape{2});
    g.add_node(v);
    g.add_node(constant("w/initial_value", tensor::from_vector<float>({1.f, 2.f})));
    g.add_node(op("w/Assign", "Assign", {{"w", 0}, {"w/initial_value", 0}}));
    g.add_node(op("w/read", "Identity", {{"w", 0}}));
    g.add_node(constant("delta", tensor::from_vector<float>({10.f, 20.f})));
    g.add_node(op("w/AssignAdd", "AssignAdd", {{"w", 0}, {"delta", 0}}));
    graft::exec::session s(g);
    CHECK_THROWS_WITH_AS(s.run({}, {"w/read:0"}), doctest::Contains("uninitialized variable 'w'"), graft::graph_error);
    s.run({}, {}, {"w/Assign"});
    auto before = s.run({}, {"w/read:0"})[0];
    CHECK(before.flat<float>()(1) == 2.f);
    s.run({}, {}, {"w/AssignAdd"});
    s.run({}, {}, {"w/AssignAdd"});
    CHECK(s.run({}, {"w/read"})[0].flat<float>()(1) == 42.f);
    CHECK(before.flat<float>()(1) == 2.f);  // values already read are not changed underneath
}

TEST_CASE("resource variables: VarHandleOp, AssignVariableOp, ReadVariableOp, VarIsInitializedOp") {
    graft::graph g;
    node h("v", "VarHandleOp");
    h.attrs.set("dtype", dtype::float32);
    h.attrs.set("shape", graft::shape{});
    h.attrs.set("shared_name", std::string("v"));
    g.add_node(h);
    node init("v/IsInitialized/VarIsInitializedOp", "VarIsInitializedOp", {{"v", 0}});
    g.add_node(init);
    g.add_node(constant("v/Initializer/zeros", tensor::scalar_of(0.f)));
    node asg("v/Assign", "AssignVariableOp", {{"v", 0}, {"v/Initializer/zeros", 0}});
    asg.attrs.set("dtype", dtype::float32);
    g.add_node(asg);
    g.add_node(constant("one", tensor::scalar_of(1.f)));
    node inc("inc", "AssignAddVariableOp", {{"v", 0}, {"one", 0}});
    inc.attrs.set("dtype", dtype::float32);
    g.add_node(inc);
    node rd("v/Read/ReadVariableOp", "ReadVariableOp", {{"v", 0}});
    rd.attrs.set("dtype", dtype::float32);
    rd.add_control_input("inc");
    g.add_node(rd);
    graft::exec::session s(g);
    CHECK_FALSE(s.run({}, {"v/IsInitialized/VarIsInitializedOp"})[0].scalar<bool>()());
    s.run({}, {}, {"v/Assign"});
    CHECK(s.run({}, {"v/IsInitialized/VarIsInitializedOp"})[0].scalar<bool>()());
    CHECK(s.run({}, {"v/Read/ReadVariableOp"})[0].scalar<float>()() == 1.f);
    CHECK(s.run({}, {"v/Read/ReadVariableOp"})[0].scalar<float>()() == 2.f);
    CHECK(s.variable_value("v").scalar<float>()() == 2.f);
    CHECK_THROWS_AS(s.run({}, {"v:0"}), graft::invalid_argument_error);
}

TEST_CASE("two sessions share variables only when given the same store") {
    graft::graph g;
    node v("w", "VariableV2");
    v.attrs.set("dtype", dtype::float32);
    v.attrs.set("shape", graft::shape{});
    g.add_node(v);
    g.add_node(constant("c", tensor::scalar_of(4.f)));
    g.add_node(op("w/Assign", "Assign", {{"w", 0}, {"c", 0}}));
    auto store = std::make_shared<graft::exec::variable_store>();
    graft::exec::session a(g, store), b(g, store), c(g);
    a.run({}, {}, {"w/Assign"});
    CHECK(b.run({}, {"w"})[0].scalar<float>()() == 4.f);
    CHECK_THROWS_AS(c.run({}, {"w"}), graft::graph_error);
}

namespace {
// Builds what tf.while_loop writes for `while (i < limit) { i += 1; acc = body(i, acc); }`:
// Enter / Merge / LoopCond / Switch / Identity / NextIteration / Exit in frame `p`. `limit` enters as
// a loop invariant. Returns the two Exit nodes (i, acc).
template <class Body>
std::pair<std::string, std::string> counting_loop(graft::graph& g, const std::string& p, graft::endpoint i0,
                                                  graft::endpoint acc0, graft::endpoint limit, dtype acc_t, Body body) {
    auto enter = [&](const std::string& name, graft::endpoint in, dtype t, bool constant) {
        node n(p + "/" + name, "Enter", {in});
        n.attrs.set("T", t);
        n.attrs.set("frame_name", p);
        n.attrs.set("is_constant", constant);
        n.attrs.set("parallel_iterations", 10);
        g.add_node(std::move(n));
    };
    enter("Enter", i0, dtype::int32, false);
    enter("Enter_1", acc0, acc_t, false);
    enter("limit", limit, dtype::int32, true);
    auto merge = [&](const std::string& name, const std::string& a, const std::string& b, dtype t) {
        node n(p + "/" + name, "Merge", {{p + "/" + a, 0}, {p + "/" + b, 0}});
        n.attrs.set("T", t);
        n.attrs.set("N", 2);
        g.add_node(std::move(n));
    };
    merge("Merge", "Enter", "NextIteration", dtype::int32);
    merge("Merge_1", "Enter_1", "NextIteration_1", acc_t);
    g.add_node(op(p + "/Less", "Less", {{p + "/Merge", 0}, {p + "/limit", 0}}, dtype::int32));
    g.add_node(node(p + "/LoopCond", "LoopCond", {{p + "/Less", 0}}));
    g.add_node(op(p + "/Switch", "Switch", {{p + "/Merge", 0}, {p + "/LoopCond", 0}}, dtype::int32));
    g.add_node(op(p + "/Switch_1", "Switch", {{p + "/Merge_1", 0}, {p + "/LoopCond", 0}}, acc_t));
    g.add_node(op(p + "/Identity", "Identity", {{p + "/Switch", 1}}, dtype::int32));
    g.add_node(op(p + "/Identity_1", "Identity", {{p + "/Switch_1", 1}}, acc_t));
    node one = constant(p + "/one", tensor::scalar_of<std::int32_t>(1));
    one.control_inputs = {p + "/Identity"};
    g.add_node(std::move(one));
    g.add_node(op(p + "/add", "AddV2", {{p + "/Identity", 0}, {p + "/one", 0}}, dtype::int32));
    graft::endpoint next_acc = body(graft::endpoint{p + "/Identity", 0}, graft::endpoint{p + "/Identity_1", 0});
    g.add_node(op(p + "/NextIteration", "NextIteration", {{p + "/add", 0}}, dtype::int32));
    g.add_node(op(p + "/NextIteration_1", "NextIteration", {next_acc}, acc_t));
    g.add_node(op(p + "/Exit", "Exit", {{p + "/Switch", 0}}, dtype::int32));
    g.add_node(op(p + "/Exit_1", "Exit", {{p + "/Switch_1", 0}}, acc_t));
    return {p + "/Exit", p + "/Exit_1"};
}
}  // namespace

TEST_CASE("while loops: Enter/Merge/Switch/NextIteration/Exit run until LoopCond is false") {
    graft::graph g;
    g.add_node(placeholder("limit", dtype::int32, graft::shape{}));
    g.add_node(placeholder("x", dtype::float32, graft::shape{}));
    g.add_node(constant("i0", tensor::scalar_of<std::int32_t>(0)));
    g.add_node(constant("acc0", tensor::scalar_of(0.f)));
    auto [i_out, acc_out] = counting_loop(g, "while", {"i0", 0}, {"acc0", 0}, {"limit", 0}, dtype::float32,
                                          [&](graft::endpoint, graft::endpoint acc) {
                                              node e("while/x", "Enter", {{"x", 0}});
                                              e.attrs.set("T", dtype::float32);
                                              e.attrs.set("frame_name", std::string("while"));
                                              e.attrs.set("is_constant", true);
                                              g.add_node(std::move(e));
                                              g.add_node(op("while/acc", "AddV2", {acc, {"while/x", 0}}));
                                              return graft::endpoint{"while/acc", 0};
                                          });
    g.add_node(op("result", "Mul", {{acc_out, 0}, {"x", 0}}));
    graft::exec::session s(g);
    auto run = [&, fetches = std::vector<std::string>{i_out + ":0", acc_out + ":0", "result:0"}](
                   int limit, float x) {
        return s.run(
            {{"limit", tensor::scalar_of<std::int32_t>(limit)}, {"x", tensor::scalar_of(x)}},
            fetches);
    };
    auto out = run(10, 2.5f);
    CHECK(out[0].scalar<std::int32_t>()() == 10);
    CHECK(out[1].scalar<float>()() == 25.f);
    CHECK(out[2].scalar<float>()() == 62.5f);
    out = run(0, 2.5f);  // zero iterations: the Exits carry the initial values
    CHECK(out[0].scalar<std::int32_t>()() == 0);
    CHECK(out[1].scalar<float>()() == 0.f);
    out = run(3, -1.f);
    CHECK(out[0].scalar<std::int32_t>()() == 3);
    CHECK(out[1].scalar<float>()() == -3.f);
}

TEST_CASE("while loops: a loop nested in another loop's body") {
    // for (i = 0; i < n; ++i) for (j = 0; j < i; ++j) acc += 1  ->  acc = n (n - 1) / 2
    graft::graph g;
    g.add_node(placeholder("n", dtype::int32, graft::shape{}));
    g.add_node(constant("i0", tensor::scalar_of<std::int32_t>(0)));
    g.add_node(constant("acc0", tensor::scalar_of<std::int32_t>(0)));
    auto [i_out, acc_out] = counting_loop(
        g, "outer", {"i0", 0}, {"acc0", 0}, {"n", 0}, dtype::int32, [&](graft::endpoint i, graft::endpoint acc) {
            node j0 = constant("outer/j0", tensor::scalar_of<std::int32_t>(0));
            j0.control_inputs = {"outer/Identity"};
            g.add_node(std::move(j0));
            auto inner = counting_loop(g, "outer/inner", {"outer/j0", 0}, acc, i, dtype::int32,
                                       [&](graft::endpoint, graft::endpoint a) {
                                           node one = constant("outer/inner/one_acc", tensor::scalar_of<std::int32_t>(1));
                                           one.control_inputs = {"outer/inner/Identity"};
                                           g.add_node(std::move(one));
                                           g.add_node(op("outer/inner/acc", "AddV2", {a, {"outer/inner/one_acc", 0}},
                                                         dtype::int32));
                                           return graft::endpoint{"outer/inner/acc", 0};
                                       });
            return graft::endpoint{inner.second, 0};
        });
    graft::exec::session s(g);
    for (int n : {0, 1, 2, 5, 9}) {
        CAPTURE(n);
        auto out = s.run({{"n", tensor::scalar_of<std::int32_t>(n)}}, {i_out + ":0", acc_out + ":0"});
        CHECK(out[0].scalar<std::int32_t>()() == n);
        CHECK(out[1].scalar<std::int32_t>()() == n * (n - 1) / 2);
    }
    const auto& p = s.prepare({"n"}, {acc_out + ":0"}, {});
    REQUIRE(p.loops.size() == 2);
    CHECK(p.loops[1].parent == 0);
    CHECK(p.loops[0].begin < p.loops[1].begin);
    CHECK(p.loops[1].end <= p.loops[0].end);
}

TEST_CASE("while loops: a loop without its LoopCond in the run is refused with the frame's name") {
    graft::graph g;
    g.add_node(constant("v", tensor::scalar_of(1.f)));
    node e("loop/Enter", "Enter", {{"v", 0}});
    e.attrs.set("T", dtype::float32);
    e.attrs.set("frame_name", std::string("loop"));
    g.add_node(std::move(e));
    g.add_node(op("loop/Exit", "Exit", {{"loop/Enter", 0}}));
    graft::exec::session s(g);
    CHECK_THROWS_WITH_AS(s.run({}, {"loop/Exit:0"}), doctest::Contains("while loop 'loop' has no LoopCond"),
                         graft::graph_error);
}

TEST_CASE("kernel_context::memo: made on a plan step's first run, kept for later runs; nothing kept when make throws") {
    // Digamma has an op def and no graft kernel: the test registers one that parses its attr "scale"
    // through memo and counts the parses
    static int parses = 0;
    graft::exec::kernel_registry::global().add("Digamma", [](graft::exec::kernel_context& c) {
        const auto scale = c.memo<float>([&] {
            ++parses;
            return c.attr_float("scale");
        });
        tensor y = c.input(0).clone();
        for (std::int64_t i = 0; i < y.num_elements(); ++i) y.data<float>()[i] *= *scale;
        c.set_output(0, y);
    });
    graft::graph g;
    g.add_node(placeholder("x", dtype::float32));
    g.add_node(op("y", "Digamma", {{"x", 0}}));
    g.at("y").attrs.set("scale", 3.f);
    g.add_node(op("z", "Digamma", {{"x", 0}}));  // no "scale": make throws
    graft::exec::session s(g);
    const auto x = tensor::from_vector<float>({2.f});
    for (int run = 0; run < 3; ++run) CHECK(s.run({{"x", x}}, {"y"})[0].data<float>()[0] == 6.f);
    CHECK(parses == 1);
    CHECK(s.run({{"x:0", x}}, {"y:0"})[0].data<float>()[0] == 6.f);  // another signature: another plan
    CHECK(parses == 2);
    for (int run = 0; run < 2; ++run) CHECK_THROWS_WITH_AS(s.run({{"x", x}}, {"z"}), doctest::Contains("scale"), graft::graph_error);
    CHECK(parses == 4);
}

TEST_CASE("session: collect_step_stats times each node's kernel, per node, until cleared") {
    graft::graph g;
    const graft::graph_builder b(g);
    const auto x = b.placeholder("x", graft::dtype::float32, graft::shape{64, 256});
    graft::tensor w(graft::dtype::float32, {256, 256});
    for (std::int64_t i = 0; i < w.num_elements(); ++i) w.data<float>()[i] = static_cast<float>(i % 7) - 3.f;
    const auto y = b.op("MatMul", {x, b.constant(w, "w")}, {}, "mm");
    b.op("Relu", {y}, {}, "act");
    const graft::exec::session::feed_list feeds{{"x:0", graft::tensor(graft::dtype::float32, {64, 256})}};

    graft::exec::session plain(g);
    (void)plain.run(feeds, {"act:0"});
    CHECK(plain.state().step_stats().empty());  // off by default: nothing recorded

    graft::exec::session_options o;
    o.collect_step_stats = true;
    graft::exec::session s(g, o);
    for (int i = 0; i < 3; ++i) (void)s.run(feeds, {"act:0"});
    const auto st = s.state().step_stats();
    auto find = [&](const std::string& name) {
        return std::find_if(st.begin(), st.end(), [&](const graft::exec::node_stats& e) { return e.node == name; });
    };
    const auto mm = find("mm"), act = find("act");
    REQUIRE(mm != st.end());
    REQUIRE(act != st.end());
    CHECK(mm->op == "MatMul");
    CHECK(mm->calls == 3);
    CHECK(act->calls == 3);
    CHECK(mm->dev.is_cpu());
    CHECK(mm->total.count() > 0);  // 64x256x256 multiply-adds, three times
    for (std::size_t i = 1; i < st.size(); ++i) CHECK(st[i - 1].total >= st[i].total);  // longest first
    s.state().clear_step_stats();
    CHECK(s.state().step_stats().empty());
    (void)s.run(feeds, {"act:0"});
    const auto again = s.state().step_stats();
    CHECK(again.size() == st.size());
    for (const auto& e : again) CHECK(e.calls == 1);
}

TEST_CASE("session: a run's working vectors are reused: signatures switch, a failed run leaves nothing, runs overlap") {
    graft::graph g;
    g.add_node(placeholder("x", dtype::float32));
    g.add_node(constant("c", tensor::from_vector<float>({1.f, 2.f})));
    g.add_node(op("y", "Add", {{"x", 0}, {"c", 0}}));
    g.add_node(op("z", "Mul", {{"y", 0}, {"c", 0}}));
    graft::exec::session s(g);
    auto x = tensor::from_vector<float>({3.f, 4.f});
    for (int run = 0; run < 3; ++run) {  // the last signature's plan, then another, then back
        auto yz = s.run({{"x", x}}, {"y", "z"});
        CHECK(yz[0].data<float>()[1] == 6.f);
        CHECK(yz[1].data<float>()[1] == 12.f);
        auto z = s.run({{"x:0", x}}, {"z:0"});
        CHECK(z[0].data<float>()[0] == 4.f);
        CHECK(s.run({{"x", x}}, {"z"}, {"y"})[0].data<float>()[1] == 12.f);  // targets are part of the signature
    }
    // nothing of a run is held after it, also after a kernel throws: the feed's buffer is the caller's alone
    CHECK(x.buffer_unique());
    const auto bad = tensor::from_vector<float>({1.f, 2.f, 3.f});
    CHECK_THROWS_WITH_AS(s.run({{"x", bad}}, {"z"}), doctest::Contains("cannot be broadcast"), graft::graph_error);
    CHECK(bad.buffer_unique());
    CHECK(s.run({{"x", x}}, {"z"})[0].data<float>()[0] == 4.f);
    CHECK(x.buffer_unique());
    // two threads running the same plan at once, each its own values
    std::vector<int> wrong(2, 0);
    std::vector<std::thread> ts;
    for (int t = 0; t < 2; ++t) {
        ts.emplace_back([&, t] {
            for (int i = 0; i < 300; ++i) {
                const float v = static_cast<float>(t * 1000 + i);
                const auto r = s.run({{"x", tensor::from_vector<float>({v, v})}}, {"z"})[0];
                if (r.data<float>()[0] != v + 1.f || r.data<float>()[1] != (v + 2.f) * 2.f) ++wrong[static_cast<std::size_t>(t)];
            }
        });
    }
    for (auto& t : ts) t.join();
    CHECK(wrong[0] == 0);
    CHECK(wrong[1] == 0);
}

TEST_CASE("session: Consts read only on the CPU are computed with the plan; readers never overwrite them") {
    graft::graph g;
    g.add_node(placeholder("x", dtype::float32));
    g.add_node(constant("c1", tensor::from_vector<float>({1.f, 2.f})));
    g.add_node(op("n", "Neg", {{"c1", 0}}));  // c1's only reader: an unhoisted slot would be forwardable
    g.add_node(constant("c2", tensor::from_vector<float>({10.f, 20.f})));
    g.add_node(op("y", "Add", {{"x", 0}, {"c2", 0}}));
    g.add_node(constant("c3", tensor::from_vector<float>({5.f, 6.f})));
    g.at("c3").control_inputs.push_back("y");  // a control input: stays a step (deadness)
    g.add_node(op("z", "Mul", {{"y", 0}, {"c3", 0}}));
    g.add_node(constant("c4", tensor::from_vector<float>({7.f, 8.f})));  // fetched: stays a step
    g.add_node(op("w", "Sub", {{"c4", 0}, {"x", 0}}));
    node bad("bad", "Const");  // no "value": its kernel throws, so it stays a step and throws when run
    bad.attrs.set("dtype", dtype::float32);
    g.add_node(std::move(bad));
    g.add_node(op("nb", "Neg", {{"bad", 0}}));
    graft::exec::session s(g);
    const std::vector<std::string> fetches{"n:0", "y:0", "z:0", "c4:0", "w:0"};
    const auto& p = s.prepare({"x:0"}, fetches, {});
    std::vector<std::string> hoisted;
    for (const auto& st : p.steps)
        if (st.hoisted) hoisted.push_back(st.n->name);
    std::sort(hoisted.begin(), hoisted.end());
    CHECK(hoisted == std::vector<std::string>{"c1", "c2"});
    REQUIRE(p.constants.size() == 2);
    for (const auto& st : p.steps) {
        if (st.n->name == "n") CHECK(st.inputs == std::vector<int>{-1 - (p.constants[0].t.data<float>()[0] == 1.f ? 0 : 1)});
        if (st.n->name == "z") CHECK(st.inputs[1] >= 0);
    }
    const auto x = tensor::from_vector<float>({1.f, 1.f});
    for (int run = 0; run < 3; ++run) {  // Neg may not negate c1's buffer in place: same values each run
        const auto r = s.run({{"x:0", x}}, fetches);
        CHECK(r[0].data<float>()[0] == -1.f);
        CHECK(r[0].data<float>()[1] == -2.f);
        CHECK(r[1].data<float>()[1] == 21.f);
        CHECK(r[2].data<float>()[0] == 55.f);
        CHECK(r[3].data<float>()[1] == 8.f);
        CHECK(r[4].data<float>()[0] == 6.f);
    }
    CHECK_THROWS_WITH_AS(s.run({}, {"nb:0"}), doctest::Contains("value"), graft::graph_error);
    try {
        (void)s.run({}, {"nb:0"});
    } catch (const graft::error& e) {
        CHECK(e.where().node == "bad");
    }
}

TEST_CASE("kernel_context::forwardable_slot: the slot itself when the kernel may overwrite it; Add writes there") {
    graft::exec::session_state state;
    const node n("k", "Add");
    const auto* kernel = graft::exec::kernel_registry::global().find("Add");
    REQUIRE(kernel);
    const char last[] = {1, 1}, kept[] = {0, 1};
    {  // a last use of an unshared buffer: the slot; Add's result lands in that buffer
        auto a = graft::exec::value::of(tensor::from_vector<float>({1.f, 2.f}));
        auto b = graft::exec::value::of(tensor::from_vector<float>({10.f, 20.f}));
        const void* buf = a.t.raw_data();
        std::vector<graft::exec::value*> in{&a, &b};
        std::vector<graft::exec::value> outs(1);
        graft::exec::kernel_context c(n, graft::op_registry::global(), in, outs, state);
        c.set_forwardable(last);
        CHECK(c.forwardable_slot(0) == &a.t);
        CHECK(c.forwardable_input(0).raw_data() == buf);  // the copying form: the same tensor
        (*kernel)(c);
        CHECK(outs[0].t.raw_data() == buf);
        CHECK(outs[0].t.data<float>()[0] == 11.f);
        CHECK(outs[0].t.data<float>()[1] == 22.f);
    }
    {  // read again later (not a last use), or held elsewhere too: null, and Add writes a new buffer
        auto a = graft::exec::value::of(tensor::from_vector<float>({1.f, 2.f}));
        auto b = graft::exec::value::of(tensor::from_vector<float>({10.f, 20.f}));
        const tensor held = b.t;  // a second owner of b's buffer
        std::vector<graft::exec::value*> in{&a, &b};
        std::vector<graft::exec::value> outs(1);
        graft::exec::kernel_context c(n, graft::op_registry::global(), in, outs, state);
        c.set_forwardable(kept);
        CHECK(c.forwardable_slot(0) == nullptr);
        CHECK(c.forwardable_slot(1) == nullptr);
        CHECK_FALSE(c.forwardable_input(1).valid());
        (*kernel)(c);
        CHECK(outs[0].t.raw_data() != a.t.raw_data());
        CHECK(outs[0].t.raw_data() != b.t.raw_data());
        CHECK(outs[0].t.data<float>()[1] == 22.f);
        CHECK(a.t.data<float>()[1] == 2.f);
        CHECK(held.data<float>()[1] == 20.f);
    }
    {  // wrapped memory (a user's array) is never written
        float user[2] = {1.f, 2.f};
        auto a = graft::exec::value::of(tensor::view(dtype::float32, graft::shape{2}, user, nullptr));
        std::vector<graft::exec::value*> in{&a, &a};
        std::vector<graft::exec::value> outs(1);
        graft::exec::kernel_context c(n, graft::op_registry::global(), in, outs, state);
        c.set_forwardable(last);
        CHECK(c.forwardable_slot(0) == nullptr);
    }
}

TEST_CASE("kernel_context::input: the slot itself; a device copy kept in it unless the slot is another input too; a variable's value held") {
    // moves a tensor to a device by relabelling its host memory (enough to see where input() puts it)
    struct relabel : graft::exec::transfer_fn {
        int moves = 0;
        tensor move(const tensor& t, const graft::device& to) override {
            ++moves;
            if (to.is_cpu()) return t.clone();
            return tensor::view(t.type(), t.shape(), t.raw_data(), std::make_shared<tensor>(t), to);
        }
        graft::exec::device_context& context(const graft::device&) override { throw graft::error("no device context here"); }
    };
    const graft::device gpu{graft::device_kind::cuda, 0};
    graft::exec::session_state state;
    const node n("k", "Identity");
    std::vector<graft::exec::value> outs(1);
    {  // on the CPU: the slot's own tensor, no copy
        auto slot = graft::exec::value::of(tensor::from_vector<float>({1.f, 2.f}));
        std::vector<graft::exec::value*> in{&slot};
        graft::exec::kernel_context c(n, graft::op_registry::global(), in, outs, state);
        CHECK(&c.input(0) == &slot.t);
        CHECK(slot.t.buffer_unique());
    }
    {  // on a device: moved once, the copy kept in the slot for later readers
        auto slot = graft::exec::value::of(tensor::from_vector<float>({1.f, 2.f}));
        std::vector<graft::exec::value*> in{&slot};
        relabel tr;
        const graft::exec::kernel_def def;
        graft::exec::kernel_context c(n, graft::op_registry::global(), in, outs, state);
        c.set_placement(gpu, &def, &tr);
        const tensor& d = c.input(0);
        CHECK(d.dev() == gpu);
        CHECK(&d == &slot.t);
        CHECK(&c.input(0) == &d);
        CHECK(tr.moves == 1);
    }
    {  // one slot as input 0 (on the device) and input 1 (read on the host): input 1's reference keeps the host tensor
        auto slot = graft::exec::value::of(tensor::from_vector<float>({1.f, 2.f}));
        std::vector<graft::exec::value*> in{&slot, &slot};
        relabel tr;
        graft::exec::kernel_def def;
        def.host_inputs = {1};
        graft::exec::kernel_context c(n, graft::op_registry::global(), in, outs, state);
        c.set_placement(gpu, &def, &tr);
        const tensor& h = c.input(1);
        const tensor& d = c.input(0);
        CHECK(h.dev().is_cpu());
        CHECK(&h == &slot.t);
        CHECK(d.dev() == gpu);
        CHECK(&d != &slot.t);
        CHECK(slot.t.dev().is_cpu());
        CHECK(tr.moves == 1);
    }
    {  // a ref edge: the value read, held by the context while the variable changes
        auto var = std::make_shared<graft::exec::variable>();
        var->name = "v";
        var->type = dtype::float32;
        var->assign(tensor::from_vector<float>({3.f, 4.f}));
        auto slot = graft::exec::value::ref(var);
        std::vector<graft::exec::value*> in{&slot};
        graft::exec::kernel_context c(n, graft::op_registry::global(), in, outs, state);
        const tensor& r = c.input(0);
        var->assign(tensor::from_vector<float>({5.f, 6.f}));
        CHECK(r.data<float>()[0] == 3.f);
        CHECK(c.input(0).data<float>()[0] == 5.f);
        CHECK(r.data<float>()[1] == 4.f);
    }
}
