// graft/embedded/detail/plan.hpp — the rest of graft::embedded::generate_embedded: the
// compute ops (broadcasting binaries, MatMul, convolutions and pools, batch norm folded to a
// scale and shift), the arena allocation by liveness, the header text, and the public entry
// points. Internal: include graft/embedded/exporter.hpp.
#pragma once

#include "graft/embedded/exporter.hpp"

namespace graft::embedded::detail {

inline void planner::binary(const node& n, const std::string& op, int a, int b) {
    const value& va = get(n.inputs.at(static_cast<std::size_t>(a)));
    const value& vb = get(n.inputs.at(static_cast<std::size_t>(b)));
    ref ra = float_operand(n, a), rb = float_operand(n, b);
    value out;
    binary_refs(n, op, va, ra, vb, rb, out);
    set(n, 0, std::move(out));
}

/// out = va op vb with numpy broadcasting, as a rows x cols loop where each operand has a row
/// stride and a column stride of 0 (broadcast), 1 or its row length.
inline void planner::binary_refs(const node& n, const std::string& op, const value& va, ref ra, const value& vb,
                                 ref rb, value& out) {
    const auto& sa = va.shape;
    const auto& sb = vb.shape;
    std::size_t r = std::max(sa.size(), sb.size());
    auto pad = [r](const std::vector<std::int64_t>& s) {
        std::vector<std::int64_t> p(r - s.size(), 1);
        p.insert(p.end(), s.begin(), s.end());
        return p;
    };
    auto pa = pad(sa), pb = pad(sb);
    std::vector<std::int64_t> so(r);
    for (std::size_t i = 0; i < r; ++i) {
        if (pa[i] != pb[i] && pa[i] != 1 && pb[i] != 1) {
            fail_shape(n, "shapes " + dims_str(sa) + " and " + dims_str(sb) + " do not broadcast");
        }
        so[i] = pa[i] == 1 ? pb[i] : pa[i];
    }
    struct strides {
        std::int64_t row = 0, col = 0;
        bool ok = false;
    };
    auto fit = [&](const std::vector<std::int64_t>& p, std::size_t k) {
        strides s;
        auto pre_eq = std::equal(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(k), so.begin());
        auto pre_one = std::all_of(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(k), [](std::int64_t d) { return d == 1; });
        auto suf_eq = std::equal(p.begin() + static_cast<std::ptrdiff_t>(k), p.end(), so.begin() + static_cast<std::ptrdiff_t>(k));
        auto suf_one = std::all_of(p.begin() + static_cast<std::ptrdiff_t>(k), p.end(), [](std::int64_t d) { return d == 1; });
        std::int64_t suffix = 1;
        for (std::size_t i = k; i < p.size(); ++i) suffix *= p[i];
        if (!(pre_eq || pre_one) || !(suf_eq || suf_one)) return s;
        s.row = pre_eq ? suffix : 0;
        s.col = suf_eq ? 1 : 0;
        s.ok = true;
        return s;
    };
    strides fa, fb;
    std::size_t k = 0;
    for (; k <= r; ++k) {
        fa = fit(pa, k);
        fb = fit(pb, k);
        if (fa.ok && fb.ok) break;
    }
    if (k > r) {
        fail_shape(n, "broadcasting " + dims_str(sa) + " with " + dims_str(sb) +
                          " needs a general broadcast; only an operand that repeats along leading or trailing dims is generated");
    }
    std::int64_t rows = 1, cols = 1;
    for (std::size_t i = 0; i < k; ++i) rows *= so[i];
    for (std::size_t i = k; i < r; ++i) cols *= so[i];
    out.shape = so;
    std::string fn = identifier(op == "AddV2" || op == "BiasAdd" ? std::string("Add") : op);
    std::transform(fn.begin(), fn.end(), fn.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    fn = "b_" + fn;
    kernels_.insert("binary:" + op);
    step& s = add_step(n, out, fn, {ra, rb}, graft::detail::cat(rows, ", ", cols, ", ", fa.row, ", ", fa.col, ", ", fb.row, ", ", fb.col));
    std::int64_t total = numel(so);
    if (ra.kind == ref::arena && rb.kind == ref::weight && (fa.row == cols || rows == 1) && fa.col == 1 && (fb.row == 0 || rows == 1) && fb.col == 1 &&
        numel(sb) == cols && numel(sa) == total && (op == "Add" || op == "AddV2" || op == "BiasAdd")) {
        s.bias_cols = cols;
    }
    if (ra.kind == ref::arena && numel(sa) == total) s.in_place = ra.id;
    else if (rb.kind == ref::arena && numel(sb) == total) s.in_place = rb.id;
}

inline void planner::matmul(const node& n) {
    const value& va = get(n.inputs.at(0));
    const value& vb = get(n.inputs.at(1));
    require_float(n, 0);
    require_float(n, 1);
    bool ta = n.attr("transpose_a") && n.attr("transpose_a")->b();
    bool tb = n.attr("transpose_b") && n.attr("transpose_b")->b();
    if (va.shape.size() != 2 || vb.shape.size() != 2) {
        fail_shape(n, "MatMul of " + dims_str(va.shape) + " and " + dims_str(vb.shape) + ": both must be matrices");
    }
    std::int64_t M = ta ? va.shape[1] : va.shape[0], K = ta ? va.shape[0] : va.shape[1];
    std::int64_t K2 = tb ? vb.shape[1] : vb.shape[0], N = tb ? vb.shape[0] : vb.shape[1];
    if (K != K2) fail_shape(n, "MatMul inner dims differ: " + dims_str(va.shape) + " x " + dims_str(vb.shape));
    // constant operands are stored in the layout the kernel reads: a [M,K], b [K,NP] (columns
    // padded to 4 for the vector kernel)
    auto operand = [&](const value& v, int i, bool t, bool pad, const char* which) -> ref {
        const endpoint& e = n.inputs[static_cast<std::size_t>(i)];
        if (!v.is_const) {
            if (t) fail_unsupported(n, std::string("MatMul with transpose_") + which + " on a computed (non-constant) operand");
            return v.at;
        }
        require_float(n, i);
        tensor c = v.c;
        if (t) {
            std::int64_t r0 = v.shape[0], r1 = v.shape[1];
            tensor tt(dtype::float32, {r1, r0});
            for (std::int64_t x = 0; x < r0; ++x) {
                for (std::int64_t y = 0; y < r1; ++y) tt.data<float>()[y * r0 + x] = c.data<float>()[x * r1 + y];
            }
            c = tt;
        }
        std::string key = e.str() + (t ? "/T" : "") + (pad ? "/pad4" : "");
        std::string what = e.str() + (t ? " transposed" : "") + (pad ? " [K,N], N padded to 4" : "");
        return weight_of(n, v, key, what, pad ? pad_last_dim(c) : c);
    };
    ref ra = operand(va, 0, ta, false, "a"), rb = operand(vb, 1, tb, true, "b");
    std::string fn = rb.kind == ref::weight ? "matmul" : "matmul_s";
    if (fn == "matmul") kernels_.insert("f4");
    value out;
    out.shape = {M, N};
    kernels_.insert(fn);
    step& st = add_step(n, out, fn, {ra, rb}, graft::detail::cat(M, ", ", K, ", ", N));
    st.templated = true;
    st.channels = N;
    set(n, 0, std::move(out));
}

inline void planner::conv_or_pool(const node& n) {
    const std::string& op = n.op;
    bool pool = op == "MaxPool" || op == "AvgPool";
    const value& vx = get(n.inputs.at(0));
    if (auto* f = n.attr("data_format"); f && f->s() != "NHWC") {
        fail_unsupported(n, op + " with data_format " + f->s() + " (only NHWC is generated)");
    }
    if (vx.shape.size() != 4) fail_shape(n, op + " input " + dims_str(vx.shape) + " is not NHWC rank 4");
    auto list4 = [&](const char* a, std::int64_t dflt) {
        std::vector<std::int64_t> v(4, dflt);
        if (auto* at = n.attr(a)) v = at->list_of<std::int64_t>();
        if (v.size() != 4) fail_shape(n, std::string(a) + " must have 4 entries");
        return v;
    };
    auto st = list4("strides", 1);
    auto dil = pool ? std::vector<std::int64_t>{1, 1, 1, 1} : list4("dilations", 1);
    if (st[0] != 1 || st[3] != 1 || dil[0] != 1 || dil[3] != 1) fail_unsupported(n, op + " striding/dilating over batch or channels");
    std::int64_t H = vx.shape[1], W = vx.shape[2], C = vx.shape[3], KH = 0, KW = 0, O = C, M = 1;
    ref rf{};
    if (pool) {
        auto ks = list4("ksize", 1);
        if (ks[0] != 1 || ks[3] != 1) fail_unsupported(n, op + " pooling over batch or channels");
        KH = ks[1];
        KW = ks[2];
    } else {
        require_float(n, 1);
        const value& vf = get(n.inputs.at(1));
        if (!vf.is_const) fail_unsupported(n, op + " with a computed (non-constant) filter");
        if (vf.shape.size() != 4 || vf.shape[2] != C) {
            fail_shape(n, op + " filter " + dims_str(vf.shape) + " does not fit input " + dims_str(vx.shape) + " (HWIO, I = " +
                              std::to_string(C) + ")");
        }
        KH = vf.shape[0];
        KW = vf.shape[1];
        if (op == "Conv2D") O = vf.shape[3];
        else { M = vf.shape[3]; O = C * M; }
        if (op == "Conv2D") {  // output channels padded to 4 for the vector kernel
            if (vf.c.type() != dtype::float32) require_float(n, 1);
            rf = weight_of(n, vf, n.inputs[1].str() + "/pad4", n.inputs[1].str() + " [HWIO, O padded to 4]", pad_last_dim(vf.c));
            kernels_.insert("f4");
        } else {
            rf = weight_of(n, vf, n.inputs[1].str(), n.inputs[1].str(), vf.c);
        }
    }
    std::string pad = n.attr_at("padding").s();
    auto geometry = [&](std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d, std::int64_t before,
                        std::int64_t after, std::int64_t& out, std::int64_t& pb) {
        std::int64_t eff = (k - 1) * d + 1;
        if (pad == "VALID") {
            if (in < eff) fail_shape(n, graft::detail::cat(op, " VALID window ", eff, " larger than the input ", in));
            out = (in - eff) / s + 1;
            pb = 0;
        } else if (pad == "SAME") {
            out = (in + s - 1) / s;
            pb = std::max<std::int64_t>((out - 1) * s + eff - in, 0) / 2;
        } else if (pad == "EXPLICIT") {
            out = (in + before + after - eff) / s + 1;
            pb = before;
        } else {
            fail_unsupported(n, op + " padding " + pad);
        }
    };
    std::vector<std::int64_t> ex(8, 0);
    if (pad == "EXPLICIT") {
        if (auto* e = n.attr("explicit_paddings")) ex = e->list_of<std::int64_t>();
        if (ex.size() != 8) fail_shape(n, "explicit_paddings must have 8 entries");
    }
    std::int64_t OH = 0, OW = 0, pt = 0, pl = 0;
    geometry(H, KH, st[1], dil[1], ex[2], ex[3], OH, pt);
    geometry(W, KW, st[2], dil[2], ex[4], ex[5], OW, pl);
    value out;
    out.shape = {vx.shape[0], OH, OW, O};
    if (vx.shape[0] != 1) fail_shape(n, op + " input batch " + std::to_string(vx.shape[0]) + " (one sample per call)");
    if (pool) {
        std::string fn = op == "MaxPool" ? "maxpool" : "avgpool";
        kernels_.insert(fn);
        add_step(n, out, fn, {vx.at}, graft::detail::cat(H, ", ", W, ", ", C, ", ", KH, ", ", KW, ", ", OH, ", ", OW, ", ", st[1], ", ", st[2], ", ", pt, ", ", pl))
            .templated = true;
    } else {
        std::string fn = op == "Conv2D" ? "conv2d" : "depthwise";
        kernels_.insert(fn);
        add_step(n, out, fn, {vx.at, rf},
                 graft::detail::cat(H, ", ", W, ", ", C, ", ", KH, ", ", KW, ", ", op == "Conv2D" ? O : M, ", ", OH, ", ", OW, ", ", st[1],
                             ", ", st[2], ", ", pt, ", ", pl, ", ", dil[1], ", ", dil[2]))
            .templated = true;
        if (op == "Conv2D") steps_.back().channels = O;
    }
    set(n, 0, std::move(out));
}

/// Inference batch norm with constant scale/offset/mean/variance: y = x * s + b per channel.
inline void planner::batch_norm(const node& n) {
    if (auto* t = n.attr("is_training"); t && t->b()) fail_unsupported(n, n.op + " with is_training = true (freeze an inference graph)");
    if (auto* f = n.attr("data_format"); f && f->s() != "NHWC") fail_unsupported(n, n.op + " with data_format " + f->s());
    const value& vx = get(n.inputs.at(0));
    std::vector<const value*> p;
    for (int i = 1; i <= 4; ++i) {
        p.push_back(&get(n.inputs.at(static_cast<std::size_t>(i))));
        if (!p.back()->is_const || p.back()->c.type() != dtype::float32) {
            fail_unsupported(n, n.op + " with a non-constant or non-float32 scale/offset/mean/variance");
        }
    }
    std::int64_t C = vx.shape.empty() ? 0 : vx.shape.back();
    for (auto* v : p) {
        if (numel(v->shape) != C) fail_shape(n, "batch norm parameter " + dims_str(v->shape) + " for " + std::to_string(C) + " channels");
    }
    float eps = n.attr("epsilon") ? n.attr("epsilon")->f() : 1e-4f;
    tensor sc(dtype::float32, {C}), sh(dtype::float32, {C});
    for (std::int64_t c = 0; c < C; ++c) {
        float s = p[0]->c.data<float>()[c] / std::sqrt(p[3]->c.data<float>()[c] + eps);
        sc.data<float>()[c] = s;
        sh.data<float>()[c] = p[1]->c.data<float>()[c] - p[2]->c.data<float>()[c] * s;
    }
    value vs, vb;
    vs.is_const = vb.is_const = true;
    vs.c = sc;
    vb.c = sh;
    vs.shape = vb.shape = {C};
    ref rs = weight_of(n, vs, n.name + "/scale", n.name + " folded scale", sc);
    ref rb = weight_of(n, vb, n.name + "/shift", n.name + " folded shift", sh);
    value mid;
    binary_refs(n, "Mul", vx, vx.at, vs, rs, mid);
    value out;
    binary_refs(n, "Add", mid, mid.at, vb, rb, out);
    ops_.insert(n.op);
    set(n, 0, std::move(out));
}

/// Conv2D / MatMul followed by the only reader of its output, a bias Add along the channels, and
/// then by the only reader of that, Relu or Relu6: one kernel call with the bias and activation in
/// its epilogue (no pass over the intermediates).
inline void planner::fuse() {
    auto readers = [&](int buf) {
        int k = 0;
        for (auto& s : steps_) {
            for (auto& a : s.args) k += a.kind == ref::arena && a.id == buf;
        }
        return k;
    };
    for (std::size_t i = 0; i < steps_.size(); ++i) {
        step& s = steps_[i];
        if (s.fn != "conv2d" && s.fn != "matmul") continue;
        int act = 0;
        std::size_t drop = 0;
        ref bias{ref::none, -1};
        if (i + 1 < steps_.size()) {
            step& b = steps_[i + 1];
            if (b.fn == "b_add" && b.bias_cols == s.channels && b.args[0].kind == ref::arena && b.args[0].id == s.out &&
                readers(s.out) == 1) {
                bias = b.args[1];
                drop = 1;
                if (i + 2 < steps_.size()) {
                    step& c = steps_[i + 2];
                    if ((c.fn == "u_relu" || c.fn == "u_relu6") && c.args[0].kind == ref::arena && c.args[0].id == b.out &&
                        readers(b.out) == 1) {
                        act = c.fn == "u_relu" ? 1 : 2;
                        drop = 2;
                    }
                }
            }
        }
        for (std::size_t k = 1; k <= drop; ++k) s.comment += "\n    //   + " + steps_[i + k].comment;
        if (drop) s.out = steps_[i + drop].out;
        s.args.push_back(bias);
        s.ints += ", " + std::to_string(act);
        steps_.erase(steps_.begin() + static_cast<std::ptrdiff_t>(i) + 1, steps_.begin() + static_cast<std::ptrdiff_t>(i + drop) + 1);
    }
}

/// Offsets in the arena (floats, 16-float aligned): each step's output takes the lowest free range
/// (or its in-place input's buffer when the step is that buffer's last reader); a buffer is free
/// after its last reader.
inline void planner::allocate() {
    const int end = static_cast<int>(steps_.size());
    auto root = [&](int b) {
        while (buffers_[static_cast<std::size_t>(b)].alias_of >= 0) b = buffers_[static_cast<std::size_t>(b)].alias_of;
        return b;
    };
    for (int i = 0; i < end; ++i) {
        for (auto& a : steps_[static_cast<std::size_t>(i)].args) {
            if (a.kind == ref::arena) buffers_[static_cast<std::size_t>(a.id)].last_use = i;
        }
        if (steps_[static_cast<std::size_t>(i)].out >= 0) {
            auto& b = buffers_[static_cast<std::size_t>(steps_[static_cast<std::size_t>(i)].out)];
            b.last_use = std::max(b.last_use, i);
        }
    }
    struct block {
        std::int64_t off, len;
        int buf;
    };
    std::vector<block> live;
    std::int64_t top = 0;
    for (int i = 0; i < end; ++i) {
        step& s = steps_[static_cast<std::size_t>(i)];
        if (s.out >= 0) {
            buffer_use& b = buffers_[static_cast<std::size_t>(s.out)];
            int ip = s.in_place >= 0 ? root(s.in_place) : -1;
            if (ip >= 0 && buffers_[static_cast<std::size_t>(s.in_place)].last_use == i &&
                buffers_[static_cast<std::size_t>(ip)].floats >= b.floats) {
                b.alias_of = ip;
                b.offset = buffers_[static_cast<std::size_t>(ip)].offset;
                buffers_[static_cast<std::size_t>(ip)].last_use = std::max(buffers_[static_cast<std::size_t>(ip)].last_use, b.last_use);
            } else {
                std::int64_t len = (b.floats + 15) / 16 * 16, off = 0;
                std::sort(live.begin(), live.end(), [](const block& x, const block& y) { return x.off < y.off; });
                for (auto& l : live) {
                    if (l.off - off >= len) break;
                    off = std::max(off, l.off + l.len);
                }
                b.offset = off;
                live.push_back({off, len, s.out});
                top = std::max(top, off + len);
            }
        }
        std::erase_if(live, [&](const block& l) { return buffers_[static_cast<std::size_t>(l.buf)].last_use <= i; });
    }
    for (auto& b : buffers_) {
        if (b.alias_of >= 0) b.offset = buffers_[static_cast<std::size_t>(root(static_cast<int>(&b - buffers_.data())))].offset;
    }
    arena_floats_ = top;
}

inline std::string planner::ref_expr(const ref& r) const {
    if (r.kind == ref::none) return "nullptr";
    if (r.kind == ref::input) return inputs_[static_cast<std::size_t>(r.id)].param;
    if (r.kind == ref::weight) return "weights::" + weights_[static_cast<std::size_t>(r.id)].name;
    std::int64_t off = buffers_[static_cast<std::size_t>(r.id)].offset;
    return off ? "arena + " + std::to_string(off) : std::string("arena");
}

}  // namespace graft::embedded::detail

#include "graft/embedded/detail/emit.hpp"
