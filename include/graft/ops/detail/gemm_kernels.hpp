// graft/ops/detail/gemm_kernels.hpp — which micro-kernel family runs: the CPU's best (arch/x86/cpu.hpp)
// under GRAFT_MAX_CPU_ISA and limit_kernel(). Internal: include graft/ops/gemm.hpp.
#pragma once

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "graft/ops/arch/x86/cpu.hpp"
#include "graft/ops/arch/x86/gemm_kernels.hpp"
#include "graft/ops/detail/gemm_tile.hpp"

namespace graft::ops::gemm {

/// The micro-kernel families, slowest first.
enum class kernel_isa : int { portable = 0, avx2 = 1, avx512 = 2 };

namespace detail {
using arch::cpu_has_avx2_fma;
using arch::cpu_has_avx512f;

/// The cap GRAFT_MAX_CPU_ISA sets at start-up ("portable", "avx2" or "avx512", any case; unset:
/// avx512, the CPU deciding), so a developer on an AVX-512 machine can run everything on the AVX2
/// kernels an AVX2 user gets, as ONEDNN_MAX_CPU_ISA does for oneDNN. Another value is reported on
/// stderr once and ignored.
inline int isa_cap_from_env() {
    const char* e = std::getenv("GRAFT_MAX_CPU_ISA");
    if (e == nullptr || *e == '\0') return static_cast<int>(kernel_isa::avx512);
    std::string v(e);
    for (char& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (v == "portable" || v == "none") return static_cast<int>(kernel_isa::portable);
    if (v == "avx2") return static_cast<int>(kernel_isa::avx2);
    if (v == "avx512" || v == "avx512f" || v == "avx512_core") return static_cast<int>(kernel_isa::avx512);
    std::fprintf(stderr, "graft: GRAFT_MAX_CPU_ISA=%s is not one of portable, avx2, avx512: ignored\n", e);
    return static_cast<int>(kernel_isa::avx512);
}
/// The best family run() may use (GRAFT_MAX_CPU_ISA, then limit_kernel()); what it uses is also
/// bounded by the CPU.
inline std::atomic<int>& isa_cap() {
    static std::atomic<int> cap{isa_cap_from_env()};
    return cap;
}
/// The family run() uses now.
inline kernel_isa active_isa() {
    const int cap = isa_cap().load();
    if (cap >= static_cast<int>(kernel_isa::avx512) && cpu_has_avx512f()) return kernel_isa::avx512;
    if (cap >= static_cast<int>(kernel_isa::avx2) && cpu_has_avx2_fma()) return kernel_isa::avx2;
    return kernel_isa::portable;
}
}  // namespace detail

}  // namespace graft::ops::gemm
