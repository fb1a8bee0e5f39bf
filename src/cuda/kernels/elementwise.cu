// kernels/elementwise.cu — device loops of the elementwise family: float32 unary and broadcasting
// binary math (one kernel each, the op picked by a switch that is uniform across the grid), the
// activation gradients, bool logic, Select and fills by element size, Cast between eight dtypes,
// AddN, BiasAddGrad and L2Loss (block tree reductions in double). Grid-stride loops with int64
// indices; the formulas follow graft/ops/unary.hpp, binary.hpp and activation_grad.hpp.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "graft/cuda/check.hpp"
#include "launch_elementwise.hpp"

namespace graft::cuda::launch {

namespace {

constexpr int threads = 256;

// SELU constants (Klambauer et al. 2017) as graft/ops/unary.hpp rounds them to float.
constexpr float selu_scale = static_cast<float>(1.0507009873554804934193349852946);
constexpr float selu_scale_alpha =
    static_cast<float>(1.0507009873554804934193349852946 * 1.6732632423543772848170429916717);

unsigned blocks_for(std::int64_t n) {
    return static_cast<unsigned>(
        std::max<std::int64_t>(1, std::min<std::int64_t>((n + threads - 1) / threads, 65535)));
}

cudaStream_t native(void* s) {
    return static_cast<cudaStream_t>(s);
}

__device__ inline std::int64_t first_index() {
    return blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
}
__device__ inline std::int64_t grid_step() {
    return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

/// The offsets of inputs 0..K-1 for output element i under broadcast `d`.
template <int K>
__device__ inline void offsets(const broadcast_desc& d, std::int64_t i, std::int64_t (&off)[K]) {
    if (d.rank == 1) {
#pragma unroll
        for (int k = 0; k < K; ++k) off[k] = i * d.strides[k][0];
        return;
    }
#pragma unroll
    for (int k = 0; k < K; ++k) off[k] = 0;
    std::int64_t rest = i;
#pragma unroll
    for (int j = max_broadcast_rank - 1; j >= 0; --j) {
        if (j >= d.rank) continue;
        const std::int64_t q = rest / d.dims[j];
        const std::int64_t idx = rest - q * d.dims[j];
        rest = q;
#pragma unroll
        for (int k = 0; k < K; ++k) off[k] += idx * d.strides[k][j];
    }
}

__device__ inline float nan_f() {
    return __int_as_float(0x7fc00000);
}

__device__ inline float sigmoid_f(float x) {
    return 1.f / (1.f + expf(-x));
}

__device__ float apply_unary(unary_op op, float x, float param) {
    switch (op) {
        case unary_op::neg:
            return -x;
        case unary_op::abs:
            return fabsf(x);
        case unary_op::sign:
            return isnan(x) ? x : static_cast<float>((x > 0.f) - (x < 0.f));
        case unary_op::square:
            return x * x;
        case unary_op::sqrt:
            return sqrtf(x);
        case unary_op::rsqrt:
            return 1.f / sqrtf(x);
        case unary_op::reciprocal:
            return 1.f / x;
        case unary_op::exp:
            return expf(x);
        case unary_op::log:
            return logf(x);
        case unary_op::log1p:
            return log1pf(x);
        case unary_op::tanh:
            return tanhf(x);
        case unary_op::sigmoid:
            return sigmoid_f(x);
        case unary_op::relu:
            return isnan(x) ? x : (x > 0.f ? x : 0.f);
        case unary_op::relu6:
            return isnan(x) ? x : fminf(fmaxf(x, 0.f), 6.f);
        case unary_op::elu:
            return x < 0.f ? expm1f(x) : x;
        case unary_op::selu:
            return x < 0.f ? expm1f(x) * selu_scale_alpha : x * selu_scale;
        case unary_op::softplus:  // param = log(FLT_EPSILON) + 2 (negative), as the CPU kernel
            return x > -param ? x : (x < param ? expf(x) : log1pf(expf(x)));
        case unary_op::leaky_relu:
            return x > 0.f ? x : x * param;
        case unary_op::floor:
            return floorf(x);
        case unary_op::ceil:
            return ceilf(x);
        case unary_op::round:
            return rintf(x);  // halves to even
        case unary_op::sin:
            return sinf(x);
        case unary_op::cos:
            return cosf(x);
        case unary_op::erf:
            return erff(x);
    }
    return nan_f();
}

__device__ float apply_binary(binary_op op, float a, float b, float param) {
    switch (op) {
        case binary_op::add:
            return a + b;
        case binary_op::sub:
            return a - b;
        case binary_op::mul:
            return a * b;
        case binary_op::div:
            return a / b;
        case binary_op::floor_div:
            return floorf(a / b);
        case binary_op::floor_mod: {
            const float m = fmodf(a, b);
            return (m != 0.f && ((b < 0.f) != (m < 0.f))) ? m + b : m;
        }
        case binary_op::maximum:
            return (isnan(a) || isnan(b)) ? nan_f() : (a > b ? a : b);
        case binary_op::minimum:
            return (isnan(a) || isnan(b)) ? nan_f() : (a < b ? a : b);
        case binary_op::pow:
            return powf(a, b);
        case binary_op::squared_difference: {
            const float d = a - b;
            return d * d;
        }
        // (gradients, features)
        case binary_op::relu_grad:
            return b > 0.f ? a : 0.f;
        case binary_op::relu6_grad:
            return (b > 0.f && b < 6.f) ? a : 0.f;
        case binary_op::softplus_grad:
            return a * sigmoid_f(b);
        case binary_op::leaky_relu_grad:
            return b > 0.f ? a : a * param;
        // (gradients, outputs)
        case binary_op::elu_grad:
            return b < 0.f ? a * (b + 1.f) : a;
        case binary_op::selu_grad:
            return b < 0.f ? a * (b + selu_scale_alpha) : a * selu_scale;
        // (y, dy)
        case binary_op::sigmoid_grad:
            return b * a * (1.f - a);
        case binary_op::tanh_grad:
            return b * (1.f - a * a);
        case binary_op::rsqrt_grad:
            return a * a * a * b * -0.5f;
        case binary_op::sqrt_grad:
            return b * 0.5f / a;
        case binary_op::reciprocal_grad:
            return -b * a * a;
        default:
            return nan_f();
    }
}

__device__ bool apply_comparison(binary_op op, float a, float b) {
    switch (op) {
        case binary_op::equal:
            return a == b;
        case binary_op::not_equal:
            return a != b;
        case binary_op::less:
            return a < b;
        case binary_op::less_equal:
            return a <= b;
        case binary_op::greater:
            return a > b;
        case binary_op::greater_equal:
            return a >= b;
        default:
            return false;
    }
}

__global__ void unary_kernel(unary_op op, const float* x, float* y, std::int64_t n, float param) {
    for (std::int64_t i = first_index(); i < n; i += grid_step())
        y[i] = apply_unary(op, x[i], param);
}

template <class Out>
__global__ void binary_kernel(binary_op op, const float* a, const float* b, Out* out,
                              std::int64_t n, broadcast_desc d, float param) {
    for (std::int64_t i = first_index(); i < n; i += grid_step()) {
        std::int64_t off[2];
        offsets<2>(d, i, off);
        const float x = a[off[0]], y = b[off[1]];
        if constexpr (sizeof(Out) == 1)
            out[i] = apply_comparison(op, x, y);
        else
            out[i] = apply_binary(op, x, y, param);
    }
}

__global__ void logical_not_kernel(const bool* x, bool* y, std::int64_t n) {
    for (std::int64_t i = first_index(); i < n; i += grid_step()) y[i] = !x[i];
}

__global__ void logical_kernel(bool is_and, const bool* a, const bool* b, bool* out, std::int64_t n,
                               broadcast_desc d) {
    for (std::int64_t i = first_index(); i < n; i += grid_step()) {
        std::int64_t off[2];
        offsets<2>(d, i, off);
        out[i] = is_and ? (a[off[0]] && b[off[1]]) : (a[off[0]] || b[off[1]]);
    }
}

template <class U>
__global__ void select_kernel(const bool* cond, const U* t, const U* e, U* out, std::int64_t n,
                              broadcast_desc d) {
    for (std::int64_t i = first_index(); i < n; i += grid_step()) {
        std::int64_t off[3];
        offsets<3>(d, i, off);
        out[i] = cond[off[0]] ? t[off[1]] : e[off[2]];
    }
}

template <class U>
__global__ void fill_kernel(U* out, U v, std::int64_t n) {
    for (std::int64_t i = first_index(); i < n; i += grid_step()) out[i] = v;
}

constexpr int add_n_batch = 8;
struct pointer_batch {
    const float* p[add_n_batch];
};

/// out = (accumulate ? out : 0-th) + the rest, left to right.
__global__ void add_n_kernel(pointer_batch in, int count, bool accumulate, float* out,
                             std::int64_t n) {
    for (std::int64_t i = first_index(); i < n; i += grid_step()) {
        float v = accumulate ? out[i] : in.p[0][i];
        for (int k = accumulate ? 0 : 1; k < count; ++k) v += in.p[k][i];
        out[i] = v;
    }
}

// ---- Cast ----

template <class T>
struct is_float_like : std::false_type {};
template <>
struct is_float_like<__half> : std::true_type {};
template <>
struct is_float_like<__nv_bfloat16> : std::true_type {};

/// graft::ops::op_detail::float_to_int: truncation, NaN -> 0, saturation at the range ends.
template <class To, class From>
__device__ To float_to_int(From v) {
    if (isnan(v)) return To(0);
    if (v <= static_cast<From>(std::numeric_limits<To>::lowest()))
        return std::numeric_limits<To>::lowest();
    if (v >= static_cast<From>(std::numeric_limits<To>::max()))
        return std::numeric_limits<To>::max();
    return static_cast<To>(v);
}

/// One element from a "plain" From (float, double, integers, bool) to To, as graft::ops::cast_to.
template <class To, class From>
__device__ To convert(From v) {
    if constexpr (std::is_same_v<To, bool>) {
        return v != From(0);
    } else if constexpr (std::is_same_v<To, __half>) {
        return __float2half_rn(static_cast<float>(v));
    } else if constexpr (std::is_same_v<To, __nv_bfloat16>) {
        return __float2bfloat16_rn(static_cast<float>(v));
    } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
        return float_to_int<To>(v);
    } else {
        return static_cast<To>(v);
    }
}

template <class From>
__device__ void store(From v, elem to, void* y, std::int64_t i) {
    switch (to) {
        case elem::f32:
            static_cast<float*>(y)[i] = convert<float>(v);
            break;
        case elem::f64:
            static_cast<double*>(y)[i] = convert<double>(v);
            break;
        case elem::f16:
            static_cast<__half*>(y)[i] = convert<__half>(v);
            break;
        case elem::bf16:
            static_cast<__nv_bfloat16*>(y)[i] = convert<__nv_bfloat16>(v);
            break;
        case elem::i32:
            static_cast<std::int32_t*>(y)[i] = convert<std::int32_t>(v);
            break;
        case elem::i64:
            static_cast<std::int64_t*>(y)[i] = convert<std::int64_t>(v);
            break;
        case elem::boolean:
            static_cast<bool*>(y)[i] = convert<bool>(v);
            break;
        case elem::u8:
            static_cast<std::uint8_t*>(y)[i] = convert<std::uint8_t>(v);
            break;
    }
}

__device__ inline float widen(__half v) {
    return __half2float(v);
}
__device__ inline float widen(__nv_bfloat16 v) {
    return __bfloat162float(v);
}

template <class From>
__global__ void cast_kernel(const From* x, void* y, elem to, std::int64_t n) {
    for (std::int64_t i = first_index(); i < n; i += grid_step()) {
        if constexpr (is_float_like<From>::value)
            store(widen(x[i]), to, y, i);  // via float, as the CPU
        else
            store(x[i], to, y, i);
    }
}

template <class From>
void launch_cast(const void* x, void* y, elem to, std::int64_t n, void* stream) {
    cast_kernel<From>
        <<<blocks_for(n), threads, 0, native(stream)>>>(static_cast<const From*>(x), y, to, n);
    GRAFT_CUDA_CHECK(cudaGetLastError());
}

// ---- reductions (double accumulation, one block tree) ----

/// The sum of `v` over the block, valid in thread 0. blockDim.x == threads.
__device__ double block_sum(double v) {
    __shared__ double part[threads];
    part[threadIdx.x] = v;
    __syncthreads();
    for (int s = threads / 2; s > 0; s >>= 1) {
        if (static_cast<int>(threadIdx.x) < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    return part[0];
}

__global__ void bias_add_grad_kernel(const float* dy, float* db, std::int64_t outer,
                                     std::int64_t channels, std::int64_t inner) {
    const std::int64_t m = outer * inner;
    for (std::int64_t c = blockIdx.x; c < channels; c += gridDim.x) {
        double s = 0;
        for (std::int64_t j = threadIdx.x; j < m; j += blockDim.x) {
            const std::int64_t o = j / inner, r = j - o * inner;
            s += static_cast<double>(dy[(o * channels + c) * inner + r]);
        }
        s = block_sum(s);
        if (threadIdx.x == 0) db[c] = static_cast<float>(s);
        __syncthreads();  // part[] is reused by the next channel
    }
}

constexpr std::int64_t l2_max_partials = 1024;

std::int64_t l2_partials(std::int64_t n) {
    return std::max<std::int64_t>(
        1, std::min<std::int64_t>((n + threads * 8 - 1) / (threads * 8), l2_max_partials));
}

__global__ void square_sum_kernel(const float* x, std::int64_t n, double* partial) {
    double s = 0;
    for (std::int64_t i = first_index(); i < n; i += grid_step()) {
        const double v = x[i];
        s += v * v;
    }
    s = block_sum(s);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

__global__ void half_total_kernel(const double* partial, std::int64_t count, float* out) {
    double s = 0;
    for (std::int64_t i = threadIdx.x; i < count; i += blockDim.x) s += partial[i];
    s = block_sum(s);
    if (threadIdx.x == 0) out[0] = static_cast<float>(s) * 0.5f;
}

}  // namespace

void unary_f32(unary_op op, const float* x, float* y, std::int64_t n, float param, void* stream) {
    if (n <= 0) return;
    unary_kernel<<<blocks_for(n), threads, 0, native(stream)>>>(op, x, y, n, param);
    GRAFT_CUDA_CHECK(cudaGetLastError());
}

void binary_f32(binary_op op, const float* a, const float* b, void* out, std::int64_t n,
                const broadcast_desc& d, float param, void* stream) {
    if (n <= 0) return;
    if (is_comparison(op)) {
        binary_kernel<bool><<<blocks_for(n), threads, 0, native(stream)>>>(
            op, a, b, static_cast<bool*>(out), n, d, param);
    } else {
        binary_kernel<float><<<blocks_for(n), threads, 0, native(stream)>>>(
            op, a, b, static_cast<float*>(out), n, d, param);
    }
    GRAFT_CUDA_CHECK(cudaGetLastError());
}

void logical_not(const bool* x, bool* y, std::int64_t n, void* stream) {
    if (n <= 0) return;
    logical_not_kernel<<<blocks_for(n), threads, 0, native(stream)>>>(x, y, n);
    GRAFT_CUDA_CHECK(cudaGetLastError());
}

void logical_binary(bool is_and, const bool* a, const bool* b, bool* out, std::int64_t n,
                    const broadcast_desc& d, void* stream) {
    if (n <= 0) return;
    logical_kernel<<<blocks_for(n), threads, 0, native(stream)>>>(is_and, a, b, out, n, d);
    GRAFT_CUDA_CHECK(cudaGetLastError());
}

/// Calls go(U{}) with the unsigned integer type of `element_bytes` bytes (data is moved, not
/// interpreted). Throws for another size.
template <class F>
void by_element_size(int element_bytes, F&& go) {
    switch (element_bytes) {
        case 1: go(std::uint8_t{}); break;
        case 2: go(std::uint16_t{}); break;
        case 4: go(std::uint32_t{}); break;
        case 8: go(std::uint64_t{}); break;
        default: GRAFT_CUDA_CHECK(cudaErrorInvalidValue);  // no such element size
    }
}

void select(const bool* cond, const void* t, const void* e, void* out, int element_bytes,
            std::int64_t n, const broadcast_desc& d, void* stream) {
    if (n <= 0) return;
    auto go = [&](auto tag) {
        using U = decltype(tag);
        select_kernel<U><<<blocks_for(n), threads, 0, native(stream)>>>(
            cond, static_cast<const U*>(t), static_cast<const U*>(e), static_cast<U*>(out), n, d);
    };
    by_element_size(element_bytes, go);
    GRAFT_CUDA_CHECK(cudaGetLastError());
}

void fill(void* out, int element_bytes, std::uint64_t pattern, std::int64_t n, void* stream) {
    if (n <= 0) return;
    auto go = [&](auto tag) {
        using U = decltype(tag);
        fill_kernel<U><<<blocks_for(n), threads, 0, native(stream)>>>(static_cast<U*>(out),
                                                                      static_cast<U>(pattern), n);
    };
    by_element_size(element_bytes, go);
    GRAFT_CUDA_CHECK(cudaGetLastError());
}

void add_n_f32(const float* const* inputs, int count, float* out, std::int64_t n, void* stream) {
    if (n <= 0 || count <= 0) return;
    for (int first = 0; first < count; first += add_n_batch) {
        pointer_batch b{};
        const int k = std::min(add_n_batch, count - first);
        for (int j = 0; j < k; ++j) b.p[j] = inputs[first + j];
        add_n_kernel<<<blocks_for(n), threads, 0, native(stream)>>>(b, k, first > 0, out, n);
        GRAFT_CUDA_CHECK(cudaGetLastError());
    }
}

void cast(const void* x, elem from, void* y, elem to, std::int64_t n, void* stream) {
    if (n <= 0) return;
    switch (from) {
        case elem::f32:
            launch_cast<float>(x, y, to, n, stream);
            break;
        case elem::f64:
            launch_cast<double>(x, y, to, n, stream);
            break;
        case elem::f16:
            launch_cast<__half>(x, y, to, n, stream);
            break;
        case elem::bf16:
            launch_cast<__nv_bfloat16>(x, y, to, n, stream);
            break;
        case elem::i32:
            launch_cast<std::int32_t>(x, y, to, n, stream);
            break;
        case elem::i64:
            launch_cast<std::int64_t>(x, y, to, n, stream);
            break;
        case elem::boolean:
            launch_cast<bool>(x, y, to, n, stream);
            break;
        case elem::u8:
            launch_cast<std::uint8_t>(x, y, to, n, stream);
            break;
    }
}

void bias_add_grad_f32(const float* dy, float* db, std::int64_t outer, std::int64_t channels,
                       std::int64_t inner, void* stream) {
    if (channels <= 0) return;
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(channels, 65535));
    bias_add_grad_kernel<<<blocks, threads, 0, native(stream)>>>(dy, db, outer, channels, inner);
    GRAFT_CUDA_CHECK(cudaGetLastError());
}

std::int64_t l2_loss_scratch_bytes(std::int64_t n) {
    return l2_partials(n) * static_cast<std::int64_t>(sizeof(double));
}

void l2_loss_f32(const float* x, float* out, std::int64_t n, void* scratch, void* stream) {
    const std::int64_t parts = l2_partials(n);
    auto* partial = static_cast<double*>(scratch);
    square_sum_kernel<<<static_cast<unsigned>(parts), threads, 0, native(stream)>>>(x, n, partial);
    GRAFT_CUDA_CHECK(cudaGetLastError());
    half_total_kernel<<<1, threads, 0, native(stream)>>>(partial, parts, out);
    GRAFT_CUDA_CHECK(cudaGetLastError());
}

}  // namespace graft::cuda::launch
