// graft/ops/gemm.hpp — the matrix-product engine under MatMul, BatchMatMulV2 and the Conv2D family.
//
// BLIS-style blocking (KC x NC panels of B, MC x KC blocks of A, a 6x16 register tile), a micro-kernel
// picked at run time whatever flags the program was built with (AVX-512F: two 6-row A panels by two
// 16-column B panels, a 12x32 tile in 24 zmm registers, 12x16 at the edges; AVX2 + FMA: 6x16 in 12
// ymm; portable C++ otherwise) and
// operands given as *panel sources*, so a convolution packs its im2col panels straight from the
// input without building the im2col matrix:
//
//   graft::ops::gemm::matrix_source<float> a{A, K, 1, M}, b{B, 1, N, N};   // A [M,K] and B [K,N], row-major
//   graft::ops::gemm::run(M, N, K, a, b, C, N, 1, false);           // C [M,N] = A * B
//
// A source packs outer indices [o0, o0+R) by depth [k0, k0+kc) as dst[k*R + r], zero past extent().
#pragma once

#include "graft/core/config.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "graft/core/threads.hpp"
#include "graft/ops/nn_util.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define GRAFT_GEMM_X86_DISPATCH 1
#endif

namespace graft::ops::gemm {

inline constexpr int mr = 6;                    ///< rows of the register tile
inline constexpr int nr = 16;                   ///< columns of the register tile
inline constexpr std::int64_t kc_block = 320;   ///< depth of a packed panel
inline constexpr std::int64_t mc_block = 96;    ///< rows of a packed A block (multiple of mr)
inline constexpr std::int64_t nc_block = 3072;  ///< columns of a packed B block (multiple of nr)

/// A dense strided matrix as a panel source: element (outer o, depth k) is data[o*outer_stride +
/// k*depth_stride]. For C = A*B, A is {A, lda, 1, M} (row-major) and B is {B, 1, ldb, N}.
template <class T>
struct matrix_source {
    const T* data = nullptr;
    std::int64_t outer_stride = 0;
    std::int64_t depth_stride = 0;
    std::int64_t outer_extent = 0;

    [[nodiscard]] std::int64_t extent() const { return outer_extent; }
    // The indirect interface (see indirect_source): row o is data + o*outer_stride, depth step depth_stride.
    // Reading A in place beats packing it while it is reused by few column panels (measured: N <= 256).
    [[nodiscard]] bool indirect(std::int64_t n) const { return n <= 256; }
    void rows(std::int64_t o0, int count, const T** out) const {
        for (int r = 0; r < count; ++r) out[r] = data + (o0 + r) * outer_stride;
    }
    [[nodiscard]] const std::int64_t* depth_offsets() const { return nullptr; }
    [[nodiscard]] std::int64_t depth_step() const { return depth_stride; }
    void pack(std::int64_t o0, int r_count, std::int64_t k0, std::int64_t kc, T* dst) const {
        const int valid = static_cast<int>(std::clamp<std::int64_t>(outer_extent - o0, 0, r_count));
        if (depth_stride == 1 && valid > 0) {
            const T* rows[nr];
            for (int r = 0; r < valid; ++r) rows[r] = data + (o0 + r) * outer_stride + k0;
            if (valid == mr && r_count == mr) {  // whole A panels: a fixed count the compiler unrolls
                for (std::int64_t k = 0; k < kc; ++k) {
#pragma GCC unroll 6
                    for (int r = 0; r < mr; ++r) dst[k * mr + r] = rows[r][k];
                }
                return;
            }
            for (std::int64_t k = 0; k < kc; ++k) {
                T* d = dst + k * r_count;
                for (int r = 0; r < valid; ++r) d[r] = rows[r][k];
                for (int r = valid; r < r_count; ++r) d[r] = T(0);
            }
            return;
        }
        if (outer_stride == 1 && valid == nr && r_count == nr) {  // whole B panels: fixed-size copies
            for (std::int64_t k = 0; k < kc; ++k)
                std::memcpy(dst + k * nr, data + (k0 + k) * depth_stride + o0, sizeof(T) * nr);
            return;
        }
        for (std::int64_t k = 0; k < kc; ++k) {
            const T* s = data + (k0 + k) * depth_stride + o0 * outer_stride;
            T* d = dst + k * r_count;
            if (outer_stride == 1) {
                for (int r = 0; r < valid; ++r) d[r] = s[r];
            } else {
                for (int r = 0; r < valid; ++r) d[r] = s[r * outer_stride];
            }
            for (int r = valid; r < r_count; ++r) d[r] = T(0);
        }
    }
};

/// The micro-kernel contract: C[0:m, 0:n] (= or +=) a_panel[kc x mr] * b_panel[kc x nr].
template <class T>
using kernel_fn = void (*)(std::int64_t kc, const T* a, const T* b, T* c, std::int64_t rs, std::int64_t cs,
                           int m, int n, bool accumulate);

namespace detail {

template <class T>
inline void store_tile(const T* acc, T* c, std::int64_t rs, std::int64_t cs, int m, int n, bool accumulate) {
    for (int r = 0; r < m; ++r) {
        for (int j = 0; j < n; ++j) {
            T& dst = c[r * rs + j * cs];
            dst = (accumulate ? dst : T(0)) + acc[r * nr + j];
        }
    }
}

template <class T>
inline void kernel_portable(std::int64_t kc, const T* a, const T* b, T* c, std::int64_t rs, std::int64_t cs,
                            int m, int n, bool accumulate) {
    alignas(64) T acc[mr * nr] = {};
    for (std::int64_t k = 0; k < kc; ++k) {
        const T* bk = b + k * nr;
        const T* ak = a + k * mr;
        for (int r = 0; r < mr; ++r) {
            const T ar = ak[r];
            for (int j = 0; j < nr; ++j) acc[r * nr + j] += ar * bk[j];
        }
    }
    store_tile(acc, c, rs, cs, m, n, accumulate);
}

#ifdef GRAFT_GEMM_X86_DISPATCH
#define GRAFT_GEMM_ROW(r)                                  \
    {                                                      \
        const __m256 av = _mm256_broadcast_ss(a + (r));    \
        c##r##0 = _mm256_fmadd_ps(av, b0, c##r##0);        \
        c##r##1 = _mm256_fmadd_ps(av, b1, c##r##1);        \
    }
[[gnu::target("avx2,fma")]] inline void store_avx2(float* c, std::int64_t rs, std::int64_t cs, int m, int n,
                                                    bool accumulate, const __m256 (&acc)[mr][2]) {
    if (m == mr && n == nr && cs == 1) {
        for (int r = 0; r < mr; ++r) {
            float* cr = c + r * rs;
            __m256 lo = acc[r][0], hi = acc[r][1];
            if (accumulate) {
                lo = _mm256_add_ps(lo, _mm256_loadu_ps(cr));
                hi = _mm256_add_ps(hi, _mm256_loadu_ps(cr + 8));
            }
            _mm256_storeu_ps(cr, lo);
            _mm256_storeu_ps(cr + 8, hi);
        }
        return;
    }
    alignas(64) float tile[mr * nr];
    for (int r = 0; r < mr; ++r) {
        _mm256_store_ps(tile + r * nr, acc[r][0]);
        _mm256_store_ps(tile + r * nr + 8, acc[r][1]);
    }
    store_tile(tile, c, rs, cs, m, n, accumulate);
}

[[gnu::target("avx2,fma")]] inline void kernel_avx2(std::int64_t kc, const float* a, const float* b, float* c,
                                                     std::int64_t rs, std::int64_t cs, int m, int n,
                                                     bool accumulate) {
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
#pragma GCC unroll 4
    for (std::int64_t k = 0; k < kc; ++k) {
        const __m256 b0 = _mm256_load_ps(b);
        const __m256 b1 = _mm256_load_ps(b + 8);
        GRAFT_GEMM_ROW(0) GRAFT_GEMM_ROW(1) GRAFT_GEMM_ROW(2)
        GRAFT_GEMM_ROW(3) GRAFT_GEMM_ROW(4) GRAFT_GEMM_ROW(5)
        a += mr;
        b += nr;
    }
    const __m256 acc[mr][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    store_avx2(c, rs, cs, m, n, accumulate, acc);
}

/// The same tile with A read in place: row r of A at depth k is rows[r][off[k]] (UseTable: an im2col
/// matrix over a convolution input) or rows[r][k * step] (a strided matrix) — no packing.
#define GRAFT_GEMM_IROW(r)                                       \
    {                                                            \
        const __m256 av = _mm256_broadcast_ss(p##r + o);         \
        c##r##0 = _mm256_fmadd_ps(av, b0, c##r##0);              \
        c##r##1 = _mm256_fmadd_ps(av, b1, c##r##1);              \
    }
template <bool UseTable>
[[gnu::target("avx2,fma")]] inline void kernel_avx2_indirect(std::int64_t kc, const float* const* rows,
                                                              const std::int64_t* off, std::int64_t step,
                                                              const float* b, float* c, std::int64_t rs,
                                                              std::int64_t cs, int m, int n, bool accumulate) {
    const float *p0 = rows[0], *p1 = rows[1], *p2 = rows[2], *p3 = rows[3], *p4 = rows[4], *p5 = rows[5];
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    std::int64_t o = 0;
#pragma GCC unroll 4
    for (std::int64_t k = 0; k < kc; ++k) {
        if constexpr (UseTable) o = off[k];
        const __m256 b0 = _mm256_load_ps(b);
        const __m256 b1 = _mm256_load_ps(b + 8);
        GRAFT_GEMM_IROW(0) GRAFT_GEMM_IROW(1) GRAFT_GEMM_IROW(2)
        GRAFT_GEMM_IROW(3) GRAFT_GEMM_IROW(4) GRAFT_GEMM_IROW(5)
        b += nr;
        if constexpr (!UseTable) o += step;
    }
    const __m256 acc[mr][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    store_avx2(c, rs, cs, m, n, accumulate, acc);
}
#undef GRAFT_GEMM_IROW
#undef GRAFT_GEMM_ROW

// AVX-512F: 12 rows of A (two consecutive 6-row panels) against one or, Wide, two 16-column B
// panels, one zmm accumulator per row and panel (24 for 12x32). The packed layouts are the AVX2
// kernel's; rows past `m` (zero-filled by the packing, or repeats of a valid row for in-place A)
// are computed and not stored.

/// Where the AVX-512 kernels read A: two packed 6-row panels (the second follows the first).
/// at(r, o) is row r at the current depth; offset() gives `o` once per depth; next() steps on.
struct packed_pair {
    const float* a;
    const float* a2;
    [[nodiscard]] std::int64_t offset() const { return 0; }
    [[nodiscard]] float at(int r, std::int64_t) const { return r < mr ? a[r] : a2[r - mr]; }
    void next() {
        a += mr;
        a2 += mr;
    }
    void reload() {}
};
/// Or 12 rows of an im2col matrix over a convolution input, in place: row r at depth k is
/// rows[r][off[k]]. (A strided matrix is packed when the AVX-512 kernels run: see serial().)
struct in_place_rows {
    const float* const* rows;
    const std::int64_t* off;
    [[nodiscard]] std::int64_t offset() const { return *off; }
    [[nodiscard]] float at(int r, std::int64_t at_o) const { return rows[r][at_o]; }
    void next() { ++off; }
    /// Makes the compiler read the twelve row pointers from memory at the next depth: hoisted
    /// out of the 12x16 loop they do not fit the general registers and GCC parks them in vector
    /// registers (measured 10% slower on LeNet's conv2; the 12x32 loop is faster without this).
    void reload() { asm("" : "+r"(rows)); }
};

/// Stores rows [0, m) and columns [0, n) of a 12 x 16 (lo) or, Wide, 12 x 32 (lo | hi) tile.
template <bool Wide>
[[gnu::target("avx512f")]] inline void store_avx512(float* c, std::int64_t rs, std::int64_t cs, int m, int n,
                                                     bool accumulate, const __m512 (&lo)[2 * mr],
                                                     const __m512 (&hi)[2 * mr]) {
    constexpr int w = Wide ? 2 * nr : nr;
    if (cs == 1) {
        const auto mask_lo = static_cast<__mmask16>(n >= nr ? 0xFFFFu : (1u << n) - 1u);
        const auto mask_hi = static_cast<__mmask16>(n >= 2 * nr ? 0xFFFFu : n <= nr ? 0u : (1u << (n - nr)) - 1u);
        for (int r = 0; r < m; ++r) {
            float* cr = c + r * rs;
            __m512 v = lo[r];
            if (accumulate) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask_lo, cr));
            _mm512_mask_storeu_ps(cr, mask_lo, v);
            if constexpr (Wide) {
                __m512 u = hi[r];
                if (accumulate) u = _mm512_add_ps(u, _mm512_maskz_loadu_ps(mask_hi, cr + nr));
                _mm512_mask_storeu_ps(cr + nr, mask_hi, u);
            }
        }
        return;
    }
    alignas(64) float tile[2 * mr * w];
    for (int r = 0; r < 2 * mr; ++r) {
        _mm512_store_ps(tile + r * w, lo[r]);
        if constexpr (Wide) _mm512_store_ps(tile + r * w + nr, hi[r]);
    }
    for (int r = 0; r < m; ++r) {
        for (int j = 0; j < n; ++j) {
            float& dst = c[r * rs + j * cs];
            dst = (accumulate ? dst : 0.f) + tile[r * w + j];
        }
    }
}

/// C[0:m, 0:n] (= or +=) A rows (m <= 12) * [b panel | Wide: the next b panel] (n <= 16 or 32):
/// per depth one or two loads of B and twelve broadcasts of A for 12 or 24 FMAs.
template <bool Wide, class Rows>
[[gnu::target("avx512f")]] inline void kernel_avx512(std::int64_t kc, Rows a, const float* b, float* c,
                                                      std::int64_t rs, std::int64_t cs, int m, int n,
                                                      bool accumulate) {
    const float* bb = b + kc * nr;  // Wide: the second B panel follows the first
    __m512 lo[2 * mr], hi[2 * mr];
#pragma GCC unroll 12
    for (int r = 0; r < 2 * mr; ++r) lo[r] = hi[r] = _mm512_setzero_ps();
#pragma GCC unroll 2
    for (std::int64_t k = 0; k < kc; ++k) {
        const std::int64_t o = a.offset();
        const __m512 b0 = _mm512_load_ps(b);
        const __m512 b1 = Wide ? _mm512_load_ps(bb) : b0;
#pragma GCC unroll 12
        for (int r = 0; r < 2 * mr; ++r) {
            const __m512 av = _mm512_set1_ps(a.at(r, o));
            lo[r] = _mm512_fmadd_ps(av, b0, lo[r]);
            if constexpr (Wide) hi[r] = _mm512_fmadd_ps(av, b1, hi[r]);
        }
        a.next();
        if constexpr (!Wide) a.reload();
        b += nr;
        if constexpr (Wide) bb += nr;
    }
    store_avx512<Wide>(c, rs, cs, m, n, accumulate, lo, hi);
}

inline bool cpu_has_avx2_fma() {
    static const bool has = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }();
    return has;
}
inline bool cpu_has_avx512f() {
    static const bool has = [] {
        __builtin_cpu_init();
        return cpu_has_avx2_fma() && __builtin_cpu_supports("avx512f");
    }();
    return has;
}
#else
inline bool cpu_has_avx2_fma() { return false; }
inline bool cpu_has_avx512f() { return false; }
#endif

}  // namespace detail

/// The micro-kernel families, slowest first.
enum class kernel_isa : int { portable = 0, avx2 = 1, avx512 = 2 };

namespace detail {
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

/// 64-byte aligned scratch that grows on demand; one per thread and role.
template <class T>
struct scratch {
    T* p = nullptr;
    std::size_t n = 0;
    scratch() = default;
    scratch(const scratch&) = delete;
    scratch& operator=(const scratch&) = delete;
    ~scratch() { std::free(p); }
    T* get(std::size_t need) {
        if (need > n) {
            std::free(p);
            const std::size_t bytes = (need * sizeof(T) + 63) / 64 * 64;
            p = static_cast<T*>(std::aligned_alloc(64, bytes));
            if (!p) throw std::bad_alloc();
            n = need;
        }
        return p;
    }
};
template <class T>
T* scratch_a(std::size_t n) {
    thread_local scratch<T> s;
    return s.get(n);
}
template <class T>
T* scratch_b(std::size_t n) {
    thread_local scratch<T> s;
    return s.get(n);
}

/// A source that can also hand out row pointers plus either a depth-offset table (row r at depth k
/// is rows[r][off[k]]) or, when depth_offsets() is null, a depth step (rows[r][k * step]), so the AVX2
/// path multiplies it in place without packing; indirect(n) says whether to, for n columns of B.
template <class S>
concept indirect_source = requires(const S& s, std::int64_t o, int n, const float** rows) {
    { s.indirect(o) } -> std::convertible_to<bool>;
    s.rows(o, n, rows);
    { s.depth_offsets() } -> std::convertible_to<const std::int64_t*>;
    { s.depth_step() } -> std::convertible_to<std::int64_t>;
};

/// Packs columns [n0, n0 + nc) of B at depths [k0, k0 + kc) as nc/nr panels of nr columns (the
/// last zero-padded), panel j at dst + j*nr*kc. A dense B with rows contiguous along n is read row
/// by row (each row once, in order: what the prefetchers follow), not panel by panel (one cache line
/// per row per panel: packing [784,512] took 23% of the product's time that way).
template <class S, class T>
void pack_b_block(const S& B, std::int64_t n0, std::int64_t nc, std::int64_t k0, std::int64_t kc, T* dst) {
    if constexpr (std::is_same_v<S, matrix_source<T>>) {
        if (B.outer_stride == 1 && n0 + nc <= B.outer_extent) {
            const std::int64_t whole = nc / nr;
            for (std::int64_t k = 0; k < kc; ++k) {
                const T* row = B.data + (k0 + k) * B.depth_stride + n0;
                for (std::int64_t j = 0; j < whole; ++j)
                    std::memcpy(dst + (j * kc + k) * nr, row + j * nr, sizeof(T) * nr);
            }
            if (whole * nr < nc) B.pack(n0 + whole * nr, nr, k0, kc, dst + whole * nr * kc);
            return;
        }
    }
    for (std::int64_t jr = 0; jr < nc; jr += nr) B.pack(n0 + jr, nr, k0, kc, dst + jr * kc);
}
}  // namespace detail

/// B[K,N] packed once for many products, as run() would pack it on every call: each kc_block-deep
/// block of all N columns laid out by pack_b_block (nr-column panels, the last zero-padded; see
/// panels()). For a constant B (a layer's weights) run() reads
/// these panels instead of packing B again: the same panels, so the same bits. Empty (not packed)
/// when N > nc_block.
template <class T>
class packed_b {
public:
    packed_b() = default;
    template <class SB>
    packed_b(std::int64_t K, std::int64_t N, const SB& B) : K_(K), N_(N), padded_n_((N + nr - 1) / nr * nr) {
        if (K <= 0 || N <= 0 || N > nc_block) return;
        const auto bytes = static_cast<std::size_t>(K * padded_n_) * sizeof(T);
        data_.reset(static_cast<T*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
        if (!data_) throw std::bad_alloc();
        for (std::int64_t pc = 0; pc < K; pc += kc_block)
            detail::pack_b_block(B, 0, N, pc, std::min(kc_block, K - pc), data_.get() + pc * padded_n_);
    }
    /// True when B was packed (N <= nc_block).
    [[nodiscard]] bool packed() const { return data_ != nullptr; }
    /// True when this packs a B of K x N.
    [[nodiscard]] bool fits(std::int64_t K, std::int64_t N) const { return packed() && K == K_ && N == N_; }
    /// The panels from column n0 (a multiple of nr) of the block at depth pc, kc deep.
    [[nodiscard]] const T* panels(std::int64_t pc, std::int64_t kc, std::int64_t n0) const {
        return data_.get() + pc * padded_n_ + n0 * kc;
    }

private:
    struct free_deleter {
        void operator()(T* p) const { std::free(p); }
    };
    std::int64_t K_ = 0, N_ = 0, padded_n_ = 0;
    std::unique_ptr<T, free_deleter> data_;
};

namespace detail {

#ifdef GRAFT_GEMM_X86_DISPATCH
static_assert(mr == 6, "pack_a6_avx512 packs 6-row panels");
/// The lane tables of pack_a6_avx512: output vector j of a 16-depth step holds packed elements
/// f = 16j + e (e < 16), which is row f % 6 at depth f / 6; pair p of rows (2p, 2p+1) supplies the
/// lanes whose row is in it, at permutex2var index (row % 2) * 16 + depth.
struct a6_tables {
    alignas(64) std::int32_t idx[6][3][16];
    std::uint16_t from23[6], from45[6];
    a6_tables() : from23{}, from45{} {
        for (int j = 0; j < 6; ++j)
            for (int e = 0; e < 16; ++e) {
                const int f = 16 * j + e, r = f % 6, k = f / 6;
                for (int pair = 0; pair < 3; ++pair) idx[j][pair][e] = (r / 2 == pair) ? (r % 2) * 16 + k : 0;
                if (r / 2 == 1) from23[j] = static_cast<std::uint16_t>(from23[j] | (1u << e));
                if (r / 2 == 2) from45[j] = static_cast<std::uint16_t>(from45[j] | (1u << e));
            }
    }
};

/// dst[k*6 + r] = rows[r][k] for k < kc, r < 6 (a whole 6-row A panel): per 16 depths six row loads,
/// a 6x16 transpose in registers (three two-source permutes and two blends per output vector), six
/// stores, where the scalar gather issues 96 loads and 96 stores.
[[gnu::target("avx512f")]] inline void pack_a6_avx512(const float* const* rows, std::int64_t kc, float* dst) {
    static const a6_tables t;
    std::int64_t k = 0;
    for (; k + 16 <= kc; k += 16, dst += 96) {
        __m512 r[6];
        for (int i = 0; i < 6; ++i) r[i] = _mm512_loadu_ps(rows[i] + k);
#pragma GCC unroll 6
        for (int j = 0; j < 6; ++j) {
            const __m512 p01 = _mm512_permutex2var_ps(r[0], _mm512_load_si512(t.idx[j][0]), r[1]);
            const __m512 p23 = _mm512_permutex2var_ps(r[2], _mm512_load_si512(t.idx[j][1]), r[3]);
            const __m512 p45 = _mm512_permutex2var_ps(r[4], _mm512_load_si512(t.idx[j][2]), r[5]);
            const __m512 o = _mm512_mask_blend_ps(t.from45[j], _mm512_mask_blend_ps(t.from23[j], p01, p23), p45);
            _mm512_storeu_ps(dst + 16 * j, o);
        }
    }
    for (; k < kc; ++k, dst += 6)
        for (int i = 0; i < 6; ++i) dst[i] = rows[i][k];
}
#endif

/// Packs A rows [o0, o0 + mr) at depths [k0, k0 + kc) as one mr-row panel (A.pack), a dense float
/// A with rows contiguous along k by the AVX-512 transpose when `avx512`.
template <class S, class T>
void pack_a_panel(const S& A, std::int64_t o0, std::int64_t k0, std::int64_t kc, T* dst, [[maybe_unused]] bool avx512) {
#ifdef GRAFT_GEMM_X86_DISPATCH
    if constexpr (std::is_same_v<S, matrix_source<float>>) {
        if (avx512 && A.depth_stride == 1 && o0 + mr <= A.outer_extent) {
            const float* rows[mr];
            for (int r = 0; r < mr; ++r) rows[r] = A.data + (o0 + r) * A.outer_stride + k0;
            pack_a6_avx512(rows, kc, dst);
            return;
        }
    }
#endif
    A.pack(o0, mr, k0, kc, dst);
}

#ifdef GRAFT_GEMM_X86_DISPATCH
template <class SA, class SB>
void serial_indirect(std::int64_t M, std::int64_t N, std::int64_t K, const SA& A, std::int64_t a_off, const SB& B,
                     std::int64_t b_off, float* C, std::int64_t rs, std::int64_t cs, bool accumulate, bool wide,
                     const packed_b<float>* pre) {
    static_assert(mc_block % (2 * mr) == 0, "a block holds whole 12-row tiles");
    const std::int64_t nc_max = std::min(nc_block, (N + nr - 1) / nr * nr);
    float* bscratch = pre ? nullptr : scratch_b<float>(static_cast<std::size_t>(nc_max * std::min(kc_block, K)));
    const std::int64_t* off = A.depth_offsets();
    const std::int64_t step = A.depth_step();
    const float* rows[mc_block];
    for (std::int64_t jc = 0; jc < N; jc += nc_block) {
        const std::int64_t nc = std::min(nc_block, N - jc);
        for (std::int64_t pc = 0; pc < K; pc += kc_block) {
            const std::int64_t kc = std::min(kc_block, K - pc);
            // B packed beforehand (a layer's constant weights): its panels, as serial() reads them
            // (AVX2 products of a strided A came here and packed B on every call: 9% of the MLP's
            // forward at batch 128)
            const float* bbuf = bscratch;
            if (pre) bbuf = pre->panels(pc, kc, b_off + jc);  // b_off + jc: a multiple of nr
            else pack_b_block(B, b_off + jc, nc, pc, kc, bscratch);
            const bool acc = accumulate || pc > 0;
            for (std::int64_t ic = 0; ic < M; ic += mc_block) {
                const std::int64_t mc = std::min(mc_block, M - ic);
                A.rows(a_off + ic, static_cast<int>(mc), rows);
                const std::int64_t tile_rows = wide ? 2 * mr : mr;
                const std::int64_t padded = (mc + tile_rows - 1) / tile_rows * tile_rows;
                for (std::int64_t r = mc; r < padded; ++r) rows[r] = rows[0];  // unused rows
                if (!off) {  // rows advance by `step` per depth: start them at depth pc
                    for (std::int64_t r = 0; r < padded; ++r) rows[r] += pc * step;
                }
                for (std::int64_t jr = 0; jr < nc;) {
                    const bool two = wide && nc - jr > nr;  // as in serial()
                    const int n = static_cast<int>(std::min<std::int64_t>(two ? 2 * nr : nr, nc - jr));
                    const float* bp = bbuf + jr * kc;
                    for (std::int64_t ir = 0; ir < mc;) {
                        float* ct = C + (ic + ir) * rs + (jc + jr) * cs;
                        if (wide && mc - ir > mr) {
                            const int m = static_cast<int>(std::min<std::int64_t>(2 * mr, mc - ir));
                            const in_place_rows a{rows + ir, off + pc};  // wide implies a table: see serial()
                            if (two) kernel_avx512<true>(kc, a, bp, ct, rs, cs, m, n, acc);
                            else kernel_avx512<false>(kc, a, bp, ct, rs, cs, m, n, acc);
                            ir += 2 * mr;
                            continue;
                        }
                        const int m = static_cast<int>(std::min<std::int64_t>(mr, mc - ir));
                        for (int half = 0; half < (two ? 2 : 1); ++half) {
                            const float* b = bp + half * nr * kc;
                            float* c = ct + half * nr * cs;
                            const int nh = half ? n - nr : std::min(n, nr);
                            if (off) kernel_avx2_indirect<true>(kc, rows + ir, off + pc, 0, b, c, rs, cs, m, nh, acc);
                            else kernel_avx2_indirect<false>(kc, rows + ir, nullptr, step, b, c, rs, cs, m, nh, acc);
                        }
                        ir += mr;
                    }
                    jr += two ? 2 * nr : nr;
                }
            }
        }
    }
}
#endif

/// C[0:M, 0:N] (= or +=) A[a_off : a_off+M] * B[b_off : b_off+N], one thread.
template <class T, class SA, class SB>
void serial(std::int64_t M, std::int64_t N, std::int64_t K, const SA& A, std::int64_t a_off, const SB& B,
            std::int64_t b_off, T* C, std::int64_t rs, std::int64_t cs, bool accumulate, kernel_fn<T> kern,
            bool wide, const packed_b<T>* pre = nullptr) {
#ifdef GRAFT_GEMM_X86_DISPATCH
    if constexpr (std::is_same_v<T, float> && indirect_source<SA>) {
        // with the AVX-512 kernels a strided A is packed (its twelve rows read in place ran 1.3x
        // slower than packing on [128,784]x[784,512]); an im2col table is still read in place
        if (kern == &kernel_avx2 && (!wide || A.depth_offsets()) && A.indirect(N)) {
            serial_indirect(M, N, K, A, a_off, B, b_off, C, rs, cs, accumulate, wide, pre);
            return;
        }
    }
#else
    (void)wide;
#endif
    const std::int64_t nc_max = std::min(nc_block, (N + nr - 1) / nr * nr);
    const std::int64_t mc_max = std::min(mc_block, (M + mr - 1) / mr * mr);
    const std::int64_t kc_max = std::min(kc_block, K);
    T* bscratch = pre ? nullptr : scratch_b<T>(static_cast<std::size_t>(nc_max * kc_max));
    T* abuf = scratch_a<T>(static_cast<std::size_t>(mc_max * kc_max));
    for (std::int64_t jc = 0; jc < N; jc += nc_block) {
        const std::int64_t nc = std::min(nc_block, N - jc);
        for (std::int64_t pc = 0; pc < K; pc += kc_block) {
            const std::int64_t kc = std::min(kc_block, K - pc);
            const T* bbuf = bscratch;
            if (pre) bbuf = pre->panels(pc, kc, b_off + jc);  // b_off + jc: a multiple of nr
            else pack_b_block(B, b_off + jc, nc, pc, kc, bscratch);
            const bool acc = accumulate || pc > 0;
            for (std::int64_t ic = 0; ic < M; ic += mc_block) {
                const std::int64_t mc = std::min(mc_block, M - ic);
                for (std::int64_t ir = 0; ir < mc; ir += mr)
                    pack_a_panel(A, a_off + ic + ir, pc, kc, abuf + ir * kc, wide);
                for (std::int64_t jr = 0; jr < nc;) {
                    // wide: two B panels at once where there are two (the second may be partial)
                    const bool two = wide && nc - jr > nr;
                    const int n = static_cast<int>(std::min<std::int64_t>(two ? 2 * nr : nr, nc - jr));
                    for (std::int64_t ir = 0; ir < mc;) {
                        T* ct = C + (ic + ir) * rs + (jc + jr) * cs;
#ifdef GRAFT_GEMM_X86_DISPATCH
                        if constexpr (std::is_same_v<T, float>) {
                            if (wide && mc - ir > mr) {  // two A panels (the second may be partial)
                                const int m = static_cast<int>(std::min<std::int64_t>(2 * mr, mc - ir));
                                const packed_pair pair{abuf + ir * kc, abuf + (ir + mr) * kc};
                                if (two) kernel_avx512<true>(kc, pair, bbuf + jr * kc, ct, rs, cs, m, n, acc);
                                else kernel_avx512<false>(kc, pair, bbuf + jr * kc, ct, rs, cs, m, n, acc);
                                ir += 2 * mr;
                                continue;
                            }
                        }
#endif
                        const int m = static_cast<int>(std::min<std::int64_t>(mr, mc - ir));
                        kern(kc, abuf + ir * kc, bbuf + jr * kc, ct, rs, cs, m, std::min(n, nr), acc);
                        if (two) kern(kc, abuf + ir * kc, bbuf + (jr + nr) * kc, ct + nr * cs, rs, cs, m, n - nr, acc);
                        ir += mr;
                    }
                    jr += two ? 2 * nr : nr;
                }
            }
        }
    }
}

/// The 6-row kernel for T, and (wide) whether 12-row AVX-512 tiles go with it.
template <class T>
kernel_fn<T> pick_kernel(bool& wide) {
    wide = false;
#ifdef GRAFT_GEMM_X86_DISPATCH
    if constexpr (std::is_same_v<T, float>) {
        const kernel_isa isa = active_isa();
        wide = isa == kernel_isa::avx512;
        if (isa != kernel_isa::portable) return &kernel_avx2;
    }
#endif
    return &kernel_portable<T>;
}

/// The least work (flops) worth handing to another thread: waking a pool thread and joining it
/// costs ~10-20 us on the machines measured, as much as ~1M flops of GEMM; smaller products run on
/// the calling thread (a batch-1 MLP layer ran 1.7x slower split over two threads).
inline constexpr double kFlopsPerThread = 2.0e6;

template <class T, class SA, class SB>
void oriented(std::int64_t M, std::int64_t N, std::int64_t K, const SA& A, const SB& B, T* C, std::int64_t rs,
              std::int64_t cs, bool accumulate, int max_threads, const packed_b<T>* pre) {
    bool wide = false;
    const kernel_fn<T> kern = pick_kernel<T>(wide);
    const double flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
    int threads = max_threads > 0 ? max_threads : num_threads();
    threads = static_cast<int>(std::min<double>(threads, std::max(1.0, flops / kFlopsPerThread)));
    const std::int64_t m_panels = (M + mr - 1) / mr, n_panels = (N + nr - 1) / nr;
    const bool split_n = n_panels >= m_panels;
    const std::int64_t panels = split_n ? n_panels : m_panels;
    const int tasks = static_cast<int>(std::min<std::int64_t>(threads, panels));
    if (tasks <= 1) {
        serial(M, N, K, A, 0, B, 0, C, rs, cs, accumulate, kern, wide, pre);
        return;
    }
    // split rows in whole 12-row tiles when the wide kernel runs
    const std::int64_t unit = split_n ? nr : (wide ? 2 * mr : mr);
    const std::int64_t units = split_n ? panels : (M + unit - 1) / unit;
    const std::int64_t per = (units + tasks - 1) / tasks * unit;
    nn_detail::run_tasks(tasks, [&](int t) {
        const std::int64_t b = t * per;
        const std::int64_t e = std::min(split_n ? N : M, b + per);
        if (b >= e) return;
        if (split_n) {
            serial(M, e - b, K, A, 0, B, b, C + b * cs, rs, cs, accumulate, kern, wide, pre);
        } else {
            serial(e - b, N, K, A, b, B, 0, C + b * rs, rs, cs, accumulate, kern, wide, pre);
        }
    });
}

}  // namespace detail

/// For tests and benchmarks: run() uses no micro-kernel family above `cap` (the CPU still bounds
/// it). limit_kernel(kernel_isa::avx512) lifts the limit, GRAFT_MAX_CPU_ISA's included.
inline void limit_kernel(kernel_isa cap) { detail::isa_cap().store(static_cast<int>(cap)); }
/// The micro-kernel family run() uses on this CPU under the current limit.
inline kernel_isa active_kernel() { return detail::active_isa(); }
/// The families this CPU runs, slowest first (portable always; AVX2 with FMA; AVX-512F).
inline std::vector<kernel_isa> available_kernels() {
    std::vector<kernel_isa> r{kernel_isa::portable};
    if (detail::cpu_has_avx2_fma()) r.push_back(kernel_isa::avx2);
    if (detail::cpu_has_avx512f()) r.push_back(kernel_isa::avx512);
    return r;
}
/// True when run() uses a SIMD (AVX2/FMA or AVX-512) micro-kernel on this CPU.
inline bool uses_avx2() { return detail::active_isa() != kernel_isa::portable; }

/// C[i*rs + j*cs] (= or +=) sum_k A(i,k) B(k,j) for i < M, j < N, on up to `max_threads` threads
/// (0: graft::num_threads()). Sources must cover M (A) and N (B) outer indices and K depth. float
/// uses the AVX-512 or AVX2/FMA micro-kernels when the CPU has them; other T use portable C++.
/// Throws std::bad_alloc only.
/// `pre`: B packed beforehand (packed_b over this B); used when it fits K x N, else B is packed here.
template <class T, class SA, class SB>
void run(std::int64_t M, std::int64_t N, std::int64_t K, const SA& A, const SB& B, T* C, std::int64_t rs,
         std::int64_t cs, bool accumulate, int max_threads = 0, const packed_b<T>* pre = nullptr) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        if (!accumulate) {
            for (std::int64_t i = 0; i < M; ++i)
                for (std::int64_t j = 0; j < N; ++j) C[i * rs + j * cs] = T(0);
        }
        return;
    }
    // Never as the transposed problem C^T = B^T A^T, even where that wastes less of the register tile:
    // it stores C with a column stride and packs A^T by gathers (measured with the AVX-512 kernels,
    // untransposed faster every time: [128,512]x[512,10] 35 vs 52 us, [128,120]x[120,84] 23 vs 50,
    // [1000,256]x[256,4] 117 vs 176, [25,50000]x[50000,6] 978 vs 1060).
    detail::oriented(M, N, K, A, B, C, rs, cs, accumulate, max_threads, pre && pre->fits(K, N) ? pre : nullptr);
}

namespace detail {
// y[n] (= or +=) sum_k x[k*incx] * B(n, k) for n in [n0, n1).
inline void gemv_portable(std::int64_t n0, std::int64_t n1, std::int64_t K, const float* x, std::int64_t incx,
                          const matrix_source<float>& B, float* y, std::int64_t incy, bool accumulate) {
    if (B.outer_stride == 1) {
        alignas(64) float acc[256];
        for (std::int64_t nb = n0; nb < n1; nb += 256) {
            const std::int64_t w = std::min<std::int64_t>(256, n1 - nb);
            for (std::int64_t j = 0; j < w; ++j) acc[j] = 0.f;
            for (std::int64_t k = 0; k < K; ++k) {
                const float xv = x[k * incx];
                const float* row = B.data + k * B.depth_stride + nb;
                for (std::int64_t j = 0; j < w; ++j) acc[j] += xv * row[j];
            }
            for (std::int64_t j = 0; j < w; ++j) {
                float& d = y[(nb + j) * incy];
                d = (accumulate ? d : 0.f) + acc[j];
            }
        }
        return;
    }
    for (std::int64_t n = n0; n < n1; ++n) {
        const float* col = B.data + n * B.outer_stride;
        float s = 0.f;
        for (std::int64_t k = 0; k < K; ++k) s += x[k * incx] * col[k * B.depth_stride];
        float& d = y[n * incy];
        d = (accumulate ? d : 0.f) + s;
    }
}

#ifdef GRAFT_GEMM_X86_DISPATCH
[[gnu::target("avx2,fma")]] inline float hsum_avx2(__m256 v) {
    const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}
inline void gemv_store(float* y, std::int64_t incy, const float* acc, int w, bool accumulate) {
    for (int j = 0; j < w; ++j) {
        float& d = y[j * incy];
        d = (accumulate ? d : 0.f) + acc[j];
    }
}

// Columns [nb, nb + w) of y = x B for B rows contiguous along n, w <= 8V: V ymm accumulators (the
// last one masked), one sweep down all K rows. Per column the sum runs k = 0..K-1 with one fused
// multiply-add each, as in gemv_axpy_avx512 (the two give the same bits).
template <int V>
[[gnu::target("avx2,fma")]] inline void gemv_axpy_avx2(std::int64_t nb, int w, std::int64_t K, const float* x,
                                                        std::int64_t incx, const matrix_source<float>& B, float* y,
                                                        std::int64_t incy, bool accumulate) {
    __m256 acc[V];
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) acc[v] = _mm256_setzero_ps();
    const int rest = w - 8 * (V - 1);  // 1..8 columns in the last vector
    const __m256i last = _mm256_cmpgt_epi32(_mm256_set1_epi32(rest), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const float* row = B.data + nb;
    for (std::int64_t k = 0; k < K; ++k, row += B.depth_stride) {
        const __m256 xv = _mm256_set1_ps(x[k * incx]);
#pragma GCC unroll 16
        for (int v = 0; v < V - 1; ++v) acc[v] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(row + 8 * v), acc[v]);
        acc[V - 1] = _mm256_fmadd_ps(xv, _mm256_maskload_ps(row + 8 * (V - 1), last), acc[V - 1]);
    }
    alignas(32) float out[8 * V];
    for (int v = 0; v < V; ++v) _mm256_store_ps(out + 8 * v, acc[v]);
    gemv_store(y + nb * incy, incy, out, w, accumulate);
}

// Splits columns [n0, n1) into near-equal blocks of at most `cap` vectors of `lanes` columns and
// runs by_vectors[vectors - 1] on each.
template <class Table>
inline void gemv_axpy_blocks(std::int64_t n0, std::int64_t n1, int lanes, const Table& by_vectors, std::int64_t K,
                             const float* x, std::int64_t incx, const matrix_source<float>& B, float* y,
                             std::int64_t incy, bool accumulate) {
    const auto cap = static_cast<std::int64_t>(std::size(by_vectors));
    const std::int64_t vectors = (n1 - n0 + lanes - 1) / lanes;
    const std::int64_t blocks = (vectors + cap - 1) / cap;
    for (std::int64_t b = 0; b < blocks; ++b) {
        const std::int64_t vb = vectors * b / blocks, ve = vectors * (b + 1) / blocks;
        const std::int64_t c0 = n0 + lanes * vb, c1 = std::min(n1, n0 + lanes * ve);
        by_vectors[ve - vb - 1](c0, static_cast<int>(c1 - c0), K, x, incx, B, y, incy, accumulate);
    }
}

using gemv_block_fn = void (*)(std::int64_t, int, std::int64_t, const float*, std::int64_t, const matrix_source<float>&,
                               float*, std::int64_t, bool);

[[gnu::target("avx2,fma")]] inline void gemv_avx2(std::int64_t n0, std::int64_t n1, std::int64_t K, const float* x,
                                                   std::int64_t incx, const matrix_source<float>& B, float* y,
                                                   std::int64_t incy, bool accumulate) {
    if (B.outer_stride == 1) {  // rows of B are contiguous along n: blocks of up to 64 columns
        static constexpr gemv_block_fn by_vectors[8] = {gemv_axpy_avx2<1>, gemv_axpy_avx2<2>, gemv_axpy_avx2<3>,
                                                        gemv_axpy_avx2<4>, gemv_axpy_avx2<5>, gemv_axpy_avx2<6>,
                                                        gemv_axpy_avx2<7>, gemv_axpy_avx2<8>};
        gemv_axpy_blocks(n0, n1, 8, by_vectors, K, x, incx, B, y, incy, accumulate);
        return;
    }
    if (B.depth_stride == 1 && incx == 1) {  // columns of B are contiguous along k: dot products
        for (std::int64_t n = n0; n < n1; ++n) {
            const float* col = B.data + n * B.outer_stride;
            __m256 s0 = _mm256_setzero_ps(), s1 = s0;
            std::int64_t k = 0;
            for (; k + 16 <= K; k += 16) {
                s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + k), _mm256_loadu_ps(col + k), s0);
                s1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + k + 8), _mm256_loadu_ps(col + k + 8), s1);
            }
            float s = hsum_avx2(_mm256_add_ps(s0, s1));
            for (; k < K; ++k) s += x[k] * col[k];
            float& d = y[n * incy];
            d = (accumulate ? d : 0.f) + s;
        }
        return;
    }
    gemv_portable(n0, n1, K, x, incx, B, y, incy, accumulate);
}
// Columns [nb, nb + w) of y = x B for B rows contiguous along n, w <= 16V: V zmm accumulators (the
// last one masked), one sweep down all K rows. Per column the sum runs k = 0..K-1 with one fused
// multiply-add each, as in gemv_avx2 (the two give the same bits).
// Part: a part of a longer sweep (incy 1): start from y's values (next_part) or from zero
// (first_part), and store the accumulators as they are, so the sums run on exactly as in one sweep.
enum class sweep { whole, first_part, next_part };
template <int V, sweep Part = sweep::whole>
[[gnu::target("avx512f")]] inline void gemv_axpy_avx512(std::int64_t nb, int w, std::int64_t K, const float* x,
                                                         std::int64_t incx, const matrix_source<float>& B, float* y,
                                                         std::int64_t incy, bool accumulate) {
    __m512 acc[V];
    const auto last = static_cast<__mmask16>((1u << (w - 16 * (V - 1))) - 1);  // 1..16 columns
    if constexpr (Part == sweep::next_part) {
#pragma GCC unroll 16
        for (int v = 0; v < V - 1; ++v) acc[v] = _mm512_loadu_ps(y + nb + 16 * v);
        acc[V - 1] = _mm512_maskz_loadu_ps(last, y + nb + 16 * (V - 1));
    } else {
#pragma GCC unroll 16
        for (int v = 0; v < V; ++v) acc[v] = _mm512_setzero_ps();
    }
    const float* row = B.data + nb;
    for (std::int64_t k = 0; k < K; ++k, row += B.depth_stride) {
        const __m512 xv = _mm512_set1_ps(x[k * incx]);
#pragma GCC unroll 16
        for (int v = 0; v < V - 1; ++v) acc[v] = _mm512_fmadd_ps(xv, _mm512_loadu_ps(row + 16 * v), acc[v]);
        acc[V - 1] = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(last, row + 16 * (V - 1)), acc[V - 1]);
    }
    if constexpr (Part != sweep::whole) {
#pragma GCC unroll 16
        for (int v = 0; v < V - 1; ++v) _mm512_storeu_ps(y + nb + 16 * v, acc[v]);
        _mm512_mask_storeu_ps(y + nb + 16 * (V - 1), last, acc[V - 1]);
        return;
    }
    if (incy == 1) {  // y (= or +=) acc in place; 0 + acc as in gemv_store (-0 sums store +0)
        float* d = y + nb;
#pragma GCC unroll 16
        for (int v = 0; v < V - 1; ++v)
            _mm512_storeu_ps(d + 16 * v, _mm512_add_ps(accumulate ? _mm512_loadu_ps(d + 16 * v) : _mm512_setzero_ps(),
                                                        acc[v]));
        const __m512 prev = accumulate ? _mm512_maskz_loadu_ps(last, d + 16 * (V - 1)) : _mm512_setzero_ps();
        _mm512_mask_storeu_ps(d + 16 * (V - 1), last, _mm512_add_ps(prev, acc[V - 1]));
        return;
    }
    alignas(64) float out[16 * V];
    for (int v = 0; v < V; ++v) _mm512_store_ps(out + 16 * v, acc[v]);
    gemv_store(y + nb * incy, incy, out, w, accumulate);
}

// The sum of v's 16 lanes by lane permutes (GCC 12 warns about the undefined lanes behind
// _mm512_reduce_add_ps and the unmasked shuffles; the zero-masked forms have none).
[[gnu::target("avx512f")]] inline float hsum_avx512(__m512 v) {
    const __m512i halves = _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
    const __m512i quarters = _mm512_setr_epi32(4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3);
    const __m512i pairs = _mm512_setr_epi32(2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1);
    const __m512i lanes = _mm512_setr_epi32(1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0);
    v = _mm512_add_ps(v, _mm512_maskz_permutexvar_ps(0xFFFF, halves, v));
    v = _mm512_add_ps(v, _mm512_maskz_permutexvar_ps(0xFFFF, quarters, v));
    v = _mm512_add_ps(v, _mm512_maskz_permutexvar_ps(0xFFFF, pairs, v));
    v = _mm512_add_ps(v, _mm512_maskz_permutexvar_ps(0xFFFF, lanes, v));
    return _mm512_cvtss_f32(v);
}

// y[n] (= or +=) sum_k x[k*incx] * B(n, k) for n in [n0, n1) with AVX-512F.
[[gnu::target("avx512f")]] inline void gemv_avx512(std::int64_t n0, std::int64_t n1, std::int64_t K, const float* x,
                                                     std::int64_t incx, const matrix_source<float>& B, float* y,
                                                     std::int64_t incy, bool accumulate) {
    if (B.outer_stride == 1) {
        // Blocks of up to 256 columns (16 accumulators): each of the K rows is read as one run of
        // up to 1 KiB, which the hardware prefetchers follow well (the product is bound by reading B).
        static constexpr gemv_block_fn by_vectors[16] = {
            gemv_axpy_avx512<1>,  gemv_axpy_avx512<2>,  gemv_axpy_avx512<3>,  gemv_axpy_avx512<4>,
            gemv_axpy_avx512<5>,  gemv_axpy_avx512<6>,  gemv_axpy_avx512<7>,  gemv_axpy_avx512<8>,
            gemv_axpy_avx512<9>,  gemv_axpy_avx512<10>, gemv_axpy_avx512<11>, gemv_axpy_avx512<12>,
            gemv_axpy_avx512<13>, gemv_axpy_avx512<14>, gemv_axpy_avx512<15>, gemv_axpy_avx512<16>};
        gemv_axpy_blocks(n0, n1, 16, by_vectors, K, x, incx, B, y, incy, accumulate);
        return;
    }
    if (B.depth_stride == 1 && incx == 1) {  // columns of B are contiguous along k: four dot products at a time
        const __mmask16 tail = static_cast<__mmask16>((1u << (K % 16)) - 1);
        const std::int64_t kv = K - K % 16;
        std::int64_t n = n0;
        for (; n + 4 <= n1; n += 4) {
            const float* c0 = B.data + n * B.outer_stride;
            const float* c1 = c0 + B.outer_stride;
            const float* c2 = c1 + B.outer_stride;
            const float* c3 = c2 + B.outer_stride;
            __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
            for (std::int64_t k = 0; k < kv; k += 16) {
                const __m512 xv = _mm512_loadu_ps(x + k);
                s0 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(c0 + k), s0);
                s1 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(c1 + k), s1);
                s2 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(c2 + k), s2);
                s3 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(c3 + k), s3);
            }
            if (tail) {
                const __m512 xv = _mm512_maskz_loadu_ps(tail, x + kv);
                s0 = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(tail, c0 + kv), s0);
                s1 = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(tail, c1 + kv), s1);
                s2 = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(tail, c2 + kv), s2);
                s3 = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(tail, c3 + kv), s3);
            }
            const float acc[4] = {hsum_avx512(s0), hsum_avx512(s1), hsum_avx512(s2), hsum_avx512(s3)};
            gemv_store(y + n * incy, incy, acc, 4, accumulate);
        }
        for (; n < n1; ++n) {
            const float* c0 = B.data + n * B.outer_stride;
            __m512 s0 = _mm512_setzero_ps();
            for (std::int64_t k = 0; k < kv; k += 16)
                s0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + k), _mm512_loadu_ps(c0 + k), s0);
            if (tail) s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, x + kv), _mm512_maskz_loadu_ps(tail, c0 + kv), s0);
            const float acc = hsum_avx512(s0);
            gemv_store(y + n * incy, incy, &acc, 1, accumulate);
        }
        return;
    }
    gemv_avx2(n0, n1, K, x, incx, B, y, incy, accumulate);
}
#endif
}  // namespace detail

/// Bytes of B one thread of gemv() reads before another thread is worth waking: the product reads
/// each element of B once, so it is bound by memory bandwidth, and a second core brings its own.
inline constexpr double kGemvBytesPerThread = 256.0 * 1024;

/// Bytes of B per row block when gemv() cuts a large B whose rows are contiguous along n into row
/// blocks: their number depends on B's size only, not on the thread count, so each column's sum is
/// the same on any number of threads (each block's partial sum, then the blocks' sums in order);
/// it is even, so two threads share it evenly. Threads take whole runs of blocks, so each reads one
/// contiguous range of B. Split by columns instead, a thread's share of every row lies at the same
/// offsets modulo the row length, so on a power-of-two row stride it maps onto a fraction of the
/// cache's sets (measured on two cores with 2 MiB L2 each, a 784-512-512 MLP at batch 1: 40 us
/// with its 2.7 MB of weights split by columns, as if read from L3; 18 us in 4 + 2 row blocks;
/// 21 us in 12 + 12, each block costing a new sweep).
inline constexpr double kGemvBlockBytes = 400.0 * 1024;

/// The number of row blocks gemv() cuts a B of `bytes` into (1: not cut).
inline int gemv_depth_blocks(double bytes, std::int64_t K) {
    if (bytes < 2 * kGemvBytesPerThread) return 1;
    const auto even = 2 * static_cast<std::int64_t>(bytes / kGemvBlockBytes / 2);
    return static_cast<int>(std::clamp<std::int64_t>(std::min(even, K / 16), 1, 24));
}

namespace detail {
// y[n] (= or +=) sum_k x[k*incx] * B(n, k) for n in [n0, n1) with the best kernel for `isa`.
inline void gemv_columns(kernel_isa isa, std::int64_t n0, std::int64_t n1, std::int64_t K, const float* x,
                         std::int64_t incx, const matrix_source<float>& B, float* y, std::int64_t incy,
                         bool accumulate) {
#ifdef GRAFT_GEMM_X86_DISPATCH
    if (isa == kernel_isa::avx512) {
        gemv_avx512(n0, n1, K, x, incx, B, y, incy, accumulate);
        return;
    }
    if (isa == kernel_isa::avx2) {
        gemv_avx2(n0, n1, K, x, incx, B, y, incy, accumulate);
        return;
    }
#else
    (void)isa;
#endif
    gemv_portable(n0, n1, K, x, incx, B, y, incy, accumulate);
}

#ifdef GRAFT_GEMM_X86_DISPATCH
// y[n] (= or +=) ((part[0][n] + part[1][n]) + ...) + part[blocks-1][n], part[b] = part + b*N.
[[gnu::target("avx512f")]] inline void gemv_sum_blocks_avx512(int blocks, std::int64_t N, const float* part, float* y,
                                                             bool accumulate) {
    for (std::int64_t n = 0; n < N; n += 16) {
        const auto m = static_cast<__mmask16>(N - n >= 16 ? 0xFFFF : (1u << (N - n)) - 1);
        __m512 s = _mm512_maskz_loadu_ps(m, part + n);
        for (int b = 1; b < blocks; ++b) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(m, part + b * N + n));
        const __m512 prev = accumulate ? _mm512_maskz_loadu_ps(m, y + n) : _mm512_setzero_ps();
        _mm512_mask_storeu_ps(y + n, m, _mm512_add_ps(prev, s));
    }
}
#endif

#ifdef GRAFT_GEMM_X86_DISPATCH
/// gemv_axpy_avx512<V, Part> for V = 1..16 at index V - 1.
template <sweep Part, int... I>
constexpr std::array<gemv_block_fn, sizeof...(I)> gemv_part_table(std::integer_sequence<int, I...>) {
    return {gemv_axpy_avx512<I + 1, Part>...};
}

/// Rows of B gemv_block_grouped_avx512 reads across all columns before moving on.
inline constexpr std::int64_t kGemvRowGroup = 32;

// out[n] = sum over k in [k0, k1) of x[k*incx] * B(n, k) for n < N (B rows contiguous along n), in
// groups of kGemvRowGroup rows: each group's rows are read whole (every 256-column block in turn,
// the accumulators stored and resumed between groups) so B streams in order, where sweeping one
// column block down all the rows reads each row in pieces a row apart (measured: 2.7 MB from L3 on
// one core, 62 us in order, 74 us in half-row sweeps). Each column's sum runs k0..k1-1 with one
// fused multiply-add each, as one sweep.
[[gnu::target("avx512f")]] inline void gemv_block_grouped_avx512(std::int64_t k0, std::int64_t k1, std::int64_t N,
                                                                  const float* x, std::int64_t incx,
                                                                  const matrix_source<float>& B, float* out) {
    static constexpr auto first = gemv_part_table<sweep::first_part>(std::make_integer_sequence<int, 16>{});
    static constexpr auto next = gemv_part_table<sweep::next_part>(std::make_integer_sequence<int, 16>{});
    for (std::int64_t g0 = k0; g0 < k1; g0 += kGemvRowGroup) {
        const std::int64_t rows = std::min(kGemvRowGroup, k1 - g0);
        const matrix_source<float> group{B.data + g0 * B.depth_stride, B.outer_stride, B.depth_stride, B.outer_extent};
        gemv_axpy_blocks(0, N, 16, g0 == k0 ? first : next, rows, x + g0 * incx, incx, group, out, 1, false);
    }
}
#endif

// gemv() for B rows contiguous along n cut into `blocks` row blocks (see kGemvBlockBytes).
inline void gemv_by_depth(kernel_isa isa, int blocks, std::int64_t N, std::int64_t K, const float* x,
                          std::int64_t incx, const matrix_source<float>& B, float* y, std::int64_t incy,
                          bool accumulate) {
    thread_local scratch<float> sums;  // the caller's: each block's partial sums, written by its thread
    float* part = sums.get(static_cast<std::size_t>(blocks * N));
    const int tasks = std::min(blocks, num_threads());
    nn_detail::run_tasks(tasks, [&](int t) {
#ifdef GRAFT_GEMM_X86_DISPATCH
        if (isa == kernel_isa::avx512) {
            for (int b = blocks * t / tasks; b < blocks * (t + 1) / tasks; ++b)
                gemv_block_grouped_avx512(K * b / blocks, K * (b + 1) / blocks, N, x, incx, B, part + b * N);
            return;
        }
#endif
        // 256 columns (the AVX-512 kernel's widest block) down all of this thread's blocks, then the
        // next 256: one unbroken sweep down B per column block
        for (std::int64_t c0 = 0; c0 < N; c0 += 256) {
            const std::int64_t c1 = std::min(N, c0 + 256);
            for (int b = blocks * t / tasks; b < blocks * (t + 1) / tasks; ++b) {
                const std::int64_t k0 = K * b / blocks, k1 = K * (b + 1) / blocks;
                const matrix_source<float> rows{B.data + k0 * B.depth_stride, B.outer_stride, B.depth_stride,
                                                B.outer_extent};
                gemv_columns(isa, c0, c1, k1 - k0, x + k0 * incx, incx, rows, part + b * N, 1, false);
            }
        }
    });
    // the blocks' sums in order, then (0 or y) + sum as in gemv_store
#ifdef GRAFT_GEMM_X86_DISPATCH
    if (isa == kernel_isa::avx512 && incy == 1) {
        gemv_sum_blocks_avx512(blocks, N, part, y, accumulate);
        return;
    }
#endif
    for (int b = 1; b < blocks; ++b) {
        const float* p = part + b * N;
        for (std::int64_t n = 0; n < N; ++n) part[n] += p[n];
    }
    for (std::int64_t n = 0; n < N; ++n) {
        float& d = y[n * incy];
        d = (accumulate ? d : 0.f) + part[n];
    }
}
}  // namespace detail

/// y[n*incy] (= or +=) sum_k x[k*incx] * B(n, k) for n < N: one row of A times B on graft's thread
/// pool, split by rows of B when they are contiguous along n and B is large (kGemvBlockBytes),
/// else by columns; each column's sum is the same whatever the thread count. For C[1,N] = a[1,K] *
/// B[K,N] pass B as {B, 1, ldb, N}.
inline void gemv(std::int64_t N, std::int64_t K, const float* x, std::int64_t incx, const matrix_source<float>& B,
                 float* y, std::int64_t incy, bool accumulate) {
    if (N <= 0) return;
    const kernel_isa isa = detail::active_isa();
    const double bytes = 4.0 * static_cast<double>(N) * static_cast<double>(std::max<std::int64_t>(K, 1));
    if (B.outer_stride == 1) {
        if (const int blocks = gemv_depth_blocks(bytes, K); blocks > 1) {
            detail::gemv_by_depth(isa, blocks, N, K, x, incx, B, y, incy, accumulate);
            return;
        }
    }
    // Chunks are whole vectors of columns (16 under AVX-512, 8 under AVX2).
    const std::int64_t unit = isa == kernel_isa::avx512 ? 16 : isa == kernel_isa::avx2 ? 8 : 64;
    const std::int64_t units = (N + unit - 1) / unit;
    const auto unit_bytes = static_cast<double>(unit * std::max<std::int64_t>(K, 1) * 4);
    nn_detail::parallel_for(units, static_cast<std::int64_t>(std::ceil(kGemvBytesPerThread / unit_bytes)),
                            [&](std::int64_t ub, std::int64_t ue) {
        detail::gemv_columns(isa, ub * unit, std::min(N, ue * unit), K, x, incx, B, y, incy, accumulate);
    });
}

}  // namespace graft::ops::gemm
