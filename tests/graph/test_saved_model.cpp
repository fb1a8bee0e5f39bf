// Writing SavedModels: TF1 layout (saved_model.pb + variables/ bundle) that graft and
// python3-protobuf read back as the same MetaGraph, with the same variable values.
#include <doctest/doctest.h>

#include "graft/core/tensor_util.hpp"
#include "graft/formats/tf_graph/saved_model.hpp"
#include "python_oracle.hpp"
#include "support/fixtures.hpp"

using graft::test::fixture;

TEST_CASE("saved_model: a TF1 SavedModel rewritten by graft keeps its graph, signatures and variable values") {
    auto src = fixture("tf-serving/saved_model_half_plus_three/00000123");
    GRAFT_REQUIRE_PATH(src);
    auto mg = graft::tf::load_meta_graph(src.string());
    graft::tf::checkpoint_reader ckpt(src.string());
    std::map<std::string, graft::tensor> values;
    for (auto& v : graft::tf::find_variables(mg, ckpt)) {
        if (!v.checkpoint_key.empty()) values[v.checkpoint_key] = ckpt.read(v.checkpoint_key);
    }
    REQUIRE(values.size() == 3);
    auto out = graft::test::scratch("saved_model_write") / "export";
    graft::tf::write_saved_model(out.string(), mg, values);

    CHECK(graft::tf::detect_format(out.string()) == graft::tf::file_format::saved_model);
    auto back = graft::tf::load_meta_graph(out.string());
    CHECK(back.graph == mg.graph);
    CHECK(back.signatures == mg.signatures);
    CHECK(back.collections == mg.collections);
    CHECK(back.saver == mg.saver);
    CHECK(back.info.tags == mg.info.tags);
    graft::tf::checkpoint_reader r2(out.string());
    for (auto& v : graft::tf::find_variables(back, r2)) {
        if (v.checkpoint_key.empty()) continue;
        CAPTURE(v.checkpoint_key);
        CHECK(graft::equal(r2.read(v.checkpoint_key), values.at(v.checkpoint_key)));
    }
    CHECK(r2.read("a").data<float>()[0] == 0.5f);
    CHECK(r2.read("b").data<float>()[0] == 3.0f);

    if (graft::test::python_protos().empty()) return;
    std::string o;
    REQUIRE(graft::test::run_python("A = '" + (src / "saved_model.pb").string() + "'\nB = '" +
                                        (out / "saved_model.pb").string() + R"PY('
from graft_tf import saved_model_pb2
a = saved_model_pb2.SavedModel(); a.ParseFromString(open(A, 'rb').read())
b = saved_model_pb2.SavedModel(); b.ParseFromString(open(B, 'rb').read())
print(a == b, b.saved_model_schema_version, list(b.meta_graphs[0].meta_info_def.tags))
)PY", o) == 0);
    CHECK(o.find("True 1 ['serve']\n") != std::string::npos);  // (protobuf may log about Any types first)
}

TEST_CASE("saved_model: a TF2 SavedModel's graph and object graph survive a rewrite") {
    auto src = fixture("tf-rust/regression_savedmodel");
    GRAFT_REQUIRE_PATH(src);
    auto mg = graft::tf::load_meta_graph(src.string());
    graft::tf::checkpoint_reader ckpt(src.string());
    std::map<std::string, graft::tensor> values;
    for (auto& k : ckpt.keys()) values[k] = ckpt.read(k);  // object graph included, as TF writes it
    auto out = graft::test::scratch("saved_model_tf2") / "export";
    graft::tf::write_saved_model(out.string(), mg, values);
    auto back = graft::tf::load_meta_graph(out.string());
    CHECK(back.graph == mg.graph);
    CHECK(back.object_graph_bytes == mg.object_graph_bytes);
    graft::tf::checkpoint_reader r2(out.string());
    auto vars = graft::tf::find_variables(back, r2);
    REQUIRE(vars.size() == 6);
    for (auto& v : vars) {
        CAPTURE(v.name);
        REQUIRE(r2.contains(v.checkpoint_key));
        CHECK(graft::equal(r2.read(v.checkpoint_key), ckpt.read(v.checkpoint_key)));
    }
}
