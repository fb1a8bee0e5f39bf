// The array_more family through graft::exec::session: ReverseV2/Reverse, Roll, ReverseSequence, the
// MatrixDiag/MatrixDiagPart/MatrixSetDiag V1-V3 family, MatrixBandPart, Diag/DiagPart, SpaceToBatchND /
// BatchToSpaceND (and V1), SpaceToDepth / DepthToSpace, ExtractImagePatches, BroadcastTo /
// BroadcastArgs, ConcatOffset, ParallelConcat, Empty and DeepCopy. Values are the examples of TF's
// API docs or float64 references written here; gradients go through graft's checker; bad inputs fail
// naming the node.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "graft/autodiff/check.hpp"
#include "graft/autodiff/gradients.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "support/tensors.hpp"

// One namespace per file: the opsets tests build as one binary in unity batches.
namespace graft_test_array_more {

using namespace graft::test;  // f32, f64, i32, i64, values

using graft::dtype;
using graft::endpoint;
using graft::shape;
using graft::tensor;

namespace {

std::vector<double> iota(std::size_t n, double from = 1) {
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = from + static_cast<double>(i);
    return v;
}

/// Builds a graph with `make`, runs it and returns the fetched tensors.
std::vector<tensor> run(const std::function<std::vector<endpoint>(const graft::graph_builder&)>& make) {
    graft::graph g;
    graft::graph_builder b(g);
    auto outs = make(b);
    std::vector<std::string> names;
    for (auto& e : outs) names.push_back(e.str());
    graft::exec::session s(g);
    return s.run({}, names);
}
tensor run1(const std::function<endpoint(const graft::graph_builder&)>& make) {
    return run([&](const graft::graph_builder& b) { return std::vector<endpoint>{make(b)}; })[0];
}

/// The max relative error of the gradient of `f` at `xs` (float64).
double grad_error(const std::function<endpoint(const graft::graph_builder&, const std::vector<endpoint>&)>& f,
                  const std::vector<tensor>& xs) {
    auto r = graft::autodiff::check_gradients(
        [&](const graft::graph_builder& b, const std::vector<endpoint>& x) { return std::vector<endpoint>{f(b, x)}; },
        xs);
    INFO(r.str());
    CHECK(r.checked > 0);
    return r.max_rel_error;
}

graft::attr_value ints_attr(std::vector<std::int64_t> v) { return graft::attr_value::list_of(v); }

}  // namespace

TEST_CASE("ReverseV2 flips the given axes (TF's doc example), any dtype; Reverse takes a bool mask") {
    // t = [[[[0..3], [4..7], [8..11]], [[12..15], [16..19], [20..23]]]], shape [1, 2, 3, 4]
    std::vector<double> t(24);
    for (int i = 0; i < 24; ++i) t[static_cast<std::size_t>(i)] = i;
    auto out = run([&](const graft::graph_builder& b) {
        auto x = b.constant(f64({1, 2, 3, 4}, t));
        return std::vector<endpoint>{b.op("ReverseV2", {x, b.constant(i32({1}, {3}))}),
                                     b.op("ReverseV2", {x, b.constant(i32({1}, {1}))}),
                                     b.op("ReverseV2", {x, b.constant(i64({1}, {-2}))}),
                                     b.op("ReverseV2", {x, b.constant(i32({0}, {}))}),
                                     b.op("Reverse", {x, b.constant(tensor::from_vector<bool>({4}, {false, true, false, true}))})};
    });
    CHECK(values(out[0]) == std::vector<double>{3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8,
                                                15, 14, 13, 12, 19, 18, 17, 16, 23, 22, 21, 20});
    CHECK(values(out[1]) == std::vector<double>{12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
                                                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    CHECK(values(out[2]) == std::vector<double>{8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3,
                                                20, 21, 22, 23, 16, 17, 18, 19, 12, 13, 14, 15});
    CHECK(values(out[3]) == t);
    CHECK(values(out[4]) == std::vector<double>{15, 14, 13, 12, 19, 18, 17, 16, 23, 22, 21, 20,
                                                3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8});
    auto s = run1([](const graft::graph_builder& b) {
        return b.op("ReverseV2", {b.constant(tensor::from_vector<std::string>({3}, {"a", "b", "c"})),
                                  b.constant(i32({1}, {0}))});
    });
    CHECK(s.data<std::string>()[0] == "c");
    CHECK(s.data<std::string>()[2] == "a");
    auto e = run1([](const graft::graph_builder& b) {
        return b.op("ReverseV2", {b.constant(f32({0, 3}, {})), b.constant(i32({1}, {0}))});
    });
    CHECK(e.shape() == shape{0, 3});

    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& x) {
              return b.op("ReverseV2", {x[0], b.constant(i32({2}, {0, 2}))});
          }, {f64({2, 2, 3}, iota(12, 0.5))}) < 1e-7);
    CHECK_THROWS_WITH_AS(run1([](const graft::graph_builder& b) {
                             return b.op("ReverseV2", {b.constant(f32({2}, {1, 2})), b.constant(i32({1}, {1}))}, {},
                                         "flip");
                         }),
                         doctest::Contains("flip"), graft::error);
    CHECK_THROWS_WITH_AS(run1([](const graft::graph_builder& b) {
                             return b.op("ReverseV2", {b.constant(f32({2, 2}, {1, 2, 3, 4})), b.constant(i32({2}, {0, -2}))});
                         }),
                         doctest::Contains("more than once"), graft::error);
}

TEST_CASE("Roll shifts with wrap-around along axes, shifts on one axis add up (TF's doc examples)") {
    auto out = run([](const graft::graph_builder& b) {
        auto t = b.constant(i32({5}, {0, 1, 2, 3, 4}));
        auto m = b.constant(f32({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
        return std::vector<endpoint>{
            b.op("Roll", {t, b.constant(tensor::scalar_of<std::int32_t>(2)), b.constant(tensor::scalar_of<std::int32_t>(0))}),
            b.op("Roll", {m, b.constant(i32({2}, {1, -2})), b.constant(i32({2}, {0, 1}))}),
            b.op("Roll", {m, b.constant(i64({2}, {2, -3})), b.constant(i64({2}, {1, 1}))}),
            b.op("Roll", {m, b.constant(i32({1}, {0})), b.constant(i32({1}, {1}))})};
    });
    CHECK(values(out[0]) == std::vector<double>{3, 4, 0, 1, 2});
    CHECK(out[0].type() == dtype::int32);
    CHECK(values(out[1]) == std::vector<double>{7, 8, 9, 5, 6, 2, 3, 4, 0, 1});
    CHECK(values(out[2]) == std::vector<double>{1, 2, 3, 4, 0, 6, 7, 8, 9, 5});
    CHECK(values(out[3]) == iota(10, 0));
    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& x) {
              return b.op("Roll", {x[0], b.constant(i32({2}, {1, -4})), b.constant(i32({2}, {0, 1}))});
          }, {f64({3, 3}, iota(9))}) < 1e-7);
    CHECK_THROWS_WITH_AS(run1([](const graft::graph_builder& b) {
                             return b.op("Roll", {b.constant(f32({3}, {1, 2, 3})), b.constant(i32({2}, {1, 2})),
                                                  b.constant(i32({1}, {0}))}, {}, "rolled");
                         }),
                         doctest::Contains("rolled"), graft::error);
}

TEST_CASE("ReverseSequence reverses each batch row's prefix of seq_lengths, and is its own gradient") {
    auto out = run([](const graft::graph_builder& b) {
        auto x = b.constant(f32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}));
        auto x3 = b.constant(f32({3, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
        return std::vector<endpoint>{
            b.op("ReverseSequence", {x, b.constant(i64({2}, {3, 1}))}, {{"seq_dim", std::int64_t{1}}}),
            // batch along dim 1, time along dim 0
            b.op("ReverseSequence", {x3, b.constant(i32({2}, {3, 2}))},
                 {{"seq_dim", std::int64_t{0}}, {"batch_dim", std::int64_t{1}}})};
    });
    CHECK(values(out[0]) == std::vector<double>{3, 2, 1, 4, 5, 6, 7, 8});
    CHECK(values(out[1]) == std::vector<double>{9, 10, 7, 8, 5, 6, 3, 4, 1, 2, 11, 12});
    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& x) {
              return b.op("ReverseSequence", {x[0], b.constant(i64({2}, {2, 3}))}, {{"seq_dim", std::int64_t{1}}});
          }, {f64({2, 3}, iota(6))}) < 1e-7);
    CHECK_THROWS_WITH_AS(run1([](const graft::graph_builder& b) {
                             return b.op("ReverseSequence", {b.constant(f32({2, 2}, {1, 2, 3, 4})),
                                                             b.constant(i64({2}, {3, 1}))},
                                         {{"seq_dim", std::int64_t{1}}}, "rs");
                         }),
                         doctest::Contains("outside [0, 2]"), graft::error);
}

TEST_CASE("MatrixDiag V1-V3 build matrices from (bands of) diagonals (TF's doc examples)") {
    auto out = run([](const graft::graph_builder& b) {
        auto pad0 = b.constant(tensor::scalar_of<float>(0));
        auto none = b.constant(tensor::scalar_of<std::int32_t>(-1));
        auto v3 = [&](endpoint d, endpoint k, endpoint rows, endpoint cols, endpoint pad, const char* align) {
            return b.op("MatrixDiagV3", {d, k, rows, cols, pad}, {{"align", std::string(align)}});
        };
        return std::vector<endpoint>{
            b.op("MatrixDiag", {b.constant(f32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}))}),
            v3(b.constant(f32({2, 3}, {1, 2, 3, 4, 5, 6})), b.constant(tensor::scalar_of<std::int32_t>(1)), none, none,
               pad0, "RIGHT_LEFT"),
            v3(b.constant(f32({2, 3, 3}, {0, 8, 9, 1, 2, 3, 4, 5, 0, 0, 2, 3, 6, 7, 9, 9, 1, 0})),
               b.constant(i32({2}, {-1, 1})), none, none, pad0, "RIGHT_LEFT"),
            v3(b.constant(f32({2, 3, 3}, {8, 9, 0, 1, 2, 3, 0, 4, 5, 2, 3, 0, 6, 7, 9, 0, 9, 1})),
               b.constant(i32({2}, {-1, 1})), none, none, pad0, "LEFT_RIGHT"),
            v3(b.constant(f32({2}, {1, 2})), b.constant(tensor::scalar_of<std::int32_t>(-1)), none, none, pad0,
               "RIGHT_LEFT"),
            v3(b.constant(f32({2}, {1, 2})), b.constant(tensor::scalar_of<std::int32_t>(-1)),
               b.constant(tensor::scalar_of<std::int32_t>(3)), b.constant(tensor::scalar_of<std::int32_t>(4)),
               b.constant(tensor::scalar_of<float>(9)), "RIGHT_LEFT"),
            b.op("MatrixDiagV2", {b.constant(f32({2, 2}, {1, 2, 3, 4})), b.constant(i32({2}, {0, 1})), none, none, pad0}),
            v3(b.constant(f32({2, 2}, {1, 2, 3, 4})), b.constant(i32({2}, {0, 1})), none, none, pad0, "RIGHT_LEFT")};
    });
    CHECK(out[0].shape() == shape{2, 4, 4});
    CHECK(values(out[0]) == std::vector<double>{1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0, 4,
                                                5, 0, 0, 0, 0, 6, 0, 0, 0, 0, 7, 0, 0, 0, 0, 8});
    CHECK(values(out[1]) == std::vector<double>{0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0,
                                                0, 4, 0, 0, 0, 0, 5, 0, 0, 0, 0, 6, 0, 0, 0, 0});
    const std::vector<double> band{1, 8, 0, 4, 2, 9, 0, 5, 3, 6, 2, 0, 9, 7, 3, 0, 1, 9};
    CHECK(values(out[2]) == band);
    CHECK(values(out[3]) == band);
    CHECK(out[4].shape() == shape{3, 3});  // both sizes inferred: square
    CHECK(values(out[4]) == std::vector<double>{0, 0, 0, 1, 0, 0, 0, 2, 0});
    CHECK(values(out[5]) == std::vector<double>{9, 9, 9, 9, 1, 9, 9, 9, 9, 2, 9, 9});
    // the superdiagonal of a 2 x 2 matrix has one element: V2 (LEFT_LEFT) reads it at the left of its
    // packed row, V3's RIGHT_LEFT at the right
    CHECK(values(out[6]) == std::vector<double>{3, 1, 0, 4});
    CHECK(values(out[7]) == std::vector<double>{3, 2, 0, 4});
}

TEST_CASE("MatrixDiagPart V1-V3 read (bands of) diagonals, padded and aligned (TF's doc examples)") {
    const std::vector<double> in{1, 2, 3, 4, 5, 6, 7, 8, 9, 8, 7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 8};
    auto out = run([&](const graft::graph_builder& b) {
        auto x = b.constant(f64({2, 3, 4}, in));
        auto pad0 = b.constant(tensor::scalar_of<double>(0));
        return std::vector<endpoint>{
            b.op("MatrixDiagPart", {x}),
            b.op("MatrixDiagPartV3", {x, b.constant(tensor::scalar_of<std::int32_t>(1)), pad0}),
            b.op("MatrixDiagPartV3", {x, b.constant(i32({2}, {-1, 2})), pad0}),
            b.op("MatrixDiagPartV3", {x, b.constant(i32({2}, {-1, 2})), pad0}, {{"align", std::string("LEFT_RIGHT")}}),
            b.op("MatrixDiagPartV2", {x, b.constant(i32({2}, {-1, 2})), b.constant(tensor::scalar_of<double>(9))})};
    });
    CHECK(out[0].shape() == shape{2, 3});
    CHECK(values(out[0]) == std::vector<double>{1, 6, 7, 5, 2, 7});
    CHECK(values(out[1]) == std::vector<double>{2, 7, 6, 4, 3, 8});
    CHECK(out[2].shape() == shape{2, 4, 3});
    CHECK(values(out[2]) == std::vector<double>{0, 3, 8, 2, 7, 6, 1, 6, 7, 5, 8, 0,
                                                0, 3, 4, 4, 3, 8, 5, 2, 7, 1, 6, 0});
    CHECK(values(out[3]) == std::vector<double>{3, 8, 0, 2, 7, 6, 1, 6, 7, 0, 5, 8,
                                                3, 4, 0, 4, 3, 8, 5, 2, 7, 0, 1, 6});
    CHECK(values(out[4]) == std::vector<double>{3, 8, 9, 2, 7, 6, 1, 6, 7, 5, 8, 9,
                                                3, 4, 9, 4, 3, 8, 5, 2, 7, 1, 6, 9});
}

TEST_CASE("MatrixSetDiag V1-V3 replace (bands of) diagonals (TF's doc examples) and MatrixDiag V2 mirrors it") {
    auto out = run([](const graft::graph_builder& b) {
        auto sevens = b.constant(f32({2, 3, 4}, std::vector<float>(24, 7)));
        auto d = b.constant(f32({2, 3}, {1, 2, 3, 4, 5, 6}));
        return std::vector<endpoint>{
            b.op("MatrixSetDiag", {sevens, d}),
            b.op("MatrixSetDiagV3", {sevens, d, b.constant(tensor::scalar_of<std::int32_t>(1))}),
            b.op("MatrixSetDiagV3", {sevens, b.constant(f32({2, 3, 3}, {1, 1, 1, 2, 2, 2, 3, 3, 0, 4, 4, 4, 5, 5, 5, 6, 6, 0})),
                                     b.constant(i32({2}, {-1, 1}))})};
    });
    CHECK(values(out[0]) == std::vector<double>{1, 7, 7, 7, 7, 2, 7, 7, 7, 7, 3, 7, 4, 7, 7, 7, 7, 5, 7, 7, 7, 7, 6, 7});
    CHECK(values(out[1]) == std::vector<double>{7, 1, 7, 7, 7, 7, 2, 7, 7, 7, 7, 3, 7, 4, 7, 7, 7, 7, 5, 7, 7, 7, 7, 6});
    // superdiagonal (length 3 in a 3 x 4 matrix), diagonal, subdiagonal (length 2, LEFT)
    CHECK(values(out[2]) == std::vector<double>{2, 1, 7, 7, 3, 2, 1, 7, 7, 3, 2, 1, 5, 4, 7, 7, 6, 5, 4, 7, 7, 6, 5, 4});
    CHECK_THROWS_WITH_AS(run1([](const graft::graph_builder& b) {
                             return b.op("MatrixSetDiag", {b.constant(f32({2, 3}, std::vector<float>(6, 0))),
                                                           b.constant(f32({3}, {1, 2, 3}))}, {}, "setd");
                         }),
                         doctest::Contains("diagonal must have shape [2]"), graft::error);
}

TEST_CASE("Diagonal gradients: each of MatrixDiag / MatrixDiagPart / MatrixSetDiag (V1, V3) against finite differences") {
    auto k = [](const graft::graph_builder& b, std::vector<std::int32_t> v) { return b.constant(i32({static_cast<std::int64_t>(v.size())}, v)); };
    auto none = [](const graft::graph_builder& b) { return b.constant(tensor::scalar_of<std::int32_t>(-1)); };
    auto zero = [](const graft::graph_builder& b) { return b.constant(tensor::scalar_of<double>(0)); };
    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& x) {
              return b.op("MatrixDiag", {x[0]});
          }, {f64({2, 3}, iota(6))}) < 1e-7);
    CHECK(grad_error([&](const graft::graph_builder& b, const std::vector<endpoint>& x) {
              return b.op("MatrixDiagV3", {x[0], k(b, {-1, 1}), none(b), none(b), zero(b)});
          }, {f64({3, 3}, iota(9))}) < 1e-7);
    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& x) {
              return b.op("MatrixDiagPart", {x[0]});
          }, {f64({2, 3}, iota(6))}) < 1e-7);
    CHECK(grad_error([&](const graft::graph_builder& b, const std::vector<endpoint>& x) {
              return b.op("MatrixDiagPartV3", {x[0], k(b, {-1, 2}), zero(b)});
          }, {f64({3, 4}, iota(12))}) < 1e-7);
    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& x) {
              return b.op("Mul", {b.op("MatrixSetDiag", {x[0], x[1]}), b.constant(f64({3, 2}, iota(6)))});
          }, {f64({3, 2}, iota(6, 0.5)), f64({2}, {3, -1})}) < 1e-7);
    CHECK(grad_error([&](const graft::graph_builder& b, const std::vector<endpoint>& x) {
              return b.op("MatrixSetDiagV3", {x[0], x[1], k(b, {0, 1})});
          }, {f64({3, 3}, iota(9, 0.5)), f64({2, 3}, {3, -1, 2, 5, 4, 0})}) < 1e-7);
}

TEST_CASE("MatrixBandPart keeps a band (TF's doc example); Diag and DiagPart are inverse") {
    const std::vector<double> in{0, 1, 2, 3, -1, 0, 1, 2, -2, -1, 0, 1, -3, -2, -1, 0};
    auto out = run([&](const graft::graph_builder& b) {
        auto x = b.constant(f32({4, 4}, std::vector<float>(in.begin(), in.end())));
        auto x3 = b.constant(f64({2, 2}, {1, 2, 3, 4}));
        return std::vector<endpoint>{
            b.op("MatrixBandPart", {x, b.constant(tensor::scalar_of<std::int64_t>(1)), b.constant(tensor::scalar_of<std::int64_t>(-1))}),
            b.op("MatrixBandPart", {x, b.constant(tensor::scalar_of<std::int32_t>(2)), b.constant(tensor::scalar_of<std::int32_t>(1))}),
            b.op("Diag", {b.constant(i32({4}, {1, 2, 3, 4}))}),
            b.op("Diag", {x3}),
            b.op("DiagPart", {b.op("Diag", {x3})})};
    });
    CHECK(values(out[0]) == std::vector<double>{0, 1, 2, 3, -1, 0, 1, 2, 0, -1, 0, 1, 0, 0, -1, 0});
    CHECK(values(out[1]) == std::vector<double>{0, 1, 0, 0, -1, 0, 1, 0, -2, -1, 0, 1, 0, -2, -1, 0});
    CHECK(values(out[2]) == std::vector<double>{1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0, 4});
    CHECK(out[3].shape() == shape{2, 2, 2, 2});
    CHECK(values(out[3])[0] == 1);
    CHECK(values(out[3])[5] == 2);   // [0,1,0,1]
    CHECK(values(out[3])[10] == 3);  // [1,0,1,0]
    CHECK(values(out[3])[15] == 4);
    CHECK(values(out[4]) == std::vector<double>{1, 2, 3, 4});
    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& x) {
              return b.op("MatrixBandPart", {x[0], b.constant(tensor::scalar_of<std::int64_t>(0)),
                                             b.constant(tensor::scalar_of<std::int64_t>(1))});
          }, {f64({3, 3}, iota(9))}) < 1e-7);
    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& x) { return b.op("Diag", {x[0]}); },
                     {f64({2, 2}, iota(4))}) < 1e-7);
    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& x) { return b.op("DiagPart", {x[0]}); },
                     {f64({2, 2}, iota(4))}) < 1e-7);
    CHECK_THROWS_WITH_AS(run1([](const graft::graph_builder& b) {
                             return b.op("DiagPart", {b.constant(f32({2, 3}, std::vector<float>(6, 0)))}, {}, "dp");
                         }),
                         doctest::Contains("dp"), graft::error);
}

TEST_CASE("SpaceToBatchND / BatchToSpaceND move blocks between space and batch (TF's doc examples)") {
    auto out = run([](const graft::graph_builder& b) {
        auto block = b.constant(i32({2}, {2, 2}));
        auto x = b.constant(f32({1, 4, 4, 1}, std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}));
        auto x2 = b.constant(f32({2, 2, 4, 1}, std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}));
        auto pads = b.constant(i32({2, 2}, {0, 0, 2, 0}));
        auto s = b.op("SpaceToBatchND", {x, block, b.constant(i32({2, 2}, {0, 0, 0, 0}))});
        auto s2 = b.op("SpaceToBatchND", {x2, block, pads});
        return std::vector<endpoint>{s, s2, b.op("BatchToSpaceND", {s2, block, pads}),
                                     b.op("SpaceToBatch", {x2, pads}, {{"block_size", std::int64_t{2}}}),
                                     b.op("BatchToSpace", {s2, pads}, {{"block_size", std::int64_t{2}}})};
    });
    CHECK(out[0].shape() == shape{4, 2, 2, 1});
    CHECK(values(out[0]) == std::vector<double>{1, 3, 9, 11, 2, 4, 10, 12, 5, 7, 13, 15, 6, 8, 14, 16});
    CHECK(out[1].shape() == shape{8, 1, 3, 1});
    CHECK(values(out[1]) == std::vector<double>{0, 1, 3, 0, 9, 11, 0, 2, 4, 0, 10, 12, 0, 5, 7, 0, 13, 15, 0, 6, 8, 0, 14, 16});
    CHECK(out[2].shape() == shape{2, 2, 4, 1});
    CHECK(values(out[2]) == iota(16));
    CHECK(graft::equal(out[3], out[1]));
    CHECK(graft::equal(out[4], out[2]));
    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& x) {
              return b.op("SpaceToBatchND", {x[0], b.constant(i32({1}, {2})), b.constant(i32({1, 2}, {1, 1}))});
          }, {f64({1, 2, 2}, iota(4))}) < 1e-7);
    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& x) {
              return b.op("BatchToSpaceND", {x[0], b.constant(i32({2}, {2, 1})), b.constant(i32({2, 2}, {1, 0, 0, 0}))});
          }, {f64({2, 2, 2, 1}, iota(8))}) < 1e-7);
    CHECK_THROWS_WITH_AS(run1([](const graft::graph_builder& b) {
                             return b.op("SpaceToBatchND", {b.constant(f32({1, 3, 1}, {1, 2, 3})), b.constant(i32({1}, {2})),
                                                            b.constant(i32({1, 2}, {0, 0}))}, {}, "s2b");
                         }),
                         doctest::Contains("not a multiple of block_shape"), graft::error);
}

TEST_CASE("DepthToSpace / SpaceToDepth in NHWC and NCHW (TF's doc examples) and their gradients") {
    auto out = run([](const graft::graph_builder& b) {
        auto x = b.constant(f32({1, 2, 2, 4}, std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}));
        graft::attr_list a{{"block_size", std::int64_t{2}}};
        graft::attr_list nchw{{"block_size", std::int64_t{2}}, {"data_format", std::string("NCHW")}};
        auto d = b.op("DepthToSpace", {x}, a);
        auto x_nchw = b.op("Transpose", {x, b.constant(i32({4}, {0, 3, 1, 2}))});
        auto d_nchw = b.op("DepthToSpace", {x_nchw}, nchw);
        return std::vector<endpoint>{d, b.op("SpaceToDepth", {d}, a), b.op("Transpose", {d_nchw, b.constant(i32({4}, {0, 2, 3, 1}))}),
                                     b.op("SpaceToDepth", {d_nchw}, nchw), x_nchw};
    });
    CHECK(out[0].shape() == shape{1, 4, 4, 1});
    CHECK(values(out[0]) == std::vector<double>{1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 13, 14, 11, 12, 15, 16});
    CHECK(values(out[1]) == iota(16));
    CHECK(graft::equal(out[2], out[0]));
    CHECK(graft::equal(out[3], out[4]));
    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& x) {
              return b.op("DepthToSpace", {x[0]}, {{"block_size", std::int64_t{2}}});
          }, {f64({1, 1, 2, 8}, iota(16))}) < 1e-7);
    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& x) {
              return b.op("SpaceToDepth", {x[0]}, {{"block_size", std::int64_t{2}}, {"data_format", std::string("NCHW")}});
          }, {f64({1, 2, 2, 4}, iota(16))}) < 1e-7);
    CHECK_THROWS_WITH_AS(run1([](const graft::graph_builder& b) {
                             return b.op("DepthToSpace", {b.constant(f32({1, 1, 1, 3}, {1, 2, 3}))},
                                         {{"block_size", std::int64_t{2}}}, "d2s");
                         }),
                         doctest::Contains("multiple of block_size^2"), graft::error);
}

TEST_CASE("ExtractImagePatches: TF's doc example (VALID, rates 1 and 2), SAME against a float64 reference, gradient") {
    auto patches = [](const std::vector<std::int64_t>& k, const std::vector<std::int64_t>& s,
                      const std::vector<std::int64_t>& r, const char* padding) {
        return graft::attr_list{{"ksizes", ints_attr(k)}, {"strides", ints_attr(s)}, {"rates", ints_attr(r)},
                                {"padding", std::string(padding)}};
    };
    auto out = run([&](const graft::graph_builder& b) {
        auto img = b.constant(f32({1, 10, 10, 1}, [] {
            std::vector<float> v(100);
            for (int i = 0; i < 100; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i + 1);
            return v;
        }()));
        return std::vector<endpoint>{
            b.op("ExtractImagePatches", {img}, patches({1, 3, 3, 1}, {1, 5, 5, 1}, {1, 1, 1, 1}, "VALID")),
            b.op("ExtractImagePatches", {img}, patches({1, 3, 3, 1}, {1, 5, 5, 1}, {1, 2, 2, 1}, "VALID"))};
    });
    CHECK(out[0].shape() == shape{1, 2, 2, 9});
    CHECK(values(out[0]) == std::vector<double>{1, 2, 3, 11, 12, 13, 21, 22, 23, 6, 7, 8, 16, 17, 18, 26, 27, 28,
                                                51, 52, 53, 61, 62, 63, 71, 72, 73, 56, 57, 58, 66, 67, 68, 76, 77, 78});
    CHECK(values(out[1]) == std::vector<double>{1, 3, 5, 21, 23, 25, 41, 43, 45, 6, 8, 10, 26, 28, 30, 46, 48, 50,
                                                51, 53, 55, 71, 73, 75, 91, 93, 95, 56, 58, 60, 76, 78, 80, 96, 98, 100});
    // SAME, 2 channels, batch 2: each patch element read directly from the padded image.
    const std::int64_t n = 2, h = 5, w = 4, c = 2, kr = 2, kc = 3, sr = 2, sc = 1;
    std::vector<double> x(static_cast<std::size_t>(n * h * w * c));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.3 * static_cast<double>(i));
    auto got = run1([&](const graft::graph_builder& b) {
        return b.op("ExtractImagePatches", {b.constant(f64({n, h, w, c}, x))},
                    patches({1, kr, kc, 1}, {1, sr, sc, 1}, {1, 1, 1, 1}, "SAME"));
    });
    const std::int64_t oh = 3, ow = 4, pt = ((oh - 1) * sr + kr - h) / 2, pl = ((ow - 1) * sc + kc - w) / 2;
    REQUIRE(got.shape() == shape{n, oh, ow, kr * kc * c});
    std::vector<double> want;
    for (std::int64_t b = 0; b < n; ++b)
        for (std::int64_t i = 0; i < oh; ++i)
            for (std::int64_t j = 0; j < ow; ++j)
                for (std::int64_t a = 0; a < kr; ++a)
                    for (std::int64_t q = 0; q < kc; ++q)
                        for (std::int64_t ch = 0; ch < c; ++ch) {
                            const std::int64_t r = i * sr - pt + a, col = j * sc - pl + q;
                            want.push_back(r < 0 || r >= h || col < 0 || col >= w
                                               ? 0.0
                                               : x[static_cast<std::size_t>(((b * h + r) * w + col) * c + ch)]);
                        }
    CHECK(values(got) == want);
    CHECK(grad_error([&](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
              return b.op("ExtractImagePatches", {xs[0]}, patches({1, 2, 2, 1}, {1, 1, 2, 1}, {1, 1, 1, 1}, "SAME"));
          }, {f64({2, 3, 3, 2}, iota(36))}) < 1e-7);
    CHECK(grad_error([&](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
              return b.op("ExtractImagePatches", {xs[0]}, patches({1, 2, 2, 1}, {1, 1, 1, 1}, {1, 2, 1, 1}, "VALID"));
          }, {f64({1, 4, 3, 1}, iota(12))}) < 1e-7);
}

TEST_CASE("BroadcastTo / BroadcastArgs (TF's values), BroadcastTo's gradient sums the broadcast axes") {
    auto out = run([](const graft::graph_builder& b) {
        return std::vector<endpoint>{
            b.op("BroadcastTo", {b.constant(f32({3}, {1, 2, 3})), b.constant(i32({2}, {3, 3}))}),
            b.op("BroadcastTo", {b.constant(i32({2, 1}, {4, 5})), b.constant(i64({3}, {2, 2, 3}))}),
            b.op("BroadcastArgs", {b.constant(i32({2}, {2, 1})), b.constant(i32({1}, {4}))})};
    });
    CHECK(values(out[0]) == std::vector<double>{1, 2, 3, 1, 2, 3, 1, 2, 3});
    CHECK(out[1].shape() == shape{2, 2, 3});
    CHECK(values(out[1]) == std::vector<double>{4, 4, 4, 5, 5, 5, 4, 4, 4, 5, 5, 5});
    CHECK(values(out[2]) == std::vector<double>{2, 4});
    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& x) {
              return b.op("Mul", {b.op("BroadcastTo", {x[0], b.constant(i64({3}, {2, 3, 2}))}),
                                  b.constant(f64({2, 3, 2}, iota(12)))});
          }, {f64({3, 1}, {1, 2, 3})}) < 1e-7);
    CHECK_THROWS_WITH_AS(run1([](const graft::graph_builder& b) {
                             return b.op("BroadcastTo", {b.constant(f32({3}, {1, 2, 3})), b.constant(i32({1}, {4}))}, {}, "bt");
                         }),
                         doctest::Contains("bt"), graft::error);
}

TEST_CASE("ConcatOffset gives each input's start in the concatenation; ParallelConcat, Empty, DeepCopy") {
    auto out = run([](const graft::graph_builder& b) {
        auto off = b.op_n("ConcatOffset", {b.constant(tensor::scalar_of<std::int32_t>(1)), b.constant(i32({3}, {2, 3, 5})),
                                           b.constant(i32({3}, {2, 7, 5})), b.constant(i32({3}, {2, 1, 5}))});
        auto pc = b.op("ParallelConcat", {b.constant(f32({1, 2}, {1, 2})), b.constant(f32({1, 2}, {3, 4}))},
                       {{"shape", shape{2, 2}}});
        auto e = b.op("Empty", {b.constant(i32({2}, {2, 3}))}, {{"dtype", dtype::float64}});
        auto dc = b.op("DeepCopy", {b.constant(i32({2}, {7, 8}))});
        return std::vector<endpoint>{off[0], off[1], off[2], pc, e, dc};
    });
    CHECK(values(out[0]) == std::vector<double>{0, 0, 0});
    CHECK(values(out[1]) == std::vector<double>{0, 3, 0});
    CHECK(values(out[2]) == std::vector<double>{0, 10, 0});
    CHECK(out[2].type() == dtype::int32);
    CHECK(values(out[3]) == std::vector<double>{1, 2, 3, 4});
    CHECK(out[4].shape() == shape{2, 3});
    CHECK(out[4].type() == dtype::float64);
    CHECK(values(out[5]) == std::vector<double>{7, 8});
    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& x) {
              return b.op("Mul", {b.op("ParallelConcat", {x[0], x[1]}, {{"shape", shape{2, 3}}}),
                                  b.constant(f64({2, 3}, iota(6)))});
          }, {f64({1, 3}, {1, 2, 3}), f64({1, 3}, {4, 5, 6})}) < 1e-7);
    CHECK(grad_error([](const graft::graph_builder& b, const std::vector<endpoint>& x) { return b.op("DeepCopy", {x[0]}); },
                     {f64({2}, {1, 2})}) < 1e-7);
    CHECK_THROWS_WITH_AS(run([](const graft::graph_builder& b) {
                             return b.op_n("ConcatOffset", {b.constant(tensor::scalar_of<std::int32_t>(0)),
                                                            b.constant(i32({2}, {2, 3})), b.constant(i32({2}, {2, 4}))},
                                           {}, "co");
                         }),
                         doctest::Contains("co"), graft::error);
}

}  // namespace graft_test_array_more
