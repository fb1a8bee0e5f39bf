// graft/ops/rnn_cells.hpp — TensorFlow's fused RNN cells (tf.contrib.rnn / tf.raw_ops): LSTMBlockCell,
// BlockLSTM / BlockLSTMV2, GRUBlockCell and their gradient ops, as TF's CPU kernels compute them
// (tensorflow/core/kernels/rnn/lstm_ops.{h,cc}, gru_ops.h).
//
//   auto r = graft::ops::lstm_block_cell(x, cs_prev, h_prev, w, wci, wcf, wco, b, {.forget_bias = 1});
//   // r.h, r.cs; gates: xh = [x, h_prev], gates = xh * w + b split as [i, ci, f, o]
//   auto s = graft::ops::block_lstm(seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b, {});
//   auto g = graft::ops::gru_block_cell(x, h_prev, w_ru, w_c, b_ru, b_c);
//
// LSTM: i = sigmoid(gi [+ wci*cs_prev]), ci = tanh(gc), f = sigmoid(gf + forget_bias [+ wcf*cs_prev]),
// cs = i*ci + f*cs_prev clipped to [-cell_clip, cell_clip] when cell_clip > 0, o = sigmoid(go [+ wco*cs]),
// co = tanh(cs), h = o*co. Gate layout ICFO (LSTMBlockCell, BlockLSTM) or IFCO (BlockLSTMV2, no
// forget_bias). GRU: [r, u] = sigmoid([x, h_prev] * w_ru + b_ru), c = tanh([x, r*h_prev] * w_c + b_c),
// h = u*h_prev + (1-u)*c. float32/float64 (float16/bfloat16 in float32).
#pragma once

#include "graft/core/config.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/ops/lstm_kernels.hpp"

namespace graft::ops {

/// Attributes of the LSTM cells.
struct lstm_params {
    double forget_bias = 1.0;   ///< added to the forget gate (BlockLSTMV2: 0)
    double cell_clip = 3.0;     ///< clip cs to [-cell_clip, cell_clip] when > 0
    bool use_peephole = false;
    bool ifco = false;          ///< gate layout [i, f, ci, o] (BlockLSTMV2) instead of [i, ci, f, o]
};

/// The seven outputs of LSTMBlockCell ([B, H]) / BlockLSTM ([T, B, H]), in TF's order.
struct lstm_result {
    tensor i, cs, f, o, ci, co, h;
};
/// LSTMBlockCellGrad's outputs.
struct lstm_cell_grad_result {
    tensor cs_prev_grad, dicfo, wci_grad, wcf_grad, wco_grad;
};
/// BlockLSTMGrad's outputs.
struct block_lstm_grad_result {
    tensor x_grad, cs_prev_grad, h_prev_grad, w_grad, wci_grad, wcf_grad, wco_grad, b_grad;
};
/// GRUBlockCell's outputs.
struct gru_result {
    tensor r, u, c, h;
};
/// GRUBlockCellGrad's outputs.
struct gru_grad_result {
    tensor d_x, d_h_prev, d_c_bar, d_r_bar_u_bar;
};

namespace rnn_detail {

template <class T>
using rmat = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
template <class T>
using crmat = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

template <class T>
T sigmoid(T v) { return T(1) / (T(1) + std::exp(-v)); }

/// The compute dtype of the cell (float32 for half types). Throws invalid_argument_error.
inline dtype compute_type(const char* op, const tensor& x) {
    switch (x.type()) {
        case dtype::float32: case dtype::float16: case dtype::bfloat16: return dtype::float32;
        case dtype::float64: return dtype::float64;
        default:
            throw invalid_argument_error(
                detail::cat(op, ": x must be float16, bfloat16, float32 or float64, given ", x.describe()));
    }
}

/// Checks that every named tensor has x's dtype and the given shape.
struct checker {
    const char* op;
    const tensor& x;
    void operator()(const char* what, const tensor& t, const shape& want) const {
        if (t.type() != x.type()) {
            throw invalid_argument_error(detail::cat(op, ": ", what, " must have x's dtype ", dtype_name(x.type()),
                                                     ", given ", t.describe()));
        }
        if (!(t.shape() == want)) {
            throw shape_error(detail::cat(op, ": ", what, " must be ", want.str(), ", given ", t.shape().str()));
        }
    }
};

inline tensor as(const tensor& t, dtype u) { return t.type() == u ? t : cast(t, u); }

/// Gate column offsets of i, ci, f, o in a [B, 4H] gate matrix.
struct gate_offsets {
    std::int64_t i, c, f, o;
    gate_offsets(std::int64_t H, bool ifco) : i(0), c(ifco ? 2 * H : H), f(ifco ? H : 2 * H), o(3 * H) {}
};

/// The gate pass's view of the attributes.
inline lstm_kernels::gate_config gate_config_of(std::int64_t H, const lstm_params& p) {
    const gate_offsets off(H, p.ifco);
    return {off.i, off.c, off.f, off.o, p.forget_bias, p.cell_clip, p.use_peephole};
}

/// One LSTM step: the outputs of rows [B, H] from x [B, I], cs_prev, h_prev.
template <class T>
void lstm_fprop(std::int64_t B, std::int64_t I, std::int64_t H, const lstm_params& p, const T* x, const T* cs_prev,
                const T* h_prev, const T* w, const T* wci, const T* wcf, const T* wco, const T* b, T* i, T* cs, T* f,
                T* o, T* ci, T* co, T* h, std::vector<T>& xh, std::vector<T>& gates) {
    xh.resize(static_cast<std::size_t>(B * (I + H)));
    gates.resize(static_cast<std::size_t>(B * 4 * H));
    for (std::int64_t r = 0; r < B; ++r) {
        std::copy(x + r * I, x + (r + 1) * I, xh.data() + r * (I + H));
        std::copy(h_prev + r * H, h_prev + (r + 1) * H, xh.data() + r * (I + H) + I);
    }
    rmat<T>(gates.data(), B, 4 * H).noalias() = crmat<T>(xh.data(), B, I + H) * crmat<T>(w, I + H, 4 * H);
    const gate_offsets off(H, p.ifco);
    const T fb = static_cast<T>(p.forget_bias), clip = static_cast<T>(p.cell_clip);
    for (std::int64_t r = 0; r < B; ++r) {
        const T* g = gates.data() + r * 4 * H;
        for (std::int64_t j = 0; j < H; ++j) {
            const std::int64_t k = r * H + j;
            const T cp = cs_prev[k];
            i[k] = sigmoid(g[off.i + j] + b[off.i + j] + (p.use_peephole ? cp * wci[j] : T(0)));
            ci[k] = std::tanh(g[off.c + j] + b[off.c + j]);
            f[k] = sigmoid(g[off.f + j] + b[off.f + j] + fb + (p.use_peephole ? cp * wcf[j] : T(0)));
            T c = i[k] * ci[k] + f[k] * cp;
            if (p.cell_clip > 0) c = std::clamp(c, -clip, clip);
            cs[k] = c;
            co[k] = std::tanh(c);
            o[k] = sigmoid(g[off.o + j] + b[off.o + j] + (p.use_peephole ? c * wco[j] : T(0)));
            h[k] = o[k] * co[k];
        }
    }
}

/// One LSTM step backwards: dgates [B, 4H] and cs_prev_grad from the cell's saved values and the
/// gradients of cs and h; the peephole gradients are added to wci/wcf/wco_grad.
template <class T>
void lstm_bprop(std::int64_t B, std::int64_t H, bool use_peephole, bool ifco, const T* cs_prev, const T* wci,
                const T* wcf, const T* wco, const T* i, const T* cs, const T* f, const T* o, const T* ci, const T* co,
                const T* cs_grad, const T* h_grad, T* dgates, T* cs_prev_grad, T* wci_grad, T* wcf_grad,
                T* wco_grad) {
    const gate_offsets off(H, ifco);
    for (std::int64_t r = 0; r < B; ++r) {
        T* dg = dgates + r * 4 * H;
        for (std::int64_t j = 0; j < H; ++j) {
            const std::int64_t k = r * H + j;
            const T d_o = o[k] * (T(1) - o[k]) * h_grad[k] * co[k];
            T dcs = (T(1) - co[k] * co[k]) * h_grad[k] * o[k] + cs_grad[k];
            if (use_peephole) dcs += d_o * wco[j];
            const T dci = (T(1) - ci[k] * ci[k]) * dcs * i[k];
            const T df = f[k] * (T(1) - f[k]) * dcs * cs_prev[k];
            const T di = i[k] * (T(1) - i[k]) * dcs * ci[k];
            dg[off.i + j] = di, dg[off.c + j] = dci, dg[off.f + j] = df, dg[off.o + j] = d_o;
            cs_prev_grad[k] = dcs * f[k] + (use_peephole ? di * wci[j] + df * wcf[j] : T(0));
            if (use_peephole) {
                wci_grad[j] += di * cs_prev[k];
                wcf_grad[j] += df * cs_prev[k];
                wco_grad[j] += d_o * cs[k];
            }
        }
    }
}

/// Sizes of an LSTM call: checks w [I+H, 4H], b [4H], peepholes [H], states [B, H].
struct lstm_sizes {
    std::int64_t B = 0, I = 0, H = 0;
};
inline lstm_sizes check_lstm(const char* op, const tensor& x, std::int64_t B, std::int64_t I, const tensor& cs_prev,
                             const tensor& h_prev, const tensor& w, const tensor& wci, const tensor& wcf,
                             const tensor& wco, const tensor& b) {
    if (cs_prev.rank() != 2) throw shape_error(detail::cat(op, ": cs_prev must be rank 2, given ", cs_prev.shape().str()));
    lstm_sizes s{B, I, cs_prev.dim(1)};
    const checker chk{op, x};
    chk("cs_prev", cs_prev, {B, s.H});
    chk("h_prev", h_prev, {B, s.H});
    chk("w", w, {I + s.H, 4 * s.H});
    chk("wci", wci, {s.H});
    chk("wcf", wcf, {s.H});
    chk("wco", wco, {s.H});
    chk("b", b, {4 * s.H});
    return s;
}

}  // namespace rnn_detail

/// LSTMBlockCell: one step of the LSTM for x [B, I]. Throws shape_error / invalid_argument_error naming
/// the input and the shape expected.
inline lstm_result lstm_block_cell(const tensor& x, const tensor& cs_prev, const tensor& h_prev, const tensor& w,
                                   const tensor& wci, const tensor& wcf, const tensor& wco, const tensor& b,
                                   const lstm_params& p = {}) {
    const char* op = "LSTMBlockCell";
    const dtype u = rnn_detail::compute_type(op, x);
    if (x.rank() != 2) throw shape_error(detail::cat(op, ": x must be rank 2 [batch, input], given ", x.shape().str()));
    const auto s = rnn_detail::check_lstm(op, x, x.dim(0), x.dim(1), cs_prev, h_prev, w, wci, wcf, wco, b);
    lstm_result r;
    for (tensor* t : {&r.i, &r.cs, &r.f, &r.o, &r.ci, &r.co, &r.h}) *t = tensor::uninitialized(u, {s.B, s.H});
    visit_dtype(u, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            using rnn_detail::as;
            std::vector<T> xh, gates;
            rnn_detail::lstm_fprop<T>(s.B, s.I, s.H, p, as(x, u).template data<T>(),
                                      as(cs_prev, u).template data<T>(),
                                      as(h_prev, u).template data<T>(), as(w, u).template data<T>(),
                                      as(wci, u).template data<T>(), as(wcf, u).template data<T>(),
                                      as(wco, u).template data<T>(), as(b, u).template data<T>(),
                                      r.i.data<T>(), r.cs.data<T>(), r.f.data<T>(), r.o.data<T>(),
                                      r.ci.data<T>(), r.co.data<T>(), r.h.data<T>(), xh, gates);
        }
    });
    if (u != x.type()) for (tensor* t : {&r.i, &r.cs, &r.f, &r.o, &r.ci, &r.co, &r.h}) *t = cast(*t, x.type());
    return r;
}

/// BlockLSTM / BlockLSTMV2 (p.ifco, forget_bias 0): the cell run over x [T, B, I] for the first
/// seq_len_max steps; the outputs of later steps are zero. Every step's x * w_x is one GEMM, then
/// the batch rows are split among graft's threads (see lstm_kernels::block_forward). Throws like
/// lstm_block_cell, and invalid_argument_error unless 0 <= seq_len_max <= T.
/// `wanted` (i, cs, f, o, ci, co, h): an output not wanted is not kept (an invalid tensor in the
/// result; its steps go through a [B, H] buffer each overwrites).
inline lstm_result block_lstm(std::int64_t seq_len_max, const tensor& x, const tensor& cs_prev, const tensor& h_prev,
                              const tensor& w, const tensor& wci, const tensor& wcf, const tensor& wco, const tensor& b,
                              const lstm_params& p = {},
                              const lstm_kernels::kept_steps& wanted = lstm_kernels::every_step) {
    const char* op = p.ifco ? "BlockLSTMV2" : "BlockLSTM";
    const dtype u = rnn_detail::compute_type(op, x);
    if (x.rank() != 3) throw shape_error(detail::cat(op, ": x must be rank 3 [time, batch, input], given ", x.shape().str()));
    const std::int64_t steps = x.dim(0);
    if (seq_len_max < 0 || seq_len_max > steps) {
        throw invalid_argument_error(detail::cat(op, ": seq_len_max must be between 0 and ", steps, ", given ", seq_len_max));
    }
    const auto s = rnn_detail::check_lstm(op, x, x.dim(1), x.dim(2), cs_prev, h_prev, w, wci, wcf, wco, b);
    lstm_result r;
    tensor* outs[] = {&r.i, &r.cs, &r.f, &r.o, &r.ci, &r.co, &r.h};
    for (std::size_t k = 0; k < 7; ++k)
        if (wanted[k]) *outs[k] = tensor::uninitialized(u, {steps, s.B, s.H});
    visit_dtype(u, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            using rnn_detail::as;
            const tensor xu = as(x, u), cu = as(cs_prev, u), hu = as(h_prev, u), wu = as(w, u), wi = as(wci, u),
                         wf = as(wcf, u), wo = as(wco, u), bu = as(b, u);
            tensor gates = tensor::uninitialized(u, {s.B, 4 * s.H});
            // outputs not wanted: one [B, H] buffer for the write-only gates, one each for cs and h
            tensor unkept[3];
            T* at[7];
            for (std::size_t k = 0; k < 7; ++k) {
                if (wanted[k]) {
                    at[k] = outs[k]->template data<T>();
                    continue;
                }
                tensor& buf = unkept[k == 1 ? 1 : k == 6 ? 2 : 0];
                if (!buf.valid()) buf = tensor::uninitialized(u, {s.B, s.H});
                at[k] = buf.template data<T>();
            }
            lstm_kernels::block_forward<T>(seq_len_max, s.B, s.I, s.H, rnn_detail::gate_config_of(s.H, p),
                                           xu.data<T>(), cu.data<T>(), hu.data<T>(), wu.data<T>(), wi.data<T>(),
                                           wf.data<T>(), wo.data<T>(), bu.data<T>(),
                                           {at[0], at[1], at[2], at[3], at[4], at[5], at[6]}, gates.data<T>(), wanted);
            for (tensor* t : outs)
                if (t->valid()) std::fill(t->data<T>() + seq_len_max * s.B * s.H, t->data<T>() + t->num_elements(), T(0));
        }
    });
    if (u != x.type())
        for (tensor* t : outs)
            if (t->valid()) *t = cast(*t, x.type());
    return r;
}

/// LSTMBlockCellGrad (gate layout ICFO): cs_prev_grad [B, H], dicfo [B, 4H] (the gate pre-activation
/// gradients) and the peephole gradients (zero without use_peephole). `saved` is the cell's forward
/// result. Throws shape_error / invalid_argument_error.
inline lstm_cell_grad_result lstm_block_cell_grad(const tensor& x, const tensor& cs_prev, const tensor& h_prev,
                                                  const tensor& w, const tensor& wci, const tensor& wcf,
                                                  const tensor& wco, const tensor& b, const lstm_result& saved,
                                                  const tensor& cs_grad, const tensor& h_grad, bool use_peephole) {
    const char* op = "LSTMBlockCellGrad";
    const dtype u = rnn_detail::compute_type(op, x);
    if (x.rank() != 2) throw shape_error(detail::cat(op, ": x must be rank 2 [batch, input], given ", x.shape().str()));
    const auto s = rnn_detail::check_lstm(op, x, x.dim(0), x.dim(1), cs_prev, h_prev, w, wci, wcf, wco, b);
    const rnn_detail::checker chk{op, x};
    const char* names[] = {"i", "cs", "f", "o", "ci", "co", "cs_grad", "h_grad"};
    const tensor* ts[] = {&saved.i, &saved.cs, &saved.f, &saved.o, &saved.ci, &saved.co, &cs_grad, &h_grad};
    for (int k = 0; k < 8; ++k) chk(names[k], *ts[k], {s.B, s.H});
    lstm_cell_grad_result r{tensor::uninitialized(u, {s.B, s.H}), tensor::uninitialized(u, {s.B, 4 * s.H}),
                            tensor(u, {s.H}), tensor(u, {s.H}), tensor(u, {s.H})};
    visit_dtype(u, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            using rnn_detail::as;
            rnn_detail::lstm_bprop<T>(
                s.B, s.H, use_peephole, false, as(cs_prev, u).template data<T>(),
                as(wci, u).template data<T>(), as(wcf, u).template data<T>(),
                as(wco, u).template data<T>(), as(saved.i, u).template data<T>(),
                as(saved.cs, u).template data<T>(), as(saved.f, u).template data<T>(),
                as(saved.o, u).template data<T>(), as(saved.ci, u).template data<T>(),
                as(saved.co, u).template data<T>(), as(cs_grad, u).template data<T>(),
                as(h_grad, u).template data<T>(), r.dicfo.data<T>(), r.cs_prev_grad.data<T>(),
                r.wci_grad.data<T>(), r.wcf_grad.data<T>(), r.wco_grad.data<T>());
        }
    });
    if (u != x.type()) {
        for (tensor* t : {&r.cs_prev_grad, &r.dicfo, &r.wci_grad, &r.wcf_grad, &r.wco_grad}) *t = cast(*t, x.type());
    }
    return r;
}

/// BlockLSTMGrad / BlockLSTMGradV2 (ifco): the gradients of block_lstm's inputs given its outputs
/// (`saved`, [T, B, H] each) and the gradients of its cs and h outputs. The batch rows run their
/// steps backwards split among graft's threads; dx, dw and db are GEMMs over all steps at the end
/// (see lstm_kernels::block_backward). Throws like block_lstm.
inline block_lstm_grad_result block_lstm_grad(std::int64_t seq_len_max, const tensor& x, const tensor& cs_prev,
                                              const tensor& h_prev, const tensor& w, const tensor& wci,
                                              const tensor& wcf, const tensor& wco, const tensor& b,
                                              const lstm_result& saved, const tensor& cs_grad, const tensor& h_grad,
                                              bool use_peephole, bool ifco) {
    const char* op = ifco ? "BlockLSTMGradV2" : "BlockLSTMGrad";
    const dtype u = rnn_detail::compute_type(op, x);
    if (x.rank() != 3) throw shape_error(detail::cat(op, ": x must be rank 3 [time, batch, input], given ", x.shape().str()));
    const std::int64_t steps = x.dim(0);
    if (seq_len_max < 0 || seq_len_max > steps) {
        throw invalid_argument_error(detail::cat(op, ": seq_len_max must be between 0 and ", steps, ", given ", seq_len_max));
    }
    const auto s = rnn_detail::check_lstm(op, x, x.dim(1), x.dim(2), cs_prev, h_prev, w, wci, wcf, wco, b);
    const rnn_detail::checker chk{op, x};
    const char* names[] = {"i", "cs", "f", "o", "ci", "co", "h", "cs_grad", "h_grad"};
    const tensor* ts[] = {&saved.i, &saved.cs, &saved.f, &saved.o, &saved.ci, &saved.co, &saved.h, &cs_grad, &h_grad};
    for (int k = 0; k < 9; ++k) chk(names[k], *ts[k], {steps, s.B, s.H});
    const std::int64_t B = s.B, I = s.I, H = s.H;
    block_lstm_grad_result r{tensor::uninitialized(u, x.shape()), tensor::uninitialized(u, {B, H}),
                             tensor::uninitialized(u, {B, H}),    tensor::uninitialized(u, {I + H, 4 * H}),
                             tensor::uninitialized(u, {H}),       tensor::uninitialized(u, {H}),
                             tensor::uninitialized(u, {H}),       tensor::uninitialized(u, {4 * H})};
    visit_dtype(u, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            using rnn_detail::as;
            const tensor xu = as(x, u), cu = as(cs_prev, u), hu = as(h_prev, u), wu = as(w, u), wi = as(wci, u),
                         wf = as(wcf, u), wo = as(wco, u), iu = as(saved.i, u), csu = as(saved.cs, u),
                         fu = as(saved.f, u), ou = as(saved.o, u), ciu = as(saved.ci, u), cou = as(saved.co, u),
                         hs = as(saved.h, u), csg = as(cs_grad, u), hg = as(h_grad, u);
            tensor dgates = tensor::uninitialized(u, {seq_len_max * B, 4 * H});
            lstm_params p;
            p.use_peephole = use_peephole;
            p.ifco = ifco;
            lstm_kernels::block_backward<T>(
                seq_len_max, B, I, H, rnn_detail::gate_config_of(H, p), xu.data<T>(), cu.data<T>(), hu.data<T>(),
                wu.data<T>(), wi.data<T>(), wf.data<T>(), wo.data<T>(),
                {iu.data<T>(), csu.data<T>(), fu.data<T>(), ou.data<T>(), ciu.data<T>(), cou.data<T>(), hs.data<T>()},
                csg.data<T>(), hg.data<T>(),
                {r.x_grad.data<T>(), r.cs_prev_grad.data<T>(), r.h_prev_grad.data<T>(), r.w_grad.data<T>(),
                 r.wci_grad.data<T>(), r.wcf_grad.data<T>(), r.wco_grad.data<T>(), r.b_grad.data<T>()},
                dgates.data<T>());
            std::fill(r.x_grad.data<T>() + seq_len_max * B * I, r.x_grad.data<T>() + r.x_grad.num_elements(), T(0));
        }
    });
    if (u != x.type()) {
        for (tensor* t : {&r.x_grad, &r.cs_prev_grad, &r.h_prev_grad, &r.w_grad, &r.wci_grad, &r.wcf_grad, &r.wco_grad,
                          &r.b_grad}) {
            *t = cast(*t, x.type());
        }
    }
    return r;
}

namespace rnn_detail {
inline std::int64_t check_gru(const char* op, const tensor& x, const tensor& h_prev, const tensor& w_ru,
                              const tensor& w_c, const tensor& b_ru, const tensor& b_c) {
    if (x.rank() != 2) throw shape_error(detail::cat(op, ": x must be rank 2 [batch, input], given ", x.shape().str()));
    if (h_prev.rank() != 2) throw shape_error(detail::cat(op, ": h_prev must be rank 2, given ", h_prev.shape().str()));
    const std::int64_t B = x.dim(0), I = x.dim(1), H = h_prev.dim(1);
    const checker chk{op, x};
    chk("h_prev", h_prev, {B, H});
    chk("w_ru", w_ru, {I + H, 2 * H});
    chk("w_c", w_c, {I + H, H});
    chk("b_ru", b_ru, {2 * H});
    chk("b_c", b_c, {H});
    return H;
}
}  // namespace rnn_detail

/// GRUBlockCell: one GRU step for x [B, I], h_prev [B, H]. Throws shape_error / invalid_argument_error.
inline gru_result gru_block_cell(const tensor& x, const tensor& h_prev, const tensor& w_ru, const tensor& w_c,
                                 const tensor& b_ru, const tensor& b_c) {
    const char* op = "GRUBlockCell";
    const dtype u = rnn_detail::compute_type(op, x);
    const std::int64_t H = rnn_detail::check_gru(op, x, h_prev, w_ru, w_c, b_ru, b_c), B = x.dim(0), I = x.dim(1);
    gru_result r;
    for (tensor* t : {&r.r, &r.u, &r.c, &r.h}) *t = tensor::uninitialized(u, {B, H});
    visit_dtype(u, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            using rnn_detail::as;
            const tensor xu = as(x, u), hu = as(h_prev, u), bru = as(b_ru, u), bc = as(b_c, u);
            const T* hp = hu.data<T>();
            std::vector<T> xh(static_cast<std::size_t>(B * (I + H))), ru(static_cast<std::size_t>(B * 2 * H)),
                cbar(static_cast<std::size_t>(B * H));
            for (std::int64_t row = 0; row < B; ++row) {
                std::copy(xu.data<T>() + row * I, xu.data<T>() + (row + 1) * I, xh.data() + row * (I + H));
                std::copy(hp + row * H, hp + (row + 1) * H, xh.data() + row * (I + H) + I);
            }
            rnn_detail::rmat<T>(ru.data(), B, 2 * H).noalias() =
                rnn_detail::crmat<T>(xh.data(), B, I + H) *
                rnn_detail::crmat<T>(as(w_ru, u).template data<T>(), I + H, 2 * H);
            for (std::int64_t row = 0; row < B; ++row)
                for (std::int64_t j = 0; j < H; ++j) {
                    const std::int64_t k = row * H + j;
                    r.r.data<T>()[k] = rnn_detail::sigmoid(ru[static_cast<std::size_t>(row * 2 * H + j)] + bru.data<T>()[j]);
                    r.u.data<T>()[k] =
                        rnn_detail::sigmoid(ru[static_cast<std::size_t>(row * 2 * H + H + j)] + bru.data<T>()[H + j]);
                    xh[static_cast<std::size_t>(row * (I + H) + I + j)] = hp[k] * r.r.data<T>()[k];
                }
            rnn_detail::rmat<T>(cbar.data(), B, H).noalias() =
                rnn_detail::crmat<T>(xh.data(), B, I + H) *
                rnn_detail::crmat<T>(as(w_c, u).template data<T>(), I + H, H);
            for (std::int64_t row = 0; row < B; ++row)
                for (std::int64_t j = 0; j < H; ++j) {
                    const std::int64_t k = row * H + j;
                    const T c = std::tanh(cbar[static_cast<std::size_t>(k)] + bc.data<T>()[j]);
                    r.c.data<T>()[k] = c;
                    r.h.data<T>()[k] = r.u.data<T>()[k] * (hp[k] - c) + c;
                }
        }
    });
    if (u != x.type()) for (tensor* t : {&r.r, &r.u, &r.c, &r.h}) *t = cast(*t, x.type());
    return r;
}

/// GRUBlockCellGrad: d_x, d_h_prev, d_c_bar and d_r_bar_u_bar from the cell's inputs, its r, u, c
/// outputs and d_h. Throws shape_error / invalid_argument_error.
inline gru_grad_result gru_block_cell_grad(const tensor& x, const tensor& h_prev, const tensor& w_ru,
                                           const tensor& w_c, const tensor& b_ru, const tensor& b_c, const tensor& r,
                                           const tensor& uu, const tensor& c, const tensor& d_h) {
    const char* op = "GRUBlockCellGrad";
    const dtype u = rnn_detail::compute_type(op, x);
    const std::int64_t H = rnn_detail::check_gru(op, x, h_prev, w_ru, w_c, b_ru, b_c), B = x.dim(0), I = x.dim(1);
    const rnn_detail::checker chk{op, x};
    chk("r", r, {B, H});
    chk("u", uu, {B, H});
    chk("c", c, {B, H});
    chk("d_h", d_h, {B, H});
    gru_grad_result g{tensor::uninitialized(u, {B, I}), tensor::uninitialized(u, {B, H}),
                      tensor::uninitialized(u, {B, H}), tensor::uninitialized(u, {B, 2 * H})};
    visit_dtype(u, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            using rnn_detail::as;
            const tensor hu = as(h_prev, u), ru = as(r, u), uv = as(uu, u), cu = as(c, u), dhu = as(d_h, u);
            const T *hp = hu.data<T>(), *rr = ru.data<T>(), *ug = uv.data<T>(), *cc = cu.data<T>(), *dh = dhu.data<T>();
            T* dcbar = g.d_c_bar.data<T>();
            T* drubar = g.d_r_bar_u_bar.data<T>();
            for (std::int64_t row = 0; row < B; ++row)
                for (std::int64_t j = 0; j < H; ++j) {
                    const std::int64_t k = row * H + j;
                    dcbar[k] = dh[k] * (T(1) - ug[k]) * (T(1) - cc[k] * cc[k]);
                    drubar[row * 2 * H + H + j] = dh[k] * (hp[k] - cc[k]) * ug[k] * (T(1) - ug[k]);
                }
            std::vector<T> comp2(static_cast<std::size_t>(B * (I + H))), comp1(static_cast<std::size_t>(B * (I + H)));
            rnn_detail::rmat<T>(comp2.data(), B, I + H).noalias() =
                rnn_detail::crmat<T>(dcbar, B, H) *
                rnn_detail::crmat<T>(as(w_c, u).template data<T>(), I + H, H).transpose();
            for (std::int64_t row = 0; row < B; ++row)
                for (std::int64_t j = 0; j < H; ++j) {
                    const std::int64_t k = row * H + j;
                    const T dhr = comp2[static_cast<std::size_t>(row * (I + H) + I + j)];
                    drubar[row * 2 * H + j] = dhr * hp[k] * rr[k] * (T(1) - rr[k]);
                }
            rnn_detail::rmat<T>(comp1.data(), B, I + H).noalias() =
                rnn_detail::crmat<T>(drubar, B, 2 * H) *
                rnn_detail::crmat<T>(as(w_ru, u).template data<T>(), I + H, 2 * H).transpose();
            for (std::int64_t row = 0; row < B; ++row) {
                for (std::int64_t j = 0; j < I; ++j) {
                    const auto at = static_cast<std::size_t>(row * (I + H) + j);
                    g.d_x.data<T>()[row * I + j] = comp1[at] + comp2[at];
                }
                for (std::int64_t j = 0; j < H; ++j) {
                    const std::int64_t k = row * H + j;
                    const auto at = static_cast<std::size_t>(row * (I + H) + I + j);
                    g.d_h_prev.data<T>()[k] = comp1[at] + comp2[at] * rr[k] + dh[k] * ug[k];
                }
            }
        }
    });
    if (u != x.type()) {
        for (tensor* t : {&g.d_x, &g.d_h_prev, &g.d_c_bar, &g.d_r_bar_u_bar}) *t = cast(*t, x.type());
    }
    return g;
}

}  // namespace graft::ops
