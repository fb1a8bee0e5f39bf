// Candidate samplers (LogUniform/Uniform/LearnedUnigram/ThreadUnsafeUnigram/FixedUnigram/All
// CandidateSampler) and ComputeAccidentalHits through graft::exec::session: expected counts
// against float64 formulas, sample frequencies over many runs against each sampler's law
// (chi-square), unique draws, determinism per seed and a new draw per run, the learned unigram
// counts growing with the true classes, TF's ComputeAccidentalHits example, errors naming the node,
// and tf.nn.sampled_softmax_loss's subgraph trained with graft::gradients + GradientDescent.
#include <doctest/doctest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "graft/autodiff/gradients.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "support/tensors.hpp"

// One namespace per file: the opsets tests build as one binary in unity batches.
namespace graft_test_candidate_sampling {

using namespace graft::test;  // f32, f64, i32, i64, values, elements

using graft::dtype;
using graft::endpoint;
using graft::shape;
using graft::tensor;

namespace {

graft::attr_list sampler_attrs(std::int64_t num_true, std::int64_t num_sampled, bool unique, std::int64_t range_max,
                               std::int64_t seed = 1, std::int64_t seed2 = 2) {
    return {{"num_true", num_true}, {"num_sampled", num_sampled}, {"unique", unique}, {"range_max", range_max},
            {"seed", seed}, {"seed2", seed2}};
}

/// A graph with one sampler node "sampler" over constant true classes, and a session on it.
struct sampler_run {
    graft::graph g;
    std::unique_ptr<graft::exec::session> s;
    sampler_run(const char* op, const tensor& true_classes, graft::attr_list attrs) {
        graft::graph_builder b(g);
        (void)b.op_n(op, {b.constant(true_classes)}, std::move(attrs), "sampler");
        s = std::make_unique<graft::exec::session>(g);
    }
    /// sampled_candidates, true_expected_count, sampled_expected_count of one run.
    std::vector<tensor> run() { return s->run({}, {"sampler:0", "sampler:1", "sampler:2"}); }
};

std::string error_of(const char* op, const tensor& true_classes, graft::attr_list attrs) {
    try {
        sampler_run r(op, true_classes, std::move(attrs));
        (void)r.run();
    } catch (const graft::error& e) {
        return e.what();
    }
    return "";
}

double log_uniform_p(std::int64_t k, std::int64_t range) {
    return std::log((static_cast<double>(k) + 2) / (static_cast<double>(k) + 1)) / std::log(static_cast<double>(range) + 1);
}

/// Pearson's chi-square of observed counts against probabilities p (sum 1) over n draws; classes of
/// probability 0 must not occur.
double chi_square(const std::vector<double>& counts, const std::vector<double>& p, double n) {
    double x2 = 0;
    for (std::size_t k = 0; k < p.size(); ++k) {
        const double e = p[k] * n;
        if (e == 0) {
            CHECK(counts[k] == 0);  // a class of probability 0 is never drawn
            continue;
        }
        x2 += (counts[k] - e) * (counts[k] - e) / e;
    }
    return x2;
}

/// Draws `runs` batches of `num_sampled` (unique = false) and checks the frequencies against p.
/// The bound is chi-square's 0.999 quantile for up to 49 degrees of freedom plus margin.
void check_frequencies(const char* op, graft::attr_list attrs, const std::vector<double>& p, int runs) {
    sampler_run r(op, i64({1, 1}, {0}), std::move(attrs));
    std::vector<double> counts(p.size(), 0.0);
    double n = 0;
    for (int i = 0; i < runs; ++i) {
        for (std::int64_t c : elements<std::int64_t>(r.run()[0])) {
            REQUIRE(c >= 0);
            REQUIRE(c < static_cast<std::int64_t>(p.size()));
            counts[static_cast<std::size_t>(c)] += 1;
            n += 1;
        }
    }
    const double x2 = chi_square(counts, p, n);
    INFO(std::string(op) << ": chi-square " << x2 << " over " << p.size() - 1 << " degrees of freedom, " << n << " draws");
    CHECK(x2 < 2.0 * static_cast<double>(p.size()) + 30.0);
}

}  // namespace

TEST_CASE("LogUniformCandidateSampler: expected counts are p * num_sampled, frequencies follow log((k+2)/(k+1)) / log(range+1)") {
    const std::int64_t range = 30;
    sampler_run r("LogUniformCandidateSampler", i64({3, 2}, {0, 5, 29, 1, 7, 7}), sampler_attrs(2, 12, false, range));
    auto out = r.run();
    REQUIRE(out[0].type() == dtype::int64);
    REQUIRE(out[0].shape() == shape{12});
    REQUIRE(out[1].shape() == shape{3, 2});
    REQUIRE(out[2].shape() == shape{12});
    const auto sampled = elements<std::int64_t>(out[0]);
    const auto sampled_count = elements<float>(out[2]);
    for (std::size_t i = 0; i < sampled.size(); ++i) {
        CHECK(sampled[i] >= 0);
        CHECK(sampled[i] < range);
        CHECK(sampled_count[i] == doctest::Approx(log_uniform_p(sampled[i], range) * 12).epsilon(1e-6));
    }
    const std::vector<std::int64_t> truth = {0, 5, 29, 1, 7, 7};
    const auto true_count = elements<float>(out[1]);
    for (std::size_t i = 0; i < truth.size(); ++i) {
        CHECK(true_count[i] == doctest::Approx(log_uniform_p(truth[i], range) * 12).epsilon(1e-6));
    }

    std::vector<double> p(40);
    for (std::int64_t k = 0; k < 40; ++k) p[static_cast<std::size_t>(k)] = log_uniform_p(k, 40);
    check_frequencies("LogUniformCandidateSampler", sampler_attrs(1, 100, false, 40, 7, 3), p, 300);
}

TEST_CASE("Unique sampling: distinct values, expected counts 1 - (1 - p)^tries for one tries count") {
    const std::int64_t range = 25, num_sampled = 20;
    sampler_run r("LogUniformCandidateSampler", i64({2, 1}, {3, 24}), sampler_attrs(1, num_sampled, true, range, 5, 9));
    for (int run = 0; run < 5; ++run) {
        auto out = r.run();
        const auto sampled = elements<std::int64_t>(out[0]);
        CHECK(std::set<std::int64_t>(sampled.begin(), sampled.end()).size() == static_cast<std::size_t>(num_sampled));
        const auto counts = elements<float>(out[2]);
        // Recover the number of tries from the first candidate, then every count must follow it.
        const double p0 = log_uniform_p(sampled[0], range);
        const double tries = std::round(std::log1p(-static_cast<double>(counts[0])) / std::log1p(-p0));
        CHECK(tries >= static_cast<double>(num_sampled));
        auto expected = [&](std::int64_t k) { return -std::expm1(tries * std::log1p(-log_uniform_p(k, range))); };
        for (std::size_t i = 0; i < sampled.size(); ++i) CHECK(counts[i] == doctest::Approx(expected(sampled[i])).epsilon(1e-5));
        const auto true_count = elements<float>(out[1]);
        CHECK(true_count[0] == doctest::Approx(expected(3)).epsilon(1e-5));
        CHECK(true_count[1] == doctest::Approx(expected(24)).epsilon(1e-5));
    }
    // unique over the whole range gives every class once.
    sampler_run all("UniformCandidateSampler", i64({1, 1}, {0}), sampler_attrs(1, 6, true, 6));
    auto s = elements<std::int64_t>(all.run()[0]);
    std::sort(s.begin(), s.end());
    CHECK(s == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("UniformCandidateSampler: expected counts num_sampled / range, uniform frequencies") {
    sampler_run r("UniformCandidateSampler", i64({2, 1}, {4, 9}), sampler_attrs(1, 8, false, 10));
    auto out = r.run();
    for (float c : elements<float>(out[2])) CHECK(c == doctest::Approx(0.8).epsilon(1e-6));
    for (float c : elements<float>(out[1])) CHECK(c == doctest::Approx(0.8).epsilon(1e-6));
    check_frequencies("UniformCandidateSampler", sampler_attrs(1, 100, false, 13, 3, 4), std::vector<double>(13, 1.0 / 13), 200);
}

TEST_CASE("Determinism: the same seeds give the same draws, each run a new one") {
    auto draws = [](std::int64_t seed, std::int64_t seed2) {
        sampler_run r("LogUniformCandidateSampler", i64({1, 1}, {0}), sampler_attrs(1, 16, false, 1000, seed, seed2));
        auto a = elements<std::int64_t>(r.run()[0]);
        auto b = elements<std::int64_t>(r.run()[0]);
        return std::make_pair(a, b);
    };
    auto [a1, b1] = draws(42, 7);
    auto [a2, b2] = draws(42, 7);
    auto [a3, b3] = draws(43, 7);
    CHECK(a1 == a2);
    CHECK(b1 == b2);
    CHECK(a1 != b1);
    CHECK(a1 != a3);
}

TEST_CASE("LearnedUnigramCandidateSampler: counts start at 1 and grow by the true classes of each run") {
    for (const char* op : {"LearnedUnigramCandidateSampler", "ThreadUnsafeUnigramCandidateSampler"}) {
        CAPTURE(op);
        const std::int64_t range = 5, num_sampled = 4;
        sampler_run r(op, i64({3, 1}, {2, 2, 4}), sampler_attrs(1, num_sampled, false, range));
        auto first = r.run();
        for (float c : elements<float>(first[1])) CHECK(c == doctest::Approx(0.2 * num_sampled).epsilon(1e-6));
        // counts now 1, 1, 3, 1, 2 of 8; after the second run 1, 1, 5, 1, 3 of 11.
        const std::vector<double> after1 = {1, 1, 3, 1, 2};
        auto second = r.run();
        const auto sampled = elements<std::int64_t>(second[0]);
        const auto sc = elements<float>(second[2]);
        for (std::size_t i = 0; i < sampled.size(); ++i) {
            CHECK(sc[i] == doctest::Approx(after1[static_cast<std::size_t>(sampled[i])] / 8 * num_sampled).epsilon(1e-6));
        }
        const auto tc = elements<float>(second[1]);
        CHECK(tc[0] == doctest::Approx(3.0 / 8 * num_sampled).epsilon(1e-6));
        CHECK(tc[2] == doctest::Approx(2.0 / 8 * num_sampled).epsilon(1e-6));
        auto third = r.run();
        CHECK(elements<float>(third[1])[0] == doctest::Approx(5.0 / 11 * num_sampled).epsilon(1e-6));
    }
    // With fixed true classes the learned law converges to their counts: class 2 dominates.
    sampler_run r("LearnedUnigramCandidateSampler", i64({8, 1}, {2, 2, 2, 2, 2, 2, 2, 0}), sampler_attrs(1, 50, false, 4));
    for (int i = 0; i < 200; ++i) (void)r.run();
    const auto s = elements<std::int64_t>(r.run()[0]);
    const auto twos = std::count(s.begin(), s.end(), std::int64_t{2});
    CHECK(twos > 35);  // p(2) = 1401 / 1604 ~ 0.87
}

TEST_CASE("FixedUnigramCandidateSampler: unigrams with distortion, reserved ids, shards and a vocab file") {
    auto attrs = [](std::int64_t range, std::vector<float> unigrams, float distortion, std::int64_t reserved = 0,
                    std::int64_t shards = 1, std::int64_t shard = 0, std::int64_t num_sampled = 100) {
        graft::attr_list a = sampler_attrs(1, num_sampled, false, range, 11, 12);
        a.push_back({"unigrams", graft::attr_value::list_of(std::move(unigrams))});
        a.push_back({"distortion", distortion});
        a.push_back({"num_reserved_ids", reserved});
        a.push_back({"num_shards", shards});
        a.push_back({"shard", shard});
        return a;
    };
    // p(k) = sqrt(w_k) / sum sqrt(w): weights 1, 4, 9, 16 -> 1, 2, 3, 4 of 10.
    {
        sampler_run r("FixedUnigramCandidateSampler", i64({1, 1}, {3}), attrs(4, {1, 4, 9, 16}, 0.5f));
        auto out = r.run();
        CHECK(elements<float>(out[1])[0] == doctest::Approx(0.4 * 100).epsilon(1e-5));
        const auto s = elements<std::int64_t>(out[0]);
        const auto c = elements<float>(out[2]);
        for (std::size_t i = 0; i < s.size(); ++i) CHECK(c[i] == doctest::Approx((static_cast<double>(s[i]) + 1) / 10 * 100).epsilon(1e-5));
    }
    check_frequencies("FixedUnigramCandidateSampler", attrs(4, {1, 4, 9, 16}, 0.5f), {0.1, 0.2, 0.3, 0.4}, 100);
    check_frequencies("FixedUnigramCandidateSampler", attrs(7, {5, 1, 0, 7, 2, 30, 3}, 1.0f),
                      {5.0 / 48, 1.0 / 48, 0, 7.0 / 48, 2.0 / 48, 30.0 / 48, 3.0 / 48}, 100);
    // Two reserved ids of weight 0 come first.
    check_frequencies("FixedUnigramCandidateSampler", attrs(4, {1, 3}, 1.0f, 2), {0, 0, 0.25, 0.75}, 50);
    // Shard 1 of 2 keeps ids 1, 3, 5: weights 2, 4, 6.
    check_frequencies("FixedUnigramCandidateSampler", attrs(3, {1, 2, 3, 4, 5, 6}, 1.0f, 0, 2, 1),
                      {2.0 / 12, 4.0 / 12, 6.0 / 12}, 50);
    // A vocabulary file: the count is the last CSV column.
    const auto path = std::filesystem::temp_directory_path() / "graft_test_candidate_vocab.csv";
    {
        std::ofstream f(path);
        f << "the,10\nof,word,30\nand,  60\n";
    }
    graft::attr_list fa = sampler_attrs(1, 100, false, 3, 11, 12);
    fa.push_back({"vocab_file", path.string()});
    check_frequencies("FixedUnigramCandidateSampler", fa, {0.1, 0.3, 0.6}, 50);
    {
        std::ofstream f(path);
        f << "the,10\nof,lots\n";
    }
    CHECK(error_of("FixedUnigramCandidateSampler", i64({1, 1}, {0}), fa).find("wrong vocabulary format") != std::string::npos);
    std::filesystem::remove(path);
    // Errors: range_max must match, exactly one of unigrams / vocab_file.
    auto e = error_of("FixedUnigramCandidateSampler", i64({1, 1}, {0}), attrs(5, {1, 2, 3}, 1.0f));
    CHECK(e.find("range_max is 5") != std::string::npos);
    CHECK(e.find("sampler") != std::string::npos);
    graft::attr_list none = sampler_attrs(1, 2, false, 3);
    CHECK(error_of("FixedUnigramCandidateSampler", i64({1, 1}, {0}), none).find("Must provide either vocab_file or unigrams") !=
          std::string::npos);
}

TEST_CASE("AllCandidateSampler: every class once, expected count 1") {
    graft::attr_list a = {{"num_true", std::int64_t{1}}, {"num_sampled", std::int64_t{5}}, {"unique", true}};
    sampler_run r("AllCandidateSampler", i64({2, 1}, {1, 4}), a);
    auto out = r.run();
    CHECK(elements<std::int64_t>(out[0]) == std::vector<std::int64_t>{0, 1, 2, 3, 4});
    CHECK(elements<float>(out[1]) == std::vector<float>{1, 1});
    CHECK(elements<float>(out[2]) == std::vector<float>{1, 1, 1, 1, 1});
}

TEST_CASE("ComputeAccidentalHits: TF's example, and its errors") {
    // tf.nn.compute_accidental_hits' doc: true_classes [[1, 2], [0, 4], [3, 3]], sampled [0, 1, 2, 3, 4]
    // hit (row 0, ids 1 and 2), (row 1, ids 0 and 4), (row 2, id 3 twice).
    graft::graph g;
    graft::graph_builder b(g);
    auto hits = b.op_n("ComputeAccidentalHits", {b.constant(i64({3, 2}, {1, 2, 0, 4, 3, 3})), b.constant(i64({5}, {0, 1, 2, 3, 4}))},
                       {{"num_true", std::int64_t{2}}}, "hits");
    graft::exec::session s(g);
    auto out = s.run({}, {hits[0].str(), hits[1].str(), hits[2].str()});
    CHECK(elements<std::int32_t>(out[0]) == std::vector<std::int32_t>{0, 0, 1, 1, 2, 2});
    CHECK(elements<std::int64_t>(out[1]) == std::vector<std::int64_t>{1, 2, 0, 4, 3, 3});
    CHECK(elements<float>(out[2]) == std::vector<float>(6, -FLT_MAX));

    auto error = [](const tensor& t, const tensor& sampled, std::int64_t num_true) -> std::string {
        graft::graph g2;
        graft::graph_builder b2(g2);
        auto h = b2.op_n("ComputeAccidentalHits", {b2.constant(t), b2.constant(sampled)}, {{"num_true", num_true}}, "hits");
        try {
            graft::exec::session s2(g2);
            (void)s2.run({}, {h[0].str()});
        } catch (const graft::error& e) {
            return e.what();
        }
        return "";
    };
    CHECK(error(i64({3}, {1, 2, 3}), i64({2}, {0, 1}), 1).find("batch_size * num_true matrix") != std::string::npos);
    CHECK(error(i64({3, 2}, {1, 2, 0, 4, 3, 3}), i64({2}, {0, 1}), 3).find("hits") != std::string::npos);
    CHECK(error(i64({3, 1}, {1, 2, 0}), i64({1, 2}, {0, 1}), 1).find("sampled_candidates must be an int64 vector") !=
          std::string::npos);
}

TEST_CASE("Candidate sampler errors name the node") {
    const char* op = "LogUniformCandidateSampler";
    auto e = error_of(op, i64({3}, {1, 2, 3}), sampler_attrs(1, 2, false, 10));
    CHECK(e.find("true_classes must be a matrix") != std::string::npos);
    CHECK(e.find("sampler") != std::string::npos);
    CHECK(error_of(op, i64({2, 2}, {1, 2, 3, 4}), sampler_attrs(1, 2, false, 10)).find("num_true columns, expected: 1 was: 2") !=
          std::string::npos);
    CHECK(error_of(op, i64({2, 1}, {1, 10}), sampler_attrs(1, 2, false, 10)).find("out of range [0, 10), received 10") !=
          std::string::npos);
    CHECK(error_of(op, i64({2, 1}, {1, -1}), sampler_attrs(1, 2, false, 10)).find("received -1") != std::string::npos);
    CHECK(error_of(op, i64({1, 1}, {1}), sampler_attrs(1, 11, true, 10)).find("range is too small") != std::string::npos);
    CHECK(error_of(op, i64({1, 1}, {0}), sampler_attrs(1, 2, false, 0)).find("range_max must be positive") != std::string::npos);
    CHECK(error_of("UniformCandidateSampler", i64({1, 1}, {0}), sampler_attrs(1, 2, false, -3)).find("range_max must be positive") !=
          std::string::npos);
    CHECK(error_of("LearnedUnigramCandidateSampler", i64({1, 1}, {0}), sampler_attrs(1, 2, false, 2147483647))
              .find("less than 2147483647") != std::string::npos);
}

namespace {

/// Full-softmax cross-entropy (float64) of logits x * w^T + b against labels, averaged over the batch.
double full_softmax_loss(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& bias,
                         const std::vector<std::int64_t>& labels, std::size_t dim) {
    const std::size_t batch = labels.size(), classes = bias.size();
    double total = 0;
    for (std::size_t i = 0; i < batch; ++i) {
        std::vector<double> z(classes);
        for (std::size_t k = 0; k < classes; ++k) {
            double s = bias[k];
            for (std::size_t d = 0; d < dim; ++d) s += static_cast<double>(x[i * dim + d]) * w[k * dim + d];
            z[k] = s;
        }
        const double m = *std::max_element(z.begin(), z.end());
        double sum = 0;
        for (double v : z) sum += std::exp(v - m);
        total += m + std::log(sum) - z[static_cast<std::size_t>(labels[i])];
    }
    return total / static_cast<double>(batch);
}

}  // namespace

TEST_CASE("tf.nn.sampled_softmax_loss's subgraph trains: sampled and full softmax losses fall") {
    const std::int64_t classes = 50, dim = 8, batch = 16, num_sampled = 10;
    // Deterministic inputs and labels (a small LCG), labels skewed to small ids like word counts.
    std::uint32_t state = 12345;
    auto next = [&state] {
        state = state * 1664525u + 1013904223u;
        return static_cast<double>(state >> 8) / 16777216.0;
    };
    std::vector<float> x(static_cast<std::size_t>(batch * dim)), w0(static_cast<std::size_t>(classes * dim));
    for (auto& v : x) v = static_cast<float>(next() * 2 - 1);
    for (auto& v : w0) v = static_cast<float>((next() * 2 - 1) * 0.1);
    std::vector<std::int64_t> labels(static_cast<std::size_t>(batch));
    for (auto& l : labels) l = static_cast<std::int64_t>(std::exp(next() * std::log(51.0))) - 1;
    const std::vector<float> b0(static_cast<std::size_t>(classes), 0.0f);

    graft::graph g;
    graft::graph_builder b(g);
    auto weights = b.variable("weights", tensor::from_vector<float>({classes, dim}, w0));
    auto biases = b.variable("biases", tensor::from_vector<float>({classes}, b0));
    auto inputs = b.constant(tensor::from_vector<float>({batch, dim}, x), "inputs");
    auto label_t = b.constant(tensor::from_vector<std::int64_t>({batch, 1}, labels), "labels");
    auto ints = [&b](std::vector<std::int32_t> v) { return b.constant(i32({static_cast<std::int64_t>(v.size())}, v)); };
    auto zero = b.scalar<std::int32_t>(0);
    auto one = b.scalar<std::int32_t>(1);

    // _compute_sampled_logits with remove_accidental_hits and subtract_log_q.
    auto sampler = b.op_n("LogUniformCandidateSampler", {label_t},
                          {{"num_true", std::int64_t{1}}, {"num_sampled", num_sampled}, {"unique", true},
                           {"range_max", classes}, {"seed", std::int64_t{3}}, {"seed2", std::int64_t{4}}},
                          "sampler");
    auto sampled = b.op("StopGradient", {sampler[0]});
    auto true_expected = b.op("StopGradient", {sampler[1]});
    auto sampled_expected = b.op("StopGradient", {sampler[2]});
    auto labels_flat = b.op("Reshape", {label_t, ints({-1})});
    auto all_ids = b.op("ConcatV2", {labels_flat, sampled, zero});
    auto all_w = b.op("GatherV2", {weights.value, all_ids, zero});
    auto true_w = b.op("Slice", {all_w, ints({0, 0}), ints({static_cast<std::int32_t>(batch), static_cast<std::int32_t>(dim)})});
    auto sampled_w = b.op("Slice", {all_w, ints({static_cast<std::int32_t>(batch), 0}), ints({-1, -1})});
    auto sampled_logits = b.op("MatMul", {inputs, sampled_w}, {{"transpose_b", true}});
    auto all_b = b.op("GatherV2", {biases.value, all_ids, zero});
    auto true_b = b.op("Slice", {all_b, ints({0}), ints({static_cast<std::int32_t>(batch)})});
    auto sampled_b = b.op("Slice", {all_b, ints({static_cast<std::int32_t>(batch)}), ints({-1})});
    auto true_logits = b.op("Sum", {b.op("Mul", {inputs, true_w}), one}, {{"keep_dims", true}});
    true_logits = b.op("AddV2", {true_logits, b.op("Reshape", {true_b, ints({-1, 1})})});
    sampled_logits = b.op("AddV2", {sampled_logits, sampled_b});
    auto hits = b.op_n("ComputeAccidentalHits", {label_t, sampled}, {{"num_true", std::int64_t{1}}}, "hits");
    auto sparse_indices = b.op("ConcatV2", {b.op("Reshape", {b.op("Cast", {hits[0]}, {{"DstT", dtype::int64}}), ints({-1, 1})}),
                                            b.op("Reshape", {hits[1], ints({-1, 1})}), one});
    auto dense_shape = b.constant(tensor::from_vector<std::int64_t>({2}, {batch, num_sampled}));
    auto hit_mask = b.op("SparseToDense", {sparse_indices, dense_shape, hits[2], b.scalar(0.0f)}, {{"validate_indices", false}});
    sampled_logits = b.op("AddV2", {sampled_logits, hit_mask});
    true_logits = b.op("Sub", {true_logits, b.op("Log", {true_expected})});
    sampled_logits = b.op("Sub", {sampled_logits, b.op("Log", {sampled_expected})});
    auto logits = b.op("ConcatV2", {true_logits, sampled_logits, one});
    auto target = b.op("StopGradient", {b.op("ConcatV2", {b.op("OnesLike", {true_logits}), b.op("ZerosLike", {sampled_logits}), one})});
    auto xent = b.op_n("SoftmaxCrossEntropyWithLogits", {logits, target});
    auto loss = b.op("Mean", {xent[0], zero}, {}, "loss");

    auto grads = graft::gradients(g, {loss}, {weights.value, biases.value});
    REQUIRE(grads[0].has_value());
    REQUIRE(grads[1].has_value());
    auto lr = b.scalar(1.0f, "learning_rate");
    auto step_w = b.op("ApplyGradientDescent", {weights.ref, lr, *grads[0]});
    auto step_b = b.op("ApplyGradientDescent", {biases.ref, lr, *grads[1]});
    auto train = b.group({step_w.node, step_b.node}, "train");

    graft::exec::session s(g);
    s.run({}, {}, {weights.assign, biases.assign});
    const double full_before = full_softmax_loss(x, w0, b0, labels, static_cast<std::size_t>(dim));
    double first = 0, last_avg = 0;
    std::vector<double> losses;
    for (int step = 0; step < 30; ++step) {
        auto out = s.run({}, {"loss:0"}, {train});
        losses.push_back(static_cast<double>(out[0].data<float>()[0]));
    }
    first = (losses[0] + losses[1] + losses[2]) / 3;
    last_avg = (losses[27] + losses[28] + losses[29]) / 3;
    for (double l : losses) CHECK(std::isfinite(l));
    const double full_after =
        full_softmax_loss(x, elements<float>(s.variable_value("weights")), elements<float>(s.variable_value("biases")), labels,
                          static_cast<std::size_t>(dim));
    INFO("sampled loss (first 3 avg) " << first << " -> (last 3 avg) " << last_avg << "; full softmax " << full_before << " -> "
                                       << full_after);
    MESSAGE("sampled softmax loss " << first << " -> " << last_avg << ", full softmax loss " << full_before << " -> "
                                    << full_after);
    CHECK(last_avg < 0.5 * first);
    CHECK(full_after < 0.75 * full_before);
}

}  // namespace graft_test_candidate_sampling
