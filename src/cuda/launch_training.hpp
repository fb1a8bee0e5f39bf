// src/cuda/launch_training.hpp — launchers of kernels/training.cu: one fused elementwise kernel
// per optimizer, updating var and its slots in place (float32, n elements). The scalar
// hyper-parameters are device pointers to one float each, read by the kernel (as TF's GPU kernels
// do), so no launch needs a device-to-host copy. The formulas and their evaluation order are those
// of graft/ops/training.hpp (TF's training_ops.cc). Each is queued on `stream` and throws
// graft::error on a CUDA failure.
#pragma once

#include <cstdint>

namespace graft::cuda::launch {

/// The scalars of ApplyAdam (device pointers to one float each).
struct adam_scalars {
    const float* beta1_power = nullptr;
    const float* beta2_power = nullptr;
    const float* lr = nullptr;
    const float* beta1 = nullptr;
    const float* beta2 = nullptr;
    const float* epsilon = nullptr;
};

/// The scalars of ApplyRMSProp and ApplyCenteredRMSProp (device pointers to one float each).
struct rms_prop_scalars {
    const float* lr = nullptr;
    const float* rho = nullptr;
    const float* momentum = nullptr;
    const float* epsilon = nullptr;
};

/// var -= delta * *alpha.
void apply_gradient_descent_f32(float* var, const float* delta, const float* alpha, std::int64_t n,
                                void* stream);

/// accum = accum * momentum + grad; var -= accum * lr (Nesterov: var -= grad * lr + accum *
/// momentum * lr).
void apply_momentum_f32(float* var, float* accum, const float* grad, const float* lr,
                        const float* momentum, bool use_nesterov, std::int64_t n, void* stream);

/// m += (g - m)(1 - beta1); v += (g^2 - v)(1 - beta2); var -= (m * alpha) / (sqrt(v) + epsilon),
/// with alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power) computed on the device (Nesterov:
/// m replaced by g(1 - beta1) + m beta1).
void apply_adam_f32(float* var, float* m, float* v, const float* grad, const adam_scalars& s,
                    bool use_nesterov, std::int64_t n, void* stream);

/// ms += (g^2 - ms)(1 - rho); mom = mom * momentum + (g * lr) / sqrt(ms + epsilon); var -= mom.
void apply_rms_prop_f32(float* var, float* ms, float* mom, const float* grad,
                        const rms_prop_scalars& s, std::int64_t n, void* stream);

/// As apply_rms_prop_f32 with mg += (g - mg)(1 - rho) and sqrt((ms - mg^2) + epsilon).
void apply_centered_rms_prop_f32(float* var, float* mg, float* ms, float* mom, const float* grad,
                                 const rms_prop_scalars& s, std::int64_t n, void* stream);

/// accum += g^2 (when update_slots); var -= g * lr * rsqrt(accum).
void apply_adagrad_f32(float* var, float* accum, const float* grad, const float* lr,
                       bool update_slots, std::int64_t n, void* stream);

/// accum += g^2 (when update_slots); var -= g * lr / (sqrt(accum) + epsilon).
void apply_adagrad_v2_f32(float* var, float* accum, const float* grad, const float* lr,
                          const float* epsilon, bool update_slots, std::int64_t n, void* stream);

}  // namespace graft::cuda::launch
