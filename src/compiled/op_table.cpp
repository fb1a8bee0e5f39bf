// graft's op table (graph/op_table.hpp), a compiled part of graft::compiled (core/config.hpp): programs
// that link graft::compiled see only builtin_op_specs()' declaration, so adding a spec line recompiles this file.
#define GRAFT_COMPILING_OP_TABLE
#include "graft/graph/op_registry.hpp"
