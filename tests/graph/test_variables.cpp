// Variables of real TensorFlow graphs: dtype, shape, trainability, and a checkpoint key that names
// a tensor of the model's own bundle (read with graft::tf::checkpoint_reader).
#include <doctest/doctest.h>

#include <set>

#include "graft/formats/tf_graph/saved_model.hpp"
#include "support/fixtures.hpp"

using graft::test::fixture;

namespace {

struct case_t {
    const char* graph;       // graph file or SavedModel dir
    const char* checkpoint;  // prefix or SavedModel dir
};

const graft::variable_info& var(const std::vector<graft::variable_info>& vs, const std::string& name) {
    for (auto& v : vs) if (v.name == name) return v;
    FAIL("no variable " << name);
    return vs.front();
}

}  // namespace

TEST_CASE("variables: every saved variable's key, dtype and shape match its checkpoint, and every checkpoint tensor has its variable") {
    const case_t cases[] = {
        {"mnist-softmax/model.ckpt.meta", "mnist-softmax/model.ckpt"},
        {"mnist-softmax/model_names.ckpt.meta", "mnist-softmax/model_names.ckpt"},
        {"mnist-softmax/train_model.ckpt.meta", "mnist-softmax/train_model.ckpt"},
        {"mnist-convnet/model.ckpt-1.meta", "mnist-convnet/model.ckpt-1"},
        {"tf-serving/saved_model_half_plus_two_cpu/00000123", "tf-serving/saved_model_half_plus_two_cpu/00000123"},
        {"tf-serving/saved_model_half_plus_three/00000123", "tf-serving/saved_model_half_plus_three/00000123"},
        {"tf-serving/saved_model_counter/00000123", "tf-serving/saved_model_counter/00000123"},
        {"tf-serving/session_bundle_half_plus_two/export.meta", "tf-serving/session_bundle_half_plus_two/export-00000-of-00001"},
        {"tf-rust/regression-model", "tf-rust/regression-model"},
        {"tf-rust/regression_savedmodel", "tf-rust/regression_savedmodel"},
        {"tf-serving/saved_model_half_plus_two_tf2_cpu/00000123", "tf-serving/saved_model_half_plus_two_tf2_cpu/00000123"},
    };
    GRAFT_REQUIRE_PATH(fixture("mnist-softmax"));
    for (auto& c : cases) {
        CAPTURE(c.graph);
        graft::tf::load_options opts;
        if (std::string(c.graph) == "tf-rust/regression-model") opts.tags = {"serve", "train"};
        auto mg = graft::tf::load_meta_graph(fixture(c.graph).string(), opts);
        graft::tf::checkpoint_reader ckpt(fixture(c.checkpoint).string());
        auto derived = graft::find_variables(mg);
        auto vars = graft::tf::find_variables(mg, ckpt);
        REQUIRE(vars.size() == derived.size());
        REQUIRE(!vars.empty());
        std::set<std::string> covered;
        for (std::size_t i = 0; i < vars.size(); ++i) {
            const auto& v = vars[i];
            CAPTURE(v.name);
            CHECK(v.checkpoint_key == derived[i].checkpoint_key);  // the derived TF2 key is the real one
            CHECK(mg.graph.contains(v.node));
            if (v.checkpoint_key.empty()) continue;
            REQUIRE(ckpt.contains(v.checkpoint_key));
            CHECK(ckpt.dtype_of(v.checkpoint_key) == v.dtype);
            CHECK(ckpt.shape_of(v.checkpoint_key) == v.shape);
            covered.insert(v.checkpoint_key);
        }
        for (auto& k : ckpt.keys()) {
            if (k != graft::tf::object_graph_key) CHECK_MESSAGE(covered.count(k), "checkpoint key without a variable: " << k);
        }
    }
}

TEST_CASE("variables: kinds, trainability, initializers and snapshots") {
    GRAFT_REQUIRE_PATH(fixture("tfnet-graphs/xor.meta"));
    auto x = graft::find_variables(graft::tf::load_meta_graph(fixture("tfnet-graphs/xor.meta").string()));
    REQUIRE(x.size() == 3);
    const auto& w = var(x, "Variable");
    CHECK(w.kind == graft::variable_kind::ref);
    CHECK(w.dtype == graft::dtype::float32);
    CHECK(w.shape == graft::shape{2, 8});
    CHECK(w.trainable);
    CHECK(w.initializer_name == "Variable/Assign");
    CHECK(w.snapshot_name == "Variable/read:0");
    CHECK(!var(x, "global_step").trainable);
    CHECK(var(x, "global_step").dtype == graft::dtype::int32);

    auto wc = graft::find_variables(graft::tf::load_meta_graph(fixture("tfnet-graphs/word_cnn.meta").string()));
    CHECK(wc.size() == 30);
    CHECK(var(wc, "embeddings").trainable);
    CHECK(var(wc, "embeddings").shape == graft::shape{50000, 128});
    CHECK(!var(wc, "embeddings/Adam").trainable);
    CHECK(!var(wc, "loss/beta1_power").trainable);

    auto r = graft::find_variables(graft::tf::load_meta_graph(fixture("tf-rust/regression_savedmodel").string()));
    REQUIRE(r.size() == 6);
    const auto& rw = var(r, "w");
    CHECK(rw.kind == graft::variable_kind::resource);
    CHECK(rw.trainable);
    CHECK(rw.object_id == 1);
    CHECK(rw.snapshot_name == "w/Read/ReadVariableOp:0");
    CHECK(rw.checkpoint_key == "w/.ATTRIBUTES/VARIABLE_VALUE");
    CHECK(!var(r, "SGD/iter").trainable);
    CHECK(var(r, "SGD/iter").dtype == graft::dtype::int64);
    CHECK(var(r, "SGD/iter").checkpoint_key == "optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE");

    // a plain GraphDef (no collections): found from the graph alone
    auto g = graft::tf::load_graph(fixture("tf-rust/regression/model.pb").string());
    auto gv = graft::find_variables(g);
    REQUIRE(gv.size() == 2);
    CHECK(var(gv, "w").initializer_name == "w/Assign");
    CHECK(var(gv, "w").initial_value_name == "random_uniform:0");
    CHECK(var(gv, "w").snapshot_name.empty());  // this old graph reads the variable directly
    CHECK(var(gv, "w").checkpoint_key == "w");
    CHECK(var(gv, "w").shape == graft::shape{1});
}
