// 04_retrain_frozen — retrain a frozen graph: a small classifier is trained and frozen (weights
// become Consts, training ops dropped), the frozen GraphDef is unfrozen (weight Consts back to
// trainable variables with a Saver), fine-tuned on shifted data, and frozen again.
#include <graft/graft.hpp>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <random>

#include "graft/exec/session.hpp"
#include "graft/surgery/freeze.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/saver.hpp"

namespace {

using graft::dtype;
using graft::tensor;
namespace train = graft::train;
namespace surgery = graft::surgery;

/// Three Gaussian blobs in 2-D, shifted by (dx, dy): x [n,2], one-hot y [n,3].
void make_data(std::int64_t n, float dx, float dy, std::uint32_t seed, tensor& x, tensor& y) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> noise(0.f, 0.45f);
    const float cx[3] = {-1.f, 1.f, 0.f}, cy[3] = {-0.6f, -0.6f, 1.f};
    x = tensor(dtype::float32, {n, 2});
    y = tensor(dtype::float32, {n, 3});
    for (std::int64_t i = 0; i < n; ++i) {
        int c = int(i % 3);
        x.matrix<float>()(i, 0) = cx[c] + dx + noise(rng);
        x.matrix<float>()(i, 1) = cy[c] + dy + noise(rng);
        for (int j = 0; j < 3; ++j) y.matrix<float>()(i, j) = j == c ? 1.f : 0.f;
    }
}

struct trainer {
    std::string labels, loss, op;
};

/// Mean softmax cross-entropy of "logits" against a labels placeholder, GradientDescent(lr).
trainer add_training(graft::meta_graph& mg, float lr) {
    graft::graph_builder b(mg.graph);
    trainer t;
    t.labels = b.placeholder("labels", dtype::float32, graft::shape{-1, 3}).node;
    auto xent = b.op_n("SoftmaxCrossEntropyWithLogits", {{"logits", 0}, {t.labels, 0}}, {}, "xent")[0];
    auto loss = b.op("Mean", {xent, b.constant(tensor::from_vector<std::int32_t>({0}), "loss/axes")}, {}, "loss");
    t.loss = loss.str();
    t.op = train::gradient_descent(lr).minimize(mg, loss);
    return t;
}

double accuracy(const tensor& probs, const tensor& y) {
    std::int64_t n = probs.shape().dim(0), ok = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        int best = 0, want = 0;
        for (int j = 1; j < 3; ++j) {
            if (probs.matrix<float>()(i, j) > probs.matrix<float>()(i, best)) best = j;
            if (y.matrix<float>()(i, j) > y.matrix<float>()(i, want)) want = j;
        }
        ok += best == want;
    }
    return double(ok) / double(n);
}

double max_diff(const tensor& a, const tensor& b) {
    double m = 0;
    for (std::int64_t i = 0; i < a.num_elements(); ++i) m = std::max(m, double(std::abs(a.data<float>()[i] - b.data<float>()[i])));
    return m;
}

int count(const graft::graph& g, std::string_view op) {
    int k = 0;
    for (auto& n : g) k += n.op == op;
    return k;
}

}  // namespace

int main() {
    namespace fs = std::filesystem;
    auto dir = fs::temp_directory_path() / "graft_example_04";
    fs::remove_all(dir);
    fs::create_directories(dir);

    // 1. A "pre-trained" model: x -> dense(16, relu) -> logits(3) -> probs.
    graft::meta_graph mg;
    graft::graph_builder b(mg.graph);
    std::mt19937 rng(4);
    std::normal_distribution<float> init(0.f, 0.5f);
    auto rnd = [&](std::int64_t r, std::int64_t c) {
        tensor t(dtype::float32, {r, c});
        for (std::int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = init(rng);
        return t;
    };
    auto x = b.placeholder("x", dtype::float32, graft::shape{-1, 2});
    auto w1 = train::create_variable(mg, b, "dense/kernel", rnd(2, 16));
    auto b1 = train::create_variable(mg, b, "dense/bias", tensor(dtype::float32, {16}));
    auto w2 = train::create_variable(mg, b, "out/kernel", rnd(16, 3));
    auto b2 = train::create_variable(mg, b, "out/bias", tensor(dtype::float32, {3}));
    auto h = b.op("Relu", {b.op("BiasAdd", {b.op("MatMul", {x, w1.value}, {}, "dense/MatMul"), b1.value}, {}, "dense/BiasAdd")},
                  {}, "dense/Relu");
    b.op("Softmax", {b.op("BiasAdd", {b.op("MatMul", {h, w2.value}, {}, "out/MatMul"), b2.value}, {}, "logits")}, {}, "probs");
    trainer t = add_training(mg, 0.5f);
    std::string init_op = train::global_variables_initializer(mg);
    train::saver saver(mg);
    graft::exec::session s(mg.graph);
    s.run({}, {}, {init_op});
    tensor xs, ys, xs2, ys2;
    make_data(300, 0.f, 0.f, 1, xs, ys);
    make_data(300, 1.2f, 0.9f, 2, xs2, ys2);  // the same classes, moved
    for (int i = 0; i < 150; ++i) s.run({{"x", xs}, {t.labels, ys}}, {}, {t.op});
    auto ckpt = saver.save(s, (dir / "train" / "model.ckpt").string());
    std::cout << "[pre-trained] " << mg.graph.size() << " nodes, loss "
              << s.run({{"x", xs}, {t.labels, ys}}, {t.loss})[0].scalar<float>()() << ", accuracy "
              << accuracy(s.run({{"x", xs}}, {"probs:0"})[0], ys) << "; saved " << ckpt << "\n";

    // 2. Freeze from the checkpoint.
    graft::graph frozen = surgery::freeze(mg, ckpt, {"probs"});
    auto frozen_pb = (dir / "frozen.pb").string();
    graft::tf::write_graph(frozen, frozen_pb);
    std::cout << "[freeze] " << mg.graph.size() << " -> " << frozen.size() << " nodes (" << count(frozen, "Const")
              << " Const, " << count(frozen, "VariableV2") << " variables, optimizer and saver dropped); wrote "
              << frozen_pb << "\n";

    // 3. Unfreeze the GraphDef read back from disk.
    auto u = surgery::unfreeze(graft::tf::load_graph(frozen_pb));
    std::cout << "[unfreeze] weight Consts made trainable variables:";
    for (auto& v : u.variables) std::cout << " " << v << u.values.at(v).shape().str();
    std::cout << "\n";
    trainer t2 = add_training(u.mg, 0.2f);
    graft::exec::session s2(u.mg.graph);
    s2.run({}, {}, {u.init});
    tensor before_frozen = graft::exec::session(frozen).run({{"x", xs2}}, {"probs:0"})[0];
    tensor before = s2.run({{"x", xs2}}, {"probs:0"})[0];
    double d = max_diff(before, before_frozen);
    std::cout << "  outputs of frozen and unfrozen graphs: max |diff| = " << d << "\n";
    if (d > 1e-6) throw graft::error("example 04: unfreeze changed the outputs");
    surgery::save_unfrozen(u, (dir / "unfrozen" / "model").string());

    // 4. Fine-tune on the shifted data.
    auto loss2 = [&] { return s2.run({{"x", xs2}, {t2.labels, ys2}}, {t2.loss})[0].scalar<float>()(); };
    float l0 = loss2();
    double a0 = accuracy(before, ys2);
    std::cout << "[fine-tune on shifted data] before: loss " << l0 << ", accuracy " << a0 << "\n";
    for (int i = 1; i <= 150; ++i) {
        s2.run({{"x", xs2}, {t2.labels, ys2}}, {}, {t2.op});
        if (i % 50 == 0) std::cout << "  step " << i << "  loss " << loss2() << "\n";
    }
    float l1 = loss2();
    double a1 = accuracy(s2.run({{"x", xs2}}, {"probs:0"})[0], ys2);
    std::cout << "  after: loss " << l1 << ", accuracy " << a1 << "\n";
    for (auto& v : u.variables) {
        std::cout << "  " << v << " changed by up to " << max_diff(s2.variable_value(v), u.values.at(v)) << "\n";
    }
    if (!(l1 < l0)) throw graft::error("example 04: fine-tuning did not lower the loss");

    // 5. Re-freeze and run the result.
    graft::graph again = surgery::freeze(u.mg, s2, {"probs"});
    auto again_pb = (dir / "refrozen.pb").string();
    graft::tf::write_graph(again, again_pb);
    tensor p = graft::exec::session(graft::tf::load_graph(again_pb)).run({{"x", xs2}}, {"probs:0"})[0];
    std::cout << "[refreeze] " << u.mg.graph.size() << " -> " << again.size() << " nodes; " << again_pb
              << " on the shifted data: accuracy " << accuracy(p, ys2) << " (frozen original: " << a0 << ")\n";
    return 0;
}
