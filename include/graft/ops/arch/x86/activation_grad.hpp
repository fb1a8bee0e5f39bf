// graft/ops/arch/x86/activation_grad.hpp — the AVX-512 and AVX2 ReluGrad loops: the x86 half of graft/ops/activation_grad.hpp,
// chosen at run time there ([[gnu::target]], ops/arch/x86/cpu.hpp); empty where GRAFT_X86_DISPATCH is not set.
// Internal: include graft/ops/activation_grad.hpp.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>

#include "graft/ops/arch/x86/cpu.hpp"

#ifdef GRAFT_X86_DISPATCH
namespace graft::ops::op_detail {

// ReluGrad: o = a where b > 0, else +0 (b NaN gives 0, as the Eigen select).
[[gnu::target("avx512f")]] inline void relu_grad_avx512(const float* a, const float* b, float* o, std::int64_t n) {
    const __m512 zero = _mm512_setzero_ps();
    std::int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __mmask16 pos = _mm512_cmp_ps_mask(_mm512_loadu_ps(b + i), zero, _CMP_GT_OQ);
        _mm512_storeu_ps(o + i, _mm512_maskz_loadu_ps(pos, a + i));
    }
    if (i < n) {
        const auto m = static_cast<__mmask16>((1u << (n - i)) - 1);
        const __mmask16 pos = _mm512_mask_cmp_ps_mask(m, _mm512_maskz_loadu_ps(m, b + i), zero, _CMP_GT_OQ);
        _mm512_mask_storeu_ps(o + i, m, _mm512_maskz_loadu_ps(pos, a + i));
    }
}

// The AVX2 sibling: the compare's lanes AND a (a -0 where b > 0 stays -0, as the select), the tail
// one float at a time.
[[gnu::target("avx2")]] inline void relu_grad_avx2(const float* a, const float* b, float* o, std::int64_t n) {
    const __m256 zero = _mm256_setzero_ps();
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(o + i, _mm256_and_ps(_mm256_cmp_ps(_mm256_loadu_ps(b + i), zero, _CMP_GT_OQ), _mm256_loadu_ps(a + i)));
    for (; i < n; ++i) o[i] = b[i] > 0.f ? a[i] : 0.f;
}

}  // namespace graft::ops::op_detail
#endif  // GRAFT_X86_DISPATCH
