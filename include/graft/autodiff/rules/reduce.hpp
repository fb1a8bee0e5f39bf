// graft/autodiff/rules/reduce.hpp — gradients of the reductions (graft/ops/reduce.hpp): Sum, Mean,
// Max, Min, Prod and L2Loss, as TF's math_grad.py builds them.
#pragma once

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

namespace reduce_detail {
/// The incoming gradient reshaped to the input's rank with 1s at the reduced axes.
struct kept {
    endpoint input_shape;
    endpoint shape;  // output shape with keep_dims
    endpoint grad;   // Reshape(grad, shape)
};
inline kept keep_dims(const grad_context& c, const endpoint& g) {
    const auto& b = c.b();
    kept k;
    k.input_shape = shape_of(b, c.input(0));
    k.shape = reduced_shape(b, k.input_shape, c.input(1));
    k.grad = b.op("Reshape", {g, k.shape});
    return k;
}
/// The gradient of Sum: the kept-dims gradient tiled over the reduced axes.
inline endpoint sum_grad(const grad_context& c, const endpoint& g) {
    const auto& b = c.b();
    kept k = keep_dims(c, g);
    endpoint tile = b.op("FloorDiv", {k.input_shape, b.op("Maximum", {k.shape, int_scalar(b, 1)})});
    return b.op("Tile", {k.grad, tile});
}
}  // namespace reduce_detail

inline void register_reduce(gradient_registry& r) {
    r.add("Sum", [](grad_context& c) -> grad_list {
        grad_list out(2);
        if (auto& g = c.grad(0)) out[0] = reduce_detail::sum_grad(c, *g);
        return out;
    });
    r.add("Mean", [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        endpoint sum = reduce_detail::sum_grad(c, *g);
        endpoint factor = b.op("FloorDiv", {b.op("Size", {c.input(0)}),
                                            b.op("Maximum", {b.op("Size", {c.output(0)}), int_scalar(b, 1)})});
        out[0] = b.op("RealDiv", {sum, b.op("Cast", {factor}, {{"DstT", c.dtype_of(c.input(0))}})});
        return out;
    });
    // Max/Min: the gradient goes to the extremal entries, split evenly between ties.
    auto min_max = [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        auto k = reduce_detail::keep_dims(c, *g);
        endpoint y = b.op("Reshape", {c.output(0), k.shape});
        endpoint ind = b.op("Cast", {b.op("Equal", {y, c.input(0)})}, {{"DstT", c.dtype_of(c.input(0))}});
        endpoint num = b.op("Reshape", {b.op("Sum", {ind, c.input(1)}), k.shape});
        out[0] = mul(b, b.op("RealDiv", {ind, num}), k.grad);
        return out;
    };
    r.add("Max", min_max);
    r.add("Min", min_max);
    // Prod: d prod / d x_i = product of the other entries of x_i's group, computed without dividing
    // by zero: with no zero in the group prod/x_i; with one zero, the product of the non-zero
    // entries at the zero and 0 elsewhere; with more zeros, 0.
    r.add("Prod", [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        endpoint x = c.input(0), axes = c.input(1);
        dtype t = c.dtype_of(x);
        auto k = reduce_detail::keep_dims(c, *g);
        endpoint zero = b.op("Equal", {x, scalar_like(c, x, 0.0)});
        endpoint nonzero_x = b.op("SelectV2", {zero, b.op("OnesLike", {x}), x});
        endpoint prod_nz = b.op("Reshape", {b.op("Prod", {nonzero_x, axes}), k.shape});
        endpoint zeros = b.op("Reshape", {b.op("Sum", {b.op("Cast", {zero}, {{"DstT", t}}), axes}), k.shape});
        endpoint none_zero = b.op("Equal", {zeros, scalar_like(c, x, 0.0)});
        endpoint one_zero_here = b.op("LogicalAnd", {b.op("Equal", {zeros, scalar_like(c, x, 1.0)}), zero});
        endpoint at_zero = b.op("SelectV2", {one_zero_here, b.op("Mul", {prod_nz, b.op("OnesLike", {x})}),
                                             b.op("ZerosLike", {x})});
        endpoint others = b.op("SelectV2", {none_zero, b.op("RealDiv", {prod_nz, nonzero_x}), at_zero});
        out[0] = mul(b, others, k.grad);
        return out;
    });
    // EuclideanNorm: d|x|/dx = x / |x| (the norm kept over the reduced axes; 0/0 is NaN as in TF).
    r.add("EuclideanNorm", [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        auto k = reduce_detail::keep_dims(c, *g);
        endpoint norm = b.op("Reshape", {c.output(0), k.shape});
        out[0] = b.op("RealDiv", {mul(b, c.input(0), k.grad), norm});
        return out;
    });
    r.add("L2Loss", [](grad_context& c) -> grad_list {
        grad_list out(1);
        if (auto& g = c.grad(0)) out[0] = mul(c.b(), c.input(0), *g);
        return out;
    });
}

}  // namespace graft::autodiff::rules
