// graft/ops/detail/gemm_driver.hpp — graft's GEMM driver: BLIS-style blocking (KC x NC panels of B,
// MC x KC blocks of A), the orientation and thread split of a product, and run(), the entry point.
// Internal: include graft/ops/gemm.hpp.
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
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "graft/core/threads.hpp"
#include "graft/ops/detail/gemm_pack.hpp"
#include "graft/ops/detail/nn_util.hpp"

namespace graft::ops::gemm {

/// Work on rows of C once they are final (a fused bias and activation): run() calls
/// apply(self, C, r0, r1) for rows [r0, r1) of its C, all N columns, on the thread that computed
/// them while they are still in its cache (a share of rows per thread, or, where threads split the
/// columns, every row on the calling thread after the product).
template <class T>
struct row_epilogue {
    void (*apply)(const void* self, T* c, std::int64_t r0, std::int64_t r1) = nullptr;
    const void* self = nullptr;
    /// Optional, the same work as a bias and activation the AVX-512 and AVX2 micro-kernels apply as
    /// they store each tile's final sums (float, C's columns contiguous; AVX2 where they fill whole
    /// 16-column tiles): run() does that instead of apply() where its kernels can, the same bits
    /// without a pass over C afterwards.
    const tile_bias_act* in_tile = nullptr;
    void operator()(T* c, std::int64_t r0, std::int64_t r1) const {
        if (r0 < r1) apply(self, c, r0, r1);
    }
};

namespace detail {

#ifdef GRAFT_X86_DISPATCH
/// One AVX-512 tile of m <= 12 rows and n <= 16 (or, two, 32) columns, computing the least of 1,
/// 2, 4, 6, 8 or 12 rows that covers m (in small products the rows computed and not stored cost
/// most: [4,512]x[512,512] 2.5x dnnl_sgemm's time as 6 rows, 1.6x as 4; [8,...] 1.5x as 12, 1.0-1.15x as 8).
template <int R, class Rows>
void avx512_rows(std::int64_t kc, const Rows& a, const float* b, float* c, std::int64_t rs, std::int64_t cs, int m,
                 int n, bool acc, bool two, const tile_bias_act* e) {
    if (two) kernel_avx512<true, R>(kc, a, b, c, rs, cs, m, n, acc, e);
    else kernel_avx512<false, R>(kc, a, b, c, rs, cs, m, n, acc, e);
}
/// `e`: the tile's bias (from its first column) and activation, or null.
template <class Rows>
void avx512_tile(std::int64_t kc, const Rows& a, const float* b, float* c, std::int64_t rs, std::int64_t cs, int m,
                 int n, bool acc, bool two, const tile_bias_act* e = nullptr) {
    if (m <= 1) avx512_rows<1>(kc, a, b, c, rs, cs, m, n, acc, two, e);
    else if (m <= 2) avx512_rows<2>(kc, a, b, c, rs, cs, m, n, acc, two, e);
    else if (m <= 4) avx512_rows<4>(kc, a, b, c, rs, cs, m, n, acc, two, e);
    else if (m <= mr) avx512_rows<mr>(kc, a, b, c, rs, cs, m, n, acc, two, e);
    else if (m <= 8) avx512_rows<8>(kc, a, b, c, rs, cs, m, n, acc, two, e);
    else avx512_rows<2 * mr>(kc, a, b, c, rs, cs, m, n, acc, two, e);
}

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
                const std::int64_t tile_rows = wide ? 24 : mr;  // whole tiles of 12 and of 8 rows
                const std::int64_t padded = std::min(mc_block, (mc + tile_rows - 1) / tile_rows * tile_rows);
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
                        if (wide) {
                            // one B panel: 8-row tiles, whose row pointers stay in registers (12 rows
                            // read 12 pointers, 12 broadcasts and B per depth for 12 multiply-adds;
                            // 8 rows 10 loads for 8: LeNet's conv2 5.6 -> 4.7 us at batch 1, 603 ->
                            // 488 us at 128); two panels share each broadcast by two, so 12 rows stay
                            const int tile = two ? 2 * mr : 8;
                            const int m = static_cast<int>(std::min<std::int64_t>(tile, mc - ir));
                            const in_place_rows a{rows + ir, off + pc};  // wide implies a table: see serial()
                            avx512_tile(kc, a, bp, ct, rs, cs, m, n, acc, two);
                            ir += tile;
                            continue;
                        }
                        const int m = static_cast<int>(std::min<std::int64_t>(mr, mc - ir));
                        for (int half = 0; half < (two ? 2 : 1); ++half) {
                            const float* b = bp + half * nr * kc;
                            float* c = ct + half * nr * cs;
                            const int nh = half ? n - nr : std::min(n, nr);
                            if (off) kernel_avx2_indirect_any<true>(kc, rows + ir, off + pc, 0, b, c, rs, cs, m, nh, acc);
                            else kernel_avx2_indirect_any<false>(kc, rows + ir, nullptr, step, b, c, rs, cs, m, nh, acc);
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

/// Whether serial() applies `fuse` in the micro-kernels' stores (else it returns false and the
/// caller runs the row epilogue): float, C's columns contiguous, not the AVX2 path that reads A in
/// place (serial_indirect), and under the AVX2 kernels whole 16-column tiles. A `descend` store
/// reads C as the variable it steps, so only where each element of C is stored once: no
/// accumulate, one depth block (K <= kc_block).
template <class T, class SA>
bool tile_fusable([[maybe_unused]] std::int64_t N, [[maybe_unused]] std::int64_t K, [[maybe_unused]] const SA& A,
                  [[maybe_unused]] std::int64_t cs, [[maybe_unused]] bool accumulate,
                  [[maybe_unused]] kernel_fn<T> kern, [[maybe_unused]] bool wide,
                  [[maybe_unused]] const tile_bias_act* fuse) {
#ifdef GRAFT_X86_DISPATCH
    if constexpr (std::is_same_v<T, float>) {
        if (fuse == nullptr || cs != 1) return false;
        if (fuse->descend && (accumulate || K > kc_block)) return false;
        if constexpr (indirect_source<SA>)
            if (kern == &kernel_avx2_any && (!wide || A.depth_offsets()) && A.indirect(N)) return false;
        return wide || (kern == &kernel_avx2_any && N % nr == 0);
    }
#endif
    return false;
}

/// C[0:M, 0:N] (= or +=) A[a_off : a_off+M] * B[b_off : b_off+N], one thread. `fuse` (C's columns
/// contiguous; bias indexed by B's columns from 0): a bias and activation, or a descend step
/// (tile_bias_act), for the AVX-512 or AVX2 kernels to apply as they store the final sums (where
/// tile_fusable says they can). Returns whether they did (else the caller must).
template <class T, class SA, class SB>
bool serial(std::int64_t M, std::int64_t N, std::int64_t K, const SA& A, std::int64_t a_off, const SB& B,
            std::int64_t b_off, T* C, std::int64_t rs, std::int64_t cs, bool accumulate, kernel_fn<T> kern,
            bool wide, const packed_b<T>* pre = nullptr, [[maybe_unused]] const tile_bias_act* fuse = nullptr) {
#ifdef GRAFT_X86_DISPATCH
    if constexpr (std::is_same_v<T, float> && indirect_source<SA>) {
        // with the AVX-512 kernels a strided A is not read through a table of row pointers (that
        // ran 1.3x slower than packing on [128,784]x[784,512]): it is packed, or for few columns
        // of B read in place below (strided_rows); an im2col table is still read in place
        if (kern == &kernel_avx2_any && (!wide || A.depth_offsets()) && A.indirect(N)) {
            serial_indirect(M, N, K, A, a_off, B, b_off, C, rs, cs, accumulate, wide, pre);
            return false;
        }
    }
    // the AVX-512 tiles fuse any; the AVX2 ones whole tiles only, so C's columns must fill them
    const bool fused = tile_fusable<T>(N, K, A, cs, accumulate, kern, wide, fuse);
#else
    (void)wide;
    const bool fused = false;
#endif
    const std::int64_t nc_max = std::min(nc_block, (N + nr - 1) / nr * nr);
    const std::int64_t mc_max = std::min(mc_block, (M + mr - 1) / mr * mr);
    const std::int64_t kc_max = std::min(kc_block, K);
    T* bscratch = pre ? nullptr : scratch_b<T>(static_cast<std::size_t>(nc_max * kc_max));
    T* abuf = scratch_a<T>(static_cast<std::size_t>(mc_max * kc_max));
    // Under the AVX-512 kernels a row-major A multiplied by at most 256 columns is read in place
    // (strided_rows): each of its rows then meets few B panels, and packing it cost more than the
    // packed panels saved. One Xeon (Emerald Rapids) core, -O3, K 512, M 128: N 10 25 -> 18-21 us,
    // 64 61-63 -> 50-55, 128 107 -> 98-106, 192 153 -> 145-150, 256 202-205 -> 205-209 (784 deep:
    // 311-313 -> 305-310, so a wash there); [1000,784]x[784,10] 326-329 -> 213-216. N 384 and 512
    // ran as fast or slower in place. At depth 128, N 128 and 256 ran 3-5% slower in place
    // ([3200,128]x[128,128] 719-732 -> 756-764 us), so a shallow A goes in place only for N <= 64.
    // Only tiles of exactly 12, 8, 6, 4, 2 or 1 rows (the row counts the kernels compute) read in
    // place; a block's other last tile is packed (zero rows past its end).
    [[maybe_unused]] bool a_in_place = false;
#ifdef GRAFT_X86_DISPATCH
    if constexpr (std::is_same_v<SA, matrix_source<float>>)
        a_in_place = wide && A.depth_stride == 1 && A.indirect(N) && (N <= 64 || K >= 192);
#endif
    const auto whole = [](std::int64_t m) { return m >= 2 * mr || m == 8 || m == mr || m == 4 || m == 2 || m == 1; };
    for (std::int64_t jc = 0; jc < N; jc += nc_block) {
        const std::int64_t nc = std::min(nc_block, N - jc);
        for (std::int64_t pc = 0; pc < K; pc += kc_block) {
            const std::int64_t kc = std::min(kc_block, K - pc);
            const T* bbuf = bscratch;
            if (pre) bbuf = pre->panels(pc, kc, b_off + jc);  // b_off + jc: a multiple of nr
            else pack_b_block(B, b_off + jc, nc, pc, kc, bscratch);
            const bool acc = accumulate || pc > 0;
            const bool last = pc + kc >= K;  // the sums final as the kernels store them
            for (std::int64_t ic = 0; ic < M; ic += mc_block) {
                const std::int64_t mc = std::min(mc_block, M - ic);
                // AVX2: a block of 6q + r rows (r = 1..5) ends on (5r mod 6) tiles of 5 rows, where it
                // has that many, not on one of r rows (a 1-4 row tile keeps 2-8 accumulators, too
                // few to hide the multiply-add latency: on one Xeon core, hot, 6 rows 92.6 GFLOP/s,
                // 5 ~90, 4 81.7, 3 67.7, 2 50.0, 1 28.1): 128 rows as 18 x 6 + 4 x 5, not 21 x 6 +
                // 2 (or 20 x 6 + 4 + 4). Each 5-row tile gets a 6-row panel of its own, packed from
                // its first row, so the panels take as much room as the rows rounded up to 6. A block
                // too short for its 5-row tiles, of 6q + 1 or 6q + 2 rows (q >= 1), ends on tiles of 4
                // and 3 or 4 rows instead, its last panel packed from two rows before its place (the
                // panel before it gives the 4-row tile its first four rows). The same multiply-adds
                // per row, so the same bits.
                std::int64_t fives_at = mc;  // the first row of the 5-row tiles (mc: none)
                std::int64_t tail = -1;      // the last panel's place where it is packed from 2 rows before
#ifdef GRAFT_X86_DISPATCH
                if constexpr (std::is_same_v<T, float>) {
                    const std::int64_t fives = 5 * (mc % mr) % mr;
                    if (!wide && kern == &kernel_avx2_any) {
                        if (fives > 1 && mc >= 5 * fives) fives_at = mc - 5 * fives;
                        else if (mc > mr && (mc % mr == 1 || mc % mr == 2)) tail = mc - mc % mr;
                    }
                }
#endif
                for (std::int64_t ir = 0; ir < fives_at; ir += mr)  // (rows left in the panel's 12-row tile)
                    if (!a_in_place || !whole(mc - (ir - ir % (2 * mr))))
                        pack_a_panel(A, a_off + ic + (ir == tail ? ir - 2 : ir), pc, kc, abuf + ir * kc, wide);
                for (std::int64_t ir = fives_at, at = fives_at; ir < mc; ir += 5, at += mr)
                    pack_a_panel(A, a_off + ic + ir, pc, kc, abuf + at * kc, wide);
                for (std::int64_t jr = 0; jr < nc;) {
                    // wide: two B panels at once where there are two (the second may be partial)
                    const bool two = wide && nc - jr > nr;
                    const int n = static_cast<int>(std::min<std::int64_t>(two ? 2 * nr : nr, nc - jr));
#ifdef GRAFT_X86_DISPATCH
                    tile_bias_act tile_e;
                    const tile_bias_act* e = nullptr;
                    if (fused && last) {
                        tile_e = *fuse;
                        if (fuse->bias) tile_e.bias = fuse->bias + b_off + jc + jr;
                        e = &tile_e;
                    }
#endif
                    for (std::int64_t ir = 0; ir < mc;) {
                        T* ct = C + (ic + ir) * rs + (jc + jr) * cs;
#ifdef GRAFT_X86_DISPATCH
                        if constexpr (std::is_same_v<T, float>) {
                            if (wide) {  // two A panels (the second may be partial or, m <= 6, unread)
                                // A block's last 13-16 rows after a 12-row tile as 8 + 5..8 rows, not
                                // 12 + 1..4: a 1, 2 or 4-row tile keeps 2-8 accumulators, too few to
                                // hide the multiply-add latency (12+4 rows 176, 8+8 182 GFLOP/s hot).
                                // Only after a first tile: that one streams the B panel into L1, and
                                // with B from memory it pays to give it the most rows (the MLP's layers
                                // at 16 rows, weights from L3, ran 9% slower as 8 + 8). One Xeon core, products
                                // of the MLP's two big layers, alternating: M 26 239 -> 226 us, 28
                                // 243 -> 238, 40 344 -> 338; 2 threads at M 128 (64 rows each) 548 ->
                                // 540. The second tile's rows are the middle panel's last four
                                // (packed_pair_at<4> two rows into it) and the last panel's first.
                                if (!a_in_place && ir > 0 && mc - ir > 2 * mr && mc - ir <= 16) {
                                    const float* b = bbuf + jr * kc;
                                    const packed_pair first{abuf + ir * kc, abuf + (ir + mr) * kc};
                                    avx512_rows<8>(kc, first, b, ct, rs, cs, 8, n, acc, two, e);
                                    const packed_pair_at<4> second{abuf + (ir + mr) * kc + 2, abuf + (ir + 2 * mr) * kc};
                                    const int m2 = static_cast<int>(mc - ir - 8);
                                    if (m2 <= mr) avx512_rows<mr>(kc, second, b, ct + 8 * rs, rs, cs, m2, n, acc, two, e);
                                    else avx512_rows<8>(kc, second, b, ct + 8 * rs, rs, cs, m2, n, acc, two, e);
                                    ir = mc;
                                    continue;
                                }
                                const int m = static_cast<int>(std::min<std::int64_t>(2 * mr, mc - ir));
                                if (a_in_place && whole(m)) {
                                    if constexpr (std::is_same_v<SA, matrix_source<float>>) {
                                        const strided_rows rows(A.data + (a_off + ic + ir) * A.outer_stride + pc,
                                                                A.outer_stride, m);
                                        avx512_tile(kc, rows, bbuf + jr * kc, ct, rs, cs, m, n, acc, two, e);
                                    }
                                    ir += 2 * mr;
                                    continue;
                                }
                                const packed_pair pair{abuf + ir * kc, abuf + std::min(ir + mr, mc) * kc};
                                avx512_tile(kc, pair, bbuf + jr * kc, ct, rs, cs, m, n, acc, two, e);
                                ir += 2 * mr;
                                continue;
                            }
                        }
#endif
                        const int m = static_cast<int>(std::min<std::int64_t>(mr, mc - ir));
#ifdef GRAFT_X86_DISPATCH
                        if constexpr (std::is_same_v<T, float>) {
                            // one AVX2 tile of `rows` rows from panel `a` into `c`, fused where e says
                            const auto tile = [&](const float* a, float* c, int rows) {
                                if (e) kernel_avx2_any_fused(kc, a, bbuf + jr * kc, c, rs, cs, rows, n, acc, e);
                                else kern(kc, a, bbuf + jr * kc, c, rs, cs, rows, std::min(n, nr), acc);
                            };
                            if (ir == fives_at) {  // the 5-row tiles, each from its own panel
                                for (std::int64_t at = ir; ir < mc; ir += 5, at += mr)
                                    tile(abuf + at * kc, C + (ic + ir) * rs + (jc + jr) * cs, 5);
                                continue;
                            }
                            if (ir + mr == tail) {  // 4 rows of this panel, then the rest from the last
                                tile(abuf + ir * kc, ct, 4);
                                tile(abuf + tail * kc, ct + 4 * rs, static_cast<int>(mc - ir - 4));
                                ir = mc;
                                continue;
                            }
                            if (e) {  // (not wide: one 16-column panel, whole)
                                tile(abuf + ir * kc, ct, m);
                                ir += mr;
                                continue;
                            }
                        }
#endif
                        kern(kc, abuf + ir * kc, bbuf + jr * kc, ct, rs, cs, m, std::min(n, nr), acc);
                        if (two) kern(kc, abuf + ir * kc, bbuf + (jr + nr) * kc, ct + nr * cs, rs, cs, m, n - nr, acc);
                        ir += mr;
                    }
                    jr += two ? 2 * nr : nr;
                }
            }
        }
    }
    return fused;
}

/// The 6-row kernel for T, and (wide) whether 12-row AVX-512 tiles go with it.
template <class T>
kernel_fn<T> pick_kernel(bool& wide) {
    wide = false;
#ifdef GRAFT_X86_DISPATCH
    if constexpr (std::is_same_v<T, float>) {
        const kernel_isa isa = active_isa();
        wide = isa == kernel_isa::avx512;
        if (isa != kernel_isa::portable) return &kernel_avx2_any;
    }
#endif
    return &kernel_portable<T>;
}

/// The least work (flops) worth handing to another thread: waking a pool thread and joining it
/// costs ~10-20 us on the machines measured, as much as ~1M flops of GEMM; smaller products run on
/// the calling thread (a batch-1 MLP layer ran 1.7x slower split over two threads).
inline constexpr double kFlopsPerThread = 2.0e6;
/// The same where every other thread is a worker still spinning from the last parallel call
/// (run_tasks: for GRAFT_SPIN_US after each), as between the layers of a running model: it takes
/// a share within a microsecond or two. On 2 vCPUs (Zen 5), alternating calls: [128,512]x[512,10]
/// 19 -> 12 us split, [32,512]x[512,10] 5.3 -> 4.6, [128,84]x[84,10] 3.5 -> 3.4; with the worker
/// parked every split lost 3-4 us (the caller runs both shares before it wakes).
inline constexpr double kFlopsPerSpinningThread = 0.25e6;

/// Threads for a product of `flops` given at most `threads` and `spinning` workers spinning now.
inline int product_threads(double flops, int threads, int spinning) {
    const double per = spinning >= threads - 1 ? kFlopsPerSpinningThread : kFlopsPerThread;
    return static_cast<int>(std::min<double>(threads, std::max(1.0, flops / per)));
}

/// Whether run() computes C = A*B as C^T = B^T A^T (see there): the AVX2 kernels, B not packed
/// beforehand and transposed (columns contiguous along k, rows apart), A row-major, at most 64 rows
/// of A and 128 columns of B or more.
template <class T>
bool transposed_pays([[maybe_unused]] std::int64_t M, [[maybe_unused]] std::int64_t N,
                     [[maybe_unused]] const matrix_source<T>& A, [[maybe_unused]] const matrix_source<T>& B,
                     [[maybe_unused]] const packed_b<T>* pre) {
#ifdef GRAFT_X86_DISPATCH
    return pre == nullptr && active_isa() == kernel_isa::avx2 && B.depth_stride == 1 && B.outer_stride != 1 &&
           A.depth_stride == 1 && M >= 2 && M <= 64 && N >= 128;
#else
    return false;
#endif
}

template <class T, class SA, class SB>
void oriented(std::int64_t M, std::int64_t N, std::int64_t K, const SA& A, const SB& B, T* C, std::int64_t rs,
              std::int64_t cs, bool accumulate, int max_threads, const packed_b<T>* pre, const row_epilogue<T>* done) {
    bool wide = false;
    const kernel_fn<T> kern = pick_kernel<T>(wide);
    const double flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
    int threads = max_threads > 0 ? max_threads : num_threads();
    if (threads > 1) threads = product_threads(flops, threads, graft::detail::spinning_workers());
    const std::int64_t m_panels = (M + mr - 1) / mr, n_panels = (N + nr - 1) / nr;
    // With B packed beforehand and the AVX-512 kernels (which pack A), a split of the rows packs each
    // row of A once, where a split of the columns packs all of A on every thread: the MLP's
    // [128,784]x[784,512] then [128,512]x[512,512] on 2 threads, best of 60 interleaved, 562-564 ->
    // 538-540 us (medians 605-610 -> 577-587). Rows go in units of 4 (a share may end on a 4-row
    // tile: 64 + 64 rows, not 72 + 56), and only where each thread gets four 12-row tiles or more.
    // The same under the AVX2 kernels, in units of 2 (a share's last rows go as 5-row tiles), where
    // each thread gets 24 rows or more: the MLP's three layers at batch 128 on 2 threads, one Xeon
    // (Emerald Rapids) under AVX2, alternating builds, 1050-1057 -> 994-1003 us; batch 96 782 ->
    // 749-754; 48 and 64 the same either way.
    const bool rows_of_packed = pre != nullptr && M >= (wide ? 48 : 24) * threads;
    const bool split_n = !rows_of_packed && n_panels >= m_panels;
    const std::int64_t panels = split_n ? n_panels : m_panels;
    const int tasks = static_cast<int>(std::min<std::int64_t>(threads, panels));
    // the bias and activation in the kernels' stores where they can (serial() says whether they did)
    const tile_bias_act* fuse = done && done->in_tile && done->in_tile->columns == N && cs == 1 ? done->in_tile : nullptr;
    if (tasks <= 1) {
        const bool fused = serial(M, N, K, A, 0, B, 0, C, rs, cs, accumulate, kern, wide, pre, fuse);
        if (done && !fused) (*done)(C, 0, M);
        return;
    }
    // rows over a packed B in 4-row (AVX-512) or 2-row (AVX2) units (above), else in whole tiles
    const std::int64_t unit = split_n ? nr : rows_of_packed ? (wide ? 4 : 2) : (wide ? 2 * mr : mr);
    const std::int64_t units = split_n ? panels : (M + unit - 1) / unit;
    const std::int64_t per = (units + tasks - 1) / tasks * unit;
    std::atomic<bool> unfused{false};  // every task takes the same path; any one that could not fuse says so
    nn_detail::run_tasks(tasks, [&](int t) {
        const std::int64_t b = t * per;
        const std::int64_t e = std::min(split_n ? N : M, b + per);
        if (b >= e) return;
        if (split_n) {
            if (!serial(M, e - b, K, A, 0, B, b, C + b * cs, rs, cs, accumulate, kern, wide, pre, fuse))
                unfused.store(true, std::memory_order_relaxed);
        } else {
            const bool fused = serial(e - b, N, K, A, b, B, 0, C + b * rs, rs, cs, accumulate, kern, wide, pre, fuse);
            if (done && !fused) (*done)(C, b, e);  // this thread's rows, from its own cache
        }
    });
    if (split_n && done && unfused.load(std::memory_order_relaxed)) (*done)(C, 0, M);
}

}  // namespace detail

/// Whether run(M, N, K, A, B, C, N, 1, false, 1, pre, done) with done->in_tile a `descend` step
/// (tile_bias_act) applies it in the micro-kernels' stores, C then the variable stepped in place;
/// where not, it would store the product into C and call done->apply, so a caller asks first.
template <class SA>
bool descends_in_tile(std::int64_t N, std::int64_t K, const SA& A) {
    bool wide = false;
    const kernel_fn<float> kern = detail::pick_kernel<float>(wide);
    tile_bias_act step;
    step.descend = true;
    return detail::tile_fusable<float>(N, K, A, 1, false, kern, wide, &step);
}

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
/// `done`: called on rows of C once they are final (see row_epilogue).
template <class T, class SA, class SB>
void run(std::int64_t M, std::int64_t N, std::int64_t K, const SA& A, const SB& B, T* C, std::int64_t rs,
         std::int64_t cs, bool accumulate, int max_threads = 0, const packed_b<T>* pre = nullptr,
         const row_epilogue<T>* done = nullptr) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        if (!accumulate) {
            for (std::int64_t i = 0; i < M; ++i)
                for (std::int64_t j = 0; j < N; ++j) C[i * rs + j * cs] = T(0);
        }
        if (done) (*done)(C, 0, M);
        return;
    }
    // Not as the transposed problem C^T = B^T A^T, even where that wastes less of the register tile:
    // it stores C with a column stride and packs A^T by gathers (measured with the AVX-512 kernels,
    // untransposed faster every time: [128,512]x[512,10] 35 vs 52 us, [128,120]x[120,84] 23 vs 50,
    // [1000,256]x[256,4] 117 vs 176, [25,50000]x[50000,6] 978 vs 1060) -- but for the AVX2 kernels
    // and a transposed B (a backward product dX = dY * W^T) under few rows of A: B^T is then an A
    // read in place, and A^T a small B, where B had to be transposed panel by panel for few tiles
    // of rows. [M,512]x[512,512]^T on one Zen 5 core under AVX2: M 16 122 -> 83 us, 32 200 -> 165,
    // 64 341 -> 327, 96 521 -> 528 (AVX-512: 124 -> 192 at 32). Each element the same
    // multiply-adds in the same order, so the same bits.
    if constexpr (std::is_same_v<T, float> && std::is_same_v<SA, matrix_source<float>> &&
                  std::is_same_v<SB, matrix_source<float>>) {
        if (detail::transposed_pays(M, N, A, B, pre)) {
            const matrix_source<float> bt{B.data, B.outer_stride, B.depth_stride, N};  // row j of B^T: column j of B
            const matrix_source<float> at{A.data, A.outer_stride, A.depth_stride, M};  // column i of A^T: row i of A
            detail::oriented<float>(N, M, K, bt, at, C, cs, rs, accumulate, max_threads, nullptr, nullptr);
            if (done) (*done)(C, 0, M);
            return;
        }
    }
    detail::oriented(M, N, K, A, B, C, rs, cs, accumulate, max_threads, pre && pre->fits(K, N) ? pre : nullptr, done);
}

}  // namespace graft::ops::gemm
