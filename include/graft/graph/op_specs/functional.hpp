// graft/graph/op_specs/functional.hpp — the functional family's lines of graft's op table (op_table.hpp reads
// them into builtin_op_specs(); syntax and traits in op_def.hpp): TF2's functional control flow
// (While, If, Case and their stateless forms, bodies and branches are functions of the graph's
// library) and TensorList (list_ops.cc: a list of tensors carried as one variant scalar).
#pragma once

#include <string>
#include <vector>

namespace graft::detail {

inline void functional_op_specs(std::vector<std::string>& s) {
    // functional control flow (functional_ops.cc)
    const std::string loop = "(input: T) -> (output: T); T: list(type) >= 0; cond: func; body: func; "
                             "output_shapes: list(shape) = []; parallel_iterations: int = 10";
    s.push_back("While" + loop + "; stateful");
    s.push_back("StatelessWhile" + loop);
    const std::string cond = "(cond: Tcond, input: Tin) -> (output: Tout); Tcond: type; Tin: list(type) >= 0; "
                             "Tout: list(type) >= 0; then_branch: func; else_branch: func; "
                             "output_shapes: list(shape) = []";
    s.push_back("If" + cond + "; stateful");
    s.push_back("StatelessIf" + cond);
    const std::string cas = "(branch_index: int32, input: Tin) -> (output: Tout); Tin: list(type) >= 0; "
                            "Tout: list(type) >= 0; branches: list(func) >= 1; output_shapes: list(shape) = []";
    s.push_back("Case" + cas + "; stateful");
    s.push_back("StatelessCase" + cas);
    // graft's call frame: a function body run by a functional op reads its arguments and hands
    // back its results through these (never in a GraphDef graft writes)
    s.push_back("_GraftCallArg() -> (output: T); T: type; index: int >= 0; nograd");
    s.push_back("_GraftCallRet(input: T); T: type; index: int >= 0; nograd");

    // TensorList (list_ops.cc)
    s.push_back("EmptyTensorList(element_shape: shape_type, max_num_elements: int32) -> (handle: variant); "
                "element_dtype: type; shape_type: type; nograd");
    s.push_back("TensorListReserve(element_shape: shape_type, num_elements: int32) -> (handle: variant); "
                "element_dtype: type; shape_type: type; nograd");
    s.push_back("TensorListPushBack(input_handle: variant, tensor: element_dtype) -> (output_handle: variant); "
                "element_dtype: type");
    s.push_back("TensorListPopBack(input_handle: variant, element_shape: int32) -> "
                "(output_handle: variant, tensor: element_dtype); element_dtype: type");
    s.push_back("TensorListLength(input_handle: variant) -> (length: int32); nograd");
    s.push_back("TensorListElementShape(input_handle: variant) -> (element_shape: shape_type); "
                "shape_type: type; nograd");
    s.push_back("TensorListGetItem(input_handle: variant, index: int32, element_shape: int32) -> "
                "(item: element_dtype); element_dtype: type");
    s.push_back("TensorListSetItem(input_handle: variant, index: int32, item: element_dtype) -> "
                "(output_handle: variant); element_dtype: type; resize_if_index_out_of_bounds: bool = false");
    s.push_back("TensorListStack(input_handle: variant, element_shape: int32) -> (tensor: element_dtype); "
                "element_dtype: type; num_elements: int = -1");
    s.push_back("TensorListFromTensor(tensor: element_dtype, element_shape: shape_type) -> "
                "(output_handle: variant); element_dtype: type; shape_type: type");
    s.push_back("TensorListGather(input_handle: variant, indices: int32, element_shape: int32) -> "
                "(values: element_dtype); element_dtype: type");
    s.push_back("TensorListScatterV2(tensor: element_dtype, indices: int32, element_shape: shape_type, "
                "num_elements: int32) -> (output_handle: variant); element_dtype: type; shape_type: type");
    s.push_back("TensorListScatterIntoExistingList(input_handle: variant, tensor: element_dtype, indices: int32) -> "
                "(output_handle: variant); element_dtype: type");
    s.push_back("TensorListConcatV2(input_handle: variant, element_shape: shape_type, leading_dims: int64) -> "
                "(tensor: element_dtype, lengths: int64); element_dtype: type; shape_type: type");
    s.push_back("TensorListSplit(tensor: element_dtype, element_shape: shape_type, lengths: int64) -> "
                "(output_handle: variant); element_dtype: type; shape_type: type");
    s.push_back("TensorListResize(input_handle: variant, size: int32) -> (output_handle: variant)");
}

}  // namespace graft::detail
