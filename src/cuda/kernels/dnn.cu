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

__global__ void window_copy_kernel(const float* src, float* dst, std::int64_t n, std::int64_t c, std::int64_t src_h,
                                   std::int64_t src_w, std::int64_t dst_h, std::int64_t dst_w, std::int64_t off_y,
                                   std::int64_t off_x, bool nhwc, float fill) {
    const std::int64_t total = n * c * dst_h * dst_w;
    GRAFT_NN_FOR(i, total) {
        std::int64_t b, ch, y, x;
        if (nhwc) {
            ch = i % c;
            std::int64_t r = i / c;
            x = r % dst_w;
            r /= dst_w;
            y = r % dst_h;
            b = r / dst_h;
        } else {
            x = i % dst_w;
            std::int64_t r = i / dst_w;
            y = r % dst_h;
            r /= dst_h;
            ch = r % c;
            b = r / c;
        }
        const std::int64_t sy = y - off_y, sx = x - off_x;
        float v = fill;
        if (sy >= 0 && sy < src_h && sx >= 0 && sx < src_w) {
            v = nhwc ? src[((b * src_h + sy) * src_w + sx) * c + ch] : src[((b * c + ch) * src_h + sy) * src_w + sx];
        }
        dst[i] = v;
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
    const std::int64_t total = n * c * dst_h * dst_w;
    if (total == 0) return;
    window_copy_kernel<<<blocks_for(total), threads, 0, as_stream(stream)>>>(src, dst, n, c, src_h, src_w, dst_h,
                                                                             dst_w, off_y, off_x, nhwc, fill);
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

void nn_bn_stats(const float* x, std::int64_t outer, std::int64_t c, std::int64_t inner, float* mean, float* var,
                 void* stream) {
    if (c == 0 || outer * inner == 0) return;
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
                       float* scale_backprop, float* offset_backprop, void* stream) {
    if (c == 0) return;
    bn_grad_reduce_kernel<<<channel_blocks(c), threads, 0, as_stream(stream)>>>(
        dy, x, mean, var, outer, c, inner, epsilon, sum_dy, sum_dyxc, scale_backprop, offset_backprop);
    GRAFT_CUDA_CHECK_LAUNCH("bn_grad_reduce_kernel");
}

void nn_bn_grad_input(const float* dy, const float* x, const float* scale, const float* mean, const float* var,
                      const float* sum_dy, const float* sum_dyxc, std::int64_t outer, std::int64_t c,
                      std::int64_t inner, float epsilon, bool training, float* dx, void* stream) {
    const std::int64_t total = outer * c * inner;
    if (total == 0) return;
    bn_grad_input_kernel<<<blocks_for(total), threads, 0, as_stream(stream)>>>(
        dy, x, scale, mean, var, sum_dy, sum_dyxc, outer, c, inner, epsilon, training, dx);
    GRAFT_CUDA_CHECK_LAUNCH("bn_grad_input_kernel");
}

}  // namespace graft::cuda::launch
