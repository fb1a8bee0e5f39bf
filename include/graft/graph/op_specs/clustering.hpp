// graft/graph/op_specs/clustering.hpp — the clustering family's lines of graft's op table (op_table.hpp reads
// them into builtin_op_specs(); syntax and traits in op_def.hpp).
#pragma once

#include <string>
#include <vector>

namespace graft::detail {

inline void clustering_op_specs(std::vector<std::string>& s) {
    (void)s;
}

}  // namespace graft::detail
