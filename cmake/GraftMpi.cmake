# graft::mpi — graft/dist/mpi.hpp's MPI library (header-only graft plus MPI::MPI_CXX), made when
# GRAFT_MPI is ON, or AUTO and FindMPI finds an MPI (Debian: libopenmpi-dev + openmpi-bin, which
# `make deps` installs). The core library stays MPI-free: only code that includes graft/dist/mpi.hpp
# links this. GRAFT_MPIEXEC is the launcher the distributed tests run under (mpirun).
set(GRAFT_HAVE_MPI 0)
if(GRAFT_MPI STREQUAL "OFF")
  return()
endif()
# The C API from C++ (graft does not use the deprecated MPI C++ bindings).
set(MPI_CXX_SKIP_MPICXX ON CACHE BOOL "")
find_package(MPI QUIET COMPONENTS CXX)
if(NOT MPI_CXX_FOUND)
  if(GRAFT_MPI STREQUAL "ON")
    message(FATAL_ERROR "GRAFT_MPI=ON but no MPI was found; install libopenmpi-dev openmpi-bin (make deps) "
                        "or configure with -DGRAFT_MPI=OFF")
  endif()
  message(STATUS "graft: MPI not found, graft::mpi not built (distributed tests skip)")
  return()
endif()
add_library(graft_mpi INTERFACE)
add_library(graft::mpi ALIAS graft_mpi)
set_target_properties(graft_mpi PROPERTIES EXPORT_NAME mpi)
target_link_libraries(graft_mpi INTERFACE graft MPI::MPI_CXX)
target_compile_definitions(graft_mpi INTERFACE GRAFT_WITH_MPI=1)
set(GRAFT_HAVE_MPI 1)
set(GRAFT_MPIEXEC "${MPIEXEC_EXECUTABLE}")
message(STATUS "graft: MPI found (${MPI_CXX_LIBRARY_NAMES}), launcher ${GRAFT_MPIEXEC}")

# graft::nccl — graft/dist/nccl.hpp: graft::mpi plus the CUDA runtime and NCCL (the CUDA toolkit's
# libnccl), made when graft::cuda is built and libnccl is found.
if(TARGET graft_cuda)
  find_library(GRAFT_NCCL_LIB nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/lib/x86_64-linux-gnu)
  find_path(GRAFT_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  if(GRAFT_NCCL_LIB AND GRAFT_NCCL_INCLUDE)
    add_library(graft_nccl INTERFACE)
    add_library(graft::nccl ALIAS graft_nccl)
    set_target_properties(graft_nccl PROPERTIES EXPORT_NAME nccl)
    target_include_directories(graft_nccl INTERFACE ${GRAFT_NCCL_INCLUDE})
    target_link_libraries(graft_nccl INTERFACE graft_mpi graft_cuda CUDA::cudart ${GRAFT_NCCL_LIB})
    target_compile_definitions(graft_nccl INTERFACE GRAFT_WITH_NCCL=1)
    message(STATUS "graft: NCCL found (${GRAFT_NCCL_LIB}): graft::nccl")
  else()
    message(STATUS "graft: NCCL not found, graft::nccl not built")
  endif()
endif()
