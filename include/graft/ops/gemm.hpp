// graft/ops/gemm.hpp — the matrix-product engine under MatMul, BatchMatMulV2 and the Conv2D family.
//
// BLIS-style blocking (KC x NC panels of B, MC x KC blocks of A, a 6x16 register tile), a micro-kernel
// picked at run time whatever flags the program was built with (AVX-512F: two 6-row A panels by two
// 16-column B panels, a 12x32 tile in 24 zmm registers, 12x16 at the edges; AVX2 + FMA: 6x16 in 12
// ymm; portable C++ otherwise) and
// operands given as *panel sources*, so a convolution packs its im2col panels straight from the
// input without building the im2col matrix:
//
//   graft::ops::gemm::matrix_source<float> a{A, K, 1, M}, b{B, 1, N, N};   // A [M,K] and B [K,N], row-major
//   graft::ops::gemm::run(M, N, K, a, b, C, N, 1, false);           // C [M,N] = A * B
//
// A source packs outer indices [o0, o0+R) by depth [k0, k0+kc) as dst[k*R + r], zero past extent().
//
// The engine's parts: detail/gemm_tile.hpp (tile, portable micro-kernel), arch/x86/gemm_kernels.hpp
// (AVX2 / AVX-512 micro-kernels), detail/gemm_kernels.hpp (which runs), detail/gemm_pack.hpp
// (sources, packing), detail/gemm_driver.hpp (blocking, threads, run()), detail/gemv.hpp and
// arch/x86/gemv_kernels.hpp (the matrix-vector product).
#pragma once

#include "graft/core/config.hpp"

#include "graft/ops/detail/gemm_driver.hpp"
#include "graft/ops/detail/gemv.hpp"
