// 06_embedded_lenet — train a LeNet-size CNN with graft, freeze it, and generate a self-contained
// C++ header for a microcontroller-style build (graft::embedded::generate_embedded, the library side of
// `graft codegen --embedded`).
//
// 1. LeNet-5 on [N,28,28,1]: Conv2D 5x5x6 SAME + Relu, MaxPool 2, Conv2D 5x5x16 VALID + Relu,
//    MaxPool 2, dense 400 -> 120 -> 84 -> 10, Softmax. Trained briefly with Adam on the first 8000
//    images of the MNIST test set when ../shared has it (else on generated digit-like images),
//    within a ~15 s budget.
// 2. Frozen (variables -> Consts) and written as embedded_lenet/lenet.pb (runs in TF, OpenCV DNN).
// 3. embedded_lenet/lenet_embedded.hpp: weights as constant arrays, plain loops, one static arena.
//    Beside it the held-out images as raw floats, their labels and graft's own score on them, so
//    examples/embedded/lenet_main.cpp (no graft, -fno-exceptions -fno-rtti -Os) can check itself:
//        g++ -std=c++17 -Os -fno-exceptions -fno-rtti -s -Iembedded_lenet lenet_main.cpp -o lenet
//        ./lenet embedded_lenet
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>

#include "graft/core/io.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/formats/idx.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "graft/surgery/freeze.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/train/loop.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/variables.hpp"
#include "graft/embedded/exporter.hpp"

namespace {

namespace fs = std::filesystem;
using graft::dtype;
using graft::tensor;
namespace train = graft::train;

tensor glorot(graft::shape s, std::int64_t fan_in, std::int64_t fan_out, unsigned seed) {
    std::mt19937 rng(seed);
    float a = std::sqrt(6.f / static_cast<float>(fan_in + fan_out));
    std::uniform_real_distribution<float> u(-a, a);
    tensor t(dtype::float32, s);
    for (std::int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = u(rng);
    return t;
}

graft::attr_value list4(std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
    return graft::attr_value::list_of(std::vector<std::int64_t>{a, b, c, d});
}

struct lenet {
    graft::meta_graph mg;
    std::string train_op, init, loss;

    lenet() {
        graft::graph_builder b(mg.graph);
        auto var = [&](const std::string& name, graft::shape s, std::int64_t fi, std::int64_t fo, unsigned seed) {
            return train::create_variable(mg, b, name, glorot(s, fi, fo, seed)).value;
        };
        auto zeros = [&](const std::string& name, std::int64_t n) {
            return train::create_variable(mg, b, name, tensor(dtype::float32, {n})).value;
        };
        auto x = b.placeholder("images", dtype::float32, graft::shape{-1, 28, 28, 1});
        auto y = b.placeholder("labels", dtype::int32, graft::shape{-1});
        auto conv = [&](graft::endpoint in, const std::string& s, std::int64_t k, std::int64_t ci, std::int64_t co,
                        const char* pad, unsigned seed) {
            auto c = b.op("Conv2D", {in, var(s + "/kernel", {k, k, ci, co}, k * k * ci, k * k * co, seed)},
                          {{"strides", list4(1, 1, 1, 1)}, {"padding", std::string(pad)}}, s + "/Conv2D");
            auto r = b.op("Relu", {b.op("BiasAdd", {c, zeros(s + "/bias", co)}, {}, s + "/BiasAdd")}, {}, s + "/Relu");
            return b.op("MaxPool", {r}, {{"ksize", list4(1, 2, 2, 1)}, {"strides", list4(1, 2, 2, 1)}, {"padding", std::string("VALID")}},
                        s + "/pool");
        };
        auto dense = [&](graft::endpoint in, const std::string& s, std::int64_t i, std::int64_t o, bool relu, unsigned seed) {
            auto z = b.op("BiasAdd", {b.op("MatMul", {in, var(s + "/kernel", {i, o}, i, o, seed)}, {}, s + "/MatMul"), zeros(s + "/bias", o)},
                          {}, s + "/BiasAdd");
            return relu ? b.op("Relu", {z}, {}, s + "/Relu") : z;
        };
        auto p1 = conv(x, "conv1", 5, 1, 6, "SAME", 1);      // [14,14,6]
        auto p2 = conv(p1, "conv2", 5, 6, 16, "VALID", 2);   // [5,5,16]
        auto flat = b.op("Reshape", {p2, b.constant(tensor::from_vector<std::int32_t>({-1, 400}), "flatten/shape")}, {}, "flatten");
        auto logits = dense(dense(dense(flat, "fc1", 400, 120, true, 3), "fc2", 120, 84, true, 4), "logits", 84, 10, false, 5);
        b.op("Softmax", {logits}, {}, "probs");
        auto xent = b.op_n("SparseSoftmaxCrossEntropyWithLogits", {logits, y}, {}, "xent");
        loss = b.op("Mean", {xent[0], b.constant(tensor::from_vector<std::int32_t>({0}), "loss/axes")}, {}, "loss").str();
        train_op = train::adam(0.002).minimize(mg, graft::endpoint::parse(loss));
        init = train::global_variables_initializer(mg);
    }
};

/// MNIST test images [N,28,28,1] in [0,1] and int32 labels, or generated strokes when absent.
std::pair<tensor, tensor> load_data(bool& real) {
    fs::path shared = fs::path(GRAFT_SHARED_DIR) / "datasets" / "mnist";
    if (const char* e = std::getenv("GRAFT_SHARED_DIR")) shared = fs::path(e) / "datasets" / "mnist";
    fs::path im = shared / "t10k-images-idx3-ubyte.gz", lb = shared / "t10k-labels-idx1-ubyte.gz";
    real = fs::exists(im) && fs::exists(lb);
    if (real) {
        tensor x = graft::cast(graft::data::read_idx(im.string()), dtype::float32).reshaped({10000, 28, 28, 1});
        for (std::int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] /= 255.f;
        return {x, graft::cast(graft::data::read_idx(lb.string()), dtype::int32)};
    }
    // 10 classes of thick strokes at class-dependent angles, with noise
    const std::int64_t n = 600;
    tensor x(dtype::float32, {n, 28, 28, 1}), y(dtype::int32, {n});
    std::mt19937 rng(42);
    std::normal_distribution<float> noise(0.f, 0.15f);
    for (std::int64_t i = 0; i < n; ++i) {
        int c = static_cast<int>(i % 10);
        y.data<std::int32_t>()[i] = c;
        float ang = 3.14159f * static_cast<float>(c) / 10.f, ca = std::cos(ang), sa = std::sin(ang);
        for (int r = 0; r < 28; ++r) {
            for (int col = 0; col < 28; ++col) {
                float u = static_cast<float>(r) - 13.5f, v = static_cast<float>(col) - 13.5f;
                float d = std::fabs(u * sa - v * ca), along = std::fabs(u * ca + v * sa);
                float ink = (d < 2.5f && along < 10.f + static_cast<float>(c % 3)) ? 1.f : 0.f;
                x.data<float>()[(i * 28 + r) * 28 + col] = std::clamp(ink + noise(rng), 0.f, 1.f);
            }
        }
    }
    return {x, y};
}

std::int64_t correct(const tensor& probs, const tensor& labels) {
    std::int64_t ok = 0;
    for (std::int64_t i = 0; i < probs.dim(0); ++i) {
        std::int64_t best = 0;
        for (std::int64_t j = 1; j < 10; ++j) best = probs.data<float>()[i * 10 + j] > probs.data<float>()[i * 10 + best] ? j : best;
        ok += best == labels.data<std::int32_t>()[i];
    }
    return ok;
}

}  // namespace

int main() {
    bool real = false;
    auto [images, labels] = load_data(real);
    const std::int64_t n_train = real ? 8000 : 500, n_eval = images.dim(0) - n_train;
    tensor xt = images.slice(0, n_train), yt = labels.slice(0, n_train);
    tensor xe = images.slice(n_train, n_eval).clone(), ye = labels.slice(n_train, n_eval).clone();
    std::cout << "data: " << (real ? "MNIST t10k (../shared)" : "generated strokes (../shared absent)") << ", train " << n_train
              << ", held out " << n_eval << "\n";

    // 1. train within a time budget
    lenet net;
    graft::exec::session s(net.mg.graph);
    s.run({}, {}, {net.init});
    train::batches data({xt, yt}, {.batch_size = 50, .shuffle = true, .seed = 7, .epochs = 3});
    auto t0 = std::chrono::steady_clock::now();
    int steps = 0;
    float loss = 0;
    for (const auto& b : data) {
        loss = s.run({{"images", b[0]}, {"labels", b[1]}}, {net.loss}, {net.train_op})[0].scalar<float>()();
        ++steps;
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > 15.0) break;
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "trained " << steps << " Adam steps of 50 images in " << secs << " s, last loss " << loss << "\n";

    // 2. freeze, write the .pb, score graft's runtime on the held-out images
    fs::path dir = "embedded_lenet";
    fs::create_directories(dir);
    graft::graph frozen = graft::surgery::freeze(net.mg, s, {"probs"});
    graft::tf::write_graph(frozen, (dir / "lenet.pb").string());
    graft::exec::session fs_(frozen);
    std::int64_t ok = correct(fs_.run({{"images", xe}}, {"probs:0"})[0], ye);
    std::cout << "graft runtime on the held-out images: " << ok << "/" << n_eval << " = " << static_cast<double>(ok) / n_eval << "\n";

    // 3. the embedded header, and the held-out set for examples/embedded/lenet_main.cpp
    graft::embedded::embedded_options o;
    o.outputs = {"probs"};
    o.ns = "lenet";
    o.source = "lenet.pb";
    auto code = graft::embedded::generate_embedded(frozen, o);
    graft::write_file_atomic((dir / "lenet_embedded.hpp").string(), code.header);
    graft::write_file_atomic((dir / "eval_images.f32").string(),
                             std::string_view(static_cast<const char*>(xe.raw_data()), xe.nbytes()));
    std::string lab;
    for (std::int64_t i = 0; i < n_eval; ++i) lab += static_cast<char>(ye.data<std::int32_t>()[i]);
    graft::write_file_atomic((dir / "eval_labels.u8").string(), lab);
    graft::write_file_atomic((dir / "graft_correct.txt").string(), std::to_string(ok) + " " + std::to_string(n_eval) + "\n");
    std::cout << "wrote " << (dir / "lenet_embedded.hpp").string() << " (" << code.header.size() / 1024 << " KiB of source): lenet::net::forward(const float (&)["
              << code.inputs[0].size << "], float (&)[" << code.outputs[0].size << "])\n"
              << "  ops: ";
    for (std::size_t i = 0; i < code.ops.size(); ++i) std::cout << (i ? ", " : "") << code.ops[i];
    std::cout << "\n  weights " << code.weight_floats << " floats (" << code.weight_floats * 4 / 1024 << " KiB), arena "
              << code.arena_floats << " floats (" << code.arena_floats * 4 / 1024 << " KiB; " << code.naive_floats
              << " without buffer reuse), " << code.steps << " kernel calls\n"
              << "build it without graft: g++ -std=c++17 -Os -fno-exceptions -fno-rtti -s -I" << dir.string()
              << " examples/embedded/lenet_main.cpp -o lenet && ./lenet " << dir.string() << "\n";
    return 0;
}
