// graft/ops/bias_add.hpp — BiasAdd (NHWC and NCHW) and its gradient BiasAddGrad.
//
//   tensor y = ops::bias_add(x, b);                         // NHWC: b added along the last dim
//   tensor z = ops::bias_add(x, b, "NCHW");                // NCHW: along dim 1
//   tensor db = ops::bias_add_grad(dy);                     // sum over every dim but the channel
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "graft/ops/binary.hpp"
#include "graft/ops/reduce.hpp"

namespace graft::ops {

namespace op_detail {

/// y = x + bias over x viewed as [outer, C, inner] (NHWC: inner = 1; NCHW: inner = H*W...), the
/// bias broadcast along C. A broadcasting binary op walks such a tensor as runs of C (NHWC) and
/// pays a run's set-up per C elements: for a conv layer's 6 channels that made BiasAdd ~14x slower
/// than the Relu after it. Here NHWC adds a block of whole rows at a time to the bias repeated to
/// the block's length (one vectorizable loop per block), NCHW a constant per run of `inner`.
template <class T>
void bias_add_rows(const T* x, const T* b, T* y, std::int64_t outer, std::int64_t c, std::int64_t inner) {
    if (inner == 1) {
        // rows per block: blocks of >= 256 elements (or one row when the rows are that long)
        const std::int64_t per = std::max<std::int64_t>(1, (256 + c - 1) / c);
        std::vector<T> pattern(static_cast<std::size_t>(per * c));
        for (std::int64_t r = 0; r < per; ++r) std::copy(b, b + c, pattern.data() + r * c);
        const T* pat = pattern.data();
        const std::int64_t blocks = (outer + per - 1) / per;
        parallel_for(blocks, 3.0 * sizeof(T) * static_cast<double>(per * c), static_cast<double>(per * c),
                     [&](std::int64_t b0, std::int64_t b1) {
                         for (std::int64_t blk = b0; blk < b1; ++blk) {
                             const std::int64_t first = blk * per * c;
                             const std::int64_t len = std::min(per, outer - blk * per) * c;
                             const T* xs = x + first;
                             T* ys = y + first;
                             for (std::int64_t i = 0; i < len; ++i) ys[i] = xs[i] + pat[i];
                         }
                     });
        return;
    }
    parallel_for(outer * c, 3.0 * sizeof(T) * static_cast<double>(inner), static_cast<double>(inner),
                 [&](std::int64_t r0, std::int64_t r1) {
                     for (std::int64_t r = r0; r < r1; ++r) {
                         const T v = b[r % c];
                         const T* xs = x + r * inner;
                         T* ys = y + r * inner;
                         for (std::int64_t i = 0; i < inner; ++i) ys[i] = xs[i] + v;
                     }
                 });
}

}  // namespace op_detail

/// BiasAdd: value + bias with the 1-D bias broadcast along the channel dim (data_format "NHWC":
/// last dim; "NCHW": dim 1). float32, float64,
/// int32, int64. `out` (optional) receives the result and may be `value`. Throws shape_error when
/// bias is not a vector with one entry per channel, invalid_argument_error for dtypes.
inline tensor bias_add(const tensor& value, const tensor& bias,
                       std::string_view data_format = "NHWC", const tensor* out = nullptr) {
    const char* op = "BiasAdd";
    op_detail::require_input(op, value, "value");
    op_detail::require_input(op, bias, "bias");
    const int c = op_detail::channel_dim(op, value, data_format);
    if (bias.rank() != 1 || bias.dim(0) != value.dim(c)) {
        throw shape_error(op_detail::cat(
            op, ": bias ", bias.shape().str(), " must be a vector of the ", value.dim(c),
            " channels of value ", value.shape().str(), " (dim ", c, ", ", data_format, ")"));
    }
    op_detail::require_same_dtype(op, value, "value", bias, "bias");
    return op_detail::dispatch<float, double, std::int32_t, std::int64_t>(
        value.type(), op,
        [&](auto tag) {
            using T = decltype(tag);
            op_detail::check_alias(op, out, value, "value", value.shape());
            op_detail::check_alias(op, out, bias, "bias", value.shape());
            tensor r = op_detail::prepare_out(op, dtype_of<T>, value.shape(), out);
            const std::vector<std::int64_t>& d = value.shape().dims();
            const std::int64_t outer = op_detail::dim_product(d, 0, static_cast<std::size_t>(c));
            const std::int64_t inner = op_detail::dim_product(d, static_cast<std::size_t>(c) + 1, d.size());
            if (value.num_elements() > 0) {
                op_detail::bias_add_rows(value.data<T>(), bias.data<T>(), r.data<T>(), outer, value.dim(c), inner);
            }
            return r;
        },
        "value");
}

/// BiasAddGrad: out_backprop summed over every dim but the channel dim -> a vector. float32,
/// float64, int32, int64. Throws shape_error for rank < 2, invalid_argument_error for dtypes.
inline tensor bias_add_grad(const tensor& out_backprop, std::string_view data_format = "NHWC") {
    const char* op = "BiasAddGrad";
    op_detail::require_input(op, out_backprop, "out_backprop");
    const int c = op_detail::channel_dim(op, out_backprop, data_format);
    op_detail::dispatch<float, double, std::int32_t, std::int64_t>(
        out_backprop.type(), op, [](auto) {}, "out_backprop");
    std::vector<std::int64_t> axes;
    for (int i = 0; i < out_backprop.rank(); ++i) {
        if (i != c) axes.push_back(i);
    }
    return reduce_sum(out_backprop, axes);
}

}  // namespace graft::ops
