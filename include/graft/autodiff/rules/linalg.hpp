// graft/autodiff/rules/linalg.hpp — gradients of the linalg family (graft/exec/cpu_kernels/linalg.hpp),
// as TF's linalg_grad.py builds them.
#pragma once

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

namespace linalg_detail {
/// BatchMatMulV2(x, y) with adjoint flags (real dtypes: transposes).
inline endpoint mm(const graph_builder& b, const endpoint& x, const endpoint& y, bool adj_x = false, bool adj_y = false) {
    return b.op("BatchMatMulV2", {x, y}, {{"adj_x", adj_x}, {"adj_y", adj_y}});
}
/// grad * inverse(a)^T, the per-matrix scalar gradient broadcast over its matrix (determinants).
inline endpoint times_inverse_adjoint(const grad_context& c, const endpoint& per_matrix) {
    const auto& b = c.b();
    endpoint inv_t = b.op("MatrixInverse", {c.input(0)}, {{"adjoint", true}});
    endpoint m = b.op("ExpandDims", {b.op("ExpandDims", {per_matrix, int_scalar(b, -1)}), int_scalar(b, -1)});
    return b.op("Mul", {m, inv_t});
}
/// The batch dims of shape vector s (all but its last two entries).
inline endpoint batch_of(const graph_builder& b, const endpoint& s) {
    return b.op("StridedSlice", {s, ints(b, {0}), ints(b, {-2}), ints(b, {1})});
}
}  // namespace linalg_detail

inline void register_linalg(gradient_registry& r) {
    using linalg_detail::mm;
    // Y = A^-1: dA = -Y^T G Y^T; with adjoint (Y = A^-T) the transpose of that, -Y G^T Y.
    r.add("MatrixInverse", [](grad_context& c) -> grad_list {
        grad_list out(1);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        endpoint y = c.output(0);
        if (c.attr("adjoint").b()) out[0] = neg(b, mm(b, y, mm(b, *g, y, true, false)));
        else out[0] = neg(b, mm(b, y, mm(b, *g, y, false, true), true, false));
        return out;
    });
    r.add("MatrixDeterminant", [](grad_context& c) -> grad_list {
        grad_list out(1);
        if (auto& g = c.grad(0)) out[0] = linalg_detail::times_inverse_adjoint(c, mul(c.b(), *g, c.output(0)));
        return out;
    });
    r.add("LogMatrixDeterminant", [](grad_context& c) -> grad_list {
        grad_list out(1);
        if (auto& g = c.grad(1)) out[0] = linalg_detail::times_inverse_adjoint(c, *g);
        return out;
    });
    // C = A^-1 B: dB = A^-T G, dA = -dB C^T (adjoint: A^-T B, dB = A^-1 G, dA = -C dB^T).
    r.add("MatrixSolve", [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        const bool adj = c.attr("adjoint").b();
        endpoint gb = b.op("MatrixSolve", {c.input(0), *g}, {{"adjoint", !adj}});
        out[0] = adj ? neg(b, mm(b, c.output(0), gb, false, true)) : neg(b, mm(b, gb, c.output(0), false, true));
        out[1] = gb;
        return out;
    });
    // As MatrixSolve, keeping the triangle the op read, and summing over broadcast batch dims.
    r.add("MatrixTriangularSolve", [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        const bool adj = c.attr("adjoint").b(), lower = c.attr("lower").b();
        endpoint gb = b.op("MatrixTriangularSolve", {c.input(0), *g}, {{"lower", lower}, {"adjoint", !adj}});
        endpoint ga = adj ? neg(b, mm(b, c.output(0), gb, false, true)) : neg(b, mm(b, gb, c.output(0), false, true));
        ga = b.op("MatrixBandPart", {ga, b.constant(tensor::scalar_of(std::int64_t{lower ? -1 : 0})),
                                     b.constant(tensor::scalar_of(std::int64_t{lower ? 0 : -1}))});
        endpoint sa = shape_of(b, c.input(0)), sb = shape_of(b, c.input(1));
        auto rr = b.op_n("BroadcastGradientArgs", {linalg_detail::batch_of(b, sa), linalg_detail::batch_of(b, sb)});
        out[0] = b.op("Reshape", {b.op("Sum", {ga, rr[0]}), sa});
        out[1] = b.op("Reshape", {b.op("Sum", {gb, rr[1]}), sb});
        return out;
    });
    r.add("Cholesky", [](grad_context& c) -> grad_list {
        grad_list out(1);
        if (auto& g = c.grad(0)) out[0] = c.b().op("CholeskyGrad", {c.output(0), *g});
        return out;
    });
}

}  // namespace graft::autodiff::rules
