// What the benchmark binaries share: one thread count for graft and its peers, seeded random
// weights, tensors handed to libtorch. Include it after the peers' headers (torch/torch.h,
// opencv2/dnn.hpp), which each binary includes under GRAFT_HAVE_TORCH / GRAFT_HAVE_OPENCV.
#pragma once

#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "graft/core/tensor.hpp"
#include "graft/core/threads.hpp"
#include "graft/ops/random.hpp"

namespace graft::bench {

/// The environment the peers run best in, which their libraries read only when they load, so the
/// program re-executes itself once with it (unless the caller set the variables):
/// - OMP_WAIT_POLICY=PASSIVE: libtorch's OpenMP workers spin after each parallel region (libgomp's
///   default) and fight OpenBLAS's own pthreads for the cores: on 2 cores torch's MLP at batch 128
///   on two threads took ~50 ms instead of ~5 ms.
/// - GLIBC_TUNABLES mmap_threshold/trim_threshold at 256/512 MiB: with OpenBLAS loaded, glibc
///   served libtorch's large tensors with fresh mmap'd pages every step (a page fault per 4 KiB:
///   torch's LeNet training step 7.2 vs 10.6 ms). graft keeps its own freed blocks (see
///   graft::set_host_cache_limit), so this helps only the peers.
inline void reexec_for_peers(char** argv, const char* program) {
    if (std::getenv("OMP_WAIT_POLICY") != nullptr && std::getenv("GLIBC_TUNABLES") != nullptr) return;
    if (std::getenv("OMP_WAIT_POLICY") == nullptr) setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
    if (std::getenv("GLIBC_TUNABLES") == nullptr)
        setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=536870912", 1);
    execv("/proc/self/exe", argv);  // returns only on failure: run as we are
    std::fprintf(stderr, "%s: could not re-execute with the peers' environment (OMP_WAIT_POLICY, GLIBC_TUNABLES)\n",
                 program);
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
