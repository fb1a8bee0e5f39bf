// src/cuda/cudnn_graph.hpp — float32 convolutions (forward, backward data, backward filter) through
// cuDNN's graph ("backend") API: the engines cuDNN 9 offers there and not through the legacy
// cudnnConvolution* calls (on the H200, NHWC implicit-GEMM kernels where the legacy calls transposed
// to NCHW and back), asymmetric pads (TF's SAME with an even excess) without a padded copy, and an
// execution plan built once per shape and reused. exec_nn.cpp's kernels call run_conv first and take
// the legacy path where it returns false.
#pragma once

#include <cstdint>

#include "graft/device/cuda_runtime.hpp"

namespace graft::cuda::cudnn_graph {

enum class pass : int { forward = 0, backward_data = 1, backward_filter = 2 };

/// One float32 2-D convolution in cuDNN's terms: image x [n, c, h, w], filter w [k, c, r, s], output
/// y [n, k, oh, ow]; images NHWC or NCHW in memory, the filter KRSC with NHWC images, KCRS with NCHW.
struct conv_problem {
    bool nhwc = true;
    std::int64_t n = 0, c = 0, h = 0, w = 0;   ///< x (unpadded)
    std::int64_t k = 0, r = 0, s = 0;          ///< filter
    std::int64_t oh = 0, ow = 0;               ///< y
    std::int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
    std::int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
    bool tf32 = false;  ///< allow TF32 tensor-core engines (else exact FP32 arithmetic only)
};

/// Whether the graph API is to be used (GRAFT_CUDNN_GRAPH=0 turns it off: the legacy calls only).
bool enabled();

/// Runs one pass of `p`: x, w, y are device pointers; the pass writes y (forward), x (backward data)
/// or w (backward filter) and reads the other two. Returns false, having queued nothing, where no
/// engine of cuDNN supports the problem (the caller takes the legacy path). Throws cuda::error when
/// an engine that was planned fails to run.
bool run_conv(stream& st, pass ps, const conv_problem& p, const void* x, const void* w, const void* y);

}  // namespace graft::cuda::cudnn_graph
