// Shape, joining, slicing, padding, tiling, gathering, selecting, casting and reduction rules
// through the gradient checker.
#include <doctest/doctest.h>

#include "checking.hpp"

using graft::dtype;
using graft::endpoint;
using graft::graph_builder;
using graft::shape;
using graft::tensor;
using graft::test::check_both;
using graft::test::ints;
using graft::test::values;
using xs_t = std::vector<endpoint>;

namespace {
/// y * w with a fixed random w, so that every output element gets its own weight in sums.
endpoint weighted(const graph_builder& b, const endpoint& y, const shape& s) {
    return b.op("Mul", {y, b.constant(graft::cast(values(s, 99, 0.5, 1.5), b.dtype_of(y)))});
}
}  // namespace

TEST_CASE("rules: reshape, squeeze, expand_dims, transpose, identity") {
    check_both("Reshape", [](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("Reshape", {x[0], ints(b, {3, -1})})};
    }, {values(shape{2, 3}, 1)});
    check_both("Squeeze", [](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("Squeeze", {x[0]}, {{"squeeze_dims", graft::attr_value::list_of<std::int64_t>({1})}})};
    }, {values(shape{2, 1, 3}, 2)});
    check_both("ExpandDims", [](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("ExpandDims", {x[0], b.constant(tensor::scalar_of<std::int32_t>(-1))})};
    }, {values(shape{2, 3}, 3)});
    for (auto perm : {std::vector<std::int32_t>{1, 0, 2}, {2, 0, 1}, {0, 1, 2}}) {
        check_both("Transpose", [&](const graph_builder& b, const xs_t& x) {
            return xs_t{b.op("Transpose", {x[0], ints(b, perm)})};
        }, {values(shape{2, 3, 2}, 4)});
    }
    for (const char* op : {"Identity", "Snapshot"}) {
        check_both(op, [&](const graph_builder& b, const xs_t& x) { return xs_t{b.op(op, {x[0]})}; }, {values(shape{3}, 5)});
    }
    check_both("IdentityN", [](const graph_builder& b, const xs_t& x) {
        auto o = b.op_n("IdentityN", {x[0], x[1]});
        return xs_t{o[0], o[1]};
    }, {values(shape{3}, 5), values(shape{2}, 6)});
    check_both("AddN", [](const graph_builder& b, const xs_t& x) { return xs_t{b.op("AddN", {x[0], x[1], x[0]})}; },
               {values(shape{2, 2}, 7), values(shape{2, 2}, 8)});
}

TEST_CASE("rules: concat, split, pack, unpack") {
    for (std::int32_t axis : {0, 1, -1}) {
        check_both("ConcatV2 axis " + std::to_string(axis), [&](const graph_builder& b, const xs_t& x) {
            return xs_t{b.op("ConcatV2", {x[0], x[1], x[2], b.constant(tensor::scalar_of(axis))})};
        }, {values(shape{2, 3}, 1), values(shape{2, 3}, 2), values(shape{2, 3}, 3)});
    }
    check_both("ConcatV2 uneven", [](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("ConcatV2", {x[0], x[1], b.constant(tensor::scalar_of<std::int64_t>(1))})};
    }, {values(shape{2, 1}, 1), values(shape{2, 3}, 2)});
    check_both("Concat", [](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("Concat", {b.constant(tensor::scalar_of<std::int32_t>(0)), x[0], x[1]})};
    }, {values(shape{1, 3}, 1), values(shape{2, 3}, 2)});
    check_both("Split (all outputs)", [](const graph_builder& b, const xs_t& x) {
        auto o = b.op_n("Split", {b.constant(tensor::scalar_of<std::int32_t>(1)), x[0]}, {{"num_split", std::int64_t{3}}});
        return xs_t{o[0], o[1], o[2]};
    }, {values(shape{2, 6}, 3)});
    check_both("Split (one output used)", [](const graph_builder& b, const xs_t& x) {
        auto o = b.op_n("Split", {b.constant(tensor::scalar_of<std::int32_t>(0)), x[0]}, {{"num_split", std::int64_t{2}}});
        return xs_t{b.op("Square", {o[1]})};
    }, {values(shape{4, 2}, 4)});
    check_both("SplitV", [](const graph_builder& b, const xs_t& x) {
        auto o = b.op_n("SplitV", {x[0], ints(b, {1, 3, 2}), b.constant(tensor::scalar_of<std::int32_t>(-1))},
                        {{"num_split", std::int64_t{3}}});
        return xs_t{o[0], b.op("Square", {o[2]})};
    }, {values(shape{2, 6}, 5)});
    for (std::int64_t axis : {0, 1, -1}) {
        check_both("Pack axis " + std::to_string(axis), [&](const graph_builder& b, const xs_t& x) {
            return xs_t{b.op("Pack", {x[0], x[1]}, {{"axis", axis}})};
        }, {values(shape{2, 3}, 6), values(shape{2, 3}, 7)});
        check_both("Unpack axis " + std::to_string(axis), [&](const graph_builder& b, const xs_t& x) {
            auto o = b.op_n("Unpack", {x[0]}, {{"num", std::int64_t{2}}, {"axis", axis}});
            return xs_t{b.op("Mul", {o[0], o[0]})};  // o[1] unused: zeros for it
        }, {values(axis == 0 ? shape{2, 3} : shape{3, 2}, 8)});
    }
}

TEST_CASE("rules: slice, strided slice, pad, mirror pad, tile") {
    check_both("Slice", [](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("Slice", {x[0], ints(b, {1, 0, 1}), ints(b, {2, -1, 2})})};
    }, {values(shape{3, 2, 4}, 1)});
    check_both("Slice int64", [](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("Slice", {x[0], b.constant(tensor::from_vector<std::int64_t>({1})),
                                   b.constant(tensor::from_vector<std::int64_t>({2}))})};
    }, {values(shape{4}, 2)});
    check_both("StridedSlice", [](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("StridedSlice", {x[0], ints(b, {0, 3}), ints(b, {2, 0}), ints(b, {1, -2})})};
    }, {values(shape{3, 5}, 3)});
    check_both("StridedSlice masks", [](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("StridedSlice", {x[0], ints(b, {1, 0}), ints(b, {2, 0}), ints(b, {1, 2})},
                         {{"shrink_axis_mask", std::int64_t{1}}, {"end_mask", std::int64_t{2}}})};
    }, {values(shape{3, 5}, 4)});
    check_both("StridedSliceGrad", [](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("StridedSliceGrad", {ints(b, {3, 5}), ints(b, {0, 3}), ints(b, {2, 0}), ints(b, {1, -2}), x[0]})};
    }, {values(shape{2, 2}, 5)});
    check_both("Pad", [](const graph_builder& b, const xs_t& x) {
        return xs_t{weighted(b, b.op("Pad", {x[0], b.constant(tensor::from_vector<std::int32_t>({2, 2}, {1, 0, 2, 1}))}),
                             shape{4, 6})};
    }, {values(shape{3, 3}, 6)});
    check_both("PadV2", [](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("PadV2", {x[0], b.constant(tensor::from_vector<std::int64_t>({1, 2}, {2, 1})),
                                   b.scalar_as(b.dtype_of(x[0]), 7.0)})};
    }, {values(shape{3}, 7)});
    for (const char* mode : {"REFLECT", "SYMMETRIC"}) {
        check_both(std::string("MirrorPad ") + mode, [&](const graph_builder& b, const xs_t& x) {
            auto p = b.constant(tensor::from_vector<std::int32_t>({2, 2}, {1, 1, 0, 2}));
            return xs_t{weighted(b, b.op("MirrorPad", {x[0], p}, {{"mode", std::string(mode)}}), shape{5, 6})};
        }, {values(shape{3, 4}, 8)});
        check_both(std::string("MirrorPadGrad ") + mode, [&](const graph_builder& b, const xs_t& x) {
            auto p = b.constant(tensor::from_vector<std::int32_t>({2, 2}, {1, 1, 0, 2}));
            return xs_t{b.op("MirrorPadGrad", {x[0], p}, {{"mode", std::string(mode)}})};
        }, {values(shape{5, 6}, 9)});
    }
    check_both("Tile", [](const graph_builder& b, const xs_t& x) {
        return xs_t{weighted(b, b.op("Tile", {x[0], ints(b, {2, 1, 3})}), shape{4, 1, 6})};
    }, {values(shape{2, 1, 2}, 10)});
}

TEST_CASE("rules: gather, select, cast") {
    auto idx = tensor::from_vector<std::int32_t>({2, 2}, {2, 0, 2, 1});
    for (std::int32_t axis : {0, 1, 2}) {
        check_both("GatherV2 axis " + std::to_string(axis), [&](const graph_builder& b, const xs_t& x) {
            auto y = b.op("GatherV2", {x[0], b.constant(idx), b.constant(tensor::scalar_of(axis))});
            return xs_t{b.op("Square", {y})};
        }, {values(shape{3, 3, 3}, 1)});
    }
    check_both("GatherV2 int64 indices", [](const graph_builder& b, const xs_t& x) {
        auto y = b.op("GatherV2", {x[0], b.constant(tensor::from_vector<std::int64_t>({1, 1, 0})),
                                   b.constant(tensor::scalar_of<std::int64_t>(0))});
        return xs_t{y};
    }, {values(shape{2, 3}, 2)});
    check_both("Gather", [](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("Gather", {x[0], b.constant(tensor::from_vector<std::int32_t>({0, 0, 1}))})};
    }, {values(shape{2, 2}, 3)});
    auto cond = tensor::from_vector<bool>({2, 3}, {true, false, true, false, false, true});
    check_both("Select", [&](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("Select", {b.constant(cond), x[0], x[1]})};
    }, {values(shape{2, 3}, 4), values(shape{2, 3}, 5)});
    check_both("SelectV2 broadcasting", [&](const graph_builder& b, const xs_t& x) {
        auto c = b.constant(tensor::from_vector<bool>({3}, {true, false, true}));
        return xs_t{b.op("SelectV2", {c, x[0], x[1]})};
    }, {values(shape{2, 3}, 6), values(shape{}, 7)});
    check_both("Cast float <-> float", [](const graph_builder& b, const xs_t& x) {
        auto other = b.dtype_of(x[0]) == dtype::float64 ? dtype::float32 : dtype::float64;
        auto y = b.op("Cast", {b.op("Cast", {x[0]}, {{"DstT", other}})}, {{"DstT", b.dtype_of(x[0])}});
        return xs_t{b.op("Mul", {y, b.scalar_as(b.dtype_of(y), 3.0)})};
    }, {values(shape{3}, 8)}, {1e-3, 1e-3, 1e-3});  // float32 rounding inside the float64 graph limits the FD
}

TEST_CASE("rules: reductions") {
    struct red {
        shape s;
        std::vector<std::int32_t> axes;
        bool keep;
    };
    const std::vector<red> cases = {{{2, 3}, {1}, false}, {{2, 3}, {0}, true}, {{2, 3, 4}, {0, 2}, false},
                                    {{2, 3, 4}, {-1}, true}, {{2, 3}, {0, 1}, false}, {{4}, {}, false}};
    for (const char* op : {"Sum", "Mean", "Max", "Min", "Prod"}) {
        for (auto& c : cases) {
            bool minmax = std::string(op) == "Max" || std::string(op) == "Min";
            auto x = minmax ? graft::test::distinct_values(c.s, 3, -2.0, 0.13)
                            : values(c.s, 4, std::string(op) == "Prod" ? 0.5 : -2.0, 1.5);
            check_both(std::string(op) + " " + c.s.str(), [&](const graph_builder& b, const xs_t& in) {
                return xs_t{b.op(op, {in[0], ints(b, c.axes)}, {{"keep_dims", c.keep}})};
            }, {x});
        }
    }
    // Scalar axis, and Max with a tie: the gradient is split between the tied entries.
    check_both("Sum scalar axis", [](const graph_builder& b, const xs_t& in) {
        return xs_t{b.op("Sum", {in[0], b.constant(tensor::scalar_of<std::int32_t>(1))})};
    }, {values(shape{2, 3}, 5)});
    // Prod with zeros in a group: one zero, two zeros.
    check_both("Prod with zeros", [](const graph_builder& b, const xs_t& in) {
        return xs_t{b.op("Prod", {in[0], ints(b, {1})})};
    }, {tensor::from_vector<double>({3, 3}, {0.0, 2.0, 3.0, 0.0, 0.0, 1.5, 1.2, 0.7, 2.0})});
    check_both("L2Loss", [](const graph_builder& b, const xs_t& in) { return xs_t{b.op("L2Loss", {in[0]})}; },
               {values(shape{2, 3}, 6)});
}

TEST_CASE("rules: Max ties split the gradient evenly (TF's rule)") {
    graft::graph g;
    graph_builder b(g);
    auto x = b.placeholder("x", dtype::float64, shape{4});
    auto m = b.op("Max", {x, ints(b, {0})});
    auto d = graft::gradients(g, {m}, {x});
    graft::exec::session s{g};
    auto out = s.run({{"x", tensor::from_vector<double>({1.0, 3.0, 3.0, 2.0})}}, {d[0]->str()})[0];
    CHECK(out.data<double>()[0] == 0.0);
    CHECK(out.data<double>()[1] == 0.5);
    CHECK(out.data<double>()[2] == 0.5);
    // The checker detects the kink at the tie and skips those entries.
    auto r = graft::autodiff::check_gradients([](const graph_builder& bb, const xs_t& in) {
        return xs_t{bb.op("Max", {in[0], ints(bb, {0})})};
    }, {tensor::from_vector<double>({1.0, 3.0, 3.0, 2.0})});
    CHECK(r.skipped == 2);
    CHECK(r.max_rel_error < 1e-6);
}
