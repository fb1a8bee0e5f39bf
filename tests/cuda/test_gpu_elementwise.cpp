// The elementwise GPU family (src/cuda/exec_elementwise.cpp): every op it registers, run on the
// CPU and on /device:GPU:0 and compared (op_case.hpp), with a few values checked by hand. Inputs
// stay away from each op's poles and domain edges (ramp ranges per op).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "graft/exec/kernel.hpp"
#include "graft/ops/broadcast.hpp"
#include "graft/ops/elementwise_names.hpp"
#include "op_case.hpp"

using graft::dtype;
using graft::shape;
using graft::tensor;

namespace gpu_elementwise_test {

using graft::test_cuda::check_cpu_vs_gpu;
using graft::test_cuda::op_case;
using graft::test_cuda::ramp;

op_case case_of(graft::graph g, graft::exec::session::feed_list feeds,
                std::vector<std::string> fetches) {
    op_case c;
    c.g = std::move(g);
    c.feeds = std::move(feeds);
    c.fetches = std::move(fetches);
    return c;
}

/// y = op(x) for x of shape `s` with values in [lo, hi).
std::vector<tensor> run_unary(const std::string& op, const shape& s, float lo, float hi,
                              graft::attr_list attrs = {}) {
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.placeholder("x", dtype::float32, s);
    auto y = b.op(op, {x}, std::move(attrs), "y");
    return check_cpu_vs_gpu(case_of(std::move(g), {{"x", ramp(s, lo, hi, 3)}}, {y.str()}));
}

/// z = op(x, y) for x, y of shapes sx, sy with values in [xlo, xhi) and [ylo, yhi).
std::vector<tensor> run_binary(const std::string& op, const shape& sx, const shape& sy, float xlo,
                               float xhi, float ylo, float yhi, graft::attr_list attrs = {}) {
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.placeholder("x", dtype::float32, sx);
    auto y = b.placeholder("y", dtype::float32, sy);
    auto z = b.op(op, {x, y}, std::move(attrs), "z");
    return check_cpu_vs_gpu(case_of(
        std::move(g), {{"x", ramp(sx, xlo, xhi, 5)}, {"y", ramp(sy, ylo, yhi, 7)}}, {z.str()}));
}

tensor bools(const shape& s, const std::vector<int>& pattern) {
    tensor t(dtype::bool_, s);
    bool* p = t.data<bool>();
    for (std::int64_t i = 0; i < t.num_elements(); ++i)
        p[i] = pattern[static_cast<std::size_t>(i) % pattern.size()] != 0;
    return t;
}


TEST_CASE("gpu elementwise: unary float ops match the CPU") {
    struct domain {
        const char* op;
        float lo, hi;
    };
    // Positive where the op needs it (Sqrt, Rsqrt, Log, Reciprocal), > -1 for Log1p.
    const std::vector<domain> ops = {
        {"Neg", -2, 2},     {"Abs", -2, 2},      {"Sign", -2, 2},         {"Square", -2, 2},
        {"Sqrt", 0.1f, 4},  {"Rsqrt", 0.1f, 4},  {"Reciprocal", 0.5f, 3}, {"Inv", -3, -0.5f},
        {"Exp", -3, 3},     {"Log", 0.1f, 5},    {"Log1p", -0.5f, 3},     {"Tanh", -3, 3},
        {"Sigmoid", -5, 5}, {"Relu", -2, 2},     {"Relu6", -3, 9},        {"Elu", -3, 2},
        {"Selu", -3, 2},    {"Softplus", -5, 5}, {"LeakyRelu", -2, 2},    {"Floor", -4, 4},
        {"Ceil", -4, 4},    {"Round", -4, 4},    {"Sin", -3, 3},          {"Cos", -3, 3},
        {"Erf", -2, 2},
    };
    for (const auto& d : ops) {
        INFO("op " << std::string(d.op));
        auto got = run_unary(d.op, shape{3, 4, 5}, d.lo, d.hi);
        REQUIRE(got.size() == 1);
        CHECK(got[0].type() == dtype::float32);
        CHECK(got[0].shape() == shape{3, 4, 5});
    }
    // Softplus beyond its thresholds (x itself / exp(x)) and every unary op the CPU binds for
    // float.
    run_unary("Softplus", shape{64}, -30, 30);
    for (auto name : graft::ops::unary_op_names()) {
        if (name == "LogicalNot") continue;
        bool listed = false;
        for (const auto& d : ops) listed = listed || name == d.op;
        CHECK_MESSAGE(listed, "unary op " << name << " is not tested");
    }
    // By hand: Relu and Neg.
    tensor x = tensor::from_vector<float>(shape{4}, {-1.5f, 0.f, 2.f, -0.25f});
    graft::graph g;
    graft::graph_builder b(g);
    auto p = b.placeholder("x", dtype::float32, shape{4});
    auto r = b.op("Relu", {p}, {}, "relu");
    auto n = b.op("Neg", {p}, {}, "neg");
    auto got = check_cpu_vs_gpu(case_of(std::move(g), {{"x", x}}, {r.str(), n.str()}));
    CHECK(got[0].data<float>()[0] == 0.f);
    CHECK(got[0].data<float>()[2] == 2.f);
    CHECK(got[1].data<float>()[0] == 1.5f);
    CHECK(got[1].data<float>()[3] == 0.25f);
}

TEST_CASE("gpu elementwise: LeakyRelu takes its alpha attr") {
    run_unary("LeakyRelu", shape{2, 7}, -2, 2);  // the default 0.2
    auto got = run_unary("LeakyRelu", shape{2, 7}, -2, 2, {{"alpha", 0.05f}});
    tensor x = ramp(shape{2, 7}, -2, 2, 3);
    for (std::int64_t i = 0; i < x.num_elements(); ++i) {
        float v = x.data<float>()[i];
        CHECK(got[0].data<float>()[i] == doctest::Approx(v > 0 ? v : 0.05f * v));
    }
}

TEST_CASE("gpu elementwise: binary broadcasting arithmetic matches the CPU") {
    const std::vector<std::pair<shape, shape>> shapes = {
        {shape{2, 3, 4}, shape{3, 1}},
        {shape{1}, shape{2, 3}},
        {shape{4, 1, 5}, shape{1, 3, 1}},
        {shape{5, 7}, shape{5, 7}},
        {shape{}, shape{2, 3}},
        {shape{2, 3}, shape{}},
        {shape{3, 1, 4, 1, 2}, shape{5, 1}},
        {shape{2, 1, 2, 1, 2, 1, 2, 1}, shape{2, 1, 2, 1, 2, 1, 2}},
    };
    struct domain {
        const char* op;
        float xlo, xhi, ylo, yhi;
    };
    // Divisors stay away from 0; Pow's base is positive.
    const std::vector<domain> ops = {
        {"Add", -2, 2, -2, 2},        {"AddV2", -2, 2, -2, 2},
        {"Sub", -2, 2, -2, 2},        {"Mul", -2, 2, -2, 2},
        {"Div", -2, 2, 0.5f, 2},      {"RealDiv", -2, 2, -2, -0.5f},
        {"FloorDiv", -5, 5, 0.5f, 2}, {"FloorMod", -5, 5, 0.5f, 2},
        {"Maximum", -2, 2, -2, 2},    {"Minimum", -2, 2, -2, 2},
        {"Pow", 0.5f, 2, -2, 2},      {"SquaredDifference", -2, 2, -2, 2},
    };
    for (const auto& d : ops) {
        for (const auto& [sx_b, sy_b] : shapes) {
            auto& sx = sx_b; auto& sy = sy_b;  // clang 14: lambdas cannot capture structured bindings
            INFO("op " << std::string(d.op) << " " << sx.str() << " x " << sy.str());
            auto got = run_binary(d.op, sx, sy, d.xlo, d.xhi, d.ylo, d.yhi);
            CHECK(got[0].shape() == graft::ops::broadcast_shape(d.op, sx, sy));
            CHECK(got[0].type() == dtype::float32);
        }
    }
    // Negative divisors: FloorDiv/FloorMod round toward -inf and take the divisor's sign.
    run_binary("FloorDiv", shape{4, 6}, shape{6}, -5, 5, -2, -0.5f);
    run_binary("FloorMod", shape{4, 6}, shape{6}, -5, 5, -2, -0.5f);
    // By hand: [2,3] + [3].
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.placeholder("x", dtype::float32, shape{2, 3});
    auto y = b.placeholder("y", dtype::float32, shape{3});
    auto z = b.op("AddV2", {x, y}, {}, "z");
    auto m = b.op("FloorMod", {x, y}, {}, "m");
    auto got = check_cpu_vs_gpu(
        case_of(std::move(g),
                {{"x", tensor::from_vector<float>(shape{2, 3}, {1, 2, 3, -4, 5, -6})},
                 {"y", tensor::from_vector<float>(shape{3}, {10, 20, -4})}},
                {z.str(), m.str()}));
    CHECK(got[0].data<float>()[0] == 11.f);
    CHECK(got[0].data<float>()[5] == -10.f);
    CHECK(got[1].data<float>()[3] == 6.f);   // -4 mod 10
    CHECK(got[1].data<float>()[2] == -1.f);  // 3 mod -4
}

TEST_CASE("gpu elementwise: comparisons give bool with broadcasting") {
    tensor x = ramp(shape{3, 4}, -1, 1, 11);
    tensor y = ramp(shape{4}, -1, 1, 13);
    tensor same = ramp(shape{3, 4}, -1, 1, 17);
    for (int i = 0; i < 12; i += 3) same.data<float>()[i] = x.data<float>()[i];  // some exact ties
    for (const char* op : {"Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"}) {
        INFO("op " << std::string(op));
        graft::graph g;
        graft::graph_builder b(g);
        auto px = b.placeholder("x", dtype::float32, shape{3, 4});
        auto py = b.placeholder("y", dtype::float32, shape{4});
        auto ps = b.placeholder("s", dtype::float32, shape{3, 4});
        auto bc = b.op(op, {px, py}, {}, "bc");
        auto eq = b.op(op, {px, ps}, {}, "eq");
        auto got = check_cpu_vs_gpu(
            case_of(std::move(g), {{"x", x}, {"y", y}, {"s", same}}, {bc.str(), eq.str()}));
        CHECK(got[0].type() == dtype::bool_);
        CHECK(got[0].shape() == shape{3, 4});
        const float a = x.data<float>()[0], c = same.data<float>()[0];
        const bool want = std::string(op) == "Equal" || std::string(op) == "LessEqual" ||
                          std::string(op) == "GreaterEqual";
        CHECK(a == c);
        CHECK(got[1].data<bool>()[0] == want);
    }
}

TEST_CASE("gpu elementwise: activation gradients match the CPU") {
    struct domain {
        const char* op;
        float xlo, xhi, ylo, yhi;
    };
    // (gradients, features/outputs) or (y, dy); y of Rsqrt/Sqrt/Reciprocal away from 0.
    const std::vector<domain> ops = {
        {"ReluGrad", -2, 2, -2, 2},           {"Relu6Grad", -2, 2, -2, 8},
        {"EluGrad", -2, 2, -0.95f, 2},        {"SeluGrad", -2, 2, -1.5f, 2},
        {"SoftplusGrad", -2, 2, -4, 4},       {"LeakyReluGrad", -2, 2, -2, 2},
        {"SigmoidGrad", 0.05f, 0.95f, -2, 2}, {"TanhGrad", -0.95f, 0.95f, -2, 2},
        {"RsqrtGrad", 0.2f, 3, -2, 2},        {"SqrtGrad", 0.2f, 3, -2, 2},
        {"ReciprocalGrad", -3, -0.2f, -2, 2}, {"InvGrad", 0.2f, 3, -2, 2},
    };
    for (const auto& d : ops) {
        INFO("op " << std::string(d.op));
        auto got = run_binary(d.op, shape{3, 4, 5}, shape{3, 4, 5}, d.xlo, d.xhi, d.ylo, d.yhi);
        CHECK(got[0].shape() == shape{3, 4, 5});
    }
    run_binary("LeakyReluGrad", shape{6}, shape{6}, -2, 2, -2, 2, {{"alpha", 0.01f}});
    // By hand: ReluGrad passes the gradient where the feature is positive.
    graft::graph g;
    graft::graph_builder b(g);
    auto dy = b.placeholder("dy", dtype::float32, shape{3});
    auto f = b.placeholder("f", dtype::float32, shape{3});
    auto z = b.op("ReluGrad", {dy, f}, {}, "z");
    auto got =
        check_cpu_vs_gpu(case_of(std::move(g),
                                 {{"dy", tensor::from_vector<float>(shape{3}, {1, 2, 3})},
                                  {"f", tensor::from_vector<float>(shape{3}, {-1, 0.5f, 2})}},
                                 {z.str()}));
    CHECK(got[0].data<float>()[0] == 0.f);
    CHECK(got[0].data<float>()[1] == 2.f);
    CHECK(got[0].data<float>()[2] == 3.f);
}

TEST_CASE("gpu elementwise: every elementwise op the CPU binds by name has a GPU kernel") {
#ifdef GRAFT_WITH_CUDA
    (void)graft::test_cuda::gpu_present();  // installs graft::cuda
    const auto& r = graft::exec::kernel_registry::global();
    for (auto name : graft::ops::unary_op_names()) {
        CHECK_MESSAGE(r.find_entry(graft::device_kind::cuda, name) != nullptr,
                      "no GPU kernel for " << name);
    }
    for (auto name : graft::ops::binary_op_names()) {
        CHECK_MESSAGE(r.find_entry(graft::device_kind::cuda, name) != nullptr,
                      "no GPU kernel for " << name);
    }
    for (const char* op : {"Cast", "ZerosLike", "OnesLike", "AddN", "Select", "SelectV2", "BiasAdd",
                           "BiasAddV1", "BiasAddGrad", "L2Loss", "LeakyRelu", "LeakyReluGrad"}) {
        CHECK_MESSAGE(r.find_entry(graft::device_kind::cuda, op) != nullptr,
                      "no GPU kernel for " << op);
    }
#else
    MESSAGE("built without graft::cuda: no GPU kernels to list");
#endif
}

TEST_CASE("gpu elementwise: shapes that do not fit fail naming the node, with the CPU's messages") {
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.placeholder("x", dtype::float32, shape{2, 3});
    auto y = b.placeholder("y", dtype::float32, shape{4});
    auto z = b.op("AddV2", {x, y}, {}, "bad_add");
    auto dy = b.placeholder("dy", dtype::float32, shape{3});
    auto rg = b.op("ReluGrad", {x, dy}, {}, "bad_grad");
    auto v = b.placeholder("v", dtype::float32, shape{2, 3, 4});
    auto bias = b.placeholder("bias", dtype::float32, shape{4});
    auto ba = b.op("BiasAdd", {v, bias}, {{"data_format", "NCHW"}}, "bad_bias");
    auto bg = b.op("BiasAddGrad", {bias}, {}, "bad_bias_grad");
    op_case bias_case =
        case_of(g, {{"v", ramp(shape{2, 3, 4})}, {"bias", ramp(shape{4})}}, {ba.str()});
    op_case bias_grad = case_of(g, {{"bias", ramp(shape{4})}}, {bg.str()});
    op_case add = case_of(g, {{"x", ramp(shape{2, 3})}, {"y", ramp(shape{4})}}, {z.str()});
    op_case grad = case_of(g, {{"x", ramp(shape{2, 3})}, {"dy", ramp(shape{3})}}, {rg.str()});
    const bool gpu = graft::test_cuda::gpu_present();
    for (const char* dev : {"", "/device:GPU:0"}) {
        INFO("device '" << std::string(dev) << "'");
        const bool require_gpu = gpu && *dev != '\0';
        CHECK_THROWS_WITH_AS(graft::test_cuda::run_on(add, dev, require_gpu),
                             doctest::Contains("cannot be broadcast"), graft::graph_error);
        CHECK_THROWS_WITH_AS(graft::test_cuda::run_on(add, dev, require_gpu),
                             doctest::Contains("bad_add"), graft::graph_error);
        CHECK_THROWS_WITH_AS(graft::test_cuda::run_on(grad, dev, require_gpu),
                             doctest::Contains("they must be equal"), graft::graph_error);
        CHECK_THROWS_WITH_AS(
            graft::test_cuda::run_on(bias_case, dev, require_gpu),
            doctest::Contains("must be a vector of the 3 channels of value [2,3,4] (dim 1, NCHW)"),
            graft::graph_error);
        CHECK_THROWS_WITH_AS(graft::test_cuda::run_on(bias_grad, dev, require_gpu),
                             doctest::Contains("value must have rank >= 2 but has shape [4]"),
                             graft::graph_error);
    }
}

TEST_CASE("gpu elementwise: LogicalNot, LogicalAnd and LogicalOr on bool masks") {
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.placeholder("x", dtype::float32, shape{3, 4});
    auto m = b.placeholder("m", dtype::bool_, shape{4});
    auto pos = b.op("Greater", {x, b.scalar(0.f, "zero")}, {}, "pos");
    auto n = b.op("LogicalNot", {pos}, {}, "not");
    auto a = b.op("LogicalAnd", {pos, m}, {}, "and");
    auto o = b.op("LogicalOr", {n, m}, {}, "or");
    tensor xv = ramp(shape{3, 4}, -1, 1, 19);
    auto got =
        check_cpu_vs_gpu(case_of(std::move(g), {{"x", xv}, {"m", bools(shape{4}, {1, 0, 1, 1})}},
                                 {n.str(), a.str(), o.str()}));
    for (int i = 0; i < 12; ++i) {
        const bool p = xv.data<float>()[i] > 0, mv = (i % 4) != 1;
        CHECK(got[0].data<bool>()[i] == !p);
        CHECK(got[1].data<bool>()[i] == (p && mv));
        CHECK(got[2].data<bool>()[i] == (!p || mv));
    }
}

TEST_CASE("gpu elementwise: Cast float32 to int32 and back, and among the other device dtypes") {
    tensor x = ramp(shape{4, 5}, -7, 7, 23);
    x.data<float>()[0] = 2.5f;
    x.data<float>()[1] = -2.5f;
    x.data<float>()[2] = 0.f;
    graft::graph g;
    graft::graph_builder b(g);
    auto px = b.placeholder("x", dtype::float32, shape{4, 5});
    std::vector<std::string> fetches;
    for (dtype t : {dtype::int32, dtype::int64, dtype::float64, dtype::bool_, dtype::float16,
                    dtype::bfloat16, dtype::uint8}) {
        const std::string name = graft::dtype_name(t);
        auto to = b.op("Cast", {px}, {{"DstT", t}}, "to_" + name);
        auto back = b.op("Cast", {to}, {{"DstT", dtype::float32}}, "back_" + name);
        fetches.push_back(to.str());
        fetches.push_back(back.str());
    }
    auto same = b.op("Cast", {px}, {{"DstT", dtype::float32}}, "same");
    auto h = b.op("Cast", {px}, {{"DstT", dtype::float16}}, "h");
    auto h2i = b.op("Cast", {h}, {{"DstT", dtype::int32}}, "h_to_int32");
    auto i2h = b.op("Cast", {b.op("Cast", {px}, {{"DstT", dtype::int64}}, "i64")},
                    {{"DstT", dtype::bfloat16}}, "i64_to_bf16");
    fetches.push_back(same.str());
    fetches.push_back(h2i.str());
    fetches.push_back(i2h.str());
    auto got = check_cpu_vs_gpu(case_of(std::move(g), {{"x", x}}, fetches));
    // float32 -> int32 truncates toward zero; back is exact.
    CHECK(got[0].type() == dtype::int32);
    CHECK(got[0].data<std::int32_t>()[0] == 2);
    CHECK(got[0].data<std::int32_t>()[1] == -2);
    CHECK(got[1].data<float>()[1] == -2.f);
    for (std::int64_t i = 0; i < x.num_elements(); ++i) {
        CHECK(got[0].data<std::int32_t>()[i] == static_cast<std::int32_t>(x.data<float>()[i]));
    }
    CHECK(got[6].type() == dtype::bool_);  // to bool: != 0
    CHECK(got[6].data<bool>()[0]);
    CHECK_FALSE(got[6].data<bool>()[2]);
    CHECK(got[12].type() == dtype::uint8);  // negative values saturate at 0
    CHECK(got[12].data<std::uint8_t>()[1] == 0);
    CHECK(got[14].type() == dtype::float32);
}

TEST_CASE("gpu elementwise: ZerosLike and OnesLike") {
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.placeholder("x", dtype::float32, shape{3, 5});
    auto z = b.op("ZerosLike", {x}, {}, "z");
    auto o = b.op("OnesLike", {x}, {}, "o");
    auto d = b.op("Cast", {x}, {{"DstT", dtype::float64}}, "d");
    auto od = b.op("OnesLike", {d}, {}, "od");
    auto zd = b.op("ZerosLike", {d}, {}, "zd");
    auto h = b.op("Cast", {x}, {{"DstT", dtype::float16}}, "h");
    auto zh = b.op("ZerosLike", {h}, {}, "zh");
    auto bf = b.op("Cast", {x}, {{"DstT", dtype::bfloat16}}, "bf");
    auto zbf = b.op("ZerosLike", {bf}, {}, "zbf");
    auto got =
        check_cpu_vs_gpu(case_of(std::move(g), {{"x", ramp(shape{3, 5})}},
                                 {z.str(), o.str(), od.str(), zd.str(), zh.str(), zbf.str()}));
    for (int i = 0; i < 15; ++i) {
        CHECK(got[0].data<float>()[i] == 0.f);
        CHECK(got[1].data<float>()[i] == 1.f);
        CHECK(got[2].data<double>()[i] == 1.0);
        CHECK(got[3].data<double>()[i] == 0.0);
        CHECK(static_cast<float>(got[4].data<graft::half>()[i]) == 0.f);
        CHECK(static_cast<float>(got[5].data<graft::bfloat16>()[i]) == 0.f);
    }
}

TEST_CASE("gpu elementwise: AddN of 3 inputs, of 1, and of 11 (more than one launch batch)") {
    graft::graph g;
    graft::graph_builder b(g);
    std::vector<graft::endpoint> in;
    graft::exec::session::feed_list feeds;
    for (int k = 0; k < 11; ++k) {
        const std::string name = "x" + std::to_string(k);
        in.push_back(b.placeholder(name, dtype::float32, shape{4, 6}));
        feeds.emplace_back(name, ramp(shape{4, 6}, -1, 1, static_cast<std::uint32_t>(30 + k)));
    }
    auto s3 = b.op("AddN", {in[0], in[1], in[2]}, {}, "sum3");
    auto s1 = b.op("AddN", {in[3]}, {}, "sum1");
    auto s11 = b.op("AddN", in, {}, "sum11");
    auto got = check_cpu_vs_gpu(case_of(std::move(g), feeds, {s3.str(), s1.str(), s11.str()}));
    for (int i = 0; i < 24; ++i) {
        const float want = (feeds[0].second.data<float>()[i] + feeds[1].second.data<float>()[i]) +
                           feeds[2].second.data<float>()[i];
        CHECK(got[0].data<float>()[i] == doctest::Approx(want));
        CHECK(got[1].data<float>()[i] == feeds[3].second.data<float>()[i]);
    }
}

TEST_CASE(
    "gpu elementwise: Select (TF1) with scalar, row and full conditions; SelectV2 broadcasting") {
    graft::graph g;
    graft::graph_builder b(g);
    auto t = b.placeholder("t", dtype::float32, shape{4, 3});
    auto e = b.placeholder("e", dtype::float32, shape{4, 3});
    auto full = b.op("Less", {t, e}, {}, "full_cond");  // a condition made on the device
    auto rows = b.placeholder("rows", dtype::bool_, shape{4});
    auto scalar = b.placeholder("scalar", dtype::bool_, shape{});
    auto s_full = b.op("Select", {full, t, e}, {}, "select_full");
    auto s_rows = b.op("Select", {rows, t, e}, {}, "select_rows");
    auto s_scalar = b.op("Select", {scalar, t, e}, {}, "select_scalar");
    // SelectV2: cond [3], t [4,1], e [] -> [4,3]; cond [4,1,1], t [2,1], e [1,2] -> [4,2,2].
    auto c3 = b.placeholder("c3", dtype::bool_, shape{3});
    auto t41 = b.placeholder("t41", dtype::float32, shape{4, 1});
    auto e0 = b.placeholder("e0", dtype::float32, shape{});
    auto v2a = b.op("SelectV2", {c3, t41, e0}, {}, "v2a");
    auto c411 = b.placeholder("c411", dtype::bool_, shape{4, 1, 1});
    auto t21 = b.placeholder("t21", dtype::float32, shape{2, 1});
    auto e12 = b.placeholder("e12", dtype::float32, shape{1, 2});
    auto v2b = b.op("SelectV2", {c411, t21, e12}, {}, "v2b");
    // A float64 select (moved as 8-byte elements).
    auto t64 = b.op("Cast", {t}, {{"DstT", dtype::float64}}, "t64");
    auto e64 = b.op("Cast", {e}, {{"DstT", dtype::float64}}, "e64");
    auto s64 = b.op("SelectV2", {full, t64, e64}, {}, "select64");
    tensor tv = ramp(shape{4, 3}, -1, 1, 41), ev = ramp(shape{4, 3}, -1, 1, 43),
           t41v = ramp(shape{4, 1}, -1, 1, 47);
    auto got = check_cpu_vs_gpu(
        case_of(std::move(g),
                {{"t", tv},
                 {"e", ev},
                 {"rows", bools(shape{4}, {1, 0, 0, 1})},
                 {"scalar", bools(shape{}, {0})},
                 {"c3", bools(shape{3}, {1, 0, 1})},
                 {"t41", t41v},
                 {"e0", tensor::scalar_of(5.f)},
                 {"c411", bools(shape{4, 1, 1}, {0, 1, 1, 0})},
                 {"t21", ramp(shape{2, 1}, -1, 1, 53)},
                 {"e12", ramp(shape{1, 2}, -1, 1, 59)}},
                {s_full.str(), s_rows.str(), s_scalar.str(), v2a.str(), v2b.str(), s64.str()}));
    for (int i = 0; i < 12; ++i) {
        const float a = tv.data<float>()[i], c = ev.data<float>()[i];
        CHECK(got[0].data<float>()[i] == (a < c ? a : c));
        const int row = i / 3;
        CHECK(got[1].data<float>()[i] == ((row == 0 || row == 3) ? a : c));
        CHECK(got[2].data<float>()[i] == c);
        CHECK(got[3].data<float>()[i] == ((i % 3) == 1 ? 5.f : t41v.data<float>()[row]));
    }
    CHECK(got[3].shape() == shape{4, 3});
    CHECK(got[4].shape() == shape{4, 2, 2});
    CHECK(got[5].type() == dtype::float64);
}

TEST_CASE("gpu elementwise: BiasAdd and BiasAddV1 in NHWC and NCHW") {
    for (const char* fmt : {"NHWC", "NCHW"}) {
        const bool nhwc = std::string(fmt) == "NHWC";
        const shape xs = nhwc ? shape{2, 3, 4, 5} : shape{2, 5, 3, 4};
        graft::graph g;
        graft::graph_builder b(g);
        auto x = b.placeholder("x", dtype::float32, xs);
        auto bias = b.placeholder("bias", dtype::float32, shape{5});
        auto y = b.op("BiasAdd", {x, bias}, {{"data_format", fmt}}, "y");
        auto x2 = b.placeholder("x2", dtype::float32,
                                shape{6, 5});  // rank 2: channels are dim 1 either way
        auto y2 = b.op("BiasAdd", {x2, bias}, {{"data_format", fmt}}, "y2");
        tensor xv = ramp(xs, -1, 1, 61), bv = ramp(shape{5}, -1, 1, 67);
        INFO("data_format " << std::string(fmt));
        auto got = check_cpu_vs_gpu(case_of(std::move(g),
                                            {{"x", xv}, {"bias", bv}, {"x2", ramp(shape{6, 5})}},
                                            {y.str(), y2.str()}));
        // Element [1, 2, 3, c] (NHWC) / [1, c, 2, 3] (NCHW) gets bias[c].
        for (std::int64_t c = 0; c < 5; ++c) {
            const std::int64_t i =
                nhwc ? ((1 * 3 + 2) * 4 + 3) * 5 + c : ((1 * 5 + c) * 3 + 2) * 4 + 3;
            CHECK(got[0].data<float>()[i] == xv.data<float>()[i] + bv.data<float>()[c]);
        }
    }
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.placeholder("x", dtype::float32, shape{3, 2, 4});
    auto bias = b.placeholder("bias", dtype::float32, shape{4});
    auto y = b.op("BiasAddV1", {x, bias}, {}, "y");
    check_cpu_vs_gpu(case_of(std::move(g),
                             {{"x", ramp(shape{3, 2, 4})}, {"bias", ramp(shape{4}, -1, 1, 71)}},
                             {y.str()}));
}

TEST_CASE("gpu elementwise: BiasAddGrad in NHWC and NCHW sums all but the channel axis") {
    for (const char* fmt : {"NHWC", "NCHW"}) {
        const bool nhwc = std::string(fmt) == "NHWC";
        const shape ys = nhwc ? shape{3, 4, 5, 6} : shape{3, 6, 4, 5};
        graft::graph g;
        graft::graph_builder b(g);
        auto dy = b.placeholder("dy", dtype::float32, ys);
        auto db = b.op("BiasAddGrad", {dy}, {{"data_format", fmt}}, "db");
        auto dy2 = b.placeholder("dy2", dtype::float32, shape{7, 6});
        auto db2 = b.op("BiasAddGrad", {dy2}, {{"data_format", fmt}}, "db2");
        // Positive values: the sums do not cancel, so float rounding stays far below the tolerance.
        tensor v = ramp(ys, 0.5f, 1.5f, 73);
        INFO("data_format " << std::string(fmt));
        auto got = check_cpu_vs_gpu(case_of(std::move(g),
                                            {{"dy", v}, {"dy2", ramp(shape{7, 6}, 0.5f, 1.5f, 79)}},
                                            {db.str(), db2.str()}));
        REQUIRE(got[0].shape() == shape{6});
        CHECK(got[1].shape() == shape{6});
        for (std::int64_t c = 0; c < 6; ++c) {
            double want = 0;
            for (std::int64_t i = 0; i < v.num_elements(); ++i) {
                const std::int64_t ch = nhwc ? i % 6 : (i / 20) % 6;
                if (ch == c) want += v.data<float>()[i];
            }
            CHECK(got[0].data<float>()[c] == doctest::Approx(want).epsilon(1e-5));
        }
    }
}

TEST_CASE("gpu elementwise: L2Loss is sum(x^2)/2") {
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.placeholder("x", dtype::float32, shape{37, 29});
    auto big = b.placeholder("big", dtype::float32, shape{100000});
    auto l = b.op("L2Loss", {x}, {}, "l");
    auto lb = b.op("L2Loss", {big}, {}, "lb");
    tensor xv = tensor::from_vector<float>(shape{37, 29}, std::vector<float>(37 * 29, 0.5f));
    auto got = check_cpu_vs_gpu(case_of(
        std::move(g), {{"x", xv}, {"big", ramp(shape{100000}, -1, 1, 83)}}, {l.str(), lb.str()}));
    CHECK(got[0].shape() == shape{});
    CHECK(got[0].data<float>()[0] == doctest::Approx(37 * 29 * 0.25 / 2));
}

}  // namespace gpu_elementwise_test
