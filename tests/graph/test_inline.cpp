// TF2 signatures become plain graphs: function calls inlined recursively, signature keys mapped to
// endpoints that exist in the result.
#include <doctest/doctest.h>

#include "graft/graph/inline.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "support/fixtures.hpp"

using graft::test::fixture;

namespace {
bool has_calls(const graft::graph& g) {
    for (const auto& n : g) {
        if (n.op == "PartitionedCall" || n.op == "StatefulPartitionedCall" || g.library.find(n.op)) return true;
    }
    return false;
}
}  // namespace

TEST_CASE("inline: half_plus_two TF2 serving_default becomes a plain graph") {
    auto dir = fixture("tf-serving/saved_model_half_plus_two_tf2_cpu/00000123");
    GRAFT_REQUIRE_PATH(dir);
    auto mg = graft::tf::load_meta_graph(dir.string());
    auto sig = graft::signature_graph(mg, "serving_default");
    CHECK(!has_calls(sig.graph));
    REQUIRE(sig.inputs.size() == 1);
    REQUIRE(sig.outputs.size() == 1);
    CHECK(sig.inputs.at("x") == graft::endpoint{"serving_default_x", 0});
    CHECK(sig.outputs.at("y") == graft::endpoint{"StatefulPartitionedCall_5", 0});
    sig.graph.validate();
    const auto& y = sig.graph.at("StatefulPartitionedCall_5");
    CHECK(y.op == "Identity");
    CHECK(sig.graph.output_dtypes(y) == std::vector<graft::dtype>{graft::dtype::float32});
    // y = a * x + b, the variables read through their handles
    auto order = sig.graph.topological_order();
    CHECK(order.size() == sig.graph.size());
    std::map<std::string, int> ops;
    for (const auto& n : sig.graph) ++ops[n.op];
    CHECK(ops["Mul"] == 1);
    CHECK(ops["AddV2"] == 1);
    CHECK(ops["VarHandleOp"] == 2);
    CHECK(ops["ReadVariableOp"] == 2);
    const graft::node* mul = nullptr;
    for (const auto& n : sig.graph) if (n.op == "Mul") mul = &n;
    REQUIRE(mul);
    const auto& read = sig.graph.at(mul->inputs[0].node);
    CHECK(read.op == "ReadVariableOp");
    CHECK(read.inputs[0] == graft::endpoint{"a", 0});  // the captured handle of variable a
    CHECK(mul->inputs[1] == graft::endpoint{"serving_default_x", 0});
    // pruned: the other signatures' calls are gone
    CHECK(!sig.graph.contains("StatefulPartitionedCall_1"));
}

TEST_CASE("inline: every signature of the TF2 fixtures, and whole graphs") {
    for (const char* d : {"tf-serving/saved_model_half_plus_two_tf2_cpu/00000123", "tf-rust/regression_savedmodel"}) {
        CAPTURE(d);
        GRAFT_REQUIRE_PATH(fixture(d));
        auto mg = graft::tf::load_meta_graph(fixture(d).string());
        for (auto& entry : mg.signatures) {
            const std::string& key =
                entry.first;  // INFO's lambda captures it: a plain name, not a binding
            INFO(key);
            auto sig = graft::signature_graph(mg, key);
            CHECK(!has_calls(sig.graph));
            sig.graph.validate();
            for (auto& [k, e] : sig.outputs) CHECK(sig.graph.contains(e.node));
            for (auto& [k, e] : sig.inputs) CHECK(sig.graph.contains(e.node));
        }
        auto g = mg.graph;
        int n = graft::inline_functions(g);
        CHECK(n > 0);
        CHECK(!has_calls(g));
        g.validate();
    }
    // the train signature keeps its side effects: the optimizer updates run before the output
    auto mg = graft::tf::load_meta_graph(fixture("tf-rust/regression_savedmodel").string());
    auto train = graft::signature_graph(mg, "train");
    int updates = 0;
    for (const auto& n : train.graph) updates += n.op == "ResourceApplyGradientDescent";
    CHECK(updates == 2);
}
