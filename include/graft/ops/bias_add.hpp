// graft/ops/bias_add.hpp — BiasAdd (NHWC and NCHW) and its gradient BiasAddGrad.
//
//   tensor y = ops::bias_add(x, b);                         // NHWC: b added along the last dim
//   tensor z = ops::bias_add(x, b, "NCHW");                // NCHW: along dim 1
//   tensor db = ops::bias_add_grad(dy);                     // sum over every dim but the channel
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "graft/ops/binary.hpp"
#include "graft/ops/reduce.hpp"

namespace graft::ops {

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
    // the bias as [C, 1, ...] against the channel dim: NHWC is the broadcasting ops' short-row case
    // (binary_row_blocks), NCHW a constant per H*W run
    std::vector<std::int64_t> bd(static_cast<std::size_t>(value.rank() - c), 1);
    bd[0] = bias.dim(0);
    return op_detail::binary_op<false>(op_detail::real_types{}, op, value, bias.reshaped(shape(bd)),
                                       out, 1,
                                       [](const auto& a, const auto& b, auto) { return a + b; });
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
