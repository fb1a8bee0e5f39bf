// graft/embedded/detail/kernels_text.hpp — the C++ source text of the loops that
// graft::embedded::generate_embedded writes into a generated header (one function per kernel, only
// the ones a graph uses), and the exact float literals of its weights. Internal: include
// graft/embedded/exporter.hpp.
//
// Every kernel works on one sample, row-major, NHWC with HWIO filters (the output channel is the
// innermost loop, so compilers vectorize it). MatMul, convolutions and pools are templates over
// their dims: each call site's loops have constant trip counts and keep their accumulators in
// registers. Elementwise kernels take their sizes at run time and may run in place (o == a).
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <map>
#include <string>

namespace graft::embedded::detail {

/// The exact C++ literal of `v`: a hex-float ("0x1.99999ap-4f"), or a limits expression for
/// infinities and NaN. Never throws (except bad_alloc).
inline std::string float_literal(float v) {
    if (std::isnan(v)) return "std::numeric_limits<float>::quiet_NaN()";
    if (std::isinf(v)) return v > 0 ? "std::numeric_limits<float>::infinity()" : "-std::numeric_limits<float>::infinity()";
    char buf[48];
    std::snprintf(buf, sizeof buf, "%af", static_cast<double>(v));
    return buf;
}

/// Kernel name -> its definition. Never throws (except bad_alloc).
inline const std::map<std::string, std::string>& kernel_sources() {
    static const std::map<std::string, std::string> k = {
        {"copy", R"(inline void copy(const float* a, float* o, int n) {
    for (int i = 0; i < n; ++i) o[i] = a[i];
}
)"},
        {"f4", R"(// f4: 4 floats, a SIMD register where the compiler has vector extensions (GCC, Clang)
#if defined(__GNUC__) || defined(__clang__)
typedef float f4 __attribute__((vector_size(16)));
#else
struct f4 {
    float v[4];
    f4& operator+=(const f4& o) { for (int i = 0; i < 4; ++i) v[i] += o.v[i]; return *this; }
    friend f4 operator*(const f4& a, const f4& b) { f4 r; for (int i = 0; i < 4; ++i) r.v[i] = a.v[i] * b.v[i]; return r; }
};
#endif
#ifndef GRAFT_EMBEDDED_UNROLL  // unrolled at -O2 too, so the accumulators stay in registers
#if defined(__GNUC__) || defined(__clang__)
#define GRAFT_EMBEDDED_UNROLL _Pragma("GCC unroll 16")
#else
#define GRAFT_EMBEDDED_UNROLL
#endif
#endif
inline f4 f4_load(const float* p) { f4 v; std::memcpy(&v, p, sizeof v); return v; }
inline f4 f4_splat(float x) { return f4{x, x, x, x}; }
template <int ACT>
inline float epilogue(float v) { return ACT == 1 ? (v > 0.f ? v : 0.f) : ACT == 2 ? (v > 0.f ? (v < 6.f ? v : 6.f) : 0.f) : v; }
)"},
        {"matmul", R"(// NV vectors of columns j0.. of c[M,N] = a[M,K] * b[K,NP] (NP = N rounded up to 4, zero columns)
template <int NV, int K, int N, int NP, int ACT>
inline void matmul_block(const float* __restrict ai, const float* __restrict b, const float* __restrict bias, float* __restrict ci, int j0) {
    f4 acc[NV] = {};
    for (int p = 0; p < K; ++p) {
        const f4 av = f4_splat(ai[p]);
        const float* bp = b + p * NP + j0;
        GRAFT_EMBEDDED_UNROLL for (int v = 0; v < NV; ++v) acc[v] += av * f4_load(bp + 4 * v);
    }
    for (int v = 0; v < NV; ++v) {
        float t[4];
        std::memcpy(t, &acc[v], sizeof t);
        for (int j = 0; j < 4 && j0 + 4 * v + j < N; ++j) ci[j0 + 4 * v + j] = epilogue<ACT>(t[j] + (bias ? bias[j0 + 4 * v + j] : 0.f));
    }
}
// c[M,N] = a[M,K] * b[K,NP], 16 columns at a time in registers; bias (nullptr: none) and ACT
// (0 none, 1 Relu, 2 Relu6) are the fused BiasAdd and activation
template <int M, int K, int N, int ACT>
inline void matmul(const float* __restrict a, const float* __restrict b, const float* __restrict bias, float* __restrict c) {
    constexpr int NP = (N + 3) / 4 * 4, full = NP / 16 * 16, tail = (NP - full) / 4;
    for (int i = 0; i < M; ++i) {
        for (int j0 = 0; j0 < full; j0 += 16) matmul_block<4, K, N, NP, ACT>(a + i * K, b, bias, c + i * N, j0);
        if (tail > 0) matmul_block<(tail > 0 ? tail : 1), K, N, NP, ACT>(a + i * K, b, bias, c + i * N, full);
    }
}
)"},
        {"matmul_s", R"(// c[M,N] = a[M,K] * b[K,N], both computed
template <int M, int K, int N>
inline void matmul_s(const float* __restrict a, const float* __restrict b, float* __restrict c) {
    for (int i = 0; i < M; ++i) {
        float* ci = c + i * N;
        for (int j = 0; j < N; ++j) ci[j] = 0.f;
        for (int p = 0; p < K; ++p) {
            const float av = a[i * K + p];
            for (int j = 0; j < N; ++j) ci[j] += av * b[p * N + j];
        }
    }
}
)"},
        {"conv2d", R"(// out[OH,OW,O] = in[H,W,C] (*) f[KH,KW,C,OP], OP = O rounded up to 4 (zero channels); PT/PL:
// padding before, SH/SW strides, DH/DW dilations. The output channels of a pixel stay in registers.
// bias (nullptr: none) and ACT (0 none, 1 Relu, 2 Relu6) are the fused BiasAdd and activation.
template <int H, int W, int C, int KH, int KW, int O, int OH, int OW, int SH, int SW, int PT, int PL, int DH, int DW, int ACT>
inline void conv2d(const float* __restrict in, const float* __restrict f, const float* __restrict bias, float* __restrict out) {
    constexpr int V = (O + 3) / 4;
    for (int oy = 0; oy < OH; ++oy) {
        for (int ox = 0; ox < OW; ++ox) {
            f4 acc[V] = {};
            for (int ky = 0; ky < KH; ++ky) {
                const int iy = oy * SH - PT + ky * DH;
                if (iy < 0 || iy >= H) continue;
                for (int kx = 0; kx < KW; ++kx) {
                    const int ix = ox * SW - PL + kx * DW;
                    if (ix < 0 || ix >= W) continue;
                    const float* x = in + (iy * W + ix) * C;
                    const float* w = f + (ky * KW + kx) * C * V * 4;
                    for (int c = 0; c < C; ++c) {
                        const f4 xv = f4_splat(x[c]);
                        GRAFT_EMBEDDED_UNROLL for (int k = 0; k < V; ++k) acc[k] += xv * f4_load(w + (c * V + k) * 4);
                    }
                }
            }
            float t[V * 4];
            std::memcpy(t, acc, sizeof t);
            float* o = out + (oy * OW + ox) * O;
            for (int k = 0; k < O; ++k) o[k] = epilogue<ACT>(t[k] + (bias ? bias[k] : 0.f));
        }
    }
}
)"},
        {"depthwise", R"(// out[OH,OW,C*M] = depthwise in[H,W,C] (*) f[KH,KW,C,M]
template <int H, int W, int C, int KH, int KW, int M, int OH, int OW, int SH, int SW, int PT, int PL, int DH, int DW>
inline void depthwise(const float* __restrict in, const float* __restrict f, float* __restrict out) {
    for (int oy = 0; oy < OH; ++oy) {
        for (int ox = 0; ox < OW; ++ox) {
            float acc[C * M] = {};
            for (int ky = 0; ky < KH; ++ky) {
                const int iy = oy * SH - PT + ky * DH;
                if (iy < 0 || iy >= H) continue;
                for (int kx = 0; kx < KW; ++kx) {
                    const int ix = ox * SW - PL + kx * DW;
                    if (ix < 0 || ix >= W) continue;
                    const float* x = in + (iy * W + ix) * C;
                    const float* w = f + (ky * KW + kx) * C * M;
                    for (int c = 0; c < C; ++c) {
                        for (int m = 0; m < M; ++m) acc[c * M + m] += x[c] * w[c * M + m];
                    }
                }
            }
            float* o = out + (oy * OW + ox) * C * M;
            for (int k = 0; k < C * M; ++k) o[k] = acc[k];
        }
    }
}
)"},
        {"maxpool", R"(template <int H, int W, int C, int KH, int KW, int OH, int OW, int SH, int SW, int PT, int PL>
inline void maxpool(const float* __restrict in, float* __restrict out) {
    for (int oy = 0; oy < OH; ++oy) {
        for (int ox = 0; ox < OW; ++ox) {
            float* o = out + (oy * OW + ox) * C;
            for (int c = 0; c < C; ++c) o[c] = -3.402823466e38f;
            for (int ky = 0; ky < KH; ++ky) {
                const int iy = oy * SH - PT + ky;
                if (iy < 0 || iy >= H) continue;
                for (int kx = 0; kx < KW; ++kx) {
                    const int ix = ox * SW - PL + kx;
                    if (ix < 0 || ix >= W) continue;
                    const float* x = in + (iy * W + ix) * C;
                    for (int c = 0; c < C; ++c) o[c] = x[c] > o[c] ? x[c] : o[c];
                }
            }
        }
    }
}
)"},
        {"avgpool", R"(// the mean over the window's cells inside the input (padding is not counted)
template <int H, int W, int C, int KH, int KW, int OH, int OW, int SH, int SW, int PT, int PL>
inline void avgpool(const float* __restrict in, float* __restrict out) {
    for (int oy = 0; oy < OH; ++oy) {
        for (int ox = 0; ox < OW; ++ox) {
            float* o = out + (oy * OW + ox) * C;
            for (int c = 0; c < C; ++c) o[c] = 0.f;
            int n = 0;
            for (int ky = 0; ky < KH; ++ky) {
                const int iy = oy * SH - PT + ky;
                if (iy < 0 || iy >= H) continue;
                for (int kx = 0; kx < KW; ++kx) {
                    const int ix = ox * SW - PL + kx;
                    if (ix < 0 || ix >= W) continue;
                    const float* x = in + (iy * W + ix) * C;
                    for (int c = 0; c < C; ++c) o[c] += x[c];
                    ++n;
                }
            }
            const float s = n ? 1.f / static_cast<float>(n) : 0.f;
            for (int c = 0; c < C; ++c) o[c] *= s;
        }
    }
}
)"},
        {"softmax", R"(inline void softmax(const float* a, float* o, int rows, int cols) {
    for (int r = 0; r < rows; ++r) {
        const float* x = a + r * cols;
        float* y = o + r * cols;
        float m = x[0];
        for (int j = 1; j < cols; ++j) m = x[j] > m ? x[j] : m;
        float s = 0.f;
        for (int j = 0; j < cols; ++j) { y[j] = std::exp(x[j] - m); s += y[j]; }
        for (int j = 0; j < cols; ++j) y[j] /= s;
    }
}
)"},
        {"log_softmax", R"(inline void log_softmax(const float* a, float* o, int rows, int cols) {
    for (int r = 0; r < rows; ++r) {
        const float* x = a + r * cols;
        float* y = o + r * cols;
        float m = x[0];
        for (int j = 1; j < cols; ++j) m = x[j] > m ? x[j] : m;
        float s = 0.f;
        for (int j = 0; j < cols; ++j) s += std::exp(x[j] - m);
        const float l = std::log(s);
        for (int j = 0; j < cols; ++j) y[j] = x[j] - m - l;
    }
}
)"},
    };
    return k;
}

/// Elementwise unary op -> the C++ expression of `x`. Empty when not unary.
inline std::string unary_expression(const std::string& op) {
    static const std::map<std::string, std::string> u = {
        {"Relu", "x > 0.f ? x : 0.f"},
        {"Relu6", "x > 0.f ? (x < 6.f ? x : 6.f) : 0.f"},
        {"Tanh", "std::tanh(x)"},
        {"Sigmoid", "1.f / (1.f + std::exp(-x))"},
        {"Exp", "std::exp(x)"},
        {"Neg", "-x"},
        {"Square", "x * x"},
        {"Sqrt", "std::sqrt(x)"},
        {"Rsqrt", "1.f / std::sqrt(x)"},
        {"Elu", "x > 0.f ? x : std::exp(x) - 1.f"},
        {"Softplus", "x > 20.f ? x : std::log1p(std::exp(x))"},
        {"Abs", "std::fabs(x)"},
    };
    auto it = u.find(op);
    return it == u.end() ? std::string() : it->second;
}

/// Elementwise binary op -> the C++ expression of `x` and `y`. Empty when not binary.
inline std::string binary_expression(const std::string& op) {
    static const std::map<std::string, std::string> b = {
        {"Add", "x + y"}, {"AddV2", "x + y"}, {"BiasAdd", "x + y"}, {"Sub", "x - y"}, {"Mul", "x * y"},
        {"RealDiv", "x / y"}, {"Maximum", "x > y ? x : y"}, {"Minimum", "x < y ? x : y"},
        {"SquaredDifference", "(x - y) * (x - y)"},
    };
    auto it = b.find(op);
    return it == b.end() ? std::string() : it->second;
}

/// The kernel of an elementwise unary op named `fn`. Never throws (except bad_alloc).
inline std::string unary_kernel(const std::string& fn, const std::string& expr) {
    return "inline void " + fn + "(const float* a, float* o, int n) {\n"
           "    for (int i = 0; i < n; ++i) { const float x = a[i]; o[i] = " + expr + "; }\n}\n";
}

/// The kernel of an elementwise binary op named `fn`: element (r, j) of a rows x cols result reads
/// a[r*ar + j*ac] and b[r*br + j*bc] (strides 0 broadcast). Never throws (except bad_alloc).
inline std::string binary_kernel(const std::string& fn, const std::string& expr) {
    return "inline void " + fn + "(const float* a, const float* b, float* o, int rows, int cols, int ar, int ac, int br, int bc) {\n"
           "    for (int r = 0; r < rows; ++r) {\n"
           "        const float* pa = a + r * ar;\n"
           "        const float* pb = b + r * br;\n"
           "        float* po = o + r * cols;\n"
           "        if (ac == 1 && bc == 1) {\n"
           "            for (int j = 0; j < cols; ++j) { const float x = pa[j], y = pb[j]; po[j] = " + expr + "; }\n"
           "        } else {\n"
           "            for (int j = 0; j < cols; ++j) { const float x = pa[j * ac], y = pb[j * bc]; po[j] = " + expr + "; }\n"
           "        }\n"
           "    }\n}\n";
}

}  // namespace graft::embedded::detail
