// src/cuda/launch_training.hpp — launchers of kernels/training.cu: one fused elementwise kernel
// per optimizer, updating var and its slots in place (float32, n elements, hyper-parameters as
// plain floats read on the host). The formulas and their evaluation order are those of
// graft/ops/training.hpp (TF's training_ops.cc). Each is queued on `stream` and throws
// graft::error on a CUDA failure.
#pragma once

#include <cstdint>

namespace graft::cuda::launch {

/// var -= delta * alpha.
void apply_gradient_descent_f32(float* var, const float* delta, float alpha, std::int64_t n,
                                void* stream);

/// accum = accum * momentum + grad; var -= accum * lr (Nesterov: var -= grad * lr + accum *
/// momentum * lr).
void apply_momentum_f32(float* var, float* accum, const float* grad, float lr, float momentum,
                        bool use_nesterov, std::int64_t n, void* stream);

/// m += (g - m)(1 - beta1); v += (g^2 - v)(1 - beta2); var -= (m * alpha) / (sqrt(v) + epsilon),
/// with alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power) computed by the caller (Nesterov: m
/// replaced by g(1 - beta1) + m beta1).
void apply_adam_f32(float* var, float* m, float* v, const float* grad, float alpha, float beta1,
                    float beta2, float epsilon, bool use_nesterov, std::int64_t n, void* stream);

/// ms += (g^2 - ms)(1 - rho); mom = mom * momentum + (g * lr) / sqrt(ms + epsilon); var -= mom.
void apply_rms_prop_f32(float* var, float* ms, float* mom, const float* grad, float lr, float rho,
                        float momentum, float epsilon, std::int64_t n, void* stream);

/// As apply_rms_prop_f32 with mg += (g - mg)(1 - rho) and sqrt((ms - mg^2) + epsilon).
void apply_centered_rms_prop_f32(float* var, float* mg, float* ms, float* mom, const float* grad,
                                 float lr, float rho, float momentum, float epsilon, std::int64_t n,
                                 void* stream);

/// accum += g^2 (when update_slots); var -= g * lr * rsqrt(accum).
void apply_adagrad_f32(float* var, float* accum, const float* grad, float lr, bool update_slots,
                       std::int64_t n, void* stream);

/// accum += g^2 (when update_slots); var -= g * lr / (sqrt(accum) + epsilon).
void apply_adagrad_v2_f32(float* var, float* accum, const float* grad, float lr, float epsilon,
                          bool update_slots, std::int64_t n, void* stream);

}  // namespace graft::cuda::launch
