// NN kernels against libtorch and oneDNN (each when found) and against Eigen's own GEMM, on the same
// thread count. oneDNN's cases run in a process of their own (--benchmark_filter=onednn; see
// reexec_for_peers); each builds its primitive once per thread count, weights reordered once.
//
// Every benchmark takes its thread count as the last argument and sets graft::set_num_threads,
// torch::set_num_threads and OpenBLAS's thread count (libtorch's BLAS) to it. GFLOP/s is reported for
// the products and convolutions; "eigen_gemm" is an Eigen::MatrixXf product of the same size on one
// thread (the practical peak of this build's Eigen), "eigen_contract" Eigen's tensor contraction on
// graft's thread pool.
//
//   build/benchmarks/bench_ops_nn --benchmark_filter='matmul'
#include <benchmark/benchmark.h>


#include <cstdint>
#include <vector>

#include <Eigen/Dense>

#include "graft/core.hpp"
#include "graft/ops/nn_all.hpp"

#ifdef GRAFT_HAVE_TORCH
#include <torch/torch.h>
#endif

#include "bench_support.hpp"

namespace {

using graft::bench::set_threads;
using graft::dtype;
using graft::tensor;

tensor random_f32(const graft::shape& s, std::uint32_t seed) {
    graft::ops::guarded_philox g(seed, 1);
    return graft::ops::random_uniform(s, dtype::float32, g);
}


void gflops(benchmark::State& st, double flops) {
    st.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// ---------------------------------------------------------------- MatMul [M,784] x [784,512]

void BM_matmul_graft(benchmark::State& st) {
    const std::int64_t M = st.range(0);
    set_threads(static_cast<int>(st.range(1)));
    const tensor a = random_f32({M, 784}, 1), b = random_f32({784, 512}, 2);
    for (auto _ : st) benchmark::DoNotOptimize(graft::ops::matmul(a, b).raw_data());
    gflops(st, 2.0 * M * 784 * 512);
}

void BM_matmul_eigen_gemm(benchmark::State& st) {
    const Eigen::Index M = st.range(0);
    set_threads(static_cast<int>(st.range(1)));
    const Eigen::MatrixXf a = Eigen::MatrixXf::Random(M, 784), b = Eigen::MatrixXf::Random(784, 512);
    Eigen::MatrixXf c(M, 512);
    for (auto _ : st) {
        c.noalias() = a * b;
        benchmark::DoNotOptimize(c.data());
    }
    gflops(st, 2.0 * static_cast<double>(M) * 784 * 512);
}

void BM_matmul_eigen_contract(benchmark::State& st) {
    const std::int64_t M = st.range(0);
    set_threads(static_cast<int>(st.range(1)));
    const tensor a = random_f32({M, 784}, 1), b = random_f32({784, 512}, 2);
    tensor c(dtype::float32, {M, 512});
    const Eigen::array<Eigen::IndexPair<Eigen::DenseIndex>, 1> dims{Eigen::IndexPair<Eigen::DenseIndex>(1, 0)};
    for (auto _ : st) {
        c.matrix<float>().device(graft::cpu_device()) = a.matrix<float>().contract(b.matrix<float>(), dims);
        benchmark::DoNotOptimize(c.raw_data());
    }
    gflops(st, 2.0 * M * 784 * 512);
}

#ifdef GRAFT_HAVE_TORCH
void BM_matmul_torch(benchmark::State& st) {
    const std::int64_t M = st.range(0);
    set_threads(static_cast<int>(st.range(1)));
    torch::NoGradGuard no_grad;
    const auto a = torch::rand({M, 784}), b = torch::rand({784, 512});
    for (auto _ : st) benchmark::DoNotOptimize(torch::mm(a, b).data_ptr());
    gflops(st, 2.0 * M * 784 * 512);
}
#endif

void matmul_args(benchmark::internal::Benchmark* b) {
    for (int th : {1, 2})
        for (int m : {128, 1}) b->Args({m, th});
}
BENCHMARK(BM_matmul_graft)->Apply(matmul_args)->UseRealTime();
BENCHMARK(BM_matmul_eigen_gemm)->Apply(matmul_args)->UseRealTime();
BENCHMARK(BM_matmul_eigen_contract)->Apply(matmul_args)->UseRealTime();
#ifdef GRAFT_HAVE_TORCH
BENCHMARK(BM_matmul_torch)->Apply(matmul_args)->UseRealTime();
#endif

#ifdef GRAFT_HAVE_ONEDNN
void BM_matmul_onednn(benchmark::State& st) {
    const std::int64_t M = st.range(0);
    set_threads(static_cast<int>(st.range(1)));
    const tensor a = random_f32({M, 784}, 1), b = random_f32({784, 512}, 2);
    graft::bench::onednn::matmul mm(M, 784, 512, b.data<float>());
    const float* pa = a.data<float>();
    for (auto _ : st) benchmark::DoNotOptimize(mm.run(pa));
    gflops(st, 2.0 * M * 784 * 512);
    st.SetLabel(mm.impl());
}
BENCHMARK(BM_matmul_onednn)->Apply(matmul_args)->UseRealTime();
#endif

// ---------------------------------------------------------------- Conv2D
// layer 0: LeNet conv1, 28x28x1 -> 6, 5x5 SAME; layer 1: LeNet conv2, 14x14x6 -> 16, 5x5 VALID;
// layer 2: 56x56x64 -> 64, 3x3 SAME (ResNet-like), batch 32.
struct conv_layer {
    std::int64_t n, hw, c, oc, k;
    bool same;
};
conv_layer layer(std::int64_t id, std::int64_t batch) {
    switch (id) {
        case 0: return {batch, 28, 1, 6, 5, true};
        case 1: return {batch, 14, 6, 16, 5, false};
        default: return {32, 56, 64, 64, 3, true};
    }
}
double conv_flops(const conv_layer& l) {
    const std::int64_t o = l.same ? l.hw : l.hw - l.k + 1;
    return 2.0 * static_cast<double>(l.n * o * o) * static_cast<double>(l.oc * l.c * l.k * l.k);
}

void BM_conv2d_graft_nhwc(benchmark::State& st) {
    const conv_layer l = layer(st.range(0), st.range(1));
    set_threads(static_cast<int>(st.range(2)));
    const tensor x = random_f32({l.n, l.hw, l.hw, l.c}, 3), w = random_f32({l.k, l.k, l.c, l.oc}, 4);
    const graft::ops::conv2d_params p{.padding = l.same ? "SAME" : "VALID"};
    for (auto _ : st) benchmark::DoNotOptimize(graft::ops::conv2d(x, w, p).raw_data());
    gflops(st, conv_flops(l));
}

void BM_conv2d_graft_nchw(benchmark::State& st) {
    const conv_layer l = layer(st.range(0), st.range(1));
    set_threads(static_cast<int>(st.range(2)));
    const tensor x = random_f32({l.n, l.c, l.hw, l.hw}, 3), w = random_f32({l.k, l.k, l.c, l.oc}, 4);
    const graft::ops::conv2d_params p{.padding = l.same ? "SAME" : "VALID", .data_format = "NCHW"};
    for (auto _ : st) benchmark::DoNotOptimize(graft::ops::conv2d(x, w, p).raw_data());
    gflops(st, conv_flops(l));
}

// The GEMM a convolution lowers to ([N*OH*OW, K*K*C] x [K*K*C, OC]) as one Eigen::MatrixXf product.
void BM_conv2d_eigen_gemm_equivalent(benchmark::State& st) {
    const conv_layer l = layer(st.range(0), st.range(1));
    set_threads(static_cast<int>(st.range(2)));
    const std::int64_t o = l.same ? l.hw : l.hw - l.k + 1;
    const Eigen::MatrixXf a = Eigen::MatrixXf::Random(l.n * o * o, l.k * l.k * l.c);
    const Eigen::MatrixXf b = Eigen::MatrixXf::Random(l.k * l.k * l.c, l.oc);
    Eigen::MatrixXf c(a.rows(), b.cols());
    for (auto _ : st) {
        c.noalias() = a * b;
        benchmark::DoNotOptimize(c.data());
    }
    gflops(st, conv_flops(l));
}

#ifdef GRAFT_HAVE_TORCH
void BM_conv2d_torch(benchmark::State& st) {
    const conv_layer l = layer(st.range(0), st.range(1));
    set_threads(static_cast<int>(st.range(2)));
    torch::NoGradGuard no_grad;
    const auto x = torch::rand({l.n, l.c, l.hw, l.hw}), w = torch::rand({l.oc, l.c, l.k, l.k});
    const std::int64_t pad = l.same ? l.k / 2 : 0;
    for (auto _ : st) benchmark::DoNotOptimize(torch::conv2d(x, w, {}, 1, pad).data_ptr());
    gflops(st, conv_flops(l));
}
#endif

#ifdef GRAFT_HAVE_ONEDNN
void BM_conv2d_onednn(benchmark::State& st) {
    const conv_layer l = layer(st.range(0), st.range(1));
    set_threads(static_cast<int>(st.range(2)));
    const tensor x = random_f32({l.n, l.hw, l.hw, l.c}, 3), w = random_f32({l.k, l.k, l.c, l.oc}, 4);
    graft::bench::onednn::conv2d conv(l.n, l.hw, l.hw, l.c, l.oc, l.k, l.same, w.data<float>());
    const float* px = x.data<float>();
    for (auto _ : st) benchmark::DoNotOptimize(conv.run(px));
    gflops(st, conv_flops(l));
    st.SetLabel(conv.impl());
}
#endif

void conv_args(benchmark::internal::Benchmark* b) {
    for (int th : {1, 2}) {
        for (int id : {0, 1})
            for (int batch : {1, 128}) b->Args({id, batch, th});
        b->Args({2, 32, th});
    }
}
BENCHMARK(BM_conv2d_graft_nhwc)->Apply(conv_args)->UseRealTime();
BENCHMARK(BM_conv2d_graft_nchw)->Apply(conv_args)->UseRealTime();
BENCHMARK(BM_conv2d_eigen_gemm_equivalent)->Apply(conv_args)->UseRealTime();
#ifdef GRAFT_HAVE_TORCH
BENCHMARK(BM_conv2d_torch)->Apply(conv_args)->UseRealTime();
#endif
#ifdef GRAFT_HAVE_ONEDNN
BENCHMARK(BM_conv2d_onednn)->Apply(conv_args)->UseRealTime();
#endif

// ---------------------------------------------------------------- MaxPool 2x2/2 on [128, 28, 28, 6]

void BM_maxpool_graft(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(1)));
    const bool nhwc = st.range(0) == 0;
    const tensor x = random_f32(nhwc ? graft::shape{128, 28, 28, 6} : graft::shape{128, 6, 28, 28}, 5);
    const graft::ops::pool_params p{.ksize = nhwc ? std::vector<std::int64_t>{1, 2, 2, 1} : std::vector<std::int64_t>{1, 1, 2, 2},
                                    .strides = nhwc ? std::vector<std::int64_t>{1, 2, 2, 1} : std::vector<std::int64_t>{1, 1, 2, 2},
                                    .padding = "VALID",
                                    .data_format = nhwc ? "NHWC" : "NCHW"};
    for (auto _ : st) benchmark::DoNotOptimize(graft::ops::max_pool(x, p).raw_data());
    st.SetBytesProcessed(st.iterations() * x.num_elements() * 4);
}
BENCHMARK(BM_maxpool_graft)->ArgsProduct({{0, 1}, {1, 2}})->UseRealTime();

#ifdef GRAFT_HAVE_TORCH
void BM_maxpool_torch(benchmark::State& st) {
    set_threads(static_cast<int>(st.range(0)));
    torch::NoGradGuard no_grad;
    const auto x = torch::rand({128, 6, 28, 28});
    for (auto _ : st) benchmark::DoNotOptimize(torch::max_pool2d(x, 2, 2).data_ptr());
    st.SetBytesProcessed(st.iterations() * x.numel() * 4);
}
BENCHMARK(BM_maxpool_torch)->Arg(1)->Arg(2)->UseRealTime();
#endif

}  // namespace

// The peers' environment (OMP_WAIT_POLICY, malloc thresholds): see graft::bench::reexec_for_peers.
int main(int argc, char** argv) { return graft::bench::peer_benchmark_main(argc, argv, "bench_ops_nn"); }
