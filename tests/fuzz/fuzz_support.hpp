// tests/fuzz/fuzz_support.hpp — what every libFuzzer target shares: the rule that a hostile input may
// only end in a graft::error (never a crash, a hang, a std::bad_alloc or a std::length_error), and
// a scratch folder for readers that open paths (files go in with graft::write_file_atomic, unsynced).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "graft/core/error.hpp"
#include "graft/core/io.hpp"
#include "graft/core/limits.hpp"

namespace graft::fuzz {

/// Loads may allocate 256 MiB of tensors, well under the -malloc_limit_mb the targets run with: a
/// file that asks for more must get graft's limit_error, which is what the fuzzer checks.
inline const bool load_limits_set = [] {
    auto l = graft::get_load_limits();
    l.max_load_bytes = std::uint64_t{256} << 20;
    graft::set_load_limits(l);
    return true;
}();

/// Runs `f`; a graft::error is the expected answer to bad bytes, anything else propagates (libFuzzer
/// reports an uncaught exception as a crash, with the input that caused it).
template <class F>
void expect_graft_errors_only(F&& f) {
    try {
        f();
    } catch (const graft::error&) {
    }
}

/// A per-process scratch folder under the system temp dir, removed at exit.
inline const std::filesystem::path& scratch() {
    static const std::filesystem::path dir = [] {
        auto d = std::filesystem::temp_directory_path() / ("graft-fuzz-" + std::to_string(::getpid()));
        std::filesystem::create_directories(d);
        return d;
    }();
    static const struct cleanup {
        std::filesystem::path d;
        ~cleanup() {
            std::error_code ec;
            std::filesystem::remove_all(d, ec);
        }
    } at_exit{dir};
    return dir;
}

/// Puts one fuzz input under `p` (no fsync: the file lives for one run).
inline void put_file(const std::filesystem::path& p, std::string_view bytes) {
    graft::write_file_atomic(p.string(), bytes, /*sync=*/false);
}

/// Splits one input into two: the first 2 bytes give the first part's length (mod the rest's size).
inline std::pair<std::string_view, std::string_view> split2(std::string_view in) {
    if (in.size() < 2) return {in, {}};
    std::size_t n = (static_cast<unsigned char>(in[0]) | static_cast<std::size_t>(static_cast<unsigned char>(in[1])) << 8);
    in.remove_prefix(2);
    n = in.empty() ? 0 : n % (in.size() + 1);
    return {in.substr(0, n), in.substr(n)};
}

}  // namespace graft::fuzz
