// 07_typed_connect: two models trained with graft and saved as TF files (.meta + checkpoint) are
// declared as C++ types, connected (with a clone of the classifier as a second head) by type
// composition, bound to their files with graft::load; the clone is fine-tuned on a second task with
// train_step (only its own variables move) and the whole is saved. The
// compiler checks the wiring (names, dtypes, static shapes); load checks the declaration against
// the files once.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/saver.hpp"
#include "graft/typed/bind.hpp"

using graft::dtype;
using graft::tensor;
namespace train = graft::train;
using namespace graft::typed;

namespace {

/// Points in [-1,1]^4, label 1 when x0*x1 + x2 - x3 > 0; the encoder's target code.
struct data {
    tensor x, onehot, code, onehot2;  ///< onehot2: a second task, label 1 when x0 + x1 > 0
};
data make_data(int n, unsigned seed) {
    data d{tensor(dtype::float32, {n, 4}), tensor(dtype::float32, {n, 2}), tensor(dtype::float32, {n, 3}),
           tensor(dtype::float32, {n, 2})};
    unsigned s = seed;
    auto rnd = [&] { s = s * 1664525u + 1013904223u; return static_cast<float>(s >> 8) / 8388608.0f - 1.0f; };
    for (int i = 0; i < n; ++i) {
        float* x = d.x.data<float>() + i * 4;
        for (int k = 0; k < 4; ++k) x[k] = rnd();
        int y = x[0] * x[1] + x[2] - x[3] > 0;
        d.onehot.data<float>()[i * 2 + y] = 1.f;
        d.onehot2.data<float>()[i * 2 + (x[0] + x[1] > 0)] = 1.f;
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

/// in -> tanh(dense) -> dense `out`, trained with Adam on (x, target), saved to `prefix`.
void train_and_save(const std::string& prefix, const std::string& in, const std::string& out, int ni, int nh, int no, bool classify,
                    const tensor& x, const tensor& target, unsigned seed) {
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
    graft::endpoint loss;
    if (classify) {
        auto xent = b.op_n("SoftmaxCrossEntropyWithLogits", {o, t});
        loss = b.op("Mean", {xent[0], b.constant(tensor::from_vector<std::int32_t>({0}))}, {}, "loss");
    } else {
        loss = b.op("Mean", {b.op("Square", {b.op("Sub", {o, t})}), b.constant(tensor::from_vector<std::int32_t>({0, 1}))}, {}, "loss");
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
    std::printf("  trained %-16s loss %.4f -> %.4f\n", std::filesystem::path(prefix).filename().c_str(), first, last);
    sv.save(s, prefix);
}

template <class T>
double accuracy(const T& logits, const tensor& onehot) {
    int n = static_cast<int>(logits.dim(0)), ok = 0;
    for (int i = 0; i < n; ++i) ok += (logits(i, 1) > logits(i, 0)) == (onehot.data<float>()[i * 2 + 1] > 0.5f);
    return static_cast<double>(ok) / n;
}

// The two models' interfaces, as in their files (Adam's slots are variables too, but only what the
// program uses needs declaring).
template <std::int64_t I, std::int64_t H, std::int64_t O>
using mlp_variables = variables<variable<"dense/kernel", float, shape<I, H>>, variable<"dense/bias", float, shape<H>>,
                                variable<"dense_1/kernel", float, shape<H, O>>, variable<"dense_1/bias", float, shape<O>>>;
using Encoder = subgraph<"enc", inputs<port<"x", float, shape<-1, 4>>>, outputs<port<"code", float, shape<-1, 3>, "g1_output">>,
                         mlp_variables<4, 16, 3>>;
using Classifier = subgraph<"cls", inputs<port<"code", float, shape<-1, 3>, "g2_input">>, outputs<port<"logits", float, shape<-1, 2>>>,
                            mlp_variables<3, 8, 2>>;
// encoder -> classifier, and a second head: a clone of the classifier on the same code (spelled
// graft::typed::clone here: glibc's clone() is in the global namespace too)
using Net = connect<Encoder, Classifier, wire<"enc/code", "cls/code">>;
using TwoHeads = connect<Net, graft::typed::clone<Classifier, "head2">, wire<"enc/code", "head2/code">>;
static_assert(TwoHeads::inputs::size == 1 && TwoHeads::outputs::size == 3);
// connect<Encoder, Classifier, wire<"enc/cod", "cls/code">> would not compile: "no output port named enc/cod"

}  // namespace

int main() {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / "graft_example_07_typed_connect";
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::string ca = (dir / "encoder.ckpt").string(), cb = (dir / "classifier.ckpt").string();

    std::printf("1. two models trained separately and saved as TF files\n");
    data train_d = make_data(256, 1), test_d = make_data(128, 2);
    train_and_save(ca, "x", "g1_output", 4, 16, 3, false, train_d.x, train_d.code, 10);
    {
        auto enc = graft::load<Encoder>(source{"enc", ca + ".meta"});
        train_and_save(cb, "g2_input", "logits", 3, 8, 2, true, enc.run<"code">(train_d.x), train_d.onehot, 20);
    }

    std::printf("\n2. graft::load<TwoHeads>: encoder + classifier + a clone of the classifier, from two sources\n");
    auto net = graft::load<TwoHeads>(source{"enc", ca + ".meta"}, source{"cls", cb + ".meta"});
    std::printf("  scopes:");
    for (auto& s : net.scopes()) std::printf(" %s", s.c_str());
    auto before = net.run<"cls/logits">(test_d.x);
    auto head2 = net.run<"head2/logits">(test_d.x);
    double same = 0;
    for (std::int64_t i = 0; i < before.size(); ++i) same = std::max(same, double(std::fabs(before.data()[i] - head2.data()[i])));
    std::printf("\n  test accuracy cls %.3f, head2 %.3f (max |cls - head2| = %g: the clone starts as a copy)\n",
                accuracy(before, test_d.onehot), accuracy(head2, test_d.onehot), same);

    std::printf("\n3. fine-tune head2 only, on a second task (x0 + x1 > 0); the encoder and cls stay as they are\n");
    net.minimize<"head2/logits">(loss::softmax_cross_entropy, train::adam(0.05), {"head2"});
    auto k_enc = net.var<"enc/dense/kernel">().tensor().clone();
    for (int i = 0; i <= 100; ++i) {
        double l = net.train_step(train_d.x, train_d.onehot2);
        if (i % 25 == 0) std::printf("  step %3d  loss %.4f\n", i, l);
    }
    auto after = net.run<"head2/logits">(test_d.x);
    auto cls_after = net.run<"cls/logits">(test_d.x);
    std::printf("  second task, test accuracy of head2 %.3f -> %.3f; cls (first task) unchanged: %s; encoder unchanged: %s\n",
                accuracy(head2, test_d.onehot2), accuracy(after, test_d.onehot2), graft::equal(cls_after, before) ? "yes" : "NO",
                graft::equal(net.var<"enc/dense/kernel">(), k_enc) ? "yes" : "NO");
    std::printf("  first test outputs (cls | head2 before | head2 after):\n");
    for (int i = 0; i < 3; ++i) {
        std::printf("    [% .3f % .3f] | [% .3f % .3f] | [% .3f % .3f]\n", before(i, 0), before(i, 1), head2(i, 0), head2(i, 1), after(i, 0),
                    after(i, 1));
    }

    std::printf("\n4. save: one checkpoint + MetaGraph\n");
    std::string p = net.save((dir / "two_heads.ckpt").string());
    std::printf("  %s(.meta)\n", p.c_str());
    bool ok = graft::equal(cls_after, before) && graft::equal(net.var<"enc/dense/kernel">(), k_enc);
    return ok ? 0 : 1;
}
