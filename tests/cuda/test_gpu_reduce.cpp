// The reduce family on the GPU against the CPU (op_case): Sum/Mean/Max/Min/Prod over contiguous,
// split and negative axes with and without keep_dims (both reduction kernels: a block per output
// and a thread per output), empty inputs, ArgMax/ArgMin (int32 and int64 outputs, ties), and the
// softmax cross-entropy ops (broadcast labels; int32 and int64 sparse labels).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "op_case.hpp"

using graft::dtype;
using graft::shape;
using graft::tensor;

namespace gpu_reduce_test {

/// One graph under construction, with its feeds.
struct builder {
    graft::graph g;
    graft::graph_builder b{g};
    graft::exec::session::feed_list feeds;

    /// A float32 placeholder `name` fed with deterministic values in [lo, hi).
    graft::endpoint input(const std::string& name, const shape& s, float lo = -1.f, float hi = 1.f,
                          std::uint32_t seed = 1) {
        feeds.emplace_back(name, graft::test_cuda::ramp(s, lo, hi, seed));
        return b.placeholder(name, dtype::float32, s);
    }
    graft::endpoint feed(const std::string& name, const tensor& t) {
        feeds.emplace_back(name, t);
        return b.placeholder(name, t.type(), t.shape());
    }
    /// The case fetching `fetches` (the builder is spent).
    graft::test_cuda::op_case done(const std::vector<graft::endpoint>& fetches) {
        graft::test_cuda::op_case c;
        c.g = std::move(g);
        c.feeds = std::move(feeds);
        for (const auto& e : fetches) c.fetches.push_back(e.str());
        return c;
    }
};

tensor ints(const std::vector<std::int32_t>& v) {
    return tensor::from_vector<std::int32_t>(v);
}

/// Runs reduction `op` of a ramp of `s` over `axes` on both devices; returns the GPU run's result.
tensor check_reduction(const char* op, const shape& s, const std::vector<std::int32_t>& axes,
                       bool keep_dims, float lo = -1.f, float hi = 1.f) {
    INFO(op << " of " << s.str() << " over " << axes.size() << " axes, keep_dims " << keep_dims);
    builder t;
    auto x = t.input("x", s, lo, hi);
    auto y = t.b.op(op, {x, t.b.constant(ints(axes))}, {{"keep_dims", keep_dims}});
    return graft::test_cuda::check_cpu_vs_gpu(t.done({y}))[0];
}

TEST_CASE(
    "gpu reduce: Sum, Mean, Max, Min, Prod over axes (contiguous, split, negative, all, none)") {
    for (const char* op : {"Sum", "Mean", "Max", "Min", "Prod"}) {
        const bool prod = std::string(op) == "Prod";
        const float lo = prod ? 0.5f : -1.f, hi = prod ? 1.5f : 1.f;
        for (bool keep : {false, true}) {
            check_reduction(op, {2, 3, 4}, {1}, keep, lo, hi);
            check_reduction(op, {2, 3, 4}, {0, 2}, keep, lo,
                            hi);  // two reduced runs: gathered first
            check_reduction(op, {2, 3, 4, 5}, {-1, 1}, keep, lo, hi);
            check_reduction(op, {2, 3, 4}, {0, 1, 2}, keep, lo, hi);
            check_reduction(op, {2, 3, 4}, {}, keep, lo, hi);
            check_reduction(op, {2, 1, 4}, {1}, keep, lo,
                            hi);  // only a size-1 dim: values pass through
        }
        check_reduction(op, {5, 300}, {1}, false, lo, hi);  // rows: a block per output
        check_reduction(op, {300, 5, 7}, {0}, false, lo,
                        hi);  // few outputs, strided: a block per output
        check_reduction(op, {4, 50, 600}, {1}, false, lo,
                        hi);  // many strided outputs: a thread per output
        check_reduction(op, {3000, 10}, {1}, false, lo,
                        hi);  // many short rows: a thread per output
        check_reduction(op, {1000}, {0}, true, lo, hi);
    }
}

TEST_CASE("gpu reduce: Sum and Mean give TF's values") {
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.constant(tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
    auto s = b.op("Sum", {x, b.constant(ints({1}))});
    auto m = b.op("Mean", {x, b.constant(ints({0}))}, {{"keep_dims", true}});
    graft::test_cuda::op_case c;
    c.g = std::move(g);
    c.fetches = {s.str(), m.str()};
    auto r = graft::test_cuda::check_cpu_vs_gpu(c);
    REQUIRE(r[0].shape() == shape{2});
    CHECK(r[0].data<float>()[0] == 6.f);
    CHECK(r[0].data<float>()[1] == 15.f);
    REQUIRE(r[1].shape() == shape{1, 3});
    CHECK(r[1].data<float>()[2] == 4.5f);
}

TEST_CASE("gpu reduce: an empty reduction gives the identity (0, -inf, NaN for Mean)") {
    for (const char* op : {"Sum", "Mean", "Max", "Min", "Prod"}) {
        auto r = check_reduction(op, {0, 3}, {0}, false);
        REQUIRE(r.shape() == shape{3});
        const float v = r.data<float>()[1];
        const std::string o = op;
        if (o == "Sum") CHECK(v == 0.f);
        if (o == "Prod") CHECK(v == 1.f);
        if (o == "Max") CHECK(v == -std::numeric_limits<float>::infinity());
        if (o == "Min") CHECK(v == std::numeric_limits<float>::infinity());
        if (o == "Mean") CHECK(std::isnan(v));
        // Nothing to write: the output itself is empty.
        CHECK(check_reduction(op, {3, 0}, {0}, false).num_elements() == 0);
    }
}

TEST_CASE("gpu reduce: Max and Min propagate NaN") {
    for (const char* op : {"Max", "Min"}) {
        builder t;
        tensor v = tensor::from_vector<float>({2, 3}, {1, std::nanf(""), 3, 4, 5, 6});
        auto y = t.b.op(op, {t.feed("x", v), t.b.constant(ints({1}))});
        auto r = graft::test_cuda::check_cpu_vs_gpu(t.done({y}))[0];
        CHECK(std::isnan(r.data<float>()[0]));
        CHECK(r.data<float>()[1] == (std::string(op) == "Max" ? 6.f : 4.f));
    }
}

TEST_CASE(
    "gpu reduce: ArgMax and ArgMin over every axis, int32 and int64 outputs, first index on ties") {
    for (const char* op : {"ArgMax", "ArgMin"}) {
        for (dtype out : {dtype::int32, dtype::int64}) {
            for (std::int32_t axis : {0, 1, 2, -1}) {
                CAPTURE(op);
                CAPTURE(axis);
                builder t;
                auto x = t.input("x", {3, 4, 5});
                auto y =
                    t.b.op(op, {x, t.b.constant(tensor::scalar_of(axis))}, {{"output_type", out}});
                auto r = graft::test_cuda::check_cpu_vs_gpu(t.done({y}))[0];
                CHECK(r.type() == out);
            }
        }
        builder t;
        auto x = t.feed("x", tensor::from_vector<float>({2, 4}, {1, 7, 7, 0, 2, 2, -1, -1}));
        auto y = t.b.op(op, {x, t.b.constant(tensor::scalar_of(std::int32_t{1}))});
        auto r = graft::test_cuda::check_cpu_vs_gpu(t.done({y}))[0];
        REQUIRE(r.type() == dtype::int64);
        const bool mx = std::string(op) == "ArgMax";
        CHECK(r.data<std::int64_t>()[0] == (mx ? 1 : 3));
        CHECK(r.data<std::int64_t>()[1] == (mx ? 0 : 2));
    }
}

TEST_CASE("gpu reduce: SoftmaxCrossEntropyWithLogits, plain and with broadcast labels or logits") {
    struct shapes {
        shape logits, labels;
        std::int64_t batch;
    };
    for (const auto& sh :
         {shapes{{4, 10}, {4, 10}, 4}, shapes{{4, 10}, {1, 10}, 4}, shapes{{4, 10}, {10}, 4},
          shapes{{1, 10}, {4, 10}, 4}, shapes{{3, 300}, {3, 300}, 3}}) {
        INFO("logits " << sh.logits.str() << " labels " << sh.labels.str());
        builder t;
        auto logits = t.input("logits", sh.logits, -3.f, 3.f, 1);
        auto labels = t.input("labels", sh.labels, 0.f, 1.f, 2);
        auto r = t.b.op_n("SoftmaxCrossEntropyWithLogits", {logits, labels});
        auto got = graft::test_cuda::check_cpu_vs_gpu(t.done({r[0], r[1]}));
        CHECK(got[0].shape() == shape{sh.batch});
    }
    // One-hot labels: loss = logsumexp(x) - x[label]; backprop rows sum to 0.
    builder t;
    auto logits = t.feed("logits", tensor::from_vector<float>({1, 3}, {1, 2, 3}));
    auto labels = t.feed("labels", tensor::from_vector<float>({1, 3}, {0, 0, 1}));
    auto r = t.b.op_n("SoftmaxCrossEntropyWithLogits", {logits, labels});
    auto got = graft::test_cuda::check_cpu_vs_gpu(t.done({r[0], r[1]}));
    const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
    CHECK(got[0].data<float>()[0] == doctest::Approx(lse - 3.0).epsilon(1e-6));
    const float* bp = got[1].data<float>();
    CHECK(bp[0] + bp[1] + bp[2] == doctest::Approx(0.0).epsilon(1e-6));
}

TEST_CASE("gpu reduce: SparseSoftmaxCrossEntropyWithLogits with int32 and int64 labels") {
    for (dtype lt : {dtype::int32, dtype::int64}) {
        builder t;
        auto logits = t.input("logits", {6, 7}, -2.f, 2.f);
        tensor lab(lt, {6});
        for (int i = 0; i < 6; ++i) {
            if (lt == dtype::int32)
                lab.data<std::int32_t>()[i] = (i * 3) % 7;
            else
                lab.data<std::int64_t>()[i] = (i * 5) % 7;
        }
        auto r = t.b.op_n("SparseSoftmaxCrossEntropyWithLogits", {logits, t.feed("labels", lab)});
        graft::test_cuda::check_cpu_vs_gpu(t.done({r[0], r[1]}));
    }
    builder t;
    auto logits = t.feed("logits", tensor::from_vector<float>({2, 3}, {1, 2, 3, 0, 0, 0}));
    auto labels = t.feed("labels", tensor::from_vector<std::int32_t>({2, 0}));
    auto r = t.b.op_n("SparseSoftmaxCrossEntropyWithLogits", {logits, labels});
    auto got = graft::test_cuda::check_cpu_vs_gpu(t.done({r[0], r[1]}));
    const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
    CHECK(got[0].data<float>()[0] == doctest::Approx(lse - 3.0).epsilon(1e-6));
    CHECK(got[0].data<float>()[1] == doctest::Approx(std::log(3.0)).epsilon(1e-6));
    CHECK(got[1].data<float>()[3] == doctest::Approx(1.0 / 3 - 1).epsilon(1e-6));
}

}  // namespace gpu_reduce_test
