// graft/ops/batch_norm.hpp — FusedBatchNorm / V2 / V3 and FusedBatchNormGrad / V2 / V3 as
// TensorFlow's CPU kernels compute them (tensorflow/core/kernels/fused_batch_norm_op.cc).
//
//   auto r = graft::ops::fused_batch_norm(x, scale, offset, running_mean, running_var,
//                                         {.epsilon = 1e-3, .exponential_avg_factor = 0.01});
//   // r.y; r.batch_mean / r.batch_variance = updated running stats (variance Bessel-corrected);
//   // r.reserve_space_1 / _2 = this batch's mean and (biased) variance, for the gradient.
//   auto g = graft::ops::fused_batch_norm_grad(dy, x, scale, r.reserve_space_1, r.reserve_space_2, {});
//
// x: float32 or float64 (statistics in the same type), or float16/bfloat16 with float32 statistics;
// NHWC and NCHW.
#pragma once

#include "graft/core/config.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/core/threads.hpp"
#include "graft/ops/detail/nn_util.hpp"

namespace graft::ops {

/// Attributes of FusedBatchNorm / V2 / V3.
struct fused_batch_norm_params {
    double epsilon = 0.0001;
    double exponential_avg_factor = 1.0;  ///< V3's running-average factor (1: replace by this batch)
    std::string data_format = "NHWC";
    bool is_training = true;
    int version = 3;                       ///< 3 adds reserve_space_3 (a scalar 0 on CPU, as TF)
};

/// Outputs of FusedBatchNorm, in TF's order.
struct fused_batch_norm_result {
    tensor y;
    tensor batch_mean;        ///< training: updated running mean; inference: the mean input
    tensor batch_variance;    ///< training: updated running variance (Bessel-corrected batch variance)
    tensor reserve_space_1;   ///< the mean used to normalize
    tensor reserve_space_2;   ///< the (biased) variance used to normalize
    tensor reserve_space_3;   ///< V3 only
};

/// Attributes of FusedBatchNormGrad / V2 / V3.
struct fused_batch_norm_grad_params {
    double epsilon = 0.0001;
    std::string data_format = "NHWC";
    bool is_training = true;
};

/// Outputs of FusedBatchNormGrad, in TF's order (reserve_space_3/4 are empty [0] placeholders).
struct fused_batch_norm_grad_result {
    tensor x_backprop, scale_backprop, offset_backprop, reserve_space_3, reserve_space_4;
};

namespace nn_detail {

/// x seen as [outer][C][inner]: NHWC is [N*H*W][C][1], NCHW is [N][C][H*W].
struct bn_layout {
    std::int64_t outer = 0, c = 0, inner = 0;
    [[nodiscard]] std::int64_t at(std::int64_t o, std::int64_t ch, std::int64_t i) const { return (o * c + ch) * inner + i; }
    [[nodiscard]] std::int64_t count() const { return outer * inner; }
};

/// Per-channel sums of f(index) over the batch, computed in parallel with a fixed chunking.
template <class U, class F>
std::vector<U> bn_channel_sum(const bn_layout& l, F&& f) {
    std::vector<U> total(static_cast<std::size_t>(l.c), U(0));
    if (l.count() == 0 || l.c == 0) return total;
    const int tasks = static_cast<int>(std::min<std::int64_t>(num_threads(), std::max<std::int64_t>(1, l.outer * l.c * l.inner / 32768)));
    const std::int64_t chunk = (l.outer + tasks - 1) / tasks;
    std::vector<std::vector<U>> part(static_cast<std::size_t>(tasks), std::vector<U>(static_cast<std::size_t>(l.c), U(0)));
    run_tasks(tasks, [&](int t) {
        U* acc = part[static_cast<std::size_t>(t)].data();
        for (std::int64_t o = t * chunk; o < std::min(l.outer, (t + 1) * chunk); ++o)
            for (std::int64_t ch = 0; ch < l.c; ++ch) {
                U s = U(0);
                for (std::int64_t i = 0; i < l.inner; ++i) s += f(l.at(o, ch, i), ch);
                acc[ch] += s;
            }
    });
    for (const auto& p : part)
        for (std::size_t ch = 0; ch < total.size(); ++ch) total[ch] += p[ch];
    return total;
}

/// Applies out[i] = f(i, channel) over the batch in parallel.
template <class F>
void bn_channel_apply(const bn_layout& l, F&& f) {
    parallel_for(l.outer, std::max<std::int64_t>(1, 32768 / std::max<std::int64_t>(1, l.c * l.inner)),
                 [&](std::int64_t o0, std::int64_t o1) {
        for (std::int64_t o = o0; o < o1; ++o)
            for (std::int64_t ch = 0; ch < l.c; ++ch)
                for (std::int64_t i = 0; i < l.inner; ++i) f(l.at(o, ch, i), ch);
    });
}

inline bn_layout bn_layout_of(const char* op, const tensor& x, const std::string& data_format) {
    const bool nhwc = is_nhwc(op, data_format);
    const dims4 d = activation_dims(op, "x", x, nhwc);
    return nhwc ? bn_layout{d.n * d.h * d.w, d.c, 1} : bn_layout{d.n, d.c, d.h * d.w};
}

inline void check_channel_vec(const char* op, const char* what, const tensor& v, std::int64_t c, dtype u) {
    if (v.type() != u) {
        throw invalid_argument_error(detail::cat(op, ": ", what, " must be ", dtype_name(u), ", given ", v.describe()));
    }
    if (v.rank() != 1 || v.dim(0) != c) {
        throw shape_error(detail::cat(op, ": ", what, " must be [", c, "] (the channels of x), given ", v.shape().str()));
    }
}

/// The statistics dtype for x's dtype (TF's U); throws for unsupported x.
inline dtype bn_stat_dtype(const char* op, const tensor& x) {
    switch (x.type()) {
        case dtype::float32: case dtype::float16: case dtype::bfloat16: return dtype::float32;
        case dtype::float64: return dtype::float64;
        default:
            throw invalid_argument_error(detail::cat(op, ": x must be float16, bfloat16, float32 or float64, given ",
                                                     x.describe()));
    }
}

template <class U>
void bn_forward(const bn_layout& l, const U* x, const U* scale, const U* offset, const U* mean_in, const U* var_in,
                const fused_batch_norm_params& p, U* y, U* mean_out, U* var_out, U* save_mean, U* save_var) {
    const auto C = static_cast<std::size_t>(l.c);
    const U eps = static_cast<U>(p.epsilon);
    std::vector<U> mean(C), var(C);
    if (p.is_training) {
        const U n = static_cast<U>(l.count());
        mean = bn_channel_sum<U>(l, [&](std::int64_t i, std::int64_t) { return x[i]; });
        for (auto& m : mean) m /= n;
        var = bn_channel_sum<U>(l, [&](std::int64_t i, std::int64_t ch) {
            const U d = x[i] - mean[static_cast<std::size_t>(ch)];
            return d * d;
        });
        for (auto& v : var) v /= n;
    } else {
        for (std::size_t ch = 0; ch < C; ++ch) mean[ch] = mean_in[ch], var[ch] = var_in[ch];
    }
    std::vector<U> a(C);
    for (std::size_t ch = 0; ch < C; ++ch) a[ch] = scale[ch] / std::sqrt(var[ch] + eps);
    bn_channel_apply(l, [&](std::int64_t i, std::int64_t ch) {
        const auto cs = static_cast<std::size_t>(ch);
        y[i] = (x[i] - mean[cs]) * a[cs] + offset[cs];
    });
    const std::int64_t n = l.count();
    const U adjust = static_cast<U>(n) / static_cast<U>(n > 1 ? n - 1 : 1);  // Bessel's correction
    const U f = static_cast<U>(p.exponential_avg_factor);
    for (std::size_t ch = 0; ch < C; ++ch) {
        save_mean[ch] = mean[ch], save_var[ch] = var[ch];
        if (!p.is_training) {
            mean_out[ch] = mean[ch], var_out[ch] = var[ch];
        } else if (f == U(1)) {
            mean_out[ch] = mean[ch], var_out[ch] = var[ch] * adjust;
        } else {
            mean_out[ch] = (U(1) - f) * mean_in[ch] + f * mean[ch];
            var_out[ch] = (U(1) - f) * var_in[ch] + (f * adjust) * var[ch];
        }
    }
}

template <class U>
void bn_backward(const bn_layout& l, const U* dy, const U* x, const U* scale, const U* mean, const U* var,
                 const fused_batch_norm_grad_params& p, U* dx, U* dscale, U* doffset) {
    const auto C = static_cast<std::size_t>(l.c);
    std::vector<U> coef0(C);
    for (std::size_t ch = 0; ch < C; ++ch) coef0[ch] = U(1) / std::sqrt(var[ch] + static_cast<U>(p.epsilon));
    const auto sum_dy = bn_channel_sum<U>(l, [&](std::int64_t i, std::int64_t) { return dy[i]; });
    const auto sum_dyxc = bn_channel_sum<U>(l, [&](std::int64_t i, std::int64_t ch) {
        return dy[i] * (x[i] - mean[static_cast<std::size_t>(ch)]);
    });
    for (std::size_t ch = 0; ch < C; ++ch) doffset[ch] = sum_dy[ch], dscale[ch] = sum_dyxc[ch] * coef0[ch];
    if (!p.is_training) {  // the statistics are constants: dx = dy * scale / sqrt(var + eps)
        bn_channel_apply(l, [&](std::int64_t i, std::int64_t ch) {
            const auto cs = static_cast<std::size_t>(ch);
            dx[i] = dy[i] * scale[cs] * coef0[cs];
        });
        return;
    }
    const U n = static_cast<U>(std::max<std::int64_t>(1, l.count()));
    bn_channel_apply(l, [&](std::int64_t i, std::int64_t ch) {
        const auto cs = static_cast<std::size_t>(ch);
        const U xc = x[i] - mean[cs];
        dx[i] = scale[cs] * coef0[cs] * ((dy[i] - sum_dy[cs] / n) - xc * coef0[cs] * coef0[cs] * (sum_dyxc[cs] / n));
    });
}

}  // namespace nn_detail

/// FusedBatchNorm (V1/V2/V3 by p.version): normalizes x per channel with this batch's statistics
/// (is_training) or with mean/variance (inference) and updates the running statistics as TF does.
/// In training with exponential_avg_factor == 1, mean and variance may be empty. Throws shape_error /
/// invalid_argument_error naming the op and the offending tensor.
inline fused_batch_norm_result fused_batch_norm(const tensor& x, const tensor& scale, const tensor& offset,
                                                const tensor& mean, const tensor& variance,
                                                const fused_batch_norm_params& p = {}) {
    const char* op = p.version >= 3 ? "FusedBatchNormV3" : p.version == 2 ? "FusedBatchNormV2" : "FusedBatchNorm";
    const dtype u = nn_detail::bn_stat_dtype(op, x);
    const nn_detail::bn_layout l = nn_detail::bn_layout_of(op, x, p.data_format);
    nn_detail::check_channel_vec(op, "scale", scale, l.c, u);
    nn_detail::check_channel_vec(op, "offset", offset, l.c, u);
    const bool need_stats = !p.is_training || p.exponential_avg_factor != 1.0;
    if (need_stats || mean.num_elements() != 0) nn_detail::check_channel_vec(op, "mean", mean, l.c, u);
    if (need_stats || variance.num_elements() != 0) nn_detail::check_channel_vec(op, "variance", variance, l.c, u);
    const tensor xu = x.type() == u ? x : cast(x, u);
    fused_batch_norm_result r;
    tensor yu = tensor::uninitialized(u, x.shape());
    r.batch_mean = tensor::uninitialized(u, {l.c});
    r.batch_variance = tensor::uninitialized(u, {l.c});
    r.reserve_space_1 = tensor::uninitialized(u, {l.c});
    r.reserve_space_2 = tensor::uninitialized(u, {l.c});
    if (p.version >= 3) r.reserve_space_3 = tensor(u, shape{});
    visit_dtype(u, [&](auto tag) {
        using U = decltype(tag);
        if constexpr (std::is_same_v<U, float> || std::is_same_v<U, double>) {
            if (l.count() == 0) {  // TF: empty input gives NaN statistics
                for (tensor* t : {&r.batch_mean, &r.batch_variance, &r.reserve_space_1, &r.reserve_space_2})
                    for (std::int64_t i = 0; i < l.c; ++i) t->data<U>()[i] = std::numeric_limits<U>::quiet_NaN();
                return;
            }
            const U* m = mean.num_elements() ? mean.data<U>() : nullptr;
            const U* v = variance.num_elements() ? variance.data<U>() : nullptr;
            nn_detail::bn_forward(l, xu.data<U>(), scale.data<U>(), offset.data<U>(), m, v, p, yu.data<U>(),
                                  r.batch_mean.data<U>(), r.batch_variance.data<U>(), r.reserve_space_1.data<U>(),
                                  r.reserve_space_2.data<U>());
        }
    });
    r.y = x.type() == u ? yu : cast(yu, x.type());
    return r;
}

/// FusedBatchNormGrad / V2 / V3: gradients of FusedBatchNorm with respect to x, scale and offset,
/// given reserve_space_1/2 of the forward pass (the batch mean and variance in training; the
/// population mean and variance in inference). Throws shape_error / invalid_argument_error.
inline fused_batch_norm_grad_result fused_batch_norm_grad(const tensor& y_backprop, const tensor& x, const tensor& scale,
                                                          const tensor& reserve_space_1, const tensor& reserve_space_2,
                                                          const fused_batch_norm_grad_params& p = {}) {
    const char* op = "FusedBatchNormGrad";
    const dtype u = nn_detail::bn_stat_dtype(op, x);
    nn_detail::check_same_dtype(op, "y_backprop", y_backprop, "x", x);
    if (!(y_backprop.shape() == x.shape())) {
        throw shape_error(detail::cat(op, ": y_backprop ", y_backprop.shape().str(), " must have the shape of x ",
                                      x.shape().str()));
    }
    const nn_detail::bn_layout l = nn_detail::bn_layout_of(op, x, p.data_format);
    nn_detail::check_channel_vec(op, "scale", scale, l.c, u);
    nn_detail::check_channel_vec(op, "reserve_space_1 (mean)", reserve_space_1, l.c, u);
    nn_detail::check_channel_vec(op, "reserve_space_2 (variance)", reserve_space_2, l.c, u);
    const tensor xu = x.type() == u ? x : cast(x, u);
    const tensor dyu = y_backprop.type() == u ? y_backprop : cast(y_backprop, u);
    fused_batch_norm_grad_result r;
    tensor dxu = tensor::uninitialized(u, x.shape());
    r.scale_backprop = tensor::uninitialized(u, {l.c});
    r.offset_backprop = tensor::uninitialized(u, {l.c});
    r.reserve_space_3 = tensor(u, shape{0});
    r.reserve_space_4 = tensor(u, shape{0});
    visit_dtype(u, [&](auto tag) {
        using U = decltype(tag);
        if constexpr (std::is_same_v<U, float> || std::is_same_v<U, double>) {
            nn_detail::bn_backward(l, dyu.data<U>(), xu.data<U>(), scale.data<U>(), reserve_space_1.data<U>(),
                                   reserve_space_2.data<U>(), p, dxu.data<U>(), r.scale_backprop.data<U>(),
                                   r.offset_backprop.data<U>());
        }
    });
    r.x_backprop = x.type() == u ? dxu : cast(dxu, x.type());
    return r;
}

}  // namespace graft::ops
