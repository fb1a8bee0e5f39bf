// MaxPool / AvgPool and their gradients: TF's published figures, a float64 reference, finite differences.
#include <doctest/doctest.h>

#include <cstring>

#include "graft/ops/pool.hpp"
#include "ops/nn_testing.hpp"

using namespace graft;
using graft::test::check_close;
using graft::test::random_tensor;

namespace {

// pooling_ops_test.py's input: 1, 2, ..., 127, then wrapping to -127 (x = ((f + 128) % 255) - 127).
tensor tf_pool_input(const shape& s, dtype t, bool negative = false) {
    std::vector<double> v(static_cast<std::size_t>(s.num_elements()));
    for (std::size_t f = 0; f < v.size(); ++f) v[f] = static_cast<double>((static_cast<long>(f) + 128) % 255 - 127) * (negative ? -1 : 1);
    return test::from_values(t, s, v);
}

ops::pool_params params(std::int64_t kh, std::int64_t kw, std::int64_t sh, std::int64_t sw, const char* padding,
                        bool nhwc) {
    return {.ksize = test::attr4(kh, kw, nhwc), .strides = test::attr4(sh, sw, nhwc), .padding = padding,
            .data_format = nhwc ? "NHWC" : "NCHW"};
}

// Pools an NHWC tensor in the given layout and returns NHWC.
tensor pool(bool is_max, const tensor& x, std::int64_t kh, std::int64_t kw, std::int64_t sh, std::int64_t sw,
            const char* padding, bool nhwc) {
    const auto p = params(kh, kw, sh, sw, padding, nhwc);
    const tensor in = nhwc ? x : test::to_nchw(x);
    const tensor y = is_max ? ops::max_pool(in, p) : ops::avg_pool(in, p);
    return nhwc ? y : test::to_nhwc(y);
}

struct pool_case {
    bool is_max;
    shape in;
    std::int64_t kh, kw, sh, sw;
    const char* padding;
    std::vector<double> expected;
};

}  // namespace

TEST_CASE("nn MaxPool / AvgPool: TF's pooling_ops_test.py figures, both layouts, float32 and float64") {
    // tensorflow/python/kernel_tests/nn_ops/pooling_ops_test.py
    const std::vector<pool_case> cases = {
        {false, {1, 3, 3, 3}, 2, 2, 2, 2, "VALID", {7, 8, 9}},                            // testAvgPoolValidPadding
        {false, {1, 2, 4, 3}, 2, 2, 2, 2, "SAME", {8.5, 9.5, 10.5, 14.5, 15.5, 16.5}},    // testAvgPoolSamePadding
        {false, {1, 2, 2, 1}, 1, 2, 1, 1, "SAME", {1.5, 2, 3.5, 4}},               // ...SamePaddingNonSquareWindow
        {false, {1, 2, 2, 1}, 2, 1, 1, 1, "SAME", {2, 3, 3, 4}},                   // ...NonSquareWindow_2
        {false, {2, 2, 2, 2}, 1, 2, 1, 1, "SAME", {2, 3, 3, 4, 6, 7, 7, 8, 10, 11, 11, 12, 14, 15, 15, 16}},
        {false, {2, 2, 2, 2}, 2, 1, 1, 1, "SAME", {3, 4, 5, 6, 5, 6, 7, 8, 11, 12, 13, 14, 13, 14, 15, 16}},
        {false, {1, 3, 3, 3}, 2, 2, 1, 2, "VALID", {7, 8, 9, 16, 17, 18}},          // ...ValidPaddingUnevenStride
        {false, {1, 3, 3, 3}, 2, 2, 2, 1, "VALID", {7, 8, 9, 10, 11, 12}},          // ...UnevenStride_2
        {false, {1, 4, 4, 4}, 2, 2, 2, 2, "SAME", {11, 12, 13, 14, 19, 20, 21, 22, 43, 44, 45, 46, 51, 52, 53, 54}},
        {false, {1, 4, 4, 4}, 3, 3, 2, 2, "SAME", {21, 22, 23, 24, 27, 28, 29, 30, 45, 46, 47, 48, 51, 52, 53, 54}},
        {true, {1, 3, 3, 3}, 2, 2, 2, 2, "VALID", {13, 14, 15}},                          // testMaxPoolValidPadding
        {true, {1, 2, 3, 3}, 2, 2, 2, 2, "SAME", {13, 14, 15, 16, 17, 18}},               // testMaxPoolSamePadding
        {true, {1, 2, 2, 1}, 1, 2, 1, 1, "SAME", {2, 2, 4, 4}},                    // ...SamePaddingNonSquareWindow
        {true, {1, 4, 4, 1}, 2, 2, 1, 2, "VALID", {6, 8, 10, 12, 14, 16}},         // ...ValidPaddingUnevenStride
        {true, {1, 4, 4, 1}, 2, 2, 2, 1, "VALID", {6, 7, 8, 14, 15, 16}},          // ...UnevenStride2_
        {true, {1, 4, 4, 4}, 2, 2, 2, 2, "SAME", {21, 22, 23, 24, 29, 30, 31, 32, 53, 54, 55, 56, 61, 62, 63, 64}},
    };
    for (const auto& c : cases)
        for (dtype t : {dtype::float32, dtype::float64})
            for (bool nhwc : {true, false}) {
                INFO((c.is_max ? "MaxPool " : "AvgPool ") << c.in.str() << " " << c.padding << " nhwc " << nhwc);
                CHECK(test::values(pool(c.is_max, tf_pool_input(c.in, t), c.kh, c.kw, c.sh, c.sw, c.padding, nhwc)) ==
                      c.expected);
            }
}

TEST_CASE("nn MaxPool / AvgPool: TF's 8x8x8 packet figures (inputs wrap past 127)") {
    // pooling_ops_test.py testAvgPoolSamePaddingPacket_8 and testMaxPoolSamePaddingPacket8_ (first 16 values)
    const tensor x = tf_pool_input({1, 8, 8, 8}, dtype::float32);
    const auto avg = test::values(pool(false, x, 3, 3, 2, 2, "SAME", true));
    const auto mx = test::values(pool(true, x, 3, 3, 2, 2, "SAME", true));
    REQUIRE(avg.size() == 128);
    CHECK(std::vector<double>(avg.begin(), avg.begin() + 16) ==
          std::vector<double>{-12, -11, -10, -9, -8, -7, -6, -5, 4, 5, 6, 7, 8, 9, 10, 11});
    CHECK(avg[31] == -3.5);
    CHECK(avg[127] == -34.0);
    CHECK(std::vector<double>(mx.begin(), mx.begin() + 16) ==
          std::vector<double>{81, 82, 83, 84, 85, 86, 87, 88, 97, 98, 99, 100, 101, 102, 103, 104});
    CHECK(mx[31] == 120.0);
    CHECK(mx[127] == 2.0);
}

TEST_CASE("nn MaxPool: explicit padding never wins (TF figures)") {
    // pooling_ops_test.py testMaxPoolExplicitPadding / ...NegativeInputExpPadding / ...ExplicitPaddingAdvanced
    auto run = [](const shape& in, std::vector<std::int64_t> pads, bool negative) {
        ops::pool_params p{.ksize = {1, 3, 3, 1}, .strides = {1, 2, 2, 1}, .padding = "EXPLICIT",
                           .explicit_paddings = std::move(pads)};
        return test::values(ops::max_pool(tf_pool_input(in, dtype::float32, negative), p));
    };
    CHECK(run({1, 3, 3, 1}, {0, 0, 0, 2, 0, 1, 0, 0}, false) == std::vector<double>{9, 9});
    CHECK(run({1, 3, 3, 1}, {0, 0, 2, 1, 2, 1, 0, 0}, true) == std::vector<double>{-1, -1, -1, -1});
    CHECK(run({1, 6, 6, 1}, {0, 0, 1, 2, 2, 1, 0, 0}, false) ==
          std::vector<double>{7, 9, 11, 12, 19, 21, 23, 24, 31, 33, 35, 36, 31, 33, 35, 36});
    CHECK(run({1, 6, 6, 1}, {0, 0, 1, 2, 2, 1, 0, 0}, true) ==
          std::vector<double>{-1, -1, -3, -5, -7, -7, -9, -11, -19, -19, -21, -23, -31, -31, -33, -35});
}

TEST_CASE("nn MaxPool / AvgPool: float64 reference over windows, strides and layouts") {
    const tensor x = random_tensor(dtype::float64, {2, 9, 7, 5}, 71);
    struct win {
        std::int64_t kh, kw, sh, sw;
    };
    for (const win w : {win{2, 2, 2, 2}, win{3, 3, 2, 2}, win{3, 2, 1, 3}, win{1, 4, 2, 1}, win{5, 5, 3, 3}})
        for (const char* padding : {"VALID", "SAME"})
            for (bool nhwc : {true, false})
                for (bool is_max : {true, false}) {
                    test::ref_window rw{w.kh, w.kw, w.sh, w.sw};
                    if (std::string(padding) == "SAME") {
                        test::same_pads(9, w.kh, w.sh, 1, rw.pt, rw.pb);
                        test::same_pads(7, w.kw, w.sw, 1, rw.pl, rw.pr);
                    }
                    INFO(w.kh << "x" << w.kw << " s" << w.sh << "," << w.sw << " " << padding << " nhwc " << nhwc);
                    const tensor want = test::ref_pool(x, rw, is_max);
                    check_close(pool(is_max, x, w.kh, w.kw, w.sh, w.sw, padding, nhwc), want, 1e-12, 1e-12, "float64");
                    check_close(pool(is_max, cast(x, dtype::float32), w.kh, w.kw, w.sh, w.sw, padding, nhwc), want, 1e-6,
                                1e-6, "float32");
                }
}

TEST_CASE("nn AvgPoolGrad / MaxPoolGrad: finite differences and first-max routing") {
    for (bool nhwc : {true, false})
        for (const char* padding : {"SAME", "VALID"}) {
            const auto p = params(3, 2, 2, 1, padding, nhwc);
            const tensor x = random_tensor(dtype::float64, nhwc ? shape{2, 7, 5, 3} : shape{2, 3, 7, 5}, 81);
            const tensor y = ops::avg_pool(x, p);
            const tensor dy = random_tensor(dtype::float64, y.shape(), 82);
            INFO(padding << " nhwc " << nhwc);
            check_close(ops::avg_pool_grad(tensor::from_vector<std::int32_t>({4}, {static_cast<std::int32_t>(x.dim(0)),
                                                                                   static_cast<std::int32_t>(x.dim(1)),
                                                                                   static_cast<std::int32_t>(x.dim(2)),
                                                                                   static_cast<std::int32_t>(x.dim(3))}),
                                           dy, p),
                        test::numeric_gradient([&](const tensor& v) { return ops::avg_pool(v, p); }, x, dy), 1e-7, 1e-8,
                        "AvgPoolGrad");
            // random inputs have distinct values, so max pooling is differentiable there
            const tensor my = ops::max_pool(x, p);
            check_close(ops::max_pool_grad(x, my, dy, p),
                        test::numeric_gradient([&](const tensor& v) { return ops::max_pool(v, p); }, x, dy), 1e-7, 1e-8,
                        "MaxPoolGrad");
        }
    // Ties: the gradient goes to the first maximum in row-major window order only.
    const tensor x = tensor::from_vector<float>({1, 2, 2, 1}, {5, 5, 5, 5});
    const auto p = params(2, 2, 1, 1, "VALID", true);
    const tensor dx = ops::max_pool_grad(x, ops::max_pool(x, p), tensor::from_vector<float>({1, 1, 1, 1}, {3}), p);
    CHECK(test::values(dx) == std::vector<double>{3, 0, 0, 0});
    // Window 0 ties (0,1) and (1,0); window 1 ties (0,3) and (1,2): row-major order picks (0,1) and (0,3).
    const tensor x2 = tensor::from_vector<float>({1, 2, 4, 1}, {1, 7, 3, 5, 7, 2, 5, 4});
    const auto p2 = params(2, 2, 2, 2, "VALID", true);
    const tensor dx2 = ops::max_pool_grad(x2, ops::max_pool(x2, p2), tensor::from_vector<float>({1, 1, 2, 1}, {1, 10}), p2);
    CHECK(test::values(dx2) == std::vector<double>{0, 1, 0, 10, 0, 0, 0, 0});
}

TEST_CASE("nn pooling: errors name the op and the shapes") {
    const tensor x(dtype::float32, {1, 1, 1, 1});
    CHECK_THROWS_WITH_AS(ops::max_pool(x, params(1, 2, 1, 1, "VALID", true)),
                         doctest::Contains("MaxPool: ksize [1,2] is larger than the input [1,1,1,1]"), invalid_argument_error);
    CHECK_THROWS_AS(ops::avg_pool(x, {.ksize = {2, 1, 1, 1}}), invalid_argument_error);
    CHECK_THROWS_AS(ops::avg_pool(x, {.padding = "EXPLICIT", .explicit_paddings = {0, 0, 0, 0, 0, 0, 0, 0}}),
                    invalid_argument_error);
    CHECK_THROWS_AS(ops::max_pool(tensor(dtype::float32, {4, 4}), {}), shape_error);
    const tensor x4(dtype::float32, {1, 4, 4, 1});
    const auto p = params(2, 2, 2, 2, "VALID", true);
    CHECK_THROWS_WITH_AS(ops::max_pool_grad(x4, tensor(dtype::float32, {1, 2, 2, 1}), tensor(dtype::float32, {1, 3, 2, 1}), p),
                         doctest::Contains("MaxPoolGrad: orig_output [1,2,2,1] and grad [1,3,2,1] must both be [1,2,2,1]"),
                         shape_error);
    CHECK_THROWS_AS(ops::avg_pool_grad(shape{1, 4, 4, 1}, tensor(dtype::float32, {1, 3, 3, 1}), p), shape_error);
}

TEST_CASE("nn MaxPoolGrad: TF's pooling_ops_test.py direct figures (ties and NaN inputs route to the first)") {
    // tensorflow/python/kernel_tests/nn_ops/pooling_ops_test.py: _testMaxPoolGradDirect1_1, 1_2, 1_3
    // and _testMaxPoolGradDirectWithNans2_1 / 2_2 (the CPU kernel's expected_input_backprop_tf_cpu).
    const double nan = std::nan("");
    struct direct {
        std::vector<double> input, output_backprop, expected;
        shape out;
        std::int64_t k;
        const char* padding;
    };
    const std::vector<double> ones(16, 1.0), nans(16, nan);
    const std::vector<double> checker{1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0, 1};
    const std::vector<double> bp9{11, 12, 13, 15, 16, 17, 19, 20, 21};
    const std::vector<direct> cases = {
        {ones, bp9, {11, 12, 13, 0, 15, 16, 17, 0, 19, 20, 21, 0, 0, 0, 0, 0}, {1, 3, 3, 1}, 2, "VALID"},
        {checker, bp9, {11, 0, 25, 0, 0, 31, 0, 17, 19, 0, 41, 0, 0, 0, 0, 0}, {1, 3, 3, 1}, 2, "VALID"},
        {checker, {11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26},
         {54, 0, 62, 0, 0, 60, 0, 22, 47, 0, 51, 0, 0, 0, 0, 0}, {1, 4, 4, 1}, 3, "SAME"},
        {nans, bp9, {11, 12, 13, 0, 15, 16, 17, 0, 19, 20, 21, 0, 0, 0, 0, 0}, {1, 3, 3, 1}, 2, "VALID"},
        {nans, {nan, 12, 13, 15, nan, 17, 19, 20, nan},
         {nan, 12, 13, 0, 15, nan, 17, 0, 19, 20, nan, 0, 0, 0, 0, 0}, {1, 3, 3, 1}, 2, "VALID"},
    };
    for (std::size_t i = 0; i < cases.size(); ++i)
        for (dtype t : {dtype::float32, dtype::float64}) {
            const auto& c = cases[i];
            const auto p = params(c.k, c.k, 1, 1, c.padding, true);
            const tensor x = test::from_values(t, {1, 4, 4, 1}, c.input);
            const tensor y = ops::max_pool(x, p);
            REQUIRE(y.shape() == c.out);
            const auto got = test::values(ops::max_pool_grad(x, y, test::from_values(t, c.out, c.output_backprop), p));
            INFO("case " << i << " " << dtype_name(t));
            REQUIRE(got.size() == c.expected.size());
            for (std::size_t j = 0; j < got.size(); ++j) {
                INFO("element " << j);
                CHECK((std::isnan(c.expected[j]) ? std::isnan(got[j]) : got[j] == c.expected[j]));
            }
        }
}

TEST_CASE("nn MaxPool / MaxPoolGrad: the vector paths (AVX-512, AVX2; NHWC float32) equal the scalar loops, ties, -0 and NaN included") {
    std::vector<ops::gemm::kernel_isa> isas;
    for (ops::gemm::kernel_isa isa : ops::gemm::available_kernels())
        if (isa != ops::gemm::kernel_isa::portable) isas.push_back(isa);
    if (isas.empty()) {
        MESSAGE("skipped: this CPU has neither AVX2 nor AVX-512F, so MaxPool and MaxPoolGrad have only their scalar loops");
        return;
    }
    struct geo {
        shape in;
        std::int64_t k, s;
        const char* padding;
    };
    // tiled (whole disjoint windows covering the image: no clearing pass), overlapping, uncovered
    // rows and columns, SAME borders; 6, 20 (a full and a masked block of 16) and 33 channels; up to
    // 16 channels the forward pass takes the columns whose windows are inside apart from the
    // clipped ones at either border (SAME 3x3/2 pads a column on the left)
    const std::vector<geo> geos = {
        {{3, 28, 28, 6}, 2, 2, "VALID"}, {{2, 9, 9, 20}, 3, 2, "SAME"}, {{2, 9, 11, 33}, 2, 2, "VALID"},
        {{1, 8, 8, 20}, 2, 2, "SAME"},   {{2, 7, 6, 6}, 3, 1, "VALID"}, {{2, 9, 10, 6}, 3, 2, "SAME"},
        {{1, 5, 7, 16}, 2, 1, "SAME"},   {{1, 6, 5, 1}, 3, 2, "VALID"}, {{1, 3, 2, 3}, 3, 3, "SAME"},
        {{2, 8, 8, 8}, 2, 2, "VALID"},   {{2, 7, 9, 13}, 3, 2, "SAME"}, {{1, 9, 9, 5}, 2, 2, "SAME"},
        {{2, 8, 6, 13}, 2, 2, "VALID"},  {{2, 6, 4, 1}, 2, 2, "VALID"}, {{1, 9, 6, 3}, 3, 3, "VALID"},  // tiled, C % 8 != 0
    };
    for (ops::gemm::kernel_isa isa : isas)
    for (const auto& g : geos) {
        // values from {-0, 0, 1, 2, 3}: many ties; a few NaNs, some first in their window
        std::vector<float> v(static_cast<std::size_t>(g.in.num_elements()));
        for (std::size_t i = 0; i < v.size(); ++i) {
            v[i] = i % 37 == 5 ? std::nanf("") : static_cast<float>((i * 2654435761u >> 7) % 4);
            if (v[i] == 0.f && i % 3 == 0) v[i] = -0.f;
        }
        const tensor x = tensor::from_vector<float>(g.in, v);
        const auto p = params(g.k, g.k, g.s, g.s, g.padding, true);
        ops::gemm::limit_kernel(isa);
        const tensor y = ops::max_pool(x, p);
        const tensor dy = random_tensor(dtype::float32, y.shape(), 91);
        const tensor vec = ops::max_pool_grad(x, y, dy, p);
        ops::gemm::limit_kernel(ops::gemm::kernel_isa::portable);
        const tensor scalar = ops::max_pool_grad(x, y, dy, p);
        const tensor y_scalar = ops::max_pool(x, p);
        ops::gemm::limit_kernel(ops::gemm::kernel_isa::avx512);
        INFO("in " << g.in.str() << " k " << g.k << " s " << g.s << " " << g.padding << " kernel " << static_cast<int>(isa));
        CHECK(std::memcmp(y.data<float>(), y_scalar.data<float>(), static_cast<std::size_t>(y.num_elements()) * 4) == 0);
        CHECK(std::memcmp(vec.data<float>(), scalar.data<float>(), static_cast<std::size_t>(vec.num_elements()) * 4) == 0);
        // the windows' gradient lands somewhere: dx sums to dy's sum (up to rounding)
        double sum_dx = 0, sum_dy = 0;
        for (std::int64_t i = 0; i < vec.num_elements(); ++i) sum_dx += vec.data<float>()[i];
        for (std::int64_t i = 0; i < dy.num_elements(); ++i) sum_dy += dy.data<float>()[i];
        CHECK(sum_dx == doctest::Approx(sum_dy).epsilon(1e-4));
    }
}
