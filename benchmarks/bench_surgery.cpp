// Graph surgery: sync of 100 MB of weights between two sessions against a plain memcpy of the same
// bytes; connect and clone of synthetic graphs of 10k and 100k nodes (time should grow linearly).
//
//   build/benchmarks/bench_surgery --benchmark_filter=sync
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <vector>

#include "graft/core/threads.hpp"
#include "graft/exec/session.hpp"
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

}  // namespace

BENCHMARK_MAIN();
