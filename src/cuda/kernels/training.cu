// kernels/training.cu — device code of the training family (src/cuda/exec_training.cpp): one
// fused elementwise kernel per optimizer, a thread per element (grid-stride), updating var and
// its slots in place with the formulas of graft/ops/training.hpp. The scalar hyper-parameters
// are read from device memory.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "graft/cuda/check.hpp"
#include "launch_training.hpp"

namespace graft::cuda::launch {

namespace {

constexpr int threads = 256;

cudaStream_t as_stream(void* s) {
    return static_cast<cudaStream_t>(s);
}

unsigned blocks_for(std::int64_t n) {
    const std::int64_t b = (n + threads - 1) / threads;
    return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(b, 1 << 20)));
}

#define GRAFT_FOR_EACH_ELEMENT(i, n)                                                        \
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; \
         i < (n); i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

// The scalar hyper-parameters are device pointers (TF reads them from device memory too): each
// thread loads them once before its loop, so a step needs no device-to-host copy.

__global__ void gradient_descent_kernel(float* var, const float* delta, const float* alpha_p,
                                        std::int64_t n) {
    const float alpha = *alpha_p;
    GRAFT_FOR_EACH_ELEMENT(i, n) {
        var[i] -= delta[i] * alpha;
    }
}

__global__ void momentum_kernel(float* var, float* accum, const float* grad, const float* lr_p,
                                const float* momentum_p, bool nesterov, std::int64_t n) {
    const float lr = *lr_p, momentum = *momentum_p;
    GRAFT_FOR_EACH_ELEMENT(i, n) {
        const float g = grad[i];
        const float a = accum[i] * momentum + g;
        accum[i] = a;
        if (nesterov)
            var[i] -= g * lr + a * momentum * lr;
        else
            var[i] -= a * lr;
    }
}

__global__ void adam_kernel(float* var, float* m, float* v, const float* grad,
                            const float* beta1_power_p, const float* beta2_power_p,
                            const float* lr_p, const float* beta1_p, const float* beta2_p,
                            const float* epsilon_p, bool nesterov, std::int64_t n) {
    const float beta1 = *beta1_p, beta2 = *beta2_p, epsilon = *epsilon_p;
    // As the CPU computes it, in float (sqrtf and / are correctly rounded without fast math).
    const float alpha = *lr_p * sqrtf(1.f - *beta2_power_p) / (1.f - *beta1_power_p);
    GRAFT_FOR_EACH_ELEMENT(i, n) {
        const float g = grad[i];
        float mi = m[i], vi = v[i];
        mi += (g - mi) * (1.f - beta1);
        vi += (g * g - vi) * (1.f - beta2);
        m[i] = mi;
        v[i] = vi;
        if (nesterov)
            var[i] -= ((g * (1.f - beta1) + mi * beta1) * alpha) / (sqrtf(vi) + epsilon);
        else
            var[i] -= (mi * alpha) / (sqrtf(vi) + epsilon);
    }
}

__global__ void rms_prop_kernel(float* var, float* ms, float* mom, const float* grad,
                                const float* lr_p, const float* rho_p, const float* momentum_p,
                                const float* epsilon_p, std::int64_t n) {
    const float lr = *lr_p, rho = *rho_p, momentum = *momentum_p, epsilon = *epsilon_p;
    GRAFT_FOR_EACH_ELEMENT(i, n) {
        const float g = grad[i];
        float s = ms[i];
        s += (g * g - s) * (1.f - rho);
        ms[i] = s;
        const float mv = mom[i] * momentum + (g * lr) / sqrtf(s + epsilon);
        mom[i] = mv;
        var[i] -= mv;
    }
}

__global__ void centered_rms_prop_kernel(float* var, float* mg, float* ms, float* mom,
                                         const float* grad, const float* lr_p, const float* rho_p,
                                         const float* momentum_p, const float* epsilon_p,
                                         std::int64_t n) {
    const float lr = *lr_p, rho = *rho_p, momentum = *momentum_p, epsilon = *epsilon_p;
    GRAFT_FOR_EACH_ELEMENT(i, n) {
        const float g = grad[i];
        float s = ms[i], gm = mg[i];
        s += (g * g - s) * (1.f - rho);
        gm += (g - gm) * (1.f - rho);
        ms[i] = s;
        mg[i] = gm;
        const float mv = mom[i] * momentum + (g * lr) / sqrtf((s - gm * gm) + epsilon);
        mom[i] = mv;
        var[i] -= mv;
    }
}

__global__ void adagrad_kernel(float* var, float* accum, const float* grad, const float* lr_p,
                               bool update_slots, std::int64_t n) {
    const float lr = *lr_p;
    GRAFT_FOR_EACH_ELEMENT(i, n) {
        const float g = grad[i];
        float a = accum[i];
        if (update_slots) {
            a += g * g;
            accum[i] = a;
        }
        var[i] -= g * lr * (1.f / sqrtf(a));
    }
}

__global__ void adagrad_v2_kernel(float* var, float* accum, const float* grad, const float* lr_p,
                                  const float* epsilon_p, bool update_slots, std::int64_t n) {
    const float lr = *lr_p, epsilon = *epsilon_p;
    GRAFT_FOR_EACH_ELEMENT(i, n) {
        const float g = grad[i];
        float a = accum[i];
        if (update_slots) {
            a += g * g;
            accum[i] = a;
        }
        var[i] -= g * lr / (sqrtf(a) + epsilon);
    }
}

#undef GRAFT_FOR_EACH_ELEMENT

}  // namespace

void apply_gradient_descent_f32(float* var, const float* delta, const float* alpha, std::int64_t n,
                                void* stream) {
    if (n <= 0) return;
    gradient_descent_kernel<<<blocks_for(n), threads, 0, as_stream(stream)>>>(var, delta, alpha, n);
    GRAFT_CUDA_CHECK_LAUNCH("gradient_descent_kernel");
}

void apply_momentum_f32(float* var, float* accum, const float* grad, const float* lr,
                        const float* momentum, bool use_nesterov, std::int64_t n, void* stream) {
    if (n <= 0) return;
    momentum_kernel<<<blocks_for(n), threads, 0, as_stream(stream)>>>(var, accum, grad, lr,
                                                                      momentum, use_nesterov, n);
    GRAFT_CUDA_CHECK_LAUNCH("momentum_kernel");
}

void apply_adam_f32(float* var, float* m, float* v, const float* grad, const adam_scalars& s,
                    bool use_nesterov, std::int64_t n, void* stream) {
    if (n <= 0) return;
    adam_kernel<<<blocks_for(n), threads, 0, as_stream(stream)>>>(
        var, m, v, grad, s.beta1_power, s.beta2_power, s.lr, s.beta1, s.beta2, s.epsilon,
        use_nesterov, n);
    GRAFT_CUDA_CHECK_LAUNCH("adam_kernel");
}

void apply_rms_prop_f32(float* var, float* ms, float* mom, const float* grad,
                        const rms_prop_scalars& s, std::int64_t n, void* stream) {
    if (n <= 0) return;
    rms_prop_kernel<<<blocks_for(n), threads, 0, as_stream(stream)>>>(
        var, ms, mom, grad, s.lr, s.rho, s.momentum, s.epsilon, n);
    GRAFT_CUDA_CHECK_LAUNCH("rms_prop_kernel");
}

void apply_centered_rms_prop_f32(float* var, float* mg, float* ms, float* mom, const float* grad,
                                 const rms_prop_scalars& s, std::int64_t n, void* stream) {
    if (n <= 0) return;
    centered_rms_prop_kernel<<<blocks_for(n), threads, 0, as_stream(stream)>>>(
        var, mg, ms, mom, grad, s.lr, s.rho, s.momentum, s.epsilon, n);
    GRAFT_CUDA_CHECK_LAUNCH("centered_rms_prop_kernel");
}

void apply_adagrad_f32(float* var, float* accum, const float* grad, const float* lr,
                       bool update_slots, std::int64_t n, void* stream) {
    if (n <= 0) return;
    adagrad_kernel<<<blocks_for(n), threads, 0, as_stream(stream)>>>(var, accum, grad, lr,
                                                                     update_slots, n);
    GRAFT_CUDA_CHECK_LAUNCH("adagrad_kernel");
}

void apply_adagrad_v2_f32(float* var, float* accum, const float* grad, const float* lr,
                          const float* epsilon, bool update_slots, std::int64_t n, void* stream) {
    if (n <= 0) return;
    adagrad_v2_kernel<<<blocks_for(n), threads, 0, as_stream(stream)>>>(var, accum, grad, lr,
                                                                        epsilon, update_slots, n);
    GRAFT_CUDA_CHECK_LAUNCH("adagrad_v2_kernel");
}

}  // namespace graft::cuda::launch
