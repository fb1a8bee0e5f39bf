// What the benchmark binaries share: one thread count for graft and its peers, seeded random
// weights, tensors handed to libtorch. Include it after the peers' headers (torch/torch.h,
// opencv2/dnn.hpp), which each binary includes under GRAFT_HAVE_TORCH / GRAFT_HAVE_OPENCV.
#pragma once

#include <dlfcn.h>

#include <cstdint>
#include <vector>

#include "graft/core/tensor.hpp"
#include "graft/core/threads.hpp"
#include "graft/ops/random.hpp"

namespace graft::bench {

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
