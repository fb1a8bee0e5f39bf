// graft/ops/arch/x86/gemm_kernels.hpp — the x86 micro-kernels of graft's GEMM: AVX2 + FMA (a 6x16
// tile in 12 ymm accumulators, A packed or read in place) and AVX-512F (12x16 or 12x32 in 24 zmm),
// plus the AVX-512 transpose that packs 6-row A panels. Chosen at run time (detail/gemm_kernels.hpp);
// empty where GRAFT_X86_DISPATCH is not set. Internal: include graft/ops/gemm.hpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "graft/ops/arch/x86/cpu.hpp"
#include "graft/ops/detail/gemm_tile.hpp"

#ifdef GRAFT_X86_DISPATCH
namespace graft::ops::gemm::detail {

// The C tile's rows into L1 before the sweep over k: a product whose C is not in cache (a GEMM
// that adds onto C, as the LSTM's recurrent step adds h * w_h onto the gates its input product
// wrote a whole sequence earlier; the second kc block onwards of a deep product) otherwise stalls
// on each row at the store. [3200,128] x [128,512] added onto C on one AMD EPYC core: 8.2 -> 5.9 ms.
// always_inline: as a plain inline function GCC 12 judged it free of side effects (prefetches only)
// and dropped every call, so no kernel prefetched (same product, C out of cache, one Emerald Rapids
// core under AVX2: 6.07-6.14 ms without the prefetches, 5.16-5.18 with).
[[gnu::target("avx2,fma"), gnu::always_inline]] inline void prefetch_c_avx2(const float* c, std::int64_t rs,
                                                                         std::int64_t cs, int m) {
    if (cs != 1) return;
    for (int r = 0; r < m; ++r) {
        _mm_prefetch(reinterpret_cast<const char*>(c + r * rs), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(c + r * rs + nr - 1), _MM_HINT_T0);  // a row across two lines
    }
}

/// The activations of a fused bias and activation on 8 lanes, the same values as act_avx512 (below)
/// and BiasAdd's row pass (ops/arch/x86/bias_add.hpp), which runs these.
template <int Act>
[[gnu::target("avx2"), gnu::always_inline]] inline __m256 act_avx2(__m256 v, __m256 alpha) {
    const __m256 zero = _mm256_setzero_ps();
    if constexpr (Act == 1 || Act == 2) {
        __m256 r = _mm256_max_ps(v, zero);
        if constexpr (Act == 2) r = _mm256_min_ps(r, _mm256_set1_ps(6.f));
        return _mm256_blendv_ps(r, v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    } else if constexpr (Act == 3) {
        return _mm256_blendv_ps(_mm256_mul_ps(v, alpha), v, _mm256_cmp_ps(v, zero, _CMP_GT_OQ));
    } else {
        return v;
    }
}
[[gnu::target("avx2"), gnu::always_inline]] inline __m256 act_avx2(__m256 v, int act, __m256 alpha) {
    switch (act) {
        case 1: return act_avx2<1>(v, alpha);
        case 2: return act_avx2<2>(v, alpha);
        case 3: return act_avx2<3>(v, alpha);
        default: return v;
    }
}

/// `e`: the tile's bias (from its first column) and activation, for whole tiles (n == 16) of a C
/// with contiguous columns only.
[[gnu::target("avx2,fma")]] inline void store_avx2(float* c, std::int64_t rs, std::int64_t cs, int m, int n,
                                                    bool accumulate, const __m256 (&acc)[mr][2],
                                                    const tile_bias_act* e = nullptr) {
    if (n == nr && cs == 1) {
        if (e && e->descend) {  // c - g * alpha, as apply_gradient_descent_avx2
            const __m256 step = _mm256_set1_ps(e->alpha);
            for (int r = 0; r < m; ++r) {
                float* cr = c + r * rs;
                __m256 g0 = _mm256_mul_ps(acc[r][0], step), g1 = _mm256_mul_ps(acc[r][1], step);
                // each product rounded on its own, as there: GCC would contract mul and sub into an FMA
                asm("" : "+x"(g0), "+x"(g1));
                _mm256_storeu_ps(cr, _mm256_sub_ps(_mm256_loadu_ps(cr), g0));
                _mm256_storeu_ps(cr + 8, _mm256_sub_ps(_mm256_loadu_ps(cr + 8), g1));
            }
            return;
        }
        __m256 b0 = _mm256_setzero_ps(), b1 = b0, alpha = b0;
        if (e) {
            b0 = _mm256_loadu_ps(e->bias);
            b1 = _mm256_loadu_ps(e->bias + 8);
            alpha = _mm256_set1_ps(e->alpha);
        }
        for (int r = 0; r < m; ++r) {
            float* cr = c + r * rs;
            __m256 lo = acc[r][0], hi = acc[r][1];
            if (accumulate) {
                lo = _mm256_add_ps(lo, _mm256_loadu_ps(cr));
                hi = _mm256_add_ps(hi, _mm256_loadu_ps(cr + 8));
            }
            if (e) {
                lo = act_avx2(_mm256_add_ps(lo, b0), e->act, alpha);
                hi = act_avx2(_mm256_add_ps(hi, b1), e->act, alpha);
            }
            _mm256_storeu_ps(cr, lo);
            _mm256_storeu_ps(cr + 8, hi);
        }
        return;
    }
    alignas(64) float tile[mr * nr];
    for (int r = 0; r < mr; ++r) {
        _mm256_store_ps(tile + r * nr, acc[r][0]);
        _mm256_store_ps(tile + r * nr + 8, acc[r][1]);
    }
    store_tile(tile, c, rs, cs, m, n, accumulate);
}

/// A tile's accumulators (rows [0, R), R <= 6) stored as store_avx2 stores a whole tile's.
template <int R>
[[gnu::target("avx2,fma")]] inline void store_rows_avx2(float* c, std::int64_t rs, std::int64_t cs, int m, int n,
                                                         bool accumulate, const __m256 (&lo)[R], const __m256 (&hi)[R],
                                                         const tile_bias_act* e = nullptr) {
    __m256 acc[mr][2];
#pragma GCC unroll 6
    for (int r = 0; r < mr; ++r) {
        acc[r][0] = r < R ? lo[r] : _mm256_setzero_ps();
        acc[r][1] = r < R ? hi[r] : _mm256_setzero_ps();
    }
    store_avx2(c, rs, cs, m, n, accumulate, acc, e);
}

/// f(std::integral_constant<int, m>{}) for a tile of 1 <= m < 6 rows, else f(...<int, mr>{}).
template <class F>
void with_tile_rows(int m, F&& f) {
    switch (m) {
        case 1: f(std::integral_constant<int, 1>{}); return;
        case 2: f(std::integral_constant<int, 2>{}); return;
        case 3: f(std::integral_constant<int, 3>{}); return;
        case 4: f(std::integral_constant<int, 4>{}); return;
        case 5: f(std::integral_constant<int, 5>{}); return;
        default: f(std::integral_constant<int, mr>{});
    }
}

/// The AVX2 tile: R <= 6 rows of C (m <= R) by 16 columns in 2R ymm accumulators, A packed in
/// 6-row panels. R < 6 computes a product's last rows, where the whole tile computed six, as many
/// multiply-adds as a whole tile ([32,784] x [784,512]: 36 rows for 32). Each row gets the same
/// multiply-adds in the same order whatever R is, so the same bits.
template <int R>
[[gnu::target("avx2,fma")]] inline void kernel_avx2_rows(std::int64_t kc, const float* a, const float* b, float* c,
                                                          std::int64_t rs, std::int64_t cs, int m, int n,
                                                          bool accumulate, const tile_bias_act* e = nullptr) {
    static_assert(R >= 1 && R <= mr);
    prefetch_c_avx2(c, rs, cs, m);
    __m256 lo[R], hi[R];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) lo[r] = hi[r] = _mm256_setzero_ps();
#pragma GCC unroll 4
    for (std::int64_t k = 0; k < kc; ++k) {
        const __m256 b0 = _mm256_load_ps(b);
        const __m256 b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 6
        for (int r = 0; r < R; ++r) {
            const __m256 av = _mm256_broadcast_ss(a + r);
            lo[r] = _mm256_fmadd_ps(av, b0, lo[r]);
            hi[r] = _mm256_fmadd_ps(av, b1, hi[r]);
        }
        a += mr;
        b += nr;
    }
    store_rows_avx2<R>(c, rs, cs, m, n, accumulate, lo, hi, e);
}

/// The AVX2 micro-kernel the driver calls: the tile of min(m, 6) rows.
[[gnu::target("avx2,fma")]] inline void kernel_avx2_any(std::int64_t kc, const float* a, const float* b, float* c,
                                                         std::int64_t rs, std::int64_t cs, int m, int n,
                                                         bool accumulate) {
    with_tile_rows(m, [&](auto rows) { kernel_avx2_rows<rows()>(kc, a, b, c, rs, cs, m, n, accumulate); });
}
/// The same with a bias and activation applied as it stores (a whole tile, n == 16, cs == 1).
[[gnu::target("avx2,fma")]] inline void kernel_avx2_any_fused(std::int64_t kc, const float* a, const float* b,
                                                               float* c, std::int64_t rs, std::int64_t cs, int m,
                                                               int n, bool accumulate, const tile_bias_act* e) {
    with_tile_rows(m, [&](auto rows) { kernel_avx2_rows<rows()>(kc, a, b, c, rs, cs, m, n, accumulate, e); });
}

/// The same tile with A read in place: row r of A at depth k is rows[r][off[k]] (UseTable: an im2col
/// matrix over a convolution input) or rows[r][k * step] (a strided matrix) — no packing. The rows
/// past R are not read.
template <bool UseTable, int R>
[[gnu::target("avx2,fma")]] inline void kernel_avx2_indirect_rows(std::int64_t kc, const float* const* rows,
                                                                   const std::int64_t* off, std::int64_t step,
                                                                   const float* b, float* c, std::int64_t rs,
                                                                   std::int64_t cs, int m, int n, bool accumulate) {
    static_assert(R >= 1 && R <= mr);
    const float* p[R];
    __m256 lo[R], hi[R];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
        p[r] = rows[r];
        lo[r] = hi[r] = _mm256_setzero_ps();
    }
    prefetch_c_avx2(c, rs, cs, m);
    std::int64_t o = 0;
#pragma GCC unroll 4
    for (std::int64_t k = 0; k < kc; ++k) {
        if constexpr (UseTable) o = off[k];
        const __m256 b0 = _mm256_load_ps(b);
        const __m256 b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 6
        for (int r = 0; r < R; ++r) {
            const __m256 av = _mm256_broadcast_ss(p[r] + o);
            lo[r] = _mm256_fmadd_ps(av, b0, lo[r]);
            hi[r] = _mm256_fmadd_ps(av, b1, hi[r]);
        }
        b += nr;
        if constexpr (!UseTable) o += step;
    }
    store_rows_avx2<R>(c, rs, cs, m, n, accumulate, lo, hi);
}
/// The indirect tile of min(m, 6) rows.
template <bool UseTable>
[[gnu::target("avx2,fma")]] inline void kernel_avx2_indirect_any(std::int64_t kc, const float* const* rows,
                                                                  const std::int64_t* off, std::int64_t step,
                                                                  const float* b, float* c, std::int64_t rs,
                                                                  std::int64_t cs, int m, int n, bool accumulate) {
    with_tile_rows(m, [&](auto tile) {
        kernel_avx2_indirect_rows<UseTable, tile()>(kc, rows, off, step, b, c, rs, cs, m, n, accumulate);
    });
}

/// r[i] = (r0[i], r1[i], ..., r7[i]): the 8x8 transpose of the packing routines below.
[[gnu::target("avx2,fma")]] inline void transpose8_avx2(__m256 (&r)[8]) {
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    // u0: elements 0 (low lane) and 4 (high lane) of rows 0-3; u1: 1 and 5; u2: 2 and 6; u3: 3 and 7
    // (u4-u7: of rows 4-7)
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20), r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20), r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_permute2f128_ps(u0, u4, 0x31), r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[6] = _mm256_permute2f128_ps(u2, u6, 0x31), r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/// One nr-column B panel of a B whose columns lie contiguous along k (B(k, j) = cols[j][k]: a
/// transposed weight matrix, as every backward product dX = dY * W^T reads W), depths [0, kc), as
/// dst[k*nr + j], by 8x8 register transposes: the scalar gather it replaces, 16 strided loads per
/// depth, took a quarter of [128,512] x [512,512]^T's time on one AMD EPYC core (1380 vs 1047 us
/// for OpenBLAS). A copy: the same panel, so the same bits.
/// `from`: the columns' first depth (cols[j] + from), so a caller can hand over a tail.
[[gnu::target("avx2,fma")]] inline void pack_b_panel_cols_avx2(const float* const* cols, std::int64_t kc, float* dst,
                                                                std::int64_t from = 0) {
    std::int64_t k = 0;
    for (; k + 8 <= kc; k += 8) {
        for (int h = 0; h < 2; ++h) {  // columns 8h .. 8h+7
            __m256 r[8];
            for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(cols[8 * h + i] + from + k);
            transpose8_avx2(r);
            for (int i = 0; i < 8; ++i) _mm256_store_ps(dst + (k + i) * nr + 8 * h, r[i]);
        }
    }
    for (; k < kc; ++k)
        for (int j = 0; j < nr; ++j) dst[k * nr + j] = cols[j][from + k];
}

/// dst[k*6 + r] = rows[r][k] for k < kc, r < 6 (a whole 6-row A panel, rows contiguous along k):
/// per 8 depths six row loads, an 8x8 transpose in registers (two rows of zeros) and eight 8-wide
/// stores 6 floats apart, each overwriting the previous one's two spare lanes (the last masked),
/// where the scalar gather issues 48 loads and 48 stores. A multiplied by more than 256 columns of
/// B is packed (the MLP's layers at batch 128): [128,784] in 17 us instead of 23-32 on one AMD EPYC
/// core (the product: ~1.3 ms).
[[gnu::target("avx2,fma")]] inline void pack_a6_avx2(const float* const* rows, std::int64_t kc, float* dst) {
    const __m256i first6 = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0);
    std::int64_t k = 0;
    for (; k + 8 <= kc; k += 8, dst += 48) {
        __m256 r[8];
#pragma GCC unroll 6
        for (int i = 0; i < 6; ++i) r[i] = _mm256_loadu_ps(rows[i] + k);  // (-O2 left it rolled, via the stack)
        r[6] = r[7] = _mm256_setzero_ps();
        transpose8_avx2(r);
#pragma GCC unroll 7
        for (int i = 0; i < 7; ++i) _mm256_storeu_ps(dst + 6 * i, r[i]);
        _mm256_maskstore_ps(dst + 42, first6, r[7]);
    }
    for (; k < kc; ++k, dst += 6)
        for (int i = 0; i < 6; ++i) dst[i] = rows[i][k];
}

// AVX-512F: 12 rows of A (two consecutive 6-row panels) against one or, Wide, two 16-column B
// panels, one zmm accumulator per row and panel (24 for 12x32). The packed layouts are the AVX2
// kernel's; rows past `m` (zero-filled by the packing, or repeats of a valid row for in-place A)
// are computed and not stored.

/// Where the AVX-512 kernels read A: two packed 6-row panels (the second follows the first).
/// at(r, o) is row r at the current depth; offset() gives `o` once per depth; next() steps on.
/// Split: the tile's rows in the first panel, from `a` on (a 6-row panel's last four rows where
/// `a` points two rows into it: see serial()'s 8 + 8 tail); the rest from the second panel's first.
template <int Split = mr>
struct packed_pair_at {
    const float* a;
    const float* a2;
    [[nodiscard]] std::int64_t offset() const { return 0; }
    [[nodiscard]] float at(int r, std::int64_t) const { return r < Split ? a[r] : a2[r - Split]; }
    void next() {
        a += mr;
        a2 += mr;
    }
    void reload() {}
};
using packed_pair = packed_pair_at<mr>;
/// Or 12 rows of an im2col matrix over a convolution input, in place: row r at depth k is
/// rows[r][off[k]]. (A strided matrix is packed when the AVX-512 kernels run: see serial().)
struct in_place_rows {
    const float* const* rows;
    const std::int64_t* off;
    [[nodiscard]] std::int64_t offset() const { return *off; }
    [[nodiscard]] float at(int r, std::int64_t at_o) const { return rows[r][at_o]; }
    void next() { ++off; }
    /// Makes the compiler read the twelve row pointers from memory at the next depth: hoisted
    /// out of the 12x16 loop they do not fit the general registers and GCC parks them in vector
    /// registers (measured 10% slower on LeNet's conv2; the 12x32 loop is faster without this).
    void reload() { asm("" : "+r"(rows)); }
};

/// Or up to 12 rows of a row-major A in place (row r at depth k is p0[r * ld + k], depths
/// contiguous): four base pointers (rows 0, 3, 6, 9) and the stride address all twelve as [p + ld*4]
/// and [p + ld*8] with the depth as a shared index, five general registers where a table of row
/// pointers needs twelve. Built for `rows` rows, the tile's R: no pointer past them is formed or read.
struct strided_rows {
    const float *p0, *p3, *p6, *p9;  // four named pointers: as an array GCC kept them on the stack
    std::int64_t ld;
    strided_rows(const float* p, std::int64_t ld_, int rows)
        : p0(p), p3(rows > 3 ? p + 3 * ld_ : p), p6(rows > 6 ? p + 6 * ld_ : p), p9(rows > 9 ? p + 9 * ld_ : p),
          ld(ld_) {}
    [[nodiscard]] std::int64_t offset() const { return 0; }
    [[nodiscard]] float at(int r, std::int64_t) const {
        const float* q = r < 3 ? p0 : r < 6 ? p3 : r < 9 ? p6 : p9;
        return q[(r % 3) * ld];
    }
    void next() { ++p0, ++p3, ++p6, ++p9; }
    void reload() {}
};

/// The activations of a fused bias and activation (tile_bias_act::act; ops::bias_activation) on 16
/// lanes: Relu and Relu6 keep a NaN (max(v, 0) alone gives the second operand for NaN and -0; -0
/// becomes +0, as Eigen's vector path), LeakyRelu is v > 0 ? v : alpha v. BiasAdd's fused row pass
/// (ops/arch/x86/bias_add.hpp) runs these too, so both give the same bits.
template <int Act>
[[gnu::target("avx512f"), gnu::always_inline]] inline __m512 act_avx512(__m512 v, __m512 alpha) {
    const __m512 zero = _mm512_setzero_ps();
    if constexpr (Act == 1 || Act == 2) {
        // (the zero-masked forms: GCC 12 warns about the undefined lanes behind the plain ones)
        __m512 r = _mm512_maskz_max_ps(0xFFFF, v, zero);
        if constexpr (Act == 2) r = _mm512_maskz_min_ps(0xFFFF, r, _mm512_set1_ps(6.f));
        return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v);
    } else if constexpr (Act == 3) {
        return _mm512_mask_mov_ps(_mm512_mul_ps(v, alpha), _mm512_cmp_ps_mask(v, zero, _CMP_GT_OQ), v);
    } else {
        return v;
    }
}
[[gnu::target("avx512f"), gnu::always_inline]] inline __m512 act_avx512(__m512 v, int act, __m512 alpha) {
    switch (act) {
        case 1: return act_avx512<1>(v, alpha);
        case 2: return act_avx512<2>(v, alpha);
        case 3: return act_avx512<3>(v, alpha);
        default: return v;
    }
}

/// prefetch_c_avx2's rows for the AVX-512 tiles, W = 16 or 32 columns: each row's first and last
/// line (and, 32 wide, its middle one). [3200,128] x [128,512] added onto a C out of cache on one
/// Emerald Rapids core: 3.15-3.27 -> 2.88 ms.
template <int W>
[[gnu::target("avx512f"), gnu::always_inline]] inline void prefetch_c_avx512(const float* c, std::int64_t rs,
                                                                            std::int64_t cs, int m) {
    if (cs != 1) return;
    for (int r = 0; r < m; ++r) {
        _mm_prefetch(reinterpret_cast<const char*>(c + r * rs), _MM_HINT_T0);
        if constexpr (W > nr) _mm_prefetch(reinterpret_cast<const char*>(c + r * rs + nr), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(c + r * rs + W - 1), _MM_HINT_T0);
    }
}

/// Stores rows [0, m) and columns [0, n) of a tile of R <= 12 rows x 16 (lo) or, Wide, 32 (lo | hi)
/// columns. Inlined, each row by constant index in a fully unrolled loop, so the accumulators stay
/// registers (out of line, GCC copied them to the stack and back after every tile and zeroed that
/// copy before it: ~100 memory operations per tile; the benchmarks moved within their noise).
/// `e` (C's columns contiguous only): the tile's bias (from its first column) and activation,
/// applied to each stored value.
template <bool Wide, int R>
[[gnu::target("avx512f"), gnu::always_inline]] inline void store_avx512(float* c, std::int64_t rs, std::int64_t cs,
                                                                        int m, int n, bool accumulate,
                                                                        const __m512 (&lo)[2 * mr],
                                                                        const __m512 (&hi)[2 * mr],
                                                                        const tile_bias_act* e) {
    constexpr int w = Wide ? 2 * nr : nr;
    if (cs == 1) {
        const auto mask_lo = static_cast<__mmask16>(n >= nr ? 0xFFFFu : (1u << n) - 1u);
        const auto mask_hi = static_cast<__mmask16>(n >= 2 * nr ? 0xFFFFu : n <= nr ? 0u : (1u << (n - nr)) - 1u);
        if (e && e->descend) {  // c - g * alpha, as apply_gradient_descent_avx2
            const __m512 step = _mm512_set1_ps(e->alpha);
#pragma GCC unroll 12
            for (int r = 0; r < R; ++r) {
                if (r >= m) break;
                float* cr = c + r * rs;
                __m512 g = _mm512_mul_ps(lo[r], step);
                asm("" : "+v"(g));  // rounded on its own (no FMA contraction), as apply_gradient_descent_avx2
                _mm512_mask_storeu_ps(cr, mask_lo, _mm512_sub_ps(_mm512_maskz_loadu_ps(mask_lo, cr), g));
                if constexpr (Wide) {
                    __m512 u = _mm512_mul_ps(hi[r], step);
                    asm("" : "+v"(u));
                    _mm512_mask_storeu_ps(cr + nr, mask_hi, _mm512_sub_ps(_mm512_maskz_loadu_ps(mask_hi, cr + nr), u));
                }
            }
            return;
        }
        __m512 bias_lo = _mm512_setzero_ps(), bias_hi = bias_lo, alpha = bias_lo;
        if (e) {
            bias_lo = _mm512_maskz_loadu_ps(mask_lo, e->bias);
            if constexpr (Wide) bias_hi = _mm512_maskz_loadu_ps(mask_hi, e->bias + nr);
            alpha = _mm512_set1_ps(e->alpha);
        }
#pragma GCC unroll 12
        for (int r = 0; r < R; ++r) {
            if (r >= m) break;
            float* cr = c + r * rs;
            __m512 v = lo[r];
            if (accumulate) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask_lo, cr));
            if (e) v = act_avx512(_mm512_add_ps(v, bias_lo), e->act, alpha);
            _mm512_mask_storeu_ps(cr, mask_lo, v);
            if constexpr (Wide) {
                __m512 u = hi[r];
                if (accumulate) u = _mm512_add_ps(u, _mm512_maskz_loadu_ps(mask_hi, cr + nr));
                if (e) u = act_avx512(_mm512_add_ps(u, bias_hi), e->act, alpha);
                _mm512_mask_storeu_ps(cr + nr, mask_hi, u);
            }
        }
        return;
    }
    alignas(64) float tile[2 * mr * w];
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
        _mm512_store_ps(tile + r * w, lo[r]);
        if constexpr (Wide) _mm512_store_ps(tile + r * w + nr, hi[r]);
    }
    for (int r = 0; r < m; ++r) {
        for (int j = 0; j < n; ++j) {
            float& dst = c[r * rs + j * cs];
            dst = (accumulate ? dst : 0.f) + tile[r * w + j];
        }
    }
}

/// C[0:m, 0:n] (= or +=) A rows (m <= R) * [b panel | Wide: the next b panel] (n <= 16 or 32):
/// per depth one or two loads of B and R broadcasts of A for R or 2R FMAs. R is 12, or 8, 6, 4, 2
/// or 1 for a block's last rows (an LSTM's batch of 32 as 12 + 12 + 8 rows instead of 36; a batch
/// of 4 as 4 rows in zmm registers, not 6 in the AVX2 kernel's ymm).
template <bool Wide, int R = 2 * mr, class Rows>
[[gnu::target("avx512f")]] inline void kernel_avx512(std::int64_t kc, Rows a, const float* b, float* c,
                                                      std::int64_t rs, std::int64_t cs, int m, int n,
                                                      bool accumulate, const tile_bias_act* e = nullptr) {
    const float* bb = b + kc * nr;  // Wide: the second B panel follows the first
    prefetch_c_avx512<Wide ? 2 * nr : nr>(c, rs, cs, std::min(m, R));
    __m512 lo[2 * mr], hi[2 * mr];
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) lo[r] = hi[r] = _mm512_setzero_ps();
#pragma GCC unroll 2
    for (std::int64_t k = 0; k < kc; ++k) {
        const std::int64_t o = a.offset();
        const __m512 b0 = _mm512_load_ps(b);
        const __m512 b1 = Wide ? _mm512_load_ps(bb) : b0;
        static_assert(R >= 1 && R <= 2 * mr, "rows of the two A panels");
#pragma GCC unroll 12
        for (int r = 0; r < R; ++r) {
            const __m512 av = _mm512_set1_ps(a.at(r, o));
            lo[r] = _mm512_fmadd_ps(av, b0, lo[r]);
            if constexpr (Wide) hi[r] = _mm512_fmadd_ps(av, b1, hi[r]);
        }
        a.next();
        if constexpr (!Wide && R > 8) a.reload();  // 8 rows' pointers fit the general registers
        b += nr;
        if constexpr (Wide) bb += nr;
    }
    store_avx512<Wide, R>(c, rs, cs, m, n, accumulate, lo, hi, e);
}

/// r[i] = (r0[i], r1[i], ..., r15[i]): a 16x16 transpose in 64 shuffles (the AVX2 8x8 one takes 24
/// for a quarter of the elements).
// GCC 12's _mm512_undefined_ps (the unused pass-through of the unmasked shuffles) is a self-initialised
// variable, which -Wmaybe-uninitialized reports in every caller.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
[[gnu::target("avx512f")]] inline void transpose16_avx512(__m512 (&r)[16]) {
    __m512 t[16], u[16];
    for (int i = 0; i < 8; ++i) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    // u[4g + e], lane L: rows 4g .. 4g+3 at column 4L + e
    for (int g = 0; g < 4; ++g) {
        u[4 * g + 0] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
        u[4 * g + 1] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
        u[4 * g + 2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
        u[4 * g + 3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
    }
    for (int e = 0; e < 4; ++e) {
        const __m512 x0 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0x88);  // lanes 0, 2 of groups 0, 1
        const __m512 x1 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0xDD);  // lanes 1, 3
        const __m512 y0 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0x88);
        const __m512 y1 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0xDD);
        r[e] = _mm512_shuffle_f32x4(x0, y0, 0x88);
        r[4 + e] = _mm512_shuffle_f32x4(x1, y1, 0x88);
        r[8 + e] = _mm512_shuffle_f32x4(x0, y0, 0xDD);
        r[12 + e] = _mm512_shuffle_f32x4(x1, y1, 0xDD);
    }
}

/// pack_b_panel_cols_avx2 by 16x16 transposes: per 16 depths sixteen loads and stores, where the
/// 8x8 version issues twice as many and half again as many shuffles per element. A 320-deep block
/// of a [512,512]^T B on one AVX-512 Xeon core: 48 us, 53 with the 8x8 transposes (the strided
/// reads of sixteen columns bound both). The same panel.
[[gnu::target("avx512f")]] inline void pack_b_panel_cols_avx512(const float* const* cols, std::int64_t kc, float* dst) {
    static_assert(nr == 16, "one zmm per packed depth");
    std::int64_t k = 0;
    for (; k + 16 <= kc; k += 16) {
        __m512 r[16];
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(cols[i] + k);
        transpose16_avx512(r);
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i) _mm512_store_ps(dst + (k + i) * nr, r[i]);
    }
    if (k < kc) pack_b_panel_cols_avx2(cols, kc - k, dst + k * nr, k);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

static_assert(mr == 6, "pack_a6_avx512 packs 6-row panels");
/// The lane tables of pack_a6_avx512: output vector j of a 16-depth step holds packed elements
/// f = 16j + e (e < 16), which is row f % 6 at depth f / 6; pair p of rows (2p, 2p+1) supplies the
/// lanes whose row is in it, at permutex2var index (row % 2) * 16 + depth.
struct a6_tables {
    alignas(64) std::int32_t idx[6][3][16];
    std::uint16_t from23[6], from45[6];
    a6_tables() : from23{}, from45{} {
        for (int j = 0; j < 6; ++j)
            for (int e = 0; e < 16; ++e) {
                const int f = 16 * j + e, r = f % 6, k = f / 6;
                for (int pair = 0; pair < 3; ++pair) idx[j][pair][e] = (r / 2 == pair) ? (r % 2) * 16 + k : 0;
                if (r / 2 == 1) from23[j] = static_cast<std::uint16_t>(from23[j] | (1u << e));
                if (r / 2 == 2) from45[j] = static_cast<std::uint16_t>(from45[j] | (1u << e));
            }
    }
};

/// dst[k*6 + r] = rows[r][k] for k < kc, r < 6 (a whole 6-row A panel): per 16 depths six row loads,
/// a 6x16 transpose in registers (three two-source permutes and two blends per output vector), six
/// stores, where the scalar gather issues 96 loads and 96 stores.
[[gnu::target("avx512f")]] inline void pack_a6_avx512(const float* const* rows, std::int64_t kc, float* dst) {
    static const a6_tables t;
    std::int64_t k = 0;
    for (; k + 16 <= kc; k += 16, dst += 96) {
        __m512 r[6];
#pragma GCC unroll 6
        for (int i = 0; i < 6; ++i) r[i] = _mm512_loadu_ps(rows[i] + k);  // (-O2 left it rolled, via the stack)
#pragma GCC unroll 6
        for (int j = 0; j < 6; ++j) {
            const __m512 p01 = _mm512_permutex2var_ps(r[0], _mm512_load_si512(t.idx[j][0]), r[1]);
            const __m512 p23 = _mm512_permutex2var_ps(r[2], _mm512_load_si512(t.idx[j][1]), r[3]);
            const __m512 p45 = _mm512_permutex2var_ps(r[4], _mm512_load_si512(t.idx[j][2]), r[5]);
            const __m512 o = _mm512_mask_blend_ps(t.from45[j], _mm512_mask_blend_ps(t.from23[j], p01, p23), p45);
            _mm512_storeu_ps(dst + 16 * j, o);
        }
    }
    for (; k < kc; ++k, dst += 6)
        for (int i = 0; i < 6; ++i) dst[i] = rows[i][k];
}

}  // namespace graft::ops::gemm::detail
#endif  // GRAFT_X86_DISPATCH
