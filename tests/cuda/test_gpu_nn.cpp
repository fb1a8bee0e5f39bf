// The nn family on the GPU against the CPU (op_case): MatMul (all transpose combinations, odd
// sizes, float16/bfloat16), BatchMatMul/V2/V3 (broadcast batch dims, adjoints), Conv2D and its two
// gradients (NHWC and NCHW, SAME/VALID/EXPLICIT, strides, dilations, asymmetric SAME padding),
// MaxPool/AvgPool and their gradients, Softmax/LogSoftmax, FusedBatchNorm/V2/V3 (training with
// and without a running average, inference) and FusedBatchNormGrad/V2/V3.
//
// Tolerances: op_case's rtol 1e-5 (float32 without TF32) except where a sum runs over more than
// 256 terms (a GEMM's K, a filter gradient's N*OH*OW): cuBLAS/cuDNN add in another order than the
// CPU's GEMM, so those cases use rtol 1e-4.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "op_case.hpp"

using graft::dtype;
using graft::shape;
using graft::tensor;

namespace gpu_nn_test {

/// One graph under construction, with its feeds.
struct builder {
    graft::graph g;
    graft::graph_builder b{g};
    graft::exec::session::feed_list feeds;
    double rtol = 1e-5;
    std::vector<int> magnitude_of;  ///< op_case::magnitude_of

    /// A float32 placeholder `name` fed with deterministic values in [lo, hi).
    graft::endpoint input(const std::string& name, const shape& s, std::uint32_t seed = 1, float lo = -1.f,
                          float hi = 1.f) {
        feeds.emplace_back(name, graft::test_cuda::ramp(s, lo, hi, seed));
        return b.placeholder(name, dtype::float32, s);
    }
    graft::endpoint feed(const std::string& name, const tensor& t) {
        feeds.emplace_back(name, t);
        return b.placeholder(name, t.type(), t.shape());
    }
    graft::endpoint ints(const std::vector<std::int32_t>& v) { return b.constant(tensor::from_vector<std::int32_t>(v)); }
    /// Runs the case fetching `fetches` on both devices (the builder is spent); the GPU's results.
    std::vector<tensor> check(const std::vector<graft::endpoint>& fetches, double atol = 1e-6) {
        graft::test_cuda::op_case c;
        c.g = std::move(g);
        c.feeds = std::move(feeds);
        c.rtol = rtol;
        c.atol = atol;
        c.magnitude_of = magnitude_of;
        for (const auto& e : fetches) c.fetches.push_back(e.str());
        return graft::test_cuda::check_cpu_vs_gpu(c);
    }
};

graft::attr_value int_list(std::vector<std::int64_t> v) { return graft::attr_value::list_of(std::move(v)); }

/// A 4-entry attr (strides, ksize, dilations) given as (h, w) in data_format order.
graft::attr_value spatial(std::int64_t h, std::int64_t w, bool nhwc) {
    return nhwc ? int_list({1, h, w, 1}) : int_list({1, 1, h, w});
}

/// An activation shape from NHWC dims.
shape image(std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c, bool nhwc) {
    return nhwc ? shape{n, h, w, c} : shape{n, c, h, w};
}

/// TF's output size of one spatial dim.
std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d, const std::string& padding) {
    const std::int64_t eff = (k - 1) * d + 1;
    return padding == "SAME" ? (in + s - 1) / s : (in - eff + s) / s;
}

float at(const tensor& t, std::int64_t i) { return t.data<float>()[i]; }

/// float32 values 1, 2, 3, ... of shape s.
tensor iota(const shape& s) {
    tensor t(dtype::float32, s);
    for (std::int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = static_cast<float>(i + 1);
    return t;
}

/// One Conv2D configuration (NHWC terms).
struct conv_case {
    std::int64_t n, h, w, c, kh, kw, oc, stride, dilation;
    std::string padding;
};

std::vector<conv_case> conv_cases() {
    std::vector<conv_case> r;
    // 9x10 input, 3x3 filter: SAME with stride 2 pads 9 rows symmetrically and 10 columns
    // asymmetrically (0 left, 1 right); dilation 2 pads (1, 2) — cuDNN needs the padded copy there.
    for (const char* padding : {"SAME", "VALID"})
        for (std::int64_t stride : {1, 2})
            for (std::int64_t dilation : {1, 2}) r.push_back({2, 9, 10, 3, 3, 3, 4, stride, dilation, padding});
    r.push_back({1, 7, 6, 2, 4, 2, 3, 1, 1, "SAME"});  // even filter: SAME pads (1, 2) rows, (0, 1) columns
    r.push_back({3, 5, 5, 4, 1, 1, 6, 1, 1, "VALID"});  // 1x1
    return r;
}

// The cases live in the namespace too: test files are compiled together (unity build) and other
// files' helpers must not shadow these.

TEST_CASE("gpu nn: MatMul, all four transpose combinations, 37x53 * 53x29") {
    const std::int64_t M = 37, K = 53, N = 29;
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            INFO("transpose_a " << ta << " transpose_b " << tb);
            builder t;
            auto a = t.input("a", ta ? shape{K, M} : shape{M, K}, 1);
            auto b = t.input("b", tb ? shape{N, K} : shape{K, N}, 2);
            auto y = t.b.op("MatMul", {a, b}, {{"transpose_a", ta}, {"transpose_b", tb}});
            const tensor r = t.check({y})[0];
            REQUIRE(r.shape() == shape{M, N});
            // Element (5, 7) against a float64 dot product.
            const tensor av = graft::test_cuda::ramp(ta ? shape{K, M} : shape{M, K}, -1.f, 1.f, 1);
            const tensor bv = graft::test_cuda::ramp(tb ? shape{N, K} : shape{K, N}, -1.f, 1.f, 2);
            double want = 0;
            for (std::int64_t k = 0; k < K; ++k) {
                want += static_cast<double>(at(av, ta ? k * M + 5 : 5 * K + k)) * at(bv, tb ? 7 * K + k : k * N + 7);
            }
            CHECK(at(r, 5 * N + 7) == doctest::Approx(want).epsilon(1e-5));
        }
}

TEST_CASE("gpu nn: MatMul with K > 256, an empty K and float16/bfloat16 operands") {
    {
        builder t;
        t.rtol = 1e-4;  // K = 300 > 256: the GPU sums in another order
        auto y = t.b.op("MatMul", {t.input("a", {16, 300}, 3), t.input("b", {8, 300}, 4)}, {{"transpose_b", true}});
        t.check({y});
    }
    {
        builder t;  // K = 0: zeros
        auto y = t.b.op("MatMul", {t.input("a", {3, 0}), t.input("b", {0, 4})});
        const tensor r = t.check({y})[0];
        REQUIRE(r.shape() == shape{3, 4});
        for (std::int64_t i = 0; i < 12; ++i) CHECK(at(r, i) == 0.f);
    }
    for (dtype ty : {dtype::float16, dtype::bfloat16}) {
        INFO(graft::dtype_name(ty));
        builder t;
        t.rtol = 1e-2;  // float32 accumulation on both sides, then one rounding to 8 or 11 bits
        auto a = t.feed("a", graft::cast(graft::test_cuda::ramp({19, 23}, -1.f, 1.f, 5), ty));
        auto b = t.feed("b", graft::cast(graft::test_cuda::ramp({11, 23}, -1.f, 1.f, 6), ty));
        auto y = t.b.op("MatMul", {a, b}, {{"transpose_b", true}});
        const tensor r = t.check({y}, 1e-2)[0];
        CHECK(r.type() == ty);
        CHECK(r.shape() == shape{19, 11});
    }
}

TEST_CASE("gpu nn: BatchMatMulV2 broadcasts batch dims (and BatchMatMul, BatchMatMulV3)") {
    struct bmm_case {
        shape x, y;
        bool adj_x, adj_y;
        shape out;
    };
    const std::vector<bmm_case> cases{
        {{2, 3, 5, 7}, {2, 3, 7, 4}, false, false, {2, 3, 5, 4}},       // same batch dims
        {{2, 1, 5, 7}, {3, 7, 4}, false, false, {2, 3, 5, 4}},          // both sides broadcast
        {{4, 5, 7}, {7, 6}, false, false, {4, 5, 6}},                   // y is one matrix
        {{7, 5}, {3, 2, 7, 6}, true, false, {3, 2, 5, 6}},              // x is one matrix, adj_x
        {{1, 3, 7, 5}, {2, 1, 6, 7}, true, true, {2, 3, 5, 6}},         // adj_x and adj_y
        {{3, 1, 2, 5, 7}, {4, 1, 7, 6}, false, false, {3, 4, 2, 5, 6}}, // broadcast in the middle
        {{2, 3, 1, 5, 7}, {2, 3, 4, 7, 6}, false, false, {2, 3, 4, 5, 6}},
    };
    for (const auto& c : cases) {
        INFO("x " << c.x.str() << " y " << c.y.str());
        builder t;
        auto y = t.b.op("BatchMatMulV2", {t.input("x", c.x, 7), t.input("y", c.y, 8)},
                        {{"adj_x", c.adj_x}, {"adj_y", c.adj_y}});
        const tensor r = t.check({y})[0];
        CHECK(r.shape() == c.out);
    }
    {
        // [1,2,2] x [2,2,1] broadcasts x: [[1,2],[3,4]] times [1,2] and [2,0].
        builder t;
        auto y = t.b.op("BatchMatMulV2", {t.feed("x", tensor::from_vector<float>({1, 2, 2}, {1, 2, 3, 4})),
                                          t.feed("y", tensor::from_vector<float>({2, 2, 1}, {1, 1, 2, 0}))});
        const tensor r = t.check({y})[0];
        REQUIRE(r.shape() == shape{2, 2, 1});
        CHECK(at(r, 0) == 3.f);
        CHECK(at(r, 1) == 7.f);
        CHECK(at(r, 2) == 2.f);
        CHECK(at(r, 3) == 6.f);
    }
    {
        builder t;
        auto y = t.b.op("BatchMatMul", {t.input("x", {3, 4, 5}, 9), t.input("y", {3, 6, 5}, 10)}, {{"adj_y", true}});
        t.check({y});
    }
    {
        builder t;
        auto y = t.b.op("BatchMatMulV3", {t.input("x", {2, 1, 4, 5}, 11), t.input("y", {3, 5, 6}, 12)},
                        {{"Tout", dtype::float32}});
        CHECK(t.check({y})[0].shape() == shape{2, 3, 4, 6});
    }
}

TEST_CASE("gpu nn: Conv2D NHWC and NCHW, SAME/VALID, strides 1/2, dilations 1/2") {
    for (bool nhwc : {true, false})
        for (const auto& k : conv_cases()) {
            INFO((nhwc ? "NHWC " : "NCHW ") << k.padding << " stride " << k.stride << " dilation " << k.dilation
                                            << " filter " << k.kh << "x" << k.kw);
            builder t;
            auto x = t.input("x", image(k.n, k.h, k.w, k.c, nhwc), 1);
            auto w = t.input("w", {k.kh, k.kw, k.c, k.oc}, 2);
            auto y = t.b.op("Conv2D", {x, w},
                            {{"strides", spatial(k.stride, k.stride, nhwc)},
                             {"dilations", spatial(k.dilation, k.dilation, nhwc)},
                             {"padding", k.padding},
                             {"data_format", nhwc ? "NHWC" : "NCHW"}});
            const tensor r = t.check({y})[0];
            const std::int64_t oh = out_size(k.h, k.kh, k.stride, k.dilation, k.padding);
            const std::int64_t ow = out_size(k.w, k.kw, k.stride, k.dilation, k.padding);
            CHECK(r.shape() == image(k.n, oh, ow, k.oc, nhwc));
        }
}

TEST_CASE("gpu nn: Conv2D EXPLICIT asymmetric padding, K > 256 and TF's 2x2 stride-2 SAME figures") {
    for (bool nhwc : {true, false}) {
        INFO((nhwc ? "NHWC" : "NCHW"));
        {
            builder t;  // pads (1, 2) rows and (2, 0) columns
            auto y = t.b.op("Conv2D", {t.input("x", image(1, 5, 6, 2, nhwc), 5), t.input("w", {2, 2, 2, 3}, 6)},
                            {{"strides", spatial(1, 2, nhwc)},
                             {"dilations", spatial(2, 2, nhwc)},
                             {"padding", "EXPLICIT"},
                             {"explicit_paddings", nhwc ? int_list({0, 0, 1, 2, 2, 0, 0, 0})
                                                        : int_list({0, 0, 0, 0, 1, 2, 2, 0})},
                             {"data_format", nhwc ? "NHWC" : "NCHW"}});
            t.check({y});
        }
        {
            builder t;
            // K = 3*3*32 = 288 terms that cancel: the error is measured against the same
            // convolution of |x| and |w| (a timed algorithm choice was 2.7e-4 off y itself).
            const graft::attr_list attrs{{"strides", spatial(1, 1, nhwc)}, {"padding", "SAME"},
                                         {"data_format", nhwc ? "NHWC" : "NCHW"}};
            auto x = t.input("x", image(2, 8, 8, 32, nhwc), 7);
            auto w = t.input("w", {3, 3, 32, 8}, 8);
            auto y = t.b.op("Conv2D", {x, w}, attrs);
            auto y_abs = t.b.op("Conv2D", {t.b.op("Abs", {x}), t.b.op("Abs", {w})}, attrs);
            t.magnitude_of = {1, -1};
            t.check({y, y_abs});
        }
    }
    // tensorflow/python/kernel_tests/nn_ops/conv_ops_test.py testConv2D2x2FilterStride2Same.
    builder t;
    auto y = t.b.op("Conv2D", {t.feed("x", iota({1, 2, 3, 3})), t.feed("w", iota({2, 2, 3, 3}))},
                    {{"strides", int_list({1, 2, 2, 1})}, {"padding", "SAME"}});
    const tensor r = t.check({y})[0];
    REQUIRE(r.shape() == shape{1, 1, 2, 3});
    const float want[] = {2271, 2367, 2463, 1230, 1305, 1380};
    for (int i = 0; i < 6; ++i) CHECK(at(r, i) == want[i]);
}

TEST_CASE("gpu nn: Conv2DBackpropInput and Conv2DBackpropFilter, NHWC and NCHW") {
    for (bool nhwc : {true, false})
        for (const auto& k : conv_cases()) {
            INFO((nhwc ? "NHWC " : "NCHW ") << k.padding << " stride " << k.stride << " dilation " << k.dilation
                                            << " filter " << k.kh << "x" << k.kw);
            const std::int64_t oh = out_size(k.h, k.kh, k.stride, k.dilation, k.padding);
            const std::int64_t ow = out_size(k.w, k.kw, k.stride, k.dilation, k.padding);
            const shape xs = image(k.n, k.h, k.w, k.c, nhwc);
            const graft::attr_list attrs{{"strides", spatial(k.stride, k.stride, nhwc)},
                                         {"dilations", spatial(k.dilation, k.dilation, nhwc)},
                                         {"padding", k.padding},
                                         {"data_format", nhwc ? "NHWC" : "NCHW"}};
            builder t;
            auto x = t.input("x", xs, 1);
            auto w = t.input("w", {k.kh, k.kw, k.c, k.oc}, 2);
            auto dy = t.input("dy", image(k.n, oh, ow, k.oc, nhwc), 3);
            std::vector<std::int32_t> sizes;
            for (auto d : xs.dims()) sizes.push_back(static_cast<std::int32_t>(d));
            auto dx = t.b.op("Conv2DBackpropInput", {t.ints(sizes), w, dy}, attrs);
            // A filter-gradient entry sums N*OH*OW products (180 here) of values in [-1, 1) that
            // cancel; cuDNN (its algorithm may be picked by timing, GRAFT_CUDNN_AUTOTUNE=1, and then
            // varies between runs) and the CPU add them in other orders. On the H200 that gave 1.2e-5 and 2.1e-5 of the entry itself,
            // so dw's error is measured against the same gradient of |x| and |dy| (no cancellation).
            const std::vector<std::int32_t> dw_sizes{static_cast<std::int32_t>(k.kh), static_cast<std::int32_t>(k.kw),
                                                     static_cast<std::int32_t>(k.c), static_cast<std::int32_t>(k.oc)};
            auto dw = t.b.op("Conv2DBackpropFilter", {x, t.ints(dw_sizes), dy}, attrs);
            auto dw_abs = t.b.op("Conv2DBackpropFilter", {t.b.op("Abs", {x}), t.ints(dw_sizes), t.b.op("Abs", {dy})}, attrs);
            t.magnitude_of = {-1, 2, -1};
            const auto r = t.check({dx, dw, dw_abs});
            CHECK(r[0].shape() == xs);
            CHECK(r[1].shape() == shape{k.kh, k.kw, k.c, k.oc});
        }
    // conv_ops_test.py testConv2D2x2Depth3ValidBackpropInput / ...BackpropFilter.
    builder t;
    const graft::attr_list valid{{"strides", int_list({1, 1, 1, 1})}, {"padding", "VALID"}};
    auto dx = t.b.op("Conv2DBackpropInput", {t.ints({1, 2, 3, 3}), t.feed("w", iota({2, 2, 3, 3})),
                                             t.feed("dy", iota({1, 1, 2, 3}))},
                     valid);
    auto dw = t.b.op("Conv2DBackpropFilter", {t.feed("x", iota({1, 2, 3, 3})), t.ints({2, 2, 3, 3}), t.feed("dy2", iota({1, 1, 2, 3}))},
                     valid);
    const auto r = t.check({dx, dw});
    const float want_dx[] = {14, 32, 50, 100, 163, 226, 167, 212, 257, 122, 140, 158, 478, 541, 604, 437, 482, 527};
    for (int i = 0; i < 18; ++i) CHECK(at(r[0], i) == want_dx[i]);
    const float want_dw[] = {17, 22, 27, 22, 29, 36, 27, 36, 45, 32, 43, 54, 37, 50, 63, 42, 57, 72,
                             62, 85, 108, 67, 92, 117, 72, 99, 126, 77, 106, 135, 82, 113, 144, 87, 120, 153};
    for (int i = 0; i < 36; ++i) CHECK(at(r[1], i) == want_dw[i]);
}

TEST_CASE("gpu nn: Conv2DBackpropFilter summing over more than 256 pixels") {
    builder t;
    t.rtol = 1e-4;  // N*OH*OW = 2*16*16 = 512 terms per filter entry
    auto dw = t.b.op("Conv2DBackpropFilter",
                     {t.input("x", {2, 16, 16, 3}, 1), t.ints({3, 3, 3, 4}), t.input("dy", {2, 16, 16, 4}, 2)},
                     {{"strides", int_list({1, 1, 1, 1})}, {"padding", "SAME"}});
    t.check({dw});
}

TEST_CASE("gpu nn: MaxPool, AvgPool, MaxPoolGrad and AvgPoolGrad, NHWC and NCHW, SAME and VALID") {
    struct pool_case {
        std::int64_t k, s;
        std::string padding;
    };
    for (bool nhwc : {true, false})
        for (const auto& p : {pool_case{2, 2, "VALID"}, pool_case{3, 2, "SAME"}, pool_case{3, 1, "SAME"},
                              pool_case{2, 2, "SAME"}, pool_case{3, 2, "VALID"}}) {
            INFO((nhwc ? "NHWC " : "NCHW ") << p.padding << " ksize " << p.k << " stride " << p.s);
            const graft::attr_list attrs{{"ksize", spatial(p.k, p.k, nhwc)},
                                         {"strides", spatial(p.s, p.s, nhwc)},
                                         {"padding", p.padding},
                                         {"data_format", nhwc ? "NHWC" : "NCHW"}};
            const std::int64_t oh = out_size(9, p.k, p.s, 1, p.padding), ow = out_size(10, p.k, p.s, 1, p.padding);
            const shape xs = image(2, 9, 10, 3, nhwc);
            builder t;
            auto x = t.input("x", xs, 1);
            auto dy = t.input("dy", image(2, oh, ow, 3, nhwc), 2);
            auto mx = t.b.op("MaxPool", {x}, attrs);
            auto av = t.b.op("AvgPool", {x}, attrs);
            auto dmx = t.b.op("MaxPoolGrad", {x, mx, dy}, attrs);
            std::vector<std::int32_t> sizes;
            for (auto d : xs.dims()) sizes.push_back(static_cast<std::int32_t>(d));
            auto dav = t.b.op("AvgPoolGrad", {t.ints(sizes), dy}, attrs);
            const auto r = t.check({mx, av, dmx, dav});
            CHECK(r[0].shape() == image(2, oh, ow, 3, nhwc));
            CHECK(r[2].shape() == xs);
            CHECK(r[3].shape() == xs);
        }
    // pooling_ops_test.py testAvgPoolSamePadding and testMaxPoolSamePadding (inputs 1, 2, 3, ...).
    builder t;
    const graft::attr_list p2s2{{"ksize", int_list({1, 2, 2, 1})}, {"strides", int_list({1, 2, 2, 1})}, {"padding", "SAME"}};
    auto av = t.b.op("AvgPool", {t.feed("a", iota({1, 2, 4, 3}))}, p2s2);
    auto mx = t.b.op("MaxPool", {t.feed("m", iota({1, 2, 3, 3}))}, p2s2);
    const auto r = t.check({av, mx});
    const float want_av[] = {8.5f, 9.5f, 10.5f, 14.5f, 15.5f, 16.5f};
    const float want_mx[] = {13, 14, 15, 16, 17, 18};
    for (int i = 0; i < 6; ++i) {
        CHECK(at(r[0], i) == doctest::Approx(want_av[i]));
        CHECK(at(r[1], i) == want_mx[i]);
    }
}

TEST_CASE("gpu nn: Softmax and LogSoftmax over the last axis") {
    for (const shape& s : {shape{7, 13}, shape{2, 3, 5}, shape{6}, shape{4, 1}}) {
        INFO(s.str());
        builder t;
        auto x = t.input("x", s, 3, -5.f, 5.f);
        auto big = t.input("big", s, 4, -80.f, 80.f);  // exp would overflow without the max shift
        auto r = t.check({t.b.op("Softmax", {x}), t.b.op("LogSoftmax", {x}), t.b.op("Softmax", {big}),
                          t.b.op("LogSoftmax", {big})});
        CHECK(r[0].shape() == s);
    }
    builder t;
    auto x = t.feed("x", tensor::from_vector<float>({1, 3}, {1, 2, 3}));
    const auto r = t.check({t.b.op("Softmax", {x}), t.b.op("LogSoftmax", {x})});
    const double want[] = {0.09003057317038046, 0.24472847105479767, 0.6652409557748219};
    for (int i = 0; i < 3; ++i) {
        CHECK(at(r[0], i) == doctest::Approx(want[i]).epsilon(1e-6));
        CHECK(at(r[1], i) == doctest::Approx(std::log(want[i])).epsilon(1e-6));
    }
}

TEST_CASE("gpu nn: FusedBatchNormV3 training and inference, NHWC and NCHW (and V1, V2)") {
    const std::int64_t C = 5;
    for (bool nhwc : {true, false})
        for (bool training : {true, false})
            for (float factor : {1.0f, 0.3f}) {
                INFO((nhwc ? "NHWC" : "NCHW") << " is_training " << training << " exponential_avg_factor " << factor);
                builder t;
                auto x = t.input("x", image(3, 4, 6, C, nhwc), 1, -2.f, 3.f);
                auto scale = t.input("scale", {C}, 2, 0.5f, 1.5f);
                auto offset = t.input("offset", {C}, 3);
                auto mean = t.input("mean", {C}, 4);
                auto var = t.input("var", {C}, 5, 0.5f, 2.f);
                auto outs = t.b.op_n("FusedBatchNormV3", {x, scale, offset, mean, var},
                                     {{"epsilon", 0.001f},
                                      {"exponential_avg_factor", factor},
                                      {"is_training", training},
                                      {"data_format", nhwc ? "NHWC" : "NCHW"}});
                REQUIRE(outs.size() == 6u);
                const auto r = t.check(outs);
                CHECK(r[0].shape() == image(3, 4, 6, C, nhwc));
                CHECK(r[5].shape() == shape{});
            }
    // Training with empty running statistics (factor 1), every version.
    for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}) {
        INFO(op);
        builder t;
        auto outs = t.b.op_n(op, {t.input("x", {2, 3, 3, 4}, 6), t.input("scale", {4}, 7), t.input("offset", {4}, 8),
                                  t.feed("mean", tensor(dtype::float32, shape{0})),
                                  t.feed("var", tensor(dtype::float32, shape{0}))},
                             {{"epsilon", 0.0001f}});
        t.check(outs);
    }
    // x [1,2,1,2] NHWC: channel 0 holds {1, 3} (mean 2, variance 1), channel 1 {10, 20} (mean 15,
    // variance 25); the running variance is Bessel-corrected (2, 50), the reserve space is not.
    builder t;
    auto outs = t.b.op_n("FusedBatchNormV3",
                         {t.feed("x", tensor::from_vector<float>({1, 2, 1, 2}, {1, 10, 3, 20})),
                          t.feed("scale", tensor::from_vector<float>({2}, {1, 2})),
                          t.feed("offset", tensor::from_vector<float>({2}, {0, 1})),
                          t.feed("mean", tensor(dtype::float32, shape{0})), t.feed("var", tensor(dtype::float32, shape{0}))},
                         {{"epsilon", 0.001f}});
    const auto r = t.check(outs);
    CHECK(at(r[1], 0) == doctest::Approx(2));
    CHECK(at(r[1], 1) == doctest::Approx(15));
    CHECK(at(r[2], 0) == doctest::Approx(2));
    CHECK(at(r[2], 1) == doctest::Approx(50));
    CHECK(at(r[4], 0) == doctest::Approx(1));
    CHECK(at(r[4], 1) == doctest::Approx(25));
    CHECK(at(r[0], 0) == doctest::Approx(-1 / std::sqrt(1.001)));
}

// NHWC batch norm sums over row blocks of 32 channels x 8 rows, then adds the blocks' partials
// (H200, 2026-11-27: the one-block-per-channel kernels took 32 of ResNet-18's 125 ms step). 4096
// rows give 32 row blocks; 3, 37 and 64 channels give a partial channel block, and one of two. The
// CPU reference sums in float32 over 4096 rows, hence 1e-4, and y (normalized, O(1)) is compared
// with an absolute floor of 1e-5 where it crosses 0 (the H200 saw 3e-6 there: the CPU's float32 mean
// over 4096 rows is off by ~5e-6 / std). An indexing slip is off by O(1).
TEST_CASE("gpu nn: FusedBatchNormV3 and its gradient over NHWC row blocks (3, 37, 64 channels, 4096 rows)") {
    for (std::int64_t C : {3, 37, 64}) {
        INFO("channels " << C);
        builder t;
        t.rtol = 1e-4;
        const graft::attr_list attrs{{"epsilon", 0.001f}, {"is_training", true}, {"data_format", "NHWC"}};
        auto x = t.input("x", {4, 32, 32, C}, 1, 2.f, 5.f);  // mean 3.5, far from row 0's values
        auto scale = t.input("scale", {C}, 2, 0.5f, 1.5f);
        auto fwd = t.b.op_n("FusedBatchNormV3",
                            {x, scale, t.input("offset", {C}, 3), t.feed("mean", tensor(dtype::float32, shape{0})),
                             t.feed("var", tensor(dtype::float32, shape{0}))},
                            attrs);
        auto grads = t.b.op_n("FusedBatchNormGradV3", {t.input("dy", {4, 32, 32, C}, 6), x, scale, fwd[3], fwd[4], fwd[5]},
                              attrs);
        const auto r = t.check({fwd[0], fwd[1], fwd[2], grads[0], grads[1], grads[2]}, 1e-5);
        // The ramp's values are evenly spread over [2, 5): mean 3.5 and variance about 9/12 per channel.
        for (std::int64_t ch = 0; ch < C; ++ch) {
            CHECK(r[1].data<float>()[ch] == doctest::Approx(3.5).epsilon(0.05));
            CHECK(r[2].data<float>()[ch] == doctest::Approx(0.75).epsilon(0.1));
        }
    }
}

TEST_CASE("gpu nn: FusedBatchNormGradV3 (training and inference, NHWC and NCHW) and Grad/GradV2") {
    const std::int64_t C = 4;
    for (bool nhwc : {true, false})
        for (bool training : {true, false}) {
            INFO((nhwc ? "NHWC" : "NCHW") << " is_training " << training);
            const graft::attr_list attrs{{"epsilon", 0.001f}, {"is_training", training},
                                         {"data_format", nhwc ? "NHWC" : "NCHW"}};
            builder t;
            auto x = t.input("x", image(2, 5, 3, C, nhwc), 1, -1.f, 2.f);
            auto scale = t.input("scale", {C}, 2, 0.5f, 1.5f);
            auto fwd = t.b.op_n("FusedBatchNormV3",
                                {x, scale, t.input("offset", {C}, 3), t.input("mean", {C}, 4),
                                 t.input("var", {C}, 5, 0.5f, 2.f)},
                                attrs);
            auto dy = t.input("dy", image(2, 5, 3, C, nhwc), 6);
            auto grads = t.b.op_n("FusedBatchNormGradV3", {dy, x, scale, fwd[3], fwd[4], fwd[5]}, attrs);
            REQUIRE(grads.size() == 5u);
            const auto r = t.check(grads);
            CHECK(r[0].shape() == image(2, 5, 3, C, nhwc));
            CHECK(r[3].shape() == shape{0});
        }
    for (const char* op : {"FusedBatchNormGrad", "FusedBatchNormGradV2"}) {
        INFO(op);
        builder t;
        auto grads = t.b.op_n(op, {t.input("dy", {2, 3, 3, 4}, 1), t.input("x", {2, 3, 3, 4}, 2), t.input("scale", {4}, 3),
                                   t.input("m", {4}, 4), t.input("v", {4}, 5, 0.5f, 2.f)});
        t.check(grads);
    }
    // Inference-mode gradient in closed form: dx = dy * scale / sqrt(var + eps), doffset = sum(dy).
    builder t;
    const tensor x = tensor::from_vector<float>({1, 2, 1, 2}, {1, 10, 3, 20});
    auto grads = t.b.op_n("FusedBatchNormGradV3",
                          {t.feed("dy", tensor::from_vector<float>({1, 2, 1, 2}, {0.5f, -1, 2, 3})), t.feed("x", x),
                           t.feed("scale", tensor::from_vector<float>({2}, {1, 2})),
                           t.feed("m", tensor::from_vector<float>({2}, {1, 12})),
                           t.feed("v", tensor::from_vector<float>({2}, {4, 9})), t.feed("r3", tensor(dtype::float32, shape{0}))},
                          {{"epsilon", 0.001f}, {"is_training", false}});
    const auto r = t.check(grads);
    CHECK(at(r[0], 0) == doctest::Approx(0.5 / std::sqrt(4.001)));
    CHECK(at(r[0], 1) == doctest::Approx(-2 / std::sqrt(9.001)));
    CHECK(at(r[2], 0) == doctest::Approx(2.5));
    CHECK(at(r[2], 1) == doctest::Approx(2));
}

}  // namespace gpu_nn_test
