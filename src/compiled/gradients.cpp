// graft::gradients(): the reverse walk and TF1 loop gradients, a compiled part of graft::compiled (core/config.hpp): programs that link graft::compiled see
// only the declarations, so their translation units do not compile it again.
#define GRAFT_COMPILING_GRADIENTS
#include "graft/autodiff/gradients.hpp"
