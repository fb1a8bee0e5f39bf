// Learning-rate schedules over the global step and clip_by_global_norm against closed forms.
#include <doctest/doctest.h>

#include <cmath>

#include "graft/exec/session.hpp"
#include "graft/train/schedules.hpp"
#include "graft/train/variables.hpp"

using graft::dtype;
using graft::tensor;
namespace train = graft::train;

namespace {
float scalar(graft::exec::session& s, const graft::endpoint& e, std::int64_t step) {
    s.variables().at("global_step")->assign(tensor::scalar_of(step));
    return s.run({}, {e.str()})[0].data<float>()[0];
}
}  // namespace

TEST_CASE("exponential_decay (smooth and staircase) and piecewise_constant over global_step") {
    graft::meta_graph mg;
    auto step = train::get_or_create_global_step(mg);
    graft::graph_builder b(mg.graph);
    auto smooth = train::exponential_decay(b, 0.1, step.value, 100, 0.5);
    auto stairs = train::exponential_decay(b, 0.1, step.value, 100, 0.5, true);
    auto pieces = train::piecewise_constant(b, step.value, {100, 200}, {1.0, 0.5, 0.1});
    CHECK(smooth.node == "ExponentialDecay");
    CHECK(stairs.node == "ExponentialDecay_1");
    CHECK(mg.graph.find("ExponentialDecay_1/Floor") != nullptr);
    std::string init = train::global_variables_initializer(mg);
    graft::exec::session s(mg.graph);
    s.run({}, {}, {init});
    for (std::int64_t k : {0, 1, 50, 99, 100, 150, 250, 1000}) {
        CAPTURE(k);
        float lr = 0.1f, rate = 0.5f;
        float p = static_cast<float>(k) / 100.0f;
        CHECK(scalar(s, smooth, k) == doctest::Approx(lr * std::pow(rate, p)).epsilon(1e-6));
        CHECK(scalar(s, stairs, k) == doctest::Approx(lr * std::pow(rate, std::floor(p))).epsilon(1e-6));
        float want = k <= 100 ? 1.0f : k <= 200 ? 0.5f : 0.1f;
        CHECK(scalar(s, pieces, k) == want);
    }
    CHECK_THROWS_AS(train::piecewise_constant(b, step.value, {1}, {1.0}), graft::invalid_argument_error);
    CHECK_THROWS_AS(train::exponential_decay(b, 0.1, step.value, 0, 0.5), graft::invalid_argument_error);
}

TEST_CASE("clip_by_global_norm scales by clip_norm / max(norm, clip_norm); missing entries stay missing") {
    graft::graph g;
    graft::graph_builder b(g);
    auto t1 = b.constant(tensor::from_vector<float>({3, 4}), "t1");
    auto t2 = b.constant(tensor::from_vector<float>({2, 1}, {12, 0}), "t2");
    auto [clipped, norm] = train::clip_by_global_norm(b, {t1, std::nullopt, t2}, 6.5);
    auto [same, norm2] = train::clip_by_global_norm(b, {t1, t2}, 20.0);
    REQUIRE(clipped.size() == 3);
    CHECK(!clipped[1]);
    CHECK(clipped[0]->node == "clip_by_global_norm/clip_by_global_norm/_0");
    CHECK(norm.node == "clip_by_global_norm/global_norm/global_norm");
    graft::exec::session s(g);
    auto out = s.run({}, {norm.str(), clipped[0]->str(), clipped[2]->str(), same[0]->str(), norm2.str()});
    CHECK(out[0].data<float>()[0] == doctest::Approx(13.0f));
    CHECK(out[1].data<float>()[0] == doctest::Approx(1.5f).epsilon(1e-6));
    CHECK(out[1].data<float>()[1] == doctest::Approx(2.0f).epsilon(1e-6));
    CHECK(out[2].data<float>()[0] == doctest::Approx(6.0f).epsilon(1e-6));
    CHECK(out[2].shape() == graft::shape{2, 1});
    CHECK(out[3].data<float>()[1] == doctest::Approx(4.0f).epsilon(1e-6));
    CHECK(out[4].data<float>()[0] == doctest::Approx(13.0f));
}
