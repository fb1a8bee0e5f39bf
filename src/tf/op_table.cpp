// graft's op table (graph/op_table.hpp), compiled once into graft::tf: programs that link graft::tf
// see only its declaration (GRAFT_OP_TABLE_COMPILED), so adding a spec line recompiles this file.
#define GRAFT_OP_TABLE_LINKAGE
#include "graft/graph/op_table.hpp"
