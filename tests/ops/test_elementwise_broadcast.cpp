// Broadcasting: plans, BroadcastGradientArgs / BroadcastArgs / BroadcastTo, and binary ops over
// many shape pairs checked against an independent float64 reference.
#include <doctest/doctest.h>

#include "array_testing.hpp"
#include "graft/core/threads.hpp"
#include "graft/ops/binary.hpp"
#include "graft/ops/broadcast.hpp"

using namespace graft;
using namespace graft::test;
using vec = std::vector<std::int64_t>;

TEST_CASE("broadcast plan merges dims and gives repeat strides") {
    SUBCASE("same shape is one flat run") {
        auto p = ops::make_broadcast("Add", {shape{2, 3}, shape{2, 3}});
        CHECK(p.same_shapes);
        CHECK(p.dims == vec{6});
        CHECK(p.strides[0] == vec{1});
        CHECK(p.strides[1] == vec{1});
    }
    SUBCASE("scalar against a matrix is a stride-0 run") {
        auto p = ops::make_broadcast("Add", {shape{}, shape{2, 3}});
        CHECK(p.out_shape == shape{2, 3});
        CHECK(p.dims == vec{6});
        CHECK(p.strides[0] == vec{0});
        CHECK(p.strides[1] == vec{1});
    }
    SUBCASE("[2,1,3] vs [4,1] keeps three dims") {
        auto p = ops::make_broadcast("Add", {shape{2, 1, 3}, shape{4, 1}});
        CHECK(p.out_shape == shape{2, 4, 3});
        CHECK(p.dims == vec{2, 4, 3});
        CHECK(p.strides[0] == vec{3, 0, 1});
        CHECK(p.strides[1] == vec{0, 1, 0});
    }
    SUBCASE("row vector against a matrix") {
        auto p = ops::make_broadcast("BiasAdd", {shape{5, 2, 7}, shape{7}});
        CHECK(p.dims == vec{10, 7});
        CHECK(p.strides[0] == vec{7, 1});
        CHECK(p.strides[1] == vec{0, 1});
    }
    SUBCASE("an empty dim gives an empty plan") {
        auto p = ops::make_broadcast("Mul", {shape{2, 0, 3}, shape{3}});
        CHECK(p.out_shape == shape{2, 0, 3});
        CHECK(p.num_elements == 0);
    }
    SUBCASE("incompatible shapes name the op and both shapes") {
        GRAFT_CHECK_THROWS_MSG(ops::make_broadcast("Sub", {shape{2, 3}, shape{4, 3}}), shape_error,
                               "Sub: shapes [2,3] and [4,3]");
        GRAFT_CHECK_THROWS_MSG(ops::make_broadcast("Sub", shape{2, 3}, shape{4, 3}), shape_error,
                               "Sub: shapes [2,3] and [4,3]");
    }
    SUBCASE("the two-shape form plans as the list form") {
        const std::pair<shape, shape> pairs[] = {{{2, 1, 3}, {4, 1}}, {{}, {2, 3}}, {{5, 2, 7}, {7}},
                                                 {{2, 0, 3}, {3}}, {{1, 2, 1, 2}, {2, 1, 2, 1}}};
        for (const auto& [a_b, b_b] : pairs) {
            auto& a = a_b; auto& b = b_b;  // clang 14: lambdas cannot capture structured bindings
            CAPTURE(a.str());
            CAPTURE(b.str());
            auto two = ops::make_broadcast("Add", a, b);
            auto list = ops::make_broadcast("Add", {a, b});
            CHECK(two.out_shape == list.out_shape);
            CHECK(two.num_elements == list.num_elements);
            CHECK(two.dims == list.dims);
            CHECK(two.strides == list.strides);
            CHECK(two.same_shapes == list.same_shapes);
        }
    }
}

// Figures from tensorflow/python/kernel_tests/array_ops/bcast_ops_test.py (testBasicGradient,
// testZeroDimsGradient, testBasic, testZeroDims).
TEST_CASE("bcast_gradient_args matches TF's BroadcastGradientArgs") {
    struct row {
        vec a, b, r0, r1;
    };
    const row rows[] = {
        {{2, 3, 5}, {1}, {}, {0, 1, 2}},
        {{1}, {2, 3, 5}, {0, 1, 2}, {}},
        {{2, 3, 5}, {5}, {}, {0, 1}},
        {{5}, {2, 3, 5}, {0, 1}, {}},
        {{2, 3, 5}, {3, 5}, {}, {0}},
        {{3, 5}, {2, 3, 5}, {0}, {}},
        {{2, 3, 5}, {3, 1}, {}, {0, 2}},
        {{3, 1}, {2, 3, 5}, {0, 2}, {}},
        {{2, 1, 5}, {3, 1}, {1}, {0, 2}},
        {{3, 1}, {2, 1, 5}, {0, 2}, {1}},
        {{2, 0, 3, 0, 5}, {3, 0, 5}, {}, {0, 1}},
        {{3, 0, 5}, {2, 0, 3, 0, 5}, {0, 1}, {}},
        {{2, 0, 3, 0, 5}, {3, 1, 5}, {}, {0, 1, 3}},
        {{3, 1, 5}, {2, 0, 3, 0, 5}, {0, 1, 3}, {}},
    };
    for (const auto& r : rows) {
        CAPTURE(shape(r.a).str());
        CAPTURE(shape(r.b).str());
        auto [r0, r1] = ops::bcast_gradient_args(shape(r.a), shape(r.b));
        CHECK(r0 == r.r0);
        CHECK(r1 == r.r1);
    }
    // Dims of 1 on both sides are reduced for both (TF keeps them in both lists).
    auto [r0, r1] = ops::bcast_gradient_args(shape{1, 3}, shape{1, 3});
    CHECK(r0 == vec{0});
    CHECK(r1 == vec{0});

    for (dtype t : {dtype::int32, dtype::int64}) {
        auto [t0, t1] = ops::broadcast_gradient_args(make(t, {3}, {2, 3, 5}), make(t, {1}, {1}));
        check_values(t0, t, shape{0}, {});
        check_values(t1, t, shape{3}, {0, 1, 2});
    }
    GRAFT_CHECK_THROWS_MSG(ops::bcast_gradient_args(shape{2, 3}, shape{4}), shape_error,
                           "BroadcastGradientArgs");
}

TEST_CASE("broadcast_args and broadcast_to") {
    check_values(ops::broadcast_args(i32({3}, {2, 1, 5}), i32({2}, {3, 1})), dtype::int32, shape{3},
                 {2, 3, 5});
    check_values(ops::broadcast_args(i64({5}, {2, 0, 3, 0, 5}), i64({3}, {3, 1, 5})), dtype::int64,
                 shape{5}, {2, 0, 3, 0, 5});
    GRAFT_CHECK_THROWS_MSG(ops::broadcast_args(i32({2}, {2, 3}), i64({1}, {3})),
                           invalid_argument_error, "dtypes must match");

    tensor x = iota(dtype::float32, {3, 1});
    auto want = ref_broadcast(shape{3, 1}, values(x), shape{2, 3, 4}, std::vector<double>(24, 0),
                              [](double a, double) { return a; });
    check_values(ops::broadcast_to(x, shape{2, 3, 4}), dtype::float32, shape{2, 3, 4}, want);
    check_values(ops::broadcast_to(x, i32({2}, {3, 2})), dtype::float32, shape{3, 2},
                 {0, 0, 1, 1, 2, 2});
    auto s = tensor::from_vector<std::string>({2}, {"a", "b"});
    auto sb = ops::broadcast_to(s, shape{2, 2});
    CHECK(sb.data<std::string>()[3] == "b");
    CHECK(ops::broadcast_to(x, shape{3, 1}).shares_buffer_with(x));
    GRAFT_CHECK_THROWS_MSG(ops::broadcast_to(x, shape{3}), shape_error,
                           "BroadcastTo: input [3,1] cannot be broadcast to [3]");
}

TEST_CASE("binary ops broadcast like NumPy over many shape pairs and dtypes") {
    const std::pair<shape, shape> pairs[] = {
        {{2, 3}, {2, 3}},
        {{}, {2, 3}},
        {{2, 3}, {}},
        {{2, 1, 3}, {4, 1}},
        {{4, 1}, {2, 1, 3}},
        {{3}, {2, 3}},
        {{2, 3}, {2, 1}},
        {{1, 5}, {4, 1}},
        {{2, 0, 3}, {3}},
        {{0}, {}},
        {{2, 3, 4, 5}, {3, 1, 5}},
        {{1}, {1}},
        {{2, 1, 2, 1, 2}, {1, 2, 1, 2, 1}},
        {{}, {}},
        {{3, 1, 1}, {1, 1, 4}},
        // short rows repeated down a matrix (binary_row_blocks): blocks of 43 rows of 6 and a
        // partial last block, the row on either side; 63 is the longest row taken that way
        {{7, 11, 6}, {6}},
        {{6}, {97, 6}},
        {{50, 1, 3}, {1, 3}},
        {{9, 63}, {63}},
        // ten merged dims (the repeat pattern alternates): more than the odometer keeps in place
        {{2, 1, 3, 1, 2, 1, 3, 1, 2, 1}, {1, 2, 1, 3, 1, 2, 1, 2, 1, 3}},
    };
    struct opdef {
        const char* name;
        tensor (*fn)(const tensor&, const tensor&, const tensor*);
        double (*ref)(double, double);
    };
    const opdef defs[] = {
        {"Add", [](const tensor& a, const tensor& b, const tensor* o) { return ops::add(a, b, o); },
         [](double a, double b) { return a + b; }},
        {"Sub", [](const tensor& a, const tensor& b, const tensor* o) { return ops::sub(a, b, o); },
         [](double a, double b) { return a - b; }},
        {"Mul", [](const tensor& a, const tensor& b, const tensor* o) { return ops::mul(a, b, o); },
         [](double a, double b) { return a * b; }},
        {"Maximum",
         [](const tensor& a, const tensor& b, const tensor* o) { return ops::maximum(a, b, o); },
         [](double a, double b) { return std::max(a, b); }},
        {"SquaredDifference",
         [](const tensor& a, const tensor& b, const tensor* o) {
             return ops::squared_difference(a, b, o);
         },
         [](double a, double b) { return (a - b) * (a - b); }},
    };
    for (dtype t : {dtype::float32, dtype::float64, dtype::int32, dtype::int64}) {
        for (const auto& [sa_b, sb_b] : pairs) {
            auto& sa = sa_b; auto& sb = sb_b;  // clang 14: lambdas cannot capture structured bindings
            auto va = noise(static_cast<std::size_t>(sa.num_elements()), -20, 20, 3);
            auto vb = noise(static_cast<std::size_t>(sb.num_elements()), -20, 20, 7);
            if (t == dtype::int32 || t == dtype::int64) {
                for (auto& v : va) v = std::trunc(v);
                for (auto& v : vb) v = std::trunc(v);
            }
            tensor a = make(t, sa, va), b = make(t, sb, vb);
            va = values(a);
            vb = values(b);
            for (const auto& d : defs) {
                CAPTURE(d.name);
                CAPTURE(dtype_name(t));
                CAPTURE(sa.str());
                CAPTURE(sb.str());
                shape os;
                auto want = ref_broadcast(sa, va, sb, vb, d.ref, &os);
                check_values(d.fn(a, b, nullptr), t, os, want, rtol_for(t));
            }
        }
    }
}

TEST_CASE("large broadcasts run on the thread pool and agree with the reference") {
    const shape sa{64, 1, 300}, sb{1, 40, 300};
    tensor a = f32(sa, noise(static_cast<std::size_t>(sa.num_elements()), -1, 1, 11));
    tensor b = f32(sb, noise(static_cast<std::size_t>(sb.num_elements()), -1, 1, 12));
    shape os;
    auto want = ref_broadcast(
        sa, values(a), sb, values(b), [](double x, double y) { return x * y; }, &os);
    check_values(ops::mul(a, b), dtype::float32, os, want, 1e-6);
    // Scalar on the left of a large tensor.
    tensor big = f64({500, 300}, noise(150000, -5, 5, 13));
    auto want2 = ref_broadcast(shape{}, {2.5}, big.shape(), values(big),
                               [](double x, double y) { return x - y; });
    check_values(ops::sub(tensor::scalar_of(2.5), big), dtype::float64, big.shape(), want2);
}

TEST_CASE("a comparison against a short row repeated down a matrix, the row on either side, 1 and 2 threads") {
    const shape sm{300, 5}, sr{5};
    tensor m = f32(sm, noise(1500, -3, 3, 21)), r = f32(sr, {-1, 0, 1, 2, -2});
    const int before = graft::num_threads();
    for (int th : {1, 2}) {
        graft::set_num_threads(th);
        check_values(ops::greater(m, r), dtype::bool_, sm,
                     ref_broadcast(sm, values(m), sr, values(r), [](double x, double y) { return x > y ? 1.0 : 0.0; }));
        check_values(ops::greater(r, m), dtype::bool_, sm,
                     ref_broadcast(sr, values(r), sm, values(m), [](double x, double y) { return x > y ? 1.0 : 0.0; }));
    }
    graft::set_num_threads(before);
}

TEST_CASE("binary ops write into a provided output, in place when shapes allow") {
    tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
    tensor b = f32({3}, {10, 20, 30});
    tensor r = ops::add(a, b, &a);
    CHECK(r.shares_buffer_with(a));
    check_values(a, dtype::float32, shape{2, 3}, {11, 22, 33, 14, 25, 36});

    tensor out(dtype::float32, {2, 3});
    ops::mul(a, b, &out);
    check_values(out, dtype::float32, shape{2, 3}, {110, 440, 990, 140, 500, 1080});

    tensor wrong(dtype::float32, {3, 2});
    GRAFT_CHECK_THROWS_MSG(ops::add(a, b, &wrong), invalid_argument_error,
                           "Add: out is float32[3,2] but the result is float32[2,3]");
    tensor wrong_type(dtype::float64, {2, 3});
    GRAFT_CHECK_THROWS_MSG(ops::add(a, b, &wrong_type), invalid_argument_error,
                           "out is float64[2,3]");
    // Disjoint views of one buffer are fine as out.
    tensor whole = f32({2, 3}, {1, 2, 3, 4, 5, 6});
    tensor row0 = whole.slice(0, 1), row1 = whole.slice(1, 1);
    ops::add(row0, f32({3}, {10, 10, 10}), &row1);
    check_values(whole, dtype::float32, shape{2, 3}, {1, 2, 3, 11, 12, 13});
    // The broadcast operand cannot be overwritten in place.
    tensor small = f32({1, 3}, {1, 2, 3});
    GRAFT_CHECK_THROWS_MSG(ops::add(a, small, &small), invalid_argument_error,
                           "shares memory with y");
}

TEST_CASE("binary ops reject mismatched dtypes and shapes naming the op") {
    GRAFT_CHECK_THROWS_MSG(ops::add(f32({2}, {1, 2}), f64({2}, {1, 2})), invalid_argument_error,
                           "Add: x is float32[2] but y is float64[2]");
    GRAFT_CHECK_THROWS_MSG(ops::mul(f32({2, 3}, std::vector<double>(6, 1)), f32({2}, {1, 2})),
                           shape_error, "Mul: shapes [2,3] and [2] cannot be broadcast");
    GRAFT_CHECK_THROWS_MSG(ops::add(tensor(), f32({1}, {1})), invalid_argument_error,
                           "Add: x is an empty");
}
