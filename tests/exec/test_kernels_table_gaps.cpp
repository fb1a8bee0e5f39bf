// Kernels for ops the op table declared without one (the gaps `graft ops --check` found): MaxPoolV2,
// EuclideanNorm, ResourceGather, DisableCopyOnRead, StaticRegexFullMatch, the Adadelta / Ftrl /
// KerasMomentum updates, RandomShuffle and Multinomial — each through a session, against float64
// references written here, plus their gradients through graft's checker.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "graft/autodiff/check.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"

using graft::dtype;
using graft::endpoint;
using graft::shape;
using graft::tensor;

namespace {

tensor f32(const shape& s, std::vector<float> v) { return tensor::from_vector<float>(s, v); }
tensor f64(const shape& s, std::vector<double> v) { return tensor::from_vector<double>(s, v); }
tensor i32(const shape& s, std::vector<std::int32_t> v) { return tensor::from_vector<std::int32_t>(s, v); }

std::vector<double> values(const tensor& t) {
    auto d = graft::cast(t, dtype::float64);
    return {d.data<double>(), d.data<double>() + d.num_elements()};
}

}  // namespace

TEST_CASE("MaxPoolV2 takes ksize/strides as inputs and equals MaxPool; its gradient is MaxPoolGradV2") {
    graft::graph g;
    graft::graph_builder b(g);
    std::vector<float> v(2 * 4 * 4 * 3);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(i) * 0.7f);
    auto x = b.constant(f32({2, 4, 4, 3}, v));
    auto k = b.constant(i32({4}, {1, 2, 2, 1})), st = b.constant(i32({4}, {1, 2, 2, 1}));
    auto v2 = b.op("MaxPoolV2", {x, k, st}, {{"padding", std::string("SAME")}});
    auto v1 = b.op("MaxPool", {x}, {{"ksize", graft::attr_value::list_of(std::vector<std::int64_t>{1, 2, 2, 1})},
                                     {"strides", graft::attr_value::list_of(std::vector<std::int64_t>{1, 2, 2, 1})},
                                     {"padding", std::string("SAME")}});
    graft::exec::session s(g);
    auto out = s.run({}, {v2.str(), v1.str()});
    CHECK(out[0].shape() == shape{2, 2, 2, 3});
    CHECK(graft::equal(out[0], out[1]));

    auto r = graft::autodiff::check_gradients(
        [](const graft::graph_builder& gb, const std::vector<endpoint>& xs) {
            auto kk = gb.constant(i32({4}, {1, 2, 2, 1}));
            return std::vector<endpoint>{gb.op("MaxPoolV2", {xs[0], kk, kk}, {{"padding", std::string("VALID")}})};
        },
        {f64({1, 4, 4, 1}, {0.1, 0.9, 0.3, 0.4, 0.5, 0.2, 0.8, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95})});
    INFO(r.str());
    CHECK(r.max_rel_error < 1e-6);
}

TEST_CASE("EuclideanNorm: sqrt of the sum of squares over the axes, keep_dims, ints, and its gradient") {
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.constant(f32({2, 3}, {3, 4, 0, -1, 2, 2}));
    auto ax = b.constant(i32({1}, {1}));
    auto n = b.op("EuclideanNorm", {x, ax});
    auto nk = b.op("EuclideanNorm", {x, ax}, {{"keep_dims", true}});
    auto xi = b.constant(i32({3}, {3, 4, 1}));  // sqrt(26) = 5.09 -> 5
    auto ni = b.op("EuclideanNorm", {xi, b.constant(i32({1}, {0}))});
    graft::exec::session s(g);
    auto out = s.run({}, {n.str(), nk.str(), ni.str()});
    CHECK(out[0].shape() == shape{2});
    CHECK(values(out[0])[0] == doctest::Approx(5.0));
    CHECK(values(out[0])[1] == doctest::Approx(3.0));
    CHECK(out[1].shape() == shape{2, 1});
    CHECK(out[2].type() == dtype::int32);
    CHECK(values(out[2])[0] == 5.0);

    auto r = graft::autodiff::check_gradients(
        [](const graft::graph_builder& gb, const std::vector<endpoint>& xs) {
            return std::vector<endpoint>{gb.op("EuclideanNorm", {xs[0], gb.constant(i32({1}, {0}))})};
        },
        {f64({2, 2}, {0.3, -1.2, 2.0, 0.7})});
    INFO(r.str());
    CHECK(r.max_rel_error < 1e-6);
}

TEST_CASE("ResourceGather reads rows of a resource variable; its gradient sums rows picked twice") {
    graft::graph g;
    graft::graph_builder b(g);
    auto h = b.op("VarHandleOp", {}, {{"dtype", dtype::float32}, {"shape", shape{3, 2}}, {"shared_name", std::string("emb")}});
    b.add("AssignVariableOp", {h, b.constant(f32({3, 2}, {1, 2, 3, 4, 5, 6}))}, {{"dtype", dtype::float32}}, "init");
    b.add("DisableCopyOnRead", {h}, {}, "no_copy");
    auto idx = b.constant(i32({3}, {2, 0, 2}));
    auto rows = b.op("ResourceGather", {h, idx}, {{"dtype", dtype::float32}});
    auto loss = b.op("Sum", {rows, b.constant(i32({2}, {0, 1}))});
    auto grads = graft::autodiff::gradients(g, {loss}, {h});
    graft::exec::session s(g);
    s.run({}, {}, {"init", "no_copy"});
    auto out = s.run({}, {rows.str(), grads[0]->str()});
    CHECK(values(out[0]) == std::vector<double>{5, 6, 1, 2, 5, 6});
    CHECK(out[1].shape() == shape{3, 2});
    CHECK(values(out[1]) == std::vector<double>{1, 1, 0, 0, 2, 2});
}

TEST_CASE("StaticRegexFullMatch matches whole strings (TF2 Savers' remote-path test)") {
    graft::graph g;
    graft::graph_builder b(g);
    auto in = b.constant(tensor::from_vector<std::string>({3}, {"s3://bucket/ckpt", "/tmp/ckpt", "xs3://a"}));
    auto m = b.op("StaticRegexFullMatch", {in}, {{"pattern", std::string("^s3://.*")}});
    auto bad = b.op("StaticRegexFullMatch", {in}, {{"pattern", std::string("([")}});
    graft::exec::session s(g);
    auto out = s.run({}, {m.str()});
    CHECK(values(out[0]) == std::vector<double>{1, 0, 0});
    CHECK_THROWS_WITH_AS(s.run({}, {bad.str()}), doctest::Contains("is not a regex graft can read"), graft::error);
}

TEST_CASE("Adadelta, Ftrl and KerasMomentum updates equal TF's formulas in float64") {
    const std::vector<double> var0{1.0, -2.0, 0.5}, grad{0.3, -0.1, 0.02};
    auto run_update = [&](const std::string& op, int slots, const std::vector<tensor>& hyper_before,
                          const std::vector<tensor>& hyper_after, const std::vector<double>& slot_init,
                          graft::attr_list a = {}) {
        graft::graph g;
        graft::graph_builder b(g);
        std::vector<graft::variable_nodes> vars;
        vars.push_back(b.variable("var", f64({3}, var0)));
        for (int i = 1; i < slots; ++i) {
            vars.push_back(b.variable("slot" + std::to_string(i), f64({3}, std::vector<double>(3, slot_init[static_cast<std::size_t>(i - 1)]))));
        }
        std::vector<endpoint> in;
        for (auto& v : vars) in.push_back(v.ref);
        for (auto& t : hyper_before) in.push_back(b.constant(t));
        for (auto& t : hyper_after) in.push_back(b.constant(t));
        b.add(op, in, a, "update");
        graft::exec::session s(g);
        std::vector<std::string> inits;
        for (auto& v : vars) inits.push_back(v.assign);
        s.run({}, {}, inits);
        s.run({}, {}, {"update"});
        std::vector<std::vector<double>> r;
        for (auto& v : vars) r.push_back(values(s.run({}, {v.value.str()})[0]));
        return r;
    };
    auto sc = [](double v) { return tensor::scalar_of(v); };
    SUBCASE("ApplyAdadelta") {
        const double lr = 0.5, rho = 0.9, eps = 1e-3;
        auto r = run_update("ApplyAdadelta", 3, {sc(lr), sc(rho), sc(eps), f64({3}, grad)}, {}, {0.1, 0.2});
        for (int i = 0; i < 3; ++i) {
            double g = grad[static_cast<std::size_t>(i)], accum = 0.1 * rho + g * g * (1 - rho);
            double upd = std::sqrt(0.2 + eps) / std::sqrt(accum + eps) * g;
            double au = 0.2 * rho + upd * upd * (1 - rho);
            CHECK(r[0][static_cast<std::size_t>(i)] == doctest::Approx(var0[static_cast<std::size_t>(i)] - lr * upd).epsilon(1e-12));
            CHECK(r[1][static_cast<std::size_t>(i)] == doctest::Approx(accum).epsilon(1e-12));
            CHECK(r[2][static_cast<std::size_t>(i)] == doctest::Approx(au).epsilon(1e-12));
        }
    }
    SUBCASE("ApplyFtrl, both linear forms") {
        const double lr = 0.1, l1 = 0.05, l2 = 0.2, p = -0.5;
        for (bool by_lr : {false, true}) {
            auto r = run_update("ApplyFtrl", 3, {f64({3}, grad), sc(lr), sc(l1), sc(l2), sc(p)}, {}, {0.1, 0.0},
                                {{"multiply_linear_by_lr", by_lr}});
            for (int i = 0; i < 3; ++i) {
                double g = grad[static_cast<std::size_t>(i)], w = var0[static_cast<std::size_t>(i)];
                double na = 0.1 + g * g, d = std::sqrt(na) - std::sqrt(0.1);
                double lin = by_lr ? g * lr - d * w : g - d / lr * w;
                double quad = by_lr ? std::sqrt(na) + 2 * l2 * lr : std::sqrt(na) / lr + 2 * l2;
                double lim = by_lr ? l1 * lr : l1;
                double want = std::abs(lin) <= lim ? 0.0 : ((lin > 0 ? lim : -lim) - lin) / quad;
                CAPTURE(by_lr);
                CHECK(r[0][static_cast<std::size_t>(i)] == doctest::Approx(want).epsilon(1e-12));
                CHECK(r[1][static_cast<std::size_t>(i)] == doctest::Approx(na).epsilon(1e-12));
                CHECK(r[2][static_cast<std::size_t>(i)] == doctest::Approx(lin).epsilon(1e-12));
            }
        }
    }
}

TEST_CASE("ResourceApplyKerasMomentum: accum = m accum - lr g; var += accum (or the Nesterov form)") {
    for (bool nesterov : {false, true}) {
        graft::graph g;
        graft::graph_builder b(g);
        auto hv = b.op("VarHandleOp", {}, {{"dtype", dtype::float64}, {"shape", shape{2}}, {"shared_name", std::string("v")}});
        auto ha = b.op("VarHandleOp", {}, {{"dtype", dtype::float64}, {"shape", shape{2}}, {"shared_name", std::string("a")}});
        b.add("AssignVariableOp", {hv, b.constant(f64({2}, {1.0, 2.0}))}, {{"dtype", dtype::float64}}, "iv");
        b.add("AssignVariableOp", {ha, b.constant(f64({2}, {0.5, -0.5}))}, {{"dtype", dtype::float64}}, "ia");
        b.add("ResourceApplyKerasMomentum",
              {hv, ha, b.constant(tensor::scalar_of(0.1)), b.constant(f64({2}, {1.0, -2.0})), b.constant(tensor::scalar_of(0.9))},
              {{"use_nesterov", nesterov}}, "step");
        auto rv = b.op("ReadVariableOp", {hv}, {{"dtype", dtype::float64}});
        graft::exec::session s(g);
        s.run({}, {}, {"iv", "ia"});
        s.run({}, {}, {"step"});
        auto v = values(s.run({}, {rv.str()})[0]);
        double a0 = 0.5 * 0.9 - 0.1 * 1.0, a1 = -0.5 * 0.9 - 0.1 * -2.0;
        CAPTURE(nesterov);
        CHECK(v[0] == doctest::Approx(nesterov ? 1.0 + a0 * 0.9 - 0.1 * 1.0 : 1.0 + a0));
        CHECK(v[1] == doctest::Approx(nesterov ? 2.0 + a1 * 0.9 - 0.1 * -2.0 : 2.0 + a1));
    }
}

TEST_CASE("RandomShuffle permutes rows (seeded: repeatable per session, new each run); Multinomial samples the logits' law") {
    auto build = [](graft::graph& g) {
        graft::graph_builder b(g);
        std::vector<float> v(20);
        for (int i = 0; i < 20; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i);
        auto x = b.constant(f32({10, 2}, v));
        auto sh = b.op("RandomShuffle", {x}, {{"seed", std::int64_t{7}}, {"seed2", std::int64_t{3}}});
        auto logits = b.constant(f32({2, 3}, {0.0f, std::log(3.0f), -INFINITY, 1.0f, 1.0f, 1.0f}));
        auto mn = b.op("Multinomial", {logits, b.constant(tensor::scalar_of<std::int32_t>(4000))},
                       {{"seed", std::int64_t{5}}, {"seed2", std::int64_t{1}}});
        return std::pair{sh, mn};
    };
    graft::graph g1, g2;
    auto [sh1, mn1] = build(g1);
    auto [sh2, mn2] = build(g2);
    graft::exec::session s1(g1), s2(g2);
    auto a = s1.run({}, {sh1.str(), mn1.str()});
    auto a2 = s1.run({}, {sh1.str()});
    auto b = s2.run({}, {sh2.str(), mn2.str()});
    CHECK(graft::equal(a[0], b[0]));   // same seeds, same first run
    CHECK(graft::equal(a[1], b[1]));
    CHECK_FALSE(graft::equal(a[0], a2[0]));  // the next run draws new numbers
    auto rows = values(a[0]);
    std::vector<int> seen;
    for (int i = 0; i < 10; ++i) {
        CHECK(rows[static_cast<std::size_t>(2 * i + 1)] == rows[static_cast<std::size_t>(2 * i)] + 1);  // rows move whole
        seen.push_back(static_cast<int>(rows[static_cast<std::size_t>(2 * i)]) / 2);
    }
    std::sort(seen.begin(), seen.end());
    for (int i = 0; i < 10; ++i) CHECK(seen[static_cast<std::size_t>(i)] == i);
    auto m = values(a[1]);
    CHECK(a[1].shape() == shape{2, 4000});
    CHECK(a[1].type() == dtype::int64);
    std::map<int, int> c0, c1;
    for (int j = 0; j < 4000; ++j) ++c0[static_cast<int>(m[static_cast<std::size_t>(j)])], ++c1[static_cast<int>(m[4000 + static_cast<std::size_t>(j)])];
    CHECK(c0[2] == 0);                                   // -inf logit: never drawn
    CHECK(c0[1] / 4000.0 == doctest::Approx(0.75).epsilon(0.05));  // p = 3/4
    for (int k = 0; k < 3; ++k) CHECK(c1[k] / 4000.0 == doctest::Approx(1.0 / 3).epsilon(0.1));
}

TEST_CASE("a frozen variable (a Const) under Assign / AssignAdd / AssignSub: they output the value it would hold") {
    graft::graph g;
    graft::graph_builder b(g);
    auto w = b.constant(f32({3}, {1, 2, 3}));
    auto v = b.constant(f32({3}, {10, 20, 30}));
    auto a = b.op("Assign", {w, v});
    auto add = b.op("AssignAdd", {w, v});
    auto sub = b.op("AssignSub", {w, v});
    auto bad = b.op("Assign", {w, b.constant(f32({2}, {1, 2}))});
    graft::exec::session s(g);
    auto out = s.run({}, {a.str(), add.str(), sub.str()});
    CHECK(values(out[0]) == std::vector<double>{10, 20, 30});
    CHECK(values(out[1]) == std::vector<double>{11, 22, 33});
    CHECK(values(out[2]) == std::vector<double>{-9, -18, -27});
    CHECK_THROWS_WITH(s.run({}, {bad.str()}), doctest::Contains("value shape [2] != frozen variable shape [3]"));
}
