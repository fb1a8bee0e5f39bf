// graft/autodiff/rules/math.hpp — gradients of the elementwise ops (graft/ops/elementwise.hpp):
// unary math, activations, broadcasting binary ops and the activation-gradient ops themselves
// (second order). Formulas of TF's math_grad.py / nn_grad.py.
#pragma once

#include <cmath>

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

namespace math_detail {
/// A rule of one input: f(c, g) -> dx, called only when the gradient is there.
template <class F>
gradient_fn unary(F f) {
    return [f](grad_context& c) {
        grad_list out(static_cast<std::size_t>(c.num_inputs()));
        if (auto& g = c.grad(0)) out[0] = f(c, c.b(), *g);
        return out;
    };
}
}  // namespace math_detail

inline void register_math_unary(gradient_registry& r) {
    using math_detail::unary;
    using E = endpoint;
    using B = const graph_builder&;
    r.add("Neg", unary([](grad_context&, B b, E g) { return neg(b, g); }));
    r.add("Abs", unary([](grad_context& c, B b, E g) { return mul(b, g, b.op("Sign", {c.input(0)})); }));
    r.add("Sign", unary([](grad_context& c, B b, E) { return b.op("ZerosLike", {c.input(0)}); }));
    r.add("Square", unary([](grad_context& c, B b, E g) {
        return mul(b, g, mul(b, c.input(0), scalar_like(c, c.input(0), 2.0)));
    }));
    r.add("Sqrt", unary([](grad_context& c, B b, E g) { return b.op("SqrtGrad", {c.output(0), g}); }));
    r.add("Rsqrt", unary([](grad_context& c, B b, E g) { return b.op("RsqrtGrad", {c.output(0), g}); }));
    auto recip = unary([](grad_context& c, B b, E g) { return b.op("ReciprocalGrad", {c.output(0), g}); });
    r.add("Reciprocal", recip);
    r.add("Inv", recip);
    r.add("Exp", unary([](grad_context& c, B b, E g) { return mul(b, g, c.output(0)); }));
    r.add("Log", unary([](grad_context& c, B b, E g) { return mul(b, g, b.op("Reciprocal", {c.input(0)})); }));
    r.add("Log1p", unary([](grad_context& c, B b, E g) {
        return mul(b, g, b.op("Reciprocal", {b.op("AddV2", {scalar_like(c, c.input(0), 1.0), c.input(0)})}));
    }));
    r.add("Tanh", unary([](grad_context& c, B b, E g) { return b.op("TanhGrad", {c.output(0), g}); }));
    r.add("Sigmoid", unary([](grad_context& c, B b, E g) { return b.op("SigmoidGrad", {c.output(0), g}); }));
    r.add("Relu", unary([](grad_context& c, B b, E g) { return b.op("ReluGrad", {g, c.output(0)}); }));
    r.add("Relu6", unary([](grad_context& c, B b, E g) { return b.op("Relu6Grad", {g, c.input(0)}); }));
    r.add("Elu", unary([](grad_context& c, B b, E g) { return b.op("EluGrad", {g, c.output(0)}); }));
    r.add("Selu", unary([](grad_context& c, B b, E g) { return b.op("SeluGrad", {g, c.output(0)}); }));
    r.add("Softplus", unary([](grad_context& c, B b, E g) { return b.op("SoftplusGrad", {g, c.input(0)}); }));
    r.add("LeakyRelu", unary([](grad_context& c, B b, E g) {
        attr_list a;
        c.copy_attr(a, "alpha");
        return b.op("LeakyReluGrad", {g, c.input(0)}, a);
    }));
    r.add("Sin", unary([](grad_context& c, B b, E g) { return mul(b, g, b.op("Cos", {c.input(0)})); }));
    r.add("Cos", unary([](grad_context& c, B b, E g) { return mul(b, g, neg(b, b.op("Sin", {c.input(0)}))); }));
    r.add("Erf", unary([](grad_context& c, B b, E g) {
        // 2/sqrt(pi) * exp(-x^2)
        E two_over_root_pi = scalar_like(c, c.input(0), 2.0 / std::sqrt(3.14159265358979323846));
        return mul(b, g, mul(b, two_over_root_pi, b.op("Exp", {neg(b, b.op("Square", {c.input(0)}))})));
    }));
}

inline void register_math_binary(gradient_registry& r) {
    auto add_rule = [](grad_context& c) -> grad_list {
        auto& g = c.grad(0);
        if (!g) return grad_list(2);
        return binary_grads(c, g, g);
    };
    r.add("Add", add_rule);
    r.add("AddV2", add_rule);
    r.add("Sub", [](grad_context& c) -> grad_list {
        auto& g = c.grad(0);
        if (!g) return grad_list(2);
        return binary_grads(c, g, c.wants(1) ? std::optional<endpoint>(neg(c.b(), *g)) : std::nullopt);
    });
    r.add("Mul", [](grad_context& c) -> grad_list {
        auto& g = c.grad(0);
        if (!g) return grad_list(2);
        auto& b = c.b();
        std::optional<endpoint> gx, gy;
        if (c.wants(0)) gx = mul(b, *g, c.input(1));
        if (c.wants(1)) gy = mul(b, c.input(0), *g);
        return binary_grads(c, gx, gy);
    });
    auto div_rule = [](grad_context& c) -> grad_list {
        auto& g = c.grad(0);
        if (!g) return grad_list(2);
        auto& b = c.b();
        endpoint x = c.input(0), y = c.input(1);
        std::optional<endpoint> gx, gy;
        if (c.wants(0)) gx = b.op("RealDiv", {*g, y});
        if (c.wants(1)) gy = mul(b, *g, b.op("RealDiv", {b.op("RealDiv", {neg(b, x), y}), y}));
        return binary_grads(c, gx, gy);
    };
    r.add("Div", div_rule);
    r.add("RealDiv", div_rule);
    r.add("FloorMod", [](grad_context& c) -> grad_list {
        auto& g = c.grad(0);
        if (!g) return grad_list(2);
        auto& b = c.b();
        std::optional<endpoint> gy;
        if (c.wants(1)) gy = mul(b, neg(b, *g), b.op("FloorDiv", {c.input(0), c.input(1)}));
        return binary_grads(c, g, gy);
    });
    auto minmax = [](const char* cmp) {
        return [cmp](grad_context& c) -> grad_list {
            auto& g = c.grad(0);
            if (!g) return grad_list(2);
            auto& b = c.b();
            endpoint xmask = b.op(cmp, {c.input(0), c.input(1)});
            endpoint zeros = b.op("ZerosLike", {*g});
            std::optional<endpoint> gx, gy;
            if (c.wants(0)) gx = b.op("SelectV2", {xmask, *g, zeros});
            if (c.wants(1)) gy = b.op("SelectV2", {xmask, zeros, *g});
            return binary_grads(c, gx, gy);
        };
    };
    r.add("Maximum", minmax("GreaterEqual"));
    r.add("Minimum", minmax("LessEqual"));
    r.add("SquaredDifference", [](grad_context& c) -> grad_list {
        auto& g = c.grad(0);
        if (!g) return grad_list(2);
        auto& b = c.b();
        endpoint x = c.input(0), y = c.input(1);
        endpoint xg = mul(b, scalar_like(c, x, 2.0), mul(b, *g, b.op("Sub", {x, y})));
        return binary_grads(c, xg, c.wants(1) ? std::optional<endpoint>(neg(b, xg)) : std::nullopt);
    });
    r.add("Pow", [](grad_context& c) -> grad_list {
        auto& g = c.grad(0);
        if (!g) return grad_list(2);
        auto& b = c.b();
        endpoint x = c.input(0), y = c.input(1), z = c.output(0);
        std::optional<endpoint> gx, gy;
        if (c.wants(0)) {
            endpoint ym1 = b.op("Sub", {y, scalar_like(c, y, 1.0)});
            gx = mul(b, *g, mul(b, y, b.op("Pow", {x, ym1})));
        }
        if (c.wants(1)) {
            // log(x) where x > 0, else 0 (TF's choice for the gradient w.r.t. the exponent).
            endpoint mask = b.op("Greater", {x, scalar_like(c, x, 0.0)});
            endpoint safe_x = b.op("SelectV2", {mask, x, b.op("OnesLike", {x})});
            endpoint log_x = b.op("SelectV2", {mask, b.op("Log", {safe_x}), b.op("ZerosLike", {x})});
            gy = mul(b, *g, mul(b, z, log_x));
        }
        return binary_grads(c, gx, gy);
    });
}

/// The rule of an activation-gradient op f(y, dy) that is linear in dy (SigmoidGrad, TanhGrad,
/// ...): d/d dy is the same op applied to the incoming grad, d/dy is dfdy(c, b, g, y, dy).
template <class DfDy>
auto linear_in_dy(DfDy dfdy) {
    return [dfdy](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        auto& b = c.b();
        endpoint y = c.input(0), dy = c.input(1);
        if (c.wants(0)) out[0] = dfdy(c, b, *g, y, dy);
        if (c.wants(1)) out[1] = b.op(c.op().op, {y, *g});
        return out;
    };
}

/// Gradients of the activation-gradient ops (second order), as TF's nn_grad.py / math_grad.py.
inline void register_math_grad_grads(gradient_registry& r) {
    // (gradients, features) -> backprops: d/d gradients = same op on the incoming grad; d/d features = 0.
    auto piecewise_linear = [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        auto& b = c.b();
        attr_list a;
        c.copy_attr(a, "alpha");
        if (c.wants(0)) out[0] = b.op(c.op().op, {*g, c.input(1)}, c.op().op == "LeakyReluGrad" ? a : attr_list{});
        if (c.wants(1)) out[1] = b.op("ZerosLike", {c.input(1)});
        return out;
    };
    r.add("ReluGrad", piecewise_linear);
    r.add("Relu6Grad", piecewise_linear);
    r.add("LeakyReluGrad", piecewise_linear);
    // EluGrad(gradients, outputs) / SeluGrad: d/d outputs = where(outputs < 0, grad * gradients, 0)
    // (Elu: d(y+1)/dx = y+1 below zero; Selu likewise with its scale folded in).
    auto exp_linear = [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        auto& b = c.b();
        endpoint y = c.input(1);
        if (c.wants(0)) out[0] = b.op(c.op().op, {*g, y});
        if (c.wants(1)) {
            endpoint neg_mask = b.op("Less", {y, scalar_like(c, y, 0.0)});
            out[1] = b.op("SelectV2", {neg_mask, mul(b, *g, c.input(0)), b.op("ZerosLike", {y})});
        }
        return out;
    };
    r.add("EluGrad", exp_linear);
    r.add("SeluGrad", exp_linear);
    r.add("SoftplusGrad", [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        auto& b = c.b();
        endpoint dy = c.input(0), x = c.input(1);
        if (c.wants(0)) out[0] = b.op("SoftplusGrad", {*g, x});
        if (c.wants(1)) {
            endpoint denom = b.op("AddV2", {b.op("AddV2", {b.op("Exp", {neg(b, x)}), scalar_like(c, x, 2.0)}),
                                            b.op("Exp", {x})});
            out[1] = b.op("RealDiv", {mul(b, *g, dy), denom});
        }
        return out;
    });
    // SigmoidGrad(y, dy) = dy * y * (1 - y)
    r.add("SigmoidGrad", linear_in_dy([](grad_context& c, const graph_builder& b, const endpoint& g, const endpoint& y,
                                         const endpoint& dy) {
        endpoint gb = mul(b, g, dy);
        return b.op("Sub", {gb, mul(b, scalar_like(c, y, 2.0), mul(b, gb, y))});
    }));
    // TanhGrad(y, dy) = dy * (1 - y^2) and ReciprocalGrad(y, dy) = -dy * y^2: d/dy = -2 g dy y.
    auto minus_two_g_dy_y = [](grad_context& c, const graph_builder& b, const endpoint& g, const endpoint& y,
                               const endpoint& dy) { return mul(b, mul(b, g, scalar_like(c, y, -2.0)), mul(b, dy, y)); };
    r.add("TanhGrad", linear_in_dy(minus_two_g_dy_y));
    // RsqrtGrad(y, dy) = -0.5 * dy * y^3
    r.add("RsqrtGrad", linear_in_dy([](grad_context& c, const graph_builder& b, const endpoint& g, const endpoint& y,
                                       const endpoint& dy) {
        return mul(b, mul(b, scalar_like(c, y, -1.5), mul(b, g, dy)), b.op("Square", {y}));
    }));
    // SqrtGrad(y, dy) = 0.5 * dy / y
    r.add("SqrtGrad", [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        auto& b = c.b();
        endpoint y = c.input(0);
        endpoint ga = b.op("RealDiv", {*g, y});
        if (c.wants(0)) out[0] = mul(b, neg(b, ga), c.output(0));
        if (c.wants(1)) out[1] = mul(b, scalar_like(c, y, 0.5), ga);
        return out;
    });
    r.add("ReciprocalGrad", linear_in_dy(minus_two_g_dy_y));
    r.add("InvGrad", linear_in_dy(minus_two_g_dy_y));
}

inline void register_math(gradient_registry& r) {
    register_math_unary(r);
    register_math_binary(r);
    register_math_grad_grads(r);
}

}  // namespace graft::autodiff::rules
