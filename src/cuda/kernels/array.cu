// kernels/array.cu — device code of the array family (src/cuda/exec_array.cpp): one strided copy
// that serves Transpose, Slice, StridedSlice, Concat, Pack, Unpack, Split, Pad and Tile; fills;
// GatherV2; OneHot. One thread per output element (grid-stride loops, int64 index math).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "graft/cuda/check.hpp"
#include "launch_array.hpp"

namespace graft::cuda::launch {

namespace {

constexpr int threads = 256;

/// Blocks for n elements (grid-stride loops cover the rest).
unsigned blocks_for(std::int64_t n) {
    const std::int64_t b = (n + threads - 1) / threads;
    return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(b, 1 << 20)));
}

cudaStream_t as_stream(void* s) {
    return static_cast<cudaStream_t>(s);
}

struct copy_geometry {
    int rank;
    std::int64_t extent[max_copy_rank];
    std::int64_t dst_stride[max_copy_rank];
    std::int64_t src_stride[max_copy_rank];
};

template <class U>
__global__ void strided_copy_kernel(U* dst, const U* src, copy_geometry g, std::int64_t n) {
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        std::int64_t rem = i, d_off = 0, s_off = 0;
        for (int d = g.rank - 1; d >= 0; --d) {
            const std::int64_t e = g.extent[d];
            const std::int64_t k = rem % e;
            rem /= e;
            d_off += k * g.dst_stride[d];
            s_off += k * g.src_stride[d];
        }
        dst[d_off] = src[s_off];
    }
}

template <class U>
void launch_copy(void* dst, const void* src, const copy_geometry& g, std::int64_t n, void* stream) {
    strided_copy_kernel<U><<<blocks_for(n), threads, 0, as_stream(stream)>>>(
        static_cast<U*>(dst), static_cast<const U*>(src), g, n);
    GRAFT_CUDA_CHECK_LAUNCH("strided_copy_kernel");
}

__global__ void fill_kernel(float* dst, std::int64_t n, float v) {
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        dst[i] = v;
    }
}

__global__ void fill_from_device_kernel(float* dst, std::int64_t n, const float* v) {
    const float x = *v;
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        dst[i] = x;
    }
}

__device__ std::int64_t load_index(const void* p, int kind, std::int64_t i) {
    if (kind == 8) return static_cast<const std::int64_t*>(p)[i];
    if (kind == 4) return static_cast<const std::int32_t*>(p)[i];
    return static_cast<const std::uint8_t*>(p)[i];
}

__global__ void gather_kernel(const float* params, const void* indices, int kind, float* out,
                              std::int64_t outer, std::int64_t n, std::int64_t inner,
                              std::int64_t per_batch, std::int64_t total) {
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
         i < total; i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        const std::int64_t col = i % inner;
        const std::int64_t row = i / inner;  // (b * outer + o) * per_batch + j
        const std::int64_t j = row % per_batch;
        const std::int64_t bo = row / per_batch;  // b * outer + o
        const std::int64_t b = bo / outer;
        const std::int64_t k = load_index(indices, kind, b * per_batch + j);
        out[i] = (k >= 0 && k < n) ? params[(bo * n + k) * inner + col] : 0.f;
    }
}

__global__ void one_hot_kernel(const void* indices, int kind, float* out, std::int64_t depth,
                               std::int64_t suffix, const float* on, const float* off,
                               std::int64_t total) {
    const float on_v = *on, off_v = *off;
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
         i < total; i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        const std::int64_t s = i % suffix;
        const std::int64_t t = i / suffix;
        const std::int64_t d = t % depth;
        const std::int64_t p = t / depth;
        out[i] = load_index(indices, kind, p * suffix + s) == d ? on_v : off_v;
    }
}

}  // namespace

void strided_copy(void* dst, const std::int64_t* dst_strides, const void* src,
                  const std::int64_t* src_strides, const std::int64_t* extents, int rank,
                  int elem_bytes, void* stream) {
    if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4 && elem_bytes != 8) {
        throw std::invalid_argument("strided_copy: elements of " + std::to_string(elem_bytes) +
                                    " bytes (handled: 1, 2, 4, 8)");
    }
    // Simplify: drop size-1 dims, then merge each dim into its outer neighbour where both sides
    // stay contiguous.
    std::int64_t ext[64], ds[64], ss[64];
    int r = 0;
    std::int64_t n = 1;
    for (int d = 0; d < rank; ++d) {
        if (extents[d] == 0) return;
        n *= extents[d];
        if (extents[d] == 1) continue;
        if (r >= 64) throw std::invalid_argument("strided_copy: more than 64 dims");
        ext[r] = extents[d];
        ds[r] = dst_strides[d];
        ss[r] = src_strides[d];
        ++r;
    }
    int m = 0;
    for (int d = 0; d < r; ++d) {
        if (m > 0 && ds[m - 1] == ds[d] * ext[d] && ss[m - 1] == ss[d] * ext[d]) {
            ext[m - 1] *= ext[d];
            ds[m - 1] = ds[d];
            ss[m - 1] = ss[d];
        } else {
            ext[m] = ext[d];
            ds[m] = ds[d];
            ss[m] = ss[d];
            ++m;
        }
    }
    if (m == 0 || (m == 1 && ds[0] == 1 && ss[0] == 1)) {  // one contiguous block
        GRAFT_CUDA_CHECK(cudaMemcpyAsync(dst, src, static_cast<std::size_t>(n) * elem_bytes,
                                         cudaMemcpyDeviceToDevice, as_stream(stream)));
        return;
    }
    if (m > max_copy_rank) {
        throw std::invalid_argument("strided_copy: " + std::to_string(m) +
                                    " dims after simplification (at most " +
                                    std::to_string(max_copy_rank) + ")");
    }
    copy_geometry g{};
    g.rank = m;
    for (int d = 0; d < m; ++d) {
        g.extent[d] = ext[d];
        g.dst_stride[d] = ds[d];
        g.src_stride[d] = ss[d];
    }
    switch (elem_bytes) {
        case 1:
            launch_copy<std::uint8_t>(dst, src, g, n, stream);
            break;
        case 2:
            launch_copy<std::uint16_t>(dst, src, g, n, stream);
            break;
        case 4:
            launch_copy<std::uint32_t>(dst, src, g, n, stream);
            break;
        default:
            launch_copy<unsigned long long>(dst, src, g, n, stream);
            break;
    }
}

void fill_f32(float* dst, std::int64_t n, float value, void* stream) {
    if (n <= 0) return;
    fill_kernel<<<blocks_for(n), threads, 0, as_stream(stream)>>>(dst, n, value);
    GRAFT_CUDA_CHECK_LAUNCH("fill_kernel");
}

void fill_from_device_f32(float* dst, std::int64_t n, const float* value, void* stream) {
    if (n <= 0) return;
    fill_from_device_kernel<<<blocks_for(n), threads, 0, as_stream(stream)>>>(dst, n, value);
    GRAFT_CUDA_CHECK_LAUNCH("fill_from_device_kernel");
}

void gather_f32(const float* params, const void* indices, index_kind kind, float* out,
                std::int64_t batch, std::int64_t outer, std::int64_t n, std::int64_t inner,
                std::int64_t per_batch, void* stream) {
    const std::int64_t total = batch * outer * per_batch * inner;
    if (total <= 0) return;
    gather_kernel<<<blocks_for(total), threads, 0, as_stream(stream)>>>(
        params, indices, static_cast<int>(kind), out, outer, n, inner, per_batch, total);
    GRAFT_CUDA_CHECK_LAUNCH("gather_kernel");
}

void one_hot_f32(const void* indices, index_kind kind, float* out, std::int64_t prefix,
                 std::int64_t depth, std::int64_t suffix, const float* on, const float* off,
                 void* stream) {
    const std::int64_t total = prefix * depth * suffix;
    if (total <= 0) return;
    one_hot_kernel<<<blocks_for(total), threads, 0, as_stream(stream)>>>(
        indices, static_cast<int>(kind), out, depth, suffix, on, off, total);
    GRAFT_CUDA_CHECK_LAUNCH("one_hot_kernel");
}

}  // namespace graft::cuda::launch
