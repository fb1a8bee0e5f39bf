// graft::exec::session's planner (prepare) and run(), with the loop ordering and the op fusion they use, a compiled part of graft::compiled (core/config.hpp): programs that link graft::compiled see
// only the declarations, so their translation units do not compile it again.
#define GRAFT_COMPILING_SESSION
#include "graft/exec/session.hpp"
