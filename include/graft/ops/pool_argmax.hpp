// graft/ops/pool_argmax.hpp — MaxPoolWithArgmax and MaxPoolGradWithArgmax as TensorFlow's CPU kernels
// compute them (tensorflow/core/kernels/maxpooling_op.cc).
//
//   graft::ops::pool_params p{.ksize = {1, 2, 2, 1}, .strides = {1, 2, 2, 1}, .padding = "SAME"};
//   auto [y, argmax] = graft::ops::max_pool_with_argmax(x, p, dtype::int64, false);
//   tensor dx = graft::ops::max_pool_grad_with_argmax(x, dy, argmax, p, false);
//
// x is NHWC. argmax holds the flat index of each max: ((b * H + y) * W + x) * C + c with
// include_batch_in_index, else (y * W + x) * C + c. The first maximum of a window in row-major order
// wins (padding never does). Every real dtype (float16/bfloat16 compared in float32).
#pragma once

#include "graft/core/config.hpp"

#include <cstdint>
#include <cstring>
#include <vector>
#include <utility>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/ops/pool.hpp"

namespace graft::ops {

/// MaxPoolWithArgmax's two outputs.
struct max_pool_argmax_result {
    tensor output;
    tensor argmax;
};

namespace nn_detail {

inline pool_geom argmax_pool_geom(const char* op, const tensor& x, const pool_params& p) {
    if (p.data_format != "NHWC") {
        throw invalid_argument_error(detail::cat(op, ": only NHWC is supported, given ", p.data_format));
    }
    const dims4 in = activation_dims(op, "input", x, true);
    return make_pool_geom(op, in, p, false, x.shape());
}

inline void check_argmax_dtype(const char* op, dtype t) {
    if (t != dtype::int32 && t != dtype::int64) {
        throw invalid_argument_error(detail::cat(op, ": Targmax must be int32 or int64, given ", dtype_name(t)));
    }
}

inline bool is_real_dtype(dtype t) {
    switch (t) {
        case dtype::float32: case dtype::float64: case dtype::int32: case dtype::int64: case dtype::uint8:
        case dtype::int16: case dtype::int8: case dtype::uint16: case dtype::uint32: case dtype::uint64:
            return true;
        default:
            return false;
    }
}

}  // namespace nn_detail

/// MaxPoolWithArgmax over NHWC x. Throws shape_error (rank) / invalid_argument_error (dtype, attrs).
inline max_pool_argmax_result max_pool_with_argmax(const tensor& x, const pool_params& p, dtype targmax,
                                                   bool include_batch_in_index) {
    const char* op = "MaxPoolWithArgmax";
    nn_detail::check_argmax_dtype(op, targmax);
    if (x.type() == dtype::float16 || x.type() == dtype::bfloat16) {
        auto r = max_pool_with_argmax(cast(x, dtype::float32), p, targmax, include_batch_in_index);
        r.output = cast(r.output, x.type());
        return r;
    }
    if (!nn_detail::is_real_dtype(x.type())) {
        throw invalid_argument_error(detail::cat(op, ": input must be a real number type, given ", x.describe()));
    }
    const nn_detail::pool_geom g = nn_detail::argmax_pool_geom(op, x, p);
    const shape out_shape{g.out.n, g.out.h, g.out.w, g.out.c};
    max_pool_argmax_result r{tensor::uninitialized(x.type(), out_shape), tensor::uninitialized(targmax, out_shape)};
    visit_dtype(x.type(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
            const T* in = x.data<T>();
            T* out = r.output.data<T>();
            const std::int64_t H = g.in.h, W = g.in.w, C = g.in.c, OH = g.out.h, OW = g.out.w;
            nn_detail::parallel_for(g.in.n * OH * OW, 64, [&](std::int64_t q0, std::int64_t q1) {
                std::int64_t y0, y1, x0, x1;
                for (std::int64_t q = q0; q < q1; ++q) {
                    const std::int64_t b = q / (OH * OW), oy = (q / OW) % OH, ox = q % OW;
                    g.window(oy, ox, y0, y1, x0, x1);
                    for (std::int64_t c = 0; c < C; ++c) {
                        std::int64_t best = -1;
                        T m{};
                        for (std::int64_t yy = y0; yy < y1; ++yy)
                            for (std::int64_t xx = x0; xx < x1; ++xx) {
                                const std::int64_t at = ((b * H + yy) * W + xx) * C + c;
                                if (best < 0 || m < in[at]) m = in[at], best = at;
                            }
                        const std::int64_t o = q * C + c;
                        out[o] = best < 0 ? T{} : m;
                        const std::int64_t idx = best < 0 ? -1 : include_batch_in_index ? best : best - b * H * W * C;
                        if (targmax == dtype::int64) r.argmax.data<std::int64_t>()[o] = idx;
                        else r.argmax.data<std::int32_t>()[o] = static_cast<std::int32_t>(idx);
                    }
                }
            });
        }
    });
    return r;
}

/// MaxPoolGradWithArgmax: grad scattered (added) into a zero tensor of input's shape at argmax.
/// Throws shape_error when grad / argmax do not have the pooled shape, invalid_argument_error for an
/// index outside the input (its image, without include_batch_in_index).
inline tensor max_pool_grad_with_argmax(const tensor& input, const tensor& grad, const tensor& argmax,
                                        const pool_params& p, bool include_batch_in_index) {
    const char* op = "MaxPoolGradWithArgmax";
    nn_detail::check_argmax_dtype(op, argmax.type());
    nn_detail::check_same_dtype(op, "input", input, "grad", grad);
    if (input.type() == dtype::float16 || input.type() == dtype::bfloat16) {
        return cast(max_pool_grad_with_argmax(cast(input, dtype::float32), cast(grad, dtype::float32), argmax, p,
                                              include_batch_in_index),
                    input.type());
    }
    if (!nn_detail::is_real_dtype(input.type())) {
        throw invalid_argument_error(detail::cat(op, ": input must be a real number type, given ", input.describe()));
    }
    const nn_detail::pool_geom g = nn_detail::argmax_pool_geom(op, input, p);
    const shape out_shape{g.out.n, g.out.h, g.out.w, g.out.c};
    if (!(grad.shape() == out_shape) || !(argmax.shape() == out_shape)) {
        throw shape_error(detail::cat(op, ": grad and argmax must be ", out_shape.str(), " (input ",
                                      input.shape().str(), " pooled), given ", grad.shape().str(), " and ",
                                      argmax.shape().str()));
    }
    tensor dx(input.type(), input.shape());
    visit_dtype(input.type(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
            const std::int64_t image = g.in.h * g.in.w * g.in.c, per_image = g.out.h * g.out.w * g.out.c;
            const std::int64_t total = input.num_elements();
            for (std::int64_t o = 0; o < grad.num_elements(); ++o) {
                std::int64_t idx = argmax.type() == dtype::int64 ? argmax.data<std::int64_t>()[o]
                                                                 : argmax.data<std::int32_t>()[o];
                const std::int64_t b = per_image ? o / per_image : 0;
                const bool ok = include_batch_in_index ? (idx >= 0 && idx < total) : (idx >= 0 && idx < image);
                if (!ok) {
                    throw invalid_argument_error(detail::cat(op, ": argmax[", o, "] = ", idx, " is outside ",
                                                         include_batch_in_index ? "the input " : "its image ",
                                                         include_batch_in_index ? input.shape().str()
                                                                                : detail::cat("of ", image, " values")));
                }
                if (!include_batch_in_index) idx += b * image;
                dx.data<T>()[idx] = static_cast<T>(dx.data<T>()[idx] + grad.data<T>()[o]);
            }
        }
    });
    return dx;
}

/// MaxPoolGradGradWithArgmax: output[o] = grad[argmax[o]] (grad shaped like input), the gradient of
/// max_pool_grad_with_argmax with respect to its grad. Throws like max_pool_grad_with_argmax.
inline tensor max_pool_grad_grad_with_argmax(const tensor& input, const tensor& grad, const tensor& argmax,
                                             const pool_params& p, bool include_batch_in_index) {
    const char* op = "MaxPoolGradGradWithArgmax";
    nn_detail::check_argmax_dtype(op, argmax.type());
    nn_detail::check_same_dtype(op, "input", input, "grad", grad);
    const nn_detail::pool_geom g = nn_detail::argmax_pool_geom(op, input, p);
    const shape out_shape{g.out.n, g.out.h, g.out.w, g.out.c};
    if (!(grad.shape() == input.shape()) || !(argmax.shape() == out_shape)) {
        throw shape_error(detail::cat(op, ": grad must be ", input.shape().str(), " and argmax ", out_shape.str(),
                                      ", given ", grad.shape().str(), " and ", argmax.shape().str()));
    }
    if (!is_pod_dtype(grad.type())) {
        throw invalid_argument_error(detail::cat(op, ": grad must be a number type, given ", grad.describe()));
    }
    const std::int64_t image = g.in.h * g.in.w * g.in.c, per_image = g.out.h * g.out.w * g.out.c;
    const std::int64_t total = input.num_elements();
    std::vector<std::int64_t> at(static_cast<std::size_t>(argmax.num_elements()));
    for (std::size_t o = 0; o < at.size(); ++o) {
        std::int64_t idx = argmax.type() == dtype::int64 ? argmax.data<std::int64_t>()[o]
                                                         : argmax.data<std::int32_t>()[o];
        const bool ok = include_batch_in_index ? (idx >= 0 && idx < total) : (idx >= 0 && idx < image);
        if (!ok) throw invalid_argument_error(detail::cat(op, ": argmax[", o, "] = ", idx, " is outside the input"));
        if (!include_batch_in_index) idx += static_cast<std::int64_t>(o) / per_image * image;
        at[o] = idx;
    }
    tensor out = tensor::uninitialized(grad.type(), out_shape);
    const std::size_t eb = dtype_size(grad.type());
    const auto* src = static_cast<const unsigned char*>(grad.raw_data());
    auto* dst = static_cast<unsigned char*>(out.raw_data());
    for (std::size_t o = 0; o < at.size(); ++o) std::memcpy(dst + o * eb, src + static_cast<std::size_t>(at[o]) * eb, eb);
    return out;
}

}  // namespace graft::ops
