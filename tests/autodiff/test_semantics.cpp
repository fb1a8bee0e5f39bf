// tf.gradients semantics: sums over paths, StopGradient, unconnected xs, integer paths, grad_ys,
// variables as xs, names under the gradients scope, second order, errors.
#include <doctest/doctest.h>

#include "graft/autodiff/gradients.hpp"
#include "graft/exec/kernel.hpp"
#include "graft/exec/session.hpp"

using graft::endpoint;
using graft::graph;
using graft::graph_builder;
using graft::tensor;
using graft::dtype;

namespace {
double run1(const graph& g, const endpoint& e, const graft::exec::session::feed_list& feeds = {},
            const std::vector<std::string>& targets = {}) {
    graft::exec::session s{g};
    if (!targets.empty()) s.run({}, {}, targets);
    return graft::cast(s.run(feeds, {e.str()})[0], dtype::float64).data<double>()[0];
}
}  // namespace

TEST_CASE("gradients: f(x) = a*x^2 + b, the worked example") {
    graph g;
    graph_builder b(g);
    auto x = b.placeholder("x", dtype::float64);
    auto f = b.op("AddV2", {b.op("Mul", {b.scalar(3.0), b.op("Square", {x})}), b.scalar(1.0)});
    auto dx = graft::gradients(g, {f}, {x});
    REQUIRE(dx[0]);
    CHECK(dx[0]->node.rfind("gradients/", 0) == 0);
    CHECK(run1(g, *dx[0], {{"x:0", tensor::scalar_of(2.0)}}) == doctest::Approx(12.0));
}

TEST_CASE("gradients: paths are summed, StopGradient blocks, scopes are unique") {
    graph g;
    graph_builder b(g);
    auto x = b.placeholder("x", dtype::float64);
    // y = x*x + 3x + stop(x) * x: dy/dx = 2x + 3 + stop(x) = 3x + 3
    auto y = b.op("AddN", {b.op("Mul", {x, x}), b.op("Mul", {b.scalar(3.0), x}),
                           b.op("Mul", {b.op("StopGradient", {x}), x})});
    auto d1 = graft::gradients(g, {y}, {x});
    auto d2 = graft::gradients(g, {y}, {x});
    REQUIRE(d1[0]);
    REQUIRE(d2[0]);
    CHECK(d1[0]->node.rfind("gradients/", 0) == 0);
    CHECK(d2[0]->node.rfind("gradients_1/", 0) == 0);
    CHECK(run1(g, *d1[0], {{"x", tensor::scalar_of(2.0)}}) == doctest::Approx(9.0));
    CHECK(run1(g, *d2[0], {{"x", tensor::scalar_of(2.0)}}) == doctest::Approx(9.0));
    // Several ys: d(y + y)/dx.
    auto d3 = graft::gradients(g, {y, y}, {x});
    CHECK(run1(g, *d3[0], {{"x", tensor::scalar_of(2.0)}}) == doctest::Approx(18.0));
    // A custom scope.
    graft::autodiff::gradient_options o;
    o.scope = "my_grads";
    auto d4 = graft::gradients(g, {y}, {x}, {}, o);
    CHECK(d4[0]->node.rfind("my_grads/", 0) == 0);
}

TEST_CASE("gradients: unconnected xs give nullopt, or zeros on request") {
    graph g;
    graph_builder b(g);
    auto x = b.placeholder("x", dtype::float64);
    auto z = b.placeholder("z", dtype::float64, graft::shape{2});
    auto y = b.op("Square", {x});
    auto d = graft::gradients(g, {y}, {x, z});
    CHECK(d[0]);
    CHECK(!d[1]);
    // StopGradient makes a path unconnected too.
    auto s = b.op("Mul", {b.op("StopGradient", {z}), b.scalar(2.0)});
    CHECK(!graft::gradients(g, {s}, {z})[0]);
    graft::autodiff::gradient_options o;
    o.zeros_for_unconnected = true;
    auto dz = graft::gradients(g, {y}, {x, z}, {}, o);
    REQUIRE(dz[1]);
    graft::exec::session sess{g};
    auto out = sess.run({{"x", tensor::scalar_of(1.0)}, {"z", tensor::from_vector<double>({5.0, 6.0})}}, {dz[1]->str()});
    CHECK(out[0].shape() == graft::shape{2});
    CHECK(out[0].data<double>()[0] == 0.0);
}

TEST_CASE("gradients: integer paths carry no gradient") {
    graph g;
    graph_builder b(g);
    auto x = b.placeholder("x", dtype::float64);
    // y = x * cast<double>(cast<int>(x)) : the integer path contributes nothing, dy/dx = cast(x).
    auto xi = b.op("Cast", {x}, {{"DstT", dtype::int32}});
    auto y = b.op("Mul", {x, b.op("Cast", {xi}, {{"DstT", dtype::float64}})});
    auto d = graft::gradients(g, {y}, {x});
    REQUIRE(d[0]);
    CHECK(run1(g, *d[0], {{"x", tensor::scalar_of(2.5)}}) == doctest::Approx(2.0));
    // Only through integers: unconnected.
    auto only_int = b.op("Cast", {b.op("Mul", {xi, xi})}, {{"DstT", dtype::float64}});
    CHECK(!graft::gradients(g, {only_int}, {x})[0]);
    // An integer y needs grad_ys.
    CHECK_THROWS_AS(graft::gradients(g, {xi}, {x}), graft::invalid_argument_error);
}

TEST_CASE("gradients: grad_ys weight the ys") {
    graph g;
    graph_builder b(g);
    auto x = b.placeholder("x", dtype::float64, graft::shape{3});
    auto y = b.op("Mul", {x, x});
    auto gy = b.constant(tensor::from_vector<double>({1.0, 10.0, 100.0}));
    auto d = graft::gradients(g, {y}, {x}, {gy});
    graft::exec::session s{g};
    auto out = s.run({{"x", tensor::from_vector<double>({1.0, 2.0, 3.0})}}, {d[0]->str()})[0];
    CHECK(out.data<double>()[0] == doctest::Approx(2.0));
    CHECK(out.data<double>()[1] == doctest::Approx(40.0));
    CHECK(out.data<double>()[2] == doctest::Approx(600.0));
    CHECK_THROWS_AS(graft::gradients(g, {y}, {x}, {gy, gy}), graft::invalid_argument_error);
    // x == y: the gradient is grad_y itself.
    auto self = graft::gradients(g, {x}, {x}, {gy});
    graft::exec::session s2{g};
    CHECK(s2.run({{"x", tensor::from_vector<double>({1.0, 2.0, 3.0})}}, {self[0]->str()})[0].data<double>()[2] == 100.0);
}

TEST_CASE("gradients: TF1 ref variables and resource variables as xs") {
    graph g;
    graph_builder b(g);
    auto w = b.variable("w", tensor::from_vector<double>({2.0, 3.0}));
    auto x = b.placeholder("x", dtype::float64, graft::shape{2});
    auto loss = b.op("Sum", {b.op("Mul", {w.value, x}), b.constant(tensor::from_vector<std::int32_t>({0}))});
    auto d = graft::gradients(g, {loss}, {w.ref});
    REQUIRE(d[0]);
    graft::exec::session s{g};
    s.run({}, {}, {w.assign});
    auto out = s.run({{"x", tensor::from_vector<double>({5.0, 7.0})}}, {d[0]->str()})[0];
    CHECK(out.data<double>()[0] == 5.0);
    CHECK(out.data<double>()[1] == 7.0);

    // Resource: VarHandleOp -> ReadVariableOp.
    auto h = b.op("VarHandleOp", {}, {{"dtype", dtype::float64}, {"shape", graft::shape{}}, {"container", std::string()},
                                        {"shared_name", std::string("v")}}, "v");
    auto init = b.add("AssignVariableOp", {h, b.scalar(4.0)}, {{"dtype", dtype::float64}}, "v/init").name;
    auto r1 = b.op("ReadVariableOp", {h}, {{"dtype", dtype::float64}});
    auto r2 = b.op("ReadVariableOp", {h}, {{"dtype", dtype::float64}});
    auto y = b.op("Mul", {r1, r2});  // v^2 through two reads: d/dv = 2v
    auto dv = graft::gradients(g, {y}, {h});
    REQUIRE(dv[0]);
    graft::exec::session s2{g};
    s2.run({}, {}, {init});
    CHECK(s2.run({}, {dv[0]->str()})[0].data<double>()[0] == 8.0);
    graft::autodiff::gradient_options o;
    o.zeros_for_unconnected = true;
    auto dz = graft::gradients(g, {b.op("Square", {x})}, {h}, {}, o);
    REQUIRE(dz[0]);
    graft::exec::session s3{g};
    s3.run({}, {}, {init});
    CHECK(s3.run({}, {dz[0]->str()})[0].data<double>()[0] == 0.0);
}

TEST_CASE("gradients: second order through TanhGrad, SigmoidGrad, ReluGrad") {
    graph g;
    graph_builder b(g);
    auto x = b.placeholder("x", dtype::float64);
    auto t = b.op("Tanh", {x});
    auto dt = graft::gradients(g, {t}, {x})[0];
    auto ddt = graft::gradients(g, {*dt}, {x})[0];
    REQUIRE(ddt);
    double xv = 0.7, th = std::tanh(xv);
    CHECK(run1(g, *ddt, {{"x", tensor::scalar_of(xv)}}) == doctest::Approx(-2 * th * (1 - th * th)));
    auto sg = b.op("Sigmoid", {x});
    auto ds = graft::gradients(g, {sg}, {x})[0];
    auto dds = graft::gradients(g, {*ds}, {x})[0];
    double s = 1 / (1 + std::exp(-xv));
    CHECK(run1(g, *dds, {{"x", tensor::scalar_of(xv)}}) == doctest::Approx(s * (1 - s) * (1 - 2 * s)));
    // relu(x) * x: first derivative 2x (x > 0), second 2.
    auto rx = b.op("Mul", {b.op("Relu", {x}), x});
    auto dr = graft::gradients(g, {rx}, {x})[0];
    auto ddr = graft::gradients(g, {*dr}, {x})[0];
    CHECK(run1(g, *ddr, {{"x", tensor::scalar_of(xv)}}) == doctest::Approx(2.0));
    CHECK(run1(g, *ddr, {{"x", tensor::scalar_of(-xv)}}) == doctest::Approx(0.0));
}

TEST_CASE("gradients: errors name the op and node") {
    graph g;
    graph_builder b(g);
    auto x = b.placeholder("x", dtype::float64);
    auto p = b.op("PreventGradient", {x}, {{"message", std::string("no second derivative here")}}, "guard");
    auto y = b.op("Square", {p});
    CHECK_THROWS_WITH_AS(graft::gradients(g, {y}, {x}), doctest::Contains("'guard' (op PreventGradient)"), graft::graph_error);
    CHECK_THROWS_WITH_AS(graft::gradients(g, {y}, {x}), doctest::Contains("no second derivative here"), graft::graph_error);
    // An op without a rule: the error names it and says how to register one.
    auto f = b.op("Floor", {x});
    CHECK(!graft::gradients(g, {b.op("Mul", {f, b.scalar(2.0)})}, {x})[0]);  // not differentiable: none
    // RGBToHSV: a CPU kernel, differentiable in TF, no rule in graft yet (docs/OPS.md: missing).
    auto rgb = b.placeholder("rgb", dtype::float64);
    auto hsv = b.op("RGBToHSV", {rgb}, {}, "my_hsv");
    auto total = b.op("Sum", {hsv, b.constant(tensor::from_vector<std::int32_t>({2}, {0, 1}))});
    try {
        (void)graft::gradients(g, {total}, {rgb});
        FAIL("expected a graph_error");
    } catch (const graft::graph_error& err) {
        std::string w = err.what();
        CHECK(w.find("RGBToHSV") != std::string::npos);
        CHECK(w.find("my_hsv") != std::string::npos);
        CHECK(w.find("register_gradient") != std::string::npos);
    }
    // Registering a rule makes it work (and it is used by every later call). The rule here scales
    // the incoming gradient by the input (not TF's rule: the test checks the registry, not HSV).
    graft::autodiff::register_gradient("RGBToHSV", [](graft::autodiff::grad_context& c) {
        return graft::autodiff::grad_list{c.b().op("Mul", {*c.grad(0), c.input(0)})};
    });
    auto dr = graft::gradients(g, {total}, {rgb});
    REQUIRE(dr[0]);
    graft::exec::session s{g};
    auto out = s.run({{"rgb", tensor::from_vector<double>({1, 3}, {0.25, 0.5, 0.75})}}, {dr[0]->str()});
    REQUIRE(out[0].num_elements() == 3);
    CHECK(out[0].data<double>()[0] == doctest::Approx(0.25));
    CHECK(out[0].data<double>()[2] == doctest::Approx(0.75));
    CHECK_THROWS_AS(graft::gradients(g, {endpoint{"nope", 0}}, {x}), graft::invalid_argument_error);
}

TEST_CASE("gradients: a cycle that is not a well-formed TF1 while loop is an error, not a hang") {
    // (well-formed loops differentiate: tests/autodiff/test_tf1_loops.cpp)
    graph g;
    graph_builder b(g);
    auto x = b.placeholder("x", dtype::float64);
    // A cycle Merge -> Mul -> NextIteration -> Merge (shaped like a TF1 loop body, without Enter).
    graft::node m("loop/Merge", "Merge", {x, endpoint{"loop/NextIteration", 0}});
    m.attrs.set("T", dtype::float64);
    m.attrs.set("N", std::int64_t{2});
    g.add_node(m);
    auto body = b.op("Mul", {endpoint{"loop/Merge", 0}, b.scalar(2.0)}, {}, "loop/body");
    graft::node ni("loop/NextIteration", "NextIteration", {body});
    ni.attrs.set("T", dtype::float64);
    g.add_node(ni);
    auto y = b.op("Square", {endpoint{"loop/Merge", 0}});
    CHECK_THROWS_AS(graft::gradients(g, {y}, {x}), graft::graph_error);

    // A frame with Enter, Merge and NextIteration but no LoopCond/Switch: an error naming the loop.
    graph g2;
    graph_builder b2(g2);
    auto x2 = b2.placeholder("x", dtype::float64);
    auto en = b2.op("Enter", {x2}, {{"frame_name", std::string("bad")}}, "bad/Enter");
    graft::node m2("bad/Merge", "Merge", {en, endpoint{"bad/NextIteration", 0}});
    m2.attrs.set("T", dtype::float64);
    m2.attrs.set("N", std::int64_t{2});
    g2.add_node(m2);
    graft::node ni2("bad/NextIteration", "NextIteration", {b2.op("Mul", {endpoint{"bad/Merge", 0}, b2.scalar(2.0)})});
    ni2.attrs.set("T", dtype::float64);
    g2.add_node(ni2);
    auto ex = b2.op("Exit", {endpoint{"bad/Merge", 0}}, {}, "bad/Exit");
    try {
        graft::gradients(g2, {b2.op("Square", {ex})}, {x2});
        FAIL("no error");
    } catch (const graft::graph_error& e) {
        CHECK(e.message().find("while loop 'bad'") != std::string::npos);
    }
}
