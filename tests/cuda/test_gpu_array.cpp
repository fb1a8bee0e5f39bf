// The array family on the GPU against the CPU (op_case): Transpose (NHWC <-> NCHW, size-1 dims,
// identity), ConcatV2, Pack, Unpack, Slice, StridedSlice (all five masks, negative strides), Pad,
// PadV2, Tile, GatherV2 (int32/int64 indices, batch_dims), OneHot, Fill, Split and SplitV.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "op_case.hpp"

using graft::dtype;
using graft::shape;
using graft::tensor;

namespace gpu_array_test {

/// One graph under construction, with its feeds.
struct builder {
    graft::graph g;
    graft::graph_builder b{g};
    graft::exec::session::feed_list feeds;

    /// A float32 placeholder `name` fed with deterministic values in [-1, 1).
    graft::endpoint input(const std::string& name, const shape& s, std::uint32_t seed = 1) {
        feeds.emplace_back(name, graft::test_cuda::ramp(s, -1.f, 1.f, seed));
        return b.placeholder(name, dtype::float32, s);
    }
    graft::endpoint feed(const std::string& name, const tensor& t) {
        feeds.emplace_back(name, t);
        return b.placeholder(name, t.type(), t.shape());
    }
    graft::endpoint ints(const std::vector<std::int32_t>& v) {
        return b.constant(tensor::from_vector<std::int32_t>(v));
    }
    graft::endpoint int_scalar(std::int32_t v) { return b.constant(tensor::scalar_of(v)); }
    /// Runs the case fetching `fetches` on both devices (the builder is spent); the GPU's results.
    std::vector<tensor> check(const std::vector<graft::endpoint>& fetches) {
        graft::test_cuda::op_case c;
        c.g = std::move(g);
        c.feeds = std::move(feeds);
        for (const auto& e : fetches) c.fetches.push_back(e.str());
        return graft::test_cuda::check_cpu_vs_gpu(c);
    }
};

/// x[i] of a float tensor.
float at(const tensor& t, std::int64_t i) {
    return t.data<float>()[i];
}

TEST_CASE("gpu array: Transpose (NHWC <-> NCHW, 3-D perms, size-1 dims, identity)") {
    struct c_t {
        shape s;
        std::vector<std::int32_t> perm;
    };
    for (const auto& c :
         {c_t{{2, 3, 4, 5}, {0, 3, 1, 2}}, c_t{{2, 5, 3, 4}, {0, 2, 3, 1}},
          c_t{{2, 3, 4}, {2, 0, 1}}, c_t{{2, 3, 4}, {1, 0, 2}}, c_t{{2, 3, 4}, {0, 2, 1}},
          c_t{{2, 3, 4}, {0, 1, 2}}, c_t{{1, 3, 1, 4}, {2, 3, 0, 1}}, c_t{{3, 1, 4}, {1, 0, 2}},
          c_t{{7, 9}, {1, 0}}, c_t{{0, 3}, {1, 0}}}) {
        INFO("shape " << c.s.str() << " perm size " << c.perm.size());
        builder t;
        auto y = t.b.op("Transpose", {t.input("x", c.s), t.ints(c.perm)});
        t.check({y});
    }
    builder t;
    auto y = t.b.op(
        "Transpose",
        {t.feed("x", tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6})), t.ints({1, 0})});
    auto r = t.check({y})[0];
    REQUIRE(r.shape() == shape{3, 2});
    CHECK(at(r, 1) == 4.f);
    CHECK(at(r, 4) == 3.f);
}

TEST_CASE("gpu array: ConcatV2 along every axis, negative and int64 axes") {
    for (std::int32_t axis : {1, -1}) {
        builder t;
        auto y = t.b.op("ConcatV2", {t.input("a", {2, 3}, 1), t.input("b", {2, 1}, 2),
                                     t.input("c", {2, 4}, 3), t.int_scalar(axis)});
        auto r = t.check({y})[0];
        CHECK(r.shape() == shape{2, 8});
    }
    builder t;
    auto y = t.b.op("ConcatV2", {t.input("a", {1, 3, 2}, 1), t.input("b", {2, 3, 2}, 2),
                                 t.b.constant(tensor::scalar_of(std::int64_t{0}))});
    CHECK(t.check({y})[0].shape() == shape{3, 3, 2});
    builder u;
    auto z =
        u.b.op("ConcatV2", {u.feed("a", tensor::from_vector<float>({1, 2}, {1, 2})),
                            u.feed("b", tensor::from_vector<float>({1, 1}, {3})), u.int_scalar(1)});
    auto r = u.check({z})[0];
    CHECK(at(r, 0) == 1.f);
    CHECK(at(r, 2) == 3.f);
}

TEST_CASE("gpu array: Pack and Unpack along every axis") {
    for (std::int64_t axis : {0, 1, 2, -1}) {
        builder t;
        auto y = t.b.op("Pack",
                        {t.input("a", {2, 3}, 1), t.input("b", {2, 3}, 2), t.input("c", {2, 3}, 3)},
                        {{"axis", axis}});
        t.check({y});
    }
    for (std::int64_t axis : {0, 1, -1}) {
        builder t;
        auto x = t.input("x", {3, 2, 4});
        const std::int64_t n = axis == 0 ? 3 : (axis == 1 ? 2 : 4);
        auto parts = t.b.op_n("Unpack", {x}, {{"axis", axis}, {"num", n}});
        auto r = t.check(parts);
        REQUIRE(static_cast<std::int64_t>(r.size()) == n);
    }
    builder t;
    auto parts = t.b.op_n("Unpack", {t.feed("x", tensor::from_vector<float>({2, 2}, {1, 2, 3, 4}))},
                          {{"axis", std::int64_t{1}}, {"num", std::int64_t{2}}});
    auto r = t.check(parts);
    CHECK(at(r[1], 0) == 2.f);
    CHECK(at(r[1], 1) == 4.f);
}

TEST_CASE("gpu array: Slice (a block, to the end, the whole input)") {
    struct c_t {
        std::vector<std::int32_t> begin, size;
    };
    for (const auto& c : {c_t{{1, 0, 2}, {2, -1, 3}}, c_t{{0, 0, 0}, {-1, -1, -1}},
                          c_t{{3, 4, 5}, {1, 1, 1}}, c_t{{0, 2, 0}, {4, 0, 6}}}) {
        builder t;
        auto y = t.b.op("Slice", {t.input("x", {4, 5, 6}), t.ints(c.begin), t.ints(c.size)});
        t.check({y});
    }
}

TEST_CASE(
    "gpu array: StridedSlice with begin/end/ellipsis/new_axis/shrink masks and negative strides") {
    struct c_t {
        std::vector<std::int32_t> begin, end, strides;
        std::int64_t begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask;
    };
    const std::vector<c_t> cases = {
        {{1, 0, 0}, {3, 5, 6}, {1, 1, 1}, 0, 0, 0, 0, 0},   // x[1:3]
        {{1, 0, 2}, {3, 0, 3}, {1, -1, 1}, 2, 2, 0, 0, 4},  // x[1:3, ::-1, 2]
        {{0, 0, 0}, {0, 0, 0}, {1, 1, 2}, 4, 4, 1, 2, 0},   // x[..., newaxis, ::2]
        {{0, 0, 0}, {0, 0, 0}, {1, 1, 2}, 0, 0, 1, 2, 0},   // x[..., newaxis, 0:0:2] (empty)
        {{-3, 1}, {-1, -1}, {1, 2}, 0, 0, 0, 0, 0},         // x[-3:-1, 1:-1:2]
        {{0, 0, 0}, {0, 0, 0}, {1, 1, 1}, 7, 7, 0, 0, 0},   // x[:, :, :] (identity)
        {{-1}, {0}, {-2}, 0, 1, 0, 0, 0},                   // x[-1::-2]
        {{2, 3}, {0, 0}, {1, 1}, 0, 0, 0, 0, 3},            // x[2, 3]
    };
    for (const auto& c : cases) {
        builder t;
        auto y =
            t.b.op("StridedSlice",
                   {t.input("x", {4, 5, 6}), t.ints(c.begin), t.ints(c.end), t.ints(c.strides)},
                   {{"begin_mask", c.begin_mask},
                    {"end_mask", c.end_mask},
                    {"ellipsis_mask", c.ellipsis_mask},
                    {"new_axis_mask", c.new_axis_mask},
                    {"shrink_axis_mask", c.shrink_axis_mask}});
        t.check({y});
    }
    builder t;
    auto y = t.b.op("StridedSlice",
                    {t.feed("x", tensor::from_vector<float>({1, 2, 3, 4})), t.ints({0}),
                     t.ints({0}), t.ints({-1})},
                    {{"begin_mask", std::int64_t{1}}, {"end_mask", std::int64_t{1}}});
    auto r = t.check({y})[0];
    CHECK(at(r, 0) == 4.f);
    CHECK(at(r, 3) == 1.f);
}

TEST_CASE("gpu array: Pad and PadV2") {
    const auto pads = tensor::from_vector<std::int32_t>({3, 2}, {1, 2, 0, 1, 2, 0});
    {
        builder t;
        auto y = t.b.op("Pad", {t.input("x", {2, 3, 4}), t.b.constant(pads)});
        auto r = t.check({y})[0];
        CHECK(r.shape() == shape{5, 4, 6});
        CHECK(at(r, 0) == 0.f);
    }
    {
        builder t;
        auto y = t.b.op("PadV2", {t.input("x", {2, 3, 4}), t.b.constant(pads), t.b.scalar(1.5f)});
        auto r = t.check({y})[0];
        CHECK(at(r, 0) == 1.5f);
    }
    builder t;
    auto y = t.b.op("Pad", {t.input("x", {0, 3}),
                            t.b.constant(tensor::from_vector<std::int32_t>({2, 2}, {1, 1, 0, 0}))});
    CHECK(t.check({y})[0].shape() == shape{2, 3});
}

TEST_CASE("gpu array: Tile") {
    struct c_t {
        shape s;
        std::vector<std::int32_t> multiples;
    };
    for (const auto& c : {c_t{{2, 3}, {2, 3}}, c_t{{2, 1, 3}, {1, 4, 1}}, c_t{{3}, {5}},
                          c_t{{2, 3}, {0, 2}}, c_t{{2, 3, 2}, {2, 1, 2}}}) {
        builder t;
        auto y = t.b.op("Tile", {t.input("x", c.s), t.ints(c.multiples)});
        t.check({y});
    }
    builder t;
    auto y = t.b.op("Tile", {t.feed("x", tensor::from_vector<float>({1, 2})), t.ints({3})});
    auto r = t.check({y})[0];
    CHECK(at(r, 4) == 1.f);
    CHECK(at(r, 5) == 2.f);
}

TEST_CASE("gpu array: GatherV2 with int32 and int64 indices, every axis, batch_dims") {
    {
        builder t;
        auto idx = t.b.constant(tensor::from_vector<std::int32_t>({4, 0, 2, 2}));
        auto y = t.b.op("GatherV2", {t.input("p", {5, 4}), idx, t.int_scalar(0)});
        auto r = t.check({y})[0];
        CHECK(r.shape() == shape{4, 4});
    }
    {
        builder t;
        auto idx = t.feed("i", tensor::from_vector<std::int64_t>({2, 2}, {3, 0, 1, 3}));
        auto y = t.b.op("GatherV2", {t.input("p", {2, 4, 3}), idx, t.int_scalar(1)});
        CHECK(t.check({y})[0].shape() == shape{2, 2, 2, 3});
    }
    {
        builder t;
        auto idx = t.b.constant(tensor::from_vector<std::int32_t>({2}, {1, 0}));
        auto y = t.b.op("GatherV2", {t.input("p", {2, 4, 3}), idx, t.int_scalar(-1)});
        CHECK(t.check({y})[0].shape() == shape{2, 4, 2});
    }
    builder t;
    auto idx = t.b.constant(tensor::from_vector<std::int32_t>({2, 3}, {0, 4, 1, 2, 2, 3}));
    auto y = t.b.op("GatherV2", {t.input("p", {2, 5, 3}), idx, t.int_scalar(1)},
                    {{"batch_dims", std::int64_t{1}}});
    CHECK(t.check({y})[0].shape() == shape{2, 3, 3});
}

TEST_CASE("gpu array: OneHot along every axis, int32 / int64 / out-of-range indices") {
    for (std::int64_t axis : {-1, 0, 1}) {
        builder t;
        auto idx = t.b.constant(tensor::from_vector<std::int32_t>({2, 3}, {0, 3, 1, 2, 2, 0}));
        auto y = t.b.op("OneHot", {idx, t.int_scalar(4), t.b.scalar(1.f), t.b.scalar(0.f)},
                        {{"axis", axis}});
        t.check({y});
    }
    builder t;
    auto idx = t.feed("i", tensor::from_vector<std::int64_t>({-1, 5, 2}));
    auto y = t.b.op("OneHot", {idx, t.int_scalar(3), t.b.scalar(2.5f), t.b.scalar(-1.f)});
    auto r = t.check({y})[0];
    REQUIRE(r.shape() == shape{3, 3});
    CHECK(at(r, 0) == -1.f);
    CHECK(at(r, 5) == -1.f);
    CHECK(at(r, 8) == 2.5f);
}

TEST_CASE("gpu array: Fill") {
    builder t;
    auto y = t.b.op("Fill", {t.ints({2, 3}), t.b.scalar(2.5f)});
    auto r = t.check({y})[0];
    REQUIRE(r.shape() == shape{2, 3});
    CHECK(at(r, 5) == 2.5f);
    builder u;
    auto z = u.b.op("Fill", {u.ints({0, 3}), u.b.scalar(1.f)});
    CHECK(u.check({z})[0].num_elements() == 0);
}

TEST_CASE("gpu array: Split and SplitV along the outer (views) and inner axes") {
    for (std::int32_t axis : {0, 1, -1}) {
        builder t;
        auto parts = t.b.op_n("Split", {t.int_scalar(axis), t.input("x", {6, 6})},
                              {{"num_split", std::int64_t{3}}});
        REQUIRE(t.check(parts).size() == 3);
    }
    for (std::int32_t axis : {0, 1}) {
        builder t;
        auto parts =
            t.b.op_n("SplitV", {t.input("x", {6, 6}), t.ints({1, -1, 2}), t.int_scalar(axis)},
                     {{"num_split", std::int64_t{3}}});
        auto r = t.check(parts);
        REQUIRE(r.size() == 3);
        CHECK(r[1].dim(axis) == 3);
    }
    builder t;
    auto parts = t.b.op_n(
        "Split", {t.int_scalar(1), t.feed("x", tensor::from_vector<float>({2, 2}, {1, 2, 3, 4}))},
        {{"num_split", std::int64_t{2}}});
    auto r = t.check(parts);
    CHECK(at(r[1], 0) == 2.f);
    CHECK(at(r[1], 1) == 4.f);
}

// Found on the H200 (2026-11-27): Shape on the CPU of a GPU tensor, and Reshape/Squeeze/ExpandDims on
// the GPU, threw "the CPU kernels need host tensors". They read only the shape or return a view, so
// the tensor stays on the GPU and nothing is copied.
TEST_CASE("gpu array: Shape, Size and Rank of a GPU tensor; Reshape, Squeeze and ExpandDims as GPU views") {
    builder t;
    auto y = t.b.op("Relu", {t.input("x", {2, 3, 4})});  // on the GPU
    auto reshaped = t.b.op("Reshape", {y, t.ints({4, 6})});
    auto squeezed = t.b.op("Squeeze", {t.b.op("ExpandDims", {y, t.int_scalar(1)})}, {{"squeeze_dims", graft::attr_value::list_of(std::vector<std::int64_t>{1})}});
    // Shape, Size and Rank run on the CPU (int32 outputs) and read the GPU tensor's shape only;
    // Fill (on the GPU) takes their values as its host-side dims.
    auto like = t.b.op("Fill", {t.b.op("Shape", {y}), t.b.scalar(1.5f)});
    auto sized = t.b.op("Fill", {t.b.op("Pack", {t.b.op("Size", {y}), t.b.op("Rank", {y})}, {{"N", std::int64_t{2}}}),
                                 t.b.scalar(2.f)});
    auto r = t.check({reshaped, squeezed, like, sized});
    CHECK(r[0].shape() == shape{4, 6});
    CHECK(r[1].shape() == shape{2, 3, 4});
    for (std::int64_t i = 0; i < 24; ++i) {
        CHECK(at(r[0], i) == at(r[1], i));
        CHECK(at(r[0], i) >= 0.f);
    }
    REQUIRE(r[2].shape() == shape{2, 3, 4});
    CHECK(at(r[2], 23) == 1.5f);
    REQUIRE(r[3].shape() == shape{24, 3});
    CHECK(at(r[3], 71) == 2.f);
}

}  // namespace gpu_array_test
