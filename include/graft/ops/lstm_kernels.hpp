// graft/ops/lstm_kernels.hpp — the inner loops of BlockLSTM / BlockLSTMGrad (graft/ops/rnn_cells.hpp):
// one batch row of the LSTM's gate pass forwards and backwards, and a row-major matrix product
// for float (graft's GEMM) and double (Eigen, one thread).
//
//   lstm_kernels::gates_forward(H, cfg, g, b, cs_prev, wci, wcf, wco, {i, cs, f, o, ci, co, h});
//   // g: the row's 4H gate pre-activations without the bias; writes the seven outputs' rows
//
// float rows run 16 lanes at a time with AVX-512F, or 8 with AVX2 + FMA, when the CPU has them
// (whatever flags the program was built with; the same operations per lane, so the same bits): exp
// by range reduction (x = n ln2 + r, |r| <= ln2/2) and a degree-7 polynomial, sigmoid(x) =
// 1 / (1 + exp(-x)), tanh(x) = -sign(x) e / (e + 2) with e = expm1(-2|x|) by the same reduction
// (relative errors of a few ulp; NaN propagates). Other rows and dtypes use std::exp / std::tanh,
// as the per-step cell does.
#pragma once

#include "graft/core/config.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "graft/core/threads.hpp"
#include "graft/ops/gemm.hpp"

namespace graft::ops::lstm_kernels {

/// What the gate pass needs besides the rows.
struct gate_config {
    std::int64_t off_i = 0, off_c = 0, off_f = 0, off_o = 0;  ///< gate column offsets in a 4H row
    double forget_bias = 1.0;
    double cell_clip = 0.0;  ///< clip cs to [-cell_clip, cell_clip] when > 0
    bool use_peephole = false;
};

/// The seven output rows of one step and batch row.
template <class T>
struct out_rows {
    T *i, *cs, *f, *o, *ci, *co, *h;
};

namespace detail {

template <class T>
T sigmoid(T v) { return T(1) / (T(1) + std::exp(-v)); }

/// Columns [j0, H) of the row, scalar.
template <class T>
void gates_forward_scalar(std::int64_t j0, std::int64_t H, const gate_config& p, const T* g, const T* b,
                          const T* cs_prev, const T* wci, const T* wcf, const T* wco, const out_rows<T>& r) {
    const T fb = static_cast<T>(p.forget_bias), clip = static_cast<T>(p.cell_clip);
    for (std::int64_t j = j0; j < H; ++j) {
        const T cp = cs_prev[j];
        const T i = sigmoid(g[p.off_i + j] + b[p.off_i + j] + (p.use_peephole ? cp * wci[j] : T(0)));
        const T ci = std::tanh(g[p.off_c + j] + b[p.off_c + j]);
        const T f = sigmoid(g[p.off_f + j] + b[p.off_f + j] + fb + (p.use_peephole ? cp * wcf[j] : T(0)));
        T c = i * ci + f * cp;
        if (p.cell_clip > 0) c = std::clamp(c, -clip, clip);
        const T co = std::tanh(c);
        const T o = sigmoid(g[p.off_o + j] + b[p.off_o + j] + (p.use_peephole ? c * wco[j] : T(0)));
        r.i[j] = i, r.ci[j] = ci, r.f[j] = f, r.cs[j] = c, r.co[j] = co, r.o[j] = o, r.h[j] = o * co;
    }
}

/// Columns [j0, H) of one row's dgates and cs_prev_grad from dcs (the gradient reaching cs, without
/// the output's tanh path) and dh; peephole gradients added to wci_g / wcf_g / wco_g.
template <class T, bool Peephole>
[[gnu::always_inline]] inline void gates_backward_body(std::int64_t j0, std::int64_t H, const gate_config& p,
                                                       const T* cs_prev, const T* wci, const T* wcf, const T* wco,
                                                       const T* i, const T* cs, const T* f, const T* o, const T* ci,
                                                       const T* co, const T* dcs_in, const T* dh, T* dg,
                                                       T* cs_prev_grad, T* wci_g, T* wcf_g, T* wco_g) {
    for (std::int64_t j = j0; j < H; ++j) {
        const T d_o = o[j] * (T(1) - o[j]) * dh[j] * co[j];
        T dcs = (T(1) - co[j] * co[j]) * dh[j] * o[j] + dcs_in[j];
        if constexpr (Peephole) dcs += d_o * wco[j];
        const T dci = (T(1) - ci[j] * ci[j]) * dcs * i[j];
        const T df = f[j] * (T(1) - f[j]) * dcs * cs_prev[j];
        const T di = i[j] * (T(1) - i[j]) * dcs * ci[j];
        dg[p.off_i + j] = di, dg[p.off_c + j] = dci, dg[p.off_f + j] = df, dg[p.off_o + j] = d_o;
        if constexpr (Peephole) {
            cs_prev_grad[j] = dcs * f[j] + di * wci[j] + df * wcf[j];
            wci_g[j] += di * cs_prev[j];
            wcf_g[j] += df * cs_prev[j];
            wco_g[j] += d_o * cs[j];
        } else {
            cs_prev_grad[j] = dcs * f[j];
        }
    }
}

}  // namespace detail
}  // namespace graft::ops::lstm_kernels

// The AVX2 + FMA gate loops of the LSTM cell (forward and backward): ops/arch/x86/lstm_kernels.hpp.
#include "graft/ops/arch/x86/lstm_kernels.hpp"

namespace graft::ops::lstm_kernels {

/// The forward gate pass of one batch row: g holds the row's gate pre-activations [4H] without the
/// bias b; cs_prev is the row's previous cell state. Writes the H columns of each output row.
/// Never throws.
template <class T>
void gates_forward(std::int64_t H, const gate_config& p, const T* g, const T* b, const T* cs_prev, const T* wci,
                   const T* wcf, const T* wco, const out_rows<T>& r) {
#ifdef GRAFT_X86_DISPATCH
    if constexpr (std::is_same_v<T, float>) {
        const gemm::kernel_isa isa = gemm::active_kernel();  // what the CPU and GRAFT_MAX_CPU_ISA allow
        if (isa == gemm::kernel_isa::avx512) {
            detail::gates_forward_avx512(H, p, g, b, cs_prev, wci, wcf, wco, r);
            return;
        }
        if (isa == gemm::kernel_isa::avx2) {
            detail::gates_forward_avx2(H, p, g, b, cs_prev, wci, wcf, wco, r);
            return;
        }
    }
#endif
    detail::gates_forward_scalar<T>(0, H, p, g, b, cs_prev, wci, wcf, wco, r);
}

/// The backward gate pass of one batch row: the gate pre-activation gradients dg [4H] and
/// cs_prev_grad [H] from the row's saved gate values, dcs (the gradient reaching cs from later steps
/// and the cs output) and dh (reaching h); with peepholes adds their gradients to wci_g, wcf_g,
/// wco_g. Never throws.
template <class T>
void gates_backward(std::int64_t H, const gate_config& p, const T* cs_prev, const T* wci, const T* wcf,
                    const T* wco, const T* i, const T* cs, const T* f, const T* o, const T* ci, const T* co,
                    const T* dcs, const T* dh, T* dg, T* cs_prev_grad, T* wci_g, T* wcf_g, T* wco_g) {
#ifdef GRAFT_X86_DISPATCH
    if constexpr (std::is_same_v<T, float>) {
        const gemm::kernel_isa isa = gemm::active_kernel();  // what the CPU and GRAFT_MAX_CPU_ISA allow
        if (isa == gemm::kernel_isa::avx512) {
            (p.use_peephole ? detail::gates_backward_avx512<true> : detail::gates_backward_avx512<false>)(
                H, p, cs_prev, wci, wcf, wco, i, cs, f, o, ci, co, dcs, dh, dg, cs_prev_grad, wci_g, wcf_g, wco_g);
            return;
        }
        if (isa == gemm::kernel_isa::avx2) {
            (p.use_peephole ? detail::gates_backward_avx2<true> : detail::gates_backward_avx2<false>)(
                H, p, cs_prev, wci, wcf, wco, i, cs, f, o, ci, co, dcs, dh, dg, cs_prev_grad, wci_g, wcf_g, wco_g);
            return;
        }
    }
#endif
    (p.use_peephole ? detail::gates_backward_body<T, true> : detail::gates_backward_body<T, false>)(
        0, H, p, cs_prev, wci, wcf, wco, i, cs, f, o, ci, co, dcs, dh, dg, cs_prev_grad, wci_g, wcf_g, wco_g);
}

/// A row-major operand of a product: element (r, c) of op(M) is data[r * row + c * col].
template <class T>
struct operand {
    const T* data;
    std::int64_t row, col;
};

/// C[M,N] (= or +=) A[M,K] * B[K,N], C row-major with leading dimension ldc, on up to
/// `threads` threads (0: graft::num_threads()). float runs graft's GEMM (`pre`: B packed
/// beforehand, used when it fits); double runs Eigen on one thread. Throws std::bad_alloc only.
template <class T>
void product(std::int64_t M, std::int64_t N, std::int64_t K, operand<T> A, operand<T> B, T* C, std::int64_t ldc,
             bool accumulate, int threads = 0, const gemm::packed_b<float>* pre = nullptr) {
    if (M <= 0 || N <= 0) return;
    if constexpr (std::is_same_v<T, float>) {
        gemm::run(M, N, K, gemm::matrix_source<float>{A.data, A.row, A.col, M},
                  gemm::matrix_source<float>{B.data, B.col, B.row, N}, C, ldc, 1, accumulate, threads, pre);
    } else {
        using dyn = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;
        using mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
        Eigen::Map<mat, 0, Eigen::OuterStride<>> c(C, M, N, Eigen::OuterStride<>(ldc));
        if (K <= 0) {
            if (!accumulate) c.setZero();
            return;
        }
        Eigen::Map<const mat, 0, dyn> a(A.data, M, K, dyn(A.row, A.col)), b(B.data, K, N, dyn(B.row, B.col));
        if (accumulate) c.noalias() += a * b;
        else c.noalias() = a * b;
    }
}

/// C[M1+M2, N] (= or +=) [A1[M1,K]; A2[M2,K]] * B[K,N]: the rows of two A's as one product, so that
/// float packs B once (see gemm::stacked_source); double runs the two products.
template <class T>
void product_stacked(std::int64_t M1, std::int64_t M2, std::int64_t N, std::int64_t K, operand<T> A1, operand<T> A2,
                     operand<T> B, T* C, std::int64_t ldc, bool accumulate) {
    if constexpr (std::is_same_v<T, float>) {
        if (M1 + M2 <= 0 || N <= 0) return;
        const gemm::stacked_source<float> a{{A1.data, A1.row, A1.col, M1}, {A2.data, A2.row, A2.col, M2}};
        gemm::run(M1 + M2, N, K, a, gemm::matrix_source<float>{B.data, B.col, B.row, N}, C, ldc, 1, accumulate);
    } else {
        product<T>(M1, N, K, A1, B, C, ldc, accumulate);
        product<T>(M2, N, K, A2, B, C + M1 * ldc, ldc, accumulate);
    }
}

/// The B operand packed for product() (float with N <= gemm::nc_block), else empty. Throws
/// std::bad_alloc only.
template <class T>
gemm::packed_b<float> pack(std::int64_t K, std::int64_t N, operand<T> B) {
    if constexpr (std::is_same_v<T, float>) {
        return gemm::packed_b<float>(K, N, gemm::matrix_source<float>{B.data, B.col, B.row, N});
    } else {
        return {};
    }
}

/// The parts of a [T, B, H] LSTM sequence (or of its gradients), by pointer.
template <class T>
struct sequence {
    const T *i, *cs, *f, *o, *ci, *co, *h;
};

namespace detail {
/// How many tasks split the batch rows of a sequence (each task runs all steps of its rows: the
/// rows of an LSTM are independent): whole 6-row GEMM panels each, and ~2 MFLOP at least.
inline int row_tasks(std::int64_t S, std::int64_t B, std::int64_t H) {
    const double flops = 2.0 * static_cast<double>(S) * static_cast<double>(B) * 4.0 * static_cast<double>(H) *
                         static_cast<double>(H);
    const double by_work = std::max(1.0, flops / gemm::detail::kFlopsPerThread);
    const std::int64_t by_rows = std::max<std::int64_t>(1, (B + gemm::mr - 1) / gemm::mr);
    return static_cast<int>(std::min<double>({static_cast<double>(num_threads()), by_work, static_cast<double>(by_rows)}));
}
/// Rows [first, last) of task `task` of `tasks`.
inline std::pair<std::int64_t, std::int64_t> task_rows(std::int64_t B, int tasks, int task) {
    const std::int64_t per = (B + tasks - 1) / tasks;
    return {std::min(B, task * per), std::min(B, (task + 1) * per)};
}
}  // namespace detail

/// Which outputs of block_forward (i, cs, f, o, ci, co, h) keep every step ([T, B, H], step t at
/// t*B*H); the others are one [B, H] buffer each step overwrites (an output nothing reads: the
/// gates of an inference graph, 5 of its 7 [T, B, H] tensors; 2% of the forward pass of 128 units,
/// batch 32, 100 steps). cs and h still carry the recurrence through theirs; i, f, o, ci and co
/// may share one.
using kept_steps = std::array<bool, 7>;
inline constexpr kept_steps every_step{true, true, true, true, true, true, true};

/// BlockLSTM's first S steps over x [S, B, I] from (cs0, h0) [B, H] with w [I+H, 4H] and b [4H]:
/// writes rows [0, S*B) of the outputs `out` ([T, B, H] each, or [B, H] where `kept` says). `gates`
/// is scratch of B*4H. Each task runs all steps of its batch rows: x_t * w_x, + h * w_h, the gate
/// pass. Throws std::bad_alloc only.
template <class T>
void block_forward(std::int64_t S, std::int64_t B, std::int64_t I, std::int64_t H, const gate_config& p, const T* x,
                   const T* cs0, const T* h0, const T* w, const T* wci, const T* wcf, const T* wco, const T* b,
                   const out_rows<T>& out, T* gates, const kept_steps& kept = every_step) {
    if (S <= 0 || B <= 0 || H <= 0) return;
    const std::int64_t G = 4 * H;
    std::array<std::int64_t, 7> step{};  // elements from one step's rows to the next's, per output
    for (std::size_t k = 0; k < 7; ++k) step[k] = kept[k] ? B * H : 0;
    // x_t * w_x step by step, not every step's at once before the first: that wrote S*B*4H gate
    // pre-activations (6.5 MB at 128 units, batch 32, 100 steps) for each step to read back from
    // memory; step by step they stay in L1. The steps' products of both halves of w on one Xeon
    // core: 5.7-6.2 -> 5.0-5.3 ms, the same sums in the same order.
    const operand<T> wx{w, G, 1}, wh{w + I * G, G, 1};
    const auto wx_packed = pack<T>(I, G, wx);
    const auto wh_packed = pack<T>(H, G, wh);
    const int tasks = detail::row_tasks(S, B, H);
    run_tasks(tasks, [&](int task) {
        const auto [r0, r1] = detail::task_rows(B, tasks, task);
        T* g = gates + r0 * G;
        for (std::int64_t t = 0; t < S; ++t) {
            // (a one-step buffer is read here before this step overwrites it: the product reads all
            // the task's rows of h first, the gate pass each cs element before writing it)
            const T* hp = t == 0 ? h0 + r0 * H : out.h + (t - 1) * step[6] + r0 * H;
            const T* cp = t == 0 ? cs0 + r0 * H : out.cs + (t - 1) * step[1] + r0 * H;
            product<T>(r1 - r0, G, I, {x + (t * B + r0) * I, I, 1}, wx, g, G, false, 1, &wx_packed);
            product<T>(r1 - r0, G, H, {hp, H, 1}, wh, g, G, true, 1, &wh_packed);
            for (std::int64_t row = 0; row < r1 - r0; ++row) {
                const std::int64_t k = (r0 + row) * H;
                gates_forward<T>(H, p, g + row * G, b, cp + row * H, wci, wcf, wco,
                                 {out.i + t * step[0] + k, out.cs + t * step[1] + k, out.f + t * step[2] + k,
                                  out.o + t * step[3] + k, out.ci + t * step[4] + k, out.co + t * step[5] + k,
                                  out.h + t * step[6] + k});
            }
        }
    });
}

/// The gradients BlockLSTMGrad returns, by pointer: x_grad [T, B, I] (rows [0, S*B) written),
/// cs_prev_grad and h_prev_grad [B, H], w_grad [I+H, 4H], wci/wcf/wco_grad [H], b_grad [4H]
/// (all overwritten).
template <class T>
struct grads {
    T *x, *cs_prev, *h_prev, *w, *wci, *wcf, *wco, *b;
};

/// BlockLSTMGrad over the first S steps: `saved` the forward outputs, cs_grad / h_grad [T, B, H]
/// the gradients of the cs and h outputs. Each task runs the steps backwards for its batch rows
/// (gate pass, dh_prev = dgates * w_h^T); then dx, dw and db come from GEMMs over all steps of
/// the gate gradients (`dgates`: scratch of S*B*4H). Throws std::bad_alloc only.
template <class T>
void block_backward(std::int64_t S, std::int64_t B, std::int64_t I, std::int64_t H, const gate_config& p, const T* x,
                    const T* cs0, const T* h0, const T* w, const T* wci, const T* wcf, const T* wco,
                    const sequence<T>& saved, const T* cs_grad, const T* h_grad, const grads<T>& out, T* dgates) {
    const std::int64_t G = 4 * H;
    std::fill(out.cs_prev, out.cs_prev + B * H, T(0));
    std::fill(out.h_prev, out.h_prev + B * H, T(0));
    std::fill(out.wci, out.wci + H, T(0));
    std::fill(out.wcf, out.wcf + H, T(0));
    std::fill(out.wco, out.wco + H, T(0));
    std::fill(out.b, out.b + G, T(0));
    if (S <= 0 || B <= 0 || H <= 0) {
        std::fill(out.w, out.w + (I + H) * G, T(0));
        return;
    }
    const int tasks = detail::row_tasks(S, B, H);
    // dh_prev = dgates * w_h^T with w_h^T [4H, H] packed once for every step (w_h * dgates^T, w_h
    // as A and packed again each step, took 1.3-1.5x as long: LSTM 128 units, batch 32, 100 steps,
    // one AVX-512 core, 3.1-3.9 vs 2.3-2.6 ms)
    const operand<T> wh_t{w + I * G, 1, G};
    const auto wh_t_packed = pack<T>(G, H, wh_t);
    // per row: dcs [H] then dh [H]; per task: the three peephole gradients [H] and db [4H], summed
    // while each row's gate gradients are in L1 (a pass over dgates afterwards read S*B*4H floats
    // from L3 again: 6.5 MB, ~0.2 ms, at 128 units, batch 32, 100 steps)
    std::vector<T> peep(static_cast<std::size_t>(tasks * (3 * H + G)), T(0)), state(static_cast<std::size_t>(B * 2 * H));
    run_tasks(tasks, [&](int task) {
        const auto [r0, r1] = detail::task_rows(B, tasks, task);
        const std::int64_t rows = r1 - r0;
        T* wci_g = peep.data() + task * (3 * H + G);
        T* db = wci_g + 3 * H;
        T* dcs = state.data() + r0 * 2 * H;
        for (std::int64_t t = S - 1; t >= 0; --t) {
            for (std::int64_t row = r0; row < r1; ++row) {
                const std::int64_t k = (t * B + row) * H, prev = ((t - 1) * B + row) * H;
                T* dc = dcs + (row - r0) * 2 * H;
                T* dh = dc + H;
                for (std::int64_t j = 0; j < H; ++j) {
                    dc[j] = out.cs_prev[row * H + j] + cs_grad[k + j];
                    dh[j] = out.h_prev[row * H + j] + h_grad[k + j];
                }
                gates_backward<T>(H, p, t == 0 ? cs0 + row * H : saved.cs + prev, wci, wcf, wco, saved.i + k,
                                  saved.cs + k, saved.f + k, saved.o + k, saved.ci + k, saved.co + k, dc, dh,
                                  dgates + (t * B + row) * G, out.cs_prev + row * H, wci_g, wci_g + H, wci_g + 2 * H);
                const T* dg = dgates + (t * B + row) * G;
                for (std::int64_t j = 0; j < G; ++j) db[j] += dg[j];
            }
            // every row's dh read above: the step's dh_prev overwrites them
            product<T>(rows, H, G, {dgates + (t * B + r0) * G, G, 1}, wh_t, out.h_prev + r0 * H, H, false, 1,
                       &wh_t_packed);
        }
    });
    for (int task = 0; task < tasks; ++task) {
        const T* pg = peep.data() + task * (3 * H + G);
        for (std::int64_t j = 0; j < H; ++j) out.wci[j] += pg[j], out.wcf[j] += pg[H + j], out.wco[j] += pg[2 * H + j];
        for (std::int64_t j = 0; j < G; ++j) out.b[j] += pg[3 * H + j];
    }
    const operand<T> dg{dgates, G, 1};
    product<T>(S * B, I, G, dg, {w, 1, G}, out.x, I, false);                                  // dx = dgates * w_x^T
    // dw = [dw_x; dw_h] = [x | h_prev]^T * dgates, steps 1.. then step 0 (h_prev is h0 there): as
    // one product over both parts of w, dgates is packed once (as dw_x and dw_h, twice: 0.4 ms of the
    // 13.9 ms BlockLSTMGrad of 128 units, batch 32, 100 steps on one Xeon core)
    product_stacked<T>(I, H, G, (S - 1) * B, {x + B * I, 1, I}, {saved.h, 1, H}, {dgates + B * G, G, 1}, out.w, G,
                       false);
    product_stacked<T>(I, H, G, B, {x, 1, I}, {h0, 1, H}, dg, out.w, G, true);
}

}  // namespace graft::ops::lstm_kernels
