// V1 checkpoints written by graft: graft::tf::v1_writer (TF's TensorSliceWriter table) round trips
// through graft's V1 reader (whole tensors, partitioned slices, strings, int64, bool), refuses overlapping
// slices and mismatched shapes with TF's messages, and writes the same bytes as TensorFlow 0.12 did for
// the session bundle half_plus_two (a = 0.5, b = 2). The Save / SaveSlices ops run through a session
// and read back with Restore / RestoreSlice / RestoreV2 (V1 fallback), and half_plus_two's own
// save/save (SaveSlices) rewrites its export file byte for byte.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/exec/model.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf/checkpoint_v1.hpp"
#include "graft/formats/tf/checkpoint_v1_writer.hpp"
#include "support/fixtures.hpp"
#include "support/tensors.hpp"

// One namespace per file: the opsets tests build as one binary in unity batches.
namespace graft_test_saver_v1 {

using namespace graft::test;  // f32, f64, i32, i64, values

using graft::dtype;
using graft::shape;
using graft::tensor;

namespace {

tensor strs(const shape& s, std::vector<std::string> v) { return tensor::from_vector<std::string>(s, v); }

const std::string q5(5, '?');  // a shard pattern's "?????" (no trigraph in a literal)

std::string bytes_of(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("v1_writer: whole tensors and slices read back through the V1 reader") {
    auto dir = graft::test::scratch("v1_writer");
    const std::string file = (dir / "model.ckpt").string();
    tensor emb = f32({4, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    {
        graft::tf::v1_writer w(file);
        w.add("w", f32({2, 2}, {1.5f, -2, 3, 4}));
        w.add("step", i64({}, {42}));
        w.add("names", strs({3}, {"a", "", std::string("x\0y", 3)}));
        w.add("flag", tensor::from_vector<bool>({2}, {true, false}));
        w.add("empty", f32({0, 3}, {}));
        // A partitioned variable: rows 2..3 first, then rows 0..1 (order does not matter).
        w.add_slice("emb", {4, 3}, graft::tf::tensor_slice::parse("2,2:-"), emb.slice(2, 2));
        w.add_slice("emb", {4, 3}, graft::tf::tensor_slice::parse("0,2:-"), emb.slice(0, 2));
        CHECK_FALSE(std::filesystem::exists(file));  // nothing under the final name before finish()
        w.finish();
    }
    graft::tf::v1_reader r(file);
    CHECK(r.keys() == std::vector<std::string>{"emb", "empty", "flag", "names", "step", "w"});
    CHECK(r.versions().producer == 1);
    CHECK(graft::equal(r.read("w"), f32({2, 2}, {1.5f, -2, 3, 4})));
    CHECK(graft::equal(r.read("step"), i64({}, {42})));
    CHECK(graft::equal(r.read("names"), strs({3}, {"a", "", std::string("x\0y", 3)})));
    CHECK(graft::equal(r.read("flag"), tensor::from_vector<bool>({2}, {true, false})));
    CHECK(r.read("empty").shape() == shape{0, 3});
    CHECK(graft::equal(r.read("emb"), emb));
    CHECK(r.info("emb").slices.size() == 2);
    // The generic reader finds it as a V1 checkpoint too.
    graft::tf::checkpoint_reader cr(file);
    CHECK(graft::equal(cr.read("emb"), emb));
}

TEST_CASE("v1_writer: overlapping slices, mismatched shapes and unsupported dtypes are refused") {
    auto dir = graft::test::scratch("v1_writer_errors");
    graft::tf::v1_writer w((dir / "bad").string());
    tensor emb = f32({4, 3}, std::vector<float>(12, 1.0f));
    w.add_slice("emb", {4, 3}, graft::tf::tensor_slice::parse("0,3:-"), emb.slice(0, 3));
    CHECK_THROWS_WITH_AS(w.add_slice("emb", {4, 3}, graft::tf::tensor_slice::parse("2,2:-"), emb.slice(2, 2)),
                         doctest::Contains("Overlapping slices: existing slice = 0,3:-, new slice = 2,2:-"),
                         graft::invalid_argument_error);
    CHECK_THROWS_WITH_AS(w.add_slice("emb", {5, 3}, graft::tf::tensor_slice::parse("4,1:-"), emb.slice(3, 1)),
                         doctest::Contains("Mismatching shapes"), graft::invalid_argument_error);
    CHECK_THROWS_WITH_AS(w.add_slice("x", {4, 3}, graft::tf::tensor_slice::parse("0,2:-"), emb),
                         doctest::Contains("has shape [2,3] but the data given is float32[4,3]"),
                         graft::invalid_argument_error);
    CHECK_THROWS_AS(w.add("u", tensor(dtype::uint32, shape{2})), graft::unimplemented_error);
}

TEST_CASE("v1_writer writes the bytes TensorFlow wrote for half_plus_two's V1 export") {
    auto real = graft::test::fixture("tf-serving/session_bundle_half_plus_two/export-00000-of-00001");
    GRAFT_REQUIRE_PATH(real);
    auto dir = graft::test::scratch("v1_writer_bytes");
    const auto file = dir / "export-00000-of-00001";
    graft::tf::v1_writer w(file.string());
    w.add("a", tensor::scalar_of(0.5f));
    w.add("b", tensor::scalar_of(2.0f));
    w.finish();
    CHECK(bytes_of(file) == bytes_of(real));
}

TEST_CASE("Save and SaveSlices write V1 files that Restore, RestoreSlice and RestoreV2 read back") {
    auto dir = graft::test::scratch("save_slices_op");
    const std::string file = (dir / "sub" / "ckpt-00000-of-00001").string();
    graft::graph g;
    graft::graph_builder b(g);
    tensor w = f32({3, 2}, {1, 2, 3, 4, 5, 6});
    auto fname = b.constant(tensor::scalar_of(file));
    b.add("SaveSlices",
          {fname, b.constant(strs({4}, {"w", "part", "part", "step"})),
           b.constant(strs({4}, {"", "4 2 0,2:-", "4 2 2,2:-", ""})), b.constant(w), b.constant(w.slice(0, 2)),
           b.constant(w.slice(1, 2)), b.constant(i64({}, {7}))},
          {}, "save_slices");
    b.add("Save", {b.constant(tensor::scalar_of((dir / "plain").string())), b.constant(strs({1}, {"w"})), b.constant(w)},
          {}, "save");
    b.add("SaveSlices",
          {fname, b.constant(strs({1}, {"w"})), b.constant(strs({1}, {"4 2 0,3:-"})), b.constant(w.slice(0, 2))}, {},
          "save_wrong_slice");
    auto pattern = b.constant(tensor::scalar_of((dir / "sub" / ("ckpt-" + q5 + "-of-00001")).string()));
    // part = rows (w0, w1) saved as slice 0,2 and rows (w1, w2) as slice 2,2; RestoreSlice asks rows 1..2.
    b.add("RestoreSlice", {pattern, b.constant(tensor::scalar_of(std::string("part"))),
                           b.constant(tensor::scalar_of(std::string("4 2 1,2:-")))},
          {{"dt", dtype::float32}}, "restore_part");
    // A spec whose full shape is not the saved tensor's (part is [4,2]): an error, never a copy out of bounds.
    b.add("RestoreSlice", {pattern, b.constant(tensor::scalar_of(std::string("part"))),
                           b.constant(tensor::scalar_of(std::string("8 2 5,2:-")))},
          {{"dt", dtype::float32}}, "restore_wrong_full_shape");
    b.add("RestoreV2", {pattern, b.constant(strs({2}, {"w", "step"})), b.constant(strs({2}, {"", ""}))},
          {{"dtypes", graft::attr_value::list_of(std::vector<dtype>{dtype::float32, dtype::int64})}}, "restore_v2");
    b.add("Restore", {b.constant(tensor::scalar_of((dir / "plain").string())), b.constant(tensor::scalar_of(std::string("w")))},
          {{"dt", dtype::float32}}, "restore_plain");
    graft::exec::session s(g);
    s.run({}, {}, {"save_slices", "save"});
    auto out = s.run({}, {"restore_part:0", "restore_v2:0", "restore_v2:1", "restore_plain:0"});
    CHECK(graft::equal(out[0], f32({2, 2}, {3, 4, 3, 4})));
    CHECK(graft::equal(out[1], w));
    CHECK(graft::equal(out[2], i64({}, {7})));
    CHECK(graft::equal(out[3], w));
    graft::tf::v1_reader r(file);
    CHECK(r.info("part").shape == shape{4, 2});
    CHECK_THROWS_WITH_AS(s.run({}, {"restore_wrong_full_shape:0"}),
                         doctest::Contains("'restore_wrong_full_shape'"),
                         graft::graph_error);
    CHECK_THROWS_WITH_AS(s.run({}, {"restore_wrong_full_shape:0"}),
                         doctest::Contains("but shape_and_slice '8 2 5,2:-' says its full shape is [8,2]"),
                         graft::graph_error);
    // A slice spec whose slice is not the tensor's shape: TF's message, naming the node.
    CHECK_THROWS_WITH_AS(s.run({}, {}, {"save_wrong_slice"}),
                         doctest::Contains("Slice in shape_and_slice specification does not match the shape of the "
                                           "tensor to save: 4 2 0,3:-"),
                         graft::graph_error);
    CHECK_THROWS_WITH_AS(s.run({}, {}, {"save_wrong_slice"}), doctest::Contains("'save_wrong_slice'"), graft::graph_error);
}

TEST_CASE("half_plus_two's own save op (SaveSlices) rewrites its V1 export byte for byte") {
    auto dir = graft::test::fixture("tf-serving/session_bundle_half_plus_two");
    GRAFT_REQUIRE_PATH(dir);
    auto m = graft::exec::load_model((dir / "export.meta").string());
    auto runner = m.runner();
    auto& s = runner.sess();
    // Restore a and b from the V1 export (RestoreV2 falls back to V1 as TF's does), then save them.
    s.run({{"save/Const", tensor::scalar_of((dir / ("export-" + q5 + "-of-00001")).string())}}, {}, {"save/restore_all"});
    auto out_dir = graft::test::scratch("half_plus_two_resave");
    auto spec = s.run({{"save/Const", tensor::scalar_of((out_dir / "export").string())}}, {"save/ShardedFilespec:0"});
    CHECK(spec[0].data<std::string>()[0] == (out_dir / ("export-" + q5 + "-of-00001")).string());
    CHECK(bytes_of(out_dir / "export-00000-of-00001") == bytes_of(dir / "export-00000-of-00001"));
}

}  // namespace graft_test_saver_v1
