// Real TensorFlow files: every graph file loads, and graft's node counts, op histograms and
// function counts equal what an independent decoder (python3-protobuf) finds in the same bytes.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <utility>

#include "graft/graph/variables.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "python_oracle.hpp"
#include "support/fixtures.hpp"

namespace fs = std::filesystem;
using graft::test::fixture;

namespace {

std::map<std::string, std::size_t> histogram(const graft::graph& g) {
    std::map<std::string, std::size_t> h;
    for (const auto& n : g) ++h[n.op];
    return h;
}

const char* census_script = R"PY(
import os
from graft_tf import graph_pb2, meta_graph_pb2, saved_model_pb2
from google.protobuf import text_format
def line(rel, kind, idx, g):
    h = {}
    for n in g.node: h[n.op] = h.get(n.op, 0) + 1
    print("\t".join([rel, kind, str(idx), str(len(g.node)), ",".join("%s=%d" % kv for kv in sorted(h.items())), str(len(g.library.function))]))
for dp, dn, fn in os.walk(ROOT):
    for f in sorted(fn):
        p = os.path.join(dp, f); rel = os.path.relpath(p, ROOT); data = open(p, 'rb').read()
        if f.endswith('.pbtxt'):
            g = graph_pb2.GraphDef(); text_format.Parse(data, g); line(rel, 'graph', 0, g)
        elif f == 'saved_model.pb':
            sm = saved_model_pb2.SavedModel(); sm.ParseFromString(data)
            for i, mg in enumerate(sm.meta_graphs): line(rel, 'saved_model', i, mg.graph_def)
        elif f.endswith('.meta'):
            mg = meta_graph_pb2.MetaGraphDef(); mg.ParseFromString(data); line(rel, 'meta', 0, mg.graph_def)
        elif f.endswith('.pb') and f != 'fingerprint.pb':
            g = graph_pb2.GraphDef(); g.ParseFromString(data); line(rel, 'graph', 0, g)
)PY";

}  // namespace

TEST_CASE("fixtures: every graph file loads with the node counts and op histograms python3-protobuf finds") {
    auto root = fixture("");
    GRAFT_REQUIRE_PATH(root);
    GRAFT_REQUIRE_PYTHON();
    std::string out;
    REQUIRE(graft::test::run_python("ROOT = '" + root.string() + "'\n" + census_script, out) == 0);
    std::istringstream lines(out);
    std::string l;
    int files = 0;
    while (std::getline(lines, l)) {
        std::istringstream f(l);
        std::string rel, kind, idx, count, hist, funcs;
        std::getline(f, rel, '\t');
        std::getline(f, kind, '\t');
        std::getline(f, idx, '\t');
        std::getline(f, count, '\t');
        std::getline(f, hist, '\t');
        std::getline(f, funcs, '\t');
        CAPTURE(rel);
        auto path = (root / rel).string();
        const graft::graph* g = nullptr;
        graft::saved_model sm;
        graft::meta_graph mg;
        if (kind == "saved_model") {
            sm = graft::tf::load_saved_model(path);
            REQUIRE(sm.meta_graphs.size() > std::stoul(idx));
            g = &sm.meta_graphs[std::stoul(idx)].graph;
        } else {
            mg = graft::tf::load_meta_graph(path);
            g = &mg.graph;
        }
        CHECK(g->size() == std::stoul(count));
        CHECK(histogram(*g) == graft::test::parse_histogram(hist));
        CHECK(g->library.functions.size() == std::stoul(funcs));
        ++files;
    }
    MESSAGE("graph files checked against python3-protobuf: " << files);
    CHECK(files >= 20);
}

TEST_CASE("fixtures: known counts") {
    GRAFT_REQUIRE_PATH(fixture("tfnet-graphs/xor.meta"));
    auto xor_g = graft::tf::load_graph(fixture("tfnet-graphs/xor.meta").string());
    auto h = histogram(xor_g);
    CHECK(xor_g.size() == 71);
    CHECK(h["Const"] == 17);
    CHECK(h["Identity"] == 9);
    CHECK(h["MatMul"] == 6);
    CHECK(graft::tf::load_graph(fixture("tf-rust/regression/model.pb").string()).size() == 95);
    CHECK(graft::tf::detect_format(fixture("tfnet-graphs/xor.meta").string()) == graft::tf::file_format::meta_graph);
    CHECK(graft::tf::detect_format(fixture("tf-rust/regression/model.pb").string()) == graft::tf::file_format::graph_def);
    CHECK(graft::tf::detect_format(fixture("tf-rust/regression_savedmodel").string()) == graft::tf::file_format::saved_model);
}

TEST_CASE("fixtures: mnist-convnet graph.pbtxt loads from text and matches the binary MetaGraph's graph") {
    auto txt = fixture("mnist-convnet/graph.pbtxt");
    GRAFT_REQUIRE_PATH(txt);
    CHECK(graft::tf::detect_format(txt.string()) == graft::tf::file_format::graph_def_text);
    auto g = graft::tf::load_graph(txt.string());
    CHECK(g.size() == 396);
    CHECK(histogram(g)["Conv2D"] == 2);
    auto mg = graft::tf::load_meta_graph(fixture("mnist-convnet/model.ckpt-1.meta").string());
    REQUIRE(mg.graph.size() == g.size());
    // same nodes, inputs and ops (the .meta was exported with shapes, so attrs may differ)
    for (const auto& n : g) {
        const graft::node* m = mg.graph.find(n.name);
        REQUIRE(m != nullptr);
        CHECK(m->op == n.op);
        CHECK(m->inputs == n.inputs);
        CHECK(m->control_inputs == n.control_inputs);
    }
    const auto& conv = g.at("conv2d/Conv2D");
    CHECK(conv.attr_at("padding").s() == "SAME");
    CHECK(conv.attr_at("strides").list_of<std::int64_t>() == std::vector<std::int64_t>{1, 1, 1, 1});
    CHECK(conv.attr_at("T").type() == graft::dtype::float32);
    CHECK(conv.inputs.size() == 2);
}

TEST_CASE("fixtures: attrs and tensors decode to the values TensorFlow wrote") {
    GRAFT_REQUIRE_PATH(fixture("tf-serving/saved_model_half_plus_two_tf2_cpu/00000123"));
    auto mg = graft::tf::load_meta_graph(fixture("tf-serving/saved_model_half_plus_two_tf2_cpu/00000123").string());
    CHECK(mg.info.tags == std::vector<std::string>{"serve"});
    const auto& sig = mg.signature("serving_default");
    CHECK(sig.inputs.at("x").name == "serving_default_x:0");
    CHECK(sig.inputs.at("x").dtype == graft::dtype::float32);
    CHECK(*sig.inputs.at("x").shape == graft::shape{1});
    CHECK(sig.outputs.at("y").name == "StatefulPartitionedCall_5:0");
    CHECK(sig.method_name == "tensorflow/serving/predict");
    auto def = sig.defaults.at("x").tensor();
    CHECK(def.describe() == "float32[1]");
    CHECK(def.data<float>()[0] == 0.0f);
    // the call node: Tin/Tout lists and the function attr
    const auto& call = mg.graph.at("StatefulPartitionedCall_5");
    CHECK(call.attr_at("f").func().name == "__inference_signature_wrapper_predict_245");
    CHECK(call.attr_at("Tin").list_of<graft::dtype>() ==
          std::vector<graft::dtype>{graft::dtype::float32, graft::dtype::resource, graft::dtype::resource});
    CHECK(mg.graph.num_outputs(call) == 1);
    CHECK(mg.graph.output_dtypes(call) == std::vector<graft::dtype>{graft::dtype::float32});
    // the saver of a TF2 SavedModel
    REQUIRE(mg.saver);
    CHECK(mg.saver->filename_tensor_name == "saver_filename:0");
    CHECK(mg.saver->version == 2);
    // a string Const from the TF1 graph: the saver's tensor names
    auto tf1 = graft::tf::load_meta_graph(fixture("mnist-softmax/model_names.ckpt.meta").string());
    bool found = false;
    for (const auto& n : tf1.graph) {
        if (n.op != "SaveV2") continue;
        auto names = tf1.graph.at(n.inputs[1].node).attr_at("value").tensor().tensor();
        CHECK(names.type() == graft::dtype::string);
        CHECK(names.num_elements() == 2);
        found = true;
    }
    CHECK(found);
    CHECK(tf1.saver->restore_op_name == "save/restore_all");
    CHECK(tf1.info.has_stripped_op_list);
    CHECK(tf1.info.stripped_op_list.size() == 10);
}

TEST_CASE("fixtures: a stripped op list stays serialized; the registry takes only ops that differ from graft's table") {
    GRAFT_REQUIRE_PATH(fixture("tfnet-graphs/word_cnn.meta"));
    auto mg = graft::tf::load_meta_graph(fixture("tfnet-graphs/word_cnn.meta").string());
    const auto& ops = std::as_const(mg.info.stripped_op_list);
    REQUIRE(ops.size() == 56);
    std::size_t index_of_equal = ops.size();
    for (std::size_t i = 0; i < ops.size(); ++i) {
        CHECK(!ops.serialized(i).empty());
        if (ops.name(i) == "Equal") index_of_equal = i;
    }
    REQUIRE(index_of_equal < ops.size());
    // TF 1.x's Equal declares incompatible_shape_error, GatherV2 batch_dims, ConcatOffset its own
    // arg layout: those three differ from graft's table and are this graph's own; the other 53 are
    // the same signature and resolve through the global table
    const auto& reg = mg.graph.registry();
    CHECK(reg.defines("Equal"));
    CHECK(reg.defines("GatherV2"));
    CHECK(reg.defines("ConcatOffset"));
    CHECK(!reg.defines("MatMul"));
    CHECK(reg.find("MatMul") == graft::op_registry::global().find("MatMul"));
    CHECK(reg.find("Equal")->attrs.size() == ops[index_of_equal].attrs.size());
    // every decoded entry equals what the global table computes with, or is the registry's own
    for (std::size_t i = 0; i < ops.size(); ++i) {
        CHECK(graft::same_signature(*reg.find(ops.name(i)), ops[i]));
    }
    // written back byte for byte
    auto again = graft::tf::parse_meta_graph_def(graft::tf::serialize_meta_graph_def(mg));
    REQUIRE(again.info.stripped_op_list.size() == ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) CHECK(again.info.stripped_op_list.serialized(i) == ops.serialized(i));
    CHECK(again.info == mg.info);
    // an edit gives the list its own copy (re-encoded on write) and leaves the registry alone
    const std::size_t n_attrs = reg.find("Equal")->attrs.size();
    mg.info.stripped_op_list[index_of_equal].attrs.clear();
    CHECK(mg.info.stripped_op_list.serialized(index_of_equal).empty());
    CHECK(reg.find("Equal")->attrs.size() == n_attrs);
    auto edited = graft::tf::parse_meta_graph_def(graft::tf::serialize_meta_graph_def(mg), {}, false);
    CHECK(edited.info.stripped_op_list[index_of_equal].attrs.empty());
    CHECK(edited.info.stripped_op_list[index_of_equal].name == "Equal");
}
