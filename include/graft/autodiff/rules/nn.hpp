// graft/autodiff/rules/nn.hpp — gradients of matmul, convolution, pooling, batch norm, bias add,
// softmax and the cross-entropy ops (graft/ops/nn_all.hpp), as TF's math_grad.py / nn_grad.py
// build them.
#pragma once

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

namespace nn_detail {
/// The gradients of x @ y (ta/tb: transposed operands) for MatMul and the BatchMatMul family.
inline std::pair<std::optional<endpoint>, std::optional<endpoint>> matmul_grads(
    const grad_context& c, const char* op, const char* ta_name, const char* tb_name, bool ta, bool tb) {
    const auto& b = c.b();
    endpoint g = *c.grad(0), x = c.input(0), y = c.input(1);
    auto mm = [&](const endpoint& p, const endpoint& q, bool tp, bool tq) {
        return b.op(op, {p, q}, {{ta_name, tp}, {tb_name, tq}});
    };
    std::optional<endpoint> gx, gy;
    if (!ta && !tb) {
        if (c.wants(0)) gx = mm(g, y, false, true);
        if (c.wants(1)) gy = mm(x, g, true, false);
    } else if (!ta && tb) {
        if (c.wants(0)) gx = mm(g, y, false, false);
        if (c.wants(1)) gy = mm(g, x, true, false);
    } else if (ta && !tb) {
        if (c.wants(0)) gx = mm(y, g, false, true);
        if (c.wants(1)) gy = mm(x, g, false, false);
    } else {
        if (c.wants(0)) gx = mm(y, g, true, true);
        if (c.wants(1)) gy = mm(g, x, true, true);
    }
    return {gx, gy};
}
/// Attrs of a conv/pool node that its gradient ops take.
inline attr_list conv_attrs(const grad_context& c, std::initializer_list<const char*> names) {
    attr_list a;
    for (const char* n : names) c.copy_attr(a, n);
    return a;
}
/// expand_dims(v, -1) * m: a per-row value broadcast over the last axis.
inline endpoint row_mul(const graph_builder& b, const endpoint& v, const endpoint& m) {
    return b.op("Mul", {b.op("ExpandDims", {v, int_scalar(b, -1)}), m});
}
/// The second-order term of the cross-entropy ops: (gg - sum(gg * softmax, -1)) * softmax.
inline endpoint xent_grad_grad(const graph_builder& b, const endpoint& gg, const endpoint& logits) {
    endpoint sm = b.op("Softmax", {logits});
    endpoint dot = b.op("Sum", {b.op("Mul", {gg, sm}), int_scalar(b, -1)}, {{"keep_dims", true}});
    return b.op("Mul", {b.op("Sub", {gg, dot}), sm});
}
}  // namespace nn_detail

inline void register_nn(gradient_registry& r) {
    using namespace nn_detail;
    r.add("MatMul", [](grad_context& c) -> grad_list {
        if (!c.grad(0)) return grad_list(2);
        bool ta = c.attr("transpose_a").b(), tb = c.attr("transpose_b").b();
        auto [gx, gy] = matmul_grads(c, "MatMul", "transpose_a", "transpose_b", ta, tb);
        return {gx, gy};
    });
    r.add("BatchMatMul", [](grad_context& c) -> grad_list {
        if (!c.grad(0)) return grad_list(2);
        auto [gx, gy] = matmul_grads(c, "BatchMatMul", "adj_x", "adj_y", c.attr("adj_x").b(), c.attr("adj_y").b());
        return {gx, gy};
    });
    // V2/V3 broadcast the batch dims: sum each gradient back over the dims its operand lacked.
    auto bmm2 = [](grad_context& c) -> grad_list {
        if (!c.grad(0)) return grad_list(2);
        auto [gx, gy] = matmul_grads(c, "BatchMatMulV2", "adj_x", "adj_y", c.attr("adj_x").b(), c.attr("adj_y").b());
        const auto& b = c.b();
        endpoint sx = shape_of(b, c.input(0)), sy = shape_of(b, c.input(1));
        auto batch = [&](const endpoint& s) {
            return b.op("StridedSlice", {s, ints(b, {0}), ints(b, {-2}), ints(b, {1})});
        };
        auto rr = b.op_n("BroadcastGradientArgs", {batch(sx), batch(sy)});
        grad_list out(2);
        if (gx) out[0] = b.op("Reshape", {b.op("Sum", {*gx, rr[0]}), sx});
        if (gy) out[1] = b.op("Reshape", {b.op("Sum", {*gy, rr[1]}), sy});
        return out;
    };
    r.add("BatchMatMulV2", bmm2);
    r.add("BatchMatMulV3", bmm2);

    r.add("BiasAdd", [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        out[0] = *g;
        attr_list a;
        c.copy_attr(a, "data_format");
        if (c.wants(1)) out[1] = c.b().op("BiasAddGrad", {*g}, a);
        return out;
    });
    r.add("BiasAddV1", [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        out[0] = *g;
        if (c.wants(1)) out[1] = c.b().op("BiasAddGrad", {*g});
        return out;
    });
    // BiasAddGrad sums over all but the channel axis: its gradient broadcasts back (TF's tile).
    r.add("BiasAddGrad", [](grad_context& c) -> grad_list {
        grad_list out(1);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        endpoint s = shape_of(b, c.input(0));
        endpoint bias_shape = shape_of(b, *g);
        auto slice = [&](std::int32_t from, std::int32_t to, std::int64_t end_mask) {
            return b.op("StridedSlice", {s, ints(b, {from}), ints(b, {to}), ints(b, {1})}, {{"end_mask", end_mask}});
        };
        bool nchw = c.attr("data_format").s() == "NCHW";
        endpoint expanded, tile;
        if (nchw) {
            endpoint head = slice(0, 1, 0), tail = slice(2, 0, 1);
            expanded = b.op("ConcatV2", {b.op("OnesLike", {head}), bias_shape, b.op("OnesLike", {tail}), int_scalar(b, 0)});
            tile = b.op("ConcatV2", {head, ints(b, {1}), tail, int_scalar(b, 0)});
        } else {
            endpoint head = slice(0, -1, 0);
            expanded = b.op("ConcatV2", {b.op("OnesLike", {head}), bias_shape, int_scalar(b, 0)});
            tile = b.op("ConcatV2", {head, ints(b, {1}), int_scalar(b, 0)});
        }
        out[0] = b.op("Tile", {b.op("Reshape", {*g, expanded}), tile});
        return out;
    });

    r.add("Conv2D", [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        attr_list a = conv_attrs(c, {"strides", "padding", "explicit_paddings", "data_format", "dilations", "use_cudnn_on_gpu"});
        if (c.wants(0)) out[0] = b.op("Conv2DBackpropInput", {shape_of(b, c.input(0)), c.input(1), *g}, a);
        if (c.wants(1)) out[1] = b.op("Conv2DBackpropFilter", {c.input(0), shape_of(b, c.input(1)), *g}, a);
        return out;
    });
    r.add("Conv2DBackpropInput", [](grad_context& c) -> grad_list {
        grad_list out(3);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        attr_list a = conv_attrs(c, {"strides", "padding", "explicit_paddings", "data_format", "dilations", "use_cudnn_on_gpu"});
        if (c.wants(1)) out[1] = b.op("Conv2DBackpropFilter", {*g, shape_of(b, c.input(1)), c.input(2)}, a);
        if (c.wants(2)) out[2] = b.op("Conv2D", {*g, c.input(1)}, a);
        return out;
    });
    r.add("Conv2DBackpropFilter", [](grad_context& c) -> grad_list {
        grad_list out(3);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        attr_list a = conv_attrs(c, {"strides", "padding", "explicit_paddings", "data_format", "dilations", "use_cudnn_on_gpu"});
        if (c.wants(0)) out[0] = b.op("Conv2DBackpropInput", {shape_of(b, c.input(0)), *g, c.input(2)}, a);
        if (c.wants(2)) out[2] = b.op("Conv2D", {c.input(0), *g}, a);
        return out;
    });
    r.add("DepthwiseConv2dNative", [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        attr_list a = conv_attrs(c, {"strides", "padding", "explicit_paddings", "data_format", "dilations"});
        if (c.wants(0)) out[0] = b.op("DepthwiseConv2dNativeBackpropInput", {shape_of(b, c.input(0)), c.input(1), *g}, a);
        if (c.wants(1)) out[1] = b.op("DepthwiseConv2dNativeBackpropFilter", {c.input(0), shape_of(b, c.input(1)), *g}, a);
        return out;
    });
    r.add("DepthwiseConv2dNativeBackpropInput", [](grad_context& c) -> grad_list {
        grad_list out(3);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        attr_list a = conv_attrs(c, {"strides", "padding", "explicit_paddings", "data_format", "dilations"});
        if (c.wants(1)) out[1] = b.op("DepthwiseConv2dNativeBackpropFilter", {*g, shape_of(b, c.input(1)), c.input(2)}, a);
        if (c.wants(2)) out[2] = b.op("DepthwiseConv2dNative", {*g, c.input(1)}, a);
        return out;
    });
    r.add("DepthwiseConv2dNativeBackpropFilter", [](grad_context& c) -> grad_list {
        grad_list out(3);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        attr_list a = conv_attrs(c, {"strides", "padding", "explicit_paddings", "data_format", "dilations"});
        if (c.wants(0)) out[0] = b.op("DepthwiseConv2dNativeBackpropInput", {shape_of(b, c.input(0)), *g, c.input(2)}, a);
        if (c.wants(2)) out[2] = b.op("DepthwiseConv2dNative", {c.input(0), *g}, a);
        return out;
    });
    r.add("MaxPool", [](grad_context& c) -> grad_list {
        grad_list out(1);
        if (auto& g = c.grad(0)) {
            out[0] = c.b().op("MaxPoolGrad", {c.input(0), c.output(0), *g}, conv_attrs(c, {"ksize", "strides", "padding", "data_format"}));
        }
        return out;
    });
    r.add("MaxPoolV2", [](grad_context& c) -> grad_list {
        grad_list out(3);
        if (auto& g = c.grad(0)) {
            out[0] = c.b().op("MaxPoolGradV2", {c.input(0), c.output(0), *g, c.input(1), c.input(2)},
                              conv_attrs(c, {"padding", "data_format"}));
        }
        return out;
    });
    r.add("AvgPool", [](grad_context& c) -> grad_list {
        grad_list out(1);
        if (auto& g = c.grad(0)) {
            out[0] = c.b().op("AvgPoolGrad", {shape_of(c.b(), c.input(0)), *g}, conv_attrs(c, {"ksize", "strides", "padding", "data_format"}));
        }
        return out;
    });
    r.add("AvgPoolGrad", [](grad_context& c) -> grad_list {
        grad_list out(2);
        if (auto& g = c.grad(0)) out[1] = c.b().op("AvgPool", {*g}, conv_attrs(c, {"ksize", "strides", "padding", "data_format"}));
        return out;
    });

    // FusedBatchNorm*: FusedBatchNormGrad* with the saved statistics (training) or the population
    // mean/variance inputs (inference). No gradient for mean/variance, as in TF.
    for (int version : {1, 2, 3}) {
        std::string grad_op = version == 1 ? "FusedBatchNormGrad" : "FusedBatchNormGradV" + std::to_string(version);
        r.add(version == 1 ? "FusedBatchNorm" : "FusedBatchNormV" + std::to_string(version),
              [grad_op, version](grad_context& c) -> grad_list {
                  grad_list out(5);
                  auto& g = c.grad(0);
                  if (!g) return out;
                  const auto& b = c.b();
                  attr_list a = conv_attrs(c, {"epsilon", "data_format", "is_training"});
                  bool training = c.attr("is_training").b();
                  std::vector<endpoint> in{*g, c.input(0), c.input(1)};
                  if (training) {
                      in.push_back(c.output(3));
                      in.push_back(c.output(4));
                  } else {
                      in.push_back(c.input(3));
                      in.push_back(c.input(4));
                  }
                  if (version == 3) in.push_back(c.output(5));
                  auto res = b.op_n(grad_op, in, a);
                  if (c.wants(0)) out[0] = res[0];
                  if (c.wants(1)) out[1] = res[1];
                  if (c.wants(2)) out[2] = res[2];
                  if (!training && (c.wants(3) || c.wants(4))) {
                      // y = scale * (x - mean) / sqrt(var + eps) + offset with the given statistics:
                      // d/dmean = -doffset * scale / sqrt(var + eps), d/dvar = -scale * dscale / (2 (var + eps)).
                      endpoint scale = c.input(1), var = c.input(4);
                      endpoint var_eps = b.op("AddV2", {var, b.scalar_as(c.dtype_of(var), c.attr("epsilon").f())});
                      if (c.wants(3)) out[3] = neg(b, b.op("Mul", {b.op("Mul", {res[2], scale}), b.op("Rsqrt", {var_eps})}));
                      if (c.wants(4)) {
                          endpoint half = b.scalar_as(c.dtype_of(var), -0.5);
                          out[4] = b.op("RealDiv", {b.op("Mul", {half, b.op("Mul", {scale, res[1]})}), var_eps});
                      }
                  }
                  return out;
              });
    }

    r.add("Softmax", [](grad_context& c) -> grad_list {
        grad_list out(1);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        endpoint y = c.output(0);
        endpoint sum = b.op("Sum", {b.op("Mul", {*g, y}), int_scalar(b, -1)}, {{"keep_dims", true}});
        out[0] = b.op("Mul", {b.op("Sub", {*g, sum}), y});
        return out;
    });
    r.add("LogSoftmax", [](grad_context& c) -> grad_list {
        grad_list out(1);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        endpoint sm = b.op("Exp", {c.output(0)});
        endpoint sum = b.op("Sum", {*g, int_scalar(b, -1)}, {{"keep_dims", true}});
        out[0] = b.op("Sub", {*g, b.op("Mul", {sum, sm})});
        return out;
    });
    // (loss, backprop) = xent(logits, labels): d loss/d logits = backprop = softmax - labels,
    // d loss/d labels = -log_softmax(logits); a gradient on backprop adds the softmax Jacobian term.
    r.add("SoftmaxCrossEntropyWithLogits", [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& gl = c.grad(0);
        auto& gg = c.grad(1);
        const auto& b = c.b();
        endpoint logits = c.input(0);
        if (c.wants(0)) {
            std::optional<endpoint> g;
            if (gl) g = row_mul(b, *gl, c.output(1));
            if (gg) {
                endpoint t = xent_grad_grad(b, *gg, logits);
                g = g ? b.op("AddV2", {*g, t}) : t;
            }
            out[0] = g;
        }
        if (c.wants(1) && gl) out[1] = row_mul(b, *gl, neg(b, b.op("LogSoftmax", {logits})));
        if (c.wants(1) && gg) {
            // d backprop / d labels = -I.
            endpoint t = neg(b, *gg);
            out[1] = out[1] ? b.op("AddV2", {*out[1], t}) : t;
        }
        return out;
    });
    r.add("SparseSoftmaxCrossEntropyWithLogits", [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& gl = c.grad(0);
        auto& gg = c.grad(1);
        const auto& b = c.b();
        std::optional<endpoint> g;
        if (gl) g = row_mul(b, *gl, c.output(1));
        if (gg) {
            endpoint t = xent_grad_grad(b, *gg, c.input(0));
            g = g ? b.op("AddV2", {*g, t}) : t;
        }
        out[0] = g;
        return out;
    });
    // RandomGamma (TF's random_grad.py): d alpha = Sum(grad * RandomGammaGrad(alpha reshaped to
    // [1] * n ++ Shape(alpha), sample), axes 0..n-1), n = Size(shape), the sample dimensions.
    r.add("RandomGamma", [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g || !c.wants(1)) return out;
        const auto& b = c.b();
        endpoint n = b.op("Size", {c.input(0)});
        endpoint ones = b.op("Fill", {b.op("Reshape", {n, ints(b, {1})}), int_scalar(b, 1)});
        endpoint alpha = b.op("Reshape", {c.input(1), b.op("ConcatV2", {ones, shape_of(b, c.input(1)), int_scalar(b, 0)})});
        endpoint partial = b.op("RandomGammaGrad", {alpha, c.output(0)});
        out[1] = b.op("Sum", {mul(b, *g, partial), b.op("Range", {int_scalar(b, 0), n, int_scalar(b, 1)})});
        return out;
    });
}

}  // namespace graft::autodiff::rules
