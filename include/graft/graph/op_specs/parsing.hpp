// graft/graph/op_specs/parsing.hpp — the parsing family's lines of graft's op table (op_table.hpp reads
// them into builtin_op_specs(); syntax and traits in op_def.hpp): tf.train.Example protos into
// tensors (TF Serving's classify/regress signatures, TF1 input pipelines).
#pragma once

#include <string>
#include <vector>

namespace graft::detail {

inline void parsing_op_specs(std::vector<std::string>& s) {
    s.push_back("ParseExample(serialized: string, names: string, sparse_keys: Nsparse * string, "
                "dense_keys: Ndense * string, dense_defaults: Tdense) -> (sparse_indices: Nsparse * int64, "
                "sparse_values: sparse_types, sparse_shapes: Nsparse * int64, dense_values: Tdense); "
                "Nsparse: int >= 0; Ndense: int >= 0; sparse_types: list(type) >= 0; Tdense: list(type) >= 0; "
                "dense_shapes: list(shape) >= 0; nograd");
    s.push_back("ParseExampleV2(serialized: string, names: string, sparse_keys: string, dense_keys: string, "
                "ragged_keys: string, dense_defaults: Tdense) -> (sparse_indices: num_sparse * int64, "
                "sparse_values: sparse_types, sparse_shapes: num_sparse * int64, dense_values: Tdense, "
                "ragged_values: ragged_value_types, ragged_row_splits: ragged_split_types); Tdense: list(type) >= 0; "
                "num_sparse: int >= 0; sparse_types: list(type) >= 0; ragged_value_types: list(type) >= 0; "
                "ragged_split_types: list(type) >= 0; dense_shapes: list(shape) >= 0; nograd");
    s.push_back("ParseSingleExample(serialized: string, dense_defaults: Tdense) -> (sparse_indices: num_sparse * int64, "
                "sparse_values: sparse_types, sparse_shapes: num_sparse * int64, dense_values: Tdense); "
                "num_sparse: int >= 0; sparse_keys: list(string) >= 0; dense_keys: list(string) >= 0; "
                "sparse_types: list(type) >= 0; Tdense: list(type) >= 0; dense_shapes: list(shape) >= 0; nograd");
}

}  // namespace graft::detail
