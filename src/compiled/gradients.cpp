// graft::gradients(): the reverse walk and TF1 loop gradients, a compiled part of graft::tf (core/config.hpp): programs that link graft::tf see
// only the declarations, so their translation units do not compile it again.
#define GRAFT_COMPILING_GRADIENTS
#include "graft/autodiff/gradients.hpp"
