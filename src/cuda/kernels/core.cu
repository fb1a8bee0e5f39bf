// kernels/core.cu — the few device loops the core GPU kernels need (AssignAdd/AssignSub).
#include <algorithm>
#include <cstdint>
#include "graft/cuda/check.hpp"
#include "launch_core.hpp"

namespace graft::cuda::launch {

namespace {
__global__ void accumulate_kernel(float* dst, const float* src, std::int64_t n, float sign) {
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        dst[i] += sign * src[i];
    }
}
}  // namespace

void accumulate_f32(float* dst, const float* src, std::int64_t n, float sign, void* stream) {
    if (n <= 0) return;
    int threads = 256;
    auto blocks = static_cast<unsigned>(std::min<std::int64_t>((n + threads - 1) / threads, 65535));
    accumulate_kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(dst, src, n, sign);
    GRAFT_CUDA_CHECK(cudaGetLastError());
}

}  // namespace graft::cuda::launch
