// graft/ops/detail/gemv.hpp — graft's matrix-vector product (one row of A times B: batch-1 MatMul),
// bound by memory bandwidth: the portable sweep, the split of B into row blocks or column ranges over
// threads, and gemv(), the entry point. Internal: include graft/ops/gemm.hpp.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "graft/core/threads.hpp"
#include "graft/ops/detail/gemm_pack.hpp"
#include "graft/ops/detail/nn_util.hpp"

namespace graft::ops::gemm {

namespace detail {
// y[n] (= or +=) sum_k x[k*incx] * B(n, k) for n in [n0, n1).
inline void gemv_portable(std::int64_t n0, std::int64_t n1, std::int64_t K, const float* x, std::int64_t incx,
                          const matrix_source<float>& B, float* y, std::int64_t incy, bool accumulate) {
    if (B.outer_stride == 1) {
        alignas(64) float acc[256];
        for (std::int64_t nb = n0; nb < n1; nb += 256) {
            const std::int64_t w = std::min<std::int64_t>(256, n1 - nb);
            for (std::int64_t j = 0; j < w; ++j) acc[j] = 0.f;
            for (std::int64_t k = 0; k < K; ++k) {
                const float xv = x[k * incx];
                const float* row = B.data + k * B.depth_stride + nb;
                for (std::int64_t j = 0; j < w; ++j) acc[j] += xv * row[j];
            }
            for (std::int64_t j = 0; j < w; ++j) {
                float& d = y[(nb + j) * incy];
                d = (accumulate ? d : 0.f) + acc[j];
            }
        }
        return;
    }
    for (std::int64_t n = n0; n < n1; ++n) {
        const float* col = B.data + n * B.outer_stride;
        float s = 0.f;
        for (std::int64_t k = 0; k < K; ++k) s += x[k * incx] * col[k * B.depth_stride];
        float& d = y[n * incy];
        d = (accumulate ? d : 0.f) + s;
    }
}
}  // namespace detail

}  // namespace graft::ops::gemm

#include "graft/ops/arch/x86/gemv_kernels.hpp"

namespace graft::ops::gemm {

/// Bytes of B one thread of gemv() reads before another thread is worth waking: the product reads
/// each element of B once, so it is bound by memory bandwidth, and a second core brings its own.
inline constexpr double kGemvBytesPerThread = 256.0 * 1024;

/// Bytes of B per row block when gemv() cuts a large B whose rows are contiguous along n into row
/// blocks: their number depends on B's size only, not on the thread count, so each column's sum is
/// the same on any number of threads (each block's partial sum, then the blocks' sums in order);
/// it is even, so two threads share it evenly. Threads take whole runs of blocks, so each reads one
/// contiguous range of B. Split by columns instead, a thread's share of every row lies at the same
/// offsets modulo the row length, so on a power-of-two row stride it maps onto a fraction of the
/// cache's sets (measured on two cores with 2 MiB L2 each, a 784-512-512 MLP at batch 1: 40 us
/// with its 2.7 MB of weights split by columns, as if read from L3; 18 us in 4 + 2 row blocks;
/// 21 us in 12 + 12, each block costing a new sweep).
inline constexpr double kGemvBlockBytes = 400.0 * 1024;

/// The number of row blocks gemv() cuts a B of `bytes` into (1: not cut).
inline int gemv_depth_blocks(double bytes, std::int64_t K) {
    if (bytes < 2 * kGemvBytesPerThread) return 1;
    const auto even = 2 * static_cast<std::int64_t>(bytes / kGemvBlockBytes / 2);
    return static_cast<int>(std::clamp<std::int64_t>(std::min(even, K / 16), 1, 24));
}

namespace detail {
// y[n] (= or +=) sum_k x[k*incx] * B(n, k) for n in [n0, n1) with the best kernel for `isa`.
inline void gemv_columns(kernel_isa isa, std::int64_t n0, std::int64_t n1, std::int64_t K, const float* x,
                         std::int64_t incx, const matrix_source<float>& B, float* y, std::int64_t incy,
                         bool accumulate) {
#ifdef GRAFT_X86_DISPATCH
    if (isa == kernel_isa::avx512) {
        gemv_avx512(n0, n1, K, x, incx, B, y, incy, accumulate);
        return;
    }
    if (isa == kernel_isa::avx2) {
        gemv_avx2(n0, n1, K, x, incx, B, y, incy, accumulate);
        return;
    }
#else
    (void)isa;
#endif
    gemv_portable(n0, n1, K, x, incx, B, y, incy, accumulate);
}

// gemv() for B rows contiguous along n cut into `blocks` row blocks (see kGemvBlockBytes).
inline void gemv_by_depth(kernel_isa isa, int blocks, std::int64_t N, std::int64_t K, const float* x,
                          std::int64_t incx, const matrix_source<float>& B, float* y, std::int64_t incy,
                          bool accumulate) {
    thread_local scratch<float> sums;  // the caller's: each block's partial sums, written by its thread
    float* part = sums.get(static_cast<std::size_t>(blocks * N));
    const int tasks = std::min(blocks, num_threads());
    nn_detail::run_tasks(tasks, [&](int t) {
#ifdef GRAFT_X86_DISPATCH
        if (isa == kernel_isa::avx512) {
            for (int b = blocks * t / tasks; b < blocks * (t + 1) / tasks; ++b)
                gemv_block_grouped_avx512(K * b / blocks, K * (b + 1) / blocks, N, x, incx, B, part + b * N);
            return;
        }
        if (isa == kernel_isa::avx2) {
            for (int b = blocks * t / tasks; b < blocks * (t + 1) / tasks; ++b)
                gemv_block_rows_avx2(K * b / blocks, K * (b + 1) / blocks, N, x, incx, B, part + b * N);
            return;
        }
#endif
        // portable: 256 columns down all of this thread's blocks, then the next 256: one unbroken
        // sweep down B per column block
        for (std::int64_t c0 = 0; c0 < N; c0 += 256) {
            const std::int64_t c1 = std::min(N, c0 + 256);
            for (int b = blocks * t / tasks; b < blocks * (t + 1) / tasks; ++b) {
                const std::int64_t k0 = K * b / blocks, k1 = K * (b + 1) / blocks;
                const matrix_source<float> rows{B.data + k0 * B.depth_stride, B.outer_stride, B.depth_stride,
                                                B.outer_extent};
                gemv_columns(isa, c0, c1, k1 - k0, x + k0 * incx, incx, rows, part + b * N, 1, false);
            }
        }
    });
    // the blocks' sums in order, then (0 or y) + sum as in gemv_store
#ifdef GRAFT_X86_DISPATCH
    if (isa == kernel_isa::avx512 && incy == 1) {
        gemv_sum_blocks_avx512(blocks, N, part, y, accumulate);
        return;
    }
    if (isa == kernel_isa::avx2 && incy == 1) {
        gemv_sum_blocks_avx2(blocks, N, part, y, accumulate);
        return;
    }
#endif
    for (int b = 1; b < blocks; ++b) {
        const float* p = part + b * N;
        for (std::int64_t n = 0; n < N; ++n) part[n] += p[n];
    }
    for (std::int64_t n = 0; n < N; ++n) {
        float& d = y[n * incy];
        d = (accumulate ? d : 0.f) + part[n];
    }
}
}  // namespace detail

/// gemv() for a B packed for the GEMM (packed_b of a layer's constant weights, K x N): its grouped
/// copy (packed_b::grouped: made on the first call), four panels (64 columns; AVX-512: eight) at a
/// time, one stream each, the groups in the order they lie (every other call in reverse:
/// packed_b::next_sweep_reversed) and split over threads (each thread one contiguous range). Each column's sum is one sweep k = 0..K-1
/// (gemv()'s column sweep: the same bits on any thread count). Returns false, having done nothing,
/// where it does not apply: B not packed for K x N, incy != 1, or the portable kernels. AVX-512 takes
/// eight panels (128 columns) at a time (LeNet's fc1, [1,400]x[400,120], 2.5-2.8 -> 1.9-2.0 us).
inline bool gemv_packed(std::int64_t N, std::int64_t K, const float* x, std::int64_t incx, const packed_b<float>& B,
                        float* y, std::int64_t incy, bool accumulate) {
#ifdef GRAFT_X86_DISPATCH
    const kernel_isa isa = detail::active_isa();
    if (isa == kernel_isa::portable || incy != 1 || !B.fits(K, N)) return false;
    static constexpr detail::gemv_packed_fn by_panels[4] = {detail::gemv_grouped_avx2<1>, detail::gemv_grouped_avx2<2>,
                                                            detail::gemv_grouped_avx2<3>, detail::gemv_grouped_avx2<4>};
    static constexpr detail::gemv_packed_fn by_panels512[8] = {
        detail::gemv_grouped_avx512<1>, detail::gemv_grouped_avx512<2>, detail::gemv_grouped_avx512<3>,
        detail::gemv_grouped_avx512<4>, detail::gemv_grouped_avx512<5>, detail::gemv_grouped_avx512<6>,
        detail::gemv_grouped_avx512<7>, detail::gemv_grouped_avx512<8>};
    const bool avx512 = isa == kernel_isa::avx512;
    const std::int64_t per = avx512 ? 8 : 4;  // panels per group: 8 zmm or 8 ymm accumulators
    const std::int64_t panels = (N + nr - 1) / nr, groups = (panels + per - 1) / per;
    const float* grouped = B.grouped(static_cast<int>(per));  // group g at g * per * nr * K
    const double group_bytes = 4.0 * static_cast<double>(per * nr) * static_cast<double>(K);
    const bool reversed = B.next_sweep_reversed();  // the groups in alternate orders: the same sums
    nn_detail::parallel_for(groups, static_cast<std::int64_t>(std::ceil(kGemvBytesPerThread / group_bytes)),
                            [&](std::int64_t g0, std::int64_t g1) {
        for (std::int64_t i = g0; i < g1; ++i) {  // each thread the same groups on every call
            const std::int64_t g = reversed ? g0 + g1 - 1 - i : i;
            const std::int64_t j0 = per * g, p = std::min(per, panels - j0);
            (avx512 ? by_panels512 : by_panels)[p - 1](B, grouped + j0 * nr * K, j0, x, incx, y, accumulate);
        }
    });
    return true;
#else
    (void)N, (void)K, (void)x, (void)incx, (void)B, (void)y, (void)incy, (void)accumulate;
    return false;
#endif
}

/// y[n*incy] (= or +=) sum_k x[k*incx] * B(n, k) for n < N: one row of A times B on graft's thread
/// pool, split by rows of B when they are contiguous along n and B is large (kGemvBlockBytes),
/// else by columns; each column's sum is the same whatever the thread count. For C[1,N] = a[1,K] *
/// B[K,N] pass B as {B, 1, ldb, N}.
inline void gemv(std::int64_t N, std::int64_t K, const float* x, std::int64_t incx, const matrix_source<float>& B,
                 float* y, std::int64_t incy, bool accumulate) {
    if (N <= 0) return;
    const kernel_isa isa = detail::active_isa();
    const double bytes = 4.0 * static_cast<double>(N) * static_cast<double>(std::max<std::int64_t>(K, 1));
    if (B.outer_stride == 1) {
        if (const int blocks = gemv_depth_blocks(bytes, K); blocks > 1) {
            detail::gemv_by_depth(isa, blocks, N, K, x, incx, B, y, incy, accumulate);
            return;
        }
    }
    // Chunks are whole vectors of columns (16 under AVX-512, 8 under AVX2).
    const std::int64_t unit = isa == kernel_isa::avx512 ? 16 : isa == kernel_isa::avx2 ? 8 : 64;
    const std::int64_t units = (N + unit - 1) / unit;
    const auto unit_bytes = static_cast<double>(unit * std::max<std::int64_t>(K, 1) * 4);
    nn_detail::parallel_for(units, static_cast<std::int64_t>(std::ceil(kGemvBytesPerThread / unit_bytes)),
                            [&](std::int64_t ub, std::int64_t ue) {
        detail::gemv_columns(isa, ub * unit, std::min(N, ue * unit), K, x, incx, B, y, incy, accumulate);
    });
}

}  // namespace graft::ops::gemm
