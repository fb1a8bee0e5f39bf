// Run under mpirun (ctest: dist_mpi_np2, dist_mpi_np3; -np 1 works too): the MPI communicator's
// collectives, data-parallel training of the MLP 784-512-512-10 against one process on the global
// batch, broadcast of initial variables, and (GRAFT_TEST_KILL_RANK set, driven by test_dist) a rank
// that dies mid-step.
#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "dist/mlp.hpp"
#include "graft/dist/data_parallel.hpp"
#include "graft/dist/fusion.hpp"
#include "graft/dist/mpi.hpp"
#include "graft/exec/session.hpp"
#include "graft/train/optimizer.hpp"
#include "support/fixtures.hpp"

namespace {

using graft::tensor;
using graft::dtype;
namespace gd = graft::dist;
namespace td = graft::test::dist;

// MPI for the whole binary: initialized before doctest's main, finalized at exit.
const std::unique_ptr<gd::mpi_session> mpi = gd::init_mpi(nullptr, nullptr);

gd::communicator& mpi_comm() { return *mpi->comm(); }

/// Trains the MLP `steps` steps on global batches of `global_batch` rows. distributed: each rank
/// feeds its local_rows and the gradients are allreduced; else the whole global batch in one
/// process. Returns the variables' final values, in mlp_graph::vars order.
std::vector<tensor> train_mlp(bool distributed, int steps, std::int64_t global_batch, const td::dataset& data,
                              std::size_t bucket_bytes, gd::bucket_plan* plan = nullptr) {
    auto m = td::build_mlp();
    graft::train::gradient_descent sgd(0.1);
    std::string train;
    if (distributed) {
        gd::distributed_optimizer opt(sgd, {.bucket_bytes = bucket_bytes});
        train = opt.minimize(m.mg, m.loss);
        if (plan) *plan = opt.plan();
    } else {
        train = sgd.minimize(m.mg, m.loss);
    }
    graft::exec::session s{m.mg.graph};
    s.run({}, {}, {m.init});
    if (distributed) gd::broadcast_variables(s);
    for (int step = 0; step < steps; ++step) {
        tensor x = data.features.slice(step * global_batch, global_batch);
        tensor y = data.labels.slice(step * global_batch, global_batch);
        if (distributed) {
            x = gd::local_rows(x);
            y = gd::local_rows(y);
        }
        s.run({{"x:0", x}, {"y:0", y}}, {}, {train});
    }
    std::vector<tensor> out;
    for (auto& v : m.vars) out.push_back(s.variable_value(v).clone());
    return out;
}

double relative_difference(const tensor& a, const tensor& b) {
    double num = 0, den = 0;
    for (std::int64_t i = 0; i < a.num_elements(); ++i) {
        double d = double(a.data<float>()[i]) - double(b.data<float>()[i]);
        num += d * d;
        den += double(a.data<float>()[i]) * double(a.data<float>()[i]);
    }
    return std::sqrt(num / std::max(den, 1e-30));
}

}  // namespace

TEST_CASE("the MPI communicator: allreduce, broadcast, allgather, barrier across the ranks") {
    const int r = mpi_comm().rank(), n = mpi_comm().size();
    CHECK(mpi_comm().backend() == "mpi");
    MESSAGE("rank ", r, " of ", n);

    auto f = tensor::from_vector<float>({3}, {float(r), float(2 * r), 1.0f});
    mpi_comm().allreduce(f, gd::reduce_op::sum, "f");
    const float tri = float(n * (n - 1) / 2);
    CHECK(f.data<float>()[0] == tri);
    CHECK(f.data<float>()[1] == 2 * tri);
    CHECK(f.data<float>()[2] == float(n));

    auto m = tensor::from_vector<double>({2}, {double(r), 1.0});
    mpi_comm().allreduce(m, gd::reduce_op::mean, "m");
    CHECK(m.data<double>()[0] == doctest::Approx(double(n - 1) / 2));
    CHECK(m.data<double>()[1] == 1.0);

    auto i = tensor::from_vector<std::int64_t>({2}, {std::int64_t(r), -std::int64_t(r)});
    mpi_comm().allreduce(i, gd::reduce_op::max, "i");
    CHECK(i.data<std::int64_t>()[0] == n - 1);
    CHECK(i.data<std::int64_t>()[1] == 0);

    // broadcast from the last rank
    auto b = tensor::from_vector<float>({2, 2}, {float(r), float(r), float(r), float(r)});
    mpi_comm().broadcast(b, n - 1, "b");
    for (int k = 0; k < 4; ++k) CHECK(b.data<float>()[k] == float(n - 1));

    // allgather: rank r sends r+1 rows of [r, r]
    std::vector<std::int32_t> mine;
    for (int k = 0; k <= r; ++k) { mine.push_back(r); mine.push_back(r); }
    auto g = mpi_comm().allgather(tensor::from_vector<std::int32_t>({r + 1, 2}, mine), "g");
    REQUIRE(g.dim(0) == n * (n + 1) / 2);
    CHECK(g.dim(1) == 2);
    std::int64_t row = 0;
    for (int q = 0; q < n; ++q) {
        for (int k = 0; k <= q; ++k, ++row) CHECK(g.data<std::int32_t>()[row * 2] == q);
    }
    // A rank with no rows: the others' row width still sizes the result.
    std::vector<std::int32_t> some(r == 0 ? 0 : 3, r);
    auto z = mpi_comm().allgather(tensor::from_vector<std::int32_t>({r == 0 ? 0 : 1, 3}, some), "z");
    CHECK(z.shape() == graft::shape{n - 1, 3});
    if (n > 1) CHECK(z.data<std::int32_t>()[0] == 1);
    auto z1 = mpi_comm().allgather(tensor::from_vector<std::int32_t>({r == 0 ? 0 : 2}, std::vector<std::int32_t>(r == 0 ? 0 : 2, r)), "z1");
    CHECK(z1.dim(0) == 2 * (n - 1));
    mpi_comm().barrier();

    // A broadcast whose shapes disagree fails on every rank, naming the tensor.
    if (n > 1) {
        tensor bad(dtype::float32, graft::shape{r == 0 ? 3 : 4});
        try {
            mpi_comm().broadcast(bad, 0, "mismatched");
            FAIL("a broadcast with different shapes must fail");
        } catch (const gd::dist_error& e) {
            CHECK(std::string(e.what()).find("mismatched") != std::string::npos);
            CHECK(std::string(e.what()).find("rank") != std::string::npos);
        }
    }
}

TEST_CASE("data-parallel MLP 784-512-512-10: 20 steps on N ranks equal one process on the global batch") {
    const std::int64_t global_batch = 96;  // divisible by 1, 2 and 3 ranks
    const int steps = 20;
    auto data = td::training_rows(global_batch * steps, graft::test::shared_dir().string());
    if (mpi_comm().rank() == 0) MESSAGE((data.mnist ? "data: MNIST test set rows" : "data: synthetic rows (MNIST absent)"));

    auto reference = train_mlp(false, steps, global_batch, data, 0);
    gd::bucket_plan plan;
    auto distributed = train_mlp(true, steps, global_batch, data, std::size_t{16} << 10, &plan);
    // 16 KiB buckets close once they hold 16 KiB, in backprop order: each layer's bias and kernel.
    REQUIRE(plan.buckets.size() == 3);
    CHECK(plan.buckets[0].vars == std::vector<std::string>{"dense_2/bias", "dense_2/kernel"});
    CHECK(plan.buckets[2].vars == std::vector<std::string>{"dense/bias", "dense/kernel"});
    REQUIRE(reference.size() == distributed.size());
    double worst = 0;
    for (std::size_t k = 0; k < reference.size(); ++k) {
        double d = relative_difference(reference[k], distributed[k]);
        worst = std::max(worst, d);
        CHECK_MESSAGE(d <= 1e-6, "variable #", k, " differs by ", d, " (relative L2)");
    }
    MESSAGE("rank ", mpi_comm().rank(), ": worst relative difference to one process ", worst);
    // The update moved the weights (the comparison is not between two untrained models).
    auto init = td::glorot(784, 512, 42);
    CHECK(relative_difference(init, reference[0]) > 1e-4);

    // Every rank holds the same bits.
    for (auto& v : distributed) {
        tensor mx = v.clone(), mn = v.clone();
        mpi_comm().allreduce(mx, gd::reduce_op::max, "check");
        mpi_comm().allreduce(mn, gd::reduce_op::min, "check");
        CHECK(std::memcmp(mx.raw_data(), v.raw_data(), v.nbytes()) == 0);
        CHECK(std::memcmp(mn.raw_data(), v.raw_data(), v.nbytes()) == 0);
    }

    // Same ranks, same data: the same bits, run to run.
    auto again = train_mlp(true, steps, global_batch, data, std::size_t{16} << 10);
    for (std::size_t k = 0; k < again.size(); ++k) {
        CHECK_MESSAGE(std::memcmp(again[k].raw_data(), distributed[k].raw_data(), again[k].nbytes()) == 0,
                      "variable #", k, " differs between two identical runs");
    }
    if (mpi_comm().size() > 1) {
        auto fused = gd::fusion_engine::instance().totals();
        CHECK(fused.buckets >= 2u * steps * 3u);
    }
}

TEST_CASE("broadcast_variables gives every rank rank 0's initial values") {
    auto m = td::build_mlp({784, 64, 10}, 100 + static_cast<std::uint64_t>(mpi_comm().rank()));
    graft::exec::session s{m.mg.graph};
    s.run({}, {}, {m.init});
    gd::broadcast_variables(s);
    auto want = td::glorot(784, 64, 100);
    auto got = s.variable_value(m.vars[0]);
    CHECK(std::memcmp(want.raw_data(), got.raw_data(), want.nbytes()) == 0);
    auto want2 = td::glorot(64, 10, 101);
    CHECK(std::memcmp(want2.raw_data(), s.variable_value(m.vars[2]).raw_data(), want2.nbytes()) == 0);
}

TEST_CASE("a rank killed mid-step (driven by test_dist with GRAFT_TEST_KILL_RANK)") {
    const char* kill_rank = std::getenv("GRAFT_TEST_KILL_RANK");
    if (!kill_rank) return;  // only when test_dist's launcher asks for it
    const int victim = std::atoi(kill_rank);
    auto m = td::build_mlp({784, 64, 10});
    graft::train::gradient_descent sgd(0.1);
    gd::distributed_optimizer opt(sgd);
    auto train = opt.minimize(m.mg, m.loss);
    graft::exec::session s{m.mg.graph};
    s.run({}, {}, {m.init});
    auto data = td::training_rows(64, "/nonexistent");
    for (int step = 0; step < 1000000; ++step) {
        if (step == 3 && mpi_comm().rank() == victim) {
            std::fprintf(stderr, "rank %d: killing myself at step %d\n", victim, step);
            ::kill(::getpid(), SIGKILL);
        }
        s.run({{"x:0", gd::local_rows(data.features)}, {"y:0", gd::local_rows(data.labels)}}, {}, {train});
    }
    FAIL("the surviving ranks must not run a million steps");
}

TEST_CASE("a rank that stalls is caught by the watchdog (driven by test_dist with GRAFT_TEST_STALL_RANK)") {
    const char* stall_rank = std::getenv("GRAFT_TEST_STALL_RANK");
    if (!stall_rank) return;
    if (mpi_comm().rank() == std::atoi(stall_rank)) {
        std::fprintf(stderr, "rank %d: stalling instead of joining the allreduce\n", mpi_comm().rank());
        ::sleep(600);
    }
    auto t = tensor::from_vector<float>({4}, {1, 2, 3, 4});
    mpi_comm().allreduce(t, gd::reduce_op::sum, "dense/kernel/grad");
    FAIL("an allreduce without the stalled rank must not complete");
}
