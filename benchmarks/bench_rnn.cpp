// An LSTM layer, forward and training step (issue 24: goal <= 1.0x libtorch's time on the same
// thread count): x [100, 32, 128] time-major, 128 units, forget_bias 1, no peepholes, no cell clip.
//
//   graft    TF's fused BlockLSTM op (what tf.contrib.rnn.LSTMBlockFusedCell writes) run by
//            exec::session. Forward: weights as Const nodes, fetch h. Training step: weights as
//            variables, loss Sum(Square(h)) / batch, gradients by graft::autodiff (BlockLSTMGrad),
//            GradientDescent's ApplyGradientDescent ops: one session::run of the train op per step.
//   libtorch torch::nn::LSTM(128, 128) on the same input and weights (TF's gate blocks i, c, f, o
//            reordered to torch's i, f, g, o; the forget bias folded into bias_ih, bias_hh zero).
//            Forward under NoGradGuard; training step: forward, the same loss, backward,
//            torch::optim::SGD step.
//   oneDNN   lstm_forward / lstm_backward (benchmarks/onednn_peer.hpp: the library TensorFlow runs on
//            CPU) on the same weights (gates reordered to oneDNN's i, f, c, o, the forget bias folded
//            into the f gate's bias). Forward: forward_inference, weights reordered once. Training
//            step: forward_training, the same loss, backward, SGD as sum primitives; its cases run
//            apart (--benchmark_filter=onednn: its OpenMP runtime wants another wait policy).
//   OpenCV   DNN's TF importer reading graft's forward graph (BlockLSTM with Const weights) from a
//            frozen .pb written by graft::tf::write_graph, as an OpenCV user loads a TF model;
//            forward only (OpenCV DNN does not train).
//
// At setup every benchmark checks that graft and each peer compute the same thing: h of the
// forward pass and the gradients of the loss w.r.t. W and b (max abs diff < 1e-4 relative to the
// largest magnitude); a benchmark whose peers disagree stops with SkipWithError.
//
// Arguments are /threads; every benchmark sets graft's, torch's and OpenBLAS's thread counts to it
// (see bench_support.hpp). Counters: per_step (seconds per forward or training step).
//
//   bench_rnn --benchmark_filter='lstm_(forward|train)(_torch)?/'
//   bench_rnn --benchmark_filter=onednn
//   GRAFT_BENCH_STEP_STATS=1 bench_rnn --benchmark_filter='BM_lstm_train/'   # + each node's time per step
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "graft/autodiff/gradients.hpp"
#include "graft/core/threads.hpp"
#include "graft/exec/session.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/graph/build.hpp"
#include "graft/train/optimizer.hpp"

#ifdef GRAFT_HAVE_TORCH
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <torch/torch.h>
#pragma GCC diagnostic pop
#endif

#ifdef GRAFT_HAVE_OPENCV
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-enum-enum-conversion"  // OpenCV 4.6's headers under C++20
#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>
#pragma GCC diagnostic pop
#endif

#include "bench_support.hpp"

namespace {

using graft::bench::random_f32;
using graft::bench::set_threads;
using graft::dtype;
using graft::endpoint;
using graft::tensor;

constexpr std::int64_t steps = 100, batch = 32, input_size = 128, units = 128;
constexpr float forget_bias = 1.f;
constexpr float learning_rate = 0.001f;

/// The layer's values: w [I+H, 4H] (TF's gate blocks i, c, f, o), b [4H], x [T, B, I].
struct lstm_data {
    tensor w = random_f32({input_size + units, 4 * units}, 31, 1.f / std::sqrt(static_cast<float>(units)));
    tensor b = random_f32({4 * units}, 32, 0.1f);
    tensor x = random_f32({steps, batch, input_size}, 33, 1.f);
};

// ---------------------------------------------------------------- graft

/// BlockLSTM over x with weights w, b (Const or variable reads); returns h [T, B, H]. The node is
/// named "h": OpenCV's LSTM layer resolves a fetch by the layer's name as the name of one of its
/// outputs ("h" or "c"), so OpenCV can fetch it only under that name.
endpoint block_lstm(const graft::graph_builder& b, endpoint x, endpoint w, endpoint bias) {
    auto zeros_state = b.constant(tensor(dtype::float32, {batch, units}), "zero_state");
    auto zeros_peep = b.constant(tensor(dtype::float32, {units}), "zero_peephole");
    auto seq = b.constant(tensor::scalar_of<std::int64_t>(steps), "seq_len_max");
    auto outs = b.op_n("BlockLSTM", {seq, x, zeros_state, zeros_state, w, zeros_peep, zeros_peep, zeros_peep, bias},
                       {{"forget_bias", graft::attr_value(forget_bias)},
                        {"cell_clip", graft::attr_value(-1.f)},
                        {"use_peephole", graft::attr_value(false)}},
                       "h");
    return outs[6];
}

/// Sum(Square(h)) / batch.
endpoint loss_of(const graft::graph_builder& b, endpoint h) {
    auto sum = b.op("Sum", {b.op("Square", {h}), b.constant(tensor::from_vector<std::int32_t>({0, 1, 2}))});
    return b.op("Mul", {sum, b.scalar(1.f / static_cast<float>(batch))}, {}, "loss");
}

struct graft_forward {
    graft::graph g;
    std::unique_ptr<graft::exec::session> s;
    graft::exec::session::feed_list feeds;
    std::string h;

    explicit graft_forward(const lstm_data& d) {
        graft::graph_builder b(g);
        auto x = b.placeholder("x", dtype::float32);
        h = block_lstm(b, x, b.constant(d.w, "w"), b.constant(d.b, "b")).str();
        s = std::make_unique<graft::exec::session>(g);
        feeds = {{"x", d.x}};
    }
    tensor run() { return s->run(feeds, {h})[0]; }
};

struct graft_trainer {
    graft::meta_graph mg;
    std::unique_ptr<graft::exec::session> s;
    graft::exec::session::feed_list feeds;
    std::string train, w_grad, b_grad;

    explicit graft_trainer(const lstm_data& d) {
        graft::graph_builder b(mg.graph);
        auto x = b.placeholder("x", dtype::float32);
        auto sc = b.sub("lstm_cell");
        auto w = graft::train::create_variable(mg, sc, "kernel", d.w);
        auto bias = graft::train::create_variable(mg, sc, "bias", d.b);
        auto loss = loss_of(b, block_lstm(b, x, w.value, bias.value));
        graft::train::gradient_descent opt(learning_rate);
        auto gv = opt.compute_gradients(mg, loss);
        for (auto& p : gv) {
            if (!p.grad) continue;
            (p.var.name == w.name ? w_grad : b_grad) = p.grad->str();
        }
        train = opt.apply_gradients(mg, gv);
        auto init = graft::train::global_variables_initializer(mg);
        graft::exec::session_options o;
        o.collect_step_stats = std::getenv("GRAFT_BENCH_STEP_STATS") != nullptr;
        s = std::make_unique<graft::exec::session>(mg.graph, o);
        s->run({}, {}, {init});
        feeds = {{"x", d.x}};
    }
    /// d(loss)/dw and d(loss)/db at the current weights (no update).
    std::vector<tensor> grads() { return s->run(feeds, {w_grad, b_grad}); }
    void step() { s->run(feeds, {}, {train}); }
};

/// max |a - b| / max(1, max |b|) over graft's tensor a and a peer's b of the same size ("" when
/// they agree to 1e-4), else the reason.
[[maybe_unused]] std::string compare(const char* what, const tensor& a, const float* pb) {
    const float* pa = a.data<float>();
    double diff = 0, mag = 1;
    for (std::int64_t k = 0; k < a.num_elements(); ++k) {
        diff = std::max(diff, static_cast<double>(std::fabs(pa[k] - pb[k])));
        mag = std::max(mag, static_cast<double>(std::fabs(pb[k])));
    }
    if (!(diff / mag < 1e-4)) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s: graft and the peer differ by %.3g (largest magnitude %.3g)", what, diff, mag);
        return buf;
    }
    return {};
}

// ---------------------------------------------------------------- libtorch

#ifdef GRAFT_HAVE_TORCH

/// TF's [.., 4H] gate blocks i, c, f, o as torch's i, f, g, o along `dim`.
torch::Tensor tf_to_torch_gates(const torch::Tensor& t, std::int64_t dim) {
    const std::int64_t H = units;
    return torch::cat({t.narrow(dim, 0, H), t.narrow(dim, 2 * H, H), t.narrow(dim, H, H), t.narrow(dim, 3 * H, H)}, dim);
}

struct torch_lstm {
    torch::nn::LSTM lstm{torch::nn::LSTMOptions(input_size, units)};
    torch::Tensor x;
    std::unique_ptr<torch::optim::SGD> opt;

    explicit torch_lstm(const lstm_data& d) {
        torch::NoGradGuard no_grad;
        auto w = graft::bench::to_torch(d.w), b = graft::bench::to_torch(d.b);
        auto gates_b = tf_to_torch_gates(b, 0);
        gates_b.narrow(0, units, units).add_(forget_bias);
        lstm->named_parameters()["weight_ih_l0"].copy_(tf_to_torch_gates(w.narrow(0, 0, input_size), 1).t());
        lstm->named_parameters()["weight_hh_l0"].copy_(tf_to_torch_gates(w.narrow(0, input_size, units), 1).t());
        lstm->named_parameters()["bias_ih_l0"].copy_(gates_b);
        lstm->named_parameters()["bias_hh_l0"].zero_();
        x = graft::bench::to_torch(d.x);
        opt = std::make_unique<torch::optim::SGD>(lstm->parameters(), torch::optim::SGDOptions(learning_rate));
    }
    torch::Tensor forward() {
        torch::NoGradGuard no_grad;
        return std::get<0>(lstm->forward(x));
    }
    torch::Tensor loss() {
        auto h = std::get<0>(lstm->forward(x));
        return h.pow(2).sum() / static_cast<double>(batch);
    }
    /// The gradients of w and b in TF's layout, from one backward pass (no update).
    std::vector<torch::Tensor> grads() {
        opt->zero_grad();
        loss().backward();
        auto p = lstm->named_parameters();
        auto wx = p["weight_ih_l0"].grad().t(), wh = p["weight_hh_l0"].grad().t();
        // torch's i, f, g, o back to TF's i, c, f, o: the same swap of blocks 1 and 2
        auto w = tf_to_torch_gates(torch::cat({wx, wh}, 0), 1);
        auto b = tf_to_torch_gates(p["bias_ih_l0"].grad(), 0);  // bias_hh has the same gradient
        opt->zero_grad();
        return {w.contiguous(), b.contiguous()};
    }
    void step() {
        opt->zero_grad();
        loss().backward();
        opt->step();
    }
};

/// Empty when graft and libtorch agree on h and on the gradients of w and b, else why not.
const std::string& agreement() {
    static const std::string why = [] {
        const lstm_data d;
        torch_lstm t(d);
        std::string r = compare("h", graft_forward(d).run(), t.forward().contiguous().data_ptr<float>());
        if (!r.empty()) return r;
        auto gg = graft_trainer(d).grads();
        auto tg = t.grads();
        r = compare("dloss/dw", gg[0], tg[0].data_ptr<float>());
        return r.empty() ? compare("dloss/db", gg[1], tg[1].data_ptr<float>()) : r;
    }();
    return why;
}
#endif

// ---------------------------------------------------------------- OpenCV DNN

#ifdef GRAFT_HAVE_OPENCV
/// graft_forward's graph read by OpenCV's TF importer from a .pb; run() gives h [T, B, H].
struct opencv_lstm {
    cv::dnn::Net net;
    cv::Mat blob;
    cv::Mat out;

    explicit opencv_lstm(const lstm_data& d) {
        // OpenCV 4.6's importer moves the kernel's gate blocks from TF's i, c, f, o to its own i, f,
        // o, c but takes the bias as it is: its .pb gets the bias blocks in OpenCV's order, so it
        // computes TF's function (without this, h was 0.375 off graft's, libtorch's and oneDNN's).
        lstm_data od = d;
        od.b = tensor(dtype::float32, {4 * units});
        for (std::int64_t k = 0; k < 4; ++k) {
            const std::int64_t tf_block = k == 1 ? 2 : k == 2 ? 3 : k == 3 ? 1 : 0;  // OpenCV's i, f, o, c
            std::copy_n(d.b.data<float>() + tf_block * units, units, od.b.data<float>() + k * units);
        }
        const graft_forward f(od);
        const auto pb = std::filesystem::temp_directory_path() / ("graft_bench_lstm_" + std::to_string(::getpid()) + ".pb");
        graft::tf::write_graph(f.g, pb.string());
        net = cv::dnn::readNetFromTensorflow(pb.string());
        std::filesystem::remove(pb);
        net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
        net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
        const int dims[] = {static_cast<int>(steps), static_cast<int>(batch), static_cast<int>(input_size)};
        blob = cv::Mat(3, dims, CV_32F);
        std::copy_n(d.x.data<float>(), d.x.num_elements(), blob.ptr<float>());
    }
    const cv::Mat& run() {
        net.setInput(blob, "x");
        out = net.forward("h");  // see block_lstm
        return out;
    }
};

/// Empty when OpenCV's h agrees with graft's, else why not.
const std::string& opencv_agreement() {
    static const std::string why = []() -> std::string {
        try {
            const lstm_data d;
            opencv_lstm o(d);
            const cv::Mat h = o.run();
            if (static_cast<std::int64_t>(h.total()) != steps * batch * units)
                return "OpenCV's h has " + std::to_string(h.total()) + " values, graft's " + std::to_string(steps * batch * units);
            return compare("OpenCV h", graft_forward(d).run(), h.ptr<float>());
        } catch (const std::exception& e) {
            return e.what();
        }
    }();
    return why;
}
#endif

// ---------------------------------------------------------------- oneDNN

#ifdef GRAFT_HAVE_ONEDNN
namespace od = graft::bench::onednn;

od::lstm_params onednn_params(const lstm_data& d) {
    return {steps, batch, input_size, units, d.w.data<float>(), d.b.data<float>(), forget_bias};
}

/// Empty when oneDNN agrees with graft on h and on the gradients of w and b, else why not.
const std::string& onednn_agreement() {
    static const std::string why = []() -> std::string {
        try {
            const lstm_data d;
            od::lstm f(onednn_params(d));
            std::string r = compare("oneDNN h", graft_forward(d).run(), f.run(d.x.data<float>()));
            if (!r.empty()) return r;
            od::lstm_trainer t(onednn_params(d), learning_rate);
            auto [dw, db] = t.gradients(d.x.data<float>());
            auto gg = graft_trainer(d).grads();
            r = compare("oneDNN dloss/dw", gg[0], dw.data());
            return r.empty() ? compare("oneDNN dloss/db", gg[1], db.data()) : r;
        } catch (const std::exception& e) {
            return e.what();
        }
    }();
    return why;
}
#endif

// ---------------------------------------------------------------- cases

void report(benchmark::State& st) {
    st.counters["per_step"] =
        benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    st.SetItemsProcessed(st.iterations() * batch);
}

/// Checks agreement with libtorch (when linked); false (and the state skipped) when they differ.
bool agrees(benchmark::State& st) {
#ifdef GRAFT_HAVE_TORCH
    if (!agreement().empty()) {
        st.SkipWithError(agreement().c_str());
        return false;
    }
#else
    (void)st;
#endif
    return true;
}

void BM_lstm_forward(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(0)));
    if (!agrees(st)) return;
    const lstm_data d;
    graft_forward f(d);
    f.run();  // compile the plan, warm the caches
    for (auto _ : st) benchmark::DoNotOptimize(f.run());
    report(st);
}

void BM_lstm_train(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(0)));
    if (!agrees(st)) return;
    const lstm_data d;
    graft_trainer t(d);
    t.step();
    t.s->state().clear_step_stats();
    for (auto _ : st) t.step();
    graft::bench::print_step_stats(*t.s, "lstm train threads " + std::to_string(st.range(0)),
                                   static_cast<std::int64_t>(st.iterations()));
    report(st);
}

#ifdef GRAFT_HAVE_TORCH
void BM_lstm_forward_torch(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(0)));
    if (!agrees(st)) return;
    const lstm_data d;
    torch_lstm t(d);
    t.forward();
    for (auto _ : st) benchmark::DoNotOptimize(t.forward());
    report(st);
}

void BM_lstm_train_torch(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(0)));
    if (!agrees(st)) return;
    const lstm_data d;
    torch_lstm t(d);
    t.step();
    for (auto _ : st) t.step();
    report(st);
}
#endif

#ifdef GRAFT_HAVE_OPENCV
void BM_lstm_forward_opencv(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(0)));
    if (!opencv_agreement().empty()) {
        st.SkipWithError(opencv_agreement().c_str());
        return;
    }
    const lstm_data d;
    opencv_lstm o(d);
    o.run();
    for (auto _ : st) benchmark::DoNotOptimize(o.run().data);
    report(st);
}
#endif

#ifdef GRAFT_HAVE_ONEDNN
/// oneDNN's primitives fix their thread partition when built: each case builds its own.
bool onednn_agrees(benchmark::State& st) {
    const std::string& why = onednn_agreement();
    if (!why.empty()) st.SkipWithError(why.c_str());
    return why.empty();
}

void BM_lstm_forward_onednn(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(0)));
    if (!onednn_agrees(st)) return;
    const lstm_data d;
    try {
        od::lstm f(onednn_params(d));
        f.run(d.x.data<float>());
        for (auto _ : st) benchmark::DoNotOptimize(f.run(d.x.data<float>()));
        st.SetLabel(f.impl());
    } catch (const std::exception& e) {
        st.SkipWithError(e.what());
        return;
    }
    report(st);
}

void BM_lstm_train_onednn(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(0)));
    if (!onednn_agrees(st)) return;
    const lstm_data d;
    try {
        od::lstm_trainer t(onednn_params(d), learning_rate);
        t.step(d.x.data<float>());
        for (auto _ : st) t.step(d.x.data<float>());
        st.SetLabel(t.impl());
    } catch (const std::exception& e) {
        st.SkipWithError(e.what());
        return;
    }
    report(st);
}
#endif

void args(benchmark::internal::Benchmark* b) {
    b->ArgNames({"threads"});
    for (int threads : {1, 2}) b->Arg(threads);
    b->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
}
BENCHMARK(BM_lstm_forward)->Apply(args);
#ifdef GRAFT_HAVE_TORCH
BENCHMARK(BM_lstm_forward_torch)->Apply(args);
#endif
BENCHMARK(BM_lstm_train)->Apply(args);
#ifdef GRAFT_HAVE_TORCH
BENCHMARK(BM_lstm_train_torch)->Apply(args);
#endif
#ifdef GRAFT_HAVE_OPENCV
BENCHMARK(BM_lstm_forward_opencv)->Apply(args);
#endif
#ifdef GRAFT_HAVE_ONEDNN
BENCHMARK(BM_lstm_forward_onednn)->Apply(args);
BENCHMARK(BM_lstm_train_onednn)->Apply(args);
#endif

}  // namespace

// The peers' environment (OMP_WAIT_POLICY, malloc thresholds): see graft::bench::reexec_for_peers.
int main(int argc, char** argv) { return graft::bench::peer_benchmark_main(argc, argv, "bench_rnn"); }
