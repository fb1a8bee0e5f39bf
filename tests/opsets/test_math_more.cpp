// The math_more family through graft::exec::session: elementwise math (hyperbolic, inverse
// trigonometric, Expm1, Rint, Softsign, IsNan/IsInf/IsFinite, Atan2, Mod, TruncateDiv, Xdivy, Xlogy,
// DivNoNan, ...), special functions, bit ops and Bitcast, CompareAndBitpack, Cumsum/Cumprod,
// AccumulateNV2, HistogramFixedWidth, Bincount, LinSpace and fake quantization — against float64
// references written here or the values in TensorFlow's documentation, plus the gradients through
// graft's checker and the errors for bad input.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "graft/autodiff/check.hpp"
#include "graft/autodiff/gradients.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "support/tensors.hpp"

// One namespace per file: the opsets tests build as one binary in unity batches.
namespace graft_test_math_more {

using namespace graft::test;  // f32, f64, i32, i64, values

using graft::attr_list;
using graft::dtype;
using graft::endpoint;
using graft::shape;
using graft::tensor;

namespace {

constexpr double pi = 3.14159265358979323846;

/// Runs one node of `op` on constant inputs; returns its outputs.
std::vector<tensor> run_n(const std::string& op, const std::vector<tensor>& ins, attr_list attrs = {}) {
    graft::graph g;
    graft::graph_builder b(g);
    std::vector<endpoint> es;
    for (auto& t : ins) es.push_back(b.constant(t));
    auto outs = b.op_n(op, es, std::move(attrs));
    std::vector<std::string> names;
    for (auto& e : outs) names.push_back(e.str());
    graft::exec::session s(g);
    return s.run({}, names);
}
tensor run1(const std::string& op, const std::vector<tensor>& ins, attr_list attrs = {}) {
    return run_n(op, ins, std::move(attrs))[0];
}

void check_close(const tensor& t, const std::vector<double>& want, double tol = 1e-12) {
    auto v = values(t);
    REQUIRE(v.size() == want.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
        INFO("element " << i);
        if (std::isnan(want[i])) {
            CHECK(std::isnan(v[i]));
        } else {
            CHECK(v[i] == doctest::Approx(want[i]).epsilon(tol).scale(1.0));
        }
    }
}

/// The gradient check of a one-node graph of `op` over float64 inputs; `consts` are extra inputs
/// appended as constants (not differentiated).
double grad_error(const std::string& op, const std::vector<tensor>& xs, const std::vector<tensor>& consts = {},
                  attr_list attrs = {}, bool consts_first = false) {
    auto r = graft::autodiff::check_gradients(
        [&](const graft::graph_builder& gb, const std::vector<endpoint>& e) {
            std::vector<endpoint> ins;
            std::vector<endpoint> cs;
            for (auto& c : consts) cs.push_back(gb.constant(c));
            if (consts_first) ins.insert(ins.end(), cs.begin(), cs.end());
            ins.insert(ins.end(), e.begin(), e.end());
            if (!consts_first) ins.insert(ins.end(), cs.begin(), cs.end());
            return std::vector<endpoint>{gb.op(op, ins, attrs)};
        },
        xs);
    INFO(op << ": " << r.str());
    return r.max_rel_error;
}

}  // namespace

TEST_CASE("hyperbolic, inverse trigonometric, Expm1 and Softsign equal their float64 formulas") {
    const std::vector<double> x = {-0.9, -0.3, 0.0, 0.2, 0.7};
    struct one {
        const char* op;
        double (*f)(double);
    };
    const one cases[] = {
        {"Cosh", [](double v) { return std::cosh(v); }},   {"Sinh", [](double v) { return std::sinh(v); }},
        {"Tan", [](double v) { return std::tan(v); }},     {"Asin", [](double v) { return std::asin(v); }},
        {"Acos", [](double v) { return std::acos(v); }},   {"Atan", [](double v) { return std::atan(v); }},
        {"Asinh", [](double v) { return std::asinh(v); }}, {"Atanh", [](double v) { return std::atanh(v); }},
        {"Expm1", [](double v) { return std::expm1(v); }},
        {"Softsign", [](double v) { return v / (1 + std::abs(v)); }},
    };
    for (const auto& c : cases) {
        INFO(c.op);
        std::vector<double> want;
        for (double v : x) want.push_back(c.f(v));
        check_close(run1(c.op, {f64({5}, x)}), want);
        check_close(run1(c.op, {f32({5}, {-0.9f, -0.3f, 0.f, 0.2f, 0.7f})}), want, 1e-6);
        CHECK(grad_error(c.op, {f64({5}, x)}) < 1e-6);
    }
    check_close(run1("Acosh", {f64({3}, {1.5, 2.0, 10.0})}), {std::acosh(1.5), std::acosh(2.0), std::acosh(10.0)});
    CHECK(grad_error("Acosh", {f64({3}, {1.5, 2.0, 10.0})}) < 1e-6);
    // float16 is computed in float32 and rounded back
    auto h = run1("Cosh", {graft::cast(f32({2}, {0.5f, 1.0f}), dtype::float16)});
    CHECK(h.type() == dtype::float16);
    check_close(h, {std::cosh(0.5), std::cosh(1.0)}, 1e-3);
}

TEST_CASE("Rint rounds halves to even; IsNan/IsInf/IsFinite test each element") {
    check_close(run1("Rint", {f64({7}, {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.7})}), {-2, -2, -0.0, 0, 2, 2, 3});
    const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
    auto x = f32({4}, {1.f, static_cast<float>(inf), static_cast<float>(-inf), static_cast<float>(nan)});
    auto nn = run1("IsNan", {x}), ni = run1("IsInf", {x}), nf = run1("IsFinite", {x});
    CHECK(nn.type() == dtype::bool_);
    check_close(nn, {0, 0, 0, 1});
    check_close(ni, {0, 1, 1, 0});
    check_close(nf, {1, 0, 0, 0});
}

TEST_CASE("Atan2, Xdivy, Xlogy, Xlog1py, DivNoNan, MulNoNan broadcast and match float64; their gradients") {
    auto y = f64({2, 1}, {1.0, -2.0});
    auto x = f64({3}, {0.5, -1.0, 3.0});
    auto a = run1("Atan2", {y, x});
    CHECK(a.shape() == shape{2, 3});
    check_close(a, {std::atan2(1.0, 0.5), std::atan2(1.0, -1.0), std::atan2(1.0, 3.0), std::atan2(-2.0, 0.5),
                    std::atan2(-2.0, -1.0), std::atan2(-2.0, 3.0)});
    check_close(run1("Xdivy", {f64({3}, {0, 2, 0}), f64({3}, {0, 4, 5})}), {0, 0.5, 0});
    check_close(run1("Xlogy", {f64({3}, {0, 2, 3}), f64({3}, {0, std::exp(1.0), 1})}), {0, 2, 0});
    check_close(run1("Xlog1py", {f64({2}, {0, 2}), f64({2}, {-1, std::exp(1.0) - 1})}), {0, 2});
    check_close(run1("DivNoNan", {f64({3}, {1, 0, 6}), f64({3}, {0, 0, 3})}), {0, 0, 2});
    check_close(run1("MulNoNan", {f64({2}, {std::nan(""), 3}), f64({2}, {0, 2})}), {0, 6});

    CHECK(grad_error("Atan2", {y, x}) < 1e-6);
    CHECK(grad_error("Xdivy", {f64({3}, {0.5, 1.5, -2}), f64({1}, {1.5})}) < 1e-6);
    CHECK(grad_error("Xlogy", {f64({3}, {0.5, 1.5, -2}), f64({3}, {0.7, 2, 3})}) < 1e-6);
    CHECK(grad_error("Xlog1py", {f64({3}, {0.5, 1.5, -2}), f64({3}, {0.7, 2, 3})}) < 1e-6);
    CHECK(grad_error("DivNoNan", {f64({2, 2}, {1, 2, 3, 4}), f64({2}, {0.5, -3})}) < 1e-6);
    CHECK(grad_error("MulNoNan", {f64({2, 2}, {1, 2, 3, 4}), f64({2}, {0.5, -3})}) < 1e-6);
}

TEST_CASE("Mod, TruncateMod and TruncateDiv truncate toward zero; an integer division by zero names the node") {
    auto x = i32({4}, {7, -7, 7, -7}), y = i32({4}, {2, 2, -2, -2});
    check_close(run1("TruncateDiv", {x, y}), {3, -3, -3, 3});
    check_close(run1("TruncateMod", {x, y}), {1, -1, 1, -1});
    check_close(run1("Mod", {x, y}), {1, -1, 1, -1});
    check_close(run1("Mod", {f32({2}, {5.5f, -5.5f}), f32({1}, {2.f})}), {1.5, -1.5});
    check_close(run1("TruncateDiv", {f64({2}, {5.5, -5.5}), f64({1}, {2})}), {2, -2});
    // INT_MIN / -1 wraps instead of trapping
    check_close(run1("TruncateDiv", {i32({1}, {INT32_MIN}), i32({1}, {-1})}), {static_cast<double>(INT32_MIN)});
    CHECK(grad_error("TruncateMod", {f64({3}, {5.5, -3.2, 7.1}), f64({3}, {2, 1.5, -2.5})}) < 1e-6);

    graft::graph g;
    graft::graph_builder b(g);
    auto d = b.op("TruncateDiv", {b.constant(x), b.constant(i32({4}, {1, 0, 1, 1}))});
    graft::exec::session s(g);
    try {
        (void)s.run({}, {d.str()});
        FAIL("expected an error");
    } catch (const graft::error& e) {
        std::string m = e.what();
        CHECK(m.find("division by zero") != std::string::npos);
        CHECK(m.find(d.node) != std::string::npos);
    }
}

TEST_CASE("Bitwise ops, Invert and shifts on integer types (TF's documented values)") {
    auto a = i32({4}, {0, 5, 3, 14}), b = i32({4}, {5, 0, 7, 11});
    check_close(run1("BitwiseAnd", {a, b}), {0, 0, 3, 10});
    check_close(run1("BitwiseOr", {a, b}), {5, 5, 7, 15});
    check_close(run1("BitwiseXor", {a, b}), {5, 5, 4, 5});
    auto inv = run1("Invert", {graft::cast(i32({3}, {0, 1, -128}), dtype::int8)});
    CHECK(inv.type() == dtype::int8);
    check_close(inv, {-1, -2, 127});
    auto u = run1("Invert", {graft::cast(i32({2}, {0, 255}), dtype::uint8)});
    check_close(u, {255, 0});
    // shifts: amounts clamped to [0, bits - 1]; right shifts of negatives are arithmetic
    check_close(run1("LeftShift", {i32({4}, {1, -1, 3, 1}), i32({4}, {3, 2, 0, 40})}), {8, -4, 3, INT32_MIN});
    check_close(run1("RightShift", {i32({4}, {-8, 64, 7, -1}), i32({4}, {1, 3, -1, 100})}), {-4, 8, 7, -1});
    CHECK_THROWS_WITH_AS(run1("BitwiseAnd", {f32({1}, {1.f}), f32({1}, {1.f})}),
                         doctest::Contains("does not support"), graft::error);
}

TEST_CASE("Bitcast reinterprets bytes: same size keeps the shape, wider adds a last dim, narrower drops it") {
    auto one = run1("Bitcast", {f32({2}, {1.0f, -2.0f})}, {{"type", dtype::int32}});
    CHECK(one.shape() == shape{2});
    check_close(one, {1065353216.0, -1073741824.0});
    auto bytes = run1("Bitcast", {i32({1, 2}, {0x01020304, -1})}, {{"type", dtype::uint8}});
    CHECK(bytes.shape() == shape{1, 2, 4});
    check_close(bytes, {4, 3, 2, 1, 255, 255, 255, 255});
    auto back = run1("Bitcast", {bytes}, {{"type", dtype::int32}});
    CHECK(back.shape() == shape{1, 2});
    check_close(back, {0x01020304, -1});
    auto d = run1("Bitcast", {f32({2}, {0.f, 1.875f})}, {{"type", dtype::float64}});
    CHECK(d.shape() == shape{});
    std::uint64_t bits = (std::uint64_t{0x3FF00000} << 32);  // low word 0.0f, high word 1.875f = 0x3FF00000
    double want;
    std::memcpy(&want, &bits, 8);
    check_close(d, {want});
    CHECK_THROWS_WITH_AS(run1("Bitcast", {f32({3}, {1, 2, 3})}, {{"type", dtype::float64}}),
                         doctest::Contains("the last dim must be 2"), graft::error);
}

TEST_CASE("CompareAndBitpack packs input > threshold 8 to a byte, first element in the high bit") {
    auto x = f32({2, 8}, {1, 0, 0, 0, 0, 0, 0, 1, 0.5f, 0.6f, 0.7f, 0.8f, 0.1f, 0.1f, 0.1f, 0.9f});
    auto p = run1("CompareAndBitpack", {x, tensor::scalar_of(0.5f)});
    CHECK(p.type() == dtype::uint8);
    CHECK(p.shape() == shape{2, 1});
    check_close(p, {0x81, 0x71});
    auto bools = tensor::from_vector<bool>(shape{8}, {true, true, false, false, false, false, false, true});
    check_close(run1("CompareAndBitpack", {bools, tensor::scalar_of(false)}), {0xC1});
    CHECK_THROWS_WITH_AS(run1("CompareAndBitpack", {f32({4}, {1, 2, 3, 4}), tensor::scalar_of(0.f)}),
                         doctest::Contains("multiple of 8"), graft::error);
}

TEST_CASE("Cumsum and Cumprod: exclusive and reverse as TF documents, any axis, and their gradients") {
    auto x = f64({3}, {1, 2, 3});
    auto ax = i32({}, {0});
    auto cs = [&](bool ex, bool rev) {
        return run1("Cumsum", {x, ax}, {{"exclusive", ex}, {"reverse", rev}});
    };
    check_close(cs(false, false), {1, 3, 6});
    check_close(cs(true, false), {0, 1, 3});
    check_close(cs(false, true), {6, 5, 3});
    check_close(cs(true, true), {5, 3, 0});
    check_close(run1("Cumprod", {x, ax}, {{"exclusive", true}}), {1, 1, 2});
    check_close(run1("Cumprod", {x, ax}, {{"reverse", true}}), {6, 6, 3});
    auto m = i32({2, 3}, {1, 2, 3, 4, 5, 6});
    check_close(run1("Cumsum", {m, i32({}, {1})}), {1, 3, 6, 4, 9, 15});
    check_close(run1("Cumsum", {m, i32({}, {-2})}), {1, 2, 3, 5, 7, 9});
    for (bool ex : {false, true}) {
        for (bool rev : {false, true}) {
            attr_list at = {{"exclusive", ex}, {"reverse", rev}};
            CHECK(grad_error("Cumsum", {f64({2, 3}, {1, 2, 3, 4, 5, 6})}, {i32({}, {1})}, at) < 1e-6);
            CHECK(grad_error("Cumprod", {f64({2, 3}, {1.5, -2, 3, 0.5, 1.2, -0.7})}, {i32({}, {0})}, at) < 1e-6);
        }
    }
    CHECK_THROWS_WITH_AS(run1("Cumsum", {x, i32({}, {1})}), doctest::Contains("out of range"), graft::error);
}

TEST_CASE("special functions: Lgamma, Digamma, Erfc, Igamma, Igammac, Polygamma, Zeta, Betainc") {
    check_close(run1("Lgamma", {f64({3}, {0.5, 3, -1.5})}), {std::lgamma(0.5), std::log(2.0), std::lgamma(-1.5)});
    check_close(run1("Digamma", {f64({2}, {1, 0.5})}), {-0.57721566490153286, -0.57721566490153286 - 2 * std::log(2.0)});
    check_close(run1("Erfc", {f64({3}, {-1, 0, 2})}), {std::erfc(-1.0), 1.0, std::erfc(2.0)});
    // a = 1: P(1, x) = 1 - exp(-x), Q(1, x) = exp(-x)
    auto xs = f64({3}, {0.1, 1, 4});
    check_close(run1("Igamma", {f64({}, {1}), xs}), {1 - std::exp(-0.1), 1 - std::exp(-1.0), 1 - std::exp(-4.0)});
    check_close(run1("Igammac", {f64({}, {1}), xs}), {std::exp(-0.1), std::exp(-1.0), std::exp(-4.0)});
    check_close(run1("Igamma", {f32({1}, {1.f}), f32({1}, {1.f})}), {1 - std::exp(-1.0)}, 1e-6);
    check_close(run1("Polygamma", {f64({2}, {1, 0}), f64({2}, {1, 1})}), {pi * pi / 6, -0.57721566490153286});
    check_close(run1("Zeta", {f64({2}, {2, 4}), f64({}, {1})}), {pi * pi / 6, std::pow(pi, 4) / 90});
    // I_x(1, 1) = x; I_0.5(2, 3) = 11/16
    check_close(run1("Betainc", {f64({}, {1}), f64({}, {1}), f64({2}, {0.25, 0.5})}), {0.25, 0.5});
    check_close(run1("Betainc", {f64({1}, {2}), f64({1}, {3}), f64({1}, {0.5})}), {11.0 / 16});
    CHECK_THROWS_WITH_AS(run1("Betainc", {f64({2}, {1, 1}), f64({3}, {1, 1, 1}), f64({}, {0.5})}),
                         doctest::Contains("inconsistent"), graft::error);

    CHECK(grad_error("Lgamma", {f64({3}, {0.5, 3, 7.5})}) < 1e-6);
    CHECK(grad_error("Digamma", {f64({3}, {0.5, 3, 7.5})}) < 1e-6);
    CHECK(grad_error("Erfc", {f64({3}, {-1, 0.2, 2})}) < 1e-6);
    CHECK(grad_error("Igamma", {f64({3}, {0.5, 2, 3}), f64({3}, {0.7, 1.5, 4})}) < 1e-5);
    CHECK(grad_error("Igammac", {f64({3}, {0.5, 2, 3}), f64({1}, {1.5})}) < 1e-5);
    CHECK(grad_error("Polygamma", {f64({2}, {0.7, 2.5})}, {f64({2}, {1, 2})}, {}, true) < 1e-6);
    CHECK(grad_error("Zeta", {f64({2}, {0.7, 2.5})}, {f64({2}, {2, 3})}, {}, true) < 1e-6);
    CHECK(grad_error("Betainc", {f64({3}, {0.2, 0.5, 0.9})}, {f64({3}, {2, 0.5, 1.5}), f64({}, {3})}, {}, true) < 1e-6);
}

TEST_CASE("Softsign's gradient op SoftsignGrad and its own gradient") {
    auto g = f64({3}, {1, -2, 0.5}), f = f64({3}, {-1, 0.5, 3});
    check_close(run1("SoftsignGrad", {g, f}), {1.0 / 4, -2 / 2.25, 0.5 / 16});
    CHECK(grad_error("SoftsignGrad", {g, f}) < 1e-6);
}

TEST_CASE("AccumulateNV2 sums its inputs; ApproximateEqual compares within tolerance") {
    auto s = run1("AccumulateNV2", {f32({2}, {1, 2}), f32({2}, {10, 20}), f32({2}, {100, 200})},
                  {{"shape", shape{2}}});
    check_close(s, {111, 222});
    CHECK(grad_error("AccumulateNV2", {f64({2}, {1, 2}), f64({2}, {3, 4})}, {}, {{"shape", shape{2}}}) < 1e-9);
    auto e = run1("ApproximateEqual", {f32({3}, {1.f, 2.f, 3.f}), f32({3}, {1.001f, 2.5f, 3.f})}, {{"tolerance", 0.01f}});
    check_close(e, {1, 0, 1});
    CHECK_THROWS_WITH_AS(run1("ApproximateEqual", {f32({3}, {1, 2, 3}), f32({1}, {1})}),
                         doctest::Contains("same shape"), graft::error);
}

TEST_CASE("HistogramFixedWidth, Bincount and LinSpace (TF's documented examples)") {
    auto h = run1("HistogramFixedWidth",
                  {f32({6}, {-1.0f, 0.0f, 1.5f, 2.0f, 5.0f, 15.f}), f32({2}, {0.f, 5.f}), i32({}, {5})});
    CHECK(h.type() == dtype::int32);
    check_close(h, {2, 1, 1, 0, 2});
    auto h64 = run1("HistogramFixedWidth", {i32({4}, {0, 1, 9, 10}), i32({2}, {0, 10}), i32({}, {2})},
                    {{"dtype", dtype::int64}});
    CHECK(h64.type() == dtype::int64);
    check_close(h64, {2, 2});
    CHECK_THROWS_WITH_AS(run1("HistogramFixedWidth", {f32({1}, {1}), f32({2}, {5, 0}), i32({}, {5})}),
                         doctest::Contains("value_range[0] < value_range[1]"), graft::error);

    check_close(run1("Bincount", {i32({5}, {1, 1, 2, 5, 3}), i32({}, {4}), f32({0}, {})}), {0, 2, 1, 1});
    auto w = run1("Bincount", {i32({3}, {0, 2, 0}), i32({}, {3}), f64({3}, {0.5, 2, 1.5})});
    CHECK(w.type() == dtype::float64);
    check_close(w, {2, 0, 2});
    CHECK_THROWS_WITH_AS(run1("Bincount", {i32({2}, {1, -1}), i32({}, {3}), f32({0}, {})}),
                         doctest::Contains("non-negative"), graft::error);

    check_close(run1("LinSpace", {f32({}, {10}), f32({}, {12}), i32({}, {3})}), {10, 11, 12});
    check_close(run1("LinSpace", {f64({}, {1}), f64({}, {-1}), i32({}, {5})}), {1, 0.5, 0, -0.5, -1});
    check_close(run1("LinSpace", {f64({}, {3}), f64({}, {9}), i32({}, {1})}), {3});
    CHECK(grad_error("LinSpace", {f64({}, {0.5}), f64({}, {2})}, {i32({}, {4})}) < 1e-6);
    CHECK_THROWS_WITH_AS(run1("LinSpace", {f32({}, {1}), f32({}, {2}), i32({}, {0})}), doctest::Contains("num"),
                         graft::error);
}

TEST_CASE("FakeQuantWithMinMaxArgs/Vars quantize on the nudged grid; their gradient ops") {
    // [-1, 2] with 2 bits: step 1, zero point 1, grid {-1, 0, 1, 2}
    auto x = f32({7}, {-3.f, -1.f, -0.4f, 0.6f, 1.49f, 1.5f, 5.f});
    attr_list args = {{"min", -1.0f}, {"max", 2.0f}, {"num_bits", std::int64_t{2}}};
    check_close(run1("FakeQuantWithMinMaxArgs", {x}, args), {-1, -1, 0, 1, 1, 2, 2}, 1e-6);
    check_close(run1("FakeQuantWithMinMaxVars", {x, f32({}, {-1}), f32({}, {2})}, {{"num_bits", std::int64_t{2}}}),
                {-1, -1, 0, 1, 1, 2, 2}, 1e-6);
    // [-0.3, 2.7] nudges to [0, 3]: zero must be on the grid
    auto y = f32({5}, {-1.f, 0.4f, 0.6f, 2.8f, 4.f});
    check_close(run1("FakeQuantWithMinMaxArgs", {y}, {{"min", -0.3f}, {"max", 2.7f}, {"num_bits", std::int64_t{2}}}),
                {0, 0, 1, 3, 3}, 1e-6);
    // narrow_range with 8 bits over [0, 254]: levels 1..255 -> step 1, nudged range [0, 254]
    check_close(run1("FakeQuantWithMinMaxArgs", {f32({3}, {-1.f, 100.4f, 300.f})},
                     {{"min", 0.0f}, {"max", 254.0f}, {"narrow_range", true}}),
                {0, 100, 254}, 1e-6);

    auto g = f32({3}, {1, 2, 3}), v = f32({3}, {-1.5f, 0.4f, 4.f});
    check_close(run1("FakeQuantWithMinMaxArgsGradient", {g, v}, args), {0, 2, 0});
    auto vg = run_n("FakeQuantWithMinMaxVarsGradient", {g, v, f32({}, {-1}), f32({}, {2})},
                    {{"num_bits", std::int64_t{2}}});
    check_close(vg[0], {0, 2, 0});
    check_close(vg[1], {1});
    check_close(vg[2], {3});

    // the gradient rule of FakeQuantWithMinMaxVars emits FakeQuantWithMinMaxVarsGradient
    graft::graph gr;
    graft::graph_builder b(gr);
    auto in = b.constant(v);
    auto lo = b.constant(f32({}, {-1})), hi = b.constant(f32({}, {2}));
    auto q = b.op("FakeQuantWithMinMaxVars", {in, lo, hi}, {{"num_bits", std::int64_t{2}}});
    auto d = graft::autodiff::gradients(gr, {q}, {in, lo, hi});
    REQUIRE(d.size() == 3);
    graft::exec::session s(gr);
    auto out = s.run({}, {d[0]->str(), d[1]->str(), d[2]->str()});
    check_close(out[0], {0, 1, 0});
    check_close(out[1], {1});
    check_close(out[2], {1});
    CHECK_THROWS_WITH_AS(run1("FakeQuantWithMinMaxArgs", {x}, {{"min", 1.0f}, {"max", 1.0f}}),
                         doctest::Contains("min has to be smaller than max"), graft::error);
}

TEST_CASE("CumulativeLogsumexp: log of the running sum of exps (exclusive, reverse) and its gradient") {
    auto x = f64({3}, {0.5, -1, 2});
    auto ax = i32({}, {0});
    auto e = [](double a) { return std::exp(a); };
    check_close(run1("CumulativeLogsumexp", {x, ax}),
                {0.5, std::log(e(0.5) + e(-1)), std::log(e(0.5) + e(-1) + e(2))});
    auto ex = run1("CumulativeLogsumexp", {x, ax}, {{"exclusive", true}, {"reverse", true}});
    auto v = values(ex);
    CHECK(v[0] == doctest::Approx(std::log(e(-1) + e(2))));
    CHECK(v[1] == doctest::Approx(2.0));
    CHECK(std::isinf(v[2]));
    CHECK(v[2] < 0);
    check_close(run1("CumulativeLogsumexp", {f32({2, 2}, {0, 1, 2, 3}), i32({}, {1})}),
                {0, std::log(1 + e(1)), 2, std::log(e(2) + e(3))}, 1e-6);
    for (bool rev : {false, true}) {
        attr_list at = {{"reverse", rev}};
        CHECK(grad_error("CumulativeLogsumexp", {f64({2, 3}, {0.5, -1, 2, 0.1, 0.3, -0.7})}, {i32({}, {1})}, at) <
              1e-6);
    }
}

TEST_CASE("PopulationCount counts set bits") {
    check_close(run1("PopulationCount", {i32({4}, {0, 7, -1, 1 << 30})}), {0, 3, 32, 1});
    auto u = run1("PopulationCount", {graft::cast(i32({2}, {255, 16}), dtype::uint8)});
    CHECK(u.type() == dtype::uint8);
    check_close(u, {8, 1});
}

TEST_CASE("FakeQuantWithMinMaxVarsPerChannel quantizes each last-dim channel on its own grid; its gradient") {
    // channel 0: [-1, 2] with 2 bits (step 1); channel 1: [0, 0] gives zeros
    auto x = f32({3, 2}, {-3.f, 5.f, 0.6f, 1.f, 1.5f, -2.f});
    auto lo = f32({2}, {-1, 0}), hi = f32({2}, {2, 0});
    attr_list nb = {{"num_bits", std::int64_t{2}}};
    check_close(run1("FakeQuantWithMinMaxVarsPerChannel", {x, lo, hi}, nb), {-1, 0, 1, 0, 2, 0}, 1e-6);
    auto g = f32({3, 2}, {1, 2, 3, 4, 5, 6});
    auto r = run_n("FakeQuantWithMinMaxVarsPerChannelGradient", {g, f32({3, 2}, {-3.f, 5.f, 0.6f, 1.f, 4.f, -2.f}), lo, hi},
                   nb);
    check_close(r[0], {0, 2, 3, 4, 0, 6});
    check_close(r[1], {1, 0});
    check_close(r[2], {5, 0});
    CHECK_THROWS_WITH_AS(run1("FakeQuantWithMinMaxVarsPerChannel", {x, f32({3}, {0, 0, 0}), f32({3}, {1, 1, 1})}),
                         doctest::Contains("last dim"), graft::error);
}

}  // namespace graft_test_math_more
