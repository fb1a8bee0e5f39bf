// The linalg family through graft::exec::session: MatrixDeterminant, LogMatrixDeterminant,
// MatrixInverse, MatrixSolve, MatrixTriangularSolve, Cholesky, Lu and Svd against float64
// references written here (and TF's documented values), their bad-input errors, and the gradients
// of MatrixInverse, MatrixDeterminant, LogMatrixDeterminant, MatrixSolve, MatrixTriangularSolve and
// Cholesky through graft's checker.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "graft/autodiff/check.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "support/tensors.hpp"

// One namespace per file: the opsets tests build as one binary in unity batches.
namespace graft_test_linalg {

using namespace graft::test;  // f32, f64, i32, i64, values

using graft::dtype;
using graft::endpoint;
using graft::shape;
using graft::tensor;

namespace {

/// Row-major n x n product of a [n, k] and b [k, m] (float64 reference).
std::vector<double> matmul(const std::vector<double>& a, const std::vector<double>& b, int n, int k, int m) {
    std::vector<double> c(static_cast<std::size_t>(n * m), 0.0);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j)
            for (int t = 0; t < k; ++t) c[static_cast<std::size_t>(i * m + j)] += a[static_cast<std::size_t>(i * k + t)] * b[static_cast<std::size_t>(t * m + j)];
    return c;
}

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
    auto node = b.add(op, in, std::move(attrs), "node");
    (void)node;
    std::vector<std::string> f;
    for (int i = 0; i < outs; ++i) f.push_back(i == 0 ? std::string("node") : "node:" + std::to_string(i));
    graft::exec::session s(g);
    return s.run({}, f);
}

const std::vector<double> a3{4, -2, 1, -2, 4, -2, 1, -2, 4};       // symmetric positive definite
const std::vector<double> g3{0, 2, 1, 1, 1, 1, 3, 0, 2};           // general, det = -3 (needs pivoting)

}  // namespace

TEST_CASE("MatrixDeterminant and LogMatrixDeterminant: det, sign and log|det| per batch matrix") {
    // det(a3) = 36, det(g3) = 0*(2-0) - 2*(2-3) + 1*(0-3) = -1
    auto out = run1("MatrixDeterminant", {f64({2, 3, 3}, [] {
                        std::vector<double> v(a3);
                        v.insert(v.end(), g3.begin(), g3.end());
                        return v;
                    }())});
    CHECK(out[0].shape() == shape{2});
    check_close(values(out[0]), {36.0, -1.0}, 1e-12);
    auto sl = run1("LogMatrixDeterminant", {f32({3, 3}, {0, 2, 1, 1, 1, 1, 3, 0, 2})}, {}, 2);
    CHECK(sl[0].type() == dtype::float32);
    check_close(values(sl[0]), {-1.0}, 1e-6);
    check_close(values(sl[1]), {0.0}, 1e-6);
    auto sing = run1("LogMatrixDeterminant", {f64({2, 2}, {1, 2, 2, 4})}, {}, 2);
    CHECK(values(sing[0])[0] == 0.0);
    CHECK(std::isinf(values(sing[1])[0]));
    CHECK(values(run1("MatrixDeterminant", {f64({2, 2}, {1, 2, 2, 4})})[0])[0] == 0.0);
    CHECK_THROWS_WITH_AS(run1("MatrixDeterminant", {f64({2, 3}, {1, 2, 3, 4, 5, 6})}),
                         doctest::Contains("must be square matrices"), graft::error);
}

TEST_CASE("MatrixInverse (and adjoint) times the matrix is the identity; a singular matrix is an error naming the node") {
    auto out = run1("MatrixInverse", {f64({3, 3}, g3)});
    check_close(matmul(g3, values(out[0]), 3, 3, 3), {1, 0, 0, 0, 1, 0, 0, 0, 1}, 1e-12);
    auto adj = run1("MatrixInverse", {f64({3, 3}, g3)}, {{"adjoint", true}});
    std::vector<double> g3t{0, 1, 3, 2, 1, 0, 1, 1, 2};
    check_close(matmul(g3t, values(adj[0]), 3, 3, 3), {1, 0, 0, 0, 1, 0, 0, 0, 1}, 1e-12);
    CHECK_THROWS_WITH_AS(run1("MatrixInverse", {f64({2, 2}, {1, 2, 2, 4})}), doctest::Contains("not invertible"),
                         graft::error);
    CHECK_THROWS_WITH_AS(run1("MatrixInverse", {f64({2, 2}, {1, 2, 2, 4})}), doctest::Contains("node"), graft::error);
}

TEST_CASE("MatrixSolve and MatrixTriangularSolve: a x = b per batch, adjoint, lower/upper, broadcast batch dims") {
    const std::vector<double> rhs{1, 2, 3, 4, 5, 6};  // [3, 2]
    auto x = run1("MatrixSolve", {f64({3, 3}, g3), f64({3, 2}, rhs)});
    check_close(matmul(g3, values(x[0]), 3, 3, 2), rhs, 1e-12);
    auto xa = run1("MatrixSolve", {f64({3, 3}, g3), f64({3, 2}, rhs)}, {{"adjoint", true}});
    check_close(matmul({0, 1, 3, 2, 1, 0, 1, 1, 2}, values(xa[0]), 3, 3, 2), rhs, 1e-12);
    CHECK_THROWS_WITH_AS(run1("MatrixSolve", {f64({3, 3}, g3), f64({2, 2}, {1, 2, 3, 4})}),
                         doctest::Contains("same batch dims"), graft::error);

    // a lower-triangular solve reads only the lower triangle (the 9s are ignored)
    const std::vector<double> l{2, 9, 9, 1, 3, 9, -1, 2, 4}, lo{2, 0, 0, 1, 3, 0, -1, 2, 4};
    auto t = run1("MatrixTriangularSolve", {f64({3, 3}, l), f64({3, 2}, rhs)});
    check_close(matmul(lo, values(t[0]), 3, 3, 2), rhs, 1e-12);
    // upper + adjoint: (upper part)^T x = rhs
    const std::vector<double> up{2, 1, -1, 9, 3, 2, 9, 9, 4}, up_t{2, 0, 0, 1, 3, 0, -1, 2, 4};
    auto tu = run1("MatrixTriangularSolve", {f64({3, 3}, up), f64({3, 2}, rhs)}, {{"lower", false}, {"adjoint", true}});
    check_close(matmul(up_t, values(tu[0]), 3, 3, 2), rhs, 1e-12);
    // one matrix against a batch of two right-hand sides
    auto tb = run1("MatrixTriangularSolve", {f64({3, 3}, l), f64({2, 3, 2}, {1, 2, 3, 4, 5, 6, 6, 5, 4, 3, 2, 1})});
    CHECK(tb[0].shape() == shape{2, 3, 2});
    auto v = values(tb[0]);
    check_close(matmul(lo, {v.begin() + 6, v.end()}, 3, 3, 2), {6, 5, 4, 3, 2, 1}, 1e-12);
}

TEST_CASE("Cholesky: L L^T = a with L lower; a non positive definite matrix is an error") {
    auto out = run1("Cholesky", {f32({3, 3}, {4, -2, 1, -2, 4, -2, 1, -2, 4})});
    auto lv = values(out[0]);
    CHECK(lv[1] == 0.0);
    CHECK(lv[2] == 0.0);
    CHECK(lv[5] == 0.0);
    CHECK(lv[0] == doctest::Approx(2.0));
    std::vector<double> lt(9);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) lt[static_cast<std::size_t>(i * 3 + j)] = lv[static_cast<std::size_t>(j * 3 + i)];
    check_close(matmul(lv, lt, 3, 3, 3), a3, 1e-5);
    CHECK_THROWS_WITH_AS(run1("Cholesky", {f64({2, 2}, {1, 2, 2, 1})}), doctest::Contains("not positive definite"),
                         graft::error);
}

TEST_CASE("Lu: packed unit-lower L and U with x[p] = L U, partial pivoting (int32 and int64 p)") {
    auto out = run1("Lu", {f64({3, 3}, g3)}, {}, 2);
    auto lu = values(out[0]);
    CHECK(out[1].type() == dtype::int32);
    auto p = values(out[1]);
    // partial pivoting picks the largest |entry| of column 0 first: row 2 (value 3)
    CHECK(p[0] == 2.0);
    std::vector<double> L(9, 0.0), U(9, 0.0);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            const auto k = static_cast<std::size_t>(i * 3 + j);
            if (j < i) L[k] = lu[k];
            else U[k] = lu[k];
            if (i == j) L[k] = 1.0;
        }
    std::vector<double> permuted;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) permuted.push_back(g3[static_cast<std::size_t>(static_cast<int>(p[static_cast<std::size_t>(i)]) * 3 + j)]);
    check_close(matmul(L, U, 3, 3, 3), permuted, 1e-12);
    auto o64 = run1("Lu", {f64({3, 3}, g3)}, {{"output_idx_type", dtype::int64}}, 2);
    CHECK(o64[1].type() == dtype::int64);
    CHECK(values(o64[1]) == p);
}

TEST_CASE("Svd: descending singular values, u diag(s) v^T = a (thin and full), no u/v without compute_uv") {
    const std::vector<double> a{3, 1, 1, -1, 3, 1, 0, 2, 2, 1, 0, 1};  // [4, 3]
    auto out = run1("Svd", {f64({4, 3}, a)}, {}, 3);
    CHECK(out[0].shape() == shape{3});
    CHECK(out[1].shape() == shape{4, 3});
    CHECK(out[2].shape() == shape{3, 3});
    auto s = values(out[0]), u = values(out[1]), v = values(out[2]);
    CHECK(s[0] >= s[1]);
    CHECK(s[1] >= s[2]);
    std::vector<double> us(12), vt(9);
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 3; ++j) us[static_cast<std::size_t>(i * 3 + j)] = u[static_cast<std::size_t>(i * 3 + j)] * s[static_cast<std::size_t>(j)];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) vt[static_cast<std::size_t>(i * 3 + j)] = v[static_cast<std::size_t>(j * 3 + i)];
    check_close(matmul(us, vt, 4, 3, 3), a, 1e-12);
    // sum of squared singular values = squared Frobenius norm
    double fro = 0, ss = 0;
    for (double x : a) fro += x * x;
    for (double x : s) ss += x * x;
    CHECK(ss == doctest::Approx(fro));

    auto full = run1("Svd", {f32({2, 4, 3}, std::vector<float>(24, 1.0f))}, {{"full_matrices", true}}, 3);
    CHECK(full[1].shape() == shape{2, 4, 4});
    CHECK(full[2].shape() == shape{2, 3, 3});
    check_close(values(full[0]), {std::sqrt(12.0), 0, 0, std::sqrt(12.0), 0, 0}, 1e-5);
    auto nouv = run1("Svd", {f64({4, 3}, a)}, {{"compute_uv", false}}, 3);
    check_close(values(nouv[0]), s, 1e-12);
    CHECK(nouv[1].num_elements() == 1);
}

TEST_CASE("Gradients of MatrixInverse, MatrixDeterminant, LogMatrixDeterminant match finite differences") {
    const tensor x = f64({3, 3}, g3);
    for (bool adj : {false, true}) {
        auto r = graft::autodiff::check_gradients(
            [adj](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
                return std::vector<endpoint>{b.op("MatrixInverse", {xs[0]}, {{"adjoint", adj}})};
            },
            {x});
        INFO(r.str());
        CHECK(r.max_rel_error < 1e-6);
    }
    auto rd = graft::autodiff::check_gradients(
        [](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
            return std::vector<endpoint>{b.op("MatrixDeterminant", {xs[0]})};
        },
        {f64({2, 3, 3}, [] {
            std::vector<double> v(a3);
            v.insert(v.end(), g3.begin(), g3.end());
            return v;
        }())});
    INFO(rd.str());
    CHECK(rd.max_rel_error < 1e-6);
    auto rl = graft::autodiff::check_gradients(
        [](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
            return std::vector<endpoint>{b.op_n("LogMatrixDeterminant", {xs[0]})[1]};
        },
        {x});
    INFO(rl.str());
    CHECK(rl.max_rel_error < 1e-6);
}

TEST_CASE("Gradients of MatrixSolve, MatrixTriangularSolve (broadcast batch) and Cholesky match finite differences") {
    for (bool adj : {false, true}) {
        auto r = graft::autodiff::check_gradients(
            [adj](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
                return std::vector<endpoint>{b.op("MatrixSolve", {xs[0], xs[1]}, {{"adjoint", adj}})};
            },
            {f64({3, 3}, g3), f64({3, 2}, {1, 2, 3, 4, 5, 6})});
        INFO(r.str());
        CHECK(r.max_rel_error < 1e-6);
    }
    for (bool lower : {true, false}) {
        for (bool adj : {false, true}) {
            auto r = graft::autodiff::check_gradients(
                [lower, adj](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
                    return std::vector<endpoint>{
                        b.op("MatrixTriangularSolve", {xs[0], xs[1]}, {{"lower", lower}, {"adjoint", adj}})};
                },
                {f64({3, 3}, {2, 0.5, -1, 1, 3, 0.25, -1, 2, 4}), f64({2, 3, 2}, {1, 2, 3, 4, 5, 6, -1, 0.5, 2, 1, 0, 3})});
            INFO(r.str());
            CHECK(r.max_rel_error < 1e-6);
        }
    }
    // Cholesky of a x^T x + 3 I (symmetric positive definite for any x)
    auto rc = graft::autodiff::check_gradients(
        [](const graft::graph_builder& b, const std::vector<endpoint>& xs) {
            auto sym = b.op("MatMul", {xs[0], xs[0]}, {{"transpose_a", true}});
            auto eye = b.constant(f64({3, 3}, {3, 0, 0, 0, 3, 0, 0, 0, 3}));
            return std::vector<endpoint>{b.op("Cholesky", {b.op("AddV2", {sym, eye})})};
        },
        {f64({3, 3}, {1, 0.5, -0.3, 0.2, 1.5, 0.7, -0.4, 0.1, 0.9})});
    INFO(rc.str());
    CHECK(rc.max_rel_error < 1e-6);
}

}  // namespace graft_test_linalg
