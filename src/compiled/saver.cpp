// graft::train::saver's save(), restore() and graph building, a compiled part of graft::tf
// (core/config.hpp): programs that link graft::tf see only the declarations.
#define GRAFT_COMPILING_SAVER
#include "graft/train/saver.hpp"
