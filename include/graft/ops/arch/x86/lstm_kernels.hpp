// graft/ops/arch/x86/lstm_kernels.hpp — the AVX2 + FMA and AVX-512 gate loops of the LSTM cell (forward and backward): the x86
// half of graft/ops/lstm_kernels.hpp, chosen at run time there ([[gnu::target]], ops/arch/x86/cpu.hpp); empty where
// GRAFT_X86_DISPATCH is not set.
// Internal: graft/ops/lstm_kernels.hpp includes it after gate_config and gates_backward_body, which it uses.
#pragma once

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <utility>

#include "graft/ops/arch/x86/cpu.hpp"

#ifdef GRAFT_X86_DISPATCH
namespace graft::ops::lstm_kernels::detail {

// The lane operations the gate loops use, for 8 lanes (AVX2 + FMA) and 16 (AVX-512F), by overload:
// lstm_gates_simd.inc writes each loop once over them and is included once per width, so the two
// widths run the same operations in the same order (the same bits per lane, a NaN's sign aside).
#define GRAFT_LSTM_OP8 [[gnu::target("avx2,fma"), gnu::always_inline]] inline
#define GRAFT_LSTM_OP16 [[gnu::target("avx512f"), gnu::always_inline]] inline
GRAFT_LSTM_OP8 __m256 v_add(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }
GRAFT_LSTM_OP8 __m256 v_sub(__m256 a, __m256 b) { return _mm256_sub_ps(a, b); }
GRAFT_LSTM_OP8 __m256 v_mul(__m256 a, __m256 b) { return _mm256_mul_ps(a, b); }
GRAFT_LSTM_OP8 __m256 v_div(__m256 a, __m256 b) { return _mm256_div_ps(a, b); }
GRAFT_LSTM_OP8 __m256 v_fmadd(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
GRAFT_LSTM_OP8 __m256 v_fnmadd(__m256 a, __m256 b, __m256 c) { return _mm256_fnmadd_ps(a, b, c); }
GRAFT_LSTM_OP8 __m256 v_min(__m256 a, __m256 b) { return _mm256_min_ps(a, b); }
GRAFT_LSTM_OP8 __m256 v_max(__m256 a, __m256 b) { return _mm256_max_ps(a, b); }
/// 2^n for an integral n in [-126, 127], given n and t = n + 1.5 * 2^23 (n in t's low mantissa bits:
/// the exponent field is (bits(t) + 127) << 23, 1.5 * 2^23's own bits shifted out)
GRAFT_LSTM_OP8 __m256 v_pow2(__m256 t, __m256) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(127)), 23));
}
/// p * 2^n (exact: p and the product normal), t and n as for v_pow2
GRAFT_LSTM_OP8 __m256 v_mul_pow2(__m256 p, __m256 t, __m256 n) { return _mm256_mul_ps(p, v_pow2(t, n)); }
GRAFT_LSTM_OP8 __m256 v_abs(__m256 x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.f), x); }
/// m (<= 0) negated where x's sign bit is clear
GRAFT_LSTM_OP8 __m256 v_xor_sign_of_nonnegative(__m256 m, __m256 x) {
    return _mm256_xor_ps(m, _mm256_andnot_ps(x, _mm256_set1_ps(-0.f)));
}
GRAFT_LSTM_OP8 __m256 v_set(__m256, float v) { return _mm256_set1_ps(v); }
GRAFT_LSTM_OP8 __m256 v_load(__m256, const float* p) { return _mm256_loadu_ps(p); }
GRAFT_LSTM_OP8 void v_store(float* p, __m256 v) { _mm256_storeu_ps(p, v); }

// GCC 12's _mm512_undefined_ps / _mm512_undefined_epi32 (the unused pass-through of the unmasked
// min, max, and, or) is a self-initialised variable, which -Wmaybe-uninitialized reports in every
// function these inline into: off from here to the 16-lane loops' end.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
GRAFT_LSTM_OP16 __m512 v_add(__m512 a, __m512 b) { return _mm512_add_ps(a, b); }
GRAFT_LSTM_OP16 __m512 v_sub(__m512 a, __m512 b) { return _mm512_sub_ps(a, b); }
GRAFT_LSTM_OP16 __m512 v_mul(__m512 a, __m512 b) { return _mm512_mul_ps(a, b); }
GRAFT_LSTM_OP16 __m512 v_div(__m512 a, __m512 b) { return _mm512_div_ps(a, b); }
GRAFT_LSTM_OP16 __m512 v_fmadd(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
GRAFT_LSTM_OP16 __m512 v_fnmadd(__m512 a, __m512 b, __m512 c) { return _mm512_fnmadd_ps(a, b, c); }
GRAFT_LSTM_OP16 __m512 v_min(__m512 a, __m512 b) { return _mm512_min_ps(a, b); }
GRAFT_LSTM_OP16 __m512 v_max(__m512 a, __m512 b) { return _mm512_max_ps(a, b); }
// by vscalefps, one operation where the 8-lane form takes two or three: the same values (exact powers
// of two, products in the normal range)
GRAFT_LSTM_OP16 __m512 v_pow2(__m512, __m512 n) { return _mm512_scalef_ps(_mm512_set1_ps(1.f), n); }
GRAFT_LSTM_OP16 __m512 v_mul_pow2(__m512 p, __m512, __m512 n) { return _mm512_scalef_ps(p, n); }
GRAFT_LSTM_OP16 __m512 v_abs(__m512 x) {
    return _mm512_castsi512_ps(_mm512_andnot_epi32(_mm512_set1_epi32(INT32_MIN), _mm512_castps_si512(x)));
}
GRAFT_LSTM_OP16 __m512 v_xor_sign_of_nonnegative(__m512 m, __m512 x) {
    const __m512i flip = _mm512_andnot_epi32(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN));
    return _mm512_castsi512_ps(_mm512_xor_epi32(_mm512_castps_si512(m), flip));
}
GRAFT_LSTM_OP16 __m512 v_set(__m512, float v) { return _mm512_set1_ps(v); }
GRAFT_LSTM_OP16 __m512 v_load(__m512, const float* p) { return _mm512_loadu_ps(p); }
GRAFT_LSTM_OP16 void v_store(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
#undef GRAFT_LSTM_OP8
#undef GRAFT_LSTM_OP16

#define GRAFT_LSTM_TARGET "avx2,fma"
#define GRAFT_LSTM_V __m256
#define GRAFT_LSTM_LANES 8
#define GRAFT_LSTM_UNROLL 2
#define GRAFT_LSTM_NAME(f) f##_avx2
#include "graft/ops/arch/x86/lstm_gates_simd.inc"

#define GRAFT_LSTM_TARGET "avx512f"
#define GRAFT_LSTM_V __m512
#define GRAFT_LSTM_LANES 16
#define GRAFT_LSTM_UNROLL 2
#define GRAFT_LSTM_NAME(f) f##_avx512
#include "graft/ops/arch/x86/lstm_gates_simd.inc"
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

}  // namespace graft::ops::lstm_kernels::detail
#endif  // GRAFT_X86_DISPATCH
