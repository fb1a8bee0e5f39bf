// The dtypes TF's CPU kernels take, through graft::exec::session: float16 and bfloat16 (computed in
// float32 and rounded back per op, as TF's Eigen::half arithmetic), int8/int16/uint8/uint16/
// uint32/uint64 in the elementwise, comparison and reduction families — against references computed
// here in float64 (or 64-bit integers, wrapped to the dtype's width), half rounding checked bit for
// bit on a few values, and the errors for what TF does not register (Neg/Abs of unsigned, ...).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "support/tensors.hpp"

// One namespace per file: the opsets tests build as one binary in unity batches.
namespace graft_test_dtypes {

using namespace graft::test;  // f32, f64, i32, i64, values

using graft::attr_list;
using graft::dtype;
using graft::endpoint;
using graft::shape;
using graft::tensor;

namespace {

tensor i32(const shape& s, std::vector<std::int32_t> v) {
    return tensor::from_vector<std::int32_t>(s, v);
}
/// A tensor of dtype t holding v (each value representable in t).
tensor of(dtype t, const shape& s, const std::vector<double>& v) {
    return graft::cast(f64(s, v), t);
}

/// Runs one node of `op` on constant inputs; returns its first output.
tensor run1(const std::string& op, const std::vector<tensor>& ins, attr_list attrs = {}) {
    graft::graph g;
    graft::graph_builder b(g);
    std::vector<endpoint> es;
    for (auto& t : ins) es.push_back(b.constant(t));
    auto outs = b.op_n(op, es, std::move(attrs));
    graft::exec::session s(g);
    return s.run({}, {outs[0].str()})[0];
}

/// The value a float64 result has in dtype t: rounded to nearest even for the 16-bit floats,
/// reduced modulo 2^bits (two's complement for the signed types) for the integers.
double in_dtype(dtype t, double v) {
    switch (t) {
        case dtype::float16: return static_cast<double>(static_cast<float>(graft::half(static_cast<float>(v))));
        case dtype::bfloat16:
            return static_cast<double>(static_cast<float>(graft::bfloat16(static_cast<float>(v))));
        case dtype::int8: return static_cast<std::int8_t>(static_cast<std::int64_t>(v));
        case dtype::int16: return static_cast<std::int16_t>(static_cast<std::int64_t>(v));
        case dtype::uint8: return static_cast<std::uint8_t>(static_cast<std::int64_t>(v));
        case dtype::uint16: return static_cast<std::uint16_t>(static_cast<std::int64_t>(v));
        case dtype::uint32: return static_cast<std::uint32_t>(static_cast<std::int64_t>(v));
        case dtype::uint64:
            return static_cast<double>(static_cast<std::uint64_t>(static_cast<std::int64_t>(v)));
        default: return v;
    }
}

/// Relative spacing of the 16-bit floats (one unit in the last place near 1).
double ulp(dtype t) { return t == dtype::float16 ? 1.0 / 1024 : 1.0 / 128; }

const std::vector<dtype> small_ints = {dtype::int8, dtype::int16, dtype::uint8, dtype::uint16,
                                       dtype::uint32, dtype::uint64};
const std::vector<dtype> half_types = {dtype::float16, dtype::bfloat16};

bool is_unsigned(dtype t) {
    return t == dtype::uint8 || t == dtype::uint16 || t == dtype::uint32 || t == dtype::uint64;
}

}  // namespace

TEST_CASE("Add/Sub/Mul wrap around in the narrow integer types as TF's two's-complement kernels") {
    auto a8 = of(dtype::int8, {3}, {100, -128, 127});
    auto b8 = of(dtype::int8, {3}, {100, -1, 1});
    CHECK(values(run1("AddV2", {a8, b8})) == std::vector<double>{-56, 127, -128});
    CHECK(values(run1("Sub", {a8, b8})) == std::vector<double>{0, -127, 126});
    CHECK(values(run1("Mul", {a8, b8})) == std::vector<double>{16, -128, 127});
    auto u8 = of(dtype::uint8, {3}, {200, 3, 16});
    auto v8 = of(dtype::uint8, {3}, {100, 5, 16});
    CHECK(values(run1("Add", {u8, v8})) == std::vector<double>{44, 8, 32});
    CHECK(values(run1("Sub", {u8, v8})) == std::vector<double>{100, 254, 0});
    CHECK(values(run1("Mul", {u8, v8})) == std::vector<double>{32, 15, 0});
    auto u32 = of(dtype::uint32, {1}, {0});
    CHECK(run1("Sub", {u32, of(dtype::uint32, {1}, {1})}).data<std::uint32_t>()[0] ==
          std::numeric_limits<std::uint32_t>::max());
    tensor u64 = tensor::from_vector<std::uint64_t>({1}, {std::numeric_limits<std::uint64_t>::max()});
    CHECK(run1("AddV2", {u64, tensor::from_vector<std::uint64_t>({1}, {2})}).data<std::uint64_t>()[0] == 1);
    auto i16 = of(dtype::int16, {1}, {32767});
    CHECK(values(run1("AddV2", {i16, of(dtype::int16, {1}, {1})})) == std::vector<double>{-32768});
    // a broadcast scalar on either side
    CHECK(values(run1("Sub", {of(dtype::uint8, {}, {1}), v8})) == std::vector<double>{157, 252, 241});
}

TEST_CASE("integer arithmetic on int8..uint64 against a 64-bit reference, broadcast included") {
    struct bin {
        const char* op;
        std::function<double(std::int64_t, std::int64_t)> f;
    };
    auto floordiv = [](std::int64_t x, std::int64_t y) {
        std::int64_t q = x / y;
        if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
        return static_cast<double>(q);
    };
    const std::vector<bin> ops = {
        {"AddV2", [](std::int64_t x, std::int64_t y) { return static_cast<double>(x + y); }},
        {"Sub", [](std::int64_t x, std::int64_t y) { return static_cast<double>(x - y); }},
        {"Mul", [](std::int64_t x, std::int64_t y) { return static_cast<double>(x * y); }},
        {"Div", [](std::int64_t x, std::int64_t y) { return static_cast<double>(x / y); }},
        {"FloorDiv", floordiv},
        {"FloorMod",
         [&](std::int64_t x, std::int64_t y) { return static_cast<double>(x) - floordiv(x, y) * static_cast<double>(y); }},
        {"Maximum", [](std::int64_t x, std::int64_t y) { return static_cast<double>(std::max(x, y)); }},
        {"Minimum", [](std::int64_t x, std::int64_t y) { return static_cast<double>(std::min(x, y)); }},
    };
    for (dtype t : small_ints) {
        const bool u = is_unsigned(t);
        // x is [2,3], y a row [3] broadcast down it
        std::vector<double> xs = u ? std::vector<double>{7, 100, 0, 120, 9, 33}
                                   : std::vector<double>{-7, 100, 0, -120, 9, 33};
        std::vector<double> ys = u ? std::vector<double>{2, 3, 100} : std::vector<double>{2, -3, 100};
        auto x = of(t, {2, 3}, xs);
        auto y = of(t, {3}, ys);
        for (const auto& b : ops) {
            INFO(graft::dtype_name(t) << " " << b.op);
            auto r = run1(b.op, {x, y});
            CHECK(r.type() == t);
            std::vector<double> want;
            for (std::size_t i = 0; i < xs.size(); ++i) {
                want.push_back(in_dtype(t, b.f(static_cast<std::int64_t>(xs[i]),
                                               static_cast<std::int64_t>(ys[i % 3]))));
            }
            CHECK(values(r) == want);
        }
    }
    // Pow on the signed narrow types wraps as TF's integer pow
    CHECK(values(run1("Pow", {of(dtype::int8, {2}, {3, -2}), of(dtype::int8, {2}, {5, 7})})) ==
          std::vector<double>{in_dtype(dtype::int8, 243), -128});
    CHECK(values(run1("SquaredDifference", {of(dtype::int32, {1}, {3}), of(dtype::int32, {1}, {-4})})) ==
          std::vector<double>{49});
}

TEST_CASE("comparisons on every new dtype give TF's bools") {
    std::vector<dtype> all = small_ints;
    all.insert(all.end(), half_types.begin(), half_types.end());
    for (dtype t : all) {
        INFO(graft::dtype_name(t));
        auto x = of(t, {4}, {1, 5, 7, 0});
        auto y = of(t, {4}, {2, 5, 3, 0});
        auto bools = [](const tensor& r) {
            REQUIRE(r.type() == dtype::bool_);
            return std::vector<bool>(r.data<bool>(), r.data<bool>() + r.num_elements());
        };
        CHECK(bools(run1("Less", {x, y})) == std::vector<bool>{true, false, false, false});
        CHECK(bools(run1("LessEqual", {x, y})) == std::vector<bool>{true, true, false, true});
        CHECK(bools(run1("Greater", {x, y})) == std::vector<bool>{false, false, true, false});
        CHECK(bools(run1("GreaterEqual", {x, y})) == std::vector<bool>{false, true, true, true});
        CHECK(bools(run1("Equal", {x, y})) == std::vector<bool>{false, true, false, true});
        CHECK(bools(run1("NotEqual", {x, of(t, {}, {5})})) == std::vector<bool>{true, false, true, true});
    }
}

TEST_CASE("float16 and bfloat16 arithmetic rounds each result to nearest even, bit for bit") {
    // 2048 + 1 = 2049 lies halfway between the halves 2048 and 2050: ties go to the even 2048;
    // 2048 + 3 = 2051 between 2050 and 2052: to 2052. bfloat16 keeps 8 bits: 256 + 1 -> 256.
    auto h = of(dtype::float16, {2}, {2048, 2048});
    CHECK(values(run1("AddV2", {h, of(dtype::float16, {2}, {1, 3})})) == std::vector<double>{2048, 2052});
    auto bf = of(dtype::bfloat16, {2}, {256, 256});
    CHECK(values(run1("AddV2", {bf, of(dtype::bfloat16, {2}, {1, 3})})) == std::vector<double>{256, 260});
    // 0.1 and 0.2 as halves (0.0999755859375, 0.199951171875): their exact sum 0.2999267578125
    // lies halfway between two halves and rounds to the even one, 0.2998046875 (0x34cc, numpy's)
    auto a = of(dtype::float16, {}, {0.1});
    auto b = of(dtype::float16, {}, {0.2});
    auto s = run1("AddV2", {a, b});
    CHECK(s.type() == dtype::float16);
    CHECK(s.data<graft::half>()[0].x == 0x34cc);
    CHECK(values(s)[0] == 0.2998046875);
    // overflow to inf past 65504, and 1/3 rounded once
    CHECK(std::isinf(values(run1("Mul", {of(dtype::float16, {}, {300}), of(dtype::float16, {}, {300})}))[0]));
    CHECK(values(run1("RealDiv", {of(dtype::float16, {}, {1}), of(dtype::float16, {}, {3})}))[0] ==
          0.333251953125);
    for (dtype t : half_types) {
        INFO(graft::dtype_name(t));
        std::vector<double> xs = {1.5, -2.25, 0.1, 7};
        std::vector<double> ys = {0.5, 3, -0.3, 2};
        auto x = of(t, {4}, xs);
        auto y = of(t, {4}, ys);
        auto xv = values(x), yv = values(y);
        struct bin {
            const char* op;
            std::function<double(double, double)> f;
        };
        const std::vector<bin> ops = {
            {"AddV2", [](double p, double q) { return p + q; }},
            {"Sub", [](double p, double q) { return p - q; }},
            {"Mul", [](double p, double q) { return p * q; }},
            {"Div", [](double p, double q) { return static_cast<double>(static_cast<float>(p) / static_cast<float>(q)); }},
            {"RealDiv", [](double p, double q) { return static_cast<double>(static_cast<float>(p) / static_cast<float>(q)); }},
            {"FloorDiv", [](double p, double q) { return std::floor(static_cast<float>(p) / static_cast<float>(q)); }},
            {"FloorMod", [](double p, double q) { return p - std::floor(p / q) * q; }},
            {"Maximum", [](double p, double q) { return std::max(p, q); }},
            {"Minimum", [](double p, double q) { return std::min(p, q); }},
            {"SquaredDifference", [](double p, double q) { return (p - q) * (p - q); }},
            {"Pow", [](double p, double q) { return std::pow(std::abs(p), q); }},
        };
        for (const auto& o : ops) {
            INFO(o.op);
            auto xin = std::string(o.op) == "Pow" ? of(t, {4}, {1.5, 2.25, 0.1, 7}) : x;
            auto xi = values(xin);
            auto r = run1(o.op, {xin, y});
            CHECK(r.type() == t);
            auto v = values(r);
            for (std::size_t i = 0; i < v.size(); ++i) {
                const double want = o.f(xi[i], yv[i]);
                // exact where float32 holds the exact result; else within one unit of rounding
                CHECK(v[i] == doctest::Approx(in_dtype(t, want)).epsilon(ulp(t)));
            }
        }
    }
}

TEST_CASE("unary ops on float16 and bfloat16 against float64, within one unit in the last place") {
    struct un {
        const char* op;
        std::function<double(double)> f;
        std::vector<double> xs;
    };
    const std::vector<double> any = {-2.5, -0.75, 0.0, 0.3, 1.0, 3.5};
    const std::vector<double> pos = {0.05, 0.3, 1.0, 2.5, 9.0, 100.0};
    const double scale = 1.0507009873554804934193349852946, alpha = 1.6732632423543772848170429916717;
    const std::vector<un> ops = {
        {"Neg", [](double v) { return -v; }, any},
        {"Abs", [](double v) { return std::abs(v); }, any},
        {"Sign", [](double v) { return v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0; }, any},
        {"Square", [](double v) { return v * v; }, any},
        {"Sqrt", [](double v) { return std::sqrt(v); }, pos},
        {"Rsqrt", [](double v) { return 1 / std::sqrt(v); }, pos},
        {"Reciprocal", [](double v) { return 1 / v; }, pos},
        {"Exp", [](double v) { return std::exp(v); }, any},
        {"Log", [](double v) { return std::log(v); }, pos},
        {"Log1p", [](double v) { return std::log1p(v); }, pos},
        {"Tanh", [](double v) { return std::tanh(v); }, any},
        {"Sigmoid", [](double v) { return 1 / (1 + std::exp(-v)); }, any},
        {"Relu", [](double v) { return std::max(v, 0.0); }, any},
        {"Relu6", [](double v) { return std::min(std::max(v, 0.0), 6.0); }, {-1, 0.5, 5.5, 6.5, 9, 3}},
        {"Elu", [](double v) { return v < 0 ? std::expm1(v) : v; }, any},
        {"Selu", [&](double v) { return v < 0 ? scale * alpha * std::expm1(v) : scale * v; }, any},
        {"Softplus", [](double v) { return std::log1p(std::exp(v)); }, any},
        {"Floor", [](double v) { return std::floor(v); }, any},
        {"Ceil", [](double v) { return std::ceil(v); }, any},
        {"Round", [](double v) { return std::nearbyint(v); }, {-2.5, -1.5, 0.5, 1.5, 2.5, 3.25}},
        {"Sin", [](double v) { return std::sin(v); }, any},
        {"Cos", [](double v) { return std::cos(v); }, any},
        {"Erf", [](double v) { return std::erf(v); }, any},
    };
    for (dtype t : half_types) {
        for (const auto& o : ops) {
            INFO(graft::dtype_name(t) << " " << o.op);
            auto x = of(t, {6}, o.xs);
            auto r = run1(o.op, {x});
            CHECK(r.type() == t);
            auto xv = values(x), v = values(r);
            for (std::size_t i = 0; i < v.size(); ++i) {
                CHECK(v[i] == doctest::Approx(o.f(xv[i])).epsilon(ulp(t)).scale(ulp(t)));
            }
        }
    }
    // one exact value: exp(1) in half is 2.71875 (0x4170)
    CHECK(run1("Exp", {of(dtype::float16, {}, {1})}).data<graft::half>()[0].x == 0x4170);
}

TEST_CASE("unary ops on the narrow integers, and the errors for what TF does not register") {
    CHECK(values(run1("Abs", {of(dtype::int8, {3}, {-128, -5, 7})})) == std::vector<double>{-128, 5, 7});
    CHECK(values(run1("Neg", {of(dtype::int16, {3}, {-32768, -5, 7})})) == std::vector<double>{-32768, 5, -7});
    CHECK(values(run1("Sign", {of(dtype::int8, {3}, {-100, 0, 3})})) == std::vector<double>{-1, 0, 1});
    CHECK(values(run1("Square", {of(dtype::uint8, {3}, {16, 15, 3})})) == std::vector<double>{0, 225, 9});
    CHECK(values(run1("Relu", {of(dtype::int16, {3}, {-3, 0, 9})})) == std::vector<double>{0, 0, 9});
    CHECK(values(run1("Relu6", {of(dtype::uint16, {3}, {3, 6, 900})})) == std::vector<double>{3, 6, 6});
    // TF registers no Neg/Abs/Sign of unsigned types, no Pow of unsigned, no RealDiv/Exp of ints
    CHECK_THROWS_WITH_AS(run1("Neg", {of(dtype::uint8, {1}, {1})}),
                         doctest::Contains("x has dtype uint8, which this kernel does not support"),
                         graft::error);
    CHECK_THROWS_WITH_AS(run1("Abs", {of(dtype::uint32, {1}, {1})}), doctest::Contains("node 'Abs'"),
                         graft::error);
    CHECK_THROWS_WITH_AS(run1("Pow", {of(dtype::uint8, {1}, {1}), of(dtype::uint8, {1}, {1})}),
                         doctest::Contains("uint8"), graft::error);
    CHECK_THROWS_WITH_AS(run1("RealDiv", {of(dtype::int8, {1}, {1}), of(dtype::int8, {1}, {1})}),
                         doctest::Contains("int8"), graft::error);
    CHECK_THROWS_WITH_AS(run1("Exp", {of(dtype::int16, {1}, {1})}), doctest::Contains("int16"), graft::error);
    // integer division by zero is an error naming the element, as before
    CHECK_THROWS_WITH_AS(run1("FloorDiv", {of(dtype::uint16, {2}, {1, 2}), of(dtype::uint16, {2}, {1, 0})}),
                         doctest::Contains("division by zero"), graft::error);
    // mixed dtypes stay an error
    CHECK_THROWS_WITH_AS(run1("AddV2", {of(dtype::int8, {1}, {1}), of(dtype::uint8, {1}, {1})}),
                         doctest::Contains("dtypes must match"), graft::error);
}

TEST_CASE("reductions in float16 and bfloat16 sum in float32 and round once") {
    // [2,3] rows of halves
    std::vector<double> xs = {0.1, 0.2, 0.3, 1000, 0.5, -3};
    for (dtype t : half_types) {
        INFO(graft::dtype_name(t));
        auto x = of(t, {2, 3}, xs);
        auto xv = values(x);
        auto axis1 = i32({}, {1});
        auto sum = run1("Sum", {x, axis1});
        CHECK(sum.type() == t);
        const double s0 = xv[0] + xv[1] + xv[2], s1 = xv[3] + xv[4] + xv[5];
        CHECK(values(sum) == std::vector<double>{in_dtype(t, s0), in_dtype(t, s1)});
        CHECK(values(run1("Mean", {x, axis1})) == std::vector<double>{in_dtype(t, s0 / 3), in_dtype(t, s1 / 3)});
        CHECK(values(run1("Max", {x, axis1})) == std::vector<double>{xv[2], xv[3]});
        CHECK(values(run1("Min", {x, i32({1}, {0})}, {{"keep_dims", true}})) ==
              std::vector<double>{xv[0], xv[1], xv[5]});
        auto prod = values(run1("Prod", {x, axis1}));
        CHECK(prod[0] == doctest::Approx(in_dtype(t, xv[0] * xv[1] * xv[2])).epsilon(ulp(t)));
        CHECK(prod[1] == in_dtype(t, xv[3] * xv[4] * xv[5]));
        auto am = run1("ArgMax", {x, axis1}, {{"output_type", dtype::int64}});
        CHECK(values(am) == std::vector<double>{2, 0});
        CHECK(values(run1("ArgMin", {x, i32({}, {0})}, {{"output_type", dtype::int32}})) ==
              std::vector<double>{0, 0, 1});
        auto small = of(t, {4}, {0.1, 0.2, -3, 7.5});
        double l2 = 0;
        for (double v : values(small)) l2 += v * v;
        CHECK(values(run1("L2Loss", {small}))[0] == doctest::Approx(in_dtype(t, l2 / 2)).epsilon(ulp(t)));
        if (t == dtype::float16) CHECK(std::isinf(values(run1("L2Loss", {x}))[0]));  // past 65504
        // AddN of three: one rounding of the float32 sum
        auto n3 = run1("AddN", {x, x, x});
        CHECK(n3.type() == t);
        for (std::size_t i = 0; i < xv.size(); ++i) CHECK(values(n3)[i] == in_dtype(t, 3 * xv[i]));
    }
    // a long sum keeps float32 precision: 4096 halves of 1 sum to 4096 (a half accumulator
    // would stop at 2048)
    auto ones = of(dtype::float16, {4096}, std::vector<double>(4096, 1.0));
    CHECK(values(run1("Sum", {ones, i32({}, {0})}))[0] == 4096);
}

TEST_CASE("integer reductions: sums and products wrap, Mean sums in 64 bits as TF") {
    auto x = of(dtype::int8, {2, 2}, {100, 100, -100, -29});
    auto axis1 = i32({}, {1});
    CHECK(values(run1("Sum", {x, axis1})) == std::vector<double>{-56, 127});
    CHECK(values(run1("Mean", {x, axis1})) == std::vector<double>{100, -64});
    CHECK(values(run1("Prod", {x, axis1})) == std::vector<double>{in_dtype(dtype::int8, 10000), in_dtype(dtype::int8, 2900)});
    CHECK(values(run1("Max", {x, i32({2}, {0, 1})})) == std::vector<double>{100});
    auto u = of(dtype::uint16, {3}, {65535, 2, 7});
    CHECK(values(run1("Sum", {u, i32({}, {0})})) == std::vector<double>{8});
    CHECK(values(run1("Mean", {u, i32({}, {0})})) == std::vector<double>{(65535 + 2 + 7) / 3});
    CHECK(values(run1("Min", {u, i32({}, {0})})) == std::vector<double>{2});
    CHECK(values(run1("ArgMax", {u, i32({}, {0})})) == std::vector<double>{0});
    auto u64 = tensor::from_vector<std::uint64_t>({2}, {std::numeric_limits<std::uint64_t>::max(), 5});
    CHECK(run1("Max", {u64, i32({}, {0})}).data<std::uint64_t>()[0] == std::numeric_limits<std::uint64_t>::max());
    // an int32 Mean no longer overflows its sum
    auto big = of(dtype::int32, {2}, {2000000000, 2000000000});
    CHECK(values(run1("Mean", {big, i32({}, {0})})) == std::vector<double>{2000000000});
    // empty reductions give the identity of the type itself
    auto empty = of(dtype::int8, {0, 2}, {});
    CHECK(values(run1("Max", {empty, i32({}, {0})})) == std::vector<double>{-128, -128});
    CHECK(values(run1("Min", {of(dtype::uint8, {0}, {}), i32({}, {0})})) == std::vector<double>{255});
    CHECK(values(run1("AddN", {of(dtype::uint8, {2}, {200, 1}), of(dtype::uint8, {2}, {100, 2})})) ==
          std::vector<double>{44, 3});
}

TEST_CASE("Softmax and LogSoftmax in float16 and bfloat16") {
    std::vector<double> xs = {1, 2, 3, 0.5, -1, 0};
    for (dtype t : half_types) {
        INFO(graft::dtype_name(t));
        auto x = of(t, {2, 3}, xs);
        auto xv = values(x);
        auto sm = run1("Softmax", {x});
        auto lsm = run1("LogSoftmax", {x});
        CHECK(sm.type() == t);
        CHECK(lsm.type() == t);
        for (int r = 0; r < 2; ++r) {
            double m = -1e300, s = 0;
            for (int c = 0; c < 3; ++c) m = std::max(m, xv[static_cast<std::size_t>(r * 3 + c)]);
            for (int c = 0; c < 3; ++c) s += std::exp(xv[static_cast<std::size_t>(r * 3 + c)] - m);
            for (int c = 0; c < 3; ++c) {
                const auto i = static_cast<std::size_t>(r * 3 + c);
                const double l = xv[i] - m - std::log(s);
                CHECK(values(sm)[i] == doctest::Approx(std::exp(l)).epsilon(2 * ulp(t)));
                CHECK(values(lsm)[i] == doctest::Approx(l).epsilon(2 * ulp(t)));
            }
        }
    }
    CHECK_THROWS_WITH_AS(run1("Softmax", {of(dtype::int32, {2}, {1, 2})}), doctest::Contains("int32"),
                         graft::error);
}

}  // namespace graft_test_dtypes
