#include <doctest/doctest.h>

#include <string>

#include "graft/formats/npy.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/formats/tf_graph/events.hpp"
#include "support/fixtures.hpp"

using graft::test::run_cli;

TEST_CASE("graft --version and --help") {
    auto v = run_cli("--version");
    CHECK(v.code == 0);
    CHECK(v.output.find(graft::version) != std::string::npos);
    auto h = run_cli("--help");
    CHECK(h.code == 0);
    CHECK(h.output.find("demo") != std::string::npos);
    auto bad = run_cli("no-such-command");
    CHECK(bad.code != 0);
}

TEST_CASE("graft demo writes .npy files that read back") {
    auto dir = graft::test::scratch("cli_demo");
    auto r = run_cli("demo --dir " + dir.string());
    CHECK(r.code == 0);
    CHECK(r.output.find("identical") != std::string::npos);
    auto w = graft::read_npy((dir / "w.npy").string());
    CHECK(w.shape() == graft::shape{2, 3});
    CHECK(w.matrix<float>()(1, 2) == 1.5f);
}

TEST_CASE("graft events lists an event file: file_version, scalars, a tag filter, corrupt files") {
    auto dir = graft::test::scratch("cli_events");
    std::string path;
    {
        graft::train::summary_writer w(dir.string());
        path = w.path();
        w.add_scalar("loss", 0.5f, 10);
        w.add_scalars({{"loss", 0.25f}, {"acc", 0.75f}}, 20);
    }
    auto r = run_cli("events " + path);
    CHECK(r.code == 0);
    CHECK(r.output.find("file_version brain.Event:2") != std::string::npos);
    CHECK(r.output.find("step 10  wall_time ") != std::string::npos);
    CHECK(r.output.find("loss = 0.25  acc = 0.75") != std::string::npos);
    CHECK(r.output.find("3 events") != std::string::npos);
    auto t = run_cli("events --tag acc " + dir.string());  // a log dir: its newest event file
    CHECK(t.code == 0);
    CHECK(t.output.find("step 20") != std::string::npos);
    CHECK(t.output.find("step 10") == std::string::npos);
    CHECK(t.output.find("acc = 0.75") != std::string::npos);

    auto bytes = graft::read_file(path);
    bytes[bytes.size() - 2] ^= 1;
    graft::write_file_atomic(path, bytes);
    auto bad = run_cli("events " + path);
    CHECK(bad.code == 1);
    CHECK(bad.output.find("data crc mismatch") != std::string::npos);
    CHECK(bad.output.find(path) != std::string::npos);
}
