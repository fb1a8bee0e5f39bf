// `graft inspect` and `graft convert` on real files, through the CLI binary.
#include <doctest/doctest.h>

#include "graft/formats/tf_graph/graph_io.hpp"
#include "python_oracle.hpp"
#include "support/fixtures.hpp"

using graft::test::fixture;
using graft::test::run_command;

TEST_CASE("cli: graft inspect on a TF1 MetaGraph, a TF2 SavedModel and a checkpoint prefix") {
    GRAFT_REQUIRE_PATH(fixture("tfnet-graphs/xor.meta"));
    std::string out;
    REQUIRE(run_command(std::string(GRAFT_CLI) + " inspect " + fixture("tfnet-graphs/xor.meta").string(), out) == 0);
    CHECK(out.find("MetaGraphDef (binary)") != std::string::npos);
    CHECK(out.find("nodes:     71") != std::string::npos);
    CHECK(out.find("17\tConst") != std::string::npos);
    CHECK(out.find("Variable  float32[2,8]  trainable  ref  key=Variable") != std::string::npos);
    CHECK(out.find("global_step  int32[]  not-trainable") != std::string::npos);

    REQUIRE(run_command(std::string(GRAFT_CLI) + " inspect " +
                            fixture("tf-serving/saved_model_half_plus_two_tf2_cpu/00000123").string(), out) == 0);
    CHECK(out.find("serving_default  (tensorflow/serving/predict)") != std::string::npos);
    CHECK(out.find("in  x: serving_default_x:0  float32[1]") != std::string::npos);
    CHECK(out.find("a  float32[]  trainable  resource  key=a/.ATTRIBUTES/VARIABLE_VALUE") != std::string::npos);
    CHECK(out.find("ops graft cannot run yet (no CPU kernel): 0") != std::string::npos);  // ParseExampleV2 runs
    CHECK(out.find("MISSING") == std::string::npos);

    REQUIRE(run_command(std::string(GRAFT_CLI) + " inspect " + fixture("mnist-softmax/model_names.ckpt").string(), out) == 0);
    CHECK(out.find("checkpoint V2") != std::string::npos);
    CHECK(out.find("weights_0  float32[2,3]") != std::string::npos);

    REQUIRE(run_command(std::string(GRAFT_CLI) + " inspect --nodes " + fixture("tf-rust/addition/model.pb").string(), out) == 0);
    CHECK(out.find("z  AddV2  x  y") != std::string::npos);
    CHECK(out.find("likely outputs (nothing consumes them): 1\n    z  (AddV2)") != std::string::npos);
    // an Estimator's input queues (RandomShuffleQueueV2, QueueDequeueManyV2, ...) run: nothing is listed
    REQUIRE(run_command(std::string(GRAFT_CLI) + " inspect " + fixture("mnist-convnet/model.ckpt-1.meta").string(), out) == 0);
    CHECK(out.find("ops graft cannot run yet (no CPU kernel): 0") != std::string::npos);
    CHECK(out.find("QueueDequeueManyV2  (1 node)") == std::string::npos);

    CHECK(run_command(std::string(GRAFT_CLI) + " inspect /nonexistent.pb", out) == 1);
    CHECK(out.find("graft: error:") != std::string::npos);
}

TEST_CASE("cli: graft inspect --json parses as JSON with the same facts") {
    GRAFT_REQUIRE_PATH(fixture("tfnet-graphs/word_cnn.meta"));
    GRAFT_REQUIRE_PYTHON();
    std::string out;
    auto dir = graft::test::scratch("cli_json");
    REQUIRE(run_command(std::string(GRAFT_CLI) + " inspect --json --nodes " + fixture("tfnet-graphs/word_cnn.meta").string() +
                            " > " + (dir / "o.json").string(), out) == 0);
    REQUIRE(graft::test::run_python("import json\nd = json.load(open('" + (dir / "o.json").string() + R"PY('))
print(d['nodes'], len(d['node_list']), d['ops']['Const'], len(d['variables']), d['collections']['variables'])
v = [x for x in d['variables'] if x['name'] == 'embeddings'][0]
print(v['dtype'], v['shape'], v['trainable'], v['kind'], v['checkpoint_key'])
)PY", out) == 0);
    CHECK(out == "403 403 95 30 bytes_list (30 VariableDef)\nfloat32 [50000,128] True ref embeddings\n");
}

TEST_CASE("cli: graft convert between binary and text, both ways") {
    GRAFT_REQUIRE_PATH(fixture("mnist-convnet/graph.pbtxt"));
    auto dir = graft::test::scratch("cli_convert");
    std::string out;
    auto pb = (dir / "g.pb").string(), txt = (dir / "g.pbtxt").string();
    REQUIRE(run_command(std::string(GRAFT_CLI) + " convert " + fixture("mnist-convnet/graph.pbtxt").string() + " " + pb, out) == 0);
    CHECK(out.find("GraphDef (binary)") != std::string::npos);
    REQUIRE(run_command(std::string(GRAFT_CLI) + " convert " + pb + " " + txt, out) == 0);
    CHECK(out.find("GraphDef (text)") != std::string::npos);
    auto a = graft::tf::load_graph(fixture("mnist-convnet/graph.pbtxt").string());
    CHECK(graft::tf::load_graph(pb) == a);
    CHECK(graft::tf::load_graph(txt) == a);
    auto meta = (dir / "m.pbtxt").string();
    REQUIRE(run_command(std::string(GRAFT_CLI) + " convert " + fixture("tfnet-graphs/xor.meta").string() + " " + meta, out) == 0);
    CHECK(graft::tf::detect_format(meta) == graft::tf::file_format::meta_graph_text);
    CHECK(graft::tf::load_meta_graph(meta).graph == graft::tf::load_meta_graph(fixture("tfnet-graphs/xor.meta").string()).graph);
}
