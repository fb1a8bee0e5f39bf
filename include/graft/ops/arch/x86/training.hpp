// graft/ops/arch/x86/training.hpp — the AVX2 loop of ApplyGradientDescent: the x86 half of
// graft/ops/training.hpp, chosen at run time there ([[gnu::target]], ops/arch/x86/cpu.hpp); empty
// where GRAFT_X86_DISPATCH is not set. Internal: include graft/ops/training.hpp.
#pragma once

#include <cstdint>

#include "graft/ops/arch/x86/cpu.hpp"

#ifdef GRAFT_X86_DISPATCH
namespace graft::ops::nn_detail {

// var = var - delta * alpha, a multiply then a subtract as Eigen's `var -= delta * alpha` (no
// FMA: the "avx2" target has none, so the bits are Eigen's). Eigen's executor ran it with SSE in
// the baseline build: 217 us for the MLP's 784x512 kernel on 2 threads, 8% of its training step.
// AVX-512 machines run it too (the loop is bound by memory, not by the vector width).
[[gnu::target("avx2")]] inline void apply_gradient_descent_avx2(float* var, const float* delta, float alpha,
                                                                std::int64_t n) {
    const __m256 a = _mm256_set1_ps(alpha);
    std::int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 d0 = _mm256_mul_ps(_mm256_loadu_ps(delta + i), a);
        const __m256 d1 = _mm256_mul_ps(_mm256_loadu_ps(delta + i + 8), a);
        _mm256_storeu_ps(var + i, _mm256_sub_ps(_mm256_loadu_ps(var + i), d0));
        _mm256_storeu_ps(var + i + 8, _mm256_sub_ps(_mm256_loadu_ps(var + i + 8), d1));
    }
    for (; i < n; ++i) {
        const float d = delta[i] * alpha;
        var[i] = var[i] - d;
    }
}

}  // namespace graft::ops::nn_detail
#endif  // GRAFT_X86_DISPATCH
