// graft::dist in one process: the local communicator, the gradient buckets and where their ops run
// in a plan, data-parallel training on one rank against plain training, the fusion engine's errors;
// and, where MPI is built, a job whose rank is killed mid-step ends with an error naming it.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "dist/launch.hpp"
#include "dist/mlp.hpp"
#include "graft/dist/data_parallel.hpp"
#include "graft/dist/fusion.hpp"
#include "graft/exec/session.hpp"
#include "graft/train/optimizer.hpp"

namespace {
using graft::tensor;
using graft::dtype;
namespace gd = graft::dist;
namespace td = graft::test::dist;
}  // namespace

TEST_CASE("the local communicator: one rank, every collective is the identity") {
    auto w = gd::world();
    CHECK(w->backend() == "local");
    CHECK(w->rank() == 0);
    CHECK(w->size() == 1);
    auto t = tensor::from_vector<float>({3}, {1.5f, -2.0f, 3.25f});
    tensor alias = t;  // shares the buffer: allreduce must not write through it
    w->allreduce(t, gd::reduce_op::mean, "t");
    CHECK(t.data<float>()[0] == 1.5f);
    CHECK(t.data<float>()[2] == 3.25f);
    w->allreduce(t, gd::reduce_op::sum);
    CHECK(t.data<float>()[1] == -2.0f);
    w->broadcast(t, 0, "t");
    CHECK(t.data<float>()[1] == -2.0f);
    auto g = w->allgather(tensor::from_vector<std::int32_t>({2, 2}, {1, 2, 3, 4}), "g");
    CHECK(g.shape() == graft::shape{2, 2});
    CHECK(g.data<std::int32_t>()[3] == 4);
    w->barrier();

    tensor text = tensor::scalar_of(std::string("s"));
    CHECK_THROWS_AS(w->allreduce(text, gd::reduce_op::sum), graft::invalid_argument_error);
    CHECK_THROWS_AS(w->broadcast(t, 1, "t"), graft::invalid_argument_error);
    tensor empty;
    try {
        w->allreduce(empty, gd::reduce_op::sum, "dense/kernel/grad");
        FAIL("an empty tensor must be refused");
    } catch (const graft::invalid_argument_error& e) {
        CHECK(std::string(e.what()).find("dense/kernel/grad") != std::string::npos);
    }
}

TEST_CASE("allreduce_gradients: buckets in backprop order, one dtype each, bucket_bytes respected") {
    auto m = td::build_mlp();
    graft::train::gradient_descent sgd(0.1);
    auto gv = sgd.compute_gradients(m.mg, m.loss);
    gd::bucket_plan plan;
    auto out = gd::allreduce_gradients(m.mg, gv, {.bucket_bytes = 0}, &plan);
    REQUIRE(plan.buckets.size() == 6);
    CHECK(plan.buckets[0].vars == std::vector<std::string>{"dense_2/bias"});    // backprop's first gradient
    CHECK(plan.buckets[5].vars == std::vector<std::string>{"dense/kernel"});
    CHECK(plan.buckets[5].bytes == 784u * 512u * 4u);
    for (std::size_t k = 0; k < out.size(); ++k) {
        REQUIRE(out[k].grad);
        CHECK(m.mg.graph.at(out[k].grad->node).op == "GraftAllreduceWait");
    }

    gd::bucket_plan one;
    gd::allreduce_gradients(m.mg, gv, {}, &one);  // 4 MiB: the whole MLP (2.6 MiB) in one bucket
    REQUIRE(one.buckets.size() == 1);
    CHECK(one.buckets[0].vars.size() == 6);
    CHECK(one.group != plan.group);  // a second call gets its own scope and engine group

    gd::bucket_plan mid;
    gd::allreduce_gradients(m.mg, gv, {.bucket_bytes = std::size_t{1} << 20}, &mid);
    // dense_2 (20 KiB) + dense_1 (1 MiB) close at 1 MiB; dense/bias + dense/kernel make the second.
    REQUIRE(mid.buckets.size() == 2);
    CHECK(mid.buckets[0].vars == std::vector<std::string>{"dense_2/bias", "dense_2/kernel", "dense_1/bias", "dense_1/kernel"});
}

TEST_CASE("the plan starts each bucket's allreduce as soon as its gradients exist and waits last") {
    auto m = td::build_mlp();
    graft::train::gradient_descent sgd(0.1);
    gd::distributed_optimizer opt(sgd, {.bucket_bytes = 0});
    auto train = opt.minimize(m.mg, m.loss);
    graft::exec::session s{m.mg.graph};
    const auto& p = s.prepare({"x:0", "y:0"}, {}, {train});
    int first_start = -1, last_gradient = -1, first_wait = -1, first_layer_grad = -1;
    for (std::size_t i = 0; i < p.steps.size(); ++i) {
        const auto* n = p.steps[i].n;
        const int k = static_cast<int>(i);
        if (n->op == "GraftAllreduceStart" && first_start < 0) first_start = k;
        if (n->op == "GraftAllreduceWait" && first_wait < 0) first_wait = k;
        if (n->name.rfind("gradients/", 0) == 0) last_gradient = k;
        if (n->name.rfind("gradients/dense/MatMul", 0) == 0 && first_layer_grad < 0) first_layer_grad = k;
    }
    REQUIRE(first_start >= 0);
    REQUIRE(first_layer_grad >= 0);
    // The last layer's allreduce starts before backprop reaches the first layer ...
    CHECK(first_start < first_layer_grad);
    // ... and no result is waited for while a gradient is still to be computed.
    CHECK(first_wait > last_gradient);
}

TEST_CASE("data-parallel training on one rank is plain training, bit for bit") {
    auto data = td::training_rows(5 * 32, "/nonexistent");  // synthetic: this test needs no files
    auto run = [&](bool distributed) {
        auto m = td::build_mlp({784, 32, 10});
        graft::train::adam adam(0.01);
        std::string train;
        gd::distributed_optimizer opt(adam, {.bucket_bytes = 4096});
        train = distributed ? opt.minimize(m.mg, m.loss) : adam.minimize(m.mg, m.loss);
        auto init = graft::train::global_variables_initializer(m.mg, "init_all");  // Adam's slots too
        graft::exec::session s{m.mg.graph};
        s.run({}, {}, {init});
        gd::broadcast_variables(s);
        for (int step = 0; step < 5; ++step) {
            s.run({{"x:0", gd::local_rows(data.features.slice(step * 32, 32))}, {"y:0", gd::local_rows(data.labels.slice(step * 32, 32))}},
                  {}, {train});
        }
        std::vector<tensor> v;
        for (auto& n : m.vars) v.push_back(s.variable_value(n).clone());
        return v;
    };
    auto plain = run(false), dp = run(true);
    for (std::size_t k = 0; k < plain.size(); ++k) {
        CHECK(std::memcmp(plain[k].raw_data(), dp[k].raw_data(), plain[k].nbytes()) == 0);
    }
    CHECK(std::memcmp(plain[0].raw_data(), td::glorot(784, 32, 42).raw_data(), plain[0].nbytes()) != 0);
}

TEST_CASE("local_rows splits a global batch across ranks in rank order") {
    struct fake : gd::communicator {  // rank r of n; local_rows only asks rank() and size()
        int r, n;
        fake(int r_, int n_) : r(r_), n(n_) {}
        [[nodiscard]] int rank() const override { return r; }
        [[nodiscard]] int size() const override { return n; }
        [[nodiscard]] std::string backend() const override { return "fake"; }
        void barrier() override {}
        void allreduce_raw(void*, std::size_t, dtype, gd::reduce_op, std::string_view) override {}
        void broadcast_raw(void*, std::size_t, int, std::string_view) override {}
        void allgatherv_raw(const void*, const std::vector<std::size_t>&, void*, std::string_view) override {}
    };
    auto t = tensor::from_vector<std::int32_t>({7}, {0, 1, 2, 3, 4, 5, 6});
    auto a = gd::local_rows(t, fake(0, 3)), b = gd::local_rows(t, fake(1, 3)), c = gd::local_rows(t, fake(2, 3));
    CHECK(a.dim(0) + b.dim(0) + c.dim(0) == 7);
    CHECK(a.data<std::int32_t>()[0] == 0);
    CHECK(b.data<std::int32_t>()[0] == a.dim(0));
    CHECK(c.data<std::int32_t>()[c.dim(0) - 1] == 6);
    CHECK_THROWS_AS((void)gd::local_rows(tensor::scalar_of(1.0f), fake(0, 2)), graft::invalid_argument_error);
}

TEST_CASE("the fusion engine: a bucket waited for before it is full is an error, not a hang") {
    auto& e = gd::fusion_engine::instance();
    e.put("test-group", 0, 2, 0, gd::reduce_op::mean, tensor::from_vector<float>({2}, {1, 2}));
    try {
        (void)e.take("test-group", 0, 0);
        FAIL("taking from a half-full bucket must fail");
    } catch (const graft::graph_error& e2) {
        CHECK(std::string(e2.what()).find("1 of 2") != std::string::npos);
    }
    e.put("test-group", 0, 2, 1, gd::reduce_op::mean, tensor::from_vector<float>({1}, {5}));
    auto a = e.take("test-group", 0, 0), b = e.take("test-group", 0, 1);
    CHECK(a.shape() == graft::shape{2});
    CHECK(a.data<float>()[1] == 2.0f);
    CHECK(b.data<float>()[0] == 5.0f);
    CHECK_THROWS_AS(e.put("test-group", 1, 2, 2, gd::reduce_op::mean, tensor::from_vector<float>({1}, {5})), graft::invalid_argument_error);
}

#if defined(GRAFT_MPIEXEC) && defined(GRAFT_DIST_MPI_TEST)

TEST_CASE("a rank that never joins a collective: the watchdog names this rank and the tensor and ends the job") {
    // 2 ranks; rank 1 sleeps instead of joining rank 0's allreduce. With GRAFT_DIST_TIMEOUT=2 the
    // watchdog of rank 0 reports and aborts the job well before the test's 120 s guard.
    auto r = td::launch(std::string("GRAFT_TEST_STALL_RANK=1 GRAFT_DIST_TIMEOUT=2 OMPI_ALLOW_RUN_AS_ROOT=1 "
                                                 "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -s KILL 120 ") +
                                     GRAFT_MPIEXEC + " --oversubscribe -np 2 " + GRAFT_DIST_MPI_TEST + " --test-case='*stalls*'");
    REQUIRE(r.status != -1);  // the shell started
    MESSAGE("mpirun ended after ", r.secs, " s with status ", r.status, ":\n", r.out);
    CHECK(WIFEXITED(r.status));
    CHECK(WEXITSTATUS(r.status) != 0);
    CHECK(r.secs < 60);
    CHECK(r.out.find("rank 0 of 2: allreduce of tensor 'dense/kernel/grad' did not complete within 2 s") != std::string::npos);
    CHECK(r.out.find("must not complete") == std::string::npos);
}

TEST_CASE("a rank killed mid-step ends the job within a bounded time, naming the dead rank") {
    // 3 ranks train; rank 1 SIGKILLs itself at step 3. mpirun must end the survivors (no hang) and
    // report rank 1; the outer `timeout` is only the test's own guard.
    auto r = td::launch(std::string("GRAFT_TEST_KILL_RANK=1 GRAFT_DIST_TIMEOUT=60 OMPI_ALLOW_RUN_AS_ROOT=1 "
                                    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -s KILL 120 ") +
                        GRAFT_MPIEXEC + " --oversubscribe -np 3 " + GRAFT_DIST_MPI_TEST + " --test-case='*killed*'");
    REQUIRE(r.status != -1);  // the shell started
    const std::string& out = r.out;
    const int status = r.status;
    const double secs = r.secs;
    MESSAGE("mpirun ended after ", secs, " s with status ", status, ":\n", out);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) != 0);  // mpirun passes on the killed rank's status (128 + 9)
    CHECK(secs < 90);                 // mpirun ended the job itself, long before the 120 s guard
    CHECK(out.find("killing myself") != std::string::npos);
    CHECK(out.find("rank 1") != std::string::npos);
    CHECK(out.find("a million steps") == std::string::npos);
}
#endif
