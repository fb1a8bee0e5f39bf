// Under mpirun (2 and 3 ranks): TF's collective ops and Horovod's in imported-graph form, run by each
// rank's session on graft::dist::world() (the MPI communicator test_dist_mpi.cpp installs): values
// across ranks for rank-dependent inputs, a broadcast from a non-zero rank, gathers of different row
// counts, and the errors every rank reports together (no hang) when the ranks disagree.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "dist/support.hpp"
#include "graft/dist/communicator.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"

namespace graft_test_collective_ops_mpi {  // named: test files may share a unity translation unit

using graft::dtype;
using graft::endpoint;
using graft::tensor;

struct keys {
    endpoint size, group, instance;
};
inline keys v2_keys(const graft::graph_builder& b, int group_size, int instance, const std::string& tag) {
    return {b.scalar<std::int32_t>(group_size, tag + "/group_size"), b.scalar<std::int32_t>(1, tag + "/group_key"),
            b.scalar<std::int32_t>(instance, tag + "/instance_key")};
}
inline graft::attr_list v1_attrs(int group_size, int instance) {
    return {{"group_size", group_size}, {"group_key", 1}, {"instance_key", instance}};
}

template <class T>
std::vector<T> values(const tensor& t) {
    return std::vector<T>(t.data<T>(), t.data<T>() + t.num_elements());
}

using graft::test::dist::has;
using graft::test::dist::run_error;


TEST_CASE("collective ops across ranks: CollectiveReduce(V2) Add, Max, Min, Mul with Id and Div") {
    auto w = graft::dist::world();
    const int n = w->size(), r = w->rank();
    REQUIRE(w->backend() == "mpi");
    graft::graph g;
    graft::graph_builder b(g);
    const float fr = static_cast<float>(r);
    auto x = b.constant(tensor::from_vector<float>({2}, {fr + 1.f, 10.f * (fr + 1.f)}), "x");
    auto xi = b.constant(tensor::from_vector<std::int32_t>({3}, {r, -r, r + 1}), "xi");
    auto k = v2_keys(b, n, 1, "k");
    b.op("CollectiveReduceV2", {x, k.size, k.group, k.instance}, {{"merge_op", "Add"}, {"final_op", "Id"}}, "sum");
    b.op("CollectiveReduceV2", {x, k.size, k.group, k.instance}, {{"merge_op", "Add"}, {"final_op", "Div"}}, "mean");
    b.op("CollectiveReduceV2", {xi, k.size, k.group, k.instance}, {{"merge_op", "Max"}, {"final_op", "Id"}}, "max");
    b.op("CollectiveReduceV2", {xi, k.size, k.group, k.instance}, {{"merge_op", "Mul"}, {"final_op", "Id"}}, "prod");
    auto v1 = v1_attrs(n, 2);
    v1.push_back({"merge_op", "Min"});
    v1.push_back({"final_op", "Id"});
    v1.push_back({"subdiv_offsets", graft::attr_value::list_of(std::vector<std::int64_t>{0})});
    b.op("CollectiveReduce", {x}, v1, "v1_min");
    graft::exec::session s{g};
    auto out = s.run({}, {"sum:0", "mean:0", "max:0", "prod:0", "v1_min:0"});
    const float tri = static_cast<float>(n * (n + 1) / 2);
    CHECK(values<float>(out[0]) == std::vector<float>{tri, 10.f * tri});
    CHECK(values<float>(out[1]) == std::vector<float>{tri / static_cast<float>(n), 10.f * tri / static_cast<float>(n)});
    CHECK(values<std::int32_t>(out[2]) == std::vector<std::int32_t>{n - 1, 0, n});
    std::int32_t fact = 1;
    for (int i = 1; i <= n; ++i) fact *= i;
    CHECK(values<std::int32_t>(out[3]) == std::vector<std::int32_t>{0, 0, fact});  // a rank 0 holds the zeros
    CHECK(values<float>(out[4]) == std::vector<float>{1.f, 10.f});
}

TEST_CASE("collective ops across ranks: CollectiveGather(V2) concatenates in rank order, rows may differ") {
    auto w = graft::dist::world();
    const int n = w->size(), r = w->rank();
    graft::graph g;
    graft::graph_builder b(g);
    // Rank r sends r + 1 rows [100 r + i, -(100 r + i)].
    std::vector<std::int64_t> rows;
    for (int i = 0; i <= r; ++i) {
        rows.push_back(100 * r + i);
        rows.push_back(-(100 * r + i));
    }
    auto x = b.constant(tensor::from_vector<std::int64_t>({r + 1, 2}, rows), "x");
    auto k = v2_keys(b, n, 1, "k");
    b.op("CollectiveGatherV2", {x, k.size, k.group, k.instance}, {}, "gather");
    auto same = b.constant(tensor::from_vector<float>({1, 2}, {static_cast<float>(r), 0.5f}), "same");
    auto v1 = v1_attrs(n, 2);
    v1.push_back({"shape", graft::shape{1, 2}});
    b.op("CollectiveGather", {same}, v1, "v1_gather");
    graft::exec::session s{g};
    auto out = s.run({}, {"gather:0", "v1_gather:0"});
    std::vector<std::int64_t> want;
    for (int q = 0; q < n; ++q) {
        for (int i = 0; i <= q; ++i) {
            want.push_back(100 * q + i);
            want.push_back(-(100 * q + i));
        }
    }
    CHECK(out[0].shape() == graft::shape{n * (n + 1) / 2, 2});
    CHECK(values<std::int64_t>(out[0]) == want);
    CHECK(out[1].shape() == graft::shape{n, 2});
    std::vector<float> want1;
    for (int q = 0; q < n; ++q) {
        want1.push_back(static_cast<float>(q));
        want1.push_back(0.5f);
    }
    CHECK(values<float>(out[1]) == want1);
}

TEST_CASE("collective ops across ranks: a broadcast from the last rank (V2 and V1); receivers learn the root") {
    auto w = graft::dist::world();
    const int n = w->size(), r = w->rank(), root = n - 1;
    graft::graph g;
    graft::graph_builder b(g);
    auto k = v2_keys(b, n, 1, "k");
    auto v1 = v1_attrs(n, 2);
    v1.push_back({"shape", graft::shape{2}});
    if (r == root) {
        auto x = b.constant(tensor::from_vector<float>({2, 2}, {7.5f, static_cast<float>(n), -1.f, 0.25f}), "x");
        b.op("CollectiveBcastSendV2", {x, k.size, k.group, k.instance}, {}, "bcast");
        auto y = b.constant(tensor::from_vector<std::int32_t>({2}, {42, -42}), "y");
        b.with_control_dependencies({"bcast"}).op("CollectiveBcastSend", {y}, v1, "v1_bcast");  // same order on every rank
    } else {
        auto shape = b.constant(tensor::from_vector<std::int64_t>({2}, {2, 2}), "shape");
        b.op("CollectiveBcastRecvV2", {k.size, k.group, k.instance, shape}, {{"T", dtype::float32}}, "bcast");
        v1.push_back({"T", dtype::int32});
        b.with_control_dependencies({"bcast"}).add("CollectiveBcastRecv", {}, v1, "v1_bcast");
    }
    graft::exec::session s{g};
    auto out = s.run({}, {"bcast:0", "v1_bcast:0"});
    CHECK(out[0].shape() == graft::shape{2, 2});
    CHECK(values<float>(out[0]) == std::vector<float>{7.5f, static_cast<float>(n), -1.f, 0.25f});
    CHECK(values<std::int32_t>(out[1]) == std::vector<std::int32_t>{42, -42});
}

TEST_CASE("collective ops across ranks: every rank fails together when the ranks disagree") {
    auto w = graft::dist::world();
    const int n = w->size(), r = w->rank();
    if (n < 2) return;  // disagreement needs two ranks (ctest runs -np 2 and -np 3)
    auto x = tensor::from_vector<float>({2}, {1.f, 2.f});
    {  // group_size is not the world's: refused before any exchange
        graft::graph g;
        graft::graph_builder b(g);
        auto k = v2_keys(b, n + 1, 1, "k");
        b.op("CollectiveReduceV2", {b.constant(x, "x"), k.size, k.group, k.instance}, {{"merge_op", "Add"}, {"final_op", "Id"}}, "sum");
        auto e = run_error(g, "sum:0");
        CHECK(has(e, "sum"));
        CHECK(has(e, "group_size " + std::to_string(n + 1)));
        CHECK(has(e, std::to_string(n) + "-rank world"));
    }
    {  // rank 0 runs another instance than the others
        graft::graph g;
        graft::graph_builder b(g);
        auto k = v2_keys(b, n, r == 0 ? 7 : 8, "k");
        b.op("CollectiveReduceV2", {b.constant(x, "x"), k.size, k.group, k.instance}, {{"merge_op", "Add"}, {"final_op", "Id"}}, "sum");
        auto e = run_error(g, "sum:0");
        CHECK(has(e, "sum"));
        CHECK(has(e, "instance_key"));
        CHECK(has(e, "from 7 to 8"));
    }
    {  // ranks 0 and 1 both send
        graft::graph g;
        graft::graph_builder b(g);
        auto k = v2_keys(b, n, 1, "k");
        if (r <= 1) {
            b.op("CollectiveBcastSendV2", {b.constant(x, "x"), k.size, k.group, k.instance}, {}, "bcast");
        } else {
            auto shape = b.constant(tensor::from_vector<std::int32_t>({1}, {2}), "shape");
            b.op("CollectiveBcastRecvV2", {k.size, k.group, k.instance, shape}, {{"T", dtype::float32}}, "bcast");
        }
        CHECK(has(run_error(g, "bcast:0"), "ranks 0 and 1 both send"));
    }
    {  // nobody sends
        graft::graph g;
        graft::graph_builder b(g);
        auto k = v2_keys(b, n, 1, "k");
        auto shape = b.constant(tensor::from_vector<std::int32_t>({1}, {2}), "shape");
        b.op("CollectiveBcastRecvV2", {k.size, k.group, k.instance, shape}, {{"T", dtype::float32}}, "bcast");
        CHECK(has(run_error(g, "bcast:0"), "no rank sends"));
    }
    {  // the ranks still agree afterwards
        auto t = tensor::from_vector<std::int32_t>({1}, {1});
        w->allreduce(t, graft::dist::reduce_op::sum, "after");
        CHECK(t.data<std::int32_t>()[0] == n);
    }
}

TEST_CASE("Horovod ops across ranks: average with prescale, sum, max, allgather, broadcast from the last rank") {
    auto w = graft::dist::world();
    const int n = w->size(), r = w->rank();
    graft::graph g;
    graft::graph_builder b(g);
    const float fr = static_cast<float>(r);
    auto x = b.constant(tensor::from_vector<float>({2}, {fr + 1.f, -2.f * (fr + 1.f)}), "x");
    auto xi = b.constant(tensor::from_vector<std::int32_t>({2}, {r, 5 - r}), "xi");
    auto hvd = [](int op, float pre, float post) -> graft::attr_list {
        return {{"reduce_op", op}, {"prescale_factor", pre}, {"postscale_factor", post}};
    };
    b.op("HorovodAllreduce", {x}, hvd(0, 2.f, 1.f), "average");
    b.op("HorovodAllreduce", {xi}, hvd(1, 3.f, 1.f), "sum");
    b.op("HorovodAllreduce", {xi}, hvd(4, 1.f, 1.f), "max");
    std::vector<float> rows(static_cast<std::size_t>(r + 1), fr);
    b.op("HorovodAllgather", {b.constant(tensor::from_vector<float>({r + 1}, rows), "rows")}, {}, "gather");
    auto mine = b.constant(tensor::from_vector<float>({2}, {fr, fr * fr}), "mine");
    b.op("HorovodBroadcast", {mine}, {{"root_rank", n - 1}}, "bcast");
    graft::exec::session s{g};
    auto out = s.run({}, {"average:0", "sum:0", "max:0", "gather:0", "bcast:0"});
    const float nf = static_cast<float>(n);
    // average of 2 x: 2 (n (n + 1) / 2) / n = n + 1
    CHECK(values<float>(out[0]) == std::vector<float>{nf + 1.f, -2.f * (nf + 1.f)});
    CHECK(values<std::int32_t>(out[1]) == std::vector<std::int32_t>{3 * n * (n - 1) / 2, 3 * (5 * n - n * (n - 1) / 2)});
    CHECK(values<std::int32_t>(out[2]) == std::vector<std::int32_t>{n - 1, 5});
    std::vector<float> want;
    for (int q = 0; q < n; ++q) want.insert(want.end(), static_cast<std::size_t>(q + 1), static_cast<float>(q));
    CHECK(values<float>(out[3]) == want);
    CHECK(values<float>(out[4]) == std::vector<float>{nf - 1.f, (nf - 1.f) * (nf - 1.f)});
}

}  // namespace graft_test_collective_ops_mpi
