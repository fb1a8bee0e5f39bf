// graft/graph/op_specs/summary.hpp — the summary family's lines of graft's op table (op_table.hpp reads
// them into builtin_op_specs(); syntax and traits in op_def.hpp): TF1's summary ops, which make
// serialized tensorflow.Summary protos for an event file.
#pragma once

#include <string>
#include <vector>

namespace graft::detail {

inline void summary_op_specs(std::vector<std::string>& s) {
    s.push_back("ScalarSummary(tags: string, values: T) -> (summary: string); T: type; nograd");
    s.push_back("HistogramSummary(tag: string, values: T) -> (summary: string); T: type = float; nograd");
    s.push_back("MergeSummary(inputs: N * string) -> (summary: string); N: int >= 1; nograd");
}

}  // namespace graft::detail
