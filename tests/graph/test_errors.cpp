// Bad input: every failure is a graft::error that names the file and, where there is one, the node.
#include <doctest/doctest.h>

#include <fstream>

#include "graft/core/io.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "support/fixtures.hpp"

using graft::test::fixture;

namespace {

using graft::test::expect_error;

/// A small valid graph: x -> a -> b.
graft::graph chain() {
    graft::graph g;
    g.add_node({"x", "Placeholder"}).attrs.set("dtype", graft::dtype::float32);
    g.add_node({"a", "Identity", {{"x", 0}}}).attrs.set("T", graft::dtype::float32);
    g.add_node({"b", "Identity", {{"a", 0}}}).attrs.set("T", graft::dtype::float32);
    return g;
}

std::string write(const std::string& name, const std::string& bytes) {
    auto p = (graft::test::scratch("errors_" + name) / (name + ".pb")).string();
    graft::write_file_atomic(p, bytes);
    return p;
}

}  // namespace

TEST_CASE("errors: a truncated .pb names the file, the offset and the node") {
    GRAFT_REQUIRE_PATH(fixture("tf-rust/regression/model.pb"));
    auto bytes = graft::read_file(fixture("tf-rust/regression/model.pb").string());
    for (std::size_t cut : {bytes.size() - 3, bytes.size() / 2, std::size_t{40}}) {
        CAPTURE(cut);
        auto p = write("trunc", bytes.substr(0, cut));
        auto e = expect_error<graft::format_error>([&] { (void)graft::tf::load_graph(p); });
        CHECK(e.where().file == p);
        CHECK(e.where().offset.has_value());
        CHECK(!e.where().node.empty());
        CHECK(std::string(e.what()).find("node #") != std::string::npos);
    }
    // the last node of the file is named even though its bytes are cut
    auto g = graft::tf::load_graph(fixture("tf-rust/regression/model.pb").string());
    std::string last;
    for (const auto& n : g) last = n.name;
    auto p = write("trunc_last", bytes.substr(0, bytes.size() - 10));
    auto e = expect_error<graft::format_error>([&] { (void)graft::tf::load_graph(p); });
    CHECK(e.where().node == last);
}

TEST_CASE("errors: an input naming a missing node") {
    auto g = chain();
    g.at("b").inputs[0] = {"nope", 0};
    auto p = write("missing", graft::tf::serialize_graph_def(g));
    auto e = expect_error<graft::graph_error>([&] { (void)graft::tf::load_graph(p); });
    CHECK(e.where().file == p);
    CHECK(e.where().node == "b");
    CHECK(std::string(e.what()).find("nope") != std::string::npos);
}

TEST_CASE("errors: an output index past the op's outputs") {
    auto g = chain();
    g.at("b").inputs[0] = {"a", 3};
    auto p = write("index", graft::tf::serialize_graph_def(g));
    auto e = expect_error<graft::graph_error>([&] { (void)graft::tf::load_graph(p); });
    CHECK(e.where().node == "b");
    CHECK(std::string(e.what()).find("has 1 output") != std::string::npos);
}

TEST_CASE("errors: a duplicate node name") {
    auto bin = graft::tf::serialize_graph_def(chain());
    // append a second NodeDef named "a" (field 1): the GraphDef is then two nodes named a
    graft::graph extra;
    extra.add_node({"a", "NoOp"});
    auto more = graft::tf::serialize_graph_def(extra);
    auto p = write("dup", bin + more);
    auto e = expect_error<graft::graph_error>([&] { (void)graft::tf::load_graph(p); });
    CHECK(e.where().file == p);
    CHECK(e.where().node == "a");
    CHECK(std::string(e.what()).find("duplicate") != std::string::npos);
    CHECK_THROWS_AS(chain().add_node({"a", "NoOp"}), graft::graph_error);
}

TEST_CASE("errors: a cycle is named node by node") {
    auto g = chain();
    g.at("a").inputs[0] = {"b", 0};
    auto p = write("cycle", graft::tf::serialize_graph_def(g));
    auto e = expect_error<graft::graph_error>([&] { (void)graft::tf::load_graph(p); });
    CHECK(e.where().file == p);
    std::string w = e.what();
    CHECK(w.find("cycle") != std::string::npos);
    CHECK((w.find("a -> b -> a") != std::string::npos || w.find("b -> a -> b") != std::string::npos));
}

TEST_CASE("errors: an attr of the wrong kind (Const dtype given as a string)") {
    graft::graph g;
    auto& c = g.add_node({"c", "Const"});
    c.attrs.set("dtype", "float");  // a string, where Const declares `dtype: type`
    c.attrs.set("value", graft::tensor::scalar_of(1.0f));
    auto p = write("attr", graft::tf::serialize_graph_def(g));
    auto e = expect_error<graft::graph_error>([&] { (void)graft::tf::load_graph(p); });
    CHECK(e.where().file == p);
    CHECK(e.where().node == "c");
    CHECK(e.where().op == "Const");
    CHECK(std::string(e.what()).find("'dtype' is a string") != std::string::npos);
    // unvalidated loading still reads it, and typed access says what is wrong
    auto raw = graft::tf::load_graph(p, {{}, false});
    CHECK_THROWS_AS((void)raw.at("c").attr_at("dtype").type(), graft::graph_error);
}

TEST_CASE("errors: garbage, wrong formats, missing files, unknown tags") {
    auto p = write("garbage", std::string("\xff\xff\xff\xff\x0f garbage", 13));
    CHECK_THROWS_AS((void)graft::tf::load_graph(p), graft::format_error);
    CHECK_THROWS_AS((void)graft::tf::load_graph("/nonexistent/graph.pb"), graft::io_error);
    auto bad_text = (graft::test::scratch("errors_text") / "g.pbtxt").string();
    graft::write_file_atomic(bad_text, "node {\n  name: \"a\"\n  op: 12 12\n}\n");
    auto e = expect_error<graft::format_error>([&] { (void)graft::tf::load_graph(bad_text); });
    CHECK(e.where().file == bad_text);
    CHECK(std::string(e.what()).find("line 3") != std::string::npos);
    GRAFT_REQUIRE_PATH(fixture("tf-rust/regression-model"));
    auto t = expect_error<graft::not_found_error>(
        [&] { (void)graft::tf::load_meta_graph(fixture("tf-rust/regression-model").string(), {{"gpu"}, true}); });
    CHECK(std::string(t.what()).find("{serve, train}") != std::string::npos);
    // an unknown op: unknown output count, and resolving one names op, node and how to register
    graft::graph u;
    u.add_node({"m", "MyCustomOp"});
    auto k = expect_error<graft::graph_error>([&] { (void)u.num_outputs(u.at("m")); });
    CHECK(k.where().node == "m");
    CHECK(k.where().op == "MyCustomOp");
    CHECK(k.hint().find("op_registry::global().add") != std::string::npos);
    CHECK(!u.at("m").try_num_outputs().has_value());
}
