// graft/ops/arch/x86/lstm_kernels.hpp — the AVX2 + FMA gate loops of the LSTM cell (forward and backward): the x86
// half of graft/ops/lstm_kernels.hpp, chosen at run time there ([[gnu::target]], ops/arch/x86/cpu.hpp); empty where
// GRAFT_X86_DISPATCH is not set.
// Internal: graft/ops/lstm_kernels.hpp includes it after gate_config and gates_backward_body, which it uses.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>

#include "graft/ops/arch/x86/cpu.hpp"

#ifdef GRAFT_X86_DISPATCH
namespace graft::ops::lstm_kernels::detail {

/// exp(x) for 8 floats; x clamped to [-87.3, 88] (results stay normal and finite), NaN kept.
[[gnu::target("avx2,fma")]] inline __m256 exp8(__m256 x) {
    x = _mm256_min_ps(_mm256_set1_ps(88.f), _mm256_max_ps(_mm256_set1_ps(-87.3f), x));  // NaN: the second operand
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    // r = x - n ln2, ln2 split in a part exact in n's product and the rest
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    // exp(r) = sum r^k / k!, k <= 7 (|r| <= 0.347: the next term is below 6e-9 relative)
    __m256 p = _mm256_set1_ps(1.f / 5040.f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f / 720.f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f / 120.f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f / 24.f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f / 6.f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}
[[gnu::target("avx2,fma")]] inline __m256 sigmoid8(__m256 x) {
    const __m256 one = _mm256_set1_ps(1.f);
    return _mm256_div_ps(one, _mm256_add_ps(one, exp8(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}
[[gnu::target("avx2,fma")]] inline __m256 tanh8(__m256 x) {
    const __m256 sign = _mm256_set1_ps(-0.f);
    const __m256 ax = _mm256_andnot_ps(sign, x);
    const __m256 one = _mm256_set1_ps(1.f);
    const __m256 e = exp8(_mm256_mul_ps(ax, _mm256_set1_ps(-2.f)));
    const __m256 big = _mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e));
    // |x| < 0.3: x - x^3/3 + 2x^5/15 - 17x^7/315 + 62x^9/2835 (next term below 6e-8 relative)
    const __m256 x2 = _mm256_mul_ps(ax, ax);
    __m256 q = _mm256_set1_ps(62.f / 2835.f);
    q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(-17.f / 315.f));
    q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(2.f / 15.f));
    q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(-1.f / 3.f));
    const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(q, x2), ax, ax);
    const __m256 t = _mm256_blendv_ps(big, small, _mm256_cmp_ps(ax, _mm256_set1_ps(0.3f), _CMP_LT_OQ));
    return _mm256_or_ps(t, _mm256_and_ps(sign, x));  // NaN stays NaN through big
}

[[gnu::target("avx2,fma")]] inline void gates_forward_avx2(std::int64_t H, const gate_config& p, const float* g,
                                                           const float* b, const float* cs_prev, const float* wci,
                                                           const float* wcf, const float* wco,
                                                           const out_rows<float>& r) {
    const __m256 fb = _mm256_set1_ps(static_cast<float>(p.forget_bias));
    const __m256 hi = _mm256_set1_ps(static_cast<float>(p.cell_clip)), lo = _mm256_set1_ps(-static_cast<float>(p.cell_clip));
    const bool clip = p.cell_clip > 0;
    std::int64_t j = 0;
    for (; j + 8 <= H; j += 8) {
        const __m256 cp = _mm256_loadu_ps(cs_prev + j);
        __m256 gi = _mm256_add_ps(_mm256_loadu_ps(g + p.off_i + j), _mm256_loadu_ps(b + p.off_i + j));
        __m256 gf = _mm256_add_ps(_mm256_add_ps(_mm256_loadu_ps(g + p.off_f + j), _mm256_loadu_ps(b + p.off_f + j)), fb);
        __m256 go = _mm256_add_ps(_mm256_loadu_ps(g + p.off_o + j), _mm256_loadu_ps(b + p.off_o + j));
        const __m256 gc = _mm256_add_ps(_mm256_loadu_ps(g + p.off_c + j), _mm256_loadu_ps(b + p.off_c + j));
        if (p.use_peephole) {
            gi = _mm256_fmadd_ps(cp, _mm256_loadu_ps(wci + j), gi);
            gf = _mm256_fmadd_ps(cp, _mm256_loadu_ps(wcf + j), gf);
        }
        const __m256 i = sigmoid8(gi), ci = tanh8(gc), f = sigmoid8(gf);
        // i*ci + f*cp as two rounded products and a sum, like the scalar rows
        __m256 c = _mm256_add_ps(_mm256_mul_ps(i, ci), _mm256_mul_ps(f, cp));
        if (clip) c = _mm256_min_ps(hi, _mm256_max_ps(lo, c));
        const __m256 co = tanh8(c);
        if (p.use_peephole) go = _mm256_fmadd_ps(c, _mm256_loadu_ps(wco + j), go);
        const __m256 o = sigmoid8(go);
        _mm256_storeu_ps(r.i + j, i);
        _mm256_storeu_ps(r.ci + j, ci);
        _mm256_storeu_ps(r.f + j, f);
        _mm256_storeu_ps(r.cs + j, c);
        _mm256_storeu_ps(r.co + j, co);
        _mm256_storeu_ps(r.o + j, o);
        _mm256_storeu_ps(r.h + j, _mm256_mul_ps(o, co));
    }
    gates_forward_scalar<float>(j, H, p, g, b, cs_prev, wci, wcf, wco, r);
}

template <bool Peephole>
[[gnu::target("avx2,fma")]] inline void gates_backward_avx2(std::int64_t H, const gate_config& p, const float* cs_prev,
                                                            const float* wci, const float* wcf, const float* wco,
                                                            const float* i, const float* cs, const float* f,
                                                            const float* o, const float* ci, const float* co,
                                                            const float* dcs_in, const float* dh, float* dg,
                                                            float* cs_prev_grad, float* wci_g, float* wcf_g,
                                                            float* wco_g) {
    gates_backward_body<float, Peephole>(H, p, cs_prev, wci, wcf, wco, i, cs, f, o, ci, co, dcs_in, dh, dg,
                                         cs_prev_grad, wci_g, wcf_g, wco_g);
}

}  // namespace graft::ops::lstm_kernels::detail
#endif  // GRAFT_X86_DISPATCH
