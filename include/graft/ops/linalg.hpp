// graft/ops/linalg.hpp — batched dense linear algebra over the last two dims, with the Eigen
// decompositions TF's CPU kernels use (so signs, orders and pivots agree): determinants and
// inverses by partial-pivot LU, Cholesky by LLT, Svd by BDCSVD, triangular solves. float32 and
// float64 ([..., M, N] row-major).
//
//   auto [sign, logdet] = ops::log_matrix_determinant(a);
//   tensor x = ops::matrix_solve(a, b);                    // a x = b, per batch matrix
//   auto [s, u, v] = ops::svd(a, true, false);             // a = u diag(s) v^T
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <tuple>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/ops/detail/op_support.hpp"

#include <Eigen/Dense>
#include <Eigen/SVD>

namespace graft::ops {

namespace linalg_detail {

using op_detail::cat;
template <class T>
using matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using cmap = Eigen::Map<const matrix<T>>;
template <class T>
using map = Eigen::Map<matrix<T>>;

/// Throws unless x is a valid host tensor of rank >= 2 (and square when asked).
inline void require_matrices(std::string_view op, const tensor& x, std::string_view what, bool square) {
    op_detail::require_input(op, x, what);
    if (x.rank() < 2) {
        throw shape_error(cat(op, ": ", what, " must have rank >= 2 ([..., M, N]) but has shape ", x.shape().str()));
    }
    if (square && x.dim(x.rank() - 1) != x.dim(x.rank() - 2)) {
        throw shape_error(cat(op, ": ", what, " must be square matrices ([..., M, M]) but has shape ", x.shape().str()));
    }
}

/// The leading (batch) dims of x and their product.
inline std::vector<std::int64_t> batch_dims(const tensor& x) {
    return {x.shape().dims().begin(), x.shape().dims().end() - 2};
}
inline std::int64_t batch_count(const tensor& x) {
    return op_detail::dim_product(x.shape().dims(), 0, static_cast<std::size_t>(x.rank() - 2));
}
inline std::vector<std::int64_t> with(std::vector<std::int64_t> d, std::initializer_list<std::int64_t> tail) {
    d.insert(d.end(), tail);
    return d;
}

/// Calls f(T{}) for T = float or double; throws invalid_argument_error naming the op otherwise.
template <class F>
auto on_real(std::string_view op, const tensor& x, F&& f) {
    return op_detail::dispatch<float, double>(x.type(), op, std::forward<F>(f));
}

/// TF's SLogDet: sign and log|det| through partial-pivot LU; a singular matrix gives sign 0
/// and log|det| = -inf.
template <class T>
void slogdet(const matrix<T>& a, T& sign, T& log_abs) {
    sign = 1;
    log_abs = 0;
    if (a.rows() == 0) return;
    Eigen::PartialPivLU<matrix<T>> lu(a);
    const auto diag = lu.matrixLU().diagonal().array().eval();
    sign = static_cast<T>(lu.permutationP().determinant());
    for (Eigen::Index i = 0; i < diag.size(); ++i) {
        const T d = diag(i);
        log_abs += std::log(std::abs(d));
        sign *= d / std::abs(d);
    }
    if (!std::isfinite(log_abs)) {
        sign = 0;
        log_abs = log_abs > 0 ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
    }
}

}  // namespace linalg_detail

/// LogMatrixDeterminant: (sign, log|det|) of square matrices [..., M, M], each [...]. Throws
/// shape_error for a non-square input, invalid_argument_error for a non-float dtype.
inline std::pair<tensor, tensor> log_matrix_determinant(const tensor& x) {
    using namespace linalg_detail;
    const char* op = "LogMatrixDeterminant";
    require_matrices(op, x, "input", true);
    return on_real(op, x, [&](auto tag) {
        using T = decltype(tag);
        const std::int64_t n = x.dim(x.rank() - 1), batch = batch_count(x);
        tensor sign = tensor::uninitialized(x.type(), shape(batch_dims(x)));
        tensor logd = tensor::uninitialized(x.type(), shape(batch_dims(x)));
        for (std::int64_t b = 0; b < batch; ++b) {
            matrix<T> a = cmap<T>(x.data<T>() + b * n * n, n, n);
            slogdet<T>(a, sign.data<T>()[b], logd.data<T>()[b]);
        }
        return std::pair<tensor, tensor>{sign, logd};
    });
}

/// MatrixDeterminant: det of square matrices [..., M, M] as sign * exp(log|det|) (TF's route).
/// Throws as log_matrix_determinant.
inline tensor matrix_determinant(const tensor& x) {
    using namespace linalg_detail;
    const char* op = "MatrixDeterminant";
    require_matrices(op, x, "input", true);
    return on_real(op, x, [&](auto tag) {
        using T = decltype(tag);
        const std::int64_t n = x.dim(x.rank() - 1), batch = batch_count(x);
        tensor out = tensor::uninitialized(x.type(), shape(batch_dims(x)));
        for (std::int64_t b = 0; b < batch; ++b) {
            T sign, logd;
            slogdet<T>(matrix<T>(cmap<T>(x.data<T>() + b * n * n, n, n)), sign, logd);
            out.data<T>()[b] = sign * std::exp(logd);
        }
        return out;
    });
}

/// MatrixInverse: the inverse (of the transpose when adjoint) of square matrices [..., M, M].
/// Throws invalid_argument_error for a singular matrix (a zero LU pivot), shape_error for a
/// non-square input.
inline tensor matrix_inverse(const tensor& x, bool adjoint = false) {
    using namespace linalg_detail;
    const char* op = "MatrixInverse";
    require_matrices(op, x, "input", true);
    return on_real(op, x, [&](auto tag) {
        using T = decltype(tag);
        const std::int64_t n = x.dim(x.rank() - 1), batch = batch_count(x);
        tensor out = tensor::uninitialized(x.type(), x.shape());
        if (n == 0) return out;
        for (std::int64_t b = 0; b < batch; ++b) {
            cmap<T> a(x.data<T>() + b * n * n, n, n);
            Eigen::PartialPivLU<matrix<T>> lu(n);
            if (adjoint) lu.compute(a.transpose());
            else lu.compute(a);
            if (!(lu.matrixLU().diagonal().cwiseAbs().minCoeff() > T(0))) {
                throw invalid_argument_error(cat(op, ": input matrix ", b, " is not invertible (a zero LU pivot)"));
            }
            map<T>(out.data<T>() + b * n * n, n, n) = lu.inverse();
        }
        return out;
    });
}

/// MatrixSolve: x with a x = rhs (a^T x = rhs when adjoint) for a [..., M, M], rhs [..., M, K]
/// with equal batch dims. Throws shape_error for mismatched shapes, invalid_argument_error for a
/// singular matrix or mismatched dtypes.
inline tensor matrix_solve(const tensor& a, const tensor& rhs, bool adjoint = false) {
    using namespace linalg_detail;
    const char* op = "MatrixSolve";
    require_matrices(op, a, "matrix", true);
    require_matrices(op, rhs, "rhs", false);
    op_detail::require_same_dtype(op, a, "matrix", rhs, "rhs");
    const std::int64_t m = a.dim(a.rank() - 1), k = rhs.dim(rhs.rank() - 1);
    if (batch_dims(a) != batch_dims(rhs) || rhs.dim(rhs.rank() - 2) != m) {
        throw shape_error(cat(op, ": matrix ", a.shape().str(), " and rhs ", rhs.shape().str(),
                              " must be [..., M, M] and [..., M, K] with the same batch dims"));
    }
    return on_real(op, a, [&](auto tag) {
        using T = decltype(tag);
        tensor out = tensor::uninitialized(a.type(), rhs.shape());
        if (m == 0 || k == 0) return out;
        for (std::int64_t b = 0, batch = batch_count(a); b < batch; ++b) {
            cmap<T> am(a.data<T>() + b * m * m, m, m);
            Eigen::PartialPivLU<matrix<T>> lu(m);
            if (adjoint) lu.compute(am.transpose());
            else lu.compute(am);
            if (!(lu.matrixLU().diagonal().cwiseAbs().minCoeff() > T(0))) {
                throw invalid_argument_error(cat(op, ": input matrix ", b, " is not invertible (a zero LU pivot)"));
            }
            map<T>(out.data<T>() + b * m * k, m, k) = lu.solve(matrix<T>(cmap<T>(rhs.data<T>() + b * m * k, m, k)));
        }
        return out;
    });
}

/// MatrixTriangularSolve: x with a x = rhs for triangular a [..., M, M] (its lower or upper
/// triangle; a^T when adjoint) and rhs [..., M, K]; batch dims broadcast. No singularity check
/// (a zero diagonal gives inf/nan, as in TF). Throws shape_error for incompatible shapes.
inline tensor matrix_triangular_solve(const tensor& a, const tensor& rhs, bool lower = true, bool adjoint = false) {
    using namespace linalg_detail;
    const char* op = "MatrixTriangularSolve";
    require_matrices(op, a, "matrix", true);
    require_matrices(op, rhs, "rhs", false);
    op_detail::require_same_dtype(op, a, "matrix", rhs, "rhs");
    const std::int64_t m = a.dim(a.rank() - 1), k = rhs.dim(rhs.rank() - 1);
    if (rhs.dim(rhs.rank() - 2) != m) {
        throw shape_error(cat(op, ": rhs ", rhs.shape().str(), " must have as many rows as matrix ", a.shape().str()));
    }
    // Broadcast the batch dims numpy-style.
    auto ba = batch_dims(a), bb = batch_dims(rhs);
    const std::size_t r = std::max(ba.size(), bb.size());
    ba.insert(ba.begin(), r - ba.size(), 1);
    bb.insert(bb.begin(), r - bb.size(), 1);
    std::vector<std::int64_t> bo(r);
    for (std::size_t i = 0; i < r; ++i) {
        if (ba[i] != bb[i] && ba[i] != 1 && bb[i] != 1) {
            throw shape_error(cat(op, ": the batch dims of matrix ", a.shape().str(), " and rhs ", rhs.shape().str(),
                                  " do not broadcast"));
        }
        bo[i] = ba[i] == 1 ? bb[i] : ba[i];
    }
    return on_real(op, a, [&](auto tag) {
        using T = decltype(tag);
        tensor out = tensor::uninitialized(a.type(), shape(with(bo, {m, k})));
        const std::int64_t batch = op_detail::dim_product(bo, 0, r);
        for (std::int64_t b = 0; b < batch; ++b) {
            std::int64_t ia = 0, ib = 0, rest = b, sa = 1, sb = 1;
            for (std::size_t d = r; d-- > 0;) {
                const std::int64_t idx = rest % bo[d];
                rest /= bo[d];
                ia += (ba[d] == 1 ? 0 : idx) * sa;
                ib += (bb[d] == 1 ? 0 : idx) * sb;
                sa *= ba[d];
                sb *= bb[d];
            }
            cmap<T> am(a.data<T>() + ia * m * m, m, m);
            matrix<T> x = cmap<T>(rhs.data<T>() + ib * m * k, m, k);
            if (lower && !adjoint) am.template triangularView<Eigen::Lower>().solveInPlace(x);
            else if (lower) am.transpose().template triangularView<Eigen::Upper>().solveInPlace(x);
            else if (!adjoint) am.template triangularView<Eigen::Upper>().solveInPlace(x);
            else am.transpose().template triangularView<Eigen::Lower>().solveInPlace(x);
            map<T>(out.data<T>() + b * m * k, m, k) = x;
        }
        return out;
    });
}

/// Cholesky: the lower factor L (zeros above the diagonal) with L L^T = x for symmetric
/// positive definite x [..., M, M] (only its lower triangle is read). Throws
/// invalid_argument_error when a matrix is not positive definite.
inline tensor cholesky(const tensor& x) {
    using namespace linalg_detail;
    const char* op = "Cholesky";
    require_matrices(op, x, "input", true);
    return on_real(op, x, [&](auto tag) {
        using T = decltype(tag);
        const std::int64_t n = x.dim(x.rank() - 1);
        tensor out = tensor::uninitialized(x.type(), x.shape());
        for (std::int64_t b = 0, batch = batch_count(x); b < batch; ++b) {
            Eigen::LLT<matrix<T>, Eigen::Lower> llt(matrix<T>(cmap<T>(x.data<T>() + b * n * n, n, n)));
            if (llt.info() != Eigen::Success) {
                throw invalid_argument_error(cat(op, ": matrix ", b, " is not positive definite (the decomposition failed)"));
            }
            map<T>(out.data<T>() + b * n * n, n, n) = llt.matrixL().toDenseMatrix();
        }
        return out;
    });
}

/// CholeskyGrad: the symmetric gradient of Cholesky's input from the factor l and the gradient
/// of l: sym(L^-T Phi(L^T grad) L^-1), Phi taking the lower triangle with half the diagonal
/// (TF's linalg_grad formula). Throws shape_error when l and grad differ in shape.
inline tensor cholesky_grad(const tensor& l, const tensor& grad) {
    using namespace linalg_detail;
    const char* op = "CholeskyGrad";
    require_matrices(op, l, "l", true);
    op_detail::require_input(op, grad, "grad");
    op_detail::require_same_dtype(op, l, "l", grad, "grad");
    if (l.shape() != grad.shape()) {
        throw shape_error(cat(op, ": l ", l.shape().str(), " and grad ", grad.shape().str(), " must have the same shape"));
    }
    return on_real(op, l, [&](auto tag) {
        using T = decltype(tag);
        const std::int64_t n = l.dim(l.rank() - 1);
        tensor out = tensor::uninitialized(l.type(), l.shape());
        for (std::int64_t b = 0, batch = batch_count(l); b < batch; ++b) {
            matrix<T> lm = cmap<T>(l.data<T>() + b * n * n, n, n);
            matrix<T> linv = lm.template triangularView<Eigen::Lower>().solve(matrix<T>::Identity(n, n));
            matrix<T> mid = lm.transpose() * cmap<T>(grad.data<T>() + b * n * n, n, n);
            mid.diagonal() *= T(0.5);
            mid = mid.template triangularView<Eigen::Lower>().toDenseMatrix();
            matrix<T> ga = linv.transpose() * mid * linv;
            map<T>(out.data<T>() + b * n * n, n, n) = (ga + ga.transpose()) * T(0.5);
        }
        return out;
    });
}

/// Lu: the packed partial-pivot LU factors (unit-lower L below the diagonal, U on and above)
/// and the row permutation p ([..., M], int32 or int64) with x[p] = L U. Throws shape_error
/// for a non-square input, invalid_argument_error for another index dtype.
inline std::pair<tensor, tensor> lu(const tensor& x, dtype index_type = dtype::int32) {
    using namespace linalg_detail;
    const char* op = "Lu";
    require_matrices(op, x, "input", true);
    if (index_type != dtype::int32 && index_type != dtype::int64) {
        throw invalid_argument_error(cat(op, ": output_idx_type must be int32 or int64, got ", dtype_name(index_type)));
    }
    return on_real(op, x, [&](auto tag) {
        using T = decltype(tag);
        const std::int64_t n = x.dim(x.rank() - 1);
        tensor out = tensor::uninitialized(x.type(), x.shape());
        tensor perm(dtype::int64, shape(with(batch_dims(x), {n})));
        for (std::int64_t b = 0, batch = batch_count(x); b < batch && n > 0; ++b) {
            Eigen::PartialPivLU<matrix<T>> dec(matrix<T>(cmap<T>(x.data<T>() + b * n * n, n, n)));
            map<T>(out.data<T>() + b * n * n, n, n) = dec.matrixLU();
            // permutationP() sends row i of x to row P(i); p lists, for each row of L U, its source.
            const auto& idx = dec.permutationP().indices();
            for (Eigen::Index i = 0; i < idx.size(); ++i) perm.data<std::int64_t>()[b * n + idx(i)] = i;
        }
        return std::pair<tensor, tensor>{out, index_type == dtype::int64 ? perm : cast(perm, index_type)};
    });
}

/// Svd: singular values s [..., P] (P = min(M, N), descending) and, with compute_uv, u
/// [..., M, P or M] and v [..., N, P or N] (full_matrices) with x = u diag(s) v^T, by Eigen's
/// BDCSVD as TF does (without compute_uv, u and v are empty scalars); float32 is decomposed in float64
/// and rounded back (BDCSVD is instantiated once: it was ~100 s of the kernel file's compile time per
/// type, and the float64 result is at least as close to TF's). Throws shape_error for
/// rank < 2, invalid_argument_error for a non-float dtype.
inline std::tuple<tensor, tensor, tensor> svd(const tensor& x, bool compute_uv = true, bool full_matrices = false) {
    using namespace linalg_detail;
    const char* op = "Svd";
    require_matrices(op, x, "input", false);
    return on_real(op, x, [&](auto tag) {
        using T = decltype(tag);
        const std::int64_t m = x.dim(x.rank() - 2), n = x.dim(x.rank() - 1), p = std::min(m, n);
        const std::int64_t uc = full_matrices ? m : p, vc = full_matrices ? n : p;
        tensor s(x.type(), shape(with(batch_dims(x), {p})));
        tensor u = compute_uv ? tensor(x.type(), shape(with(batch_dims(x), {m, uc}))) : tensor(x.type(), shape{});
        tensor v = compute_uv ? tensor(x.type(), shape(with(batch_dims(x), {n, vc}))) : tensor(x.type(), shape{});
        int options = 0;
        if (compute_uv) options = full_matrices ? Eigen::ComputeFullU | Eigen::ComputeFullV : Eigen::ComputeThinU | Eigen::ComputeThinV;
        for (std::int64_t b = 0, batch = batch_count(x); b < batch; ++b) {
            if (p == 0) {
                // An empty matrix: the non-empty side's full factor is the identity.
                if (compute_uv && full_matrices && m > 0) map<T>(u.data<T>() + b * m * m, m, m).setIdentity();
                if (compute_uv && full_matrices && n > 0) map<T>(v.data<T>() + b * n * n, n, n).setIdentity();
                continue;
            }
            Eigen::BDCSVD<matrix<double>> d(matrix<double>(cmap<T>(x.data<T>() + b * m * n, m, n).template cast<double>()),
                                            static_cast<unsigned>(options));
            Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>(s.data<T>() + b * p, p) =
                d.singularValues().template cast<T>();
            if (compute_uv) {
                map<T>(u.data<T>() + b * m * uc, m, uc) = d.matrixU().template cast<T>();
                map<T>(v.data<T>() + b * n * vc, n, vc) = d.matrixV().template cast<T>();
            }
        }
        return std::tuple<tensor, tensor, tensor>{s, u, v};
    });
}

}  // namespace graft::ops
