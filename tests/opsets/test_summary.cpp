// The summary family (graft/ops/summary.hpp) and the clustering family (graft/ops/clustering.hpp):
// ScalarSummary / HistogramSummary / MergeSummary through a session, written into an event file with
// summary_writer::add_summary and read back; NearestNeighbors against a float64 brute force.
#include <doctest/doctest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/formats/tf/wire.hpp"
#include "graft/formats/tf_graph/events.hpp"
#include "support/fixtures.hpp"

// One namespace per file: the opsets tests build as one binary in unity batches.
namespace graft_test_summary {

using graft::dtype;
using graft::shape;
using graft::tensor;

namespace {

struct histo {
    double min = 0, max = 0, num = 0, sum = 0, sum_squares = 0;
    std::vector<double> limits, counts;
};

std::vector<double> packed_doubles(std::string_view b) {
    std::vector<double> r(b.size() / 8);
    std::memcpy(r.data(), b.data(), r.size() * 8);
    return r;
}

/// The tag and HistogramProto of the first value of a serialized Summary.
std::pair<std::string, histo> first_histogram(const std::string& summary) {
    using graft::tf::wire::wire_type;
    graft::tf::wire::reader r(summary);
    std::uint32_t f;
    wire_type wt;
    REQUIRE(r.next(f, wt));
    auto v = r.message("Value");
    std::string tag;
    histo h;
    while (v.next(f, wt)) {
        if (f == 1) tag = std::string(v.bytes());
        else if (f == 5) {
            auto hp = v.message("HistogramProto");
            while (hp.next(f, wt)) {
                if (wt == wire_type::fixed64) {
                    std::uint64_t bits = hp.fixed64();
                    double x;
                    std::memcpy(&x, &bits, 8);
                    (f == 1 ? h.min : f == 2 ? h.max : f == 3 ? h.num : f == 4 ? h.sum : h.sum_squares) = x;
                } else if (f == 6) h.limits = packed_doubles(hp.bytes());
                else if (f == 7) h.counts = packed_doubles(hp.bytes());
                else hp.skip(wt);
            }
        } else v.skip(wt);
    }
    return {tag, h};
}

}  // namespace

TEST_CASE("ScalarSummary, HistogramSummary and MergeSummary make Summary protos an event file keeps") {
    graft::graph g;
    graft::graph_builder b(g);
    auto loss = b.op("Placeholder", {}, {{"dtype", dtype::float32}});
    auto w = b.constant(tensor::from_vector<float>(shape{2, 3}, {-1.5f, 0.0f, 0.25f, 0.25f, 3.0f, 1e-13f}));
    auto s1 = b.add("ScalarSummary", {b.constant(tensor::scalar_of<std::string>("loss")), loss}, {}, "loss_summary");
    auto s2 = b.add("ScalarSummary", {b.constant(tensor::from_vector<std::string>(shape{2}, {"a", "b"})),
                                      b.constant(tensor::from_vector<double>(shape{2}, {1.0, 2.0}))}, {}, "ab");
    auto h = b.add("HistogramSummary", {b.constant(tensor::scalar_of<std::string>("weights")), w}, {}, "w_hist");
    b.add("MergeSummary", {{"loss_summary", 0}, {"ab", 0}}, {{"N", std::int64_t{2}}}, "merged");
    b.add("MergeSummary", {{"loss_summary", 0}, {"loss_summary", 0}}, {{"N", std::int64_t{2}}}, "dup");
    (void)s1; (void)s2; (void)h;
    graft::exec::session s(g);
    auto out = s.run({{loss.str(), tensor::scalar_of<float>(0.75f)}}, {"merged:0", "w_hist:0"});
    CHECK(out[0].type() == dtype::string);
    CHECK(out[0].rank() == 0);

    auto dir = graft::test::scratch("summary_ops");
    {
        graft::train::summary_writer wr(dir.string());
        wr.add_summary(out[0].data<std::string>()[0], 7);
        wr.add_summary(out[1].data<std::string>()[0], 7);
        auto ev = graft::train::read_events(wr.path());
        REQUIRE(ev.size() == 3);
        CHECK(ev[1].step == 7);
        CHECK(ev[1].scalar("loss") == 0.75f);
        CHECK(ev[1].scalar("a") == 1.0f);
        CHECK(ev[1].scalar("b") == 2.0f);
        CHECK(ev[2].has_summary);
    }

    const auto first = first_histogram(out[1].data<std::string>()[0]);
    const std::string& tag = first.first;
    const histo& hist = first.second;  // a plain name (captured by a lambda below), not a binding
    CHECK(tag == "weights");
    CHECK(hist.min == -1.5);
    CHECK(hist.max == 3.0);
    CHECK(hist.num == 6);
    CHECK(hist.sum == doctest::Approx(2.0 + 1e-13));
    CHECK(hist.sum_squares == doctest::Approx(2.25 + 0.0625 * 2 + 9.0));
    REQUIRE(hist.limits.size() == hist.counts.size());
    // every value is counted once, in the bucket whose limit is the first above it
    CHECK(std::accumulate(hist.counts.begin(), hist.counts.end(), 0.0) == 6);
    CHECK(hist.limits.back() == DBL_MAX);
    std::vector<double> vals{-1.5, 0.0, 0.25, 0.25, 3.0, static_cast<double>(1e-13f)};
    for (std::size_t i = 0; i < hist.limits.size(); ++i) {
        double lo = i ? hist.limits[i - 1] : -DBL_MAX;
        auto in = std::count_if(vals.begin(), vals.end(), [&](double x) { return x >= lo && x < hist.limits[i]; });
        if (hist.counts[i] > 0) CHECK(hist.counts[i] == static_cast<double>(in));
    }
    // empty runs are collapsed: no two empty buckets in a row
    for (std::size_t i = 1; i < hist.counts.size(); ++i) CHECK((hist.counts[i] > 0 || hist.counts[i - 1] > 0));

    CHECK_THROWS_WITH(s.run({{loss.str(), tensor::scalar_of<float>(1.0f)}}, {"dup:0"}),
                      doctest::Contains("Duplicate tag loss found in summary inputs"));
    graft::graph g2;
    graft::graph_builder b2(g2);
    b2.add("HistogramSummary", {b2.constant(tensor::scalar_of<std::string>("bad")),
                                b2.constant(tensor::from_vector<float>(shape{2}, {1.0f, NAN}))}, {}, "h");
    graft::exec::session bad(g2);
    CHECK_THROWS_WITH(bad.run({}, {"h:0"}), doctest::Contains("Nan in summary histogram for: bad"));
}

TEST_CASE("NearestNeighbors: the k nearest centers, nearest first, ties to the lower index") {
    const std::int64_t n = 37, m = 11, d = 5;
    std::vector<float> p(n * d), c(m * d);
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = std::sin(static_cast<float>(i) * 0.37f) * 3;
    for (std::size_t i = 0; i < c.size(); ++i) c[i] = std::cos(static_cast<float>(i) * 0.91f) * 3;
    for (std::int64_t t = 0; t < d; ++t) c[3 * d + t] = c[7 * d + t];  // centers 3 and 7 tie
    for (std::int64_t t = 0; t < d; ++t) p[5 * d + t] = c[3 * d + t];  // point 5 sits on them
    graft::graph g;
    graft::graph_builder b(g);
    auto pts = b.constant(tensor::from_vector<float>(shape{n, d}, p));
    auto ctr = b.constant(tensor::from_vector<float>(shape{m, d}, c));
    b.add("NearestNeighbors", {pts, ctr, b.constant(tensor::scalar_of<std::int64_t>(3))}, {}, "nn");
    b.add("NearestNeighbors", {pts, ctr, b.constant(tensor::scalar_of<std::int64_t>(50))}, {}, "all");
    graft::exec::session s(g);
    auto out = s.run({}, {"nn:0", "nn:1", "all:0"});
    REQUIRE(out[0].shape() == shape{n, 3});
    CHECK(out[2].shape() == shape{n, m});  // k clamped to the number of centers
    for (std::int64_t i = 0; i < n; ++i) {
        std::vector<std::pair<double, std::int64_t>> ref;
        for (std::int64_t j = 0; j < m; ++j) {
            double sq = 0;
            for (std::int64_t t = 0; t < d; ++t) {
                double diff = static_cast<double>(p[i * d + t]) - c[j * d + t];
                sq += diff * diff;
            }
            ref.emplace_back(sq, j);
        }
        std::stable_sort(ref.begin(), ref.end(), [](auto& x, auto& y) { return x.first < y.first; });
        for (std::int64_t j = 0; j < 3; ++j) {
            CHECK(out[0].data<std::int64_t>()[i * 3 + j] == ref[static_cast<std::size_t>(j)].second);
            CHECK(out[1].data<float>()[i * 3 + j] == doctest::Approx(ref[static_cast<std::size_t>(j)].first).epsilon(1e-4).scale(1));
        }
    }
    CHECK(out[0].data<std::int64_t>()[5 * 3 + 0] == 3);  // the tie goes to the lower index
    CHECK(out[0].data<std::int64_t>()[5 * 3 + 1] == 7);

    graft::graph g2;
    graft::graph_builder b2(g2);
    b2.add("NearestNeighbors", {b2.constant(tensor::from_vector<float>(shape{2, 3}, {1, 2, 3, 4, 5, 6})),
                                b2.constant(tensor::from_vector<float>(shape{2, 2}, {1, 2, 3, 4})),
                                b2.constant(tensor::scalar_of<std::int64_t>(1))}, {}, "bad");
    graft::exec::session s2(g2);
    CHECK_THROWS_WITH(s2.run({}, {"bad:0"}), doctest::Contains("point_dimensions == center_dimensions: 3 vs 2"));
}

TEST_CASE("graft run --summary-dir writes the fetched summaries into an event file, one event per run") {
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.op("Placeholder", {}, {{"dtype", dtype::float32}}, "x");
    auto sq = b.op("Square", {x}, {}, "sq");
    b.add("ScalarSummary", {b.constant(tensor::scalar_of<std::string>("x_squared")), sq}, {}, "s");
    auto dir = graft::test::scratch("cli_summary");
    graft::tf::write_graph(g, (dir / "g.pb").string());
    std::string out;
    REQUIRE(graft::test::run_command(std::string(GRAFT_CLI) + " run " + (dir / "g.pb").string() +
                                         " --feed x=3 --fetch s:0 --repeat 2 --step 10 --summary-dir " +
                                         (dir / "logs").string(), out) == 0);
    INFO(out);
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(dir / "logs")) files.push_back(e.path().string());
    REQUIRE(files.size() == 1);
    auto ev = graft::train::read_events(files[0]);
    REQUIRE(ev.size() == 3);  // file_version, then one event per run
    CHECK(ev[1].step == 10);
    CHECK(ev[2].step == 11);
    CHECK(ev[1].scalar("x_squared") == 9.0f);
    // a fetch that no summary op made is refused
    CHECK(graft::test::run_command(std::string(GRAFT_CLI) + " run " + (dir / "g.pb").string() +
                                       " --feed x=3 --fetch sq:0 --summary-dir " + (dir / "logs2").string(), out) != 0);
    CHECK(out.find("no fetch is made by a summary op") != std::string::npos);
}

}  // namespace graft_test_summary
