// Binary arithmetic with TF's integer and negative-number semantics, comparisons, logical ops,
// AddN, BiasAdd/BiasAddGrad, Select/SelectV2; every binary op by name over broadcasting shapes.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string_view>

#include "array_testing.hpp"
#include "graft/core/threads.hpp"
#include "graft/ops/elementwise.hpp"
#include "graft/ops/unary.hpp"

using namespace graft;
using namespace graft::test;

TEST_CASE("Div truncates integers, RealDiv divides floats") {
    check_values(ops::div(i32({4}, {7, -7, 7, -7}), i32({4}, {2, 2, -2, -2})), dtype::int32,
                 shape{4}, {3, -3, -3, 3});
    check_values(ops::div(i64({2, 2}, {9, -9, 1, 0}), i64({}, {4})), dtype::int64, shape{2, 2},
                 {2, -2, 0, 0});
    check_values(ops::div(f32({3}, {1, -3, 5}), f32({3}, {4, 2, 0})), dtype::float32, shape{3},
                 {0.25, -1.5, std::numeric_limits<double>::infinity()});
    check_values(ops::real_div(f64({2}, {1, 2}), f64({}, {3})), dtype::float64, shape{2},
                 {1.0 / 3, 2.0 / 3}, 1e-15);
    GRAFT_CHECK_THROWS_MSG(ops::div(i32({3}, {1, 2, 3}), i32({3}, {1, 0, 1})),
                           invalid_argument_error,
                           "Div: integer division by zero (y is 0 at flat index 1");
    GRAFT_CHECK_THROWS_MSG(ops::real_div(i32({1}, {1}), i32({1}, {1})), invalid_argument_error,
                           "RealDiv");
    const double lo32 = std::numeric_limits<std::int32_t>::lowest();
    check_values(ops::div(i32({1}, {lo32}), i32({1}, {-1})), dtype::int32, shape{1},
                 {lo32});  // wraps, no trap
}

// tensorflow/python/ops/math_ops_test.py (DivAndModTest): nums = arange(-10, 10) as [20,1] against
// divs = arange(-3, 4, 2) as [1,4] for integers, arange(-10, 10, .25) as [80,1] against
// arange(-3, 0, .25) as [1,12] for floats, compared with NumPy's // and % (floor semantics).
TEST_CASE("FloorDiv and FloorMod follow Python's floor semantics for negatives") {
    std::vector<double> nums, divs;
    for (int i = -10; i < 10; ++i) nums.push_back(i);
    for (int d = -3; d < 4; d += 2) divs.push_back(d);
    auto fdiv = [](double x, double y) { return std::floor(x / y); };
    auto fmod_ = [](double x, double y) { return x - std::floor(x / y) * y; };
    for (dtype t : {dtype::int32, dtype::int64}) {
        tensor x = make(t, {20, 1}, nums), y = make(t, {1, 4}, divs);
        check_values(ops::floor_div(x, y), t, shape{20, 4},
                     ref_broadcast(x.shape(), nums, y.shape(), divs, fdiv));
        check_values(ops::floor_mod(x, y), t, shape{20, 4},
                     ref_broadcast(x.shape(), nums, y.shape(), divs, fmod_));
        check_values(ops::binary("FloorMod", x, y), t, shape{20, 4},
                     ref_broadcast(x.shape(), nums, y.shape(), divs, fmod_));
        GRAFT_CHECK_THROWS_MSG(ops::floor_mod(x, make(t, {}, {0})), invalid_argument_error,
                               "FloorMod: integer division by zero");
        GRAFT_CHECK_THROWS_MSG(ops::floor_div(x, make(t, {}, {0})), invalid_argument_error,
                               "FloorDiv: integer division by zero");
    }
    // INT_MIN // -1 overflows to INT_MIN and INT_MIN % -1 is 0 (as the TF test's numpySafe*
    // helpers).
    const double lo = std::numeric_limits<std::int32_t>::lowest();
    check_values(ops::floor_div(i32({2}, {lo, 7}), i32({2}, {-1, -1})), dtype::int32, shape{2},
                 {lo, -7});
    check_values(ops::floor_mod(i32({2}, {lo, 7}), i32({2}, {-1, -1})), dtype::int32, shape{2},
                 {0, 0});

    std::vector<double> fnums, fdivs;
    for (int i = 0; i < 80; ++i) fnums.push_back(-10 + 0.25 * i);
    for (int i = 0; i < 12; ++i) fdivs.push_back(-3 + 0.25 * i);
    for (dtype t : {dtype::float32, dtype::float64}) {
        tensor x = make(t, {80, 1}, fnums), y = make(t, {1, 12}, fdivs);
        check_values(ops::floor_mod(x, y), t, shape{80, 12},
                     ref_broadcast(x.shape(), fnums, y.shape(), fdivs, fmod_));
        check_values(ops::floor_div(x, y), t, shape{80, 12},
                     ref_broadcast(x.shape(), fnums, y.shape(), fdivs, fdiv));
    }
    // Mixed signs: the remainder takes the divisor's sign.
    check_values(ops::floor_mod(f32({4}, {7, -7, 7, -7}), f32({4}, {3, 3, -3, -3})), dtype::float32,
                 shape{4}, {1, 2, -2, -1});
}

TEST_CASE("Pow, Maximum/Minimum with NaN, SquaredDifference") {
    check_values(ops::pow(f32({3}, {2, 9, 10}), f32({3}, {3, 0.5, -1})), dtype::float32, shape{3},
                 {8, 3, 0.1}, 1e-6);
    check_values(ops::pow(i32({4}, {2, -3, 0, 5}), i32({4}, {10, 3, 0, 1})), dtype::int32, shape{4},
                 {1024, -27, 1, 5});
    check_values(ops::pow(i64({2}, {3, 2}), i64({}, {39})), dtype::int64, shape{2},
                 {4052555153018976267.0, 549755813888.0});
    GRAFT_CHECK_THROWS_MSG(ops::pow(i32({1}, {2}), i32({1}, {-1})), invalid_argument_error,
                           "Pow: integers to negative integer powers are not allowed");
    const double nan = std::nan("");
    check_values(ops::maximum(f64({3}, {nan, 1, 2}), f64({3}, {0, nan, 1})), dtype::float64,
                 shape{3}, {nan, nan, 2});
    check_values(ops::minimum(f32({3}, {nan, 1, 2}), f32({}, {1.5})), dtype::float32, shape{3},
                 {nan, 1, 1.5});
    check_values(ops::minimum(i64({3}, {-5, 1, 9}), i64({1}, {0})), dtype::int64, shape{3},
                 {-5, 0, 0});
    check_values(ops::squared_difference(i32({2}, {3, -4}), i32({2}, {5, 1})), dtype::int32,
                 shape{2}, {4, 25});
}

TEST_CASE("comparisons give bool and broadcast; logical ops take bool") {
    const shape sa{2, 1, 3}, sb{4, 1};
    auto va = noise(6, -3, 3, 31), vb = noise(4, -3, 3, 32);
    for (auto& v : va) v = std::round(v);
    for (auto& v : vb) v = std::round(v);
    struct cmp {
        const char* name;
        bool (*ref)(double, double);
    };
    const cmp cmps[] = {{"Equal", [](double a, double b) { return a == b; }},
                        {"NotEqual", [](double a, double b) { return a != b; }},
                        {"Less", [](double a, double b) { return a < b; }},
                        {"LessEqual", [](double a, double b) { return a <= b; }},
                        {"Greater", [](double a, double b) { return a > b; }},
                        {"GreaterEqual", [](double a, double b) { return a >= b; }}};
    for (dtype t : {dtype::float32, dtype::float64, dtype::int32, dtype::int64}) {
        for (const auto& c : cmps) {
            CAPTURE(c.name);
            shape os;
            auto want = ref_broadcast(
                sa, va, sb, vb, [&](double a, double b) { return c.ref(a, b) ? 1.0 : 0.0; }, &os);
            check_values(ops::binary(c.name, make(t, sa, va), make(t, sb, vb)), dtype::bool_, os,
                         want);
        }
    }
    check_values(ops::less(f32({3}, {1, 2, 3}), f32({}, {2})), dtype::bool_, shape{3}, {1, 0, 0});
    check_values(ops::equal_to(bools({3}, {1, 0, 1}), bools({}, {1})), dtype::bool_, shape{3},
                 {1, 0, 1});
    tensor p = bools({2, 2}, {1, 1, 0, 0}), q = bools({2}, {1, 0});
    check_values(ops::logical_and(p, q), dtype::bool_, shape{2, 2}, {1, 0, 0, 0});
    check_values(ops::logical_or(p, q), dtype::bool_, shape{2, 2}, {1, 1, 1, 0});
    GRAFT_CHECK_THROWS_MSG(ops::logical_and(p, f32({2}, {1, 0})), invalid_argument_error,
                           "LogicalAnd");
    GRAFT_CHECK_THROWS_MSG(ops::greater(bools({1}, {1}), bools({1}, {0})), invalid_argument_error,
                           "Greater: x has dtype bool");
}

TEST_CASE("AddN sums same-shaped tensors") {
    tensor a = iota(dtype::float32, {3, 4}), b = iota(dtype::float32, {3, 4}, 1, 2),
           c = iota(dtype::float32, {3, 4}, -5);
    std::vector<double> want;
    for (int i = 0; i < 12; ++i) want.push_back(i + (1 + 2 * i) + (i - 5));
    check_values(ops::add_n({a, b, c}), dtype::float32, shape{3, 4}, want);
    check_values(ops::add_n({a}), a);
    check_values(ops::add_n({i64({2}, {1, 2}), i64({2}, {3, 4})}), dtype::int64, shape{2}, {4, 6});
    tensor big = f64({70, 1000}, noise(70000, -1, 1, 41));
    auto bv = values(big);
    for (auto& v : bv) v *= 4;
    check_values(ops::add_n({big, big, big, big}), dtype::float64, big.shape(), bv, 1e-15);
    GRAFT_CHECK_THROWS_MSG(ops::add_n({a, iota(dtype::float32, {4, 3})}), shape_error,
                           "AddN: input 1 has shape [4,3] but input 0 has [3,4]");
    GRAFT_CHECK_THROWS_MSG(ops::add_n({}), invalid_argument_error,
                           "AddN: needs at least one input");
    GRAFT_CHECK_THROWS_MSG(ops::add_n({a, iota(dtype::float64, {3, 4})}), invalid_argument_error,
                           "AddN: input 1 is float64");
}

TEST_CASE("BiasAdd in NHWC and NCHW, and BiasAddGrad") {
    tensor x = iota(dtype::float32, {2, 3, 2, 4}, -10);
    tensor b = f32({4}, {100, 200, 300, 400});
    auto xv = values(x);
    std::vector<double> nhwc(xv.size()), nchw_want;
    for (std::size_t i = 0; i < xv.size(); ++i)
        nhwc[i] = xv[i] + 100.0 * static_cast<double>(i % 4 + 1);
    check_values(ops::bias_add(x, b), dtype::float32, x.shape(), nhwc);
    // NCHW: channel is dim 1 of [2, 3, 2, 4]; a 3-entry bias.
    tensor bc = f32({3}, {1, 2, 3});
    for (std::size_t i = 0; i < xv.size(); ++i)
        nchw_want.push_back(xv[i] + static_cast<double>((i / 8) % 3 + 1));
    check_values(ops::bias_add(x, bc, "NCHW"), dtype::float32, x.shape(), nchw_want);
    // Gradients: sums over all but the channel.
    std::vector<double> g_nhwc(4, 0), g_nchw(3, 0);
    for (std::size_t i = 0; i < xv.size(); ++i) {
        g_nhwc[i % 4] += xv[i];
        g_nchw[(i / 8) % 3] += xv[i];
    }
    check_values(ops::bias_add_grad(x), dtype::float32, shape{4}, g_nhwc);
    check_values(ops::bias_add_grad(x, "NCHW"), dtype::float32, shape{3}, g_nchw);
    check_values(ops::bias_add(f64({2, 2}, {1, 2, 3, 4}), f64({2}, {10, 20}), "NCHW"),
                 dtype::float64, shape{2, 2}, {11, 22, 13, 24});
    GRAFT_CHECK_THROWS_MSG(
        ops::bias_add(x, f32({5}, {1, 2, 3, 4, 5})), shape_error,
        "BiasAdd: bias [5] must be a vector of the 4 channels of value [2,3,2,4] (dim 3, NHWC)");
    GRAFT_CHECK_THROWS_MSG(ops::bias_add(f32({3}, {1, 2, 3}), f32({3}, {1, 2, 3})), shape_error,
                           "BiasAdd: value must have rank >= 2");
    GRAFT_CHECK_THROWS_MSG(ops::bias_add(x, b, "NHCW"), invalid_argument_error,
                           "BiasAdd: data_format must be NHWC or NCHW");
    GRAFT_CHECK_THROWS_MSG(ops::bias_add_grad(bools({2, 2}, {1, 0, 1, 0})), invalid_argument_error,
                           "BiasAddGrad");
}

TEST_CASE("BiasAdd over blocks of rows: few and many channels, a partial last block, in place, threads") {
    // against a float64 loop; [7,9,11,6] has 693 rows of 6: blocks of 43 rows and a last block of 5
    const int threads_before = graft::num_threads();
    for (int threads : {1, 2}) {
        graft::set_num_threads(threads);
        for (const auto& [dims, fmt_b] : std::vector<std::pair<std::vector<std::int64_t>, const char*>>{
                 {{7, 9, 11, 6}, "NHWC"}, {{3, 5, 300}, "NHWC"}, {{1, 1}, "NHWC"}, {{2, 6, 5, 7}, "NCHW"},
                 {{4, 3}, "NCHW"}, {{64, 33, 3}, "NHWC"}}) {
            auto& fmt = fmt_b;  // clang 14: lambdas cannot capture structured bindings
            CAPTURE(fmt);
            const shape s(dims);
            const int cd = std::string_view(fmt) == "NHWC" ? static_cast<int>(dims.size()) - 1 : 1;
            const std::int64_t c = dims[static_cast<std::size_t>(cd)];
            std::int64_t inner = 1;
            for (std::size_t i = static_cast<std::size_t>(cd) + 1; i < dims.size(); ++i) inner *= dims[i];
            for (dtype t : {dtype::float32, dtype::float64, dtype::int32, dtype::int64}) {
                CAPTURE(dtype_name(t));
                tensor x = iota(t, s, -50);
                tensor b = iota(t, shape{c}, 1000);
                auto xv = values(x);
                std::vector<double> want(xv.size());
                for (std::size_t i = 0; i < xv.size(); ++i) {
                    want[i] = xv[i] + 1000.0 + static_cast<double>((static_cast<std::int64_t>(i) / inner) % c);
                }
                check_values(ops::bias_add(x, b, fmt), t, s, want);
                tensor y = x.clone();
                tensor r = ops::bias_add(y, b, fmt, &y);  // in place
                CHECK(r.raw_data() == y.raw_data());
                check_values(y, t, s, want);
            }
        }
    }
    graft::set_num_threads(threads_before);
    GRAFT_CHECK_THROWS_MSG(ops::bias_add(iota(dtype::float32, {2, 3}), iota(dtype::float64, {3})),
                           invalid_argument_error, "BiasAdd: value is float32");
}

TEST_CASE("bias_activation_inplace: bias and Relu/Relu6/LeakyRelu in one pass, as BiasAdd then the op") {
    // channel counts below 16 (a repeating pattern of lcm(C, lanes) floats), odd ones, wide rows (row
    // by row with a masked or scalar tail); NaN, +-inf and sums on both sides of 0 and 6; every kernel family the CPU
    // runs, 1 and 2 threads (64K+ floats split)
    const int threads_before = graft::num_threads();
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    for (ops::gemm::kernel_isa isa : ops::gemm::available_kernels()) {
        ops::gemm::limit_kernel(isa);
        for (int threads : {1, 2}) {
            graft::set_num_threads(threads);
            for (const auto& dims : std::vector<std::vector<std::int64_t>>{
                     {1, 28, 28, 6}, {3, 10}, {5, 7, 16}, {128, 512}, {2, 120}, {7, 84}, {1, 65}, {9, 1}, {300, 250}}) {
                const shape s(dims);
                const std::int64_t C = dims.back();
                std::vector<float> xv(static_cast<std::size_t>(s.num_elements())), bv(static_cast<std::size_t>(C));
                for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(8.0 * std::sin(0.7 * i + 0.1));
                for (std::size_t c = 0; c < bv.size(); ++c) bv[c] = static_cast<float>(std::cos(1.3 * c));
                if (xv.size() > 8) {
                    xv[1] = nan;
                    xv[2] = inf;
                    xv[3] = -inf;
                    xv[xv.size() - 1] = -nan;
                }
                const tensor x = tensor::from_vector<float>(s, xv), b = tensor::from_vector<float>(shape{C}, bv);
                const tensor sum = ops::bias_add(x, b);
                const std::pair<ops::bias_activation, tensor> cases[] = {
                    {ops::bias_activation::none, sum},
                    {ops::bias_activation::relu, ops::relu(sum)},
                    {ops::bias_activation::relu6, ops::relu6(sum)},
                    {ops::bias_activation::leaky_relu, ops::leaky_relu(sum, 0.3f)}};
                for (const auto& [act_b, want] : cases) {
                    auto& act = act_b;  // clang 14: lambdas cannot capture structured bindings
                    INFO("shape " << s.str() << " act " << static_cast<int>(act) << " threads " << threads
                                  << " kernel " << static_cast<int>(isa));
                    tensor y = x.clone();
                    ops::bias_activation_inplace(y, b, act, 0.3f);
                    CHECK(equal(y, want));  // values, NaN where NaN (a -0 may come out +0)
                }
            }
        }
    }
    ops::gemm::limit_kernel(ops::gemm::kernel_isa::avx512);
    graft::set_num_threads(threads_before);
    tensor y = iota(dtype::float32, {2, 3});
    GRAFT_CHECK_THROWS_MSG(ops::bias_activation_inplace(y, f32({2}, {1, 2}), ops::bias_activation::relu), shape_error,
                           "BiasAdd: bias [2] must be a vector of the last dim of value [2,3]");
    tensor yd = iota(dtype::float64, {2, 3});
    GRAFT_CHECK_THROWS_MSG(ops::bias_activation_inplace(yd, f64({3}, {1, 2, 3}), ops::bias_activation::relu),
                           invalid_argument_error, "the fused bias and activation take float32");
}

// tensorflow/python/kernel_tests/array_ops/where_op_test.py: _testThreeArgument
// (x = [[-2, 3, -1], [1, -3, -3]], where(x > 0, x * x, -x)), testBatchSelect (a condition vector
// choosing rows), testV2PredBroadcasting / testV2ScalarBroadcasting.
TEST_CASE("Select (TF1) and SelectV2 (broadcasting)") {
    tensor x = i32({2, 3}, {-2, 3, -1, 1, -3, -3});
    tensor c = ops::greater(x, i32({}, {0}));
    tensor sq = ops::mul(x, x), ng = ops::neg(x);
    check_values(ops::select(c, sq, ng), dtype::int32, shape{2, 3}, {2, 9, 1, 1, 3, 3});
    check_values(ops::select_v2(c, sq, ng), dtype::int32, shape{2, 3}, {2, 9, 1, 1, 3, 3});
    // TF1 row selection with a vector condition.
    check_values(ops::select(bools({2}, {0, 1}), sq, ng), dtype::int32, shape{2, 3},
                 {2, -3, 1, 1, 9, 9});
    check_values(ops::select(bools({}, {1}), sq, ng), sq);
    // SelectV2 broadcasting: pred [3,1] against [3,4] values; scalar pred; strings.
    tensor a = iota(dtype::float64, {3, 4}), b = iota(dtype::float64, {3, 4}, 100);
    check_values(ops::select_v2(bools({3, 1}, {1, 0, 0}), a, b), dtype::float64, shape{3, 4},
                 {0, 1, 2, 3, 104, 105, 106, 107, 108, 109, 110, 111});
    check_values(ops::select_v2(bools({}, {0}), a, b), b);
    check_values(ops::select_v2(bools({2, 1, 1}, {1, 0}), f32({}, {1}), f32({1, 3}, {7, 8, 9})),
                 dtype::float32, shape{2, 1, 3}, {1, 1, 1, 7, 8, 9});
    auto s = ops::select_v2(bools({2}, {1, 0}), tensor::from_vector<std::string>({2}, {"a", "b"}),
                            tensor::scalar_of("z"));
    CHECK(s.data<std::string>()[0] == "a");
    CHECK(s.data<std::string>()[1] == "z");
    GRAFT_CHECK_THROWS_MSG(ops::select(bools({3}, {1, 0, 1}), sq, ng), shape_error,
                           "Select: condition [3] must have one entry per row of t [2,3]");
    GRAFT_CHECK_THROWS_MSG(ops::select(c, sq, i32({3}, {1, 2, 3})), shape_error,
                           "Select: t has shape [2,3] but e has [3]");
    GRAFT_CHECK_THROWS_MSG(ops::select_v2(x, sq, ng), invalid_argument_error,
                           "SelectV2: condition must be bool");
    GRAFT_CHECK_THROWS_MSG(ops::select_v2(bools({4}, {1, 0, 1, 0}), sq, ng), shape_error,
                           "SelectV2: shapes [4] and [2,3] and [2,3]");
    GRAFT_CHECK_THROWS_MSG(ops::select_v2(c, sq, f32({}, {1})), invalid_argument_error,
                           "SelectV2: t is int32[2,3] but e is float32[]");
}

// Every binary op by its TF name over broadcasting shape pairs and the dtypes it supports, against
// NumPy-style broadcasting in float64 (ref_broadcast). TF's cwise_ops_binary_test.py compares with
// NumPy the same way; it publishes no figures for these.
TEST_CASE("every binary op by TF name broadcasts like NumPy against a float64 reference") {
    const std::pair<shape, shape> pairs[] = {
        {{2, 3}, {2, 3}}, {{}, {2, 3}},     {{2, 1, 3}, {4, 1}},      {{3}, {2, 3}},
        {{2, 3}, {2, 1}}, {{2, 0, 3}, {3}}, {{2, 3, 4, 5}, {3, 1, 5}}, {{1, 5}, {4, 1}},
    };
    struct opdef {
        const char* name;
        double (*ref)(double, double);
        bool ints, floats, bool_out;
        double alo, ahi, blo, bhi;  // value ranges (a zero b becomes 1 where the op divides)
        bool round_values;          // integral values (comparisons: so that ties occur)
    };
    const opdef defs[] = {
        {"Add", [](double a, double b) { return a + b; }, true, true, false, -20, 20, -20, 20, false},
        {"AddV2", [](double a, double b) { return a + b; }, true, true, false, -20, 20, -20, 20, false},
        {"Sub", [](double a, double b) { return a - b; }, true, true, false, -20, 20, -20, 20, false},
        {"Mul", [](double a, double b) { return a * b; }, true, true, false, -20, 20, -20, 20, false},
        {"Div", [](double a, double b) { return a / b; }, false, true, false, -20, 20, -9, 9, false},
        {"Div", [](double a, double b) { return std::trunc(a / b); }, true, false, false, -20, 20, -9, 9, false},
        {"RealDiv", [](double a, double b) { return a / b; }, false, true, false, -20, 20, -9, 9, false},
        {"FloorDiv", [](double a, double b) { return std::floor(a / b); }, true, true, false, -20, 20, -9, 9, false},
        {"FloorMod",
         [](double a, double b) {
             const double m = std::fmod(a, b);  // TF's functor: fmod, moved to the divisor's sign
             return m != 0 && ((b < 0) != (m < 0)) ? m + b : m;
         },
         true, true, false, -20, 20, -7, 7, false},
        {"Maximum", [](double a, double b) { return std::max(a, b); }, true, true, false, -20, 20, -20, 20, false},
        {"Minimum", [](double a, double b) { return std::min(a, b); }, true, true, false, -20, 20, -20, 20, false},
        {"Pow", [](double a, double b) { return std::pow(a, b); }, false, true, false, 0.1, 3, -3, 3, false},
        {"Pow", [](double a, double b) { return std::pow(a, b); }, true, false, false, -5, 5, 0, 6, true},
        {"SquaredDifference", [](double a, double b) { return (a - b) * (a - b); }, true, true, false, -20, 20, -20,
         20, false},
        {"Equal", [](double a, double b) { return a == b ? 1.0 : 0.0; }, true, true, true, -3, 3, -3, 3, true},
        {"NotEqual", [](double a, double b) { return a != b ? 1.0 : 0.0; }, true, true, true, -3, 3, -3, 3, true},
        {"Less", [](double a, double b) { return a < b ? 1.0 : 0.0; }, true, true, true, -3, 3, -3, 3, true},
        {"LessEqual", [](double a, double b) { return a <= b ? 1.0 : 0.0; }, true, true, true, -3, 3, -3, 3, true},
        {"Greater", [](double a, double b) { return a > b ? 1.0 : 0.0; }, true, true, true, -3, 3, -3, 3, true},
        {"GreaterEqual", [](double a, double b) { return a >= b ? 1.0 : 0.0; }, true, true, true, -3, 3, -3, 3,
         true},
    };
    for (const auto& d : defs) {
        for (dtype t : {dtype::float32, dtype::float64, dtype::int32, dtype::int64}) {
            const bool is_int = t == dtype::int32 || t == dtype::int64;
            if (is_int ? !d.ints : !d.floats) continue;
            for (const auto& [sa_b, sb_b] : pairs) {
                auto& sa = sa_b; auto& sb = sb_b;  // clang 14: lambdas cannot capture structured bindings
                auto va = noise(static_cast<std::size_t>(sa.num_elements()), d.alo, d.ahi, 13);
                auto vb = noise(static_cast<std::size_t>(sb.num_elements()), d.blo, d.bhi, 14);
                if (is_int || d.round_values) {
                    for (auto& v : va) v = std::round(v);
                    for (auto& v : vb) v = std::round(v);
                }
                if (std::string_view(d.name).find("Div") != std::string_view::npos ||
                    std::string_view(d.name) == "FloorMod") {
                    for (auto& v : vb) v = v == 0 ? 1 : v;
                }
                tensor a = make(t, sa, va), b = make(t, sb, vb);
                shape os;
                auto want = ref_broadcast(sa, values(a), sb, values(b), d.ref, &os);
                CAPTURE(d.name);
                CAPTURE(dtype_name(t));
                CAPTURE(sa.str());
                CAPTURE(sb.str());
                const double rtol = is_int ? 0 : (t == dtype::float32 ? 1e-5 : 1e-13);
                check_values(ops::binary(d.name, a, b), d.bool_out ? dtype::bool_ : t, os, want, rtol,
                             is_int ? 0 : rtol);
            }
        }
    }
    // LogicalAnd / LogicalOr over the same pairs on bool inputs.
    for (const auto& [sa_b, sb_b] : pairs) {
        auto& sa = sa_b; auto& sb = sb_b;  // clang 14: lambdas cannot capture structured bindings
        auto va = noise(static_cast<std::size_t>(sa.num_elements()), -1, 1, 15);
        auto vb = noise(static_cast<std::size_t>(sb.num_elements()), -1, 1, 16);
        std::vector<int> ba, bb;
        for (double v : va) ba.push_back(v > 0);
        for (double v : vb) bb.push_back(v > 0);
        tensor a = bools(sa, ba), b = bools(sb, bb);
        shape os;
        const auto want_and =
            ref_broadcast(sa, values(a), sb, values(b), [](double x, double y) { return x * y; }, &os);
        const auto want_or =
            ref_broadcast(sa, values(a), sb, values(b), [](double x, double y) { return std::max(x, y); });
        CAPTURE(sa.str());
        CAPTURE(sb.str());
        check_values(ops::binary("LogicalAnd", a, b), dtype::bool_, os, want_and);
        check_values(ops::binary("LogicalOr", a, b), dtype::bool_, os, want_or);
    }
}

// BiasAdd / BiasAddGrad on ranks 2 to 5 in both layouts against a float64 loop: the channel is the
// last dim (NHWC) or dim 1 (NCHW), as TF's GetBiasValueDims in bias_op.cc.
TEST_CASE("BiasAdd and BiasAddGrad over ranks 2-5, NHWC and NCHW, against a float64 reference") {
    const shape shapes[] = {{4, 3}, {2, 3, 5}, {2, 3, 4, 5}, {2, 3, 2, 2, 3}, {0, 3, 2}};
    for (const auto& s : shapes) {
        for (const char* fmt : {"NHWC", "NCHW"}) {
            const bool nhwc = std::string_view(fmt) == "NHWC";
            const std::size_t cd = nhwc ? s.dims().size() - 1 : 1;
            const std::int64_t C = s.dims()[cd];
            const auto st = row_major_strides(s);
            for (dtype t : {dtype::float32, dtype::float64, dtype::int32, dtype::int64}) {
                const bool is_int = t == dtype::int32 || t == dtype::int64;
                auto xv = noise(static_cast<std::size_t>(s.num_elements()), -9, 9, 71);
                auto bv = noise(static_cast<std::size_t>(C), -9, 9, 72);
                if (is_int) {
                    for (auto& v : xv) v = std::trunc(v);
                    for (auto& v : bv) v = std::trunc(v);
                }
                tensor x = make(t, s, xv), b = make(t, {C}, bv);
                xv = values(x);
                bv = values(b);
                std::vector<double> want(xv.size()), grad(static_cast<std::size_t>(C), 0.0);
                for (std::size_t i = 0; i < xv.size(); ++i) {
                    const auto c = static_cast<std::size_t>(static_cast<std::int64_t>(i) / st[cd] % C);
                    want[i] = xv[i] + bv[c];
                    grad[c] += xv[i];
                }
                CAPTURE(s.str());
                CAPTURE(fmt);
                CAPTURE(dtype_name(t));
                check_values(ops::bias_add(x, b, fmt), t, s, want, rtol_for(t), is_int ? 0 : 1e-6);
                check_values(ops::bias_add_grad(x, fmt), t, shape{C}, grad, is_int ? 0 : 1e-5, is_int ? 0 : 1e-5);
            }
        }
    }
}
