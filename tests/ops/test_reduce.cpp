// Reductions (every subset of axes, keep_dims, empty inputs), ArgMax/ArgMin, L2Loss against a
// float64 reference written with plain index loops.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "array_testing.hpp"
#include "graft/ops/reduce.hpp"

using namespace graft;
using namespace graft::test;
using vec = std::vector<std::int64_t>;

namespace {

/// Reference: reduces `x` (shape s) over the axes in `mask` with `op`, from `init`.
std::vector<double> ref_reduce(const shape& s, const std::vector<double>& x,
                               const std::vector<bool>& mask, double init,
                               double (*op)(double, double), shape* out_shape, bool keep) {
    const auto& d = s.dims();
    std::vector<std::int64_t> od, kd;
    for (std::size_t i = 0; i < d.size(); ++i) {
        if (!mask[i]) od.push_back(d[i]);
        kd.push_back(mask[i] ? 1 : d[i]);
    }
    *out_shape = shape(keep ? kd : od);
    std::vector<double> out(static_cast<std::size_t>(shape(kd).num_elements()), init);
    const auto ks = row_major_strides(shape(kd));
    for (std::int64_t i = 0; i < s.num_elements(); ++i) {
        std::int64_t rem = i, o = 0;
        for (std::size_t k = d.size(); k-- > 0;) {
            const std::int64_t idx = rem % d[k];
            rem /= d[k];
            if (!mask[k]) o += idx * ks[k];
        }
        out[static_cast<std::size_t>(o)] =
            op(out[static_cast<std::size_t>(o)], x[static_cast<std::size_t>(i)]);
    }
    return out;
}

}  // namespace

TEST_CASE("Sum, Mean, Max, Min, Prod over every subset of axes") {
    const shape shapes[] = {{},           {5},    {3, 4}, {2, 3, 4},   {2, 1, 3},
                            {2, 3, 2, 3}, {0, 3}, {2, 0}, {3, 1, 1, 2}};
    struct red {
        ops::reduction k;
        double init;
        double (*op)(double, double);
    };
    const double inf = std::numeric_limits<double>::infinity();
    const red reds[] = {
        {ops::reduction::sum, 0, [](double a, double b) { return a + b; }},
        {ops::reduction::mean, 0, [](double a, double b) { return a + b; }},
        {ops::reduction::max, -inf, [](double a, double b) { return std::max(a, b); }},
        {ops::reduction::min, inf, [](double a, double b) { return std::min(a, b); }},
        {ops::reduction::prod, 1, [](double a, double b) { return a * b; }},
    };
    for (const auto& s : shapes) {
        const int r = s.rank();
        for (dtype t : {dtype::float32, dtype::float64, dtype::int32, dtype::int64}) {
            const bool is_int = t == dtype::int32 || t == dtype::int64;
            auto v = noise(static_cast<std::size_t>(s.num_elements()), is_int ? -3 : -1.5,
                           is_int ? 4 : 1.5, 17);
            if (is_int)
                for (auto& e : v) e = std::trunc(e);
            tensor x = make(t, s, v);
            v = values(x);
            for (int m = 0; m < (1 << r); ++m) {
                std::vector<bool> mask(static_cast<std::size_t>(r));
                vec axes;
                std::int64_t count = 1;
                for (int i = 0; i < r; ++i) {
                    mask[static_cast<std::size_t>(i)] = (m >> i & 1) != 0;
                    if (mask[static_cast<std::size_t>(i)]) {
                        axes.push_back(i % 2 ? i - r : i);  // mix negative and positive axes
                        count *= s.dims()[static_cast<std::size_t>(i)];
                    }
                }
                for (const auto& rd : reds) {
                    for (bool keep : {false, true}) {
                        shape os;
                        auto want = ref_reduce(s, v, mask, rd.init, rd.op, &os, keep);
                        if (rd.k == ops::reduction::mean) {
                            for (auto& w : want) {
                                if (is_int)
                                    w = count ? std::trunc(w / static_cast<double>(count)) : 0;
                                else
                                    w = w /
                                        static_cast<double>(count);  // 0/0 = NaN for an empty mean
                            }
                        }
                        if (is_int && count == 0) {
                            if (rd.k == ops::reduction::max)
                                for (auto& w : want)
                                    w = t == dtype::int32 ? -2147483648.0 : -9223372036854775808.0;
                            if (rd.k == ops::reduction::min)
                                for (auto& w : want)
                                    w = t == dtype::int32 ? 2147483647.0 : 9223372036854775807.0;
                        }
                        CAPTURE(s.str());
                        CAPTURE(dtype_name(t));
                        CAPTURE(static_cast<int>(rd.k));
                        CAPTURE(m);
                        CAPTURE(keep);
                        check_values(ops::reduce(rd.k, x, axes, keep), t, os, want,
                                     is_int ? 0 : 1e-5, is_int ? 0 : 1e-5);
                    }
                }
            }
        }
    }
}

TEST_CASE("large reductions along each axis (thread pool paths)") {
    const shape s{300, 500};
    tensor x = f32(s, noise(150000, -1, 1, 51));
    auto v = values(x);
    for (const vec& axes : {vec{0}, vec{1}, vec{0, 1}}) {
        std::vector<bool> mask{false, false};
        for (auto a : axes) mask[static_cast<std::size_t>(a)] = true;
        shape os;
        auto want = ref_reduce(
            s, v, mask, 0, [](double a, double b) { return a + b; }, &os, false);
        check_values(ops::reduce_sum(x, axes), dtype::float32, os, want, 1e-4, 1e-3);
        auto wmax = ref_reduce(
            s, v, mask, -1e300, [](double a, double b) { return std::max(a, b); }, &os, false);
        check_values(ops::reduce_max(x, axes), dtype::float32, os, wmax);
    }
    // Narrow outputs over many rows (folded as wide super-rows with leftover rows).
    for (const auto& [s__b, axes] :
         {std::pair<shape, vec>{{7, 1001, 3}, {1}}, std::pair<shape, vec>{{2, 5000, 5}, {0, 1}},
          std::pair<shape, vec>{{64, 1000}, {0}}}) {
        auto& s_ = s__b;  // clang 14: lambdas cannot capture structured bindings
        tensor z = f64(s_, noise(static_cast<std::size_t>(s_.num_elements()), -1, 1, 53));
        std::vector<bool> mask(s_.dims().size(), false);
        for (auto a : axes) mask[static_cast<std::size_t>(a)] = true;
        shape os;
        CAPTURE(s_.str());
        auto want = ref_reduce(
            s_, values(z), mask, 0, [](double a, double b) { return a + b; }, &os, false);
        check_values(ops::reduce_sum(z, axes), dtype::float64, os, want, 1e-12, 1e-12);
        auto wmin = ref_reduce(
            s_, values(z), mask, 1e300, [](double a, double b) { return std::min(a, b); }, &os,
            false);
        check_values(ops::reduce_min(z, axes), dtype::float64, os, wmin);
    }
    // [k, r, k] and [r, k, r] patterns in 3-D.
    const shape s3{20, 30, 40};
    tensor y = f64(s3, noise(24000, -1, 1, 52));
    for (const vec& axes : {vec{1}, vec{0, 2}}) {
        std::vector<bool> mask{false, false, false};
        for (auto a : axes) mask[static_cast<std::size_t>(a)] = true;
        shape os;
        auto want = ref_reduce(
            s3, values(y), mask, 0, [](double a, double b) { return a + b; }, &os, true);
        check_values(ops::reduce_sum(y, axes, true), dtype::float64, os, want, 1e-12, 1e-12);
    }
}

TEST_CASE("Any, All, NaN in Max, and reductions by TF op name") {
    tensor b = bools({2, 3}, {1, 0, 0, 0, 0, 0});
    check_values(ops::reduce_any(b, {1}), dtype::bool_, shape{2}, {1, 0});
    check_values(ops::reduce_all(b, {0}), dtype::bool_, shape{3}, {0, 0, 0});
    check_values(ops::reduce_all(bools({2, 0}, {}), {1}), dtype::bool_, shape{2}, {1, 1});
    const double nan = std::nan("");
    check_values(ops::reduce_max(f32({2, 2}, {nan, 1, 2, 3}), {1}), dtype::float32, shape{2},
                 {nan, 3});
    check_values(ops::reduce_min(f64({3}, {2, nan, 1}), {0}), dtype::float64, shape{}, {nan});
    tensor x = iota(dtype::float32, {2, 3});
    check_values(ops::reduce("Sum", x, i32({}, {1}), false), dtype::float32, shape{2}, {3, 12});
    check_values(ops::reduce("Mean", x, i64({2}, {0, 1}), true), dtype::float32, shape{1, 1},
                 {2.5});
    check_values(ops::reduce("Prod", x, i32({1}, {-2})), dtype::float32, shape{3}, {0, 4, 10});
    check_values(ops::reduce("Min", x, i32({0}, {})), x);
    GRAFT_CHECK_THROWS_MSG(ops::reduce("Frob", x, i32({}, {0})), unimplemented_error, "'Frob'");
}

TEST_CASE("reductions reject bad axes and dtypes naming the op") {
    tensor x = iota(dtype::float32, {2, 3});
    GRAFT_CHECK_THROWS_MSG(ops::reduce_sum(x, {2}), invalid_argument_error,
                           "Sum: reduction axis 2 is out of range for rank 2 (expected [-2, 2))");
    GRAFT_CHECK_THROWS_MSG(ops::reduce_mean(x, {1, -1}), invalid_argument_error,
                           "Mean: reduction axes [1,-1] contain axis 1 twice");
    GRAFT_CHECK_THROWS_MSG(ops::reduce_max(bools({2}, {1, 0}), {0}), invalid_argument_error,
                           "Max: input has dtype bool");
    GRAFT_CHECK_THROWS_MSG(ops::reduce_any(x, {0}), invalid_argument_error,
                           "Any: input has dtype float32");
    GRAFT_CHECK_THROWS_MSG(ops::reduce("Sum", x, f32({1}, {0})), invalid_argument_error,
                           "Sum: reduction_indices must be int32 or int64");
    GRAFT_CHECK_THROWS_MSG(ops::reduce_sum(tensor::scalar_of(1.f), {0}), invalid_argument_error,
                           "out of range for rank 0");
}

TEST_CASE("ArgMax and ArgMin") {
    const shape s{3, 4, 5};
    for (dtype t : {dtype::float32, dtype::float64, dtype::int32, dtype::int64}) {
        auto v = noise(60, -5, 5, 61);
        for (auto& e : v) e = std::round(e);  // ties: the first index wins
        tensor x = make(t, s, v);
        for (int axis = -3; axis < 3; ++axis) {
            const int a = axis < 0 ? axis + 3 : axis;
            vec od;
            for (int i = 0; i < 3; ++i) {
                if (i != a) od.push_back(s.dims()[static_cast<std::size_t>(i)]);
            }
            std::vector<double> wmax, wmin;
            const auto st = row_major_strides(s);
            const std::int64_t n = s.dims()[static_cast<std::size_t>(a)];
            for (std::int64_t o = 0; o < 60 / n; ++o) {
                // Base offset of output element o: unravel over the kept dims.
                std::int64_t rem = o, base = 0;
                for (int i = 2; i >= 0; --i) {
                    if (i == a) continue;
                    const auto dim = s.dims()[static_cast<std::size_t>(i)];
                    base += (rem % dim) * st[static_cast<std::size_t>(i)];
                    rem /= dim;
                }
                std::int64_t bi = 0, si = 0;
                for (std::int64_t k = 1; k < n; ++k) {
                    const double e =
                        v[static_cast<std::size_t>(base + k * st[static_cast<std::size_t>(a)])];
                    if (e >
                        v[static_cast<std::size_t>(base + bi * st[static_cast<std::size_t>(a)])])
                        bi = k;
                    if (e <
                        v[static_cast<std::size_t>(base + si * st[static_cast<std::size_t>(a)])])
                        si = k;
                }
                wmax.push_back(static_cast<double>(bi));
                wmin.push_back(static_cast<double>(si));
            }
            CAPTURE(dtype_name(t));
            CAPTURE(axis);
            check_values(ops::arg_max(x, axis), dtype::int64, shape(od), wmax);
            check_values(ops::arg_min(x, i32({}, {static_cast<double>(axis)}), dtype::int32),
                         dtype::int32, shape(od), wmin);
        }
    }
    const double nan = std::nan("");
    check_values(ops::arg_max(f32({4}, {1, nan, 3, nan}), 0), dtype::int64, shape{}, {1});
    GRAFT_CHECK_THROWS_MSG(ops::arg_max(f32({0, 3}, {}), 0), invalid_argument_error,
                           "ArgMax: reduction axis 0 is empty in shape [0,3]");
    GRAFT_CHECK_THROWS_MSG(ops::arg_min(f32({2}, {1, 2}), 1), invalid_argument_error,
                           "ArgMin: dimension 1 is out of range");
    GRAFT_CHECK_THROWS_MSG(ops::arg_max(f32({2}, {1, 2}), 0, dtype::float32),
                           invalid_argument_error, "ArgMax: output_type must be int32 or int64");
}

// tensorflow/python/ops/nn_test.py (L2LossTest.testL2Loss): [1, 0, 3, 2] as [2,2] gives 7.
TEST_CASE("L2Loss") {
    for (dtype t : {dtype::float32, dtype::float64}) {
        check_values(ops::l2_loss(make(t, {2, 2}, {1, 0, 3, 2})), t, shape{}, {7});
    }
    tensor big = f64({100, 70}, noise(7000, -1, 1, 71));
    double want = 0;
    for (double e : values(big)) want += e * e / 2;
    check_values(ops::l2_loss(big), dtype::float64, shape{}, {want}, 1e-12);
    GRAFT_CHECK_THROWS_MSG(ops::l2_loss(i32({1}, {1})), invalid_argument_error,
                           "L2Loss: t has dtype int32");
}
