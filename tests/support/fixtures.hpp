// Test helpers: where ../shared is, skipping cleanly when it is absent, running a command (the
// graft CLI, python3) and capturing what it prints.
#pragma once

#include <doctest/doctest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>

namespace graft::test {

/// The shared/ folder beside the project (tf-fixtures/, datasets/); GRAFT_SHARED_DIR overrides.
inline std::filesystem::path shared_dir() {
    if (const char* e = std::getenv("GRAFT_SHARED_DIR")) return e;
    return GRAFT_SHARED_DIR;
}
inline std::filesystem::path fixture(const std::string& rel) { return shared_dir() / "tf-fixtures" / rel; }
inline std::filesystem::path dataset(const std::string& rel) { return shared_dir() / "datasets" / rel; }

/// A fresh, empty scratch folder under the test's working directory.
inline std::filesystem::path scratch(const std::string& name) {
    auto p = std::filesystem::current_path() / "scratch" / name;
    std::filesystem::remove_all(p);
    std::filesystem::create_directories(p);
    return p;
}

inline bool present_or_skip(const std::filesystem::path& p) {
    if (std::filesystem::exists(p)) return true;
    std::cout << "SKIP: " << p.string() << " is absent (put TensorFlow's fixtures in ../shared to run this test)\n";
    MESSAGE("SKIP: fixture absent: " << p.string());
    return false;
}

/// A finished command: its exit status (-1 when it could not start or did not exit normally) and
/// what it printed on stdout and stderr, interleaved.
struct command_result {
    int code = -1;
    std::string output;
};

/// Runs `cmd` with /bin/sh, stderr merged into stdout. Never throws (except bad_alloc).
inline command_result run_command(const std::string& cmd) {
    command_result r;
    FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
    if (!p) return r;
    std::array<char, 4096> buf{};
    while (auto n = std::fread(buf.data(), 1, buf.size(), p)) r.output.append(buf.data(), n);
    int st = ::pclose(p);
    r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}
/// run_command() for `REQUIRE(run_command(cmd, out) == 0)`: the output goes to `output`.
inline int run_command(const std::string& cmd, std::string& output) {
    auto r = run_command(cmd);
    output = std::move(r.output);
    return r.code;
}

/// Runs f() and returns the exception of type E it throws; a test failure when it throws another
/// one or nothing.
template <class E, class F>
E expect_error(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return e;
    } catch (const std::exception& e) {
        FAIL("wrong exception: " << e.what());
    }
    FAIL("no exception");
    throw std::logic_error("unreachable");
}

/// Runs the graft CLI built with the tests: `run_cli("inspect model.pb")`.
inline command_result run_cli(const std::string& args) { return run_command(std::string(GRAFT_CLI) + " " + args); }
inline int run_cli(const std::string& args, std::string& output) {
    return run_command(std::string(GRAFT_CLI) + " " + args, output);
}

}  // namespace graft::test

/// Returns from the current test case, with one clear line, when the path is absent.
#define GRAFT_REQUIRE_PATH(p) \
    do { if (!::graft::test::present_or_skip(p)) return; } while (0)
