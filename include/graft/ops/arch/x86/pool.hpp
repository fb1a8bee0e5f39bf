// graft/ops/arch/x86/pool.hpp — the AVX-512 and AVX2 max pooling rows and MaxPoolGrads: the x86 half of graft/ops/pool.hpp,
// chosen at run time there ([[gnu::target]], ops/arch/x86/cpu.hpp); empty where GRAFT_X86_DISPATCH is not set.
// Internal: graft/ops/pool.hpp includes it after pool_geom, which it uses.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>

#include "graft/ops/arch/x86/cpu.hpp"

#ifdef GRAFT_X86_DISPATCH
namespace graft::ops::nn_detail {

// Output pixels [ox0, ox1) of row oy, each window set up and clipped on its own.
[[gnu::target("avx512f")]] inline void max_pool_span_avx512(const pool_geom& g, const float* img, float* out,
                                                           std::int64_t oy, std::int64_t ox0, std::int64_t ox1) {
    const std::int64_t C = g.in.c;
    for (std::int64_t ox = ox0; ox < ox1; ++ox) {
        std::int64_t y0, y1, x0, x1;
        g.window(oy, ox, y0, y1, x0, x1);
        for (std::int64_t c0 = 0; c0 < C; c0 += 16) {
            const auto lanes = static_cast<__mmask16>(C - c0 >= 16 ? 0xFFFFu : (1u << (C - c0)) - 1);
            __m512 acc = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
            for (std::int64_t yy = y0; yy < y1; ++yy)
                for (std::int64_t xx = x0; xx < x1; ++xx) {
                    // the masked form: the plain one trips GCC 12's -Wmaybe-uninitialized (undefined source)
                    const __m512 px = _mm512_maskz_loadu_ps(lanes, img + yy * g.sy + xx * g.sx + c0);
                    acc = _mm512_mask_max_ps(acc, 0xFFFF, px, acc);
                }
            _mm512_mask_storeu_ps(out + ox * C + c0, lanes, acc);
        }
    }
}
// Output pixels [ox0, ox1) of a row whose windows lie inside the input columns, C <= 16 channels
// (one masked vector per pixel): window rows [y0, y1) and kw columns from ox*sw - pl, KW > 0 the
// column count at compile time (2: the common 2x2 pool), else g.kw. Same order as below.
template <int KW>
[[gnu::target("avx512f")]] inline void max_pool_inside_avx512(const pool_geom& g, const float* img, float* out,
                                                             std::int64_t y0, std::int64_t y1, std::int64_t ox0,
                                                             std::int64_t ox1, __mmask16 lanes) {
    const std::int64_t C = g.in.c, kw = KW > 0 ? KW : g.kw;
    const __m512 lowest = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    for (std::int64_t ox = ox0; ox < ox1; ++ox) {
        const float* col = img + (ox * g.sw - g.pl) * g.sx;
        __m512 acc = lowest;
        for (std::int64_t yy = y0; yy < y1; ++yy) {
            const float* p = col + yy * g.sy;
#pragma GCC unroll 4
            for (std::int64_t xx = 0; xx < kw; ++xx)
                acc = _mm512_mask_max_ps(acc, 0xFFFF, _mm512_maskz_loadu_ps(lanes, p + xx * C), acc);
        }
        _mm512_mask_storeu_ps(out + ox * C, lanes, acc);
    }
}

/// MaxPool, NHWC float32 under AVX-512, output row oy of image b: per output pixel, its window's
/// pixels 16 channels at a time (the last block masked; up to 16 channels, the pixels whose window
/// lies inside the input columns without per-pixel window set-up). max(px, acc) is px > acc ? px : acc, as
/// in the scalar loop: same elements, same order, same bits (a NaN never wins, the first of equal
/// values stays).
[[gnu::target("avx512f")]] inline void max_pool_row_avx512(const pool_geom& g, const float* x, float* y,
                                                          std::int64_t b, std::int64_t oy) {
    const std::int64_t C = g.in.c;
    const float* img = x + b * g.sn;
    float* out = y + b * g.on + oy * g.oy;
    if (C <= 16) {  // with few channels the per-pixel window set-up was most of the time
        std::int64_t y0, y1, x0, x1;
        g.window(oy, 0, y0, y1, x0, x1);
        // pixels whose window starts at column >= 0 and ends at <= in.w
        const std::int64_t lo = std::min(g.out.w, (g.pl + g.sw - 1) / g.sw);
        const std::int64_t last = g.in.w + g.pl - g.kw;  // the last window start inside, relative to -pl
        const std::int64_t hi = std::max(lo, std::min(g.out.w, last >= 0 ? last / g.sw + 1 : 0));
        const auto lanes = static_cast<__mmask16>(C >= 16 ? 0xFFFFu : (1u << C) - 1);
        if (g.kw == 2) max_pool_inside_avx512<2>(g, img, out, y0, y1, lo, hi, lanes);
        else max_pool_inside_avx512<0>(g, img, out, y0, y1, lo, hi, lanes);
        max_pool_span_avx512(g, img, out, oy, 0, lo);
        max_pool_span_avx512(g, img, out, oy, hi, g.out.w);
        return;
    }
    max_pool_span_avx512(g, img, out, oy, 0, g.out.w);
}

/// MaxPoolGrad of one NHWC float32 image under AVX-512, channels 16 at a time (the last block
/// masked): per window each lane keeps its running best and the position it came from, moving only
/// on a strictly greater value (as the scalar loop: the first maximum wins, a NaN first stays),
/// then each window position adds dy to the lanes it won. `tiled`: the windows are whole, disjoint
/// and cover the image, so every element is written once (0 + dy where it won, else 0) with no
/// clearing pass and no reads.
/// `off`: room for kh*kw window offsets.
[[gnu::target("avx512f")]] inline void max_pool_backward_nhwc_avx512(const pool_geom& g, const float* img,
                                                                    const float* dyi, float* dimg, bool tiled,
                                                                    std::int64_t* off) {
    const std::int64_t C = g.in.c;
    if (!tiled) std::fill(dimg, dimg + g.sn, 0.f);
    for (std::int64_t oy = 0; oy < g.out.h; ++oy)
        for (std::int64_t ox = 0; ox < g.out.w; ++ox) {
            std::int64_t y0, y1, x0, x1;
            g.window(oy, ox, y0, y1, x0, x1);
            int npos = 0;
            for (std::int64_t yy = y0; yy < y1; ++yy)
                for (std::int64_t xx = x0; xx < x1; ++xx) off[static_cast<std::size_t>(npos++)] = yy * g.sy + xx * g.sx;
            if (npos == 0) continue;  // an empty window passes no gradient
            const float* d = dyi + oy * g.oy + ox * g.ox;
            for (std::int64_t c0 = 0; c0 < C; c0 += 16) {
                const auto lanes = static_cast<__mmask16>(C - c0 >= 16 ? 0xFFFFu : (1u << (C - c0)) - 1);
                __m512 best = _mm512_maskz_loadu_ps(lanes, img + off[0] + c0);
                __m512i win = _mm512_setzero_si512();
                for (int k = 1; k < npos; ++k) {
                    const __m512 v = _mm512_maskz_loadu_ps(lanes, img + off[static_cast<std::size_t>(k)] + c0);
                    const __mmask16 gt = _mm512_cmp_ps_mask(v, best, _CMP_GT_OQ);
                    best = _mm512_mask_mov_ps(best, gt, v);
                    win = _mm512_mask_mov_epi32(win, gt, _mm512_set1_epi32(k));
                }
                const __m512 dv = _mm512_add_ps(_mm512_setzero_ps(), _mm512_maskz_loadu_ps(lanes, d + c0));
                for (int k = 0; k < npos; ++k) {
                    const __mmask16 mk = _mm512_mask_cmpeq_epi32_mask(lanes, win, _mm512_set1_epi32(k));
                    float* p = dimg + off[static_cast<std::size_t>(k)] + c0;
                    if (tiled) {
                        _mm512_mask_storeu_ps(p, lanes, _mm512_maskz_mov_ps(mk, dv));
                    } else if (mk) {
                        _mm512_mask_storeu_ps(p, mk, _mm512_add_ps(_mm512_maskz_loadu_ps(mk, p), dv));
                    }
                }
            }
        }
}

// ---- AVX2: 8 lanes, no mask registers. vmaskmovps stores are microcoded on AMD's Zen, so where the
// lanes past a pixel's channels may be read or written harmlessly the loops use whole vectors:
// channel blocks of 8 with the last one at C - 8 (overlapping the one before: max is idempotent);
// with C < 8, loads of 8 floats wherever the tensor has them, and stores of 8 in increasing column
// order (each pixel's overwrites the spill of the one before), masked only where a store would
// pass the end of the output row.

/// MaxPool, NHWC float32 under AVX2, output row oy of image b; x_end: the end of the input tensor.
/// Same comparisons in the same order as the scalar loop (window rows, then columns; px > acc ?
/// px : acc, which is _mm256_max_ps(px, acc)): same bits, NaN included.
[[gnu::target("avx2")]] inline void max_pool_row_avx2(const pool_geom& g, const float* x, const float* x_end, float* y,
                                                     std::int64_t b, std::int64_t oy) {
    const std::int64_t C = g.in.c, OW = g.out.w;
    const float* img = x + b * g.sn;
    float* out = y + b * g.on + oy * g.oy;
    const __m256 lowest = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    std::int64_t y0, y1, x0, x1;
    g.window(oy, 0, y0, y1, x0, x1);
    if (C >= 8) {
        for (std::int64_t ox = 0; ox < OW; ++ox) {
            g.window(oy, ox, y0, y1, x0, x1);
            for (std::int64_t c = 0; c < C; c += 8) {
                const std::int64_t c0 = std::min(c, C - 8);
                __m256 acc = lowest;
                for (std::int64_t yy = y0; yy < y1; ++yy)
                    for (std::int64_t xx = x0; xx < x1; ++xx)
                        acc = _mm256_max_ps(_mm256_loadu_ps(img + yy * g.sy + xx * g.sx + c0), acc);
                _mm256_storeu_ps(out + ox * C + c0, acc);
            }
        }
        return;
    }
    const __m256i lanes = arch::first_lanes_avx2(static_cast<int>(C));
    // whole-vector loads reach 8 - C floats past a pixel: safe unless this row's windows reach the tensor's end
    const bool whole_loads = y1 <= y0 || img + (y1 - 1) * g.sy + g.in.w * g.sx + 8 - C <= x_end;
    const std::int64_t whole_stores = std::max<std::int64_t>(0, OW - (8 - C + C - 1) / C);  // ox*C + 8 <= OW*C
    // pixels whose window lies inside the input columns: no per-pixel clipping
    const std::int64_t lo = std::min(OW, (g.pl + g.sw - 1) / g.sw);
    const std::int64_t last = g.in.w + g.pl - g.kw;
    const std::int64_t hi = std::max(lo, std::min(OW, last >= 0 ? last / g.sw + 1 : 0));
    for (std::int64_t ox = 0; ox < OW; ++ox) {
        std::int64_t xa = ox * g.sw - g.pl, xb = xa + g.kw;
        if (ox < lo || ox >= hi) xa = std::max<std::int64_t>(xa, 0), xb = std::min(xb, g.in.w);
        __m256 acc = lowest;
        for (std::int64_t yy = y0; yy < y1; ++yy) {
            const float* p = img + yy * g.sy;
            if (whole_loads) {
                for (std::int64_t xx = xa; xx < xb; ++xx) acc = _mm256_max_ps(_mm256_loadu_ps(p + xx * C), acc);
            } else {
                for (std::int64_t xx = xa; xx < xb; ++xx) acc = _mm256_max_ps(_mm256_maskload_ps(p + xx * C, lanes), acc);
            }
        }
        if (ox < whole_stores) _mm256_storeu_ps(out + ox * C, acc);
        else _mm256_maskstore_ps(out + ox * C, lanes, acc);
    }
}

[[gnu::target("avx2")]] inline __m256 pool_load_avx2(const float* p, bool whole, __m256i lanes) {
    return whole ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, lanes);
}

/// MaxPoolGrad, tiled windows (whole, disjoint, covering the image) and C < 8 channels: per output
/// row, first each window's winners (one vector per pixel, lanes past C unused), then the image rows
/// under it written in increasing address order with whole 8-lane stores, each one's spill past its
/// C channels overwritten by the next; the image's last pixels (those whose 8 floats would leave
/// it) are stored masked.
[[gnu::target("avx2")]] inline void max_pool_backward_tiled_narrow_avx2(const pool_geom& g, const float* img,
                                                                       const float* dyi, float* dimg,
                                                                       std::int64_t* off, __m256i* wins, __m256* dvs) {
    const std::int64_t C = g.in.c, kw = g.kw, npos = g.kh * g.kw;
    const __m256i lanes = arch::first_lanes_avx2(static_cast<int>(C));
    for (std::int64_t ky = 0, k = 0; ky < g.kh; ++ky)
        for (std::int64_t kx = 0; kx < kw; ++kx, ++k) off[k] = ky * g.sy + kx * g.sx;
    const float* whole_end = dimg + g.sn - 8;  // a whole store from here on would leave the image
    for (std::int64_t oy = 0; oy < g.out.h; ++oy) {
        const std::int64_t row0 = oy * g.sh * g.sy;
        for (std::int64_t ox = 0; ox < g.out.w; ++ox) {
            const float* w = img + row0 + ox * g.sw * g.sx;
            __m256 best = _mm256_maskload_ps(w, lanes);
            __m256i win = _mm256_setzero_si256();
            for (std::int64_t k = 1; k < npos; ++k) {
                const __m256 v = _mm256_maskload_ps(w + off[k], lanes);
                const __m256 gt = _mm256_cmp_ps(v, best, _CMP_GT_OQ);
                best = _mm256_blendv_ps(best, v, gt);
                win = _mm256_blendv_epi8(win, _mm256_set1_epi32(static_cast<int>(k)), _mm256_castps_si256(gt));
            }
            wins[ox] = win;
            dvs[ox] = _mm256_add_ps(_mm256_setzero_ps(), _mm256_maskload_ps(dyi + oy * g.oy + ox * g.ox, lanes));
        }
        for (std::int64_t ky = 0; ky < g.kh; ++ky) {
            float* drow = dimg + row0 + ky * g.sy;
            for (std::int64_t ox = 0; ox < g.out.w; ++ox)
                for (std::int64_t kx = 0; kx < kw; ++kx) {
                    float* p = drow + (ox * kw + kx) * C;
                    const __m256 mk = _mm256_castsi256_ps(
                        _mm256_cmpeq_epi32(wins[ox], _mm256_set1_epi32(static_cast<int>(ky * kw + kx))));
                    const __m256 v = _mm256_and_ps(mk, dvs[ox]);
                    if (p <= whole_end) _mm256_storeu_ps(p, v);
                    else _mm256_maskstore_ps(p, lanes, v);
                }
        }
    }
}

/// MaxPoolGrad of one NHWC float32 image under AVX2: as max_pool_backward_nhwc_avx512, 8 channels
/// at a time; C not a multiple of 8: tiled, the last block at C - 8 (overlapping the one before,
/// whose lanes it writes again with the same values), else through maskload / maskstore; tiled
/// with C < 8: max_pool_backward_tiled_narrow_avx2. `scratch`: room for out.w * 2 vectors.
[[gnu::target("avx2")]] inline void max_pool_backward_nhwc_avx2(const pool_geom& g, const float* img, const float* dyi,
                                                               float* dimg, bool tiled, std::int64_t* off,
                                                               __m256* scratch) {
    const std::int64_t C = g.in.c;
    if (tiled && C < 8) {
        return max_pool_backward_tiled_narrow_avx2(g, img, dyi, dimg, off, reinterpret_cast<__m256i*>(scratch),
                                                   scratch + g.out.w);
    }
    if (!tiled) std::fill(dimg, dimg + g.sn, 0.f);
    const __m256i all = _mm256_set1_epi32(-1), tail = arch::first_lanes_avx2(static_cast<int>(C % 8 == 0 ? 8 : C % 8));
    for (std::int64_t oy = 0; oy < g.out.h; ++oy)
        for (std::int64_t ox = 0; ox < g.out.w; ++ox) {
            std::int64_t y0, y1, x0, x1;
            g.window(oy, ox, y0, y1, x0, x1);
            int npos = 0;
            for (std::int64_t yy = y0; yy < y1; ++yy)
                for (std::int64_t xx = x0; xx < x1; ++xx) off[static_cast<std::size_t>(npos++)] = yy * g.sy + xx * g.sx;
            if (npos == 0) continue;  // an empty window passes no gradient
            const float* d = dyi + oy * g.oy + ox * g.ox;
            for (std::int64_t c = 0; c < C; c += 8) {
                const std::int64_t c0 = tiled && C >= 8 ? std::min(c, C - 8) : c;
                const __m256i lanes = c0 + 8 <= C ? all : tail;
                const bool whole = c0 + 8 <= C;
                __m256 best = pool_load_avx2(img + off[0] + c0, whole, lanes);
                __m256i win = _mm256_setzero_si256();
                for (int k = 1; k < npos; ++k) {
                    const __m256 v = pool_load_avx2(img + off[static_cast<std::size_t>(k)] + c0, whole, lanes);
                    const __m256 gt = _mm256_cmp_ps(v, best, _CMP_GT_OQ);
                    best = _mm256_blendv_ps(best, v, gt);
                    win = _mm256_blendv_epi8(win, _mm256_set1_epi32(k), _mm256_castps_si256(gt));
                }
                const __m256 dv = _mm256_add_ps(_mm256_setzero_ps(), pool_load_avx2(d + c0, whole, lanes));  // -0 -> +0, as 0 + dy
                for (int k = 0; k < npos; ++k) {
                    const __m256 mk = _mm256_castsi256_ps(_mm256_cmpeq_epi32(win, _mm256_set1_epi32(k)));
                    float* p = dimg + off[static_cast<std::size_t>(k)] + c0;
                    __m256 v = _mm256_and_ps(mk, dv);
                    if (!tiled) v = _mm256_add_ps(pool_load_avx2(p, whole, lanes), v);
                    if (whole) _mm256_storeu_ps(p, v);
                    else _mm256_maskstore_ps(p, lanes, v);
                }
            }
        }
}

}  // namespace graft::ops::nn_detail
#endif  // GRAFT_X86_DISPATCH
