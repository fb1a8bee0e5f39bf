// `graft ckpt ls|dump|rewrite|diff` on TF's own checkpoints; rewrite is byte-identical.
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "graft/core/io.hpp"
#include "graft/formats/npy.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf/checkpoint_rewrite.hpp"
#include "support/fixtures.hpp"

namespace fs = std::filesystem;

namespace {
struct run_result { int code; std::string out; };
run_result run(const std::string& args) {
    std::string cmd = std::string(GRAFT_CLI) + " " + args + " 2>&1";
    std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
    std::string out;
    std::array<char, 4096> buf{};
    while (auto n = std::fread(buf.data(), 1, buf.size(), p.get())) out.append(buf.data(), n);
    int status = pclose(p.release());
    return {WEXITSTATUS(status), out};
}
std::string q(const fs::path& p) { return "'" + p.string() + "'"; }
}  // namespace

TEST_CASE("graft ckpt rewrite: byte-identical .index and .data for every uncompressed TF bundle") {
    GRAFT_REQUIRE_PATH(graft::test::fixture("mnist-softmax"));
    auto out = graft::test::scratch("cli_rewrite");
    int n = 0, compressed = 0;
    for (fs::recursive_directory_iterator it(graft::test::fixture("")), end; it != end; ++it) {
        std::string idx = it->path().string();
        if (!idx.ends_with(".index")) continue;
        std::string prefix = idx.substr(0, idx.size() - 6);
        std::string data = prefix + ".data-00000-of-00001";
        if (!fs::exists(data)) continue;  // index-only fixture
        CAPTURE(prefix);
        fs::path dst = out / ("r" + std::to_string(n++));
        auto r = run("ckpt rewrite " + q(prefix) + " " + q(dst));
        REQUIRE(r.code == 0);
        CHECK(graft::read_file(dst.string() + ".data-00000-of-00001") == graft::read_file(data));
        const bool snappy = graft::tf::sstable::table_reader::open(idx).compressed_blocks() > 0;
        if (!snappy) {
            CHECK(graft::read_file(dst.string() + ".index") == graft::read_file(idx));
        } else {
            ++compressed;
            auto d = run("ckpt diff " + q(prefix) + " " + q(dst));
            CHECK(d.code == 0);
            CHECK(d.out.find("identical") != std::string::npos);
            graft::tf::checkpoint_reader a(prefix), b(dst.string());
            CHECK(a.keys() == b.keys());
            for (auto& k : a.keys()) CHECK(graft::equal(a.read(k), b.read(k)));
        }
    }
    CHECK(n >= 9);
    CHECK(compressed == 2);  // tf-serving's half_plus_two_cpu and half_plus_two_tf2_cpu have snappy indexes
}

TEST_CASE("graft ckpt ls / dump / diff") {
    auto p = graft::test::fixture("mnist-softmax/train_model.ckpt");
    GRAFT_REQUIRE_PATH(p.string() + ".index");
    auto ls = run("ckpt ls " + q(p));
    CHECK(ls.code == 0);
    CHECK(ls.out == "Variable float32 [784,10]\nVariable_1 float32 [10]\n");
    auto js = run("ckpt ls --json " + q(p));
    CHECK(js.out.find("{\"name\": \"Variable\", \"dtype\": \"float32\", \"shape\": [784, 10]}") != std::string::npos);
    auto sm = run("ckpt ls " + q(graft::test::fixture("tf-serving/saved_model_half_plus_two_cpu/00000123")));
    CHECK(sm.out == "a float32 []\na2 float32 []\nb float32 []\nc float32 []\nc2 float32 []\n");

    auto dir = graft::test::scratch("cli_dump");
    auto d = run("ckpt dump " + q(graft::test::fixture("tf-rust/regression_savedmodel")) + " w/.ATTRIBUTES/VARIABLE_VALUE --npy " + q(dir));
    CHECK(d.code == 0);
    auto w = graft::read_npy((dir / "w__.ATTRIBUTES__VARIABLE_VALUE.npy").string());
    CHECK(w.shape() == graft::shape{1});
    auto text = run("ckpt dump " + q(graft::test::fixture("mnist-softmax/model_names.ckpt")) + " bias_0");
    CHECK(text.out.find("bias_0 float32 [3]\n[0.12024708 1.2480913 -0.24832951]") != std::string::npos);
    auto missing = run("ckpt dump " + q(p) + " Variable_9");
    CHECK(missing.code == 1);
    CHECK(missing.out.find("closest names") != std::string::npos);

    auto same = run("ckpt diff " + q(p) + " " + q(p));
    CHECK(same.code == 0);
    auto other = run("ckpt diff " + q(graft::test::fixture("mnist-softmax/model.ckpt")) + " " + q(p));
    CHECK(other.code == 1);
    CHECK(other.out.find("differs: Variable: float32[2,3] vs float32[784,10]") != std::string::npos);
    CHECK(other.out.find("only in A: Variable_2") != std::string::npos);
}

TEST_CASE("graft ckpt diff reports the max abs diff of changed values; rewrite converts V1 to V2") {
    auto v1 = graft::test::fixture("tf-serving/session_bundle_half_plus_two/export-00000-of-00001");
    GRAFT_REQUIRE_PATH(v1);
    auto dir = graft::test::scratch("cli_diff");
    auto r = run("ckpt rewrite " + q(v1) + " " + q(dir / "v2"));
    REQUIRE(r.code == 0);
    graft::tf::checkpoint_reader conv((dir / "v2").string());
    CHECK(conv.format_version() == 2);
    CHECK(*conv.read("b").data<float>() == 2.f);
    {
        graft::tf::bundle_writer w((dir / "v2b").string());
        w.add("a", graft::tensor::scalar_of(0.75f));
        w.add("b", graft::tensor::scalar_of(2.f));
        w.finish();
    }
    auto d = run("ckpt diff " + q(dir / "v2") + " " + q(dir / "v2b"));
    CHECK(d.code == 1);
    CHECK(d.out.find("differs: a: max abs diff 0.25") != std::string::npos);
}
