// Unary ops and the activation gradients against a float64 reference, over several shapes and
// dtypes; gradients also against central differences of the forward op; by-name dispatch; errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "array_testing.hpp"
#include "graft/ops/elementwise.hpp"

using namespace graft;
using namespace graft::test;

namespace {

constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;

double ref_softplus(double x) {
    return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}
double ref_sigmoid(double x) {
    return 1 / (1 + std::exp(-x));
}
double ref_elu(double x) {
    return x < 0 ? std::expm1(x) : x;
}
double ref_selu(double x) {
    return x < 0 ? kSeluScale * kSeluAlpha * std::expm1(x) : kSeluScale * x;
}

struct unary_case {
    const char* name;
    tensor (*fn)(const tensor&, const tensor*);
    double (*ref)(double);
    double lo, hi;
    bool ints;  // also defined for int32/int64
};

const unary_case kUnary[] = {
    {"Neg", [](const tensor& x, const tensor* o) { return ops::neg(x, o); },
     [](double x) { return -x; }, -9, 9, true},
    {"Abs", [](const tensor& x, const tensor* o) { return ops::abs(x, o); },
     [](double x) { return std::abs(x); }, -9, 9, true},
    {"Sign", [](const tensor& x, const tensor* o) { return ops::sign(x, o); },
     [](double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }, -3, 3, true},
    {"Square", [](const tensor& x, const tensor* o) { return ops::square(x, o); },
     [](double x) { return x * x; }, -9, 9, true},
    {"Sqrt", [](const tensor& x, const tensor* o) { return ops::sqrt(x, o); },
     [](double x) { return std::sqrt(x); }, 0, 50, false},
    {"Rsqrt", [](const tensor& x, const tensor* o) { return ops::rsqrt(x, o); },
     [](double x) { return 1 / std::sqrt(x); }, 0.01, 50, false},
    {"Reciprocal", [](const tensor& x, const tensor* o) { return ops::reciprocal(x, o); },
     [](double x) { return 1 / x; }, 0.1, 9, false},
    {"Exp", [](const tensor& x, const tensor* o) { return ops::exp(x, o); },
     [](double x) { return std::exp(x); }, -20, 20, false},
    {"Log", [](const tensor& x, const tensor* o) { return ops::log(x, o); },
     [](double x) { return std::log(x); }, 0.001, 100, false},
    {"Log1p", [](const tensor& x, const tensor* o) { return ops::log1p(x, o); },
     [](double x) { return std::log1p(x); }, -0.9, 10, false},
    {"Tanh", [](const tensor& x, const tensor* o) { return ops::tanh(x, o); },
     [](double x) { return std::tanh(x); }, -10, 10, false},
    {"Sigmoid", [](const tensor& x, const tensor* o) { return ops::sigmoid(x, o); }, ref_sigmoid,
     -20, 20, false},
    {"Relu", [](const tensor& x, const tensor* o) { return ops::relu(x, o); },
     [](double x) { return std::max(x, 0.0); }, -9, 9, true},
    {"Relu6", [](const tensor& x, const tensor* o) { return ops::relu6(x, o); },
     [](double x) { return std::min(std::max(x, 0.0), 6.0); }, -9, 9, true},
    {"Elu", [](const tensor& x, const tensor* o) { return ops::elu(x, o); }, ref_elu, -9, 9, false},
    {"Selu", [](const tensor& x, const tensor* o) { return ops::selu(x, o); }, ref_selu, -9, 9,
     false},
    {"Softplus", [](const tensor& x, const tensor* o) { return ops::softplus(x, o); }, ref_softplus,
     -40, 40, false},
    {"Floor", [](const tensor& x, const tensor* o) { return ops::floor(x, o); },
     [](double x) { return std::floor(x); }, -9, 9, false},
    {"Ceil", [](const tensor& x, const tensor* o) { return ops::ceil(x, o); },
     [](double x) { return std::ceil(x); }, -9, 9, false},
    {"Sin", [](const tensor& x, const tensor* o) { return ops::sin(x, o); },
     [](double x) { return std::sin(x); }, -10, 10, false},
    {"Cos", [](const tensor& x, const tensor* o) { return ops::cos(x, o); },
     [](double x) { return std::cos(x); }, -10, 10, false},
    {"Erf", [](const tensor& x, const tensor* o) { return ops::erf(x, o); },
     [](double x) { return std::erf(x); }, -4, 4, false},
};

}  // namespace

TEST_CASE("unary ops agree with a float64 reference") {
    const shape shapes[] = {{}, {0}, {7}, {3, 5}, {2, 0, 3}, {4, 3, 2}};
    for (const auto& c : kUnary) {
        for (dtype t : {dtype::float32, dtype::float64, dtype::int32, dtype::int64}) {
            const bool is_int = t == dtype::int32 || t == dtype::int64;
            if (is_int && !c.ints) continue;
            for (const auto& s : shapes) {
                auto v = noise(static_cast<std::size_t>(s.num_elements()), c.lo, c.hi, 5);
                if (is_int)
                    for (auto& e : v) e = std::trunc(e);
                tensor x = make(t, s, v);
                std::vector<double> want;
                for (double e : values(x)) want.push_back(c.ref(e));
                CAPTURE(c.name);
                CAPTURE(dtype_name(t));
                CAPTURE(s.str());
                const double rtol = t == dtype::float32 ? 4e-6 : (t == dtype::float64 ? 1e-12 : 0);
                const double atol = t == dtype::float32 ? 2e-7 : (t == dtype::float64 ? 1e-15 : 0);
                check_values(c.fn(x, nullptr), t, s, want, rtol, atol);
                check_values(ops::unary(c.name, x), t, s, want, rtol, atol);
            }
        }
    }
}

TEST_CASE("unary ops on a large tensor use the thread pool") {
    tensor x = f32({300, 257}, noise(300 * 257, -6, 6, 9));
    std::vector<double> want;
    for (double e : values(x)) want.push_back(std::tanh(e));
    check_values(ops::tanh(x), dtype::float32, x.shape(), want, 4e-6, 2e-7);
    tensor y = x.clone();
    ops::relu(y, &y);  // in place
    want.clear();
    for (double e : values(x)) want.push_back(std::max(e, 0.0));
    check_values(y, dtype::float32, x.shape(), want);
}

// tensorflow/python/ops/math_ops_test.py (RoundTest.testRounding): np.arange(-5.0, 5.0, .25)
// against np.round, i.e. halves go to the even neighbour.
TEST_CASE("Round rounds halves to even") {
    std::vector<double> x;
    for (int i = 0; i < 40; ++i) x.push_back(-5.0 + 0.25 * i);
    std::vector<double> want;
    for (double v : x) {
        const double r = std::floor(v), frac = v - r;
        if (frac < 0.5)
            want.push_back(r);
        else if (frac > 0.5)
            want.push_back(r + 1);
        else
            want.push_back(std::fmod(r, 2.0) == 0 ? r : r + 1);
    }
    CHECK(want[2] == -4.0);   // -4.5
    CHECK(want[6] == -4.0);   // -3.5
    CHECK(want[18] == -0.0);  // -0.5
    CHECK(want[22] == 0.0);   // 0.5
    CHECK(want[26] == 2.0);   // 1.5
    CHECK(want[30] == 2.0);   // 2.5
    for (dtype t : {dtype::float32, dtype::float64})
        check_values(ops::round(make(t, {40}, x)), t, shape{40}, want);
    check_values(ops::round(i32({3}, {-3, 0, 7})), dtype::int32, shape{3}, {-3, 0, 7});
}

TEST_CASE("LeakyRelu, LogicalNot, NaN handling") {
    tensor x = f32({5}, {-2, -0.5, 0, 0.5, 3});
    check_values(ops::leaky_relu(x, 0.1f), dtype::float32, shape{5}, {-0.2, -0.05, 0, 0.5, 3},
                 1e-6);
    check_values(ops::unary("LeakyRelu", x), dtype::float32, shape{5}, {-0.4, -0.1, 0, 0.5, 3},
                 1e-6);
    check_values(ops::logical_not(bools({4}, {1, 0, 0, 1})), dtype::bool_, shape{4}, {0, 1, 1, 0});
    const double nan = std::nan("");
    check_values(ops::relu(f64({3}, {nan, -1, 2})), dtype::float64, shape{3}, {nan, 0, 2});
    check_values(ops::relu6(f64({3}, {nan, 7, 2})), dtype::float64, shape{3}, {nan, 6, 2});
    check_values(ops::softplus(f32({2}, {100, -30})), dtype::float32, shape{2},
                 {100, std::exp(-30.0)}, 1e-5);
}

// tensorflow/python/kernel_tests/nn_ops/relu_op_test.py: testNpRelu, testNpRelu6, testNpLeakyRelu,
// testUnexpectedAlphaValue, testNpElu, testNpSelu (inputs and expected arrays as printed there) and
// testNaNPropagation.
TEST_CASE("Relu, Relu6, LeakyRelu, Elu, Selu match TF's relu_op_test.py figures") {
    const std::vector<double> x{-0.9, 0.7, -0.5, 0.3, -0.1, 0.1, -0.3, 0.5, -0.7, 0.9};
    const std::vector<double> x6{-0.9, 0.7, -0.5, 0.3, 6.0, 0.1, -0.3, 6.5, -0.7, 0.9};
    const std::vector<double> xa{-0.9, 0.7, -0.5, 0.3, -0.01, 0.1, -0.3, 0.5, -2.7, 0.9};
    struct fig {
        const char* name;
        const std::vector<double>* in;
        std::function<tensor(const tensor&)> fn;
        std::vector<double> want;
        double tol;
    };
    const fig figs[] = {
        {"Relu", &x, [](const tensor& t) { return ops::relu(t); }, {0, 0.7, 0, 0.3, 0, 0.1, 0, 0.5, 0, 0.9}, 0},
        {"Relu6", &x6, [](const tensor& t) { return ops::relu6(t); }, {0, 0.7, 0, 0.3, 6, 0.1, 0, 6, 0, 0.9}, 0},
        {"LeakyRelu 0.1", &x, [](const tensor& t) { return ops::leaky_relu(t, 0.1f); },
         {-0.09, 0.7, -0.05, 0.3, -0.01, 0.1, -0.03, 0.5, -0.07, 0.9}, 1e-6},
        {"LeakyRelu 10", &xa, [](const tensor& t) { return ops::leaky_relu(t, 10.f); },
         {-9, 0.7, -5, 0.3, -0.1, 0.1, -3, 0.5, -27, 0.9}, 1e-6},
        {"LeakyRelu -10", &xa, [](const tensor& t) { return ops::leaky_relu(t, -10.f); },
         {9, 0.7, 5, 0.3, 0.1, 0.1, 3, 0.5, 27, 0.9}, 1e-6},
        {"Elu", &x, [](const tensor& t) { return ops::elu(t); },
         {-0.59343034025, 0.7, -0.39346934028, 0.3, -0.09516258196, 0.1, -0.25918177931, 0.5, -0.5034146962, 0.9},
         1e-6},
        {"Selu", &x, [](const tensor& t) { return ops::selu(t); },
         {-1.0433095, 0.73549069, -0.6917582, 0.3152103, -0.16730527, 0.1050701, -0.45566732, 0.5253505,
          -0.88505305, 0.9456309},
         1e-6},
    };
    for (const auto& f : figs) {
        for (dtype t : {dtype::float32, dtype::float64}) {
            CAPTURE(f.name);
            CAPTURE(dtype_name(t));
            tensor in = make(t, {2, 5}, *f.in);
            // Exact ops (Relu, Relu6) return the input element itself: compare with it, not with 0.7.
            std::vector<double> want = f.want;
            if (f.tol == 0) {
                auto iv = values(in);
                for (std::size_t i = 0; i < want.size(); ++i)
                    if (want[i] != 0 && want[i] != 6) want[i] = iv[i];
            }
            check_values(f.fn(in), t, shape{2, 5}, want, f.tol, f.tol);
        }
    }
    const double nan = std::nan("");
    for (dtype t : {dtype::float32, dtype::float64}) {
        check_values(ops::relu(make(t, {4}, {-1, nan, 1, nan})), t, shape{4}, {0, nan, 1, nan});
        check_values(ops::relu6(make(t, {5}, {-1, nan, 1, 7, nan})), t, shape{5}, {0, nan, 1, 6, nan});
        check_values(ops::leaky_relu(make(t, {4}, {-1, nan, 1, nan}), 0.2f), t, shape{4}, {-0.2, nan, 1, nan}, 1e-6);
        check_values(ops::elu(make(t, {4}, {-1, nan, 1, nan})), t, shape{4}, {std::expm1(-1.0), nan, 1, nan}, 1e-6);
    }
    // testNumbersCPU's integer inputs for Relu/Relu6/LeakyRelu (alpha 0.2) against its NumPy formulas.
    for (dtype t : {dtype::int32, dtype::int64}) {
        tensor xi = make(t, {2, 5}, {-9, 7, -5, 3, -1, 1, -3, 5, -7, 9});
        check_values(ops::relu(xi), t, shape{2, 5}, {0, 7, 0, 3, 0, 1, 0, 5, 0, 9});
        check_values(ops::relu6(xi), t, shape{2, 5}, {0, 6, 0, 3, 0, 1, 0, 5, 0, 6});
    }
}

namespace {

struct grad_case {
    const char* name;
    tensor (*fn)(const tensor&, const tensor&, const tensor*);
    double (*ref)(double a, double b);  // in TF's input order
    double (*forward)(double);          // the op it differentiates
    bool from_output;  // its second/first input is the forward output, not the input
    bool y_first;      // TF order (y, dy) instead of (gradients, features)
    double lo, hi;
};

const grad_case kGrads[] = {
    {"ReluGrad",
     [](const tensor& a, const tensor& b, const tensor* o) { return ops::relu_grad(a, b, o); },
     [](double g, double f) { return f > 0 ? g : 0.0; }, [](double x) { return std::max(x, 0.0); },
     false, false, -3, 3},
    {"Relu6Grad",
     [](const tensor& a, const tensor& b, const tensor* o) { return ops::relu6_grad(a, b, o); },
     [](double g, double f) { return f > 0 && f < 6 ? g : 0.0; },
     [](double x) { return std::min(std::max(x, 0.0), 6.0); }, false, false, -3, 9},
    {"EluGrad",
     [](const tensor& a, const tensor& b, const tensor* o) { return ops::elu_grad(a, b, o); },
     [](double g, double y) { return y < 0 ? g * (y + 1) : g; }, ref_elu, true, false, -3, 3},
    {"SeluGrad",
     [](const tensor& a, const tensor& b, const tensor* o) { return ops::selu_grad(a, b, o); },
     [](double g, double y) { return y < 0 ? g * (y + kSeluScale * kSeluAlpha) : g * kSeluScale; },
     ref_selu, true, false, -3, 3},
    {"SoftplusGrad",
     [](const tensor& a, const tensor& b, const tensor* o) { return ops::softplus_grad(a, b, o); },
     [](double g, double f) { return g * ref_sigmoid(f); }, ref_softplus, false, false, -5, 5},
    {"SigmoidGrad",
     [](const tensor& a, const tensor& b, const tensor* o) { return ops::sigmoid_grad(a, b, o); },
     [](double y, double d) { return d * y * (1 - y); }, ref_sigmoid, true, true, -5, 5},
    {"TanhGrad",
     [](const tensor& a, const tensor& b, const tensor* o) { return ops::tanh_grad(a, b, o); },
     [](double y, double d) { return d * (1 - y * y); }, [](double x) { return std::tanh(x); },
     true, true, -3, 3},
    {"RsqrtGrad",
     [](const tensor& a, const tensor& b, const tensor* o) { return ops::rsqrt_grad(a, b, o); },
     [](double y, double d) { return -0.5 * d * y * y * y; },
     [](double x) { return 1 / std::sqrt(x); }, true, true, 0.5, 5},
    {"SqrtGrad",
     [](const tensor& a, const tensor& b, const tensor* o) { return ops::sqrt_grad(a, b, o); },
     [](double y, double d) { return 0.5 * d / y; }, [](double x) { return std::sqrt(x); }, true,
     true, 0.5, 5},
    {"ReciprocalGrad",
     [](const tensor& a, const tensor& b, const tensor* o) {
         return ops::reciprocal_grad(a, b, o);
     },
     [](double y, double d) { return -d * y * y; }, [](double x) { return 1 / x; }, true, true, 0.5,
     5},
};

}  // namespace

TEST_CASE("activation gradients: reference values and finite differences of the forward op") {
    for (const auto& c : kGrads) {
        CAPTURE(c.name);
        // Inputs away from the kinks (0 and 6) so central differences are meaningful.
        auto xs = noise(24, c.lo, c.hi, 21);
        for (auto& x : xs) {
            if (std::abs(x) < 0.05) x += 0.1;
            if (std::abs(x - 6) < 0.05) x += 0.1;
        }
        auto gs = noise(24, -2, 2, 22);
        std::vector<double> point, fd;  // the forward output or input, and d forward/dx * g
        for (std::size_t i = 0; i < xs.size(); ++i) {
            point.push_back(c.from_output ? c.forward(xs[i]) : xs[i]);
            const double h = 1e-6;
            fd.push_back(gs[i] * (c.forward(xs[i] + h) - c.forward(xs[i] - h)) / (2 * h));
        }
        for (dtype t : {dtype::float32, dtype::float64}) {
            tensor p = make(t, {4, 6}, point), g = make(t, {4, 6}, gs);
            tensor r = c.y_first ? c.fn(p, g, nullptr) : c.fn(g, p, nullptr);
            std::vector<double> want;
            auto pv = values(p), gv = values(g);
            for (std::size_t i = 0; i < pv.size(); ++i)
                want.push_back(c.y_first ? c.ref(pv[i], gv[i]) : c.ref(gv[i], pv[i]));
            check_values(r, t, shape{4, 6}, want, t == dtype::float32 ? 1e-5 : 1e-12, 1e-6);
            tensor by_name = c.y_first ? ops::binary(c.name, p, g) : ops::binary(c.name, g, p);
            check_values(by_name, t, shape{4, 6}, want, t == dtype::float32 ? 1e-5 : 1e-12, 1e-6);
            if (t == dtype::float64) check_values(r, t, shape{4, 6}, fd, 1e-5, 1e-6);
        }
    }
    tensor g = f32({3}, {1, 2, 3}), f = f32({3}, {-1, 0.5, 2});
    check_values(ops::leaky_relu_grad(g, f, 0.3f), dtype::float32, shape{3}, {0.3, 2, 3}, 1e-6);
    check_values(ops::relu_grad(i32({3}, {4, 5, 6}), i32({3}, {-1, 0, 1})), dtype::int32, shape{3},
                 {0, 0, 6});
}

TEST_CASE("ReluGrad's AVX-512 and AVX2 float32 paths equal the Eigen path bit for bit (NaN, -0, tails, in place)") {
    std::vector<ops::gemm::kernel_isa> isas;
    for (ops::gemm::kernel_isa isa : ops::gemm::available_kernels())
        if (isa != ops::gemm::kernel_isa::portable) isas.push_back(isa);
    if (isas.empty()) {
        MESSAGE("skipped: this CPU has neither AVX2 nor AVX-512F, so ReluGrad has only its Eigen path");
        return;
    }
    for (ops::gemm::kernel_isa isa : isas)
    for (std::int64_t n : {1, 7, 8, 9, 15, 16, 17, 100, 4099}) {
        std::vector<float> gv(static_cast<std::size_t>(n)), fv(static_cast<std::size_t>(n));
        for (std::int64_t i = 0; i < n; ++i) {
            const auto k = static_cast<std::size_t>(i);
            gv[k] = i % 13 == 7 ? std::nanf("") : static_cast<float>(i % 9) - 4.5f;
            fv[k] = i % 11 == 3 ? std::nanf("") : i % 7 == 2 ? -0.f : i % 5 == 1 ? 0.f : static_cast<float>(i % 6) - 2.5f;
        }
        const tensor g = f32({n}, std::vector<double>(gv.begin(), gv.end())), f = f32({n}, std::vector<double>(fv.begin(), fv.end()));
        ops::gemm::limit_kernel(isa);
        const tensor fast = ops::relu_grad(g, f);
        tensor in_place = g.clone();
        (void)ops::relu_grad(in_place, f, &in_place);
        ops::gemm::limit_kernel(ops::gemm::kernel_isa::portable);
        const tensor eigen = ops::relu_grad(g, f);
        ops::gemm::limit_kernel(ops::gemm::kernel_isa::avx512);
        INFO("n " << n << " kernel " << static_cast<int>(isa));
        CHECK(std::memcmp(fast.data<float>(), eigen.data<float>(), static_cast<std::size_t>(n) * 4) == 0);
        CHECK(std::memcmp(in_place.data<float>(), eigen.data<float>(), static_cast<std::size_t>(n) * 4) == 0);
        if (n > 2) CHECK(fast.data<float>()[2] == 0.f);  // features -0: no gradient
    }
}

TEST_CASE("unary and gradient ops reject bad dtypes and shapes naming the op") {
    GRAFT_CHECK_THROWS_MSG(ops::sqrt(i32({2}, {1, 4})), invalid_argument_error,
                           "Sqrt: x has dtype int32, which this kernel does not support "
                           "(supported: float32, float64, float16, bfloat16)");
    GRAFT_CHECK_THROWS_MSG(ops::logical_not(f32({1}, {1})), invalid_argument_error, "LogicalNot");
    GRAFT_CHECK_THROWS_MSG(ops::relu(bools({1}, {1})), invalid_argument_error, "Relu");
    GRAFT_CHECK_THROWS_MSG(ops::relu_grad(f32({2}, {1, 2}), f32({3}, {1, 2, 3})), shape_error,
                           "ReluGrad: gradients has shape [2] but features has [3]");
    GRAFT_CHECK_THROWS_MSG(ops::tanh_grad(f32({2}, {1, 2}), f64({2}, {1, 2})),
                           invalid_argument_error,
                           "TanhGrad: y is float32[2] but dy is float64[2]");
    tensor x = f32({2}, {1, 2});
    tensor out(dtype::float32, {3});
    GRAFT_CHECK_THROWS_MSG(ops::exp(x, &out), invalid_argument_error,
                           "Exp: out is float32[3] but the result is float32[2]");
    tensor rows = iota(dtype::float32, {3, 2});
    tensor top = rows.slice(0, 2), bottom = rows.slice(1, 2);  // overlapping views
    GRAFT_CHECK_THROWS_MSG(ops::exp(top, &bottom), invalid_argument_error,
                           "Exp: out shares memory with x");
    GRAFT_CHECK_THROWS_MSG(ops::unary("Frobnicate", x), unimplemented_error, "'Frobnicate'");
    GRAFT_CHECK_THROWS_MSG(ops::binary("Frobnicate", x, x), unimplemented_error, "'Frobnicate'");
}

TEST_CASE("the by-name tables cover the TF op names") {
    for (const char* n : {"Neg",   "Abs", "Sign", "Square",   "Sqrt",      "Rsqrt",   "Reciprocal",
                          "Inv",   "Exp", "Log",  "Log1p",    "Tanh",      "Sigmoid", "Relu",
                          "Relu6", "Elu", "Selu", "Softplus", "LeakyRelu", "Floor",   "Ceil",
                          "Round", "Sin", "Cos",  "Erf",      "LogicalNot"}) {
        CHECK_MESSAGE(ops::has_unary(n), n);
    }
    for (const char* n : {"Add",
                          "AddV2",
                          "Sub",
                          "Mul",
                          "Div",
                          "RealDiv",
                          "FloorDiv",
                          "FloorMod",
                          "Maximum",
                          "Minimum",
                          "Pow",
                          "SquaredDifference",
                          "Equal",
                          "NotEqual",
                          "Less",
                          "LessEqual",
                          "Greater",
                          "GreaterEqual",
                          "LogicalAnd",
                          "LogicalOr",
                          "ReluGrad",
                          "Relu6Grad",
                          "EluGrad",
                          "SeluGrad",
                          "SoftplusGrad",
                          "LeakyReluGrad",
                          "SigmoidGrad",
                          "TanhGrad",
                          "RsqrtGrad",
                          "SqrtGrad",
                          "ReciprocalGrad",
                          "InvGrad"}) {
        CHECK_MESSAGE(ops::has_binary(n), n);
    }
    CHECK_FALSE(ops::has_unary("MatMul"));
    CHECK(ops::unary_op_names().size() == 26);
    CHECK(ops::binary_op_names().size() == 32);
    check_values(ops::unary("Inv", f32({2}, {2, 4})), dtype::float32, shape{2}, {0.5, 0.25});
}
