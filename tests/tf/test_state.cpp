// The `checkpoint` state file, latest_checkpoint, checkpoint_reader on directories, name mapping.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "graft/core/io.hpp"
#include "graft/formats/tf/bundle_writer.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf/checkpoint_state.hpp"
#include "graft/formats/tf/name_map.hpp"
#include "support/fixtures.hpp"

namespace fs = std::filesystem;
using namespace graft::tf;

TEST_CASE("checkpoint state: parse TF's text, escapes, comments, numbers; format like Python") {
    auto st = parse_checkpoint_state(
        "model_checkpoint_path: \"model.ckpt-2\"\n"
        "# a comment\n"
        "all_model_checkpoint_paths: 'model.ckpt-1'\n"
        "all_model_checkpoint_paths: \"model\" \".ckpt-2\"\n"
        "all_model_checkpoint_timestamps: 1700000000.25\n"
        "all_model_checkpoint_timestamps: 1.7e9\n"
        "last_preserved_timestamp: 1699999999.5\n");
    CHECK(st.model_checkpoint_path == "model.ckpt-2");
    CHECK(st.all_model_checkpoint_paths == std::vector<std::string>{"model.ckpt-1", "model.ckpt-2"});
    CHECK(st.all_model_checkpoint_timestamps == std::vector<double>{1700000000.25, 1.7e9});
    CHECK(st.last_preserved_timestamp == 1699999999.5);
    auto esc = parse_checkpoint_state(R"(model_checkpoint_path: "a\"b\\c\n\101\x42\303\251")");
    CHECK(esc.model_checkpoint_path == "a\"b\\c\nAB\xc3\xa9");
    CHECK(format_checkpoint_state(esc) == "model_checkpoint_path: \"a\\\"b\\\\c\\nAB\\303\\251\"\n");
    CHECK(parse_checkpoint_state(format_checkpoint_state(st)) == st);
    checkpoint_state simple{"model.ckpt", {"model.ckpt"}, {1700000000.0}, 0};
    CHECK(format_checkpoint_state(simple) ==
          "model_checkpoint_path: \"model.ckpt\"\nall_model_checkpoint_paths: \"model.ckpt\"\n"
          "all_model_checkpoint_timestamps: 1700000000.0\n");
    CHECK_THROWS_AS(parse_checkpoint_state("model_checkpoint_path: \"x"), graft::format_error);
    CHECK_THROWS_AS(parse_checkpoint_state("bogus_field: 1"), graft::format_error);
    try {
        (void)parse_checkpoint_state("model_checkpoint_path \"x\"", "dir/checkpoint");
        FAIL("expected format_error");
    } catch (const graft::format_error& e) {
        CHECK(e.where().file == "dir/checkpoint");
        CHECK(e.where().offset.has_value());
    }
}

TEST_CASE("latest_checkpoint: relative paths join the dir; only existing checkpoints count") {
    auto dir = graft::test::scratch("ckpt_state");
    CHECK(!latest_checkpoint(dir.string()).has_value());
    write_checkpoint_state(dir.string(), {"ckpt-3", {"ckpt-3"}, {}, 0});
    CHECK(!latest_checkpoint(dir.string()).has_value());  // ckpt-3.index does not exist
    {
        bundle_writer w((dir / "ckpt-3").string());
        w.add("v", graft::tensor::scalar_of(3.f));
        w.finish();
    }
    CHECK(*latest_checkpoint(dir.string()) == (dir / "ckpt-3").string());
    auto st = read_checkpoint_state(dir.string());
    REQUIRE(st.has_value());
    CHECK(st->all_model_checkpoint_paths.front() == (dir / "ckpt-3").string());
    checkpoint_reader r(dir.string());
    CHECK(r.prefix() == (dir / "ckpt-3").string());
    CHECK(*r.read("v").data<float>() == 3.f);
    std::ofstream(dir / "checkpoint") << "garbage garbage";
    CHECK(!latest_checkpoint(dir.string()).has_value());
    CHECK_THROWS_AS(read_checkpoint_state(dir.string()), graft::format_error);
    CHECK_THROWS_AS(checkpoint_reader(dir.string()), graft::io_error);
}

TEST_CASE("checkpoint_reader resolves .index / .data paths and fixture training dirs") {
    auto p = graft::test::fixture("mnist-softmax/model.ckpt");
    GRAFT_REQUIRE_PATH(p.string() + ".index");
    CHECK(checkpoint_reader(p.string() + ".index").prefix() == p.string());
    CHECK(checkpoint_reader(p.string() + ".data-00000-of-00001").prefix() == p.string());
    auto dir = graft::test::scratch("ckpt_state_dir");
    fs::copy_file(p.string() + ".index", dir / "model.ckpt.index");
    fs::copy_file(p.string() + ".data-00000-of-00001", dir / "model.ckpt.data-00000-of-00001");
    std::ofstream(dir / "checkpoint") << "model_checkpoint_path: \"model.ckpt\"\nall_model_checkpoint_paths: \"model.ckpt\"\n";
    checkpoint_reader r(dir.string());
    CHECK(r.keys() == std::vector<std::string>{"Variable", "Variable_1", "Variable_2", "Variable_3"});
}

TEST_CASE("name_map: scope renames, exact renames, both unmatched sides") {
    std::vector<std::string> ckpt = {"old/dense/kernel", "old/dense/bias", "old/out/kernel", "global_step", "extra"};
    auto map = assignment_map::from({{"old/", "new/"}, {"global_step", "step"}});
    auto m = match_names(ckpt, {"new/dense/kernel", "new/dense/bias", "step", "new/missing", "other"}, map);
    CHECK(m.pairs == std::vector<std::pair<std::string, std::string>>{
                         {"new/dense/bias", "old/dense/bias"}, {"new/dense/kernel", "old/dense/kernel"}, {"step", "global_step"}});
    CHECK(m.missing == std::vector<std::string>{"new/missing", "other"});
    CHECK(m.unused_keys == std::vector<std::string>{"extra", "old/out/kernel"});
    CHECK(!m.complete());
    CHECK(list_scope(ckpt, "old/dense") == std::vector<std::string>{"old/dense/bias", "old/dense/kernel"});
    CHECK(list_scope(ckpt, "old/dense/") == std::vector<std::string>{"old/dense/bias", "old/dense/kernel"});
    CHECK(list_scope(ckpt, "old/de").empty());
    CHECK(list_scope(ckpt, "").size() == ckpt.size());
    auto root = match_names(ckpt, {"model/extra"}, assignment_map::from({{"/", "model/"}}));
    CHECK(root.pairs.front().second == "extra");
    CHECK_THROWS_AS(assignment_map::from({{"old/", "new"}}), graft::invalid_argument_error);
    CHECK(closest_names("Variable_9", {"Variable", "Variable_1", "bias"}, 2) == std::vector<std::string>{"Variable_1", "Variable"});
}

TEST_CASE("doubles are written like Python's repr") {
    using graft::tf::detail::format_double;
    CHECK(format_double(1700000000.0) == "1700000000.0");
    CHECK(format_double(1700000000.25) == "1700000000.25");
    CHECK(format_double(0.5) == "0.5");
    CHECK(format_double(0.0001) == "0.0001");
    CHECK(format_double(0.00001) == "1e-05");
    CHECK(format_double(1e16) == "1e+16");
    CHECK(format_double(1.5e16) == "1.5e+16");
    CHECK(format_double(-2.0) == "-2.0");
    CHECK(format_double(123.456) == "123.456");
}
