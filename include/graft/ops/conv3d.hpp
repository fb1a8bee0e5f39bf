// graft/ops/conv3d.hpp — Conv3D, Conv3DBackpropInputV2 and Conv3DBackpropFilterV2 as TensorFlow
// defines them (tensorflow/core/kernels/conv_ops_3d.cc), plus the 5-D layout helpers the 3-D
// pooling ops share.
//
//   graft::ops::conv3d_params p{.strides = {1, 1, 1, 1, 1}, .padding = "SAME"};
//   tensor y  = graft::ops::conv3d(x, w, p);                        // x [N,D,H,W,C], w [KD,KH,KW,C,OC]
//   tensor dx = graft::ops::conv3d_backprop_input(x.shape(), w, dy, p);   // also conv3d_transpose
//   tensor dw = graft::ops::conv3d_backprop_filter(x, w.shape(), dy, p);
//
// Each image is unfolded (im2col: one row per output voxel, one column per filter tap and input
// channel, zeros where the window leaves the input) and multiplied with the filter seen as a
// [KD*KH*KW*C, OC] matrix by ops::matmul. float32 and float64; float16/bfloat16 run in float32.
// NDHWC and NCDHW (NCDHW is transposed to NDHWC and back).
#pragma once

#include "graft/core/config.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/ops/matmul.hpp"
#include "graft/ops/detail/nn_util.hpp"
#include "graft/ops/transpose.hpp"

namespace graft::ops {

/// Attributes of Conv3D and its two backprop ops (5-entry lists in data_format order).
struct conv3d_params {
    std::vector<std::int64_t> strides{1, 1, 1, 1, 1};
    std::string padding = "VALID";  ///< "SAME" or "VALID"
    std::string data_format = "NDHWC";
    std::vector<std::int64_t> dilations{1, 1, 1, 1, 1};
};

namespace nn_detail {

/// True for "NDHWC", false for "NCDHW"; throws invalid_argument_error otherwise.
inline bool is_ndhwc(const char* op, const std::string& data_format) {
    if (data_format == "NDHWC") return true;
    if (data_format == "NCDHW") return false;
    throw invalid_argument_error(detail::cat(op, ": data_format '", data_format, "' is not NDHWC or NCDHW"));
}

/// The five dims of a rank-5 activation in NDHWC order, whatever its layout.
struct dims5 {
    std::int64_t n = 0;
    std::array<std::int64_t, 3> s{0, 0, 0};  ///< depth, height, width
    std::int64_t c = 0;
    [[nodiscard]] std::int64_t voxels() const { return s[0] * s[1] * s[2]; }
};
inline dims5 activation_dims5(const char* op, const char* what, const shape& t, bool ndhwc) {
    if (t.rank() != 5) {
        throw shape_error(detail::cat(op, ": ", what, " must be rank 5 (", ndhwc ? "NDHWC" : "NCDHW", "), given ",
                                      t.str()));
    }
    return ndhwc ? dims5{t.dim(0), {t.dim(1), t.dim(2), t.dim(3)}, t.dim(4)}
                 : dims5{t.dim(0), {t.dim(2), t.dim(3), t.dim(4)}, t.dim(1)};
}
inline shape activation_shape5(const dims5& d, bool ndhwc) {
    return ndhwc ? shape{d.n, d.s[0], d.s[1], d.s[2], d.c} : shape{d.n, d.c, d.s[0], d.s[1], d.s[2]};
}

/// A 5-entry attr list (strides, ksize, dilations) in data_format order -> {d, h, w}; throws
/// invalid_argument_error unless the batch and channel entries are 1 and the others >= 1.
inline std::array<std::int64_t, 3> spatial3_attr(const char* op, const char* what, const std::vector<std::int64_t>& v,
                                                 bool ndhwc) {
    auto list = [&] {
        std::string s;
        for (auto x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
        return "[" + s + "]";
    };
    if (v.size() != 5) {
        throw invalid_argument_error(detail::cat(op, ": ", what, " must have 5 entries, given ", list()));
    }
    const std::size_t first = ndhwc ? 1 : 2, ci = ndhwc ? 4 : 1;
    if (v[0] != 1 || v[ci] != 1) {
        throw invalid_argument_error(
            detail::cat(op, ": ", what, " in the batch and depth dimensions must be 1, given ", list()));
    }
    std::array<std::int64_t, 3> r{v[first], v[first + 1], v[first + 2]};
    for (auto x : r) {
        if (x < 1) throw invalid_argument_error(detail::cat(op, ": ", what, " must be >= 1, given ", list()));
    }
    return r;
}

/// x (NCDHW) as NDHWC, and back.
inline tensor ncdhw_to_ndhwc(const tensor& x) { return transpose(x, std::vector<std::int64_t>{0, 2, 3, 4, 1}); }
inline tensor ndhwc_to_ncdhw(const tensor& x) { return transpose(x, std::vector<std::int64_t>{0, 4, 1, 2, 3}); }

/// The compute dtype of a float tensor of a 3-D op: float32 for float16/bfloat16. Throws
/// invalid_argument_error for non-float dtypes.
inline dtype float_compute_type(const char* op, const char* what, const tensor& t) {
    switch (t.type()) {
        case dtype::float32: case dtype::float16: case dtype::bfloat16: return dtype::float32;
        case dtype::float64: return dtype::float64;
        default:
            throw invalid_argument_error(
                detail::cat(op, ": ", what, " must be float16, bfloat16, float32 or float64, given ", t.describe()));
    }
}

/// Everything a 3-D convolution needs, in NDHWC terms.
struct conv3d_geom {
    dims5 in;
    std::array<std::int64_t, 3> k{1, 1, 1}, out{0, 0, 0}, stride{1, 1, 1}, dil{1, 1, 1}, pad{0, 0, 0};
    std::int64_t oc = 0;
    [[nodiscard]] std::int64_t K() const { return k[0] * k[1] * k[2] * in.c; }
    [[nodiscard]] std::int64_t P() const { return out[0] * out[1] * out[2]; }
    [[nodiscard]] dims5 out_dims() const { return {in.n, out, oc}; }
};

/// Validates p against an input of NDHWC dims `in` and a filter [KD, KH, KW, IC, OC]. Throws
/// shape_error / invalid_argument_error naming op and the shapes.
inline conv3d_geom make_conv3d_geom(const char* op, const dims5& in, const shape& filter, const conv3d_params& p) {
    const bool ndhwc = is_ndhwc(op, p.data_format);
    if (filter.rank() != 5) {
        throw shape_error(detail::cat(op, ": filter must be rank 5 [depth, height, width, in_channels, out_channels], ",
                                      "given ", filter.str()));
    }
    if (filter.dim(3) != in.c) {
        throw shape_error(detail::cat(op, ": filter in_channels ", filter.dim(3), " != input channels ", in.c,
                                      " (filter ", filter.str(), ")"));
    }
    check_padding(op, p.padding, false);
    conv3d_geom g;
    g.in = in;
    g.stride = spatial3_attr(op, "strides", p.strides, ndhwc);
    g.dil = spatial3_attr(op, "dilations", p.dilations, ndhwc);
    g.oc = filter.dim(4);
    for (int i = 0; i < 3; ++i) {
        g.k[static_cast<std::size_t>(i)] = filter.dim(i);
        const auto u = static_cast<std::size_t>(i);
        const window_geom w = window(op, in.s[u], g.k[u], g.stride[u], g.dil[u], p.padding);
        g.out[u] = w.out, g.pad[u] = w.pad_before;
    }
    return g;
}

/// Visits the input voxel under every (output voxel p, filter tap t) of one image: f(p, t, in_index)
/// with in_index the voxel's offset in voxels (-1 in the padding). Output voxels [p0, p1).
template <class F>
void for_each_tap(const conv3d_geom& g, std::int64_t p0, std::int64_t p1, F&& f) {
    const std::int64_t taps = g.k[0] * g.k[1] * g.k[2];
    for (std::int64_t p = p0; p < p1; ++p) {
        const std::int64_t ow = p % g.out[2], oh = (p / g.out[2]) % g.out[1], od = p / (g.out[2] * g.out[1]);
        for (std::int64_t t = 0; t < taps; ++t) {
            const std::int64_t kw = t % g.k[2], kh = (t / g.k[2]) % g.k[1], kd = t / (g.k[2] * g.k[1]);
            const std::int64_t z = od * g.stride[0] - g.pad[0] + kd * g.dil[0];
            const std::int64_t y = oh * g.stride[1] - g.pad[1] + kh * g.dil[1];
            const std::int64_t x = ow * g.stride[2] - g.pad[2] + kw * g.dil[2];
            const bool inside = z >= 0 && z < g.in.s[0] && y >= 0 && y < g.in.s[1] && x >= 0 && x < g.in.s[2];
            f(p, t, inside ? (z * g.in.s[1] + y) * g.in.s[2] + x : std::int64_t{-1});
        }
    }
}

/// col[P, K] = the im2col matrix of one NDHWC image.
template <class T>
void im2col3d(const conv3d_geom& g, const T* img, T* col) {
    const std::int64_t C = g.in.c, K = g.K();
    parallel_for(g.P(), std::max<std::int64_t>(1, 4096 / std::max<std::int64_t>(1, K)),
                 [&](std::int64_t p0, std::int64_t p1) {
        for_each_tap(g, p0, p1, [&](std::int64_t p, std::int64_t t, std::int64_t v) {
            T* dst = col + p * K + t * C;
            if (v < 0) std::fill(dst, dst + C, T(0));
            else std::copy(img + v * C, img + (v + 1) * C, dst);
        });
    });
}

/// img += col2im(col): the transpose of im2col3d (one NDHWC image, serial: taps overlap).
template <class T>
void col2im3d(const conv3d_geom& g, const T* col, T* img) {
    const std::int64_t C = g.in.c, K = g.K();
    for_each_tap(g, 0, g.P(), [&](std::int64_t p, std::int64_t t, std::int64_t v) {
        if (v < 0) return;
        const T* src = col + p * K + t * C;
        T* dst = img + v * C;
        for (std::int64_t c = 0; c < C; ++c) dst[c] += src[c];
    });
}

/// x in NDHWC and the compute dtype.
inline tensor as_ndhwc_compute(const tensor& x, bool ndhwc, dtype u) {
    tensor t = x.type() == u ? x : cast(x, u);
    return ndhwc ? t : ncdhw_to_ndhwc(t);
}
/// y (NDHWC, compute dtype) in the op's layout and dtype.
inline tensor from_ndhwc_compute(const tensor& y, bool ndhwc, dtype out) {
    tensor t = ndhwc ? y : ndhwc_to_ncdhw(y);
    return t.type() == out ? t : cast(t, out);
}

}  // namespace nn_detail

/// Conv3D: x [N, D, H, W, C] (or NCDHW) with filter [KD, KH, KW, C, OC] -> [N, OD, OH, OW, OC].
/// Throws shape_error (ranks, channels) / invalid_argument_error (dtype, attrs, padding).
inline tensor conv3d(const tensor& x, const tensor& filter, const conv3d_params& p = {}) {
    const char* op = "Conv3D";
    const bool ndhwc = nn_detail::is_ndhwc(op, p.data_format);
    const dtype u = nn_detail::float_compute_type(op, "input", x);
    nn_detail::check_same_dtype(op, "input", x, "filter", filter);
    const nn_detail::dims5 in = nn_detail::activation_dims5(op, "input", x.shape(), ndhwc);
    const nn_detail::conv3d_geom g = nn_detail::make_conv3d_geom(op, in, filter.shape(), p);
    const tensor xn = nn_detail::as_ndhwc_compute(x, ndhwc, u);
    const tensor w = (filter.type() == u ? filter : cast(filter, u)).reshaped({g.K(), g.oc});
    tensor y = tensor::uninitialized(u, nn_detail::activation_shape5(g.out_dims(), true));
    const std::int64_t P = g.P(), K = g.K();
    if (y.num_elements() > 0) {
        visit_dtype(u, [&](auto tag) {
            using T = decltype(tag);
            if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
                tensor col = tensor::uninitialized(u, {P, K});
                for (std::int64_t n = 0; n < g.in.n; ++n) {
                    if (K == 0) {
                        std::fill(y.data<T>() + n * P * g.oc, y.data<T>() + (n + 1) * P * g.oc, T(0));
                        continue;
                    }
                    nn_detail::im2col3d(g, xn.data<T>() + n * g.in.voxels() * g.in.c, col.data<T>());
                    const tensor part = matmul(col, w);
                    std::copy(part.data<T>(), part.data<T>() + P * g.oc, y.data<T>() + n * P * g.oc);
                }
            }
        });
    }
    return nn_detail::from_ndhwc_compute(y, ndhwc, x.type());
}

/// Conv3DBackpropInputV2: the gradient of conv3d with respect to an input of `input_shape`, given the
/// filter and the output gradient dy; also tf.nn.conv3d_transpose. Throws shape_error when dy does
/// not have the output shape of that convolution / invalid_argument_error (dtype, attrs).
inline tensor conv3d_backprop_input(const shape& input_shape, const tensor& filter, const tensor& dy,
                                    const conv3d_params& p = {}) {
    const char* op = "Conv3DBackpropInputV2";
    const bool ndhwc = nn_detail::is_ndhwc(op, p.data_format);
    const dtype u = nn_detail::float_compute_type(op, "filter", filter);
    nn_detail::check_same_dtype(op, "filter", filter, "out_backprop", dy);
    const nn_detail::dims5 in = nn_detail::activation_dims5(op, "input_sizes", input_shape, ndhwc);
    const nn_detail::conv3d_geom g = nn_detail::make_conv3d_geom(op, in, filter.shape(), p);
    const shape want = nn_detail::activation_shape5(g.out_dims(), ndhwc);
    if (!(dy.shape() == want)) {
        throw shape_error(detail::cat(op, ": out_backprop must be ", want.str(), " (the output of a convolution of ",
                                      input_shape.str(), " by filter ", filter.shape().str(), "), given ",
                                      dy.shape().str()));
    }
    const tensor dyn = nn_detail::as_ndhwc_compute(dy, ndhwc, u);
    const tensor w = (filter.type() == u ? filter : cast(filter, u)).reshaped({g.K(), g.oc});
    tensor dx(u, nn_detail::activation_shape5(in, true));
    const std::int64_t P = g.P(), K = g.K();
    if (P > 0 && K > 0 && g.oc > 0) {
        visit_dtype(u, [&](auto tag) {
            using T = decltype(tag);
            if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
                for (std::int64_t n = 0; n < g.in.n; ++n) {
                    const tensor dyi = dyn.slice(n, 1).reshaped({P, g.oc});
                    const tensor col = matmul(dyi, w, {false, true});
                    nn_detail::col2im3d(g, col.data<T>(), dx.data<T>() + n * g.in.voxels() * g.in.c);
                }
            }
        });
    }
    return nn_detail::from_ndhwc_compute(dx, ndhwc, filter.type());
}

/// Conv3DBackpropFilterV2: the gradient of conv3d with respect to a filter of `filter_shape`, given
/// the input x and the output gradient dy. Throws shape_error / invalid_argument_error as above.
inline tensor conv3d_backprop_filter(const tensor& x, const shape& filter_shape, const tensor& dy,
                                     const conv3d_params& p = {}) {
    const char* op = "Conv3DBackpropFilterV2";
    const bool ndhwc = nn_detail::is_ndhwc(op, p.data_format);
    const dtype u = nn_detail::float_compute_type(op, "input", x);
    nn_detail::check_same_dtype(op, "input", x, "out_backprop", dy);
    const nn_detail::dims5 in = nn_detail::activation_dims5(op, "input", x.shape(), ndhwc);
    const nn_detail::conv3d_geom g = nn_detail::make_conv3d_geom(op, in, filter_shape, p);
    const shape want = nn_detail::activation_shape5(g.out_dims(), ndhwc);
    if (!(dy.shape() == want)) {
        throw shape_error(detail::cat(op, ": out_backprop must be ", want.str(), " (the output of a convolution of ",
                                      x.shape().str(), " by a filter ", filter_shape.str(), "), given ",
                                      dy.shape().str()));
    }
    const tensor xn = nn_detail::as_ndhwc_compute(x, ndhwc, u);
    const tensor dyn = nn_detail::as_ndhwc_compute(dy, ndhwc, u);
    const std::int64_t P = g.P(), K = g.K();
    tensor dw(u, {K, g.oc});
    if (P > 0 && K > 0 && g.oc > 0) {
        visit_dtype(u, [&](auto tag) {
            using T = decltype(tag);
            if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
                tensor col = tensor::uninitialized(u, {P, K});
                for (std::int64_t n = 0; n < g.in.n; ++n) {
                    nn_detail::im2col3d(g, xn.data<T>() + n * g.in.voxels() * g.in.c, col.data<T>());
                    const tensor part = matmul(col, dyn.slice(n, 1).reshaped({P, g.oc}), {true, false});
                    T* acc = dw.data<T>();
                    const T* add = part.data<T>();
                    for (std::int64_t i = 0; i < K * g.oc; ++i) acc[i] += add[i];
                }
            }
        });
    }
    const tensor r = dw.reshaped(filter_shape);
    return r.type() == x.type() ? r : cast(r, x.type());
}

}  // namespace graft::ops
