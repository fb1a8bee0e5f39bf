// Helpers the one-process and the mpirun halves of the tests/dist suites share.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "graft/exec/session.hpp"

namespace graft::test::dist {

/// Runs `fetch` in a fresh session over `g` and returns the graph_error's text ("" when it ran).
inline std::string run_error(const graft::graph& g, const std::string& fetch) {
    try {
        graft::exec::session s{g};
        (void)s.run({}, {fetch});
    } catch (const graft::graph_error& e) {
        return e.what();
    }
    return {};
}

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// Names in `dir` that a finished (or recovered) save must not leave behind.
inline std::vector<std::string> leftovers(const std::string& dir) {
    std::vector<std::string> out;
    for (auto& e : std::filesystem::directory_iterator(dir)) {
        auto n = e.path().filename().string();
        if (n.find("_temp_") != std::string::npos || n.find(".tempstate") != std::string::npos ||
            n.find(".graft-") != std::string::npos)
            out.push_back(n);
    }
    return out;
}

}  // namespace graft::test::dist
