// graft/exec/cpu_kernels/linalg.hpp — the linalg family's CPU kernels bound to their TF op types
// (graft/ops/linalg.hpp).
#pragma once

#include "graft/exec/kernel.hpp"
#include "graft/ops/linalg.hpp"

namespace graft::exec::kernels {

inline void register_linalg(kernel_registry& r) {
    r.add("MatrixDeterminant", [](kernel_context& c) { c.set_output(0, ops::matrix_determinant(c.input(0))); });
    r.add("LogMatrixDeterminant", [](kernel_context& c) {
        auto [sign, logd] = ops::log_matrix_determinant(c.input(0));
        c.set_output(0, sign);
        c.set_output(1, logd);
    });
    r.add("MatrixInverse", [](kernel_context& c) {
        c.set_output(0, ops::matrix_inverse(c.input(0), c.attr_or<bool>("adjoint", false)));
    });
    r.add("MatrixSolve", [](kernel_context& c) {
        c.set_output(0, ops::matrix_solve(c.input(0), c.input(1), c.attr_or<bool>("adjoint", false)));
    });
    r.add("MatrixTriangularSolve", [](kernel_context& c) {
        c.set_output(0, ops::matrix_triangular_solve(c.input(0), c.input(1), c.attr_or<bool>("lower", true),
                                                     c.attr_or<bool>("adjoint", false)));
    });
    r.add("Cholesky", [](kernel_context& c) { c.set_output(0, ops::cholesky(c.input(0))); });
    r.add("CholeskyGrad", [](kernel_context& c) { c.set_output(0, ops::cholesky_grad(c.input(0), c.input(1))); });
    r.add("Lu", [](kernel_context& c) {
        auto [lu, p] = ops::lu(c.input(0), c.attr_or<dtype>("output_idx_type", dtype::int32));
        c.set_output(0, lu);
        c.set_output(1, p);
    });
    r.add("Svd", [](kernel_context& c) {
        auto [s, u, v] = ops::svd(c.input(0), c.attr_or<bool>("compute_uv", true), c.attr_or<bool>("full_matrices", false));
        c.set_output(0, s);
        c.set_output(1, u);
        c.set_output(2, v);
    });
}

}  // namespace graft::exec::kernels
