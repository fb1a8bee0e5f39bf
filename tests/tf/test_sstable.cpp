// The LevelDB-style table: builder layout (TF defaults), reader lookup/iteration, snappy, errors.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <string>

#include "graft/formats/tf/sstable.hpp"
#include "support/fixtures.hpp"

namespace ss = graft::tf::sstable;

TEST_CASE("sstable: empty table and metaindex block are TF's bytes") {
    ss::table_builder b;
    std::string bytes = b.finish();
    // metaindex: 8 bytes + trailer; index: 8 bytes + trailer; footer 48.
    REQUIRE(bytes.size() == 13 + 13 + 48);
    CHECK(bytes.substr(0, 8) == std::string("\0\0\0\0\1\0\0\0", 8));
    CHECK(bytes.substr(bytes.size() - 8) == std::string("\x57\xfb\x80\x8b\x24\x75\x47\xdb", 8));
    ss::table_reader r(bytes, "empty.index");
    CHECK(!r.begin().valid());
    CHECK(!r.get("x").has_value());
}

TEST_CASE("sstable: many entries across blocks; iteration, seek and get") {
    std::map<std::string, std::string> kv;
    std::mt19937 rng(1);
    for (int i = 0; i < 5000; ++i) {
        std::string k = "layer_" + std::to_string(rng() % 100000) + "/kernel/" + std::to_string(i % 7);
        kv[k] = std::string(rng() % 200, static_cast<char>('a' + i % 26));
    }
    kv[std::string(300000, 'z')] = "huge key";  // an entry >= 2 * block size forces its own block
    for (int restart : {16, 1, 3}) {
        ss::table_options o;
        o.block_size = 4096;
        o.restart_interval = restart;
        ss::table_builder b(o);
        for (auto& [k, v] : kv) b.add(k, v);
        CHECK_THROWS_AS(b.add("a", "b"), graft::invalid_argument_error);  // not increasing
        std::string bytes = b.finish();
        ss::table_reader r(bytes, "t");
        auto it = r.begin();
        for (auto& [k, v] : kv) {
            REQUIRE(it.valid());
            CHECK(it.key() == k);
            CHECK(it.value() == v);
            it.next();
        }
        CHECK(!it.valid());
        int n = 0;
        for (auto& [k, v] : kv) {
            if (++n % 37) continue;
            auto got = r.get(k);
            REQUIRE(got.has_value());
            CHECK(*got == v);
            CHECK(!r.get(k + "\x01").has_value());
            auto s = r.seek(k.substr(0, k.size() - 1));
            REQUIRE(s.valid());
            CHECK(s.key() <= k);
        }
        CHECK(!r.get("").has_value());
        CHECK(!r.seek("\xff\xff").valid());
    }
}

TEST_CASE("sstable: snappy-compressed blocks read back") {
    ss::table_options o;
    o.snappy = true;
    o.block_size = 1024;
    ss::table_builder b(o);
    std::map<std::string, std::string> kv;
    for (int i = 0; i < 300; ++i) kv["key/" + std::to_string(1000 + i)] = std::string(50, 'x');
    for (auto& [k, v] : kv) b.add(k, v);
    std::string bytes = b.finish();
    ss::table_options plain_o = o;
    plain_o.snappy = false;
    ss::table_builder plain(plain_o);
    for (auto& [k, v] : kv) plain.add(k, v);
    CHECK(bytes.size() < plain.finish().size() / 2);  // the blocks really are compressed
    ss::table_reader r(bytes, "c");
    std::size_t n = 0;
    for (auto it = r.begin(); it.valid(); it.next()) ++n;
    CHECK(n == kv.size());
    CHECK(*r.get("key/1150") == std::string(50, 'x'));
}

TEST_CASE("sstable: errors name the file and offset") {
    ss::table_builder b;
    b.add("a", "1");
    b.add("b", "2");
    std::string bytes = b.finish();
    CHECK_THROWS_AS(ss::table_reader(bytes.substr(0, 40), "short.index"), graft::format_error);
    std::string bad = bytes;
    bad[bad.size() - 1] ^= 1;
    try {
        ss::table_reader r(bad, "magic.index");
        FAIL("expected format_error");
    } catch (const graft::format_error& e) {
        CHECK(std::string(e.what()).find("magic") != std::string::npos);
        CHECK(e.where().file == "magic.index");
        CHECK(e.where().offset.has_value());
    }
    std::string flip = bytes;
    flip[3] ^= 0x40;  // inside the data block: crc mismatch when iterating
    ss::table_reader r(flip, "flip.index");
    try {
        (void)r.begin();
        FAIL("expected format_error");
    } catch (const graft::format_error& e) {
        CHECK(std::string(e.what()).find("checksum") != std::string::npos);
        CHECK(e.where().file == "flip.index");
    }
}
