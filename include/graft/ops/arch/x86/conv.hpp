// graft/ops/arch/x86/conv.hpp — the narrow convolution (few output channels: taps spread over 16-lane AVX-512 or 8-lane
// AVX2 vectors) and its filter gradient: the x86 half of graft/ops/conv.hpp, chosen at run time there ([[gnu::target]],
// ops/arch/x86/cpu.hpp); empty where GRAFT_X86_DISPATCH is not set.
// Internal: include graft/ops/conv.hpp.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "graft/ops/arch/x86/cpu.hpp"

#ifdef GRAFT_X86_DISPATCH
namespace graft::ops::nn_detail {

// out[0, len) = sum over taps t of base[tap_off[t] + j] * w_t[j], len <= 16V: V zmm accumulators (the
// last masked), taps in order with one fused multiply-add each. w_t repeats with period OC; its P
// distinct vectors (P = lcm(OC, 16) / 16) are wpat[t*16P + 16p], loaded once per tap.
template <int V, int P>
[[gnu::target("avx512f")]] inline void conv_taps_avx512(const float* base, const std::int64_t* tap_off,
                                                        const float* wpat, std::int64_t taps, int len, float* out) {
    __m512 acc[V];
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) acc[v] = _mm512_setzero_ps();
    const auto last = static_cast<__mmask16>((1u << (len - 16 * (V - 1))) - 1);
    for (std::int64_t t = 0; t < taps; ++t) {
        const float* src = base + tap_off[t];
        __m512 w[P];
#pragma GCC unroll 8
        for (int q = 0; q < P; ++q) w[q] = _mm512_load_ps(wpat + (t * P + q) * 16);
#pragma GCC unroll 16
        for (int v = 0; v < V - 1; ++v) acc[v] = _mm512_fmadd_ps(_mm512_loadu_ps(src + 16 * v), w[v % P], acc[v]);
        acc[V - 1] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(last, src + 16 * (V - 1)), w[(V - 1) % P], acc[V - 1]);
    }
#pragma GCC unroll 16
    for (int v = 0; v < V - 1; ++v) _mm512_storeu_ps(out + 16 * v, acc[v]);
    _mm512_mask_storeu_ps(out + 16 * (V - 1), last, acc[V - 1]);
}

using conv_taps_fn = void (*)(const float*, const std::int64_t*, const float*, std::int64_t, int, float*);
/// conv_taps_avx512<V, P> for V = 1..16 at index V - 1.
template <int P, int... I>
constexpr std::array<conv_taps_fn, sizeof...(I)> conv_taps_table(std::integer_sequence<int, I...>) {
    return {conv_taps_avx512<I + 1, P>...};
}
/// The kernels for a filter-pattern period of 16P floats, P in {1, 3, 5, 7} (the lcm of 16 and OC <= 8).
inline const std::array<conv_taps_fn, 16>& conv_taps_kernels(std::int64_t P) {
    static const std::array<conv_taps_fn, 16> p1 = conv_taps_table<1>(std::make_integer_sequence<int, 16>{}),
                                              p3 = conv_taps_table<3>(std::make_integer_sequence<int, 16>{}),
                                              p5 = conv_taps_table<5>(std::make_integer_sequence<int, 16>{}),
                                              p7 = conv_taps_table<7>(std::make_integer_sequence<int, 16>{});
    return P == 1 ? p1 : P == 3 ? p3 : P == 5 ? p5 : p7;
}

/// The AVX2 sibling of conv_taps_avx512: len <= 8V floats in V ymm accumulators (the last through
/// maskload / maskstore), wpat's P distinct vectors per tap 8 floats apart (P = lcm(OC, 8) / 8),
/// taps in order with one fused multiply-add each (so the AVX2 GEMM path's bits). V + P <= 15
/// (narrow_conv::max_vectors): every accumulator and weight stays in a register.
template <int V, int P>
[[gnu::target("avx2,fma")]] inline void conv_taps_avx2(const float* base, const std::int64_t* tap_off,
                                                       const float* wpat, std::int64_t taps, int len, float* out) {
    __m256 acc[V];
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) acc[v] = _mm256_setzero_ps();
    const __m256i last = arch::first_lanes_avx2(len - 8 * (V - 1));
    for (std::int64_t t = 0; t < taps; ++t) {
        const float* src = base + tap_off[t];
        __m256 w[P];
#pragma GCC unroll 8
        for (int q = 0; q < P; ++q) w[q] = _mm256_load_ps(wpat + (t * P + q) * 8);
#pragma GCC unroll 16
        for (int v = 0; v < V - 1; ++v) acc[v] = _mm256_fmadd_ps(_mm256_loadu_ps(src + 8 * v), w[v % P], acc[v]);
        acc[V - 1] = _mm256_fmadd_ps(_mm256_maskload_ps(src + 8 * (V - 1), last), w[(V - 1) % P], acc[V - 1]);
    }
#pragma GCC unroll 16
    for (int v = 0; v < V - 1; ++v) _mm256_storeu_ps(out + 8 * v, acc[v]);
    _mm256_maskstore_ps(out + 8 * (V - 1), last, acc[V - 1]);
}
template <int P, int... I>
constexpr std::array<conv_taps_fn, sizeof...(I)> conv_taps_table_avx2(std::integer_sequence<int, I...>) {
    return {conv_taps_avx2<I + 1, P>...};
}
/// conv_taps_avx2<V, P> at index V - 1, V up to narrow_conv::max_vectors(avx2, P) (12, 12, 10, 8).
inline const conv_taps_fn* conv_taps_kernels_avx2(std::int64_t P) {
    static const std::array<conv_taps_fn, 12> p1 = conv_taps_table_avx2<1>(std::make_integer_sequence<int, 12>{}),
                                              p3 = conv_taps_table_avx2<3>(std::make_integer_sequence<int, 12>{});
    static const std::array<conv_taps_fn, 10> p5 = conv_taps_table_avx2<5>(std::make_integer_sequence<int, 10>{});
    static const std::array<conv_taps_fn, 8> p7 = conv_taps_table_avx2<7>(std::make_integer_sequence<int, 8>{});
    return P == 1 ? p1.data() : P == 3 ? p3.data() : P == 5 ? p5.data() : p7.data();
}

// dst[x*oc + c] = src[x*step] for x < n, c < oc <= 16: one masked store of a broadcast per value.
[[gnu::target("avx512f")]] inline void spread_avx512(const float* src, std::int64_t step, std::int64_t n,
                                                     std::int64_t oc, float* dst) {
    const auto lanes = static_cast<__mmask16>((1u << oc) - 1);
    for (std::int64_t x = 0; x < n; ++x) _mm512_mask_storeu_ps(dst + x * oc, lanes, _mm512_set1_ps(src[x * step]));
}

// The AVX2 sibling of spread_avx512 (oc <= 8): one whole 8-lane store of a broadcast per value, each
// overwriting the lanes past oc of the one before, the last values (whose store would pass dst's
// n*oc floats) one float at a time. (vmaskmovps stores are microcoded on AMD's Zen: a masked
// store per value made the spread most of LeNet's first layer there.)
[[gnu::target("avx2")]] inline void spread_avx2(const float* src, std::int64_t step, std::int64_t n, std::int64_t oc,
                                                float* dst) {
    const std::int64_t whole = std::max<std::int64_t>(0, n - (8 - oc + oc - 1) / oc);  // x*oc + 8 <= n*oc
    std::int64_t x = 0;
    for (; x < whole; ++x) _mm256_storeu_ps(dst + x * oc, _mm256_set1_ps(src[x * step]));
    for (; x < n; ++x) std::fill(dst + x * oc, dst + (x + 1) * oc, src[x * step]);
}

// wpat[t*period + j] = f[t*OC + j % OC] for t < taps, j < period = lcm(OC, lanes): each tap's OC
// weights repeated along its pattern, one float at a time (taps * period floats once per call).
inline void filter_patterns(const float* f, std::int64_t taps, std::int64_t OC, std::int64_t period, float* wpat) {
    for (std::int64_t t = 0; t < taps; ++t)
        for (std::int64_t j = 0, c = 0; j < period; ++j, c = c + 1 == OC ? 0 : c + 1) wpat[t * period + j] = f[t * OC + c];
}

/// Whether the direct kernels may run (tests and benchmarks switch them off to compare with GEMM).
inline std::atomic<bool>& conv_direct_enabled() {
    static std::atomic<bool> on{true};
    return on;
}

/// Whether conv_narrow_forward takes this forward convolution: NHWC float32 under AVX-512 or AVX2
/// with at most 8 output channels (a GEMM register tile is 16 (AVX2) or 32 (AVX-512) channels wide:
/// it wastes half or more; at 16 channels GEMM was 2.3x faster on LeNet's second layer), unit column
/// stride, and a depth within one GEMM panel (so both paths sum the same products in the same order).
inline bool conv_narrow_fits(const conv_geom& g) {
    return g.nhwc && g.oc <= 8 && g.sw == 1 && g.K() <= gemm::kc_block && g.ic <= 8 &&
           gemm::active_kernel() != gemm::kernel_isa::portable && conv_direct_enabled().load(std::memory_order_relaxed);
}

/// Floats of the spread planes of one group of images (half an L2): spread, then used while hot.
/// (At 8 MiB, LeNet's first layer, b128, cold caches: forward 1.00 -> 0.67 ms, filter gradient 1.06 -> 0.96.)
inline constexpr std::int64_t kSpreadGroupFloats = std::int64_t{1} << 17;

/// Direct convolution for few output channels. An NHWC output row is OW*OC contiguous floats; with
/// unit column stride, output element j = ox*OC + c of row oy takes, for tap (ky, kx, ic), the
/// input value at column ox + kx*dw, channel ic. Each input plane is first spread OC-fold
/// (rep[ic][y][x*OC + c] = in[y][x][ic]), so a tap reads one contiguous run of the row and
/// multiplies it by the tap's filter weights repeated with period OC (wpat). No packing, every
/// vector lane useful. Taps run in im2col depth order, so the result equals the GEMM path's bits.
/// The n images split between `tasks` threads in whole images (task t: [n*t/tasks, n*(t+1)/tasks)),
/// each thread's share in groups of at most `group`: fill(task, b0, nb) lays out a group in the
/// thread's own buffer, rows(task, b0, nb) computes its output. No barrier between the threads.
template <class Fill, class Rows>
void for_image_groups(std::int64_t n, std::int64_t group, int tasks, Fill&& fill, Rows&& rows) {
    run_tasks(tasks, [&](int task) {
        const std::int64_t e0 = n * task / tasks, e1 = n * (task + 1) / tasks;
        for (std::int64_t b0 = e0; b0 < e1; b0 += group) {
            const std::int64_t nb = std::min(group, e1 - b0);
            fill(task, b0, nb);
            rows(task, b0, nb);
        }
    });
}

/// What the direct few-channel kernels share: the geometry over the zero-bordered input (the
/// spread planes carry the border: no padded copy of the input is made), the offsets of the taps in
/// the spread planes, and `slots` buffers of spread planes for a group of images each (one per
/// thread when each thread takes whole images: it spreads and uses its own groups, with no barrier).
struct narrow_conv {
    conv_geom g0;        // the convolution as given
    const float* x;      // its input
    conv_geom g;         // over the zero-bordered input: pads 0, every window inside
    std::int64_t OC, taps, row, plane, image, period, L, out_row, group;
    std::vector<std::int64_t> tap_off;
    float* rep = nullptr;  // the calling thread's scratch (kept between calls: no allocation per run)

    /// Whether each of `tasks` threads takes whole images (enough of them for a balanced split).
    static bool by_images(const conv_geom& g, int tasks) { return tasks > 1 && g.n >= 2 * tasks; }

    bool wide;           // AVX-512 (16 lanes), else AVX2 (8)

    /// Vectors per chunk of an output row for a filter-pattern period of P vectors: AVX-512 up to 16
    /// (32 zmm registers); AVX2 up to 12 with V + P <= 15 (16 ymm registers: accumulators, the P
    /// weight vectors and the tail's lane mask).
    static int max_vectors(bool wide, std::int64_t P) {
        return wide ? 16 : static_cast<int>(std::min<std::int64_t>(12, 15 - P));
    }

    narrow_conv(const conv_geom& geom, const float* input, int slots = 1)
        : g0(geom), x(input), g(geom), wide(gemm::active_kernel() == gemm::kernel_isa::avx512) {
        std::tie(g.ih, g.iw) = padded_extent(g0);
        g.pt = 0, g.pl = 0;
        OC = g.oc, taps = g.K(), row = g.iw * OC, plane = g.ih * row;
        image = std::max<std::int64_t>(1, g.ic * plane);
        // a tap's weights along a row repeat every OC floats, its vectors every lcm(OC, lanes) floats
        const std::int64_t lanes = wide ? 16 : 8;
        period = std::lcm(OC, lanes);
        // floats per chunk of an output row: whole periods, at most max_vectors vectors
        L = lanes * max_vectors(wide, period / lanes) / period * period;
        out_row = g.ow * OC;
        tap_off.resize(static_cast<std::size_t>(taps));
        for (std::int64_t ky = 0, t = 0; ky < g.kh; ++ky)
            for (std::int64_t kx = 0; kx < g.kw; ++kx)
                for (std::int64_t ic = 0; ic < g.ic; ++ic, ++t)
                    tap_off[static_cast<std::size_t>(t)] = ic * plane + ky * g.dh * row + kx * g.dw * OC;
        // images in groups whose spread planes take about kSpreadGroupFloats (at least one image)
        group = std::clamp<std::int64_t>(kSpreadGroupFloats / image, 1, g.n);
        thread_local gemm::detail::scratch<float> planes;
        rep = planes.get(static_cast<std::size_t>(slots * group * image));
    }
    /// Spreads images [b0, b0 + nb), nb <= group, into buffer `slot`: on all threads, or on the
    /// calling one only.
    void spread(std::int64_t b0, std::int64_t nb, int slot = 0, bool all_threads = true) {
        float* const buf = rep + slot * group * image;
        const std::int64_t left = g0.pl * OC, filled = g0.iw * OC;
        auto rows = [&](std::int64_t r0, std::int64_t r1) {
            for (std::int64_t r = r0; r < r1; ++r) {
                const std::int64_t b = r / g.ih, iy = r - b * g.ih, sy = iy - g0.pt;
                float* dst = buf + b * image + iy * row;
                if (sy < 0 || sy >= g0.ih) {  // a border row
                    for (std::int64_t ic = 0; ic < g.ic; ++ic) std::fill(dst + ic * plane, dst + ic * plane + row, 0.f);
                    continue;
                }
                const float* src = x + (b0 + b) * g0.in_sn + sy * g0.in_sh;
                for (std::int64_t ic = 0; ic < g.ic; ++ic) {
                    float* d = dst + ic * plane;
                    std::fill(d, d + left, 0.f);
                    if (wide) spread_avx512(src + ic, g0.ic, g0.iw, OC, d + left);
                    else spread_avx2(src + ic, g0.ic, g0.iw, OC, d + left);
                    std::fill(d + left + filled, d + row, 0.f);
                }
            }
        };
        if (!all_threads) return rows(0, nb * g.ih);
        parallel_for(nb * g.ih, std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(1, row * g.ic)), rows);
    }
    /// by_images(): each of `tasks` threads takes whole images and, group by group, spreads them
    /// into its own buffer (slot = task) and calls rows(task, b0, nb) on the group of nb images at b0.
    template <class Rows>
    void for_own_images(int tasks, Rows&& rows) {
        for_image_groups(g.n, group, tasks, [&](int task, std::int64_t b0, std::int64_t nb) { spread(b0, nb, task, false); },
                         rows);
    }
    /// Output row oy of image b of the group in buffer `slot`, at tap offset 0.
    [[nodiscard]] const float* base(std::int64_t b, std::int64_t oy, int slot = 0) const {
        return rep + (slot * group + b) * image + oy * g.sh * row;
    }
};

// --- The AVX-512 forward: output pixels along the lanes, channels in registers ---------------------
//
// The spread kernels above (conv_taps_avx512) read every tap's run of the spread row at an offset of
// kx*OC floats: four of LeNet's five column taps load across two cache lines, and each tap loads
// 16P floats of weights for P vectors of output, so the loads, not the multiplies, bound them (LeNet's
// first layer at batch 1: 3.7 us in the taps kernel, + 0.8 to spread the input and 0.8 to lay out the
// weight patterns, of 7.1 us). Here an output row chunk of 16V pixels is V vectors per channel: each
// tap loads V input vectors from a zero-bordered plane and broadcasts each channel's weight once, for
// V*OC multiply-adds; the OC x 16 results of each vector are then interleaved into NHWC order by
// two-table permutes (ceil(OC/2) per output vector). Taps run in im2col depth order with one fused
// multiply-add each from zero: the GEMM path's bits.
//
// AVX2 keeps the spread kernels: 16 ymm registers hold at most 2 vectors (16 pixels) of 6 channels
// (12 accumulators, 2 inputs, a broadcast), and with only one-table permutes each 8 NHWC floats take a
// permute and a blend per channel they draw from (up to 6 and 5 at 6 channels, against 3 and 2
// here), while AVX2-limited LeNet already runs at 0.5-0.75x oneDNN's time (the eighth session's report).

/// The permutes that interleave OC channel vectors (16 pixels each) into OC vectors of NHWC floats:
/// output vector q takes, from channel pair p (channels 2p and 2p+1), the lanes in mask[q][p] by idx[q][p].
struct planar_interleave {
    alignas(64) std::int32_t idx[8][4][16]{};
    std::uint16_t mask[8][4]{};
    explicit planar_interleave(int OC) {
        for (int q = 0; q < OC; ++q)
            for (int i = 0; i < 16; ++i) {
                const int e = 16 * q + i, px = e / OC, c = e % OC;
                idx[q][c / 2][i] = px + 16 * (c % 2);
                mask[q][c / 2] = static_cast<std::uint16_t>(mask[q][c / 2] | (1u << i));
            }
    }
};
inline const planar_interleave& planar_interleave_for(int OC) {
    static const planar_interleave t[8] = {planar_interleave(1), planar_interleave(2), planar_interleave(3),
                                           planar_interleave(4), planar_interleave(5), planar_interleave(6),
                                           planar_interleave(7), planar_interleave(8)};
    return t[OC - 1];
}

/// act(v + bias) for one channel's vector (bias null: v), as bias_act_epilogue computes it.
[[gnu::target("avx512f")]] inline __m512 planar_bias_act(__m512 v, const float* bias, int c, bias_activation act,
                                                        __m512 alpha) {
    if (!bias) return v;
    v = _mm512_add_ps(v, _mm512_set1_ps(bias[c]));
    switch (act) {
        case bias_activation::relu: return op_detail::bias_act_avx512<bias_activation::relu>(v, alpha);
        case bias_activation::relu6: return op_detail::bias_act_avx512<bias_activation::relu6>(v, alpha);
        case bias_activation::leaky_relu: return op_detail::bias_act_avx512<bias_activation::leaky_relu>(v, alpha);
        default: return v;
    }
}

/// out[p*OC + c] for pixels p < npx <= 16V of one row chunk: the sum over taps t of
/// src[tap_off[t] + p] * f[t*OC + c], V vectors of pixels for each of the OC channels; then, with
/// `epilogue`, act(out + bias) on the channel vectors before they are interleaved.
template <int V, int OC>
[[gnu::target("avx512f")]] inline void conv_planar_avx512(const float* src, const std::int64_t* tap_off, const float* f,
                                                          std::int64_t taps, int npx, float* out,
                                                          const bias_act_epilogue* epilogue) {
    __m512 acc[V][OC];
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v)
#pragma GCC unroll 8
        for (int c = 0; c < OC; ++c) acc[v][c] = _mm512_setzero_ps();
    for (std::int64_t t = 0; t < taps; ++t) {
        const float* s = src + tap_off[t];
        __m512 x[V];
#pragma GCC unroll 8
        for (int v = 0; v < V; ++v) x[v] = _mm512_loadu_ps(s + 16 * v);
#pragma GCC unroll 8
        for (int c = 0; c < OC; ++c) {
            const __m512 w = _mm512_set1_ps(f[t * OC + c]);
#pragma GCC unroll 8
            for (int v = 0; v < V; ++v) acc[v][c] = _mm512_fmadd_ps(x[v], w, acc[v][c]);
        }
    }
    if (epilogue) {
        const float* bias = epilogue->bias();
        const bias_activation act = epilogue->activation();
        const __m512 alpha = _mm512_set1_ps(epilogue->alpha());
#pragma GCC unroll 8
        for (int v = 0; v < V; ++v)
#pragma GCC unroll 8
            for (int c = 0; c < OC; ++c) acc[v][c] = planar_bias_act(acc[v][c], bias, c, act, alpha);
    }
    const planar_interleave& il = planar_interleave_for(OC);
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) {
        const int valid = std::min(16, npx - 16 * v) * OC;  // floats of this vector's pixels
        if (valid <= 0) break;
        float* o = out + 16 * v * OC;
#pragma GCC unroll 8
        for (int q = 0; q < OC; ++q) {
            __m512 r;
            if constexpr (OC == 1) {
                r = acc[v][0];
            } else {
                r = _mm512_permutex2var_ps(acc[v][0], _mm512_load_si512(il.idx[q][0]), acc[v][1 % OC]);
#pragma GCC unroll 4
                for (int p = 1; 2 * p < OC; ++p) {
                    const __m512 b = _mm512_permutex2var_ps(acc[v][2 * p], _mm512_load_si512(il.idx[q][p]),
                                                            acc[v][std::min(2 * p + 1, OC - 1)]);
                    r = _mm512_mask_mov_ps(r, il.mask[q][p], b);
                }
            }
            const int left = valid - 16 * q;
            if (left >= 16) _mm512_storeu_ps(o + 16 * q, r);
            else if (left > 0) _mm512_mask_storeu_ps(o + 16 * q, static_cast<__mmask16>((1u << left) - 1), r);
        }
    }
}

/// Vectors of pixels per row chunk for OC channels: V*OC accumulators, V inputs and a broadcast in 32 zmm.
constexpr int planar_max_vectors(int OC) { return std::min(4, 31 / (OC + 1)); }

using conv_planar_fn = void (*)(const float*, const std::int64_t*, const float*, std::int64_t, int, float*,
                               const bias_act_epilogue*);
template <int OC, int... I>
constexpr std::array<conv_planar_fn, 4> conv_planar_row(std::integer_sequence<int, I...>) {
    return {conv_planar_avx512<std::min(I + 1, planar_max_vectors(OC)), OC>...};
}
template <int... I>
constexpr std::array<std::array<conv_planar_fn, 4>, 8> conv_planar_table(std::integer_sequence<int, I...>) {
    return {conv_planar_row<I + 1>(std::make_integer_sequence<int, 4>{})...};
}
/// conv_planar_avx512<V, OC> at [OC - 1][V - 1] (V up to planar_max_vectors(OC)).
inline const std::array<std::array<conv_planar_fn, 4>, 8>& conv_planar_kernels() {
    static constexpr auto t = conv_planar_table(std::make_integer_sequence<int, 8>{});
    return t;
}

/// The zero-bordered input planes of conv_planar_avx512: plane[ic][y][x] over the padded extent,
/// each row wide enough for a whole last chunk of 16 pixels (the lanes past the output are
/// computed from zeros and not stored), in `slots` buffers of `group` images each.
struct planar_input {
    conv_geom g0;    // the convolution as given
    const float* x;  // its input
    std::int64_t hp, wp, plane, image, group;
    std::vector<std::int64_t> tap_off;  // im2col depth order: (ky, kx, ic)
    float* buf = nullptr;

    planar_input(const conv_geom& g, const float* input, int slots) : g0(g), x(input) {
        hp = padded_extent(g0).first;
        wp = (g0.ow + 15) / 16 * 16 + (g0.kw - 1) * g0.dw;
        plane = hp * wp;
        image = std::max<std::int64_t>(1, g0.ic * plane);
        tap_off.resize(static_cast<std::size_t>(g0.K()));
        for (std::int64_t ky = 0, t = 0; ky < g0.kh; ++ky)
            for (std::int64_t kx = 0; kx < g0.kw; ++kx)
                for (std::int64_t ic = 0; ic < g0.ic; ++ic, ++t)
                    tap_off[static_cast<std::size_t>(t)] = ic * plane + ky * g0.dh * wp + kx * g0.dw;
        group = std::clamp<std::int64_t>(kSpreadGroupFloats / image, 1, std::max<std::int64_t>(1, g0.n));
        thread_local gemm::detail::scratch<float> planes;
        buf = planes.get(static_cast<std::size_t>(slots * group * image));
    }
    /// Rows [r0, r1) of the planes of images [b0, b0 + r1 / hp) into buffer `slot` (row r: image r / hp).
    void fill(std::int64_t b0, std::int64_t r0, std::int64_t r1, int slot) const {
        const std::int64_t cols = std::min(g0.iw, wp - g0.pl);
        for (std::int64_t r = r0; r < r1; ++r) {
            const std::int64_t b = r / hp, y = r - b * hp, sy = y - g0.pt;
            float* dst = buf + (slot * group + b) * image + y * wp;
            for (std::int64_t ic = 0; ic < g0.ic; ++ic) {
                float* d = dst + ic * plane;
                if (sy < 0 || sy >= g0.ih) {
                    std::fill(d, d + wp, 0.f);
                    continue;
                }
                const float* s = x + (b0 + b) * g0.in_sn + sy * g0.in_sh + ic;
                std::fill(d, d + g0.pl, 0.f);
                if (g0.in_sw == 1) std::copy(s, s + cols, d + g0.pl);
                else for (std::int64_t i = 0; i < cols; ++i) d[g0.pl + i] = s[i * g0.in_sw];
                std::fill(d + g0.pl + cols, d + wp, 0.f);
            }
        }
    }
    /// Output row oy of image b of the group in buffer `slot`, at tap offset 0.
    [[nodiscard]] const float* base(std::int64_t b, std::int64_t oy, int slot) const {
        return buf + (slot * group + b) * image + oy * g0.sh * wp;
    }
};

/// conv_narrow_forward under AVX-512 (see conv_planar_avx512).
inline void conv_planar_forward(const conv_geom& g, const float* x, const float* f, float* y,
                                const bias_act_epilogue* epilogue) {
    const int threads = num_threads();
    const bool by_images = narrow_conv::by_images(g, threads);
    const planar_input in(g, x, by_images ? threads : 1);
    const int OC = static_cast<int>(g.oc), vmax = planar_max_vectors(OC);
    const auto& kernels = conv_planar_kernels()[static_cast<std::size_t>(OC - 1)];
    const std::int64_t chunk = 16 * vmax, taps = g.K();
    auto rows = [&](int slot, std::int64_t b0, std::int64_t r0, std::int64_t r1) {
        for (std::int64_t r = r0; r < r1; ++r) {
            const std::int64_t b = r / g.oh, oy = r - b * g.oh;
            const float* src = in.base(b, oy, slot);
            float* out = y + (b0 + b) * g.out_sn + oy * g.out_sh;
            for (std::int64_t ox = 0; ox < g.ow; ox += chunk) {
                const int npx = static_cast<int>(std::min(chunk, g.ow - ox));
                kernels[static_cast<std::size_t>((npx + 15) / 16 - 1)](src + ox, in.tap_off.data(), f, taps, npx,
                                                                       out + ox * OC, epilogue);
            }
        }
    };
    if (by_images) {
        for_image_groups(
            g.n, in.group, threads, [&](int task, std::int64_t b0, std::int64_t nb) { in.fill(b0, 0, nb * in.hp, task); },
            [&](int task, std::int64_t b0, std::int64_t nb) { rows(task, b0, 0, nb * g.oh); });
        return;
    }
    const double row_flops = 2.0 * static_cast<double>(g.ow * g.oc * taps);
    for (std::int64_t b0 = 0; b0 < g.n; b0 += in.group) {
        const std::int64_t nb = std::min(in.group, g.n - b0);
        parallel_for(nb * in.hp, std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(1, in.wp * g.ic)),
                     [&](std::int64_t r0, std::int64_t r1) { in.fill(b0, r0, r1, 0); });
        parallel_for(nb * g.oh, static_cast<std::int64_t>(std::ceil(gemm::detail::kFlopsPerThread / row_flops)),
                     [&](std::int64_t r0, std::int64_t r1) { rows(0, b0, r0, r1); });
    }
}

/// The forward convolution conv_narrow_fits() takes, on AVX-512 (conv_taps_avx512) or AVX2
/// (conv_taps_avx2): the same chunks, spread planes and thread split. `epilogue` (optional: the
/// bias and activation of _FusedConv2D) runs on each output row as soon as it is written, while it
/// is in L1, instead of a second pass over the whole output (LeNet's first layer at batch 128:
/// 2.4 MB).
inline void conv_narrow_forward(const conv_geom& g0, const float* x, const float* f, float* y,
                                const bias_act_epilogue* epilogue = nullptr) {
    if (gemm::active_kernel() == gemm::kernel_isa::avx512) return conv_planar_forward(g0, x, f, y, epilogue);
    const int threads = num_threads();
    const bool by_images = narrow_conv::by_images(g0, threads);
    narrow_conv nc(g0, x, by_images ? threads : 1);
    const conv_geom& g = nc.g;
    const std::int64_t OC = nc.OC, taps = nc.taps, period = nc.period, L = nc.L, out_row = nc.out_row;
    const int lanes = nc.wide ? 16 : 8;
    thread_local gemm::detail::scratch<float> wpat_store;  // 64-byte aligned
    float* const wpat = wpat_store.get(static_cast<std::size_t>(taps * period));
    filter_patterns(f, taps, OC, period, wpat);
    const conv_taps_fn* const by_vectors =
        nc.wide ? conv_taps_kernels(period / 16).data() : conv_taps_kernels_avx2(period / 8);
    // output rows [r0, r1) of the group of images from b0 spread in buffer `slot`
    auto group_rows = [&](int slot, std::int64_t b0, std::int64_t r0, std::int64_t r1) {
        for (std::int64_t r = r0; r < r1; ++r) {
            const std::int64_t b = r / g.oh, oy = r - b * g.oh;
            const float* base = nc.base(b, oy, slot);
            float* out = y + (b0 + b) * g.out_sn + oy * g.out_sh;
            for (std::int64_t j0 = 0; j0 < out_row; j0 += L) {
                const int len = static_cast<int>(std::min(L, out_row - j0));
                by_vectors[(len + lanes - 1) / lanes - 1](base + j0, nc.tap_off.data(), wpat, taps, len, out + j0);
            }
            if (epilogue) epilogue->apply(out, 0, g.ow);
        }
    };
    if (by_images) {
        nc.for_own_images(threads, [&](int task, std::int64_t b0, std::int64_t nb) {
            group_rows(task, b0, 0, nb * g.oh);
        });
        return;
    }
    const double row_flops = 2.0 * static_cast<double>(out_row * taps);
    for (std::int64_t b0 = 0; b0 < g.n; b0 += nc.group) {
        const std::int64_t nb = std::min(nc.group, g.n - b0);
        nc.spread(b0, nb);
        parallel_for(nb * g.oh, static_cast<std::int64_t>(std::ceil(gemm::detail::kFlopsPerThread / row_flops)),
                     [&](std::int64_t r0, std::int64_t r1) { group_rows(0, b0, r0, r1); });
    }
}

// partial[t*L + j] += sum over the `rows` rows r of bases[r][tap_off[t] + j] * dys[r][j], j < len
// <= 16V (lanes past len add zero). Two taps at a time where 2V accumulators fit (V <= 15): each
// vector of dy is loaded once for both; each tap's sum runs over the rows in order either way.
template <int V>
[[gnu::target("avx512f")]] inline void conv_taps_grad_avx512(const float* const* bases, const float* const* dys,
                                                             int rows, const std::int64_t* tap_off, std::int64_t taps,
                                                             int len, float* partial, std::int64_t L) {
    const auto last = static_cast<__mmask16>((1u << (len - 16 * (V - 1))) - 1);
    std::int64_t t = 0;
    if constexpr (V <= 15) {
        for (; t + 2 <= taps; t += 2) {
            __m512 a0[V], a1[V];
#pragma GCC unroll 16
            for (int v = 0; v < V; ++v) a0[v] = _mm512_setzero_ps(), a1[v] = _mm512_setzero_ps();
            for (int r = 0; r < rows; ++r) {
                const float* s0 = bases[r] + tap_off[t];
                const float* s1 = bases[r] + tap_off[t + 1];
                const float* d = dys[r];
#pragma GCC unroll 16
                for (int v = 0; v < V - 1; ++v) {
                    const __m512 dv = _mm512_loadu_ps(d + 16 * v);
                    a0[v] = _mm512_fmadd_ps(_mm512_loadu_ps(s0 + 16 * v), dv, a0[v]);
                    a1[v] = _mm512_fmadd_ps(_mm512_loadu_ps(s1 + 16 * v), dv, a1[v]);
                }
                const __m512 dv = _mm512_maskz_loadu_ps(last, d + 16 * (V - 1));
                a0[V - 1] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(last, s0 + 16 * (V - 1)), dv, a0[V - 1]);
                a1[V - 1] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(last, s1 + 16 * (V - 1)), dv, a1[V - 1]);
            }
            float* p0 = partial + t * L;
            float* p1 = p0 + L;
#pragma GCC unroll 16
            for (int v = 0; v < V; ++v) {
                _mm512_storeu_ps(p0 + 16 * v, _mm512_add_ps(_mm512_loadu_ps(p0 + 16 * v), a0[v]));
                _mm512_storeu_ps(p1 + 16 * v, _mm512_add_ps(_mm512_loadu_ps(p1 + 16 * v), a1[v]));
            }
        }
    }
    for (; t < taps; ++t) {
        __m512 acc[V];
#pragma GCC unroll 16
        for (int v = 0; v < V; ++v) acc[v] = _mm512_setzero_ps();
        for (int r = 0; r < rows; ++r) {
            const float* src = bases[r] + tap_off[t];
            const float* d = dys[r];
#pragma GCC unroll 16
            for (int v = 0; v < V - 1; ++v)
                acc[v] = _mm512_fmadd_ps(_mm512_loadu_ps(src + 16 * v), _mm512_loadu_ps(d + 16 * v), acc[v]);
            acc[V - 1] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(last, src + 16 * (V - 1)),
                                         _mm512_maskz_loadu_ps(last, d + 16 * (V - 1)), acc[V - 1]);
        }
        float* pt = partial + t * L;
#pragma GCC unroll 16
        for (int v = 0; v < V; ++v) _mm512_storeu_ps(pt + 16 * v, _mm512_add_ps(_mm512_loadu_ps(pt + 16 * v), acc[v]));
    }
}

/// The AVX2 sibling of conv_taps_grad_avx512 (len <= 8V, V <= 12; the tail through maskload): two
/// taps at a time where 2V accumulators and a dy vector fit in the 16 ymm registers (V <= 7), else one.
template <int V>
[[gnu::target("avx2,fma")]] inline void conv_taps_grad_avx2(const float* const* bases, const float* const* dys,
                                                            int rows, const std::int64_t* tap_off, std::int64_t taps,
                                                            int len, float* partial, std::int64_t L) {
    const __m256i last = arch::first_lanes_avx2(len - 8 * (V - 1));
    std::int64_t t = 0;
    if constexpr (V <= 7) {
        for (; t + 2 <= taps; t += 2) {
            __m256 a0[V], a1[V];
#pragma GCC unroll 16
            for (int v = 0; v < V; ++v) a0[v] = _mm256_setzero_ps(), a1[v] = _mm256_setzero_ps();
            for (int r = 0; r < rows; ++r) {
                const float* s0 = bases[r] + tap_off[t];
                const float* s1 = bases[r] + tap_off[t + 1];
                const float* d = dys[r];
#pragma GCC unroll 16
                for (int v = 0; v < V - 1; ++v) {
                    const __m256 dv = _mm256_loadu_ps(d + 8 * v);
                    a0[v] = _mm256_fmadd_ps(_mm256_loadu_ps(s0 + 8 * v), dv, a0[v]);
                    a1[v] = _mm256_fmadd_ps(_mm256_loadu_ps(s1 + 8 * v), dv, a1[v]);
                }
                const __m256 dv = _mm256_maskload_ps(d + 8 * (V - 1), last);
                a0[V - 1] = _mm256_fmadd_ps(_mm256_maskload_ps(s0 + 8 * (V - 1), last), dv, a0[V - 1]);
                a1[V - 1] = _mm256_fmadd_ps(_mm256_maskload_ps(s1 + 8 * (V - 1), last), dv, a1[V - 1]);
            }
            float* p0 = partial + t * L;
            float* p1 = p0 + L;
#pragma GCC unroll 16
            for (int v = 0; v < V; ++v) {
                _mm256_storeu_ps(p0 + 8 * v, _mm256_add_ps(_mm256_loadu_ps(p0 + 8 * v), a0[v]));
                _mm256_storeu_ps(p1 + 8 * v, _mm256_add_ps(_mm256_loadu_ps(p1 + 8 * v), a1[v]));
            }
        }
    }
    for (; t < taps; ++t) {
        __m256 acc[V];
#pragma GCC unroll 16
        for (int v = 0; v < V; ++v) acc[v] = _mm256_setzero_ps();
        for (int r = 0; r < rows; ++r) {
            const float* src = bases[r] + tap_off[t];
            const float* d = dys[r];
#pragma GCC unroll 16
            for (int v = 0; v < V - 1; ++v)
                acc[v] = _mm256_fmadd_ps(_mm256_loadu_ps(src + 8 * v), _mm256_loadu_ps(d + 8 * v), acc[v]);
            acc[V - 1] = _mm256_fmadd_ps(_mm256_maskload_ps(src + 8 * (V - 1), last),
                                         _mm256_maskload_ps(d + 8 * (V - 1), last), acc[V - 1]);
        }
        float* pt = partial + t * L;
#pragma GCC unroll 16
        for (int v = 0; v < V; ++v) _mm256_storeu_ps(pt + 8 * v, _mm256_add_ps(_mm256_loadu_ps(pt + 8 * v), acc[v]));
    }
}

/// The filter gradient of a convolution conv_narrow_fits() takes: df[t][c] is the sum over output
/// rows of the spread input's run for tap t times the row of dy, over the lanes of channel c. Each
/// thread sums its rows (eight at a time per tap) into its own partial rows; the partials are added
/// in thread order (the result depends on the thread count, as the GEMM path's does).
/// On AVX-512 (conv_taps_grad_avx512) or AVX2 (conv_taps_grad_avx2).
inline void conv_narrow_filter_grad(const conv_geom& g0, const float* x, const float* dy, float* df) {
    const double flops = 2.0 * static_cast<double>(g0.n * g0.oh * g0.ow * g0.oc * g0.K());
    const int tasks = static_cast<int>(std::clamp<double>(flops / gemm::detail::kFlopsPerThread, 1.0, num_threads()));
    const bool by_images = narrow_conv::by_images(g0, tasks);
    narrow_conv nc(g0, x, by_images ? tasks : 1);
    const conv_geom& g = nc.g;
    const std::int64_t OC = nc.OC, taps = nc.taps, L = nc.L, out_row = nc.out_row;
    using grad_fn = void (*)(const float* const*, const float* const*, int, const std::int64_t*, std::int64_t, int,
                             float*, std::int64_t);
    static constexpr grad_fn by_vectors[16] = {
        conv_taps_grad_avx512<1>,  conv_taps_grad_avx512<2>,  conv_taps_grad_avx512<3>,  conv_taps_grad_avx512<4>,
        conv_taps_grad_avx512<5>,  conv_taps_grad_avx512<6>,  conv_taps_grad_avx512<7>,  conv_taps_grad_avx512<8>,
        conv_taps_grad_avx512<9>,  conv_taps_grad_avx512<10>, conv_taps_grad_avx512<11>, conv_taps_grad_avx512<12>,
        conv_taps_grad_avx512<13>, conv_taps_grad_avx512<14>, conv_taps_grad_avx512<15>, conv_taps_grad_avx512<16>};
    static constexpr grad_fn by_vectors_avx2[12] = {
        conv_taps_grad_avx2<1>, conv_taps_grad_avx2<2>, conv_taps_grad_avx2<3>,  conv_taps_grad_avx2<4>,
        conv_taps_grad_avx2<5>, conv_taps_grad_avx2<6>, conv_taps_grad_avx2<7>,  conv_taps_grad_avx2<8>,
        conv_taps_grad_avx2<9>, conv_taps_grad_avx2<10>, conv_taps_grad_avx2<11>, conv_taps_grad_avx2<12>};
    const grad_fn* const kernels = nc.wide ? by_vectors : by_vectors_avx2;
    const int lanes = nc.wide ? 16 : 8;
    std::vector<float> partial(static_cast<std::size_t>(tasks * taps * L), 0.f);
    constexpr int kRows = 8;
    // task's sums over output rows [r_begin, r_end) of the group of images from b0 in buffer `slot`
    auto group_rows = [&](int task, int slot, std::int64_t b0, std::int64_t r_begin, std::int64_t r_end) {
        float* part = partial.data() + task * taps * L;
        const float* bases[kRows];
        const float* dys[kRows];
        for (std::int64_t r0 = r_begin; r0 < r_end; r0 += kRows) {
            const int n = static_cast<int>(std::min<std::int64_t>(kRows, r_end - r0));
            for (std::int64_t j0 = 0; j0 < out_row; j0 += L) {
                for (int k = 0; k < n; ++k) {
                    const std::int64_t b = (r0 + k) / g.oh, oy = (r0 + k) - b * g.oh;
                    bases[k] = nc.base(b, oy, slot) + j0;
                    dys[k] = dy + (b0 + b) * g.out_sn + oy * g.out_sh + j0;
                }
                const int len = static_cast<int>(std::min(L, out_row - j0));
                kernels[(len + lanes - 1) / lanes - 1](bases, dys, n, nc.tap_off.data(), taps, len, part, L);
            }
        }
    };
    if (by_images) {
        nc.for_own_images(tasks, [&](int task, std::int64_t b0, std::int64_t nb) {
            group_rows(task, task, b0, 0, nb * g.oh);
        });
    } else {
        for (std::int64_t b0 = 0; b0 < g.n; b0 += nc.group) {
            const std::int64_t nb = std::min(nc.group, g.n - b0), rows = nb * g.oh;
            nc.spread(b0, nb);
            run_tasks(tasks, [&](int task) { group_rows(task, 0, b0, rows * task / tasks, rows * (task + 1) / tasks); });
        }
    }
    for (std::int64_t t = 0; t < taps; ++t)
        for (std::int64_t c = 0; c < OC; ++c) {
            float sum = 0.f;
            for (int task = 0; task < tasks; ++task) {
                const float* pt = partial.data() + (task * taps + t) * L;
                for (std::int64_t j = c; j < L; j += OC) sum += pt[j];
            }
            df[t * OC + c] = sum;
        }
}

}  // namespace graft::ops::nn_detail
#endif  // GRAFT_X86_DISPATCH
