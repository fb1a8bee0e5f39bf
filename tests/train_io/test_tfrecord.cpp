// TFRecord framing: bytes built by hand from the format's definition, crc checks, errors that name
// the file and the record's offset.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "graft/core/io.hpp"
#include "graft/formats/tf/tfrecord.hpp"
#include "support/fixtures.hpp"

namespace {

using graft::test::expect_error;

/// CRC-32C one bit at a time, straight from the definition (reflected polynomial 0x82F63B78,
/// initial and final inversion): independent of graft's table and SSE4.2 paths.
std::uint32_t crc32c_bitwise(std::string_view s) {
    std::uint32_t c = 0xFFFFFFFFu;
    for (unsigned char b : s) {
        c ^= b;
        for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    return ~c;
}
std::uint32_t masked(std::uint32_t c) { return ((c >> 15) | (c << 17)) + 0xA282EAD8u; }

std::string le(std::uint64_t v, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
    return s;
}

}  // namespace

TEST_CASE("tfrecord: crc32c test vectors (RFC 3720, TF's crc32c_test) and the mask") {
    CHECK(crc32c_bitwise("123456789") == 0xE3069283u);
    CHECK(crc32c_bitwise(std::string(32, '\0')) == 0x8A9136AAu);
    CHECK(crc32c_bitwise(std::string(32, '\xFF')) == 0x62A8AB43u);
    std::string ascending;
    for (int i = 0; i < 32; ++i) ascending += static_cast<char>(i);
    CHECK(crc32c_bitwise(ascending) == 0x46DD794Eu);
    // graft's implementation and mask agree with the definition
    CHECK(graft::tf::crc32c::value("123456789") == 0xE3069283u);
    CHECK(graft::tf::crc32c::mask(0xE3069283u) == 0xC78AB0E5u);
    CHECK(masked(0xE3069283u) == 0xC78AB0E5u);
    CHECK(graft::tf::crc32c::unmask(0xC78AB0E5u) == 0xE3069283u);
}

TEST_CASE("tfrecord: a record of \"123456789\" is the format's bytes, byte for byte") {
    // length 9 as uint64 LE | masked crc32c of those 8 bytes | data | masked crc32c of the data
    std::string len = le(9, 8);
    CHECK(crc32c_bitwise(len) == 0x872FCB77u);
    std::string expected = len + le(0x3971F937u, 4) + "123456789" + le(0xC78AB0E5u, 4);
    CHECK(expected.size() == 8 + 4 + 9 + 4);
    CHECK(masked(crc32c_bitwise(len)) == 0x3971F937u);
    CHECK(graft::train::frame_tfrecord("123456789") == expected);

    // an empty record: length 0, and the data crc of nothing is 0, masked to the delta itself
    std::string empty = le(0, 8) + le(masked(crc32c_bitwise(le(0, 8))), 4) + le(0xA282EAD8u, 4);
    CHECK(graft::train::frame_tfrecord("") == empty);

    // the writer puts exactly those bytes in the file, record after record
    auto dir = graft::test::scratch("tfrecord_bytes");
    auto path = (dir / "a.tfrecord").string();
    {
        graft::train::tfrecord_writer w(path);
        CHECK(w.write("123456789") == 0);
        CHECK(w.write("") == expected.size());
        // a record is in the file as soon as write() returns (TensorBoard reads while training runs)
        CHECK(graft::read_file(path) == expected + empty);
    }
    CHECK(graft::read_file(path) == expected + empty);

    // and reads back, crcs checked
    graft::train::tfrecord_reader r(path);
    std::string rec;
    REQUIRE(r.next(rec));
    CHECK(rec == "123456789");
    CHECK(r.record_offset() == 0);
    REQUIRE(r.next(rec));
    CHECK(rec == "");
    CHECK(r.record_offset() == expected.size());
    CHECK_FALSE(r.next(rec));
}

TEST_CASE("tfrecord: many records of many sizes round-trip; append keeps what is there") {
    auto path = (graft::test::scratch("tfrecord_many") / "m.tfrecord").string();
    std::vector<std::string> recs;
    for (int i = 0; i < 50; ++i) {
        std::string s;
        for (int k = 0; k < i * 37; ++k) s += static_cast<char>((k * 131 + i) & 0xFF);
        recs.push_back(s);
    }
    {
        graft::train::tfrecord_writer w(path);
        for (int i = 0; i < 30; ++i) w.write(recs[static_cast<std::size_t>(i)]);
    }
    {
        graft::train::tfrecord_writer w(path, /*append=*/true);
        for (int i = 30; i < 50; ++i) w.write(recs[static_cast<std::size_t>(i)]);
        w.close();
        CHECK_THROWS_AS(w.write("x"), graft::io_error);
    }
    CHECK(graft::train::read_tfrecords(path) == recs);
}

TEST_CASE("tfrecord: a flipped byte or a truncation is an error naming the file and the record's offset") {
    auto dir = graft::test::scratch("tfrecord_bad");
    std::string good = graft::train::frame_tfrecord("first") + graft::train::frame_tfrecord("second record");
    const std::uint64_t second = 12 + 5 + 4;  // offset of the second record

    struct cse { const char* what; std::size_t at; const char* text; };
    for (auto c : {cse{"data byte", second + 12 + 3, "data crc"}, cse{"length byte", second + 1, "length crc"},
                   cse{"length crc", second + 9, "length crc"}, cse{"data crc", second + 12 + 13 + 2, "data crc"}}) {
        CAPTURE(c.what);
        std::string bad = good;
        bad[c.at] = static_cast<char>(bad[c.at] ^ 0x40);
        auto path = (dir / "flipped.tfrecord").string();
        graft::write_file_atomic(path, bad);
        graft::train::tfrecord_reader r(path);
        std::string rec;
        REQUIRE(r.next(rec));
        CHECK(rec == "first");
        auto e = expect_error<graft::format_error>([&] { r.next(rec); });
        CHECK(e.where().file == path);
        REQUIRE(e.where().offset.has_value());
        CHECK(*e.where().offset == second);
        CHECK(std::string(e.what()).find(c.text) != std::string::npos);
        CHECK(std::string(e.what()).find(path) != std::string::npos);
    }

    for (std::size_t cut : {good.size() - 1, good.size() - 4, second + 12 + 2, second + 11, second + 1}) {
        CAPTURE(cut);
        auto path = (dir / "cut.tfrecord").string();
        graft::write_file_atomic(path, good.substr(0, cut));
        auto e = expect_error<graft::format_error>([&] { (void)graft::train::read_tfrecords(path); });
        CHECK(e.where().file == path);
        CHECK(e.where().offset == second);
        CHECK(std::string(e.what()).find("truncated") != std::string::npos);
    }

    auto e = expect_error<graft::io_error>([&] { (void)graft::train::read_tfrecords((dir / "absent").string()); });
    CHECK(e.where().file == (dir / "absent").string());
}
