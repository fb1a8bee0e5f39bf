// src/cuda/launch_nn.hpp — launchers of kernels/dnn.cu, the small device helpers around cuBLAS and
// cuDNN in the nn family (src/cuda/exec_nn.cpp): padded/cropped copies of images (cuDNN has only
// symmetric padding), TF filter layout <-> cuDNN filter layout, the average-pool count fix-up and
// the batch-norm statistics and gradients computed exactly as TF's CPU kernel does.
// Raw device pointers, sizes in elements (int64), the stream as void*; every launcher queues its
// work on `stream` and throws graft::error naming the kernel when the launch fails.
#pragma once

#include <cstdint>

namespace graft::cuda::launch {

/// Image copy with a shift: for every dst element (n, y, x, c) of dst [n, dst_h, dst_w, c] (NHWC,
/// or [n, c, dst_h, dst_w] when !nhwc): dst = src(n, y - off_y, x - off_x, c) when that lies inside
/// src [n, src_h, src_w, c] (same layout), else `fill`. Pads (off >= 0, bigger dst) and crops
/// (off <= 0, smaller dst).
void nn_window_copy(const float* src, float* dst, std::int64_t n, std::int64_t c, std::int64_t src_h,
                    std::int64_t src_w, std::int64_t dst_h, std::int64_t dst_w, std::int64_t off_y,
                    std::int64_t off_x, bool nhwc, float fill, void* stream);

/// TF filter [kh, kw, ic, oc] (HWIO) <-> cuDNN filter: [oc, ic, kh, kw] (KCRS, `kcrs` true) or
/// [oc, kh, kw, ic] (KRSC). to_cudnn: hwio -> cudnn; else cudnn -> hwio.
void nn_filter_layout(const float* src, float* dst, std::int64_t kh, std::int64_t kw, std::int64_t ic,
                      std::int64_t oc, bool kcrs, bool to_cudnn, void* stream);

/// Average pooling on a zero-padded image divides by kh*kw; TF divides by the number of input
/// elements under the window. dst[n, oy, ox, c] = src[...] * (kh*kw / count(oy, ox)) where count
/// clips the window [oy*sh - pt, +kh) x [ox*sw - pl, +kw) to [0, ih) x [0, iw). dst may be src.
void nn_avg_pool_count_scale(const float* src, float* dst, std::int64_t n, std::int64_t c, std::int64_t oh,
                             std::int64_t ow, std::int64_t ih, std::int64_t iw, std::int64_t kh, std::int64_t kw,
                             std::int64_t sh, std::int64_t sw, std::int64_t pt, std::int64_t pl, bool nhwc,
                             void* stream);

/// dst[i] = value for i < n.
void nn_fill(float* dst, std::int64_t n, float value, void* stream);

/// Per-channel batch statistics of x seen as [outer][c][inner] (NHWC: [N*H*W][C][1], NCHW:
/// [N][C][H*W]): mean[ch] and the biased variance var[ch] (two passes, double accumulation).
/// outer * inner must be > 0.
/// With `work` (nn_bn_workspace(outer, c, inner) doubles; used where inner == 1, i.e. NHWC) the sums
/// run over coalesced row blocks, then a fixed-order sum of the blocks' partials; shifted by row 0.
void nn_bn_stats(const float* x, std::int64_t outer, std::int64_t c, std::int64_t inner, float* mean, float* var,
                 double* work, void* stream);

/// Doubles of scratch nn_bn_stats and nn_bn_grad_reduce use for this layout (0: none, pass null).
std::int64_t nn_bn_workspace(std::int64_t outer, std::int64_t c, std::int64_t inner);

/// The per-channel outputs of FusedBatchNorm besides y, as TF's CPU kernel sets them, from the
/// statistics used to normalize (mean/var: this batch's in training, the given ones in inference):
/// save_mean = mean, save_var = var; inference: mean_out = mean, var_out = var; training with
/// factor 1: mean_out = mean, var_out = var * adjust; else the running averages
/// (1 - factor) * mean_in + factor * mean and (1 - factor) * var_in + (factor * adjust) * var.
/// mean_in/var_in may be null unless training with factor != 1.
void nn_bn_outputs(const float* mean, const float* var, const float* mean_in, const float* var_in, std::int64_t c,
                   bool training, float factor, float adjust, float* mean_out, float* var_out, float* save_mean,
                   float* save_var, void* stream);

/// FusedBatchNormGrad's reductions: per channel sum_dy = sum(dy), sum_dyxc = sum(dy * (x - mean)),
/// then offset_backprop = sum_dy and scale_backprop = sum_dyxc / sqrt(var + epsilon) (float, as the
/// CPU). x and dy are [outer][c][inner]; outer * inner may be 0.
void nn_bn_grad_reduce(const float* dy, const float* x, const float* mean, const float* var, std::int64_t outer,
                       std::int64_t c, std::int64_t inner, float epsilon, float* sum_dy, float* sum_dyxc,
                       float* scale_backprop, float* offset_backprop, double* work, void* stream);

/// FusedBatchNormGrad's x_backprop with coef = 1 / sqrt(var + epsilon): inference dy * scale *
/// coef; training scale * coef * ((dy - sum_dy / n) - (x - mean) * coef^2 * (sum_dyxc / n)) with
/// n = max(1, outer * inner).
void nn_bn_grad_input(const float* dy, const float* x, const float* scale, const float* mean, const float* var,
                      const float* sum_dy, const float* sum_dyxc, std::int64_t outer, std::int64_t c,
                      std::int64_t inner, float epsilon, bool training, float* dx, void* stream);

}  // namespace graft::cuda::launch
