// 05_duplicate_and_sync — an inference copy of a model on another device, fed from its trainer.
//
// 1. "Pre-train" a small classifier (4 features -> 16 -> 3 classes, generated data) and save it as TF
//    files (.meta + checkpoint).
// 2. In-process: duplicate its inference part onto /device:CPU:1 (a GPU once CUDA lands) and keep it
//    in sync with sync(): the serving copy stays on the weights it was given while training goes
//    on, and follows at the next sync — all variables at once, between two requests.
// 3. Across processes: this program starts itself again as a trainer process that saves a
//    checkpoint every few steps; here a checkpoint_watcher swaps each new checkpoint into the
//    serving copy between requests while they keep coming.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <thread>

#include "graft/graft.hpp"
#include "graft/surgery/sync.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/saver.hpp"
#include "graft/train/variables.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using graft::dtype;
using graft::tensor;
namespace train = graft::train;
namespace surgery = graft::surgery;

constexpr std::int64_t kN = 600, kF = 4, kH = 16, kC = 3;

/// Three Gaussian blobs in 4-d; labels 0..2.
std::pair<tensor, tensor> make_data(unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> noise(0.f, 0.6f);
    const float centers[kC][kF] = {{1, 1, 0, 0}, {-1, 0, 1, 0}, {0, -1, -1, 1}};
    tensor x(dtype::float32, {kN, kF}), y(dtype::int32, {kN});
    for (std::int64_t i = 0; i < kN; ++i) {
        const int c = static_cast<int>(i % kC);
        y.flat<std::int32_t>()(i) = c;
        for (std::int64_t j = 0; j < kF; ++j) x.matrix<float>()(i, j) = centers[c][j] + noise(rng);
    }
    return {x, y};
}

/// Glorot-uniform values, drawn here (the graph's initializer is then a Const).
tensor glorot(std::int64_t in, std::int64_t out, unsigned seed) {
    std::mt19937 rng(seed);
    const float lim = std::sqrt(6.f / static_cast<float>(in + out));
    std::uniform_real_distribution<float> u(-lim, lim);
    tensor t(dtype::float32, {in, out});
    for (std::int64_t i = 0; i < in * out; ++i) t.flat<float>()(i) = u(rng);
    return t;
}

struct classifier {
    graft::meta_graph mg;
    std::string train_op, init;
    classifier() {
        graft::graph_builder b(mg.graph);
        auto x = b.placeholder("x", dtype::float32, graft::shape{-1, kF});
        auto y = b.placeholder("labels", dtype::int32, graft::shape{-1});
        auto w1 = train::create_variable(mg, b, "hidden/kernel", glorot(kF, kH, 1));
        auto b1 = train::create_variable(mg, b, "hidden/bias", tensor(dtype::float32, {kH}));
        auto w2 = train::create_variable(mg, b, "out/kernel", glorot(kH, kC, 2));
        auto b2 = train::create_variable(mg, b, "out/bias", tensor(dtype::float32, {kC}));
        auto h = b.op("Relu", {b.op("BiasAdd", {b.op("MatMul", {x, w1.value}), b1.value})}, {}, "hidden/Relu");
        b.op("BiasAdd", {b.op("MatMul", {h, w2.value}), b2.value}, {}, "logits");
        auto xent = b.op_n("SparseSoftmaxCrossEntropyWithLogits", {graft::endpoint{"logits", 0}, y}, {}, "xent");
        auto loss = b.op("Mean", {xent[0], b.constant(tensor::from_vector<std::int32_t>({0}))}, {}, "loss");
        train_op = train::gradient_descent(0.2).minimize(mg, loss, train::var_list::trainable(), train::get_or_create_global_step(mg));
        init = train::global_variables_initializer(mg);
    }
};

double accuracy(const tensor& logits, const tensor& labels) {
    std::int64_t ok = 0;
    for (std::int64_t i = 0; i < logits.shape().dim(0); ++i) {
        std::int64_t best = 0;
        for (std::int64_t j = 1; j < kC; ++j) best = logits.matrix<float>()(i, j) > logits.matrix<float>()(i, best) ? j : best;
        ok += best == labels.flat<std::int32_t>()(i);
    }
    return static_cast<double>(ok) / static_cast<double>(logits.shape().dim(0));
}

/// The trainer process of part 3: restores the pre-trained model, trains on, saves every 20 steps.
int run_trainer(const std::string& pretrained, const std::string& dir) {
    auto [x, y] = make_data(7);
    classifier m;
    train::saver_options so;
    so.max_to_keep = 3;
    train::saver saver(m.mg, so);
    graft::exec::session s(m.mg.graph);
    s.run({}, {}, {m.init});
    saver.restore(s, pretrained);
    // Start over from a worse point so the served accuracy visibly climbs: scramble the output layer.
    s.variables().at("out/kernel")->assign(tensor::from_vector<float>({kH, kC}, std::vector<float>(kH * kC, 0.01f)));
    for (int step = 1; step <= 200; ++step) {
        s.run({{"x", x}, {"labels", y}}, {}, {m.train_op});
        if (step % 20 == 0) {
            saver.save(s, dir + "/model.ckpt", step);
            std::this_thread::sleep_for(std::chrono::milliseconds(30));
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 4 && std::string(argv[1]) == "--trainer") return run_trainer(argv[2], argv[3]);
    const fs::path dir = fs::temp_directory_path() / ("graft-example-05-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    auto [x, y] = make_data(7);
    auto [xt, yt] = make_data(8);

    // 1. The pre-trained model, saved as TF files.
    classifier m;
    train::saver_options so;
    so.max_to_keep = 1;
    train::saver saver(m.mg, so);
    graft::exec::session trainer(m.mg.graph);
    trainer.run({}, {}, {m.init});
    for (int i = 0; i < 30; ++i) trainer.run({{"x", x}, {"labels", y}}, {}, {m.train_op});
    const std::string pretrained = saver.save(trainer, (dir / "pretrained" / "model.ckpt").string());
    std::cout << "1. pre-trained classifier saved: " << pretrained << ".{meta,index,data-*}\n";

    // 2. The inference part on another device, synced in-process.
    graft::graph inf = surgery::inference_copy(m.mg.graph, {"logits"}, "/device:CPU:1");
    std::cout << "2. inference copy: " << inf.size() << " of " << m.mg.graph.size()
              << " nodes (no loss, gradients, optimizer or initializers), placed on /device:CPU:1\n";
    surgery::replica serving(std::move(inf));
    auto rep = surgery::sync(trainer, serving);
    auto served = [&] { return accuracy(serving.run({{"x", xt}}, {"logits:0"})[0], yt); };
    auto trained = [&] { return accuracy(trainer.run({{"x", xt}}, {"logits:0"})[0], yt); };
    std::cout << "   sync: " << rep.variables << " variables, " << rep.bytes << " bytes; test accuracy trainer "
              << trained() << ", serving copy " << served() << "\n";
    for (int i = 0; i < 200; ++i) trainer.run({{"x", x}, {"labels", y}}, {}, {m.train_op});
    std::cout << "   after 200 more training steps: trainer " << trained() << ", serving copy " << served()
              << " (still the synced weights)\n";
    surgery::sync(trainer, serving);
    std::cout << "   after sync: serving copy " << served() << "\n";
    if (served() != trained()) return 1;

    // 3. Across processes: a trainer process writes checkpoints, the watcher swaps them in.
    const fs::path live = dir / "live";
    fs::create_directories(live);
    surgery::replica serving2(surgery::inference_copy(m.mg.graph, {"logits"}, "/device:CPU:1"));
    surgery::sync(trainer, serving2);  // serve the current model until the first checkpoint arrives
    surgery::checkpoint_watcher watcher(serving2, live.string(), {std::chrono::milliseconds(5)});
    watcher.start();
    std::string self = fs::read_symlink("/proc/self/exe").string();
    std::string a1 = "--trainer", a2 = pretrained, a3 = live.string();
    char* args[] = {self.data(), a1.data(), a2.data(), a3.data(), nullptr};
    pid_t pid = 0;
    if (posix_spawn(&pid, self.c_str(), nullptr, nullptr, args, environ) != 0) return 1;
    std::cout << "3. trainer process " << pid << " saves into " << live.string() << "; serving requests meanwhile:\n";
    std::string shown;
    int requests = 0, status = 0;
    for (;;) {
        const bool finished = ::waitpid(pid, &status, WNOHANG) == pid;
        double acc = accuracy(serving2.run({{"x", xt}}, {"logits:0"})[0], yt);
        ++requests;
        if (serving2.version() != shown) {
            shown = serving2.version();
            std::cout << "   serving " << (shown == "sync" ? "the in-process sync" : fs::path(shown).filename().string())
                      << ": test accuracy " << acc << "\n";
        }
        if (finished) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    watcher.poll();
    watcher.stop();
    std::cout << "   " << requests << " requests served across " << serving2.installs() << " weight sets; last: "
              << fs::path(serving2.version()).filename().string() << "\n";
    fs::remove_all(dir);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
