// tests/support/faults.hpp — fault injection into graft's writers (graft::detail::file_ops).
//
//   graft::test::fault_injector f(7, graft::test::fault::fail);  // the 7th write/fsync/rename/link/unlink
//   try { save(); } catch (const graft::io_error&) {}             //   fails (EIO; ENOSPC for a write)
//   CHECK(f.fired());
//
// fault::exit ends the process at that call instead (_exit(0), no unwinding, no rollback): what
// the disk holds then is what a crash at that instant would leave. Use it in a forked child.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstddef>

#include "graft/core/io.hpp"

namespace graft::test {

enum class fault { fail, exit };

namespace detail {
struct fault_state {
    long at = -1, count = 0;
    fault mode = fault::fail;
    bool fired = false;
};
inline fault_state& state() {
    static fault_state s;
    return s;
}
/// True when this call is the one to fail (or the process ends here).
inline bool hit() {
    auto& s = state();
    if (++s.count != s.at) return false;
    s.fired = true;
    if (s.mode == fault::exit) ::_exit(0);
    return true;
}
inline ssize_t write(int fd, const void* p, std::size_t n) {
    if (hit()) { errno = ENOSPC; return -1; }
    return ::write(fd, p, n);
}
inline int fsync(int fd) {
    if (hit()) { errno = EIO; return -1; }
    return ::fsync(fd);
}
inline int rename(const char* a, const char* b) {
    if (hit()) { errno = EIO; return -1; }
    return ::rename(a, b);
}
inline int link(const char* a, const char* b) {
    if (hit()) { errno = EIO; return -1; }
    return ::link(a, b);
}
inline int unlink(const char* a) {
    if (hit()) { errno = EIO; return -1; }
    return ::unlink(a);
}
}  // namespace detail

/// While alive, the `at`-th file operation graft's writers make (counting from 1) fails or exits.
class fault_injector {
public:
    explicit fault_injector(long at, fault mode = fault::fail) {
        auto& s = detail::state();
        s = {};
        s.at = at;
        s.mode = mode;
        auto& o = graft::detail::fops();
        o.write = &detail::write;
        o.fsync = &detail::fsync;
        o.rename = &detail::rename;
        o.link = &detail::link;
        o.unlink = &detail::unlink;
    }
    fault_injector(const fault_injector&) = delete;
    fault_injector& operator=(const fault_injector&) = delete;
    ~fault_injector() { graft::detail::fops() = graft::detail::file_ops{}; }
    [[nodiscard]] bool fired() const { return detail::state().fired; }
    /// File operations counted so far.
    [[nodiscard]] long calls() const { return detail::state().count; }
};

}  // namespace graft::test
