// Conv2D against TF's published figures and a float64 direct-loop reference over shapes, paddings,
// strides, dilations and both layouts.
#include <doctest/doctest.h>

#include "graft/ops/conv.hpp"
#include "ops/nn_testing.hpp"

using namespace graft;
using graft::test::attr4;
using graft::test::check_close;
using graft::test::iota_tensor;
using graft::test::random_tensor;

namespace {

// Runs Conv2D on an NHWC input in the given layout and returns the NHWC result.
tensor conv_in_layout(const tensor& x, const tensor& f, ops::conv2d_params p, bool nhwc) {
    if (nhwc) return ops::conv2d(x, f, p);
    p.data_format = "NCHW";
    auto to_nchw_attr = [](const std::vector<std::int64_t>& v) {
        return std::vector<std::int64_t>{v[0], v[3], v[1], v[2]};
    };
    p.strides = to_nchw_attr(p.strides);
    p.dilations = to_nchw_attr(p.dilations);
    if (p.padding == "EXPLICIT") {
        const auto& e = p.explicit_paddings;
        p.explicit_paddings = {e[0], e[1], e[6], e[7], e[2], e[3], e[4], e[5]};
    }
    return test::to_nhwc(ops::conv2d(test::to_nchw(x), f, p));
}

struct tf_case {
    shape in, filter;
    std::int64_t sh, sw;
    const char* padding;
    std::vector<double> expected;
};

}  // namespace

TEST_CASE("nn Conv2D: TF's conv_ops_test.py figures, both layouts, float32 and float64") {
    // tensorflow/python/kernel_tests/nn_ops/conv_ops_test.py: inputs and filters are 1, 2, 3, ...
    const std::vector<tf_case> cases = {
        {{1, 2, 3, 3}, {1, 1, 3, 3}, 1, 1, "VALID",  // testConv2D1x1Filter
         {30, 36, 42, 66, 81, 96, 102, 126, 150, 138, 171, 204, 174, 216, 258, 210, 261, 312}},
        {{1, 2, 3, 3}, {2, 2, 3, 3}, 1, 1, "VALID", {2271, 2367, 2463, 2901, 3033, 3165}},  // testConv2D2x2Filter
        {{1, 2, 3, 3}, {1, 2, 3, 3}, 1, 1, "VALID",  // testConv2D1x2Filter
         {231, 252, 273, 384, 423, 462, 690, 765, 840, 843, 936, 1029}},
        {{1, 2, 3, 3}, {2, 2, 3, 3}, 2, 2, "VALID", {2271, 2367, 2463}},                    // testConv2D2x2FilterStride2
        {{1, 2, 3, 3}, {2, 2, 3, 3}, 2, 2, "SAME", {2271, 2367, 2463, 1230, 1305, 1380}},   // ...Stride2Same
        {{1, 3, 6, 1}, {2, 2, 1, 1}, 1, 2, "VALID", {58, 78, 98, 118, 138, 158}},           // ...Stride1x2
        {{1, 7, 7, 1}, {2, 2, 1, 1}, 3, 3, "VALID", {65, 95, 275, 305}},     // testConv2DKernelSmallerThanStrideValid
        {{1, 3, 3, 1}, {1, 1, 1, 1}, 2, 2, "SAME", {1, 3, 7, 9}},            // testConv2DKernelSmallerThanStrideSame
        {{1, 4, 4, 1}, {1, 1, 1, 1}, 2, 2, "SAME", {1, 3, 9, 11}},
        {{1, 4, 4, 1}, {2, 2, 1, 1}, 3, 3, "SAME", {44, 28, 41, 16}},
        {{1, 2, 2, 1}, {2, 2, 1, 2}, 1, 1, "VALID", {50, 60}},               // testConv2DKernelSizeMatchesInputSize
    };
    for (const auto& c : cases)
        for (dtype t : {dtype::float32, dtype::float64})
            for (bool nhwc : {true, false}) {
                ops::conv2d_params p;
                p.strides = {1, c.sh, c.sw, 1};
                p.padding = c.padding;
                const tensor y = conv_in_layout(iota_tensor(t, c.in), iota_tensor(t, c.filter), p, nhwc);
                INFO("input " << c.in.str() << " filter " << c.filter.str() << " nhwc " << nhwc);
                CHECK(test::values(y) == c.expected);
            }
}

TEST_CASE("nn Conv2D: matches a float64 direct convolution over geometries, layouts and kernels") {
    struct geo {
        shape in;
        std::int64_t kh, kw, oc, sh, sw, dh, dw;
    };
    const std::vector<geo> geos = {
        {{2, 7, 6, 3}, 3, 3, 5, 1, 1, 1, 1}, {{1, 9, 8, 2}, 3, 2, 4, 2, 3, 1, 1}, {{2, 8, 9, 3}, 3, 3, 6, 1, 1, 2, 3},
        {{1, 10, 7, 4}, 2, 3, 7, 2, 1, 2, 1}, {{3, 5, 5, 1}, 5, 5, 6, 1, 1, 1, 1}, {{1, 6, 6, 17}, 1, 1, 18, 1, 1, 1, 1},
        {{2, 6, 5, 40}, 3, 3, 3, 1, 2, 1, 1},  // K = 360 > one packed panel depth
        {{2, 9, 8, 5}, 3, 3, 16, 2, 1, 2, 1},  // >= 16 out channels: im2col is the A operand (read in place)
        {{1, 11, 13, 7}, 3, 2, 21, 1, 1, 1, 1},
        {{2, 9, 10, 6}, 3, 3, 40, 1, 1, 1, 1},  // AVX-512: 12-row x 32-column tiles read in place, a partial second B panel
        {{1, 7, 5, 3}, 2, 2, 33, 1, 2, 1, 1},
    };
    for (ops::gemm::kernel_isa isa : ops::gemm::available_kernels()) {
        ops::gemm::limit_kernel(isa);
        const bool portable = isa == ops::gemm::kernel_isa::portable;
        for (const auto& g : geos)
            for (const char* padding : {"VALID", "SAME", "EXPLICIT"})
                for (bool nhwc : {true, false}) {
                    const tensor x = random_tensor(dtype::float32, g.in, 5);
                    const tensor f = random_tensor(dtype::float32, {g.kh, g.kw, g.in.dim(3), g.oc}, 6);
                    test::ref_window w{g.kh, g.kw, g.sh, g.sw, g.dh, g.dw};
                    ops::conv2d_params p;
                    p.strides = {1, g.sh, g.sw, 1};
                    p.dilations = {1, g.dh, g.dw, 1};
                    p.padding = padding;
                    if (std::string(padding) == "SAME") {
                        test::same_pads(g.in.dim(1), g.kh, g.sh, g.dh, w.pt, w.pb);
                        test::same_pads(g.in.dim(2), g.kw, g.sw, g.dw, w.pl, w.pr);
                    } else if (std::string(padding) == "EXPLICIT") {
                        w.pt = 2, w.pb = 0, w.pl = 1, w.pr = 3;
                        p.explicit_paddings = {0, 0, 2, 0, 1, 3, 0, 0};
                    }
                    INFO("in " << g.in.str() << " k " << g.kh << "x" << g.kw << " s " << g.sh << "," << g.sw << " d "
                               << g.dh << "," << g.dw << " " << padding << " nhwc " << nhwc << " kernel " << static_cast<int>(isa));
                    const tensor want = test::ref_conv2d(x, f, w);
                    check_close(conv_in_layout(x, f, p, nhwc), want, 1e-4, 1e-4, "float32");
                    if (portable) {  // float64 always runs the portable kernel
                        check_close(conv_in_layout(cast(x, dtype::float64), cast(f, dtype::float64), p, nhwc), want,
                                    1e-12, 1e-12, "float64");
                    }
                }
    }
    ops::gemm::limit_kernel(ops::gemm::kernel_isa::avx512);
}

TEST_CASE("nn Conv2D: the direct path for <= 8 channels (AVX-512 and AVX2): the GEMM path's bits, filter gradient close") {
    if (!ops::gemm::detail::cpu_has_avx2_fma()) {
        MESSAGE("skipped: this CPU has neither AVX2 nor AVX-512F (the direct path needs one)");
        return;
    }
    struct geo {
        shape in;
        std::int64_t kh, kw, oc, sh, dh, dw;
        const char* padding;
    };
    const std::vector<geo> geos = {
        {{1, 28, 28, 1}, 5, 5, 6, 1, 1, 1, "SAME"},       // LeNet's first layer, one output row per chunk
        {{5, 28, 28, 1}, 5, 5, 6, 1, 1, 1, "SAME"},       // split over threads
        {{2, 9, 8, 3}, 3, 3, 8, 2, 2, 1, "EXPLICIT"},     // row stride and dilation, 8 channels
        {{2, 23, 40, 2}, 3, 2, 7, 1, 1, 2, "VALID"},      // 7 channels: 224-float chunks of a 266-float row
        {{3, 130, 130, 8}, 3, 3, 8, 1, 1, 1, "VALID"},    // spread planes over 4 MiB: one image at a time
        {{10, 60, 60, 2}, 3, 3, 8, 1, 1, 1, "SAME"},      // 2 threads take 5 whole images each, 2 per group
        {{1, 7, 5, 2}, 2, 2, 1, 1, 1, 1, "SAME"},
        {{2, 12, 31, 3}, 3, 3, 5, 1, 1, 1, "SAME"},       // 5 channels: AVX2 80-float chunks (period 40)
        {{1, 6, 70, 1}, 1, 3, 4, 1, 1, 1, "VALID"},       // 4 channels: 96-float AVX2 chunks and a tail
        {{1, 11, 75, 1}, 3, 3, 3, 1, 1, 1, "SAME"},       // 3 channels: AVX-512 rows of 64 + 11 pixels
        {{2, 6, 17, 2}, 2, 3, 1, 2, 1, 2, "SAME"},        // 1 channel: 17 pixels, a 1-lane last vector
        {{1, 5, 40, 3}, 3, 3, 2, 1, 1, 1, "VALID"},       // 2 channels
        {{1, 9, 50, 1}, 3, 3, 4, 1, 1, 1, "EXPLICIT"},    // 4 channels with explicit padding, 48-pixel rows + 2
    };
    std::vector<ops::gemm::kernel_isa> isas{ops::gemm::kernel_isa::avx2};
    if (ops::gemm::detail::cpu_has_avx512f()) isas.push_back(ops::gemm::kernel_isa::avx512);
    for (ops::gemm::kernel_isa isa : isas)
    for (const auto& g : geos)
        for (int threads : {1, 2}) {
            set_num_threads(threads);
            const tensor x = random_tensor(dtype::float32, g.in, 15);
            const tensor f = random_tensor(dtype::float32, {g.kh, g.kw, g.in.dim(3), g.oc}, 16);
            ops::conv2d_params p;
            p.strides = {1, g.sh, 1, 1};
            p.dilations = {1, g.dh, g.dw, 1};
            p.padding = g.padding;
            if (std::string(g.padding) == "EXPLICIT") p.explicit_paddings = {0, 0, 2, 0, 1, 3, 0, 0};
            ops::gemm::limit_kernel(isa);
            ops::nn_detail::conv_direct_enabled() = false;  // the GEMM path of the same ISA
            const tensor gemm_path = ops::conv2d(x, f, p);
            const tensor dy = random_tensor(dtype::float32, gemm_path.shape(), 17);
            const tensor gemm_df = ops::conv2d_backprop_filter(x, f.shape(), dy, p);
            ops::nn_detail::conv_direct_enabled() = true;
            const tensor direct = ops::conv2d(x, f, p);
            INFO("in " << g.in.str() << " k " << g.kh << "x" << g.kw << "x" << g.oc << " " << g.padding << " threads "
                       << threads << " kernel " << static_cast<int>(isa));
            CHECK(equal(direct, gemm_path));
            // the fused bias and activation (_FusedConv2D): the unfused result's bits, each activation
            const tensor bias = random_tensor(dtype::float32, {g.oc}, 18);
            for (auto act : {ops::bias_activation::none, ops::bias_activation::relu, ops::bias_activation::relu6,
                             ops::bias_activation::leaky_relu}) {
                const ops::bias_act_epilogue epilogue(bias.data<float>(), g.oc, act, 0.3f);
                tensor want = gemm_path.clone();
                ops::bias_activation_inplace(want, bias, act, 0.3f);
                CHECK_MESSAGE(equal(ops::conv2d(x, f, p, &epilogue), want), "activation " << static_cast<int>(act));
            }
            // the filter gradient sums in another order (rows per thread, then lanes): close, not equal
            check_close(ops::conv2d_backprop_filter(x, f.shape(), dy, p), gemm_df, 1e-4, 1e-4, "filter gradient");
        }
    ops::gemm::limit_kernel(ops::gemm::kernel_isa::avx512);
    set_num_threads(2);
}

TEST_CASE("nn Conv2D: a 3x3 SAME layer on 1 and 3 threads agrees with the reference") {
    const tensor x = random_tensor(dtype::float32, {3, 12, 12, 16}, 8), f = random_tensor(dtype::float32, {3, 3, 16, 24}, 9);
    const tensor want = test::ref_conv2d(x, f, {3, 3, 1, 1, 1, 1, 1, 1, 1, 1});
    for (int th : {1, 3}) {
        set_num_threads(th);
        for (bool nhwc : {true, false}) check_close(conv_in_layout(x, f, {.padding = "SAME"}, nhwc), want, 1e-4, 1e-4, "threads");
    }
    set_num_threads(2);
}

TEST_CASE("nn Conv2D: empty batch, and errors that name the op and both shapes") {
    CHECK(ops::conv2d(tensor(dtype::float32, {0, 2, 3, 3}), tensor(dtype::float32, {1, 1, 3, 3}), {}).shape() ==
          shape{0, 2, 3, 3});
    const tensor x(dtype::float32, {1, 28, 28, 1}), f(dtype::float32, {5, 5, 3, 32});
    CHECK_THROWS_WITH_AS(ops::conv2d(x, f, {}),
                         "Conv2D: filter in_channels 3 != input channels 1 (input [1,28,28,1], filter [5,5,3,32])",
                         shape_error);
    CHECK_THROWS_WITH_AS(ops::conv2d(x, tensor(dtype::float32, {5, 5, 1, 4}), {.strides = {2, 1, 1, 1}}),
                         doctest::Contains("strides in the batch and depth dimensions must be 1"), invalid_argument_error);
    CHECK_THROWS_WITH_AS(ops::conv2d(x, tensor(dtype::float32, {5, 5, 1, 4}), {.padding = "FULL"}),
                         doctest::Contains("padding 'FULL'"), invalid_argument_error);
    CHECK(ops::conv2d(x, tensor(dtype::float32, {29, 1, 1, 4}), {}).shape() == shape{1, 0, 28, 4});  // TF: size 0, no error
    CHECK_THROWS_WITH_AS(ops::conv2d(x, tensor(dtype::float32, {31, 1, 1, 4}), {}),
                         doctest::Contains("output size would be negative"), invalid_argument_error);
    CHECK_THROWS_AS(ops::conv2d(x, tensor(dtype::float64, {5, 5, 1, 4}), {}), invalid_argument_error);
    CHECK_THROWS_AS(ops::conv2d(tensor(dtype::int32, {1, 4, 4, 1}), tensor(dtype::int32, {1, 1, 1, 1}), {}),
                    invalid_argument_error);
    CHECK_THROWS_WITH_AS(ops::conv2d(x, tensor(dtype::float32, {5, 5, 1, 4}), {.padding = "EXPLICIT"}),
                         doctest::Contains("needs 8 explicit_paddings"), invalid_argument_error);
}
