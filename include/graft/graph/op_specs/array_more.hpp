// graft/graph/op_specs/array_more.hpp — the array_more family's lines of graft's op table (op_table.hpp reads
// them into builtin_op_specs(); syntax and traits in op_def.hpp). ReverseV2, Reverse, BroadcastTo,
// BroadcastArgs and ConcatOffset are declared in op_table.hpp itself; their kernels and rules are
// this family's.
#pragma once

#include <string>
#include <vector>

namespace graft::detail {

inline void array_more_op_specs(std::vector<std::string>& s) {
    s.push_back("Roll(input: T, shift: Tshift, axis: Taxis) -> (output: T); T: type; Tshift: type; Taxis: type");
    s.push_back("ReverseSequence(input: T, seq_lengths: Tlen) -> (output: T); seq_dim: int; batch_dim: int = 0; "
                "T: type; Tlen: type = int64");
    // diagonals of matrices
    const std::string align = "; align: string = \"RIGHT_LEFT\"";
    s.push_back("MatrixDiag(diagonal: T) -> (output: T); T: type");
    s.push_back("MatrixDiagV2(diagonal: T, k: int32, num_rows: int32, num_cols: int32, padding_value: T) -> "
                "(output: T); T: type");
    s.push_back("MatrixDiagV3(diagonal: T, k: int32, num_rows: int32, num_cols: int32, padding_value: T) -> "
                "(output: T); T: type" + align);
    s.push_back("MatrixDiagPart(input: T) -> (diagonal: T); T: type");
    s.push_back("MatrixDiagPartV2(input: T, k: int32, padding_value: T) -> (diagonal: T); T: type");
    s.push_back("MatrixDiagPartV3(input: T, k: int32, padding_value: T) -> (diagonal: T); T: type" + align);
    s.push_back("MatrixSetDiag(input: T, diagonal: T) -> (output: T); T: type; shape_preserving");
    s.push_back("MatrixSetDiagV2(input: T, diagonal: T, k: int32) -> (output: T); T: type; shape_preserving");
    s.push_back("MatrixSetDiagV3(input: T, diagonal: T, k: int32) -> (output: T); T: type" + align +
                "; shape_preserving");
    s.push_back("MatrixBandPart(input: T, num_lower: Tindex, num_upper: Tindex) -> (band: T); T: type; "
                "Tindex: type = int64; shape_preserving");
    s.push_back("Diag(diagonal: T) -> (output: T); T: type");
    s.push_back("DiagPart(input: T) -> (diagonal: T); T: type");
    // space <-> batch, space <-> depth, patches
    s.push_back("SpaceToBatchND(input: T, block_shape: Tblock_shape, paddings: Tpaddings) -> (output: T); T: type; "
                "Tblock_shape: type = int32; Tpaddings: type = int32");
    s.push_back("BatchToSpaceND(input: T, block_shape: Tblock_shape, crops: Tcrops) -> (output: T); T: type; "
                "Tblock_shape: type = int32; Tcrops: type = int32");
    s.push_back("SpaceToBatch(input: T, paddings: Tpaddings) -> (output: T); T: type; Tpaddings: type = int32; "
                "block_size: int >= 2");
    s.push_back("BatchToSpace(input: T, crops: Tidx) -> (output: T); T: type; block_size: int >= 2; "
                "Tidx: type = int32");
    s.push_back("SpaceToDepth(input: T) -> (output: T); T: type; block_size: int >= 2; "
                "data_format: string = \"NHWC\"");
    s.push_back("DepthToSpace(input: T) -> (output: T); T: type; block_size: int >= 2; "
                "data_format: string = \"NHWC\"");
    s.push_back("ExtractImagePatches(images: T) -> (patches: T); ksizes: list(int) >= 4; strides: list(int) >= 4; "
                "rates: list(int) >= 4; T: type; padding: string");
    // construction and copies
    s.push_back("ParallelConcat(values: N * T) -> (output: T); N: int >= 1; T: type; shape: shape");
    s.push_back("Empty(shape: int32) -> (output: dtype); dtype: type; init: bool = false; stateful; nograd");
    s.push_back("DeepCopy(x: T) -> (y: T); T: type; stateful; shape_preserving");
}

}  // namespace graft::detail
