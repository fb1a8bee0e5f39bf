// graft/ops/random_more.hpp — RandomGamma, RandomPoisson / RandomPoissonV2 and RandomGammaGrad with
// TensorFlow's CPU samplers (random_gamma_op.cc, random_poisson_op.cc), drawing from the same Philox
// stream as graft/ops/random.hpp, so a seeded op gives TF's samples.
//
//   graft::ops::guarded_philox gen(/*seed=*/1, /*seed2=*/12);   // one per op node, like TF
//   tensor g = graft::ops::random_gamma(shape_vec, alpha, gen);   // shape ++ alpha.shape samples
//   tensor p = graft::ops::random_poisson(shape_vec, rate, graft::dtype::int64, gen);
//   tensor d = graft::ops::random_gamma_grad(alpha, g);           // d sample / d alpha
//
// How TF draws (and so how these do): a run reserves 256 Philox outputs (128 bits each) per output
// element; output number k (k = alpha_index * samples_per_alpha + sample_index, alphas outer) starts
// from the run's generator skipped by 256 * k, so the values do not depend on threading. Uniforms and
// normals are float64 whatever the output dtype: one Philox output makes two uniforms
// (Uint64ToDouble of words 0,1 and 2,3) or two normals (Box-Muller over the four words), and the
// samplers take each pair's second value first.
//   * Gamma (Marsaglia & Tsang): alpha == 1 is -log(1 - u) of one uniform; otherwise
//     d = alpha - 1/3 (alpha + 2/3 when alpha < 1), c = 1 / (3 sqrt(d)); draw a normal x until
//     v = (1 + c x)^3 > 0, then a uniform u; accept d * v when u < 1 - 0.0331 x^4 or
//     log u < x^2 / 2 + d (1 - v + log v), and for alpha < 1 multiply by u'^(1 / alpha) of one more
//     uniform.
//   * Poisson: rate < 10 counts uniforms until their product falls to exp(-rate) (Knuth); larger
//     rates use Hormann's transformed rejection (PTRS) from pairs of uniforms.
// Verified against TF's recorded samples: dl4j-tf-graphs random_gamma/rank1_float{32,64} and
// random_poisson/rank1_float16 (tests/conformance/test_tf_suite).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

#include <unsupported/Eigen/SpecialFunctions>

#include "graft/ops/math_more.hpp"
#include "graft/ops/random.hpp"

namespace graft::ops {

namespace random_detail {

/// TF's kReservedSamplesPerOutput: Philox outputs set aside for each output element.
inline constexpr std::uint64_t reserved_per_output = 256;

/// Float64 uniforms and normals from one output's own Philox stream, handed out as TF's
/// UniformDistribution<double> / NormalDistribution<double> results are used there: each draw of
/// the distribution gives two values, taken last first.
class double_draws {
public:
    double_draws(const philox4x32& run, std::int64_t output_index) : gen_(run) {
        gen_.skip(reserved_per_output * static_cast<std::uint64_t>(output_index));
    }
    double uniform() {
        if (uniform_left_ == 0) {
            const auto r = gen_();
            uniform_[0] = nn_detail::uint64_to_double(r[0], r[1]);
            uniform_[1] = nn_detail::uint64_to_double(r[2], r[3]);
            uniform_left_ = 2;
        }
        return uniform_[--uniform_left_];
    }
    double normal() {
        if (normal_left_ == 0) {
            const auto r = gen_();
            nn_detail::box_muller(r[0], r[1], r[2], r[3], &normal_[0], &normal_[1]);
            normal_left_ = 2;
        }
        return normal_[--normal_left_];
    }

private:
    philox4x32 gen_;
    double uniform_[2] = {0, 0};
    double normal_[2] = {0, 0};
    int uniform_left_ = 0;
    int normal_left_ = 0;
};

/// One Gamma(alpha, 1) sample from the draws (alpha >= 0).
inline double gamma_sample(double alpha, double_draws& draws) {
    if (alpha == 1.0) return -std::log(1.0 - draws.uniform());  // exponential
    const bool boost = alpha < 1;
    const double d = alpha + (boost ? 2.0 / 3 : -1.0 / 3);
    const double c = 1.0 / 3 / std::sqrt(d);
    for (;;) {
        const double x = draws.normal();
        double v = 1 + c * x;
        if (v <= 0) continue;
        v = v * v * v;
        const double u = draws.uniform();
        if (u < 1 - 0.0331 * (x * x) * (x * x) || std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v))) {
            double res = d * v;
            if (boost) res *= std::pow(draws.uniform(), 1 / alpha);
            return res;
        }
    }
}

/// One Poisson(rate) sample whose value must not exceed `highest` (the output dtype's largest).
inline double poisson_sample(double rate, double highest, double_draws& draws) {
    if (rate < 10) {
        const double exp_neg_rate = std::exp(-rate);
        double prod = 1, x = 0;
        for (;;) {
            prod *= draws.uniform();
            if (prod <= exp_neg_rate && x <= highest) return x;
            x += 1;
        }
    }
    const double log_rate = std::log(rate);
    const double b = 0.931 + 2.53 * std::sqrt(rate);
    const double a = -0.059 + 0.02483 * b;
    const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
    for (;;) {
        const double u = draws.uniform() - 0.5;
        const double v = draws.uniform();
        const double u_shifted = 0.5 - std::abs(u);
        const double k = std::floor((2 * a / u_shifted + b) * u + rate + 0.43);
        if (k > highest) continue;
        if (u_shifted >= 0.07 && v <= 0.9277 - 3.6224 / (b - 2)) return k;
        if (k < 0 || (u_shifted < 0.013 && v > u_shifted)) continue;
        const double s = std::log(v * inv_alpha / (a / (u_shifted * u_shifted) + b));
        const double t = -rate + k * log_rate - std::lgamma(k + 1);
        if (s <= t) return k;
    }
}

/// The sample shape (from `shape_t`) followed by the parameter's shape.
inline shape samples_shape(const char* op, const tensor& shape_t, const tensor& param, std::int64_t* per_param) {
    const shape s = nn_detail::shape_from_tensor(op, "shape", shape_t);
    *per_param = s.num_elements();
    std::vector<std::int64_t> dims = s.dims();
    for (std::int64_t d : param.shape().dims()) dims.push_back(d);
    return shape(std::move(dims));
}

/// The parameter tensor's values as float64.
inline std::vector<double> values_as_double(const tensor& t) {
    const tensor d = t.type() == dtype::float64 ? t : cast(t, dtype::float64);
    return {d.data<double>(), d.data<double>() + d.num_elements()};
}

/// Output element k of a run: k = param_index * per_param + sample_index, written at
/// sample_index * num_params + param_index. fn(param, draws) gives its value.
template <class T, class F>
void fill_per_output(T* out, const std::vector<double>& params, std::int64_t per_param, const philox4x32& run,
                     std::int64_t cost, const F& fn) {
    const auto num_params = static_cast<std::int64_t>(params.size());
    nn_detail::parallel_for(num_params * per_param, std::max<std::int64_t>(1, 20000 / cost), [&](std::int64_t k0, std::int64_t k1) {
        for (std::int64_t k = k0; k < k1; ++k) {
            const std::int64_t p = k / per_param, s = k % per_param;
            double_draws draws(run, k);
            out[s * num_params + p] = static_cast<T>(fn(params[static_cast<std::size_t>(p)], draws));
        }
    });
}

}  // namespace random_detail

/// RandomGamma: Gamma(alpha, 1) samples of shape `shape_t` (an int32/int64 vector) ++ alpha.shape,
/// alpha float16/bfloat16/float32/float64 (the output dtype), TF's sampler and stream (one run of the
/// op: reserves 256 Philox outputs per sample). An empty sample shape gives an empty output.
/// Throws invalid_argument_error for a bad shape tensor or dtype, an empty alpha, or a negative or
/// NaN alpha (TF does not check and returns meaningless numbers).
inline tensor random_gamma(const tensor& shape_t, const tensor& alpha, guarded_philox& gen) {
    const char* op = "RandomGamma";
    if (!alpha.valid()) throw invalid_argument_error("RandomGamma: alpha is not a valid tensor");
    nn_detail::check_random_dtype(op, alpha.type());
    std::int64_t per_alpha = 0;
    const shape out_shape = random_detail::samples_shape(op, shape_t, alpha, &per_alpha);
    tensor out(alpha.type(), out_shape);
    if (per_alpha == 0) return out;
    if (alpha.num_elements() == 0) {
        throw invalid_argument_error(detail::cat(op, ": alpha must have at least one element, given ", alpha.describe()));
    }
    const std::vector<double> a = random_detail::values_as_double(alpha);
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (!(a[i] >= 0)) {
            throw invalid_argument_error(detail::cat(op, ": alpha must be >= 0, but alpha[", i, "] = ", a[i]));
        }
    }
    const philox4x32 run = gen.reserve_random_outputs(per_alpha * alpha.num_elements(),
                                                      static_cast<int>(random_detail::reserved_per_output));
    auto sample = [](double al, random_detail::double_draws& d) { return random_detail::gamma_sample(al, d); };
    switch (alpha.type()) {
        case dtype::float32: random_detail::fill_per_output(out.data<float>(), a, per_alpha, run, 200, sample); break;
        case dtype::float64: random_detail::fill_per_output(out.data<double>(), a, per_alpha, run, 200, sample); break;
        case dtype::float16: random_detail::fill_per_output(out.data<half>(), a, per_alpha, run, 200, sample); break;
        default: random_detail::fill_per_output(out.data<bfloat16>(), a, per_alpha, run, 200, sample); break;
    }
    return out;
}

/// RandomPoisson / RandomPoissonV2: Poisson(rate) samples of shape `shape_t` (an int32/int64 vector)
/// ++ rate.shape as dtype `out_type` (float16/float32/float64/int32/int64), rate float16/float32/
/// float64/int32/int64; TF's samplers and stream (reserves 256 Philox outputs per sample). A rate
/// <= 0 gives 0 as in TF. Throws invalid_argument_error for a bad shape tensor or dtype, and for a
/// NaN rate or one above out_type's largest value (TF's sampler never ends on those).
inline tensor random_poisson(const tensor& shape_t, const tensor& rate, dtype out_type, guarded_philox& gen) {
    const char* op = "RandomPoisson";
    if (!rate.valid()) throw invalid_argument_error("RandomPoisson: rate is not a valid tensor");
    auto supported = [](dtype t) {
        return t == dtype::float16 || t == dtype::float32 || t == dtype::float64 || t == dtype::int32 || t == dtype::int64;
    };
    if (!supported(rate.type())) {
        throw invalid_argument_error(detail::cat(op, ": rate must be float16, float32, float64, int32 or int64, given ",
                                                 rate.describe()));
    }
    if (!supported(out_type)) {
        throw invalid_argument_error(detail::cat(op, ": dtype must be float16, float32, float64, int32 or int64, given ",
                                                 dtype_name(out_type)));
    }
    std::int64_t per_rate = 0;
    const shape out_shape = random_detail::samples_shape(op, shape_t, rate, &per_rate);
    tensor out(out_type, out_shape);
    if (per_rate == 0 || rate.num_elements() == 0) return out;
    double highest = 0;
    switch (out_type) {
        case dtype::float16: highest = 65504.0; break;
        case dtype::float32: highest = static_cast<double>(std::numeric_limits<float>::max()); break;
        case dtype::float64: highest = std::numeric_limits<double>::max(); break;
        case dtype::int32: highest = static_cast<double>(std::numeric_limits<std::int32_t>::max()); break;
        default: highest = static_cast<double>(std::numeric_limits<std::int64_t>::max()); break;
    }
    const std::vector<double> r = random_detail::values_as_double(rate);
    for (std::size_t i = 0; i < r.size(); ++i) {
        if (!(r[i] <= highest)) {
            throw invalid_argument_error(detail::cat(op, ": rate[", i, "] = ", r[i], " cannot be sampled as ",
                                                     dtype_name(out_type), " (NaN, or above its largest value ", highest,
                                                     ")"));
        }
    }
    const philox4x32 run = gen.reserve_random_outputs(per_rate * rate.num_elements(),
                                                      static_cast<int>(random_detail::reserved_per_output));
    auto sample = [highest](double rt, random_detail::double_draws& d) {
        return random_detail::poisson_sample(rt, highest, d);
    };
    switch (out_type) {
        case dtype::float32: random_detail::fill_per_output(out.data<float>(), r, per_rate, run, 300, sample); break;
        case dtype::float64: random_detail::fill_per_output(out.data<double>(), r, per_rate, run, 300, sample); break;
        case dtype::float16: random_detail::fill_per_output(out.data<half>(), r, per_rate, run, 300, sample); break;
        case dtype::int32: random_detail::fill_per_output(out.data<std::int32_t>(), r, per_rate, run, 300, sample); break;
        default: random_detail::fill_per_output(out.data<std::int64_t>(), r, per_rate, run, 300, sample); break;
    }
    return out;
}

/// RandomGammaGrad(alpha, sample): d sample / d alpha of Gamma(alpha, 1) samples by implicit
/// differentiation of the CDF (-(dP(alpha, x)/dalpha) / pdf(x)), Eigen's gamma_sample_der_alpha as in
/// TF's kernel; float32/float64 with broadcasting. Throws invalid_argument_error for mixed or other
/// dtypes, shape_error when the shapes do not broadcast.
inline tensor random_gamma_grad(const tensor& alpha, const tensor& sample) {
    return math_detail::map_binary<void>(math_detail::types<float, double>{}, std::string_view("RandomGammaGrad"), alpha, sample, 400,
                                         [](auto a, auto x) { return Eigen::numext::gamma_sample_der_alpha(a, x); });
}

}  // namespace graft::ops
