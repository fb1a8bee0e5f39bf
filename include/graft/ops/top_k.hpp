// graft/ops/top_k.hpp — order statistics along the last dim: TopKV2, NthElement, InTopKV2.
//
//   auto [values, indices] = ops::top_k(logits, 5);          // largest first, ties by lower index
//   tensor med = ops::nth_element(x, x.dim(-1) / 2);         // n-th smallest of each row
//   tensor hit = ops::in_top_k(predictions, labels, 1);      // bool [batch]
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "graft/ops/scatter.hpp"

namespace graft::ops {

namespace top_k_detail {

/// Writes integer `v` into element i of an int16/int32/int64 tensor.
inline void put_index(const tensor& t, std::int64_t i, std::int64_t v) {
    switch (base_type(t.type())) {
        case dtype::int16: t.data<std::int16_t>()[i] = static_cast<std::int16_t>(v); break;
        case dtype::int64: t.data<std::int64_t>()[i] = v; break;
        default: t.data<std::int32_t>()[i] = static_cast<std::int32_t>(v); break;
    }
}

}  // namespace top_k_detail

/// TopKV2: the k largest entries of each last-dim row of `input` (rank >= 1), largest first,
/// equal values in index order, and their indices as `index_type` (int16/int32/int64). Real-number
/// input; the outputs have input.shape[:-1] + [k]. Throws invalid_argument_error for k < 0, k
/// larger than the last dim, a scalar input or another dtype.
inline std::pair<tensor, tensor> top_k(const tensor& input, std::int64_t k, dtype index_type = dtype::int32) {
    const char* op = "TopKV2";
    op_detail::require_input(op, input, "input");
    if (input.rank() < 1) {
        throw invalid_argument_error(op_detail::cat(op, ": input must be at least 1-D, got ", input.describe()));
    }
    const std::int64_t n = input.dim(input.rank() - 1);
    if (k < 0) throw invalid_argument_error(op_detail::cat(op, ": k must be non-negative, got ", k));
    if (k > n) {
        throw invalid_argument_error(op_detail::cat(op, ": input must have at least k columns: it has ", n,
                                                    ", k is ", k, " (input ", input.shape().str(), ")"));
    }
    const dtype it = base_type(index_type);
    if (it != dtype::int16 && it != dtype::int32 && it != dtype::int64) {
        throw invalid_argument_error(op_detail::cat(op, ": index_type must be int16, int32 or int64, got ",
                                                    dtype_name(index_type)));
    }
    std::vector<std::int64_t> od = input.shape().dims();
    od.back() = k;
    tensor values = tensor::uninitialized(input.type(), shape(od));
    tensor indices = tensor::uninitialized(it, shape(od));
    const std::int64_t rows = n == 0 ? 0 : input.num_elements() / n;
    scatter_detail::dispatch_real(input.type(), op, [&](auto tag) {
        using T = decltype(tag);
        const T* x = input.data<T>();
        T* v = values.data<T>();
        op_detail::parallel_for(rows, 8.0 * static_cast<double>(n), 10.0 * static_cast<double>(n),
                                [&](std::int64_t first, std::int64_t last) {
            std::vector<std::int64_t> order(static_cast<std::size_t>(n));
            for (std::int64_t r = first; r < last; ++r) {
                const T* row = x + r * n;
                std::iota(order.begin(), order.end(), std::int64_t{0});
                auto before = [row](std::int64_t a, std::int64_t b) {
                    return row[b] < row[a] || (!(row[a] < row[b]) && a < b);
                };
                std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
                for (std::int64_t j = 0; j < k; ++j) {
                    const std::int64_t src = order[static_cast<std::size_t>(j)];
                    v[r * k + j] = row[src];
                    top_k_detail::put_index(indices, r * k + j, src);
                }
            }
        });
    }, "input");
    return {values, indices};
}
/// TopKV2 with k as an int16/int32/int64 scalar tensor. Throws as above.
inline std::pair<tensor, tensor> top_k(const tensor& input, const tensor& k, dtype index_type = dtype::int32) {
    return top_k(input, op_detail::int_scalar("TopKV2", k, "k"), index_type);
}

/// NthElement: the n-th smallest value of each last-dim row (n-th largest when `reverse`), shape
/// input.shape[:-1]. Real-number input of rank >= 1. Throws invalid_argument_error for n outside
/// [0, last dim) or a scalar input.
inline tensor nth_element(const tensor& input, std::int64_t n, bool reverse = false) {
    const char* op = "NthElement";
    op_detail::require_input(op, input, "input");
    if (input.rank() < 1) {
        throw invalid_argument_error(op_detail::cat(op, ": input must be at least 1-D, got ", input.describe()));
    }
    const std::int64_t cols = input.dim(input.rank() - 1);
    if (n < 0 || n >= cols) {
        throw invalid_argument_error(op_detail::cat(op, ": n must be in [0, ", cols, ") (the last dim of input ",
                                                    input.shape().str(), "), got ", n));
    }
    std::vector<std::int64_t> od = input.shape().dims();
    od.pop_back();
    tensor out = tensor::uninitialized(input.type(), shape(od));
    const std::int64_t rows = input.num_elements() / cols;
    const auto pos = static_cast<std::ptrdiff_t>(reverse ? cols - 1 - n : n);
    scatter_detail::dispatch_real(input.type(), op, [&](auto tag) {
        using T = decltype(tag);
        const T* x = input.data<T>();
        T* o = out.data<T>();
        std::vector<T> buf(static_cast<std::size_t>(cols));
        for (std::int64_t r = 0; r < rows; ++r) {
            std::copy(x + r * cols, x + (r + 1) * cols, buf.begin());
            std::nth_element(buf.begin(), buf.begin() + pos, buf.end());
            o[r] = buf[static_cast<std::size_t>(pos)];
        }
    }, "input");
    return out;
}
/// NthElement with n as an int32 scalar tensor. Throws as above.
inline tensor nth_element(const tensor& input, const tensor& n, bool reverse = false) {
    return nth_element(input, op_detail::int_scalar("NthElement", n, "n"), reverse);
}

/// InTopKV2: out[b] = targets[b] is among the k largest of predictions[b, :] (fewer than k
/// entries are strictly larger); false when the target is out of range or a prediction of the
/// row is not finite, as in TF. predictions float32/float64 [batch, classes]; targets int32/int64
/// [batch]. Throws invalid_argument_error for other shapes or dtypes.
inline tensor in_top_k(const tensor& predictions, const tensor& targets, std::int64_t k) {
    const char* op = "InTopKV2";
    op_detail::require_input(op, predictions, "predictions");
    op_detail::require_rank(op, predictions, "predictions", 2);
    op_detail::require_rank(op, targets, "targets", 1);
    const auto t = op_detail::index_values(op, targets, "targets");
    const std::int64_t batch = predictions.dim(0), classes = predictions.dim(1);
    if (targets.dim(0) != batch) {
        throw invalid_argument_error(op_detail::cat(op, ": targets ", targets.shape().str(),
                                                    " must have one entry per row of predictions ",
                                                    predictions.shape().str()));
    }
    tensor out = tensor::uninitialized(dtype::bool_, shape{batch});
    bool* o = out.data<bool>();
    op_detail::dispatch<float, double>(predictions.type(), op, [&](auto tag) {
        using T = decltype(tag);
        const T* p = predictions.data<T>();
        for (std::int64_t b = 0; b < batch; ++b) {
            const std::int64_t target = t[static_cast<std::size_t>(b)];
            const T* row = p + b * classes;
            bool cannot_say = target < 0 || target >= classes || !std::isfinite(row[target]);
            std::int64_t larger = 0;
            for (std::int64_t i = 0; i < classes && !cannot_say; ++i) {
                if (!std::isfinite(row[i])) cannot_say = true;
                else if (row[i] > row[target] && ++larger > k) break;
            }
            o[b] = !cannot_say && larger < k;
        }
    }, "predictions");
    return out;
}
/// InTopKV2 with k as an int32/int64 scalar tensor. Throws as above.
inline tensor in_top_k(const tensor& predictions, const tensor& targets, const tensor& k) {
    return in_top_k(predictions, targets, op_detail::int_scalar("InTopKV2", k, "k"));
}

}  // namespace graft::ops
