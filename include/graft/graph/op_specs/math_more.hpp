// graft/graph/op_specs/math_more.hpp — the math_more family's lines of graft's op table (op_table.hpp reads
// them into builtin_op_specs(); syntax and traits in op_def.hpp). The unary/binary ops of the family that
// op_table.hpp declares already (Cosh, Atan2, Mod, BitwiseAnd, IsNan, ...) are not repeated here.
#pragma once

#include <string>
#include <vector>

namespace graft::detail {

inline void math_more_op_specs(std::vector<std::string>& s) {
    // bits
    s.push_back("Bitcast(input: T) -> (output: type); T: type; type: type; nograd");
    s.push_back("CompareAndBitpack(input: T, threshold: T) -> (output: uint8); T: type; nograd");
    s.push_back("PopulationCount(x: T) -> (y: uint8); T: type; nograd");
    // scans and sums
    for (const char* op : {"Cumsum", "Cumprod", "CumulativeLogsumexp"}) {
        s.push_back(std::string(op) + "(x: T, axis: Tidx) -> (out: T); exclusive: bool = false; reverse: bool = false; "
                                      "T: type; Tidx: type = int32; shape_preserving");
    }
    s.push_back("AccumulateNV2(inputs: N * T) -> (sum: T); N: int >= 1; T: type; shape: shape; aggregate; commutative");
    // special functions
    for (const char* op : {"Igamma", "Igammac", "Polygamma"}) {
        s.push_back(std::string(op) + "(a: T, x: T) -> (z: T); T: type");
    }
    s.push_back("IgammaGradA(a: T, x: T) -> (z: T); T: type; nograd");
    s.push_back("Zeta(x: T, q: T) -> (z: T); T: type");
    s.push_back("Betainc(a: T, b: T, x: T) -> (z: T); T: type");
    s.push_back("Xlog1py(x: T, y: T) -> (z: T); T: type");
    // counting and ranges
    s.push_back("HistogramFixedWidth(values: T, value_range: T, nbins: int32) -> (out: dtype); T: type; "
                "dtype: type = int32; nograd");
    s.push_back("Bincount(arr: int32, size: int32, weights: T) -> (bins: T); T: type; nograd");
    s.push_back("LinSpace(start: T, stop: T, num: Tidx) -> (output: T); T: type; Tidx: type = int32");
    // fake quantization
    const std::string fq = "; num_bits: int = 8; narrow_range: bool = false";
    s.push_back("FakeQuantWithMinMaxArgs(inputs: float) -> (outputs: float); min: float = -6; max: float = 6" + fq +
                "; shape_preserving");
    s.push_back("FakeQuantWithMinMaxArgsGradient(gradients: float, inputs: float) -> (backprops: float); "
                "min: float = -6; max: float = 6" + fq + "; nograd");
    s.push_back("FakeQuantWithMinMaxVars(inputs: float, min: float, max: float) -> (outputs: float)" + fq +
                "; shape_preserving");
    s.push_back("FakeQuantWithMinMaxVarsGradient(gradients: float, inputs: float, min: float, max: float) -> "
                "(backprops_wrt_input: float, backprop_wrt_min: float, backprop_wrt_max: float)" + fq + "; nograd");
    s.push_back("FakeQuantWithMinMaxVarsPerChannel(inputs: float, min: float, max: float) -> (outputs: float)" + fq +
                "; shape_preserving");
    s.push_back("FakeQuantWithMinMaxVarsPerChannelGradient(gradients: float, inputs: float, min: float, max: float) -> "
                "(backprops_wrt_input: float, backprop_wrt_min: float, backprop_wrt_max: float)" + fq + "; nograd");
}

}  // namespace graft::detail
