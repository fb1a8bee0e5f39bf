// gen_embedded_bench OUT_DIR — writes the LeNet-size frozen graph bench_embedded measures
// (OUT_DIR/lenet_bench.pb, random weights from fixed seeds) and its embedded header
// (OUT_DIR/lenet_bench.hpp, graft::embedded::generate_embedded). Run at build time by
// benchmarks/CMakeLists.txt, so no generated file is committed.
#include <filesystem>
#include <iostream>

#include "bench_support.hpp"
#include "graft/core/io.hpp"
#include "graft/graph/build.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/embedded/exporter.hpp"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: gen_embedded_bench OUT_DIR\n";
        return 2;
    }
    try {
        using graft::dtype;
        using graft::tensor;
        namespace fs = std::filesystem;
        fs::create_directories(argv[1]);
        auto l4 = [](std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
            return graft::attr_value::list_of(std::vector<std::int64_t>{a, b, c, d});
        };
        graft::graph g;
        g.versions.producer = 27;
        graft::graph_builder b(g);
        std::uint32_t seed = 100;
        auto w = [&](const std::string& name, graft::shape s, std::int64_t fan_in) {
            return b.constant(graft::bench::random_f32(s, seed++, 1.f / std::sqrt(static_cast<float>(fan_in))), name);
        };
        auto conv = [&](graft::endpoint in, const std::string& s, std::int64_t c, std::int64_t oc, const char* pad) {
            auto y = b.op("Conv2D", {in, w(s + "/kernel", {5, 5, c, oc}, 25 * c)},
                          {{"strides", l4(1, 1, 1, 1)}, {"padding", std::string(pad)}}, s + "/Conv2D");
            y = b.op("Relu", {b.op("BiasAdd", {y, w(s + "/bias", {oc}, 25 * c)}, {}, s + "/BiasAdd")}, {}, s + "/Relu");
            return b.op("MaxPool", {y}, {{"ksize", l4(1, 2, 2, 1)}, {"strides", l4(1, 2, 2, 1)}, {"padding", std::string("VALID")}},
                        s + "/pool");
        };
        auto dense = [&](graft::endpoint in, const std::string& s, std::int64_t i, std::int64_t o, bool relu) {
            auto y = b.op("BiasAdd", {b.op("MatMul", {in, w(s + "/kernel", {i, o}, i)}, {}, s + "/MatMul"), w(s + "/bias", {o}, i)}, {},
                          relu ? s + "/BiasAdd" : std::string("logits"));
            return relu ? b.op("Relu", {y}, {}, s + "/Relu") : y;
        };
        auto x = b.placeholder("x", dtype::float32, graft::shape{-1, 28, 28, 1});
        auto h = conv(conv(x, "conv1", 1, 6, "SAME"), "conv2", 6, 16, "VALID");
        h = b.op("Reshape", {h, b.constant(tensor::from_vector<std::int32_t>({-1, 400}), "flatten/shape")}, {}, "flatten/Reshape");
        dense(dense(dense(h, "fc1", 400, 120, true), "fc2", 120, 84, true), "fc3", 84, 10, false);
        graft::tf::write_graph(g, (fs::path(argv[1]) / "lenet_bench.pb").string());
        graft::embedded::embedded_options o;
        o.outputs = {"logits"};
        o.ns = "lenet_bench";
        o.source = "lenet_bench.pb";
        auto code = graft::embedded::generate_embedded(g, o);
        graft::write_file_atomic((fs::path(argv[1]) / "lenet_bench.hpp").string(), code.header);
        std::cout << "lenet_bench.hpp: " << code.weight_floats << " weight floats, arena " << code.arena_floats << " floats\n";
    } catch (const std::exception& e) {
        std::cerr << "gen_embedded_bench: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
