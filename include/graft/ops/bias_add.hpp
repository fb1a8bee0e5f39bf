// graft/ops/bias_add.hpp — BiasAdd (NHWC and NCHW) and its gradient BiasAddGrad.
//
//   tensor y = ops::bias_add(x, b);                         // NHWC: b added along the last dim
//   tensor z = ops::bias_add(x, b, "NCHW");                // NCHW: along dim 1
//   tensor db = ops::bias_add_grad(dy);                     // sum over every dim but the channel
//   ops::bias_activation_inplace(y, b, ops::bias_activation::relu);  // y = relu(y + b), one pass
#pragma once

#include <cmath>
#include <cstdint>
#include <numeric>
#include <string_view>
#include <vector>

#include "graft/ops/binary.hpp"
#include "graft/ops/gemm.hpp"
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

/// The activation bias_activation_inplace applies after the bias.
enum class bias_activation { none, relu, relu6, leaky_relu };
// the GEMM's fused stores take these as gemm::tile_bias_act::act codes
static_assert(static_cast<int>(bias_activation::none) == 0 && static_cast<int>(bias_activation::relu) == 1 &&
              static_cast<int>(bias_activation::relu6) == 2 && static_cast<int>(bias_activation::leaky_relu) == 3);

namespace op_detail {

// y[i] = act(y[i] + bias[i % C]) over rows of C channels, scalar: the ops' own semantics (Relu and
// Relu6 propagate NaN; LeakyRelu is x > 0 ? x : alpha x).
inline float bias_act_one(float v, bias_activation act, float alpha) {
    switch (act) {
        case bias_activation::none: return v;
        case bias_activation::relu: return std::isnan(v) ? v : (v > 0.f ? v : 0.f);
        case bias_activation::relu6: return std::isnan(v) ? v : (v > 0.f ? (v < 6.f ? v : 6.f) : 0.f);
        case bias_activation::leaky_relu: return v > 0.f ? v : v * alpha;
    }
    return v;
}

}  // namespace op_detail
}  // namespace graft::ops

// The AVX2 and AVX-512 bias + activation loops (BiasAdd and the fused MatMul/Conv2D epilogues):
// ops/arch/x86/bias_add.hpp.
#include "graft/ops/arch/x86/bias_add.hpp"

namespace graft::ops {

/// y = act(y + bias) over whole rows of C channels (float32, the bias along the last dim), on any
/// run of rows: what bias_activation_inplace does to a whole tensor, and the epilogue a producer
/// applies to each stretch of its output while that is still in cache (conv_narrow_forward's rows).
/// Built once per call (the bias pattern of narrow rows, the ISA's loop); apply() is thread-safe.
class bias_act_epilogue {
public:
    bias_act_epilogue(const float* bias, std::int64_t C, bias_activation act, float alpha = 0.2f)
        : bias_(bias), C_(C), act_(act), alpha_(alpha), tile_{bias, static_cast<int>(act), alpha, C} {
#ifdef GRAFT_X86_DISPATCH
        if (const auto isa = gemm::detail::active_isa(); isa != gemm::kernel_isa::portable) {
            const bool avx512 = isa == gemm::kernel_isa::avx512;
            const std::int64_t lanes = avx512 ? 16 : 8;
            // narrow rows: the bias repeated over lcm(C, lanes) floats, so every vector is whole
            period_ = C < 64 ? std::lcm<std::int64_t>(C, lanes) : 0;  // <= 1008
            for (std::int64_t i = 0; i < period_; i += C) std::copy(bias, bias + C, pattern_ + i);  // (no division per float)
            static constexpr row_fn by_act512[4] = {op_detail::bias_act_rows_avx512<bias_activation::none>,
                                                    op_detail::bias_act_rows_avx512<bias_activation::relu>,
                                                    op_detail::bias_act_rows_avx512<bias_activation::relu6>,
                                                    op_detail::bias_act_rows_avx512<bias_activation::leaky_relu>};
            static constexpr row_fn by_act256[4] = {op_detail::bias_act_rows_avx2<bias_activation::none>,
                                                    op_detail::bias_act_rows_avx2<bias_activation::relu>,
                                                    op_detail::bias_act_rows_avx2<bias_activation::relu6>,
                                                    op_detail::bias_act_rows_avx2<bias_activation::leaky_relu>};
            fn_ = (avx512 ? by_act512 : by_act256)[static_cast<int>(act)];
        }
#endif
    }
    bias_act_epilogue(const bias_act_epilogue&) = delete;
    bias_act_epilogue& operator=(const bias_act_epilogue&) = delete;

    [[nodiscard]] std::int64_t channels() const { return C_; }
    [[nodiscard]] const float* bias() const { return bias_; }
    [[nodiscard]] bias_activation activation() const { return act_; }
    [[nodiscard]] float alpha() const { return alpha_; }
    /// Rows per unit of work that keeps the vector loop on whole bias patterns (1 for wide rows).
    [[nodiscard]] std::int64_t unit_rows() const { return period_ ? period_ / C_ : 1; }

    /// Rows [r0, r1) of y (C floats each, contiguous).
    void apply(float* y, std::int64_t r0, std::int64_t r1) const {
        if (fn_) {
            fn_(y, r0, r1, C_, bias_, period_ ? pattern_ : nullptr, period_, alpha_);
            return;
        }
        for (std::int64_t r = r0; r < r1; ++r)
            for (std::int64_t c = 0; c < C_; ++c) {
                float& v = y[r * C_ + c];
                v = op_detail::bias_act_one(v + bias_[c], act_, alpha_);
            }
    }

    /// apply() as a GEMM's row epilogue (C rows of channels() floats each), for as long as this lives.
    /// For a product of channels() columns the AVX-512 and AVX2 micro-kernels apply the bias and
    /// activation as they store its final sums instead, where they can (row_epilogue::in_tile; the
    /// same bits).
    [[nodiscard]] gemm::row_epilogue<float> rows() const {
        gemm::row_epilogue<float> e;
        e.apply = [](const void* self, float* y, std::int64_t r0, std::int64_t r1) {
            static_cast<const bias_act_epilogue*>(self)->apply(y, r0, r1);
        };
        e.self = this;
        e.in_tile = &tile_;
        return e;
    }

    /// All `rows` rows of y, on the pool's threads from 64K floats (one pass over memory).
    void apply_all(float* y, std::int64_t rows) const {
        const std::int64_t unit = unit_rows(), units = (rows + unit - 1) / unit;
        nn_detail::parallel_for(units, std::max<std::int64_t>(1, (1 << 16) / (unit * std::max<std::int64_t>(C_, 1))),
                                [&](std::int64_t u0, std::int64_t u1) { apply(y, u0 * unit, std::min(rows, u1 * unit)); });
    }

private:
    using row_fn = void (*)(float*, std::int64_t, std::int64_t, std::int64_t, const float*, const float*,
                            std::int64_t, float);
    const float* bias_;
    std::int64_t C_;
    bias_activation act_;
    float alpha_;
    row_fn fn_ = nullptr;  // the ISA's loop; nullptr: the scalar one
    gemm::tile_bias_act tile_;  // the same, for the GEMM's micro-kernels' stores
    std::int64_t period_ = 0;
    alignas(64) float pattern_[1024];
};

/// y = act(y + bias) in place for float32 y with the bias along the last dim (NHWC, or a matrix's
/// columns), in one pass: the fused epilogue of _FusedMatMul / _FusedConv2D, the same values as
/// bias_add then the activation (Relu and Relu6 propagate NaN; a -0 sum may come out +0 where the
/// separate ops kept -0: both are zero). Throws shape_error unless bias is a vector of y's last dim,
/// invalid_argument_error unless both are float32.
inline void bias_activation_inplace(tensor& y, const tensor& bias, bias_activation act, float alpha = 0.2f) {
    const char* op = "BiasAdd";
    op_detail::require_input(op, y, "value");
    op_detail::require_input(op, bias, "bias");
    if (y.type() != dtype::float32 || bias.type() != dtype::float32)
        throw invalid_argument_error(op_detail::cat(op, ": the fused bias and activation take float32, not ",
                                                    dtype_name(y.type()), " and ", dtype_name(bias.type())));
    if (y.rank() < 1 || bias.rank() != 1 || bias.dim(0) != y.dim(y.rank() - 1))
        throw shape_error(op_detail::cat(op, ": bias ", bias.shape().str(), " must be a vector of the last dim of value ",
                                         y.shape().str()));
    const std::int64_t C = bias.dim(0), rows = C > 0 ? y.num_elements() / C : 0;
    if (rows == 0) return;
    const bias_act_epilogue epilogue(bias.data<float>(), C, act, alpha);
    epilogue.apply_all(y.data<float>(), rows);
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
