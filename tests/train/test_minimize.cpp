// minimize: compute_gradients through graft's autodiff, then apply_gradients, on a linear
// regression whose gradient has a closed form.
#include <doctest/doctest.h>

#include <cmath>

#include "graft/exec/session.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/saver.hpp"
#include "support/fixtures.hpp"

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

TEST_CASE("minimize on TF's own training graph (mnist-softmax/train_model.ckpt.meta): names beside TF's, restore, loss goes down") {
    auto meta = graft::test::fixture("mnist-softmax/train_model.ckpt.meta");
    GRAFT_REQUIRE_PATH(meta);
    graft::meta_graph mg = graft::tf::load_meta_graph(meta.string());
    train::gradient_descent opt(0.5);
    std::string op = opt.minimize(mg, {"Mean", 0});
    CHECK(op == "GradientDescent_1");  // TF's own train op is "GradientDescent"
    CHECK(mg.graph.find("GradientDescent_1/update_Variable/ApplyGradientDescent") != nullptr);
    train::saver sv(mg);
    CHECK(sv.def().restore_op_name == "save_1/restore_all");
    CHECK(sv.saveables().size() == 2);
    graft::exec::session s(mg.graph);
    auto rep = sv.restore(s, graft::test::fixture("mnist-softmax/train_model.ckpt").string(), train::restore_mode::exact);
    CHECK(rep.restored.size() == 2);
    std::vector<float> px(8 * 784), py(8 * 10, 0.0f);
    for (std::size_t i = 0; i < px.size(); ++i) px[i] = static_cast<float>((i * 7919) % 256) / 255.0f;
    for (int i = 0; i < 8; ++i) py[static_cast<std::size_t>(i * 10 + i % 10)] = 1.0f;
    graft::exec::session::feed_list feeds{{"Placeholder:0", tensor::from_vector<float>({8, 784}, px)},
                                          {"Placeholder_1:0", tensor::from_vector<float>({8, 10}, py)}};
    float before = s.run(feeds, {"Mean:0"})[0].data<float>()[0];
    for (int i = 0; i < 5; ++i) s.run(feeds, {}, {op});
    float after = s.run(feeds, {"Mean:0"})[0].data<float>()[0];
    CHECK(after < before);
}
