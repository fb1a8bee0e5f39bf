// Whole models on the GPU against the CPU: TF's mnist-softmax checkpoint on the MNIST test set
// (0.7357), and 20 training steps of an MLP 784-512-512-10 (Adam) and of LeNet-5 (momentum) from
// the same start, loss by loss. Without a GPU the GPU-placed runs fall back to the CPU.
#include <doctest/doctest.h>

#include <cmath>

#include "graft/exec/model.hpp"
#include "graft/surgery/sync.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/variables.hpp"
#include "op_case.hpp"
#include "support/fixtures.hpp"
#include "support/mnist.hpp"

using graft::dtype;
using graft::endpoint;
using graft::tensor;

TEST_CASE("gpu models: mnist-softmax/train_model.ckpt on the GPU classifies MNIST like TensorFlow (0.7357)") {
    graft::test::mnist_set mnist;
    auto meta = graft::test::fixture("mnist-softmax/train_model.ckpt.meta");
    if (!graft::test::present_or_skip(meta) || !graft::test::mnist_test_set_or_skip(mnist)) return;
    graft::test_cuda::note_skip_once();
    auto r = graft::exec::load_model(meta.string()).runner();
    r.sess().state().options.default_device = "/device:GPU:0";
    auto rep = r.restore(graft::test::fixture("mnist-softmax/train_model.ckpt").string());
    CHECK(rep.restored.size() == 2);
    auto logits = r.run({{"Placeholder:0", mnist.features}}, {"Add:0"})[0];
    REQUIRE(logits.shape() == graft::shape{10000, 10});
    CHECK(logits.on_host());
    CHECK(graft::test::argmax_hits(logits, mnist.labels) == 7357);
    if (graft::test_cuda::gpu_present()) {
        const auto& p = r.sess().prepare({"Placeholder:0"}, {"Add:0"}, {});
        for (const auto& st : p.steps) {
            if (st.n->op == "MatMul" || st.n->op == "Add") CHECK_MESSAGE(!st.dev.is_cpu(), st.n->name << " ran on the CPU");
        }
    }
}

namespace {

/// A float32 tensor of `s` scaled to +-1/sqrt(fan_in) (deterministic).
tensor init_weights(const graft::shape& s, std::int64_t fan_in, std::uint32_t seed) {
    float a = 1.f / std::sqrt(static_cast<float>(fan_in));
    return graft::test_cuda::ramp(s, -a, a, seed);
}

struct model {
    graft::meta_graph mg;
    endpoint logits, loss;
    std::string train, init;
};

endpoint dense(graft::graph_builder& b, graft::meta_graph& mg, const endpoint& x, std::int64_t in, std::int64_t out,
               const std::string& name, bool relu, std::uint32_t seed) {
    auto w = graft::train::create_variable(mg, b, name + "/kernel", init_weights({in, out}, in, seed));
    auto bias = graft::train::create_variable(mg, b, name + "/bias", tensor(dtype::float32, {out}));
    auto y = b.op("BiasAdd", {b.op("MatMul", {x, w.value}), bias.value});
    return relu ? b.op("Relu", {y}) : y;
}

endpoint sparse_xent_loss(graft::graph_builder& b, const endpoint& logits, const endpoint& labels) {
    auto xent = b.op_n("SparseSoftmaxCrossEntropyWithLogits", {logits, labels});
    return b.op("Mean", {xent[0], b.constant(tensor::from_vector<std::int32_t>({0}))}, {}, "loss");
}

model make_mlp(std::int64_t batch) {
    model m;
    graft::graph_builder b(m.mg.graph);
    auto x = b.placeholder("x", dtype::float32, graft::shape{batch, 784});
    auto y = b.placeholder("y", dtype::int64, graft::shape{batch});
    auto h1 = dense(b, m.mg, x, 784, 512, "dense", true, 11);
    auto h2 = dense(b, m.mg, h1, 512, 512, "dense_1", true, 12);
    m.logits = dense(b, m.mg, h2, 512, 10, "dense_2", false, 13);
    m.loss = sparse_xent_loss(b, m.logits, y);
    graft::train::adam opt(1e-3);
    m.train = opt.minimize(m.mg, m.loss);
    m.init = graft::train::global_variables_initializer(m.mg);
    return m;
}

endpoint conv(graft::graph_builder& b, graft::meta_graph& mg, const endpoint& x, std::int64_t k, std::int64_t cin,
              std::int64_t cout, const char* padding, const std::string& name, std::uint32_t seed) {
    auto w = graft::train::create_variable(mg, b, name + "/kernel", init_weights({k, k, cin, cout}, k * k * cin, seed));
    auto bias = graft::train::create_variable(mg, b, name + "/bias", tensor(dtype::float32, {cout}));
    graft::attr_list a{{"strides", graft::attr_value::list_of(std::vector<std::int64_t>{1, 1, 1, 1})}, {"padding", padding}};
    auto y = b.op("BiasAdd", {b.op("Conv2D", {x, w.value}, a), bias.value});
    return b.op("Relu", {y});
}

endpoint max_pool(graft::graph_builder& b, const endpoint& x) {
    graft::attr_list a{{"ksize", graft::attr_value::list_of(std::vector<std::int64_t>{1, 2, 2, 1})},
                       {"strides", graft::attr_value::list_of(std::vector<std::int64_t>{1, 2, 2, 1})},
                       {"padding", "VALID"}};
    return b.op("MaxPool", {x}, a);
}

model make_lenet(std::int64_t batch) {
    model m;
    graft::graph_builder b(m.mg.graph);
    auto x = b.placeholder("x", dtype::float32, graft::shape{batch, 28, 28, 1});
    auto y = b.placeholder("y", dtype::int64, graft::shape{batch});
    auto c1 = max_pool(b, conv(b, m.mg, x, 5, 1, 6, "SAME", "conv1", 21));       // 14x14x6
    auto c2 = max_pool(b, conv(b, m.mg, c1, 5, 6, 16, "VALID", "conv2", 22));    // 5x5x16
    auto flat = b.op("Reshape", {c2, b.constant(tensor::from_vector<std::int32_t>({-1, 400}))});
    auto f1 = dense(b, m.mg, flat, 400, 120, "fc1", true, 23);
    auto f2 = dense(b, m.mg, f1, 120, 84, "fc2", true, 24);
    auto logits = dense(b, m.mg, f2, 84, 10, "fc3", false, 25);
    m.loss = sparse_xent_loss(b, logits, y);
    graft::train::momentum opt(0.05, 0.9);
    m.train = opt.minimize(m.mg, m.loss);
    m.init = graft::train::global_variables_initializer(m.mg);
    return m;
}

/// The loss before each of `steps` training steps on batches of `x`/`y` (cycled), on `device`.
std::vector<float> losses(const model& m, const std::string& device, const tensor& x, const tensor& y, int steps) {
    graft::exec::session_options o;
    o.default_device = device;
    graft::exec::session s(m.mg.graph, o);
    s.run({}, {}, {m.init});
    std::vector<float> out;
    for (int i = 0; i < steps; ++i) {
        auto r = s.run({{"x:0", x}, {"y:0", y}}, {m.loss.str()}, {m.train});
        out.push_back(r[0].data<float>()[0]);
    }
    return out;
}

/// `n` MNIST rows when the data set is there, else a fixed synthetic batch (labels 0..9 cycled).
void batch_of(std::int64_t n, const graft::shape& image_shape, tensor& x, tensor& y) {
    graft::test::mnist_set mnist;
    graft::shape xs = image_shape;
    if (graft::test::mnist_test_set_or_skip(mnist)) {
        x = mnist.features.slice(0, n).clone().reshaped(xs);
        y = mnist.labels.slice(0, n).clone();
        return;
    }
    x = graft::test_cuda::ramp(xs, 0.f, 1.f, 5);
    y = tensor(dtype::int64, {n});
    for (std::int64_t i = 0; i < n; ++i) y.data<std::int64_t>()[i] = i % 10;
}

void check_same_losses(const std::vector<float>& cpu, const std::vector<float>& gpu) {
    REQUIRE(cpu.size() == gpu.size());
    for (std::size_t i = 0; i < cpu.size(); ++i) {
        INFO("step " << i << ": CPU " << cpu[i] << ", GPU " << gpu[i]);
        CHECK(std::isfinite(cpu[i]));
        CHECK(std::fabs(cpu[i] - gpu[i]) <= 1e-4 * std::max(1.f, std::fabs(cpu[i])));
    }
    // It trains: the loss falls over the 20 steps.
    CHECK(cpu.back() < cpu.front());
}

}  // namespace

TEST_CASE("gpu models: MLP 784-512-512-10 with Adam, 20 steps: the GPU's losses are the CPU's") {
    graft::test_cuda::note_skip_once();
    const std::int64_t n = 64;
    tensor x, y;
    batch_of(n, graft::shape{n, 784}, x, y);
    auto m = make_mlp(n);
    check_same_losses(losses(m, "", x, y, 20), losses(m, "/device:GPU:0", x, y, 20));
}

TEST_CASE("gpu models: LeNet-5 with momentum, 20 steps: the GPU's losses are the CPU's") {
    graft::test_cuda::note_skip_once();
    const std::int64_t n = 32;
    tensor x, y;
    batch_of(n, graft::shape{n, 28, 28, 1}, x, y);
    auto m = make_lenet(n);
    check_same_losses(losses(m, "", x, y, 20), losses(m, "/device:GPU:0", x, y, 20));
}

TEST_CASE("gpu models: duplicate and sync across devices: train on the GPU, serve on the CPU, and the reverse") {
    graft::test_cuda::note_skip_once();
    const std::int64_t n = 16;
    tensor x, y;
    batch_of(n, graft::shape{n, 784}, x, y);
    auto m = make_mlp(n);
    for (auto [train_dev_b, serve_dev_b] : {std::pair<std::string, std::string>{"/device:GPU:0", "/device:CPU:0"},
                                        std::pair<std::string, std::string>{"/device:CPU:0", "/device:GPU:0"}}) {
        auto& train_dev = train_dev_b; auto& serve_dev = serve_dev_b;  // clang 14: lambdas cannot capture structured bindings
        INFO("train on " << train_dev << ", serve on " << serve_dev);
        graft::exec::session_options o;
        o.default_device = train_dev;
        graft::exec::session trainer(m.mg.graph, o);
        trainer.run({}, {}, {m.init});
        graft::surgery::replica serving(graft::surgery::inference_copy(m.mg.graph, {m.logits.node}, serve_dev));
        for (int round = 0; round < 3; ++round) {
            for (int i = 0; i < 3; ++i) trainer.run({{"x:0", x}, {"y:0", y}}, {}, {m.train});
            auto rep = graft::surgery::sync(trainer, serving);
            CHECK(rep.variables == 6);
            auto want = trainer.run({{"x:0", x}}, {m.logits.str()})[0];
            auto got = serving.run({{"x:0", x}}, {m.logits.str()})[0];
            CHECK(got.on_host());
            CHECK(graft::test_cuda::relative_error(want, got, 1e-6, 1e-5) <= 1e-5);
        }
        // The replica's graph asks for the serving device on every node it kept.
        for (const auto& node : serving.session().g()) CHECK(node.device == serve_dev);
    }
}
