// The image family through graft::exec::session: the resize ops (bilinear, nearest, bicubic, area;
// align_corners / half_pixel_centers) against float64 references written here from TF's sampling
// rules, colour-space ops and adjustments, NonMaxSuppression V1-V5 on TF's own test boxes,
// DrawBoundingBoxesV2, bad-input errors, and the gradients of ResizeBilinear,
// ResizeNearestNeighbor, AdjustContrastv2 and CropAndResize (image and boxes) through graft's checker.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "graft/autodiff/check.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "support/tensors.hpp"

// One namespace per file: the opsets tests build as one binary in unity batches.
namespace graft_test_image {

using namespace graft::test;  // f32, f64, i32, i64, values

using graft::dtype;
using graft::endpoint;
using graft::shape;
using graft::tensor;

namespace {

void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i);
        CHECK(got[i] == doctest::Approx(want[i]).epsilon(tol).scale(1.0));
    }
}

std::vector<tensor> run1(const std::string& op, const std::vector<tensor>& ins, graft::attr_list attrs = {}, int outs = 1) {
    graft::graph g;
    graft::graph_builder b(g);
    std::vector<endpoint> in;
    for (auto& t : ins) in.push_back(b.constant(t));
    b.add(op, in, std::move(attrs), "node");
    std::vector<std::string> f;
    for (int i = 0; i < outs; ++i) f.push_back(i == 0 ? std::string("node") : "node:" + std::to_string(i));
    graft::exec::session s(g);
    return s.run({}, f);
}

/// A [1, h, w, 1] image with pixel (y, x) = 10 y + x + sin(y x).
std::vector<double> image(int h, int w) {
    std::vector<double> v;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) v.push_back(10.0 * y + x + std::sin(static_cast<double>(y * x)));
    return v;
}

/// Where output pixel i samples the input (float64 copy of TF's scale rules).
double source(int i, int in, int out, bool align, bool half) {
    const double scale = (align && out > 1) ? double(in - 1) / (out - 1) : double(in) / out;
    return half ? (i + 0.5) * scale - 0.5 : i * scale;
}

std::vector<double> bilinear_ref(const std::vector<double>& img, int h, int w, int oh, int ow, bool align, bool half) {
    std::vector<double> out;
    for (int y = 0; y < oh; ++y) {
        const double sy = source(y, h, oh, align, half);
        const int y0 = std::max(0, static_cast<int>(std::floor(sy))), y1 = std::min(h - 1, static_cast<int>(std::ceil(sy)));
        const double ly = sy - std::floor(sy);
        for (int x = 0; x < ow; ++x) {
            const double sx = source(x, w, ow, align, half);
            const int x0 = std::max(0, static_cast<int>(std::floor(sx))), x1 = std::min(w - 1, static_cast<int>(std::ceil(sx)));
            const double lx = sx - std::floor(sx);
            auto at = [&](int yy, int xx) { return img[static_cast<std::size_t>(yy * w + xx)]; };
            const double top = at(y0, x0) + (at(y0, x1) - at(y0, x0)) * lx;
            const double bot = at(y1, x0) + (at(y1, x1) - at(y1, x0)) * lx;
            out.push_back(top + (bot - top) * ly);
        }
    }
    return out;
}

}  // namespace

TEST_CASE("ResizeBilinear: float64 reference for legacy, align_corners and half_pixel_centers; int input gives float") {
    const auto img = image(3, 4);
    for (auto [align, half] : {std::pair{false, false}, std::pair{true, false}, std::pair{false, true}}) {
        for (auto [oh, ow] : {std::pair{5, 7}, std::pair{2, 3}, std::pair{3, 4}}) {
            auto out = run1("ResizeBilinear", {f64({1, 3, 4, 1}, img), i32({2}, {oh, ow})},
                            {{"align_corners", align}, {"half_pixel_centers", half}});
            const int h = oh, w = ow;  // doctest's INFO captures: plain variables, not the bindings
            const bool al = align, hp = half;
            INFO("align " << al << " half " << hp << " size " << h << "x" << w);
            CHECK(out[0].type() == dtype::float32);
            CHECK(out[0].shape() == shape{1, oh, ow, 1});
            check_close(values(out[0]), bilinear_ref(img, 3, 4, oh, ow, align, half), 1e-5);
        }
    }
    // TF's doc example: [[1, 2], [3, 4]] to 3x3 with align_corners puts the means between.
    auto ints = run1("ResizeBilinear", {i32({1, 2, 2, 1}, {1, 2, 3, 4}), i32({2}, {3, 3})}, {{"align_corners", true}});
    check_close(values(ints[0]), {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4}, 1e-6);
    CHECK_THROWS_WITH_AS(run1("ResizeBilinear", {f32({2, 2, 1}, {1, 2, 3, 4}), i32({2}, {3, 3})}),
                         doctest::Contains("must be 4-D"), graft::error);
    CHECK_THROWS_WITH_AS(run1("ResizeBilinear", {f32({1, 2, 2, 1}, {1, 2, 3, 4}), i32({2}, {0, 3})}),
                         doctest::Contains("size must be positive"), graft::error);
    CHECK_THROWS_WITH_AS(run1("ResizeBilinear", {f32({1, 2, 2, 1}, {1, 2, 3, 4}), i32({2}, {3, 3})},
                              {{"align_corners", true}, {"half_pixel_centers", true}}),
                         doctest::Contains("align_corners must be false"), graft::error);
}

TEST_CASE("ResizeNearestNeighbor keeps the dtype and picks TF's pixels (floor, round with align_corners, half pixel)") {
    // 1x4 row [10, 20, 30, 40] to width 3 / 6
    auto row = i32({1, 1, 4, 1}, {10, 20, 30, 40});
    auto legacy = run1("ResizeNearestNeighbor", {row, i32({2}, {1, 3})});
    CHECK(legacy[0].type() == dtype::int32);
    CHECK(values(legacy[0]) == std::vector<double>{10, 20, 30});   // floor(x * 4/3): 0, 1, 2
    auto align = run1("ResizeNearestNeighbor", {row, i32({2}, {1, 3})}, {{"align_corners", true}});
    CHECK(values(align[0]) == std::vector<double>{10, 30, 40});    // round(x * 3/2): 0, 2, 3 (1.5 rounds up)
    auto half = run1("ResizeNearestNeighbor", {row, i32({2}, {1, 6})}, {{"half_pixel_centers", true}});
    CHECK(values(half[0]) == std::vector<double>{10, 20, 20, 30, 40, 40});  // floor((x + .5) * 2/3)
}

TEST_CASE("ResizeBicubic: exact on constant and linear images inside; TF's legacy and Keys kernels") {
    // A constant image stays constant with either kernel (weights sum to 1).
    for (bool half : {false, true}) {
        auto out = run1("ResizeBicubic", {f32({1, 3, 3, 2}, std::vector<float>(18, 2.5f)), i32({2}, {5, 4})},
                        {{"half_pixel_centers", half}});
        check_close(values(out[0]), std::vector<double>(40, 2.5), 1e-6);
    }
    // Upsampling by 2 with the legacy kernel: output pixel 2k samples input k exactly.
    const auto img = image(4, 4);
    auto up = run1("ResizeBicubic", {f64({1, 4, 4, 1}, img), i32({2}, {8, 8})});
    CHECK(up[0].type() == dtype::float32);
    auto v = values(up[0]);
    for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 4; ++x) CHECK(v[static_cast<std::size_t>(2 * y * 8 + 2 * x)] == doctest::Approx(img[static_cast<std::size_t>(y * 4 + x)]).epsilon(1e-5));
    // Keys (A = -0.5) reproduces a linear ramp away from the borders: 1x8 ramp to 1x16, half pixel.
    std::vector<double> ramp{0, 1, 2, 3, 4, 5, 6, 7};
    auto k = values(run1("ResizeBicubic", {f64({1, 1, 8, 1}, ramp), i32({2}, {1, 16})}, {{"half_pixel_centers", true}})[0]);
    for (int x = 4; x < 12; ++x) CHECK(k[static_cast<std::size_t>(x)] == doctest::Approx((x + 0.5) * 0.5 - 0.5).epsilon(1e-5));
}

TEST_CASE("ResizeArea: area-weighted means of the covered pixels") {
    // 4x4 to 2x2: each output is the mean of a 2x2 block.
    const auto img = image(4, 4);
    auto out = values(run1("ResizeArea", {f64({1, 4, 4, 1}, img), i32({2}, {2, 2})})[0]);
    for (int y = 0; y < 2; ++y)
        for (int x = 0; x < 2; ++x) {
            double m = 0;
            for (int dy = 0; dy < 2; ++dy)
                for (int dx = 0; dx < 2; ++dx) m += img[static_cast<std::size_t>((2 * y + dy) * 4 + 2 * x + dx)] / 4;
            CHECK(out[static_cast<std::size_t>(y * 2 + x)] == doctest::Approx(m).epsilon(1e-5));
        }
    // 1x3 to 1x2: the middle pixel is split half and half.
    auto r = values(run1("ResizeArea", {f32({1, 1, 3, 1}, {3, 6, 9}), i32({2}, {1, 2})})[0]);
    check_close(r, {(3 + 0.5 * 6) / 1.5, (0.5 * 6 + 9) / 1.5}, 1e-6);
}

TEST_CASE("RGBToHSV / HSVToRGB: primaries, greys, round trip; float64 stays float64") {
    auto hsv = run1("RGBToHSV", {f64({5, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1, 0.5, 0.5, 0.5, 0.2, 0.4, 0.8})});
    CHECK(hsv[0].type() == dtype::float64);
    // (0.2, 0.4, 0.8): v 0.8, s 0.75, h = (4 + (0.2 - 0.4) / 0.6) / 6
    check_close(values(hsv[0]), {0, 1, 1, 1.0 / 3, 1, 1, 2.0 / 3, 1, 1, 0, 0, 0.5, (4 - 1.0 / 3) / 6, 0.75, 0.8}, 1e-12);
    auto back = run1("HSVToRGB", {hsv[0]});
    check_close(values(back[0]), {1, 0, 0, 0, 1, 0, 0, 0, 1, 0.5, 0.5, 0.5, 0.2, 0.4, 0.8}, 1e-12);
    CHECK_THROWS_WITH_AS(run1("RGBToHSV", {f32({2, 2}, {1, 2, 3, 4})}), doctest::Contains("must be 3"), graft::error);
}

TEST_CASE("AdjustContrastv2, AdjustSaturation and AdjustHue") {
    // two images [2, 1, 2, 2]: per image and channel (x - mean) * 2 + mean
    auto c = run1("AdjustContrastv2", {f32({2, 1, 2, 2}, {1, 10, 3, 20, 0, 5, 4, 5}), tensor::scalar_of(2.0f)});
    check_close(values(c[0]), {0, 5, 4, 25, -2, 5, 6, 5}, 1e-6);
    auto empty = run1("AdjustContrastv2", {f32({0, 2, 2, 3}, {}), tensor::scalar_of(0.5f)});
    CHECK(empty[0].shape() == shape{0, 2, 2, 3});
    CHECK_THROWS_WITH_AS(run1("AdjustContrastv2", {f32({2, 2}, {1, 2, 3, 4}), tensor::scalar_of(2.0f)}),
                         doctest::Contains("at least 3-D"), graft::error);
    // saturation 0 gives grey at the value (the max channel); hue + 1/3 turns red into green
    auto s = run1("AdjustSaturation", {f32({1, 1, 2, 3}, {0.2f, 0.4f, 0.8f, 1, 0, 0}), tensor::scalar_of(0.0f)});
    check_close(values(s[0]), {0.8, 0.8, 0.8, 1, 1, 1}, 1e-6);
    auto s2 = run1("AdjustSaturation", {f32({1, 3}, {0.4f, 0.6f, 0.8f}), tensor::scalar_of(2.0f)});
    check_close(values(s2[0]), {0.0, 0.4, 0.8}, 1e-6);  // s 0.5 -> 1: min channel to 0, same hue
    auto h = run1("AdjustHue", {f32({2, 3}, {1, 0, 0, 0.2f, 0.4f, 0.8f}), tensor::scalar_of(1.0f / 3)});
    check_close(values(h[0]), {0, 1, 0, 0.8, 0.2, 0.4}, 1e-5);
}

TEST_CASE("NonMaxSuppression V1-V5 on TF's three clusters, score threshold, padding and soft NMS") {
    auto boxes = f32({6, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f, 0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100, 1, 101});
    auto scores = f32({6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f});
    auto three = tensor::scalar_of(std::int32_t{3});
    auto v1 = run1("NonMaxSuppression", {boxes, scores, three}, {{"iou_threshold", 0.5f}});
    CHECK(values(v1[0]) == std::vector<double>{3, 0, 5});
    auto v2 = run1("NonMaxSuppressionV2", {boxes, scores, three, tensor::scalar_of(0.5f)});
    CHECK(values(v2[0]) == std::vector<double>{3, 0, 5});
    auto v3 = run1("NonMaxSuppressionV3", {boxes, scores, three, tensor::scalar_of(0.5f), tensor::scalar_of(0.4f)});
    CHECK(values(v3[0]) == std::vector<double>{3, 0});
    auto v4 = run1("NonMaxSuppressionV4",
                   {boxes, scores, tensor::scalar_of(std::int32_t{5}), tensor::scalar_of(0.5f), tensor::scalar_of(0.4f)},
                   {{"pad_to_max_output_size", true}}, 2);
    CHECK(values(v4[0]) == std::vector<double>{3, 0, 0, 0, 0});
    CHECK(values(v4[1]) == std::vector<double>{2});
    // soft NMS (sigma 0.5): overlapping boxes are kept with decayed scores
    auto v5 = run1("NonMaxSuppressionV5",
                   {boxes, scores, tensor::scalar_of(std::int32_t{6}), tensor::scalar_of(1.0f), tensor::scalar_of(0.0f),
                    tensor::scalar_of(0.5f)},
                   {}, 3);
    CHECK(values(v5[0]) == std::vector<double>{3, 0, 1, 5, 4, 2});
    check_close(values(v5[1]), {0.95, 0.9, 0.384, 0.3, 0.256, 0.197}, 3e-3);
    CHECK(values(v5[2]) == std::vector<double>{6});
    CHECK_THROWS_WITH_AS(run1("NonMaxSuppressionV2", {boxes, f32({5}, {1, 2, 3, 4, 5}), three, tensor::scalar_of(0.5f)}),
                         doctest::Contains("scores must be [num_boxes]"), graft::error);
    CHECK_THROWS_WITH_AS(run1("NonMaxSuppressionV2", {boxes, scores, three, tensor::scalar_of(1.5f)}),
                         doctest::Contains("iou_threshold must be in [0, 1]"), graft::error);
}

TEST_CASE("DrawBoundingBoxesV2 outlines boxes in the given colours, clipped to the image") {
    std::vector<float> zeros(1 * 4 * 5 * 3, 0.0f);
    // box rows 0..3 (y 0..1), cols 1..3 (x 0.25..0.75 of width-1 = 4)
    auto out = run1("DrawBoundingBoxesV2", {f32({1, 4, 5, 3}, zeros), f32({1, 1, 4}, {0, 0.25f, 1, 0.75f}),
                                            f32({1, 4}, {0.5f, 0.25f, 1, 1})});
    auto v = values(out[0]);
    auto px = [&](int y, int x) {
        return std::vector<double>{v[static_cast<std::size_t>((y * 5 + x) * 3)], v[static_cast<std::size_t>((y * 5 + x) * 3 + 1)],
                                   v[static_cast<std::size_t>((y * 5 + x) * 3 + 2)]};
    };
    const std::vector<double> colour{0.5, 0.25, 1}, none{0, 0, 0};
    CHECK(px(0, 1) == colour);
    CHECK(px(0, 2) == colour);
    CHECK(px(3, 3) == colour);
    CHECK(px(1, 1) == colour);
    CHECK(px(1, 2) == none);  // inside the box
    CHECK(px(0, 0) == none);
    CHECK(px(2, 4) == none);
    CHECK_THROWS_WITH_AS(run1("DrawBoundingBoxesV2", {f32({1, 4, 5, 2}, std::vector<float>(40)), f32({1, 1, 4}, {0, 0, 1, 1}),
                                                      f32({1, 4}, {1, 1, 1, 1})}),
                         doctest::Contains("channels"), graft::error);
}

TEST_CASE("Gradients of ResizeBilinear, ResizeNearestNeighbor and AdjustContrastv2 match finite differences") {
    const auto img = image(3, 4);
    for (auto modes : {std::pair{false, false}, std::pair{true, false}, std::pair{false, true}}) {
        const bool align = modes.first, half = modes.second;  // captured below: plain variables
        auto r = graft::autodiff::check_gradients(
            [align, half](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
                return std::vector<endpoint>{b.op("ResizeBilinear", {xs[0], b.constant(i32({2}, {5, 3}))},
                                                  {{"align_corners", align}, {"half_pixel_centers", half}})};
            },
            {f64({1, 3, 4, 1}, img)}, {.delta = 1e-2});
        INFO(r.str());
        CHECK(r.max_rel_error < 1e-3);  // the forward op computes in float32
        auto n = graft::autodiff::check_gradients(
            [align, half](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
                return std::vector<endpoint>{b.op("ResizeNearestNeighbor", {xs[0], b.constant(i32({2}, {5, 3}))},
                                                  {{"align_corners", align}, {"half_pixel_centers", half}})};
            },
            {f64({1, 3, 4, 1}, img)});
        INFO(n.str());
        CHECK(n.max_rel_error < 1e-6);
    }
    auto c = graft::autodiff::check_gradients(
        [](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
            auto f = b.op("Cast", {xs[1]}, {{"DstT", dtype::float32}});
            return std::vector<endpoint>{b.op("AdjustContrastv2", {xs[0], f})};
        },
        {f64({2, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, -1, 0.5, 2, 0, 3, 1, 1, 2}), f64({}, {1.5})}, {.delta = 1e-3});
    INFO(c.str());
    CHECK(c.max_rel_error < 1e-3);
}

TEST_CASE("CropAndResize: bilinear and nearest crops, extrapolation outside the image, bad box_ind") {
    auto img = f32({1, 2, 2, 1}, {1, 2, 3, 4});
    auto box_ind = i32({1}, {0});
    auto out = run1("CropAndResize", {img, f32({1, 4}, {0, 0, 1, 1}), box_ind, i32({2}, {3, 3})});
    CHECK(out[0].shape() == shape{1, 3, 3, 1});
    check_close(values(out[0]), {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4}, 1e-6);
    auto nn = run1("CropAndResize", {img, f32({1, 4}, {0, 0, 1, 1}), box_ind, i32({2}, {3, 3})},
                   {{"method", std::string("nearest")}});
    check_close(values(nn[0]), {1, 2, 2, 3, 4, 4, 3, 4, 4}, 1e-6);  // round(0.5) = 1
    // a box reaching past the bottom-right corner: samples outside get the extrapolation value
    auto ex = run1("CropAndResize", {img, f32({1, 4}, {0.5f, 0.5f, 1.5f, 1.5f}), box_ind, i32({2}, {2, 2})},
                   {{"extrapolation_value", -1.0f}});
    check_close(values(ex[0]), {2.5, -1, -1, -1}, 1e-6);
    // a single-pixel crop samples the box centre
    auto c1 = run1("CropAndResize", {img, f32({1, 4}, {0, 0, 1, 1}), box_ind, i32({2}, {1, 1})});
    check_close(values(c1[0]), {2.5}, 1e-6);
    CHECK_THROWS_WITH_AS(run1("CropAndResize", {img, f32({1, 4}, {0, 0, 1, 1}), i32({1}, {1}), i32({2}, {3, 3})}),
                         doctest::Contains("box_ind[0] = 1 is outside [0, 1)"), graft::error);
}

TEST_CASE("Gradients of CropAndResize w.r.t. the image and the boxes match finite differences") {
    const auto img = image(4, 5);
    auto r = graft::autodiff::check_gradients(
        [](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
            auto boxes = b.constant(f32({2, 4}, {0.1f, 0.2f, 0.8f, 0.9f, 0.3f, 0.05f, 0.6f, 0.7f}));
            return std::vector<endpoint>{
                b.op("CropAndResize", {xs[0], boxes, b.constant(i32({2}, {0, 0})), b.constant(i32({2}, {3, 2}))})};
        },
        {f64({1, 4, 5, 1}, img)}, {.delta = 1e-2});
    INFO(r.str());
    CHECK(r.max_rel_error < 1e-3);
    auto rb = graft::autodiff::check_gradients(
        [](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
            auto boxes = b.op("Cast", {xs[1]}, {{"DstT", dtype::float32}});
            return std::vector<endpoint>{b.op("CropAndResize", {b.op("Cast", {xs[0]}, {{"DstT", dtype::float32}}), boxes,
                                                                b.constant(i32({2}, {0, 0})), b.constant(i32({2}, {3, 2}))})};
        },
        {f64({1, 4, 5, 1}, img), f64({2, 4}, {0.1, 0.2, 0.8, 0.9, 0.3, 0.05, 0.6, 0.7})}, {.delta = 1e-3});
    INFO(rb.str());
    CHECK(rb.max_rel_error < 5e-3);
}

}  // namespace graft_test_image
