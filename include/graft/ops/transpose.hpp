// graft/ops/transpose.hpp — Transpose, as TensorFlow has it, for every dense dtype, and
// InvertPermutation.
//
//   tensor y = ops::transpose(x, {0, 3, 1, 2});    // NHWC -> NCHW
//   tensor z = ops::transpose(m);                  // 2-D: rows and columns swap
//
// The permutation is simplified first: size-1 dims are dropped and axes that stay adjacent are
// merged, so NHWC->NCHW becomes a batch of [HW, C] -> [C, HW] matrix transposes and a transpose
// that only moves size-1 dims is a reshape that shares the input's buffer. 2-D (and batched 2-D)
// transposes run a cache-blocked loop; ranks 3-5 use Eigen's shuffle; higher ranks an index loop.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string_view>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

#include "graft/ops/detail/op_support.hpp"

namespace graft::ops {

namespace op_detail {

/// Transposes the block rows [r0, r1) x cols [c0, c1) of a [rows, cols] matrix into dst [cols,
/// rows]; 4x4 (4-byte elements) or 2x2 (8-byte) register transposes where SSE2 is there, else
/// scalar.
template <class U>
void transpose_block(const U* src, U* dst, std::int64_t rows, std::int64_t cols, std::int64_t r0,
                     std::int64_t r1, std::int64_t c0, std::int64_t c1) {
    std::int64_t rv = r0, cv = c0;  // the vectorized part ends here
#if defined(__SSE2__)
    if constexpr (sizeof(U) == 4) {
        rv = r0 + (r1 - r0) / 4 * 4;
        cv = c0 + (c1 - c0) / 4 * 4;
        for (std::int64_t r = r0; r < rv; r += 4) {
            for (std::int64_t c = c0; c < cv; c += 4) {
                const U* s = src + r * cols + c;
                __m128 a0 = _mm_castsi128_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
                __m128 a1 =
                    _mm_castsi128_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + cols)));
                __m128 a2 = _mm_castsi128_ps(
                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 2 * cols)));
                __m128 a3 = _mm_castsi128_ps(
                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 3 * cols)));
                _MM_TRANSPOSE4_PS(a0, a1, a2, a3);
                U* d = dst + c * rows + r;
                _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm_castps_si128(a0));
                _mm_storeu_si128(reinterpret_cast<__m128i*>(d + rows), _mm_castps_si128(a1));
                _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 2 * rows), _mm_castps_si128(a2));
                _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 3 * rows), _mm_castps_si128(a3));
            }
        }
    } else if constexpr (sizeof(U) == 8 && std::is_trivially_copyable_v<U>) {
        rv = r0 + (r1 - r0) / 2 * 2;
        cv = c0 + (c1 - c0) / 2 * 2;
        for (std::int64_t r = r0; r < rv; r += 2) {
            for (std::int64_t c = c0; c < cv; c += 2) {
                const U* s = src + r * cols + c;
                const __m128i a0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
                const __m128i a1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + cols));
                U* d = dst + c * rows + r;
                _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm_unpacklo_epi64(a0, a1));
                _mm_storeu_si128(reinterpret_cast<__m128i*>(d + rows), _mm_unpackhi_epi64(a0, a1));
            }
        }
    }
#endif
    // Scalar edges: columns [cv, c1) for every row, and rows [rv, r1) for the vectorized columns.
    for (std::int64_t c = cv; c < c1; ++c) {
        for (std::int64_t r = r0; r < r1; ++r) dst[c * rows + r] = src[r * cols + c];
    }
    for (std::int64_t c = c0; c < cv; ++c) {
        for (std::int64_t r = rv; r < r1; ++r) dst[c * rows + r] = src[r * cols + c];
    }
}

/// Copies a batch of [rows, cols] matrices to [cols, rows], in 32x32 tiles, over the thread pool.
template <class U>
void transpose_2d(const U* in, U* out, std::int64_t batch, std::int64_t rows, std::int64_t cols) {
    constexpr std::int64_t tile = 32;
    const std::int64_t row_tiles = (rows + tile - 1) / tile;
    const std::int64_t col_tiles = (cols + tile - 1) / tile;
    const std::int64_t units = batch * col_tiles;  // one unit = one band of output rows
    parallel_for(units, 2.0 * sizeof(U) * static_cast<double>(tile * rows),
                 static_cast<double>(tile * rows), [&](std::int64_t first, std::int64_t last) {
                     for (std::int64_t u = first; u < last; ++u) {
                         const std::int64_t b = u / col_tiles;
                         const std::int64_t c0 = (u % col_tiles) * tile;
                         const std::int64_t c1 = std::min(cols, c0 + tile);
                         const U* src = in + b * rows * cols;
                         U* dst = out + b * rows * cols;
                         for (std::int64_t rt = 0; rt < row_tiles; ++rt) {
                             transpose_block(src, dst, rows, cols, rt * tile,
                                             std::min(rows, rt * tile + tile), c0, c1);
                         }
                     }
                 });
}

/// General permutation by an odometer over the output (any rank; inner loop strided reads).
template <class U>
void transpose_nd(const U* in, U* out, const std::vector<std::int64_t>& in_dims,
                  const std::vector<int>& perm) {
    const std::size_t r = perm.size();
    const auto in_strides = row_major_strides(shape(in_dims));
    std::vector<std::int64_t> odims(r), ostride_in(r);
    for (std::size_t i = 0; i < r; ++i) {
        odims[i] = in_dims[static_cast<std::size_t>(perm[i])];
        ostride_in[i] = in_strides[static_cast<std::size_t>(perm[i])];
    }
    const std::int64_t inner = odims[r - 1];
    const std::int64_t rows = dim_product(odims, 0, r - 1);
    parallel_for(rows, 2.0 * sizeof(U) * static_cast<double>(inner), static_cast<double>(inner),
                 [&](std::int64_t first, std::int64_t last) {
                     std::vector<std::int64_t> idx(r, 0);
                     std::int64_t base = 0, rem = first;
                     for (std::size_t d = r - 1; d-- > 0;) {
                         idx[d] = rem % odims[d];
                         rem /= odims[d];
                         base += idx[d] * ostride_in[d];
                     }
                     const std::int64_t s = ostride_in[r - 1];
                     for (std::int64_t row = first; row < last; ++row) {
                         U* o = out + row * inner;
                         for (std::int64_t j = 0; j < inner; ++j) o[j] = in[base + j * s];
                         for (std::size_t d = r - 1; d-- > 0;) {
                             ++idx[d];
                             base += ostride_in[d];
                             if (idx[d] < odims[d]) break;
                             base -= ostride_in[d] * odims[d];
                             idx[d] = 0;
                         }
                     }
                 });
}

template <class U, int N>
void transpose_eigen(const U* in, U* out, const std::vector<std::int64_t>& in_dims,
                     const std::vector<int>& perm) {
    Eigen::array<Eigen::Index, N> d, p;
    Eigen::array<Eigen::Index, N> od;
    for (int i = 0; i < N; ++i) {
        d[static_cast<std::size_t>(i)] = in_dims[static_cast<std::size_t>(i)];
        p[static_cast<std::size_t>(i)] = perm[static_cast<std::size_t>(i)];
    }
    for (int i = 0; i < N; ++i)
        od[static_cast<std::size_t>(i)] =
            d[static_cast<std::size_t>(p[static_cast<std::size_t>(i)])];
    const_tensor_map<U, N> x(in, d);
    tensor_map<U, N> y(out, od);
    y.device(cpu_device()) = x.shuffle(p);
}

/// Validates `perm` against rank `r`; throws invalid_argument_error naming the op.
inline std::vector<int> check_perm(std::string_view op, const std::vector<std::int64_t>& perm,
                                   int r) {
    if (static_cast<int>(perm.size()) != r) {
        throw invalid_argument_error(cat(op, ": perm ", list_str(perm), " has ", perm.size(),
                                         " entries but the input has rank ", r));
    }
    std::vector<int> p(perm.size());
    std::vector<bool> seen(perm.size(), false);
    for (std::size_t i = 0; i < perm.size(); ++i) {
        if (perm[i] < 0 || perm[i] >= r) {
            throw invalid_argument_error(
                cat(op, ": perm ", list_str(perm), ": ", perm[i], " is out of range [0, ", r, ")"));
        }
        if (seen[static_cast<std::size_t>(perm[i])]) {
            throw invalid_argument_error(cat(op, ": perm ", list_str(perm), " repeats ", perm[i],
                                             ": it must be a permutation of 0..", r - 1));
        }
        seen[static_cast<std::size_t>(perm[i])] = true;
        p[i] = static_cast<int>(perm[i]);
    }
    return p;
}

}  // namespace op_detail

/// Transpose: output dim i is input dim perm[i]. Any dense dtype (strings too). A permutation that
/// only moves size-1 dims returns a view sharing x's buffer. Throws invalid_argument_error when
/// perm is not a permutation of 0..rank-1.
inline tensor transpose(const tensor& x, const std::vector<std::int64_t>& perm) {
    const char* op = "Transpose";
    op_detail::require_input(op, x, "x");
    const auto p = op_detail::check_perm(op, perm, x.rank());
    const auto& d = x.shape().dims();
    std::vector<std::int64_t> od(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) od[i] = d[static_cast<std::size_t>(p[i])];
    const shape out_shape(od);

    // Simplify: drop size-1 input dims, then merge output axes whose input axes are consecutive.
    std::vector<int> new_index(d.size(), -1);
    std::vector<std::int64_t> kd;
    for (std::size_t i = 0; i < d.size(); ++i) {
        if (d[i] != 1) {
            new_index[i] = static_cast<int>(kd.size());
            kd.push_back(d[i]);
        }
    }
    std::vector<int> kp;
    for (int a : p) {
        if (new_index[static_cast<std::size_t>(a)] >= 0)
            kp.push_back(new_index[static_cast<std::size_t>(a)]);
    }
    // Merge: group input axes into runs that appear consecutively in kp.
    std::vector<int> mp;  // merged permutation in terms of groups (numbered by input order below)
    std::vector<std::vector<int>> runs;
    for (std::size_t i = 0; i < kp.size(); ++i) {
        if (i > 0 && kp[i] == kp[i - 1] + 1)
            runs.back().push_back(kp[i]);
        else
            runs.push_back({kp[i]});
    }
    std::vector<std::size_t> order(runs.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](auto a, auto b) { return runs[a].front() < runs[b].front(); });
    std::vector<std::int64_t> md(runs.size());
    std::vector<int> rank_of_run(runs.size());
    for (std::size_t g = 0; g < order.size(); ++g) {
        rank_of_run[order[g]] = static_cast<int>(g);
        std::int64_t s = 1;
        for (int a : runs[order[g]]) s *= kd[static_cast<std::size_t>(a)];
        md[g] = s;
    }
    for (std::size_t i = 0; i < runs.size(); ++i) mp.push_back(rank_of_run[i]);

    bool identity = true;
    for (std::size_t i = 0; i < mp.size(); ++i) identity = identity && mp[i] == static_cast<int>(i);
    if (identity || x.num_elements() == 0) {
        return identity ? x.reshaped(out_shape) : tensor::uninitialized(x.type(), out_shape);
    }
    tensor out = tensor::uninitialized(x.type(), out_shape);
    op_detail::visit_element_bytes(x.type(), op, [&](auto tag) {
        using U = decltype(tag);
        const U* in = op_detail::elements_as<U>(x);
        U* o = op_detail::elements_as<U>(out);
        const std::size_t r = mp.size();
        if (r == 2) {
            op_detail::transpose_2d(in, o, 1, md[0], md[1]);
        } else if (r == 3 && mp[0] == 0 && mp[1] == 2 && mp[2] == 1) {
            op_detail::transpose_2d(in, o, md[0], md[1], md[2]);
        } else if constexpr (std::is_trivially_copyable_v<U> &&
                             !std::is_same_v<U, op_detail::bytes16>) {
            if (r == 3)
                op_detail::transpose_eigen<U, 3>(in, o, md, mp);
            else if (r == 4)
                op_detail::transpose_eigen<U, 4>(in, o, md, mp);
            else if (r == 5)
                op_detail::transpose_eigen<U, 5>(in, o, md, mp);
            else
                op_detail::transpose_nd(in, o, md, mp);
        } else {
            op_detail::transpose_nd(in, o, md, mp);
        }
    });
    return out;
}

/// Transpose with perm given as an int32/int64 vector tensor. Throws as transpose().
inline tensor transpose(const tensor& x, const tensor& perm) {
    return transpose(x, op_detail::int_list("Transpose", perm, "perm"));
}

/// The 2-D (or batched, last two dims) transpose: perm = [0, ..., r-1, r-2]. Throws shape_error
/// for rank < 2.
inline tensor transpose(const tensor& x) {
    if (x.rank() < 2)
        throw shape_error(op_detail::cat(
            "Transpose: need rank >= 2 to swap the last two dims, got ", x.shape().str()));
    std::vector<std::int64_t> perm(static_cast<std::size_t>(x.rank()));
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    return transpose(x, perm);
}

/// InvertPermutation: y[x[i]] = i for a permutation x of 0..n-1 (int32 or int64, 1-D); y has x's
/// dtype. Throws invalid_argument_error when x is not a permutation (naming the bad entry).
inline tensor invert_permutation(const tensor& x) {
    const char* op = "InvertPermutation";
    op_detail::require_input(op, x, "x");
    op_detail::require_rank(op, x, "x", 1);
    const auto p = op_detail::int_list(op, x, "x");
    const auto n = static_cast<std::int64_t>(p.size());
    std::vector<std::int64_t> inv(p.size(), -1);
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t v = p[static_cast<std::size_t>(i)];
        if (v < 0 || v >= n || inv[static_cast<std::size_t>(v)] != -1) {
            throw invalid_argument_error(op_detail::cat(op, ": x[", i, "] = ", v, " is out of range [0, ", n,
                                                        ") or repeated; x is not a permutation"));
        }
        inv[static_cast<std::size_t>(v)] = i;
    }
    tensor y(x.type(), x.shape());
    if (base_type(x.type()) == dtype::int32) {
        for (std::int64_t i = 0; i < n; ++i) y.data<std::int32_t>()[i] = static_cast<std::int32_t>(inv[static_cast<std::size_t>(i)]);
    } else {
        for (std::int64_t i = 0; i < n; ++i) y.data<std::int64_t>()[i] = inv[static_cast<std::size_t>(i)];
    }
    return y;
}

}  // namespace graft::ops
