// Graph surgery: sync of 100 MB of weights between two sessions against a plain memcpy of the same
// bytes; import, connect and clone of synthetic graphs of 10k and 100k nodes (time should grow linearly).
//
//   build/benchmarks/bench_surgery --benchmark_filter=sync
#include <benchmark/benchmark.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "graft/core/threads.hpp"
#include "graft/exec/session.hpp"
#include "graft/surgery/clone.hpp"
#include "graft/surgery/connect.hpp"
#include "graft/surgery/import.hpp"
#include "graft/surgery/sync.hpp"
#include "graft/train/variables.hpp"

namespace {

using graft::dtype;

/// n floats that are not all equal (the values do not matter to a copy).
graft::tensor some_floats(std::int64_t n, float seed) {
    graft::tensor t(graft::dtype::float32, {n});
    float* p = t.data<float>();
    for (std::int64_t i = 0; i < n; ++i) p[i] = seed + static_cast<float>(i % 1000) * 1e-3f;
    return t;
}

using graft::tensor;

constexpr std::int64_t kVars = 25, kElems = 1 << 20;  // 25 x 4 MiB = 100 MiB of float32

/// A graph holding kVars float32 variables of kElems each (and a node reading them all).
graft::meta_graph weights_graph() {
    graft::meta_graph mg;
    graft::graph_builder b(mg.graph);
    std::vector<graft::endpoint> reads;
    for (std::int64_t i = 0; i < kVars; ++i) {
        auto v = graft::train::create_filled_variable(mg, b, "w" + std::to_string(i), dtype::float32, {kElems},
                                                     graft::train::fill_kind::zeros);
        reads.push_back(v.value);
    }
    b.op("AddN", reads, {}, "sum");
    return mg;
}

void BM_sync_100MB(benchmark::State& st) {
    graft::set_num_threads(static_cast<int>(st.range(0)));
    auto mg = weights_graph();
    graft::exec::session trainer(mg.graph);
    for (std::int64_t i = 0; i < kVars; ++i) {
        trainer.variables().get_or_create("w" + std::to_string(i), dtype::float32, {kElems})
            ->assign(some_floats(kElems, static_cast<float>(i)));
    }
    graft::surgery::replica serving(graft::surgery::inference_copy(mg.graph, {"sum"}));
    std::size_t bytes = 0;
    for (auto _ : st) bytes = graft::surgery::sync(trainer, serving).bytes;
    st.SetBytesProcessed(static_cast<std::int64_t>(bytes) * st.iterations());
    st.counters["MB"] = static_cast<double>(bytes) / 1e6;
}
BENCHMARK(BM_sync_100MB)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

/// The peer: one memcpy of the same 25 buffers into buffers allocated once.
void BM_memcpy_100MB(benchmark::State& st) {
    std::vector<tensor> src, dst;
    for (std::int64_t i = 0; i < kVars; ++i) {
        src.push_back(some_floats(kElems, static_cast<float>(i)));
        dst.emplace_back(dtype::float32, graft::shape{kElems});
    }
    for (auto _ : st) {
        for (std::int64_t i = 0; i < kVars; ++i) std::memcpy(dst[static_cast<std::size_t>(i)].raw_data(), src[static_cast<std::size_t>(i)].raw_data(), src[static_cast<std::size_t>(i)].nbytes());
        benchmark::ClobberMemory();
    }
    st.SetBytesProcessed(static_cast<std::int64_t>(kVars * kElems * 4) * st.iterations());
}
BENCHMARK(BM_memcpy_100MB)->Unit(benchmark::kMillisecond)->UseRealTime();

/// A synthetic model of about `nodes` nodes: a chain of dense layers (MatMul, BiasAdd, Relu) on
/// 4x4 TF1 variables (VariableV2, initial_value, Assign, read each), input "x", output "out".
const graft::meta_graph& chain_model(std::int64_t nodes) {
    static std::map<std::int64_t, graft::meta_graph> cache;
    auto& mg = cache[nodes];
    if (mg.graph.size() != 0) return mg;
    graft::graph_builder b(mg.graph);
    auto h = b.placeholder("x", dtype::float32, graft::shape{-1, 4});
    const std::int64_t layers = (nodes - 3) / 11;
    for (std::int64_t i = 0; i < layers; ++i) {
        auto l = b.sub("layer" + std::to_string(i));
        auto w = graft::train::create_variable(mg, l, "kernel", some_floats(16, 0.f).reshaped({4, 4}));
        auto bias = graft::train::create_variable(mg, l, "bias", some_floats(4, 0.f));
        h = l.op("Relu", {l.op("BiasAdd", {l.op("MatMul", {h, w.value}), bias.value})});
    }
    b.op("Identity", {h}, {}, "out");
    return mg;
}

/// connect() of two chain models of n/2 nodes each: B's input bound to A's output.
void BM_connect(benchmark::State& st) {
    const auto& half = chain_model(st.range(0) / 2);
    std::size_t total = 0;
    for (auto _ : st) {
        auto c = graft::surgery::connect({{"A", half, ""}, {"B", half, ""}}, {{"B/x:0", "A/out:0"}});
        total = c.mg.graph.size();
    }
    st.counters["nodes"] = static_cast<double>(total);
    st.counters["ns_per_node"] = benchmark::Counter(static_cast<double>(total), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_connect)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();

/// import_meta_graph() of one chain model of n nodes under a scope, its input mapped.
void BM_import(benchmark::State& st) {
    const auto& src = chain_model(st.range(0));
    std::size_t total = 0;
    for (auto _ : st) {
        st.PauseTiming();
        graft::meta_graph into;
        graft::graph_builder(into.graph).placeholder("in", dtype::float32, graft::shape{-1, 4});
        st.ResumeTiming();
        total = graft::surgery::import_meta_graph(into, src, graft::surgery::under("m", {{"x:0", "in:0"}})).imported_nodes;
    }
    st.counters["nodes"] = static_cast<double>(total);
    st.counters["ns_per_node"] = benchmark::Counter(static_cast<double>(total), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_import)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();

/// clone() of a whole chain model (every layer and its variables, init policy `init`) into "copy".
void BM_clone(benchmark::State& st) {
    const auto& orig = chain_model(st.range(0));
    std::size_t copied = 0;
    graft::meta_graph mg;
    for (auto _ : st) {
        st.PauseTiming();
        mg = orig;  // destroys the last iteration's graph: untimed, like the copy
        st.ResumeTiming();
        graft::surgery::clone_options o;
        o.inputs = {"x"};
        o.outputs = {"out"};
        o.scope = "copy";
        copied = graft::surgery::clone(mg, o).names.size();
    }
    st.counters["copied_nodes"] = static_cast<double>(copied);
    st.counters["ns_per_node"] = benchmark::Counter(static_cast<double>(copied), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_clone)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
