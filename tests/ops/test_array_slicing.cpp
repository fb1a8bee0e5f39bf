// Slice, StridedSlice (checked against an independent Python-style indexer), StridedSliceGrad,
// Tile, Pad/PadV2, MirrorPad and MirrorPadGrad; Pad/MirrorPad/Slice also against a float64 index
// reference over several ranks and paddings.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <optional>

#include "array_testing.hpp"
#include "graft/ops/slicing.hpp"
#include "graft/ops/tile_pad.hpp"

using namespace graft;
using namespace graft::test;
using vec = std::vector<std::int64_t>;

namespace {

/// One entry of a Python index expression x[...].
struct item {
    enum kind_t { range, index, new_axis, ellipsis } kind = range;
    std::optional<std::int64_t> b, e;
    std::int64_t s = 1;
    std::int64_t i = 0;
};
item R(std::optional<std::int64_t> b = {}, std::optional<std::int64_t> e = {}, std::int64_t s = 1) {
    item it;
    it.b = b;
    it.e = e;
    it.s = s;
    return it;
}
item I(std::int64_t i) {
    item it;
    it.kind = item::index;
    it.i = i;
    return it;
}
const item NEW = [] {
    item it;
    it.kind = item::new_axis;
    return it;
}();
const item ELL = [] {
    item it;
    it.kind = item::ellipsis;
    return it;
}();

/// Python/NumPy semantics, written directly: per-dim index lists, then the cartesian product.
/// Returns the flat input offsets of the result in order, and its shape.
vec py_index(const shape& s, const std::vector<item>& spec, shape* out_shape) {
    const auto& d = s.dims();
    std::size_t real = 0;
    for (const auto& it : spec) real += (it.kind == item::range || it.kind == item::index) ? 1 : 0;
    std::vector<item> full;
    bool has_ellipsis = false;
    for (const auto& it : spec) {
        if (it.kind == item::ellipsis) {
            has_ellipsis = true;
            for (std::size_t k = 0; k < d.size() - real; ++k) full.push_back(R());
        } else {
            full.push_back(it);
        }
    }
    if (!has_ellipsis) {
        while (true) {
            std::size_t used = 0;
            for (const auto& it : full)
                used += (it.kind == item::range || it.kind == item::index) ? 1 : 0;
            if (used >= d.size()) break;
            full.push_back(R());
        }
    }
    std::vector<vec> lists;  // per input dim
    vec od;
    std::size_t dim = 0;
    for (const auto& it : full) {
        if (it.kind == item::new_axis) {
            od.push_back(1);
            continue;
        }
        const std::int64_t n = d[dim++];
        vec l;
        if (it.kind == item::index) {
            l.push_back(it.i < 0 ? it.i + n : it.i);
        } else {
            const std::int64_t st = it.s;
            std::int64_t b, e;
            if (st > 0) {
                b = it.b ? (*it.b < 0 ? std::max<std::int64_t>(*it.b + n, 0) : std::min(*it.b, n))
                         : 0;
                e = it.e ? (*it.e < 0 ? std::max<std::int64_t>(*it.e + n, 0) : std::min(*it.e, n))
                         : n;
                for (std::int64_t k = b; k < e; k += st) l.push_back(k);
            } else {
                b = it.b ? (*it.b < 0 ? std::max<std::int64_t>(*it.b + n, -1)
                                      : std::min(*it.b, n - 1))
                         : n - 1;
                e = it.e ? (*it.e < 0 ? std::max<std::int64_t>(*it.e + n, -1)
                                      : std::min(*it.e, n - 1))
                         : -1;
                for (std::int64_t k = b; k > e; k += st) l.push_back(k);
            }
            od.push_back(static_cast<std::int64_t>(l.size()));
        }
        lists.push_back(l);
    }
    *out_shape = shape(od);
    const auto st = row_major_strides(s);
    vec offsets{0};
    for (std::size_t k = 0; k < lists.size(); ++k) {
        vec next;
        for (auto o : offsets) {
            for (auto idx : lists[k]) next.push_back(o + idx * st[k]);
        }
        offsets = next;
    }
    return offsets;
}

/// Runs x[spec] through ops::strided_slice (spec converted as TF's Python __getitem__ does) and
/// compares with py_index; also checks StridedSliceGrad scatters back to the same places.
void check_spec(const tensor& x, const std::vector<item>& spec) {
    vec b, e, s;
    ops::strided_slice_masks m;
    for (std::size_t k = 0; k < spec.size(); ++k) {
        const auto& it = spec[k];
        const auto bit = std::int32_t{1} << k;
        switch (it.kind) {
            case item::range:
                b.push_back(it.b.value_or(0));
                e.push_back(it.e.value_or(0));
                s.push_back(it.s);
                if (!it.b) m.begin_mask |= bit;
                if (!it.e) m.end_mask |= bit;
                break;
            case item::index:
                b.push_back(it.i);
                e.push_back(it.i + 1);
                s.push_back(1);
                m.shrink_axis_mask |= bit;
                break;
            case item::new_axis:
                b.push_back(0);
                e.push_back(0);
                s.push_back(1);
                m.new_axis_mask |= bit;
                break;
            case item::ellipsis:
                b.push_back(0);
                e.push_back(0);
                s.push_back(1);
                m.ellipsis_mask |= bit;
                break;
        }
    }
    shape os;
    const vec offs = py_index(x.shape(), spec, &os);
    const auto xv = values(x);
    std::vector<double> want;
    for (auto o : offs) want.push_back(xv[static_cast<std::size_t>(o)]);
    tensor r = ops::strided_slice(x, b, e, s, m);
    check_values(r, x.type(), os, want);
    // The gradient puts dy where the slice reads (later duplicates cannot occur for slices).
    tensor dy = iota(dtype::float64, os, 1);
    std::vector<double> g(static_cast<std::size_t>(x.num_elements()), 0);
    for (std::size_t k = 0; k < offs.size(); ++k)
        g[static_cast<std::size_t>(offs[k])] = static_cast<double>(k + 1);
    check_values(
        ops::strided_slice_grad(
            i32({static_cast<std::int64_t>(x.rank())},
                std::vector<double>(x.shape().dims().begin(), x.shape().dims().end())),
            i64({static_cast<std::int64_t>(b.size())}, std::vector<double>(b.begin(), b.end())),
            i64({static_cast<std::int64_t>(e.size())}, std::vector<double>(e.begin(), e.end())),
            i64({static_cast<std::int64_t>(s.size())}, std::vector<double>(s.begin(), s.end())), dy,
            m),
        dtype::float64, x.shape(), g);
}

}  // namespace

// The tensors and several index expressions come from
// tensorflow/python/kernel_tests/array_ops/array_ops_test.py (StridedSliceTest: testExpand's raw
// [1,2,1,3,4] tensor, REF_TENSOR = arange(1, 19).reshape(3, 2, 3), and its checker[...] cases).
TEST_CASE("StridedSlice agrees with Python indexing, masks and negative strides included") {
    tensor raw = f32({1, 2, 1, 3, 4}, {1,  2,  4,  5,  5,  6,  7,  8,  9,  10, 11, 12,
                                       13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24});
    const std::vector<std::vector<item>> expand_specs = {
        {NEW},
        {ELL, NEW},
        {ELL, NEW, R()},
        {R(), ELL, NEW, R(), R()},
        {R(), R(), NEW, R(), R(2, {}, -1)},
        {NEW, ELL, NEW},
    };
    for (std::size_t k = 0; k < expand_specs.size(); ++k) {
        CAPTURE(k);
        check_spec(raw, expand_specs[k]);
    }
    tensor ref = iota(dtype::float32, {3, 2, 3}, 1);
    const std::vector<std::vector<item>> specs = {
        {R()},
        {ELL},
        {NEW, ELL, NEW},
        {R(1)},
        {NEW, R(1)},  // testOptimizedCases
        {I(0)},
        {I(-1)},
        {I(2), R(), R()},
        {R(), I(1)},
        {ELL, I(0)},  // indexing
        {R({}, {}, -1)},
        {R(1, -1, 2), R({}, {}, -2)},
        {R(-3, 3)},
        {R(-100, 100)},
        {R(100, 200)},
        {R(), R({}, {}, -1), I(1)},
        {I(1), ELL, I(2)},
        {R(2, 0, -1), R(), R(0, 3, 2)},
        {R(-1, -4, -1)},
        {R(0, 0)},
        {NEW, R(), NEW, I(-2), R(1)},
        {R({}, {}, 2), NEW, ELL},
        {R(5, -5, -1)},
    };
    for (std::size_t k = 0; k < specs.size(); ++k) {
        CAPTURE(k);
        check_spec(ref, specs[k]);
    }
    // int64 / bool / string inputs and a larger strided read.
    check_spec(iota(dtype::int64, {4, 5}), {R(1, {}, 2), R({}, {}, -2)});
    check_spec(ops::strided_slice(iota(dtype::int32, {6}), {0}, {6}, {1}), {R(4, 0, -1)});
    tensor big = iota(dtype::float64, {40, 50, 30});
    check_spec(big, {R(1, 39, 3), R({}, {}, -1), R(2, 29, 2)});
    auto strs = tensor::from_vector<std::string>({3}, {"a", "b", "c"});
    auto rs = ops::strided_slice(strs, {0}, {0}, {-1}, {.begin_mask = 1, .end_mask = 1});
    CHECK(rs.data<std::string>()[0] == "c");
    // An identity slice is a view.
    CHECK(ops::strided_slice(ref, {0}, {0}, {1}, {.begin_mask = 1, .end_mask = 1})
              .shares_buffer_with(ref));
}

TEST_CASE("StridedSlice errors name the op and the problem") {
    tensor ref = iota(dtype::float32, {3, 2, 3});
    GRAFT_CHECK_THROWS_MSG(ops::strided_slice(ref, {0}, {1}, {0}), invalid_argument_error,
                           "StridedSlice: strides[0] must be non-zero");
    GRAFT_CHECK_THROWS_MSG(ops::strided_slice(ref, {0, 0}, {1, 1}, {1, 1}, {.ellipsis_mask = 3}),
                           invalid_argument_error, "ellipsis_mask 3 has more than one bit set");
    GRAFT_CHECK_THROWS_MSG(
        ops::strided_slice(ref, {3}, {4}, {1}, {.shrink_axis_mask = 1}), invalid_argument_error,
        "StridedSlice: slice index 3 of dimension 0 is out of bounds for size 3");
    GRAFT_CHECK_THROWS_MSG(ops::strided_slice(ref, {0, 0}, {1}, {1, 1}), invalid_argument_error,
                           "begin, end and strides must be vectors of one length");
    GRAFT_CHECK_THROWS_MSG(ops::strided_slice(ref, {0, 0, 0, 0}, {1, 1, 1, 1}, {1, 1, 1, 1}),
                           invalid_argument_error, "index out of range using input dim 3");
    GRAFT_CHECK_THROWS_MSG(
        ops::strided_slice_grad(shape{3, 2, 3}, {0}, {2}, {1}, iota(dtype::float32, {3, 2, 3})),
        shape_error,
        "StridedSliceGrad: dy has shape [3,2,3] but the slice of [3,2,3] has shape [2,2,3]");
}

TEST_CASE("Slice with -1 sizes, and its errors") {
    tensor x = iota(dtype::float32, {3, 4, 2});
    check_values(ops::slice(x, {1, 1, 0}, {2, -1, 1}), dtype::float32, shape{2, 3, 1},
                 {10, 12, 14, 18, 20, 22});
    check_values(ops::slice(x, i32({3}, {2, 0, 1}), i64({3}, {1, 2, 1})), dtype::float32,
                 shape{1, 2, 1}, {17, 19});
    CHECK(ops::slice(x, {0, 4, 0}, {-1, -1, -1}).shape() == shape{3, 0, 2});
    CHECK(ops::slice(x, {0, 0, 0}, {-1, -1, -1}).shares_buffer_with(x));
    GRAFT_CHECK_THROWS_MSG(
        ops::slice(x, {0, 3, 0}, {1, 2, 1}), invalid_argument_error,
        "Slice: expected 0 <= begin[1] <= begin[1] + size[1] <= 4 but got begin 3, size 2");
    GRAFT_CHECK_THROWS_MSG(ops::slice(x, {0, 0}, {1, 1}), invalid_argument_error,
                           "must have one entry per dim of [3,4,2]");
}

TEST_CASE("Tile repeats along each dim") {
    const std::pair<shape, vec> cases[] = {
        {{2, 3}, {2, 1}}, {{2, 3}, {1, 3}}, {{2, 1, 3}, {2, 4, 1}},      {{3}, {0}},
        {{}, {}},         {{2, 2}, {3, 2}}, {{1, 2, 1, 2}, {2, 1, 3, 2}}};
    for (const auto& [s_b, m] : cases) {
        auto& s = s_b;  // clang 14: lambdas cannot capture structured bindings
        tensor x = iota(dtype::int32, s, 1);
        vec od;
        for (std::size_t i = 0; i < m.size(); ++i) od.push_back(s.dims()[i] * m[i]);
        const shape os(od);
        const auto ist = row_major_strides(s);
        std::vector<double> want;
        for (std::int64_t i = 0; i < os.num_elements(); ++i) {
            std::int64_t rem = i, in = 0;
            for (std::size_t k = od.size(); k-- > 0;) {
                in += (rem % od[k]) % s.dims()[k] * ist[k];
                rem /= od[k];
            }
            want.push_back(values(x)[static_cast<std::size_t>(in)]);
        }
        CAPTURE(s.str());
        check_values(ops::tile(x, m), dtype::int32, os, want);
    }
    check_values(ops::tile(f64({2}, {1, 2}), i64({1}, {3})), dtype::float64, shape{6},
                 {1, 2, 1, 2, 1, 2});
    GRAFT_CHECK_THROWS_MSG(ops::tile(iota(dtype::int32, {2, 3}), {2}), invalid_argument_error,
                           "Tile: multiples [2] must have 2 entries");
    GRAFT_CHECK_THROWS_MSG(ops::tile(iota(dtype::int32, {2}), {-1}), invalid_argument_error,
                           "has a negative entry");
}

// tensorflow/python/kernel_tests/array_ops/pad_op_test.py: testNpPad (constant 0 and 1, reflect,
// symmetric figures) and testString.
TEST_CASE("Pad, PadV2 and MirrorPad match TF's figures") {
    tensor a = i32({3, 2}, {3, 3, 4, 4, 5, 5});
    ops::paddings_t p1{{1, 2}, {1, 3}};
    check_values(ops::pad(a, p1), dtype::int32, shape{6, 6},
                 {0, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 0, 0, 4, 4, 0, 0, 0,
                  0, 5, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
    check_values(ops::pad(a, i64({2, 2}, {1, 2, 1, 3}), i32({}, {1})), dtype::int32, shape{6, 6},
                 {1, 1, 1, 1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 4, 4, 1, 1, 1,
                  1, 5, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1});
    tensor b = f32({2, 3}, {0, 1, 2, 3, 4, 9});
    ops::paddings_t p2{{1, 1}, {1, 2}};
    check_values(ops::mirror_pad(b, p2, ops::mirror_mode::reflect), dtype::float32, shape{4, 6},
                 {4, 3, 4, 9, 4, 3, 1, 0, 1, 2, 1, 0, 4, 3, 4, 9, 4, 3, 1, 0, 1, 2, 1, 0});
    check_values(ops::mirror_pad(b, i32({2, 2}, {1, 1, 1, 2}), "SYMMETRIC"), dtype::float32,
                 shape{4, 6},
                 {0, 0, 1, 2, 2, 1, 0, 0, 1, 2, 2, 1, 3, 3, 4, 9, 9, 4, 3, 3, 4, 9, 9, 4});
    auto s = tensor::from_vector<std::string>({2, 2}, {"Hello", "World", "Goodnight", "Moon"});
    auto c = ops::pad(s, {{1, 0}, {0, 1}}, tensor::scalar_of("PAD"));
    const std::vector<std::string> want_c{"PAD", "PAD",       "PAD",  "Hello", "World",
                                          "PAD", "Goodnight", "Moon", "PAD"};
    for (std::size_t i = 0; i < want_c.size(); ++i) CHECK(c.data<std::string>()[i] == want_c[i]);
    auto r = ops::mirror_pad(s, {{1, 0}, {0, 1}}, ops::mirror_mode::reflect);
    const std::vector<std::string> want_r{"Goodnight", "Moon",  "Goodnight",
                                          "Hello",     "World", "Hello",
                                          "Goodnight", "Moon",  "Goodnight"};
    for (std::size_t i = 0; i < want_r.size(); ++i) CHECK(r.data<std::string>()[i] == want_r[i]);
    auto y = ops::mirror_pad(s, {{1, 0}, {0, 1}}, ops::mirror_mode::symmetric);
    const std::vector<std::string> want_y{"Hello", "World",     "World", "Hello", "World",
                                          "World", "Goodnight", "Moon",  "Moon"};
    for (std::size_t i = 0; i < want_y.size(); ++i) CHECK(y.data<std::string>()[i] == want_y[i]);
    // Empty input with constant padding; a scalar with no paddings.
    check_values(ops::pad(f32({0, 2}, {}), {{1, 0}, {0, 1}}), dtype::float32, shape{1, 3},
                 {0, 0, 0});
    check_values(ops::pad(tensor::scalar_of(7.0), ops::paddings_t{}), dtype::float64, shape{}, {7});
    // Errors (testPaddingsNonNegative, testPaddingsMaximum).
    GRAFT_CHECK_THROWS_MSG(ops::pad(i32({1}, {1}), i32({1, 2}, {-1, 0})), invalid_argument_error,
                           "Pad: paddings must be non-negative");
    GRAFT_CHECK_THROWS_MSG(ops::pad(i32({1, 2}, {1, 2}), i32({2}, {1, 2})), invalid_argument_error,
                           "Pad: paddings must have shape [2,2]");
    GRAFT_CHECK_THROWS_MSG(
        ops::mirror_pad(i32({2}, {1, 2}), i32({1, 2}, {2, 0}), "REFLECT"), invalid_argument_error,
        "MirrorPad: paddings (2, 0) for dim 0 of size 2 must be at most 1 in REFLECT mode");
    GRAFT_CHECK_THROWS_MSG(ops::mirror_pad(i32({2}, {1, 2}), i32({1, 2}, {0, 3}), "SYMMETRIC"),
                           invalid_argument_error, "must be at most 2 in SYMMETRIC mode");
    GRAFT_CHECK_THROWS_MSG(ops::mirror_pad(i32({2}, {1, 2}), i32({1, 2}, {0, 1}), "WEIRD"),
                           invalid_argument_error, "MirrorPad: mode must be REFLECT or SYMMETRIC");
    GRAFT_CHECK_THROWS_MSG(ops::pad(a, p1, f32({}, {1})), invalid_argument_error,
                           "PadV2: input is int32[3,2] but constant_values is float32[]");
}

TEST_CASE("MirrorPadGrad is the adjoint of MirrorPad") {
    const shape s{3, 4, 2};
    const ops::paddings_t pads{{2, 1}, {1, 3}, {0, 1}};
    for (auto mode : {ops::mirror_mode::reflect, ops::mirror_mode::symmetric}) {
        tensor x = f64(s, noise(24, -1, 1, 81));
        tensor padded = ops::mirror_pad(x, pads, mode);
        tensor g =
            f64(padded.shape(), noise(static_cast<std::size_t>(padded.num_elements()), -1, 1, 82));
        tensor gx = ops::mirror_pad_grad(g, pads, mode);
        CHECK(gx.shape() == s);
        // <mirror_pad(x), g> == <x, mirror_pad_grad(g)> for every x and g.
        double lhs = 0, rhs = 0;
        auto pv = values(padded), gv = values(g), xv = values(x), gxv = values(gx);
        for (std::size_t i = 0; i < pv.size(); ++i) lhs += pv[i] * gv[i];
        for (std::size_t i = 0; i < xv.size(); ++i) rhs += xv[i] * gxv[i];
        CHECK(lhs == doctest::Approx(rhs).epsilon(1e-12));
    }
    // A 1-D case by hand: REFLECT [a b c] with (1, 1) gives [b a b c b].
    check_values(
        ops::mirror_pad_grad(f32({5}, {1, 10, 100, 1000, 10000}), i32({1, 2}, {1, 1}), "REFLECT"),
        dtype::float32, shape{3}, {10, 10101, 1000});
}

namespace {

/// out[o] = x[map(coords of o)] over an output shape, or `fill` where map returns -1 for a dim.
std::vector<double> ref_gather_coords(const shape& xs, const std::vector<double>& x, const shape& os,
                                      const std::function<std::int64_t(std::size_t, std::int64_t)>& map,
                                      double fill) {
    const auto& od = os.dims();
    const auto xst = row_major_strides(xs);
    std::vector<double> out(static_cast<std::size_t>(os.num_elements()));
    for (std::int64_t o = 0; o < os.num_elements(); ++o) {
        std::int64_t rem = o, in = 0;
        bool inside = true;
        for (std::size_t k = od.size(); k-- > 0;) {
            const std::int64_t j = map(k, rem % od[k]);
            rem /= od[k];
            if (j < 0) inside = false;
            else in += j * xst[k];
        }
        out[static_cast<std::size_t>(o)] = inside ? x[static_cast<std::size_t>(in)] : fill;
    }
    return out;
}

}  // namespace

// Pad, PadV2 and MirrorPad (both modes) over ranks 1-5 and asymmetric paddings against a float64
// index-mapping reference (NumPy's np.pad semantics, which pad_op_test.py's _npPad uses).
TEST_CASE("Pad, PadV2 and MirrorPad over ranks and paddings against a float64 reference") {
    const std::pair<shape, ops::paddings_t> cases[] = {
        {{5}, {{2, 3}}},
        {{3, 4}, {{1, 2}, {0, 3}}},
        {{2, 3, 4}, {{0, 1}, {2, 2}, {1, 0}}},
        {{2, 2, 3, 2}, {{1, 0}, {1, 1}, {0, 2}, {1, 1}}},
        {{1, 3, 2, 2, 3}, {{0, 0}, {1, 1}, {1, 0}, {0, 1}, {2, 2}}},
        {{3, 2}, {{3, 0}, {2, 2}}},  // SYMMETRIC's limit (pad == dim); too wide for REFLECT
        {{0, 3}, {{1, 1}, {1, 0}}},  // empty input: constant padding only
    };
    for (const auto& [s_b, pads_b] : cases) {
        auto& s = s_b; auto& pads = pads_b;  // clang 14: lambdas cannot capture structured bindings
        vec od;
        for (std::size_t k = 0; k < pads.size(); ++k) od.push_back(s.dims()[k] + pads[k].first + pads[k].second);
        const shape os(od);
        for (dtype t : {dtype::float32, dtype::float64, dtype::int32}) {
            auto v = noise(static_cast<std::size_t>(s.num_elements()), -50, 50, 91);
            if (t == dtype::int32)
                for (auto& e : v) e = std::round(e);
            tensor x = make(t, s, v);
            const auto xv = values(x);
            CAPTURE(s.str());
            CAPTURE(dtype_name(t));
            auto constant = [&](std::size_t k, std::int64_t i) {
                const std::int64_t j = i - pads[k].first;
                return j >= 0 && j < s.dims()[k] ? j : std::int64_t{-1};
            };
            check_values(ops::pad(x, pads), t, os, ref_gather_coords(s, xv, os, constant, 0));
            check_values(ops::pad(x, pads, make(t, {}, {7})), t, os, ref_gather_coords(s, xv, os, constant, 7));
            for (auto mode : {ops::mirror_mode::reflect, ops::mirror_mode::symmetric}) {
                const bool reflect = mode == ops::mirror_mode::reflect;
                bool valid = true;
                for (std::size_t k = 0; k < pads.size(); ++k) {
                    const std::int64_t limit = s.dims()[k] - (reflect ? 1 : 0);
                    valid = valid && pads[k].first <= limit && pads[k].second <= limit;
                }
                if (!valid) continue;
                auto mirror = [&](std::size_t k, std::int64_t i) {
                    const std::int64_t n = s.dims()[k];
                    std::int64_t j = i - pads[k].first;
                    if (j < 0) j = reflect ? -j : -j - 1;
                    if (j >= n) j = reflect ? 2 * (n - 1) - j : 2 * n - 1 - j;
                    return j;
                };
                CAPTURE(reflect);
                check_values(ops::mirror_pad(x, pads, mode), t, os, ref_gather_coords(s, xv, os, mirror, 0));
            }
        }
    }
}

// Slice over ranks 1-4 with -1 sizes and empty results against the same reference.
TEST_CASE("Slice over ranks, begins and -1 sizes against a float64 reference") {
    struct c {
        shape s;
        vec begin, size;
    };
    const c cases[] = {
        {{7}, {2}, {4}},           {{7}, {6}, {-1}},          {{4, 5}, {1, 2}, {2, -1}},
        {{4, 5}, {0, 0}, {4, 5}},  {{4, 5}, {3, 5}, {1, 0}},  {{2, 3, 4}, {1, 0, 1}, {1, 3, 2}},
        {{2, 3, 4, 5}, {0, 1, 1, 2}, {-1, 2, 3, -1}},         {{3, 1, 4, 2}, {2, 0, 0, 1}, {1, -1, 4, 1}},
    };
    for (const auto& k : cases) {
        for (dtype t : {dtype::float32, dtype::int64}) {
            tensor x = iota(t, k.s, 1);
            vec od;
            for (std::size_t d = 0; d < k.size.size(); ++d)
                od.push_back(k.size[d] == -1 ? k.s.dims()[d] - k.begin[d] : k.size[d]);
            const shape os(od);
            CAPTURE(k.s.str());
            auto map = [&](std::size_t d, std::int64_t i) { return i + k.begin[d]; };
            check_values(ops::slice(x, k.begin, k.size), t, os, ref_gather_coords(k.s, values(x), os, map, 0));
            check_values(ops::slice(x, i32({static_cast<std::int64_t>(k.begin.size())},
                                           std::vector<double>(k.begin.begin(), k.begin.end())),
                                    i64({static_cast<std::int64_t>(k.size.size())},
                                        std::vector<double>(k.size.begin(), k.size.end()))),
                         t, os, ref_gather_coords(k.s, values(x), os, map, 0));
        }
    }
}
