// What the benchmark binaries share: one thread count for graft and its peers, the peers' process
// environment, the machine context printed with every run (CPU, ISA, limits in force), seeded
// random weights, tensors handed to libtorch. Include it after the peers' headers (torch/torch.h,
// opencv2/dnn.hpp), which each binary includes under GRAFT_HAVE_TORCH / GRAFT_HAVE_OPENCV;
// onednn_peer.hpp comes with it under GRAFT_HAVE_ONEDNN.
#pragma once

#include <dlfcn.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "graft/core/tensor.hpp"
#include "graft/core/threads.hpp"
#include "graft/exec/session.hpp"
#include "graft/ops/gemm.hpp"
#include "graft/ops/random.hpp"

#ifdef GRAFT_HAVE_ONEDNN
#include "onednn_peer.hpp"
#endif

namespace graft::bench {

/// The environment the peers run best in, which their libraries read only when they load, so the
/// program re-executes itself once with it (variables the caller set are kept):
/// - OMP_WAIT_POLICY=PASSIVE: libtorch's OpenMP workers spin after each parallel region (libgomp's
///   default) and fight OpenBLAS's own pthreads for the cores: on 2 cores torch's MLP at batch 128
///   on two threads took ~50 ms instead of ~5 ms. oneDNN is the opposite: its primitives are OpenMP
///   regions back to back, and under PASSIVE each one sleeps and wakes its workers (MLP at batch 1 on
///   two threads 0.034 -> 0.55 ms). So a run whose --benchmark_filter names "onednn" keeps libgomp's
///   default policy, any other run gets PASSIVE; `make bench-report` runs the oneDNN cases apart.
/// - GLIBC_TUNABLES mmap_threshold/trim_threshold at 256/512 MiB: with OpenBLAS loaded, glibc
///   served libtorch's large tensors with fresh mmap'd pages every step (a page fault per 4 KiB:
///   torch's LeNet training step 7.2 vs 10.6 ms). graft keeps its own freed blocks (see
///   graft::set_host_cache_limit), so this helps only the peers.
inline bool filter_names_onednn(char** argv) {
    for (char** a = argv + 1; *a != nullptr; ++a) {
        const std::string arg(*a);
        if (arg.rfind("--benchmark_filter=", 0) == 0 && arg.find("onednn") != std::string::npos) return true;
    }
    return false;
}
inline void reexec_for_peers(char** argv, const char* program) {
    if (std::getenv("GRAFT_BENCH_PEER_ENV") != nullptr) return;  // this is the re-executed program
    setenv("GRAFT_BENCH_PEER_ENV", "1", 1);
    if (std::getenv("OMP_WAIT_POLICY") == nullptr && !filter_names_onednn(argv)) setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
    if (std::getenv("GLIBC_TUNABLES") == nullptr)
        setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=536870912", 1);
    execv("/proc/self/exe", argv);  // returns only on failure: run as we are
    std::fprintf(stderr, "%s: could not re-execute with the peers' environment (OMP_WAIT_POLICY, GLIBC_TUNABLES)\n",
                 program);
}

/// The first line of /proc/cpuinfo that starts with `key`, after its colon ("" when absent).
inline std::string cpuinfo_field(const char* key) {
    std::FILE* f = std::fopen("/proc/cpuinfo", "r");
    if (f == nullptr) return {};
    char line[8192];
    std::string r;
    while (std::fgets(line, sizeof line, f) != nullptr) {
        const std::string l(line);
        if (l.rfind(key, 0) != 0) continue;
        const auto colon = l.find(':');
        if (colon != std::string::npos) r = l.substr(colon + 1);
        while (!r.empty() && (r.front() == ' ')) r.erase(r.begin());
        while (!r.empty() && (r.back() == '\n' || r.back() == ' ')) r.pop_back();
        break;
    }
    std::fclose(f);
    return r;
}

/// What the figures depend on, printed in Google Benchmark's context header (and its JSON): the CPU
/// model, its vector ISA flags, graft's micro-kernel family in force and every ISA limit set
/// (GRAFT_MAX_CPU_ISA, OPENBLAS_CORETYPE for libtorch's BLAS, ONEDNN_MAX_CPU_ISA, OPENCV_CPU_DISABLE)
/// and OMP_WAIT_POLICY, oneDNN's version and ISA, and the core OpenBLAS's kernels are for. Call
/// before benchmark::RunSpecifiedBenchmarks.
inline void add_machine_context() {
    benchmark::AddCustomContext("cpu_model", cpuinfo_field("model name"));
    std::string flags = " " + cpuinfo_field("flags") + " ", isa;
    for (const char* f : {"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "amx_tile"})
        if (flags.find(std::string(" ") + f + " ") != std::string::npos) isa += (isa.empty() ? "" : " ") + std::string(f);
    benchmark::AddCustomContext("cpu_isa", isa);
    const char* kernel[] = {"portable", "avx2", "avx512"};
    benchmark::AddCustomContext("graft_kernels", kernel[static_cast<int>(graft::ops::gemm::active_kernel())]);
    std::string limits;
    for (const char* v : {"GRAFT_MAX_CPU_ISA", "OPENBLAS_CORETYPE", "ONEDNN_MAX_CPU_ISA", "OPENCV_CPU_DISABLE", "OMP_WAIT_POLICY"}) {
        if (const char* e = std::getenv(v)) limits += (limits.empty() ? "" : " ") + std::string(v) + "=" + e;
    }
    benchmark::AddCustomContext("isa_limits", limits.empty() ? "none" : limits);
#ifdef GRAFT_HAVE_ONEDNN
    benchmark::AddCustomContext("onednn", onednn::version_string() + ", ISA " + onednn::isa_string());
#endif
    // The kernels libtorch's OpenBLAS chose for this CPU: on a CPU it does not know it falls back to
    // an older core's (0.3.21 ran Prescott's SSE3 sgemm on an Emerald Rapids Xeon, libtorch's
    // native figures 2-5x its AVX2-run ones, where OPENBLAS_CORETYPE=Haswell picks AVX2 kernels).
    using corename_fn = char* (*)();
    if (auto f = reinterpret_cast<corename_fn>(dlsym(RTLD_DEFAULT, "openblas_get_corename"))) {
        if (const char* core = f()) benchmark::AddCustomContext("openblas_core", core);
    }
}

/// The main() of a benchmark binary with peers: re-executes itself in the peers' environment
/// (reexec_for_peers), records the machine context (add_machine_context), runs the benchmarks.
inline int peer_benchmark_main(int argc, char** argv, const char* program) {
#if defined(GRAFT_HAVE_TORCH) || defined(GRAFT_HAVE_OPENCV) || defined(GRAFT_HAVE_ONEDNN)
    reexec_for_peers(argv, program);
#else
    (void)program;
#endif
    benchmark::Initialize(&argc, argv);
    add_machine_context();
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}

/// Runs graft and every linked peer on `n` threads: graft's pool, libtorch's intra-op pool,
/// OpenCV's (in binaries that include its headers), and OpenBLAS's own pthreads (libtorch's
/// BLAS), when present.
inline void set_threads(int n) {
    graft::set_num_threads(n);
#ifdef GRAFT_HAVE_TORCH
    torch::set_num_threads(n);
#endif
#if defined(GRAFT_HAVE_OPENCV) && defined(CV_VERSION)  // binaries that include OpenCV's headers
    cv::setNumThreads(n);
#endif
    using setter = void (*)(int);
    if (auto f = reinterpret_cast<setter>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) f(n);
    // OpenMP's (oneDNN's runtime, and libtorch's when linked: the same libgomp)
    if (auto f = reinterpret_cast<setter>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"))) f(n);
}

/// With session_options::collect_step_stats on (GRAFT_BENCH_STEP_STATS=1 in bench_models, bench_rnn and
/// bench_train): each node's kernel time per run over `runs` runs, longest first, to stderr.
inline void print_step_stats(graft::exec::session& s, const std::string& title, std::int64_t runs) {
    const auto stats = s.state().step_stats();
    if (stats.empty() || runs <= 0) return;
    double sum = 0;
    for (const auto& e : stats) sum += static_cast<double>(e.total.count());
    std::fprintf(stderr, "%s: %.1f us of kernels per run\n", title.c_str(), sum * 1e-3 / static_cast<double>(runs));
    for (const auto& e : stats) {
        const double us = static_cast<double>(e.total.count()) * 1e-3 / static_cast<double>(runs);
        if (us < 0.1) continue;
        std::fprintf(stderr, "  %9.1f us  %-24s %s\n", us, e.op.c_str(), e.node.c_str());
    }
}

/// float32 uniform in [-scale, scale) from graft's Philox with a fixed seed.
inline graft::tensor random_f32(const graft::shape& s, std::uint32_t seed, float scale) {
    graft::ops::guarded_philox g(seed, 1);
    graft::tensor t = graft::ops::random_uniform(s, graft::dtype::float32, g);
    for (float* p = t.data<float>(), *e = p + t.num_elements(); p != e; ++p) *p = (*p * 2.f - 1.f) * scale;
    return t;
}

#ifdef GRAFT_HAVE_TORCH
/// A float32 tensor copied into a libtorch tensor of the same shape.
inline torch::Tensor to_torch(const graft::tensor& t) {
    std::vector<std::int64_t> dims(t.shape().dims().begin(), t.shape().dims().end());
    return torch::from_blob(t.data<float>(), dims, torch::kFloat32).clone();
}
#endif

}  // namespace graft::bench
