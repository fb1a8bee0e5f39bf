// graft/autodiff/rules/support.hpp — small graph-building helpers the gradient rules share
// (TF's broadcast reduction, shape constants, constant folding of Const inputs).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "graft/autodiff/rule.hpp"

namespace graft::autodiff::rules {

/// Shape(e) as int32.
inline endpoint shape_of(const graph_builder& b, const endpoint& e) { return b.op("Shape", {e}); }
/// An int32 vector constant.
inline endpoint ints(const graph_builder& b, std::vector<std::int32_t> v) {
    return b.constant(tensor::from_vector<std::int32_t>(v));
}
/// An int32 scalar constant.
inline endpoint int_scalar(const graph_builder& b, std::int32_t v) { return b.constant(tensor::scalar_of(v)); }
/// A scalar constant of e's dtype.
inline endpoint scalar_like(const grad_context& c, const endpoint& e, double v) {
    return c.b().scalar_as(c.dtype_of(e), v);
}
/// a * b, a - b, ... (one node each).
inline endpoint mul(const graph_builder& b, const endpoint& x, const endpoint& y) { return b.op("Mul", {x, y}); }
inline endpoint neg(const graph_builder& b, const endpoint& x) { return b.op("Neg", {x}); }

/// Sums `g` (the gradient of a broadcast result) back to the shape of `x` the way TF does:
/// Reshape(Sum(g, BroadcastGradientArgs(Shape(x), Shape(other))[k]), Shape(x)). `x_first` says
/// whether x is the op's first operand (k = 0) or its second (k = 1).
inline endpoint unbroadcast(const graph_builder& b, const endpoint& g, const endpoint& x, const endpoint& other,
                            bool x_first) {
    endpoint sx = shape_of(b, x);
    endpoint so = shape_of(b, other);
    auto r = x_first ? b.op_n("BroadcastGradientArgs", {sx, so}) : b.op_n("BroadcastGradientArgs", {so, sx});
    endpoint axes = r[x_first ? 0 : 1];
    return b.op("Reshape", {b.op("Sum", {g, axes}), sx});
}

/// The gradients of a broadcasting binary op with inputs (x, y) given the full-shape gradients,
/// each summed back to its operand's shape; only for the inputs c.wants().
inline grad_list binary_grads(const grad_context& c, const std::optional<endpoint>& gx,
                              const std::optional<endpoint>& gy) {
    const auto& b = c.b();
    endpoint x = c.input(0), y = c.input(1);
    endpoint sx = shape_of(b, x), sy = shape_of(b, y);
    auto r = b.op_n("BroadcastGradientArgs", {sx, sy});
    grad_list out(2);
    if (gx && c.wants(0)) out[0] = b.op("Reshape", {b.op("Sum", {*gx, r[0]}), sx});
    if (gy && c.wants(1)) out[1] = b.op("Reshape", {b.op("Sum", {*gy, r[1]}), sy});
    return out;
}

/// The value of `e` when its node is a Const (through Identity chains); nullopt otherwise.
inline std::optional<tensor> constant_value(const graph& g, endpoint e) {
    for (int hop = 0; hop < 16; ++hop) {
        const node* n = g.find(e.node);
        if (!n) return std::nullopt;
        if (n->op == "Const") {
            if (auto* v = n->attr("value")) return v->tensor().tensor();
            return std::nullopt;
        }
        if ((n->op == "Identity" || n->op == "Snapshot") && !n->inputs.empty()) {
            e = n->inputs[0];
            continue;
        }
        return std::nullopt;
    }
    return std::nullopt;
}

/// The int values of a constant input, or nullopt when it is not a Const.
inline std::optional<std::vector<std::int64_t>> constant_ints(const graph& g, const endpoint& e) {
    auto t = constant_value(g, e);
    if (!t) return std::nullopt;
    std::vector<std::int64_t> v(static_cast<std::size_t>(t->num_elements()));
    if (base_type(t->type()) == dtype::int32) {
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = t->data<std::int32_t>()[i];
    } else if (base_type(t->type()) == dtype::int64) {
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = t->data<std::int64_t>()[i];
    } else {
        return std::nullopt;
    }
    return v;
}

/// The shape `input_shape` would have after reducing `axes` with keep_dims (TF's reduced_shape):
/// 1 at the reduced axes. Built as DynamicStitch([range(rank), axes mod rank], [shape, ones]).
inline endpoint reduced_shape(const graph_builder& b, const endpoint& input_shape, const endpoint& axes_in) {
    endpoint axes = b.op("Reshape", {axes_in, ints(b, {-1})});
    if (b.dtype_of(axes) != dtype::int32) axes = b.op("Cast", {axes}, {{"DstT", dtype::int32}});
    endpoint rank = b.op("Size", {input_shape});
    // (rank 0 has no axes; the max keeps FloorMod's divisor non-zero for its empty input)
    endpoint norm = b.op("FloorMod", {b.op("AddV2", {axes, rank}), b.op("Maximum", {rank, int_scalar(b, 1)})});
    endpoint range = b.op("Range", {int_scalar(b, 0), rank, int_scalar(b, 1)});
    endpoint ones = b.op("Fill", {shape_of(b, norm), int_scalar(b, 1)});
    return b.op("DynamicStitch", {range, norm, input_shape, ones}, {{"N", std::int64_t{2}}});
}

}  // namespace graft::autodiff::rules
