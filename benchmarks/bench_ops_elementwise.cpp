// Elementwise, reduction and array kernels against libtorch (when found), on the same thread count.
//
// Every benchmark takes its thread count as the last argument and sets graft::set_num_threads and
// torch::set_num_threads to it. Both sides allocate their output each iteration. Shapes are the
// ones a small convnet / MLP sees: [128,512] activations and [128,28,28,32] NHWC feature maps.
//
//   build/benchmarks/bench_ops_elementwise --benchmark_filter='add_bias'
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "graft/core.hpp"
#include "graft/ops/array_all.hpp"

#ifdef GRAFT_HAVE_TORCH
#include <torch/torch.h>
#endif

#include "bench_support.hpp"

namespace {

using graft::bench::set_threads;

using graft::dtype;
using graft::tensor;
namespace ops = graft::ops;

const std::vector<std::int64_t> kMlp{128, 512};
const std::vector<std::int64_t> kConv{128, 28, 28, 32};

tensor filled(const std::vector<std::int64_t>& dims, std::uint32_t seed) {
    tensor t(dtype::float32, graft::shape(dims));
    std::uint32_t x = seed * 2654435761u + 1u;
    float* p = t.data<float>();
    for (std::int64_t i = 0; i < t.num_elements(); ++i) {
        x = x * 1664525u + 1013904223u;
        p[i] = static_cast<float>(x >> 8) / static_cast<float>(1u << 24) * 2.f - 1.f;
    }
    return t;
}


void bytes(benchmark::State& st, double per_iter) {
    st.SetBytesProcessed(static_cast<std::int64_t>(per_iter) * st.iterations());
}

#ifdef GRAFT_HAVE_TORCH
torch::Tensor ttensor(const std::vector<std::int64_t>& dims) {
    return torch::rand(dims) * 2 - 1;
}
#endif

// ---------------------------------------------------------------- Add with broadcasting

// [128,512] + [512] (a bias row) or, with range(0) == 1, [128,28,28,32] + [32].
void BM_add_bias_graft(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(1)));
    const auto& dims = st.range(0) ? kConv : kMlp;
    const tensor a = filled(dims, 1), b = filled({dims.back()}, 2);
    for (auto _ : st) benchmark::DoNotOptimize(ops::add(a, b).raw_data());
    bytes(st, 8.0 * static_cast<double>(a.num_elements()));
}
// Same-shape Add [128,512] + [128,512] / [128,28,28,32] + same.
void BM_add_same_graft(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(1)));
    const auto& dims = st.range(0) ? kConv : kMlp;
    const tensor a = filled(dims, 1), b = filled(dims, 2);
    for (auto _ : st) benchmark::DoNotOptimize(ops::add(a, b).raw_data());
    bytes(st, 12.0 * static_cast<double>(a.num_elements()));
}
// General N-d broadcast [128,1,512] + [1,64,512] -> [128,64,512].
void BM_add_outer_graft(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(0)));
    const tensor a = filled({128, 1, 512}, 1), b = filled({1, 64, 512}, 2);
    for (auto _ : st) benchmark::DoNotOptimize(ops::add(a, b).raw_data());
    bytes(st, 4.0 * 128 * 64 * 512);
}

// ---------------------------------------------------------------- Relu

void BM_relu_graft(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(1)));
    const tensor a = filled(st.range(0) ? kConv : kMlp, 3);
    for (auto _ : st) benchmark::DoNotOptimize(ops::relu(a).raw_data());
    bytes(st, 8.0 * static_cast<double>(a.num_elements()));
}

// ---------------------------------------------------------------- Sum

// range(0): 0 = [128,512] over axis 1, 1 = [128,512] over axis 0, 2 = [128,28,28,32] over
// [0,1,2] (BiasAddGrad's pattern), 3 = [128,28,28,32] over everything.
void BM_sum_graft(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(1)));
    const int which = static_cast<int>(st.range(0));
    const tensor a = filled(which < 2 ? kMlp : kConv, 4);
    const std::vector<std::int64_t> axes = which == 0   ? std::vector<std::int64_t>{1}
                                           : which == 1 ? std::vector<std::int64_t>{0}
                                           : which == 2 ? std::vector<std::int64_t>{0, 1, 2}
                                                        : std::vector<std::int64_t>{0, 1, 2, 3};
    for (auto _ : st) benchmark::DoNotOptimize(ops::reduce_sum(a, axes).raw_data());
    bytes(st, 4.0 * static_cast<double>(a.num_elements()));
}

// ---------------------------------------------------------------- Transpose

// range(0): 0 = [128,512] 2-D, 1 = NHWC -> NCHW on [128,28,28,32], 2 = NCHW -> NHWC back.
void BM_transpose_graft(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(1)));
    const int which = static_cast<int>(st.range(0));
    const tensor a = which == 0   ? filled(kMlp, 5)
                     : which == 1 ? filled(kConv, 5)
                                  : filled({128, 32, 28, 28}, 5);
    const std::vector<std::int64_t> perm = which == 0   ? std::vector<std::int64_t>{1, 0}
                                           : which == 1 ? std::vector<std::int64_t>{0, 3, 1, 2}
                                                        : std::vector<std::int64_t>{0, 2, 3, 1};
    for (auto _ : st) benchmark::DoNotOptimize(ops::transpose(a, perm).raw_data());
    bytes(st, 8.0 * static_cast<double>(a.num_elements()));
}

// ---------------------------------------------------------------- ConcatV2

// range(0): 0 = two [128,512] along axis 1, 1 = two [128,28,28,32] along the channels (axis 3).
void BM_concat_graft(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(1)));
    const auto& dims = st.range(0) ? kConv : kMlp;
    const std::vector<tensor> parts{filled(dims, 6), filled(dims, 7)};
    const auto axis = static_cast<std::int64_t>(dims.size()) - 1;
    for (auto _ : st) benchmark::DoNotOptimize(ops::concat(parts, axis).raw_data());
    bytes(st, 16.0 * static_cast<double>(parts[0].num_elements()));
}

#ifdef GRAFT_HAVE_TORCH
void BM_add_bias_torch(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(1)));
    const auto& dims = st.range(0) ? kConv : kMlp;
    const auto a = ttensor(dims), b = ttensor({dims.back()});
    torch::NoGradGuard ng;
    for (auto _ : st) benchmark::DoNotOptimize(torch::add(a, b).data_ptr());
    bytes(st, 8.0 * static_cast<double>(a.numel()));
}
void BM_add_same_torch(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(1)));
    const auto& dims = st.range(0) ? kConv : kMlp;
    const auto a = ttensor(dims), b = ttensor(dims);
    torch::NoGradGuard ng;
    for (auto _ : st) benchmark::DoNotOptimize(torch::add(a, b).data_ptr());
    bytes(st, 12.0 * static_cast<double>(a.numel()));
}
void BM_add_outer_torch(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(0)));
    const auto a = ttensor({128, 1, 512}), b = ttensor({1, 64, 512});
    torch::NoGradGuard ng;
    for (auto _ : st) benchmark::DoNotOptimize(torch::add(a, b).data_ptr());
    bytes(st, 4.0 * 128 * 64 * 512);
}
void BM_relu_torch(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(1)));
    const auto a = ttensor(st.range(0) ? kConv : kMlp);
    torch::NoGradGuard ng;
    for (auto _ : st) benchmark::DoNotOptimize(torch::relu(a).data_ptr());
    bytes(st, 8.0 * static_cast<double>(a.numel()));
}
void BM_sum_torch(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(1)));
    const int which = static_cast<int>(st.range(0));
    const auto a = ttensor(which < 2 ? kMlp : kConv);
    const std::vector<std::int64_t> axes = which == 0   ? std::vector<std::int64_t>{1}
                                           : which == 1 ? std::vector<std::int64_t>{0}
                                           : which == 2 ? std::vector<std::int64_t>{0, 1, 2}
                                                        : std::vector<std::int64_t>{0, 1, 2, 3};
    torch::NoGradGuard ng;
    for (auto _ : st) benchmark::DoNotOptimize(a.sum(axes).data_ptr());
    bytes(st, 4.0 * static_cast<double>(a.numel()));
}
void BM_transpose_torch(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(1)));
    const int which = static_cast<int>(st.range(0));
    const auto a = which == 0   ? ttensor(kMlp)
                   : which == 1 ? ttensor(kConv)
                                : ttensor({128, 32, 28, 28});
    const std::vector<std::int64_t> perm = which == 0   ? std::vector<std::int64_t>{1, 0}
                                           : which == 1 ? std::vector<std::int64_t>{0, 3, 1, 2}
                                                        : std::vector<std::int64_t>{0, 2, 3, 1};
    torch::NoGradGuard ng;
    for (auto _ : st) benchmark::DoNotOptimize(a.permute(perm).contiguous().data_ptr());
    bytes(st, 8.0 * static_cast<double>(a.numel()));
}
void BM_concat_torch(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(1)));
    const auto& dims = st.range(0) ? kConv : kMlp;
    const std::vector<torch::Tensor> parts{ttensor(dims), ttensor(dims)};
    const auto axis = static_cast<std::int64_t>(dims.size()) - 1;
    torch::NoGradGuard ng;
    for (auto _ : st) benchmark::DoNotOptimize(torch::cat(parts, axis).data_ptr());
    bytes(st, 16.0 * static_cast<double>(parts[0].numel()));
}
#endif

// (shape selector, threads) pairs.
void shapes_x_threads(benchmark::internal::Benchmark* b, int shapes) {
    for (int s = 0; s < shapes; ++s) {
        for (int t : {1, 2}) b->Args({s, t});
    }
    b->UseRealTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace

BENCHMARK(BM_add_bias_graft)->Apply([](auto* b) { shapes_x_threads(b, 2); });
BENCHMARK(BM_add_same_graft)->Apply([](auto* b) { shapes_x_threads(b, 2); });
BENCHMARK(BM_add_outer_graft)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_relu_graft)->Apply([](auto* b) { shapes_x_threads(b, 2); });
BENCHMARK(BM_sum_graft)->Apply([](auto* b) { shapes_x_threads(b, 4); });
BENCHMARK(BM_transpose_graft)->Apply([](auto* b) { shapes_x_threads(b, 3); });
BENCHMARK(BM_concat_graft)->Apply([](auto* b) { shapes_x_threads(b, 2); });
#ifdef GRAFT_HAVE_TORCH
BENCHMARK(BM_add_bias_torch)->Apply([](auto* b) { shapes_x_threads(b, 2); });
BENCHMARK(BM_add_same_torch)->Apply([](auto* b) { shapes_x_threads(b, 2); });
BENCHMARK(BM_add_outer_torch)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_relu_torch)->Apply([](auto* b) { shapes_x_threads(b, 2); });
BENCHMARK(BM_sum_torch)->Apply([](auto* b) { shapes_x_threads(b, 4); });
BENCHMARK(BM_transpose_torch)->Apply([](auto* b) { shapes_x_threads(b, 3); });
BENCHMARK(BM_concat_torch)->Apply([](auto* b) { shapes_x_threads(b, 2); });
#endif

BENCHMARK_MAIN();
