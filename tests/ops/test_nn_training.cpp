// Optimizer apply ops against their closed-form updates (tensorflow/core/kernels/training_ops.cc).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/ops/gemm.hpp"
#include "graft/ops/matmul.hpp"
#include "graft/ops/training.hpp"
#include "ops/nn_testing.hpp"

using namespace graft;
using graft::test::check_close;

namespace {

tensor vals(dtype t, const std::vector<double>& v) { return test::from_values(t, {static_cast<std::int64_t>(v.size())}, v); }
tensor scal(dtype t, double v) { return t == dtype::float32 ? tensor::scalar_of(static_cast<float>(v)) : tensor::scalar_of(v); }

const std::vector<double> w0 = {1.0, -2.0, 0.5, 3.0};
const std::vector<double> g1 = {0.1, -0.3, 0.25, 2.0};
const std::vector<double> g2 = {-0.2, 0.4, 0.05, -1.0};

// A hyper-parameter as the op sees it (rounded to float for float32), so the closed form is exact
// up to arithmetic rounding.
double as_t(dtype t, double v) { return t == dtype::float32 ? static_cast<double>(static_cast<float>(v)) : v; }

// float64 must match the closed form to rounding; float32 to its precision.
double rtol(dtype t) { return t == dtype::float64 ? 1e-12 : 1e-5; }
double atol(dtype t) { return t == dtype::float64 ? 1e-15 : 1e-7; }

}  // namespace

TEST_CASE("nn ApplyGradientDescent updates var in place") {
    for (dtype t : {dtype::float32, dtype::float64}) {
        const tensor var = vals(t, w0);
        const tensor out = ops::apply_gradient_descent(var, scal(t, 0.5), vals(t, g1));
        CHECK(out.shares_buffer_with(var));
        std::vector<double> want(4);
        for (std::size_t i = 0; i < 4; ++i) want[i] = w0[i] - 0.5 * as_t(t, g1[i]);
        check_close(var, tensor::from_vector<double>(want), rtol(t), atol(t), "sgd");
    }
}

TEST_CASE("nn ApplyGradientDescent float32: every vector ISA gives the portable loop's bits (1 and 2 threads)") {
    // var - delta * alpha: a multiply then a subtract (no FMA), so the AVX2 loop matches Eigen's
    // scalar/SSE evaluation bit for bit; lengths around the 16-float step and the threads' split.
    const int threads_before = graft::num_threads();
    for (std::int64_t n : {1, 15, 16, 17, 40, 401408, 401411}) {
        std::vector<float> v0(static_cast<std::size_t>(n)), g(static_cast<std::size_t>(n));
        for (std::size_t i = 0; i < v0.size(); ++i) {
            v0[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i) + 0.2));
            g[i] = static_cast<float>(3.0 * std::cos(1.1 * static_cast<double>(i)));
        }
        if (n > 3) g[2] = std::numeric_limits<float>::infinity();
        const tensor delta = tensor::from_vector<float>(shape{n}, g);
        const tensor alpha = tensor::scalar_of(0.0123f);
        ops::gemm::limit_kernel(ops::gemm::kernel_isa::portable);
        const tensor want = tensor::from_vector<float>(shape{n}, v0);
        (void)ops::apply_gradient_descent(want, alpha, delta);
        for (ops::gemm::kernel_isa isa : ops::gemm::available_kernels()) {
            ops::gemm::limit_kernel(isa);
            for (int threads : {1, 2}) {
                graft::set_num_threads(threads);
                const tensor var = tensor::from_vector<float>(shape{n}, v0);
                (void)ops::apply_gradient_descent(var, alpha, delta);
                INFO("n " << n << " threads " << threads);
                CHECK(std::memcmp(var.data<float>(), want.data<float>(), static_cast<std::size_t>(n) * sizeof(float)) == 0);
            }
        }
    }
    ops::gemm::limit_kernel(ops::gemm::kernel_isa::avx512);
    graft::set_num_threads(threads_before);
}

TEST_CASE("nn apply_gradient_descent_of_product: MatMul then ApplyGradientDescent's bits, every ISA, 1-3 threads") {
    // var -= alpha * op(a) op(b) against the two ops, stepped in the micro-kernels' stores (one
    // depth block; AVX2: whole 16-column tiles past 256 columns) or in row blocks of a per-thread
    // scratch: shapes around the 96-row block and the 12-row thread unit, both transposes (a weight
    // gradient is x^T dz), K at and past one 320-deep panel, AVX2 tails of 6q + 2 rows, N of 1 and M
    // of 1 (MatMul's matrix-vector product: the fallback), an op(b) too large to keep packed per
    // thread, and a float64 var (the two ops)
    struct dims {
        std::int64_t M, N, K;
        bool ta, tb;
    };
    const std::vector<dims> cases = {{784, 512, 128, true, false}, {96, 17, 33, false, false}, {97, 40, 5, true, true},
                                     {200, 35, 700, false, true},  {13, 3, 2, true, false},    {1, 24, 9, false, false},
                                     {30, 1, 9, true, false},      {2, 2, 1, false, false},
                                     {128, 272, 320, true, false}, {128, 272, 321, true, false},
                                     {38, 512, 64, false, true},   {7, 300, 3, true, false},
                                     {3, 2100, 1100, true, false}};  // op(b) past the 8 MiB kept per thread
    // which of them step var in the kernels' stores, per kernel family
    const auto in_tile = [](std::int64_t N, std::int64_t K) {
        return ops::gemm::descends_in_tile(N, K, ops::gemm::matrix_source<float>{nullptr, 1, 128, 128});
    };
    for (ops::gemm::kernel_isa isa : ops::gemm::available_kernels()) {
        ops::gemm::limit_kernel(isa);
        INFO("isa " << static_cast<int>(isa));
        const bool simd = isa != ops::gemm::kernel_isa::portable, wide = isa == ops::gemm::kernel_isa::avx512;
        CHECK(in_tile(512, 128) == simd);
        CHECK(in_tile(272, 320) == simd);
        CHECK_FALSE(in_tile(272, 321));        // two depth blocks: the first's sums would land in var
        CHECK(in_tile(300, 33) == wide);       // AVX2: a partial 16-column tile is stored elementwise
        CHECK(in_tile(256, 64) == wide);       // AVX2: A read in place (serial_indirect) for N <= 256
    }
    const int threads_before = graft::num_threads();
    auto fill = [](std::int64_t r, std::int64_t c, double seed) {
        std::vector<float> v(static_cast<std::size_t>(r * c));
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::sin(0.71 * static_cast<double>(i) + seed));
        return tensor::from_vector<float>(shape{r, c}, v);
    };
    const tensor alpha = tensor::scalar_of(0.037f);
    for (const dims& d : cases) {
        const tensor a = d.ta ? fill(d.K, d.M, 0.3) : fill(d.M, d.K, 0.3);
        const tensor b = d.tb ? fill(d.N, d.K, 1.9) : fill(d.K, d.N, 1.9);
        const tensor v0 = fill(d.M, d.N, 2.6);
        for (ops::gemm::kernel_isa isa : ops::gemm::available_kernels()) {
            ops::gemm::limit_kernel(isa);
            for (int threads : {1, 2, 3}) {
                graft::set_num_threads(threads);
                const tensor want = v0.clone(), var = v0.clone();
                ops::matmul_params p;
                p.transpose_a = d.ta;
                p.transpose_b = d.tb;
                (void)ops::apply_gradient_descent(want, alpha, ops::matmul(a, b, p));
                const tensor out = ops::apply_gradient_descent_of_product(var, alpha, a, b, d.ta, d.tb);
                INFO("M " << d.M << " N " << d.N << " K " << d.K << " ta " << d.ta << " tb " << d.tb << " threads "
                          << threads << " isa " << static_cast<int>(isa));
                CHECK(out.shares_buffer_with(var));
                CHECK(std::memcmp(var.data<float>(), want.data<float>(), static_cast<std::size_t>(d.M * d.N) * sizeof(float)) == 0);
                CHECK(!graft::equal(var, v0));  // it moved
            }
        }
    }
    // var as its own operand (a, transposed a, b): the product of the old var, then the step
    for (ops::gemm::kernel_isa isa : ops::gemm::available_kernels()) {
        ops::gemm::limit_kernel(isa);
        for (int threads : {1, 2, 3}) {
            graft::set_num_threads(threads);
            for (int which = 0; which < 3; ++which) {
                INFO("var as operand " << which << " threads " << threads << " isa " << static_cast<int>(isa));
                const tensor v0 = fill(200, 200, 0.9), other = fill(200, 200, 1.4);
                const tensor var = v0.clone(), want = v0.clone();
                ops::matmul_params p;
                p.transpose_a = which == 1;
                const tensor& a = which == 2 ? other : var;
                const tensor& b = which == 2 ? var : other;
                (void)ops::apply_gradient_descent(want, alpha, ops::matmul(which == 2 ? other : v0, which == 2 ? v0 : other, p));
                (void)ops::apply_gradient_descent_of_product(var, alpha, a, b, which == 1, false);
                CHECK(std::memcmp(var.data<float>(), want.data<float>(), 200 * 200 * sizeof(float)) == 0);
            }
        }
    }
    ops::gemm::limit_kernel(ops::gemm::kernel_isa::avx512);
    graft::set_num_threads(threads_before);
    // float64: the two ops
    const tensor a64 = test::from_values(dtype::float64, {3, 2}, {1, 2, 3, 4, 5, 6});
    const tensor b64 = test::from_values(dtype::float64, {2, 2}, {1, 0, 0, 1});
    const tensor v64 = test::from_values(dtype::float64, {3, 2}, {0, 0, 0, 0, 0, 0});
    (void)ops::apply_gradient_descent_of_product(v64, scal(dtype::float64, 0.5), a64, b64, false, false);
    check_close(v64, tensor::from_vector<double>(shape{3, 2}, {-0.5, -1, -1.5, -2, -2.5, -3}), 1e-15, 0, "float64");
    // bad shapes: MatMul's error for the depths, ApplyGradientDescent's for var
    const tensor var = fill(4, 5, 0.1);
    CHECK_THROWS_AS((void)ops::apply_gradient_descent_of_product(var, alpha, fill(4, 3, 0.2), fill(2, 5, 0.3), false, false),
                    graft::error);
    CHECK_THROWS_AS((void)ops::apply_gradient_descent_of_product(var, alpha, fill(4, 3, 0.2), fill(3, 6, 0.3), false, false),
                    graft::shape_error);
}

TEST_CASE("nn ApplyMomentum, plain and Nesterov, two steps") {
    for (dtype t : {dtype::float32, dtype::float64})
        for (bool nesterov : {false, true}) {
            const tensor var = vals(t, w0), accum = vals(t, {0, 0, 0, 0});
            const double lr = as_t(t, 0.1), mu = as_t(t, 0.9);
            std::vector<double> w = w0, a(4, 0.0);
            for (const auto* g : {&g1, &g2}) {
                ops::apply_momentum(var, accum, scal(t, lr), vals(t, *g), scal(t, mu), {.use_nesterov = nesterov});
                for (std::size_t i = 0; i < 4; ++i) {
                    a[i] = a[i] * mu + (*g)[i];
                    w[i] -= nesterov ? (*g)[i] * lr + a[i] * mu * lr : lr * a[i];
                }
            }
            INFO("nesterov " << nesterov);
            check_close(var, tensor::from_vector<double>(w), rtol(t), atol(t), "var");
            check_close(accum, tensor::from_vector<double>(a), rtol(t), atol(t), "accum");
        }
}

TEST_CASE("nn ApplyAdam, plain and Nesterov, two steps with bias correction") {
    for (dtype t : {dtype::float32, dtype::float64})
        for (bool nesterov : {false, true}) {
            const tensor var = vals(t, w0), m = vals(t, {0, 0, 0, 0}), v = vals(t, {0, 0, 0, 0});
            const double lr = as_t(t, 0.01), b1 = as_t(t, 0.9), b2 = as_t(t, 0.999), eps = as_t(t, 1e-7);
            std::vector<double> w = w0, mm(4, 0.0), vv(4, 0.0);
            double b1p = 1, b2p = 1;
            for (const auto* g : {&g1, &g2}) {
                b1p = as_t(t, b1p * b1), b2p = as_t(t, b2p * b2);
                ops::apply_adam(var, m, v, scal(t, b1p), scal(t, b2p), scal(t, lr), scal(t, b1), scal(t, b2), scal(t, eps),
                                vals(t, *g), {.use_nesterov = nesterov});
                const double alpha = lr * std::sqrt(1 - b2p) / (1 - b1p);
                for (std::size_t i = 0; i < 4; ++i) {
                    const double gi = (*g)[i];
                    mm[i] = b1 * mm[i] + (1 - b1) * gi;
                    vv[i] = b2 * vv[i] + (1 - b2) * gi * gi;
                    const double step = nesterov ? (gi * (1 - b1) + b1 * mm[i]) : mm[i];
                    w[i] -= alpha * step / (std::sqrt(vv[i]) + eps);
                }
            }
            INFO("nesterov " << nesterov);
            check_close(var, tensor::from_vector<double>(w), rtol(t), atol(t), "var");
            check_close(m, tensor::from_vector<double>(mm), rtol(t), atol(t), "m");
            check_close(v, tensor::from_vector<double>(vv), rtol(t), atol(t) / 100, "v");
        }
}

TEST_CASE("nn ApplyRMSProp and ApplyCenteredRMSProp, two steps") {
    for (dtype t : {dtype::float32, dtype::float64})
        for (bool centered : {false, true}) {
            const tensor var = vals(t, w0), ms = vals(t, {1, 1, 1, 1}), mg = vals(t, {0, 0, 0, 0}), mom = vals(t, {0, 0, 0, 0});
            const double lr = as_t(t, 0.01), rho = as_t(t, 0.9), mu = as_t(t, 0.5), eps = as_t(t, 1e-6);
            std::vector<double> w = w0, s(4, 1.0), gm(4, 0.0), mo(4, 0.0);
            for (const auto* g : {&g1, &g2}) {
                if (centered) {
                    ops::apply_centered_rms_prop(var, mg, ms, mom, scal(t, lr), scal(t, rho), scal(t, mu), scal(t, eps),
                                                 vals(t, *g));
                } else {
                    ops::apply_rms_prop(var, ms, mom, scal(t, lr), scal(t, rho), scal(t, mu), scal(t, eps), vals(t, *g));
                }
                for (std::size_t i = 0; i < 4; ++i) {
                    const double gi = (*g)[i];
                    s[i] = rho * s[i] + (1 - rho) * gi * gi;
                    gm[i] = rho * gm[i] + (1 - rho) * gi;
                    const double denom = centered ? s[i] - gm[i] * gm[i] + eps : s[i] + eps;
                    mo[i] = mo[i] * mu + lr * gi / std::sqrt(denom);
                    w[i] -= mo[i];
                }
            }
            INFO("centered " << centered);
            check_close(var, tensor::from_vector<double>(w), rtol(t), atol(t), "var");
            check_close(ms, tensor::from_vector<double>(s), rtol(t), atol(t), "ms");
            check_close(mom, tensor::from_vector<double>(mo), rtol(t), atol(t), "mom");
            if (centered) check_close(mg, tensor::from_vector<double>(gm), rtol(t), atol(t), "mg");
        }
}

TEST_CASE("nn ApplyAdagrad / ApplyAdagradV2 with and without slot updates") {
    for (dtype t : {dtype::float32, dtype::float64})
        for (bool update : {true, false})
            for (bool v2 : {false, true}) {
                const tensor var = vals(t, w0), accum = vals(t, {0.1, 0.1, 0.1, 0.1});
                const double lr = as_t(t, 0.2), eps = as_t(t, 1e-3);
                std::vector<double> w = w0, a(4, 0.1);
                for (const auto* g : {&g1, &g2}) {
                    if (v2) ops::apply_adagrad_v2(var, accum, scal(t, lr), scal(t, eps), vals(t, *g), {.update_slots = update});
                    else ops::apply_adagrad(var, accum, scal(t, lr), vals(t, *g), {.update_slots = update});
                    for (std::size_t i = 0; i < 4; ++i) {
                        if (update) a[i] += (*g)[i] * (*g)[i];
                        w[i] -= v2 ? lr * (*g)[i] / (std::sqrt(a[i]) + eps) : lr * (*g)[i] / std::sqrt(a[i]);
                    }
                }
                INFO("update_slots " << update << " v2 " << v2);
                check_close(var, tensor::from_vector<double>(w), rtol(t), atol(t), "var");
                check_close(accum, tensor::from_vector<double>(a), rtol(t), atol(t), "accum");
            }
}

TEST_CASE("nn apply ops: errors name the op and the input") {
    const tensor var = vals(dtype::float32, w0);
    CHECK_THROWS_WITH_AS(ops::apply_gradient_descent(var, scal(dtype::float32, 0.1), vals(dtype::float32, {1, 2})),
                         "ApplyGradientDescent: delta float32[2] must match var float32[4]", shape_error);
    CHECK_THROWS_WITH_AS(ops::apply_gradient_descent(var, vals(dtype::float32, {0.1}), vals(dtype::float32, g1)),
                         "ApplyGradientDescent: alpha must be a float32 scalar, given float32[1]", invalid_argument_error);
    CHECK_THROWS_AS(ops::apply_momentum(var, vals(dtype::float64, w0), scal(dtype::float32, 0.1), vals(dtype::float32, g1),
                                        scal(dtype::float32, 0.9)),
                    shape_error);
    CHECK_THROWS_AS(ops::apply_adagrad(tensor(dtype::int32, {4}), tensor(dtype::int32, {4}), tensor::scalar_of(1),
                                       tensor(dtype::int32, {4})),
                    invalid_argument_error);
}

TEST_CASE("nn ApplyGradientDescent / ApplyMomentum / ApplyAdagrad: TF's optimizer test figures") {
    // var0 = [1, 2], var1 = [3, 4], grads0 = [0.1, 0.1], grads1 = [0.01, 0.01] in all three tests.
    for (dtype t : {dtype::float32, dtype::float64}) {
        INFO(dtype_name(t));
        const double tol = t == dtype::float32 ? 1e-6 : 1e-12;
        // tensorflow/python/training/gradient_descent_test.py testBasic: one step at lr 3.0.
        {
            const tensor v0 = vals(t, {1, 2}), v1 = vals(t, {3, 4});
            ops::apply_gradient_descent(v0, scal(t, 3.0), vals(t, {0.1, 0.1}));
            ops::apply_gradient_descent(v1, scal(t, 3.0), vals(t, {0.01, 0.01}));
            check_close(v0, vals(dtype::float64, {1.0 - 3.0 * 0.1, 2.0 - 3.0 * 0.1}), tol, tol, "sgd var0");
            check_close(v1, vals(dtype::float64, {3.0 - 3.0 * 0.01, 4.0 - 3.0 * 0.01}), tol, tol, "sgd var1");
        }
        // tensorflow/python/training/momentum_test.py doTestBasic: lr 2.0, momentum 0.9, two steps.
        {
            const tensor v0 = vals(t, {1, 2}), v1 = vals(t, {3, 4}), a0 = vals(t, {0, 0}), a1 = vals(t, {0, 0});
            auto step = [&] {
                ops::apply_momentum(v0, a0, scal(t, 2.0), vals(t, {0.1, 0.1}), scal(t, 0.9));
                ops::apply_momentum(v1, a1, scal(t, 2.0), vals(t, {0.01, 0.01}), scal(t, 0.9));
            };
            step();
            check_close(a0, vals(dtype::float64, {0.1, 0.1}), tol, tol, "momentum slot0 step 1");
            check_close(v0, vals(dtype::float64, {1.0 - (0.1 * 2.0), 2.0 - (0.1 * 2.0)}), tol, tol, "var0 step 1");
            check_close(v1, vals(dtype::float64, {3.0 - (0.01 * 2.0), 4.0 - (0.01 * 2.0)}), tol, tol, "var1 step 1");
            step();
            check_close(a0, vals(dtype::float64, {0.9 * 0.1 + 0.1, 0.9 * 0.1 + 0.1}), tol, tol, "slot0 step 2");
            check_close(a1, vals(dtype::float64, {0.9 * 0.01 + 0.01, 0.9 * 0.01 + 0.01}), tol, tol, "slot1 step 2");
            check_close(v0,
                        vals(dtype::float64, {1.0 - (0.1 * 2.0) - ((0.9 * 0.1 + 0.1) * 2.0),
                                              2.0 - (0.1 * 2.0) - ((0.9 * 0.1 + 0.1) * 2.0)}),
                        tol, tol, "var0 step 2");
            check_close(v1,
                        vals(dtype::float64, {2.98 - ((0.9 * 0.01 + 0.01) * 2.0), 3.98 - ((0.9 * 0.01 + 0.01) * 2.0)}),
                        tol, tol, "var1 step 2");
        }
        // tensorflow/python/training/adagrad_test.py doTestBasic: lr 3.0, initial accumulator 0.1,
        // three steps (figures given to float32 precision).
        {
            const tensor v0 = vals(t, {1, 2}), v1 = vals(t, {3, 4}), a0 = vals(t, {0.1, 0.1}), a1 = vals(t, {0.1, 0.1});
            for (int i = 0; i < 3; ++i) {
                ops::apply_adagrad(v0, a0, scal(t, 3.0), vals(t, {0.1, 0.1}));
                ops::apply_adagrad(v1, a1, scal(t, 3.0), vals(t, {0.01, 0.01}));
            }
            check_close(v0, vals(dtype::float64, {-1.6026098728179932, -0.6026098728179932}), 1e-6, 1e-6, "adagrad var0");
            check_close(v1, vals(dtype::float64, {2.715679168701172, 3.715679168701172}), 1e-6, 1e-6, "adagrad var1");
        }
    }
}
