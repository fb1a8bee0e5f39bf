// Damaged checkpoints never crash: every single-byte flip (also with the block checksum recomputed, so
// the parsers see the garbage) and every truncation either throws graft::error or yields the same
// tensors. Runs on copies in a scratch dir (never on ../shared). CI runs this under ASan+UBSan.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "graft/core/io.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/formats/tf/bundle_writer.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf/crc32c.hpp"
#include "graft/formats/tf/sstable.hpp"
#include "support/fixtures.hpp"

namespace fs = std::filesystem;
using graft::tensor;

namespace {
// Replaces the file with a new inode (mapped old contents stay valid). Unlink + create rather than
// rename-over or truncate, which make ext4 flush to disk each time.
void spit(const fs::path& p, const std::string& bytes) {
    fs::remove(p);
    std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::map<std::string, tensor> read_all(const std::string& path, graft::tf::bundle_read_options o = {}) {
    graft::tf::checkpoint_reader r(path, o);
    std::map<std::string, tensor> out;
    for (const auto& k : r.keys()) out[k] = r.read(k).clone();
    return out;
}

bool same(const std::map<std::string, tensor>& a, const std::map<std::string, tensor>& b) {
    if (a.size() != b.size()) return false;
    for (const auto& [k, t] : a) {
        auto it = b.find(k);
        if (it == b.end() || !graft::equal(t, it->second)) return false;
    }
    return true;
}

/// (offset, size) of every block of a table: data blocks, metaindex, index.
std::vector<std::pair<std::size_t, std::size_t>> blocks_of(const std::string& bytes) {
    namespace ss = graft::tf::sstable;
    const char* f = bytes.data() + bytes.size() - ss::footer_size;
    const char* p = f;
    auto meta = ss::detail::decode_handle(p, f + 40, "t", 0);
    auto index = ss::detail::decode_handle(p, f + 40, "t", 0);
    std::vector<std::pair<std::size_t, std::size_t>> out{{meta.offset, meta.size}, {index.offset, index.size}};
    ss::detail::block_iter it(ss::detail::read_block(bytes, "t", index));
    for (it.seek_to_first(); it.valid(); it.next()) {
        std::string_view hv = it.value();
        const char* q = hv.data();
        auto h = ss::detail::decode_handle(q, hv.data() + hv.size(), "t", 0);
        out.emplace_back(h.offset, h.size);
    }
    return out;
}

/// Recomputes the trailer crc of the block containing byte `pos` (if any).
void fix_crc(std::string& bytes, std::size_t pos, const std::vector<std::pair<std::size_t, std::size_t>>& blocks) {
    namespace crc = graft::tf::crc32c;
    for (auto [off, size] : blocks) {
        if (pos < off || pos >= off + size) continue;
        std::uint32_t c = crc::extend(crc::value(bytes.data() + off, size), bytes.data() + off + size, 1);
        std::string m;
        graft::tf::wire::put_fixed32(m, crc::mask(c));
        bytes.replace(off + size + 1, 4, m);
    }
}

struct tally { int same = 0, changed = 0, errors = 0; };

/// Opens and reads `path` after each mutation of `file`; fails on anything but graft::error or (when
/// `must_match`) the original tensors. Crc-fixed flips can form a different but valid checkpoint (a
/// renamed key, another dtype of the same size), so they only have to be handled without crashing.
template <class Mutate>
tally torture(const fs::path& file, const std::string& open_path, std::size_t count, Mutate mutate,
              const std::map<std::string, tensor>& want, graft::tf::bundle_read_options o = {}, bool must_match = true) {
    const std::string orig = graft::read_file(file.string());
    tally t;
    for (std::size_t i = 0; i < count; ++i) {
        std::string bytes = orig;
        if (!mutate(bytes, i)) continue;
        spit(file, bytes);
        try {
            auto got = read_all(open_path, o);
            const bool unchanged = same(got, want);
            if (o.verify_crc && must_match) {
                CAPTURE(i);
                CHECK(unchanged);
            }
            ++(unchanged ? t.same : t.changed);
        } catch (const graft::error&) {
            ++t.errors;
        }
    }
    spit(file, orig);
    return t;
}

fs::path copy_fixture(const std::string& rel_dir, const std::string& scratch_name) {
    auto dst = graft::test::scratch(scratch_name);
    for (const auto& e : fs::directory_iterator(graft::test::fixture(rel_dir))) {
        if (e.is_regular_file()) fs::copy_file(e.path(), dst / e.path().filename());
    }
    for (const auto& e : fs::directory_iterator(dst)) fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
    return dst;
}
}  // namespace

TEST_CASE("corrupt V2 index: byte flips (raw and crc-fixed) and truncations") {
    GRAFT_REQUIRE_PATH(graft::test::fixture("mnist-softmax/model.ckpt.index"));
    struct item { const char* dir; const char* prefix; };
    for (const item& it :
         {item{"mnist-softmax", "model.ckpt"},
          item{"tf-serving/saved_model_half_plus_two_cpu/00000123/variables", "variables"},
          item{"tf-serving/saved_model_half_plus_two_tf2_cpu/00000123/variables", "variables"}}) {
        const char* dir = it.dir;  // INFO's lambda captures it: a plain name, not a binding
        const char* prefix = it.prefix;
        INFO(std::string(dir));
        auto d = copy_fixture(dir, "corrupt_v2");
        const std::string pre = (d / prefix).string();
        const fs::path index = pre + ".index";
        const auto want = read_all(pre);
        const std::string orig = graft::read_file(index.string());
        const auto blocks = blocks_of(orig);
        auto flip = [&](std::uint8_t x) {
            return [x](std::string& b, std::size_t i) { b[i] = static_cast<char>(b[i] ^ x); return true; };
        };
        auto a = torture(index, pre, orig.size(), flip(0xFF), want);
        auto b = torture(index, pre, orig.size(), flip(0x01), want);
        auto c = torture(index, pre, orig.size(), [&](std::string& s, std::size_t i) {
            s[i] = static_cast<char>(s[i] ^ 0x5A);
            fix_crc(s, i, blocks);
            return true;
        }, want, {}, false);
        auto t = torture(index, pre, orig.size() / 16 + 1, [](std::string& s, std::size_t i) {
            s.resize(i * 16);
            return true;
        }, want);
        MESSAGE(std::string(dir) << ": flips " << a.errors + b.errors << " errors / " << a.same + b.same << " unchanged; crc-fixed flips "
                    << c.errors << " / " << c.same << "; truncations " << t.errors << " / " << t.same);
        CHECK(a.errors > 0);
        CHECK(c.errors > 0);
        CHECK(t.same == 0);
    }
}

TEST_CASE("corrupt V2 data file: flips are caught by the crc; without it nothing crashes") {
    auto src = graft::test::fixture("tf-serving/saved_model_half_plus_two_tf2_cpu/00000123/variables");
    GRAFT_REQUIRE_PATH(src);
    auto d = copy_fixture("tf-serving/saved_model_half_plus_two_tf2_cpu/00000123/variables", "corrupt_data");
    const std::string pre = (d / "variables").string();
    const fs::path data = pre + ".data-00000-of-00001";
    const auto want = read_all(pre);
    const auto size = fs::file_size(data);
    auto flip = [](std::string& b, std::size_t i) { b[i] = static_cast<char>(b[i] ^ 0x24); return true; };
    auto checked = torture(data, pre, size, flip, want);
    CHECK(checked.same == 0);  // every byte of this file belongs to a checksummed tensor
    auto unchecked = torture(data, pre, size, flip, want, {false, true});
    CHECK(unchecked.changed > 0);  // without the crc, damaged values come back silently
    auto cut = torture(data, pre, size, [](std::string& b, std::size_t i) { b.resize(i); return true; }, want);
    CHECK(cut.same == 0);
}

TEST_CASE("corrupt V1 checkpoint: byte flips (raw and crc-fixed) and truncations") {
    auto f = graft::test::fixture("tf-serving/session_bundle_half_plus_two/export-00000-of-00001");
    GRAFT_REQUIRE_PATH(f);
    auto d = graft::test::scratch("corrupt_v1");
    fs::copy_file(f, d / "export-00000-of-00001");
    fs::permissions(d / "export-00000-of-00001", fs::perms::owner_write, fs::perm_options::add);
    const fs::path file = d / "export-00000-of-00001";
    const auto want = read_all(file.string());
    const std::string orig = graft::read_file(file.string());
    const auto blocks = blocks_of(orig);
    auto raw = torture(file, file.string(), orig.size(), [](std::string& b, std::size_t i) {
        b[i] = static_cast<char>(b[i] ^ 0xFF);
        return true;
    }, want);
    auto fixed = torture(file, file.string(), orig.size(), [&](std::string& s, std::size_t i) {
        s[i] = static_cast<char>(s[i] ^ 0x33);
        fix_crc(s, i, blocks);
        return true;
    }, want, {}, false);
    auto cut = torture(file, file.string(), orig.size() / 16 + 1, [](std::string& s, std::size_t i) {
        s.resize(i * 16);
        return true;
    }, want);
    CHECK(raw.errors > 0);
    CHECK(fixed.errors > 0);
    CHECK(cut.same == 0);
}

TEST_CASE("corrupt graft-written index with partitioned, string and int tensors: crc-fixed flips") {
    auto d = graft::test::scratch("corrupt_sliced");
    const std::string pre = (d / "p").string();
    {
        graft::tf::bundle_writer w(pre);
        w.add_slice("emb", {6, 2}, graft::tf::tensor_slice::parse("0,2:-"), tensor(graft::dtype::float32, {2, 2}));
        w.add_slice("emb", {6, 2}, graft::tf::tensor_slice::parse("2,4:-"), tensor::from_vector<float>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}));
        w.add_slice("words", {4}, graft::tf::tensor_slice::parse("2,2"), tensor::from_vector<std::string>({"c", "dd"}));
        w.add_slice("words", {4}, graft::tf::tensor_slice::parse("0,2"), tensor::from_vector<std::string>({"", "b"}));
        w.add("step", tensor::scalar_of<std::int64_t>(7));
        w.add("names", tensor::from_vector<std::string>({"x", "yy", ""}));
        w.finish();
    }
    const fs::path index = pre + ".index";
    const auto want = read_all(pre);
    const std::string orig = graft::read_file(index.string());
    const auto blocks = blocks_of(orig);
    for (std::uint8_t x : {0x01, 0x80, 0x7F}) {
        auto t = torture(index, pre, orig.size(), [&](std::string& s, std::size_t i) {
            s[i] = static_cast<char>(s[i] ^ x);
            fix_crc(s, i, blocks);
            return true;
        }, want, {}, false);
        CHECK(t.errors > 0);
        CHECK(t.same > 0);
    }
}
