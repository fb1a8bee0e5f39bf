// Checkpoints written by TensorFlow (../shared/tf-fixtures): V2 bundles, a snappy index, TF2 object
// keys, an index without its data shard, a V1 checkpoint, SavedModel and training directories.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "graft/formats/tf/bundle.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "support/fixtures.hpp"

using graft::tf::bundle_reader;
namespace fs = std::filesystem;

namespace {
std::vector<std::string> fixture_bundles() {
    std::vector<std::string> out;
    auto root = graft::test::fixture("");
    std::error_code ec;
    for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
        auto p = it->path().string();
        if (p.size() > 6 && p.ends_with(".index")) out.push_back(p.substr(0, p.size() - 6));
    }
    std::sort(out.begin(), out.end());
    return out;
}
float scalar(const graft::tensor& t) { return *t.data<float>(); }
}  // namespace

TEST_CASE("every V2 fixture bundle lists, and every tensor with data passes its crc") {
    GRAFT_REQUIRE_PATH(graft::test::fixture("mnist-softmax"));
    auto bundles = fixture_bundles();
    CHECK(bundles.size() >= 10);
    std::size_t read = 0;
    for (const auto& prefix : bundles) {
        CAPTURE(prefix);
        bundle_reader r(prefix);
        CHECK(r.num_shards() == 1);
        CHECK(r.header().version.producer == 1);
        CHECK(!r.keys().empty());
        if (!fs::exists(r.data_path(0))) continue;  // mnist-convnet ships without its shard
        for (const auto& k : r.keys()) {
            graft::tf::read_info info;
            auto t = r.read(k, &info);
            CHECK(info.crc_checked);
            CHECK(t.shape() == r.entry(k).shape);
            CHECK(t.type() == r.entry(k).type);
            ++read;
        }
    }
    CHECK(read >= 30);
}

TEST_CASE("mnist-softmax/model_names.ckpt: names, dtypes, shapes, values") {
    auto p = graft::test::fixture("mnist-softmax/model_names.ckpt");
    GRAFT_REQUIRE_PATH(p.string() + ".index");
    bundle_reader r(p.string());
    auto ts = r.tensors();
    REQUIRE(ts.size() == 2);
    CHECK(ts[0].name == "bias_0");
    CHECK(ts[0].type == graft::dtype::float32);
    CHECK(ts[0].shape == graft::shape{3});
    CHECK(ts[1].name == "weights_0");
    CHECK(ts[1].type == graft::dtype::float32);
    CHECK(ts[1].shape == graft::shape{2, 3});
    // TF appended bias_0 first (offset 0, first value 0.12024708), then weights_0 at offset 12.
    CHECK(ts[0].offset == 0);
    CHECK(ts[1].offset == 12);
    graft::tf::read_info info;
    auto w = r.read("weights_0", &info);
    CHECK(info.crc_checked);
    CHECK(info.zero_copy);  // offset 12 is float-aligned
    CHECK(w.data<float>()[0] == -0.564770519733429f);
    CHECK(w.matrix<float>()(1, 2) == -0.08218459039926529f);
    auto b = r.read("bias_0");
    CHECK(b.data<float>()[0] == 0.12024708092212677f);
    CHECK(b.data<float>()[1] == 1.2480913400650024f);
    w.data<float>()[0] = 42.f;  // views are private copy-on-write mappings
    CHECK(bundle_reader(p.string()).read("weights_0").data<float>()[0] == -0.564770519733429f);
}

TEST_CASE("tf-serving half_plus_two (snappy-compressed index) reads a=0.5, b=2, c=3") {
    auto dir = graft::test::fixture("tf-serving/saved_model_half_plus_two_cpu/00000123");
    GRAFT_REQUIRE_PATH(dir);
    graft::tf::checkpoint_reader r(dir.string());
    CHECK(r.format_version() == 2);
    CHECK(r.prefix() == (dir / "variables" / "variables").string());
    CHECK(r.keys() == std::vector<std::string>{"a", "a2", "b", "c", "c2"});
    CHECK(scalar(r.read("a")) == 0.5f);
    CHECK(scalar(r.read("b")) == 2.0f);
    CHECK(scalar(r.read("c")) == 3.0f);
    CHECK(r.shape_of("a") == graft::shape{});
    CHECK(r.dtype_of("c") == graft::dtype::float32);
}

TEST_CASE("TF2 bundles: object-graph keys and the _CHECKPOINTABLE_OBJECT_GRAPH string") {
    GRAFT_REQUIRE_PATH(graft::test::fixture("tf-rust"));
    for (const char* rel : {"tf-rust/regression_savedmodel/variables/variables",
                            "tf-serving/saved_model_half_plus_two_tf2_cpu/00000123/variables/variables"}) {
        CAPTURE(rel);
        graft::tf::checkpoint_reader r(graft::test::fixture(rel).string());
        REQUIRE(r.contains("_CHECKPOINTABLE_OBJECT_GRAPH"));
        CHECK(r.dtype_of("_CHECKPOINTABLE_OBJECT_GRAPH") == graft::dtype::string);
        CHECK(r.shape_of("_CHECKPOINTABLE_OBJECT_GRAPH") == graft::shape{});
        auto g = r.read("_CHECKPOINTABLE_OBJECT_GRAPH");
        const std::string& bytes = *g.data<std::string>();
        CHECK(bytes.size() > 50);
        CHECK(bytes.find("VARIABLE_VALUE") != std::string::npos);  // a TrackableObjectGraph proto
    }
    graft::tf::checkpoint_reader reg(graft::test::fixture("tf-rust/regression_savedmodel").string());
    CHECK(reg.contains("w/.ATTRIBUTES/VARIABLE_VALUE"));
    CHECK(reg.contains("optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE"));
    CHECK(reg.dtype_of("optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE") == graft::dtype::int64);
    CHECK(reg.shape_of("w/.ATTRIBUTES/VARIABLE_VALUE") == graft::shape{1});
    graft::tf::checkpoint_reader hp(graft::test::fixture("tf-serving/saved_model_half_plus_two_tf2_cpu/00000123").string());
    CHECK(scalar(hp.read("a/.ATTRIBUTES/VARIABLE_VALUE")) == 0.5f);
    CHECK(scalar(hp.read("b/.ATTRIBUTES/VARIABLE_VALUE")) == 2.0f);
    CHECK(scalar(hp.read("c/.ATTRIBUTES/VARIABLE_VALUE")) == 3.0f);
    // tf-rust/regression-model is a TF2 SavedModel saved with plain names (no object graph in it).
    graft::tf::checkpoint_reader rm(graft::test::fixture("tf-rust/regression-model").string());
    CHECK(rm.keys() == std::vector<std::string>{"b", "w"});
    CHECK(rm.read("w").shape() == graft::shape{1});
}

TEST_CASE("mnist-convnet/model.ckpt-1: the index lists, reading names the missing shard") {
    auto p = graft::test::fixture("mnist-convnet/model.ckpt-1");
    GRAFT_REQUIRE_PATH(p.string() + ".index");
    bundle_reader r(p.string());
    CHECK(r.keys().size() == 9);
    CHECK(r.entry("dense/kernel").shape == graft::shape{3136, 1024});
    CHECK(r.entry("global_step").type == graft::dtype::int64);
    try {
        (void)r.read("dense/kernel");
        FAIL("expected io_error");
    } catch (const graft::io_error& e) {
        std::string what = e.what();
        CHECK(what.find("model.ckpt-1.data-00000-of-00001") != std::string::npos);
        CHECK(e.where().tensor == "dense/kernel");
    }
}

TEST_CASE("V1 session bundle export-00000-of-00001 reads a=0.5, b=2") {
    auto f = graft::test::fixture("tf-serving/session_bundle_half_plus_two/export-00000-of-00001");
    GRAFT_REQUIRE_PATH(f);
    for (const std::string& path : {f.string(), f.parent_path().string() + "/export-" + std::string(5, '?') + "-of-00001"}) {
        graft::tf::checkpoint_reader r(path);
        CHECK(r.format_version() == 1);
        CHECK(r.keys() == std::vector<std::string>{"a", "b"});
        CHECK(r.dtype_of("a") == graft::dtype::float32);
        CHECK(r.shape_of("b") == graft::shape{});
        CHECK(scalar(r.read("a")) == 0.5f);
        CHECK(scalar(r.read("b")) == 2.0f);
        CHECK_THROWS_AS((void)r.read("c"), graft::not_found_error);
    }
}

TEST_CASE("a missing key names the closest keys; opening nothing names what was looked for") {
    auto p = graft::test::fixture("mnist-softmax/train_model.ckpt");
    GRAFT_REQUIRE_PATH(p.string() + ".index");
    graft::tf::checkpoint_reader r(p.string());
    try {
        (void)r.read("Variable_2");
        FAIL("expected not_found_error");
    } catch (const graft::not_found_error& e) {
        CHECK(std::string(e.what()).find("'Variable_1'") != std::string::npos);
        CHECK(e.where().tensor == "Variable_2");
    }
    CHECK_THROWS_AS(graft::tf::checkpoint_reader(p.string() + "-nope"), graft::io_error);
    CHECK_THROWS_AS(graft::tf::checkpoint_reader(graft::test::fixture("tfnet-graphs").string()), graft::io_error);
}
