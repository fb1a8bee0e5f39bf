// The elementwise and reduction ops of graft/ops/ (unary.hpp, binary.hpp, activation_grad.hpp,
// reduce.hpp: every op for every dtype it takes), a compiled part of graft::compiled
// (core/config.hpp): the kernel families, the gradient rules' helpers and the tests that call them
// see only their declarations, so no other translation unit instantiates them again.
#define GRAFT_COMPILING_ELEMENTWISE
#include "graft/ops/activation_grad.hpp"
#include "graft/ops/binary.hpp"
#include "graft/ops/reduce.hpp"
#include "graft/ops/unary.hpp"
