// import_meta_graph: scope + input map renames everything that names a node (inputs, controls,
// colocation, collections with re-encoded VariableDefs, saver, signatures, shared_names); bad
// input maps and clashing scopes are errors naming the tensors; a 100k-node import is linear.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "graft/exec/session.hpp"
#include "graft/surgery/import.hpp"
#include "graft/surgery/restore.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/train/saver.hpp"
#include "graft/train/variables.hpp"
#include "support/fixtures.hpp"

namespace import_t {

using graft::dtype;
using graft::tensor;
namespace train = graft::train;
namespace surgery = graft::surgery;

/// y = x·w + b with w colocated/controlled like TF writes, a saver, a signature and an
/// undecodable bytes collection.
inline graft::meta_graph small_model() {
    graft::meta_graph mg;
    graft::graph_builder b(mg.graph);
    auto x = b.placeholder("x", dtype::float32, graft::shape{-1, 2});
    auto w = train::create_variable(mg, b, "w", tensor::from_vector<float>({2, 2}, {1, 2, 3, 4}));
    auto bias = train::create_variable(mg, b, "b", tensor::from_vector<float>({0.5f, -0.5f}));
    auto mm = b.op("MatMul", {x, w.value});
    auto& y = b.with_control_dependencies({"w/read"}).add("Add", {mm, bias.value}, {}, "y");
    y.attrs.set("_class", graft::attr_value::list_of(std::vector<std::string>{"loc:@w"}));
    y.device = "/device:CPU:0";
    train::add_to_collection(mg, "outputs", std::string("y:0"));
    train::add_to_collection(mg, "inputs", std::string("x:0"));
    auto& q = mg.collections["queue_runners"];
    q.which = graft::collection_def::kind::bytes_list;
    q.values = {std::string("\x0a\x03" "abc", 5)};
    graft::signature_def sig;
    sig.inputs["x"].name = "x:0";
    sig.inputs["x"].dtype = dtype::float32;
    sig.outputs["y"].name = "y:0";
    sig.outputs["y"].dtype = dtype::float32;
    mg.signatures["serving_default"] = sig;
    train::global_variables_initializer(mg);
    train::saver sv(mg);
    return mg;
}

}  // namespace import_t

TEST_CASE("import: scope and input map rename nodes, controls, colocation, collections, saver, signatures") {
    using namespace import_t;
    auto src = small_model();
    graft::meta_graph into;
    graft::graph_builder b(into.graph);
    b.placeholder("feed", dtype::float32, graft::shape{-1, 2});
    b.op("NoOp", {}, {}, "ready");

    surgery::import_options o;
    o.scope = "m";
    o.input_map = {{"x:0", "feed:0"}, {"^w/read", "^ready"}};
    o.clear_devices = true;
    o.return_elements = {"y:0", "x:0", "init"};
    auto r = surgery::import_meta_graph(into, src, o);
    CHECK(r.removed == std::vector<std::string>{"x"});
    CHECK(!into.graph.contains("m/x"));
    CHECK(into.graph.at("m/MatMul").inputs[0] == graft::endpoint{"feed", 0});
    CHECK(into.graph.at("m/MatMul").inputs[1] == graft::endpoint{"m/w/read", 0});
    auto& y = into.graph.at("m/y");
    CHECK(y.control_inputs == std::vector<std::string>{"ready"});
    CHECK(y.attr("_class")->list_of<std::string>() == std::vector<std::string>{"loc:@m/w"});
    CHECK(y.device.empty());
    CHECK(r.return_elements == std::vector<std::string>{"m/y:0", "feed:0", "m/init"});
    CHECK(r.variables == std::vector<std::string>{"m/w", "m/b"});
    CHECK(r.trainable_variables == std::vector<std::string>{"m/w", "m/b"});
    CHECK(r.init_op == "m/init");
    // collections: VariableDefs renamed and re-encoded; the mapped input leaves "inputs"
    auto& vars = into.collections.at("variables");
    REQUIRE(vars.variables.size() == 2);
    CHECK(vars.variables[0].variable_name == "m/w:0");
    CHECK(vars.variables[0].initializer_name == "m/w/Assign");
    CHECK(graft::tf::decode_variable_def(vars.values[0]).snapshot_name == "m/w/read:0");
    CHECK(into.collections.at("outputs").values == std::vector<std::string>{"m/y:0"});
    CHECK(into.collections.at("inputs").values.empty());
    CHECK(r.dropped_collections == std::vector<std::string>{"queue_runners"});
    CHECK(!into.collections.count("queue_runners"));
    // saver kept per model, target's untouched; signatures renamed
    CHECK(!into.saver);
    REQUIRE(r.saver);
    CHECK(r.saver->restore_op_name == "m/save/restore_all");
    CHECK(r.saver->filename_tensor_name == "m/save/Const:0");
    CHECK(into.signatures.at("m/serving_default").inputs.at("x").name == "feed:0");
    CHECK(r.signatures.at("serving_default").outputs.at("y").name == "m/y:0");

    // a second copy, same collections merged; the whole thing runs and the copies agree
    auto r2 = surgery::import_meta_graph(into, src, surgery::under("m2", {{"x", "feed:0"}}));
    CHECK(into.collections.at("variables").variables.size() == 4);
    CHECK(into.collections.at("variables").variables[3].variable_name == "m2/b:0");
    auto rt = graft::tf::parse_meta_graph_def(graft::tf::serialize_meta_graph_def(into));
    graft::exec::session s(rt.graph);
    s.run({}, {}, {r.init_op, r2.init_op});
    tensor x = tensor::from_vector<float>({1, 2}, {1, 1});
    auto out = s.run({{"feed:0", x}}, {"m/y:0", "m2/y:0"});
    CHECK(out[0].data<float>()[0] == 4.5f);
    CHECK(out[0].data<float>()[1] == 5.5f);
    CHECK(graft::equal(out[0], out[1]));
}

TEST_CASE("import: bad maps, seams and scopes are errors naming the tensors") {
    using namespace import_t;
    auto src = small_model();
    graft::meta_graph into;
    graft::graph_builder b(into.graph);
    b.placeholder("f3", dtype::float32, graft::shape{-1, 3});
    b.placeholder("i2", dtype::int32, graft::shape{-1, 2});
    b.placeholder("f2", dtype::float32, graft::shape{-1, 2});
    std::size_t before = into.graph.size();
    auto bad = [&](std::map<std::string, std::string> m, std::string scope = "m") {
        surgery::import_options o;
        o.scope = std::move(scope);
        o.input_map = std::move(m);
        return std::string(graft::test::expect_error<graft::error>([&] { surgery::import_meta_graph(into, src, o); }).what());
    };
    auto e = bad({{"nope:0", "f2:0"}});
    CHECK(e.find("'nope:0'") != std::string::npos);
    CHECK(e.find("names no tensor of the imported graph") != std::string::npos);
    e = bad({{"x:0", "missing:0"}});
    CHECK(e.find("'missing:0'") != std::string::npos);
    CHECK(e.find("target graph") != std::string::npos);
    e = bad({{"x:1", "f2:0"}});
    CHECK(e.find("'x:1'") != std::string::npos);
    e = bad({{"x:0", "i2:0"}});
    CHECK(e.find("dtype mismatch") != std::string::npos);
    CHECK(e.find("'x:0' is float32") != std::string::npos);
    CHECK(e.find("'i2:0' is int32") != std::string::npos);
    e = bad({{"x:0", "f3:0"}});
    CHECK(e.find("shape mismatch") != std::string::npos);
    CHECK(e.find("'x:0' is [?,2]") != std::string::npos);
    CHECK(e.find("'f3:0' is [?,3]") != std::string::npos);
    CHECK(into.graph.size() == before);  // nothing was added by the failed imports
    surgery::import_meta_graph(into, src);  // unscoped: fine, no name clashes
    CHECK(into.graph.size() == before + src.graph.size());

    // overlapping scopes: "m" twice, and "A" when "A/x" exists
    graft::meta_graph host;
    surgery::import_meta_graph(host, src, surgery::under("m"));
    auto e2 = graft::test::expect_error<graft::invalid_argument_error>([&] { surgery::import_meta_graph(host, src, surgery::under("m")); });
    CHECK(std::string(e2.what()).find("scope 'm' is already used") != std::string::npos);
    graft::graph_builder(host.graph).placeholder("A/x", dtype::float32);
    auto n = host.graph.size();
    graft::test::expect_error<graft::invalid_argument_error>([&] { surgery::import_meta_graph(host, src, surgery::under("A/")); });
    CHECK(host.graph.size() == n);
    auto e3 = graft::test::expect_error<graft::invalid_argument_error>([&] { surgery::import_meta_graph(into, src); });
    CHECK(std::string(e3.what()).find("node 'x' is already in the target graph") != std::string::npos);

    // function library clash
    graft::meta_graph fa, fb;
    graft::function_def fd;
    fd.signature.name = "my_fn";
    fa.graph.add_function(fd);
    fd.signature.summary = "another body";
    fb.graph.add_function(fd);
    graft::meta_graph h2;
    surgery::import_meta_graph(h2, fa, surgery::under("a"));
    surgery::import_meta_graph(h2, fa, surgery::under("a2"));  // the same function twice is fine
    auto e4 = graft::test::expect_error<graft::graph_error>([&] { surgery::import_meta_graph(h2, fb, surgery::under("b")); });
    CHECK(std::string(e4.what()).find("'my_fn'") != std::string::npos);
}

TEST_CASE("import: a 20k-node chain keeps its mapped input and control inputs (timings: benchmarks/bench_surgery)") {
    using graft::dtype;
    auto make = [](int n) {
        graft::meta_graph mg;
        mg.graph.reserve(static_cast<std::size_t>(n));
        graft::node x("x", "Placeholder");
        x.attrs.set("dtype", dtype::float32);
        mg.graph.add_node(std::move(x));
        std::string prev = "x";
        for (int i = 1; i < n; ++i) {
            graft::node k("n" + std::to_string(i), "Identity", {{prev, 0}});
            k.attrs.set("T", dtype::float32);
            if (i % 10 == 0) k.control_inputs.push_back("x");
            prev = k.name;
            mg.graph.add_node(std::move(k));
        }
        return mg;
    };
    auto src = make(20000);
    graft::meta_graph into;
    graft::graph_builder(into.graph).placeholder("in", dtype::float32);
    auto r = graft::surgery::import_meta_graph(into, src, graft::surgery::under("big", {{"x:0", "in:0"}, {"^x", "^in"}}));
    CHECK(r.imported_nodes == 19999u);
    CHECK(into.graph.at("big/n1").inputs[0] == graft::endpoint{"in", 0});
    CHECK(into.graph.at("big/n10").control_inputs == std::vector<std::string>{"in"});
    CHECK(into.graph.at("big/n19999").inputs[0] == graft::endpoint{"big/n19998", 0});
}
