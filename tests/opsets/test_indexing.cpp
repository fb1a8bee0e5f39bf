// The indexing family through graft::exec::session: GatherNd / ScatterNd / TensorScatter*, the
// scatters into ref and resource variables, TopKV2 / NthElement / InTopKV2, Segment* and
// UnsortedSegment{Prod,Min,Max}, Unique*, DynamicPartition, SparseToDense, SparseTensorDenseAdd —
// against the values of TF's own docs and tests (quoted) or references computed here, plus their
// gradients through graft's checker and a bad index or shape per group naming the node.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "graft/autodiff/check.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "support/tensors.hpp"

// One namespace per file: the opsets tests build as one binary in unity batches.
namespace graft_test_indexing {

using namespace graft::test;  // f32, f64, i32, i64, values

using graft::dtype;
using graft::endpoint;
using graft::shape;
using graft::tensor;

namespace {

/// Runs one fetch of a graph built by `build`.
template <class Build>
tensor run1(Build build) {
    graft::graph g;
    graft::graph_builder b(g);
    endpoint y = build(b);
    graft::exec::session s(g);
    return s.run({}, {y.str()})[0];
}

/// The message of what running `build`'s fetch throws ("" if nothing).
template <class Build>
std::string error_of(Build build) {
    try {
        (void)run1(build);
    } catch (const graft::error& e) {
        return e.what();
    }
    return "";
}

/// check_gradients of ys = f(xs), returning the worst relative error (1 when no entry was
/// compared or one was skipped as a kink: the inputs here have no ties).
double grad_error(const graft::autodiff::check_graph_fn& f, const std::vector<tensor>& xs) {
    auto r = graft::autodiff::check_gradients(f, xs);
    if (r.checked == 0 || r.skipped != 0 || r.max_rel_error >= 1e-6) MESSAGE(r.str());
    return r.checked == 0 || r.skipped != 0 ? 1.0 : r.max_rel_error;
}

}  // namespace

TEST_CASE("ScatterNd and GatherNd: TF's doc examples, duplicates summed, strings, gradients, bad indices") {
    // tf.scatter_nd doc: indices [[4],[3],[1],[7]], updates [9,10,11,12], shape [8].
    auto idx = i32({4, 1}, {4, 3, 1, 7});
    auto y = run1([&](auto& b) {
        return b.op("ScatterNd", {b.constant(idx), b.constant(f32({4}, {9, 10, 11, 12})), b.constant(i32({1}, {8}))});
    });
    CHECK(values(y) == std::vector<double>{0, 11, 0, 10, 9, 0, 0, 12});
    auto dup = run1([&](auto& b) {
        return b.op("ScatterNd", {b.constant(i64({3, 2}, {0, 1, 1, 0, 0, 1})), b.constant(f32({3}, {1, 2, 3})),
                                  b.constant(i64({2}, {2, 2}))});
    });
    CHECK(values(dup) == std::vector<double>{0, 4, 2, 0});
    // tf.gather_nd doc: [['a','b'],['c','d']] at [[0,0],[1,1]] -> ['a','d']; at [[1]] -> [['c','d']].
    auto strs = tensor::from_vector<std::string>(shape{2, 2}, {"a", "b", "c", "d"});
    auto g1 = run1([&](auto& b) {
        return b.op("GatherNd", {b.constant(strs), b.constant(i32({2, 2}, {0, 0, 1, 1}))});
    });
    CHECK(g1.shape() == shape{2});
    CHECK(g1.data<std::string>()[0] == "a");
    CHECK(g1.data<std::string>()[1] == "d");
    auto g2 = run1([&](auto& b) { return b.op("GatherNd", {b.constant(strs), b.constant(i32({1, 1}, {1}))}); });
    CHECK(g2.shape() == shape{1, 2});
    CHECK(g2.data<std::string>()[1] == "d");

    auto bad = error_of([&](auto& b) {
        return b.op("GatherNd", {b.constant(f32({2, 2}, {1, 2, 3, 4})), b.constant(i32({2, 2}, {0, 0, 2, 0}))},
                    {}, "bad_gather");
    });
    CHECK(bad.find("bad_gather") != std::string::npos);
    CHECK(bad.find("indices[1] = [2,0]") != std::string::npos);
    auto bad_shape = error_of([&](auto& b) {
        return b.op("ScatterNd", {b.constant(idx), b.constant(f32({3}, {1, 2, 3})), b.constant(i32({1}, {8}))}, {},
                    "bad_scatter");
    });
    CHECK(bad_shape.find("bad_scatter") != std::string::npos);
    CHECK(bad_shape.find("need updates of shape [4]") != std::string::npos);

    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& x) {
        auto i = b.constant(i32({3, 1}, {2, 0, 2}));
        return std::vector<endpoint>{b.op("ScatterNd", {i, x[0], b.constant(i32({2}, {4, 2}))})};
    }, {f64({3, 2}, {0.5, -1, 2, 3, 0.25, 4})}) < 1e-6);
    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& x) {
        return std::vector<endpoint>{b.op("GatherNd", {x[0], b.constant(i32({3, 2}, {1, 2, 0, 0, 1, 2}))})};
    }, {f64({2, 3}, {1, 2, 3, 4, 5, 6})}) < 1e-6);
}

TEST_CASE("TensorScatterUpdate/Add/Sub/Min/Max: TF's doc examples and their gradients") {
    // tf.tensor_scatter_nd_* docs: tensor [1]*8 (or [0]*8 for min/max), indices [[4],[3],[1],[7]].
    auto idx = i32({4, 1}, {4, 3, 1, 7});
    auto run_op = [&](const char* op, float base, std::vector<float> upd) {
        return values(run1([&](auto& b) {
            return b.op(op, {b.constant(f32({8}, std::vector<float>(8, base))), b.constant(idx),
                             b.constant(f32({4}, upd))});
        }));
    };
    CHECK(run_op("TensorScatterUpdate", 1, {9, 10, 11, 12}) == std::vector<double>{1, 11, 1, 10, 9, 1, 1, 12});
    CHECK(run_op("TensorScatterAdd", 1, {9, 10, 11, 12}) == std::vector<double>{1, 12, 1, 11, 10, 1, 1, 13});
    CHECK(run_op("TensorScatterSub", 1, {9, 10, 11, 12}) == std::vector<double>{1, -10, 1, -9, -8, 1, 1, -11});
    CHECK(run_op("TensorScatterMax", 0, {5, 5, 5, 5}) == std::vector<double>{0, 5, 0, 5, 5, 0, 0, 5});
    CHECK(run_op("TensorScatterMin", 0, {-5, -5, -5, -5}) == std::vector<double>{0, -5, 0, -5, -5, 0, 0, -5});
    // bool tensors update as any dtype does
    auto bools = run1([&](auto& b) {
        return b.op("TensorScatterUpdate", {b.constant(tensor::from_vector<bool>(shape{3}, {false, false, false})),
                                            b.constant(i32({1, 1}, {1})),
                                            b.constant(tensor::from_vector<bool>(shape{1}, {true}))});
    });
    CHECK(values(bools) == std::vector<double>{0, 1, 0});

    for (const char* op : {"TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub", "TensorScatterMin",
                           "TensorScatterMax"}) {
        INFO(op);
        CHECK(grad_error([op](const graft::graph_builder& b, const std::vector<endpoint>& x) {
            auto i = b.constant(i32({2, 2}, {0, 1, 1, 0}));
            return std::vector<endpoint>{b.op(op, {x[0], i, x[1]})};
        }, {f64({2, 2}, {1, 2, 3, 4}), f64({2}, {2.5, 0.5})}) < 1e-6);
    }
}

TEST_CASE("Scatter ops on TF1 ref variables update in place and output the ref; a frozen Const is updated on a copy") {
    graft::graph g;
    graft::graph_builder b(g);
    auto v = b.variable("v", f32({3, 2}, {1, 2, 3, 4, 5, 6}));
    auto add = b.op("ScatterAdd", {v.ref, b.constant(i32({3}, {2, 0, 2})),
                                   b.constant(f32({3, 2}, {1, 1, 2, 2, 10, 10}))}, {}, "add");
    auto mul = b.op("ScatterMul", {v.ref, b.constant(i32({}, {1})), b.constant(f32({}, {10}))}, {}, "mul");
    auto nd = b.variable("nd", f32({8}, {1, 2, 3, 4, 5, 6, 7, 8}));
    auto nd_idx = b.constant(i32({4, 1}, {4, 3, 1, 7}));
    auto nd_upd = b.constant(f32({4}, {9, 10, 11, 12}));
    auto nd_add = b.op("ScatterNdAdd", {nd.ref, nd_idx, nd_upd}, {}, "nd_add");
    auto bad = b.op("ScatterSub", {v.ref, b.constant(i32({2}, {0, 3})), b.constant(f32({2, 2}, {1, 1, 1, 1}))}, {},
                    "bad_sub");
    graft::exec::session s(g);
    s.run({}, {}, {v.assign, nd.assign});
    CHECK(values(s.run({}, {add.str()})[0]) == std::vector<double>{3, 4, 3, 4, 16, 17});
    CHECK(values(s.run({}, {mul.str()})[0]) == std::vector<double>{3, 4, 30, 40, 16, 17});
    // tf.compat.v1.scatter_nd_add doc: [1..8] -> [1, 13, 3, 14, 14, 6, 7, 20].
    CHECK(values(s.run({}, {nd_add.str()})[0]) == std::vector<double>{1, 13, 3, 14, 14, 6, 7, 20});
    tensor before = s.run({}, {v.value.str()})[0];
    try {
        s.run({}, {bad.str()});
        FAIL("an index past the variable must fail");
    } catch (const graft::error& e) {
        CHECK(std::string(e.what()).find("bad_sub") != std::string::npos);
        CHECK(std::string(e.what()).find("indices[1] = 3 is not in [0, 3)") != std::string::npos);
    }
    CHECK(graft::equal(s.run({}, {v.value.str()})[0], before));  // nothing written

    // The other kinds, on a Const as frozen graphs have it (TF ran them on the variable).
    auto on_const = [](const char* op, std::vector<float> upd) {
        return values(run1([&](auto& bb) {
            return bb.op(op, {bb.constant(f32({8}, {1, 2, 3, 4, 5, 6, 7, 8})), bb.constant(i32({4, 1}, {4, 3, 1, 7})),
                              bb.constant(f32({4}, upd))});
        }));
    };
    // tf.compat.v1.scatter_nd_update / scatter_nd_sub docs.
    CHECK(on_const("ScatterNdUpdate", {9, 10, 11, 12}) == std::vector<double>{1, 11, 3, 10, 9, 6, 7, 12});
    CHECK(on_const("ScatterNdSub", {9, 10, 11, 12}) == std::vector<double>{1, -9, 3, -6, -4, 6, 7, -4});
    CHECK(on_const("ScatterNdMax", {0, 10, 0, 12}) == std::vector<double>{1, 2, 3, 10, 5, 6, 7, 12});
    auto rows = [](const char* op, std::vector<float> upd) {
        return values(run1([&](auto& bb) {
            return bb.op(op, {bb.constant(f32({4}, {8, 6, 4, 2})), bb.constant(i32({2}, {0, 3})),
                              bb.constant(f32({2}, upd))});
        }));
    };
    CHECK(rows("ScatterUpdate", {1, 1}) == std::vector<double>{1, 6, 4, 1});
    CHECK(rows("ScatterDiv", {2, 4}) == std::vector<double>{4, 6, 4, 0.5});
    CHECK(rows("ScatterMin", {5, 5}) == std::vector<double>{5, 6, 4, 2});
    CHECK(rows("ScatterMax", {5, 5}) == std::vector<double>{8, 6, 4, 5});
    // empty indices and updates leave the value as it is
    auto empty = run1([](auto& bb) {
        return bb.op("ScatterAdd", {bb.constant(f32({2}, {1, 2})), bb.constant(i32({1, 0}, {})),
                                    bb.constant(f32({1, 0}, {}))});
    });
    CHECK(values(empty) == std::vector<double>{1, 2});
}

TEST_CASE("ResourceScatter* and ResourceScatterNd* update resource variables") {
    graft::graph g;
    graft::graph_builder b(g);
    auto h = b.op("VarHandleOp", {}, {{"dtype", dtype::float32}, {"shape", shape{3}}}, "h");
    auto init = b.add("AssignVariableOp", {h, b.constant(f32({3}, {1, 2, 3}))}, {}, "init").name;
    auto add = b.add("ResourceScatterAdd", {h, b.constant(i32({2}, {2, 2})), b.constant(f32({2}, {10, 20}))}, {},
                     "radd").name;
    auto nd = b.add("ResourceScatterNdUpdate", {h, b.constant(i32({1, 1}, {0})), b.constant(f32({1}, {-1}))}, {},
                    "rnd").name;
    auto mx = b.add("ResourceScatterMax", {h, b.constant(i32({1}, {1})), b.constant(f32({1}, {7}))}, {}, "rmax").name;
    auto read = b.op("ReadVariableOp", {h}, {{"dtype", dtype::float32}});
    graft::exec::session s(g);
    s.run({}, {}, {init});
    s.run({}, {}, {add});
    CHECK(values(s.run({}, {read.str()})[0]) == std::vector<double>{1, 2, 33});
    s.run({}, {}, {nd});
    s.run({}, {}, {mx});
    CHECK(values(s.run({}, {read.str()})[0]) == std::vector<double>{-1, 7, 33});
}

TEST_CASE("TopKV2: largest first, ties by lower index, k from an input; its gradient; k too large") {
    // TF's topk_op_test: [[0.1, 0.3, 0.2, 0.4], [0.1, 0.3, 0.3, 0.2]], k = 2.
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.constant(f32({2, 4}, {0.1f, 0.3f, 0.2f, 0.4f, 0.1f, 0.3f, 0.3f, 0.2f}));
    auto tk = b.op_n("TopKV2", {x, b.constant(tensor::scalar_of<std::int32_t>(2))});
    auto tk64 = b.op_n("TopKV2", {x, b.constant(tensor::scalar_of<std::int32_t>(4))}, {{"index_type", dtype::int64}});
    graft::exec::session s(g);
    auto out = s.run({}, {tk[0].str(), tk[1].str(), tk64[1].str()});
    CHECK(out[0].shape() == shape{2, 2});
    CHECK(values(out[0]) == std::vector<double>{0.4f, 0.3f, 0.3f, 0.3f});
    CHECK(out[1].type() == dtype::int32);
    CHECK(values(out[1]) == std::vector<double>{3, 1, 1, 2});
    CHECK(out[2].type() == dtype::int64);
    CHECK(values(out[2]) == std::vector<double>{3, 1, 2, 0, 1, 2, 3, 0});

    auto err = error_of([](auto& bb) {
        return bb.op("TopKV2", {bb.constant(f32({3}, {1, 2, 3})), bb.constant(tensor::scalar_of<std::int32_t>(4))},
                     {}, "too_many");
    });
    CHECK(err.find("too_many") != std::string::npos);
    CHECK(err.find("at least k columns") != std::string::npos);

    CHECK(grad_error([](const graft::graph_builder& bb, const std::vector<endpoint>& xs) {
        return std::vector<endpoint>{bb.op("TopKV2", {xs[0], bb.constant(tensor::scalar_of<std::int32_t>(2))})};
    }, {f64({2, 3}, {0.5, 3, -1, 2, 0.25, 4})}) < 1e-6);
}

TEST_CASE("NthElement and InTopKV2") {
    auto nth = [](int n, bool reverse) {
        return values(run1([&](auto& b) {
            return b.op("NthElement", {b.constant(f32({2, 3}, {1, 5, 3, 4, 2, 6})),
                                       b.constant(tensor::scalar_of<std::int32_t>(n))}, {{"reverse", reverse}});
        }));
    };
    CHECK(nth(0, false) == std::vector<double>{1, 2});
    CHECK(nth(1, false) == std::vector<double>{3, 4});
    CHECK(nth(0, true) == std::vector<double>{5, 6});
    auto err = error_of([](auto& b) {
        return b.op("NthElement", {b.constant(f32({3}, {1, 2, 3})), b.constant(tensor::scalar_of<std::int32_t>(3))},
                    {}, "nth_bad");
    });
    CHECK(err.find("nth_bad") != std::string::npos);
    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
        return std::vector<endpoint>{b.op("NthElement", {xs[0], b.constant(tensor::scalar_of<std::int32_t>(1))})};
    }, {f64({2, 3}, {0.5, 3, -1, 2, 0.25, 4})}) < 1e-6);

    // TF's in_topk_op_test: [[0.1, 0.3, 0.2, 0.4], [0.1, 0.2, 0.3, 0.4]], targets [3, 2].
    auto in_top = [](std::vector<float> p, std::vector<std::int32_t> t, int k) {
        return values(run1([&](auto& b) {
            return b.op("InTopKV2", {b.constant(f32({2, 4}, p)), b.constant(i32({2}, t)),
                                     b.constant(tensor::scalar_of<std::int32_t>(k))});
        }));
    };
    const std::vector<float> p{0.1f, 0.3f, 0.2f, 0.4f, 0.1f, 0.2f, 0.3f, 0.4f};
    CHECK(in_top(p, {3, 2}, 1) == std::vector<double>{1, 0});
    CHECK(in_top(p, {3, 2}, 2) == std::vector<double>{1, 1});
    // ties count once (testInTop2Tie), out-of-range targets and non-finite rows are false
    CHECK(in_top({0.1f, 0.3f, 0.2f, 0.2f, 0.1f, 0.3f, 0.2f, 0.2f}, {2, 3}, 2) == std::vector<double>{1, 1});
    const float nan = std::numeric_limits<float>::quiet_NaN();
    CHECK(in_top({0.1f, nan, 0.2f, 0.4f, 0.1f, 0.2f, 0.3f, 0.4f}, {3, 5}, 4) == std::vector<double>{0, 0});
}

TEST_CASE("Segment reductions: TF's doc examples, empty segments, unsorted ids an error") {
    // tf.math.segment_* docs: c = [[1,2,3,4],[4,3,2,1],[5,6,7,8]], ids [0,0,1].
    const auto c = f32({3, 4}, {1, 2, 3, 4, 4, 3, 2, 1, 5, 6, 7, 8});
    auto seg = [&](const char* op, std::vector<std::int32_t> ids) {
        return values(run1([&](auto& b) { return b.op(op, {b.constant(c), b.constant(i32({3}, ids))}); }));
    };
    CHECK(seg("SegmentSum", {0, 0, 1}) == std::vector<double>{5, 5, 5, 5, 5, 6, 7, 8});
    CHECK(seg("SegmentProd", {0, 0, 1}) == std::vector<double>{4, 6, 6, 4, 5, 6, 7, 8});
    CHECK(seg("SegmentMax", {0, 0, 1}) == std::vector<double>{4, 3, 3, 4, 5, 6, 7, 8});
    CHECK(seg("SegmentMin", {0, 0, 1}) == std::vector<double>{1, 2, 2, 1, 5, 6, 7, 8});
    CHECK(seg("SegmentMean", {0, 0, 1}) == std::vector<double>{2.5, 2.5, 2.5, 2.5, 5, 6, 7, 8});
    // a segment no id names: 0, or 1 for SegmentProd
    CHECK(seg("SegmentMax", {0, 2, 2}) == std::vector<double>{1, 2, 3, 4, 0, 0, 0, 0, 5, 6, 7, 8});
    CHECK(seg("SegmentProd", {1, 1, 1}) == std::vector<double>{1, 1, 1, 1, 20, 36, 42, 32});
    auto err = error_of([&](auto& b) {
        return b.op("SegmentSum", {b.constant(c), b.constant(i32({3}, {1, 0, 1}))}, {}, "unsorted_ids");
    });
    CHECK(err.find("unsorted_ids") != std::string::npos);
    CHECK(err.find("not increasing") != std::string::npos);

    // tf.math.unsorted_segment_* docs: c = [[1,2,3,4],[5,6,7,8],[4,3,2,1]], ids [0,1,0].
    const auto u = f32({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 4, 3, 2, 1});
    auto useg = [&](const char* op, std::vector<std::int32_t> ids, int num) {
        return values(run1([&](auto& b) {
            return b.op(op, {b.constant(u), b.constant(i32({3}, ids)),
                             b.constant(tensor::scalar_of<std::int32_t>(num))});
        }));
    };
    CHECK(useg("UnsortedSegmentMax", {0, 1, 0}, 2) == std::vector<double>{4, 3, 3, 4, 5, 6, 7, 8});
    CHECK(useg("UnsortedSegmentMin", {0, 1, 0}, 2) == std::vector<double>{1, 2, 2, 1, 5, 6, 7, 8});
    CHECK(useg("UnsortedSegmentProd", {0, 1, 0}, 2) == std::vector<double>{4, 6, 6, 4, 5, 6, 7, 8});
    // empty segments hold the identity; negative ids are dropped
    auto mx = useg("UnsortedSegmentMax", {-1, 1, 1}, 3);
    CHECK(mx[0] == static_cast<double>(std::numeric_limits<float>::lowest()));
    CHECK(std::vector<double>(mx.begin() + 4, mx.begin() + 8) == std::vector<double>{5, 6, 7, 8});
    CHECK(useg("UnsortedSegmentMin", {1, 1, 1}, 2)[0] == static_cast<double>(std::numeric_limits<float>::max()));
    CHECK(useg("UnsortedSegmentProd", {1, 1, -1}, 2) == std::vector<double>{1, 1, 1, 1, 5, 12, 21, 32});
    auto range = error_of([&](auto& b) {
        return b.op("UnsortedSegmentMax", {b.constant(u), b.constant(i32({3}, {0, 2, 0})),
                                           b.constant(tensor::scalar_of<std::int32_t>(2))}, {}, "id_past");
    });
    CHECK(range.find("id_past") != std::string::npos);
    CHECK(range.find("segment_ids[1] = 2 is out of range [0, 2)") != std::string::npos);
}

TEST_CASE("Segment reduction gradients (sorted and unsorted, with a zero and negative ids)") {
    const auto x = f64({4, 2}, {0.5, -1, 2, 3, 0.25, 4, -2, 1.5});
    for (const char* op : {"SegmentSum", "SegmentMean", "SegmentProd", "SegmentMin", "SegmentMax"}) {
        INFO(op);
        CHECK(grad_error([op](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
            return std::vector<endpoint>{b.op(op, {xs[0], b.constant(i32({4}, {0, 0, 0, 2}))})};
        }, {x}) < 1e-6);
    }
    for (const char* op : {"UnsortedSegmentProd", "UnsortedSegmentMin", "UnsortedSegmentMax"}) {
        INFO(op);
        CHECK(grad_error([op](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
            return std::vector<endpoint>{b.op(op, {xs[0], b.constant(i32({4}, {1, -1, 1, 0})),
                                                   b.constant(tensor::scalar_of<std::int32_t>(3))})};
        }, {x}) < 1e-6);
    }
    // one zero in a product segment: only it gets a gradient (the product of the others)
    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
        return std::vector<endpoint>{b.op("SegmentProd", {xs[0], b.constant(i32({3}, {0, 0, 0}))})};
    }, {f64({3}, {2, 0, 3})}) < 1e-6);
}

TEST_CASE("Unique, UniqueWithCounts and UniqueV2 along an axis") {
    // tf.unique_with_counts doc: [1, 1, 2, 4, 4, 4, 7, 8, 8].
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.constant(i32({9}, {1, 1, 2, 4, 4, 4, 7, 8, 8}));
    auto u = b.op_n("UniqueWithCounts", {x}, {{"out_idx", dtype::int64}});
    // tf.unique doc (UniqueV2): [[1,0,0],[1,0,0],[2,0,0]] along axis 0 and 1.
    auto m = b.constant(i32({3, 3}, {1, 0, 0, 1, 0, 0, 2, 0, 0}));
    auto a0 = b.op_n("UniqueV2", {m, b.constant(i64({1}, {0}))});
    auto a1 = b.op_n("UniqueV2", {m, b.constant(i64({1}, {1}))});
    auto s = b.op_n("Unique", {b.constant(tensor::from_vector<std::string>(shape{4}, {"b", "a", "b", "c"}))});
    graft::exec::session sess(g);
    auto out = sess.run({}, {u[0].str(), u[1].str(), u[2].str(), a0[0].str(), a0[1].str(), a1[0].str(), a1[1].str(),
                             s[0].str(), s[1].str()});
    CHECK(values(out[0]) == std::vector<double>{1, 2, 4, 7, 8});
    CHECK(out[1].type() == dtype::int64);
    CHECK(values(out[1]) == std::vector<double>{0, 0, 1, 2, 2, 2, 3, 4, 4});
    CHECK(values(out[2]) == std::vector<double>{2, 1, 3, 1, 2});
    CHECK(out[3].shape() == shape{2, 3});
    CHECK(values(out[3]) == std::vector<double>{1, 0, 0, 2, 0, 0});
    CHECK(values(out[4]) == std::vector<double>{0, 0, 1});
    CHECK(out[5].shape() == shape{3, 2});
    CHECK(values(out[5]) == std::vector<double>{1, 0, 1, 0, 2, 0});
    CHECK(values(out[6]) == std::vector<double>{0, 1, 1});
    CHECK(out[7].data<std::string>()[1] == "a");
    CHECK(values(out[8]) == std::vector<double>{0, 1, 0, 2});
    auto err = error_of([](auto& bb) { return bb.op("Unique", {bb.constant(i32({2, 2}, {1, 2, 3, 4}))}, {}, "u2d"); });
    CHECK(err.find("u2d") != std::string::npos);
    CHECK(err.find("1-D") != std::string::npos);
}

TEST_CASE("DynamicPartition: TF's doc example, rows of a matrix, bad partition, gradient") {
    graft::graph g;
    graft::graph_builder b(g);
    // tf.dynamic_partition doc: partitions [0, 0, 1, 1, 0], data [10, 20, 30, 40, 50].
    auto p = b.op_n("DynamicPartition", {b.constant(f32({5}, {10, 20, 30, 40, 50})),
                                         b.constant(i32({5}, {0, 0, 1, 1, 0}))}, {{"num_partitions", std::int64_t{2}}});
    auto q = b.op_n("DynamicPartition", {b.constant(f32({3, 2}, {1, 2, 3, 4, 5, 6})), b.constant(i32({3}, {2, 0, 2}))},
                    {{"num_partitions", std::int64_t{3}}});
    graft::exec::session s(g);
    auto out = s.run({}, {p[0].str(), p[1].str(), q[0].str(), q[1].str(), q[2].str()});
    CHECK(values(out[0]) == std::vector<double>{10, 20, 50});
    CHECK(values(out[1]) == std::vector<double>{30, 40});
    CHECK(out[2].shape() == shape{1, 2});
    CHECK(out[3].shape() == shape{0, 2});
    CHECK(values(out[4]) == std::vector<double>{1, 2, 5, 6});
    auto err = error_of([](auto& bb) {
        return bb.op_n("DynamicPartition", {bb.constant(f32({2}, {1, 2})), bb.constant(i32({2}, {0, 2}))},
                       {{"num_partitions", std::int64_t{2}}}, "part_bad")[0];
    });
    CHECK(err.find("part_bad") != std::string::npos);
    CHECK(err.find("partitions[1] = 2 is not in [0, 2)") != std::string::npos);
    CHECK(grad_error([](const graft::graph_builder& bb, const std::vector<endpoint>& xs) {
        auto parts = bb.op_n("DynamicPartition", {xs[0], bb.constant(i32({3}, {1, 0, 1}))},
                             {{"num_partitions", std::int64_t{2}}});
        return std::vector<endpoint>{bb.op("Mul", {parts[1], parts[1]}), parts[0]};
    }, {f64({3, 2}, {1, 2, 3, 4, 5, 6})}) < 1e-6);
}

TEST_CASE("SparseToDense and SparseTensorDenseAdd, with gradients and out-of-bounds indices") {
    auto dense = run1([](auto& b) {
        return b.op("SparseToDense", {b.constant(i64({2, 2}, {0, 1, 2, 3})), b.constant(i64({2}, {3, 4})),
                                      b.constant(f32({2}, {5, 6})), b.constant(tensor::scalar_of(-1.f))});
    });
    CHECK(dense.shape() == shape{3, 4});
    CHECK(values(dense) == std::vector<double>{-1, 5, -1, -1, -1, -1, -1, -1, -1, -1, -1, 6});
    auto one_d = run1([](auto& b) {  // 1-D indices, a scalar value for all
        return b.op("SparseToDense", {b.constant(i32({2}, {0, 3})), b.constant(i32({1}, {4})),
                                      b.constant(tensor::scalar_of(7.f)), b.constant(tensor::scalar_of(0.f))});
    });
    CHECK(values(one_d) == std::vector<double>{7, 0, 0, 7});
    auto order = error_of([](auto& b) {
        return b.op("SparseToDense", {b.constant(i32({2}, {3, 0})), b.constant(i32({1}, {4})),
                                      b.constant(tensor::scalar_of(7.f)), b.constant(tensor::scalar_of(0.f))}, {},
                    "unordered");
    });
    CHECK(order.find("unordered") != std::string::npos);
    CHECK(order.find("out of order") != std::string::npos);

    // b + A with a repeated index: the values add up.
    auto sum = run1([](auto& b) {
        return b.op("SparseTensorDenseAdd", {b.constant(i64({3, 2}, {0, 0, 1, 1, 0, 0})),
                                             b.constant(f32({3}, {10, 20, 30})), b.constant(i64({2}, {2, 2})),
                                             b.constant(f32({2, 2}, {1, 2, 3, 4}))});
    });
    CHECK(values(sum) == std::vector<double>{41, 2, 3, 24});
    auto oob = error_of([](auto& b) {
        return b.op("SparseTensorDenseAdd", {b.constant(i64({1, 2}, {0, 2})), b.constant(f32({1}, {10})),
                                             b.constant(i64({2}, {2, 2})), b.constant(f32({2, 2}, {1, 2, 3, 4}))},
                    {}, "sparse_oob");
    });
    CHECK(oob.find("sparse_oob") != std::string::npos);
    CHECK(oob.find("indices[0] = [0,2]") != std::string::npos);

    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
        return std::vector<endpoint>{b.op("SparseTensorDenseAdd", {b.constant(i64({2, 2}, {0, 1, 1, 0})), xs[0],
                                                                   b.constant(i64({2}, {2, 2})), xs[1]})};
    }, {f64({2}, {1.5, -2}), f64({2, 2}, {1, 2, 3, 4})}) < 1e-6);
    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
        return std::vector<endpoint>{b.op("SparseToDense", {b.constant(i32({2, 2}, {0, 1, 1, 0})),
                                                            b.constant(i32({2}, {2, 3})), xs[0], xs[1]})};
    }, {f64({2}, {1.5, -2}), tensor::scalar_of(0.5)}) < 1e-6);
}

}  // namespace graft_test_indexing
