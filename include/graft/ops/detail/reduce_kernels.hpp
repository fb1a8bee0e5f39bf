// graft/ops/detail/reduce_kernels.hpp — the loops behind reduce.hpp: a reduction of a [K1, R, K2] view
// over its middle dim, as "rows" (K2 == 1: each contiguous row folded to one value) or "columns"
// (each row of K2 values folded into an accumulator row). Both use Eigen Core array maps, so the
// inner loops are vectorized, and both spread the work over graft's pool: over rows / K1 when there
// are enough, else over chunks of R with per-chunk partial results combined at the end.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>

#include "graft/ops/detail/op_support.hpp"

namespace graft::ops::op_detail {

template <class T>
using array_map = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using const_array_map = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

// A reducer: combine(acc, row) folds a row into an accumulator row in place; full(row) folds a row
// into one value.
struct sum_reducer {
    template <class A, class B>
    static void combine(A& a, const B& b) {
        a += b;
    }
    template <class B>
    static auto full(const B& b) {
        return b.sum();
    }
};
struct prod_reducer {
    template <class A, class B>
    static void combine(A& a, const B& b) {
        a *= b;
    }
    template <class B>
    static auto full(const B& b) {
        return b.prod();
    }
};
struct max_reducer {  // NaN propagates, as TF's Max
    template <class A, class B>
    static void combine(A& a, const B& b) {
        using T = typename A::Scalar;
        a = a.binaryExpr(b, Eigen::internal::scalar_max_op<T, T, Eigen::PropagateNaN>());
    }
    template <class B>
    static auto full(const B& b) {
        return b.template maxCoeff<Eigen::PropagateNaN>();
    }
};
struct min_reducer {
    template <class A, class B>
    static void combine(A& a, const B& b) {
        using T = typename A::Scalar;
        a = a.binaryExpr(b, Eigen::internal::scalar_min_op<T, T, Eigen::PropagateNaN>());
    }
    template <class B>
    static auto full(const B& b) {
        return b.template minCoeff<Eigen::PropagateNaN>();
    }
};
struct any_reducer {
    template <class A, class B>
    static void combine(A& a, const B& b) {
        a = a || b;
    }
    template <class B>
    static bool full(const B& b) {
        return b.any();
    }
};
struct all_reducer {
    template <class A, class B>
    static void combine(A& a, const B& b) {
        a = a && b;
    }
    template <class B>
    static bool full(const B& b) {
        return b.all();
    }
};

/// out[k] = fold of in[k*R .. (k+1)*R) for k < K.
template <class Red, class T>
void reduce_rows(const T* in, T* out, std::int64_t K, std::int64_t R) {
    const std::int64_t threads = num_threads();
    if (K >= 4 * threads || K * R < 65536) {
        parallel_for(K, sizeof(T) * static_cast<double>(R), static_cast<double>(R),
                     [&](std::int64_t a, std::int64_t b) {
                         for (std::int64_t k = a; k < b; ++k)
                             out[k] = static_cast<T>(Red::full(const_array_map<T>(in + k * R, R)));
                     });
        return;
    }
    // Few long rows: cut each row into chunks, fold the chunks in parallel, then the partials.
    const std::int64_t chunks =
        std::min<std::int64_t>(4 * threads, std::max<std::int64_t>(1, R / 8192));
    tensor partial = tensor::uninitialized(dtype_of<T>, shape{chunks});
    T* part = partial.data<T>();
    for (std::int64_t k = 0; k < K; ++k) {
        const T* row = in + k * R;
        parallel_for(chunks, sizeof(T) * static_cast<double>(R / chunks),
                     static_cast<double>(R / chunks), [&](std::int64_t a, std::int64_t b) {
                         for (std::int64_t c = a; c < b; ++c) {
                             const std::int64_t r0 = R * c / chunks, r1 = R * (c + 1) / chunks;
                             part[c] =
                                 static_cast<T>(Red::full(const_array_map<T>(row + r0, r1 - r0)));
                         }
                     });
        out[k] = static_cast<T>(Red::full(const_array_map<T>(part, chunks)));
    }
}

/// dst[c0, c1) = fold over rows [r0, r1) of src (rows of K2 elements), columns [c0, c1) only.
template <class Red, class T>
void fold_columns(const T* src, T* dst, std::int64_t K2, std::int64_t r0, std::int64_t r1,
                  std::int64_t c0, std::int64_t c1) {
    array_map<T> acc(dst + c0, c1 - c0);
    acc = const_array_map<T>(src + r0 * K2 + c0, c1 - c0);
    for (std::int64_t r = r0 + 1; r < r1; ++r)
        Red::combine(acc, const_array_map<T>(src + r * K2 + c0, c1 - c0));
}

/// dst[0, K2) = fold of rows [r0, r1) of src (rows of K2 elements). Narrow rows are folded as
/// super-rows of m rows (so each vector operation spans ~2K elements), then the m slices.
template <class Red, class T>
void fold_range(const T* src, std::int64_t K2, std::int64_t r0, std::int64_t r1, T* dst) {
    constexpr std::int64_t col_block = 4096;  // accumulator slice that stays in L1/L2
    const std::int64_t rows = r1 - r0;
    const std::int64_t m = std::min<std::int64_t>(rows, 2048 / K2);
    if (m < 4) {
        for (std::int64_t c0 = 0; c0 < K2; c0 += col_block) {
            fold_columns<Red>(src, dst, K2, r0, r1, c0, std::min(K2, c0 + col_block));
        }
        return;
    }
    const std::int64_t groups = rows / m, width = m * K2;
    std::unique_ptr<T[]> wide(new T[static_cast<std::size_t>(width)]);
    fold_columns<Red>(src + r0 * K2, wide.get(), width, 0, groups, 0, width);
    fold_columns<Red>(wide.get(), dst, K2, 0, m, 0, K2);
    array_map<T> acc(dst, K2);
    for (std::int64_t r = r0 + groups * m; r < r1; ++r)
        Red::combine(acc, const_array_map<T>(src + r * K2, K2));
}

/// out[a, c] = fold over b of in[a, b, c] for the view [K1, R, K2] (R >= 1).
template <class Red, class T>
void reduce_columns(const T* in, T* out, std::int64_t K1, std::int64_t R, std::int64_t K2) {
    const std::int64_t threads = num_threads();
    if (K1 >= 2 * threads || K1 * R * K2 < 65536) {
        const double cost = sizeof(T) * static_cast<double>(R * K2);
        parallel_for(K1, cost, cost / sizeof(T), [&](std::int64_t a, std::int64_t b) {
            for (std::int64_t k1 = a; k1 < b; ++k1)
                fold_range<Red>(in + k1 * R * K2, K2, 0, R, out + k1 * K2);
        });
        return;
    }
    // Few outputs: fold chunks of R into partial rows in parallel, then fold the partials.
    const std::int64_t chunks = std::min<std::int64_t>(4 * threads, R);
    tensor partial = tensor::uninitialized(dtype_of<T>, shape{chunks, K2});
    T* part = partial.data<T>();
    for (std::int64_t k1 = 0; k1 < K1; ++k1) {
        const T* src = in + k1 * R * K2;
        parallel_for(chunks, sizeof(T) * static_cast<double>(R / chunks * K2),
                     static_cast<double>(R / chunks * K2), [&](std::int64_t a, std::int64_t b) {
                         for (std::int64_t c = a; c < b; ++c)
                             fold_range<Red>(src, K2, R * c / chunks, R * (c + 1) / chunks,
                                             part + c * K2);
                     });
        fold_range<Red>(part, K2, 0, chunks, out + k1 * K2);
    }
}

}  // namespace graft::ops::op_detail
