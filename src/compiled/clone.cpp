// graft::surgery::clone_into(): the cloner's walk and copy, a compiled part of graft::compiled (core/config.hpp): programs that link graft::compiled see
// only the declarations, so their translation units do not compile it again.
#define GRAFT_COMPILING_CLONE
#include "graft/surgery/clone.hpp"
