// src/cuda/families.hpp — the GPU kernel families graft::cuda::install() registers, one function per
// src/cuda/exec_<family>.cpp (each binds the launchers of kernels/<family>.cu to TF op types).
#pragma once

#include "graft/exec/kernel.hpp"

namespace graft::cuda::families {
void register_core(exec::kernel_registry& r);         // Const, Identity family, Reshape, variables, Assign*
void register_elementwise(exec::kernel_registry& r);  // unary, binary (broadcasting), activation grads, Cast, BiasAdd...
void register_reduce(exec::kernel_registry& r);       // Sum/Mean/Max/Min/Prod, ArgMax/ArgMin, cross-entropy
void register_array(exec::kernel_registry& r);        // Transpose, ConcatV2, Pack, Slice, Pad, Tile, GatherV2, OneHot
void register_training(exec::kernel_registry& r);     // Apply*/ResourceApply* optimizers (Adam fused)
void register_nn(exec::kernel_registry& r);           // MatMul/BatchMatMul (cuBLAS), Conv2D/pool/softmax/batch norm (cuDNN)
}  // namespace graft::cuda::families
