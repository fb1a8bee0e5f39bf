// An independent decoder for the graph tests: Debian's python3-protobuf with graft's .proto files
// compiled for Python by protoc. Tests that need it skip with a message when it is absent.
#pragma once

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "support/fixtures.hpp"

namespace graft::test {

/// A folder with graft's messages compiled for Python (graft_tf/*_pb2.py), made once per run; empty
/// (with a printed reason) when python3-protobuf or protoc is missing.
inline const std::string& python_protos() {
    static const std::string dir = [] {
        std::string out;
        std::string protoc = GRAFT_PROTOC;
        if (protoc.empty() || protoc.find("NOTFOUND") != std::string::npos) {
            std::cout << "SKIP: protoc not found; the Python cross-checks need it\n";
            return std::string();
        }
        if (run_command("/usr/bin/python3 -c 'import google.protobuf'", out) != 0) {
            std::cout << "SKIP: /usr/bin/python3 with python3-protobuf is absent (apt-get install python3-protobuf)\n";
            return std::string();
        }
        auto d = std::filesystem::current_path() / "scratch" / "pyproto";
        std::filesystem::create_directories(d);
        std::string cmd = protoc + " -I " GRAFT_PROTO_DIR " --python_out=" + d.string() + " " GRAFT_PROTO_DIR "/graft_tf/*.proto";
        if (run_command(cmd, out) != 0) {
            std::cout << "SKIP: protoc --python_out failed: " << out << "\n";
            return std::string();
        }
        return d.string();
    }();
    return dir;
}

/// Runs a Python script (with graft_tf importable); returns its exit status and output.
inline int run_python(const std::string& script, std::string& output) {
    auto path = std::filesystem::current_path() / "scratch" / "oracle.py";
    {
        std::ofstream f(path);
        f << "import sys\nsys.path.insert(0, '" << python_protos() << "')\n" << script;
    }
    return run_command("/usr/bin/python3 " + path.string(), output);
}

/// Splits "k1=v1,k2=v2" into a map of counts.
inline std::map<std::string, std::size_t> parse_histogram(const std::string& s) {
    std::map<std::string, std::size_t> h;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
        auto eq = item.find('=');
        if (eq != std::string::npos) h[item.substr(0, eq)] = std::stoul(item.substr(eq + 1));
    }
    return h;
}

}  // namespace graft::test

#define GRAFT_REQUIRE_PYTHON()                                                    \
    do {                                                                          \
        if (::graft::test::python_protos().empty()) {                             \
            MESSAGE("SKIP: python3-protobuf or protoc absent");                   \
            return;                                                               \
        }                                                                         \
    } while (0)
