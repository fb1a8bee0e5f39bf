// minimize: compute_gradients through graft's autodiff, then apply_gradients, on a linear
// regression whose gradient has a closed form.
#include <doctest/doctest.h>

#include <cmath>

#include "graft/exec/session.hpp"
#include "graft/train/optimizer.hpp"

using graft::dtype;
using graft::tensor;
namespace train = graft::train;

TEST_CASE("minimize: one GradientDescent step on mean squared error equals the closed form") {
    graft::meta_graph mg;
    graft::graph_builder b(mg.graph);
    auto x = b.placeholder("x", dtype::float64, graft::shape{4, 2});
    auto y = b.placeholder("y", dtype::float64, graft::shape{4, 1});
    auto w = train::create_variable(mg, b, "w", tensor::from_vector<double>({2, 1}, {0.5, -0.25}));
    auto bias = train::create_variable(mg, b, "b", tensor::from_vector<double>({1}, {0.1}));
    auto frozen = train::create_variable(mg, b, "frozen", tensor::scalar_of(1.0));
    auto pred = b.op("AddV2", {b.op("MatMul", {x, w.value}), bias.value});
    auto err = b.op("Sub", {pred, y});
    auto loss = b.op("Mean", {b.op("Square", {err}), b.constant(tensor::from_vector<std::int32_t>({0, 1}))});
    auto step = train::get_or_create_global_step(mg);

    train::gradient_descent opt(0.25);
    auto gv = opt.compute_gradients(mg, loss);
    REQUIRE(gv.size() == 3);
    CHECK(gv[0].var.name == "w");
    CHECK(gv[0].grad.has_value());
    CHECK(!gv[2].grad.has_value());  // frozen is trainable but the loss does not use it
    CHECK(gv[0].grad->node.rfind("gradients/", 0) == 0);
    std::string op = opt.minimize(mg, loss, train::var_list::names({"w", "b"}), step);
    CHECK(op == "GradientDescent");
    CHECK(mg.graph.find(op)->op == "AssignAdd");

    std::string init = train::global_variables_initializer(mg);
    graft::exec::session s(mg.graph);
    s.run({}, {}, {init});
    const double xs[4][2] = {{1, 2}, {3, -1}, {0.5, 0.5}, {-2, 1}};
    const double ys[4] = {1, 0, 2, -1};
    tensor xt = tensor::from_vector<double>({4, 2}, {1, 2, 3, -1, 0.5, 0.5, -2, 1});
    tensor yt = tensor::from_vector<double>({4, 1}, {1, 0, 2, -1});
    s.run({{"x:0", xt}, {"y:0", yt}}, {}, {op});
    double w0 = 0.5, w1 = -0.25, b0 = 0.1, gw0 = 0, gw1 = 0, gb = 0;
    for (int i = 0; i < 4; ++i) {
        double e = xs[i][0] * w0 + xs[i][1] * w1 + b0 - ys[i];
        gw0 += 2 * e * xs[i][0] / 4;
        gw1 += 2 * e * xs[i][1] / 4;
        gb += 2 * e / 4;
    }
    tensor wv = s.variable_value("w");
    CHECK(wv.data<double>()[0] == doctest::Approx(w0 - 0.25 * gw0).epsilon(1e-12));
    CHECK(wv.data<double>()[1] == doctest::Approx(w1 - 0.25 * gw1).epsilon(1e-12));
    CHECK(s.variable_value("b").data<double>()[0] == doctest::Approx(b0 - 0.25 * gb).epsilon(1e-12));
    CHECK(s.variable_value("global_step").data<std::int64_t>()[0] == 1);

    // a loss that no variable reaches
    auto c = b.op("Mean", {b.op("Square", {y}), b.constant(tensor::from_vector<std::int32_t>({0, 1}))});
    CHECK_THROWS_AS(opt.minimize(mg, c), graft::invalid_argument_error);
}

TEST_CASE("minimize with Adam trains a regression down") {
    graft::meta_graph mg;
    graft::graph_builder b(mg.graph);
    auto x = b.placeholder("x", dtype::float32, graft::shape{-1, 1});
    auto y = b.placeholder("y", dtype::float32, graft::shape{-1, 1});
    auto w = train::create_variable(mg, b.sub("dense"), "kernel", tensor::from_vector<float>({1, 1}, {0.0f}));
    auto pred = b.op("MatMul", {x, w.value});
    auto loss = b.op("Mean", {b.op("Square", {b.op("Sub", {pred, y})}), b.constant(tensor::from_vector<std::int32_t>({0, 1}))});
    train::adam opt(0.1);
    std::string op = opt.minimize(mg, loss, train::var_list::scope("dense"), train::get_or_create_global_step(mg));
    CHECK(mg.graph.find("dense/kernel/Adam") != nullptr);
    CHECK(mg.graph.find("Adam/update_dense/kernel/ApplyAdam") != nullptr);
    std::string init = train::global_variables_initializer(mg);
    graft::exec::session s(mg.graph);
    s.run({}, {}, {init});
    tensor xt = tensor::from_vector<float>({3, 1}, {1, 2, 3});
    tensor yt = tensor::from_vector<float>({3, 1}, {2, 4, 6});
    float first = s.run({{"x:0", xt}, {"y:0", yt}}, {loss.str()})[0].data<float>()[0];
    for (int i = 0; i < 100; ++i) s.run({{"x:0", xt}, {"y:0", yt}}, {}, {op});
    float last = s.run({{"x:0", xt}, {"y:0", yt}}, {loss.str()})[0].data<float>()[0];
    CHECK(last < first * 0.01f);
}
