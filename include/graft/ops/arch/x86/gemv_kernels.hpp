// graft/ops/arch/x86/gemv_kernels.hpp — the x86 kernels of graft's matrix-vector product (batch-1
// MatMul): AVX2 + FMA and AVX-512F column sweeps, the row-grouped AVX-512 sweep of a row block and
// the sum of the blocks' partial results. Chosen at run time by detail/gemv.hpp; empty where
// GRAFT_X86_DISPATCH is not set. Internal: include graft/ops/gemm.hpp.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "graft/ops/arch/x86/cpu.hpp"
#include "graft/ops/detail/gemm_pack.hpp"

#ifdef GRAFT_X86_DISPATCH
namespace graft::ops::gemm::detail {

// The portable sweep (detail/gemv.hpp), where the AVX2 one leaves a column range to it.
inline void gemv_portable(std::int64_t n0, std::int64_t n1, std::int64_t K, const float* x, std::int64_t incx,
                          const matrix_source<float>& B, float* y, std::int64_t incy, bool accumulate);

[[gnu::target("avx2,fma")]] inline float hsum_avx2(__m256 v) {
    const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}
inline void gemv_store(float* y, std::int64_t incy, const float* acc, int w, bool accumulate) {
    for (int j = 0; j < w; ++j) {
        float& d = y[j * incy];
        d = (accumulate ? d : 0.f) + acc[j];
    }
}

// Columns [nb, nb + w) of y = x B for B rows contiguous along n, w <= 8V: V ymm accumulators (the
// last one masked), one sweep down all K rows. Per column the sum runs k = 0..K-1 with one fused
// multiply-add each, as in gemv_axpy_avx512 (the two give the same bits).
template <int V>
[[gnu::target("avx2,fma")]] inline void gemv_axpy_avx2(std::int64_t nb, int w, std::int64_t K, const float* x,
                                                        std::int64_t incx, const matrix_source<float>& B, float* y,
                                                        std::int64_t incy, bool accumulate) {
    __m256 acc[V];
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) acc[v] = _mm256_setzero_ps();
    const int rest = w - 8 * (V - 1);  // 1..8 columns in the last vector
    const __m256i last = arch::first_lanes_avx2(rest);
    const float* row = B.data + nb;
    for (std::int64_t k = 0; k < K; ++k, row += B.depth_stride) {
        const __m256 xv = _mm256_set1_ps(x[k * incx]);
#pragma GCC unroll 16
        for (int v = 0; v < V - 1; ++v) acc[v] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(row + 8 * v), acc[v]);
        acc[V - 1] = _mm256_fmadd_ps(xv, _mm256_maskload_ps(row + 8 * (V - 1), last), acc[V - 1]);
    }
    alignas(32) float out[8 * V];
    for (int v = 0; v < V; ++v) _mm256_store_ps(out + 8 * v, acc[v]);
    gemv_store(y + nb * incy, incy, out, w, accumulate);
}

// Splits columns [n0, n1) into near-equal blocks of at most `cap` vectors of `lanes` columns and
// runs by_vectors[vectors - 1] on each.
template <class Table>
inline void gemv_axpy_blocks(std::int64_t n0, std::int64_t n1, int lanes, const Table& by_vectors, std::int64_t K,
                             const float* x, std::int64_t incx, const matrix_source<float>& B, float* y,
                             std::int64_t incy, bool accumulate) {
    const auto cap = static_cast<std::int64_t>(std::size(by_vectors));
    const std::int64_t vectors = (n1 - n0 + lanes - 1) / lanes;
    const std::int64_t blocks = (vectors + cap - 1) / cap;
    for (std::int64_t b = 0; b < blocks; ++b) {
        const std::int64_t vb = vectors * b / blocks, ve = vectors * (b + 1) / blocks;
        const std::int64_t c0 = n0 + lanes * vb, c1 = std::min(n1, n0 + lanes * ve);
        by_vectors[ve - vb - 1](c0, static_cast<int>(c1 - c0), K, x, incx, B, y, incy, accumulate);
    }
}

using gemv_block_fn = void (*)(std::int64_t, int, std::int64_t, const float*, std::int64_t, const matrix_source<float>&,
                               float*, std::int64_t, bool);
using gemv_packed_fn = void (*)(const packed_b<float>&, const float*, std::int64_t, const float*, std::int64_t, float*, bool);

[[gnu::target("avx2,fma")]] inline void gemv_avx2(std::int64_t n0, std::int64_t n1, std::int64_t K, const float* x,
                                                   std::int64_t incx, const matrix_source<float>& B, float* y,
                                                   std::int64_t incy, bool accumulate) {
    if (B.outer_stride == 1) {  // rows of B are contiguous along n: blocks of up to 64 columns
        static constexpr gemv_block_fn by_vectors[8] = {gemv_axpy_avx2<1>, gemv_axpy_avx2<2>, gemv_axpy_avx2<3>,
                                                        gemv_axpy_avx2<4>, gemv_axpy_avx2<5>, gemv_axpy_avx2<6>,
                                                        gemv_axpy_avx2<7>, gemv_axpy_avx2<8>};
        gemv_axpy_blocks(n0, n1, 8, by_vectors, K, x, incx, B, y, incy, accumulate);
        return;
    }
    if (B.depth_stride == 1 && incx == 1) {  // columns of B are contiguous along k: dot products
        for (std::int64_t n = n0; n < n1; ++n) {
            const float* col = B.data + n * B.outer_stride;
            __m256 s0 = _mm256_setzero_ps(), s1 = s0;
            std::int64_t k = 0;
            for (; k + 16 <= K; k += 16) {
                s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + k), _mm256_loadu_ps(col + k), s0);
                s1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + k + 8), _mm256_loadu_ps(col + k + 8), s1);
            }
            float s = hsum_avx2(_mm256_add_ps(s0, s1));
            for (; k < K; ++k) s += x[k] * col[k];
            float& d = y[n * incy];
            d = (accumulate ? d : 0.f) + s;
        }
        return;
    }
    gemv_portable(n0, n1, K, x, incx, B, y, incy, accumulate);
}
// y[n] (= or +=) sum_k x[k*incx] * B(n, k) for the columns of panels [j0, j0 + P) of a B packed for
// the GEMM, read from its grouped copy (packed_b::grouped(4): per depth the P panel rows side by
// side, one forward stream): 2P ymm accumulators down all K. A row-major B's rows read four at a
// time (gemv_block_rows_avx2) ran at ~50 GB/s from L3 where panels ran at ~65 (784x512 + 512x512 on
// one AMD EPYC core: 53 vs 43 us). Per column the sum runs k = 0..K-1 with one fused multiply-add
// each: the bits of gemv_axpy_avx2. Padding columns are not stored.
template <int P>
[[gnu::target("avx2,fma")]] inline void gemv_grouped_avx2(const packed_b<float>& B, const float* group, std::int64_t j0,
                                                           const float* x, std::int64_t incx, float* y, bool accumulate) {
    static_assert(nr == 16, "two ymm vectors per panel row");
    __m256 acc[2 * P];
#pragma GCC unroll 8
    for (int v = 0; v < 2 * P; ++v) acc[v] = _mm256_setzero_ps();
    const std::int64_t K = B.depth();
    const float* r = group;
    for (std::int64_t k = 0; k < K; ++k, r += P * nr) {
        const __m256 xv = _mm256_set1_ps(x[k * incx]);
#pragma GCC unroll 8
        for (int v = 0; v < 2 * P; ++v) acc[v] = _mm256_fmadd_ps(xv, _mm256_load_ps(r + 8 * v), acc[v]);
    }
    alignas(32) float out[16 * P];
    for (int v = 0; v < 2 * P; ++v) _mm256_store_ps(out + 8 * v, acc[v]);
    gemv_store(y + j0 * nr, 1, out, static_cast<int>(std::min<std::int64_t>(nr * P, B.cols() - j0 * nr)), accumulate);
}

// The AVX-512 sibling over packed_b::grouped(8): P <= 8 panels, one zmm accumulator each (eight
// independent fused multiply-add chains per depth: each column's sum still runs k = 0..K-1 in order,
// the bits of gemv_axpy_avx512), every load a whole aligned 64-byte line of one stream. The
// row-grouped sweep before it read rows of N floats straight from B: at N = 120 (LeNet's fc1) half
// the rows start mid-line and every load of those crossed two lines.
template <int P>
[[gnu::target("avx512f")]] inline void gemv_grouped_avx512(const packed_b<float>& B, const float* group, std::int64_t j0,
                                                             const float* x, std::int64_t incx, float* y, bool accumulate) {
    static_assert(nr == 16, "one zmm vector per panel row");
    __m512 acc[P];
#pragma GCC unroll 8
    for (int q = 0; q < P; ++q) acc[q] = _mm512_setzero_ps();
    const std::int64_t K = B.depth();
    const float* r = group;
    for (std::int64_t k = 0; k < K; ++k, r += P * nr) {
        const __m512 xv = _mm512_set1_ps(x[k * incx]);
#pragma GCC unroll 8
        for (int q = 0; q < P; ++q) acc[q] = _mm512_fmadd_ps(xv, _mm512_load_ps(r + q * nr), acc[q]);
    }
    alignas(64) float out[16 * P];
#pragma GCC unroll 8
    for (int q = 0; q < P; ++q) _mm512_store_ps(out + 16 * q, acc[q]);
    gemv_store(y + j0 * nr, 1, out, static_cast<int>(std::min<std::int64_t>(nr * P, B.cols() - j0 * nr)), accumulate);
}

// out[n] = sum over k in [k0, k1) of x[k*incx] * B(n, k) for n < N (B rows contiguous along n), four
// rows at a time across all columns: out's N floats stay in L1 (loaded and stored once per four rows)
// while B streams in order, where the column sweeps above read each row in 64-column pieces a row
// apart. Each column's sum runs k0..k1-1 with one fused multiply-add each, as one sweep (the
// columns past the last whole vector through the scalar fused multiply-add: the same rounding).
[[gnu::target("avx2,fma")]] inline void gemv_block_rows_avx2(std::int64_t k0, std::int64_t k1, std::int64_t N,
                                                              const float* x, std::int64_t incx,
                                                              const matrix_source<float>& B, float* out) {
    const std::int64_t N8 = N / 8 * 8, ld = B.depth_stride;
    std::fill(out, out + N, 0.f);
    std::int64_t k = k0;
    for (; k + 4 <= k1; k += 4) {
        const float* r0 = B.data + k * ld;
        const float *r1 = r0 + ld, *r2 = r1 + ld, *r3 = r2 + ld;
        const float x0 = x[k * incx], x1 = x[(k + 1) * incx], x2 = x[(k + 2) * incx], x3 = x[(k + 3) * incx];
        const __m256 v0 = _mm256_set1_ps(x0), v1 = _mm256_set1_ps(x1), v2 = _mm256_set1_ps(x2), v3 = _mm256_set1_ps(x3);
        for (std::int64_t n = 0; n < N8; n += 8) {
            __m256 a = _mm256_loadu_ps(out + n);
            a = _mm256_fmadd_ps(v0, _mm256_loadu_ps(r0 + n), a);
            a = _mm256_fmadd_ps(v1, _mm256_loadu_ps(r1 + n), a);
            a = _mm256_fmadd_ps(v2, _mm256_loadu_ps(r2 + n), a);
            a = _mm256_fmadd_ps(v3, _mm256_loadu_ps(r3 + n), a);
            _mm256_storeu_ps(out + n, a);
        }
        for (std::int64_t n = N8; n < N; ++n)
            out[n] = __builtin_fmaf(x3, r3[n], __builtin_fmaf(x2, r2[n], __builtin_fmaf(x1, r1[n], __builtin_fmaf(x0, r0[n], out[n]))));
    }
    for (; k < k1; ++k) {
        const float* r = B.data + k * ld;
        const float xk = x[k * incx];
        const __m256 v = _mm256_set1_ps(xk);
        for (std::int64_t n = 0; n < N8; n += 8)
            _mm256_storeu_ps(out + n, _mm256_fmadd_ps(v, _mm256_loadu_ps(r + n), _mm256_loadu_ps(out + n)));
        for (std::int64_t n = N8; n < N; ++n) out[n] = __builtin_fmaf(xk, r[n], out[n]);
    }
}

// Columns [nb, nb + w) of y = x B for B rows contiguous along n, w <= 16V: V zmm accumulators (the
// last one masked), one sweep down all K rows. Per column the sum runs k = 0..K-1 with one fused
// multiply-add each, as in gemv_avx2 (the two give the same bits).
// Part: a part of a longer sweep (incy 1): start from y's values (next_part) or from zero
// (first_part), and store the accumulators as they are, so the sums run on exactly as in one sweep.
enum class sweep { whole, first_part, next_part };
template <int V, sweep Part = sweep::whole>
[[gnu::target("avx512f")]] inline void gemv_axpy_avx512(std::int64_t nb, int w, std::int64_t K, const float* x,
                                                         std::int64_t incx, const matrix_source<float>& B, float* y,
                                                         std::int64_t incy, bool accumulate) {
    __m512 acc[V];
    const auto last = static_cast<__mmask16>((1u << (w - 16 * (V - 1))) - 1);  // 1..16 columns
    if constexpr (Part == sweep::next_part) {
#pragma GCC unroll 16
        for (int v = 0; v < V - 1; ++v) acc[v] = _mm512_loadu_ps(y + nb + 16 * v);
        acc[V - 1] = _mm512_maskz_loadu_ps(last, y + nb + 16 * (V - 1));
    } else {
#pragma GCC unroll 16
        for (int v = 0; v < V; ++v) acc[v] = _mm512_setzero_ps();
    }
    const float* row = B.data + nb;
    for (std::int64_t k = 0; k < K; ++k, row += B.depth_stride) {
        const __m512 xv = _mm512_set1_ps(x[k * incx]);
#pragma GCC unroll 16
        for (int v = 0; v < V - 1; ++v) acc[v] = _mm512_fmadd_ps(xv, _mm512_loadu_ps(row + 16 * v), acc[v]);
        acc[V - 1] = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(last, row + 16 * (V - 1)), acc[V - 1]);
    }
    if constexpr (Part != sweep::whole) {
#pragma GCC unroll 16
        for (int v = 0; v < V - 1; ++v) _mm512_storeu_ps(y + nb + 16 * v, acc[v]);
        _mm512_mask_storeu_ps(y + nb + 16 * (V - 1), last, acc[V - 1]);
        return;
    }
    if (incy == 1) {  // y (= or +=) acc in place; 0 + acc as in gemv_store (-0 sums store +0)
        float* d = y + nb;
#pragma GCC unroll 16
        for (int v = 0; v < V - 1; ++v)
            _mm512_storeu_ps(d + 16 * v, _mm512_add_ps(accumulate ? _mm512_loadu_ps(d + 16 * v) : _mm512_setzero_ps(),
                                                        acc[v]));
        const __m512 prev = accumulate ? _mm512_maskz_loadu_ps(last, d + 16 * (V - 1)) : _mm512_setzero_ps();
        _mm512_mask_storeu_ps(d + 16 * (V - 1), last, _mm512_add_ps(prev, acc[V - 1]));
        return;
    }
    alignas(64) float out[16 * V];
    for (int v = 0; v < V; ++v) _mm512_store_ps(out + 16 * v, acc[v]);
    gemv_store(y + nb * incy, incy, out, w, accumulate);
}

// The sum of v's 16 lanes by lane permutes (GCC 12 warns about the undefined lanes behind
// _mm512_reduce_add_ps and the unmasked shuffles; the zero-masked forms have none).
[[gnu::target("avx512f")]] inline float hsum_avx512(__m512 v) {
    const __m512i halves = _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
    const __m512i quarters = _mm512_setr_epi32(4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3);
    const __m512i pairs = _mm512_setr_epi32(2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1);
    const __m512i lanes = _mm512_setr_epi32(1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0);
    v = _mm512_add_ps(v, _mm512_maskz_permutexvar_ps(0xFFFF, halves, v));
    v = _mm512_add_ps(v, _mm512_maskz_permutexvar_ps(0xFFFF, quarters, v));
    v = _mm512_add_ps(v, _mm512_maskz_permutexvar_ps(0xFFFF, pairs, v));
    v = _mm512_add_ps(v, _mm512_maskz_permutexvar_ps(0xFFFF, lanes, v));
    return _mm512_cvtss_f32(v);
}

// y[n] (= or +=) sum_k x[k*incx] * B(n, k) for n in [n0, n1) with AVX-512F.
[[gnu::target("avx512f")]] inline void gemv_avx512(std::int64_t n0, std::int64_t n1, std::int64_t K, const float* x,
                                                     std::int64_t incx, const matrix_source<float>& B, float* y,
                                                     std::int64_t incy, bool accumulate) {
    if (B.outer_stride == 1) {
        // Blocks of up to 256 columns (16 accumulators): each of the K rows is read as one run of
        // up to 1 KiB, which the hardware prefetchers follow well (the product is bound by reading B).
        static constexpr gemv_block_fn by_vectors[16] = {
            gemv_axpy_avx512<1>,  gemv_axpy_avx512<2>,  gemv_axpy_avx512<3>,  gemv_axpy_avx512<4>,
            gemv_axpy_avx512<5>,  gemv_axpy_avx512<6>,  gemv_axpy_avx512<7>,  gemv_axpy_avx512<8>,
            gemv_axpy_avx512<9>,  gemv_axpy_avx512<10>, gemv_axpy_avx512<11>, gemv_axpy_avx512<12>,
            gemv_axpy_avx512<13>, gemv_axpy_avx512<14>, gemv_axpy_avx512<15>, gemv_axpy_avx512<16>};
        gemv_axpy_blocks(n0, n1, 16, by_vectors, K, x, incx, B, y, incy, accumulate);
        return;
    }
    if (B.depth_stride == 1 && incx == 1) {  // columns of B are contiguous along k: four dot products at a time
        const __mmask16 tail = static_cast<__mmask16>((1u << (K % 16)) - 1);
        const std::int64_t kv = K - K % 16;
        std::int64_t n = n0;
        for (; n + 4 <= n1; n += 4) {
            const float* c0 = B.data + n * B.outer_stride;
            const float* c1 = c0 + B.outer_stride;
            const float* c2 = c1 + B.outer_stride;
            const float* c3 = c2 + B.outer_stride;
            __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
            for (std::int64_t k = 0; k < kv; k += 16) {
                const __m512 xv = _mm512_loadu_ps(x + k);
                s0 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(c0 + k), s0);
                s1 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(c1 + k), s1);
                s2 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(c2 + k), s2);
                s3 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(c3 + k), s3);
            }
            if (tail) {
                const __m512 xv = _mm512_maskz_loadu_ps(tail, x + kv);
                s0 = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(tail, c0 + kv), s0);
                s1 = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(tail, c1 + kv), s1);
                s2 = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(tail, c2 + kv), s2);
                s3 = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(tail, c3 + kv), s3);
            }
            const float acc[4] = {hsum_avx512(s0), hsum_avx512(s1), hsum_avx512(s2), hsum_avx512(s3)};
            gemv_store(y + n * incy, incy, acc, 4, accumulate);
        }
        for (; n < n1; ++n) {
            const float* c0 = B.data + n * B.outer_stride;
            __m512 s0 = _mm512_setzero_ps();
            for (std::int64_t k = 0; k < kv; k += 16)
                s0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + k), _mm512_loadu_ps(c0 + k), s0);
            if (tail) s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, x + kv), _mm512_maskz_loadu_ps(tail, c0 + kv), s0);
            const float acc = hsum_avx512(s0);
            gemv_store(y + n * incy, incy, &acc, 1, accumulate);
        }
        return;
    }
    gemv_avx2(n0, n1, K, x, incx, B, y, incy, accumulate);
}

// y[n] (= or +=) ((part[0][n] + part[1][n]) + ...) + part[blocks-1][n], part[b] = part + b*N.
[[gnu::target("avx512f")]] inline void gemv_sum_blocks_avx512(int blocks, std::int64_t N, const float* part, float* y,
                                                             bool accumulate) {
    for (std::int64_t n = 0; n < N; n += 16) {
        const auto m = static_cast<__mmask16>(N - n >= 16 ? 0xFFFF : (1u << (N - n)) - 1);
        __m512 s = _mm512_maskz_loadu_ps(m, part + n);
        for (int b = 1; b < blocks; ++b) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(m, part + b * N + n));
        const __m512 prev = accumulate ? _mm512_maskz_loadu_ps(m, y + n) : _mm512_setzero_ps();
        _mm512_mask_storeu_ps(y + n, m, _mm512_add_ps(prev, s));
    }
}

// The AVX2 sibling: 8 columns at a time in one pass (the scalar loop it replaces summed the blocks
// into part[0] one block per pass), the last N % 8 columns scalar; the same sums in the same order.
[[gnu::target("avx2")]] inline void gemv_sum_blocks_avx2(int blocks, std::int64_t N, const float* part, float* y,
                                                        bool accumulate) {
    std::int64_t n = 0;
    for (; n + 8 <= N; n += 8) {
        __m256 s = _mm256_loadu_ps(part + n);
        for (int b = 1; b < blocks; ++b) s = _mm256_add_ps(s, _mm256_loadu_ps(part + b * N + n));
        const __m256 prev = accumulate ? _mm256_loadu_ps(y + n) : _mm256_setzero_ps();
        _mm256_storeu_ps(y + n, _mm256_add_ps(prev, s));
    }
    for (; n < N; ++n) {
        float s = part[n];
        for (int b = 1; b < blocks; ++b) s += part[b * N + n];
        y[n] = (accumulate ? y[n] : 0.f) + s;
    }
}

/// gemv_axpy_avx512<V, Part> for V = 1..16 at index V - 1.
template <sweep Part, int... I>
constexpr std::array<gemv_block_fn, sizeof...(I)> gemv_part_table(std::integer_sequence<int, I...>) {
    return {gemv_axpy_avx512<I + 1, Part>...};
}

/// Rows of B gemv_block_grouped_avx512 reads across all columns before moving on.
inline constexpr std::int64_t kGemvRowGroup = 32;

// out[n] = sum over k in [k0, k1) of x[k*incx] * B(n, k) for n < N (B rows contiguous along n), in
// groups of kGemvRowGroup rows: each group's rows are read whole (every 256-column block in turn,
// the accumulators stored and resumed between groups) so B streams in order, where sweeping one
// column block down all the rows reads each row in pieces a row apart (measured: 2.7 MB from L3 on
// one core, 62 us in order, 74 us in half-row sweeps). Each column's sum runs k0..k1-1 with one
// fused multiply-add each, as one sweep.
[[gnu::target("avx512f")]] inline void gemv_block_grouped_avx512(std::int64_t k0, std::int64_t k1, std::int64_t N,
                                                                  const float* x, std::int64_t incx,
                                                                  const matrix_source<float>& B, float* out) {
    static constexpr auto first = gemv_part_table<sweep::first_part>(std::make_integer_sequence<int, 16>{});
    static constexpr auto next = gemv_part_table<sweep::next_part>(std::make_integer_sequence<int, 16>{});
    for (std::int64_t g0 = k0; g0 < k1; g0 += kGemvRowGroup) {
        const std::int64_t rows = std::min(kGemvRowGroup, k1 - g0);
        const matrix_source<float> group{B.data + g0 * B.depth_stride, B.outer_stride, B.depth_stride, B.outer_extent};
        gemv_axpy_blocks(0, N, 16, g0 == k0 ? first : next, rows, x + g0 * incx, incx, group, out, 1, false);
    }
}

}  // namespace graft::ops::gemm::detail
#endif  // GRAFT_X86_DISPATCH
