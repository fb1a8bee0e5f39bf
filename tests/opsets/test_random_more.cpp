// RandomGamma, RandomPoisson / RandomPoissonV2 and RandomGammaGrad through graft::exec::session:
// TensorFlow's own samples for fixed seeds (recorded by TF in the dl4j-tf-graphs suite: the first
// values of random_gamma/rank1_float{32,64} and random_poisson/rank1_float16), the laws of many
// samples (mean, variance, CDF points against float64 references), determinism per seed, the
// gradient rule of RandomGamma, and bad inputs naming the node.
#include <doctest/doctest.h>

#include <unsupported/Eigen/SpecialFunctions>

#include <cmath>
#include <string>
#include <vector>

#include "graft/autodiff/gradients.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "graft/ops/random_more.hpp"
#include "support/tensors.hpp"

// One namespace per file: the opsets tests build as one binary in unity batches.
namespace graft_test_random_more {

using namespace graft::test;  // f32, f64, i32, i64, values

using graft::dtype;
using graft::endpoint;
using graft::shape;
using graft::tensor;

namespace {

graft::attr_list seeds(std::int64_t seed, std::int64_t seed2) { return {{"seed", seed}, {"seed2", seed2}}; }

/// One run of one sampler node; the node is named "sampler".
tensor sample_once(const char* op, const tensor& shape_t, const tensor& param, graft::attr_list attrs) {
    graft::graph g;
    graft::graph_builder b(g);
    endpoint y = b.op(op, {b.constant(shape_t), b.constant(param)}, std::move(attrs), "sampler");
    graft::exec::session s(g);
    return s.run({}, {y.str()})[0];
}

/// The error text of one run, "" when it ran.
std::string error_of(const char* op, const tensor& shape_t, const tensor& param, graft::attr_list attrs) {
    try {
        (void)sample_once(op, shape_t, param, std::move(attrs));
    } catch (const graft::error& e) {
        return e.what();
    }
    return "";
}

struct moments {
    double mean = 0, var = 0;
};

/// Mean and (unbiased) variance of column `col` of [n, cols] samples.
moments column_moments(const std::vector<double>& v, std::size_t cols, std::size_t col) {
    const std::size_t n = v.size() / cols;
    moments m;
    for (std::size_t i = 0; i < n; ++i) m.mean += v[i * cols + col];
    m.mean /= static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i) m.var += (v[i * cols + col] - m.mean) * (v[i * cols + col] - m.mean);
    m.var /= static_cast<double>(n - 1);
    return m;
}

}  // namespace

TEST_CASE("RandomGamma gives TensorFlow's samples for a fixed seed (float32 with alpha < 1, float64)") {
    // tf.random.gamma([7, 2, 9, 4], alpha=[0.5, 1.5], seed) in TF 1.x: op seeds (1, 1); the first six
    // samples TF recorded (dl4j-tf-graphs random_gamma/rank1_float32, node random_gamma/RandomGamma).
    auto a = sample_once("RandomGamma", i32({4}, {7, 2, 9, 4}), f32({2}, {0.5f, 1.5f}), seeds(1, 1));
    CHECK(a.type() == dtype::float32);
    CHECK(a.shape() == shape{7, 2, 9, 4, 2});
    const std::vector<double> tf32 = {0.01559341, 0.40356290, 0.16511011, 0.85728329, 1.22587740, 0.37306747};
    auto va = values(a);
    for (std::size_t i = 0; i < tf32.size(); ++i) CHECK(va[i] == doctest::Approx(tf32[i]).epsilon(1e-6));
    // float64, alpha [1.5, 2.5], shape [7, 2, 9], op seeds (1, 12): random_gamma/rank1_float64.
    auto b = sample_once("RandomGamma", i32({3}, {7, 2, 9}), f64({2}, {1.5, 2.5}), seeds(1, 12));
    CHECK(b.shape() == shape{7, 2, 9, 2});
    const std::vector<double> tf64 = {1.43008028, 1.81066519, 2.45916241, 3.72836516, 0.63691727, 0.65691406};
    auto vb = values(b);
    for (std::size_t i = 0; i < tf64.size(); ++i) CHECK(vb[i] == doctest::Approx(tf64[i]).epsilon(1e-7));
}

TEST_CASE("RandomPoissonV2 gives TensorFlow's samples for a fixed seed (float64 rate, float16 output)") {
    // tf.random.poisson(lam=[0.5, 2.5], shape=[7, 2, 9, 4], dtype=float16) with op seeds (1, 17):
    // the first eight samples TF recorded (dl4j-tf-graphs random_poisson/rank1_float16).
    auto p = sample_once("RandomPoissonV2", i32({4}, {7, 2, 9, 4}), f64({2}, {0.5, 2.5}),
                         {{"seed", std::int64_t{1}}, {"seed2", std::int64_t{17}}, {"dtype", dtype::float16}});
    CHECK(p.type() == dtype::float16);
    CHECK(p.shape() == shape{7, 2, 9, 4, 2});
    const std::vector<double> tf = {1, 1, 1, 1, 0, 5, 0, 4};
    auto v = values(p);
    for (std::size_t i = 0; i < tf.size(); ++i) CHECK(v[i] == tf[i]);
    // The same draws as the old RandomPoisson op (rate dtype = output dtype) give the same counts.
    auto old = sample_once("RandomPoisson", i32({4}, {7, 2, 9, 4}), f64({2}, {0.5, 2.5}), seeds(1, 17));
    CHECK(old.type() == dtype::float64);
    CHECK(values(old) == v);
}

TEST_CASE("RandomGamma samples follow Gamma(alpha, 1): mean, variance and CDF points (alpha < 1, = 1, > 1)") {
    const std::vector<double> alphas = {0.3, 1.0, 2.5, 12.0};
    const std::size_t n = 20000;
    auto t = sample_once("RandomGamma", i32({1}, {static_cast<std::int32_t>(n)}), f64({4}, alphas), seeds(7, 3));
    REQUIRE(t.shape() == shape{static_cast<std::int64_t>(n), 4});
    auto v = values(t);
    for (std::size_t k = 0; k < alphas.size(); ++k) {
        const double a = alphas[k];
        auto m = column_moments(v, 4, k);
        INFO("alpha = " << a << " mean " << m.mean << " var " << m.var);
        // 5 standard errors: sd(mean) = sqrt(a / n); sd(var) = a * sqrt((2 + 6 / a) / n).
        CHECK(std::abs(m.mean - a) < 5 * std::sqrt(a / static_cast<double>(n)));
        CHECK(std::abs(m.var - a) < 5 * a * std::sqrt((2 + 6 / a) / static_cast<double>(n)));
        // The empirical CDF at the 10%, 50% and 90% points of the law, against P(a, x).
        for (double x : {0.1 * a, a, 2.0 * a}) {
            double below = 0;
            for (std::size_t i = 0; i < n; ++i) below += v[i * 4 + k] <= x ? 1 : 0;
            const double p = Eigen::numext::igamma(a, x);
            CHECK(std::abs(below / static_cast<double>(n) - p) < 5 * std::sqrt(p * (1 - p) / static_cast<double>(n)) + 1e-9);
        }
        for (std::size_t i = 0; i < n; ++i) REQUIRE(v[i * 4 + k] >= 0);
    }
}

TEST_CASE("RandomPoisson samples follow Poisson(rate): both of TF's samplers (rate < 10 and >= 10)") {
    const std::vector<double> rates = {0.5, 3.0, 9.5, 10.0, 25.0, 150.0};
    const std::size_t n = 20000;
    auto t = sample_once("RandomPoissonV2", i32({1}, {static_cast<std::int32_t>(n)}), f32({6}, {0.5f, 3, 9.5f, 10, 25, 150}),
                         {{"seed", std::int64_t{11}}, {"seed2", std::int64_t{5}}, {"R", dtype::float32}});
    CHECK(t.type() == dtype::int64);  // dtype's default
    REQUIRE(t.shape() == shape{static_cast<std::int64_t>(n), 6});
    auto v = values(t);
    for (std::size_t k = 0; k < rates.size(); ++k) {
        const double r = rates[k];
        auto m = column_moments(v, 6, k);
        INFO("rate = " << r << " mean " << m.mean << " var " << m.var);
        CHECK(std::abs(m.mean - r) < 5 * std::sqrt(r / static_cast<double>(n)));
        CHECK(std::abs(m.var - r) < 5 * std::sqrt((r + 2 * r * r) / static_cast<double>(n)));
        // P(X = floor(rate)) against rate^k e^-rate / k!.
        const double mode = std::floor(r);
        double hits = 0;
        for (std::size_t i = 0; i < n; ++i) {
            REQUIRE(v[i * 6 + k] == std::floor(v[i * 6 + k]));
            hits += v[i * 6 + k] == mode ? 1 : 0;
        }
        const double p = std::exp(mode * std::log(r) - r - std::lgamma(mode + 1));
        CHECK(std::abs(hits / static_cast<double>(n) - p) < 5 * std::sqrt(p * (1 - p) / static_cast<double>(n)));
    }
    // int32 output, a zero and a negative rate (TF gives 0 for both).
    auto z = sample_once("RandomPoissonV2", i32({1}, {5}), f64({2}, {0.0, -1.0}),
                         {{"seed", std::int64_t{2}}, {"seed2", std::int64_t{2}}, {"dtype", dtype::int32}});
    CHECK(z.type() == dtype::int32);
    for (double x : values(z)) CHECK(x == 0);
}

TEST_CASE("A seeded sampler repeats per session and draws new numbers on each run") {
    auto build = [](graft::graph& g) {
        graft::graph_builder b(g);
        auto gm = b.op("RandomGamma", {b.constant(i32({2}, {3, 5})), b.constant(f32({2}, {0.7f, 4.0f}))}, seeds(5, 9));
        auto ps = b.op("RandomPoissonV2", {b.constant(i32({1}, {40})), b.constant(f64({1}, {30.0}))}, seeds(5, 9));
        return std::pair{gm, ps};
    };
    graft::graph g1, g2;
    auto [gm1, ps1] = build(g1);
    auto [gm2, ps2] = build(g2);
    graft::exec::session s1(g1), s2(g2);
    auto a = s1.run({}, {gm1.str(), ps1.str()});
    auto again = s1.run({}, {gm1.str(), ps1.str()});
    auto b = s2.run({}, {gm2.str(), ps2.str()});
    CHECK(graft::equal(a[0], b[0]));
    CHECK(graft::equal(a[1], b[1]));
    CHECK_FALSE(graft::equal(a[0], again[0]));
    CHECK_FALSE(graft::equal(a[1], again[1]));
    // The op functions draw the same numbers as the kernels (one generator per node).
    graft::ops::guarded_philox gen(5, 9);
    CHECK(graft::equal(graft::ops::random_gamma(i32({2}, {3, 5}), f32({2}, {0.7f, 4.0f}), gen), a[0]));
}

TEST_CASE("RandomGammaGrad is d sample / d alpha of the Gamma CDF: -(dP/dalpha) / pdf, float64 reference") {
    const std::vector<double> a = {0.4, 1.0, 2.5, 9.0, 2.5, 0.4};
    const std::vector<double> x = {0.05, 0.7, 2.0, 11.0, 0.3, 1.9};
    auto got = values(graft::ops::random_gamma_grad(f64({6}, a), f64({6}, x)));
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double h = 1e-5;
        const double dp_da = (Eigen::numext::igamma(a[i] + h, x[i]) - Eigen::numext::igamma(a[i] - h, x[i])) / (2 * h);
        const double pdf = std::exp((a[i] - 1) * std::log(x[i]) - x[i] - std::lgamma(a[i]));
        INFO("alpha " << a[i] << " sample " << x[i]);
        CHECK(got[i] == doctest::Approx(-dp_da / pdf).epsilon(1e-5));
    }
    // float32, broadcasting alpha [2, 1] against samples [3].
    auto b = graft::ops::random_gamma_grad(f32({2, 1}, {1.5f, 3.0f}), f32({3}, {0.5f, 1.0f, 4.0f}));
    CHECK(b.shape() == shape{2, 3});
    CHECK(values(b)[4] == doctest::Approx(values(graft::ops::random_gamma_grad(f64({1}, {3.0}), f64({1}, {1.0})))[0]).epsilon(1e-5));
}

TEST_CASE("RandomGamma's gradient: d/dalpha Sum(w * samples) = Sum over the sample dims of w * RandomGammaGrad") {
    graft::graph g;
    graft::graph_builder b(g);
    auto alpha = b.placeholder("alpha", dtype::float64);
    auto samples = b.op("RandomGamma", {b.constant(i32({2}, {4, 3})), alpha}, seeds(3, 4));
    const std::vector<double> w = [] {
        std::vector<double> r(24);
        for (std::size_t i = 0; i < r.size(); ++i) r[i] = std::sin(static_cast<double>(i) + 0.5);
        return r;
    }();
    auto loss = b.op("Sum", {b.op("Mul", {samples, b.constant(f64({4, 3, 2}, w))}), b.constant(i32({3}, {0, 1, 2}))});
    auto grads = graft::gradients(g, {loss}, {alpha});
    REQUIRE(grads[0]);
    graft::exec::session s(g);
    const tensor al = f64({2}, {0.6, 3.5});
    auto out = s.run({{"alpha", al}}, {samples.str(), grads[0]->str()});
    CHECK(out[1].shape() == shape{2});
    auto sv = values(out[0]);
    auto partial = values(graft::ops::random_gamma_grad(f64({1, 1, 2}, {0.6, 3.5}), out[0]));
    double want[2] = {0, 0};
    for (std::size_t i = 0; i < 24; ++i) want[i % 2] += w[i] * partial[i];
    auto got = values(out[1]);
    CHECK(got[0] == doctest::Approx(want[0]).epsilon(1e-12));
    CHECK(got[1] == doctest::Approx(want[1]).epsilon(1e-12));
    CHECK(want[0] != 0);
}

TEST_CASE("Bad inputs are errors naming the node: shape not a vector, negative alpha, NaN rate, wrong dtypes") {
    auto e1 = error_of("RandomGamma", i32({2, 1}, {3, 2}), f32({1}, {1.0f}), seeds(1, 2));
    CHECK(e1.find("sampler") != std::string::npos);
    CHECK(e1.find("shape must be an int32/int64 vector") != std::string::npos);
    auto e2 = error_of("RandomGamma", i32({1}, {3}), f64({3}, {1.0, -0.5, 2.0}), seeds(1, 2));
    CHECK(e2.find("sampler") != std::string::npos);
    CHECK(e2.find("alpha[1] = -0.5") != std::string::npos);
    auto e3 = error_of("RandomGamma", i32({1}, {3}), f64({0}, {}), seeds(1, 2));
    CHECK(e3.find("alpha must have at least one element") != std::string::npos);
    auto e4 = error_of("RandomPoissonV2", i32({1}, {3}), f64({2}, {1.0, std::nan("")}), seeds(1, 2));
    CHECK(e4.find("sampler") != std::string::npos);
    CHECK(e4.find("rate[1]") != std::string::npos);
    auto e5 = error_of("RandomGamma", i32({1}, {3}), i32({1}, {2}), seeds(1, 2));
    CHECK(e5.find("int32") != std::string::npos);
    // Empty sample shapes give empty outputs, as in TF.
    CHECK(sample_once("RandomGamma", i32({2}, {0, 3}), f32({2}, {1.0f, 2.0f}), seeds(1, 2)).shape() == shape{0, 3, 2});
    CHECK_THROWS_AS(graft::ops::random_gamma_grad(i32({1}, {1}), i32({1}, {1})), graft::invalid_argument_error);
}

}  // namespace graft_test_random_more
