// graft::train::saver's save(), restore() and graph building, a compiled part of graft::compiled
// (core/config.hpp): programs that link graft::compiled see only the declarations.
#define GRAFT_COMPILING_SAVER
#include "graft/train/saver.hpp"
