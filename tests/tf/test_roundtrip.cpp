// bundle_writer -> bundle_reader: every dtype, strings, partitioned tensors, sharded save + merge,
// atomicity, and the errors a reader gives for damaged bundles.
#include <doctest/doctest.h>

#include <complex>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "graft/core/io.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/formats/tf/bundle.hpp"
#include "graft/formats/tf/bundle_merge.hpp"
#include "graft/formats/tf/bundle_writer.hpp"
#include "graft/formats/tf/crc32c.hpp"
#include "support/fixtures.hpp"

using namespace graft::tf;
using graft::dtype;
using graft::tensor;
namespace fs = std::filesystem;

namespace {
tensor random_tensor(dtype t, const graft::shape& s, std::mt19937_64& rng) {
    if (t == dtype::string) {
        tensor r(t, s);
        auto* d = r.data<std::string>();
        for (std::int64_t i = 0; i < r.num_elements(); ++i) {
            std::size_t len = (i % 5 == 0) ? 0 : rng() % 40;
            if (i == 3) len = 70000;  // long: multi-byte varint length
            d[i].resize(len);
            for (auto& c : d[i]) c = static_cast<char>(rng());
        }
        return r;
    }
    tensor r = tensor::uninitialized(t, s);
    auto* b = static_cast<unsigned char*>(r.raw_data());
    for (std::size_t i = 0; i < r.nbytes(); ++i) b[i] = static_cast<unsigned char>(rng());
    if (t == dtype::bool_)
        for (std::size_t i = 0; i < r.nbytes(); ++i) b[i] &= 1;
    return r;
}
bool same_bytes(const tensor& a, const tensor& b) {
    if (a.type() != b.type() || !(a.shape() == b.shape())) return false;
    if (a.type() == dtype::string) return graft::equal(a, b);
    return a.nbytes() == b.nbytes() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}
std::string slurp(const std::string& p) { return graft::read_file(p); }
void spit(const std::string& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}
}  // namespace

TEST_CASE("round trip: every dtype, odd shapes, empty tensors, strings incl. empty and long") {
    auto dir = graft::test::scratch("ckpt_roundtrip");
    std::mt19937_64 rng(1234);
    const dtype all[] = {dtype::float16, dtype::float32, dtype::float64, dtype::bfloat16, dtype::int8,   dtype::int16,
                         dtype::int32,   dtype::int64,   dtype::uint8,   dtype::uint16,   dtype::uint32, dtype::uint64,
                         dtype::bool_,   dtype::complex64, dtype::complex128, dtype::string, dtype::qint8, dtype::quint8,
                         dtype::qint32};
    std::map<std::string, tensor> want;
    {
        bundle_writer w((dir / "model.ckpt").string());
        int i = 0;
        for (dtype t : all) {
            for (const graft::shape& s : {graft::shape{}, graft::shape{7}, graft::shape{3, 5, 2}, graft::shape{0, 4}}) {
                std::string name = "v" + std::to_string(i++) + "/" + graft::dtype_name(t);
                want[name] = random_tensor(t, s, rng);
                w.add(name, want[name]);
            }
        }
        w.add(std::string("odd\0name\xff", 9), tensor::scalar_of(1.5f));
        want[std::string("odd\0name\xff", 9)] = tensor::scalar_of(1.5f);
        CHECK_THROWS_AS(w.add("v0/float16", tensor::scalar_of(1.f)), graft::invalid_argument_error);
        w.finish();
        CHECK_THROWS_AS(w.add("late", tensor::scalar_of(1.f)), graft::invalid_argument_error);
    }
    CHECK(slurp((dir / "model.ckpt.index").string()).substr(0, 9) == std::string("\0\0\x06\x08\x01\x1a\x02\x08\x01", 9));
    bundle_reader r((dir / "model.ckpt").string());
    CHECK(r.keys().size() == want.size());
    std::size_t zero_copy = 0;
    for (const auto& entry : want) {
        const std::string& name =
            entry.first;  // INFO's lambda captures it: a plain name, not a binding
        const tensor& t = entry.second;
        INFO(name);
        read_info info;
        auto got = r.read(name, &info);
        CHECK(same_bytes(got, t));
        zero_copy += info.zero_copy;
    }
    CHECK(zero_copy > 0);
    // read_into existing tensors gives the same values.
    for (const auto& [name, t] : want) {
        tensor dst(t.type(), t.shape());
        r.read_into(name, dst);
        CHECK(same_bytes(dst, t));
    }
    CHECK_THROWS_AS(r.read_into(want.begin()->first, tensor(dtype::float32, {99})), graft::invalid_argument_error);
    // The same with zero-copy off and crc off: still identical, now always copies.
    bundle_reader copy((dir / "model.ckpt").string(), {false, false});
    for (const auto& [name, t] : want) {
        read_info info;
        CHECK(same_bytes(copy.read(name, &info), t));
        CHECK(!info.zero_copy);
        CHECK(!info.crc_checked);
    }
}

TEST_CASE("data layout: packed in add order, entries sorted; alignment option pads") {
    auto dir = graft::test::scratch("ckpt_layout");
    {
        bundle_writer w((dir / "a").string());
        w.add("z", tensor::from_vector<std::int8_t>({1, 2, 3}));
        w.add("m", tensor::from_vector<double>({1.0, 2.0}));
        w.add("a", tensor::from_vector<std::string>({"x", ""}));
        w.finish();
    }
    bundle_reader r((dir / "a").string());
    CHECK(r.entry("z").offset == 0);
    CHECK(r.entry("m").offset == 3);  // not 8-aligned: read() copies
    read_info info;
    CHECK(r.read("m", &info).data<double>()[1] == 2.0);
    CHECK(!info.zero_copy);
    CHECK(r.entry("a").offset == 19);
    CHECK(r.entry("a").size == 2 + 4 + 1);
    CHECK(fs::file_size(dir / "a.data-00000-of-00001") == 26);
    {
        bundle_writer w((dir / "b").string(), {true, 64});
        w.add("z", tensor::from_vector<std::int8_t>({1, 2, 3}));
        w.add("m", tensor::from_vector<double>({1.0, 2.0}));
        w.finish();
    }
    bundle_reader rb((dir / "b").string());
    CHECK(rb.entry("m").offset == 64);
    CHECK(rb.read("m", &info).data<double>()[0] == 1.0);
    CHECK(info.zero_copy);
}

TEST_CASE("a writer destroyed without finish() leaves nothing under the final names") {
    auto dir = graft::test::scratch("ckpt_abandon");
    {
        bundle_writer w((dir / "m").string());
        w.add("x", tensor::from_vector<float>({1, 2, 3}));
    }
    CHECK(fs::is_empty(dir));
}

TEST_CASE("partitioned variable: slices assembled, one slice read, TF's keys and full entry") {
    auto dir = graft::test::scratch("ckpt_sliced");
    std::mt19937_64 rng(5);
    tensor full = random_tensor(dtype::float32, {10, 3}, rng);
    tensor part0 = full.slice(0, 4).clone(), part1 = full.slice(4, 6).clone();
    tensor names = tensor::from_vector<std::string>({10}, {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"});
    {
        bundle_writer w((dir / "p").string());
        w.add_slice("emb", {10, 3}, tensor_slice::parse("0,4:-"), part0);
        w.add_slice("emb", {10, 3}, tensor_slice::parse("4,6:-"), part1);
        w.add_slice("vocab", {10}, tensor_slice::parse("5,5"), names.slice(5, 5).clone());
        w.add_slice("vocab", {10}, tensor_slice::parse("0,5"), names.slice(0, 5).clone());
        w.add_slice("whole", {2}, tensor_slice::parse("-"), tensor::from_vector<float>({1, 2}));  // full: plain
        CHECK_THROWS_AS(w.add_slice("emb", {10, 3}, tensor_slice::parse("0,4:-"), part0), graft::invalid_argument_error);
        CHECK_THROWS_AS(w.add_slice("emb", {10, 3}, tensor_slice::parse("0,5:-"), part0), graft::invalid_argument_error);
        w.finish();
    }
    bundle_reader r((dir / "p").string());
    CHECK(r.keys() == std::vector<std::string>{"emb", "vocab", "whole"});
    CHECK(r.entry("emb").slices.size() == 2);
    CHECK(!r.entry("whole").partitioned());
    CHECK(r.contains(encode_slice_key("emb", tensor_slice::parse("4,6:-"))));
    CHECK(r.entry("emb").shard_id == 0);
    CHECK(r.entry("emb").size == 0);
    CHECK(same_bytes(r.read("emb"), full));
    CHECK(graft::equal(r.read("vocab"), names));
    CHECK(same_bytes(r.read_slice("emb", tensor_slice::parse("4,6:-")), part1));
    auto mid = r.read_slice("emb", tensor_slice::parse("3,2:1,2"));  // spans both stored slices
    CHECK(mid.shape() == graft::shape{2, 2});
    CHECK(mid.matrix<float>()(0, 0) == full.matrix<float>()(3, 1));
    CHECK(mid.matrix<float>()(1, 1) == full.matrix<float>()(4, 2));
    CHECK(r.read_slice("whole", tensor_slice::parse("1,1")).data<float>()[0] == 2.f);
}

TEST_CASE("sharded save merged with merge_bundles, as MergeV2Checkpoints") {
    auto dir = graft::test::scratch("ckpt_merge");
    std::mt19937_64 rng(9);
    tensor a = random_tensor(dtype::float32, {4, 4}, rng), b = random_tensor(dtype::int64, {3}, rng);
    tensor s = random_tensor(dtype::string, {6}, rng);
    tensor emb = random_tensor(dtype::float64, {6, 2}, rng);
    const std::string p0 = (dir / "tmp" / "part-00000-of-00002").string(), p1 = (dir / "tmp" / "part-00001-of-00002").string();
    {
        bundle_writer w0(p0), w1(p1);
        w0.add("a", a);
        w0.add_slice("emb", {6, 2}, tensor_slice::parse("0,3:-"), emb.slice(0, 3).clone());
        w1.add("b", b);
        w1.add("s", s);
        w1.add_slice("emb", {6, 2}, tensor_slice::parse("3,3:-"), emb.slice(3, 3).clone());
        w0.finish();
        w1.finish();
    }
    merge_bundles({p0, p1}, (dir / "model.ckpt-7").string());
    CHECK(!fs::exists(p0 + ".index"));
    CHECK(!fs::exists(p1 + ".index"));
    CHECK(fs::exists(dir / "model.ckpt-7.data-00000-of-00002"));
    CHECK(fs::exists(dir / "model.ckpt-7.data-00001-of-00002"));
    bundle_reader r((dir / "model.ckpt-7").string());
    CHECK(r.num_shards() == 2);
    CHECK(r.keys() == std::vector<std::string>{"a", "b", "emb", "s"});
    CHECK(r.entry("emb").slices.size() == 2);
    CHECK(r.entry("b").shard_id == 1);
    CHECK(same_bytes(r.read("a"), a));
    CHECK(same_bytes(r.read("b"), b));
    CHECK(graft::equal(r.read("s"), s));
    CHECK(same_bytes(r.read("emb"), emb));
    // A duplicate unpartitioned tensor cannot be merged.
    {
        bundle_writer w0((dir / "d0").string()), w1((dir / "d1").string());
        w0.add("x", a);
        w1.add("x", a);
        w0.finish();
        w1.finish();
    }
    CHECK_THROWS_AS(merge_bundles({(dir / "d0").string(), (dir / "d1").string()}, (dir / "d").string()),
                    graft::invalid_argument_error);
}

TEST_CASE("clear errors: crc mismatch names the tensor, missing shard names the file, bad entries") {
    auto dir = graft::test::scratch("ckpt_errors");
    const std::string pre = (dir / "e").string();
    {
        bundle_writer w(pre);
        w.add("good", tensor::from_vector<float>({1, 2, 3}));
        w.add("bad", tensor::from_vector<float>({4, 5, 6}));
        w.add("str", tensor::from_vector<std::string>({"hello", "world"}));
        w.finish();
    }
    const std::string data = pre + ".data-00000-of-00001";
    std::string bytes = slurp(data);
    bytes[14] ^= 0x10;  // inside "bad" (offset 12)
    bytes[35] ^= 0x01;  // inside "str"'s string bytes (30..39)
    spit(data, bytes);
    bundle_reader r(pre);
    CHECK(r.read("good").data<float>()[2] == 3.f);
    for (const char* name : {"bad", "str"}) {
        try {
            (void)r.read(name);
            FAIL("expected format_error");
        } catch (const graft::format_error& e) {
            CHECK(e.where().tensor == name);
            CHECK(std::string(e.what()).find("mismatch") != std::string::npos);
        }
    }
    bundle_reader nocrc(pre, {false, true});
    CHECK(nocrc.read("bad").data<float>()[0] != 4.f);  // garbage, but returned when asked not to check
    fs::remove(data);
    bundle_reader gone(pre);
    try {
        (void)gone.read("good");
        FAIL("expected io_error");
    } catch (const graft::io_error& e) {
        CHECK(std::string(e.what()).find("e.data-00000-of-00001") != std::string::npos);
    }
    // Hand-made index entries: unknown dtype, size that does not match the shape, truncated data.
    auto make = [&](const std::string& p, proto::bundle_entry e, std::size_t data_len) {
        sstable::table_builder b;
        b.add("", proto::encode(proto::bundle_header{}));
        b.add("t", proto::encode(e));
        graft::write_file_atomic(p + ".index", b.finish());
        graft::write_file_atomic(p + ".data-00000-of-00001", std::string(data_len, '\0'));
    };
    proto::bundle_entry e;
    e.type = static_cast<dtype>(77);
    e.shape = graft::shape{2};
    e.size = 8;
    e.crc32c = crc32c::mask(crc32c::value(std::string(8, '\0')));
    make((dir / "u").string(), e, 8);
    bundle_reader ru((dir / "u").string());
    CHECK(ru.keys() == std::vector<std::string>{"t"});  // lists fine
    try {
        (void)ru.read("t");
        FAIL("expected unimplemented_error");
    } catch (const graft::unimplemented_error& ex) {
        CHECK(ex.where().tensor == "t");
        CHECK(std::string(ex.what()).find("dtype(77)") != std::string::npos);
    }
    e.type = dtype::float32;
    e.size = 12;
    make((dir / "s").string(), e, 12);
    CHECK_THROWS_AS((void)bundle_reader((dir / "s").string()).read("t"), graft::format_error);
    e.size = 8;
    make((dir / "tr").string(), e, 4);
    try {
        (void)bundle_reader((dir / "tr").string()).read("t");
        FAIL("expected format_error");
    } catch (const graft::format_error& ex) {
        CHECK(ex.where().file.find("tr.data-00000-of-00001") != std::string::npos);
    }
    // A header from the future.
    sstable::table_builder b;
    proto::bundle_header h;
    h.version.min_consumer = 5;
    b.add("", proto::encode(h));
    graft::write_file_atomic((dir / "f.index").string(), b.finish());
    CHECK_THROWS_AS(bundle_reader((dir / "f").string()), graft::format_error);
}

TEST_CASE("big-endian bundles: crc over file bytes, values byte-swapped, string lengths checksummed BE") {
    auto dir = graft::test::scratch("ckpt_bigendian");
    const std::string pre = (dir / "be").string();
    // float32 [2] = {1.5, -2} and int16 [1] = {0x0102}, stored big-endian; a string tensor {"ab", ""}.
    std::string data = std::string("\x3f\xc0\x00\x00\xc0\x00\x00\x00", 8) + std::string("\x01\x02", 2);
    std::string str_part;
    std::uint32_t crc = 0;
    for (std::uint32_t len : {2u, 0u}) {
        graft::tf::wire::put_varint(str_part, len);
        const unsigned char be[4] = {static_cast<unsigned char>(len >> 24), static_cast<unsigned char>(len >> 16),
                                     static_cast<unsigned char>(len >> 8), static_cast<unsigned char>(len)};
        crc = crc32c::extend(crc, be, 4);
    }
    const std::uint32_t m = crc32c::mask(crc);
    const char mb[4] = {static_cast<char>(m >> 24), static_cast<char>(m >> 16), static_cast<char>(m >> 8), static_cast<char>(m)};
    str_part.append(mb, 4);
    crc = crc32c::extend(crc, mb, 4);
    str_part += "ab";
    crc = crc32c::extend(crc, "ab", 2);
    proto::bundle_header h;
    h.endianness = 1;
    proto::bundle_entry f, i, s;
    f.type = dtype::float32;
    f.shape = graft::shape{2};
    f.size = 8;
    f.crc32c = crc32c::mask(crc32c::value(data.data(), 8));
    i.type = dtype::int16;
    i.shape = graft::shape{1};
    i.offset = 8;
    i.size = 2;
    i.crc32c = crc32c::mask(crc32c::value(data.data() + 8, 2));
    s.type = dtype::string;
    s.shape = graft::shape{2};
    s.offset = 10;
    s.size = static_cast<std::int64_t>(str_part.size());
    s.crc32c = crc32c::mask(crc);
    sstable::table_builder b;
    b.add("", proto::encode(h));
    b.add("f", proto::encode(f));
    b.add("i", proto::encode(i));
    b.add("s", proto::encode(s));
    graft::write_file_atomic(pre + ".index", b.finish());
    graft::write_file_atomic(pre + ".data-00000-of-00001", data + str_part);
    bundle_reader r(pre);
    read_info info;
    auto ft = r.read("f", &info);
    CHECK(!info.zero_copy);
    CHECK(ft.data<float>()[0] == 1.5f);
    CHECK(ft.data<float>()[1] == -2.f);
    CHECK(r.read("i").data<std::int16_t>()[0] == 0x0102);
    auto st = r.read("s");
    CHECK(st.data<std::string>()[0] == "ab");
    CHECK(st.data<std::string>()[1].empty());
}
