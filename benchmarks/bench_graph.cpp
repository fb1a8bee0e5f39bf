// Graph loading speed: parse + build IR + index (+ validation) of
//   - a synthetic TF1-style MetaGraph of 100,000 nodes (dense blocks with _output_shapes, like tf.train exports),
//   - the real 87 KB tfnet-graphs/word_cnn.meta,
//   - a synthetic frozen MLP GraphDef, also loaded by OpenCV DNN's readNetFromTensorflow in the same run
//     (when OpenCV is found: GRAFT_HAVE_OPENCV).
// Reports MB/s and nodes/s, and the IR's heap bytes per file byte (counted by a global operator new).
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <new>

#include "graft/core/io.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"

#ifdef GRAFT_HAVE_OPENCV
#include <opencv2/dnn.hpp>
#endif

// ---------------------------------------------------------------- heap accounting

namespace {
std::atomic<long long> g_live{0};
}
// The replacement operators pair malloc with free themselves; GCC's heuristic does not see that.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
    void* p = std::malloc(n ? n : 1);
    if (!p) throw std::bad_alloc();
    g_live.fetch_add(static_cast<long long>(malloc_usable_size(p)), std::memory_order_relaxed);
    return p;
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept {
    if (!p) return;
    g_live.fetch_sub(static_cast<long long>(malloc_usable_size(p)), std::memory_order_relaxed);
    std::free(p);
}
void operator delete[](void* p) noexcept { operator delete(p); }
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }
void operator delete[](void* p, std::size_t) noexcept { operator delete(p); }

namespace {

namespace fs = std::filesystem;
using graft::dtype;

fs::path bench_dir() {
    auto d = fs::temp_directory_path() / "graft_bench_graph";
    fs::create_directories(d);
    return d;
}

/// A TF1-style training-export graph: blocks of Const W, W/read, Const b, b/read, MatMul, BiasAdd, Relu,
/// each with T / dtype attrs and _output_shapes, until `n` nodes.
graft::meta_graph synthetic_meta_graph(std::size_t n) {
    graft::meta_graph mg;
    auto& g = mg.graph;
    g.versions.producer = 24;
    g.reserve(n);
    auto out_shapes = [](std::vector<graft::shape> s) { return graft::attr_value::list_of(std::move(s)); };
    auto& x = g.add_node({"input", "Placeholder"});
    x.attrs.set("dtype", dtype::float32);
    x.attrs.set("shape", graft::shape{-1, 16});
    x.attrs.set("_output_shapes", out_shapes({graft::shape{-1, 16}}));
    std::string prev = "input";
    graft::tensor w(dtype::float32, {16, 16});
    for (int i = 0; i < 256; ++i) w.data<float>()[i] = 0.01f * static_cast<float>(i % 17);
    graft::tensor b(dtype::float32, {16});
    for (std::size_t blk = 0; g.size() + 7 <= n; ++blk) {
        std::string s = "model/block_" + std::to_string(blk) + "/dense";
        auto konst = [&](const std::string& name, const graft::tensor& t) {
            auto& c = g.add_node({name, "Const"});
            c.attrs.set("dtype", dtype::float32);
            c.attrs.set("value", t);
            c.attrs.set("_output_shapes", out_shapes({t.shape()}));
            auto& r = g.add_node({name + "/read", "Identity", {{name, 0}}});
            r.attrs.set("T", dtype::float32);
            r.attrs.set("_class", graft::attr_value::list_of(std::vector<std::string>{"loc:@" + name}));
            r.attrs.set("_output_shapes", out_shapes({t.shape()}));
        };
        konst(s + "/kernel", w);
        konst(s + "/bias", b);
        auto& mm = g.add_node({s + "/MatMul", "MatMul", {{prev, 0}, {s + "/kernel/read", 0}}});
        mm.attrs.set("T", dtype::float32);
        mm.attrs.set("transpose_a", false);
        mm.attrs.set("transpose_b", false);
        mm.attrs.set("_output_shapes", out_shapes({graft::shape{-1, 16}}));
        auto& ba = g.add_node({s + "/BiasAdd", "BiasAdd", {{s + "/MatMul", 0}, {s + "/bias/read", 0}}});
        ba.attrs.set("T", dtype::float32);
        ba.attrs.set("data_format", "NHWC");
        ba.attrs.set("_output_shapes", out_shapes({graft::shape{-1, 16}}));
        auto& re = g.add_node({s + "/Relu", "Relu", {{s + "/BiasAdd", 0}}});
        re.attrs.set("T", dtype::float32);
        re.attrs.set("_output_shapes", out_shapes({graft::shape{-1, 16}}));
        prev = s + "/Relu";
    }
    while (g.size() < n) g.add_node({"filler_" + std::to_string(g.size()), "NoOp"});
    mg.info.tags = {"train"};
    mg.info.tensorflow_version = "1.4.0";
    return mg;
}

/// A frozen MLP both graft and OpenCV DNN import: Placeholder -> (MatMul + BiasAdd + Relu) x layers -> Softmax.
graft::graph frozen_mlp(int layers, int width) {
    graft::graph g;
    g.versions.producer = 24;
    auto& x = g.add_node({"input", "Placeholder"});
    x.attrs.set("dtype", dtype::float32);
    x.attrs.set("shape", graft::shape{1, width});
    std::string prev = "input";
    for (int l = 0; l < layers; ++l) {
        std::string s = "dense_" + std::to_string(l);
        graft::tensor w(dtype::float32, {width, width});
        for (std::int64_t i = 0; i < w.num_elements(); ++i) w.data<float>()[i] = 0.001f * static_cast<float>(i % 31);
        graft::tensor b(dtype::float32, {width});
        auto& kw = g.add_node({s + "/kernel", "Const"});
        kw.attrs.set("dtype", dtype::float32);
        kw.attrs.set("value", w);
        auto& kb = g.add_node({s + "/bias", "Const"});
        kb.attrs.set("dtype", dtype::float32);
        kb.attrs.set("value", b);
        auto& mm = g.add_node({s + "/MatMul", "MatMul", {{prev, 0}, {s + "/kernel", 0}}});
        mm.attrs.set("T", dtype::float32);
        mm.attrs.set("transpose_a", false);
        mm.attrs.set("transpose_b", false);
        auto& ba = g.add_node({s + "/BiasAdd", "BiasAdd", {{s + "/MatMul", 0}, {s + "/bias", 0}}});
        ba.attrs.set("T", dtype::float32);
        ba.attrs.set("data_format", "NHWC");
        auto& re = g.add_node({s + "/Relu", "Relu", {{s + "/BiasAdd", 0}}});
        re.attrs.set("T", dtype::float32);
        prev = s + "/Relu";
    }
    g.add_node({"output", "Softmax", {{prev, 0}}}).attrs.set("T", dtype::float32);
    return g;
}

struct files {
    std::string meta100k, mlp, word_cnn;
    std::size_t meta100k_bytes = 0, mlp_bytes = 0, word_cnn_bytes = 0;
    std::size_t meta100k_nodes = 0, mlp_nodes = 0, word_cnn_nodes = 0;
};

const files& inputs() {
    static files f = [] {
        files r;
        auto d = bench_dir();
        auto mg = synthetic_meta_graph(100000);
        r.meta100k = (d / "synthetic_100k.meta").string();
        graft::tf::write_meta_graph(mg, r.meta100k);
        r.meta100k_nodes = mg.graph.size();
        auto mlp = frozen_mlp(24, 256);
        r.mlp = (d / "frozen_mlp.pb").string();
        graft::tf::write_graph(mlp, r.mlp);
        r.mlp_nodes = mlp.size();
        r.meta100k_bytes = fs::file_size(r.meta100k);
        r.mlp_bytes = fs::file_size(r.mlp);
        r.word_cnn = std::string(GRAFT_SHARED_DIR) + "/tf-fixtures/tfnet-graphs/word_cnn.meta";
        if (fs::exists(r.word_cnn)) {
            r.word_cnn_bytes = fs::file_size(r.word_cnn);
            r.word_cnn_nodes = graft::tf::load_graph(r.word_cnn).size();
        }
        return r;
    }();
    return f;
}

/// Heap bytes the loaded result keeps, per byte of file.
double ir_bytes_per_file_byte(const std::string& path, std::size_t file_bytes, bool validate) {
    long long before = g_live.load();
    long long held = 0;
    {
        auto mg = graft::tf::load_meta_graph(path, {{}, validate});
        (void)mg.graph.find("input");
        held = g_live.load() - before;
    }
    return static_cast<double>(held) / static_cast<double>(file_bytes);
}

void report(benchmark::State& state, std::size_t bytes, std::size_t nodes) {
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
    state.counters["nodes/s"] = benchmark::Counter(static_cast<double>(nodes), benchmark::Counter::kIsIterationInvariantRate);
    state.counters["nodes"] = static_cast<double>(nodes);
    state.counters["file_MB"] = static_cast<double>(bytes) / 1e6;
}

void BM_graft_load_synthetic_meta_100k(benchmark::State& state) {
    const auto& f = inputs();
    bool validate = state.range(0) != 0;
    for (auto _ : state) {
        auto mg = std::make_unique<graft::meta_graph>(graft::tf::load_meta_graph(f.meta100k, {{}, validate}));
        benchmark::DoNotOptimize(mg->graph.find("input"));
        state.PauseTiming();  // freeing the graph is not loading it
        mg.reset();
        state.ResumeTiming();
    }
    report(state, f.meta100k_bytes, f.meta100k_nodes);
    state.counters["IR_bytes_per_file_byte"] = ir_bytes_per_file_byte(f.meta100k, f.meta100k_bytes, validate);
    state.SetLabel(validate ? "parse+IR+index+validate" : "parse+IR+index");
}
BENCHMARK(BM_graft_load_synthetic_meta_100k)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_graft_load_word_cnn_meta(benchmark::State& state) {
    const auto& f = inputs();
    if (f.word_cnn_bytes == 0) {
        state.SkipWithError("word_cnn.meta absent (../shared/tf-fixtures)");
        return;
    }
    for (auto _ : state) {
        auto mg = graft::tf::load_meta_graph(f.word_cnn);
        benchmark::DoNotOptimize(mg.graph.find("embeddings"));
    }
    report(state, f.word_cnn_bytes, f.word_cnn_nodes);
    state.counters["IR_bytes_per_file_byte"] = ir_bytes_per_file_byte(f.word_cnn, f.word_cnn_bytes, true);
}
BENCHMARK(BM_graft_load_word_cnn_meta)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_graft_write_synthetic_meta_100k(benchmark::State& state) {
    const auto& f = inputs();
    auto mg = graft::tf::load_meta_graph(f.meta100k);
    for (auto _ : state) {
        auto bytes = graft::tf::serialize_meta_graph_def(mg);
        benchmark::DoNotOptimize(bytes.data());
    }
    report(state, f.meta100k_bytes, f.meta100k_nodes);
}
BENCHMARK(BM_graft_write_synthetic_meta_100k)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_graft_load_frozen_mlp(benchmark::State& state) {
    const auto& f = inputs();
    for (auto _ : state) {
        auto g = graft::tf::load_graph(f.mlp);
        benchmark::DoNotOptimize(g.find("output"));
    }
    report(state, f.mlp_bytes, f.mlp_nodes);
}
BENCHMARK(BM_graft_load_frozen_mlp)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_graft_load_frozen_mlp_and_decode_weights(benchmark::State& state) {
    const auto& f = inputs();
    for (auto _ : state) {
        auto g = graft::tf::load_graph(f.mlp);
        std::size_t n = 0;
        for (const auto& node : g) {
            if (node.op == "Const") n += static_cast<std::size_t>(node.attr_at("value").tensor().tensor().num_elements());
        }
        benchmark::DoNotOptimize(n);
    }
    report(state, f.mlp_bytes, f.mlp_nodes);
    state.SetLabel("load + every Const decoded to a graft::tensor");
}
BENCHMARK(BM_graft_load_frozen_mlp_and_decode_weights)->Unit(benchmark::kMillisecond)->UseRealTime();

#ifdef GRAFT_HAVE_OPENCV
void BM_opencv_readNetFromTensorflow_frozen_mlp(benchmark::State& state) {
    const auto& f = inputs();
    try {
        for (auto _ : state) {
            cv::dnn::Net net = cv::dnn::readNetFromTensorflow(f.mlp);
            benchmark::DoNotOptimize(net.empty());
        }
    } catch (const cv::Exception& e) {
        state.SkipWithError(e.what());
        return;
    }
    report(state, f.mlp_bytes, f.mlp_nodes);
}
BENCHMARK(BM_opencv_readNetFromTensorflow_frozen_mlp)->Unit(benchmark::kMillisecond)->UseRealTime();
#endif

}  // namespace

BENCHMARK_MAIN();
