// graft/graph/op_specs/indexing.hpp — the indexing family's lines of graft's op table (op_table.hpp reads
// them into builtin_op_specs(); syntax and traits in op_def.hpp): N-d and row scatters (on tensors, TF1
// ref variables and resource variables), top-k, segment reductions, unique, sparse-to-dense.
// GatherNd, DynamicPartition, UnsortedSegmentSum, Unique and ScatterAdd/Sub/Update/Mul/Div are declared
// in op_table.hpp; their kernels and rules live with this family.
#pragma once

#include <string>
#include <vector>

namespace graft::detail {

inline void indexing_op_specs(std::vector<std::string>& s) {
    // N-d scatters into a new tensor
    s.push_back("ScatterNd(indices: Tindices, updates: T, shape: Tindices) -> (output: T); T: type; Tindices: type");
    for (const char* op : {"TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub", "TensorScatterMin",
                           "TensorScatterMax"}) {
        s.push_back(std::string(op) + "(tensor: T, indices: Tindices, updates: T) -> (output: T); T: type; "
                                      "Tindices: type; shape_preserving");
    }
    s.push_back("ScatterNdNonAliasingAdd(input: T, indices: Tindices, updates: T) -> (output: T); T: type; "
                "Tindices: type; shape_preserving");
    // N-d and row scatters into TF1 ref variables (output: the ref) and resource variables
    s.push_back("ScatterNdUpdate(ref: Ref(T), indices: Tindices, updates: T) -> (output_ref: Ref(T)); T: type; "
                "Tindices: type; use_locking: bool = true; nograd");
    for (const char* op : {"ScatterNdAdd", "ScatterNdSub", "ScatterNdMin", "ScatterNdMax"}) {
        s.push_back(std::string(op) + "(ref: Ref(T), indices: Tindices, updates: T) -> (output_ref: Ref(T)); T: type; "
                                      "Tindices: type; use_locking: bool = false; nograd");
    }
    for (const char* op : {"ResourceScatterNdUpdate", "ResourceScatterNdAdd", "ResourceScatterNdSub",
                           "ResourceScatterNdMin", "ResourceScatterNdMax"}) {
        s.push_back(std::string(op) + "(ref: resource, indices: Tindices, updates: T); T: type; Tindices: type; "
                                      "use_locking: bool = true; stateful; nograd");
    }
    for (const char* op : {"ScatterMin", "ScatterMax"}) {
        s.push_back(std::string(op) + "(ref: Ref(T), indices: Tindices, updates: T) -> (output_ref: Ref(T)); T: type; "
                                      "Tindices: type; use_locking: bool = false; nograd");
    }
    for (const char* op : {"ResourceScatterUpdate", "ResourceScatterAdd", "ResourceScatterSub", "ResourceScatterMul",
                           "ResourceScatterDiv", "ResourceScatterMin", "ResourceScatterMax"}) {
        s.push_back(std::string(op) + "(resource: resource, indices: Tindices, updates: dtype); dtype: type; "
                                      "Tindices: type; stateful; nograd");
    }
    // order statistics
    s.push_back("TopKV2(input: T, k: Tk) -> (values: T, indices: index_type); sorted: bool = true; T: type; "
                "Tk: type = int32; index_type: type = int32");
    s.push_back("TopK(input: T) -> (values: T, indices: int32); k: int >= 0; sorted: bool = true; T: type");
    s.push_back("NthElement(input: T, n: int32) -> (values: T); reverse: bool = false; T: type");
    s.push_back("InTopKV2(predictions: float, targets: T, k: T) -> (precision: bool); T: type = int32; nograd");
    s.push_back("InTopK(predictions: float, targets: T) -> (precision: bool); k: int; T: type = int32; nograd");
    // segment reductions
    for (const char* op : {"SegmentSum", "SegmentMean", "SegmentProd", "SegmentMin", "SegmentMax"}) {
        s.push_back(std::string(op) + "(data: T, segment_ids: Tindices) -> (output: T); T: type; Tindices: type");
    }
    for (const char* op : {"UnsortedSegmentProd", "UnsortedSegmentMin", "UnsortedSegmentMax"}) {
        s.push_back(std::string(op) + "(data: T, segment_ids: Tindices, num_segments: Tnumsegments) -> (output: T); "
                                      "T: type; Tindices: type; Tnumsegments: type = int32");
    }
    // unique
    s.push_back("UniqueV2(x: T, axis: Taxis) -> (y: T, idx: out_idx); T: type; Taxis: type = int64; "
                "out_idx: type = int32; nograd");
    s.push_back("UniqueWithCounts(x: T) -> (y: T, idx: out_idx, count: out_idx); T: type; out_idx: type = int32; "
                "nograd");
    s.push_back("UniqueWithCountsV2(x: T, axis: Taxis) -> (y: T, idx: out_idx, count: out_idx); T: type; "
                "Taxis: type = int64; out_idx: type = int32; nograd");
    // sparse into dense
    s.push_back("SparseToDense(sparse_indices: Tindices, output_shape: Tindices, sparse_values: T, "
                "default_value: T) -> (dense: T); validate_indices: bool = true; T: type; Tindices: type");
    s.push_back("SparseTensorDenseAdd(a_indices: Tindices, a_values: T, a_shape: Tindices, b: T) -> (output: T); "
                "T: type; Tindices: type");
}

}  // namespace graft::detail
