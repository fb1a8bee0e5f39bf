// The nn_more family through graft::exec::session: Conv3D and its backprops, MaxPool3D / AvgPool3D and
// their gradients, MaxPoolWithArgmax, LRN, LSTMBlockCell / BlockLSTM / BlockLSTMV2 and GRUBlockCell —
// each against a float64 reference written here from TF's definitions (or TF's own test values),
// their gradients through graft's checker, and bad inputs failing with the node named.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "graft/autodiff/check.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/core/threads.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "graft/ops/binary.hpp"
#include "graft/ops/lstm_kernels.hpp"
#include "graft/ops/rnn_cells.hpp"
#include "support/tensors.hpp"

// One namespace per file: the opsets tests build as one binary in unity batches.
namespace graft_test_nn_more {

using namespace graft::test;  // f32, f64, i32, i64, values

using graft::attr_value;
using graft::dtype;
using graft::endpoint;
using graft::shape;
using graft::tensor;

namespace {

using ints_t = std::vector<std::int64_t>;

/// n deterministic values in [-1, 1).
std::vector<double> wave(std::size_t n, double phase = 0.0) {
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<double>(i) * 0.77 + phase) * 0.9;
    return v;
}
std::vector<float> to_f(const std::vector<double>& v) { return {v.begin(), v.end()}; }

void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-5) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("index " << i);
        CHECK(got[i] == doctest::Approx(want[i]).epsilon(tol).scale(1.0));
    }
}

tensor run1(graft::graph& g, const endpoint& e) {
    graft::exec::session s(g);
    return s.run({}, {e.str()})[0];
}

// ---- float64 references (NDHWC)
struct vol {
    std::int64_t n, d, h, w, c;
    [[nodiscard]] std::int64_t at(std::int64_t b, std::int64_t z, std::int64_t y, std::int64_t x, std::int64_t ch) const {
        return (((b * d + z) * h + y) * w + x) * c + ch;
    }
};
/// TF's SAME/VALID window: out size and pad before.
std::pair<std::int64_t, std::int64_t> win(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t dil, bool same) {
    const std::int64_t eff = (k - 1) * dil + 1;
    if (!same) return {(in - eff) / s + 1, 0};
    const std::int64_t out = (in + s - 1) / s;
    return {out, std::max<std::int64_t>(0, (out - 1) * s + eff - in) / 2};
}
std::vector<double> conv3d_ref(const std::vector<double>& x, vol in, const std::vector<double>& w,
                               std::array<std::int64_t, 3> k, std::int64_t oc, std::array<std::int64_t, 3> s,
                               std::array<std::int64_t, 3> dil, bool same, vol& out) {
    auto [od, pd] = win(in.d, k[0], s[0], dil[0], same);
    auto [oh, ph] = win(in.h, k[1], s[1], dil[1], same);
    auto [ow, pw] = win(in.w, k[2], s[2], dil[2], same);
    out = {in.n, od, oh, ow, oc};
    std::vector<double> y(static_cast<std::size_t>(in.n * od * oh * ow * oc), 0.0);
    for (std::int64_t b = 0; b < in.n; ++b)
        for (std::int64_t z = 0; z < od; ++z)
            for (std::int64_t yy = 0; yy < oh; ++yy)
                for (std::int64_t xx = 0; xx < ow; ++xx)
                    for (std::int64_t o = 0; o < oc; ++o) {
                        double acc = 0;
                        for (std::int64_t a = 0; a < k[0]; ++a)
                            for (std::int64_t bb = 0; bb < k[1]; ++bb)
                                for (std::int64_t cc = 0; cc < k[2]; ++cc) {
                                    const std::int64_t iz = z * s[0] - pd + a * dil[0], iy = yy * s[1] - ph + bb * dil[1],
                                                       ix = xx * s[2] - pw + cc * dil[2];
                                    if (iz < 0 || iz >= in.d || iy < 0 || iy >= in.h || ix < 0 || ix >= in.w) continue;
                                    for (std::int64_t ch = 0; ch < in.c; ++ch) {
                                        acc += x[static_cast<std::size_t>(in.at(b, iz, iy, ix, ch))] *
                                               w[static_cast<std::size_t>((((a * k[1] + bb) * k[2] + cc) * in.c + ch) * oc + o)];
                                    }
                                }
                        y[static_cast<std::size_t>(out.at(b, z, yy, xx, o))] = acc;
                    }
    return y;
}

attr_value ilist(const ints_t& v) { return attr_value::list_of(v); }

}  // namespace

TEST_CASE("Conv3D: NDHWC SAME with strides and dilations, NCDHW VALID, against a float64 reference") {
    const vol in{2, 4, 5, 3, 2};
    const std::array<std::int64_t, 3> k{2, 3, 2};
    const std::int64_t oc = 3;
    auto xv = wave(static_cast<std::size_t>(in.n * in.d * in.h * in.w * in.c));
    auto wv = wave(static_cast<std::size_t>(k[0] * k[1] * k[2] * in.c * oc), 1.3);
    struct cfg {
        std::array<std::int64_t, 3> s, d;
        bool same;
    };
    for (const cfg& cf : {cfg{{1, 1, 1}, {1, 1, 1}, true}, cfg{{2, 1, 2}, {1, 1, 1}, true},
                          cfg{{1, 1, 1}, {2, 1, 1}, true}, cfg{{1, 2, 1}, {1, 1, 2}, false}}) {
        vol out{};
        auto want = conv3d_ref(xv, in, wv, k, oc, cf.s, cf.d, cf.same, out);
        graft::graph g;
        graft::graph_builder b(g);
        auto x = b.constant(f32({in.n, in.d, in.h, in.w, in.c}, to_f(xv)));
        auto w = b.constant(f32({k[0], k[1], k[2], in.c, oc}, to_f(wv)));
        auto y = b.op("Conv3D", {x, w},
                      {{"strides", ilist({1, cf.s[0], cf.s[1], cf.s[2], 1})},
                       {"dilations", ilist({1, cf.d[0], cf.d[1], cf.d[2], 1})},
                       {"padding", std::string(cf.same ? "SAME" : "VALID")}});
        // the same convolution in NCDHW
        auto perm = b.constant(i32({5}, {0, 4, 1, 2, 3}));
        auto yc = b.op("Conv3D", {b.op("Transpose", {x, perm}), w},
                       {{"strides", ilist({1, 1, cf.s[0], cf.s[1], cf.s[2]})},
                        {"dilations", ilist({1, 1, cf.d[0], cf.d[1], cf.d[2]})},
                        {"padding", std::string(cf.same ? "SAME" : "VALID")},
                        {"data_format", std::string("NCDHW")}});
        auto yc_back = b.op("Transpose", {yc, b.constant(i32({5}, {0, 2, 3, 4, 1}))});
        graft::exec::session s(g);
        auto r = s.run({}, {y.str(), yc_back.str()});
        CHECK(r[0].shape() == shape{out.n, out.d, out.h, out.w, out.c});
        check_close(values(r[0]), want);
        check_close(values(r[1]), want);
    }
}

TEST_CASE("Conv3D, Conv3DBackpropInputV2 (conv3d_transpose) and Conv3DBackpropFilterV2: gradients") {
    graft::autodiff::check_options opt;
    opt.delta = 1e-5;
    for (const char* pad : {"SAME", "VALID"}) {
        auto r = graft::autodiff::check_gradients(
            [pad](const graft::graph_builder& gb, const std::vector<endpoint>& xs) {
                return std::vector<endpoint>{gb.op("Conv3D", {xs[0], xs[1]},
                                                   {{"strides", ilist({1, 2, 1, 1, 1})}, {"padding", std::string(pad)}})};
            },
            {f64({1, 3, 3, 2, 2}, wave(36)), f64({2, 2, 1, 2, 2}, wave(16, 0.4))}, opt);
        INFO(pad << ": " << r.str());
        CHECK(r.max_rel_error < 1e-6);
    }
    // conv3d_transpose: the input is the filter and out_backprop, output shape fixed; NCDHW.
    auto r = graft::autodiff::check_gradients(
        [](const graft::graph_builder& gb, const std::vector<endpoint>& xs) {
            auto sizes = gb.constant(i32({5}, {1, 2, 4, 3, 3}));
            return std::vector<endpoint>{gb.op("Conv3DBackpropInputV2", {sizes, xs[0], xs[1]},
                                               {{"strides", ilist({1, 1, 2, 1, 1})},
                                                {"padding", std::string("SAME")},
                                                {"data_format", std::string("NCDHW")}})};
        },
        {f64({2, 2, 2, 2, 3}, wave(48)), f64({1, 3, 2, 3, 3}, wave(54, 0.9))}, opt);
    INFO(r.str());
    CHECK(r.max_rel_error < 1e-6);
    auto rf = graft::autodiff::check_gradients(
        [](const graft::graph_builder& gb, const std::vector<endpoint>& xs) {
            auto fs = gb.constant(i32({5}, {2, 1, 2, 2, 3}));
            return std::vector<endpoint>{gb.op("Conv3DBackpropFilterV2", {xs[0], fs, xs[1]},
                                               {{"strides", ilist({1, 1, 1, 1, 1})}, {"padding", std::string("VALID")}})};
        },
        {f64({1, 3, 2, 3, 2}, wave(36)), f64({1, 2, 2, 2, 3}, wave(24, 0.2))}, opt);
    INFO(rf.str());
    CHECK(rf.max_rel_error < 1e-6);
}

TEST_CASE("Conv3DBackpropInputV2 equals the transpose of Conv3D (<conv(x), dy> = <x, backprop(dy)>)") {
    const std::vector<double> xv = wave(2 * 3 * 4 * 4 * 2), wv = wave(2 * 2 * 2 * 2 * 3, 0.5);
    graft::graph g;
    graft::graph_builder b(g);
    const graft::attr_list a{{"strides", ilist({1, 2, 2, 1, 1})}, {"padding", std::string("SAME")}};
    auto x = b.constant(f64({2, 3, 4, 4, 2}, xv));
    auto w = b.constant(f64({2, 2, 2, 2, 3}, wv));
    auto y = b.op("Conv3D", {x, w}, a);
    graft::exec::session s(g);
    const tensor yv = s.run({}, {y.str()})[0];
    const std::vector<double> dyv = wave(static_cast<std::size_t>(yv.num_elements()), 2.0);
    auto dy = b.constant(f64(yv.shape(), dyv));
    auto dx = b.op("Conv3DBackpropInputV2", {b.constant(i32({5}, {2, 3, 4, 4, 2})), w, dy}, a);
    auto dw = b.op("Conv3DBackpropFilterV2", {x, b.constant(i32({5}, {2, 2, 2, 2, 3})), dy}, a);
    graft::exec::session s2(g);
    auto r = s2.run({}, {dx.str(), dw.str()});
    double lhs = 0, rhs = 0, rhs_w = 0;
    auto yy = values(yv), dxv = values(r[0]), dwv = values(r[1]);
    for (std::size_t i = 0; i < yy.size(); ++i) lhs += yy[i] * dyv[i];
    for (std::size_t i = 0; i < xv.size(); ++i) rhs += xv[i] * dxv[i];
    for (std::size_t i = 0; i < wv.size(); ++i) rhs_w += wv[i] * dwv[i];
    CHECK(rhs == doctest::Approx(lhs).epsilon(1e-12));
    CHECK(rhs_w == doctest::Approx(lhs).epsilon(1e-12));
}

TEST_CASE("MaxPool3D / AvgPool3D: SAME windows skip padding, NCDHW, and their gradients") {
    // 1 x 2 x 3 x 3 x 1, ksize 2, stride 2, SAME: out 1 x 1 x 2 x 2.
    std::vector<float> v(18);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7) % 11);
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.constant(f32({1, 2, 3, 3, 1}, v));
    const graft::attr_list a{{"ksize", ilist({1, 2, 2, 2, 1})}, {"strides", ilist({1, 2, 2, 2, 1})},
                             {"padding", std::string("SAME")}};
    auto mx = b.op("MaxPool3D", {x}, a);
    auto av = b.op("AvgPool3D", {x}, a);
    auto xc = b.op("Transpose", {x, b.constant(i32({5}, {0, 4, 1, 2, 3}))});
    const graft::attr_list ac{{"ksize", ilist({1, 1, 2, 2, 2})}, {"strides", ilist({1, 1, 2, 2, 2})},
                              {"padding", std::string("SAME")}, {"data_format", std::string("NCDHW")}};
    auto avc = b.op("AvgPool3D", {xc}, ac);
    graft::exec::session s(g);
    auto r = s.run({}, {mx.str(), av.str(), avc.str()});
    // windows (d 0-1, h {0-1 | 2}, w {0-1 | 2}); value at (z, y, x) is v[z*9 + y*3 + x]
    auto at = [&](int z, int y, int xx) { return static_cast<double>(v[static_cast<std::size_t>(z * 9 + y * 3 + xx)]); };
    std::vector<double> want_max, want_avg;
    for (int y0 : {0, 2})
        for (int x0 : {0, 2}) {
            double m = -1e30, sum = 0;
            int n = 0;
            for (int z = 0; z < 2; ++z)
                for (int y = y0; y < std::min(y0 + 2, 3); ++y)
                    for (int xx = x0; xx < std::min(x0 + 2, 3); ++xx) m = std::max(m, at(z, y, xx)), sum += at(z, y, xx), ++n;
            want_max.push_back(m);
            want_avg.push_back(sum / n);
        }
    CHECK(r[0].shape() == shape{1, 1, 2, 2, 1});
    check_close(values(r[0]), want_max);
    check_close(values(r[1]), want_avg);
    check_close(values(r[2]), want_avg);

    for (const char* op : {"MaxPool3D", "AvgPool3D"}) {
        auto res = graft::autodiff::check_gradients(
            [op](const graft::graph_builder& gb, const std::vector<endpoint>& xs) {
                return std::vector<endpoint>{gb.op(op, {xs[0]},
                                                   {{"ksize", ilist({1, 2, 2, 2, 1})},
                                                    {"strides", ilist({1, 1, 2, 1, 1})},
                                                    {"padding", std::string("SAME")}})};
            },
            {f64({1, 3, 3, 2, 2}, wave(36))});
        INFO(op << ": " << res.str());
        CHECK(res.max_rel_error < 1e-6);
    }
}

TEST_CASE("MaxPool3DGrad sends each window's gradient to every tied max (TF's CPU rule); AvgPool3DGrad") {
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.constant(f32({1, 1, 2, 2, 1}, {1, 3, 3, 0}));
    const graft::attr_list a{{"ksize", ilist({1, 1, 2, 2, 1})}, {"strides", ilist({1, 1, 1, 1, 1})},
                             {"padding", std::string("VALID")}};
    auto y = b.op("MaxPool3D", {x}, a);
    auto dx = b.op("MaxPool3DGrad", {x, y, b.constant(f32({1, 1, 1, 1, 1}, {2}))}, a);
    auto da = b.op("AvgPool3DGrad", {b.constant(i32({5}, {1, 1, 2, 2, 1})), b.constant(f32({1, 1, 1, 1, 1}, {2}))}, a);
    graft::exec::session s(g);
    auto r = s.run({}, {dx.str(), da.str()});
    CHECK(values(r[0]) == std::vector<double>{0, 2, 2, 0});
    CHECK(values(r[1]) == std::vector<double>{0.5, 0.5, 0.5, 0.5});
}

TEST_CASE("MaxPoolWithArgmax: TF's example, both index forms, ties to the first max, and the gradient") {
    // TF's pooling_ops_test: 3x3 ones with a 0 in the middle, 2x2 VALID windows stride 1.
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.constant(f32({2, 3, 3, 1}, {1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1}));
    const graft::attr_list a{{"ksize", ilist({1, 2, 2, 1})}, {"strides", ilist({1, 1, 1, 1})},
                             {"padding", std::string("VALID")}};
    auto m = b.op_n("MaxPoolWithArgmax", {x}, a);
    graft::attr_list ab = a;
    ab.emplace_back("include_batch_in_index", attr_value(true));
    ab.emplace_back("Targmax", attr_value(dtype::int32));
    auto mb = b.op_n("MaxPoolWithArgmax", {x}, ab);
    graft::exec::session s(g);
    auto r = s.run({}, {m[0].str(), m[1].str(), mb[1].str()});
    CHECK(values(r[0]) == std::vector<double>{1, 1, 1, 1, 1, 1, 1, 1});
    CHECK(r[1].type() == dtype::int64);
    CHECK(values(r[1]) == std::vector<double>{0, 1, 3, 5, 1, 1, 3, 4});
    CHECK(r[2].type() == dtype::int32);
    CHECK(values(r[2]) == std::vector<double>{0, 1, 3, 5, 10, 10, 12, 13});

    auto res = graft::autodiff::check_gradients(
        [](const graft::graph_builder& gb, const std::vector<endpoint>& xs) {
            return std::vector<endpoint>{gb.op_n("MaxPoolWithArgmax", {xs[0]},
                                                 {{"ksize", ilist({1, 2, 2, 1})},
                                                  {"strides", ilist({1, 2, 2, 1})},
                                                  {"padding", std::string("SAME")}})[0]};
        },
        {f64({2, 3, 3, 2}, wave(36))});
    INFO(res.str());
    CHECK(res.max_rel_error < 1e-6);
}

TEST_CASE("LRN against a float64 reference, and its gradient (LRNGrad)") {
    const std::vector<double> xv = wave(2 * 2 * 7);
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.constant(f32({1, 2, 2, 7}, to_f(xv)));
    const graft::attr_list a{{"depth_radius", attr_value(std::int64_t{2})}, {"bias", attr_value(0.5f)},
                             {"alpha", attr_value(0.3f)}, {"beta", attr_value(0.75f)}};
    auto y = b.op("LRN", {x}, a);
    std::vector<double> want(xv.size());
    for (std::size_t r = 0; r < 4; ++r)
        for (std::size_t d = 0; d < 7; ++d) {
            double sq = 0;
            for (std::size_t k = d >= 2 ? d - 2 : 0; k < std::min<std::size_t>(7, d + 3); ++k) sq += xv[r * 7 + k] * xv[r * 7 + k];
            want[r * 7 + d] = xv[r * 7 + d] / std::pow(0.5 + 0.3 * sq, 0.75);
        }
    check_close(values(run1(g, y)), want);

    auto res = graft::autodiff::check_gradients(
        [a](const graft::graph_builder& gb, const std::vector<endpoint>& xs) {
            return std::vector<endpoint>{gb.op("LRN", {xs[0]}, a)};
        },
        {f64({1, 2, 1, 7}, wave(14, 0.3))});
    INFO(res.str());
    CHECK(res.max_rel_error < 1e-6);
}

namespace {
double sig(double v) { return 1.0 / (1.0 + std::exp(-v)); }
/// One LSTM step in float64 (TF's formulas): returns h and cs; gates laid out ICFO or IFCO.
void lstm_ref(std::int64_t B, std::int64_t I, std::int64_t H, const std::vector<double>& x, std::vector<double>& cs,
              std::vector<double>& h, const std::vector<double>& w, const std::vector<double>& wci,
              const std::vector<double>& wcf, const std::vector<double>& wco, const std::vector<double>& bias,
              double forget_bias, double clip, bool peep, bool ifco) {
    std::vector<double> ncs(cs.size()), nh(h.size());
    const std::int64_t oc = ifco ? 2 * H : H, of = ifco ? H : 2 * H;
    for (std::int64_t r = 0; r < B; ++r)
        for (std::int64_t j = 0; j < H; ++j) {
            double g[4] = {0, 0, 0, 0};
            const std::int64_t col[4] = {j, oc + j, of + j, 3 * H + j};
            for (int q = 0; q < 4; ++q) {
                g[q] = bias[static_cast<std::size_t>(col[q])];
                for (std::int64_t k = 0; k < I + H; ++k) {
                    const double in = k < I ? x[static_cast<std::size_t>(r * I + k)] : h[static_cast<std::size_t>(r * H + k - I)];
                    g[q] += in * w[static_cast<std::size_t>(k * 4 * H + col[q])];
                }
            }
            const auto k = static_cast<std::size_t>(r * H + j);
            const double cp = cs[k];
            const double i = sig(g[0] + (peep ? cp * wci[static_cast<std::size_t>(j)] : 0));
            const double ci = std::tanh(g[1]);
            const double f = sig(g[2] + forget_bias + (peep ? cp * wcf[static_cast<std::size_t>(j)] : 0));
            double c = i * ci + f * cp;
            if (clip > 0) c = std::clamp(c, -clip, clip);
            const double o = sig(g[3] + (peep ? c * wco[static_cast<std::size_t>(j)] : 0));
            ncs[k] = c;
            nh[k] = o * std::tanh(c);
        }
    cs = ncs;
    h = nh;
}
}  // namespace

TEST_CASE("LSTMBlockCell, BlockLSTM and BlockLSTMV2 against a float64 reference (forget_bias, clip, peepholes)") {
    const std::int64_t B = 2, I = 3, H = 2, T = 3;
    const auto w = wave(static_cast<std::size_t>((I + H) * 4 * H)), bias = wave(8, 0.7), wci = wave(2, 1.1),
               wcf = wave(2, 2.2), wco = wave(2, 0.1), xs = wave(static_cast<std::size_t>(T * B * I), 0.5),
               cs0 = wave(4, 3.0), h0 = wave(4, 1.7);
    struct cfg {
        double fb, clip;
        bool peep;
    };
    for (const cfg& cf : {cfg{1.0, 3.0, false}, cfg{2.0, 0.3, false}, cfg{0.5, -1.0, true}}) {
        graft::graph g;
        graft::graph_builder b(g);
        auto c = [&](const shape& s, const std::vector<double>& v) { return b.constant(f32(s, to_f(v))); };
        auto wn = c({I + H, 4 * H}, w), bn = c({4 * H}, bias), wi = c({H}, wci), wf = c({H}, wcf), wo = c({H}, wco);
        auto x3 = c({T, B, I}, xs), c0 = c({B, H}, cs0), hh0 = c({B, H}, h0);
        const graft::attr_list a{{"forget_bias", attr_value(static_cast<float>(cf.fb))},
                                 {"cell_clip", attr_value(static_cast<float>(cf.clip))},
                                 {"use_peephole", attr_value(cf.peep)}};
        auto x0 = c({B, I}, std::vector<double>(xs.begin(), xs.begin() + B * I));
        auto cell = b.op_n("LSTMBlockCell", {x0, c0, hh0, wn, wi, wf, wo, bn}, a);
        auto seq = b.constant(tensor::scalar_of<std::int64_t>(T - 1));
        auto blk = b.op_n("BlockLSTM", {seq, x3, c0, hh0, wn, wi, wf, wo, bn}, a);
        const graft::attr_list a2{{"cell_clip", attr_value(static_cast<float>(cf.clip))}, {"use_peephole", attr_value(cf.peep)}};
        auto blk2 = b.op_n("BlockLSTMV2", {b.constant(tensor::scalar_of<std::int64_t>(T)), x3, c0, hh0, wn, wi, wf, wo, bn}, a2);
        graft::exec::session s(g);
        auto r = s.run({}, {cell[6].str(), cell[1].str(), blk[6].str(), blk[1].str(), blk2[6].str()});

        std::vector<double> cs = cs0, h = h0, want_h, want_cs;
        for (std::int64_t t = 0; t < T; ++t) {
            std::vector<double> xt(xs.begin() + t * B * I, xs.begin() + (t + 1) * B * I);
            lstm_ref(B, I, H, xt, cs, h, w, wci, wcf, wco, bias, cf.fb, cf.clip, cf.peep, false);
            if (t == 0) {
                check_close(values(r[0]), h);
                check_close(values(r[1]), cs);
            }
            const bool live = t < T - 1;  // seq_len_max = T - 1: the last step is zero
            for (std::size_t k = 0; k < h.size(); ++k) want_h.push_back(live ? h[k] : 0.0), want_cs.push_back(live ? cs[k] : 0.0);
        }
        check_close(values(r[2]), want_h);
        check_close(values(r[3]), want_cs);
        // V2: gate layout IFCO, no forget_bias
        cs = cs0, h = h0;
        std::vector<double> want2;
        for (std::int64_t t = 0; t < T; ++t) {
            std::vector<double> xt(xs.begin() + t * B * I, xs.begin() + (t + 1) * B * I);
            lstm_ref(B, I, H, xt, cs, h, w, wci, wcf, wco, bias, 0.0, cf.clip, cf.peep, true);
            want2.insert(want2.end(), h.begin(), h.end());
        }
        check_close(values(r[4]), want2);
    }
}

TEST_CASE("LSTMBlockCell / BlockLSTM / BlockLSTMV2 gradients (LSTMBlockCellGrad, BlockLSTMGrad[V2])") {
    const std::int64_t B = 2, I = 2, H = 2;
    std::vector<tensor> in{f64({B, I}, wave(4)), f64({B, H}, wave(4, 1.0)), f64({B, H}, wave(4, 2.0)),
                           f64({I + H, 4 * H}, wave(32, 0.3)), f64({H}, wave(2, 0.4)), f64({H}, wave(2, 0.5)),
                           f64({H}, wave(2, 0.6)), f64({4 * H}, wave(8, 0.7))};
    for (bool peep : {false, true}) {
        auto r = graft::autodiff::check_gradients(
            [peep](const graft::graph_builder& gb, const std::vector<endpoint>& xs) {
                auto o = gb.op_n("LSTMBlockCell", xs, {{"cell_clip", attr_value(-1.0f)}, {"use_peephole", attr_value(peep)}});
                return std::vector<endpoint>{o[6], o[1]};
            },
            in);
        INFO("peephole " << peep << ": " << r.str());
        CHECK(r.max_rel_error < 1e-6);
    }
    std::vector<tensor> seq_in = in;
    seq_in[0] = f64({3, B, I}, wave(12, 0.9));
    for (const char* op : {"BlockLSTM", "BlockLSTMV2"}) {
        auto r = graft::autodiff::check_gradients(
            [op](const graft::graph_builder& gb, const std::vector<endpoint>& xs) {
                std::vector<endpoint> args{gb.constant(tensor::scalar_of<std::int64_t>(3))};
                args.insert(args.end(), xs.begin(), xs.end());
                auto o = gb.op_n(op, args, {{"cell_clip", attr_value(0.0f)}, {"use_peephole", attr_value(true)}});
                return std::vector<endpoint>{o[6], o[1]};
            },
            seq_in);
        INFO(op << ": " << r.str());
        CHECK(r.max_rel_error < 1e-6);
    }
}

TEST_CASE("BlockLSTM / BlockLSTMGrad at layer size: float32 (SIMD gates, GEMMs, rows split over threads) vs float64") {
    // Sizes that take the float32 fast paths: H = 43 (five 8-lane blocks and a tail), batch rows
    // split between two threads, seq_len_max < T (the last steps' outputs and x_grad are zero).
    const std::int64_t T = 14, B = 25, I = 9, H = 43, S = 12;
    const int threads = graft::num_threads();
    graft::set_num_threads(2);
    const auto w = wave(static_cast<std::size_t>((I + H) * 4 * H), 0.2), bias = wave(static_cast<std::size_t>(4 * H), 0.7),
               xs = wave(static_cast<std::size_t>(T * B * I), 0.5), cs0 = wave(static_cast<std::size_t>(B * H), 3.0),
               h0 = wave(static_cast<std::size_t>(B * H), 1.7), peep = wave(static_cast<std::size_t>(H), 1.1),
               dh = wave(static_cast<std::size_t>(T * B * H), 0.3), dcs = wave(static_cast<std::size_t>(T * B * H), 2.5);
    for (bool v2 : {false, true}) {
        for (bool peephole : {false, true}) {
            graft::graph g;
            graft::graph_builder b(g);
            std::vector<std::string> fetch;
            for (dtype t : {dtype::float32, dtype::float64}) {
                auto c = [&](const shape& s, std::vector<double> v) {
                    for (double& e : v) e *= 0.3;  // keep the gates away from saturation
                    return b.constant(graft::cast(f64(s, v), t));
                };
                std::vector<endpoint> in{b.constant(tensor::scalar_of<std::int64_t>(S)), c({T, B, I}, xs), c({B, H}, cs0),
                                         c({B, H}, h0), c({I + H, 4 * H}, w), c({H}, peep), c({H}, wave(static_cast<std::size_t>(H), 2.2)),
                                         c({H}, wave(static_cast<std::size_t>(H), 0.1)), c({4 * H}, bias)};
                graft::attr_list a{{"cell_clip", attr_value(peephole ? 0.5f : -1.0f)}, {"use_peephole", attr_value(peephole)}};
                if (!v2) a.push_back({"forget_bias", attr_value(1.0f)});
                auto o = b.op_n(v2 ? "BlockLSTMV2" : "BlockLSTM", in, a);
                std::vector<endpoint> gin = in;
                gin.insert(gin.end(), o.begin(), o.end());
                gin.push_back(c({T, B, H}, dcs));
                gin.push_back(c({T, B, H}, dh));
                auto gr = b.op_n(v2 ? "BlockLSTMGradV2" : "BlockLSTMGrad", gin, {{"use_peephole", attr_value(peephole)}});
                for (int k : {1, 6}) fetch.push_back(o[static_cast<std::size_t>(k)].str());
                for (const auto& e : gr) fetch.push_back(e.str());
            }
            graft::exec::session s(g);
            auto r = s.run({}, fetch);
            const std::size_t n = r.size() / 2;
            for (std::size_t k = 0; k < n; ++k) {
                INFO((v2 ? "V2" : "V1") << " peephole " << peephole << " fetch " << fetch[k]);
                check_close(values(r[k]), values(r[n + k]), 2e-5);
            }
            // steps >= seq_len_max: zero h and zero x_grad
            const auto h = values(r[1]), dx = values(r[2]);
            CHECK(std::all_of(h.begin() + S * B * H, h.end(), [](double v) { return v == 0.0; }));
            CHECK(std::all_of(dx.begin() + S * B * I, dx.end(), [](double v) { return v == 0.0; }));
            CHECK(std::any_of(h.begin(), h.begin() + S * B * H, [](double v) { return v != 0.0; }));
        }
    }
    graft::set_num_threads(threads);
}

TEST_CASE("BlockLSTM keeps only the outputs something reads: the same bits for those, the rest never made") {
    // ops::block_lstm with some outputs not wanted, then sessions fetching some outputs of one node:
    // every output kept is the one computed with all kept (cs and h still carry the recurrence
    // through one-step buffers), on 1 and 2 threads, seq_len_max < T, with and without peepholes
    const std::int64_t T = 9, B = 14, I = 7, H = 37, S = 8;
    const int threads = graft::num_threads();
    auto f32 = [](const shape& s, std::vector<double> v, double scale) {
        for (double& e : v) e *= scale;
        return graft::cast(f64(s, v), dtype::float32);
    };
    const tensor x = f32({T, B, I}, wave(static_cast<std::size_t>(T * B * I), 0.5), 0.3),
                 cs0 = f32({B, H}, wave(static_cast<std::size_t>(B * H), 3.0), 0.3),
                 h0 = f32({B, H}, wave(static_cast<std::size_t>(B * H), 1.7), 0.3),
                 w = f32({I + H, 4 * H}, wave(static_cast<std::size_t>((I + H) * 4 * H), 0.2), 0.3),
                 peep = f32({H}, wave(static_cast<std::size_t>(H), 1.1), 0.3),
                 bias = f32({4 * H}, wave(static_cast<std::size_t>(4 * H), 0.7), 0.3);
    namespace lk = graft::ops::lstm_kernels;
    for (int th : {1, 2}) {
        graft::set_num_threads(th);
        for (bool peephole : {false, true}) {
            graft::ops::lstm_params p{1.0, peephole ? 0.5 : 0.0, peephole, false};
            const auto all = graft::ops::block_lstm(S, x, cs0, h0, w, peep, peep, peep, bias, p);
            const tensor* want[] = {&all.i, &all.cs, &all.f, &all.o, &all.ci, &all.co, &all.h};
            for (const lk::kept_steps& kept : {lk::kept_steps{false, false, false, false, false, false, true},
                                               lk::kept_steps{false, true, false, false, false, false, false},
                                               lk::kept_steps{true, false, false, true, false, true, false},
                                               lk::kept_steps{false, false, true, false, true, false, true}}) {
                const auto r = graft::ops::block_lstm(S, x, cs0, h0, w, peep, peep, peep, bias, p, kept);
                const tensor* got[] = {&r.i, &r.cs, &r.f, &r.o, &r.ci, &r.co, &r.h};
                for (std::size_t k = 0; k < 7; ++k) {
                    INFO("threads " << th << " peephole " << peephole << " output " << k);
                    REQUIRE(got[k]->valid() == kept[k]);
                    if (kept[k]) CHECK(equal(*got[k], *want[k]));
                }
            }
        }
    }
    // through a session: the kernel keeps what the plan reads (a fetch, a later step)
    graft::graph g;
    graft::graph_builder b(g);
    std::vector<endpoint> in{b.constant(tensor::scalar_of<std::int64_t>(S)), b.constant(x), b.constant(cs0), b.constant(h0),
                             b.constant(w), b.constant(peep), b.constant(peep), b.constant(peep), b.constant(bias)};
    auto o = b.op_n("BlockLSTM", in, {{"cell_clip", attr_value(-1.0f)}, {"use_peephole", attr_value(false)}, {"forget_bias", attr_value(1.0f)}});
    const std::string blk = o[0].node;
    auto doubled = b.op("Mul", {o[4], b.constant(tensor::scalar_of<float>(2.0f))});  // reads ci
    graft::exec::session s(g);
    std::vector<std::string> every;
    for (int k = 0; k < 7; ++k) every.push_back(blk + ":" + std::to_string(k));
    for (int th : {1, 2}) {
        graft::set_num_threads(th);
        const auto full = s.run({}, every);
        const auto h_only = s.run({}, {blk + ":6"});
        CHECK(equal(h_only[0], full[6]));
        const auto cs_and_mul = s.run({}, {blk + ":1", doubled.str()});
        CHECK(equal(cs_and_mul[0], full[1]));
        CHECK(equal(cs_and_mul[1], graft::ops::mul(full[4], tensor::scalar_of<float>(2.0f))));
    }
    graft::set_num_threads(threads);
}

TEST_CASE("LSTM gate rows: every vector width the CPU runs gives the same bits, within 2e-6 of std::exp/std::tanh") {
    // 16-lane (AVX-512), 8-lane (AVX2) and scalar rows of one batch row: H = 53 (three 16-lane
    // blocks, six 8-lane blocks, tails), pre-activations from -40 to 40 (saturated gates, |x| < 0.3
    // in tanh's polynomial), a NaN, clipping and peepholes
    namespace lk = graft::ops::lstm_kernels;
    namespace gm = graft::ops::gemm;
    const std::int64_t H = 53;
    std::vector<float> g(4 * H), bias(4 * H), cs_prev(H), wci(H), wcf(H), wco(H);
    for (std::int64_t j = 0; j < 4 * H; ++j) {
        g[j] = static_cast<float>(40.0 * std::sin(0.37 * static_cast<double>(j * j)) * std::exp(-0.02 * j));
        bias[j] = static_cast<float>(0.1 * std::cos(static_cast<double>(j)));
    }
    for (std::int64_t j = 0; j < H; ++j) {
        cs_prev[j] = static_cast<float>(2.0 * std::sin(1.3 * static_cast<double>(j)));
        wci[j] = 0.3f, wcf[j] = -0.2f, wco[j] = 0.25f;
    }
    g[7] = std::numeric_limits<float>::quiet_NaN();  // an i gate: i, cs, co and h of column 7 are NaN
    for (bool peephole : {false, true}) {
        lk::gate_config cfg{0, H, 2 * H, 3 * H, 1.0, peephole ? 1.5 : 0.0, peephole};
        std::vector<std::vector<float>> by_isa;
        for (gm::kernel_isa isa : gm::available_kernels()) {
            gm::limit_kernel(isa);
            std::vector<float> out(7 * H, -7.f);
            float* o = out.data();
            lk::gates_forward<float>(H, cfg, g.data(), bias.data(), cs_prev.data(), wci.data(), wcf.data(), wco.data(),
                                     {o, o + H, o + 2 * H, o + 3 * H, o + 4 * H, o + 5 * H, o + 6 * H});
            by_isa.push_back(out);
        }
        gm::limit_kernel(gm::kernel_isa::avx512);
        std::vector<double> ref(7 * H);
        {  // float64 reference of the same row
            std::vector<double> gd(g.begin(), g.end()), bd(bias.begin(), bias.end()), cd(cs_prev.begin(), cs_prev.end()),
                wid(wci.begin(), wci.end()), wfd(wcf.begin(), wcf.end()), wod(wco.begin(), wco.end());
            double* o = ref.data();
            lk::gates_forward<double>(H, cfg, gd.data(), bd.data(), cd.data(), wid.data(), wfd.data(), wod.data(),
                                      {o, o + H, o + 2 * H, o + 3 * H, o + 4 * H, o + 5 * H, o + 6 * H});
        }
        for (std::size_t k = 0; k < by_isa.size(); ++k) {
            INFO("peephole " << peephole << " kernel family " << k);
            for (std::int64_t e = 0; e < 7 * H; ++e) {
                const double want = ref[static_cast<std::size_t>(e)], got = by_isa[k][static_cast<std::size_t>(e)];
                INFO("output " << e / H << " column " << e % H);
                if (std::isnan(want)) {
                    CHECK(std::isnan(got));
                } else {
                    CHECK(std::abs(got - want) <= 2e-6 * std::max(1.0, std::abs(want)));
                }
            }
            if (k >= 2) {  // the AVX-512 rows are the AVX2 rows, bit for bit (families: portable, avx2, avx512);
                           // a NaN is a NaN (its sign differs between widths in clang's -O0 builds)
                for (std::size_t e = 0; e < by_isa[k].size(); ++e) {
                    const float x = by_isa[k][e], y = by_isa[1][e];
                    INFO("output " << static_cast<std::int64_t>(e) / H << " column " << static_cast<std::int64_t>(e) % H);
                    if (std::isnan(y)) CHECK(std::isnan(x));
                    else CHECK(std::memcmp(&x, &y, sizeof(float)) == 0);
                }
            }
        }
        CHECK(std::isnan(by_isa.back()[static_cast<std::size_t>(6 * H + 7)]));  // h of the NaN column
    }
}

TEST_CASE("LSTM backward gate rows: every vector width gives the same bits, within 1e-5 of float64") {
    // 16-lane (AVX-512), 8-lane (AVX2) and scalar rows of gates_backward: H = 53 (three 16-lane
    // blocks, six 8-lane blocks, the same 5-column scalar tail), with and without peepholes (whose
    // gradients accumulate onto what is there)
    namespace lk = graft::ops::lstm_kernels;
    namespace gm = graft::ops::gemm;
    const std::int64_t H = 53;
    auto row = [&](double scale, double phase, bool unit) {
        std::vector<float> v(static_cast<std::size_t>(H));
        for (std::int64_t j = 0; j < H; ++j) {
            const double x = std::sin(phase + 0.71 * static_cast<double>(j * j));
            v[static_cast<std::size_t>(j)] = static_cast<float>(unit ? 0.5 + 0.49 * x : scale * x);
        }
        return v;
    };
    // saved gate values in (0, 1) (i, f, o) or (-1, 1) (ci, co), cell states and incoming gradients
    const auto i = row(0, 0.1, true), f = row(0, 0.2, true), o = row(0, 0.3, true), ci = row(0.99, 0.4, false),
               co = row(0.99, 0.5, false), cs = row(2.0, 0.6, false), cs_prev = row(2.0, 0.7, false),
               dcs = row(1.5, 0.8, false), dh = row(1.2, 0.9, false), wci = row(0.3, 1.0, false),
               wcf = row(0.3, 1.1, false), wco = row(0.3, 1.2, false), acc0 = row(0.1, 1.3, false);
    for (bool peephole : {false, true}) {
        lk::gate_config cfg{0, H, 2 * H, 3 * H, 1.0, 0.0, peephole};
        std::vector<std::vector<float>> by_isa;  // dg [4H], cs_prev_grad, wci_g, wcf_g, wco_g
        for (gm::kernel_isa isa : gm::available_kernels()) {
            gm::limit_kernel(isa);
            std::vector<float> out(8 * H, -7.f);
            float* d = out.data();
            for (int k = 0; k < 3; ++k) std::copy(acc0.begin(), acc0.end(), d + (5 + k) * H);
            lk::gates_backward<float>(H, cfg, cs_prev.data(), wci.data(), wcf.data(), wco.data(), i.data(), cs.data(),
                                      f.data(), o.data(), ci.data(), co.data(), dcs.data(), dh.data(), d, d + 4 * H,
                                      d + 5 * H, d + 6 * H, d + 7 * H);
            by_isa.push_back(out);
        }
        gm::limit_kernel(gm::kernel_isa::avx512);
        std::vector<double> ref(8 * H);
        {
            auto d64 = [](const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); };
            const auto i6 = d64(i), f6 = d64(f), o6 = d64(o), ci6 = d64(ci), co6 = d64(co), cs6 = d64(cs),
                       cp6 = d64(cs_prev), dcs6 = d64(dcs), dh6 = d64(dh), wi6 = d64(wci), wf6 = d64(wcf), wo6 = d64(wco);
            double* d = ref.data();
            for (int k = 0; k < 3; ++k) std::copy(acc0.begin(), acc0.end(), d + (5 + k) * H);
            lk::gates_backward<double>(H, cfg, cp6.data(), wi6.data(), wf6.data(), wo6.data(), i6.data(), cs6.data(),
                                       f6.data(), o6.data(), ci6.data(), co6.data(), dcs6.data(), dh6.data(), d,
                                       d + 4 * H, d + 5 * H, d + 6 * H, d + 7 * H);
        }
        for (std::size_t k = 0; k < by_isa.size(); ++k) {
            INFO("peephole " << peephole << " kernel family " << k);
            const std::int64_t outputs = peephole ? 8 * H : 5 * H;  // no peepholes: their gradients untouched
            for (std::int64_t e = 0; e < outputs; ++e) {
                INFO("output element " << e);
                const double want = ref[static_cast<std::size_t>(e)];
                CHECK(std::abs(by_isa[k][static_cast<std::size_t>(e)] - want) <= 1e-5 * std::max(1.0, std::abs(want)));
            }
            if (!peephole) {
                for (std::int64_t e = 5 * H; e < 8 * H; ++e) CHECK(by_isa[k][static_cast<std::size_t>(e)] == acc0[static_cast<std::size_t>(e % H)]);
            }
            if (k >= 2) CHECK(std::memcmp(by_isa[k].data(), by_isa[1].data(), by_isa[k].size() * sizeof(float)) == 0);
        }
    }
}

TEST_CASE("GRUBlockCell against a float64 reference, and its gradient (GRUBlockCellGrad)") {
    const std::int64_t B = 2, I = 3, H = 2;
    const auto x = wave(6), h0 = wave(4, 1.0), wru = wave(20, 0.2), wc = wave(10, 0.8), bru = wave(4, 0.5), bc = wave(2, 1.5);
    graft::graph g;
    graft::graph_builder b(g);
    auto c = [&](const shape& s, const std::vector<double>& v) { return b.constant(f32(s, to_f(v))); };
    auto o = b.op_n("GRUBlockCell", {c({B, I}, x), c({B, H}, h0), c({I + H, 2 * H}, wru), c({I + H, H}, wc),
                                     c({2 * H}, bru), c({H}, bc)});
    std::vector<double> want(4);
    for (std::int64_t r = 0; r < B; ++r) {
        std::vector<double> ru(4), xh(5);
        for (std::int64_t k = 0; k < I + H; ++k)
            xh[static_cast<std::size_t>(k)] = k < I ? x[static_cast<std::size_t>(r * I + k)] : h0[static_cast<std::size_t>(r * H + k - I)];
        for (std::size_t j = 0; j < 4; ++j) {
            ru[j] = bru[j];
            for (std::size_t k = 0; k < 5; ++k) ru[j] += xh[k] * wru[k * 4 + j];
            ru[j] = sig(ru[j]);
        }
        for (std::size_t k = 0; k < 2; ++k) xh[3 + k] *= ru[k];
        for (std::size_t j = 0; j < 2; ++j) {
            double cc = bc[j];
            for (std::size_t k = 0; k < 5; ++k) cc += xh[k] * wc[k * 2 + j];
            cc = std::tanh(cc);
            const double u = ru[2 + j], hp = h0[static_cast<std::size_t>(r * H) + j];
            want[static_cast<std::size_t>(r * H) + j] = u * hp + (1 - u) * cc;
        }
    }
    check_close(values(run1(g, o[3])), want);

    auto r = graft::autodiff::check_gradients(
        [](const graft::graph_builder& gb, const std::vector<endpoint>& xs) {
            return std::vector<endpoint>{gb.op_n("GRUBlockCell", xs)[3]};
        },
        {f64({B, I}, x), f64({B, H}, h0), f64({I + H, 2 * H}, wru), f64({I + H, H}, wc), f64({2 * H}, bru),
         f64({H}, bc)});
    INFO(r.str());
    CHECK(r.max_rel_error < 1e-6);
}

TEST_CASE("nn_more bad inputs fail naming the node and the shapes") {
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.constant(f32({1, 2, 2, 2, 3}, std::vector<float>(24, 1.0f)));
    auto w = b.constant(f32({1, 1, 1, 2, 4}, std::vector<float>(8, 1.0f)));
    auto y = b.op("Conv3D", {x, w}, {{"strides", ilist({1, 1, 1, 1, 1})}, {"padding", std::string("SAME")}}, "bad_conv");
    graft::exec::session s(g);
    CHECK_THROWS_WITH_AS(s.run({}, {y.str()}), doctest::Contains("bad_conv"), graft::error);
    CHECK_THROWS_WITH_AS(s.run({}, {y.str()}), doctest::Contains("in_channels 2 != input channels 3"), graft::error);

    auto& cell = b.add("LSTMBlockCell",
                      {b.constant(f32({1, 2}, {1, 2})), b.constant(f32({1, 3}, {0, 0, 0})), b.constant(f32({1, 3}, {0, 0, 0})),
                       b.constant(f32({4, 12}, std::vector<float>(48, 0.1f))), b.constant(f32({3}, {0, 0, 0})),
                       b.constant(f32({3}, {0, 0, 0})), b.constant(f32({3}, {0, 0, 0})),
                       b.constant(f32({12}, std::vector<float>(12, 0.f)))},
                      {}, "bad_cell");
    graft::exec::session s2(g);
    CHECK_THROWS_WITH_AS(s2.run({}, {cell.output(6).str()}), doctest::Contains("w must be [5,12]"), graft::error);

    auto pool = b.op("MaxPool3D", {x}, {{"ksize", ilist({1, 2, 2, 2})}, {"strides", ilist({1, 1, 1, 1, 1})},
                                         {"padding", std::string("VALID")}}, "bad_pool");
    graft::exec::session s3(g);
    CHECK_THROWS_WITH_AS(s3.run({}, {pool.str()}), doctest::Contains("ksize must have 5 entries"), graft::error);
}

}  // namespace graft_test_nn_more
