// Round trips: load -> write -> load gives the same graph (nodes, attrs, edges, library, versions)
// and the same MetaGraph parts, binary <-> text both ways; and what graft writes decodes in
// python3-protobuf as the very message TensorFlow wrote.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "graft/core/io.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "python_oracle.hpp"
#include "support/fixtures.hpp"

namespace fs = std::filesystem;
using graft::test::fixture;
using graft::tf::file_format;

namespace {

struct graph_file {
    std::string path;
    file_format format;
};

std::vector<graph_file> fixture_graph_files() {
    std::vector<graph_file> r;
    for (auto& e : fs::recursive_directory_iterator(fixture(""))) {
        auto ext = e.path().extension().string();
        if ((ext != ".pb" && ext != ".pbtxt" && ext != ".meta") || e.path().filename() == "fingerprint.pb") continue;
        r.push_back({e.path().string(), graft::tf::detect_format(e.path().string())});
    }
    std::sort(r.begin(), r.end(), [](auto& a, auto& b) { return a.path < b.path; });
    return r;
}

void check_same(const graft::meta_graph& a, const graft::meta_graph& b) {
    CHECK(a.graph == b.graph);
    CHECK(a.info == b.info);
    CHECK(a.saver == b.saver);
    CHECK(a.collections == b.collections);
    CHECK(a.signatures == b.signatures);
    CHECK(a.assets == b.assets);
    CHECK(a.object_graph_bytes == b.object_graph_bytes);
    CHECK(a.extra_fields == b.extra_fields);
}

/// Same nodes, ops, edges, devices and attrs, in the graph and in every function body. (A text
/// round trip re-serializes the fields graft keeps as raw bytes in canonical order, so those are
/// compared through the canonical text instead.)
void check_same_nodes(const graft::graph& a, const graft::graph& b) {
    auto same = [](const graft::node& x, const graft::node& y) {
        CHECK(x.name == y.name);
        CHECK(x.op == y.op);
        CHECK(x.inputs == y.inputs);
        CHECK(x.control_inputs == y.control_inputs);
        CHECK(x.device == y.device);
        CHECK(x.attrs == y.attrs);
    };
    REQUIRE(a.size() == b.size());
    for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) same(*i, *j);
    REQUIRE(a.library.functions.size() == b.library.functions.size());
    for (std::size_t f = 0; f < a.library.functions.size(); ++f) {
        const auto& fa = a.library.functions[f];
        const auto& fb = b.library.functions[f];
        CHECK(fa.name() == fb.name());
        CHECK(fa.ret == fb.ret);
        CHECK(fa.control_ret == fb.control_ret);
        CHECK(fa.attrs == fb.attrs);
        REQUIRE(fa.nodes.size() == fb.nodes.size());
        for (std::size_t k = 0; k < fa.nodes.size(); ++k) same(fa.nodes[k], fb.nodes[k]);
    }
    CHECK(a.versions == b.versions);
}

file_format message_kind(file_format f) {
    switch (f) {
        case file_format::graph_def_text: return file_format::graph_def;
        case file_format::meta_graph_text: return file_format::meta_graph;
        case file_format::saved_model_text: return file_format::saved_model;
        default: return f;
    }
}

/// Serializes a loaded file again as the same message kind.
std::string reserialize(const graph_file& f) {
    switch (message_kind(f.format)) {
        case file_format::graph_def: return graft::tf::serialize_graph_def(graft::tf::load_graph(f.path));
        case file_format::meta_graph: return graft::tf::serialize_meta_graph_def(graft::tf::load_meta_graph(f.path));
        default: return graft::tf::serialize_saved_model(graft::tf::load_saved_model(f.path));
    }
}

}  // namespace

TEST_CASE("roundtrip: load -> write -> load is the identity, binary and text") {
    GRAFT_REQUIRE_PATH(fixture(""));
    auto dir = graft::test::scratch("roundtrip");
    int n = 0;
    for (auto& f : fixture_graph_files()) {
        CAPTURE(f.path);
        auto kind = message_kind(f.format);
        if (kind == file_format::saved_model) {
            auto a = graft::tf::load_saved_model(f.path);
            auto bin = graft::tf::serialize_saved_model(a);
            auto text = graft::tf::to_text(bin, kind);
            auto b = graft::tf::parse_saved_model(bin);
            auto c = graft::tf::parse_saved_model(graft::tf::from_text(text, kind));
            REQUIRE(a.meta_graphs.size() == b.meta_graphs.size());
            REQUIRE(a.meta_graphs.size() == c.meta_graphs.size());
            for (std::size_t i = 0; i < a.meta_graphs.size(); ++i) {
                check_same(a.meta_graphs[i], b.meta_graphs[i]);
                check_same_nodes(a.meta_graphs[i].graph, c.meta_graphs[i].graph);
                CHECK(a.meta_graphs[i].signatures == c.meta_graphs[i].signatures);
                CHECK(a.meta_graphs[i].collections == c.meta_graphs[i].collections);
            }
            CHECK(graft::tf::serialize_saved_model(b) == bin);
            CHECK(graft::tf::to_text(graft::tf::serialize_saved_model(c), kind) == text);
        } else if (kind == file_format::meta_graph) {
            auto a = graft::tf::load_meta_graph(f.path);
            auto bin_path = (dir / "m.meta").string(), txt_path = (dir / "m.pbtxt").string();
            graft::tf::write_meta_graph(a, bin_path);
            graft::tf::write_meta_graph(a, txt_path);
            CHECK(graft::tf::detect_format(txt_path) == file_format::meta_graph_text);
            auto b = graft::tf::load_meta_graph(bin_path);
            auto c = graft::tf::load_meta_graph(txt_path);
            check_same(a, b);
            CHECK(graft::tf::serialize_meta_graph_def(b) == graft::tf::serialize_meta_graph_def(a));
            check_same_nodes(a.graph, c.graph);
            CHECK(a.collections == c.collections);
            CHECK(a.saver == c.saver);
            CHECK(graft::tf::to_text(graft::tf::serialize_meta_graph_def(c), kind) == graft::read_file(txt_path));
        } else {
            auto a = graft::tf::load_graph(f.path);
            auto bin_path = (dir / "g.pb").string(), txt_path = (dir / "g.pbtxt").string();
            graft::tf::write_graph(a, bin_path);
            graft::tf::write_graph(a, txt_path);
            CHECK(graft::tf::detect_format(bin_path) == file_format::graph_def);
            CHECK(graft::tf::detect_format(txt_path) == file_format::graph_def_text);
            auto b = graft::tf::load_graph(bin_path);
            auto c = graft::tf::load_graph(txt_path);
            CHECK(a == b);
            CHECK(a == c);
            // every node, attr and edge, spelled out
            for (const auto& x : a) {
                const auto& y = c.at(x.name);
                CHECK(x.op == y.op);
                CHECK(x.inputs == y.inputs);
                CHECK(x.control_inputs == y.control_inputs);
                CHECK(x.device == y.device);
                CHECK(x.attrs == y.attrs);
            }
        }
        ++n;
    }
    CHECK(n >= 20);
}

TEST_CASE("roundtrip: python3-protobuf decodes what graft writes as the message TensorFlow wrote") {
    GRAFT_REQUIRE_PATH(fixture(""));
    GRAFT_REQUIRE_PYTHON();
    auto dir = graft::test::scratch("pycompare");
    std::ofstream list(dir / "pairs.txt");
    int i = 0;
    for (auto& f : fixture_graph_files()) {
        auto kind = message_kind(f.format);
        auto bin = reserialize(f);
        auto out_bin = dir / ("out" + std::to_string(i) + ".bin");
        auto out_txt = dir / ("out" + std::to_string(i) + ".txt");
        std::ofstream(out_bin, std::ios::binary) << bin;
        std::ofstream(out_txt, std::ios::binary) << graft::tf::to_text(bin, kind);
        const char* k = kind == file_format::graph_def ? "graph" : kind == file_format::meta_graph ? "meta" : "saved";
        bool orig_text = f.format != kind;
        list << k << "\t" << (orig_text ? "text" : "bin") << "\t" << f.path << "\t" << out_bin.string() << "\t"
             << out_txt.string() << "\n";
        ++i;
    }
    list.close();
    const char* script = R"PY(
from graft_tf import graph_pb2, meta_graph_pb2, saved_model_pb2
from google.protobuf import text_format
kinds = {'graph': graph_pb2.GraphDef, 'meta': meta_graph_pb2.MetaGraphDef, 'saved': saved_model_pb2.SavedModel}
bad = 0
for line in open(PAIRS):
    kind, enc, orig, out_bin, out_txt = line.rstrip('\n').split('\t')
    M = kinds[kind]
    a = M()
    if enc == 'text': text_format.Parse(open(orig).read(), a)
    else: a.ParseFromString(open(orig, 'rb').read())
    b = M(); b.ParseFromString(open(out_bin, 'rb').read())
    c = M(); text_format.Parse(open(out_txt).read(), c)
    if a != b or a != c:
        bad += 1
        print('DIFF', orig, 'binary' if a != b else 'text')
    else:
        print('SAME', orig)
print('bad', bad)
)PY";
    std::string out;
    REQUIRE(graft::test::run_python("PAIRS = '" + (dir / "pairs.txt").string() + "'\n" + script, out) == 0);
    INFO(out);
    CHECK(out.find("DIFF") == std::string::npos);
    CHECK(out.find("bad 0") != std::string::npos);
    std::size_t same = 0;
    for (std::size_t p = out.find("SAME "); p != std::string::npos; p = out.find("SAME ", p + 1)) ++same;
    CHECK(same == static_cast<std::size_t>(i));
}

TEST_CASE("roundtrip: graft's own graph, built in C++, written and read by python3-protobuf") {
    GRAFT_REQUIRE_PYTHON();
    graft::graph g;
    g.versions.producer = 1087;
    auto& x = g.add_node({"x", "Placeholder"});
    x.attrs.set("dtype", graft::dtype::float32);
    x.attrs.set("shape", graft::shape{-1, 3});
    auto& w = g.add_node({"w", "Const"});
    w.attrs.set("dtype", graft::dtype::float32);
    w.attrs.set("value", graft::tensor::from_vector<float>({3, 2}, {1, 2, 3, 4, 5, 6}));
    auto& mm = g.add_node({"mm", "MatMul", {{"x", 0}, {"w", 0}}});
    mm.attrs.set("T", graft::dtype::float32);
    mm.attrs.set("transpose_a", false);
    mm.device = "/device:CPU:0";
    auto& s = g.add_node({"s", "Split", {{"c", 0}, {"mm", 0}}});
    s.attrs.set("num_split", 2);
    s.attrs.set("T", graft::dtype::float32);
    s.add_control_input("w");
    g.add_node({"c", "Const"}).attrs.set("value", graft::tensor::scalar_of<std::int32_t>(1));
    g.at("c").attrs.set("dtype", graft::dtype::int32);
    g.touch();
    auto dir = graft::test::scratch("pybuilt");
    graft::tf::write_graph(g, (dir / "g.pb").string());
    std::string out;
    REQUIRE(graft::test::run_python("P = '" + (dir / "g.pb").string() + R"PY('
from graft_tf import graph_pb2
g = graph_pb2.GraphDef(); g.ParseFromString(open(P, 'rb').read())
n = {x.name: x for x in g.node}
print(len(g.node), g.versions.producer)
print(list(n['s'].input))
print(n['mm'].device, n['mm'].attr['T'].type, n['mm'].attr['transpose_a'].b)
import struct
v = n['w'].attr['value'].tensor
print(v.dtype, [d.size for d in v.tensor_shape.dim], list(struct.unpack('<6f', v.tensor_content)))
print(n['c'].attr['value'].tensor.int_val[0], n['x'].attr['shape'].shape.dim[0].size)
)PY", out) == 0);
    CHECK(out == "5 1087\n['c', 'mm', '^w']\n/device:CPU:0 1 False\n1 [3, 2] [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]\n1 -1\n");
    auto back = graft::tf::load_graph((dir / "g.pb").string());
    CHECK(back == g);
    CHECK(back.at("w").attr_at("value").tensor().tensor().data<float>()[5] == 6.0f);
}

TEST_CASE("roundtrip: unmodelled NodeDef fields and devices survive, several fields kept in order") {
    graft::graph g;
    auto& x = g.add_node({"x", "Placeholder"});
    x.attrs.set("dtype", graft::dtype::float32);
    x.device = "/job:worker/replica:0/task:1/device:CPU:0";
    // field 99 varint 7, then field 98 bytes "ab": NodeDef fields graft does not model
    const std::string unknown = std::string("\x98\x06\x07", 3) + std::string("\x92\x06\x02" "ab", 5);
    x.extra_fields = unknown;
    auto back = graft::tf::parse_graph_def(graft::tf::serialize_graph_def(g));
    const auto& y = back.at("x");
    CHECK(y.extra_fields == unknown);
    CHECK(y.extra_fields.size() == 8);
    CHECK(y.device == "/job:worker/replica:0/task:1/device:CPU:0");
    CHECK(back.at("x") == x);
}
