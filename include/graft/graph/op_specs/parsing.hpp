// graft/graph/op_specs/parsing.hpp — the parsing family's lines of graft's op table (op_table.hpp reads
// them into builtin_op_specs(); syntax and traits in op_def.hpp).
#pragma once

#include <string>
#include <vector>

namespace graft::detail {

inline void parsing_op_specs(std::vector<std::string>& s) {
    (void)s;
}

}  // namespace graft::detail
