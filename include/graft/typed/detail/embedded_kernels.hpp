// graft/typed/detail/embedded_kernels.hpp — the C++ source text of the loops that
// graft::typed::generate_embedded writes into a generated header (one function per kernel, only
// the ones a graph uses), and the exact float literals of its weights. Internal: include
// graft/typed/embedded.hpp.
//
// Every kernel works on one sample, row-major, NHWC with HWIO filters (the output channel is the
// innermost loop, so compilers vectorize it). Elementwise kernels may run in place (o == a).
#pragma once

#include <cmath>
#include <cstdio>
#include <map>
#include <string>

namespace graft::typed::embedded_detail {

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
        {"matmul", R"(// c[M,N] = a[M,K] * b[K,N]
inline void matmul(const float* __restrict a, const float* __restrict b, float* __restrict c, int M, int K, int N) {
    for (int i = 0; i < M; ++i) {
        float* ci = c + i * N;
        for (int j = 0; j < N; ++j) ci[j] = 0.f;
        for (int p = 0; p < K; ++p) {
            const float av = a[i * K + p];
            const float* bp = b + p * N;
            for (int j = 0; j < N; ++j) ci[j] += av * bp[j];
        }
    }
}
)"},
        {"conv2d", R"(// out[OH,OW,O] = in[H,W,C] (*) f[KH,KW,C,O]; pt/pl: padding before, sh/sw strides, dh/dw dilations
inline void conv2d(const float* __restrict in, const float* __restrict f, float* __restrict out, int H, int W, int C,
                   int KH, int KW, int O, int OH, int OW, int sh, int sw, int pt, int pl, int dh, int dw) {
    for (int oy = 0; oy < OH; ++oy) {
        for (int ox = 0; ox < OW; ++ox) {
            float* o = out + (oy * OW + ox) * O;
            for (int k = 0; k < O; ++k) o[k] = 0.f;
            for (int ky = 0; ky < KH; ++ky) {
                const int iy = oy * sh - pt + ky * dh;
                if (iy < 0 || iy >= H) continue;
                for (int kx = 0; kx < KW; ++kx) {
                    const int ix = ox * sw - pl + kx * dw;
                    if (ix < 0 || ix >= W) continue;
                    const float* x = in + (iy * W + ix) * C;
                    const float* w = f + (ky * KW + kx) * C * O;
                    for (int c = 0; c < C; ++c) {
                        const float v = x[c];
                        const float* wc = w + c * O;
                        for (int k = 0; k < O; ++k) o[k] += v * wc[k];
                    }
                }
            }
        }
    }
}
)"},
        {"depthwise", R"(// out[OH,OW,C*M] = depthwise in[H,W,C] (*) f[KH,KW,C,M]
inline void depthwise(const float* __restrict in, const float* __restrict f, float* __restrict out, int H, int W, int C,
                      int KH, int KW, int M, int OH, int OW, int sh, int sw, int pt, int pl, int dh, int dw) {
    const int O = C * M;
    for (int oy = 0; oy < OH; ++oy) {
        for (int ox = 0; ox < OW; ++ox) {
            float* o = out + (oy * OW + ox) * O;
            for (int k = 0; k < O; ++k) o[k] = 0.f;
            for (int ky = 0; ky < KH; ++ky) {
                const int iy = oy * sh - pt + ky * dh;
                if (iy < 0 || iy >= H) continue;
                for (int kx = 0; kx < KW; ++kx) {
                    const int ix = ox * sw - pl + kx * dw;
                    if (ix < 0 || ix >= W) continue;
                    const float* x = in + (iy * W + ix) * C;
                    const float* w = f + (ky * KW + kx) * O;
                    for (int c = 0; c < C; ++c) {
                        for (int m = 0; m < M; ++m) o[c * M + m] += x[c] * w[c * M + m];
                    }
                }
            }
        }
    }
}
)"},
        {"maxpool", R"(inline void maxpool(const float* __restrict in, float* __restrict out, int H, int W, int C, int KH, int KW,
                    int OH, int OW, int sh, int sw, int pt, int pl) {
    for (int oy = 0; oy < OH; ++oy) {
        for (int ox = 0; ox < OW; ++ox) {
            float* o = out + (oy * OW + ox) * C;
            for (int c = 0; c < C; ++c) o[c] = -3.402823466e38f;
            for (int ky = 0; ky < KH; ++ky) {
                const int iy = oy * sh - pt + ky;
                if (iy < 0 || iy >= H) continue;
                for (int kx = 0; kx < KW; ++kx) {
                    const int ix = ox * sw - pl + kx;
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
inline void avgpool(const float* __restrict in, float* __restrict out, int H, int W, int C, int KH, int KW,
                    int OH, int OW, int sh, int sw, int pt, int pl) {
    for (int oy = 0; oy < OH; ++oy) {
        for (int ox = 0; ox < OW; ++ox) {
            float* o = out + (oy * OW + ox) * C;
            for (int c = 0; c < C; ++c) o[c] = 0.f;
            int n = 0;
            for (int ky = 0; ky < KH; ++ky) {
                const int iy = oy * sh - pt + ky;
                if (iy < 0 || iy >= H) continue;
                for (int kx = 0; kx < KW; ++kx) {
                    const int ix = ox * sw - pl + kx;
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

}  // namespace graft::typed::embedded_detail
