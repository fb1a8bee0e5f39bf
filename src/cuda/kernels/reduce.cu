// kernels/reduce.cu — device code of the reduce family (src/cuda/exec_reduce.cpp):
// reductions of a [K1, R, K2] view (a block per output when outputs are few or rows long and
// contiguous, else a thread per output), ArgMax/ArgMin (a thread per output), and the softmax
// cross-entropy ops (a block per row).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "graft/cuda/check.hpp"
#include "launch_reduce.hpp"

namespace graft::cuda::launch {

namespace {

constexpr int threads = 256;  // a power of two: block_reduce halves it

cudaStream_t as_stream(void* s) {
    return static_cast<cudaStream_t>(s);
}

unsigned blocks_for(std::int64_t n) {
    const std::int64_t b = (n + threads - 1) / threads;
    return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(b, 1 << 20)));
}
unsigned blocks_per_item(std::int64_t items) {
    return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(items, 1 << 20)));
}

__device__ double identity_of(int op) {
    switch (op) {
        case static_cast<int>(reduce_op::max):
            return -INFINITY;
        case static_cast<int>(reduce_op::min):
            return INFINITY;
        case static_cast<int>(reduce_op::prod):
            return 1.0;
        default:
            return 0.0;
    }
}

__device__ double combine(int op, double a, double b) {
    switch (op) {
        case static_cast<int>(reduce_op::max):
            if (isnan(a)) return a;
            if (isnan(b)) return b;
            return b > a ? b : a;
        case static_cast<int>(reduce_op::min):
            if (isnan(a)) return a;
            if (isnan(b)) return b;
            return b < a ? b : a;
        case static_cast<int>(reduce_op::prod):
            return a * b;
        default:
            return a + b;
    }
}

/// The output value of accumulator `acc` over R elements (Mean: float sum / float count, as the
/// CPU).
__device__ float finish(int op, double acc, std::int64_t R) {
    if (op == static_cast<int>(reduce_op::mean))
        return static_cast<float>(acc) / static_cast<float>(R);
    return static_cast<float>(acc);
}

struct combine_op {
    int op;
    __device__ double operator()(double a, double b) const { return combine(op, a, b); }
};
struct sum_op {
    __device__ double operator()(double a, double b) const { return a + b; }
};
struct max_op {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

/// The reduction of every thread's `v` over the block (all threads get it). Every thread of the
/// block must call it.
template <class T, class Op>
__device__ T block_reduce(T v, T* smem, Op f) {
    smem[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) smem[threadIdx.x] = f(smem[threadIdx.x], smem[threadIdx.x + s]);
        __syncthreads();
    }
    const T r = smem[0];
    __syncthreads();
    return r;
}

__global__ void reduce_block_kernel(const float* in, float* out, std::int64_t K1, std::int64_t R,
                                    std::int64_t K2, int op) {
    __shared__ double smem[threads];
    const std::int64_t n_out = K1 * K2;
    for (std::int64_t o = blockIdx.x; o < n_out; o += gridDim.x) {
        const std::int64_t k1 = o / K2, k2 = o % K2;
        const float* base = in + k1 * R * K2 + k2;
        double acc = identity_of(op);
        for (std::int64_t r = threadIdx.x; r < R; r += blockDim.x)
            acc = combine(op, acc, base[r * K2]);
        acc = block_reduce(acc, smem, combine_op{op});
        if (threadIdx.x == 0) out[o] = finish(op, acc, R);
    }
}

__global__ void reduce_thread_kernel(const float* in, float* out, std::int64_t K1, std::int64_t R,
                                     std::int64_t K2, int op) {
    const std::int64_t n_out = K1 * K2;
    for (std::int64_t o = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
         o < n_out; o += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        const std::int64_t k1 = o / K2, k2 = o % K2;
        double acc = identity_of(op);
        if (R > 0) {
            const float* base = in + k1 * R * K2 + k2;
            for (std::int64_t r = 0; r < R; ++r) acc = combine(op, acc, base[r * K2]);
        }
        out[o] = finish(op, acc, R);
    }
}

template <class Index>
__global__ void arg_reduce_kernel(const float* in, Index* out, std::int64_t outer, std::int64_t n,
                                  std::int64_t inner, bool is_max) {
    const std::int64_t total = outer * inner;
    for (std::int64_t t = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
         t < total; t += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        const std::int64_t o = t / inner, i = t % inner;
        const float* row = in + o * n * inner + i;
        float best = row[0];
        std::int64_t at = 0;
        for (std::int64_t a = 1; a < n; ++a) {
            const float v = row[a * inner];
            bool better;
            if (isnan(best))
                better = false;
            else if (isnan(v))
                better = true;
            else
                better = is_max ? v > best : v < best;
            if (better) {
                best = v;
                at = a;
            }
        }
        out[t] = static_cast<Index>(at);
    }
}

/// lse of row b with z_c = x_c - max(x) read through `at(c)`; every thread of the block calls it.
template <class At>
__device__ float row_logsumexp(At at, std::int64_t C, float* fmem, double* dmem, float& row_max) {
    float m = -INFINITY;
    for (std::int64_t c = threadIdx.x; c < C; c += blockDim.x) m = fmaxf(m, at(c));
    row_max = block_reduce(m, fmem, max_op{});
    double s = 0;
    for (std::int64_t c = threadIdx.x; c < C; c += blockDim.x) s += expf(at(c) - row_max);
    s = block_reduce(s, dmem, sum_op{});
    return logf(static_cast<float>(s));
}

struct strided_row {
    const float* p;
    std::int64_t stride;
    __device__ float operator()(std::int64_t c) const { return p[c * stride]; }
};

__global__ void softmax_xent_kernel(const float* features, const float* labels, float* loss,
                                    float* backprop, std::int64_t B, std::int64_t C,
                                    std::int64_t fb, std::int64_t fc, std::int64_t lb,
                                    std::int64_t lc) {
    __shared__ float fmem[threads];
    __shared__ double dmem[threads];
    for (std::int64_t b = blockIdx.x; b < B; b += gridDim.x) {
        const strided_row x{features + b * fb, fc};
        const float* y = labels + b * lb;
        float m;
        const float lse = row_logsumexp(x, C, fmem, dmem, m);
        double l = 0;
        for (std::int64_t c = threadIdx.x; c < C; c += blockDim.x) {
            const float z = x(c) - m;
            const float yc = y[c * lc];
            l += static_cast<double>(yc * (lse - z));
            backprop[b * C + c] = expf(z - lse) - yc;
        }
        l = block_reduce(l, dmem, sum_op{});
        if (threadIdx.x == 0) loss[b] = static_cast<float>(l);
    }
}

template <class Label>
__global__ void sparse_softmax_xent_kernel(const float* features, const Label* labels, float* loss,
                                           float* backprop, std::int64_t B, std::int64_t C) {
    __shared__ float fmem[threads];
    __shared__ double dmem[threads];
    for (std::int64_t b = blockIdx.x; b < B; b += gridDim.x) {
        const strided_row x{features + b * C, 1};
        const auto y = static_cast<std::int64_t>(labels[b]);
        float m;
        const float lse = row_logsumexp(x, C, fmem, dmem, m);
        const bool valid = y >= 0 && y < C;
        for (std::int64_t c = threadIdx.x; c < C; c += blockDim.x) {
            const float e = expf(x(c) - m - lse);
            backprop[b * C + c] = valid ? (c == y ? e - 1.f : e) : NAN;
        }
        if (threadIdx.x == 0) loss[b] = valid ? lse - (x(y) - m) : NAN;
    }
}

}  // namespace

void reduce_f32(const float* in, float* out, std::int64_t K1, std::int64_t R, std::int64_t K2,
                reduce_op op, void* stream) {
    const std::int64_t n_out = K1 * K2;
    if (n_out <= 0) return;
    const int o = static_cast<int>(op);
    // A block per output for long contiguous rows or few outputs; else a thread per output (reads
    // coalesced across threads when K2 > 1).
    if (R > 0 && (n_out < 2048 || (K2 == 1 && R >= 128))) {
        reduce_block_kernel<<<blocks_per_item(n_out), threads, 0, as_stream(stream)>>>(in, out, K1,
                                                                                       R, K2, o);
        GRAFT_CUDA_CHECK_LAUNCH("reduce_block_kernel");
    } else {
        reduce_thread_kernel<<<blocks_for(n_out), threads, 0, as_stream(stream)>>>(in, out, K1, R,
                                                                                   K2, o);
        GRAFT_CUDA_CHECK_LAUNCH("reduce_thread_kernel");
    }
}

void arg_reduce_f32(const float* in, void* out, bool out_int64, std::int64_t outer, std::int64_t n,
                    std::int64_t inner, bool is_max, void* stream) {
    const std::int64_t total = outer * inner;
    if (total <= 0 || n <= 0) return;
    if (out_int64) {
        arg_reduce_kernel<<<blocks_for(total), threads, 0, as_stream(stream)>>>(
            in, static_cast<std::int64_t*>(out), outer, n, inner, is_max);
    } else {
        arg_reduce_kernel<<<blocks_for(total), threads, 0, as_stream(stream)>>>(
            in, static_cast<std::int32_t*>(out), outer, n, inner, is_max);
    }
    GRAFT_CUDA_CHECK_LAUNCH("arg_reduce_kernel");
}

void softmax_xent_f32(const float* features, const float* labels, float* loss, float* backprop,
                      std::int64_t B, std::int64_t C, std::int64_t fb, std::int64_t fc,
                      std::int64_t lb, std::int64_t lc, void* stream) {
    if (B <= 0) return;
    if (C == 0) {
        GRAFT_CUDA_CHECK(cudaMemsetAsync(loss, 0, static_cast<std::size_t>(B) * sizeof(float),
                                         as_stream(stream)));
        return;
    }
    softmax_xent_kernel<<<blocks_per_item(B), threads, 0, as_stream(stream)>>>(
        features, labels, loss, backprop, B, C, fb, fc, lb, lc);
    GRAFT_CUDA_CHECK_LAUNCH("softmax_xent_kernel");
}

void sparse_softmax_xent_f32(const float* features, const void* labels, bool labels_int64,
                             float* loss, float* backprop, std::int64_t B, std::int64_t C,
                             void* stream) {
    if (B <= 0) return;
    if (labels_int64) {
        sparse_softmax_xent_kernel<<<blocks_per_item(B), threads, 0, as_stream(stream)>>>(
            features, static_cast<const std::int64_t*>(labels), loss, backprop, B, C);
    } else {
        sparse_softmax_xent_kernel<<<blocks_per_item(B), threads, 0, as_stream(stream)>>>(
            features, static_cast<const std::int32_t*>(labels), loss, backprop, B, C);
    }
    GRAFT_CUDA_CHECK_LAUNCH("sparse_softmax_xent_kernel");
}

}  // namespace graft::cuda::launch
