// Conv2DBackpropInput / Conv2DBackpropFilter and DepthwiseConv2dNative (+ gradients): TF's figures,
// and central finite differences of the forward kernels in float64.
#include <doctest/doctest.h>

#include "graft/ops/conv.hpp"
#include "ops/nn_testing.hpp"

using namespace graft;
using graft::test::check_close;
using graft::test::iota_tensor;
using graft::test::random_tensor;

namespace {

ops::conv2d_params nchw_params(ops::conv2d_params p) {
    auto conv = [](const std::vector<std::int64_t>& v) { return std::vector<std::int64_t>{v[0], v[3], v[1], v[2]}; };
    p.data_format = "NCHW";
    p.strides = conv(p.strides);
    p.dilations = conv(p.dilations);
    if (p.padding == "EXPLICIT") {
        const auto e = p.explicit_paddings;
        p.explicit_paddings = {e[0], e[1], e[6], e[7], e[2], e[3], e[4], e[5]};
    }
    return p;
}
shape nchw_shape(const shape& s) { return {s.dim(0), s.dim(3), s.dim(1), s.dim(2)}; }

struct grad_case {
    shape in, filter, out;
    std::int64_t sh, sw;
    const char* padding;
    std::vector<double> expected;
};

}  // namespace

TEST_CASE("nn Conv2DBackpropInput: TF's conv_ops_test.py figures, both layouts") {
    // tensorflow/python/kernel_tests/nn_ops/conv_ops_test.py (_RunAndVerifyBackpropInput): filter and
    // out_backprop are 1, 2, 3, ...
    const std::vector<grad_case> cases = {
        {{1, 2, 3, 1}, {2, 2, 1, 1}, {1, 1, 2, 1}, 1, 1, "VALID", {1, 4, 4, 3, 10, 8}},  // ...Depth1ValidBackpropInput
        {{1, 2, 3, 3}, {2, 2, 3, 3}, {1, 1, 2, 3}, 1, 1, "VALID",  // testConv2D2x2Depth3ValidBackpropInput
         {14, 32, 50, 100, 163, 226, 167, 212, 257, 122, 140, 158, 478, 541, 604, 437, 482, 527}},
        {{1, 3, 6, 1}, {2, 2, 1, 1}, {1, 2, 3, 1}, 1, 2, "VALID",  // ...Depth3ValidBackpropInputStride1x2
         {1, 2, 2, 4, 3, 6, 7, 12, 11, 18, 15, 24, 12, 16, 15, 20, 18, 24}},
        {{1, 4, 4, 1}, {1, 1, 1, 1}, {1, 2, 2, 1}, 2, 2, "SAME",  // testConv2DStrideTwoFilterOneSameBackpropInput
         {1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0}},
        {{1, 2, 2, 1}, {2, 2, 1, 2}, {1, 1, 1, 2}, 1, 1, "VALID", {5, 11, 17, 23}},  // ...KernelSizeMatchesInputSize
    };
    for (const auto& c : cases)
        for (bool nhwc : {true, false}) {
            ops::conv2d_params p{.strides = {1, c.sh, c.sw, 1}, .padding = c.padding};
            const tensor f = iota_tensor(dtype::float32, c.filter), dy = iota_tensor(dtype::float32, c.out);
            const tensor dx = nhwc ? ops::conv2d_backprop_input(c.in, f, dy, p)
                                   : test::to_nhwc(ops::conv2d_backprop_input(nchw_shape(c.in), f, test::to_nchw(dy),
                                                                              nchw_params(p)));
            INFO("input " << c.in.str() << " nhwc " << nhwc);
            CHECK(test::values(dx) == c.expected);
        }
    // testConv2DInputSizesContainsOnlySpatialDimensionsBackpropInput: input_sizes = [2, 2]
    const tensor dx = ops::conv2d_backprop_input(tensor::from_vector<std::int32_t>({2, 2}),
                                                 iota_tensor(dtype::float32, {2, 2, 1, 2}),
                                                 iota_tensor(dtype::float32, {1, 1, 1, 2}), {});
    CHECK(dx.shape() == shape{1, 2, 2, 1});
    CHECK(test::values(dx) == std::vector<double>{5, 11, 17, 23});
}

TEST_CASE("nn Conv2DBackpropFilter: TF's conv_ops_test.py figures, both layouts") {
    // conv_ops_test.py (_RunAndVerifyBackpropFilter): input and out_backprop are 1, 2, 3, ...
    const std::vector<grad_case> cases = {
        {{1, 2, 3, 1}, {2, 2, 1, 1}, {1, 1, 2, 1}, 1, 1, "VALID", {5, 8, 14, 17}},  // ...Depth1ValidBackpropFilter
        {{1, 2, 3, 3}, {2, 2, 3, 3}, {1, 1, 2, 3}, 1, 1, "VALID",                 // ...Depth3ValidBackpropFilter
         {17, 22, 27, 22, 29, 36, 27, 36, 45, 32, 43, 54, 37, 50, 63, 42, 57, 72,
          62, 85, 108, 67, 92, 117, 72, 99, 126, 77, 106, 135, 82, 113, 144, 87, 120, 153}},
        {{1, 3, 6, 1}, {2, 2, 1, 1}, {1, 2, 3, 1}, 1, 2, "VALID", {161, 182, 287, 308}},  // ...FilterStride1x2
        {{1, 4, 4, 1}, {1, 1, 1, 1}, {1, 2, 2, 1}, 2, 2, "SAME", {78}},  // testConv2DStrideTwoFilterOneSameBackpropFilter
        {{1, 2, 2, 1}, {2, 2, 1, 2}, {1, 1, 1, 2}, 1, 1, "VALID", {1, 2, 2, 4, 3, 6, 4, 8}},  // ...KernelSizeMatchesInputSize
    };
    for (const auto& c : cases)
        for (bool nhwc : {true, false}) {
            ops::conv2d_params p{.strides = {1, c.sh, c.sw, 1}, .padding = c.padding};
            const tensor x = iota_tensor(dtype::float32, c.in), dy = iota_tensor(dtype::float32, c.out);
            const tensor df = nhwc ? ops::conv2d_backprop_filter(x, c.filter, dy, p)
                                   : ops::conv2d_backprop_filter(test::to_nchw(x), c.filter, test::to_nchw(dy),
                                                                 nchw_params(p));
            INFO("input " << c.in.str() << " nhwc " << nhwc);
            CHECK(test::values(df) == c.expected);
        }
    // testConv2DBackpropFilterWithEmptyInput: zeros
    CHECK(test::values(ops::conv2d_backprop_filter(tensor(dtype::float32, {0, 2, 3, 1}), shape{2, 2, 1, 1},
                                                   tensor(dtype::float32, {0, 1, 2, 1}), {})) ==
          std::vector<double>{0, 0, 0, 0});
}

TEST_CASE("nn Conv2D gradients: central finite differences in float64") {
    struct geo {
        shape in;
        std::int64_t kh, kw, oc, sh, sw, dh, dw;
        const char* padding;
    };
    const std::vector<geo> geos = {
        {{2, 5, 4, 2}, 3, 3, 3, 1, 1, 1, 1, "SAME"}, {{1, 6, 7, 3}, 2, 3, 2, 2, 2, 1, 1, "VALID"},
        {{1, 7, 6, 2}, 3, 2, 2, 1, 2, 2, 1, "SAME"}, {{2, 5, 5, 1}, 2, 2, 3, 2, 1, 1, 2, "EXPLICIT"},
    };
    for (const auto& g : geos)
        for (bool nhwc : {true, false}) {
            ops::conv2d_params p{.strides = {1, g.sh, g.sw, 1}, .padding = g.padding, .dilations = {1, g.dh, g.dw, 1}};
            if (std::string(g.padding) == "EXPLICIT") p.explicit_paddings = {0, 0, 1, 2, 0, 1, 0, 0};
            if (!nhwc) p = nchw_params(p);
            const shape xs = nhwc ? g.in : nchw_shape(g.in);
            const tensor x = random_tensor(dtype::float64, xs, 41);
            const shape fs{g.kh, g.kw, g.in.dim(3), g.oc};
            const tensor f = random_tensor(dtype::float64, fs, 42);
            const tensor y = ops::conv2d(x, f, p);
            const tensor w = random_tensor(dtype::float64, y.shape(), 43);  // dy
            INFO("in " << g.in.str() << " " << g.padding << " nhwc " << nhwc);
            const tensor dx_num = test::numeric_gradient([&](const tensor& xv) { return ops::conv2d(xv, f, p); }, x, w);
            check_close(ops::conv2d_backprop_input(x.shape(), f, w, p), dx_num, 1e-6, 1e-7, "backprop input");
            const tensor df_num = test::numeric_gradient([&](const tensor& fv) { return ops::conv2d(x, fv, p); }, f, w);
            check_close(ops::conv2d_backprop_filter(x, fs, w, p), df_num, 1e-6, 1e-7, "backprop filter");
            // float32 agrees with float64
            check_close(ops::conv2d_backprop_input(x.shape(), cast(f, dtype::float32), cast(w, dtype::float32), p),
                        dx_num, 1e-4, 1e-4, "backprop input float32");
            check_close(ops::conv2d_backprop_filter(cast(x, dtype::float32), fs, cast(w, dtype::float32), p), df_num,
                        1e-4, 1e-4, "backprop filter float32");
        }
}

TEST_CASE("nn Conv2D gradients: batch-parallel paths and errors") {
    // Enough images for the per-image parallel paths on 2 threads.
    const tensor x = random_tensor(dtype::float32, {4, 6, 6, 3}, 51), f = random_tensor(dtype::float32, {3, 3, 3, 5}, 52);
    const ops::conv2d_params p{.padding = "SAME"};
    const tensor dy = random_tensor(dtype::float32, {4, 6, 6, 5}, 53);
    const tensor dx = ops::conv2d_backprop_input(x.shape(), f, dy, p);
    const tensor df = ops::conv2d_backprop_filter(x, f.shape(), dy, p);
    set_num_threads(1);
    check_close(ops::conv2d_backprop_input(x.shape(), f, dy, p), dx, 1e-5, 1e-5, "dx 1 thread");
    check_close(ops::conv2d_backprop_filter(x, f.shape(), dy, p), df, 1e-5, 1e-5, "df 1 thread");
    set_num_threads(2);
    CHECK_THROWS_WITH_AS(ops::conv2d_backprop_input(x.shape(), f, tensor(dtype::float32, {4, 5, 6, 5}), p),
                         doctest::Contains("Conv2DBackpropInput: out_backprop [4,5,6,5] does not match the forward output "
                                           "[4,6,6,5]"),
                         shape_error);
    CHECK_THROWS_AS(ops::conv2d_backprop_filter(x, shape{3, 3, 2, 5}, dy, p), shape_error);
    CHECK_THROWS_AS(ops::conv2d_backprop_filter(x, tensor::from_vector<float>({3, 3, 3, 5}), dy, p), invalid_argument_error);
}

TEST_CASE("nn Conv2D gradients: column chunks that span images, every kernel, 1 and 2 threads") {
    // K = 3*3*64 = 576: a 2^17-float column chunk of the input gradient is 227 output pixels, so
    // chunks start mid-image and run on into the next; the filter gradient's packed panels of 12 taps
    // cross filter rows. Compared with float64 loops (dx[in] += dy[out] * f[tap], df[tap] += x[in] * dy[out]).
    struct geo {
        std::int64_t sh, sw, dh, dw;
        const char* padding;
    };
    const shape in{3, 10, 12, 64};
    const tensor f = random_tensor(dtype::float32, {3, 3, 64, 4}, 61), x = random_tensor(dtype::float32, in, 63);
    for (const geo& g : {geo{1, 1, 1, 1, "SAME"}, geo{2, 1, 1, 1, "VALID"}, geo{1, 2, 1, 1, "SAME"}, geo{1, 1, 2, 2, "SAME"}}) {
        const ops::conv2d_params p{.strides = {1, g.sh, g.sw, 1}, .padding = g.padding, .dilations = {1, g.dh, g.dw, 1}};
        const shape out = ops::conv2d(tensor(dtype::float32, in), f, p).shape();
        const tensor dy = random_tensor(dtype::float32, out, 62);
        test::ref_window w{3, 3, g.sh, g.sw, g.dh, g.dw};
        if (std::string(g.padding) == "SAME") {
            test::same_pads(in.dim(1), 3, g.sh, g.dh, w.pt, w.pb);
            test::same_pads(in.dim(2), 3, g.sw, g.dw, w.pl, w.pr);
        }
        std::vector<double> want(static_cast<std::size_t>(in.num_elements()), 0.0), want_df(3 * 3 * 64 * 4, 0.0);
        const float* dyv = dy.data<float>();
        const float* fv = f.data<float>();
        const float* xv = x.data<float>();
        for (std::int64_t b = 0; b < out.dim(0); ++b)
            for (std::int64_t oy = 0; oy < out.dim(1); ++oy)
                for (std::int64_t ox = 0; ox < out.dim(2); ++ox)
                    for (std::int64_t ky = 0; ky < 3; ++ky)
                        for (std::int64_t kx = 0; kx < 3; ++kx) {
                            const std::int64_t iy = oy * g.sh - w.pt + ky * g.dh, ix = ox * g.sw - w.pl + kx * g.dw;
                            if (iy < 0 || iy >= in.dim(1) || ix < 0 || ix >= in.dim(2)) continue;
                            for (std::int64_t c = 0; c < 64; ++c)
                                for (std::int64_t o = 0; o < 4; ++o) {
                                    const auto i = static_cast<std::size_t>(((b * in.dim(1) + iy) * in.dim(2) + ix) * 64 + c);
                                    const auto t = static_cast<std::size_t>(((ky * 3 + kx) * 64 + c) * 4 + o);
                                    const double d = dyv[((b * out.dim(1) + oy) * out.dim(2) + ox) * 4 + o];
                                    want[i] += d * static_cast<double>(fv[t]);
                                    want_df[t] += d * static_cast<double>(xv[i]);
                                }
                        }
        const tensor ref = tensor::from_vector<double>(in, want), ref_df = tensor::from_vector<double>(f.shape(), want_df);
        for (ops::gemm::kernel_isa isa : ops::gemm::available_kernels()) {
            ops::gemm::limit_kernel(isa);
            for (int threads : {1, 2}) {
                set_num_threads(threads);
                INFO("strides " << g.sh << "," << g.sw << " dilations " << g.dh << "," << g.dw << " kernel "
                                << static_cast<int>(isa) << " threads " << threads);
                check_close(ops::conv2d_backprop_input(in, f, dy, p), ref, 1e-4, 1e-4, "NHWC");
                check_close(test::to_nhwc(ops::conv2d_backprop_input(nchw_shape(in), f, test::to_nchw(dy), nchw_params(p))),
                            ref, 1e-4, 1e-4, "NCHW");
                check_close(ops::conv2d_backprop_filter(x, f.shape(), dy, p), ref_df, 1e-4, 1e-4, "filter NHWC");
                check_close(ops::conv2d_backprop_filter(test::to_nchw(x), f.shape(), test::to_nchw(dy), nchw_params(p)),
                            ref_df, 1e-4, 1e-4, "filter NCHW");
            }
        }
    }
    ops::gemm::limit_kernel(ops::gemm::kernel_isa::avx512);
    set_num_threads(2);
}

TEST_CASE("nn DepthwiseConv2dNative: reference convolution and finite-difference gradients") {
    for (std::int64_t mult : {1, 2})
        for (bool nhwc : {true, false})
            for (const char* padding : {"SAME", "VALID"}) {
                const shape in{2, 6, 5, 3};
                const tensor x = random_tensor(dtype::float64, in, 61), f = random_tensor(dtype::float64, {3, 2, 3, mult}, 62);
                ops::conv2d_params p{.strides = {1, 2, 1, 1}, .padding = padding, .dilations = {1, 1, 2, 1}};
                test::ref_window w{3, 2, 2, 1, 1, 2};
                if (std::string(padding) == "SAME") {
                    test::same_pads(6, 3, 2, 1, w.pt, w.pb);
                    test::same_pads(5, 2, 1, 2, w.pl, w.pr);
                }
                const tensor want = test::ref_conv2d(x, f, w, static_cast<int>(mult));
                if (!nhwc) p = nchw_params(p);
                const tensor xin = nhwc ? x : test::to_nchw(x);
                const tensor y = ops::depthwise_conv2d_native(xin, f, p);
                INFO("mult " << mult << " nhwc " << nhwc << " " << padding);
                check_close(nhwc ? y : test::to_nhwc(y), want, 1e-12, 1e-12, "forward");
                check_close(ops::depthwise_conv2d_native(cast(xin, dtype::float32), cast(f, dtype::float32), p),
                            y, 1e-5, 1e-5, "float32");
                const tensor dy = random_tensor(dtype::float64, y.shape(), 63);
                const tensor shape_t = tensor::from_vector<std::int64_t>(xin.shape().dims());
                const tensor fshape_t = tensor::from_vector<std::int64_t>(f.shape().dims());
                check_close(ops::depthwise_conv2d_native_backprop_input(shape_t, f, dy, p),
                            test::numeric_gradient([&](const tensor& v) { return ops::depthwise_conv2d_native(v, f, p); },
                                                   xin, dy),
                            1e-6, 1e-7, "backprop input");
                check_close(ops::depthwise_conv2d_native_backprop_filter(xin, fshape_t, dy, p),
                            test::numeric_gradient([&](const tensor& v) { return ops::depthwise_conv2d_native(xin, v, p); },
                                                   f, dy),
                            1e-6, 1e-7, "backprop filter");
            }
    CHECK_THROWS_WITH_AS(ops::depthwise_conv2d_native(tensor(dtype::float32, {1, 4, 4, 2}), tensor(dtype::float32, {3, 3, 3, 1}), {}),
                         doctest::Contains("DepthwiseConv2dNative: filter in_channels 3 != input channels 2"), shape_error);
}

TEST_CASE("nn DepthwiseConv2dNative: TF's depthwise_conv_op_base.py hand-computed figures, both layouts") {
    // tensorflow/python/kernel_tests/nn_ops/depthwise_conv_op_base.py (testConv2D2x2Filter,
    // _VerifyHandValues): input [1,2,3,2] and filter [2,2,2,2] are 1, 2, 3, ...; stride 1, VALID.
    const std::vector<double> expected{196, 216, 272, 296, 252, 280, 344, 376};
    for (dtype t : {dtype::float32, dtype::float64})
        for (bool nhwc : {true, false}) {
            const tensor x = iota_tensor(t, {1, 2, 3, 2}), f = iota_tensor(t, {2, 2, 2, 2});
            ops::conv2d_params p{.strides = {1, 1, 1, 1}, .padding = "VALID"};
            if (!nhwc) p = nchw_params(p);
            const tensor y = ops::depthwise_conv2d_native(nhwc ? x : test::to_nchw(x), f, p);
            INFO("nhwc " << nhwc);
            CHECK(y.shape() == (nhwc ? shape{1, 1, 2, 4} : shape{1, 4, 1, 2}));
            CHECK(test::values(nhwc ? y : test::to_nhwc(y)) == expected);
        }
}
