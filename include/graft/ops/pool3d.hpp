// graft/ops/pool3d.hpp — MaxPool3D, AvgPool3D and their gradients as TensorFlow's CPU kernels compute
// them (tensorflow/core/kernels/pooling_ops_3d.cc).
//
//   graft::ops::pool3d_params p{.ksize = {1, 2, 2, 2, 1}, .strides = {1, 2, 2, 2, 1}, .padding = "SAME"};
//   tensor y  = graft::ops::max_pool3d(x, p);
//   tensor dx = graft::ops::max_pool3d_grad(x, y, dy, p);
//
// Padded voxels never win a max and never count in an average (SAME divides by the voxels of the
// input under the window). MaxPool3DGrad gives each window's gradient to every input voxel of the
// window within 1e-5 of its max, as TF's CPU kernel does. float32/float64 (float16/bfloat16 in
// float32); NDHWC and NCDHW.
#pragma once

#include "graft/core/config.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "graft/ops/conv3d.hpp"

namespace graft::ops {

/// Attributes of MaxPool3D / AvgPool3D and their gradients (5-entry lists in data_format order).
struct pool3d_params {
    std::vector<std::int64_t> ksize{1, 1, 1, 1, 1};
    std::vector<std::int64_t> strides{1, 1, 1, 1, 1};
    std::string padding = "VALID";  ///< "SAME" or "VALID"
    std::string data_format = "NDHWC";
};

namespace nn_detail {

struct pool3d_geom {
    dims5 in;
    std::array<std::int64_t, 3> k{1, 1, 1}, stride{1, 1, 1}, pad{0, 0, 0}, out{0, 0, 0};
    [[nodiscard]] dims5 out_dims() const { return {in.n, out, in.c}; }
    /// The window of output voxel o (d, h, w), clipped to the input: [lo[i], hi[i]).
    void window(const std::array<std::int64_t, 3>& o, std::array<std::int64_t, 3>& lo,
                std::array<std::int64_t, 3>& hi) const {
        for (std::size_t i = 0; i < 3; ++i) {
            const std::int64_t s = o[i] * stride[i] - pad[i];
            lo[i] = std::max<std::int64_t>(s, 0);
            hi[i] = std::min(s + k[i], in.s[i]);
        }
    }
};

inline pool3d_geom make_pool3d_geom(const char* op, const dims5& in, const pool3d_params& p) {
    const bool ndhwc = is_ndhwc(op, p.data_format);
    check_padding(op, p.padding, false);
    pool3d_geom g;
    g.in = in;
    g.k = spatial3_attr(op, "ksize", p.ksize, ndhwc);
    g.stride = spatial3_attr(op, "strides", p.strides, ndhwc);
    for (std::size_t i = 0; i < 3; ++i) {
        const window_geom w = window(op, in.s[i], g.k[i], g.stride[i], 1, p.padding);
        g.out[i] = w.out, g.pad[i] = w.pad_before;
    }
    return g;
}

/// Calls f(n, out_voxel_index, lo, hi) for every output voxel, parallel over batch x output voxels.
template <class F>
void for_each_window(const pool3d_geom& g, F&& f) {
    const std::int64_t ov = g.out[0] * g.out[1] * g.out[2];
    parallel_for(g.in.n * ov, std::max<std::int64_t>(1, 2048 / std::max<std::int64_t>(1, g.in.c)),
                 [&](std::int64_t q0, std::int64_t q1) {
        std::array<std::int64_t, 3> lo{}, hi{};
        for (std::int64_t q = q0; q < q1; ++q) {
            const std::int64_t v = q % ov;
            const std::array<std::int64_t, 3> o{v / (g.out[1] * g.out[2]), (v / g.out[2]) % g.out[1], v % g.out[2]};
            g.window(o, lo, hi);
            f(q / ov, v, lo, hi);
        }
    });
}

/// Runs body<T>(g, xn (NDHWC compute-dtype input)) for x's compute dtype and returns the result in
/// x's layout and dtype.
template <class Body>
tensor pool3d_run(const char* op, const tensor& x, const pool3d_params& p, Body&& body) {
    const bool ndhwc = is_ndhwc(op, p.data_format);
    const dtype u = float_compute_type(op, "input", x);
    const dims5 in = activation_dims5(op, "input", x.shape(), ndhwc);
    const pool3d_geom g = make_pool3d_geom(op, in, p);
    const tensor xn = as_ndhwc_compute(x, ndhwc, u);
    tensor y = tensor::uninitialized(u, activation_shape5(g.out_dims(), true));
    visit_dtype(u, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) body(T{}, g, xn.data<T>(), y.data<T>());
    });
    return from_ndhwc_compute(y, ndhwc, x.type());
}

}  // namespace nn_detail

/// MaxPool3D: the max of each window (padding never wins). Throws shape_error (rank) /
/// invalid_argument_error (dtype, ksize/strides, padding).
inline tensor max_pool3d(const tensor& x, const pool3d_params& p = {}) {
    return nn_detail::pool3d_run("MaxPool3D", x, p, [](auto tag, const nn_detail::pool3d_geom& g, const auto* in,
                                                      auto* out) {
        using T = decltype(tag);
        const std::int64_t C = g.in.c, iv = g.in.voxels(), ov = g.out[0] * g.out[1] * g.out[2];
        nn_detail::for_each_window(g, [&](std::int64_t n, std::int64_t v, const auto& lo, const auto& hi) {
            T* dst = out + (n * ov + v) * C;
            std::fill(dst, dst + C, std::numeric_limits<T>::lowest());
            for (std::int64_t z = lo[0]; z < hi[0]; ++z)
                for (std::int64_t y = lo[1]; y < hi[1]; ++y)
                    for (std::int64_t xx = lo[2]; xx < hi[2]; ++xx) {
                        const T* src = in + (n * iv + (z * g.in.s[1] + y) * g.in.s[2] + xx) * C;
                        for (std::int64_t c = 0; c < C; ++c) dst[c] = std::max(dst[c], src[c]);
                    }
        });
    });
}

/// AvgPool3D: the mean of the input voxels under each window. Throws like max_pool3d.
inline tensor avg_pool3d(const tensor& x, const pool3d_params& p = {}) {
    return nn_detail::pool3d_run("AvgPool3D", x, p, [](auto tag, const nn_detail::pool3d_geom& g, const auto* in,
                                                      auto* out) {
        using T = decltype(tag);
        const std::int64_t C = g.in.c, iv = g.in.voxels(), ov = g.out[0] * g.out[1] * g.out[2];
        nn_detail::for_each_window(g, [&](std::int64_t n, std::int64_t v, const auto& lo, const auto& hi) {
            T* dst = out + (n * ov + v) * C;
            std::fill(dst, dst + C, T(0));
            for (std::int64_t z = lo[0]; z < hi[0]; ++z)
                for (std::int64_t y = lo[1]; y < hi[1]; ++y)
                    for (std::int64_t xx = lo[2]; xx < hi[2]; ++xx) {
                        const T* src = in + (n * iv + (z * g.in.s[1] + y) * g.in.s[2] + xx) * C;
                        for (std::int64_t c = 0; c < C; ++c) dst[c] += src[c];
                    }
            const std::int64_t count = (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
            const T inv = count > 0 ? T(1) / static_cast<T>(count) : T(0);
            for (std::int64_t c = 0; c < C; ++c) dst[c] *= inv;
        });
    });
}

/// MaxPool3DGrad: grad (the gradient of max_pool3d's output orig_output) routed to every voxel of
/// orig_input within 1e-5 of its window's max. Throws shape_error when orig_output / grad do not have
/// the pooled shape, invalid_argument_error for dtypes and attrs.
inline tensor max_pool3d_grad(const tensor& orig_input, const tensor& orig_output, const tensor& grad,
                              const pool3d_params& p = {}) {
    const char* op = "MaxPool3DGrad";
    const bool ndhwc = nn_detail::is_ndhwc(op, p.data_format);
    const dtype u = nn_detail::float_compute_type(op, "grad", grad);
    nn_detail::float_compute_type(op, "orig_input", orig_input);
    const nn_detail::dims5 in = nn_detail::activation_dims5(op, "orig_input", orig_input.shape(), ndhwc);
    const nn_detail::pool3d_geom g = nn_detail::make_pool3d_geom(op, in, p);
    const shape want = nn_detail::activation_shape5(g.out_dims(), ndhwc);
    for (auto [what, t] : {std::pair<const char*, const tensor*>{"orig_output", &orig_output}, {"grad", &grad}}) {
        if (!(t->shape() == want)) {
            throw shape_error(detail::cat(op, ": ", what, " must be ", want.str(), " (orig_input ",
                                          orig_input.shape().str(), " pooled), given ", t->shape().str()));
        }
    }
    const tensor xn = nn_detail::as_ndhwc_compute(orig_input, ndhwc, u);
    const tensor yn = nn_detail::as_ndhwc_compute(orig_output, ndhwc, u);
    const tensor gn = nn_detail::as_ndhwc_compute(grad, ndhwc, u);
    tensor dx(u, nn_detail::activation_shape5(in, true));
    visit_dtype(u, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            const std::int64_t C = g.in.c, iv = g.in.voxels(), ov = g.out[0] * g.out[1] * g.out[2];
            const T *x = xn.data<T>(), *y = yn.data<T>(), *dy = gn.data<T>();
            T* out = dx.data<T>();
            std::array<std::int64_t, 3> lo{}, hi{};
            for (std::int64_t n = 0; n < g.in.n; ++n)  // serial: windows overlap
                for (std::int64_t v = 0; v < ov; ++v) {
                    g.window({v / (g.out[1] * g.out[2]), (v / g.out[2]) % g.out[1], v % g.out[2]}, lo, hi);
                    const T* m = y + (n * ov + v) * C;
                    const T* d = dy + (n * ov + v) * C;
                    for (std::int64_t z = lo[0]; z < hi[0]; ++z)
                        for (std::int64_t yy = lo[1]; yy < hi[1]; ++yy)
                            for (std::int64_t xx = lo[2]; xx < hi[2]; ++xx) {
                                const std::int64_t at = (n * iv + (z * g.in.s[1] + yy) * g.in.s[2] + xx) * C;
                                for (std::int64_t c = 0; c < C; ++c) {
                                    if (std::abs(x[at + c] - m[c]) < T(1e-5)) out[at + c] += d[c];
                                }
                            }
                }
        }
    });
    return nn_detail::from_ndhwc_compute(dx, ndhwc, grad.type());
}

/// MaxPool3DGradGrad: for each window, grad (shaped like orig_input) at the first voxel (row-major)
/// equal to the window's max orig_output — the gradient of max_pool3d_grad with respect to its grad.
/// Throws shape_error for mismatched shapes, invalid_argument_error for dtypes and attrs.
inline tensor max_pool3d_grad_grad(const tensor& orig_input, const tensor& orig_output, const tensor& grad,
                                   const pool3d_params& p = {}) {
    const char* op = "MaxPool3DGradGrad";
    const bool ndhwc = nn_detail::is_ndhwc(op, p.data_format);
    const dtype u = nn_detail::float_compute_type(op, "orig_input", orig_input);
    nn_detail::check_same_dtype(op, "orig_input", orig_input, "grad", grad);
    nn_detail::check_same_dtype(op, "orig_input", orig_input, "orig_output", orig_output);
    const nn_detail::dims5 in = nn_detail::activation_dims5(op, "orig_input", orig_input.shape(), ndhwc);
    const nn_detail::pool3d_geom g = nn_detail::make_pool3d_geom(op, in, p);
    const shape want = nn_detail::activation_shape5(g.out_dims(), ndhwc);
    if (!(orig_output.shape() == want) || !(grad.shape() == orig_input.shape())) {
        throw shape_error(detail::cat(op, ": orig_output must be ", want.str(), " and grad ", orig_input.shape().str(),
                                      ", given ", orig_output.shape().str(), " and ", grad.shape().str()));
    }
    const tensor xn = nn_detail::as_ndhwc_compute(orig_input, ndhwc, u);
    const tensor yn = nn_detail::as_ndhwc_compute(orig_output, ndhwc, u);
    const tensor gn = nn_detail::as_ndhwc_compute(grad, ndhwc, u);
    tensor out(u, nn_detail::activation_shape5(g.out_dims(), true));
    visit_dtype(u, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            const std::int64_t C = g.in.c, iv = g.in.voxels(), ov = g.out[0] * g.out[1] * g.out[2];
            const T *x = xn.data<T>(), *y = yn.data<T>(), *gg = gn.data<T>();
            T* o = out.data<T>();
            nn_detail::for_each_window(g, [&](std::int64_t n, std::int64_t v, const auto& lo, const auto& hi) {
                for (std::int64_t c = 0; c < C; ++c) {
                    const std::int64_t oi = (n * ov + v) * C + c;
                    bool found = false;
                    for (std::int64_t z = lo[0]; z < hi[0] && !found; ++z)
                        for (std::int64_t yy = lo[1]; yy < hi[1] && !found; ++yy)
                            for (std::int64_t xx = lo[2]; xx < hi[2] && !found; ++xx) {
                                const std::int64_t at = (n * iv + (z * g.in.s[1] + yy) * g.in.s[2] + xx) * C + c;
                                if (x[at] == y[oi]) o[oi] = gg[at], found = true;
                            }
                }
            });
        }
    });
    return nn_detail::from_ndhwc_compute(out, ndhwc, grad.type());
}

/// AvgPool3DGrad: grad spread evenly over the input voxels of each window, for an input of
/// `input_shape`. Throws shape_error when grad does not have the pooled shape.
inline tensor avg_pool3d_grad(const shape& input_shape, const tensor& grad, const pool3d_params& p = {}) {
    const char* op = "AvgPool3DGrad";
    const bool ndhwc = nn_detail::is_ndhwc(op, p.data_format);
    const dtype u = nn_detail::float_compute_type(op, "grad", grad);
    const nn_detail::dims5 in = nn_detail::activation_dims5(op, "orig_input_shape", input_shape, ndhwc);
    const nn_detail::pool3d_geom g = nn_detail::make_pool3d_geom(op, in, p);
    const shape want = nn_detail::activation_shape5(g.out_dims(), ndhwc);
    if (!(grad.shape() == want)) {
        throw shape_error(detail::cat(op, ": grad must be ", want.str(), " (", input_shape.str(), " pooled), given ",
                                      grad.shape().str()));
    }
    const tensor gn = nn_detail::as_ndhwc_compute(grad, ndhwc, u);
    tensor dx(u, nn_detail::activation_shape5(in, true));
    visit_dtype(u, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            const std::int64_t C = g.in.c, iv = g.in.voxels(), ov = g.out[0] * g.out[1] * g.out[2];
            const T* dy = gn.data<T>();
            T* out = dx.data<T>();
            std::array<std::int64_t, 3> lo{}, hi{};
            for (std::int64_t n = 0; n < g.in.n; ++n)
                for (std::int64_t v = 0; v < ov; ++v) {
                    g.window({v / (g.out[1] * g.out[2]), (v / g.out[2]) % g.out[1], v % g.out[2]}, lo, hi);
                    const std::int64_t count = (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
                    if (count <= 0) continue;
                    const T inv = T(1) / static_cast<T>(count);
                    const T* d = dy + (n * ov + v) * C;
                    for (std::int64_t z = lo[0]; z < hi[0]; ++z)
                        for (std::int64_t yy = lo[1]; yy < hi[1]; ++yy)
                            for (std::int64_t xx = lo[2]; xx < hi[2]; ++xx) {
                                T* dst = out + (n * iv + (z * g.in.s[1] + yy) * g.in.s[2] + xx) * C;
                                for (std::int64_t c = 0; c < C; ++c) dst[c] += d[c] * inv;
                            }
                }
        }
    });
    return nn_detail::from_ndhwc_compute(dx, ndhwc, grad.type());
}

}  // namespace graft::ops
