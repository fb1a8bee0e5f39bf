// graft/ops/detail/gemm_pack.hpp — the operands of graft's GEMM: panel sources (matrix_source, and
// the indirect ones a convolution gives), per-thread scratch, B packed into nr-column panels (once, as
// packed_b, for constant weights) and A into mr-row panels. Internal: include graft/ops/gemm.hpp.
#pragma once

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
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "graft/ops/detail/gemm_kernels.hpp"

namespace graft::ops::gemm {

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
        if (outer_stride == 1 && valid == r_count && (r_count == nr || r_count == mr)) {
            // whole B panels, or whole panels of a transposed A (a weight gradient's X^T): copies of a
            // size the compiler knows, where the loop below goes element by element (the MLP's dW
            // products on one AVX-512 Xeon core: 1.12-1.16x dnnl_sgemm's time that way, 0.93-1.04x so)
            const T* s = data + k0 * depth_stride + o0;
            for (std::int64_t k = 0; k < kc; ++k, s += depth_stride) {
                if (r_count == nr) std::memcpy(dst + k * nr, s, sizeof(T) * nr);
                else std::memcpy(dst + k * mr, s, sizeof(T) * mr);
            }
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

/// Two dense matrices stacked along the outer index as one panel source (an A of C = [A1; A2] * B):
/// outer o < top.outer_extent is top's row o, the rest bottom's row o - top.outer_extent. One
/// product then packs B once where a product per part packs it again (an LSTM's weight gradient
/// [x | h_prev]^T * dgates over 100 steps: dgates 6.5 MB).
template <class T>
struct stacked_source {
    matrix_source<T> top, bottom;

    [[nodiscard]] std::int64_t extent() const { return top.outer_extent + bottom.outer_extent; }
    void pack(std::int64_t o0, int r_count, std::int64_t k0, std::int64_t kc, T* dst) const {
        const std::int64_t split = top.outer_extent;
        if (o0 + r_count <= split) {
            top.pack(o0, r_count, k0, kc, dst);
        } else if (o0 >= split) {
            bottom.pack(o0 - split, r_count, k0, kc, dst);
        } else {  // the panel across the seam
            for (std::int64_t k = 0; k < kc; ++k) {
                for (int r = 0; r < r_count; ++r) {
                    const std::int64_t o = o0 + r, b = o - split;
                    dst[k * r_count + r] =
                        o < split ? top.data[o * top.outer_stride + (k0 + k) * top.depth_stride]
                        : b < bottom.outer_extent ? bottom.data[b * bottom.outer_stride + (k0 + k) * bottom.depth_stride]
                                                  : T(0);
                }
            }
        }
    }
};

namespace detail {

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
/// A block of a product's rows for a caller to finish (apply_gradient_descent_of_product).
template <class T>
T* scratch_c(std::size_t n) {
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
/// last zero-padded), panel j at dst + j*nr*kc. A dense B with rows contiguous along n is read four
/// rows at a time, each in order (what the prefetchers follow), not panel by panel (one cache line
/// per row per panel: packing [784,512] took 23% of the product's time that way), and not one row
/// at a time either: a row's panel rows land kc*nr*sizeof(T) bytes apart (20 KiB for kc = 320, a
/// multiple of 4 KiB), all in one L1 set, each write evicting the last; four rows write four
/// consecutive lines per panel. [784,512] in three 320-deep blocks on a Zen 5 core: 96 -> 33 us.
template <class S, class T>
void pack_b_block(const S& B, std::int64_t n0, std::int64_t nc, std::int64_t k0, std::int64_t kc, T* dst) {
    if constexpr (std::is_same_v<S, matrix_source<T>>) {
        if (B.outer_stride == 1 && n0 + nc <= B.outer_extent) {
            const std::int64_t whole = nc / nr, ld = B.depth_stride;
            constexpr std::int64_t rows = 4;
            std::int64_t k = 0;
            for (; k + rows <= kc; k += rows) {
                const T* src = B.data + (k0 + k) * ld + n0;
                for (std::int64_t j = 0; j < whole; ++j) {
                    T* d = dst + (j * kc + k) * nr;
                    const T* s = src + j * nr;
                    for (std::int64_t q = 0; q < rows; ++q) std::memcpy(d + q * nr, s + q * ld, sizeof(T) * nr);
                }
            }
            for (; k < kc; ++k) {
                const T* row = B.data + (k0 + k) * ld + n0;
                for (std::int64_t j = 0; j < whole; ++j)
                    std::memcpy(dst + (j * kc + k) * nr, row + j * nr, sizeof(T) * nr);
            }
            if (whole * nr < nc) B.pack(n0 + whole * nr, nr, k0, kc, dst + whole * nr * kc);
            return;
        }
#ifdef GRAFT_X86_DISPATCH
        if constexpr (std::is_same_v<T, float>) {
            // columns contiguous along k (a transposed B): whole panels by register transposes
            if (B.depth_stride == 1 && active_isa() != kernel_isa::portable) {
                const std::int64_t whole = std::clamp<std::int64_t>(B.outer_extent - n0, 0, nc) / nr;
                const float* cols[nr];
                const bool avx512 = active_isa() == kernel_isa::avx512;
                for (std::int64_t j = 0; j < whole; ++j) {
                    for (int c = 0; c < nr; ++c) cols[c] = B.data + (n0 + j * nr + c) * B.outer_stride + k0;
                    if (avx512) pack_b_panel_cols_avx512(cols, kc, dst + j * nr * kc);
                    else pack_b_panel_cols_avx2(cols, kc, dst + j * nr * kc);
                }
                for (std::int64_t jr = whole * nr; jr < nc; jr += nr) B.pack(n0 + jr, nr, k0, kc, dst + jr * kc);
                return;
            }
        }
#endif
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
    packed_b(std::int64_t K, std::int64_t N, const SB& B) {
        repack(K, N, B);
    }
    /// Packs another B here, reusing this object's memory where it is large enough (a per-thread
    /// packed_b for products whose B changes on every call). Drops the grouped copies. Not while
    /// another thread reads this object.
    template <class SB>
    void repack(std::int64_t K, std::int64_t N, const SB& B) {
        grouped_[0].reset();
        grouped_[1].reset();
        K_ = K;
        N_ = N;
        padded_n_ = (N + nr - 1) / nr * nr;
        if (K <= 0 || N <= 0 || N > nc_block) {
            data_.reset();
            capacity_ = 0;
            return;
        }
        const auto bytes = (static_cast<std::size_t>(K * padded_n_) * sizeof(T) + 63) / 64 * 64;
        if (bytes > capacity_) {
            data_.reset();  // the old block goes before the new one is taken
            capacity_ = 0;
            data_.reset(static_cast<T*>(std::aligned_alloc(64, bytes)));
            if (!data_) throw std::bad_alloc();
            capacity_ = bytes;
        }
        for (std::int64_t pc = 0; pc < K; pc += kc_block)
            detail::pack_b_block(B, 0, N, pc, std::min(kc_block, K - pc), data_.get() + pc * padded_n_);
    }
    /// True when B was packed (N <= nc_block).
    [[nodiscard]] bool packed() const { return data_ != nullptr; }
    /// True when this packs a B of K x N.
    [[nodiscard]] bool fits(std::int64_t K, std::int64_t N) const { return packed() && K == K_ && N == N_; }
    /// K and N of the packed B.
    [[nodiscard]] std::int64_t depth() const { return K_; }
    [[nodiscard]] std::int64_t cols() const { return N_; }
    /// The panels from column n0 (a multiple of nr) of the block at depth pc, kc deep.
    [[nodiscard]] const T* panels(std::int64_t pc, std::int64_t kc, std::int64_t n0) const {
        return data_.get() + pc * padded_n_ + n0 * kc;
    }
    /// Whether this sweep over all of B (gemv_packed) goes backwards: every other one does, so a
    /// sweep starts on the panels the last one read most recently. Weights a little larger than a
    /// core's L2, read once per run, otherwise miss on every line (a cyclic read evicts each line
    /// just before its next use); alternated, the part the cache keeps is read from it. A 784-512-
    /// 512-10 MLP at batch 1 (2.7 MB of weights) on one core with a 2 MiB L2: 78 -> 57 us.
    [[nodiscard]] bool next_sweep_reversed() const { return (sweeps_.fetch_add(1, std::memory_order_relaxed) & 1) != 0; }


    /// The panels again, laid out for a matrix-vector product (gemv_packed) reading `per` panels
    /// (per in {4, 8}) at a time: per group of `per` panels (the last may have fewer), all K depths
    /// in order, each depth the group's panel rows side by side ([group][k][panel][nr]). A group is
    /// then one forward stream, where the panels (a kc_block-deep block of each, one after the
    /// other) are `per` streams read side by side: on an AMD EPYC (Zen 5) core the 784x512 and
    /// 512x512 weights from L3 in 37 us as 8 panels, 33 us as one stream. Made from the panels on
    /// the first call for this `per`, then kept (as many bytes again as the panels: only weights
    /// that meet a one-row product pay them). Thread-safe. Null when not packed().
    [[nodiscard]] const T* grouped(int per) const {
        if (!packed() || (per != 4 && per != 8)) return nullptr;
        const std::lock_guard lock(grouped_mu_);  // uncontended: tens of ns against a product of microseconds
        auto& g = grouped_[per == 8 ? 1 : 0];
        if (g) return g.get();
        const auto bytes = static_cast<std::size_t>(K_ * padded_n_) * sizeof(T);
        std::unique_ptr<T, free_deleter> copy(static_cast<T*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
        if (!copy) throw std::bad_alloc();
        const std::int64_t count = padded_n_ / nr;
        for (std::int64_t j0 = 0; j0 < count; j0 += per) {
            const std::int64_t p = std::min<std::int64_t>(per, count - j0);
            T* dst = copy.get() + j0 * nr * K_;
            for (std::int64_t pc = 0; pc < K_; pc += kc_block) {
                const std::int64_t kc = std::min(kc_block, K_ - pc);
                for (std::int64_t q = 0; q < p; ++q) {
                    const T* src = panels(pc, kc, (j0 + q) * nr);
                    for (std::int64_t k = 0; k < kc; ++k)
                        std::memcpy(dst + ((pc + k) * p + q) * nr, src + k * nr, nr * sizeof(T));
                }
            }
        }
        g = std::move(copy);
        return g.get();
    }

    // moves: nobody else reads either object meanwhile
    packed_b(packed_b&& o) noexcept
        : K_(o.K_), N_(o.N_), padded_n_(o.padded_n_), capacity_(std::exchange(o.capacity_, 0)),
          data_(std::move(o.data_)), grouped_{std::move(o.grouped_[0]), std::move(o.grouped_[1])} {}
    packed_b& operator=(packed_b&& o) noexcept {
        K_ = o.K_, N_ = o.N_, padded_n_ = o.padded_n_, data_ = std::move(o.data_);
        capacity_ = std::exchange(o.capacity_, 0);
        for (int i = 0; i < 2; ++i) grouped_[i] = std::move(o.grouped_[i]);
        return *this;
    }

private:
    struct free_deleter {
        void operator()(T* p) const { std::free(p); }
    };
    std::int64_t K_ = 0, N_ = 0, padded_n_ = 0;
    std::size_t capacity_ = 0;  ///< bytes at data_
    std::unique_ptr<T, free_deleter> data_;
    mutable std::atomic<unsigned> sweeps_{0};
    mutable std::mutex grouped_mu_;                        ///< guards grouped_
    mutable std::unique_ptr<T, free_deleter> grouped_[2];  ///< the grouped copies: per = 4, per = 8
};

namespace detail {

/// Packs A rows [o0, o0 + mr) at depths [k0, k0 + kc) as one mr-row panel (A.pack), a dense float
/// A with rows contiguous along k by register transposes: AVX-512's when `avx512`, else AVX2's
/// where the CPU runs the AVX2 kernels (under AVX2 an A multiplied by at most 256 columns of B is
/// not packed at all: kernel_avx2_indirect_rows broadcasts its values straight from A; see serial()).
template <class S, class T>
void pack_a_panel(const S& A, std::int64_t o0, std::int64_t k0, std::int64_t kc, T* dst, [[maybe_unused]] bool avx512) {
#ifdef GRAFT_X86_DISPATCH
    if constexpr (std::is_same_v<S, matrix_source<float>>) {
        if (A.depth_stride == 1 && o0 + mr <= A.outer_extent && (avx512 || active_isa() != kernel_isa::portable)) {
            const float* rows[mr];
            for (int r = 0; r < mr; ++r) rows[r] = A.data + (o0 + r) * A.outer_stride + k0;
            if (avx512) pack_a6_avx512(rows, kc, dst);
            else pack_a6_avx2(rows, kc, dst);
            return;
        }
    }
#endif
    A.pack(o0, mr, k0, kc, dst);
}

}  // namespace detail

}  // namespace graft::ops::gemm
