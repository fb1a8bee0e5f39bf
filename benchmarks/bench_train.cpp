// Training step (forward + backward + SGD update) of MLP 784-512-512-10 and LeNet-5 at a given
// batch: graft (graph built with graft_builder, gradients by graft::autodiff, update by
// GradientDescent's ApplyGradientDescent ops, one session::run per step) against libtorch (autograd
// + in-place SGD) and oneDNN (benchmarks/onednn_peer.hpp: forward_training, backward_data/weights and
// pooling/ReLU backward primitives, the loss gradient and SGD as TF computes them around oneDNN; its
// cases run apart: --benchmark_filter=onednn) with the same thread count, same initial weights and
// the same data. The first step's loss of each peer is checked against graft's (1e-4). Eigen's own
// GEMM on the MLP's first-layer product gives the machine's matrix-product rate for reference, and
// the MLP step's eight matrix products alone (BM_mlp_train_products, graft's ops::matmul, and
// BM_mlp_train_products_torch, libtorch's torch::mm on OpenBLAS) the time a step stands on: what it
// would take if the bias, ReLU, loss, the updates and the executor were free.
//
//   bench_train --benchmark_filter='mlp_train|lenet_train'      # BM_mlp_train/128, BM_mlp_train_torch/128, ...
//   GRAFT_BENCH_STEP_STATS=1 bench_train --benchmark_filter='BM_mlp_train/'   # + each node's time per step
//
// Counters: per_step (time of one step), GFLOPs (model FLOPs of a training step, counted as 3x
// the forward pass's multiply-adds x 2, the usual convention, divided by the step time).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "graft/autodiff/gradients.hpp"
#include "graft/core/threads.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "graft/ops/matmul.hpp"
#include "graft/ops/random.hpp"
#include "graft/train/optimizer.hpp"

#ifdef GRAFT_HAVE_TORCH
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <torch/torch.h>
#pragma GCC diagnostic pop
#endif

#include "bench_support.hpp"

namespace {

using graft::bench::random_f32;
using graft::bench::set_threads;
#ifdef GRAFT_HAVE_TORCH
using graft::bench::to_torch;
#endif
using graft::dtype;
using graft::endpoint;
using graft::tensor;

enum class model_kind { mlp, lenet };
constexpr float learning_rate = 0.01f;



/// The layers' initial values: dense [in,out] + [out]; conv HWIO + [out].
struct layer {
    std::string name;
    tensor w, b;
};
layer dense(std::string name, std::int64_t in, std::int64_t out, std::uint32_t seed) {
    return {std::move(name), random_f32({in, out}, seed, std::sqrt(6.f / static_cast<float>(in + out))),
            random_f32({out}, seed + 100, 0.01f)};
}
layer conv(std::string name, std::int64_t k, std::int64_t c, std::int64_t oc, std::uint32_t seed) {
    return {std::move(name), random_f32({k, k, c, oc}, seed, std::sqrt(6.f / static_cast<float>(k * k * (c + oc)))),
            random_f32({oc}, seed + 100, 0.01f)};
}
std::vector<layer> layers_of(model_kind k) {
    if (k == model_kind::mlp) return {dense("dense", 784, 512, 11), dense("dense_1", 512, 512, 12), dense("dense_2", 512, 10, 13)};
    return {conv("conv1", 5, 1, 6, 21), conv("conv2", 5, 6, 16, 22), dense("fc1", 400, 120, 23), dense("fc2", 120, 84, 24),
            dense("fc3", 84, 10, 25)};
}

/// Multiply-adds of one forward pass per example.
double forward_macs(model_kind k) {
    if (k == model_kind::mlp) return 784.0 * 512 + 512.0 * 512 + 512.0 * 10;
    return 28.0 * 28 * 25 * 6 + 10.0 * 10 * 25 * 6 * 16 + 400.0 * 120 + 120.0 * 84 + 84.0 * 10;
}

// ---------------------------------------------------------------- graft

struct graft_trainer {
    graft::meta_graph mg;
    std::unique_ptr<graft::exec::session> s;
    graft::exec::session::feed_list feeds;
    std::string train;
    float initial_loss = 0;  // the loss at the initial weights

    graft_trainer(model_kind k, const std::vector<layer>& ls, const tensor& x, const tensor& y) {
        graft::graph_builder b(mg.graph);
        auto in = b.placeholder("x", dtype::float32);
        auto labels = b.placeholder("y", dtype::float32);
        std::vector<graft::train::variable> w, bias;
        for (auto& l : ls) {
            auto sc = b.sub(l.name);
            w.push_back(graft::train::create_variable(mg, sc, "kernel", l.w));
            bias.push_back(graft::train::create_variable(mg, sc, "bias", l.b));
        }
        auto dense_at = [&](endpoint h, std::size_t i, bool relu) {
            auto sc = b.at_scope(ls[i].name);
            auto z = sc.op("BiasAdd", {sc.op("MatMul", {h, w[i].value}), bias[i].value});
            return relu ? sc.op("Relu", {z}) : z;
        };
        endpoint logits;
        if (k == model_kind::mlp) {
            logits = dense_at(dense_at(dense_at(in, 0, true), 1, true), 2, false);
        } else {
            auto conv_at = [&](endpoint h, std::size_t i, const char* padding) {
                auto sc = b.at_scope(ls[i].name);
                auto c = sc.op("Conv2D", {h, w[i].value}, {{"strides", graft::attr_value::list_of(std::vector<std::int64_t>{1, 1, 1, 1})},
                                                          {"padding", padding}});
                auto r = sc.op("Relu", {sc.op("BiasAdd", {c, bias[i].value})});
                auto k2 = graft::attr_value::list_of(std::vector<std::int64_t>{1, 2, 2, 1});
                return sc.op("MaxPool", {r}, {{"ksize", k2}, {"strides", k2}, {"padding", "VALID"}});
            };
            auto h = conv_at(conv_at(in, 0, "SAME"), 1, "VALID");
            h = b.op("Reshape", {h, b.constant(tensor::from_vector<std::int32_t>({-1, 400}))});
            logits = dense_at(dense_at(dense_at(h, 2, true), 3, true), 4, false);
        }
        auto xent = b.op_n("SoftmaxCrossEntropyWithLogits", {logits, labels});
        auto loss = b.op("Mean", {xent[0], b.constant(tensor::from_vector<std::int32_t>({0}))}, {}, "loss");
        graft::train::gradient_descent opt(learning_rate);
        train = opt.minimize(mg, loss);
        auto init = graft::train::global_variables_initializer(mg);
        graft::exec::session_options o;
        o.collect_step_stats = std::getenv("GRAFT_BENCH_STEP_STATS") != nullptr;
        s = std::make_unique<graft::exec::session>(mg.graph, o);
        s->run({}, {}, {init});
        feeds = {{"x", x}, {"y", y}};
        initial_loss = s->run(feeds, {"loss:0"}).at(0).data<float>()[0];
        s->run(feeds, {}, {train});  // compile the plan, warm the caches
        s->state().clear_step_stats();
    }
    void step() { s->run(feeds, {}, {train}); }
};

// ---------------------------------------------------------------- libtorch

#ifdef GRAFT_HAVE_TORCH

struct torch_trainer {
    model_kind kind;
    std::vector<torch::Tensor> w, b;
    torch::Tensor x, target;

    torch_trainer(model_kind k, const std::vector<layer>& ls, const tensor& xs, const tensor& ys) : kind(k) {
        for (std::size_t i = 0; i < ls.size(); ++i) {
            auto w_ = to_torch(ls[i].w);
            if (w_.dim() == 4) w_ = w_.permute({3, 2, 0, 1}).contiguous();  // HWIO -> OIHW
            w.push_back(w_.requires_grad_());
            b.push_back(to_torch(ls[i].b).requires_grad_());
        }
        x = to_torch(xs);
        if (k == model_kind::lenet) x = x.permute({0, 3, 1, 2}).contiguous();  // NHWC -> NCHW
        target = to_torch(ys).argmax(1);
    }
    void step() {
        torch::Tensor h;
        if (kind == model_kind::mlp) {
            h = torch::addmm(b[0], x, w[0]).relu();
            h = torch::addmm(b[1], h, w[1]).relu();
            h = torch::addmm(b[2], h, w[2]);
        } else {
            h = torch::max_pool2d(torch::conv2d(x, w[0], b[0], 1, 2).relu(), 2, 2);
            h = torch::max_pool2d(torch::conv2d(h, w[1], b[1]).relu(), 2, 2);
            h = torch::addmm(b[2], h.reshape({h.size(0), 400}), w[2]).relu();
            h = torch::addmm(b[3], h, w[3]).relu();
            h = torch::addmm(b[4], h, w[4]);
        }
        auto loss = torch::nn::functional::cross_entropy(h, target);
        loss.backward();
        torch::NoGradGuard no_grad;
        for (auto* ps : {&w, &b}) {
            for (auto& p : *ps) {
                p.sub_(p.grad(), learning_rate);
                p.mutable_grad().zero_();
            }
        }
    }
};
#endif

// ---------------------------------------------------------------- cases

struct data {
    tensor x, y;
};
data make_data(model_kind k, std::int64_t batch) {
    data d;
    d.x = k == model_kind::mlp ? random_f32({batch, 784}, 7, 1.f) : random_f32({batch, 28, 28, 1}, 7, 1.f);
    d.y = tensor(dtype::float32, {batch, 10});
    for (std::int64_t i = 0; i < batch; ++i) d.y.data<float>()[i * 10 + (i * 7) % 10] = 1.f;
    return d;
}

void report(benchmark::State& st, model_kind k, std::int64_t batch) {
    st.SetItemsProcessed(st.iterations() * batch);
    st.counters["per_step"] = benchmark::Counter(static_cast<double>(st.iterations()),
                                                 benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    st.counters["GFLOPs"] = benchmark::Counter(3.0 * 2.0 * forward_macs(k) * static_cast<double>(batch) *
                                                   static_cast<double>(st.iterations()) * 1e-9,
                                               benchmark::Counter::kIsRate);
}

void run_graft(benchmark::State& st, model_kind k) {
    auto batch = st.range(0);
    set_threads(static_cast<int>(st.range(1)));
    auto d = make_data(k, batch);
    graft_trainer t(k, layers_of(k), d.x, d.y);
    for (auto _ : st) t.step();
    graft::bench::print_step_stats(*t.s, std::string(k == model_kind::mlp ? "mlp" : "lenet") + " batch " + std::to_string(batch) +
                                             " threads " + std::to_string(st.range(1)),
                                   static_cast<std::int64_t>(st.iterations()));
    report(st, k, batch);
}
void BM_mlp_train(benchmark::State& st) { run_graft(st, model_kind::mlp); }
void BM_lenet_train(benchmark::State& st) { run_graft(st, model_kind::lenet); }

#ifdef GRAFT_HAVE_TORCH
void run_torch(benchmark::State& st, model_kind k) {
    auto batch = st.range(0);
    set_threads(static_cast<int>(st.range(1)));
    auto d = make_data(k, batch);
    torch_trainer t(k, layers_of(k), d.x, d.y);
    t.step();
    for (auto _ : st) t.step();
    report(st, k, batch);
}
void BM_mlp_train_torch(benchmark::State& st) { run_torch(st, model_kind::mlp); }
void BM_lenet_train_torch(benchmark::State& st) { run_torch(st, model_kind::lenet); }
#endif

#ifdef GRAFT_HAVE_ONEDNN
void run_onednn(benchmark::State& st, model_kind k) {
    namespace od = graft::bench::onednn;
    auto batch = st.range(0);
    set_threads(static_cast<int>(st.range(1)));
    auto d = make_data(k, batch);
    const auto ls = layers_of(k);
    std::vector<od::layer_params> params;
    for (const layer& l : ls)
        params.push_back({l.w.data<float>(), std::vector<std::int64_t>(l.w.shape().dims().begin(), l.w.shape().dims().end()),
                          l.b.data<float>()});
    const float expect = graft_trainer(k, ls, d.x, d.y).initial_loss;  // graft's loss at the same weights
    try {
        od::trainer t(k == model_kind::mlp ? od::model_kind::mlp : od::model_kind::lenet, params, batch, learning_rate);
        t.step(d.x.data<float>(), d.y.data<float>());
        if (!(std::abs(t.loss() - expect) < 1e-4f)) {
            const std::string e = "oneDNN's first loss " + std::to_string(t.loss()) + " differs from graft's " + std::to_string(expect);
            st.SkipWithError(e.c_str());
            return;
        }
        for (auto _ : st) t.step(d.x.data<float>(), d.y.data<float>());
    } catch (const std::exception& e) {
        st.SkipWithError(e.what());
        return;
    }
    report(st, k, batch);
}
void BM_mlp_train_onednn(benchmark::State& st) { run_onednn(st, model_kind::mlp); }
void BM_lenet_train_onednn(benchmark::State& st) { run_onednn(st, model_kind::lenet); }
#endif

/// Eigen's own GEMM on the MLP's largest product ([batch,784] x [784,512]): the rate the machine
/// gives a plain matrix product, for the GFLOPs counters above.
void BM_eigen_gemm(benchmark::State& st) {
    auto batch = st.range(0);
    set_threads(static_cast<int>(st.range(1)));
    Eigen::MatrixXf a = Eigen::MatrixXf::Random(batch, 784), b = Eigen::MatrixXf::Random(784, 512), c(batch, 512);
    for (auto _ : st) {
        c.noalias() = a * b;
        benchmark::DoNotOptimize(c.data());
    }
    st.counters["GFLOPs"] = benchmark::Counter(2.0 * static_cast<double>(batch) * 784 * 512 * static_cast<double>(st.iterations()) * 1e-9,
                                               benchmark::Counter::kIsRate);
}

/// The MLP training step's matrix products, in the step's order and with its transposes: the three
/// forward layers, the two input gradients the step needs (dH2 = dZ3 W3^T, dH1 = dZ2 W2^T; none for
/// the input x) and the three weight gradients (dW = H^T dZ). Operands of the step's shapes, the same
/// each iteration (so warmer in cache than a step's, whose weights change every step): a floor under
/// the step of each library. Counter GFLOPs: the eight products' FLOPs over the time.
struct mlp_products {
    struct product {
        int a, b;  // operand indices below
        bool ta, tb;
    };
    // x, W1, H1, W2, H2, W3, dZ3, dZ2, dZ1 as [rows, cols]
    static std::vector<std::pair<std::int64_t, std::int64_t>> shapes(std::int64_t batch) {
        return {{batch, 784}, {784, 512}, {batch, 512}, {512, 512}, {batch, 512}, {512, 10}, {batch, 10}, {batch, 512}, {batch, 512}};
    }
    static constexpr product order[8] = {{0, 1, false, false}, {2, 3, false, false}, {4, 5, false, false},  // forward
                                         {6, 5, false, true},  {7, 3, false, true},                        // dH2, dH1
                                         {4, 6, true, false},  {2, 7, true, false},  {0, 8, true, false}}; // dW3, dW2, dW1
    static double flops(std::int64_t batch) {
        return 2.0 * static_cast<double>(batch) * (2 * 784.0 * 512 + 3 * 512.0 * 512 + 3 * 512.0 * 10);
    }
};

void BM_mlp_train_products(benchmark::State& st) {
    const auto batch = st.range(0);
    set_threads(static_cast<int>(st.range(1)));
    std::vector<tensor> t;
    std::uint32_t seed = 31;
    for (auto [r, c] : mlp_products::shapes(batch)) t.push_back(random_f32({r, c}, seed++, 0.1f));
    std::vector<tensor> out(8);
    for (auto _ : st)
        for (int i = 0; i < 8; ++i) {
            const auto& p = mlp_products::order[i];
            out[static_cast<std::size_t>(i)] = graft::ops::matmul(t[static_cast<std::size_t>(p.a)], t[static_cast<std::size_t>(p.b)],
                                                                  {p.ta, p.tb});
        }
    st.counters["GFLOPs"] = benchmark::Counter(mlp_products::flops(batch) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

#ifdef GRAFT_HAVE_TORCH
void BM_mlp_train_products_torch(benchmark::State& st) {
    const auto batch = st.range(0);
    set_threads(static_cast<int>(st.range(1)));
    std::vector<torch::Tensor> t;
    std::uint32_t seed = 31;
    for (auto [r, c] : mlp_products::shapes(batch)) t.push_back(to_torch(random_f32({r, c}, seed++, 0.1f)));
    std::vector<torch::Tensor> out(8);
    torch::NoGradGuard no_grad;
    for (auto _ : st)
        for (int i = 0; i < 8; ++i) {
            const auto& p = mlp_products::order[i];
            const auto& a = t[static_cast<std::size_t>(p.a)];
            const auto& b = t[static_cast<std::size_t>(p.b)];
            out[static_cast<std::size_t>(i)] = torch::mm(p.ta ? a.t() : a, p.tb ? b.t() : b);  // as autograd's addmm backward
        }
    st.counters["GFLOPs"] = benchmark::Counter(mlp_products::flops(batch) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
#endif

void args(benchmark::internal::Benchmark* b) {
    b->ArgNames({"batch", "threads"});
    for (int threads : {1, 2}) b->Args({128, threads});
    b->Args({32, 1});
    b->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
}
BENCHMARK(BM_mlp_train)->Apply(args);
BENCHMARK(BM_lenet_train)->Apply(args);
#ifdef GRAFT_HAVE_TORCH
BENCHMARK(BM_mlp_train_torch)->Apply(args);
BENCHMARK(BM_lenet_train_torch)->Apply(args);
#endif
#ifdef GRAFT_HAVE_ONEDNN
BENCHMARK(BM_mlp_train_onednn)->Apply(args);
BENCHMARK(BM_lenet_train_onednn)->Apply(args);
#endif
BENCHMARK(BM_eigen_gemm)->Apply(args);
BENCHMARK(BM_mlp_train_products)->Apply(args);
#ifdef GRAFT_HAVE_TORCH
BENCHMARK(BM_mlp_train_products_torch)->Apply(args);
#endif

}  // namespace

// The peers' environment (OMP_WAIT_POLICY, malloc thresholds): see graft::bench::reexec_for_peers.
int main(int argc, char** argv) { return graft::bench::peer_benchmark_main(argc, argv, "bench_train"); }
