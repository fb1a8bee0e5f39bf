// graft/core/limits.hpp — the limits that hold on hostile files, and the memory budget of a load.
//
//   graft::load_limits lim = graft::get_load_limits();
//   lim.max_load_bytes = std::uint64_t{1} << 30;   // one load may allocate at most 1 GiB of tensors
//   graft::set_load_limits(lim);                    // process-wide (or GRAFT_MAX_LOAD_BYTES=1073741824)
//
// A file's declared sizes are checked against the bytes it holds before anything is allocated, but
// some formats legitimately describe more memory than they store: a TensorProto of shape [1e9] with
// one float_val means "1e9 copies of that value" (TF writes constants that way). So every reader of
// a user's file runs inside a load_scope, and every tensor buffer allocated while one is open on the
// thread is charged to it: a load that would allocate more than max_load_bytes stops with a
// limit_error naming the file and the option, instead of taking the machine's memory.
// Nested protobuf messages (and groups) deeper than max_message_depth are a format_error, so a
// file of 10^6 nested messages cannot overflow the stack.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "graft/core/error.hpp"

namespace graft {

/// Limits on what reading one file may cost. Defaults: max_load_bytes = the machine's physical
/// memory (or GRAFT_MAX_LOAD_BYTES), max_message_depth = 100 (libprotobuf's own recursion limit).
struct load_limits {
    std::uint64_t max_load_bytes = 0;  ///< tensor bytes one load may allocate; 0 = no limit
    int max_message_depth = 100;       ///< protobuf messages (and groups) nested deeper are refused
};

namespace detail {
struct load_limits_state {
    std::atomic<std::uint64_t> max_load_bytes;
    std::atomic<int> max_message_depth{100};
    load_limits_state() : max_load_bytes(default_bytes()) {}
    static std::uint64_t default_bytes() {
        if (const char* e = std::getenv("GRAFT_MAX_LOAD_BYTES"); e && *e) {
            char* end = nullptr;
            auto v = std::strtoull(e, &end, 10);
            if (end && *end == '\0') return v;
        }
        long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
        if (pages > 0 && page > 0) return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
        return 0;
    }
};
inline load_limits_state& limits_state() {
    static load_limits_state s;
    return s;
}
/// The nesting limit read by the protobuf decoders (one relaxed atomic load). Never throws.
inline int max_message_depth() { return limits_state().max_message_depth.load(std::memory_order_relaxed); }
}  // namespace detail

/// The limits in force for loads started from now on. Never throws.
inline load_limits get_load_limits() {
    auto& s = detail::limits_state();
    load_limits l;
    l.max_load_bytes = s.max_load_bytes.load(std::memory_order_relaxed);
    l.max_message_depth = s.max_message_depth.load(std::memory_order_relaxed);
    return l;
}

/// Sets the limits for every thread's later loads. Throws invalid_argument_error when
/// max_message_depth < 1.
inline void set_load_limits(const load_limits& l) {
    if (l.max_message_depth < 1) {
        throw invalid_argument_error(detail::cat("load_limits::max_message_depth must be at least 1, got ",
                                                 l.max_message_depth));
    }
    auto& s = detail::limits_state();
    s.max_load_bytes.store(l.max_load_bytes, std::memory_order_relaxed);
    s.max_message_depth.store(l.max_message_depth, std::memory_order_relaxed);
}

/// While alive, the tensor buffers this thread allocates are charged to one load of `file`, which
/// may allocate at most load_limits::max_load_bytes. A scope opened inside another one on the same
/// thread (a SavedModel's graph inside its directory) charges the outer one.
class load_scope {
public:
    explicit load_scope(std::string file) {
        if (current()) return;
        file_ = std::move(file);
        limit_ = get_load_limits().max_load_bytes;
        current() = this;
        active_ = true;
    }
    load_scope(const load_scope&) = delete;
    load_scope& operator=(const load_scope&) = delete;
    ~load_scope() {
        if (active_) current() = nullptr;
    }
    /// Bytes charged so far. Never throws.
    [[nodiscard]] std::uint64_t used() const { return used_; }

    /// Charges `bytes` to the open scope, if any. Throws limit_error past the limit.
    static void charge(std::uint64_t bytes) {
        load_scope* s = current();
        if (!s || s->limit_ == 0) return;
        if (bytes > s->limit_ - s->used_) {
            throw limit_error(detail::cat("reading this file would allocate more than ", s->limit_,
                                          " bytes of tensors (", s->used_, " so far, ", bytes, " more asked)"),
                              location::in_file(s->file_),
                              "a shape in the file asks for more memory than graft::load_limits::max_load_bytes "
                              "allows; if the file is trusted, raise it (graft::set_load_limits or the "
                              "GRAFT_MAX_LOAD_BYTES environment variable)");
        }
        s->used_ += bytes;
    }

private:
    static load_scope*& current() {
        thread_local load_scope* s = nullptr;
        return s;
    }
    std::string file_;
    std::uint64_t limit_ = 0, used_ = 0;
    bool active_ = false;
};

}  // namespace graft
