// TensorBoard event files: Event bytes built by hand from event.proto / summary.proto, a file
// written by summary_writer read back (crcs checked) with its scalars and graph.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "graft/core/io.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/formats/tf_graph/events.hpp"
#include "support/fixtures.hpp"

namespace {

std::string le(std::uint64_t v, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
    return s;
}
std::string bits_of(double d) { std::uint64_t b; std::memcpy(&b, &d, 8); return le(b, 8); }
std::string bits_of(float f) { std::uint32_t b; std::memcpy(&b, &f, 4); return le(b, 4); }

graft::graph small_graph() {
    graft::graph g;
    g.add_node({"x", "Placeholder"}).attrs.set("dtype", graft::dtype::float32);
    g.add_node({"w", "Const"}).attrs.set("dtype", graft::dtype::float32);
    g.at("w").attrs.set("value", graft::tensor::from_vector<float>({2}, {1.5f, -2.f}));
    g.add_node({"y", "Mul", {{"x", 0}, {"w", 0}}}).attrs.set("T", graft::dtype::float32);
    return g;
}

std::filesystem::path only_event_file(const std::filesystem::path& dir) {
    std::filesystem::path found;
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) { found = e.path(); ++n; }
    REQUIRE(n == 1);
    return found;
}

}  // namespace

TEST_CASE("summary: Event messages encode to the bytes event.proto and summary.proto define") {
    graft::train::event first;
    first.wall_time = 1700000000;
    first.file_version = "brain.Event:2";
    // wall_time: field 1, fixed64 (tag 0x09); file_version: field 3, bytes (tag 0x1A)
    CHECK(graft::train::encode_event(first) == "\x09" + bits_of(1700000000.0) + "\x1A\x0D" "brain.Event:2");

    graft::train::event s;
    s.wall_time = 1.5;
    s.step = 3;
    s.scalars = {{"loss", 0.25f}};
    // step: field 2 varint (0x10); summary: field 5 bytes (0x2A) { value: field 1 (0x0A) {
    //   tag: field 1 (0x0A) "loss", simple_value: field 2 fixed32 (0x15) } }
    std::string value = std::string("\x0A\x04") + "loss" + "\x15" + bits_of(0.25f);
    std::string summary = "\x0A" + le(value.size(), 1) + value;
    std::string expected = "\x09" + bits_of(1.5) + "\x10\x03" + "\x2A" + le(summary.size(), 1) + summary;
    CHECK(graft::train::encode_event(s) == expected);
    auto back = graft::train::decode_event(expected);
    CHECK(back.wall_time == 1.5);
    CHECK(back.step == 3);
    CHECK(back.has_summary);
    REQUIRE(back.scalars.size() == 1);
    CHECK(back.scalars[0].first == "loss");
    CHECK(back.scalars[0].second == 0.25f);

    // a zero scalar is still written (a oneof member), a negative step is a 10-byte varint
    graft::train::event z;
    z.step = -1;
    z.scalars = {{"a", 0.f}};
    auto zb = graft::train::decode_event(graft::train::encode_event(z));
    CHECK(zb.step == -1);
    CHECK(zb.scalar("a") == 0.f);

    // fields graft does not model (session_log = 7) survive decode + encode
    std::string with_log = expected + "\x3A\x02\x08\x01";
    auto d = graft::train::decode_event(with_log);
    CHECK(d.other_fields == "\x3A\x02\x08\x01");
    CHECK(graft::train::encode_event(d) == with_log);
}

TEST_CASE("summary: an event file written by graft reads back with file_version, scalars and the graph") {
    auto dir = graft::test::scratch("summary_file");
    auto g = small_graph();
    double fake_now = 1700000123.25;
    std::string path;
    {
        graft::train::summary_options opts;
        opts.clock = [&] { return fake_now; };
        graft::train::summary_writer w(dir.string(), opts);
        path = w.path();
        w.add_graph(g);
        for (int step = 0; step < 20; ++step) {
            fake_now += 1;
            w.add_scalar("loss", 1.f / static_cast<float>(step + 1), step * 10);
            if (step % 5 == 0) w.add_scalars({{"accuracy", 0.05f * step}, {"lr", 0.5f}}, step * 10);
        }
        // records are in the file while the writer is open
        CHECK(graft::train::read_events(path).size() == 1 + 1 + 20 + 4);
    }
    // TF's name: events.out.tfevents.<10-digit seconds>.<hostname>
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    CHECK(only_event_file(dir).filename().string() == std::string("events.out.tfevents.1700000123.") + host);
    CHECK(path == only_event_file(dir).string());

    auto events = graft::train::read_events(path);
    REQUIRE(events.size() == 26);
    CHECK(events[0].file_version == "brain.Event:2");
    CHECK(events[0].wall_time == 1700000123.0);  // whole seconds, like TF's EventsWriter
    CHECK(events[0].step == 0);
    CHECK_FALSE(events[0].has_summary);

    REQUIRE_FALSE(events[1].graph_def.empty());
    auto back = graft::tf::parse_graph_def(events[1].graph_def);
    CHECK(back == g);
    CHECK(events[1].graph_def == graft::tf::serialize_graph_def(g));

    std::vector<std::int64_t> loss_steps;
    for (std::size_t i = 2; i < events.size(); ++i) {
        const auto& e = events[i];
        CHECK(e.has_summary);
        if (auto l = e.scalar("loss")) {
            loss_steps.push_back(e.step);
            CHECK(*l == 1.f / static_cast<float>(e.step / 10 + 1));
            CHECK(e.wall_time == 1700000123.25 + static_cast<double>(e.step / 10 + 1));
        } else {
            REQUIRE(e.scalars.size() == 2);
            CHECK(e.scalar("accuracy") == 0.05f * static_cast<float>(e.step / 10));
            CHECK(e.scalar("lr") == 0.5f);
            CHECK(e.step % 50 == 0);
        }
    }
    REQUIRE(loss_steps.size() == 20);
    for (std::size_t i = 0; i < 20; ++i) CHECK(loss_steps[i] == static_cast<std::int64_t>(i * 10));

    // a second writer in the same second gets its own file
    graft::train::summary_options opts;
    opts.clock = [] { return 1700000123.5; };
    graft::train::summary_writer w2(dir.string(), opts);
    CHECK(w2.path() != path);
    CHECK(graft::train::read_events(w2.path()).size() == 1);
}

TEST_CASE("summary: a corrupt event file names the file and offset") {
    auto dir = graft::test::scratch("summary_corrupt");
    std::string path;
    {
        graft::train::summary_writer w(dir.string());
        path = w.path();
        w.add_scalar("loss", 1.f, 1);
        w.add_scalar("loss", 2.f, 2);
    }
    auto bytes = graft::read_file(path);
    auto first = graft::train::frame_tfrecord(graft::train::encode_event(graft::train::read_events(path)[0]));
    bytes[bytes.size() - 6] ^= 1;  // inside the last record's data
    graft::write_file_atomic(path, bytes);
    try {
        (void)graft::train::read_events(path);
        FAIL("no error");
    } catch (const graft::format_error& e) {
        CHECK(e.where().file == path);
        REQUIRE(e.where().offset.has_value());
        CHECK(*e.where().offset > first.size());
        CHECK(*e.where().offset < bytes.size());
    }

    // a record whose crcs are fine but whose bytes are not an Event: the offset points into the file
    auto p2 = (dir / "not_an_event").string();
    graft::write_file_atomic(p2, graft::train::frame_tfrecord("\x0A\x05" "ab"));
    try {
        (void)graft::train::read_events(p2);
        FAIL("no error");
    } catch (const graft::format_error& e) {
        CHECK(e.where().file == p2);
        CHECK(std::string(e.what()).find("tensorflow.Event") != std::string::npos);
    }
}
