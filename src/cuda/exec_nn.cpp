// GPU kernels of the nn family: MatMul and BatchMatMul/V2/V3 on cuBLAS (row-major operands through
// C^T = B^T A^T, batch dims broadcast as the CPU does), Conv2D and its two gradients, MaxPool,
// AvgPool and their gradients, Softmax/LogSoftmax and FusedBatchNorm/V2/V3 with their gradients on
// cuDNN's legacy API plus the small helpers of kernels/dnn.cu.
//
// Every kernel validates on the host first with the CPU kernels' own checks (graft/ops/*.hpp), so
// errors read the same on both devices. Where cuDNN cannot express TF's semantics directly:
//   - asymmetric padding (SAME with an odd total pad, EXPLICIT): convolutions run on an explicitly
//     padded copy of the input (and crop the input gradient back); pooling always pads explicitly
//     (-inf for max, zeros for average, whose result is rescaled from kh*kw to TF's count of input
//     elements under the window);
//   - TF's filters are HWIO: they are transposed to cuDNN's KCRS (NCHW) or KRSC (NHWC) and the
//     filter gradient back;
//   - FusedBatchNorm's reserve spaces hold the batch mean and *biased* variance (cuDNN saves the
//     inverse std) and the running variance is Bessel-corrected as the CPU kernel does, so the
//     statistics and the gradients are computed by kernels/dnn.cu; cuDNN normalizes (y).
// float32 uses exact FP32 math (cuBLAS CUBLAS_COMPUTE_32F, cuDNN CUDNN_FMA_MATH: cuDNN's default
// math allows TF32 on Ampere and later) unless stream::allow_tf32 is set.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cudnn_graph.hpp"
#include "families.hpp"
#include "graft/cuda/check.hpp"
#include "graft/cuda/exec.hpp"
#include "graft/exec/cpu_kernels/nn_params.hpp"
#include "graft/ops/batch_norm.hpp"
#include "graft/ops/conv.hpp"
#include "graft/ops/matmul.hpp"
#include "graft/ops/pool.hpp"
#include "launch_nn.hpp"

namespace graft::cuda::families {

namespace {

namespace nd = graft::ops::nn_detail;
using graft::detail::cat;
using exec::kernels::impl::conv_params;  // the CPU kernels' attr reading
using exec::kernels::impl::pool_params;

const float* cf(const tensor& t) { return static_cast<const float*>(t.raw_data()); }
float* mf(const tensor& t) { return static_cast<float*>(t.raw_data()); }
cudaStream_t native(stream& s) { return static_cast<cudaStream_t>(s.native()); }
cudnnHandle_t dnn(stream& s) { return static_cast<cudnnHandle_t>(s.cudnn()); }

/// v as an int for cuBLAS/cuDNN; fails naming the node when it does not fit.
int to_int(exec::kernel_context& c, std::int64_t v, const char* what) {
    if (v < 0 || v > INT_MAX) c.fail(cat(what, " ", v, " does not fit the 32-bit sizes of cuBLAS/cuDNN"));
    return static_cast<int>(v);
}

void zero_fill(const tensor& t, stream& s) {
    if (t.nbytes() != 0) GRAFT_CUDA_CHECK(cudaMemsetAsync(t.raw_data(), 0, t.nbytes(), native(s)));
}

// ---------------------------------------------------------------- cuDNN descriptors (RAII)

template <class D, cudnnStatus_t (*Create)(D*), cudnnStatus_t (*Destroy)(D)>
class cudnn_desc {
public:
    cudnn_desc() { GRAFT_CUDNN_CHECK(Create(&d_)); }
    ~cudnn_desc() { Destroy(d_); }
    cudnn_desc(const cudnn_desc&) = delete;
    cudnn_desc& operator=(const cudnn_desc&) = delete;
    operator D() const { return d_; }  // NOLINT: used where cuDNN wants the handle

private:
    D d_{};
};
using tensor_desc = cudnn_desc<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using filter_desc = cudnn_desc<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using conv_desc =
    cudnn_desc<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor, cudnnDestroyConvolutionDescriptor>;
using pool_desc = cudnn_desc<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor, cudnnDestroyPoolingDescriptor>;

/// A float32 image [n, c, h, w] in NHWC or NCHW memory order.
void set_image(exec::kernel_context& c, cudnnTensorDescriptor_t d, bool nhwc, std::int64_t n, std::int64_t ch,
               std::int64_t h, std::int64_t w) {
    to_int(c, n * ch * h * w, "tensor size");
    GRAFT_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d, nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                                 to_int(c, n, "batch"), to_int(c, ch, "channels"),
                                                 to_int(c, h, "height"), to_int(c, w, "width")));
}

const float k_one = 1.0f, k_zero = 0.0f;

/// `x` (an image of NHWC dims `d`) with pt/pb rows and pl/pr columns of `fill` around it.
tensor pad_image(stream& s, const tensor& x, bool nhwc, const nd::dims4& d, std::int64_t pt, std::int64_t pb,
                 std::int64_t pl, std::int64_t pr, float fill) {
    const nd::dims4 pd{d.n, d.h + pt + pb, d.w + pl + pr, d.c};
    tensor p = empty(dtype::float32, nd::activation_shape(pd, nhwc), s);
    launch::nn_window_copy(cf(x), mf(p), d.n, d.c, d.h, d.w, pd.h, pd.w, pt, pl, nhwc, fill, s.native());
    return p;
}

/// dst (NHWC dims `d`) = the interior of the padded image `p` (pt rows, pl columns in).
void crop_image(stream& s, const tensor& p, const tensor& dst, bool nhwc, const nd::dims4& d, std::int64_t ph,
                std::int64_t pw, std::int64_t pt, std::int64_t pl) {
    launch::nn_window_copy(cf(p), mf(dst), d.n, d.c, ph, pw, d.h, d.w, -pt, -pl, nhwc, 0.0f, s.native());
}

// ---------------------------------------------------------------- MatMul / BatchMatMul (cuBLAS)

/// out[b] (M x N, row-major) = op(a[b]) * op(b[b]) for b < batch, operand b at element offsets
/// b * stride; fp32 accumulation whatever the dtype (float32, float16, bfloat16).
void gemm(exec::kernel_context& c, stream& s, dtype t, bool ta, bool tb, std::int64_t M, std::int64_t N,
          std::int64_t K, const void* a, std::int64_t stride_a, const void* b, std::int64_t stride_b, void* out,
          std::int64_t stride_out, std::int64_t batch) {
    const cudaDataType_t ty = t == dtype::float16 ? CUDA_R_16F : t == dtype::bfloat16 ? CUDA_R_16BF : CUDA_R_32F;
    const cublasComputeType_t ct =
        t == dtype::float32 && s.allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    // Row-major C [M,N] is column-major C^T [N,M] = op(B)^T op(A)^T: cuBLAS's "A" is b, "B" is a.
    const int m = to_int(c, N, "matrix dimension"), n = to_int(c, M, "matrix dimension");
    const int k = to_int(c, K, "matrix dimension");
    const int ld_b = to_int(c, tb ? K : N, "leading dimension"), ld_a = to_int(c, ta ? M : K, "leading dimension");
    const cublasOperation_t op_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N, op_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    auto h = static_cast<cublasHandle_t>(s.cublas());
    GRAFT_CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    if (batch == 1) {
        GRAFT_CUBLAS_CHECK(cublasGemmEx(h, op_b, op_a, m, n, k, &k_one, b, ty, ld_b, a, ty, ld_a, &k_zero, out, ty, m,
                                        ct, CUBLAS_GEMM_DEFAULT));
    } else {
        GRAFT_CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, op_b, op_a, m, n, k, &k_one, b, ty, ld_b, stride_b, a, ty,
                                                      ld_a, stride_a, &k_zero, out, ty, m, stride_out,
                                                      to_int(c, batch, "batch count"), ct, CUBLAS_GEMM_DEFAULT));
    }
}

void matmul_kernel(exec::kernel_context& c) {
    const tensor a = c.input(0), b = c.input(1);
    const bool ta = c.attr_or<bool>("transpose_a", false), tb = c.attr_or<bool>("transpose_b", false);
    nd::check_matmul_dtype("MatMul", a, b, false);
    if (a.rank() != 2 || b.rank() != 2) {
        throw shape_error(cat("MatMul: a and b must be matrices, given a ", a.shape().str(), " and b ",
                              b.shape().str()));
    }
    const std::int64_t M = ta ? a.dim(1) : a.dim(0), K = ta ? a.dim(0) : a.dim(1);
    const std::int64_t Kb = tb ? b.dim(1) : b.dim(0), N = tb ? b.dim(0) : b.dim(1);
    if (K != Kb) {
        throw shape_error(cat("MatMul: inner dimensions differ: a ", a.shape().str(), " gives K=", K,
                              " (transpose_a=", ta, ") but b ", b.shape().str(), " gives K=", Kb,
                              " (transpose_b=", tb, ")"));
    }
    auto& s = stream_of(c);
    tensor out = output(c, a.type(), {M, N});
    if (M != 0 && N != 0) {
        if (K == 0) zero_fill(out, s);
        else gemm(c, s, a.type(), ta, tb, M, N, K, a.raw_data(), 0, b.raw_data(), 0, out.raw_data(), 0, 1);
    }
    c.set_output(0, out);
}

/// One batch dim of BatchMatMulV2 after broadcasting: extent and element strides of x, y, out.
struct bmm_dim {
    std::int64_t d, xs, ys, os;
};

void batch_matmul_kernel(exec::kernel_context& c) {
    const tensor x = c.input(0), y = c.input(1);
    const bool adj_x = c.attr_or<bool>("adj_x", false), adj_y = c.attr_or<bool>("adj_y", false);
    nd::check_matmul_dtype("BatchMatMulV2", x, y, true);
    if (x.rank() < 2 || y.rank() < 2) {
        throw shape_error(cat("BatchMatMulV2: x and y must have rank >= 2, given x ", x.shape().str(), " and y ",
                              y.shape().str()));
    }
    const int rx = x.rank(), ry = y.rank();
    const std::int64_t M = adj_x ? x.dim(rx - 1) : x.dim(rx - 2), K = adj_x ? x.dim(rx - 2) : x.dim(rx - 1);
    const std::int64_t Ky = adj_y ? y.dim(ry - 1) : y.dim(ry - 2), N = adj_y ? y.dim(ry - 2) : y.dim(ry - 1);
    if (K != Ky) {
        throw shape_error(cat("BatchMatMulV2: inner dimensions differ: x ", x.shape().str(), " gives K=", K,
                              " (adj_x=", adj_x, ") but y ", y.shape().str(), " gives K=", Ky, " (adj_y=", adj_y,
                              ")"));
    }
    // Broadcast the batch dims (right-aligned) exactly as ops::batch_matmul does.
    const int nb = std::max(rx, ry) - 2;
    std::vector<std::int64_t> out_dims(static_cast<std::size_t>(nb));
    std::vector<bmm_dim> dims(static_cast<std::size_t>(nb));
    std::int64_t xstride = M * K, ystride = K * N, ostride = M * N;
    for (int i = nb - 1; i >= 0; --i) {
        const int xi = i - (nb - (rx - 2)), yi = i - (nb - (ry - 2));
        const std::int64_t dx = xi >= 0 ? x.dim(xi) : 1, dy = yi >= 0 ? y.dim(yi) : 1;
        if (dx != dy && dx != 1 && dy != 1) {
            throw shape_error(cat("BatchMatMulV2: batch dimensions of x ", x.shape().str(), " and y ",
                                  y.shape().str(), " cannot be broadcast (", dx, " vs ", dy, ")"));
        }
        const std::int64_t d = std::max(dx, dy);
        out_dims[static_cast<std::size_t>(i)] = d;
        dims[static_cast<std::size_t>(i)] = {d, dx == 1 ? 0 : xstride, dy == 1 ? 0 : ystride, ostride};
        if (xi >= 0) xstride *= dx;
        if (yi >= 0) ystride *= dy;
        ostride *= d;
    }
    std::int64_t batches = 1;
    for (auto d : out_dims) batches *= d;
    out_dims.push_back(M);
    out_dims.push_back(N);
    auto& s = stream_of(c);
    tensor out = output(c, x.type(), shape(out_dims));
    if (batches == 0 || M == 0 || N == 0) {
        c.set_output(0, out);
        return;
    }
    if (K == 0) {
        zero_fill(out, s);
        c.set_output(0, out);
        return;
    }
    // Drop size-1 dims and merge neighbours that stay evenly strided in x, y and out; the innermost
    // remaining dim becomes one strided-batched GEMM, the others a loop on the host.
    std::vector<bmm_dim> merged;
    for (const auto& d : dims) {
        if (d.d == 1) continue;
        if (!merged.empty()) {
            bmm_dim& o = merged.back();
            if (o.xs == d.xs * d.d && o.ys == d.ys * d.d && o.os == d.os * d.d) {
                o = {o.d * d.d, d.xs, d.ys, d.os};
                continue;
            }
        }
        merged.push_back(d);
    }
    const bmm_dim inner = merged.empty() ? bmm_dim{1, 0, 0, M * N} : merged.back();
    if (!merged.empty()) merged.pop_back();
    std::int64_t outer = 1;
    for (const auto& d : merged) outer *= d.d;
    const auto es = static_cast<std::int64_t>(dtype_size(x.type()));
    const char* xp = static_cast<const char*>(x.raw_data());
    const char* yp = static_cast<const char*>(y.raw_data());
    char* op = static_cast<char*>(out.raw_data());
    for (std::int64_t ob = 0; ob < outer; ++ob) {
        std::int64_t rem = ob, ox = 0, oy = 0, oo = 0;
        for (auto it = merged.rbegin(); it != merged.rend(); ++it) {
            const std::int64_t idx = rem % it->d;
            rem /= it->d;
            ox += idx * it->xs, oy += idx * it->ys, oo += idx * it->os;
        }
        gemm(c, s, x.type(), adj_x, adj_y, M, N, K, xp + ox * es, inner.xs, yp + oy * es, inner.ys, op + oo * es,
             inner.os, inner.d);
    }
    c.set_output(0, out);
}

// ---------------------------------------------------------------- convolutions (cuDNN)

/// The CPU's geometry plus what cuDNN sees: with symmetric pads the input itself and those pads,
/// otherwise an explicitly padded input (xh x xw) and no pads.
struct conv_plan {
    nd::conv_geom g;
    std::int64_t pb = 0, pr = 0;  ///< pads after (bottom, right)
    bool symmetric = true;
    std::int64_t xh = 0, xw = 0, pad_h = 0, pad_w = 0;
};

conv_plan plan_conv(const char* op, const nd::dims4& in, const shape& filter, const ops::conv2d_params& p,
                    const shape& input_shape) {
    conv_plan r;
    r.g = nd::make_conv_geom(op, in, filter, p, false, input_shape);
    const nd::pads ex = nd::explicit_pads(op, p.padding, p.explicit_paddings, r.g.nhwc);
    r.pb = nd::window(op, in.h, r.g.kh, r.g.sh, r.g.dh, p.padding, ex.top, ex.bottom).pad_after;
    r.pr = nd::window(op, in.w, r.g.kw, r.g.sw, r.g.dw, p.padding, ex.left, ex.right).pad_after;
    r.symmetric = r.g.pt == r.pb && r.g.pl == r.pr;
    if (r.symmetric) {
        r.xh = in.h, r.xw = in.w, r.pad_h = r.g.pt, r.pad_w = r.g.pl;
    } else {
        r.xh = in.h + r.g.pt + r.pb, r.xw = in.w + r.g.pl + r.pr;
    }
    return r;
}

nd::dims4 padded_dims(const conv_plan& p) { return {p.g.n, p.xh, p.xw, p.g.ic}; }

/// Descriptors of one convolution: x (possibly padded), y, the filter in cuDNN's layout, the conv.
struct conv_descs {
    tensor_desc x, y;
    filter_desc w;
    conv_desc conv;
};

void setup_conv(exec::kernel_context& c, conv_descs& d, const conv_plan& p, bool tf32) {
    const auto& g = p.g;
    set_image(c, d.x, g.nhwc, g.n, g.ic, p.xh, p.xw);
    set_image(c, d.y, g.nhwc, g.n, g.oc, g.oh, g.ow);
    to_int(c, g.kh * g.kw * g.ic * g.oc, "filter size");
    GRAFT_CUDNN_CHECK(cudnnSetFilter4dDescriptor(d.w, CUDNN_DATA_FLOAT, g.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                                 to_int(c, g.oc, "out channels"), to_int(c, g.ic, "in channels"),
                                                 to_int(c, g.kh, "filter height"), to_int(c, g.kw, "filter width")));
    GRAFT_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
        d.conv, to_int(c, p.pad_h, "padding"), to_int(c, p.pad_w, "padding"), to_int(c, g.sh, "stride"),
        to_int(c, g.sw, "stride"), to_int(c, g.dh, "dilation"), to_int(c, g.dw, "dilation"), CUDNN_CROSS_CORRELATION,
        CUDNN_DATA_FLOAT));
    GRAFT_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv, tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
    int n = 0, ch = 0, h = 0, w = 0;
    GRAFT_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(d.conv, d.x, d.w, &n, &ch, &h, &w));
    if (n != g.n || ch != g.oc || h != g.oh || w != g.ow) {
        c.fail(cat("internal error: cuDNN's convolution output [", n, ",", ch, ",", h, ",", w, "] is not TF's [", g.n,
                   ",", g.oc, ",", g.oh, ",", g.ow, "] (NCHW order)"));
    }
}

enum class conv_pass : int { forward = 0, backward_data = 1, backward_filter = 2 };

struct algo_choice {
    int algo = 0;
    cudnnMathType_t math = CUDNN_FMA_MATH;
};

/// Largest workspace an algorithm may ask for.
constexpr std::size_t max_workspace = std::size_t{1} << 30;

/// The first algorithm of cuDNN's heuristic ranking that works, fits max_workspace and, without
/// TF32, uses exact FP32 (FMA) math.
template <class Perf>
bool pick_algo(const Perf* perf, int count, bool tf32, algo_choice& out) {
    for (int i = 0; i < count; ++i) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > max_workspace) continue;
        if (!tf32 && perf[i].mathType != CUDNN_FMA_MATH) continue;
        out = {static_cast<int>(perf[i].algo), perf[i].mathType};
        return true;
    }
    return false;
}

/// The legacy calls (cudnnConvolution*) serve only where cuDNN's graph API has no engine for a
/// convolution (cudnn_graph.hpp; GRAFT_CUDNN_GRAPH=0 makes them the only path). Their algorithm is
/// cuDNN's heuristic ranking (no trial runs, the same choice every run), or timed by cudnnFind* with
/// GRAFT_CUDNN_AUTOTUNE=1: on the H200 timing bought nothing on ResNet-18's step through these calls
/// (77.9 ms against 78.6; the graph API's timed engines: 51 ms), and under compute-sanitizer it
/// picked an algorithm 2.7e-4 off the CPU on a 288-term convolution.
bool cudnn_autotune() {
    static const bool on = [] {
        const char* e = std::getenv("GRAFT_CUDNN_AUTOTUNE");
        return e && std::string(e) == "1";
    }();
    return on;
}

/// The algorithm for one convolution pass, chosen once per shape (timed by cudnnFind*, where that
/// fails or autotuning is off cuDNN's cudnnGet*_v7 ranking) and cached for the process.
algo_choice choose_algo(conv_pass pass, stream& s, const conv_descs& d, const conv_plan& p, bool tf32) {
    static std::mutex mu;
    static std::map<std::vector<std::int64_t>, algo_choice> cache;
    const auto& g = p.g;
    const std::vector<std::int64_t> key{static_cast<std::int64_t>(pass), s.device_index(), tf32, g.nhwc, g.n, g.ic,
                                        p.xh, p.xw, g.oc, g.kh, g.kw, p.pad_h, p.pad_w, g.sh, g.sw, g.dh, g.dw};
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
    algo_choice a{0, tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH};  // fallback: IMPLICIT_GEMM / ALGO_0
    int got = 0;
    switch (pass) {
        case conv_pass::forward: {
            cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
            if (!cudnn_autotune() || cudnnFindConvolutionForwardAlgorithm(dnn(s), d.x, d.w, d.conv, d.y,
                                                                          CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got,
                                                                          perf) != CUDNN_STATUS_SUCCESS) {
                GRAFT_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(dnn(s), d.x, d.w, d.conv, d.y,
                                                                         CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf));
            }
            if (!pick_algo(perf, got, tf32, a)) a.algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
            break;
        }
        case conv_pass::backward_data: {
            cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
            if (!cudnn_autotune() ||
                cudnnFindConvolutionBackwardDataAlgorithm(dnn(s), d.w, d.y, d.conv, d.x,
                                                          CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &got,
                                                          perf) != CUDNN_STATUS_SUCCESS) {
                GRAFT_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(
                    dnn(s), d.w, d.y, d.conv, d.x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &got, perf));
            }
            if (!pick_algo(perf, got, tf32, a)) a.algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
            break;
        }
        case conv_pass::backward_filter: {
            cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
            if (!cudnn_autotune() ||
                cudnnFindConvolutionBackwardFilterAlgorithm(dnn(s), d.x, d.y, d.conv, d.w,
                                                            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &got,
                                                            perf) != CUDNN_STATUS_SUCCESS) {
                GRAFT_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                    dnn(s), d.x, d.y, d.conv, d.w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &got, perf));
            }
            if (!pick_algo(perf, got, tf32, a)) a.algo = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0;
            break;
        }
    }
    cache.emplace(key, a);
    return a;
}

/// `pl` as cuDNN's graph API sees it: as the legacy calls do, the input with its symmetric pads, or
/// with asymmetric ones the explicitly padded input and none. (The graph API takes asymmetric pads,
/// but on the H200 with cuDNN 9.14 timing chose backward-filter engines that got them wrong, 0.4-1.2
/// relative error, where the heuristics' first choice got them right.)
cudnn_graph::conv_problem graph_problem(const conv_plan& pl, bool tf32) {
    const auto& g = pl.g;
    cudnn_graph::conv_problem q;
    q.nhwc = g.nhwc;
    q.n = g.n, q.c = g.ic, q.h = pl.xh, q.w = pl.xw;
    q.k = g.oc, q.r = g.kh, q.s = g.kw, q.oh = g.oh, q.ow = g.ow;
    q.pad_top = q.pad_bottom = pl.pad_h, q.pad_left = q.pad_right = pl.pad_w;
    q.stride_h = g.sh, q.stride_w = g.sw, q.dilation_h = g.dh, q.dilation_w = g.dw;
    q.tf32 = tf32;
    return q;
}

/// Runs one pass through cuDNN's graph API when that is on and an engine supports it.
bool graph_conv(stream& s, cudnn_graph::pass ps, const conv_plan& pl, const void* x, const void* w, const void* y) {
    return cudnn_graph::enabled() && cudnn_graph::run_conv(s, ps, graph_problem(pl, s.allow_tf32), x, w, y);
}

/// A scratch copy of HWIO filter `f` in the layout cuDNN expects for this data format.
tensor filter_to_cudnn(stream& s, const tensor& f, const nd::conv_geom& g) {
    tensor w = empty(dtype::float32, shape{g.oc, g.kh, g.kw, g.ic}, s);
    launch::nn_filter_layout(cf(f), mf(w), g.kh, g.kw, g.ic, g.oc, !g.nhwc, true, s.native());
    return w;
}

void conv2d_kernel(exec::kernel_context& c) {
    const char* op = "Conv2D";
    const tensor input = c.input(0), filter = c.input(1);
    const auto params = conv_params(c);  // parsed once per plan step
    const ops::conv2d_params& p = *params;
    nd::check_float(op, "input", input);
    nd::check_same_dtype(op, "input", input, "filter", filter);
    const bool nhwc = nd::is_nhwc(op, p.data_format);
    const nd::dims4 in = nd::activation_dims(op, "input", input, nhwc);
    const conv_plan pl = plan_conv(op, in, filter.shape(), p, input.shape());
    auto& s = stream_of(c);
    tensor out = output(c, dtype::float32, nd::activation_shape(pl.g.out_dims(), nhwc));
    if (out.num_elements() != 0) {
        if (input.num_elements() == 0 || filter.num_elements() == 0) {
            zero_fill(out, s);  // no input channels (or only padding under the windows)
        } else {
            const tensor w = filter_to_cudnn(s, filter, pl.g);
            const tensor x = pl.symmetric ? input : pad_image(s, input, nhwc, in, pl.g.pt, pl.pb, pl.g.pl, pl.pr, 0.0f);
            if (graph_conv(s, cudnn_graph::pass::forward, pl, x.raw_data(), w.raw_data(), out.raw_data())) {
                c.set_output(0, out);
                return;
            }
            conv_descs d;
            setup_conv(c, d, pl, s.allow_tf32);
            const algo_choice a = choose_algo(conv_pass::forward, s, d, pl, s.allow_tf32);
            const auto algo = static_cast<cudnnConvolutionFwdAlgo_t>(a.algo);
            GRAFT_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv, a.math));
            std::size_t ws = 0;
            GRAFT_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(dnn(s), d.x, d.w, d.conv, d.y, algo, &ws));
            void* wsp = ws ? s.workspace(ws) : nullptr;
            GRAFT_CUDNN_CHECK(cudnnConvolutionForward(dnn(s), &k_one, d.x, x.raw_data(), d.w, w.raw_data(), d.conv,
                                                      algo, wsp, ws, &k_zero, d.y, out.raw_data()));
        }
    }
    c.set_output(0, out);
}

void conv2d_backprop_input_kernel(exec::kernel_context& c) {
    const char* op = "Conv2DBackpropInput";
    const tensor sizes = c.input(0), filter = c.input(1), dy = c.input(2);
    const auto params = conv_params(c);  // parsed once per plan step
    const ops::conv2d_params& p = *params;
    nd::check_float(op, "filter", filter);
    nd::check_same_dtype(op, "filter", filter, "out_backprop", dy);
    const bool nhwc = nd::is_nhwc(op, p.data_format);
    shape is = nd::shape_from_tensor(op, "input_sizes", sizes);
    if (is.rank() == 2) {  // spatial sizes only: batch from out_backprop, channels from filter
        if (dy.rank() != 4 || filter.rank() != 4) {
            throw shape_error(cat(op, ": out_backprop and filter must be rank 4, given ", dy.shape().str(), " and ",
                                  filter.shape().str()));
        }
        const std::int64_t n = dy.dim(0), ch = filter.dim(2);
        is = nhwc ? shape{n, is.dim(0), is.dim(1), ch} : shape{n, ch, is.dim(0), is.dim(1)};
    }
    if (is.rank() != 4) throw shape_error(cat(op, ": input_sizes must have 4 entries, given ", is.str()));
    const nd::dims4 in = nhwc ? nd::dims4{is.dim(0), is.dim(1), is.dim(2), is.dim(3)}
                              : nd::dims4{is.dim(0), is.dim(2), is.dim(3), is.dim(1)};
    const conv_plan pl = plan_conv(op, in, filter.shape(), p, is);
    nd::check_out_backprop(op, pl.g, dy, is, filter.shape());
    auto& s = stream_of(c);
    tensor dx = output(c, dtype::float32, is);
    if (dx.num_elements() != 0) {
        if (dy.num_elements() == 0 || filter.num_elements() == 0) {
            zero_fill(dx, s);
        } else {
            const tensor w = filter_to_cudnn(s, filter, pl.g);
            const tensor dxp = pl.symmetric ? dx : empty(dtype::float32, nd::activation_shape(padded_dims(pl), nhwc), s);
            if (graph_conv(s, cudnn_graph::pass::backward_data, pl, dxp.raw_data(), w.raw_data(), dy.raw_data())) {
                if (!pl.symmetric) crop_image(s, dxp, dx, nhwc, in, pl.xh, pl.xw, pl.g.pt, pl.g.pl);
                c.set_output(0, dx);
                return;
            }
            conv_descs d;
            setup_conv(c, d, pl, s.allow_tf32);
            const algo_choice a = choose_algo(conv_pass::backward_data, s, d, pl, s.allow_tf32);
            const auto algo = static_cast<cudnnConvolutionBwdDataAlgo_t>(a.algo);
            GRAFT_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv, a.math));
            std::size_t ws = 0;
            GRAFT_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(dnn(s), d.w, d.y, d.conv, d.x, algo, &ws));
            void* wsp = ws ? s.workspace(ws) : nullptr;
            GRAFT_CUDNN_CHECK(cudnnConvolutionBackwardData(dnn(s), &k_one, d.w, w.raw_data(), d.y, dy.raw_data(),
                                                           d.conv, algo, wsp, ws, &k_zero, d.x, dxp.raw_data()));
            if (!pl.symmetric) crop_image(s, dxp, dx, nhwc, in, pl.xh, pl.xw, pl.g.pt, pl.g.pl);
        }
    }
    c.set_output(0, dx);
}

void conv2d_backprop_filter_kernel(exec::kernel_context& c) {
    const char* op = "Conv2DBackpropFilter";
    const tensor input = c.input(0), sizes = c.input(1), dy = c.input(2);
    const auto params = conv_params(c);  // parsed once per plan step
    const ops::conv2d_params& p = *params;
    nd::check_float(op, "input", input);
    nd::check_same_dtype(op, "input", input, "out_backprop", dy);
    const bool nhwc = nd::is_nhwc(op, p.data_format);
    const nd::dims4 in = nd::activation_dims(op, "input", input, nhwc);
    const shape fs = nd::shape_from_tensor(op, "filter_sizes", sizes);
    const conv_plan pl = plan_conv(op, in, fs, p, input.shape());
    nd::check_out_backprop(op, pl.g, dy, input.shape(), fs);
    auto& s = stream_of(c);
    tensor dw = output(c, dtype::float32, fs);
    if (dw.num_elements() != 0) {
        if (input.num_elements() == 0 || dy.num_elements() == 0) {
            zero_fill(dw, s);
        } else {
            const tensor dwc = empty(dtype::float32, shape{pl.g.oc, pl.g.kh, pl.g.kw, pl.g.ic}, s);
            const tensor x = pl.symmetric ? input : pad_image(s, input, nhwc, in, pl.g.pt, pl.pb, pl.g.pl, pl.pr, 0.0f);
            if (graph_conv(s, cudnn_graph::pass::backward_filter, pl, x.raw_data(), dwc.raw_data(), dy.raw_data())) {
                launch::nn_filter_layout(cf(dwc), mf(dw), pl.g.kh, pl.g.kw, pl.g.ic, pl.g.oc, !nhwc, false, s.native());
                c.set_output(0, dw);
                return;
            }
            conv_descs d;
            setup_conv(c, d, pl, s.allow_tf32);
            const algo_choice a = choose_algo(conv_pass::backward_filter, s, d, pl, s.allow_tf32);
            const auto algo = static_cast<cudnnConvolutionBwdFilterAlgo_t>(a.algo);
            GRAFT_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv, a.math));
            std::size_t ws = 0;
            GRAFT_CUDNN_CHECK(
                cudnnGetConvolutionBackwardFilterWorkspaceSize(dnn(s), d.x, d.y, d.conv, d.w, algo, &ws));
            void* wsp = ws ? s.workspace(ws) : nullptr;
            GRAFT_CUDNN_CHECK(cudnnConvolutionBackwardFilter(dnn(s), &k_one, d.x, x.raw_data(), d.y, dy.raw_data(),
                                                             d.conv, algo, wsp, ws, &k_zero, d.w, dwc.raw_data()));
            launch::nn_filter_layout(cf(dwc), mf(dw), pl.g.kh, pl.g.kw, pl.g.ic, pl.g.oc, !nhwc, false, s.native());
        }
    }
    c.set_output(0, dw);
}

// ---------------------------------------------------------------- pooling (cuDNN)

/// The CPU's pooling geometry plus the explicitly padded input cuDNN pools without padding.
struct pool_plan {
    nd::pool_geom g;
    std::int64_t pb = 0, pr = 0;
    bool padded = false;
    std::int64_t xh = 0, xw = 0;
};

pool_plan plan_pool(const char* op, const nd::dims4& in, const ops::pool_params& p, bool allow_explicit,
                    const shape& input_shape) {
    pool_plan r;
    r.g = nd::make_pool_geom(op, in, p, allow_explicit, input_shape);
    const nd::pads ex = nd::explicit_pads(op, p.padding, p.explicit_paddings, r.g.nhwc);
    r.pb = nd::window(op, in.h, r.g.kh, r.g.sh, 1, p.padding, ex.top, ex.bottom).pad_after;
    r.pr = nd::window(op, in.w, r.g.kw, r.g.sw, 1, p.padding, ex.left, ex.right).pad_after;
    r.padded = r.g.pt != 0 || r.pb != 0 || r.g.pl != 0 || r.pr != 0;
    r.xh = in.h + r.g.pt + r.pb;
    r.xw = in.w + r.g.pl + r.pr;
    return r;
}

/// Descriptors of one pooling: x (the padded input), y, the window (no padding).
struct pool_descs {
    tensor_desc x, y;
    pool_desc pool;
};

void setup_pool(exec::kernel_context& c, pool_descs& d, const pool_plan& p, bool is_max) {
    const auto& g = p.g;
    set_image(c, d.x, g.nhwc, g.in.n, g.in.c, p.xh, p.xw);
    set_image(c, d.y, g.nhwc, g.out.n, g.out.c, g.out.h, g.out.w);
    // No cuDNN padding (the input is padded explicitly), so INCLUDE_PADDING divides by kh*kw.
    GRAFT_CUDNN_CHECK(cudnnSetPooling2dDescriptor(
        d.pool, is_max ? CUDNN_POOLING_MAX : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
        CUDNN_NOT_PROPAGATE_NAN, to_int(c, g.kh, "ksize"), to_int(c, g.kw, "ksize"), 0, 0, to_int(c, g.sh, "stride"),
        to_int(c, g.sw, "stride")));
    int n = 0, ch = 0, h = 0, w = 0;
    GRAFT_CUDNN_CHECK(cudnnGetPooling2dForwardOutputDim(d.pool, d.x, &n, &ch, &h, &w));
    if (n != g.out.n || ch != g.out.c || h != g.out.h || w != g.out.w) {
        c.fail(cat("internal error: cuDNN's pooling output [", n, ",", ch, ",", h, ",", w, "] is not TF's [", g.out.n,
                   ",", g.out.c, ",", g.out.h, ",", g.out.w, "] (NCHW order)"));
    }
}

template <bool IsMax>
void pool_kernel(exec::kernel_context& c) {
    const char* op = IsMax ? "MaxPool" : "AvgPool";
    const tensor input = c.input(0);
    const auto params = pool_params(c);  // parsed once per plan step
    const ops::pool_params& p = *params;
    nd::check_float(op, "input", input);
    const bool nhwc = nd::is_nhwc(op, p.data_format);
    const nd::dims4 in = nd::activation_dims(op, "input", input, nhwc);
    const pool_plan pl = plan_pool(op, in, p, IsMax, input.shape());
    auto& s = stream_of(c);
    tensor out = output(c, dtype::float32, nd::activation_shape(pl.g.out, nhwc));
    if (out.num_elements() != 0) {
        const float fill = IsMax ? -std::numeric_limits<float>::infinity() : 0.0f;
        const tensor x = pl.padded ? pad_image(s, input, nhwc, in, pl.g.pt, pl.pb, pl.g.pl, pl.pr, fill) : input;
        pool_descs d;
        setup_pool(c, d, pl, IsMax);
        GRAFT_CUDNN_CHECK(cudnnPoolingForward(dnn(s), d.pool, &k_one, d.x, x.raw_data(), &k_zero, d.y, out.raw_data()));
        if (!IsMax && pl.padded) {
            const auto& g = pl.g;
            launch::nn_avg_pool_count_scale(cf(out), mf(out), g.out.n, g.out.c, g.out.h, g.out.w, in.h, in.w, g.kh,
                                            g.kw, g.sh, g.sw, g.pt, g.pl, nhwc, s.native());
        }
    }
    c.set_output(0, out);
}

void max_pool_grad_kernel(exec::kernel_context& c) {
    const char* op = "MaxPoolGrad";
    const tensor x = c.input(0), y = c.input(1), dy = c.input(2);
    const auto params = pool_params(c);  // parsed once per plan step
    const ops::pool_params& p = *params;
    nd::check_float(op, "orig_input", x);
    nd::check_same_dtype(op, "orig_input", x, "grad", dy);
    const bool nhwc = nd::is_nhwc(op, p.data_format);
    const nd::dims4 in = nd::activation_dims(op, "orig_input", x, nhwc);
    const pool_plan pl = plan_pool(op, in, p, true, x.shape());
    const shape want = nd::activation_shape(pl.g.out, nhwc);
    if (!(dy.shape() == want) || !(y.shape() == want)) {
        throw shape_error(cat(op, ": orig_output ", y.shape().str(), " and grad ", dy.shape().str(),
                              " must both be ", want.str(), " (MaxPool of ", x.shape().str(), ")"));
    }
    auto& s = stream_of(c);
    tensor dx = output(c, dtype::float32, x.shape());
    if (dx.num_elements() != 0) {
        if (dy.num_elements() == 0) {
            zero_fill(dx, s);
        } else {
            const float ninf = -std::numeric_limits<float>::infinity();
            const tensor xp = pl.padded ? pad_image(s, x, nhwc, in, pl.g.pt, pl.pb, pl.g.pl, pl.pr, ninf) : x;
            const tensor dxp = pl.padded ? empty(dtype::float32, xp.shape(), s) : dx;
            pool_descs d;
            setup_pool(c, d, pl, true);
            GRAFT_CUDNN_CHECK(cudnnPoolingBackward(dnn(s), d.pool, &k_one, d.y, y.raw_data(), d.y, dy.raw_data(), d.x,
                                                   xp.raw_data(), &k_zero, d.x, dxp.raw_data()));
            if (pl.padded) crop_image(s, dxp, dx, nhwc, in, pl.xh, pl.xw, pl.g.pt, pl.g.pl);
        }
    }
    c.set_output(0, dx);
}

void avg_pool_grad_kernel(exec::kernel_context& c) {
    const char* op = "AvgPoolGrad";
    const tensor sizes = c.input(0), dy = c.input(1);
    const auto params = pool_params(c);  // parsed once per plan step
    const ops::pool_params& p = *params;
    nd::check_float(op, "grad", dy);
    const bool nhwc = nd::is_nhwc(op, p.data_format);
    const shape is = nd::shape_from_tensor(op, "orig_input_shape", sizes);
    if (is.rank() != 4) throw shape_error(cat(op, ": orig_input_shape must have 4 entries, given ", is.str()));
    const auto& v = is.dims();
    const nd::dims4 in = nhwc ? nd::dims4{v[0], v[1], v[2], v[3]} : nd::dims4{v[0], v[2], v[3], v[1]};
    const pool_plan pl = plan_pool(op, in, p, false, is);
    const shape want = nd::activation_shape(pl.g.out, nhwc);
    if (!(dy.shape() == want)) {
        throw shape_error(cat(op, ": grad ", dy.shape().str(), " must be ", want.str(), " (AvgPool of ", is.str(), ")"));
    }
    auto& s = stream_of(c);
    tensor dx = output(c, dtype::float32, is);
    if (dx.num_elements() != 0) {
        if (dy.num_elements() == 0) {
            zero_fill(dx, s);
        } else {
            const auto& g = pl.g;
            // cuDNN spreads dy / (kh*kw) over the padded window; TF spreads dy / count over the input
            // elements under it: scale dy by kh*kw / count first and drop the padding afterwards.
            tensor dys = dy, dxp = dx;
            if (pl.padded) {
                dys = empty(dtype::float32, dy.shape(), s);
                launch::nn_avg_pool_count_scale(cf(dy), mf(dys), g.out.n, g.out.c, g.out.h, g.out.w, in.h, in.w, g.kh,
                                                g.kw, g.sh, g.sw, g.pt, g.pl, nhwc, s.native());
                dxp = empty(dtype::float32, nd::activation_shape({in.n, pl.xh, pl.xw, in.c}, nhwc), s);
            }
            pool_descs d;
            setup_pool(c, d, pl, false);
            // Average pooling's gradient reads neither y nor x: dys and dxp stand in for them.
            GRAFT_CUDNN_CHECK(cudnnPoolingBackward(dnn(s), d.pool, &k_one, d.y, dys.raw_data(), d.y, dys.raw_data(),
                                                   d.x, dxp.raw_data(), &k_zero, d.x, dxp.raw_data()));
            if (pl.padded) crop_image(s, dxp, dx, nhwc, in, pl.xh, pl.xw, g.pt, g.pl);
        }
    }
    c.set_output(0, dx);
}

// ---------------------------------------------------------------- softmax (cuDNN)

template <bool Log>
void softmax_kernel(exec::kernel_context& c) {
    const char* op = Log ? "LogSoftmax" : "Softmax";
    const tensor x = c.input(0);
    nd::check_float(op, "logits", x);
    if (x.rank() < 1) throw shape_error(cat(op, ": logits must have rank >= 1, given ", x.shape().str()));
    const std::int64_t cols = x.dim(x.rank() - 1);
    const std::int64_t rows = cols == 0 ? 0 : x.num_elements() / cols;
    auto& s = stream_of(c);
    tensor y = output_like(c, x);
    if (y.num_elements() != 0) {
        tensor_desc d;  // [rows, cols, 1, 1]: INSTANCE mode normalizes each row over its cols
        set_image(c, d, false, rows, cols, 1, 1);
        GRAFT_CUDNN_CHECK(cudnnSoftmaxForward(dnn(s), Log ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE,
                                              CUDNN_SOFTMAX_MODE_INSTANCE, &k_one, d, x.raw_data(), &k_zero, d,
                                              y.raw_data()));
    }
    c.set_output(0, y);
}

// ---------------------------------------------------------------- batch norm

const float* data_or_null(const tensor& t) { return t.num_elements() ? cf(t) : nullptr; }

/// Scratch (float64) for the NHWC batch-norm reductions' per-block partials; empty where none is used.
tensor bn_workspace(const nd::bn_layout& l, stream& s) {
    const std::int64_t n = launch::nn_bn_workspace(l.outer, l.c, l.inner);
    return n > 0 ? empty(dtype::float64, shape{n}, s) : tensor();
}
double* work_of(const tensor& t) { return t.valid() ? static_cast<double*>(t.raw_data()) : nullptr; }

/// FusedBatchNorm (V1/V2/V3): TF's CPU semantics (graft/ops/batch_norm.hpp) for float32 x.
void fused_batch_norm_kernel(exec::kernel_context& c, int version) {
    const char* op = version >= 3 ? "FusedBatchNormV3" : version == 2 ? "FusedBatchNormV2" : "FusedBatchNorm";
    const tensor x = c.input(0), scale = c.input(1), offset = c.input(2), mean = c.input(3), var = c.input(4);
    const float eps = c.attr_or<float>("epsilon", 0.0001f);
    const float factor = c.attr_or<float>("exponential_avg_factor", 1.0f);
    const std::string df = c.attr_or<std::string>("data_format", "NHWC");
    const bool training = c.attr_or<bool>("is_training", true);
    const dtype u = nd::bn_stat_dtype(op, x);
    const nd::bn_layout l = nd::bn_layout_of(op, x, df);
    nd::check_channel_vec(op, "scale", scale, l.c, u);
    nd::check_channel_vec(op, "offset", offset, l.c, u);
    const bool need_stats = !training || factor != 1.0f;
    if (need_stats || mean.num_elements() != 0) nd::check_channel_vec(op, "mean", mean, l.c, u);
    if (need_stats || var.num_elements() != 0) nd::check_channel_vec(op, "variance", var, l.c, u);
    if (x.type() != dtype::float32) c.fail(cat(op, ": the GPU kernel handles float32 x, given ", x.describe()));
    auto& s = stream_of(c);
    tensor y = output(c, dtype::float32, x.shape());
    tensor batch_mean = output(c, u, {l.c}), batch_var = output(c, u, {l.c});
    tensor saved_mean = output(c, u, {l.c}), saved_var = output(c, u, {l.c});
    const std::int64_t count = l.count();
    if (l.c != 0 && count == 0) {  // TF: empty input gives NaN statistics
        for (const tensor* t : {&batch_mean, &batch_var, &saved_mean, &saved_var})
            launch::nn_fill(mf(*t), l.c, std::numeric_limits<float>::quiet_NaN(), s.native());
    } else if (l.c != 0) {
        const float* m = training ? cf(saved_mean) : cf(mean);
        const float* v = training ? cf(saved_var) : cf(var);
        if (training) {
            const tensor work = bn_workspace(l, s);
            launch::nn_bn_stats(cf(x), l.outer, l.c, l.inner, mf(saved_mean), mf(saved_var), work_of(work), s.native());
        }
        const float adjust = static_cast<float>(count) / static_cast<float>(count > 1 ? count - 1 : 1);
        launch::nn_bn_outputs(m, v, data_or_null(mean), data_or_null(var), l.c, training, factor, adjust,
                              mf(batch_mean), mf(batch_var), mf(saved_mean), mf(saved_var), s.native());
        // y = scale * (x - m) / sqrt(v + eps) + offset with the statistics just settled.
        const bool nhwc = nd::is_nhwc(op, df);
        const nd::dims4 d = nd::activation_dims(op, "x", x, nhwc);
        tensor_desc xd, bnd;
        set_image(c, xd, nhwc, d.n, d.c, d.h, d.w);
        GRAFT_CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(bnd, xd, CUDNN_BATCHNORM_SPATIAL));
        GRAFT_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(dnn(s), CUDNN_BATCHNORM_SPATIAL, &k_one, &k_zero,
                                                                  xd, x.raw_data(), xd, y.raw_data(), bnd, cf(scale),
                                                                  cf(offset), m, v, static_cast<double>(eps)));
    }
    c.set_output(0, y);
    c.set_output(1, batch_mean);
    c.set_output(2, batch_var);
    c.set_output(3, saved_mean);
    c.set_output(4, saved_var);
    if (c.num_outputs() > 5) c.set_output(5, zeros(u, shape{}, s));  // V3's reserve_space_3: a scalar 0 as the CPU
}

/// FusedBatchNormGrad (V1/V2/V3): TF's CPU formulas, reductions on the device.
void fused_batch_norm_grad_kernel(exec::kernel_context& c) {
    const char* op = "FusedBatchNormGrad";
    const tensor dy = c.input(0), x = c.input(1), scale = c.input(2), mean = c.input(3), var = c.input(4);
    const float eps = c.attr_or<float>("epsilon", 0.0001f);
    const std::string df = c.attr_or<std::string>("data_format", "NHWC");
    const bool training = c.attr_or<bool>("is_training", true);
    const dtype u = nd::bn_stat_dtype(op, x);
    nd::check_same_dtype(op, "y_backprop", dy, "x", x);
    if (!(dy.shape() == x.shape())) {
        throw shape_error(cat(op, ": y_backprop ", dy.shape().str(), " must have the shape of x ", x.shape().str()));
    }
    const nd::bn_layout l = nd::bn_layout_of(op, x, df);
    nd::check_channel_vec(op, "scale", scale, l.c, u);
    nd::check_channel_vec(op, "reserve_space_1 (mean)", mean, l.c, u);
    nd::check_channel_vec(op, "reserve_space_2 (variance)", var, l.c, u);
    if (x.type() != dtype::float32) c.fail(cat(op, ": the GPU kernel handles float32 x, given ", x.describe()));
    auto& s = stream_of(c);
    tensor dx = output(c, dtype::float32, x.shape());
    tensor dscale = output(c, u, {l.c}), doffset = output(c, u, {l.c});
    if (l.c != 0) {
        const tensor sums = empty(dtype::float32, shape{2 * l.c}, s);  // sum_dy, sum_dyxc
        const tensor work = bn_workspace(l, s);
        launch::nn_bn_grad_reduce(cf(dy), cf(x), cf(mean), cf(var), l.outer, l.c, l.inner, eps, mf(sums),
                                  mf(sums) + l.c, mf(dscale), mf(doffset), work_of(work), s.native());
        launch::nn_bn_grad_input(cf(dy), cf(x), cf(scale), cf(mean), cf(var), cf(sums), cf(sums) + l.c, l.outer, l.c,
                                 l.inner, eps, training, mf(dx), s.native());
    }
    c.set_output(0, dx);
    c.set_output(1, dscale);
    c.set_output(2, doffset);
    c.set_output(3, output(c, u, {0}));
    c.set_output(4, output(c, u, {0}));
}

}  // namespace

void register_nn(exec::kernel_registry& r) {
    const auto cuda = device_kind::cuda;
    const std::vector<dtype> gemm_types{dtype::float32, dtype::float16, dtype::bfloat16};

    r.add(cuda, "MatMul", matmul_kernel, float_kernel({}, "T", gemm_types));
    r.add(cuda, "BatchMatMul", batch_matmul_kernel, float_kernel({}, "T", gemm_types));
    r.add(cuda, "BatchMatMulV2", batch_matmul_kernel, float_kernel({}, "T", gemm_types));
    r.add(cuda, "BatchMatMulV3", batch_matmul_kernel, float_kernel({}, "Ta", gemm_types));

    r.add(cuda, "Conv2D", conv2d_kernel, float_kernel());
    r.add(cuda, "Conv2DBackpropInput", conv2d_backprop_input_kernel, float_kernel({0}));
    r.add(cuda, "Conv2DBackpropFilter", conv2d_backprop_filter_kernel, float_kernel({1}));

    r.add(cuda, "MaxPool", pool_kernel<true>, float_kernel());
    r.add(cuda, "AvgPool", pool_kernel<false>, float_kernel());
    r.add(cuda, "MaxPoolGrad", max_pool_grad_kernel, float_kernel());
    r.add(cuda, "AvgPoolGrad", avg_pool_grad_kernel, float_kernel({0}));

    r.add(cuda, "Softmax", softmax_kernel<false>, float_kernel());
    r.add(cuda, "LogSoftmax", softmax_kernel<true>, float_kernel());

    for (int version : {1, 2, 3}) {
        const std::string v = version == 1 ? "" : "V" + std::to_string(version);
        r.add(cuda, "FusedBatchNorm" + v, [version](exec::kernel_context& c) { fused_batch_norm_kernel(c, version); },
              float_kernel());
        r.add(cuda, "FusedBatchNormGrad" + v, fused_batch_norm_grad_kernel, float_kernel());
    }
}

}  // namespace graft::cuda::families
