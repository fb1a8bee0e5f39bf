// Checks benchmarks/onednn_peer.hpp against a naive float64 reference written here (forward and a
// hand-written analytic backward), then times it. Standalone:
//
//   g++ -std=c++20 -O2 benchmarks/onednn_peer_check.cpp -ldnnl -o /tmp/onednn_check && /tmp/onednn_check
//
// Exit status 0 when every check passes. Checks:
//   - model::forward (MLP, LeNet; batch 1, 3, 128): max |logits - ref| / max(1, max |ref|) < 1e-4
//   - trainer::step (batch 3, 8, 128): the loss, and every weight and bias after one SGD step,
//     against the reference's: max abs diff < 1e-5; 20 steps lower the loss
//   - matmul and conv2d helpers against the reference
//   - a model built for 2 threads refuses to run on 1; wrong shapes throw std::runtime_error
#include "onednn_peer.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace od = graft::bench::onednn;
using vec = std::vector<double>;
using i64 = std::int64_t;

int failures = 0;

void expect(bool ok, const std::string& what) {
    std::printf("  %-4s %s\n", ok ? "ok" : "FAIL", what.c_str());
    if (!ok) ++failures;
}

// ---------------------------------------------------------------- data

struct rng {
    std::uint64_t s;
    double next() {  // splitmix64 -> [0,1)
        std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        return static_cast<double>(z >> 11) * 0x1.0p-53;
    }
};

std::vector<float> uniform(std::size_t n, std::uint64_t seed, double scale) {
    rng r{seed};
    std::vector<float> v(n);
    for (auto& x : v) x = static_cast<float>((r.next() * 2 - 1) * scale);
    return v;
}

std::size_t count(const std::vector<i64>& s) {
    i64 n = 1;
    for (i64 d : s) n *= d;
    return static_cast<std::size_t>(n);
}

/// Weights as TF stores them, initialised as bench_train does (Glorot uniform, bias +-0.01).
struct params {
    od::model_kind kind;
    std::vector<std::vector<float>> w, b;
    std::vector<std::vector<i64>> shapes;

    std::vector<od::layer_params> views() const {
        std::vector<od::layer_params> r;
        for (std::size_t i = 0; i < w.size(); ++i) r.push_back({w[i].data(), shapes[i], b[i].data()});
        return r;
    }
};

params make_params(od::model_kind k, std::uint64_t seed) {
    params p{k, {}, {}, od::weight_shapes(k)};
    for (std::size_t i = 0; i < p.shapes.size(); ++i) {
        const auto& s = p.shapes[i];
        const i64 out = s.back();
        const i64 fan_in = s.size() == 4 ? s[0] * s[1] * s[2] : s[0];
        const i64 fan_out = s.size() == 4 ? s[0] * s[1] * s[3] : s[1];
        p.w.push_back(uniform(count(s), seed + 10 * i, std::sqrt(6.0 / static_cast<double>(fan_in + fan_out))));
        p.b.push_back(uniform(static_cast<std::size_t>(out), seed + 10 * i + 1, 0.01));
    }
    return p;
}

std::vector<float> one_hot(i64 n) {
    std::vector<float> y(static_cast<std::size_t>(n * 10), 0.f);
    for (i64 i = 0; i < n; ++i) y[static_cast<std::size_t>(i * 10 + (i * 7) % 10)] = 1.f;
    return y;
}

std::vector<float> input(od::model_kind k, i64 n, std::uint64_t seed) {
    return uniform(static_cast<std::size_t>(n * (k == od::model_kind::mlp ? 784 : 784)), seed, 1.0);
}

// ---------------------------------------------------------------- float64 reference

/// The reference network in double, NHWC, weights in TF's layouts; keeps every activation for the
/// backward pass.
struct reference {
    od::model_kind kind;
    i64 n;
    std::vector<vec> w, b;
    std::vector<std::vector<i64>> shapes;

    // per layer: input activation (as the layer reads it), output after relu (conv: before pool),
    // conv: pooled output and argmax (flat index into the conv output)
    std::vector<vec> in, out, pooled;
    std::vector<std::vector<std::size_t>> argmax;
    std::vector<std::array<i64, 3>> in_hwc, out_hwc;  // conv layers: H, W, C of input and output
    vec logits;

    reference(const params& p, i64 batch) : kind(p.kind), n(batch), shapes(p.shapes) {
        for (std::size_t i = 0; i < p.w.size(); ++i) {
            w.emplace_back(p.w[i].begin(), p.w[i].end());
            b.emplace_back(p.b[i].begin(), p.b[i].end());
        }
    }

    bool is_conv(std::size_t i) const { return shapes[i].size() == 4; }

    void forward(const std::vector<float>& x) {
        const std::size_t L = w.size();
        in.assign(L, {});
        out.assign(L, {});
        pooled.assign(L, {});
        argmax.assign(L, {});
        in_hwc.assign(L, {});
        out_hwc.assign(L, {});
        vec h(x.begin(), x.end());
        i64 H = 28, W = 28, C = 1;
        for (std::size_t i = 0; i < L; ++i) {
            const bool relu = i + 1 < L;
            in[i] = h;
            if (is_conv(i)) {
                const i64 K = shapes[i][0], OC = shapes[i][3];
                const i64 pad = i == 0 ? (K - 1) / 2 : 0, pad_r = i == 0 ? K - 1 - pad : 0;
                const i64 OH = H + pad + pad_r - K + 1, OW = W + pad + pad_r - K + 1;
                in_hwc[i] = {H, W, C};
                out_hwc[i] = {OH, OW, OC};
                vec z(static_cast<std::size_t>(n * OH * OW * OC));
                for (i64 s = 0; s < n; ++s)
                    for (i64 oh = 0; oh < OH; ++oh)
                        for (i64 ow = 0; ow < OW; ++ow)
                            for (i64 oc = 0; oc < OC; ++oc) {
                                double acc = b[i][static_cast<std::size_t>(oc)];
                                for (i64 kh = 0; kh < K; ++kh)
                                    for (i64 kw = 0; kw < K; ++kw) {
                                        const i64 ih = oh + kh - pad, iw = ow + kw - pad;
                                        if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                                        for (i64 c = 0; c < C; ++c)
                                            acc += h[static_cast<std::size_t>(((s * H + ih) * W + iw) * C + c)] *
                                                   w[i][static_cast<std::size_t>(((kh * K + kw) * C + c) * OC + oc)];
                                    }
                                z[static_cast<std::size_t>(((s * OH + oh) * OW + ow) * OC + oc)] = std::max(acc, 0.0);
                            }
                out[i] = z;
                const i64 PH = OH / 2, PW = OW / 2;
                vec p(static_cast<std::size_t>(n * PH * PW * OC));
                std::vector<std::size_t> am(p.size());
                for (i64 s = 0; s < n; ++s)
                    for (i64 ph = 0; ph < PH; ++ph)
                        for (i64 pw = 0; pw < PW; ++pw)
                            for (i64 oc = 0; oc < OC; ++oc) {
                                double best = -1e300;
                                std::size_t arg = 0;
                                for (i64 dh = 0; dh < 2; ++dh)
                                    for (i64 dw = 0; dw < 2; ++dw) {
                                        const auto idx = static_cast<std::size_t>(((s * OH + ph * 2 + dh) * OW + pw * 2 + dw) * OC + oc);
                                        if (z[idx] > best) best = z[idx], arg = idx;
                                    }
                                const auto o = static_cast<std::size_t>(((s * PH + ph) * PW + pw) * OC + oc);
                                p[o] = best;
                                am[o] = arg;
                            }
                pooled[i] = p;
                argmax[i] = am;
                h = p;  // NHWC: flatten is TF's HWC order as is
                H = PH, W = PW, C = OC;
            } else {
                const i64 I = shapes[i][0], O = shapes[i][1];
                vec z(static_cast<std::size_t>(n * O));
                for (i64 s = 0; s < n; ++s)
                    for (i64 o = 0; o < O; ++o) {
                        double acc = b[i][static_cast<std::size_t>(o)];
                        for (i64 k = 0; k < I; ++k)
                            acc += h[static_cast<std::size_t>(s * I + k)] * w[i][static_cast<std::size_t>(k * O + o)];
                        z[static_cast<std::size_t>(s * O + o)] = relu ? std::max(acc, 0.0) : acc;
                    }
                out[i] = z;
                h = z;
            }
        }
        logits = h;
    }

    /// Mean softmax cross-entropy of the last forward; fills the gradient (softmax - y) / N.
    double loss(const std::vector<float>& y, vec& g) const {
        g.assign(static_cast<std::size_t>(n * 10), 0);
        double total = 0;
        for (i64 s = 0; s < n; ++s) {
            const double* z = &logits[static_cast<std::size_t>(s * 10)];
            const double m = *std::max_element(z, z + 10);
            double sum = 0;
            for (int j = 0; j < 10; ++j) sum += std::exp(z[j] - m);
            const double lse = m + std::log(sum);
            for (int j = 0; j < 10; ++j) {
                const double yj = y[static_cast<std::size_t>(s * 10 + j)];
                total += yj * (lse - z[j]);
                g[static_cast<std::size_t>(s * 10 + j)] = (std::exp(z[j] - lse) - yj) / static_cast<double>(n);
            }
        }
        return total / static_cast<double>(n);
    }

    /// Forward, loss, analytic backward, SGD update; returns the loss before the update.
    double step(const std::vector<float>& x, const std::vector<float>& y, double lr) {
        forward(x);
        vec g;
        const double l = loss(y, g);  // g: d loss / d (output of the last layer)
        std::vector<vec> dw(w.size()), db(w.size());
        for (std::size_t i = w.size(); i-- > 0;) {
            const bool relu = i + 1 < w.size();
            if (is_conv(i)) {
                // g is w.r.t. the pooled output: route to the argmax, then through relu (out > 0).
                vec gz(out[i].size(), 0.0);
                for (std::size_t o = 0; o < g.size(); ++o) gz[argmax[i][o]] += g[o];
                for (std::size_t k = 0; k < gz.size(); ++k)
                    if (!(out[i][k] > 0)) gz[k] = 0;
                const auto [H, W, C] = in_hwc[i];
                const auto [OH, OW, OC] = out_hwc[i];
                const i64 K = shapes[i][0];
                const i64 pad = i == 0 ? (K - 1) / 2 : 0;
                dw[i].assign(w[i].size(), 0);
                db[i].assign(b[i].size(), 0);
                vec gx(in[i].size(), 0.0);
                for (i64 s = 0; s < n; ++s)
                    for (i64 oh = 0; oh < OH; ++oh)
                        for (i64 ow = 0; ow < OW; ++ow)
                            for (i64 oc = 0; oc < OC; ++oc) {
                                const double go = gz[static_cast<std::size_t>(((s * OH + oh) * OW + ow) * OC + oc)];
                                if (go == 0) continue;
                                db[i][static_cast<std::size_t>(oc)] += go;
                                for (i64 kh = 0; kh < K; ++kh)
                                    for (i64 kw = 0; kw < K; ++kw) {
                                        const i64 ih = oh + kh - pad, iw = ow + kw - pad;
                                        if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                                        for (i64 c = 0; c < C; ++c) {
                                            const auto xi = static_cast<std::size_t>(((s * H + ih) * W + iw) * C + c);
                                            const auto wi = static_cast<std::size_t>(((kh * K + kw) * C + c) * OC + oc);
                                            dw[i][wi] += in[i][xi] * go;
                                            gx[xi] += w[i][wi] * go;
                                        }
                                    }
                            }
                g = gx;  // w.r.t. this layer's input = the previous layer's pooled output
            } else {
                const i64 I = shapes[i][0], O = shapes[i][1];
                vec gz = g;
                if (relu)
                    for (std::size_t k = 0; k < gz.size(); ++k)
                        if (!(out[i][k] > 0)) gz[k] = 0;
                dw[i].assign(w[i].size(), 0);
                db[i].assign(b[i].size(), 0);
                vec gx(static_cast<std::size_t>(n * I), 0.0);
                for (i64 s = 0; s < n; ++s)
                    for (i64 o = 0; o < O; ++o) {
                        const double go = gz[static_cast<std::size_t>(s * O + o)];
                        db[i][static_cast<std::size_t>(o)] += go;
                        for (i64 k = 0; k < I; ++k) {
                            dw[i][static_cast<std::size_t>(k * O + o)] += in[i][static_cast<std::size_t>(s * I + k)] * go;
                            gx[static_cast<std::size_t>(s * I + k)] += w[i][static_cast<std::size_t>(k * O + o)] * go;
                        }
                    }
                g = gx;
            }
        }
        for (std::size_t i = 0; i < w.size(); ++i) {
            for (std::size_t k = 0; k < w[i].size(); ++k) w[i][k] -= lr * dw[i][k];
            for (std::size_t k = 0; k < b[i].size(); ++k) b[i][k] -= lr * db[i][k];
        }
        return l;
    }
};

double max_abs_diff(const float* a, const vec& b) {
    double d = 0;
    for (std::size_t i = 0; i < b.size(); ++i) d = std::max(d, std::abs(static_cast<double>(a[i]) - b[i]));
    return d;
}
double max_abs(const vec& v) {
    double m = 0;
    for (double x : v) m = std::max(m, std::abs(x));
    return m;
}

const char* name_of(od::model_kind k) { return k == od::model_kind::mlp ? "mlp" : "lenet"; }

// ---------------------------------------------------------------- checks

void check_forward(od::model_kind k, i64 batch) {
    const params p = make_params(k, 100);
    const auto x = input(k, batch, 7);
    od::model m(k, p.views(), batch);
    reference r(p, batch);
    r.forward(x);
    const float* logits = m.forward(x.data());
    const double d = max_abs_diff(logits, r.logits), scale = std::max(1.0, max_abs(r.logits));
    char buf[200];
    std::snprintf(buf, sizeof buf, "%-5s forward batch %3lld: max |logits - ref| %.2e (max |logit| %.3f, rel %.2e < 1e-4)", name_of(k),
                  static_cast<long long>(batch), d, max_abs(r.logits), d / scale);
    expect(d / scale < 1e-4, buf);
    // a second run on the same input gives the same logits (no state leaks between runs)
    std::vector<float> first(logits, logits + batch * 10);
    const float* again = m.forward(x.data());
    expect(std::equal(first.begin(), first.end(), again), std::string(name_of(k)) + " forward is repeatable");
}

void check_train(od::model_kind k, i64 batch) {
    const params p = make_params(k, 200);
    const auto x = input(k, batch, 8);
    const auto y = one_hot(batch);
    constexpr float lr = 0.01f;
    od::trainer t(k, p.views(), batch, lr);
    reference r(p, batch);
    t.step(x.data(), y.data());
    const double ref_loss = r.step(x, y, lr);
    char buf[240];
    std::snprintf(buf, sizeof buf, "%-5s train batch %3lld: loss %.6f, ref %.6f, |diff| %.2e < 1e-5", name_of(k), static_cast<long long>(batch),
                  static_cast<double>(t.loss()), ref_loss, std::abs(t.loss() - ref_loss));
    expect(std::abs(t.loss() - ref_loss) < 1e-5, buf);
    double worst = 0, worst_change = 0;
    for (std::size_t i = 0; i < p.w.size(); ++i) {
        const auto w = t.weights(i), b = t.bias(i);
        const double dw = max_abs_diff(w.data(), r.w[i]), dbias = max_abs_diff(b.data(), r.b[i]);
        // how far the step moved them (so the comparison is not trivially about the initial values)
        vec w0(p.w[i].begin(), p.w[i].end()), b0(p.b[i].begin(), p.b[i].end());
        const double moved = std::max(max_abs_diff(w.data(), w0), max_abs_diff(b.data(), b0));
        std::snprintf(buf, sizeof buf, "        layer %zu: max |w - ref| %.2e, max |b - ref| %.2e (step moved them up to %.2e)", i, dw, dbias, moved);
        std::printf("%s\n", buf);
        worst = std::max({worst, dw, dbias});
        worst_change = std::max(worst_change, moved);
    }
    std::snprintf(buf, sizeof buf, "%-5s train batch %3lld: every weight and bias after one step within %.2e of ref (< 1e-5)", name_of(k),
                  static_cast<long long>(batch), worst);
    expect(worst < 1e-5 && worst_change > 1e-4, buf);
}

void check_descent(od::model_kind k) {
    const i64 batch = 32;
    const params p = make_params(k, 300);
    const auto x = input(k, batch, 9);
    const auto y = one_hot(batch);
    od::trainer t(k, p.views(), batch, 0.01f);
    std::vector<float> losses;
    for (int s = 0; s < 20; ++s) {
        t.step(x.data(), y.data());
        losses.push_back(t.loss());
    }
    char buf[200];
    std::snprintf(buf, sizeof buf, "%-5s 20 SGD steps (batch 32, lr 0.01): loss %.4f -> %.4f -> %.4f", name_of(k),
                  static_cast<double>(losses.front()), static_cast<double>(losses[9]), static_cast<double>(losses.back()));
    bool down = losses.back() < losses.front();
    expect(down, buf);
}

void check_ops() {
    {
        const i64 M = 5, K = 784, N = 512;
        const auto a = uniform(static_cast<std::size_t>(M * K), 1, 1.0), b = uniform(static_cast<std::size_t>(K * N), 2, 1.0);
        od::matmul mm(M, K, N, b.data());
        const float* c = mm.run(a.data());
        vec ref(static_cast<std::size_t>(M * N), 0.0);
        for (i64 i = 0; i < M; ++i)
            for (i64 k = 0; k < K; ++k)
                for (i64 j = 0; j < N; ++j)
                    ref[static_cast<std::size_t>(i * N + j)] +=
                        static_cast<double>(a[static_cast<std::size_t>(i * K + k)]) * b[static_cast<std::size_t>(k * N + j)];
        const double d = max_abs_diff(c, ref);
        char buf[200];
        std::snprintf(buf, sizeof buf, "matmul [5,784]x[784,512] [%s, B as %s]: max abs diff %.2e (max |c| %.1f)", mm.impl().c_str(),
                      mm.weights_layout().c_str(), d, max_abs(ref));
        expect(d < 1e-4 * std::max(1.0, max_abs(ref)), buf);
    }
    struct conv_case {
        i64 n, hw, c, oc, k;
        bool same;
    };
    for (const conv_case cc : {conv_case{2, 28, 1, 6, 5, true}, conv_case{2, 14, 6, 16, 5, false}, conv_case{1, 9, 8, 4, 3, true},
                               conv_case{1, 8, 3, 5, 4, true}}) {
        const auto x = uniform(static_cast<std::size_t>(cc.n * cc.hw * cc.hw * cc.c), 3, 1.0);
        const auto w = uniform(static_cast<std::size_t>(cc.k * cc.k * cc.c * cc.oc), 4, 1.0);
        const auto bias = uniform(static_cast<std::size_t>(cc.oc), 5, 1.0);
        od::conv2d cv(cc.n, cc.hw, cc.hw, cc.c, cc.oc, cc.k, cc.same, w.data(), bias.data(), true);
        const float* yv = cv.run(x.data());
        const i64 pl = cc.same ? (cc.k - 1) / 2 : 0, OH = cv.out_h(), OW = cv.out_w();
        vec ref(static_cast<std::size_t>(cc.n * OH * OW * cc.oc));
        for (i64 s = 0; s < cc.n; ++s)
            for (i64 oh = 0; oh < OH; ++oh)
                for (i64 ow = 0; ow < OW; ++ow)
                    for (i64 oc = 0; oc < cc.oc; ++oc) {
                        double acc = bias[static_cast<std::size_t>(oc)];
                        for (i64 kh = 0; kh < cc.k; ++kh)
                            for (i64 kw = 0; kw < cc.k; ++kw) {
                                const i64 ih = oh + kh - pl, iw = ow + kw - pl;
                                if (ih < 0 || ih >= cc.hw || iw < 0 || iw >= cc.hw) continue;
                                for (i64 c = 0; c < cc.c; ++c)
                                    acc += static_cast<double>(x[static_cast<std::size_t>(((s * cc.hw + ih) * cc.hw + iw) * cc.c + c)]) *
                                           w[static_cast<std::size_t>(((kh * cc.k + kw) * cc.c + c) * cc.oc + oc)];
                            }
                        ref[static_cast<std::size_t>(((s * OH + oh) * OW + ow) * cc.oc + oc)] = std::max(acc, 0.0);
                    }
        const double d = max_abs_diff(yv, ref);
        char buf[240];
        std::snprintf(buf, sizeof buf, "conv2d %lldx%lldx%lld -> %lld, %lldx%lld %s (+bias+relu) [%s]: max abs diff %.2e",
                      static_cast<long long>(cc.hw), static_cast<long long>(cc.hw), static_cast<long long>(cc.c),
                      static_cast<long long>(cc.oc), static_cast<long long>(cc.k), static_cast<long long>(cc.k), cc.same ? "SAME" : "VALID",
                      cv.impl().c_str(), d);
        expect(d < 1e-4 * std::max(1.0, max_abs(ref)), buf);
    }
}

void check_errors() {
    const params p = make_params(od::model_kind::mlp, 1);
    auto v = p.views();
    v[1].w_shape = {512, 256};
    bool threw = false;
    try {
        od::model m(od::model_kind::mlp, v, 4);
    } catch (const std::runtime_error& e) {
        threw = true;
        std::printf("        (%s)\n", e.what());
    }
    expect(threw, "wrong weight shape -> std::runtime_error");
    od::set_threads(2);
    od::model m(od::model_kind::mlp, p.views(), 4);
    od::set_threads(1);
    const auto x = input(od::model_kind::mlp, 4, 1);
    threw = false;
    try {
        m.forward(x.data());
    } catch (const std::runtime_error& e) {
        threw = true;
        std::printf("        (%s)\n", e.what());
    }
    expect(threw, "model built for 2 threads, run on 1 -> std::runtime_error");
}

// ---------------------------------------------------------------- timing

double time_ms(int reps, const std::function<void()>& f) {
    for (int i = 0; i < std::max(3, reps / 20); ++i) f();
    // best of 3 rounds of reps/3 (the machine is shared)
    double best = 1e300;
    for (int round = 0; round < 3; ++round) {
        const auto t0 = std::chrono::steady_clock::now();
        const int n = std::max(1, reps / 3);
        for (int i = 0; i < n; ++i) f();
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / n;
        best = std::min(best, ms);
    }
    return best;
}

void timings(bool quick) {
    const char* wp = std::getenv("OMP_WAIT_POLICY");
    std::printf("\ntimings (best of 3 rounds, ms per call; OMP_WAIT_POLICY=%s):\n", wp ? wp : "(unset)");
    const int reps = quick ? 30 : 300;
    for (int th : {1, 2}) {
        od::set_threads(th);
        for (auto [k, batch] : {std::pair{od::model_kind::mlp, i64{128}}, std::pair{od::model_kind::mlp, i64{1}},
                                std::pair{od::model_kind::lenet, i64{128}}, std::pair{od::model_kind::lenet, i64{1}}}) {
            const params p = make_params(k, 100);
            const auto x = input(k, batch, 7);
            od::model m(k, p.views(), batch);
            const double ms = time_ms(reps, [&] { (void)m.forward(x.data()); });
            std::printf("  %-5s forward  batch %3lld threads %d: %8.4f ms  (%.0f samples/s)\n", name_of(k), static_cast<long long>(batch), th, ms,
                        static_cast<double>(batch) * 1e3 / ms);
        }
        for (auto k : {od::model_kind::mlp, od::model_kind::lenet}) {
            const i64 batch = 128;
            const params p = make_params(k, 200);
            const auto x = input(k, batch, 8);
            const auto y = one_hot(batch);
            od::trainer t(k, p.views(), batch, 0.01f);
            const double ms = time_ms(quick ? 15 : 150, [&] { t.step(x.data(), y.data()); });
            std::printf("  %-5s train    batch %3lld threads %d: %8.4f ms per step\n", name_of(k), static_cast<long long>(batch), th, ms);
        }
        {
            const auto a = uniform(128 * 784, 1, 1.0), b = uniform(784 * 512, 2, 1.0);
            od::matmul mm(128, 784, 512, b.data());
            const double ms = time_ms(reps, [&] { (void)mm.run(a.data()); });
            std::printf("  matmul [128,784]x[784,512]   threads %d: %8.4f ms  (%.1f GFLOP/s)\n", th, ms, 2.0 * 128 * 784 * 512 / ms * 1e-6);
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false, checks = true;  // --quick: fewer timing reps; --time-only: skip the checks
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick") quick = true;
        else if (a == "--time-only") checks = false;
        else {
            std::printf("usage: %s [--quick] [--time-only]\n", argv[0]);
            return 2;
        }
    }
    try {
        std::printf("%s, ISA %s, OpenMP threads at start %d\n", od::version_string().c_str(), od::isa_string().c_str(), od::threads());
        od::set_threads(2);
        if (checks) {
            const params pm = make_params(od::model_kind::mlp, 100), pl = make_params(od::model_kind::lenet, 100);
            std::printf("\nprimitives per call (2 threads):\n");
            od::model m1(od::model_kind::mlp, pm.views(), 128);
            std::printf("-- mlp forward, batch 128 (%zu reorders per run):\n%s", m1.reorders_per_run(), m1.describe().c_str());
            od::model m2(od::model_kind::lenet, pl.views(), 128);
            std::printf("-- lenet forward, batch 128 (%zu reorders per run):\n%s", m2.reorders_per_run(), m2.describe().c_str());
            od::model m3(od::model_kind::lenet, pl.views(), 1);
            std::printf("-- lenet forward, batch 1 (%zu reorders per run):\n%s", m3.reorders_per_run(), m3.describe().c_str());
            od::trainer t1(od::model_kind::mlp, pm.views(), 128, 0.01f);
            std::printf("-- mlp train step, batch 128 (%zu reorders per run):\n%s", t1.reorders_per_run(), t1.describe().c_str());
            od::trainer t2(od::model_kind::lenet, pl.views(), 128, 0.01f);
            std::printf("-- lenet train step, batch 128 (%zu reorders per run):\n%s", t2.reorders_per_run(), t2.describe().c_str());
        }
        if (checks) std::printf("\nchecks against the float64 reference:\n");
        for (int th : {1, 2}) {
            if (!checks) break;
            od::set_threads(th);
            std::printf(" on %d thread%s:\n", th, th > 1 ? "s" : "");
            for (auto k : {od::model_kind::mlp, od::model_kind::lenet})
                for (i64 batch : {1, 3, 128}) check_forward(k, batch);
            for (auto k : {od::model_kind::mlp, od::model_kind::lenet})
                for (i64 batch : {3, 8, 128}) check_train(k, batch);
        }
        if (checks) {
            od::set_threads(2);
            for (auto k : {od::model_kind::mlp, od::model_kind::lenet}) check_descent(k);
            check_ops();
            check_errors();
        }
        timings(quick);
    } catch (const std::exception& e) {
        std::printf("FAIL: exception: %s\n", e.what());
        return 2;
    }
    std::printf("\n%s (%d failure%s)\n", failures == 0 ? "ALL CHECKS PASSED" : "SOME CHECKS FAILED", failures, failures == 1 ? "" : "s");
    return failures == 0 ? 0 : 1;
}
