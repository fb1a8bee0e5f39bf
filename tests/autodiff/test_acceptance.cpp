// Acceptance: on tf-rust/regression's own training graph, graft's gradients of the loss w.r.t. w
// and b equal the values of TF's gradient subgraph (gradients/...) fed the same inputs.
#include <doctest/doctest.h>

#include <random>

#include "graft/autodiff/gradients.hpp"
#include "graft/exec/session.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "support/fixtures.hpp"

using graft::endpoint;
using graft::tensor;

TEST_CASE("tf-rust/regression: graft's gradients equal TF's gradient ops in the same file") {
    auto p = graft::test::fixture("tf-rust/regression/model.pb");
    GRAFT_REQUIRE_PATH(p);
    graft::graph g = graft::tf::load_graph(p.string());
    REQUIRE(g.contains("gradients/mul_grad/tuple/control_dependency"));
    const std::size_t before = g.size();
    auto d = graft::gradients(g, {endpoint{"Mean", 0}}, {endpoint{"w", 0}, endpoint{"b", 0}});
    REQUIRE(d[0]);
    REQUIRE(d[1]);
    CHECK(d[0]->node.rfind("gradients_1/", 0) == 0);  // TF's scope is taken
    CHECK(d[1]->node.rfind("gradients_1/", 0) == 0);
    CHECK(g.size() > before);

    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (int n : {1, 7, 100}) {
        std::vector<float> xs(static_cast<std::size_t>(n)), ys(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) {
            xs[static_cast<std::size_t>(i)] = u(rng);
            ys[static_cast<std::size_t>(i)] = 0.1f * xs[static_cast<std::size_t>(i)] + 0.3f + 0.05f * u(rng);
        }
        graft::exec::session s{g};
        s.run({}, {}, {"init"});
        // Move b off zero so both gradients are generic.
        s.run({{"x", tensor::from_vector<float>(xs)}, {"y", tensor::from_vector<float>(ys)}}, {}, {"train"});
        auto out = s.run({{"x", tensor::from_vector<float>(xs)}, {"y", tensor::from_vector<float>(ys)}},
                         {"gradients/mul_grad/tuple/control_dependency:0", "gradients/add_grad/tuple/control_dependency_1:0",
                          d[0]->str(), d[1]->str()});
        INFO("n = " << n);
        for (int k = 0; k < 2; ++k) {
            const auto& tf = out[static_cast<std::size_t>(k)];
            const auto& ours = out[static_cast<std::size_t>(k + 2)];
            REQUIRE(tf.shape() == ours.shape());
            REQUIRE(tf.type() == ours.type());
            for (std::int64_t i = 0; i < tf.num_elements(); ++i) {
                CHECK(std::abs(tf.data<float>()[i] - ours.data<float>()[i]) <= 1e-6 * std::max(1.f, std::abs(tf.data<float>()[i])));
                CHECK(tf.data<float>()[i] != 0.f);
            }
        }
    }
}
