// Data-parallel scaling on this machine (graft::dist over MPI): training throughput of the MLP
// 784-512-512-10 and LeNet-5 with 1 rank x 2 threads vs 2 ranks x 1 thread at the same global batch,
// and the allreduce's time against the ring bound 2(N-1)/N x bytes / memory bandwidth, with the
// bandwidth measured in the same run (a STREAM-style copy).
//
//   build/benchmarks/bench_dist                 # driver: launches the mpirun configurations, prints the tables
//   mpirun -np 2 bench_dist --worker train      # one configuration by hand
//
// Needs graft::mpi (GRAFT_MPI) and mpirun on PATH (Debian: openmpi-bin). As root, Open MPI needs
// OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 (the driver sets them for its children).
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "graft/core/threads.hpp"
#include "graft/dist/data_parallel.hpp"
#include "graft/dist/fusion.hpp"
#include "graft/dist/mpi.hpp"
#include "graft/exec/session.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/variables.hpp"

namespace {

using graft::dtype;
using graft::endpoint;
using graft::tensor;
namespace gd = graft::dist;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) { return std::chrono::duration<double>(clock_type::now() - t0).count(); }

tensor random_f32(const graft::shape& s, std::uint32_t seed, float scale) {
    tensor t(dtype::float32, s);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-scale, scale);
    for (std::int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = u(rng);
    return t;
}

// ------------------------------------------------------------------ the models (as bench_train)

struct trainer {
    graft::meta_graph mg;
    std::unique_ptr<graft::exec::session> s;
    std::string train;
    std::size_t gradient_bytes = 0;
    std::size_t buckets = 0;
};

std::unique_ptr<trainer> make_trainer(const std::string& model, std::size_t bucket_bytes) {
    auto t = std::make_unique<trainer>();
    graft::graph_builder b(t->mg.graph);
    auto x = b.placeholder("x", dtype::float32);
    auto y = b.placeholder("y", dtype::float32);
    auto var = [&](const graft::graph_builder& scope, const char* name, tensor init) {
        t->gradient_bytes += init.nbytes();
        return graft::train::create_variable(t->mg, scope, name, init);
    };
    auto dense = [&](endpoint h, const std::string& name, std::int64_t in, std::int64_t out, bool relu, std::uint32_t seed) {
        auto sc = b.sub(name);
        auto w = var(sc, "kernel", random_f32({in, out}, seed, std::sqrt(6.f / float(in + out))));
        auto bias = var(sc, "bias", random_f32({out}, seed + 100, 0.01f));
        auto z = b.op("BiasAdd", {b.op("MatMul", {h, w.value}), bias.value});
        return relu ? b.op("Relu", {z}) : z;
    };
    endpoint logits;
    if (model == "mlp") {
        logits = dense(dense(dense(x, "dense", 784, 512, true, 11), "dense_1", 512, 512, true, 12), "dense_2", 512, 10, false, 13);
    } else {
        auto conv = [&](endpoint h, const std::string& name, std::int64_t c, std::int64_t oc, const char* padding, std::uint32_t seed) {
            auto sc = b.sub(name);
            auto w = var(sc, "kernel", random_f32({5, 5, c, oc}, seed, std::sqrt(6.f / float(25 * (c + oc)))));
            auto bias = var(sc, "bias", random_f32({oc}, seed + 100, 0.01f));
            auto cv = b.op("Conv2D", {h, w.value}, {{"strides", graft::attr_value::list_of(std::vector<std::int64_t>{1, 1, 1, 1})},
                                                    {"padding", padding}});
            auto r = b.op("Relu", {b.op("BiasAdd", {cv, bias.value})});
            auto k2 = graft::attr_value::list_of(std::vector<std::int64_t>{1, 2, 2, 1});
            return b.op("MaxPool", {r}, {{"ksize", k2}, {"strides", k2}, {"padding", "VALID"}});
        };
        auto h = conv(conv(x, "conv1", 1, 6, "SAME", 21), "conv2", 6, 16, "VALID", 22);
        h = b.op("Reshape", {h, b.constant(tensor::from_vector<std::int32_t>({-1, 400}))});
        logits = dense(dense(dense(h, "fc1", 400, 120, true, 23), "fc2", 120, 84, true, 24), "fc3", 84, 10, false, 25);
    }
    auto xent = b.op_n("SoftmaxCrossEntropyWithLogits", {logits, y});
    auto loss = b.op("Mean", {xent[0], b.constant(tensor::from_vector<std::int32_t>({0}))}, {}, "loss");
    graft::train::gradient_descent sgd(0.01);
    gd::distributed_optimizer opt(sgd, {.bucket_bytes = bucket_bytes});
    t->train = opt.minimize(t->mg, loss);
    t->buckets = opt.plan().buckets.size();
    auto init = graft::train::global_variables_initializer(t->mg);
    t->s = std::make_unique<graft::exec::session>(t->mg.graph);
    t->s->run({}, {}, {init});
    gd::broadcast_variables(*t->s);
    return t;
}

/// Worker: examples/s of data-parallel training at global batch `batch` (rank 0 prints RESULT lines).
void worker_train(gd::communicator& comm) {
    const std::int64_t batch = 128;
    for (std::string model : {"mlp", "lenet"}) {
        auto t = make_trainer(model, std::size_t{4} << 20);
        const graft::shape xs = model == "mlp" ? graft::shape{batch, 784} : graft::shape{batch, 28, 28, 1};
        tensor x = random_f32(xs, 1, 1.0f);
        tensor y(dtype::float32, graft::shape{batch, 10});
        for (std::int64_t i = 0; i < batch; ++i) y.data<float>()[i * 10 + i % 10] = 1.0f;
        graft::exec::session::feed_list feeds{{"x", gd::local_rows(x)}, {"y", gd::local_rows(y)}};
        for (int i = 0; i < 3; ++i) t->s->run(feeds, {}, {t->train});
        // Time whole rounds until ~3 s passed (every rank runs the same count: rank 0 decides).
        const int steps = model == "mlp" ? 60 : 40;
        std::vector<double> rounds;
        for (int round = 0; round < 3; ++round) {
            comm.barrier();
            auto t0 = clock_type::now();
            for (int i = 0; i < steps; ++i) t->s->run(feeds, {}, {t->train});
            comm.barrier();
            rounds.push_back(seconds_since(t0));
        }
        std::sort(rounds.begin(), rounds.end());
        const double secs = rounds[1];  // median round
        if (comm.rank() == 0) {
            std::printf("RESULT train model=%s ranks=%d threads=%d steps=%d seconds=%.6f examples_per_s=%.1f step_ms=%.3f "
                        "gradient_bytes=%zu buckets=%zu\n",
                        model.c_str(), comm.size(), graft::num_threads(), steps, secs, double(steps * batch) / secs,
                        1e3 * secs / steps, t->gradient_bytes, t->buckets);
            std::fflush(stdout);
        }
    }
}

/// Worker: median time of an allreduce (sum, float32) of each size.
void worker_allreduce(gd::communicator& comm) {
    for (std::size_t bytes : {std::size_t{64} << 10, std::size_t{1} << 20, std::size_t{2681896}, std::size_t{16} << 20,
                              std::size_t{64} << 20}) {
        tensor t = random_f32({static_cast<std::int64_t>(bytes / 4)}, 3, 1.0f);
        comm.allreduce(t, gd::reduce_op::sum, "warmup");
        const int reps = bytes <= (std::size_t{1} << 20) ? 200 : bytes <= (std::size_t{16} << 20) ? 30 : 10;
        std::vector<double> times;
        for (int i = 0; i < reps; ++i) {
            comm.barrier();
            auto t0 = clock_type::now();
            comm.allreduce_raw(t.raw_data(), static_cast<std::size_t>(t.num_elements()), dtype::float32, gd::reduce_op::sum, "bench");
            times.push_back(seconds_since(t0));
        }
        // The slowest rank's median is the collective's time.
        std::sort(times.begin(), times.end());
        auto med = tensor::scalar_of(times[times.size() / 2]);
        comm.allreduce(med, gd::reduce_op::max, "median");
        if (comm.rank() == 0) {
            std::printf("RESULT allreduce ranks=%d bytes=%zu seconds=%.9f\n", comm.size(), bytes, *med.data<double>());
            std::fflush(stdout);
        }
    }
}

// ------------------------------------------------------------------ driver

/// Copy bandwidth (bytes read + bytes written per second) of one thread over 256 MiB: the memory
/// system's rate for the kind of traffic a shared-memory allreduce makes.
double copy_bandwidth() {
    const std::size_t n = std::size_t{256} << 20;
    std::vector<char> a(n, 1), b(n, 2);
    double best = 1e30;
    for (int i = 0; i < 5; ++i) {
        auto t0 = clock_type::now();
        std::memcpy(b.data(), a.data(), n);
        best = std::min(best, seconds_since(t0));
        std::swap(a, b);
    }
    return 2.0 * double(n) / best;
}

std::string run_capture(const std::string& cmd) {
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return out;
    std::array<char, 4096> buf{};
    while (std::fgets(buf.data(), int(buf.size()), p)) out += buf.data();
    const int rc = ::pclose(p);
    if (rc != 0) std::fprintf(stderr, "bench_dist: `%s` exited with %d:\n%s\n", cmd.c_str(), rc, out.c_str());
    return out;
}

std::map<std::string, std::string> fields(const std::string& line) {
    std::map<std::string, std::string> f;
    std::size_t at = 0;
    while (at < line.size()) {
        auto sp = line.find(' ', at);
        if (sp == std::string::npos) sp = line.size();
        auto tok = line.substr(at, sp - at);
        if (auto eq = tok.find('='); eq != std::string::npos) f[tok.substr(0, eq)] = tok.substr(eq + 1);
        at = sp + 1;
    }
    return f;
}

std::vector<std::map<std::string, std::string>> results(const std::string& out, const std::string& kind) {
    std::vector<std::map<std::string, std::string>> r;
    std::size_t at = 0;
    while ((at = out.find("RESULT " + kind + " ", at)) != std::string::npos) {
        auto end = out.find('\n', at);
        r.push_back(fields(out.substr(at, end - at)));
        at = end;
    }
    return r;
}

std::string cpu_model() {
    FILE* f = std::fopen("/proc/cpuinfo", "r");
    if (!f) return "?";
    char line[512];
    std::string m = "?";
    while (std::fgets(line, sizeof line, f)) {
        if (std::strncmp(line, "model name", 10) == 0) {
            m = std::strchr(line, ':') + 2;
            m.erase(m.find_last_not_of("\n ") + 1);
            break;
        }
    }
    std::fclose(f);
    return m;
}

int driver(const char* self) {
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    const std::string mpirun = GRAFT_MPIEXEC;
    std::printf("bench_dist: %s, %u hardware threads, Open MPI over shared memory\n", cpu_model().c_str(),
                std::thread::hardware_concurrency());
    const double bw = copy_bandwidth();
    std::printf("memory copy bandwidth (1 thread, read+write): %.2f GB/s\n\n", bw / 1e9);

    // Training: 1 rank x 2 threads vs 2 ranks x 1 thread at the same global batch.
    auto one = results(run_capture(mpirun + " --oversubscribe -np 1 -x GRAFT_NUM_THREADS=2 " + self + " --worker train 2>&1"), "train");
    auto two = results(run_capture(mpirun + " --oversubscribe -np 2 --bind-to none -x GRAFT_NUM_THREADS=1 " + self + " --worker train 2>&1"),
                       "train");
    std::printf("| model | global batch | 1 rank x 2 threads ex/s | 2 ranks x 1 thread ex/s | ratio (goal >= 0.9) | gradient bytes | buckets |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    for (std::size_t i = 0; i < one.size() && i < two.size(); ++i) {
        const double a = std::stod(one[i]["examples_per_s"]), b = std::stod(two[i]["examples_per_s"]);
        std::printf("| %s | 128 | %.0f (%.2f ms/step) | %.0f (%.2f ms/step) | %.2f | %s | %s |\n", one[i]["model"].c_str(), a,
                    std::stod(one[i]["step_ms"]), b, std::stod(two[i]["step_ms"]), b / a, one[i]["gradient_bytes"].c_str(),
                    two[i]["buckets"].c_str());
    }
    std::printf("\n| ranks | bytes | allreduce ms | ring bound 2(N-1)/N x bytes / BW ms | bound / time |\n|---|---|---|---|---|\n");
    for (int np : {2, 3}) {
        auto ar = results(run_capture(mpirun + " --oversubscribe -np " + std::to_string(np) + " --bind-to none " + self +
                                      " --worker allreduce 2>&1"),
                          "allreduce");
        for (auto& r : ar) {
            const double bytes = std::stod(r["bytes"]), secs = std::stod(r["seconds"]);
            const double bound = 2.0 * (np - 1) / np * bytes / bw;
            std::printf("| %d | %.0f | %.3f | %.3f | %.2f |\n", np, bytes, secs * 1e3, bound * 1e3, bound / secs);
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const bool worker = argc >= 3 && std::strcmp(argv[1], "--worker") == 0;
    if (!worker) return driver(argv[0]);
    auto mpi = gd::init_mpi(&argc, &argv);
    auto& comm = *mpi->comm();
    try {
        if (std::strcmp(argv[2], "train") == 0) worker_train(comm);
        else worker_allreduce(comm);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", comm.rank(), e.what());
        return 1;
    }
    return 0;
}
