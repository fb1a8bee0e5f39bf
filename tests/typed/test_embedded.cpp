// embedded codegen: the header generated from the real mnist-softmax .meta + checkpoint, compiled
// with -fno-exceptions -fno-rtti into a plain program, classifies the MNIST test set at 0.7357
// with graft's logits; a hand-built CNN (Conv2D SAME/VALID, strides, depthwise, FusedBatchNormV3,
// MaxPool, AvgPool, BiasAdd, Relu/Relu6/Tanh/Sigmoid, Reshape, transposed MatMul, Softmax, two
// outputs) matches the session element-wise; unsupported ops, unknown dims and missing names are
// errors naming them; `graft codegen --embedded` of a .meta and of a SavedModel (compiled, run).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/formats/idx.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/embedded/exporter.hpp"
#include "support/fixtures.hpp"

namespace embedded_t {

using graft::dtype;
using graft::tensor;

inline tensor uniform(graft::shape s, unsigned seed, float a) {
    tensor t(dtype::float32, s);
    unsigned x = seed * 2654435761u + 7u;
    for (std::int64_t i = 0; i < t.num_elements(); ++i) {
        x = x * 1664525u + 1013904223u;
        t.data<float>()[i] = a * (static_cast<float>(x >> 8) / 8388608.0f - 1.0f);
    }
    return t;
}

inline void write_file(const std::filesystem::path& p, const std::string& s) {
    std::ofstream f(p, std::ios::binary);
    f << s;
}

inline void write_floats(const std::filesystem::path& p, const tensor& t) {
    std::ofstream f(p, std::ios::binary);
    f.write(reinterpret_cast<const char*>(t.data<float>()), static_cast<std::streamsize>(t.nbytes()));
}

inline std::vector<float> read_floats(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::vector<char> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::vector<float> r(b.size() / sizeof(float));
    std::memcpy(r.data(), b.data(), r.size() * sizeof(float));
    return r;
}

/// Compiles `driver` (which includes net.hpp from `dir`) with the compiler CMake used, as firmware
/// would: C++17, no exceptions, no RTTI. Returns the program's path.
inline std::string compile(const std::filesystem::path& dir, const std::string& driver) {
    write_file(dir / "driver.cpp", driver);
    std::string exe = (dir / "prog").string();
    std::string cmd = std::string(GRAFT_CXX) + " -std=c++17 -O1 -fno-exceptions -fno-rtti -Wall -Wextra -Werror -I" +
                      dir.string() + " " + (dir / "driver.cpp").string() + " -o " + exe;
    std::string out;
    int rc = graft::test::run_command(cmd, out);
    INFO(cmd << "\n" << out.substr(0, 4000));
    REQUIRE(rc == 0);
    return exe;
}

/// A driver for a one-input, one-output net: raw float samples in, raw float outputs out.
inline std::string single_driver(const std::string& ns) {
    return "#include \"net.hpp\"\n#include <cstdio>\n"
           "int main(int argc, char** argv) {\n"
           "    if (argc != 3) return 2;\n"
           "    std::FILE* f = std::fopen(argv[1], \"rb\");\n"
           "    std::FILE* g = std::fopen(argv[2], \"wb\");\n"
           "    if (!f || !g) return 3;\n"
           "    static float in[" + ns + "::net::input_size];\n"
           "    float out[" + ns + "::net::output_size];\n"
           "    while (std::fread(in, sizeof in, 1, f) == 1) {\n"
           "        " + ns + "::net::forward(in, out);\n"
           "        std::fwrite(out, sizeof out, 1, g);\n"
           "    }\n"
           "    std::fclose(f);\n"
           "    return std::fclose(g) == 0 ? 0 : 4;\n}\n";
}

inline graft::attr_value list4(std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
    return graft::attr_value::list_of(std::vector<std::int64_t>{a, b, c, d});
}

}  // namespace embedded_t

TEST_CASE("embedded: mnist-softmax .meta + checkpoint -> header -> -fno-exceptions program: 0.7357 on MNIST") {
    using namespace embedded_t;
    auto meta = graft::test::fixture("mnist-softmax/train_model.ckpt.meta");
    auto ckpt = graft::test::fixture("mnist-softmax/train_model.ckpt").string();
    auto images = graft::test::dataset("mnist/t10k-images-idx3-ubyte.gz");
    auto labels = graft::test::dataset("mnist/t10k-labels-idx1-ubyte.gz");
    GRAFT_REQUIRE_PATH(meta);
    GRAFT_REQUIRE_PATH(images);
    auto dir = graft::test::scratch("typed_embedded_mnist");

    graft::meta_graph mg = graft::tf::load_meta_graph(meta.string());
    graft::embedded::embedded_options o;
    o.inputs = {graft::embedded::parse_embedded_input("Placeholder:-1,784")};
    o.outputs = {"Add"};
    o.ns = "mnist_softmax";
    graft::embedded::embedded_code code = graft::embedded::generate_embedded(mg, ckpt, o);
    REQUIRE(code.inputs.size() == 1);
    CHECK(code.inputs[0].shape == std::vector<std::int64_t>{1, 784});
    CHECK(code.outputs[0].shape == std::vector<std::int64_t>{1, 10});
    CHECK(code.weight_floats == 784 * 12 + 10);  // W's columns padded to 4 for the vector kernel
    CHECK(code.arena_floats == 16);  // MatMul's 10 floats, the bias Add in place
    CHECK(code.ops == std::vector<std::string>{"Add", "MatMul"});
    CHECK(code.header.find("#include <cmath>") != std::string::npos);
    CHECK(code.header.find("graft/") == std::string::npos);  // self-contained
    CHECK(code.header.find("new ") == std::string::npos);
    write_file(dir / "net.hpp", code.header);
    std::string exe = compile(dir, single_driver("mnist_softmax"));

    tensor pixels = graft::data::mnist_images_as_features(graft::data::read_idx(images.string()));
    tensor lab = graft::cast(graft::data::read_idx(labels.string()), dtype::int64);
    write_floats(dir / "images.f32", pixels);
    std::string out;
    REQUIRE(graft::test::run_command(exe + " " + (dir / "images.f32").string() + " " + (dir / "logits.f32").string(), out) == 0);
    std::vector<float> got = read_floats(dir / "logits.f32");
    REQUIRE(got.size() == 100000);

    // graft's runtime on the same checkpoint
    graft::graph frozen = graft::surgery::freeze(mg, ckpt, {"Add"});
    graft::exec::session s(frozen);
    tensor want = s.run({{"Placeholder", pixels}}, {"Add:0"})[0];
    float diff = 0;
    std::int64_t correct = 0, agree = 0;
    for (std::int64_t i = 0; i < 10000; ++i) {
        std::int64_t best = 0, best_want = 0;
        for (std::int64_t j = 0; j < 10; ++j) {
            float g = got[static_cast<std::size_t>(i * 10 + j)], w = want.data<float>()[i * 10 + j];
            diff = std::max(diff, std::fabs(g - w));
            if (g > got[static_cast<std::size_t>(i * 10 + best)]) best = j;
            if (w > want.data<float>()[i * 10 + best_want]) best_want = j;
        }
        correct += best == lab.data<std::int64_t>()[i];
        agree += best == best_want;
    }
    MESSAGE("embedded mnist-softmax: " << correct << "/10000, max |logit - graft| = " << diff);
    CHECK(diff <= 1e-4f);
    CHECK(agree == 10000);
    CHECK(correct == 7357);
}

TEST_CASE("embedded: a small CNN (Conv2D SAME/VALID, strides 2, depthwise, batch norm, pools, BiasAdd, Reshape, MatMul^T, Softmax) equals the session") {
    using namespace embedded_t;
    auto dir = graft::test::scratch("typed_embedded_cnn");
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.placeholder("x", dtype::float32, graft::shape{-1, 12, 12, 3});
    auto xs = b.op("Mul", {x, b.scalar<float>(0.5f, "scale")}, {}, "scaled");
    auto c1 = b.op("Conv2D", {xs, b.constant(uniform({3, 3, 3, 4}, 1, 0.5f), "c1/kernel")},
                   {{"strides", list4(1, 1, 1, 1)}, {"padding", std::string("SAME")}}, "c1/Conv2D");
    auto r1 = b.op("Relu", {b.op("BiasAdd", {c1, b.constant(uniform({4}, 2, 0.2f), "c1/bias")}, {}, "c1/BiasAdd")}, {}, "c1/Relu");
    auto c2 = b.op("Conv2D", {r1, b.constant(uniform({3, 3, 4, 6}, 3, 0.5f), "c2/kernel")},
                   {{"strides", list4(1, 2, 2, 1)}, {"padding", std::string("VALID")}}, "c2/Conv2D");          // [5,5,6]
    auto r2 = b.op("Relu6", {b.op("AddV2", {c2, b.constant(uniform({6}, 4, 0.2f), "c2/bias")}, {}, "c2/add")}, {}, "c2/Relu6");
    // depthwise 3x3 (multiplier 2) SAME, then an inference batch norm over its 12 channels
    auto dw = b.op("DepthwiseConv2dNative", {r2, b.constant(uniform({3, 3, 6, 2}, 10, 0.5f), "dw/kernel")},
                   {{"strides", list4(1, 1, 1, 1)}, {"padding", std::string("SAME")}}, "dw/depthwise");  // [5,5,12]
    tensor var = uniform({12}, 14, 0.5f);
    for (int i = 0; i < 12; ++i) var.data<float>()[i] += 1.f;
    auto bn = b.op_n("FusedBatchNormV3", {dw, b.constant(uniform({12}, 11, 1.f), "bn/gamma"), b.constant(uniform({12}, 12, 0.3f), "bn/beta"),
                                          b.constant(uniform({12}, 13, 0.3f), "bn/mean"), b.constant(var, "bn/var")},
                     {{"is_training", false}, {"epsilon", 0.001f}}, "bn")[0];
    auto c3 = b.op("Conv2D", {b.op("Tanh", {bn}, {}, "bn/tanh"), b.constant(uniform({2, 2, 12, 6}, 9, 0.5f), "c3/kernel")},
                   {{"strides", list4(1, 2, 2, 1)}, {"padding", std::string("SAME")}}, "c3/Conv2D");           // [3,3,6]
    auto m1 = b.op("MaxPool", {c3}, {{"ksize", list4(1, 2, 2, 1)}, {"strides", list4(1, 1, 1, 1)}, {"padding", std::string("SAME")}}, "pool1");
    auto a1 = b.op("AvgPool", {b.op("Sigmoid", {m1}, {}, "sig")},
                   {{"ksize", list4(1, 2, 2, 1)}, {"strides", list4(1, 2, 2, 1)}, {"padding", std::string("SAME")}}, "pool2");  // [2,2,6]
    auto flat = b.op("Reshape", {a1, b.constant(tensor::from_vector<std::int32_t>({-1, 24}), "flatten/shape")}, {}, "flatten");
    auto mm = b.op("MatMul", {flat, b.constant(uniform({5, 24}, 5, 0.5f), "out/kernel")}, {{"transpose_b", true}}, "out/MatMul");
    auto logits = b.op("Add", {mm, b.constant(uniform({5}, 6, 0.1f), "out/bias")}, {}, "logits");
    b.op("Softmax", {logits}, {}, "probs");

    graft::embedded::embedded_options o;
    o.outputs = {"probs", "logits:0"};
    o.ns = "cnn";
    graft::embedded::embedded_code code = graft::embedded::generate_embedded(g, o);  // input shape from the Placeholder
    REQUIRE(code.inputs.size() == 1);
    CHECK(code.inputs[0].shape == std::vector<std::int64_t>{1, 12, 12, 3});
    REQUIRE(code.outputs.size() == 2);
    CHECK(code.outputs[0].param == "out_probs");
    CHECK(code.outputs[1].param == "out_logits");
    CHECK(code.arena_floats < code.naive_floats);  // buffers reused
    // Conv2D/MatMul weights with output channels padded to 4; batch norm folded to 2 x 12
    CHECK(code.weight_floats == 1 + 108 + 4 + 288 + 6 + 108 + 12 + 12 + 384 + 192 + 5);
    write_file(dir / "net.hpp", code.header);
    std::string drv =
        "#include \"net.hpp\"\n#include <cstdio>\n"
        "int main(int argc, char** argv) {\n"
        "    if (argc != 3) return 2;\n"
        "    std::FILE* f = std::fopen(argv[1], \"rb\");\n"
        "    std::FILE* g = std::fopen(argv[2], \"wb\");\n"
        "    if (!f || !g) return 3;\n"
        "    static float in[cnn::net::input_size];\n"
        "    float p[cnn::net::out_probs_size], l[cnn::net::out_logits_size];\n"
        "    while (std::fread(in, sizeof in, 1, f) == 1) {\n"
        "        cnn::net::forward(in, p, l);\n"
        "        std::fwrite(p, sizeof p, 1, g);\n"
        "        std::fwrite(l, sizeof l, 1, g);\n"
        "    }\n"
        "    std::fclose(f);\n"
        "    return std::fclose(g) == 0 ? 0 : 4;\n}\n";
    std::string exe = compile(dir, drv);

    const std::int64_t n = 6;
    tensor xin = uniform({n, 12, 12, 3}, 8, 2.f);
    write_floats(dir / "x.f32", xin);
    std::string out;
    REQUIRE(graft::test::run_command(exe + " " + (dir / "x.f32").string() + " " + (dir / "y.f32").string(), out) == 0);
    std::vector<float> got = read_floats(dir / "y.f32");
    REQUIRE(got.size() == static_cast<std::size_t>(n * 10));
    graft::exec::session s(g);
    auto want = s.run({{"x", xin}}, {"probs:0", "logits:0"});
    float diff = 0, spread = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t j = 0; j < 5; ++j) {
            diff = std::max(diff, std::fabs(got[static_cast<std::size_t>(i * 10 + j)] - want[0].data<float>()[i * 5 + j]));
            diff = std::max(diff, std::fabs(got[static_cast<std::size_t>(i * 10 + 5 + j)] - want[1].data<float>()[i * 5 + j]));
            spread = std::max(spread, std::fabs(want[1].data<float>()[i * 5 + j] - want[1].data<float>()[j]));
        }
    }
    CHECK(spread > 1e-3f);  // the samples differ
    CHECK(diff <= 1e-5f);
}

TEST_CASE("embedded: unsupported op, unknown non-batch dim, missing names are errors naming them; graft codegen of a .meta and a SavedModel") {
    using namespace embedded_t;
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.placeholder("x", dtype::float32, graft::shape{-1, 4});
    auto t = b.op("Transpose", {x, b.constant(tensor::from_vector<std::int32_t>({1, 0}), "perm")}, {}, "swap");
    b.op("Relu", {t}, {}, "y");
    b.op("Relu", {x}, {}, "ok");
    auto z = b.placeholder("z", dtype::float32, graft::shape{-1, -1});
    b.op("Tanh", {z}, {}, "zt");

    graft::embedded::embedded_options o;
    o.outputs = {"y"};
    auto e1 = graft::test::expect_error<graft::unimplemented_error>([&] { (void)graft::embedded::generate_embedded(g, o); });
    CHECK(std::string(e1.what()).find("'swap' (op Transpose)") != std::string::npos);
    CHECK(std::string(e1.what()).find("Conv2D") != std::string::npos);  // lists the supported ops
    o.outputs = {"zt"};
    auto e2 = graft::test::expect_error<graft::shape_error>([&] { (void)graft::embedded::generate_embedded(g, o); });
    CHECK(std::string(e2.what()).find("node 'z'") != std::string::npos);
    CHECK(std::string(e2.what()).find("dim 1") != std::string::npos);
    o.inputs = {graft::embedded::parse_embedded_input("z:-1,3")};  // given, it generates
    CHECK(graft::embedded::generate_embedded(g, o).outputs[0].shape == std::vector<std::int64_t>{1, 3});
    o.inputs = {};
    o.outputs = {"ok", "nope:0"};
    auto e3 = graft::test::expect_error<graft::not_found_error>([&] { (void)graft::embedded::generate_embedded(g, o); });
    CHECK(std::string(e3.what()).find("'nope:0'") != std::string::npos);
    CHECK(std::string(e3.what()).find("zt") != std::string::npos);  // candidates listed
    o.outputs = {"ok"};
    o.inputs = {graft::embedded::parse_embedded_input("w:-1,4")};
    CHECK_THROWS_AS((void)graft::embedded::generate_embedded(g, o), graft::not_found_error);
    o.inputs = {};
    o.ns = "not a namespace";
    CHECK_THROWS_AS((void)graft::embedded::generate_embedded(g, o), graft::invalid_argument_error);

#ifdef GRAFT_CLI
    auto meta = graft::test::fixture("mnist-softmax/train_model.ckpt.meta");
    GRAFT_REQUIRE_PATH(meta);
    auto dir = graft::test::scratch("typed_embedded_cli");
    std::string out;
    // the Placeholder's shape is unknown: the error says how to give it
    CHECK(graft::test::run_cli("codegen --embedded " + meta.string() + " --outputs Add -o " + (dir / "a.hpp").string(), out) == 1);
    CHECK(out.find("--inputs Placeholder:") != std::string::npos);
    REQUIRE(graft::test::run_cli("codegen --embedded " + meta.string() + " --inputs Placeholder:-1,784 --outputs Add --namespace mnist -o " +
                                     (dir / "mnist.hpp").string(),
                                 out) == 0);
    CHECK(out.find("9418 floats") != std::string::npos);
    CHECK(std::filesystem::file_size(dir / "mnist.hpp") > 7850 * 8);

    // a SavedModel (variables from its variables/variables), fed at x:0 (an Identity after
    // ParseExample, so its shape is given): y = 0.5 x + 2
    auto sm = graft::test::fixture("tf-serving/saved_model_half_plus_two_cpu/00000123");
    GRAFT_REQUIRE_PATH(sm);
    REQUIRE(graft::test::run_cli("codegen --embedded " + sm.string() + " --inputs x:-1,1 --outputs y --namespace hp2 -o " +
                                     (dir / "net.hpp").string(),
                                 out) == 0);
    CHECK(out.find("ops: Add, Mul") != std::string::npos);
    std::string exe = compile(dir, "#include \"net.hpp\"\n#include <cstdio>\nint main() {\n"
                                   "    const float xs[3] = {1.f, 2.f, 5.f};\n"
                                   "    for (float v : xs) { float in[1] = {v}, y[1]; hp2::net::forward(in, y); std::printf(\"%g \", y[0]); }\n}\n");
    REQUIRE(graft::test::run_command(exe, out) == 0);
    CHECK(out == "2.5 3 4.5 ");
#endif
}
