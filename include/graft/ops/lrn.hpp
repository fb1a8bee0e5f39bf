// graft/ops/lrn.hpp — local response normalization (LRN) and its gradient (LRNGrad) as TensorFlow's
// CPU kernels define them (tensorflow/core/kernels/lrn_op.cc).
//
//   graft::ops::lrn_params p{.depth_radius = 2, .bias = 1, .alpha = 1e-4, .beta = 0.75};
//   tensor y  = graft::ops::lrn(x, p);              // x rank 4, normalized along the last axis
//   tensor dx = graft::ops::lrn_grad(dy, x, y, p);
//
// sqr_sum[..., d] = sum of x[..., k]^2 for k in [d - depth_radius, d + depth_radius] within the
// channels; y = x / (bias + alpha * sqr_sum)^beta. float32/float64 (float16/bfloat16 in float32).
#pragma once

#include "graft/core/config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/ops/detail/nn_util.hpp"

namespace graft::ops {

/// Attributes of LRN / LRNGrad (TF's defaults).
struct lrn_params {
    std::int64_t depth_radius = 5;
    double bias = 1.0;
    double alpha = 1.0;
    double beta = 0.5;
};

namespace nn_detail {

inline dtype lrn_compute_type(const char* op, const char* what, const tensor& t) {
    if (t.rank() != 4) throw shape_error(detail::cat(op, ": ", what, " must be rank 4, given ", t.shape().str()));
    switch (t.type()) {
        case dtype::float32: case dtype::float16: case dtype::bfloat16: return dtype::float32;
        case dtype::float64: return dtype::float64;
        default:
            throw invalid_argument_error(
                detail::cat(op, ": ", what, " must be float16, bfloat16, float32 or float64, given ", t.describe()));
    }
}

inline void check_lrn_params(const char* op, const lrn_params& p) {
    if (p.depth_radius < 0) {
        throw invalid_argument_error(detail::cat(op, ": depth_radius must be >= 0, given ", p.depth_radius));
    }
}

}  // namespace nn_detail

/// LRN over the last axis of a rank-4 x. Throws shape_error (rank) / invalid_argument_error (dtype,
/// negative depth_radius).
inline tensor lrn(const tensor& x, const lrn_params& p = {}) {
    const char* op = "LRN";
    const dtype u = nn_detail::lrn_compute_type(op, "input", x);
    nn_detail::check_lrn_params(op, p);
    const tensor xu = x.type() == u ? x : cast(x, u);
    tensor y = tensor::uninitialized(u, x.shape());
    const std::int64_t C = x.dim(3), rows = C ? x.num_elements() / C : 0;
    visit_dtype(u, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            const T* in = xu.data<T>();
            T* out = y.data<T>();
            nn_detail::parallel_for(rows, std::max<std::int64_t>(1, 1024 / std::max<std::int64_t>(1, C)),
                                    [&](std::int64_t r0, std::int64_t r1) {
                for (std::int64_t r = r0; r < r1; ++r) {
                    const T* a = in + r * C;
                    T* b = out + r * C;
                    for (std::int64_t d = 0; d < C; ++d) {
                        const std::int64_t lo = std::max<std::int64_t>(0, d - p.depth_radius);
                        const std::int64_t hi = std::min(C, d + p.depth_radius + 1);
                        T sum = T(0);
                        for (std::int64_t k = lo; k < hi; ++k) sum += a[k] * a[k];
                        const T norm = static_cast<T>(p.bias) + static_cast<T>(p.alpha) * sum;
                        b[d] = a[d] * std::pow(norm, static_cast<T>(-p.beta));
                    }
                }
            });
        }
    });
    return x.type() == u ? y : cast(y, x.type());
}

/// LRNGrad: the gradient of lrn at input_image (whose output was output_image) given input_grads.
/// Throws shape_error unless the three are rank 4 of one shape, invalid_argument_error (dtype).
inline tensor lrn_grad(const tensor& input_grads, const tensor& input_image, const tensor& output_image,
                       const lrn_params& p = {}) {
    const char* op = "LRNGrad";
    const dtype u = nn_detail::lrn_compute_type(op, "input_grads", input_grads);
    nn_detail::check_lrn_params(op, p);
    for (const tensor* t : {&input_image, &output_image}) {
        if (!(t->shape() == input_grads.shape()) || t->type() != input_grads.type()) {
            throw shape_error(detail::cat(op, ": input_grads, input_image and output_image must have one shape and ",
                                          "dtype, given ", input_grads.describe(), ", ", input_image.describe(),
                                          " and ", output_image.describe()));
        }
    }
    auto as_u = [&](const tensor& t) { return t.type() == u ? t : cast(t, u); };
    const tensor g = as_u(input_grads), xi = as_u(input_image), yo = as_u(output_image);
    tensor dx(u, input_grads.shape());
    const std::int64_t C = input_grads.dim(3), rows = C ? input_grads.num_elements() / C : 0;
    visit_dtype(u, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            const T alpha = static_cast<T>(p.alpha), beta = static_cast<T>(p.beta), bias = static_cast<T>(p.bias);
            nn_detail::parallel_for(rows, std::max<std::int64_t>(1, 1024 / std::max<std::int64_t>(1, C)),
                                    [&](std::int64_t r0, std::int64_t r1) {
                for (std::int64_t r = r0; r < r1; ++r) {
                    const T* a = xi.data<T>() + r * C;
                    const T* y = yo.data<T>() + r * C;
                    const T* dy = g.data<T>() + r * C;
                    T* out = dx.data<T>() + r * C;
                    for (std::int64_t j = 0; j < C; ++j) {
                        const std::int64_t lo = std::max<std::int64_t>(0, j - p.depth_radius);
                        const std::int64_t hi = std::min(C, j + p.depth_radius + 1);
                        T norm = T(0);
                        for (std::int64_t k = lo; k < hi; ++k) norm += a[k] * a[k];
                        norm = norm * alpha + bias;
                        const T pw = std::pow(norm, -beta);
                        // d y_j / d x_k = [k == j] norm^-beta - 2 alpha beta x_k y_j / norm
                        for (std::int64_t k = lo; k < hi; ++k) {
                            T d = T(-2) * alpha * beta * a[k] * y[j] / norm;
                            if (k == j) d += pw;
                            out[k] += d * dy[j];
                        }
                    }
                }
            });
        }
    });
    return input_grads.type() == u ? dx : cast(dx, input_grads.type());
}

}  // namespace graft::ops
