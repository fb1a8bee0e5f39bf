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

#define GRAFT_VERSION_MAJOR 0
#define GRAFT_VERSION_MINOR 1
#define GRAFT_VERSION_PATCH 0
#define GRAFT_VERSION_STRING "0.1.0"

namespace graft {
/// graft's version, "major.minor.patch".
inline constexpr const char* version = GRAFT_VERSION_STRING;
}  // namespace graft
