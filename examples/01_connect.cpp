// 01_connect: connect two pre-trained models. An "encoder" MLP (4 features -> 3-d code) and a
// "classifier" (code -> 2 logits) are trained separately with graft and saved as TF files
// (.meta + checkpoint); then graft::surgery::connect imports both under their own scopes, feeds
// the classifier's input from the encoder's output, restores each part from its own checkpoint,
// checks the combined output against running the two models one after the other, fine-tunes the
// whole (both parts move), fine-tunes with the encoder frozen (only the classifier moves), and
// saves one combined checkpoint + MetaGraph.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/surgery/connect.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/saver.hpp"

using graft::dtype;
using graft::tensor;
namespace train = graft::train;
namespace surgery = graft::surgery;

namespace {

/// Points in [-1,1]^4, label 1 when x0*x1 + x2 - x3 > 0.
struct data {
    tensor x, onehot, code;
};
data make_data(int n, unsigned seed) {
    data d{tensor(dtype::float32, {n, 4}), tensor(dtype::float32, {n, 2}), tensor(dtype::float32, {n, 3})};
    unsigned s = seed;
    auto rnd = [&] { s = s * 1664525u + 1013904223u; return static_cast<float>(s >> 8) / 8388608.0f - 1.0f; };
    for (int i = 0; i < n; ++i) {
        float* x = d.x.data<float>() + i * 4;
        for (int k = 0; k < 4; ++k) x[k] = rnd();
        int y = x[0] * x[1] + x[2] - x[3] > 0;
        d.onehot.data<float>()[i * 2] = y ? 0.f : 1.f;
        d.onehot.data<float>()[i * 2 + 1] = y ? 1.f : 0.f;
        // the encoder's target: a code a classifier can read the label from
        d.code.data<float>()[i * 3] = x[0] * x[1];
        d.code.data<float>()[i * 3 + 1] = x[2] - x[3];
        d.code.data<float>()[i * 3 + 2] = x[0] + x[1];
    }
    return d;
}

tensor init_values(graft::shape s, unsigned seed, float a) {
    tensor t(dtype::float32, s);
    unsigned x = seed * 747796405u + 1u;
    for (std::int64_t i = 0; i < t.num_elements(); ++i) {
        x = x * 1664525u + 1013904223u;
        t.data<float>()[i] = a * (static_cast<float>(x >> 8) / 8388608.0f - 1.0f);
    }
    return t;
}

/// in -> tanh(dense) -> dense `out`; loss "loss" against "target" (mse or softmax cross-entropy);
/// trained with Adam, saved to `prefix` (+ .meta).
void train_and_save(const std::string& prefix, const std::string& in, const std::string& out, int ni, int nh, int no,
                    bool classify, const tensor& x, const tensor& target, unsigned seed) {
    graft::meta_graph mg;
    graft::graph_builder b(mg.graph);
    auto xin = b.placeholder(in, dtype::float32, graft::shape{-1, ni});
    auto t = b.placeholder("target", dtype::float32, graft::shape{-1, no});
    auto d1 = b.at_scope("dense"), d2 = b.at_scope("dense_1");
    auto w1 = train::create_variable(mg, d1, "kernel", init_values({ni, nh}, seed, 0.8f));
    auto b1 = train::create_variable(mg, d1, "bias", init_values({nh}, seed + 1, 0.1f));
    auto w2 = train::create_variable(mg, d2, "kernel", init_values({nh, no}, seed + 2, 0.8f));
    auto b2 = train::create_variable(mg, d2, "bias", init_values({no}, seed + 3, 0.1f));
    auto h = b.op("Tanh", {b.op("BiasAdd", {b.op("MatMul", {xin, w1.value}), b1.value})});
    auto o = b.op("BiasAdd", {b.op("MatMul", {h, w2.value}), b2.value}, {}, out);
    auto axes = b.constant(tensor::from_vector<std::int32_t>({0, 1}));
    graft::endpoint loss;
    if (classify) {
        auto xent = b.op_n("SoftmaxCrossEntropyWithLogits", {o, t});
        loss = b.op("Mean", {xent[0], b.constant(tensor::from_vector<std::int32_t>({0}))}, {}, "loss");
    } else {
        loss = b.op("Mean", {b.op("Square", {b.op("Sub", {o, t})}), axes}, {}, "loss");
    }
    train::adam opt(0.05);
    std::string step = opt.minimize(mg, loss);
    std::string init = train::global_variables_initializer(mg);
    train::saver sv(mg);
    graft::exec::session s(mg.graph);
    s.run({}, {}, {init});
    float first = 0, last = 0;
    for (int i = 0; i < 200; ++i) {
        auto l = s.run({{in + ":0", x}, {"target:0", target}}, {"loss:0"}, {step})[0].data<float>()[0];
        if (i == 0) first = l;
        last = l;
    }
    std::printf("  trained %-10s loss %.4f -> %.4f, saved %s\n", std::filesystem::path(prefix).filename().c_str(), first, last,
                sv.save(s, prefix).c_str());
}

double accuracy(const tensor& logits, const tensor& onehot) {
    int n = static_cast<int>(logits.dim(0)), ok = 0;
    for (int i = 0; i < n; ++i) ok += (logits.data<float>()[i * 2 + 1] > logits.data<float>()[i * 2]) == (onehot.data<float>()[i * 2 + 1] > 0.5f);
    return static_cast<double>(ok) / n;
}

tensor run_alone(const std::string& prefix, const std::string& in, const tensor& x, const std::string& out) {
    auto mg = graft::tf::load_meta_graph(prefix + ".meta");
    graft::exec::session s(mg.graph);
    surgery::restore_scoped(s, mg, "", prefix, {});
    return s.run({{in, x}}, {out})[0];
}

/// Fine-tunes `c` on (x, y) with `vl` (all trainable variables when empty) and prints the loss
/// and which of the parts' variables changed.
void fine_tune(surgery::connected c, const std::optional<train::var_list>& vl, const data& d, const char* title) {
    std::printf("\n%s\n", title);
    train::gradient_descent opt(0.002);
    std::string op = vl ? opt.minimize(c.mg, {"B/loss", 0}, *vl) : opt.minimize(c.mg, {"B/loss", 0});
    graft::exec::session s(c.mg.graph), before(c.mg.graph);
    surgery::restore_parts(s, c);
    surgery::restore_parts(before, c);
    graft::exec::session::feed_list feeds{{"A/x:0", d.x}, {"B/target:0", d.onehot}};
    for (int i = 0; i <= 20; ++i) {
        auto l = s.run(feeds, {"B/loss:0"}, i < 20 ? std::vector<std::string>{op} : std::vector<std::string>{})[0];
        if (i % 5 == 0) std::printf("  step %2d  loss %.4f\n", i, l.data<float>()[0]);
    }
    std::printf("  accuracy %.3f\n  changed:", accuracy(s.run({{"A/x:0", d.x}}, {"B/logits:0"})[0], d.onehot));
    int unchanged = 0;
    for (auto& p : c.parts) {
        for (auto& v : p.imported.trainable_variables) {
            if (graft::equal(s.variable_value(v), before.variable_value(v))) ++unchanged;
            else std::printf(" %s", v.c_str());
        }
    }
    std::printf("\n  unchanged: %d variables\n", unchanged);
}

}  // namespace

int main() {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / "graft_example_01_connect";
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::string ca = (dir / "encoder.ckpt").string(), cb = (dir / "classifier.ckpt").string();

    std::printf("1. two pre-trained models\n");
    data train_d = make_data(256, 1), test_d = make_data(128, 2);
    train_and_save(ca, "x", "g1_output", 4, 16, 3, false, train_d.x, train_d.code, 10);
    tensor codes = run_alone(ca, "x:0", train_d.x, "g1_output:0");
    train_and_save(cb, "g2_input", "logits", 3, 8, 2, true, codes, train_d.onehot, 20);

    std::printf("\n2. connect A=encoder B=classifier with B/g2_input:0 <- A/g1_output:0\n");
    auto c = surgery::connect({surgery::load_part("A", ca + ".meta", ca), surgery::load_part("B", cb + ".meta", cb)},
                              {{"B/g2_input:0", "A/g1_output:0"}});
    for (auto& p : c.parts) {
        std::printf("  %s: %zu nodes imported, %zu variables, removed inputs:", p.label.c_str(), p.imported.imported_nodes,
                    p.imported.variables.size());
        for (auto& r : p.imported.removed) std::printf(" %s", r.c_str());
        std::printf("\n");
    }
    graft::exec::session s(c.mg.graph);
    for (auto& rep : surgery::restore_parts(s, c)) std::printf("  restored %zu variables from %s\n", rep.restored.size(), rep.prefix.c_str());
    tensor combined = s.run({{"A/x:0", test_d.x}}, {"B/logits:0"})[0];
    tensor separate = run_alone(cb, "g2_input:0", run_alone(ca, "x:0", test_d.x, "g1_output:0"), "logits:0");
    double diff = 0;
    for (std::int64_t i = 0; i < combined.num_elements(); ++i)
        diff = std::max(diff, std::fabs(double(combined.data<float>()[i]) - separate.data<float>()[i]));
    std::printf("  combined vs one after the other: max |diff| = %.3g (%s)\n", diff, diff <= 1e-6 ? "outputs match" : "MISMATCH");
    std::printf("  test accuracy %.3f\n", accuracy(combined, test_d.onehot));

    fine_tune(c, std::nullopt, train_d, "3. joint fine-tuning (gradients from B's loss flow into A)");
    fine_tune(c, c.trainable("B"), train_d, "4. fine-tuning with A frozen (var_list = B's trainable variables)");

    std::printf("\n5. one combined checkpoint + MetaGraph\n");
    std::string p = surgery::save_combined(s, c, (dir / "combined").string());
    std::printf("  %s.meta, keys:", p.c_str());
    for (auto& k : graft::tf::checkpoint_reader(p).keys()) {
        if (k.find("Adam") == std::string::npos && k.find("power") == std::string::npos) std::printf(" %s", k.c_str());
    }
    std::printf("\n");
    return diff <= 1e-6 ? 0 : 1;
}
