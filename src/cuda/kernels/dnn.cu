// kernels/dnn.cu — device helpers of the nn family (src/cuda/exec_nn.cpp), which runs the heavy
// work on cuBLAS and cuDNN: shifted image copies (explicit padding, crops), filter layout changes,
// the average-pool count fix-up and the batch-norm statistics/gradients. float32 only; grid-stride
// loops with int64 index math, one thread per output element; per-channel reductions use one
// block per channel with double accumulation.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "graft/cuda/check.hpp"
#include "launch_nn.hpp"

namespace graft::cuda::launch {

namespace {

constexpr int threads = 256;  // a power of two (block_sum)

unsigned blocks_for(std::int64_t n) {
    const std::int64_t b = (n + threads - 1) / threads;
    return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(b, 1 << 20)));
}

/// One block per channel (grid-stride over channels beyond this).
unsigned channel_blocks(std::int64_t c) { return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(c, 1 << 16))); }

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }

#define GRAFT_NN_FOR(i, n)                                                                              \
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < (n);    \
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

/// Sum of v over the block (every thread gets it). All threads of the block must call it.
__device__ double block_sum(double v) {
    __shared__ double sh[threads];
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = threads / 2; s > 0; s >>= 1) {
        if (static_cast<int>(threadIdx.x) < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    const double r = sh[0];
    __syncthreads();
    return r;
}

/// One destination row per (image, y) in NHWC (dst_w * c floats) or per (image, channel, y) in NCHW
/// (dst_w floats): the source row is one contiguous run of it, so an element needs no division
/// (the per-element int64 div/mod of a flat index cost 0.4 ms a copy on ResNet-18's inputs).
__global__ void window_copy_kernel(const float* src, float* dst, std::int64_t rows, std::int64_t src_h,
                                   std::int64_t dst_h, std::int64_t src_len, std::int64_t dst_len, std::int64_t off_y,
                                   std::int64_t off_len, float fill) {
    for (std::int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
        const std::int64_t plane = r / dst_h, y = r - plane * dst_h, sy = y - off_y;
        const bool live = sy >= 0 && sy < src_h;
        const float* s = live ? src + (plane * src_h + sy) * src_len : src;
        float* d = dst + r * dst_len;
        for (std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; j < dst_len;
             j += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
            const std::int64_t sj = j - off_len;
            d[j] = live && sj >= 0 && sj < src_len ? s[sj] : fill;
        }
    }
}

__global__ void filter_layout_kernel(const float* src, float* dst, std::int64_t kh, std::int64_t kw, std::int64_t ic,
                                     std::int64_t oc, bool kcrs, bool to_cudnn) {
    const std::int64_t total = kh * kw * ic * oc;
    GRAFT_NN_FOR(j, total) {  // j indexes the HWIO filter
        const std::int64_t o = j % oc;
        std::int64_t r = j / oc;
        const std::int64_t i = r % ic;
        r /= ic;
        const std::int64_t x = r % kw;
        const std::int64_t y = r / kw;
        const std::int64_t k = kcrs ? ((o * ic + i) * kh + y) * kw + x : ((o * kh + y) * kw + x) * ic + i;
        if (to_cudnn) dst[k] = src[j];
        else dst[j] = src[k];
    }
}

__global__ void avg_pool_count_scale_kernel(const float* src, float* dst, std::int64_t n, std::int64_t c,
                                            std::int64_t oh, std::int64_t ow, std::int64_t ih, std::int64_t iw,
                                            std::int64_t kh, std::int64_t kw, std::int64_t sh, std::int64_t sw,
                                            std::int64_t pt, std::int64_t pl, bool nhwc) {
    const std::int64_t total = n * c * oh * ow;
    GRAFT_NN_FOR(i, total) {
        std::int64_t oy, ox;
        if (nhwc) {
            const std::int64_t r = i / c;
            ox = r % ow;
            oy = (r / ow) % oh;
        } else {
            ox = i % ow;
            oy = (i / ow) % oh;
        }
        std::int64_t y0 = oy * sh - pt, x0 = ox * sw - pl;
        const std::int64_t y1 = min(y0 + kh, ih), x1 = min(x0 + kw, iw);
        y0 = max(y0, std::int64_t{0});
        x0 = max(x0, std::int64_t{0});
        const std::int64_t count = max(std::int64_t{1}, (y1 - y0) * (x1 - x0));
        dst[i] = src[i] * (static_cast<float>(kh * kw) / static_cast<float>(count));
    }
}

__global__ void fill_kernel(float* dst, std::int64_t n, float v) {
    GRAFT_NN_FOR(i, n) { dst[i] = v; }
}

__device__ std::int64_t bn_index(std::int64_t j, std::int64_t ch, std::int64_t c, std::int64_t inner) {
    const std::int64_t o = j / inner, i = j - o * inner;
    return (o * c + ch) * inner + i;
}

__global__ void bn_stats_kernel(const float* x, std::int64_t outer, std::int64_t c, std::int64_t inner, float* mean,
                                float* var) {
    const std::int64_t count = outer * inner;
    for (std::int64_t ch = blockIdx.x; ch < c; ch += gridDim.x) {
        double s = 0;
        for (std::int64_t j = threadIdx.x; j < count; j += blockDim.x) s += x[bn_index(j, ch, c, inner)];
        const double m = block_sum(s) / static_cast<double>(count);
        double q = 0;
        for (std::int64_t j = threadIdx.x; j < count; j += blockDim.x) {
            const double d = static_cast<double>(x[bn_index(j, ch, c, inner)]) - m;
            q += d * d;
        }
        const double v = block_sum(q) / static_cast<double>(count);
        if (threadIdx.x == 0) {
            mean[ch] = static_cast<float>(m);
            var[ch] = static_cast<float>(v);
        }
    }
}

// FusedBatchNorm's reductions over an NHWC tensor, viewed as [rows][c]: a block of 32 channels x 8
// row lanes reads whole 128-byte row segments (the one-block-per-channel kernels above read one
// float per 4*c bytes there, and their grids hold only c blocks). Each block writes its partial
// sums (double) for its channels; a second kernel adds the partials of a channel in a fixed order,
// so the result does not depend on timing.
constexpr int bn_tx = 32, bn_ty = 8;

/// Row blocks of the partial kernels: about 1024 blocks in all, and at least 16 rows per thread.
std::int64_t bn_row_blocks(std::int64_t rows, std::int64_t c) {
    const std::int64_t channel_blocks = (c + bn_tx - 1) / bn_tx;
    const std::int64_t want = std::max<std::int64_t>(1, 1024 / channel_blocks);
    const std::int64_t cap = std::max<std::int64_t>(1, rows / (bn_ty * 16));
    return std::min<std::int64_t>({want, cap, 65535});
}

/// part[(2*by)*c + ch] = sum over this block's rows of (x - shift), part[(2*by+1)*c + ch] = of (x - shift)^2,
/// with shift = x[0][ch] (row 0's value): shifted sums keep the variance exact when |mean| >> std.
__global__ void bn_stats_partial_kernel(const float* x, std::int64_t rows, std::int64_t c, double* part) {
    const std::int64_t ch = blockIdx.x * static_cast<std::int64_t>(bn_tx) + threadIdx.x;
    const bool live = ch < c;
    double s = 0, q = 0;
    if (live) {
        const double shift = x[ch];
        const std::int64_t step = static_cast<std::int64_t>(gridDim.y) * bn_ty;
#pragma unroll 4
        for (std::int64_t r = blockIdx.y * static_cast<std::int64_t>(bn_ty) + threadIdx.y; r < rows; r += step) {
            const double d = static_cast<double>(x[r * c + ch]) - shift;
            s += d;
            q += d * d;
        }
    }
    __shared__ double ss[bn_ty][bn_tx], sq[bn_ty][bn_tx];
    ss[threadIdx.y][threadIdx.x] = s;
    sq[threadIdx.y][threadIdx.x] = q;
    __syncthreads();
    if (threadIdx.y == 0 && live) {
        for (int k = 1; k < bn_ty; ++k) {
            s += ss[k][threadIdx.x];
            q += sq[k][threadIdx.x];
        }
        part[(2 * static_cast<std::int64_t>(blockIdx.y)) * c + ch] = s;
        part[(2 * static_cast<std::int64_t>(blockIdx.y) + 1) * c + ch] = q;
    }
}

/// The finishing kernels give each channel a warp: its lanes add every 32nd block's partials, then
/// a fixed shuffle tree adds the lanes (same order every run).
__device__ void bn_warp_sums(const double* part, std::int64_t blocks, std::int64_t c, std::int64_t ch, int lane,
                             double& a, double& b) {
    a = 0;
    b = 0;
    for (std::int64_t k = lane; k < blocks; k += 32) {
        a += part[(2 * k) * c + ch];
        b += part[(2 * k + 1) * c + ch];
    }
    for (int o = 16; o > 0; o >>= 1) {
        a += __shfl_down_sync(0xffffffffu, a, o);
        b += __shfl_down_sync(0xffffffffu, b, o);
    }
}

__global__ void bn_stats_finish_kernel(const float* x, const double* part, std::int64_t blocks, std::int64_t rows,
                                       std::int64_t c, float* mean, float* var) {
    const std::int64_t ch = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32;
    if (ch >= c) return;  // whole warps: blockDim.x is a multiple of 32
    const int lane = static_cast<int>(threadIdx.x & 31u);
    double s, q;
    bn_warp_sums(part, blocks, c, ch, lane, s, q);
    if (lane == 0) {
        const double n = static_cast<double>(rows), ms = s / n;
        mean[ch] = static_cast<float>(static_cast<double>(x[ch]) + ms);
        var[ch] = static_cast<float>(max(0.0, q / n - ms * ms));
    }
}

/// part[(2*by)*c + ch] = sum of dy, part[(2*by+1)*c + ch] = sum of dy * (x - mean) over this block's rows.
__global__ void bn_grad_partial_kernel(const float* dy, const float* x, const float* mean, std::int64_t rows,
                                       std::int64_t c, double* part) {
    const std::int64_t ch = blockIdx.x * static_cast<std::int64_t>(bn_tx) + threadIdx.x;
    const bool live = ch < c;
    double a = 0, b = 0;
    if (live) {
        const float m = mean[ch];
        const std::int64_t step = static_cast<std::int64_t>(gridDim.y) * bn_ty;
#pragma unroll 4
        for (std::int64_t r = blockIdx.y * static_cast<std::int64_t>(bn_ty) + threadIdx.y; r < rows; r += step) {
            const std::int64_t k = r * c + ch;
            a += dy[k];
            b += static_cast<double>(dy[k]) * static_cast<double>(x[k] - m);
        }
    }
    __shared__ double sa[bn_ty][bn_tx], sb[bn_ty][bn_tx];
    sa[threadIdx.y][threadIdx.x] = a;
    sb[threadIdx.y][threadIdx.x] = b;
    __syncthreads();
    if (threadIdx.y == 0 && live) {
        for (int k = 1; k < bn_ty; ++k) {
            a += sa[k][threadIdx.x];
            b += sb[k][threadIdx.x];
        }
        part[(2 * static_cast<std::int64_t>(blockIdx.y)) * c + ch] = a;
        part[(2 * static_cast<std::int64_t>(blockIdx.y) + 1) * c + ch] = b;
    }
}

__global__ void bn_grad_finish_kernel(const double* part, std::int64_t blocks, const float* var, std::int64_t c,
                                      float eps, float* sum_dy, float* sum_dyxc, float* dscale, float* doffset) {
    const std::int64_t ch = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32;
    if (ch >= c) return;
    const int lane = static_cast<int>(threadIdx.x & 31u);
    double a, b;
    bn_warp_sums(part, blocks, c, ch, lane, a, b);
    if (lane == 0) {
        const float coef0 = 1.0f / sqrtf(var[ch] + eps);
        sum_dy[ch] = static_cast<float>(a);
        sum_dyxc[ch] = static_cast<float>(b);
        doffset[ch] = static_cast<float>(a);
        dscale[ch] = static_cast<float>(b) * coef0;
    }
}

/// x_backprop over NHWC [rows][c]: 32 channels x 8 row lanes a block, the channel's factors loaded
/// once per thread (no per-element index division).
__global__ void bn_grad_input_rows_kernel(const float* dy, const float* x, const float* scale, const float* mean,
                                          const float* var, const float* sum_dy, const float* sum_dyxc,
                                          std::int64_t rows, std::int64_t c, float eps, bool training, float* dx) {
    const std::int64_t ch = blockIdx.x * static_cast<std::int64_t>(bn_tx) + threadIdx.x;
    if (ch >= c) return;
    const float n = static_cast<float>(max(std::int64_t{1}, rows));
    const float coef0 = 1.0f / sqrtf(var[ch] + eps), sc = scale[ch], m = mean[ch], sdy = sum_dy[ch], sdx = sum_dyxc[ch];
    const std::int64_t step = static_cast<std::int64_t>(gridDim.y) * bn_ty;
    for (std::int64_t r = blockIdx.y * static_cast<std::int64_t>(bn_ty) + threadIdx.y; r < rows; r += step) {
        const std::int64_t i = r * c + ch;
        // The expression of bn_grad_input_kernel, in the same order (the same bits).
        dx[i] = training ? sc * coef0 * ((dy[i] - sdy / n) - (x[i] - m) * coef0 * coef0 * (sdx / n)) : dy[i] * sc * coef0;
    }
}

__global__ void bn_outputs_kernel(const float* mean, const float* var, const float* mean_in, const float* var_in,
                                  std::int64_t c, bool training, float f, float adjust, float* mean_out,
                                  float* var_out, float* save_mean, float* save_var) {
    GRAFT_NN_FOR(ch, c) {
        const float m = mean[ch], v = var[ch];
        save_mean[ch] = m;
        save_var[ch] = v;
        if (!training) {
            mean_out[ch] = m;
            var_out[ch] = v;
        } else if (f == 1.0f) {
            mean_out[ch] = m;
            var_out[ch] = v * adjust;
        } else {
            mean_out[ch] = (1.0f - f) * mean_in[ch] + f * m;
            var_out[ch] = (1.0f - f) * var_in[ch] + (f * adjust) * v;
        }
    }
}

__global__ void bn_grad_reduce_kernel(const float* dy, const float* x, const float* mean, const float* var,
                                      std::int64_t outer, std::int64_t c, std::int64_t inner, float eps,
                                      float* sum_dy, float* sum_dyxc, float* dscale, float* doffset) {
    const std::int64_t count = outer * inner;
    for (std::int64_t ch = blockIdx.x; ch < c; ch += gridDim.x) {
        const float m = mean[ch];
        double a = 0, b = 0;
        for (std::int64_t j = threadIdx.x; j < count; j += blockDim.x) {
            const std::int64_t k = bn_index(j, ch, c, inner);
            a += dy[k];
            b += static_cast<double>(dy[k]) * static_cast<double>(x[k] - m);
        }
        const double sa = block_sum(a), sb = block_sum(b);
        if (threadIdx.x == 0) {
            const float coef0 = 1.0f / sqrtf(var[ch] + eps);
            sum_dy[ch] = static_cast<float>(sa);
            sum_dyxc[ch] = static_cast<float>(sb);
            doffset[ch] = static_cast<float>(sa);
            dscale[ch] = static_cast<float>(sb) * coef0;
        }
    }
}

__global__ void bn_grad_input_kernel(const float* dy, const float* x, const float* scale, const float* mean,
                                     const float* var, const float* sum_dy, const float* sum_dyxc, std::int64_t outer,
                                     std::int64_t c, std::int64_t inner, float eps, bool training, float* dx) {
    const std::int64_t total = outer * c * inner;
    const float n = static_cast<float>(max(std::int64_t{1}, outer * inner));
    GRAFT_NN_FOR(i, total) {
        const std::int64_t ch = (i / inner) % c;
        const float coef0 = 1.0f / sqrtf(var[ch] + eps);
        if (!training) {
            dx[i] = dy[i] * scale[ch] * coef0;
        } else {
            const float xc = x[i] - mean[ch];
            dx[i] = scale[ch] * coef0 * ((dy[i] - sum_dy[ch] / n) - xc * coef0 * coef0 * (sum_dyxc[ch] / n));
        }
    }
}

}  // namespace

void nn_window_copy(const float* src, float* dst, std::int64_t n, std::int64_t c, std::int64_t src_h,
                    std::int64_t src_w, std::int64_t dst_h, std::int64_t dst_w, std::int64_t off_y,
                    std::int64_t off_x, bool nhwc, float fill, void* stream) {
    if (n * c * dst_h * dst_w == 0) return;
    const std::int64_t rows = nhwc ? n * dst_h : n * c * dst_h;
    const std::int64_t unit = nhwc ? c : 1;  // floats per column
    const std::int64_t dst_len = dst_w * unit;
    // About 4096 blocks in all, each looping over rows: a block per row (14464 x 29 for ResNet-18's
    // max-pool padding) ran at 0.74 TB/s on the H200.
    const std::int64_t across = std::min<std::int64_t>((dst_len + threads - 1) / threads, 64);
    const dim3 grid(static_cast<unsigned>(across),
                    static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(rows, 4096 / across))));
    window_copy_kernel<<<grid, threads, 0, as_stream(stream)>>>(src, dst, rows, src_h, dst_h, src_w * unit, dst_len,
                                                               off_y, off_x * unit, fill);
    GRAFT_CUDA_CHECK_LAUNCH("window_copy_kernel");
}

void nn_filter_layout(const float* src, float* dst, std::int64_t kh, std::int64_t kw, std::int64_t ic,
                      std::int64_t oc, bool kcrs, bool to_cudnn, void* stream) {
    const std::int64_t total = kh * kw * ic * oc;
    if (total == 0) return;
    filter_layout_kernel<<<blocks_for(total), threads, 0, as_stream(stream)>>>(src, dst, kh, kw, ic, oc, kcrs,
                                                                               to_cudnn);
    GRAFT_CUDA_CHECK_LAUNCH("filter_layout_kernel");
}

void nn_avg_pool_count_scale(const float* src, float* dst, std::int64_t n, std::int64_t c, std::int64_t oh,
                             std::int64_t ow, std::int64_t ih, std::int64_t iw, std::int64_t kh, std::int64_t kw,
                             std::int64_t sh, std::int64_t sw, std::int64_t pt, std::int64_t pl, bool nhwc,
                             void* stream) {
    const std::int64_t total = n * c * oh * ow;
    if (total == 0) return;
    avg_pool_count_scale_kernel<<<blocks_for(total), threads, 0, as_stream(stream)>>>(src, dst, n, c, oh, ow, ih, iw,
                                                                                      kh, kw, sh, sw, pt, pl, nhwc);
    GRAFT_CUDA_CHECK_LAUNCH("avg_pool_count_scale_kernel");
}

void nn_fill(float* dst, std::int64_t n, float value, void* stream) {
    if (n == 0) return;
    fill_kernel<<<blocks_for(n), threads, 0, as_stream(stream)>>>(dst, n, value);
    GRAFT_CUDA_CHECK_LAUNCH("fill_kernel");
}

std::int64_t nn_bn_workspace(std::int64_t outer, std::int64_t c, std::int64_t inner) {
    if (inner != 1 || c == 0 || outer == 0) return 0;
    return 2 * c * bn_row_blocks(outer, c);
}

namespace {
dim3 bn_grid(std::int64_t rows, std::int64_t c) {
    return dim3(static_cast<unsigned>((c + bn_tx - 1) / bn_tx), static_cast<unsigned>(bn_row_blocks(rows, c)));
}
}  // namespace

void nn_bn_stats(const float* x, std::int64_t outer, std::int64_t c, std::int64_t inner, float* mean, float* var,
                 double* work, void* stream) {
    if (c == 0 || outer * inner == 0) return;
    if (work && inner == 1) {
        const dim3 grid = bn_grid(outer, c);
        bn_stats_partial_kernel<<<grid, dim3(bn_tx, bn_ty), 0, as_stream(stream)>>>(x, outer, c, work);
        GRAFT_CUDA_CHECK_LAUNCH("bn_stats_partial_kernel");
        bn_stats_finish_kernel<<<blocks_for(32 * c), threads, 0, as_stream(stream)>>>(x, work, grid.y, outer, c, mean,
                                                                                      var);
        GRAFT_CUDA_CHECK_LAUNCH("bn_stats_finish_kernel");
        return;
    }
    bn_stats_kernel<<<channel_blocks(c), threads, 0, as_stream(stream)>>>(x, outer, c, inner, mean, var);
    GRAFT_CUDA_CHECK_LAUNCH("bn_stats_kernel");
}

void nn_bn_outputs(const float* mean, const float* var, const float* mean_in, const float* var_in, std::int64_t c,
                   bool training, float factor, float adjust, float* mean_out, float* var_out, float* save_mean,
                   float* save_var, void* stream) {
    if (c == 0) return;
    bn_outputs_kernel<<<blocks_for(c), threads, 0, as_stream(stream)>>>(mean, var, mean_in, var_in, c, training,
                                                                        factor, adjust, mean_out, var_out, save_mean,
                                                                        save_var);
    GRAFT_CUDA_CHECK_LAUNCH("bn_outputs_kernel");
}

void nn_bn_grad_reduce(const float* dy, const float* x, const float* mean, const float* var, std::int64_t outer,
                       std::int64_t c, std::int64_t inner, float epsilon, float* sum_dy, float* sum_dyxc,
                       float* scale_backprop, float* offset_backprop, double* work, void* stream) {
    if (c == 0) return;
    if (work && inner == 1 && outer > 0) {
        const dim3 grid = bn_grid(outer, c);
        bn_grad_partial_kernel<<<grid, dim3(bn_tx, bn_ty), 0, as_stream(stream)>>>(dy, x, mean, outer, c, work);
        GRAFT_CUDA_CHECK_LAUNCH("bn_grad_partial_kernel");
        bn_grad_finish_kernel<<<blocks_for(32 * c), threads, 0, as_stream(stream)>>>(
            work, grid.y, var, c, epsilon, sum_dy, sum_dyxc, scale_backprop, offset_backprop);
        GRAFT_CUDA_CHECK_LAUNCH("bn_grad_finish_kernel");
        return;
    }
    bn_grad_reduce_kernel<<<channel_blocks(c), threads, 0, as_stream(stream)>>>(
        dy, x, mean, var, outer, c, inner, epsilon, sum_dy, sum_dyxc, scale_backprop, offset_backprop);
    GRAFT_CUDA_CHECK_LAUNCH("bn_grad_reduce_kernel");
}

void nn_bn_grad_input(const float* dy, const float* x, const float* scale, const float* mean, const float* var,
                      const float* sum_dy, const float* sum_dyxc, std::int64_t outer, std::int64_t c,
                      std::int64_t inner, float epsilon, bool training, float* dx, void* stream) {
    const std::int64_t total = outer * c * inner;
    if (total == 0) return;
    if (inner == 1) {
        const dim3 grid(static_cast<unsigned>((c + bn_tx - 1) / bn_tx),
                        static_cast<unsigned>(std::min<std::int64_t>((outer + bn_ty - 1) / bn_ty, 65535)));
        bn_grad_input_rows_kernel<<<grid, dim3(bn_tx, bn_ty), 0, as_stream(stream)>>>(
            dy, x, scale, mean, var, sum_dy, sum_dyxc, outer, c, epsilon, training, dx);
        GRAFT_CUDA_CHECK_LAUNCH("bn_grad_input_rows_kernel");
        return;
    }
    bn_grad_input_kernel<<<blocks_for(total), threads, 0, as_stream(stream)>>>(
        dy, x, scale, mean, var, sum_dy, sum_dyxc, outer, c, inner, epsilon, training, dx);
    GRAFT_CUDA_CHECK_LAUNCH("bn_grad_input_kernel");
}

}  // namespace graft::cuda::launch
