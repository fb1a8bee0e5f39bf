// Whole models through graft's executor against libtorch, OpenCV DNN and oneDNN (each when found),
// on the same weights and thread count.
//
//   mlp    784-512-512-10: MatMul + BiasAdd + Relu twice, then MatMul + BiasAdd.
//   lenet  LeNet-5 on [N,28,28,1] NHWC: Conv2D 5x5x6 SAME + BiasAdd + Relu, MaxPool 2x2/2,
//          Conv2D 5x5x16 VALID + BiasAdd + Relu, MaxPool 2x2/2, Reshape [-1,400],
//          dense 120 relu, dense 84 relu, dense 10.
//
// Each model is one frozen TF GraphDef in graft's IR (Placeholder "x", weights as Const nodes drawn
// from a fixed seed, output "logits"). graft runs it through exec::session (plan compiled once);
// OpenCV reads the same graph from a .pb written by graft::tf::write_graph; libtorch runs the same
// weights with addmm / conv2d (+ bias) / relu_ / max_pool2d under NoGradGuard, convolutions in its
// native NCHW layout (the input is [N,1,28,28]: the same bytes as NHWC with one channel; the first
// dense layer's rows are permuted once at setup from TF's HWC flatten order to torch's CHW order;
// OpenCV's importer inserts a Permute before the Reshape itself, so the .pb needs no change); oneDNN
// (benchmarks/onednn_peer.hpp: what TensorFlow runs on CPU) runs the same weights as primitives
// built once, weights reordered once into the layouts it prefers, ReLU fused as a post-op; its cases
// run in a process of their own (--benchmark_filter=onednn: see reexec_for_peers).
// At setup the three logits are compared (max abs diff < 1e-3); a benchmark whose peers disagree
// stops with SkipWithError.
//
// Arguments are /batch/threads; every benchmark sets graft's, torch's, OpenBLAS's and OpenCV's
// thread counts to `threads` (see reexec_for_peers for their environment). Counters: items/s (samples) and
// per_batch (seconds per forward).
//
//   BM_session_overhead/<threads>      session::run on a 10-node graph of [1] tensors (per_run)
//   BM_<model>_graft_node/<k>/<b>/<t>  node k of the model alone (label: node name and op), to see
//                                      where graft's time goes
//
//   build-bench/benchmarks/bench_models --benchmark_filter='lenet_(graft|torch|opencv)/'
#include <benchmark/benchmark.h>

#include <unistd.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "graft/core.hpp"
#include "graft/exec/session.hpp"
#include "graft/ops/random.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"

#ifdef GRAFT_HAVE_TORCH
#include <torch/torch.h>
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
#ifdef GRAFT_HAVE_TORCH
using graft::bench::to_torch;
#endif
using graft::dtype;
using graft::endpoint;
using graft::node;
using graft::tensor;
using list = std::vector<std::int64_t>;


void per_batch(benchmark::State& st, std::int64_t batch) {
    st.SetItemsProcessed(st.iterations() * batch);
    st.counters["per_batch"] =
        benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}


// ---------------------------------------------------------------- the graphs

node placeholder(std::string name, graft::shape s) {
    node n(std::move(name), "Placeholder");
    n.attrs.set("dtype", dtype::float32);
    n.attrs.set("shape", std::move(s));
    return n;
}
node constant(std::string name, tensor v) {
    node n(std::move(name), "Const");
    n.attrs.set("dtype", v.type());
    n.attrs.set("value", std::move(v));
    return n;
}
node op(std::string name, std::string type, std::vector<endpoint> in) {
    node n(std::move(name), std::move(type), std::move(in));
    n.attrs.set("T", dtype::float32);
    return n;
}

/// A layer's weights as TF stores them: dense [in,out], conv [KH,KW,C,OC]; bias [out].
struct layer {
    std::string name;
    tensor w, b;
};

/// Adds MatMul + BiasAdd (+ Relu) reading `in`; returns the layer's output node.
std::string add_dense(graft::graph& g, const std::string& in, const layer& l, bool relu, const std::string& out_name = {}) {
    g.add_node(constant(l.name + "/kernel", l.w));
    g.add_node(constant(l.name + "/bias", l.b));
    node mm = op(l.name + "/MatMul", "MatMul", {{in, 0}, {l.name + "/kernel", 0}});
    mm.attrs.set("transpose_a", false);
    mm.attrs.set("transpose_b", false);
    g.add_node(std::move(mm));
    std::string ba_name = relu || out_name.empty() ? l.name + "/BiasAdd" : out_name;
    node ba = op(ba_name, "BiasAdd", {{l.name + "/MatMul", 0}, {l.name + "/bias", 0}});
    ba.attrs.set("data_format", "NHWC");
    g.add_node(std::move(ba));
    if (!relu) return ba_name;
    g.add_node(op(l.name + "/Relu", "Relu", {{ba_name, 0}}));
    return l.name + "/Relu";
}

std::string add_conv(graft::graph& g, const std::string& in, const layer& l, const char* padding) {
    g.add_node(constant(l.name + "/kernel", l.w));
    g.add_node(constant(l.name + "/bias", l.b));
    node c = op(l.name + "/Conv2D", "Conv2D", {{in, 0}, {l.name + "/kernel", 0}});
    c.attrs.set("strides", graft::attr_value::list_of(list{1, 1, 1, 1}));
    c.attrs.set("dilations", graft::attr_value::list_of(list{1, 1, 1, 1}));
    c.attrs.set("padding", padding);
    c.attrs.set("data_format", "NHWC");
    c.attrs.set("use_cudnn_on_gpu", true);
    g.add_node(std::move(c));
    node ba = op(l.name + "/BiasAdd", "BiasAdd", {{l.name + "/Conv2D", 0}, {l.name + "/bias", 0}});
    ba.attrs.set("data_format", "NHWC");
    g.add_node(std::move(ba));
    g.add_node(op(l.name + "/Relu", "Relu", {{l.name + "/BiasAdd", 0}}));
    return l.name + "/Relu";
}

std::string add_pool(graft::graph& g, const std::string& in, const std::string& name) {
    node p = op(name, "MaxPool", {{in, 0}});
    p.attrs.set("ksize", graft::attr_value::list_of(list{1, 2, 2, 1}));
    p.attrs.set("strides", graft::attr_value::list_of(list{1, 2, 2, 1}));
    p.attrs.set("padding", "VALID");
    p.attrs.set("data_format", "NHWC");
    g.add_node(std::move(p));
    return name;
}

layer dense_layer(std::string name, std::int64_t in, std::int64_t out, std::uint32_t seed) {
    const float a = 1.f / std::sqrt(static_cast<float>(in));  // torch's default init range
    return {std::move(name), random_f32({in, out}, seed, a), random_f32({out}, seed + 1000, a)};
}
layer conv_layer(std::string name, std::int64_t k, std::int64_t c, std::int64_t oc, std::uint32_t seed) {
    const float a = 1.f / std::sqrt(static_cast<float>(k * k * c));
    return {std::move(name), random_f32({k, k, c, oc}, seed, a), random_f32({oc}, seed + 1000, a)};
}

enum class model_kind { mlp, lenet };

struct model {
    model_kind kind;
    std::vector<layer> layers;  // mlp: 3 dense; lenet: 2 conv + 3 dense
    graft::graph g;
};

graft::graph new_graph() {
    graft::graph g;
    g.versions.producer = 27;  // a TF 1.15-era frozen graph
    return g;
}

model make_mlp() {
    model m{model_kind::mlp, {dense_layer("dense", 784, 512, 11), dense_layer("dense_1", 512, 512, 12), dense_layer("dense_2", 512, 10, 13)}, new_graph()};
    m.g.add_node(placeholder("x", graft::shape{-1, 784}));
    std::string h = add_dense(m.g, "x", m.layers[0], true);
    h = add_dense(m.g, h, m.layers[1], true);
    add_dense(m.g, h, m.layers[2], false, "logits");
    return m;
}

model make_lenet() {
    model m{model_kind::lenet,
            {conv_layer("conv1", 5, 1, 6, 21), conv_layer("conv2", 5, 6, 16, 22), dense_layer("fc1", 400, 120, 23),
             dense_layer("fc2", 120, 84, 24), dense_layer("fc3", 84, 10, 25)},
            new_graph()};
    auto& g = m.g;
    g.add_node(placeholder("x", graft::shape{-1, 28, 28, 1}));
    std::string h = add_conv(g, "x", m.layers[0], "SAME");
    h = add_pool(g, h, "pool1");
    h = add_conv(g, h, m.layers[1], "VALID");
    h = add_pool(g, h, "pool2");
    g.add_node(constant("flatten/shape", tensor::from_vector<std::int32_t>({-1, 400})));
    node r = op("flatten/Reshape", "Reshape", {{h, 0}, {"flatten/shape", 0}});
    r.attrs.set("Tshape", dtype::int32);
    g.add_node(std::move(r));
    h = add_dense(g, "flatten/Reshape", m.layers[2], true);
    h = add_dense(g, h, m.layers[3], true);
    add_dense(g, h, m.layers[4], false, "logits");
    return m;
}

const model& get_model(model_kind k) {
    static const model mlp = make_mlp(), lenet = make_lenet();
    return k == model_kind::mlp ? mlp : lenet;
}

graft::shape input_shape(model_kind k, std::int64_t batch) {
    return k == model_kind::mlp ? graft::shape{batch, 784} : graft::shape{batch, 28, 28, 1};
}

// ---------------------------------------------------------------- the peers

#ifdef GRAFT_HAVE_TORCH

struct torch_model {
    model_kind kind;
    std::vector<torch::Tensor> w, b;  // dense [in,out] (for addmm), conv [OC,C,KH,KW]

    explicit torch_model(const model& m) : kind(m.kind) {
        for (std::size_t i = 0; i < m.layers.size(); ++i) {
            auto w_ = to_torch(m.layers[i].w);
            if (w_.dim() == 4) w_ = w_.permute({3, 2, 0, 1}).contiguous();  // HWIO -> OIHW
            // TF flattens pool2's [N,5,5,16] in HWC order, torch's [N,16,5,5] in CHW order: reorder
            // the rows of fc1 once so both compute the same function.
            if (m.kind == model_kind::lenet && i == 2) w_ = w_.reshape({5, 5, 16, 120}).permute({2, 0, 1, 3}).reshape({400, 120}).contiguous();
            w.push_back(w_);
            b.push_back(to_torch(m.layers[i].b));
        }
    }
    /// x: [N,784] or [N,1,28,28].
    torch::Tensor forward(const torch::Tensor& x) const {
        if (kind == model_kind::mlp) {
            auto h = torch::addmm(b[0], x, w[0]).relu_();
            h = torch::addmm(b[1], h, w[1]).relu_();
            return torch::addmm(b[2], h, w[2]);
        }
        auto h = torch::max_pool2d(torch::conv2d(x, w[0], b[0], 1, 2).relu_(), 2, 2);
        h = torch::max_pool2d(torch::conv2d(h, w[1], b[1]).relu_(), 2, 2);
        h = torch::addmm(b[2], h.reshape({h.size(0), 400}), w[2]).relu_();
        h = torch::addmm(b[3], h, w[3]).relu_();
        return torch::addmm(b[4], h, w[4]);
    }
};
#endif

// ---------------------------------------------------------------- one setup per (model, batch)

struct fixture {
    std::int64_t batch = 0;
    tensor x;  // NHWC / [N,784]
    std::unique_ptr<graft::exec::session> session;
    graft::exec::session::feed_list feeds;
    std::vector<std::string> fetches{"logits:0"};
    tensor logits;
    std::string error;  // non-empty: the peers disagree or one failed
#ifdef GRAFT_HAVE_TORCH
    std::unique_ptr<torch_model> tm;
    torch::Tensor tx;
#endif
#ifdef GRAFT_HAVE_OPENCV
    cv::dnn::Net net;
    cv::Mat blob;
#endif
};

float max_abs_diff(const float* a, const float* b, std::int64_t n) {
    float d = 0;
    for (std::int64_t i = 0; i < n; ++i) d = std::max(d, std::abs(a[i] - b[i]));
    return d;
}

std::string sci(float v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2g", static_cast<double>(v));
    return buf;
}

fixture make_fixture(model_kind k, std::int64_t batch) {
    const model& m = get_model(k);
    fixture f;
    f.batch = batch;
    f.x = random_f32(input_shape(k, batch), 7, 1.f);
    graft::exec::session_options o;
    o.collect_step_stats = std::getenv("GRAFT_BENCH_STEP_STATS") != nullptr;
    f.session = std::make_unique<graft::exec::session>(m.g, o);
    f.feeds = {{"x:0", f.x}};
    try {
        f.logits = f.session->run(f.feeds, f.fetches).at(0);
    } catch (const std::exception& e) {
        f.error = std::string("graft: ") + e.what();
        return f;
    }
    const std::int64_t n = f.logits.num_elements();
    if (n != batch * 10) {
        f.error = "graft: logits have shape " + f.logits.shape().str();
        return f;
    }
    [[maybe_unused]] constexpr float tolerance = 1e-3f;
    std::string report = std::string(k == model_kind::mlp ? "mlp" : "lenet") + " batch " + std::to_string(batch) +
                         ": max |logits - graft's|";
#ifdef GRAFT_HAVE_TORCH
    {
        torch::NoGradGuard no_grad;
        f.tm = std::make_unique<torch_model>(m);
        f.tx = to_torch(f.x);
        if (k == model_kind::lenet) f.tx = f.tx.reshape({batch, 1, 28, 28});  // C = 1: NHWC bytes == NCHW bytes
        auto out = f.tm->forward(f.tx).contiguous();
        float d = max_abs_diff(f.logits.data<float>(), out.data_ptr<float>(), n);
        report += " libtorch " + sci(d);
        if (!(d < tolerance)) {
            f.error = "libtorch logits differ from graft's by " + std::to_string(d);
            return f;
        }
    }
#endif
#ifdef GRAFT_HAVE_OPENCV
    try {
        const auto pb = std::filesystem::temp_directory_path() /
                        ("graft_bench_" + std::string(k == model_kind::mlp ? "mlp" : "lenet") + ".pb");
        graft::tf::write_graph(m.g, pb.string());
        f.net = cv::dnn::readNetFromTensorflow(pb.string());
        std::filesystem::remove(pb);
        f.net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
        f.net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
        // OpenCV's TF importer works in NCHW: a 4-D input blob is [N,C,H,W] (here C = 1, so the same
        // bytes as graft's NHWC input); the MLP's is [N,784].
        std::vector<int> dims = k == model_kind::mlp ? std::vector<int>{static_cast<int>(batch), 784}
                                                     : std::vector<int>{static_cast<int>(batch), 1, 28, 28};
        f.blob = cv::Mat(static_cast<int>(dims.size()), dims.data(), CV_32F);
        std::copy_n(f.x.data<float>(), f.x.num_elements(), f.blob.ptr<float>());
        f.net.setInput(f.blob);
        cv::Mat out = f.net.forward();
        if (static_cast<std::int64_t>(out.total()) != n) {
            f.error = "OpenCV logits have " + std::to_string(out.total()) + " values, graft's " + std::to_string(n);
            return f;
        }
        float d = max_abs_diff(f.logits.data<float>(), out.ptr<float>(), n);
        report += " OpenCV " + sci(d);
        if (!(d < tolerance)) {
            f.error = "OpenCV logits differ from graft's by " + std::to_string(d);
            return f;
        }
    } catch (const std::exception& e) {
        f.error = std::string("OpenCV: ") + e.what();
        return f;
    }
#endif
    std::vector<float> zeros(static_cast<std::size_t>(n), 0.f);
    report += " (max |logit| " + sci(max_abs_diff(f.logits.data<float>(), zeros.data(), n)) + ")";
    std::fprintf(stderr, "%s\n", report.c_str());
    return f;
}

fixture& get_fixture(model_kind k, std::int64_t batch) {
    static std::map<std::pair<model_kind, std::int64_t>, fixture> cache;
    auto it = cache.find({k, batch});
    if (it == cache.end()) it = cache.emplace(std::pair{k, batch}, make_fixture(k, batch)).first;
    return it->second;
}

/// The fixture for this benchmark's (batch, threads), or nullptr after SkipWithError.
fixture* start(benchmark::State& st, model_kind k) {
    set_threads(static_cast<int>(st.range(1)));
    fixture& f = get_fixture(k, st.range(0));
    if (!f.error.empty()) {
        st.SkipWithError(f.error.c_str());
        return nullptr;
    }
    return &f;
}

// ---------------------------------------------------------------- whole models

void run_graft(benchmark::State& st, model_kind k) {
    fixture* f = start(st, k);
    if (!f) return;
    f->session->state().clear_step_stats();
    for (auto _ : st) benchmark::DoNotOptimize(f->session->run(f->feeds, f->fetches)[0].raw_data());
    const std::string title = std::string(k == model_kind::mlp ? "mlp" : "lenet") + " batch " + std::to_string(f->batch) +
                              " threads " + std::to_string(graft::num_threads());
    graft::bench::print_step_stats(*f->session, title, static_cast<std::int64_t>(st.iterations()));
    per_batch(st, f->batch);
}

#ifdef GRAFT_HAVE_TORCH
void run_torch(benchmark::State& st, model_kind k) {
    fixture* f = start(st, k);
    if (!f) return;
    torch::NoGradGuard no_grad;
    for (auto _ : st) benchmark::DoNotOptimize(f->tm->forward(f->tx).data_ptr());
    per_batch(st, f->batch);
}
#endif

#ifdef GRAFT_HAVE_OPENCV
void run_opencv(benchmark::State& st, model_kind k) {
    fixture* f = start(st, k);
    if (!f) return;
    for (auto _ : st) {
        f->net.setInput(f->blob);
        benchmark::DoNotOptimize(f->net.forward().data);
    }
    per_batch(st, f->batch);
}
#endif

#ifdef GRAFT_HAVE_ONEDNN
/// oneDNN's model for (kind, batch, threads), built at the first use under that thread count (its
/// primitives keep the thread partition they were created with); its logits are checked against
/// graft's once.
graft::bench::onednn::model* onednn_model(model_kind k, std::int64_t batch, int threads, const tensor& x,
                                         const tensor& expect, std::string& error) {
    namespace od = graft::bench::onednn;
    static std::map<std::tuple<model_kind, std::int64_t, int>, std::unique_ptr<od::model>> cache;
    auto& slot = cache[{k, batch, threads}];
    if (slot) return slot.get();
    const model& m = get_model(k);
    std::vector<od::layer_params> params;
    for (const layer& l : m.layers) {
        params.push_back({l.w.data<float>(), std::vector<std::int64_t>(l.w.shape().dims().begin(), l.w.shape().dims().end()),
                          l.b.data<float>()});
    }
    try {
        auto net = std::make_unique<od::model>(k == model_kind::mlp ? od::model_kind::mlp : od::model_kind::lenet, params, batch);
        const float d = max_abs_diff(expect.data<float>(), net->forward(x.data<float>()), expect.num_elements());
        std::fprintf(stderr, "%s batch %lld threads %d: max |oneDNN logits - graft's| %s\n", k == model_kind::mlp ? "mlp" : "lenet",
                     static_cast<long long>(batch), threads, sci(d).c_str());
        if (!(d < 1e-3f)) {
            error = "oneDNN logits differ from graft's by " + std::to_string(d);
            return nullptr;
        }
        slot = std::move(net);
    } catch (const std::exception& e) {
        error = e.what();
        return nullptr;
    }
    return slot.get();
}

void run_onednn(benchmark::State& st, model_kind k) {
    fixture* f = start(st, k);
    if (!f) return;
    std::string error;
    auto* net = onednn_model(k, f->batch, static_cast<int>(st.range(1)), f->x, f->logits, error);
    if (!net) {
        st.SkipWithError(error.c_str());
        return;
    }
    const float* x = f->x.data<float>();
    for (auto _ : st) benchmark::DoNotOptimize(net->forward(x));
    per_batch(st, f->batch);
}
#endif

void BM_mlp_graft(benchmark::State& st) { run_graft(st, model_kind::mlp); }
void BM_lenet_graft(benchmark::State& st) { run_graft(st, model_kind::lenet); }
#ifdef GRAFT_HAVE_TORCH
void BM_mlp_torch(benchmark::State& st) { run_torch(st, model_kind::mlp); }
void BM_lenet_torch(benchmark::State& st) { run_torch(st, model_kind::lenet); }
#endif
#ifdef GRAFT_HAVE_OPENCV
void BM_mlp_opencv(benchmark::State& st) { run_opencv(st, model_kind::mlp); }
void BM_lenet_opencv(benchmark::State& st) { run_opencv(st, model_kind::lenet); }
#endif
#ifdef GRAFT_HAVE_ONEDNN
void BM_mlp_onednn(benchmark::State& st) { run_onednn(st, model_kind::mlp); }
void BM_lenet_onednn(benchmark::State& st) { run_onednn(st, model_kind::lenet); }
#endif

void model_args(benchmark::internal::Benchmark* b) {
    b->ArgNames({"batch", "threads"});
    for (int th : {1, 2})
        for (int n : {1, 128}) b->Args({n, th});
}
#define GRAFT_MODEL_BENCH(fn) BENCHMARK(fn)->Apply(model_args)->UseRealTime()->Unit(benchmark::kMillisecond)
GRAFT_MODEL_BENCH(BM_mlp_graft);
#ifdef GRAFT_HAVE_TORCH
GRAFT_MODEL_BENCH(BM_mlp_torch);
#endif
#ifdef GRAFT_HAVE_OPENCV
GRAFT_MODEL_BENCH(BM_mlp_opencv);
#endif
#ifdef GRAFT_HAVE_ONEDNN
GRAFT_MODEL_BENCH(BM_mlp_onednn);
#endif
GRAFT_MODEL_BENCH(BM_lenet_graft);
#ifdef GRAFT_HAVE_TORCH
GRAFT_MODEL_BENCH(BM_lenet_torch);
#endif
#ifdef GRAFT_HAVE_OPENCV
GRAFT_MODEL_BENCH(BM_lenet_opencv);
#endif
#ifdef GRAFT_HAVE_ONEDNN
GRAFT_MODEL_BENCH(BM_lenet_onednn);
#endif

// ---------------------------------------------------------------- session::run overhead
// x -> Add c -> Mul c -> Identity -> Add c -> Mul c -> Identity -> Add c -> Mul c = y: 10 nodes
// (Placeholder and Const included) on [1] tensors: no arithmetic to speak of, so the time is the
// fixed cost per run and per node, of the executor and of the kernels (broadcast plan, allocation).

void BM_session_overhead(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(0)));
    graft::graph g = new_graph();
    g.add_node(placeholder("x", graft::shape{1}));
    g.add_node(constant("c", tensor::from_vector<float>({1.0001f})));
    const char* ops[] = {"Add", "Mul", "Identity", "Add", "Mul", "Identity", "Add", "Mul"};
    std::string prev = "x";
    for (int i = 0; i < 8; ++i) {
        std::string name = i == 7 ? "y" : "n" + std::to_string(i);
        std::vector<endpoint> in{{prev, 0}};
        if (std::string_view(ops[i]) != "Identity") in.push_back({"c", 0});
        g.add_node(op(name, ops[i], std::move(in)));
        prev = name;
    }
    graft::exec::session s(g);
    const graft::exec::session::feed_list feeds{{"x:0", tensor::from_vector<float>({1.f})}};
    const std::vector<std::string> fetches{"y:0"};
    (void)s.run(feeds, fetches);  // compile the plan
    for (auto _ : st) benchmark::DoNotOptimize(s.run(feeds, fetches)[0].raw_data());
    st.counters["per_run"] =
        benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_session_overhead)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMicrosecond);

// ---------------------------------------------------------------- the machine's roofline
// What the machine allows, measured in the same run, so each model figure is also a fraction of it:
//
//   BM_probe_read/<bytes>/<threads>  one read of `bytes` (a model's weights: MLP 2.68 MB, LeNet
//                                    0.25 MB; 256 MiB for DRAM) split over the threads, summed with
//                                    vector loads (STREAM-style: each call re-reads the buffer, so
//                                    a model-size buffer comes from L2/L3 as the weights of a model
//                                    run back to back do). Counter: per_read, GB/s.
//   BM_probe_fma/<threads>           peak multiply-add rate: twelve independent vector FMA chains
//                                    per thread, 256-bit (AVX2) or 512-bit when graft's kernels run
//                                    AVX-512 (GRAFT_MAX_CPU_ISA bounds it as it bounds them).
//                                    Counter: GFLOP/s.
// The batch-1 MLP cannot beat per_read of its weights; a batch-128 model's GFLOP/s over the FMA
// peak is the share of the arithmetic ceiling it reaches (make bench-report prints both).

std::int64_t weight_bytes(model_kind k) {
    std::int64_t n = 0;
    for (const layer& l : get_model(k).layers) n += l.w.num_elements() + l.b.num_elements();
    return n * 4;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
[[gnu::target("avx2")]] float sum_avx2(const float* p, std::int64_t n) {
    __m256 a[8];
    for (auto& v : a) v = _mm256_setzero_ps();
    std::int64_t i = 0;
    for (; i + 64 <= n; i += 64)
        for (int j = 0; j < 8; ++j) a[j] = _mm256_add_ps(a[j], _mm256_loadu_ps(p + i + 8 * j));
    for (int j = 1; j < 8; ++j) a[0] = _mm256_add_ps(a[0], a[j]);
    alignas(32) float t[8];
    _mm256_store_ps(t, a[0]);
    float r = t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
    for (; i < n; ++i) r += p[i];
    return r;
}
/// Twelve independent FMA chains of `iters` steps (the latency of one FMA times the throughput of
/// two ports: twelve in flight saturate both on the cores of the last decade); returns the flops.
[[gnu::target("avx2,fma")]] double fma_chains_256(std::int64_t iters) {
    constexpr int chains = 12;
    __m256 acc[chains];
    for (int j = 0; j < chains; ++j) acc[j] = _mm256_set1_ps(static_cast<float>(j));
    const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
    for (std::int64_t i = 0; i < iters; ++i)
        for (auto& v : acc) v = _mm256_fmadd_ps(v, m, c);
    for (int j = 1; j < chains; ++j) acc[0] = _mm256_add_ps(acc[0], acc[j]);
    benchmark::DoNotOptimize(acc[0]);
    return 2.0 * chains * 8 * static_cast<double>(iters);
}
[[gnu::target("avx512f")]] double fma_chains_512(std::int64_t iters) {
    constexpr int chains = 12;
    __m512 acc[chains];
    for (int j = 0; j < chains; ++j) acc[j] = _mm512_set1_ps(static_cast<float>(j));
    const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
    for (std::int64_t i = 0; i < iters; ++i)
        for (auto& v : acc) v = _mm512_fmadd_ps(v, m, c);
    for (int j = 1; j < chains; ++j) acc[0] = _mm512_add_ps(acc[0], acc[j]);
    benchmark::DoNotOptimize(acc[0]);
    return 2.0 * chains * 16 * static_cast<double>(iters);
}
#endif

void BM_probe_read(benchmark::State& st) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    const std::int64_t bytes = st.range(0), n = bytes / 4;
    const int threads = static_cast<int>(st.range(1));
    set_threads(threads);
    std::vector<float> buf(static_cast<std::size_t>(n), 1.f);
    const std::int64_t per = (n / threads + 63) / 64 * 64;
    std::vector<float> part(static_cast<std::size_t>(threads));
    for (auto _ : st) {
        graft::run_tasks(threads, [&](int t) {
            const std::int64_t b = std::min(n, t * per), e = std::min(n, b + per);
            part[static_cast<std::size_t>(t)] = sum_avx2(buf.data() + b, e - b);
        });
        benchmark::DoNotOptimize(part.data());
    }
    st.SetBytesProcessed(st.iterations() * bytes);
    st.counters["per_read"] =
        benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
#else
    st.SkipWithError("x86-64 only");
#endif
}

void BM_probe_fma(benchmark::State& st) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    const int threads = static_cast<int>(st.range(0));
    set_threads(threads);
    const bool wide = graft::ops::gemm::active_kernel() == graft::ops::gemm::kernel_isa::avx512;
    if (graft::ops::gemm::active_kernel() == graft::ops::gemm::kernel_isa::portable) {
        st.SkipWithError("no AVX2/FMA on this CPU (or GRAFT_MAX_CPU_ISA=portable)");
        return;
    }
    constexpr std::int64_t iters = 1 << 16;
    double flops = 0;
    for (auto _ : st) {
        graft::run_tasks(threads, [&](int) { benchmark::DoNotOptimize(wide ? fma_chains_512(iters) : fma_chains_256(iters)); });
        flops += threads * 2.0 * 12 * (wide ? 16 : 8) * static_cast<double>(iters);
    }
    st.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsRate);
    st.SetLabel(wide ? "512-bit FMA" : "256-bit FMA");
#else
    st.SkipWithError("x86-64 only");
#endif
}

BENCHMARK(BM_probe_read)
    ->Apply([](benchmark::internal::Benchmark* b) {
        b->ArgNames({"bytes", "threads"});
        for (int th : {1, 2})
            for (std::int64_t bytes : {weight_bytes(model_kind::mlp), weight_bytes(model_kind::lenet), std::int64_t{256} << 20})
                b->Args({bytes, th});
    })
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_probe_fma)->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMicrosecond);

// ---------------------------------------------------------------- graft, one node at a time
// Node k (k-th node that is neither Const nor Placeholder, in graph order) run alone in a session
// of its own: its computed inputs are fed (the values of a full run), its Const inputs stay Const.
// Compare the sum with BM_<model>_graft to see the executor's share; the per-node times show which
// kernel dominates. (Fed inputs are pinned, so Relu cannot write in place here as it does in the
// full graph: it allocates its output.)

std::vector<const node*> compute_nodes(const graft::graph& g) {
    std::vector<const node*> r;
    for (const node& n : g)
        if (n.op != "Const" && n.op != "Placeholder") r.push_back(&n);
    return r;
}

void run_graft_node(benchmark::State& st, model_kind k) {
    const std::int64_t index = st.range(0), batch = st.range(1);
    set_threads(static_cast<int>(st.range(2)));
    const model& m = get_model(k);
    fixture& f = get_fixture(k, batch);
    if (!f.logits.valid()) {  // graft itself failed (a peer's disagreement does not stop this one)
        st.SkipWithError(f.error.c_str());
        return;
    }
    auto nodes = compute_nodes(m.g);
    if (index >= static_cast<std::int64_t>(nodes.size())) {
        st.SkipWithError("no such node");
        return;
    }
    const node& target = *nodes[static_cast<std::size_t>(index)];
    // The node's inputs from one full run.
    std::vector<std::string> names;
    for (auto& in : target.inputs) names.push_back(in.str());
    auto values = f.session->run({{"x:0", f.x}}, names);
    graft::graph g = new_graph();
    node copy = target;
    graft::exec::session::feed_list feeds;
    for (std::size_t i = 0; i < target.inputs.size(); ++i) {
        const node& src = m.g.at(target.inputs[i].node);
        if (src.op == "Const") {
            if (!g.contains(src.name)) g.add_node(src);
            continue;
        }
        std::string ph = "in" + std::to_string(i);
        g.add_node(placeholder(ph, values[i].shape()));
        copy.inputs[i] = {ph, 0};
        feeds.emplace_back(ph + ":0", values[i]);
    }
    g.add_node(copy);
    graft::exec::session s(g);
    const std::vector<std::string> fetches{target.name + ":0"};
    (void)s.run(feeds, fetches);
    for (auto _ : st) benchmark::DoNotOptimize(s.run(feeds, fetches)[0].raw_data());
    st.SetLabel(target.name + " (" + target.op + ")");
    per_batch(st, batch);
}

void BM_mlp_graft_node(benchmark::State& st) { run_graft_node(st, model_kind::mlp); }
void BM_lenet_graft_node(benchmark::State& st) { run_graft_node(st, model_kind::lenet); }

void node_args(benchmark::internal::Benchmark* b, model_kind k) {
    b->ArgNames({"node", "batch", "threads"});
    const auto n = static_cast<std::int64_t>(compute_nodes(get_model(k).g).size());
    for (int th : {1, 2})
        for (int batch : {1, 128})
            for (std::int64_t i = 0; i < n; ++i) b->Args({i, batch, th});
}
BENCHMARK(BM_mlp_graft_node)
    ->Apply([](benchmark::internal::Benchmark* b) { node_args(b, model_kind::mlp); })
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_lenet_graft_node)
    ->Apply([](benchmark::internal::Benchmark* b) { node_args(b, model_kind::lenet); })
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace

// The peers' environment (OMP_WAIT_POLICY, malloc thresholds): see graft::bench::reexec_for_peers.
int main(int argc, char** argv) { return graft::bench::peer_benchmark_main(argc, argv, "bench_models"); }
