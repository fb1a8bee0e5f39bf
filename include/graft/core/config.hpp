// graft/core/config.hpp — settings every graft header sees first.
#pragma once

// graft's kernels run on Eigen's ThreadPoolDevice; the Tensor module must see this before it is
// first included anywhere in the translation unit.
#ifndef EIGEN_USE_THREADS
#define EIGEN_USE_THREADS
#endif

// GRAFT_ASAN: 1 when AddressSanitizer instruments this translation unit. g++ says so with
// __SANITIZE_ADDRESS__, clang only through __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define GRAFT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GRAFT_ASAN 1
#endif
#endif
#ifndef GRAFT_ASAN
#define GRAFT_ASAN 0
#endif

// ---- Header-only, or linked with graft::compiled: the one switch ----
// Every definition of graft is in its headers; a program needs no graft library. The heaviest parts
// can come compiled instead, from graft::compiled (src/compiled/): a program that links it gets
// GRAFT_SEPARATE_COMPILATION (the target's public compile definition), and those parts' headers
// then declare them without defining them, so no translation unit compiles them again. The parts
// (the header that holds the definitions: the file of src/compiled/ that compiles them):
//   ELEMENTWISE     ops/detail/{unary,binary,activation_grad,reduce}_impl.hpp
//                                                       elementwise_ops.cpp (every dtype of each op)
//   OP_TABLE        graph/op_table.hpp                  op_table.cpp
//   GRADIENT_RULES  autodiff/rules/all.hpp              gradient_rules.cpp
//   GRADIENTS       autodiff/detail/gradients_impl.hpp  gradients.cpp   (gradients(), TF1 loops)
//   SESSION         exec/detail/session_impl.hpp        session.cpp     (the planner and run())
//   CLONE           surgery/detail/clone_impl.hpp       clone.cpp       (surgery::clone_into)
//   IMPORT          surgery/detail/import_impl.hpp      import.cpp      (surgery::import_meta_graph)
//   SAVER           train/detail/saver_impl.hpp         saver.cpp       (train::saver's save/restore)
//   TYPED           typed/detail/bind_impl.hpp          typed_runtime.cpp (graft::compiled only)
// A part's header includes its definitions under
//   #if !defined(GRAFT_SEPARATE_COMPILATION) || defined(GRAFT_COMPILING_<PART>)
// (the compiling file defines GRAFT_COMPILING_<PART>), and each function its header declares is
// defined GRAFT_INLINE: inline when header-only, one ordinary definition in graft::compiled. Every
// translation unit of a program must see the same setting. The CPU kernel table is the one
// exception: exec/cpu_kernels/all.hpp defines kernel_registry::global() out of line, graft::compiled compiles
// it (exec_kernels*.cpp), and a program without graft::compiled includes all.hpp in exactly one file.
#ifdef GRAFT_SEPARATE_COMPILATION
#define GRAFT_INLINE
#else
#define GRAFT_INLINE inline
#endif

#define GRAFT_VERSION_MAJOR 0
#define GRAFT_VERSION_MINOR 1
#define GRAFT_VERSION_PATCH 0
#define GRAFT_VERSION_STRING "0.1.0"

namespace graft {
/// graft's version, "major.minor.patch".
inline constexpr const char* version = GRAFT_VERSION_STRING;
}  // namespace graft
