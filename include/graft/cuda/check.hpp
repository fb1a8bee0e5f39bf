// graft/cuda/check.hpp — GRAFT_CUDA_CHECK and its cuBLAS/cuDNN siblings: a failed call throws
// graft::error naming the call, the library's code and message, the file and the line. For code
// compiled against the CUDA headers (kernels/*.cu, src/cuda/*.cpp); it includes them and no graft
// header, so nvcc never sees Eigen.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

namespace graft::cuda {
/// Throws graft::error (defined in src/cuda/runtime.cpp; also declared in graft/device/cuda_runtime.hpp).
[[noreturn]] void throw_cuda_error(const char* call, const char* library, int code, const char* message,
                                   const char* file, int line);
}  // namespace graft::cuda

#define GRAFT_CUDA_CHECK(call)                                                                          \
    do {                                                                                                \
        cudaError_t graft_e_ = (call);                                                                  \
        if (graft_e_ != cudaSuccess)                                                                    \
            ::graft::cuda::throw_cuda_error(#call, "CUDA", static_cast<int>(graft_e_),                  \
                                            cudaGetErrorString(graft_e_), __FILE__, __LINE__);          \
    } while (0)

#define GRAFT_CUBLAS_CHECK(call)                                                                        \
    do {                                                                                                \
        cublasStatus_t graft_s_ = (call);                                                               \
        if (graft_s_ != CUBLAS_STATUS_SUCCESS)                                                          \
            ::graft::cuda::throw_cuda_error(#call, "cuBLAS", static_cast<int>(graft_s_),                \
                                            cublasGetStatusString(graft_s_), __FILE__, __LINE__);       \
    } while (0)

#define GRAFT_CUDNN_CHECK(call)                                                                         \
    do {                                                                                                \
        cudnnStatus_t graft_s_ = (call);                                                                \
        if (graft_s_ != CUDNN_STATUS_SUCCESS)                                                           \
            ::graft::cuda::throw_cuda_error(#call, "cuDNN", static_cast<int>(graft_s_),                 \
                                            cudnnGetErrorString(graft_s_), __FILE__, __LINE__);         \
    } while (0)

/// After a kernel launch: a bad launch configuration throws here, naming the kernel.
#define GRAFT_CUDA_CHECK_LAUNCH(what) GRAFT_CUDA_CHECK((static_cast<void>(what), cudaGetLastError()))
