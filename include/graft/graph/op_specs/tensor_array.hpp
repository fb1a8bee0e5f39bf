// graft/graph/op_specs/tensor_array.hpp — the tensor_array family's lines of graft's op table (op_table.hpp reads
// them into builtin_op_specs(); syntax and traits in op_def.hpp): TF1 TensorArray (V3 resource
// handles, V2 string handles) and Stack (V2 resource handles, V1 ref handles), as TF's
// data_flow_ops.cc declares them.
#pragma once

#include <string>
#include <vector>

namespace graft::detail {

inline void tensor_array_op_specs(std::vector<std::string>& s) {
    // TensorArray, V3 (resource handle + float flow) and V2 (string handle).
    const std::string create_attrs =
        "; dtype: type; element_shape: shape = <unknown>; dynamic_size: bool = false; clear_after_read: bool = true";
    s.push_back("TensorArrayV3(size: int32) -> (handle: resource, flow: float)" + create_attrs +
                "; identical_element_shapes: bool = false; tensor_array_name: string = \"\"; stateful; nograd");
    s.push_back("TensorArrayV2(size: int32) -> (handle: string)" + create_attrs +
                "; tensor_array_name: string = \"\"; stateful; nograd");
    s.push_back("TensorArrayGradV3(handle: resource, flow_in: float) -> (grad_handle: resource, flow_out: float); "
                "source: string; stateful; nograd");
    s.push_back("TensorArrayGradWithShape(handle: resource, flow_in: float, shape_to_prepend: int32) -> "
                "(grad_handle: resource, flow_out: float); source: string; stateful; nograd");
    s.push_back("TensorArrayGradV2(handle: string, flow_in: float) -> (grad_handle: string); source: string; "
                "stateful; nograd");
    for (const char* v : {"V3", "V2"}) {
        const std::string h = std::string(v) == "V3" ? "resource" : "string";
        const std::string op = std::string("TensorArray");
        s.push_back(op + "Write" + v + "(handle: " + h + ", index: int32, value: T, flow_in: float) -> "
                    "(flow_out: float); T: type");
        s.push_back(op + "Read" + v + "(handle: " + h + ", index: int32, flow_in: float) -> (value: dtype); "
                    "dtype: type");
        s.push_back(op + "Gather" + v + "(handle: " + h + ", indices: int32, flow_in: float) -> (value: dtype); "
                    "dtype: type; element_shape: shape = <unknown>");
        s.push_back(op + "Scatter" + v + "(handle: " + h + ", indices: int32, value: T, flow_in: float) -> "
                    "(flow_out: float); T: type");
        s.push_back(op + "Concat" + v + "(handle: " + h + ", flow_in: float) -> (value: dtype, lengths: int64); "
                    "dtype: type; element_shape_except0: shape = <unknown>");
        s.push_back(op + "Split" + v + "(handle: " + h + ", value: T, lengths: int64, flow_in: float) -> "
                    "(flow_out: float); T: type");
        s.push_back(op + "Size" + v + "(handle: " + h + ", flow_in: float) -> (size: int32); nograd");
        s.push_back(op + "Close" + v + "(handle: " + h + "); nograd");
    }

    // Stacks (the forward values of TF1 gradient while loops): V2 and the ref-typed V1.
    s.push_back("StackV2(max_size: int32) -> (handle: resource); elem_type: type; stack_name: string = \"\"; "
                "stateful; nograd");
    s.push_back("StackPushV2(handle: resource, elem: T) -> (output: T); T: type; swap_memory: bool = false; nograd");
    s.push_back("StackPopV2(handle: resource) -> (elem: elem_type); elem_type: type; nograd");
    s.push_back("StackCloseV2(handle: resource); nograd");
    s.push_back("Stack() -> (handle: Ref(string)); elem_type: type; stack_name: string = \"\"; stateful; nograd");
    s.push_back("StackPush(handle: Ref(string), elem: T) -> (output: T); T: type; swap_memory: bool = false; nograd");
    s.push_back("StackPop(handle: Ref(string)) -> (elem: elem_type); elem_type: type; nograd");
    s.push_back("StackClose(handle: Ref(string)); nograd");
}

}  // namespace graft::detail
