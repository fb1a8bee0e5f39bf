// graft::surgery::import_meta_graph(), a compiled part of graft::compiled (core/config.hpp): programs that
// link graft::compiled see only its declaration, so their translation units do not compile it again.
#define GRAFT_COMPILING_IMPORT
#include "graft/surgery/import.hpp"
