// crc32c, protobuf wire helpers, OrderedCode slice keys, slice specs.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "graft/formats/tf/crc32c.hpp"
#include "graft/formats/tf/ckpt_proto.hpp"
#include "graft/formats/tf/tensor_slice.hpp"
#include "graft/formats/tf/wire.hpp"

namespace crc = graft::tf::crc32c;
using graft::tf::tensor_slice;

static std::string hex(std::string_view s) {
    static const char* d = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        if (!out.empty()) out += ' ';
        out += d[c >> 4];
        out += d[c & 15];
    }
    return out;
}

TEST_CASE("crc32c test vectors, mask, unmask") {
    CHECK(crc::value("123456789", 9) == 0xE3069283u);
    CHECK(crc::value("", 0) == 0u);
    CHECK(crc::mask(0) == 0xA282EAD8u);
    CHECK(crc::mask(0xE3069283u) == 0xC78AB0E5u);
    for (std::uint32_t v : {0u, 1u, 0xE3069283u, 0xFFFFFFFFu, 0x12345678u}) CHECK(crc::unmask(crc::mask(v)) == v);
    // 32 zero bytes (RFC 3720 B.4): 0x8A9136AA; 32 bytes of 0xFF: 0x62A8AB43.
    std::string z(32, '\0'), f(32, '\xff');
    CHECK(crc::value(z) == 0x8A9136AAu);
    CHECK(crc::value(f) == 0x62A8AB43u);
}

TEST_CASE("crc32c: hardware and portable paths agree at every length and alignment; extend streams") {
    std::mt19937_64 rng(42);
    std::string buf(70000, '\0');
    for (auto& c : buf) c = static_cast<char>(rng());
    for (std::size_t n : {0ul, 1ul, 7ul, 8ul, 9ul, 255ul, 767ul, 768ul, 769ul, 12287ul, 12288ul, 12289ul, 40000ul, 69990ul}) {
        for (std::size_t off : {0ul, 1ul, 3ul, 7ul}) {
            const char* p = buf.data() + off;
            auto a = crc::value(p, n);
            CHECK(a == crc::extend_portable(0, p, n));
            std::size_t cut = n / 3;
            CHECK(crc::extend(crc::value(p, cut), p + cut, n - cut) == a);
        }
    }
    const std::string path = crc::hardware_accelerated() ? "SSE4.2" : "portable";
    MESSAGE("crc32c path: " << path);
}

TEST_CASE("wire: varints, negative int32, fixed, skip unknown, bounds errors name the offset") {
    graft::tf::wire::writer w;
    w.int32(1, -1);
    w.uint64(2, 300);
    w.fixed32(3, 0xDEADBEEF);
    w.bytes(4, "hi");
    w.fixed64(9, 7);
    const std::string& b = w.str();
    CHECK(hex(b.substr(0, 11)) == "08 FF FF FF FF FF FF FF FF FF 01");
    graft::tf::wire::reader r(b, "x.bin", 100, "Test");
    std::uint32_t f;
    graft::tf::wire::wire_type wt;
    REQUIRE(r.next(f, wt));
    CHECK(r.int32() == -1);
    REQUIRE(r.next(f, wt));
    CHECK(r.varint() == 300u);
    REQUIRE(r.next(f, wt));
    CHECK(r.fixed32() == 0xDEADBEEFu);
    REQUIRE(r.next(f, wt));
    CHECK(r.bytes() == "hi");
    REQUIRE(r.next(f, wt));
    CHECK(f == 9);
    r.skip(wt);
    CHECK(!r.next(f, wt));

    std::string trunc = b.substr(0, b.size() - 3);
    graft::tf::wire::reader t(trunc, "x.bin", 100, "Test");
    try {
        while (t.next(f, wt)) t.skip(wt);
        FAIL("expected format_error");
    } catch (const graft::format_error& e) {
        CHECK(e.where().file == "x.bin");
        REQUIRE(e.where().offset.has_value());
        CHECK(*e.where().offset >= 100u);
    }
}

TEST_CASE("BundleHeaderProto and BundleEntryProto encode like TF") {
    graft::tf::proto::bundle_header h;
    CHECK(hex(graft::tf::proto::encode(h)) == "08 01 1A 02 08 01");
    graft::tf::proto::bundle_entry e;
    e.type = graft::dtype::float32;
    e.shape = graft::shape{500, 10};
    e.size = 20000;
    e.crc32c = 0x01020304;
    CHECK(hex(graft::tf::proto::encode(e)) == "08 01 12 09 12 03 08 F4 03 12 02 08 0A 28 A0 9C 01 35 04 03 02 01");
    auto back = graft::tf::proto::decode_entry(graft::tf::wire::reader(graft::tf::proto::encode(e)));
    CHECK(back.shape == e.shape);
    CHECK(back.size == 20000);
    CHECK(back.crc32c == 0x01020304u);
    graft::tf::proto::bundle_entry s;  // scalar: shape present but empty
    s.type = graft::dtype::float32;
    s.size = 4;
    CHECK(hex(graft::tf::proto::encode(s)) == "08 01 12 00 28 04");
}

TEST_CASE("OrderedCode numbers and slice keys") {
    using namespace graft::tf::ordered_code;
    auto enc = [](std::int64_t v) { std::string s; write_signed_num_increasing(s, v); return s; };
    CHECK(hex(enc(0)) == "80");
    CHECK(hex(enc(5)) == "85");
    CHECK(hex(enc(63)) == "BF");
    CHECK(hex(enc(-1)) == "7F");
    CHECK(hex(enc(-64)) == "40");
    CHECK(hex(enc(64)) == "C0 40");
    CHECK(hex(enc(8192)) == "E0 20 00");
    CHECK(hex(enc(-2048)) == "38 00");
    std::string u;
    write_num_increasing(u, 0);
    write_num_increasing(u, 2);
    write_num_increasing(u, 300);
    CHECK(hex(u) == "00 01 02 02 01 2C");
    std::mt19937_64 rng(7);
    std::vector<std::int64_t> vals = {0, 1, -1, 63, 64, -64, -65, INT64_MAX, INT64_MIN, 1ll << 40, -(1ll << 40)};
    for (int i = 0; i < 2000; ++i) vals.push_back(static_cast<std::int64_t>(rng()) >> (rng() % 64));
    std::sort(vals.begin(), vals.end());
    std::string prev;
    for (std::size_t i = 0; i < vals.size(); ++i) {
        std::string s = enc(vals[i]);
        std::string_view sv = s;
        std::int64_t back = 0;
        REQUIRE(read_signed_num_increasing(sv, back));
        CHECK(back == vals[i]);
        CHECK(sv.empty());
        if (i && vals[i] != vals[i - 1]) CHECK(prev < s);  // order preserving
        prev = s;
    }
    auto key = graft::tf::encode_slice_key("w", tensor_slice::parse("0,5:-"));
    CHECK(hex(key) == "00 77 00 01 01 02 80 85 80 7F");
    std::string odd("a\0b\xff", 4);
    auto k2 = graft::tf::encode_slice_key(odd, tensor_slice::parse("3,4:-:100,9000"));
    auto d = graft::tf::decode_slice_key(k2);
    REQUIRE(d.has_value());
    CHECK(d->first == odd);
    CHECK(d->second == tensor_slice::parse("3,4:-:100,9000"));
    CHECK(!graft::tf::decode_slice_key("weights").has_value());
    CHECK(!graft::tf::decode_slice_key(key.substr(0, key.size() - 1)).has_value());
}

TEST_CASE("slice specs and shapes") {
    auto s = graft::tf::parse_slice_spec("10 3 5,5:-");
    CHECK(s.full_shape == graft::shape{10, 3});
    CHECK(s.slice.str() == "5,5:-");
    CHECK(s.slice.slice_shape(s.full_shape) == graft::shape{5, 3});
    CHECK(graft::tf::format_slice_spec(s.full_shape, s.slice) == "10 3 5,5:-");
    CHECK_THROWS_AS(graft::tf::parse_slice_spec("10 3 8,5:-"), graft::invalid_argument_error);
    CHECK_THROWS_AS(tensor_slice::parse("0,5:x"), graft::invalid_argument_error);
    CHECK(tensor_slice::parse("0,10:-").covers_all(graft::shape{10, 3}));
    CHECK(!tensor_slice::parse("0,9:-").covers_all(graft::shape{10, 3}));
}
