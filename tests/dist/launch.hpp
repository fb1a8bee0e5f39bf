// Runs a command line (an mpirun job) through the shell for the tests that watch a whole job end:
// its output (stdout and stderr together), exit status and wall time.
#pragma once

#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <string>

namespace graft::test::dist {

struct launched {
    std::string out;
    int status = -1;   ///< pclose's status (WIFEXITED / WEXITSTATUS)
    double secs = 0;
};

/// `cmd` with stderr joined to stdout. status -1 when the shell could not be started.
inline launched launch(const std::string& cmd) {
    launched r;
    const auto t0 = std::chrono::steady_clock::now();
    FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
    if (!p) return r;
    std::array<char, 4096> buf{};
    while (std::fgets(buf.data(), static_cast<int>(buf.size()), p)) r.out += buf.data();
    r.status = ::pclose(p);
    r.secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

}  // namespace graft::test::dist
