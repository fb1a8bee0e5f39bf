// graft/ops/arch/x86/cpu.hpp — what this x86 CPU runs, asked at run time: every SIMD kernel of
// ops/ (under ops/arch/x86/) is compiled whatever flags the program was built with ([[gnu::target]])
// and chosen by these answers, so one binary serves AVX2-only and AVX-512 machines alike.
// GRAFT_X86_DISPATCH is 1 where such kernels exist (x86-64 with g++ or clang); elsewhere only the
// portable C++ paths are compiled and both answers are false.
//
//   if (graft::ops::arch::cpu_has_avx512f()) { /* 16-lane path */ }
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define GRAFT_X86_DISPATCH 1
#endif

namespace graft::ops::arch {

#ifdef GRAFT_X86_DISPATCH
/// AVX2 and FMA (what the 8-lane kernels need). Never throws.
inline bool cpu_has_avx2_fma() {
    static const bool has = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }();
    return has;
}
/// AVX-512F (with AVX2 and FMA). Never throws.
inline bool cpu_has_avx512f() {
    static const bool has = [] {
        __builtin_cpu_init();
        return cpu_has_avx2_fma() && __builtin_cpu_supports("avx512f");
    }();
    return has;
}
/// The lanes [0, n) of an 8-lane vector, 0 <= n <= 8, as AVX2's maskload / maskstore take them (no
/// mask registers: the sign bit of each 32-bit lane picks it).
[[gnu::target("avx2")]] inline __m256i first_lanes_avx2(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#else
inline bool cpu_has_avx2_fma() { return false; }
inline bool cpu_has_avx512f() { return false; }
#endif

}  // namespace graft::ops::arch
