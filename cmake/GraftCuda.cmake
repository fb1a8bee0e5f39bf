# graft::cuda — src/cuda/kernels/*.cu plus cuBLAS and cuDNN, built when GRAFT_CUDA is ON, or AUTO and CUDA is found.
set(GRAFT_HAVE_CUDA 0)
if(GRAFT_CUDA STREQUAL "OFF")
  return()
endif()
include(CheckLanguage)
check_language(CUDA)
find_package(CUDAToolkit QUIET)
find_library(GRAFT_CUDNN_LIB cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/lib/x86_64-linux-gnu)
if(NOT CMAKE_CUDA_COMPILER OR NOT CUDAToolkit_FOUND OR NOT GRAFT_CUDNN_LIB)
  if(GRAFT_CUDA STREQUAL "ON")
    message(FATAL_ERROR "GRAFT_CUDA=ON but CUDA (nvcc ${CMAKE_CUDA_COMPILER}, toolkit ${CUDAToolkit_FOUND}, "
                        "cuDNN ${GRAFT_CUDNN_LIB}) was not found; install CUDA or use -DGRAFT_CUDA=OFF")
  endif()
  message(STATUS "graft: CUDA not found, graft::cuda not built")
  return()
endif()
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 90-real 90-virtual)   # sm_90 SASS plus PTX for newer GPUs
endif()
enable_language(CUDA)
# Device code (src/cuda/kernels/*.cu, nvcc) and the host side (src/cuda/*.cpp, the C++ compiler: allocator,
# streams, copies, the GPU kernel table registered into graft::exec).
file(GLOB GRAFT_CUDA_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/cuda/kernels/*.cu ${PROJECT_SOURCE_DIR}/src/cuda/*.cpp)
if(NOT GRAFT_CUDA_SOURCES)
  return()
endif()
add_library(graft_cuda STATIC ${GRAFT_CUDA_SOURCES})
add_library(graft::cuda ALIAS graft_cuda)
set_target_properties(graft_cuda PROPERTIES EXPORT_NAME cuda POSITION_INDEPENDENT_CODE ON
  CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON)
target_include_directories(graft_cuda PRIVATE ${PROJECT_SOURCE_DIR}/src/cuda ${PROJECT_SOURCE_DIR}/src/cuda/kernels)
# nvcc: no Eigen in device code; the .cu files include only graft/cuda/check.hpp and their launch header.
target_compile_options(graft_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -Xcompiler=-fPIC>)
target_link_libraries(graft_cuda PUBLIC graft CUDA::cudart CUDA::cublas CUDA::cublasLt ${GRAFT_CUDNN_LIB})
target_compile_definitions(graft_cuda PUBLIC GRAFT_WITH_CUDA=1)
# Beside graft::compiled, graft::cuda's files see the same GRAFT_SEPARATE_COMPILATION as every program
# that links them (core/config.hpp): the op table and the executor come from graft::compiled, never
# compiled inline here as well. (A program placing nodes on a GPU runs sessions: it links graft::compiled.)
if(TARGET graft_compiled)
  target_link_libraries(graft_cuda PUBLIC graft_compiled)
endif()
set(GRAFT_HAVE_CUDA 1)
