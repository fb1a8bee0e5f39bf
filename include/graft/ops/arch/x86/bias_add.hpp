// graft/ops/arch/x86/bias_add.hpp — the AVX2 and AVX-512 bias + activation loops (BiasAdd and the fused MatMul/Conv2D
// epilogues): the x86 half of graft/ops/bias_add.hpp, chosen at run time there ([[gnu::target]],
// ops/arch/x86/cpu.hpp); empty where GRAFT_X86_DISPATCH is not set.
// Internal: graft/ops/bias_add.hpp includes it after bias_activation, which it uses.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>

#include "graft/ops/arch/x86/cpu.hpp"

#ifdef GRAFT_X86_DISPATCH
namespace graft::ops::op_detail {

// The activation on 16 lanes: the GEMM's AVX-512 stores apply the same one (gemm::detail::act_avx512,
// ops/arch/x86/gemm_kernels.hpp), so a bias and activation fused there gives these bits.
template <bias_activation Act>
[[gnu::target("avx512f")]] inline __m512 bias_act_avx512(__m512 v, __m512 alpha) {
    return gemm::detail::act_avx512<static_cast<int>(Act)>(v, alpha);
}
// p[i] = act(p[i] + b[i]) for i < n.
template <bias_activation Act>
[[gnu::target("avx512f")]] inline void bias_act_run_avx512(float* p, const float* b, std::int64_t n, __m512 alpha) {
    std::int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(p + i, bias_act_avx512<Act>(_mm512_add_ps(_mm512_loadu_ps(p + i), _mm512_loadu_ps(b + i)), alpha));
    if (i < n) {
        const auto m = static_cast<__mmask16>((1u << (n - i)) - 1);
        const __m512 v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, p + i), _mm512_maskz_loadu_ps(m, b + i));
        _mm512_mask_storeu_ps(p + i, m, bias_act_avx512<Act>(v, alpha));
    }
}
// Rows [r0, r1) of y [*, C]: the bias as a pattern of `period` floats (a multiple of 16 and of C)
// that repeats every period / C rows, or, for wide rows (pattern null), row by row.
template <bias_activation Act>
[[gnu::target("avx512f")]] inline void bias_act_rows_avx512(float* y, std::int64_t r0, std::int64_t r1, std::int64_t C,
                                                           const float* bias, const float* pattern,
                                                           std::int64_t period, float alpha_s) {
    const __m512 alpha = _mm512_set1_ps(alpha_s);
    if (!pattern) {
        for (std::int64_t r = r0; r < r1; ++r) bias_act_run_avx512<Act>(y + r * C, bias, C, alpha);
        return;
    }
    const std::int64_t rows_per = period / C;  // r0 is a multiple of it
    for (std::int64_t r = r0; r < r1; r += rows_per)
        bias_act_run_avx512<Act>(y + r * C, pattern, std::min(r1 - r, rows_per) * C, alpha);
}

// The AVX2 sibling of the three above: 8 lanes, the same values (NaN put back after max, -0 -> +0,
// LeakyRelu by compare-and-blend), the tail of a run through bias_act_one. Before it, AVX2 CPUs
// ran the fused epilogue one float at a time through a switch: 14% of the MLP's forward at batch
// 128 on the AVX2 EPYC.
template <bias_activation Act>
[[gnu::target("avx2")]] inline __m256 bias_act_avx2(__m256 v, __m256 alpha) {
    return gemm::detail::act_avx2<static_cast<int>(Act)>(v, alpha);  // the GEMM's AVX2 stores' too
}
template <bias_activation Act>
[[gnu::target("avx2")]] inline void bias_act_run_avx2(float* p, const float* b, std::int64_t n, __m256 alpha,
                                                       float alpha_s) {
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(p + i, bias_act_avx2<Act>(_mm256_add_ps(_mm256_loadu_ps(p + i), _mm256_loadu_ps(b + i)), alpha));
    for (; i < n; ++i) p[i] = bias_act_one(p[i] + b[i], Act, alpha_s);
}
template <bias_activation Act>
[[gnu::target("avx2")]] inline void bias_act_rows_avx2(float* y, std::int64_t r0, std::int64_t r1, std::int64_t C,
                                                        const float* bias, const float* pattern, std::int64_t period,
                                                        float alpha_s) {
    const __m256 alpha = _mm256_set1_ps(alpha_s);
    if (!pattern) {
        for (std::int64_t r = r0; r < r1; ++r) bias_act_run_avx2<Act>(y + r * C, bias, C, alpha, alpha_s);
        return;
    }
    const std::int64_t rows_per = period / C;  // r0 is a multiple of it
    for (std::int64_t r = r0; r < r1; r += rows_per)
        bias_act_run_avx2<Act>(y + r * C, pattern, std::min(r1 - r, rows_per) * C, alpha, alpha_s);
}

}  // namespace graft::ops::op_detail
#endif  // GRAFT_X86_DISPATCH
