// graft/graft.hpp — the tensor core (graft/core.hpp), the include a program starts from. Each layer
// has its own feature header on top: graft/graph_all.hpp (graphs and TF's files),
// graft/exec/session.hpp, graft/autodiff/gradients.hpp, graft/train/*.hpp, graft/surgery/*.hpp,
// graft/typed/*.hpp (docs/ARCHITECTURE.md maps them; what needs linking graft::compiled is said there).
//
// A worked example: a tensor through NumPy and back.
//
//   #include <graft/graft.hpp>
//   int main() {
//       graft::tensor w(graft::dtype::float32, {2, 3});        // zero-filled, 64-byte aligned
//       w.matrix<float>().setConstant(0.5f);
//       graft::write_npy("w.npy", w);                          // python: np.load("w.npy")
//       graft::tensor r = graft::read_npy("w.npy");
//       return graft::allclose(w, r) ? 0 : 1;                  // graft::error on bad input
//   }
//
// Feature headers: graft/core.hpp (tensors). Each later layer adds its own (tf/, graph/, exec/, ...).
#pragma once
#include "graft/core.hpp"
