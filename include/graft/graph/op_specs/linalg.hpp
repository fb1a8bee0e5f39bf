// graft/graph/op_specs/linalg.hpp — the linalg family's lines of graft's op table (op_table.hpp reads
// them into builtin_op_specs(); syntax and traits in op_def.hpp). Signatures of TF's linalg_ops.cc.
#pragma once

#include <string>
#include <vector>

namespace graft::detail {

inline void linalg_op_specs(std::vector<std::string>& s) {
    s.push_back("MatrixDeterminant(input: T) -> (output: T); T: type");
    s.push_back("LogMatrixDeterminant(input: T) -> (sign: T, log_abs_determinant: T); T: type");
    s.push_back("MatrixInverse(input: T) -> (output: T); adjoint: bool = false; T: type; shape_preserving");
    s.push_back("MatrixSolve(matrix: T, rhs: T) -> (output: T); adjoint: bool = false; T: type");
    s.push_back("MatrixTriangularSolve(matrix: T, rhs: T) -> (output: T); lower: bool = true; adjoint: bool = false; "
                "T: type");
    s.push_back("Cholesky(input: T) -> (output: T); T: type; shape_preserving");
    s.push_back("CholeskyGrad(l: T, grad: T) -> (output: T); T: type; shape_preserving; grad_missing");
    s.push_back("Lu(input: T) -> (lu: T, p: output_idx_type); T: type; output_idx_type: type = int32; grad_missing");
    s.push_back("Svd(input: T) -> (s: T, u: T, v: T); compute_uv: bool = true; full_matrices: bool = false; T: type; "
                "grad_missing");
}

}  // namespace graft::detail
