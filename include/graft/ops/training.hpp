// graft/ops/training.hpp — the optimizer apply ops as TensorFlow defines them
// (tensorflow/core/kernels/training_ops.cc): each updates `var` and its slot tensors in place (their
// buffers are shared with the caller's tensors) and returns `var`, like the op's `out` ref output.
//
//   graft::ops::apply_gradient_descent(w, graft::tensor::scalar_of(0.1f), grad);   // w -= 0.1 * grad
//   graft::ops::apply_adam(w, m, v, b1p, b2p, lr, b1, b2, eps, grad);              // TF's Adam step
//
// Hyper-parameters are scalar tensors of var's dtype (TF's inputs). float32 and float64.
#pragma once

#include "graft/core/config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <utility>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/core/threads.hpp"
#include "graft/ops/detail/nn_util.hpp"
#include "graft/ops/detail/op_support.hpp"
#include "graft/ops/gemm.hpp"
#include "graft/ops/matmul.hpp"
#include "graft/ops/arch/x86/training.hpp"

namespace graft::ops {

/// Attributes of ApplyMomentum.
struct momentum_params {
    bool use_nesterov = false;
};
/// Attributes of ApplyAdam.
struct adam_params {
    bool use_nesterov = false;
};
/// Attributes of ApplyAdagrad / ApplyAdagradV2.
struct adagrad_params {
    bool update_slots = true;
};
/// Attributes of ApplyFtrl.
struct ftrl_params {
    bool multiply_linear_by_lr = false;
};

namespace nn_detail {

/// Checks that every tensor in `same` has var's dtype and shape and every tensor in `scalars` is a
/// scalar of var's dtype; throws naming the op and the input.
inline void check_apply(const char* op, const tensor& var, std::initializer_list<std::pair<const char*, const tensor*>> same,
                        std::initializer_list<std::pair<const char*, const tensor*>> scalars) {
    check_float(op, "var", var);
    for (const auto& [name, t] : same) {
        if (t->type() != var.type() || !(t->shape() == var.shape())) {
            throw shape_error(detail::cat(op, ": ", name, " ", t->describe(), " must match var ", var.describe()));
        }
    }
    for (const auto& [name, t] : scalars) {
        if (t->type() != var.type() || t->rank() != 0) {
            throw invalid_argument_error(detail::cat(op, ": ", name, " must be a ", dtype_name(var.type()),
                                                     " scalar, given ", t->describe()));
        }
    }
}

/// Calls f(T{}) for var's element type (float or double; check_apply has vetted it).
template <class F>
void with_flat(const tensor& var, F&& f) {
    if (var.type() == dtype::float32) f(float{});
    else f(double{});
}

template <class T>
T scalar_value(const tensor& t) {
    return *t.data<T>();
}

}  // namespace nn_detail

/// ApplyGradientDescent: var -= alpha * delta. Throws shape_error / invalid_argument_error on
/// mismatched shapes or dtypes.
inline tensor apply_gradient_descent(const tensor& var, const tensor& alpha, const tensor& delta) {
    nn_detail::check_apply("ApplyGradientDescent", var, {{"delta", &delta}}, {{"alpha", &alpha}});
#ifdef GRAFT_X86_DISPATCH
    if (var.type() == dtype::float32 && gemm::active_kernel() != gemm::kernel_isa::portable) {
        float* v = var.data<float>();
        const float* d = delta.data<float>();
        const float a = nn_detail::scalar_value<float>(alpha);
        op_detail::parallel_for(var.num_elements(), 3.0 * sizeof(float), 2.0, [&](std::int64_t i, std::int64_t j) {
            nn_detail::apply_gradient_descent_avx2(v + i, d + i, a, j - i);
        });
        return var;
    }
#endif
    nn_detail::with_flat(var, [&](auto tag) {
        using T = decltype(tag);
        var.flat<T>().device(cpu_device()) -= delta.flat<T>() * nn_detail::scalar_value<T>(alpha);
    });
    return var;
}

/// ApplyGradientDescent of a matrix product: var -= alpha * MatMul(a, b, transpose_a, transpose_b),
/// the bits MatMul then ApplyGradientDescent give, without the product as a tensor (a dense
/// layer's weight gradient, the executor's _MatMulApplyGradientDescent). float32 [M,N] var with M,
/// N >= 2 on the GEMM path: op(b) packed once per thread, then, where the product is one depth
/// block (K <= 320, a batch of up to 320) and the micro-kernels can (gemm::descends_in_tile), each
/// tile's final sums g step var's rows as the kernel stores them (var - g * alpha, prefetched into
/// L1 while the tile computes); else blocks of at most 96 rows of the product, each into a
/// per-thread scratch (in L2) and subtracted from var's rows at once. The two nodes wrote the
/// [M,N] gradient out, and read it and var back in a second pass. In the MLP 784-512-512-10's
/// training step (AVX2-limited Zen 5 core) the scratch blocks' update took 81-98 and 44-52 us after
/// their products; stepping in the stores took the two nodes from 1335 and 886 us to 1253 and 828
/// (one Emerald Rapids core under AVX2). Other dtypes and shapes run the two ops. Throws as
/// MatMul, then as ApplyGradientDescent.
inline tensor apply_gradient_descent_of_product(const tensor& var, const tensor& alpha, const tensor& a,
                                                const tensor& b, bool transpose_a, bool transpose_b) {
#ifdef GRAFT_X86_DISPATCH
    const auto f32 = [](const tensor& t) { return t.type() == dtype::float32 && t.dev().is_cpu(); };
    if (f32(var) && f32(alpha) && f32(a) && f32(b) && alpha.rank() == 0 && a.rank() == 2 && b.rank() == 2 &&
        var.rank() == 2 && gemm::active_kernel() != gemm::kernel_isa::portable) {
        const std::int64_t M = a.dim(transpose_a ? 1 : 0), K = a.dim(transpose_a ? 0 : 1);
        const std::int64_t N = b.dim(transpose_b ? 0 : 1);
        // M or N of 1: MatMul's matrix-vector product, whose sums run in another order. var read as
        // a or b (its buffer): stepping var while the product still reads it, or while another
        // thread packs it, would mix old values with new; the two ops finish the product first.
        if (b.dim(transpose_b ? 1 : 0) == K && var.dim(0) == M && var.dim(1) == N && M >= 2 && N >= 2 && K > 0 &&
            N <= gemm::nc_block && !a.shares_buffer_with(var) && !b.shares_buffer_with(var)) {
            const gemm::matrix_source<float> B = nn_detail::matmul_b_source(b.data<float>(), K, N, transpose_b);
            const float* ad = a.data<float>();
            const std::int64_t sa_outer = transpose_a ? 1 : K, sa_depth = transpose_a ? M : 1;
            float* v = var.data<float>();
            const float lr = nn_detail::scalar_value<float>(alpha);
            const double flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
            int threads = num_threads();
            if (threads > 1) threads = gemm::detail::product_threads(flops, threads, graft::detail::spinning_workers());
            // each thread a contiguous share in whole 12-row tiles (as MatMul splits rows), in blocks
            constexpr std::int64_t tile = 12, block = gemm::mc_block;
            const std::int64_t share = (M + threads * tile - 1) / (threads * tile) * tile;
            const int tasks = static_cast<int>(std::min<std::int64_t>(threads, (M + share - 1) / share));
            nn_detail::run_tasks(tasks, [&](int t) {
                const std::int64_t r0 = t * share, r1 = std::min(M, r0 + share);
                // op(b) packed by each thread, as MatMul's threads each pack it (one thread packing
                // for all first kept the others waiting), into memory kept for the next call up to
                // 8 MiB (a batch of 4096 against 512 columns), past that taken for this call only
                thread_local gemm::packed_b<float> kept;
                gemm::packed_b<float> once;
                const bool keep = static_cast<double>(K) * static_cast<double>(N) * sizeof(float) <= 8.0 * (1 << 20);
                gemm::packed_b<float>& pb = keep ? kept : once;
                pb.repack(K, N, B);
                const gemm::matrix_source<float> share{ad + r0 * sa_outer, sa_outer, sa_depth, r1 - r0};
                if (gemm::descends_in_tile(N, K, share)) {
                    // each tile's sums step var's rows as the micro-kernel stores them
                    gemm::tile_bias_act step;
                    step.descend = true;
                    step.alpha = lr;
                    step.columns = N;
                    gemm::row_epilogue<float> stepped;
                    stepped.apply = [](const void*, float*, std::int64_t, std::int64_t) {
                        throw std::logic_error("graft internal: _MatMulApplyGradientDescent's fused step did not run");
                    };
                    stepped.in_tile = &step;
                    gemm::run(r1 - r0, N, K, share, B, v + r0 * N, N, 1, false, 1, &pb, &stepped);
                    return;
                }
                float* scratch = gemm::detail::scratch_c<float>(static_cast<std::size_t>(std::min(block, r1 - r0) * N));
                for (std::int64_t i = r0; i < r1; i += block) {
                    const std::int64_t rows = std::min(block, r1 - i);
                    const gemm::matrix_source<float> A{ad + i * sa_outer, sa_outer, sa_depth, rows};
                    gemm::run(rows, N, K, A, B, scratch, N, 1, false, 1, &pb);
                    nn_detail::apply_gradient_descent_avx2(v + i * N, scratch, lr, rows * N);
                }
            });
            return var;
        }
    }
#endif
    matmul_params p;
    p.transpose_a = transpose_a;
    p.transpose_b = transpose_b;
    return apply_gradient_descent(var, alpha, matmul(a, b, p));
}

/// ApplyMomentum: accum = accum * momentum + grad; var -= lr * accum (Nesterov: var -= grad * lr +
/// accum * momentum * lr). Throws on mismatched shapes or dtypes.
inline tensor apply_momentum(const tensor& var, const tensor& accum, const tensor& lr, const tensor& grad,
                             const tensor& momentum, const momentum_params& p = {}) {
    nn_detail::check_apply("ApplyMomentum", var, {{"accum", &accum}, {"grad", &grad}}, {{"lr", &lr}, {"momentum", &momentum}});
    nn_detail::with_flat(var, [&](auto tag) {
        using T = decltype(tag);
        const T l = nn_detail::scalar_value<T>(lr), m = nn_detail::scalar_value<T>(momentum);
        auto a = accum.flat<T>();
        const auto g = grad.flat<T>();
        const auto& d = cpu_device();
        a.device(d) = a * m + g;
        if (p.use_nesterov) var.flat<T>().device(d) -= g * l + a * m * l;
        else var.flat<T>().device(d) -= a * l;
    });
    return var;
}

/// ApplyAdam: m += (g - m)(1 - beta1); v += (g^2 - v)(1 - beta2);
/// var -= lr*sqrt(1 - beta2_power)/(1 - beta1_power) * m / (sqrt(v) + epsilon) (Nesterov: m replaced
/// by g(1 - beta1) + beta1 m). Throws on mismatched shapes or dtypes.
inline tensor apply_adam(const tensor& var, const tensor& m, const tensor& v, const tensor& beta1_power,
                         const tensor& beta2_power, const tensor& lr, const tensor& beta1, const tensor& beta2,
                         const tensor& epsilon, const tensor& grad, const adam_params& p = {}) {
    nn_detail::check_apply("ApplyAdam", var, {{"m", &m}, {"v", &v}, {"grad", &grad}},
                           {{"beta1_power", &beta1_power}, {"beta2_power", &beta2_power}, {"lr", &lr},
                            {"beta1", &beta1}, {"beta2", &beta2}, {"epsilon", &epsilon}});
    nn_detail::with_flat(var, [&](auto tag) {
        using T = decltype(tag);
        using nn_detail::scalar_value;
        const T b1 = scalar_value<T>(beta1), b2 = scalar_value<T>(beta2), eps = scalar_value<T>(epsilon);
        const T alpha = scalar_value<T>(lr) * std::sqrt(T(1) - scalar_value<T>(beta2_power)) /
                        (T(1) - scalar_value<T>(beta1_power));
        auto mm = m.flat<T>();
        auto vv = v.flat<T>();
        const auto g = grad.flat<T>();
        const auto& d = cpu_device();
        mm.device(d) += (g - mm) * (T(1) - b1);
        vv.device(d) += (g.square() - vv) * (T(1) - b2);
        if (p.use_nesterov) var.flat<T>().device(d) -= ((g * (T(1) - b1) + mm * b1) * alpha) / (vv.sqrt() + eps);
        else var.flat<T>().device(d) -= (mm * alpha) / (vv.sqrt() + eps);
    });
    return var;
}

/// ApplyRMSProp: ms += (g^2 - ms)(1 - rho); mom = mom*momentum + lr*g/sqrt(ms + epsilon); var -= mom.
/// Throws on mismatched shapes or dtypes.
inline tensor apply_rms_prop(const tensor& var, const tensor& ms, const tensor& mom, const tensor& lr, const tensor& rho,
                             const tensor& momentum, const tensor& epsilon, const tensor& grad) {
    nn_detail::check_apply("ApplyRMSProp", var, {{"ms", &ms}, {"mom", &mom}, {"grad", &grad}},
                           {{"lr", &lr}, {"rho", &rho}, {"momentum", &momentum}, {"epsilon", &epsilon}});
    nn_detail::with_flat(var, [&](auto tag) {
        using T = decltype(tag);
        using nn_detail::scalar_value;
        const T l = scalar_value<T>(lr), r = scalar_value<T>(rho), mo = scalar_value<T>(momentum),
                eps = scalar_value<T>(epsilon);
        auto s = ms.flat<T>();
        auto mv = mom.flat<T>();
        const auto g = grad.flat<T>();
        const auto& d = cpu_device();
        s.device(d) += (g.square() - s) * (T(1) - r);
        mv.device(d) = mv * mo + (g * l) / (s + eps).sqrt();
        var.flat<T>().device(d) -= mv;
    });
    return var;
}

/// ApplyCenteredRMSProp: ms += (g^2 - ms)(1 - rho); mg += (g - mg)(1 - rho);
/// mom = mom*momentum + lr*g/sqrt(ms - mg^2 + epsilon); var -= mom. Throws on mismatched shapes or dtypes.
inline tensor apply_centered_rms_prop(const tensor& var, const tensor& mg, const tensor& ms, const tensor& mom,
                                      const tensor& lr, const tensor& rho, const tensor& momentum,
                                      const tensor& epsilon, const tensor& grad) {
    nn_detail::check_apply("ApplyCenteredRMSProp", var, {{"mg", &mg}, {"ms", &ms}, {"mom", &mom}, {"grad", &grad}},
                           {{"lr", &lr}, {"rho", &rho}, {"momentum", &momentum}, {"epsilon", &epsilon}});
    nn_detail::with_flat(var, [&](auto tag) {
        using T = decltype(tag);
        using nn_detail::scalar_value;
        const T l = scalar_value<T>(lr), r = scalar_value<T>(rho), mo = scalar_value<T>(momentum),
                eps = scalar_value<T>(epsilon);
        auto s = ms.flat<T>();
        auto gm = mg.flat<T>();
        auto mv = mom.flat<T>();
        const auto g = grad.flat<T>();
        const auto& d = cpu_device();
        s.device(d) += (g.square() - s) * (T(1) - r);
        gm.device(d) += (g - gm) * (T(1) - r);
        mv.device(d) = mv * mo + (g * l) / ((s - gm.square()) + eps).sqrt();
        var.flat<T>().device(d) -= mv;
    });
    return var;
}

/// ApplyAdagrad: accum += g^2 (when update_slots); var -= lr * g / sqrt(accum). Throws on mismatched
/// shapes or dtypes.
inline tensor apply_adagrad(const tensor& var, const tensor& accum, const tensor& lr, const tensor& grad,
                            const adagrad_params& p = {}) {
    nn_detail::check_apply("ApplyAdagrad", var, {{"accum", &accum}, {"grad", &grad}}, {{"lr", &lr}});
    nn_detail::with_flat(var, [&](auto tag) {
        using T = decltype(tag);
        const T l = nn_detail::scalar_value<T>(lr);
        auto a = accum.flat<T>();
        const auto g = grad.flat<T>();
        const auto& d = cpu_device();
        if (p.update_slots) a.device(d) += g.square();
        var.flat<T>().device(d) -= g * l * a.rsqrt();
    });
    return var;
}

/// ApplyAdagradV2: as ApplyAdagrad with var -= lr * g / (sqrt(accum) + epsilon). Throws on
/// mismatched shapes or dtypes.
inline tensor apply_adagrad_v2(const tensor& var, const tensor& accum, const tensor& lr, const tensor& epsilon,
                               const tensor& grad, const adagrad_params& p = {}) {
    nn_detail::check_apply("ApplyAdagradV2", var, {{"accum", &accum}, {"grad", &grad}}, {{"lr", &lr}, {"epsilon", &epsilon}});
    nn_detail::with_flat(var, [&](auto tag) {
        using T = decltype(tag);
        const T l = nn_detail::scalar_value<T>(lr), eps = nn_detail::scalar_value<T>(epsilon);
        auto a = accum.flat<T>();
        const auto g = grad.flat<T>();
        const auto& d = cpu_device();
        if (p.update_slots) a.device(d) += g.square();
        var.flat<T>().device(d) -= g * l / (a.sqrt() + eps);
    });
    return var;
}

/// ApplyAdadelta: accum = rho accum + (1 - rho) g^2; update = sqrt(accum_update + eps) /
/// sqrt(accum + eps) * g; accum_update = rho accum_update + (1 - rho) update^2; var -= lr * update.
/// Throws on mismatched shapes or dtypes.
inline tensor apply_adadelta(const tensor& var, const tensor& accum, const tensor& accum_update, const tensor& lr,
                             const tensor& rho, const tensor& epsilon, const tensor& grad) {
    nn_detail::check_apply("ApplyAdadelta", var, {{"accum", &accum}, {"accum_update", &accum_update}, {"grad", &grad}},
                           {{"lr", &lr}, {"rho", &rho}, {"epsilon", &epsilon}});
    nn_detail::with_flat(var, [&](auto tag) {
        using T = decltype(tag);
        const T l = nn_detail::scalar_value<T>(lr), r = nn_detail::scalar_value<T>(rho),
                eps = nn_detail::scalar_value<T>(epsilon);
        auto a = accum.flat<T>();
        auto au = accum_update.flat<T>();
        const auto g = grad.flat<T>();
        auto v = var.flat<T>();
        const T* gp = g.data();
        T* ap = a.data();
        T* aup = au.data();
        T* vp = v.data();
        nn_detail::parallel_for(var.num_elements(), 4096, [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t i = b; i < e; ++i) {
                ap[i] = ap[i] * r + gp[i] * gp[i] * (T(1) - r);
                const T update = std::sqrt(aup[i] + eps) / std::sqrt(ap[i] + eps) * gp[i];
                aup[i] = aup[i] * r + update * update * (T(1) - r);
                vp[i] -= update * l;
            }
        });
    });
    return var;
}

/// ApplyFtrl (FTRL-proximal, TF's FtrlCompute without l2 shrinkage): new_accum = accum + g^2;
/// linear += g - (new_accum^-p - accum^-p) / lr * var (with multiply_linear_by_lr: g lr - (...) var);
/// var = (clamp(linear, -l1, l1) - linear) / quadratic, quadratic = new_accum^-p / lr + 2 l2 (times lr
/// folded in with multiply_linear_by_lr); p = lr_power (-0.5 uses sqrt). Throws on mismatched shapes
/// or dtypes.
inline tensor apply_ftrl(const tensor& var, const tensor& accum, const tensor& linear, const tensor& grad,
                         const tensor& lr, const tensor& l1, const tensor& l2, const tensor& lr_power,
                         const ftrl_params& p = {}) {
    nn_detail::check_apply("ApplyFtrl", var, {{"accum", &accum}, {"linear", &linear}, {"grad", &grad}},
                           {{"lr", &lr}, {"l1", &l1}, {"l2", &l2}, {"lr_power", &lr_power}});
    nn_detail::with_flat(var, [&](auto tag) {
        using T = decltype(tag);
        const T lrv = nn_detail::scalar_value<T>(lr), l1v = nn_detail::scalar_value<T>(l1),
                l2v = nn_detail::scalar_value<T>(l2), pw = nn_detail::scalar_value<T>(lr_power);
        T* vp = var.flat<T>().data();
        T* ap = accum.flat<T>().data();
        T* lp = linear.flat<T>().data();
        const T* gp = grad.flat<T>().data();
        auto powm = [pw](T x) { return pw == T(-0.5) ? std::sqrt(x) : std::pow(x, -pw); };
        nn_detail::parallel_for(var.num_elements(), 2048, [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t i = b; i < e; ++i) {
                const T g = gp[i], new_accum = ap[i] + g * g;
                const T delta = powm(new_accum) - powm(ap[i]);
                T quadratic, l1_lim;
                if (p.multiply_linear_by_lr) {
                    lp[i] += g * lrv - delta * vp[i];
                    quadratic = powm(new_accum) + T(2) * l2v * lrv;
                    l1_lim = l1v * lrv;
                } else {
                    lp[i] += g - delta / lrv * vp[i];
                    quadratic = powm(new_accum) / lrv + T(2) * l2v;
                    l1_lim = l1v;
                }
                const T adj = std::min(std::max(lp[i], -l1_lim), l1_lim);
                vp[i] = (adj - lp[i]) / quadratic;
                ap[i] = new_accum;
            }
        });
    });
    return var;
}

/// ResourceApplyKerasMomentum: accum = momentum accum - lr g; var += accum (Nesterov: var +=
/// momentum accum - lr g). Throws on mismatched shapes or dtypes.
inline tensor apply_keras_momentum(const tensor& var, const tensor& accum, const tensor& lr, const tensor& grad,
                                   const tensor& momentum, const momentum_params& p = {}) {
    nn_detail::check_apply("ResourceApplyKerasMomentum", var, {{"accum", &accum}, {"grad", &grad}},
                           {{"lr", &lr}, {"momentum", &momentum}});
    nn_detail::with_flat(var, [&](auto tag) {
        using T = decltype(tag);
        const T l = nn_detail::scalar_value<T>(lr), m = nn_detail::scalar_value<T>(momentum);
        auto a = accum.flat<T>();
        const auto g = grad.flat<T>();
        const auto& d = cpu_device();
        a.device(d) = a * m - g * l;
        if (p.use_nesterov) var.flat<T>().device(d) += a * m - g * l;
        else var.flat<T>().device(d) += a;
    });
    return var;
}

}  // namespace graft::ops
