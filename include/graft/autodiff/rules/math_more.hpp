// graft/autodiff/rules/math_more.hpp — gradients of the math_more family (graft/exec/cpu_kernels/math_more.hpp):
// hyperbolic and inverse trigonometric functions, special functions, the no-NaN divisions, scans,
// AccumulateNV2, LinSpace and fake quantization. Formulas of TF's math_grad.py / array_grad.py; the
// integer, bit and test ops are declared not differentiable.
#pragma once

#include <cmath>

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

namespace math_more_detail {
using E = endpoint;
using B = const graph_builder&;

/// A rule of one input: f(c, b, g) -> dx, called only when the gradient is there.
template <class F>
gradient_fn unary_rule(F f) {
    return [f](grad_context& c) {
        grad_list out(static_cast<std::size_t>(c.num_inputs()));
        if (auto& g = c.grad(0)) out[0] = f(c, c.b(), *g);
        return out;
    };
}
/// A broadcasting binary rule: f(c, b, g) -> (full-shape dx or nullopt, full-shape dy or nullopt),
/// each summed back to its input's shape.
template <class F>
gradient_fn binary_rule(F f) {
    return [f](grad_context& c) -> grad_list {
        auto& g = c.grad(0);
        if (!g) return grad_list(static_cast<std::size_t>(c.num_inputs()));
        auto [gx, gy] = f(c, c.b(), *g);
        return binary_grads(c, gx, gy);
    };
}
inline E plus(B b, const E& x, const E& y) { return b.op("AddV2", {x, y}); }
inline E minus(B b, const E& x, const E& y) { return b.op("Sub", {x, y}); }
inline E over(B b, const E& x, const E& y) { return b.op("RealDiv", {x, y}); }
inline E recip(B b, const E& x) { return b.op("Reciprocal", {x}); }
/// 1 - x^2 (the Asin/Acos/Atanh denominators).
inline E one_minus_square(grad_context& c, B b, const E& x) {
    return minus(b, scalar_like(c, x, 1.0), b.op("Square", {x}));
}
/// Cast(x != 0, dtype of x): the mask the Xdivy/Xlogy rules use.
inline E not_zero(grad_context& c, B b, const E& x) {
    return b.op("Cast", {b.op("NotEqual", {x, scalar_like(c, x, 0.0)})}, {{"DstT", c.dtype_of(x)}});
}
/// The scan attributes of a Cumsum/Cumprod node, reverse flipped when `flip`.
inline attr_list scan_attrs(grad_context& c, bool flip) {
    const bool exclusive = c.attr("exclusive").b();
    const bool reverse = c.attr("reverse").b();
    return {{"exclusive", exclusive}, {"reverse", flip ? !reverse : reverse}};
}
using grad_pair = std::pair<std::optional<E>, std::optional<E>>;
}  // namespace math_more_detail

inline void register_math_more_unary(gradient_registry& r) {
    using namespace math_more_detail;
    r.add("Cosh", unary_rule([](grad_context& c, B b, E g) { return mul(b, g, b.op("Sinh", {c.input(0)})); }));
    r.add("Sinh", unary_rule([](grad_context& c, B b, E g) { return mul(b, g, b.op("Cosh", {c.input(0)})); }));
    r.add("Tan", unary_rule([](grad_context& c, B b, E g) {
        return mul(b, b.op("Square", {recip(b, b.op("Cos", {c.input(0)}))}), g);
    }));
    r.add("Asin", unary_rule([](grad_context& c, B b, E g) {
        return mul(b, g, recip(b, b.op("Sqrt", {one_minus_square(c, b, c.input(0))})));
    }));
    r.add("Acos", unary_rule([](grad_context& c, B b, E g) {
        return mul(b, neg(b, g), recip(b, b.op("Sqrt", {one_minus_square(c, b, c.input(0))})));
    }));
    r.add("Atan", unary_rule([](grad_context& c, B b, E g) {
        return mul(b, g, recip(b, plus(b, scalar_like(c, c.input(0), 1.0), b.op("Square", {c.input(0)}))));
    }));
    r.add("Asinh", unary_rule([](grad_context& c, B b, E g) { return over(b, g, b.op("Cosh", {c.output(0)})); }));
    r.add("Acosh", unary_rule([](grad_context& c, B b, E g) { return over(b, g, b.op("Sinh", {c.output(0)})); }));
    r.add("Atanh", unary_rule([](grad_context& c, B b, E g) {
        return mul(b, g, recip(b, one_minus_square(c, b, c.input(0))));
    }));
    r.add("Expm1", unary_rule([](grad_context& c, B b, E g) { return mul(b, g, b.op("Exp", {c.input(0)})); }));
    r.add("Softsign", unary_rule([](grad_context& c, B b, E g) { return b.op("SoftsignGrad", {g, c.input(0)}); }));
    r.add("Lgamma", unary_rule([](grad_context& c, B b, E g) { return mul(b, g, b.op("Digamma", {c.input(0)})); }));
    r.add("Digamma", unary_rule([](grad_context& c, B b, E g) {
        return mul(b, g, b.op("Polygamma", {scalar_like(c, c.input(0), 1.0), c.input(0)}));
    }));
    r.add("Erfc", unary_rule([](grad_context& c, B b, E g) {
        E k = scalar_like(c, c.input(0), -2.0 / std::sqrt(3.14159265358979323846));
        return mul(b, mul(b, g, k), b.op("Exp", {neg(b, b.op("Square", {c.input(0)}))}));
    }));
    for (const char* op : {"IsNan", "IsInf", "IsFinite", "Invert", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
                           "LeftShift", "RightShift", "TruncateDiv", "ApproximateEqual"}) {
        r.add_none(op);
    }
}

inline void register_math_more_binary(gradient_registry& r) {
    using namespace math_more_detail;
    r.add("Atan2", binary_rule([](grad_context& c, B b, E g) -> grad_pair {
        E y = c.input(0), x = c.input(1);
        E gi = over(b, g, plus(b, b.op("Square", {x}), b.op("Square", {y})));
        return {mul(b, x, gi), mul(b, neg(b, y), gi)};
    }));
    r.add("Xdivy", binary_rule([](grad_context& c, B b, E g) -> grad_pair {
        E x = c.input(0), y = c.input(1);
        return {mul(b, g, b.op("Xdivy", {not_zero(c, b, x), y})),
                mul(b, g, b.op("Xdivy", {neg(b, x), b.op("Square", {y})}))};
    }));
    r.add("Xlogy", binary_rule([](grad_context& c, B b, E g) -> grad_pair {
        E x = c.input(0), y = c.input(1);
        return {mul(b, g, b.op("Xlogy", {not_zero(c, b, x), y})), mul(b, g, b.op("Xdivy", {x, y}))};
    }));
    r.add("Xlog1py", binary_rule([](grad_context& c, B b, E g) -> grad_pair {
        E x = c.input(0), y = c.input(1);
        return {mul(b, g, b.op("Xlog1py", {not_zero(c, b, x), y})),
                mul(b, g, b.op("Xdivy", {x, plus(b, y, scalar_like(c, y, 1.0))}))};
    }));
    r.add("DivNoNan", binary_rule([](grad_context& c, B b, E g) -> grad_pair {
        E x = c.input(0), y = c.input(1);
        return {b.op("DivNoNan", {g, y}), mul(b, g, b.op("DivNoNan", {b.op("DivNoNan", {neg(b, x), y}), y}))};
    }));
    r.add("MulNoNan", binary_rule([](grad_context& c, B b, E g) -> grad_pair {
        return {b.op("MulNoNan", {g, c.input(1)}), b.op("MulNoNan", {c.input(0), g})};
    }));
    // x - trunc(x / y) * y: d/dx = 1, d/dy = -trunc(x / y) (FloorMod's rule with truncation)
    auto trunc_mod = binary_rule([](grad_context& c, B b, E g) -> grad_pair {
        return {g, mul(b, g, neg(b, b.op("TruncateDiv", {c.input(0), c.input(1)})))};
    });
    r.add("Mod", trunc_mod);
    r.add("TruncateMod", trunc_mod);
    // SoftsignGrad(g, f) = g / (1 + |f|)^2: d/dg = SoftsignGrad(., f), d/df = -2 g sign(f) / (1 + |f|)^3
    r.add("SoftsignGrad", [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& gg = c.grad(0);
        if (!gg) return out;
        const auto& b = c.b();
        E g = c.input(0), f = c.input(1);
        if (c.wants(0)) out[0] = b.op("SoftsignGrad", {*gg, f});
        if (c.wants(1)) {
            E d = plus(b, scalar_like(c, f, 1.0), b.op("Abs", {f}));
            E num = mul(b, mul(b, *gg, g), mul(b, b.op("Sign", {f}), scalar_like(c, f, -2.0)));
            out[1] = over(b, num, mul(b, d, b.op("Square", {d})));
        }
        return out;
    });
    // Igamma: d/da is IgammaGradA, d/dx = exp(-x + (a - 1) log x - lgamma(a)); Igammac is 1 - Igamma
    auto igamma = [](bool complement) {
        return binary_rule([complement](grad_context& c, B b, E g) -> grad_pair {
            E a = c.input(0), x = c.input(1);
            E pa = b.op("IgammaGradA", {a, x});
            E px = b.op("Exp", {minus(b, plus(b, neg(b, x), mul(b, minus(b, a, scalar_like(c, a, 1.0)), b.op("Log", {x}))),
                                   b.op("Lgamma", {a}))});
            E ga = mul(b, pa, g), gx = mul(b, px, g);
            if (complement) return {neg(b, ga), neg(b, gx)};
            return {ga, gx};
        });
    };
    r.add("Igamma", igamma(false));
    r.add("Igammac", igamma(true));
    r.add("Polygamma", binary_rule([](grad_context& c, B b, E g) -> grad_pair {
        E n = c.input(0), x = c.input(1);
        return {std::nullopt, mul(b, b.op("Polygamma", {plus(b, n, scalar_like(c, n, 1.0)), x}), g)};
    }));
    r.add("Zeta", binary_rule([](grad_context& c, B b, E g) -> grad_pair {
        E x = c.input(0), q = c.input(1);
        E pq = mul(b, neg(b, x), b.op("Zeta", {plus(b, x, scalar_like(c, x, 1.0)), q}));
        return {std::nullopt, mul(b, pq, g)};
    }));
    // Betainc: d/dx = x^(a-1) (1-x)^(b-1) / B(a, b); none for a and b (as TF)
    r.add("Betainc", [](grad_context& c) -> grad_list {
        grad_list out(3);
        auto& g = c.grad(0);
        if (!g || !c.wants(2)) return out;
        const auto& b = c.b();
        E pa = c.input(0), pb = c.input(1), x = c.input(2);
        E log_beta = minus(b, plus(b, b.op("Lgamma", {pa}), b.op("Lgamma", {pb})), b.op("Lgamma", {plus(b, pa, pb)}));
        E one = scalar_like(c, x, 1.0);
        E px = b.op("Exp", {minus(b, plus(b, b.op("Xlog1py", {minus(b, pb, one), neg(b, x)}), b.op("Xlogy", {minus(b, pa, one), x})),
                                log_beta)});
        E full = mul(b, px, *g);
        out[2] = unbroadcast(b, full, x, full, true);
        return out;
    });
}

inline void register_math_more_other(gradient_registry& r) {
    using namespace math_more_detail;
    r.add("Cumsum", [](grad_context& c) -> grad_list {
        grad_list out(2);
        if (auto& g = c.grad(0)) out[0] = c.b().op("Cumsum", {*g, c.input(1)}, scan_attrs(c, true));
        return out;
    });
    // TF's rule: cumsum(cumprod(x) * g, reversed) / x (undefined where x is 0, as in TF)
    r.add("Cumprod", [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        E prod = b.op("Cumprod", {c.input(0), c.input(1)}, scan_attrs(c, false));
        E s = b.op("Cumsum", {mul(b, prod, *g), c.input(1)}, scan_attrs(c, true));
        out[0] = over(b, s, c.input(0));
        return out;
    });
    // TF's rule: the incoming gradient split by sign and taken to log space, scanned the other way
    r.add("CumulativeLogsumexp", [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        E x = c.input(0), y = c.output(0);
        auto part = [&](const E& signed_g) {
            E log_g = b.op("Log", {b.op("Relu", {signed_g})});  // -inf where that sign is absent
            E scan = b.op("CumulativeLogsumexp", {minus(b, log_g, y), c.input(1)}, scan_attrs(c, true));
            return b.op("Exp", {plus(b, scan, x)});
        };
        out[0] = minus(b, part(*g), part(neg(b, *g)));
        return out;
    });
    r.add("AccumulateNV2", [](grad_context& c) {
        return grad_list(static_cast<std::size_t>(c.num_inputs()), c.grad(0));
    });
    // out[i] = start + (stop - start) * t[i], t = LinSpace(0, 1, num) (t = [0] when num is 1)
    r.add("LinSpace", [](grad_context& c) -> grad_list {
        grad_list out(3);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        E start = c.input(0);
        E t = b.op("LinSpace", {scalar_like(c, start, 0.0), scalar_like(c, start, 1.0), c.input(2)});
        E axis = int_scalar(b, 0);
        E gstop = b.op("Sum", {mul(b, *g, t), axis});
        if (c.wants(0)) out[0] = minus(b, b.op("Sum", {*g, axis}), gstop);
        if (c.wants(1)) out[1] = gstop;
        return out;
    });
    r.add("FakeQuantWithMinMaxArgs", [](grad_context& c) -> grad_list {
        grad_list out(1);
        auto& g = c.grad(0);
        if (!g) return out;
        attr_list a;
        for (const char* n : {"min", "max", "num_bits", "narrow_range"}) c.copy_attr(a, n);
        out[0] = c.b().op("FakeQuantWithMinMaxArgsGradient", {*g, c.input(0)}, a);
        return out;
    });
    auto vars_rule = [](const char* grad_op) {
        return [grad_op](grad_context& c) -> grad_list {
            grad_list out(3);
            auto& g = c.grad(0);
            if (!g) return out;
            attr_list a;
            for (const char* n : {"num_bits", "narrow_range"}) c.copy_attr(a, n);
            auto r3 = c.b().op_n(grad_op, {*g, c.input(0), c.input(1), c.input(2)}, a);
            for (std::size_t i = 0; i < 3; ++i) out[i] = r3[i];
            return out;
        };
    };
    r.add("FakeQuantWithMinMaxVars", vars_rule("FakeQuantWithMinMaxVarsGradient"));
    r.add("FakeQuantWithMinMaxVarsPerChannel", vars_rule("FakeQuantWithMinMaxVarsPerChannelGradient"));
}

inline void register_math_more(gradient_registry& r) {
    register_math_more_unary(r);
    register_math_more_binary(r);
    register_math_more_other(r);
}

}  // namespace graft::autodiff::rules
