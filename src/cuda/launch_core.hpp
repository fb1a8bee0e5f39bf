// src/cuda/launch_core.hpp — launchers of kernels/core.cu (raw device pointers, stream as void*).
#pragma once

#include <cstdint>

namespace graft::cuda::launch {
/// dst[i] += sign * src[i] for i < n (float32), queued on `stream`.
void accumulate_f32(float* dst, const float* src, std::int64_t n, float sign, void* stream);
}  // namespace graft::cuda::launch
