// graft/ops/arch/x86/conv_geom.hpp — the AVX-512 and AVX2 transposed im2col packs and the vector adds of the
// input-gradient scatter: the x86 half of graft/ops/detail/conv_geom.hpp, chosen at run time there ([[gnu::target]], ops/arch/x86/cpu.hpp);
// empty where GRAFT_X86_DISPATCH is not set.
// Internal: graft/ops/detail/conv_geom.hpp includes it after conv_geom and im2col_tables, which it uses.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>

#include "graft/ops/arch/x86/cpu.hpp"

#ifdef GRAFT_X86_DISPATCH
namespace graft::ops::nn_detail {

// The transposed im2col pack for R <= 16 rows: for kc output pixels from q on, lane r of dst[pp*R]
// is the pixel's window origin at im2col offset off[o0 + r]. The offsets come as nseg contiguous
// segments: segment s fills the lanes of mask[s] from origin + seg_off[s] + lane, one masked load.
[[gnu::target("avx512f")]] inline void pack_transposed_avx512(const float* in, const conv_geom& g, std::int64_t q,
                                                              std::int64_t kc, const std::int64_t* seg_off,
                                                              const __mmask16* mask, int nseg, int R, float* dst) {
    // locals, not g's fields: the compiler must assume the vector stores may write those
    const std::int64_t oh = g.oh, ow = g.ow, P = oh * ow, in_sn = g.in_sn, row_step = g.sh * g.in_sh;
    const std::int64_t col_step = g.sw * g.in_sw;
    std::int64_t b = q / P, oy = (q - b * P) / ow, ox = q - b * P - oy * ow;
    const auto lanes = static_cast<__mmask16>((1u << R) - 1);
    std::int64_t offs[16];
    __mmask16 masks[16];
    for (int s = 0; s < nseg; ++s) offs[s] = seg_off[s], masks[s] = mask[s];
    const float* origin = in + b * in_sn + oy * row_step + ox * col_step;
    for (std::int64_t pp = 0; pp < kc; ++pp) {
        __m512 v = _mm512_setzero_ps();
        for (int s = 0; s < nseg; ++s) v = _mm512_mask_loadu_ps(v, masks[s], origin + offs[s]);
        _mm512_mask_storeu_ps(dst + pp * R, lanes, v);
        origin += col_step;
        if (++ox == ow) {
            ox = 0;
            if (++oy == oh) oy = 0, ++b;
            origin = in + b * in_sn + oy * row_step;
        }
    }
}

// dst[0, len) += src[0, len): zmm adds, the last vector masked.
[[gnu::target("avx512f")]] inline void add_run_avx512(float* dst, const float* src, std::int64_t len) {
    std::int64_t i = 0;
    for (; i + 16 <= len; i += 16)
        _mm512_storeu_ps(dst + i, _mm512_add_ps(_mm512_loadu_ps(dst + i), _mm512_loadu_ps(src + i)));
    if (i < len) {
        const auto m = static_cast<__mmask16>((1u << (len - i)) - 1);
        const __m512 sum = _mm512_add_ps(_mm512_maskz_loadu_ps(m, dst + i), _mm512_maskz_loadu_ps(m, src + i));
        _mm512_mask_storeu_ps(dst + i, m, sum);
    }
}

// The AVX2 sibling of pack_transposed_avx512 for whole 16-row panels (R == 16): each segment fills
// its lanes of the two 8-lane halves by maskload (zeros elsewhere, so the halves are OR-ed), both
// halves stored whole. lanes[s]: segment s's 16 lanes, -1 where it fills them, else 0.
[[gnu::target("avx2")]] inline void pack_transposed_avx2(const float* in, const conv_geom& g, std::int64_t q,
                                                         std::int64_t kc, const std::int64_t* seg_off,
                                                         const std::int32_t (*lanes)[16], int nseg, float* dst) {
    __m256i lo[16], hi[16];
    for (int s = 0; s < nseg; ++s) {
        lo[s] = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes[s]));
        hi[s] = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes[s] + 8));
    }
    const std::int64_t oh = g.oh, ow = g.ow, P = oh * ow, in_sn = g.in_sn, row_step = g.sh * g.in_sh;
    const std::int64_t col_step = g.sw * g.in_sw;
    std::int64_t b = q / P, oy = (q - b * P) / ow, ox = q - b * P - oy * ow;
    const float* origin = in + b * in_sn + oy * row_step + ox * col_step;
    for (std::int64_t pp = 0; pp < kc; ++pp) {
        __m256 v0 = _mm256_setzero_ps(), v1 = _mm256_setzero_ps();
        for (int s = 0; s < nseg; ++s) {
            const float* p = origin + seg_off[s];
            v0 = _mm256_or_ps(v0, _mm256_maskload_ps(p, lo[s]));
            v1 = _mm256_or_ps(v1, _mm256_maskload_ps(p + 8, hi[s]));
        }
        _mm256_storeu_ps(dst + pp * 16, v0);
        _mm256_storeu_ps(dst + pp * 16 + 8, v1);
        origin += col_step;
        if (++ox == ow) {
            ox = 0;
            if (++oy == oh) oy = 0, ++b;
            origin = in + b * in_sn + oy * row_step;
        }
    }
}

// dst[0, len) += src[0, len): ymm adds, the tail one float at a time (the same sums).
[[gnu::target("avx2")]] inline void add_run_avx2(float* dst, const float* src, std::int64_t len) {
    std::int64_t i = 0;
    for (; i + 8 <= len; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_add_ps(_mm256_loadu_ps(dst + i), _mm256_loadu_ps(src + i)));
    for (; i < len; ++i) dst[i] += src[i];
}

}  // namespace graft::ops::nn_detail
#endif  // GRAFT_X86_DISPATCH
