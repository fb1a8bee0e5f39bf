// graft/ops/matmul.hpp — MatMul and BatchMatMulV2 as TensorFlow defines them.
//
//   tensor c = graft::ops::matmul(a, b);                          // a [M,K], b [K,N] -> [M,N]
//   tensor d = graft::ops::matmul(a, b, {.transpose_b = true});   // b given as [N,K]
//   tensor e = graft::ops::batch_matmul(x, y);                    // [..., M, K] x [..., K, N], batch dims broadcast
//
// float32 runs on graft's GEMM (ops/gemm.hpp: AVX2/FMA micro-kernel chosen at run time, threads from
// graft::set_num_threads); a single row or column goes through a matrix-vector kernel. float64 and
// int32 (int64 too for BatchMatMulV2) use Eigen's tensor contraction / matrix product.
#pragma once

#include "graft/core/config.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include <Eigen/Core>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/core/threads.hpp"
#include "graft/ops/gemm.hpp"
#include "graft/ops/detail/nn_util.hpp"

namespace graft::ops {

/// Attributes of MatMul.
struct matmul_params {
    bool transpose_a = false;
    bool transpose_b = false;
    /// float32 op(b) packed beforehand (gemm::packed_b over op(b), e.g. a constant weight matrix):
    /// the product reads it instead of packing b when it runs on the GEMM path and the sizes match,
    /// and its panels in the order they lie for one row of a (gemm::gemv_packed, under AVX2).
    const gemm::packed_b<float>* b_packed = nullptr;
    /// float32: applied to rows of the product once they are final, by the thread that computed
    /// them (a fused bias and activation: bias_act_epilogue::rows()).
    const gemm::row_epilogue<float>* epilogue = nullptr;
};

/// Attributes of BatchMatMulV2 (adjoint == transpose for the real dtypes supported here).
struct batch_matmul_params {
    bool adj_x = false;
    bool adj_y = false;
};

namespace nn_detail {

/// op(b) of a row-major [K,N] (or, tb, [N,K]) b as the GEMM reads it: B(k,j) = b[j*outer + k*depth].
inline gemm::matrix_source<float> matmul_b_source(const float* b, std::int64_t K, std::int64_t N, bool tb) {
    return tb ? gemm::matrix_source<float>{b, K, 1, N} : gemm::matrix_source<float>{b, 1, N, N};
}

/// C[M,N] = op(A) * op(B) for float32, row-major operands with leading dims lda/ldb.
inline void matmul_f32(std::int64_t M, std::int64_t N, std::int64_t K, const float* a, bool ta, const float* b,
                       bool tb, float* c, int max_threads = 0, const gemm::packed_b<float>* b_packed = nullptr,
                       const gemm::row_epilogue<float>* done = nullptr) {
    const std::int64_t lda = ta ? M : K;
    // A(i,k) = a[i*sa_outer + k*sa_depth]
    const std::int64_t sa_outer = ta ? 1 : lda, sa_depth = ta ? lda : 1;
    const gemm::matrix_source<float> B = matmul_b_source(b, K, N, tb);
    if (M == 1 && max_threads == 0) {
        // a constant weight matrix packed for the GEMM streams in the order it lies (gemv_packed)
        if (b_packed == nullptr || !gemm::gemv_packed(N, K, a, sa_depth, *b_packed, c, 1, false))
            gemm::gemv(N, K, a, sa_depth, B, c, 1, false);
        if (done) (*done)(c, 0, 1);
    } else if (N == 1 && max_threads == 0) {
        gemm::gemv(M, K, b, B.depth_stride, gemm::matrix_source<float>{a, sa_outer, sa_depth, M}, c, N, false);
        if (done) (*done)(c, 0, M);
    } else {
        gemm::run(M, N, K, gemm::matrix_source<float>{a, sa_outer, sa_depth, M}, B, c, N, 1, false, max_threads,
                  b_packed, done);
    }
}

/// The same with Eigen's matrix product on one thread (float64 and integer batches).
template <class T>
void matmul_eigen(std::int64_t M, std::int64_t N, std::int64_t K, const T* a, bool ta, const T* b, bool tb, T* c) {
    using mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    using cmap = Eigen::Map<const mat>;
    Eigen::Map<mat> C(c, M, N);
    if (K == 0) {
        C.setZero();
        return;
    }
    const cmap A(a, ta ? K : M, ta ? M : K), B(b, tb ? N : K, tb ? K : N);
    if (!ta && !tb) C.noalias() = A * B;
    else if (ta && !tb) C.noalias() = A.transpose() * B;
    else if (!ta && tb) C.noalias() = A * B.transpose();
    else C.noalias() = A.transpose() * B.transpose();
}

/// One matrix product on graft's thread pool: the rows of C split into contiguous shares, each one
/// Eigen matrix product on its thread (float64 and integer products; float32 has its own GEMM).
/// Eigen's thread-pool tensor contraction did the same work and cost ~15 s of compile per dtype in
/// every file that included this header.
template <class T>
void matmul_parallel(std::int64_t M, std::int64_t N, std::int64_t K, const T* a, bool ta, const T* b, bool tb,
                     T* c) {
    using mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    using cmap = Eigen::Map<const mat, 0, Eigen::OuterStride<>>;
    if (K == 0) {
        Eigen::Map<mat>(c, M, N).setZero();
        return;
    }
    const cmap B(b, tb ? N : K, tb ? K : N, Eigen::OuterStride<>(tb ? K : N));
    // A share is worth a thread from ~2^18 multiply-adds on.
    const std::int64_t grain = std::max<std::int64_t>(1, (std::int64_t{1} << 18) / std::max<std::int64_t>(1, N * K));
    parallel_for(M, grain, [&](std::int64_t i0, std::int64_t i1) {
        const std::int64_t m = i1 - i0;
        Eigen::Map<mat> C(c + i0 * N, m, N);
        if (!ta) {
            const cmap A(a + i0 * K, m, K, Eigen::OuterStride<>(K));
            if (!tb) C.noalias() = A * B;
            else C.noalias() = A * B.transpose();
        } else {
            // a is stored K x M: rows i0..i1 of op(a) are its columns i0..i1.
            const cmap At(a + i0, K, m, Eigen::OuterStride<>(M));
            if (!tb) C.noalias() = At.transpose() * B;
            else C.noalias() = At.transpose() * B.transpose();
        }
    });
}

inline void check_matmul_dtype(const char* op, const tensor& a, const tensor& b, bool allow_int64) {
    check_same_dtype(op, "a", a, "b", b);
    const dtype t = a.type();
    if (t != dtype::float32 && t != dtype::float64 && t != dtype::int32 && t != dtype::float16 &&
        t != dtype::bfloat16 && !(allow_int64 && t == dtype::int64)) {
        throw invalid_argument_error(detail::cat(op, ": dtype ", dtype_name(t),
                                                 " is not supported (float16, bfloat16, float32, float64, int32",
                                                 allow_int64 ? ", int64" : "", ")"));
    }
}

/// float16 / bfloat16 operands are multiplied in float32 and rounded back (TF accumulates in float too).
inline bool is_half_type(dtype t) { return t == dtype::float16 || t == dtype::bfloat16; }

}  // namespace nn_detail

/// MatMul: op(a) [M,K] times op(b) [K,N] -> [M,N], op = transpose when the flag is set. float32,
/// float64, int32, float16/bfloat16 (computed in float32). Throws shape_error (rank or inner dims) /
/// invalid_argument_error (dtype).
inline tensor matmul(const tensor& a, const tensor& b, const matmul_params& p = {}) {
    nn_detail::check_matmul_dtype("MatMul", a, b, false);
    if (nn_detail::is_half_type(a.type())) {
        return cast(matmul(cast(a, dtype::float32), cast(b, dtype::float32), p), a.type());
    }
    if (a.rank() != 2 || b.rank() != 2) {
        throw shape_error(detail::cat("MatMul: a and b must be matrices, given a ", a.shape().str(), " and b ",
                                      b.shape().str()));
    }
    const std::int64_t M = p.transpose_a ? a.dim(1) : a.dim(0), K = p.transpose_a ? a.dim(0) : a.dim(1);
    const std::int64_t Kb = p.transpose_b ? b.dim(1) : b.dim(0), N = p.transpose_b ? b.dim(0) : b.dim(1);
    if (K != Kb) {
        throw shape_error(detail::cat("MatMul: inner dimensions differ: a ", a.shape().str(), " gives K=", K,
                                      " (transpose_a=", p.transpose_a, ") but b ", b.shape().str(), " gives K=", Kb,
                                      " (transpose_b=", p.transpose_b, ")"));
    }
    tensor c = tensor::uninitialized(a.type(), {M, N});
    if (M == 0 || N == 0) return c;
    switch (a.type()) {
        case dtype::float32:
            nn_detail::matmul_f32(M, N, K, a.data<float>(), p.transpose_a, b.data<float>(), p.transpose_b,
                                  c.data<float>(), 0, p.b_packed, p.epilogue);
            break;
        case dtype::float64:
            nn_detail::matmul_parallel(M, N, K, a.data<double>(), p.transpose_a, b.data<double>(), p.transpose_b,
                                       c.data<double>());
            break;
        default:
            nn_detail::matmul_parallel(M, N, K, a.data<std::int32_t>(), p.transpose_a, b.data<std::int32_t>(),
                                       p.transpose_b, c.data<std::int32_t>());
            break;
    }
    return c;
}

/// b packed for MatMul's GEMM path once, for many products with the same b (a layer's constant
/// weights; pass it as matmul_params::b_packed): null when b is not a float32 matrix in host memory
/// or op(b) has more than gemm::nc_block columns.
inline std::shared_ptr<const gemm::packed_b<float>> pack_matmul_b(const tensor& b, bool transpose_b) {
    if (b.type() != dtype::float32 || b.rank() != 2 || !b.dev().is_cpu() || b.num_elements() == 0) return nullptr;
    const std::int64_t K = transpose_b ? b.dim(1) : b.dim(0), N = transpose_b ? b.dim(0) : b.dim(1);
    auto packed = std::make_shared<const gemm::packed_b<float>>(
        K, N, nn_detail::matmul_b_source(b.data<float>(), K, N, transpose_b));
    return packed->packed() ? packed : nullptr;
}

/// BatchMatMulV2: x [..., r, c] and y [..., r, c] (rank >= 2), the last two dims multiplied as
/// matrices (transposed by adj_x / adj_y), the leading dims broadcast like NumPy. float32, float64,
/// int32, int64, float16/bfloat16 (computed in float32). Throws shape_error (ranks, inner dims, batch
/// dims) / invalid_argument_error (dtype).
inline tensor batch_matmul(const tensor& x, const tensor& y, const batch_matmul_params& p = {}) {
    nn_detail::check_matmul_dtype("BatchMatMulV2", x, y, true);
    if (nn_detail::is_half_type(x.type())) {
        return cast(batch_matmul(cast(x, dtype::float32), cast(y, dtype::float32), p), x.type());
    }
    if (x.rank() < 2 || y.rank() < 2) {
        throw shape_error(detail::cat("BatchMatMulV2: x and y must have rank >= 2, given x ", x.shape().str(),
                                      " and y ", y.shape().str()));
    }
    const int rx = x.rank(), ry = y.rank();
    const std::int64_t M = p.adj_x ? x.dim(rx - 1) : x.dim(rx - 2), K = p.adj_x ? x.dim(rx - 2) : x.dim(rx - 1);
    const std::int64_t Ky = p.adj_y ? y.dim(ry - 1) : y.dim(ry - 2), N = p.adj_y ? y.dim(ry - 2) : y.dim(ry - 1);
    if (K != Ky) {
        throw shape_error(detail::cat("BatchMatMulV2: inner dimensions differ: x ", x.shape().str(), " gives K=", K,
                                      " (adj_x=", p.adj_x, ") but y ", y.shape().str(), " gives K=", Ky, " (adj_y=",
                                      p.adj_y, ")"));
    }
    // Broadcast the batch dims (right-aligned).
    const int nb = std::max(rx, ry) - 2;
    std::vector<std::int64_t> out_dims(static_cast<std::size_t>(nb));
    std::vector<std::int64_t> xs(static_cast<std::size_t>(nb), 0), ys(static_cast<std::size_t>(nb), 0);
    std::int64_t xstride = M * K, ystride = K * N;
    for (int i = nb - 1; i >= 0; --i) {
        const int xi = i - (nb - (rx - 2)), yi = i - (nb - (ry - 2));
        const std::int64_t dx = xi >= 0 ? x.dim(xi) : 1, dy = yi >= 0 ? y.dim(yi) : 1;
        if (dx != dy && dx != 1 && dy != 1) {
            throw shape_error(detail::cat("BatchMatMulV2: batch dimensions of x ", x.shape().str(), " and y ",
                                          y.shape().str(), " cannot be broadcast (", dx, " vs ", dy, ")"));
        }
        out_dims[static_cast<std::size_t>(i)] = std::max(dx, dy);
        xs[static_cast<std::size_t>(i)] = dx == 1 ? 0 : xstride;
        ys[static_cast<std::size_t>(i)] = dy == 1 ? 0 : ystride;
        if (xi >= 0) xstride *= dx;
        if (yi >= 0) ystride *= dy;
    }
    std::int64_t batches = 1;
    for (auto d : out_dims) batches *= d;
    out_dims.push_back(M);
    out_dims.push_back(N);
    tensor out = tensor::uninitialized(x.type(), shape(out_dims));
    if (batches == 0 || M == 0 || N == 0) return out;
    // Offsets of batch b in x and y.
    auto offsets = [&](std::int64_t b, std::int64_t& ox, std::int64_t& oy) {
        ox = oy = 0;
        for (int i = nb - 1; i >= 0; --i) {
            const std::int64_t d = out_dims[static_cast<std::size_t>(i)];
            const std::int64_t idx = b % d;
            b /= d;
            ox += idx * xs[static_cast<std::size_t>(i)];
            oy += idx * ys[static_cast<std::size_t>(i)];
        }
    };
    visit_dtype(x.type(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::int32_t> ||
                      std::is_same_v<T, std::int64_t>) {
            const T* xd = x.data<T>();
            const T* yd = y.data<T>();
            T* od = out.data<T>();
            const double flops = 2.0 * static_cast<double>(M * N) * static_cast<double>(K);
            // Many small products: one thread each. Few large ones: each product on all threads.
            const bool per_batch_parallel = batches >= num_threads() && flops < 4.0e6;
            auto one = [&](std::int64_t b, bool inner_threads) {
                std::int64_t ox = 0, oy = 0;
                offsets(b, ox, oy);
                if constexpr (std::is_same_v<T, float>) {
                    nn_detail::matmul_f32(M, N, K, xd + ox, p.adj_x, yd + oy, p.adj_y, od + b * M * N,
                                          inner_threads ? 0 : 1);
                } else if (inner_threads) {
                    nn_detail::matmul_parallel(M, N, K, xd + ox, p.adj_x, yd + oy, p.adj_y, od + b * M * N);
                } else {
                    nn_detail::matmul_eigen(M, N, K, xd + ox, p.adj_x, yd + oy, p.adj_y, od + b * M * N);
                }
            };
            if (per_batch_parallel) {
                nn_detail::parallel_for(batches, 1, [&](std::int64_t b0, std::int64_t b1) {
                    for (std::int64_t b = b0; b < b1; ++b) one(b, false);
                });
            } else {
                for (std::int64_t b = 0; b < batches; ++b) one(b, true);
            }
        }
    });
    return out;
}

}  // namespace graft::ops
