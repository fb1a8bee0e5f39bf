// Shape ops, Fill/Range/Cast, Transpose, and Concat/Pack/Unpack/Split/SplitV.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "array_testing.hpp"
#include "graft/ops/concat_split.hpp"
#include "graft/ops/fill.hpp"
#include "graft/ops/shape_ops.hpp"
#include "graft/ops/transpose.hpp"

using namespace graft;
using namespace graft::test;
using vec = std::vector<std::int64_t>;

TEST_CASE("Shape, ShapeN, Size, Rank") {
    tensor x(dtype::float32, {2, 0, 3});
    check_values(ops::shape_of(x), dtype::int32, shape{3}, {2, 0, 3});
    check_values(ops::shape_of(x, dtype::int64), dtype::int64, shape{3}, {2, 0, 3});
    check_values(ops::shape_of(tensor::scalar_of(1.0)), dtype::int32, shape{0}, {});
    auto sn = ops::shape_n({x, tensor(dtype::bool_, {4})}, dtype::int64);
    REQUIRE(sn.size() == 2);
    check_values(sn[1], dtype::int64, shape{1}, {4});
    check_values(ops::size_of(tensor(dtype::int32, {4, 5})), dtype::int32, shape{}, {20});
    check_values(ops::size_of(x, dtype::int64), dtype::int64, shape{}, {0});
    check_values(ops::rank_of(x), dtype::int32, shape{}, {3});
    GRAFT_CHECK_THROWS_MSG(ops::shape_of(x, dtype::float32), invalid_argument_error,
                           "Shape: out_type must be int32 or int64");
}

TEST_CASE("Reshape, Squeeze, ExpandDims and Identity are views") {
    tensor x = iota(dtype::float32, {2, 3, 4});
    tensor r = ops::reshape(x, {4, -1});
    CHECK(r.shape() == shape{4, 6});
    CHECK(r.shares_buffer_with(x));
    check_values(ops::reshape(x, i64({1}, {-1})), dtype::float32, shape{24}, values(x));
    CHECK(ops::reshape(x, i32({3}, {3, 2, -1})).shape() == shape{3, 2, 4});
    CHECK(ops::reshape(tensor(dtype::int32, {0, 4}), {-1, 2}).shape() == shape{0, 2});
    CHECK(ops::reshape(tensor::scalar_of(3), {1, 1}).shape() == shape{1, 1});
    GRAFT_CHECK_THROWS_MSG(
        ops::reshape(x, {5, -1}), shape_error,
        "Reshape: cannot reshape [2,3,4] (24 elements) to [5,-1]: 24 is not a multiple of 5");
    GRAFT_CHECK_THROWS_MSG(ops::reshape(x, {-1, -1}), invalid_argument_error,
                           "Reshape: only one dim may be -1");
    GRAFT_CHECK_THROWS_MSG(ops::reshape(x, {2, 3}), shape_error, "to [2,3] (6 elements)");
    GRAFT_CHECK_THROWS_MSG(ops::reshape(tensor(dtype::int32, {0, 4}), {0, -1}),
                           invalid_argument_error, "cannot infer the -1");

    tensor y = iota(dtype::int64, {1, 3, 1, 2});
    CHECK(ops::squeeze(y).shape() == shape{3, 2});
    CHECK(ops::squeeze(y, {2}).shape() == shape{1, 3, 2});
    CHECK(ops::squeeze(y, {-4, -2}).shape() == shape{3, 2});
    CHECK(ops::squeeze(y).shares_buffer_with(y));
    GRAFT_CHECK_THROWS_MSG(ops::squeeze(y, {1}), invalid_argument_error,
                           "Squeeze: cannot squeeze dim 1 of [1,3,1,2]: expected size 1, got 3");
    GRAFT_CHECK_THROWS_MSG(ops::squeeze(y, {4}), invalid_argument_error,
                           "Squeeze: squeeze_dims entry 4 is out of range");

    CHECK(ops::expand_dims(y, 0).shape() == shape{1, 1, 3, 1, 2});
    CHECK(ops::expand_dims(y, -1).shape() == shape{1, 3, 1, 2, 1});
    CHECK(ops::expand_dims(tensor::scalar_of(1.f), i32({1}, {0})).shape() == shape{1});
    GRAFT_CHECK_THROWS_MSG(ops::expand_dims(y, 5), invalid_argument_error,
                           "ExpandDims: dim 5 is out of range for rank 5");
    CHECK(ops::identity(y).shares_buffer_with(y));
    tensor c = ops::copy(y);
    CHECK_FALSE(c.shares_buffer_with(y));
    check_values(c, y);
    CHECK(equal(ops::zeros(dtype::float64, {2}), f64({2}, {0, 0})));
}

// Figures from tensorflow/python/kernel_tests/array_ops/init_ops_test.py (RangeTest: testBasic,
// testEmpty, testNonInteger).
TEST_CASE("Fill, ZerosLike, OnesLike, Range") {
    check_values(ops::fill({2, 3}, tensor::scalar_of(1.5f)), dtype::float32, shape{2, 3},
                 std::vector<double>(6, 1.5));
    check_values(ops::fill(i64({1}, {0}), tensor::scalar_of(7)), dtype::int32, shape{0}, {});
    auto s = ops::fill({2}, tensor::scalar_of("ab"));
    CHECK(s.data<std::string>()[1] == "ab");
    GRAFT_CHECK_THROWS_MSG(ops::fill({2}, f32({1}, {1})), invalid_argument_error,
                           "Fill: value must be a scalar but has shape [1]");
    GRAFT_CHECK_THROWS_MSG(ops::fill({-1}, tensor::scalar_of(1)), invalid_argument_error,
                           "Fill: dims [-1] has a negative dim");
    check_values(ops::zeros_like(iota(dtype::int64, {2, 2}, 5)), dtype::int64, shape{2, 2},
                 {0, 0, 0, 0});
    check_values(ops::ones_like(iota(dtype::float64, {3})), dtype::float64, shape{3}, {1, 1, 1});
    check_values(ops::ones_like(bools({2}, {0, 0})), dtype::bool_, shape{2}, {1, 1});
    GRAFT_CHECK_THROWS_MSG(ops::ones_like(tensor::scalar_of("x")), invalid_argument_error,
                           "OnesLike");

    auto range_i = [](double a, double b, double d) {
        return ops::range(tensor::scalar_of(static_cast<std::int32_t>(a)),
                          tensor::scalar_of(static_cast<std::int32_t>(b)),
                          tensor::scalar_of(static_cast<std::int32_t>(d)));
    };
    auto range_f = [](double a, double b, double d) {
        return ops::range(tensor::scalar_of(static_cast<float>(a)),
                          tensor::scalar_of(static_cast<float>(b)),
                          tensor::scalar_of(static_cast<float>(d)));
    };
    check_values(range_i(0, 5, 1), dtype::int32, shape{5}, {0, 1, 2, 3, 4});
    check_values(range_i(0, 5, 2), dtype::int32, shape{3}, {0, 2, 4});
    check_values(range_i(0, 6, 2), dtype::int32, shape{3}, {0, 2, 4});
    check_values(range_i(13, 32, 7), dtype::int32, shape{3}, {13, 20, 27});
    check_values(range_i(100, 500, 100), dtype::int32, shape{4}, {100, 200, 300, 400});
    check_values(range_i(5, 5, 1), dtype::int32, shape{0}, {});
    check_values(range_i(10, 2, -3), dtype::int32, shape{3}, {10, 7, 4});
    check_values(range_f(0, 2, 0.5), dtype::float32, shape{4}, {0, 0.5, 1, 1.5});
    check_values(range_f(0, 5, 2.5), dtype::float32, shape{2}, {0, 2.5});
    check_values(range_f(0, 3, 0.9), dtype::float32, shape{4}, {0, 0.9, 1.8, 2.7}, 1e-6);
    check_values(ops::range(i64({}, {-3}), i64({}, {0}), i64({}, {1})), dtype::int64, shape{3},
                 {-3, -2, -1});
    GRAFT_CHECK_THROWS_MSG(range_i(0, 5, 0), invalid_argument_error, "Range: requires delta != 0");
    GRAFT_CHECK_THROWS_MSG(range_i(5, 0, 1), invalid_argument_error,
                           "Range: requires start <= limit when delta > 0, got 5/0");
    GRAFT_CHECK_THROWS_MSG(ops::range(i32({}, {0}), i64({}, {5}), i32({}, {1})),
                           invalid_argument_error, "dtypes must match");
}

TEST_CASE("Cast truncates floats toward zero, with NaN and overflow defined") {
    const double nan = std::nan("");
    tensor x = f32({6}, {2.7, -2.7, 0.5, nan, 1e20, -1e20});
    check_values(ops::cast_to(x, dtype::int32), dtype::int32, shape{6},
                 {2, -2, 0, 0, 2147483647.0, -2147483648.0});
    check_values(ops::cast_to(x, dtype::int64), dtype::int64, shape{6},
                 {2, -2, 0, 0, 9223372036854775807.0, -9223372036854775808.0});
    check_values(ops::cast_to(f64({3}, {-1.5, 255.9, 300}), dtype::uint8), dtype::uint8, shape{3},
                 {0, 255, 255});
    check_values(ops::cast_to(f32({3}, {0, -0.5, 3}), dtype::bool_), dtype::bool_, shape{3},
                 {0, 1, 1});
    check_values(ops::cast_to(bools({2}, {1, 0}), dtype::float32), dtype::float32, shape{2},
                 {1, 0});
    check_values(ops::cast_to(i64({2}, {7, -3}), dtype::float64), dtype::float64, shape{2},
                 {7, -3});
    CHECK(ops::cast_to(x, dtype::float32).shares_buffer_with(x));
    GRAFT_CHECK_THROWS_MSG(ops::cast_to(tensor::scalar_of("1"), dtype::int32), unimplemented_error,
                           "string");
}

namespace {

std::vector<double> ref_transpose(const shape& s, const std::vector<double>& v, const vec& perm,
                                  shape* os) {
    const auto& d = s.dims();
    vec od;
    for (auto p : perm) od.push_back(d[static_cast<std::size_t>(p)]);
    *os = shape(od);
    const auto is = row_major_strides(s), ost = row_major_strides(*os);
    std::vector<double> out(v.size());
    for (std::int64_t o = 0; o < static_cast<std::int64_t>(v.size()); ++o) {
        std::int64_t rem = o, in = 0;
        for (std::size_t i = 0; i < perm.size(); ++i) {
            in += (rem / ost[i]) * is[static_cast<std::size_t>(perm[i])];
            rem %= ost[i];
        }
        out[static_cast<std::size_t>(o)] = v[static_cast<std::size_t>(in)];
    }
    return out;
}

}  // namespace

TEST_CASE("Transpose over permutations, dtypes and fast paths") {
    const std::pair<shape, vec> cases[] = {
        {{3, 4}, {1, 0}},
        {{70, 33}, {1, 0}},
        {{2, 3, 4}, {0, 2, 1}},
        {{2, 5, 6, 3}, {0, 3, 1, 2}},
        {{2, 3, 5, 6}, {0, 2, 3, 1}},
        {{2, 1, 3}, {2, 1, 0}},
        {{3, 2, 4}, {2, 0, 1}},
        {{2, 3, 4, 5, 2}, {4, 2, 0, 1, 3}},
        {{2, 3, 2, 2, 3, 2}, {5, 3, 1, 0, 2, 4}},
        {{0, 3}, {1, 0}},
        {{2, 3, 4}, {1, 0, 2}},
        {{}, {}},
        {{4}, {0}},
        {{2, 3}, {0, 1}},
    };
    for (const auto& [s_b, perm] : cases) {
        auto& s = s_b;  // clang 14: lambdas cannot capture structured bindings
        for (dtype t : {dtype::float32, dtype::float64, dtype::int8, dtype::bool_}) {
            tensor x =
                t == dtype::bool_ ? ops::cast_to(iota(dtype::int32, s), dtype::bool_) : iota(t, s);
            if (t == dtype::int8)
                x = make(t, s, noise(static_cast<std::size_t>(s.num_elements()), -100, 100, 3));
            shape os;
            auto want = ref_transpose(s, values(x), perm, &os);
            CAPTURE(s.str());
            CAPTURE(dtype_name(t));
            check_values(ops::transpose(x, perm), t, os, want);
        }
    }
    // NHWC -> NCHW -> NHWC round trip on a larger tensor (thread pool, batched 2-D path).
    tensor a = f32({4, 28, 28, 16}, noise(4 * 28 * 28 * 16, -1, 1, 9));
    tensor nchw = ops::transpose(a, {0, 3, 1, 2});
    CHECK(nchw.shape() == shape{4, 16, 28, 28});
    CHECK(equal(ops::transpose(nchw, i32({4}, {0, 2, 3, 1})), a));
    // Identity and moves of size-1 dims are views.
    tensor b = iota(dtype::float32, {3, 1, 4});
    CHECK(ops::transpose(b, {1, 0, 2}).shares_buffer_with(b));
    CHECK(ops::transpose(b, {1, 0, 2}).shape() == shape{1, 3, 4});
    check_values(ops::transpose(iota(dtype::int32, {2, 2, 3})), dtype::int32, shape{2, 3, 2},
                 {0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11});
    auto strs = tensor::from_vector<std::string>({2, 3}, {"a", "b", "c", "d", "e", "f"});
    auto st = ops::transpose(strs, {1, 0});
    CHECK(st.data<std::string>()[1] == "d");
    GRAFT_CHECK_THROWS_MSG(ops::transpose(b, {0, 1}), invalid_argument_error,
                           "Transpose: perm [0,1] has 2 entries but the input has rank 3");
    GRAFT_CHECK_THROWS_MSG(ops::transpose(b, {0, 1, 1}), invalid_argument_error,
                           "Transpose: perm [0,1,1] repeats 1");
    GRAFT_CHECK_THROWS_MSG(ops::transpose(b, {0, 1, 3}), invalid_argument_error,
                           "3 is out of range [0, 3)");
}

TEST_CASE("ConcatV2 along every axis, with empties and strings") {
    const shape base{2, 3, 4};
    for (int axis = -3; axis < 3; ++axis) {
        const int ax = axis < 0 ? axis + 3 : axis;
        std::vector<tensor> parts;
        std::vector<std::int64_t> sizes{2, 0, 3};
        for (std::size_t k = 0; k < sizes.size(); ++k) {
            auto d = base.dims();
            d[static_cast<std::size_t>(ax)] = sizes[k];
            parts.push_back(iota(dtype::float64, shape(d), 100.0 * static_cast<double>(k)));
        }
        auto od = base.dims();
        od[static_cast<std::size_t>(ax)] = 5;
        // Reference: out[..., j, ...] from the part holding j along the axis.
        std::vector<double> want;
        const shape os(od);
        for (std::int64_t i = 0; i < os.num_elements(); ++i) {
            std::vector<std::int64_t> idx(3);
            std::int64_t rem = i;
            for (int k = 2; k >= 0; --k) {
                idx[static_cast<std::size_t>(k)] = rem % od[static_cast<std::size_t>(k)];
                rem /= od[static_cast<std::size_t>(k)];
            }
            std::int64_t j = idx[static_cast<std::size_t>(ax)];
            std::size_t part = 0;
            while (j >= sizes[part]) j -= sizes[part++];
            idx[static_cast<std::size_t>(ax)] = j;
            const auto& ps = parts[part].shape();
            const auto st = row_major_strides(ps);
            std::int64_t off = 0;
            for (int k = 0; k < 3; ++k)
                off += idx[static_cast<std::size_t>(k)] * st[static_cast<std::size_t>(k)];
            want.push_back(parts[part].data<double>()[off]);
        }
        CAPTURE(axis);
        check_values(ops::concat(parts, axis), dtype::float64, os, want);
        check_values(ops::concat(parts, i32({}, {static_cast<double>(axis)})), dtype::float64, os,
                     want);
    }
    tensor a = iota(dtype::int32, {2, 2});
    CHECK(ops::concat({a}, 0).shares_buffer_with(a));
    auto s = ops::concat({tensor::from_vector<std::string>({1}, {"x"}),
                          tensor::from_vector<std::string>({2}, {"y", "z"})},
                         0);
    CHECK(s.data<std::string>()[2] == "z");
    tensor big =
        ops::concat({iota(dtype::float32, {64, 300}), iota(dtype::float32, {64, 200}, 1e5)}, 1);
    CHECK(big.data<float>()[300] == 1e5f);
    CHECK(big.data<float>()[500] == 300.f);
    GRAFT_CHECK_THROWS_MSG(
        ops::concat({iota(dtype::float32, {3, 5}), iota(dtype::float32, {3, 4}),
                     iota(dtype::float32, {2, 4})},
                    1),
        shape_error,
        "ConcatV2: input 2 has shape [2,4] but input 0 has [3,5]: all dims but axis 1 must match");
    GRAFT_CHECK_THROWS_MSG(ops::concat({a, iota(dtype::int32, {2, 2, 1})}, 0), shape_error,
                           "the ranks must match");
    GRAFT_CHECK_THROWS_MSG(ops::concat({a, iota(dtype::int64, {2, 2})}, 0), invalid_argument_error,
                           "ConcatV2: input 1 is int64[2,2] but input 0 is int32[2,2]");
    GRAFT_CHECK_THROWS_MSG(ops::concat({a, a}, 2), invalid_argument_error,
                           "ConcatV2: axis 2 is out of range for rank 2");
    GRAFT_CHECK_THROWS_MSG(ops::concat({tensor::scalar_of(1), tensor::scalar_of(2)}, 0),
                           invalid_argument_error, "cannot concatenate scalars");
}

TEST_CASE("Pack, Unpack, Split, SplitV") {
    tensor a = iota(dtype::float32, {2, 3}), b = iota(dtype::float32, {2, 3}, 10);
    check_values(ops::pack({a, b}), dtype::float32, shape{2, 2, 3},
                 {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15});
    check_values(ops::pack({a, b}, 1), dtype::float32, shape{2, 2, 3},
                 {0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15});
    check_values(ops::pack({a, b}, -1), dtype::float32, shape{2, 3, 2},
                 {0, 10, 1, 11, 2, 12, 3, 13, 4, 14, 5, 15});
    check_values(ops::pack({tensor::scalar_of(1), tensor::scalar_of(2)}), dtype::int32, shape{2},
                 {1, 2});
    GRAFT_CHECK_THROWS_MSG(ops::pack({a, iota(dtype::float32, {3, 2})}), shape_error,
                           "Pack: input 1 has shape [3,2] but input 0 has [2,3]");
    GRAFT_CHECK_THROWS_MSG(ops::pack({a, a}, 3), invalid_argument_error,
                           "Pack: axis 3 is out of range for rank 3");

    tensor x = iota(dtype::int64, {2, 3, 2});
    auto u0 = ops::unpack(x);
    REQUIRE(u0.size() == 2);
    check_values(u0[1], dtype::int64, shape{3, 2}, {6, 7, 8, 9, 10, 11});
    CHECK(u0[1].shares_buffer_with(x));
    auto u1 = ops::unpack(x, 1, 3);
    check_values(u1[2], dtype::int64, shape{2, 2}, {4, 5, 10, 11});
    auto u2 = ops::unpack(x, -1);
    check_values(u2[0], dtype::int64, shape{2, 3}, {0, 2, 4, 6, 8, 10});
    GRAFT_CHECK_THROWS_MSG(ops::unpack(x, 1, 2), invalid_argument_error,
                           "Unpack: num is 2 but value [2,3,2] has 3 slices along axis 1");

    tensor y = iota(dtype::float32, {4, 6});
    auto sp = ops::split(y, 3, 1);
    REQUIRE(sp.size() == 3);
    check_values(sp[1], dtype::float32, shape{4, 2}, {2, 3, 8, 9, 14, 15, 20, 21});
    auto sp0 = ops::split(y, 2, i32({}, {0}));
    check_values(sp0[1], dtype::float32, shape{2, 6},
                 {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23});
    GRAFT_CHECK_THROWS_MSG(ops::split(y, 4, 1), invalid_argument_error,
                           "Split: num_split 4 does not evenly divide dim 1 (6) of [4,6]");

    auto sv = ops::split_v(y, {1, -1, 2}, -1);
    REQUIRE(sv.size() == 3);
    CHECK(sv[1].shape() == shape{4, 3});
    check_values(sv[2], dtype::float32, shape{4, 2}, {4, 5, 10, 11, 16, 17, 22, 23});
    auto sv0 = ops::split_v(y, i64({3}, {0, 3, 1}), i32({}, {0}));
    CHECK(sv0[0].shape() == shape{0, 6});
    check_values(sv0[2], dtype::float32, shape{1, 6}, {18, 19, 20, 21, 22, 23});
    GRAFT_CHECK_THROWS_MSG(ops::split_v(y, {2, 2}, 1), invalid_argument_error,
                           "SplitV: size_splits [2,2] must add up to dim 1 (6)");
    GRAFT_CHECK_THROWS_MSG(ops::split_v(y, {-1, -1}, 1), invalid_argument_error,
                           "more than one -1");
}
