// graft/ops/fake_quant.hpp — TensorFlow's fake quantization (FakeQuantWithMinMaxArgs/Vars and their
// gradient ops, and the per-channel forms): float32 values clamped to a [min, max] range nudged so that 0 is exactly
// representable, then rounded to one of 2^num_bits (narrow_range: 2^num_bits - 1) levels.
//
//   tensor q = ops::fake_quant(x, -6.f, 6.f, 8, false, /*vars=*/false);
//   auto [dx, dmin, dmax] = ops::fake_quant_vars_gradient(g, x, -6.f, 6.f, 8, false);
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <tuple>

#include "graft/ops/detail/op_support.hpp"

namespace graft::ops {

namespace fake_quant_detail {

/// The quantization grid for [min, max]: nudged bounds, step and its inverse (TF's Nudge).
struct grid {
    float nudged_min = 0, nudged_max = 0, scale = 0, inv_scale = 0;
};

inline grid nudge(float min, float max, int num_bits, bool narrow_range) {
    const float qmin = narrow_range ? 1.0f : 0.0f;
    const float qmax = static_cast<float>((1 << num_bits) - 1);
    grid g;
    g.scale = (max - min) / (qmax - qmin);
    g.inv_scale = (qmax - qmin) / (max - min);  // not 1/scale: TF recomputes it for precision
    const float zero_from_min = qmin - min / g.scale;
    float zero;
    if (zero_from_min < qmin) zero = qmin;
    else if (zero_from_min > qmax) zero = qmax;
    else zero = static_cast<float>(static_cast<std::uint16_t>(std::round(zero_from_min)));
    g.nudged_min = (qmin - zero) * g.scale;
    g.nudged_max = (qmax - zero) * g.scale;
    return g;
}

inline void check_attrs(std::string_view op, int num_bits) {
    if (num_bits < 2 || num_bits > 16)
        throw invalid_argument_error(op_detail::cat(op, ": num_bits must be between 2 and 16 inclusive, got ", num_bits));
}

inline void check_float(std::string_view op, const tensor& t, std::string_view what) {
    op_detail::require_input(op, t, what);
    op_detail::require_dtype(op, t, what, dtype::float32);
}

/// The channel count (x's last dim) after checking min and max are float32 vectors of that size.
inline std::int64_t check_channels(std::string_view op, const tensor& x, const tensor& min, const tensor& max) {
    check_float(op, min, "min");
    check_float(op, max, "max");
    if (x.rank() < 1) throw shape_error(op_detail::cat(op, ": inputs must have rank >= 1 but is a scalar"));
    const std::int64_t d = x.dim(-1);
    for (const tensor* t : {&min, &max}) {
        if (t->rank() != 1 || t->dim(0) != d)
            throw invalid_argument_error(op_detail::cat(op, ": min and max must be vectors of the last dim's size ", d,
                                                        " but are ", min.shape().str(), " and ", max.shape().str()));
    }
    return d;
}

}  // namespace fake_quant_detail

/// FakeQuantWithMinMaxArgs (vars = false: min < max required) or FakeQuantWithMinMaxVars (vars =
/// true: min = max = 0 gives zeros) of a float32 tensor. Throws invalid_argument_error for another
/// dtype, num_bits outside [2, 16] or (Args) min >= max.
inline tensor fake_quant(const tensor& x, float min, float max, int num_bits, bool narrow_range, bool vars) {
    using namespace fake_quant_detail;
    const std::string_view op = vars ? "FakeQuantWithMinMaxVars" : "FakeQuantWithMinMaxArgs";
    check_float(op, x, "inputs");
    check_attrs(op, num_bits);
    if (!vars && !(min < max))
        throw invalid_argument_error(op_detail::cat(op, ": min has to be smaller than max, was: ", min, " >= ", max));
    tensor out = tensor::uninitialized(dtype::float32, x.shape());
    const float* in = x.data<float>();
    float* o = out.data<float>();
    const std::int64_t n = x.num_elements();
    if (vars && min == 0.0f && max == 0.0f) {
        for (std::int64_t i = 0; i < n; ++i) o[i] = 0.0f;
        return out;
    }
    const grid g = nudge(min, max, num_bits, narrow_range);
    const float zero = std::floor(-g.nudged_min * g.inv_scale + 0.5f);
    op_detail::parallel_for(n, 8, 6, [&](std::int64_t a, std::int64_t b) {
        for (std::int64_t i = a; i < b; ++i) {
            const float c = std::max(std::min(in[i], g.nudged_max), g.nudged_min) - g.nudged_min;
            // Args multiplies by the inverse step, Vars divides by the step (TF's two functors)
            const float levels = vars ? c / g.scale : c * g.inv_scale;
            o[i] = std::floor(levels - zero + 0.5f) * g.scale;
        }
    });
    return out;
}

/// FakeQuantWithMinMaxArgsGradient: gradients where inputs lie inside the nudged [min, max], else 0.
/// Throws as fake_quant, and shape_error when gradients and inputs differ in shape.
inline tensor fake_quant_args_gradient(const tensor& grads, const tensor& x, float min, float max, int num_bits,
                                       bool narrow_range) {
    using namespace fake_quant_detail;
    constexpr std::string_view op = "FakeQuantWithMinMaxArgsGradient";
    check_float(op, grads, "gradients");
    check_float(op, x, "inputs");
    check_attrs(op, num_bits);
    if (!(grads.shape() == x.shape()))
        throw shape_error(op_detail::cat(op, ": gradients ", grads.shape().str(), " and inputs ", x.shape().str(),
                                         " must have one shape"));
    if (!(min < max))
        throw invalid_argument_error(op_detail::cat(op, ": min has to be smaller than max, was: ", min, " >= ", max));
    const grid g = nudge(min, max, num_bits, narrow_range);
    tensor out = tensor::uninitialized(dtype::float32, x.shape());
    const float* gi = grads.data<float>();
    const float* in = x.data<float>();
    float* o = out.data<float>();
    for (std::int64_t i = 0, n = x.num_elements(); i < n; ++i)
        o[i] = in[i] >= g.nudged_min && in[i] <= g.nudged_max ? gi[i] : 0.0f;
    return out;
}

/// FakeQuantWithMinMaxVarsGradient: (gradients inside the nudged range, the sum of gradients below
/// it, the sum above it); min = max = 0 passes every gradient to the inputs. Throws as
/// fake_quant_args_gradient.
inline std::tuple<tensor, tensor, tensor> fake_quant_vars_gradient(const tensor& grads, const tensor& x, float min,
                                                                   float max, int num_bits, bool narrow_range) {
    using namespace fake_quant_detail;
    constexpr std::string_view op = "FakeQuantWithMinMaxVarsGradient";
    check_float(op, grads, "gradients");
    check_float(op, x, "inputs");
    check_attrs(op, num_bits);
    if (!(grads.shape() == x.shape()))
        throw shape_error(op_detail::cat(op, ": gradients ", grads.shape().str(), " and inputs ", x.shape().str(),
                                         " must have one shape"));
    tensor dx = tensor::uninitialized(dtype::float32, x.shape());
    const float* gi = grads.data<float>();
    const float* in = x.data<float>();
    float* o = dx.data<float>();
    const std::int64_t n = x.num_elements();
    float below = 0, above = 0;
    if (min == 0.0f && max == 0.0f) {
        for (std::int64_t i = 0; i < n; ++i) o[i] = gi[i];
    } else {
        const grid g = nudge(min, max, num_bits, narrow_range);
        for (std::int64_t i = 0; i < n; ++i) {
            const bool inside = in[i] >= g.nudged_min && in[i] <= g.nudged_max;
            o[i] = inside ? gi[i] : 0.0f;
            if (in[i] < g.nudged_min) below += gi[i];
            if (in[i] > g.nudged_max) above += gi[i];
        }
    }
    return {dx, tensor::scalar_of(below), tensor::scalar_of(above)};
}

/// FakeQuantWithMinMaxVarsPerChannel: fake_quant with its own [min[c], max[c]] for each channel c of
/// the last dim (min and max float32 vectors of that size; a channel with min = max = 0 gives
/// zeros). Throws invalid_argument_error for bad dtypes, num_bits outside [2, 16], or min/max not of
/// the last dim's size.
inline tensor fake_quant_per_channel(const tensor& x, const tensor& min, const tensor& max, int num_bits,
                                     bool narrow_range) {
    using namespace fake_quant_detail;
    constexpr std::string_view op = "FakeQuantWithMinMaxVarsPerChannel";
    check_float(op, x, "inputs");
    const std::int64_t d = check_channels(op, x, min, max);
    check_attrs(op, num_bits);
    tensor out = tensor::uninitialized(dtype::float32, x.shape());
    const float* in = x.data<float>();
    float* o = out.data<float>();
    const std::int64_t rows = d == 0 ? 0 : x.num_elements() / d;
    for (std::int64_t c = 0; c < d; ++c) {
        const float lo = min.data<float>()[c], hi = max.data<float>()[c];
        const bool zero_range = lo == 0.0f && hi == 0.0f;
        const grid g = zero_range ? grid{} : nudge(lo, hi, num_bits, narrow_range);
        const float zero = std::floor(-g.nudged_min * g.inv_scale + 0.5f);
        for (std::int64_t r = 0; r < rows; ++r) {
            const std::int64_t i = r * d + c;
            if (zero_range) {
                o[i] = 0.0f;
                continue;
            }
            const float v = std::max(std::min(in[i], g.nudged_max), g.nudged_min) - g.nudged_min;
            o[i] = std::floor(v * g.inv_scale - zero + 0.5f) * g.scale;
        }
    }
    return out;
}

/// FakeQuantWithMinMaxVarsPerChannelGradient: per channel of the last dim, (gradients inside the
/// nudged range, the sums below and above it as vectors). Throws as fake_quant_per_channel, and
/// shape_error when gradients and inputs differ in shape.
inline std::tuple<tensor, tensor, tensor> fake_quant_per_channel_gradient(const tensor& grads, const tensor& x,
                                                                          const tensor& min, const tensor& max,
                                                                          int num_bits, bool narrow_range) {
    using namespace fake_quant_detail;
    constexpr std::string_view op = "FakeQuantWithMinMaxVarsPerChannelGradient";
    check_float(op, grads, "gradients");
    check_float(op, x, "inputs");
    if (!(grads.shape() == x.shape()))
        throw shape_error(op_detail::cat(op, ": gradients ", grads.shape().str(), " and inputs ", x.shape().str(),
                                         " must have one shape"));
    const std::int64_t d = check_channels(op, x, min, max);
    check_attrs(op, num_bits);
    tensor dx = tensor::uninitialized(dtype::float32, x.shape());
    tensor dmin(dtype::float32, shape{d}), dmax(dtype::float32, shape{d});
    const float* gi = grads.data<float>();
    const float* in = x.data<float>();
    float* o = dx.data<float>();
    const std::int64_t rows = d == 0 ? 0 : x.num_elements() / d;
    for (std::int64_t c = 0; c < d; ++c) {
        const float lo = min.data<float>()[c], hi = max.data<float>()[c];
        const bool zero_range = lo == 0.0f && hi == 0.0f;
        const grid g = zero_range ? grid{} : nudge(lo, hi, num_bits, narrow_range);
        float below = 0, above = 0;
        for (std::int64_t r = 0; r < rows; ++r) {
            const std::int64_t i = r * d + c;
            if (zero_range) {
                o[i] = gi[i];
                continue;
            }
            o[i] = in[i] >= g.nudged_min && in[i] <= g.nudged_max ? gi[i] : 0.0f;
            if (in[i] < g.nudged_min) below += gi[i];
            if (in[i] > g.nudged_max) above += gi[i];
        }
        dmin.data<float>()[c] = below;
        dmax.data<float>()[c] = above;
    }
    return {dx, dmin, dmax};
}

}  // namespace graft::ops
