// bench_gpu — graft's GPU path timed on the workloads, printed as one table (ms or µs per
// step). benchmarks/peers/torch_gpu.py times PyTorch on the same models and shapes; run both with
// benchmarks/gpu/run_all.sh, which prints the ratios. Without a GPU (or without graft::cuda) it says so
// and exits 0.
//
//   mlp_train_b1024      MLP 784-512-512-10, SGD step, batch 1024
//   resnet18_train_b128  ResNet-18 (ImageNet shapes, 224x224x3, FusedBatchNormV3), momentum step, batch 128
//   gemm_8192            float32 8192x8192x8192 MatMul through a session, and cuBLAS called directly
//   gemm_8192_bf16       the same in bfloat16 (fp32 accumulation), through a session and cuBLAS
//   launch_10_nodes      a 10-node elementwise graph on 16 floats: per-run overhead
//
//   bench_gpu [name]     only the workloads whose name holds `name`
//   GRAFT_BENCH_PROFILE=1 ncu --profile-from-start off bench_gpu resnet18
//                        profiles one training step after the timed ones (cudaProfilerStart/Stop)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/variables.hpp"
#ifdef GRAFT_WITH_CUDA
#include <cublas_v2.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include "graft/device/cuda_runtime.hpp"
#endif

using graft::dtype;
using graft::endpoint;
using graft::tensor;

namespace {

tensor filled(const graft::shape& s, float scale, std::uint32_t seed) {
    tensor t(dtype::float32, s);
    std::uint32_t x = seed * 2654435761u + 1u;
    float* p = t.data<float>();
    for (std::int64_t i = 0; i < t.num_elements(); ++i) {
        x = x * 1664525u + 1013904223u;
        p[i] = scale * (static_cast<float>(x >> 8) / static_cast<float>(1u << 24) * 2.f - 1.f);
    }
    return t;
}

graft::attr_value ints(std::vector<std::int64_t> v) { return graft::attr_value::list_of(std::move(v)); }

struct net {
    graft::meta_graph mg;
    endpoint loss;
    std::string train, init;
};

endpoint dense(graft::graph_builder& b, graft::meta_graph& mg, endpoint x, std::int64_t in, std::int64_t out,
               const std::string& name, bool relu) {
    auto w = graft::train::create_variable(mg, b, name + "/kernel", filled({in, out}, 1.f / std::sqrt(float(in)), 7));
    auto bias = graft::train::create_variable(mg, b, name + "/bias", tensor(dtype::float32, {out}));
    auto y = b.op("BiasAdd", {b.op("MatMul", {x, w.value}), bias.value});
    return relu ? b.op("Relu", {y}) : y;
}

endpoint loss_of(graft::graph_builder& b, endpoint logits, endpoint labels) {
    auto xent = b.op_n("SparseSoftmaxCrossEntropyWithLogits", {logits, labels});
    return b.op("Mean", {xent[0], b.constant(tensor::from_vector<std::int32_t>({0}))});
}

net mlp(std::int64_t batch) {
    net m;
    graft::graph_builder b(m.mg.graph);
    auto x = b.placeholder("x", dtype::float32, graft::shape{batch, 784});
    auto y = b.placeholder("y", dtype::int64, graft::shape{batch});
    auto h = dense(b, m.mg, dense(b, m.mg, x, 784, 512, "d0", true), 512, 512, "d1", true);
    m.loss = loss_of(b, dense(b, m.mg, h, 512, 10, "d2", false), y);
    m.train = graft::train::gradient_descent(0.01).minimize(m.mg, m.loss);
    m.init = graft::train::global_variables_initializer(m.mg);
    return m;
}

struct resnet_builder {
    graft::graph_builder& b;
    graft::meta_graph& mg;
    int n = 0;
    endpoint conv(endpoint x, std::int64_t k, std::int64_t cin, std::int64_t cout, std::int64_t stride) {
        std::string name = "conv" + std::to_string(n++);
        auto w = graft::train::create_variable(mg, b, name + "/kernel",
                                               filled({k, k, cin, cout}, std::sqrt(2.f / float(k * k * cin)), n));
        return b.op("Conv2D", {x, w.value}, {{"strides", ints({1, stride, stride, 1})}, {"padding", "SAME"}});
    }
    endpoint bn(endpoint x, std::int64_t c, bool relu) {
        std::string name = "bn" + std::to_string(n++);
        tensor ones(dtype::float32, {c});
        for (std::int64_t i = 0; i < c; ++i) ones.data<float>()[i] = 1.f;
        auto gamma = graft::train::create_variable(mg, b, name + "/gamma", ones);
        auto beta = graft::train::create_variable(mg, b, name + "/beta", tensor(dtype::float32, {c}));
        auto empty = b.constant(tensor(dtype::float32, {0}));
        auto y = b.op_n("FusedBatchNormV3", {x, gamma.value, beta.value, empty, empty},
                        {{"is_training", true}, {"epsilon", 1e-3f}})[0];
        return relu ? b.op("Relu", {y}) : y;
    }
    endpoint block(endpoint x, std::int64_t cin, std::int64_t cout, std::int64_t stride) {
        auto y = bn(conv(bn(conv(x, 3, cin, cout, stride), cout, true), 3, cout, cout, 1), cout, false);
        auto shortcut = (stride != 1 || cin != cout) ? bn(conv(x, 1, cin, cout, stride), cout, false) : x;
        return b.op("Relu", {b.op("AddV2", {y, shortcut})});
    }
};

net resnet18(std::int64_t batch) {
    net m;
    graft::graph_builder b(m.mg.graph);
    resnet_builder r{b, m.mg};
    auto x = b.placeholder("x", dtype::float32, graft::shape{batch, 224, 224, 3});
    auto y = b.placeholder("y", dtype::int64, graft::shape{batch});
    auto h = r.bn(r.conv(x, 7, 3, 64, 2), 64, true);
    h = b.op("MaxPool", {h}, {{"ksize", ints({1, 3, 3, 1})}, {"strides", ints({1, 2, 2, 1})}, {"padding", "SAME"}});
    std::int64_t c = 64;
    for (std::int64_t cout : {64, 128, 256, 512}) {
        h = r.block(h, c, cout, cout == 64 ? 1 : 2);
        h = r.block(h, cout, cout, 1);
        c = cout;
    }
    h = b.op("Mean", {h, b.constant(tensor::from_vector<std::int32_t>({1, 2}))});
    m.loss = loss_of(b, dense(b, m.mg, h, 512, 1000, "fc", false), y);
    m.train = graft::train::momentum(0.01, 0.9).minimize(m.mg, m.loss);
    m.init = graft::train::global_variables_initializer(m.mg);
    return m;
}

/// Median-free simple timing: warm up, then the mean of `reps` calls of f, after a device sync.
double ms_per(int warmup, int reps, const std::function<void()>& f, const std::function<void()>& sync) {
    for (int i = 0; i < warmup; ++i) f();
    sync();
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) f();
    sync();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / reps;
}

double train_step_ms(const net& m, std::int64_t batch, const graft::shape& xs, int classes, int reps) {
    graft::exec::session_options o;
    o.default_device = "/device:GPU:0";
    graft::exec::session s(m.mg.graph, o);
    s.run({}, {}, {m.init});
    tensor x = filled(xs, 1.f, 3);
    tensor y(dtype::int64, {batch});
    for (std::int64_t i = 0; i < batch; ++i) y.data<std::int64_t>()[i] = i % classes;
    // Inputs fed as host tensors each step, like a training loop that reads batches on the CPU.
    auto step = [&] { s.run({{"x:0", x}, {"y:0", y}}, {}, {m.train}); };
    double ms = ms_per(3, reps, step, [&] { s.state().synchronize(); });
#ifdef GRAFT_WITH_CUDA
    if (std::getenv("GRAFT_BENCH_PROFILE")) {  // one more step inside the profiler's range (ncu --profile-from-start off)
        cudaProfilerStart();
        step();
        s.state().synchronize();
        cudaProfilerStop();
    }
#endif
    return ms;
}

}  // namespace

#ifdef GRAFT_WITH_CUDA
/// True when `name` is to run: no filter on the command line, or the filter is part of the name.
static bool wanted(int argc, char** argv, const char* name) {
    return argc < 2 || std::string(name).find(argv[1]) != std::string::npos;
}
#endif

#ifdef GRAFT_WITH_CUDA
/// An 8192^3 MatMul of `t` operands (fp32 accumulation) through a session (a = b = constants on the
/// GPU), then cuBLAS's own rate on the same shapes, called directly on a graft stream.
static void gemm_8192(dtype t, const char* name, const char* what) {
    const std::int64_t n = 8192;
    auto of_type = [&](const tensor& f) {
        if (t == dtype::float32) return f;
        tensor r(t, f.shape());
        for (std::int64_t i = 0; i < f.num_elements(); ++i)
            r.data<graft::bfloat16>()[i] = graft::bfloat16(f.data<float>()[i]);
        return r;
    };
    graft::graph g;
    graft::graph_builder b(g);
    b.op("MatMul", {b.constant(of_type(filled({n, n}, 1.f, 1)), "a"), b.constant(of_type(filled({n, n}, 1.f, 2)), "c")},
         {}, "p");
    graft::exec::session_options o;
    o.default_device = "/device:GPU:0";
    graft::exec::session s(g, o);
    const double ms = ms_per(3, 20, [&] { s.run({}, {}, {"p"}); }, [&] { s.state().synchronize(); });
    std::printf("%-22s %10.3f ms  (%.1f TFLOP/s %s)\n", name, ms, 2.0 * n * n * n / (ms * 1e-3) / 1e12, what);
    graft::cuda::stream st(0);
    auto A = graft::cuda::zeros(t, {n, n}, st), B = graft::cuda::zeros(t, {n, n}, st), C = graft::cuda::empty(t, {n, n}, st);
    auto h = static_cast<cublasHandle_t>(st.cublas());
    const cudaDataType_t ty = t == dtype::float32 ? CUDA_R_32F : CUDA_R_16BF;
    const float one = 1.f, zero = 0.f;
    const int ni = static_cast<int>(n);
    const double raw = ms_per(3, 20, [&] {
        cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, B.raw_data(), ty, ni, A.raw_data(), ty, ni, &zero,
                     C.raw_data(), ty, ni, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    }, [&] { st.synchronize(); });
    std::printf("%-22s %10.3f ms  (graft at %.0f%% of cuBLAS)\n", (std::string(name) + "_cublas").c_str(), raw,
                100.0 * raw / ms);
}
#endif

int main(int argc, char** argv) {
#ifndef GRAFT_WITH_CUDA
    (void)argc;
    (void)argv;
    std::puts("bench_gpu: graft was built without graft::cuda (CUDA not found): nothing to time");
    return 0;
#else
    graft::cuda::install();
    if (graft::cuda::device_count() == 0) {
        std::puts("bench_gpu: no CUDA device: nothing to time (run it on a GPU machine, e.g. via benchmarks/gpu/run_all.sh)");
        return 0;
    }
    auto props = graft::cuda::properties(0);
    std::printf("device: %s (sm_%d%d, %zu MiB)\n", props.name.c_str(), props.major, props.minor, props.total_memory >> 20);
    std::printf("%-22s %12s\n", "workload", "graft");

    if (wanted(argc, argv, "mlp_train_b1024"))
        std::printf("%-22s %10.3f ms\n", "mlp_train_b1024", train_step_ms(mlp(1024), 1024, {1024, 784}, 10, 50));
    if (wanted(argc, argv, "resnet18_train_b128"))
        std::printf("%-22s %10.3f ms\n", "resnet18_train_b128", train_step_ms(resnet18(128), 128, {128, 224, 224, 3}, 1000, 10));

    if (wanted(argc, argv, "gemm_8192")) gemm_8192(dtype::float32, "gemm_8192", "float32, TF32 off");
    if (wanted(argc, argv, "gemm_8192_bf16")) gemm_8192(dtype::bfloat16, "gemm_8192_bf16", "bf16, fp32 accumulation");
    if (wanted(argc, argv, "launch_10_nodes")) {  // Launch overhead: 10 elementwise nodes on 16 floats, fetched on the host.
        graft::graph g;
        graft::graph_builder b(g);
        endpoint x = b.placeholder("x", dtype::float32, graft::shape{16});
        for (int i = 0; i < 10; ++i) x = b.op(i % 2 ? "Relu" : "Neg", {x});
        graft::exec::session_options o;
        o.default_device = "/device:GPU:0";
        graft::exec::session s(g, o);
        tensor xv = filled({16}, 1.f, 9);
        std::string out = x.str();
        double ms = ms_per(100, 2000, [&] { s.run({{"x:0", xv}}, {out}); }, [] {});
        std::printf("%-22s %10.1f us per run (feed + 10 kernels + fetch)\n", "launch_10_nodes", ms * 1e3);
    }
    return 0;
#endif
}
