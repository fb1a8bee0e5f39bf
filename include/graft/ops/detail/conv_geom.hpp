// graft/ops/detail/conv_geom.hpp — Conv2D geometry (TF attrs -> sizes, pads, strides) and the implicit
// im2col operand that lets ops/gemm.hpp pack convolution panels straight from the input.
//
// Row p of the (never materialised) im2col matrix is output pixel p (batch-major, then oy, ox); column
// k = (ky*KW + kx)*IC + c matches the row order of a TF filter [KH, KW, IC, OC] seen as [K, OC].
#pragma once

#include "graft/core/config.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/ops/gemm.hpp"
#include "graft/ops/detail/nn_util.hpp"

namespace graft::ops {

/// Attributes of Conv2D, Conv2DBackpropInput/Filter and DepthwiseConv2dNative, as TF stores them
/// (4-entry lists in data_format order).
struct conv2d_params {
    std::vector<std::int64_t> strides{1, 1, 1, 1};
    std::string padding = "VALID";                   ///< "SAME", "VALID" or "EXPLICIT"
    std::vector<std::int64_t> explicit_paddings{};   ///< 8 values (data_format order) with EXPLICIT
    std::string data_format = "NHWC";                ///< "NHWC" or "NCHW"
    std::vector<std::int64_t> dilations{1, 1, 1, 1};
};

namespace nn_detail {

/// Everything a 2-D convolution kernel needs, in NHWC terms plus the element strides of the layout.
struct conv_geom {
    bool nhwc = true;
    std::int64_t n = 0, ih = 0, iw = 0, ic = 0;  ///< input
    std::int64_t kh = 0, kw = 0, oc = 0;         ///< filter [kh, kw, ic(/group), oc]
    std::int64_t oh = 0, ow = 0;                 ///< output spatial size
    std::int64_t sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0;
    std::int64_t in_sn = 0, in_sh = 0, in_sw = 0, in_sc = 0;  ///< input element strides
    std::int64_t out_sn = 0, out_sh = 0, out_sw = 0, out_sc = 0;

    [[nodiscard]] std::int64_t K() const { return kh * kw * ic; }
    [[nodiscard]] std::int64_t out_pixels() const { return oh * ow; }
    [[nodiscard]] dims4 in_dims() const { return {n, ih, iw, ic}; }
    [[nodiscard]] dims4 out_dims() const { return {n, oh, ow, oc}; }
};

/// Validates `p` against an input of NHWC-order dims `in` and a filter shape [KH, KW, IC, X] and
/// fills the geometry; `out_channels` is X for Conv2D and IC*X for depthwise. Throws shape_error or
/// invalid_argument_error naming `op`, with the shapes involved.
inline conv_geom make_conv_geom(const char* op, const dims4& in, const shape& filter, const conv2d_params& p,
                                bool depthwise, const shape& input_shape) {
    conv_geom g;
    g.nhwc = is_nhwc(op, p.data_format);
    if (filter.rank() != 4) {
        throw shape_error(detail::cat(op, ": filter must be rank 4 [height, width, in_channels, ",
                                      depthwise ? "channel_multiplier" : "out_channels", "], given ", filter.str()));
    }
    if (filter.dim(2) != in.c) {
        throw shape_error(detail::cat(op, ": filter in_channels ", filter.dim(2), " != input channels ", in.c,
                                      " (input ", input_shape.str(), ", filter ", filter.str(), ")"));
    }
    check_padding(op, p.padding, true);
    const hw s = spatial_attr(op, "strides", p.strides, g.nhwc);
    const hw d = spatial_attr(op, "dilations", p.dilations, g.nhwc);
    const pads ex = explicit_pads(op, p.padding, p.explicit_paddings, g.nhwc);
    g.n = in.n, g.ih = in.h, g.iw = in.w, g.ic = in.c;
    g.kh = filter.dim(0), g.kw = filter.dim(1);
    g.oc = depthwise ? in.c * filter.dim(3) : filter.dim(3);
    g.sh = s.h, g.sw = s.w, g.dh = d.h, g.dw = d.w;
    const window_geom wh = window(op, in.h, g.kh, s.h, d.h, p.padding, ex.top, ex.bottom);
    const window_geom ww = window(op, in.w, g.kw, s.w, d.w, p.padding, ex.left, ex.right);
    g.oh = wh.out, g.ow = ww.out, g.pt = wh.pad_before, g.pl = ww.pad_before;
    if (g.nhwc) {
        g.in_sn = g.ih * g.iw * g.ic, g.in_sh = g.iw * g.ic, g.in_sw = g.ic, g.in_sc = 1;
        g.out_sn = g.oh * g.ow * g.oc, g.out_sh = g.ow * g.oc, g.out_sw = g.oc, g.out_sc = 1;
    } else {
        g.in_sn = g.ic * g.ih * g.iw, g.in_sh = g.iw, g.in_sw = 1, g.in_sc = g.ih * g.iw;
        g.out_sn = g.oc * g.oh * g.ow, g.out_sh = g.ow, g.out_sw = 1, g.out_sc = g.oh * g.ow;
    }
    return g;
}

/// The input extent [height, width] every window of `g` fits in once its padding is made real.
inline std::pair<std::int64_t, std::int64_t> padded_extent(const conv_geom& g) {
    return {std::max(g.ih + g.pt, (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1),
            std::max(g.iw + g.pl, (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1)};
}

/// The input of a convolution with its padding made real: when any window reaches past the input,
/// a zero-bordered copy is made and the geometry rewritten (pads 0), so every window lies inside the
/// buffer and the packing code needs no bounds checks.
template <class T>
struct padded_input {
    conv_geom g;              ///< geometry over `data`
    const T* data = nullptr;  ///< the input or the padded copy
    std::vector<T> storage;

    padded_input(const conv_geom& geom, const T* x) : g(geom), data(x) {
        const auto [need_h, need_w] = padded_extent(g);
        if (g.oh == 0 || g.ow == 0 || (g.pt == 0 && g.pl == 0 && need_h <= g.ih && need_w <= g.iw)) return;
        conv_geom p = g;
        p.ih = need_h, p.iw = need_w, p.pt = 0, p.pl = 0;
        if (p.nhwc) p.in_sn = p.ih * p.iw * p.ic, p.in_sh = p.iw * p.ic, p.in_sw = p.ic, p.in_sc = 1;
        else p.in_sn = p.ic * p.ih * p.iw, p.in_sh = p.iw, p.in_sw = 1, p.in_sc = p.ih * p.iw;
        storage.assign(static_cast<std::size_t>(p.n * p.in_sn), T(0));
        T* dst = storage.data();
        // Copy rows of W (NHWC: W*C values, NCHW: W values) into their padded place.
        const std::int64_t planes = p.nhwc ? p.n : p.n * p.ic;
        const std::int64_t row = p.nhwc ? g.iw * g.ic : g.iw;
        parallel_for(planes, 1, [&](std::int64_t q0, std::int64_t q1) {
            for (std::int64_t q = q0; q < q1; ++q) {
                const T* src_plane = x + q * g.ih * row;
                T* dst_plane = dst + q * p.ih * (p.nhwc ? p.iw * p.ic : p.iw) + g.pt * (p.nhwc ? p.iw * p.ic : p.iw) +
                               g.pl * (p.nhwc ? p.ic : 1);
                for (std::int64_t y = 0; y < g.ih; ++y)
                    std::copy(src_plane + y * row, src_plane + (y + 1) * row, dst_plane + y * (p.nhwc ? p.iw * p.ic : p.iw));
            }
        });
        g = p;
        data = storage.data();
    }
};

/// Per-column offsets of the im2col matrix (column k = (ky*KW + kx)*IC + c) from a window origin.
struct im2col_tables {
    std::vector<std::int64_t> off;
    explicit im2col_tables(const conv_geom& g) {
        off.resize(static_cast<std::size_t>(g.K()));
        std::size_t k = 0;
        for (std::int64_t ky = 0; ky < g.kh; ++ky)
            for (std::int64_t kx = 0; kx < g.kw; ++kx)
                for (std::int64_t c = 0; c < g.ic; ++c, ++k) off[k] = ky * g.dh * g.in_sh + kx * g.dw * g.in_sw + c * g.in_sc;
    }
};

}  // namespace nn_detail
}  // namespace graft::ops

// The AVX-512 transposed im2col pack and the vector add of the input-gradient scatter: ops/arch/x86/conv_geom.hpp.
#include "graft/ops/arch/x86/conv_geom.hpp"

namespace graft::ops {
namespace nn_detail {

/// The im2col matrix of a padded input (see padded_input; every window inside) as a GEMM panel
/// source: outer index p is output pixel p_off + p of the batch, depth is k. transposed == true swaps
/// the roles (outer k, depth p), as Conv2DBackpropFilter needs.
template <class T>
struct im2col_source {
    const T* in = nullptr;
    const conv_geom* g = nullptr;
    const im2col_tables* t = nullptr;
    std::int64_t p_off = 0;
    std::int64_t pixels = 0;
    bool transposed = false;

    [[nodiscard]] std::int64_t extent() const { return transposed ? g->K() : pixels; }

    // The indirect interface of gemm::detail::indirect_source: row p of the im2col matrix at depth k
    // is origin(p)[off[k]].
    [[nodiscard]] bool indirect(std::int64_t /*n*/) const { return !transposed; }
    [[nodiscard]] const std::int64_t* depth_offsets() const { return t->off.data(); }
    [[nodiscard]] std::int64_t depth_step() const { return 0; }
    void rows(std::int64_t o0, int count, const T** out) const {
        cursor c(this, o0);
        for (int r = 0; r < count; ++r, c.next()) out[r] = c.origin();
    }

    /// Walks output pixels from p in order, yielding the window origin of each.
    struct cursor {
        const im2col_source* s;
        std::int64_t b, oy, ox;
        cursor(const im2col_source* src, std::int64_t p) : s(src) {
            const std::int64_t q = src->p_off + p, P = src->g->oh * src->g->ow;
            b = q / P;
            const std::int64_t r = q - b * P;
            oy = r / src->g->ow, ox = r - oy * src->g->ow;
        }
        [[nodiscard]] const T* origin() const {
            const conv_geom& g = *s->g;
            return s->in + b * g.in_sn + oy * g.sh * g.in_sh + ox * g.sw * g.in_sw;
        }
        void next() {
            if (++ox == s->g->ow) {
                ox = 0;
                if (++oy == s->g->oh) oy = 0, ++b;
            }
        }
    };

    void pack(std::int64_t o0, int R, std::int64_t k0, std::int64_t kc, T* dst) const {
        const std::int64_t* off = t->off.data();
        if (transposed) {  // outer = k in [o0, o0+R), depth = pixels [k0, k0+kc)
            const int valid = static_cast<int>(std::clamp<std::int64_t>(g->K() - o0, 0, R));
#ifdef GRAFT_X86_DISPATCH
            if constexpr (std::is_same_v<T, float>) {
                if (R <= 16 && gemm::active_kernel() == gemm::kernel_isa::avx512) {
                    std::int64_t seg_off[16];
                    __mmask16 mask[16];
                    int nseg = 0;
                    for (int r = 0; r < valid;) {  // contiguous segments of the offsets
                        int e = r + 1;
                        while (e < valid && off[o0 + e] == off[o0 + e - 1] + 1) ++e;
                        seg_off[nseg] = off[o0 + r] - r;
                        mask[nseg++] = static_cast<__mmask16>(((1u << e) - 1) & ~((1u << r) - 1));
                        r = e;
                    }
                    pack_transposed_avx512(in, *g, p_off + k0, kc, seg_off, mask, nseg, R, dst);
                    return;
                }
                if (R == 16 && gemm::active_kernel() == gemm::kernel_isa::avx2) {
                    std::int64_t seg_off[16];
                    alignas(32) std::int32_t lanes[16][16] = {};  // per segment: -1 on its lanes
                    int nseg = 0;
                    for (int r = 0; r < valid;) {  // contiguous segments of the offsets
                        int e = r + 1;
                        while (e < valid && off[o0 + e] == off[o0 + e - 1] + 1) ++e;
                        seg_off[nseg] = off[o0 + r] - r;
                        for (int l = r; l < e; ++l) lanes[nseg][l] = -1;
                        ++nseg;
                        r = e;
                    }
                    pack_transposed_avx2(in, *g, p_off + k0, kc, seg_off, lanes, nseg, dst);
                    return;
                }
            }
#endif
            // The R offsets form one contiguous run when they share (ky, kx) and channels are adjacent.
            const bool run = valid > 0 && off[o0 + valid - 1] - off[o0] == valid - 1;
            cursor c(this, k0);
            for (std::int64_t pp = 0; pp < kc; ++pp, c.next()) {
                const T* base = c.origin();
                T* d = dst + pp * R;
                if (run) {
                    const T* s = base + off[o0];
                    for (int r = 0; r < valid; ++r) d[r] = s[r];
                } else {
                    for (int r = 0; r < valid; ++r) d[r] = base[off[o0 + r]];
                }
                for (int r = valid; r < R; ++r) d[r] = T(0);
            }
            return;
        }
        const int valid = static_cast<int>(std::clamp<std::int64_t>(pixels - o0, 0, R));
        if (valid == 0) {
            std::fill(dst, dst + kc * R, T(0));
            return;
        }
        cursor c(this, o0);
        if (c.ox + valid <= g->ow) {  // one output row: the pixels are evenly spaced in the input
            const T* base = c.origin();
            const std::int64_t step = g->sw * g->in_sw;
            for (std::int64_t kk = 0; kk < kc; ++kk) {
                const T* s = base + off[k0 + kk];
                T* d = dst + kk * R;
                if (step == 1) {
                    for (int r = 0; r < valid; ++r) d[r] = s[r];
                } else {
                    for (int r = 0; r < valid; ++r) d[r] = s[r * step];
                }
                for (int r = valid; r < R; ++r) d[r] = T(0);
            }
            return;
        }
        const T* base[gemm::nr];
        for (int r = 0; r < valid; ++r, c.next()) base[r] = c.origin();
        for (std::int64_t kk = 0; kk < kc; ++kk) {
            const std::int64_t o = off[k0 + kk];
            T* d = dst + kk * R;
            for (int r = 0; r < valid; ++r) d[r] = base[r][o];
            for (int r = valid; r < R; ++r) d[r] = T(0);
        }
    }
};

/// Adds the rows of dcol [pixels, K] (row stride K) back into dx (col2im), for output pixels
/// p_off .. p_off+pixels of the batch and channels [c0, c1) only.
template <class T>
void col2im(const conv_geom& g, const T* dcol, std::int64_t p_off, std::int64_t pixels, std::int64_t c0,
            std::int64_t c1, T* dx) {
    const std::int64_t P = g.oh * g.ow, K = g.K();
#ifdef GRAFT_X86_DISPATCH
    const bool avx512 = std::is_same_v<T, float> && gemm::active_kernel() == gemm::kernel_isa::avx512;
    [[maybe_unused]] const bool avx2 = std::is_same_v<T, float> && gemm::active_kernel() == gemm::kernel_isa::avx2;
#endif
    for (std::int64_t p = 0; p < pixels; ++p) {
        const std::int64_t q = p_off + p, b = q / P, r = q - b * P, oy = r / g.ow, ox = r - oy * g.ow;
        const std::int64_t ih0 = oy * g.sh - g.pt, iw0 = ox * g.sw - g.pl;
        T* img = dx + b * g.in_sn;
        const T* row = dcol + p * K;
        if (g.in_sc == 1 && g.dw == 1 && c0 == 0 && c1 == g.ic) {
            // NHWC, undilated columns, all channels: a filter row's taps land on one contiguous
            // run of the input row, so each ky is one vector add of up to KW*IC values.
            const std::int64_t kx0 = std::max<std::int64_t>(0, -iw0), kx1 = std::min(g.kw, g.iw - iw0);
            if (kx1 <= kx0) continue;
            const std::int64_t len = (kx1 - kx0) * g.ic;
            for (std::int64_t ky = 0; ky < g.kh; ++ky) {
                const std::int64_t y = ih0 + ky * g.dh;
                if (y < 0 || y >= g.ih) continue;
                const T* src = row + (ky * g.kw + kx0) * g.ic;
                T* dst = img + y * g.in_sh + (iw0 + kx0) * g.ic;
#ifdef GRAFT_X86_DISPATCH
                if constexpr (std::is_same_v<T, float>) {
                    if (avx512) {
                        add_run_avx512(dst, src, len);
                        continue;
                    }
                    if (avx2) {
                        add_run_avx2(dst, src, len);
                        continue;
                    }
                }
#endif
                for (std::int64_t i = 0; i < len; ++i) dst[i] += src[i];
            }
            continue;
        }
        for (std::int64_t ky = 0; ky < g.kh; ++ky) {
            const std::int64_t y = ih0 + ky * g.dh;
            if (y < 0 || y >= g.ih) continue;
            for (std::int64_t kx = 0; kx < g.kw; ++kx) {
                const std::int64_t x = iw0 + kx * g.dw;
                if (x < 0 || x >= g.iw) continue;
                const T* src = row + (ky * g.kw + kx) * g.ic;
                T* dst = img + y * g.in_sh + x * g.in_sw;
                if (g.in_sc == 1) {
                    for (std::int64_t c = c0; c < c1; ++c) dst[c] += src[c];
                } else {
                    for (std::int64_t c = c0; c < c1; ++c) dst[c * g.in_sc] += src[c];
                }
            }
        }
    }
}

}  // namespace nn_detail
}  // namespace graft::ops
