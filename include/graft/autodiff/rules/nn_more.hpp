// graft/autodiff/rules/nn_more.hpp — gradients of the nn_more family (graft/exec/cpu_kernels/nn_more.hpp):
// 3-D convolution and pooling, MaxPoolWithArgmax, LRN and the fused RNN cells, built as TF's
// nn_grad.py / rnn_grad.py build them.
#pragma once

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

namespace nn_more_detail {

/// The node's attrs named in `names` (those it has or defaults), for its gradient ops.
inline attr_list attrs_of(const grad_context& c, std::initializer_list<const char*> names) {
    attr_list a;
    for (const char* n : names) c.copy_attr(a, n);
    return a;
}
inline attr_list conv3d_attrs(const grad_context& c) {
    return attrs_of(c, {"strides", "padding", "data_format", "dilations"});
}
inline attr_list pool3d_attrs(const grad_context& c) { return attrs_of(c, {"ksize", "strides", "padding", "data_format"}); }

/// Columns [from, from + width) of a matrix m, width and from given as int32 scalars or [1] vectors:
/// Slice(m, [0, from], [-1, width]).
inline endpoint columns(const graph_builder& b, const endpoint& m, const endpoint& from, const endpoint& width) {
    endpoint zero = ints(b, {0});
    endpoint begin = b.op("ConcatV2", {zero, from, int_scalar(b, 0)});
    endpoint size = b.op("ConcatV2", {ints(b, {-1}), width, int_scalar(b, 0)});
    return b.op("Slice", {m, begin, size});
}
/// Shape(t)[k:k+1] as an int32 [1] vector.
inline endpoint dim_of(const graph_builder& b, const endpoint& t, std::int32_t k) {
    return b.op("StridedSlice", {shape_of(b, t), ints(b, {k}), ints(b, {k + 1}), ints(b, {1})});
}

}  // namespace nn_more_detail

inline void register_nn_more(gradient_registry& r) {
    using namespace nn_more_detail;

    r.add("Conv3D", [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        if (c.wants(0)) out[0] = b.op("Conv3DBackpropInputV2", {shape_of(b, c.input(0)), c.input(1), *g}, conv3d_attrs(c));
        if (c.wants(1)) out[1] = b.op("Conv3DBackpropFilterV2", {c.input(0), shape_of(b, c.input(1)), *g}, conv3d_attrs(c));
        return out;
    });
    r.add("Conv3DBackpropInputV2", [](grad_context& c) -> grad_list {
        grad_list out(3);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        if (c.wants(1)) out[1] = b.op("Conv3DBackpropFilterV2", {*g, shape_of(b, c.input(1)), c.input(2)}, conv3d_attrs(c));
        if (c.wants(2)) out[2] = b.op("Conv3D", {*g, c.input(1)}, conv3d_attrs(c));
        return out;
    });
    r.add("Conv3DBackpropFilterV2", [](grad_context& c) -> grad_list {
        grad_list out(3);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        if (c.wants(0)) out[0] = b.op("Conv3DBackpropInputV2", {shape_of(b, c.input(0)), *g, c.input(2)}, conv3d_attrs(c));
        if (c.wants(2)) out[2] = b.op("Conv3D", {c.input(0), *g}, conv3d_attrs(c));
        return out;
    });

    r.add("MaxPool3D", [](grad_context& c) -> grad_list {
        grad_list out(1);
        if (auto& g = c.grad(0)) out[0] = c.b().op("MaxPool3DGrad", {c.input(0), c.output(0), *g}, pool3d_attrs(c));
        return out;
    });
    r.add("AvgPool3D", [](grad_context& c) -> grad_list {
        grad_list out(1);
        if (auto& g = c.grad(0)) out[0] = c.b().op("AvgPool3DGrad", {shape_of(c.b(), c.input(0)), *g}, pool3d_attrs(c));
        return out;
    });
    // The pooling gradients are linear in grad; the routing (orig_input, orig_output) gets zeros.
    r.add("MaxPool3DGrad", [](grad_context& c) -> grad_list {
        grad_list out(3);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        out[0] = b.op("ZerosLike", {c.input(0)});
        out[1] = b.op("ZerosLike", {c.input(1)});
        out[2] = b.op("MaxPool3DGradGrad", {c.input(0), c.input(1), *g}, pool3d_attrs(c));
        return out;
    });
    r.add("MaxPool3DGradGrad", [](grad_context& c) -> grad_list {
        grad_list out(3);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        out[0] = b.op("ZerosLike", {c.input(0)});
        out[1] = b.op("ZerosLike", {c.input(1)});
        out[2] = b.op("MaxPool3DGrad", {c.input(0), c.input(1), *g}, pool3d_attrs(c));
        return out;
    });
    r.add("AvgPool3DGrad", [](grad_context& c) -> grad_list {
        grad_list out(2);
        if (auto& g = c.grad(0)) out[1] = c.b().op("AvgPool3D", {*g}, pool3d_attrs(c));
        return out;
    });

    r.add("MaxPoolWithArgmax", [](grad_context& c) -> grad_list {
        grad_list out(1);
        if (auto& g = c.grad(0)) {
            out[0] = c.b().op("MaxPoolGradWithArgmax", {c.input(0), *g, c.output(1)},
                              attrs_of(c, {"ksize", "strides", "padding", "include_batch_in_index"}));
        }
        return out;
    });
    r.add("MaxPoolGradWithArgmax", [](grad_context& c) -> grad_list {
        grad_list out(3);
        auto& g = c.grad(0);
        if (!g) return out;
        out[0] = c.b().op("ZerosLike", {c.input(0)});
        out[1] = c.b().op("MaxPoolGradGradWithArgmax", {c.input(0), *g, c.input(2)},
                          attrs_of(c, {"ksize", "strides", "padding", "include_batch_in_index"}));
        return out;
    });

    r.add("LRN", [](grad_context& c) -> grad_list {
        grad_list out(1);
        if (auto& g = c.grad(0)) {
            out[0] = c.b().op("LRNGrad", {*g, c.input(0), c.output(0)},
                              attrs_of(c, {"depth_radius", "bias", "alpha", "beta"}));
        }
        return out;
    });

    // LSTMBlockCell (rnn_grad.py): LSTMBlockCellGrad gives the gate gradients dicfo; x, h_prev, w and
    // b follow from xh = [x, h_prev] and gates = xh * w + b. Only cs and h carry gradients back.
    r.add("LSTMBlockCell", [](grad_context& c) -> grad_list {
        grad_list out(8);
        if (!c.grad(1) && !c.grad(6)) return out;
        const auto& b = c.b();
        std::vector<endpoint> in;
        for (int k = 0; k < 8; ++k) in.push_back(c.input(k));
        for (int k = 0; k < 6; ++k) in.push_back(c.output(k));
        in.push_back(c.grad_or_zeros(1));
        in.push_back(c.grad_or_zeros(6));
        auto g = b.op_n("LSTMBlockCellGrad", in, attrs_of(c, {"use_peephole"}));
        const endpoint x = c.input(0), h_prev = c.input(2), w = c.input(3), dgates = g[1];
        endpoint xh_grad = b.op("MatMul", {dgates, w}, {{"transpose_b", true}});
        endpoint in_size = dim_of(b, x, 1);
        out[0] = columns(b, xh_grad, ints(b, {0}), in_size);
        out[1] = g[0];
        out[2] = columns(b, xh_grad, in_size, dim_of(b, h_prev, 1));
        endpoint xh = b.op("ConcatV2", {x, h_prev, int_scalar(b, 1)});
        out[3] = b.op("MatMul", {xh, dgates}, {{"transpose_a", true}});
        out[4] = g[2];
        out[5] = g[3];
        out[6] = g[4];
        out[7] = b.op("BiasAddGrad", {dgates});
        return out;
    });
    for (bool v2 : {false, true}) {
        r.add(v2 ? "BlockLSTMV2" : "BlockLSTM", [v2](grad_context& c) -> grad_list {
            grad_list out(9);
            if (!c.grad(1) && !c.grad(6)) return out;
            std::vector<endpoint> in;
            for (int k = 0; k < 9; ++k) in.push_back(c.input(k));
            for (int k = 0; k < 7; ++k) in.push_back(c.output(k));
            in.push_back(c.grad_or_zeros(1));
            in.push_back(c.grad_or_zeros(6));
            auto g = c.b().op_n(v2 ? "BlockLSTMGradV2" : "BlockLSTMGrad", in, attrs_of(c, {"use_peephole"}));
            for (int k = 0; k < 8; ++k) out[static_cast<std::size_t>(k + 1)] = g[static_cast<std::size_t>(k)];
            return out;
        });
    }

    // GRUBlockCell (rnn_grad.py): GRUBlockCellGrad gives d_x, d_h_prev and the pre-activation
    // gradients; the weights' gradients are products with the cell's concatenated inputs.
    r.add("GRUBlockCell", [](grad_context& c) -> grad_list {
        grad_list out(6);
        auto& dh = c.grad(3);
        if (!dh) return out;
        const auto& b = c.b();
        std::vector<endpoint> in;
        for (int k = 0; k < 6; ++k) in.push_back(c.input(k));
        for (int k = 0; k < 3; ++k) in.push_back(c.output(k));
        in.push_back(*dh);
        auto g = b.op_n("GRUBlockCellGrad", in);
        const endpoint x = c.input(0), h_prev = c.input(1);
        out[0] = g[0];
        out[1] = g[1];
        endpoint x_h_prev = b.op("ConcatV2", {x, h_prev, int_scalar(b, 1)});
        out[2] = b.op("MatMul", {x_h_prev, g[3]}, {{"transpose_a", true}});
        endpoint x_h_prevr = b.op("ConcatV2", {x, b.op("Mul", {h_prev, c.output(0)}), int_scalar(b, 1)});
        out[3] = b.op("MatMul", {x_h_prevr, g[2]}, {{"transpose_a", true}});
        out[4] = b.op("BiasAddGrad", {g[3]});
        out[5] = b.op("BiasAddGrad", {g[2]});
        return out;
    });
}

}  // namespace graft::autodiff::rules
