// connect: two graft-trained MLPs (saved as .meta + checkpoint, reloaded from the files) joined at
// a seam: outputs equal running them one after the other; joint fine-tuning moves both parts,
// freezing A (var_list or StopGradient) moves only B; the combined checkpoint holds both scopes and
// restores into a fresh import through TF's save/ ops; the real mnist-softmax checkpoint behind a
// graft-made preprocessing graph; `graft connect` + `graft run`.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "graft/formats/npy.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/surgery/connect.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/saver.hpp"
#include "graft/formats/idx.hpp"
#include "support/fixtures.hpp"
#include "support/mnist.hpp"

namespace connect_t {

using graft::dtype;
using graft::tensor;
namespace train = graft::train;
namespace surgery = graft::surgery;

/// Deterministic values in [-a, a].
inline tensor randn(graft::shape s, unsigned seed, float a = 0.5f) {
    tensor t(dtype::float32, s);
    unsigned x = seed * 2654435761u + 12345u;
    for (std::int64_t i = 0; i < t.num_elements(); ++i) {
        x = x * 1664525u + 1013904223u;
        t.data<float>()[i] = a * (static_cast<float>(x >> 8) / 8388608.0f - 1.0f);
    }
    return t;
}

/// in -> Relu(dense) -> dense -> `out`; "labels" and a mean-squared "loss"; trained a few steps
/// with GradientDescent and saved to `prefix` (+ .meta). Returns the MetaGraph read back.
inline graft::meta_graph make_mlp(const std::string& prefix, const std::string& in, const std::string& out, int ni, int nh,
                                  int no, unsigned seed) {
    graft::meta_graph mg;
    graft::graph_builder b(mg.graph);
    auto x = b.placeholder(in, dtype::float32, graft::shape{-1, ni});
    auto y = b.placeholder("labels", dtype::float32, graft::shape{-1, no});
    auto d1 = b.at_scope("dense"), d2 = b.at_scope("dense_1");
    auto w1 = train::create_variable(mg, d1, "kernel", randn({ni, nh}, seed));
    auto b1 = train::create_variable(mg, d1, "bias", randn({nh}, seed + 1, 0.1f));
    auto w2 = train::create_variable(mg, d2, "kernel", randn({nh, no}, seed + 2));
    auto b2 = train::create_variable(mg, d2, "bias", randn({no}, seed + 3, 0.1f));
    auto h = b.op("Relu", {b.op("BiasAdd", {b.op("MatMul", {x, w1.value}), b1.value})});
    auto o = b.op("BiasAdd", {b.op("MatMul", {h, w2.value}), b2.value}, {}, out);
    auto loss = b.op("Mean", {b.op("Square", {b.op("Sub", {o, y})}), b.constant(tensor::from_vector<std::int32_t>({0, 1}))},
                     {}, "loss");
    train::gradient_descent opt(0.05);
    std::string op = opt.minimize(mg, loss);
    std::string init = train::global_variables_initializer(mg);
    train::saver sv(mg);
    graft::exec::session s(mg.graph);
    s.run({}, {}, {init});
    for (int i = 0; i < 5; ++i) s.run({{in + ":0", randn({8, ni}, seed + 10 + i, 1.f)}, {"labels:0", randn({8, no}, seed + 20 + i, 1.f)}}, {}, {op});
    sv.save(s, prefix);
    return graft::tf::load_meta_graph(prefix + ".meta");
}

/// Runs one model restored from its checkpoint: feeds `in`, fetches `out`.
inline tensor run_alone(const graft::meta_graph& mg, const std::string& ckpt, const std::string& in, const tensor& x,
                        const std::string& out) {
    graft::exec::session s(mg.graph);
    surgery::restore_scoped(s, mg, "", ckpt, {});
    return s.run({{in, x}}, {out})[0];
}

inline double max_diff(const tensor& a, const tensor& b) {
    REQUIRE(a.shape() == b.shape());
    double m = 0;
    for (std::int64_t i = 0; i < a.num_elements(); ++i) m = std::max(m, std::fabs(double(a.data<float>()[i]) - b.data<float>()[i]));
    return m;
}

/// Names of the variables whose values differ between two sessions (same names in both).
inline std::vector<std::string> changed(graft::exec::session& a, graft::exec::session& b, const std::vector<std::string>& vars) {
    std::vector<std::string> out;
    for (auto& v : vars) {
        if (!graft::equal(a.variable_value(v), b.variable_value(v))) out.push_back(v);
    }
    return out;
}

struct pair_fixture {
    std::filesystem::path dir;
    graft::meta_graph a, b;
    std::string ca, cb;
    explicit pair_fixture(const std::string& name) : dir(graft::test::scratch(name)) {
        ca = (dir / "a.ckpt").string();
        cb = (dir / "b.ckpt").string();
        a = make_mlp(ca, "x", "g1_output", 4, 8, 3, 1);
        b = make_mlp(cb, "g2_input", "logits", 3, 6, 2, 7);
    }
    surgery::connected connect(const surgery::connect_options& o = {}) const {
        return surgery::connect({{"A", a, ca}, {"B", b, cb}}, {{"B/g2_input:0", "A/g1_output:0"}}, o);
    }
};

}  // namespace connect_t

TEST_CASE("connect: combined output equals the two models run one after the other; fine-tune all or only B") {
    using namespace connect_t;
    pair_fixture f("surgery_connect_pair");
    auto c = f.connect();
    CHECK(!c.mg.graph.contains("B/g2_input"));
    CHECK(c.mg.graph.contains("A/x"));
    CHECK(c.mg.graph.at("B/MatMul").inputs[0] == graft::endpoint{"A/g1_output", 0});
    CHECK(c.parts[1].imported.saver->restore_op_name == "B/save/restore_all");

    tensor x = randn({5, 4}, 99, 1.f);
    graft::exec::session s(c.mg.graph);
    auto reps = surgery::restore_parts(s, c);
    REQUIRE(reps.size() == 2);
    CHECK(reps[0].restored == std::vector<std::string>{"A/dense/bias", "A/dense/kernel", "A/dense_1/bias", "A/dense_1/kernel"});
    CHECK(reps[1].unused.empty());
    tensor got = s.run({{"A/x:0", x}}, {"B/logits:0"})[0];
    tensor mid = run_alone(f.a, f.ca, "x:0", x, "g1_output:0");
    tensor want = run_alone(f.b, f.cb, "g2_input:0", mid, "logits:0");
    CHECK(max_diff(got, want) <= 1e-6);

    // the part's own TF restore ops work too: B/save/restore_all with B's checkpoint
    graft::exec::session s_tf(c.mg.graph);
    s_tf.run({{"A/save/Const:0", tensor::scalar_of(f.ca)}}, {}, {"A/save/restore_all"});
    s_tf.run({{"B/save/Const:0", tensor::scalar_of(f.cb)}}, {}, {"B/save/restore_all"});
    CHECK(max_diff(s_tf.run({{"A/x:0", x}}, {"B/logits:0"})[0], want) <= 1e-6);

    std::vector<std::string> a_vars = c.part("A").imported.trainable_variables, b_vars = c.part("B").imported.trainable_variables;
    REQUIRE(a_vars.size() == 4);
    REQUIRE(b_vars.size() == 4);
    tensor lx = randn({8, 4}, 5, 1.f), ly = randn({8, 2}, 6, 1.f);
    auto fine_tune = [&](surgery::connected cc, const std::optional<graft::train::var_list>& vl, graft::exec::session& ref) {
        train::gradient_descent opt(0.1);
        std::string op = vl ? opt.minimize(cc.mg, {"B/loss", 0}, *vl) : opt.minimize(cc.mg, {"B/loss", 0});
        graft::exec::session t(cc.mg.graph);
        surgery::restore_parts(t, cc);
        float l0 = t.run({{"A/x:0", lx}, {"B/labels:0", ly}}, {"B/loss:0"})[0].data<float>()[0];
        for (int i = 0; i < 3; ++i) t.run({{"A/x:0", lx}, {"B/labels:0", ly}}, {}, {op});
        float l1 = t.run({{"A/x:0", lx}, {"B/labels:0", ly}}, {"B/loss:0"})[0].data<float>()[0];
        CHECK(l1 < l0);
        return std::pair(changed(t, ref, a_vars), changed(t, ref, b_vars));
    };
    SUBCASE("joint fine-tuning: gradients from B's loss reach A's variables") {
        auto [ca, cb] = fine_tune(c, std::nullopt, s);
        CHECK(ca.size() == 4);
        CHECK(cb.size() == 4);
    }
    SUBCASE("A frozen by var_list: only B's variables move") {
        auto [ca, cb] = fine_tune(c, c.trainable("B"), s);
        CHECK(ca.empty());
        CHECK(cb.size() == 4);
    }
    SUBCASE("A frozen by StopGradient at the seam") {
        surgery::connect_options so;
        so.stop_gradient_at_seams = true;
        auto cs = f.connect(so);
        CHECK(cs.mg.graph.at("B/MatMul").inputs[0].node == "B_seam/g2_input");
        graft::exec::session s2(cs.mg.graph);
        surgery::restore_parts(s2, cs);
        CHECK(max_diff(s2.run({{"A/x:0", x}}, {"B/logits:0"})[0], want) <= 1e-6);
        auto [ca, cb] = fine_tune(cs, std::nullopt, s);
        CHECK(ca.empty());
        CHECK(cb.size() == 4);
    }
}

TEST_CASE("connect: one combined checkpoint + MetaGraph holds both scopes and restores into a fresh import") {
    using namespace connect_t;
    pair_fixture f("surgery_connect_save");
    auto c = f.connect();
    train::gradient_descent opt(0.1);
    std::string op = opt.minimize(c.mg, {"B/loss", 0});
    graft::exec::session s(c.mg.graph);
    surgery::restore_parts(s, c);
    tensor lx = randn({8, 4}, 5, 1.f), ly = randn({8, 2}, 6, 1.f), x = randn({3, 4}, 42, 1.f);
    for (int i = 0; i < 2; ++i) s.run({{"A/x:0", lx}, {"B/labels:0", ly}}, {}, {op});
    tensor want = s.run({{"A/x:0", x}}, {"B/logits:0"})[0];
    std::string p = surgery::save_combined(s, c, (f.dir / "combined").string());
    auto keys = graft::tf::checkpoint_reader(p).keys();
    for (auto k : {"A/dense/kernel", "A/dense_1/bias", "B/dense/kernel", "B/dense_1/bias"}) {
        CHECK(std::find(keys.begin(), keys.end(), k) != keys.end());
    }
    // a fresh import of the written .meta, restored by TF's own save/restore_all
    auto mg = graft::tf::load_meta_graph(p + ".meta");
    REQUIRE(mg.saver);
    graft::exec::session s2(mg.graph);
    s2.run({{mg.saver->filename_tensor_name, tensor::scalar_of(p)}}, {}, {mg.saver->restore_op_name});
    CHECK(max_diff(s2.run({{"A/x:0", x}}, {"B/logits:0"})[0], want) == 0);
    // and by restore_scoped into yet another scope of a fresh graph
    graft::meta_graph host;
    surgery::import_meta_graph(host, mg, surgery::under("again"));
    graft::exec::session s3(host.graph);
    auto rep = surgery::restore_scoped(s3, host, "again", p, surgery::into_scope("again"), train::restore_mode::lenient);
    CHECK(rep.missing.empty());
    CHECK(max_diff(s3.run({{"again/A/x:0", x}}, {"again/B/logits:0"})[0], want) == 0);
}

TEST_CASE("connect: mnist-softmax/train_model.ckpt behind a graft-made preprocessing graph") {
    using namespace connect_t;
    auto meta = graft::test::fixture("mnist-softmax/train_model.ckpt.meta");
    auto ckpt = graft::test::fixture("mnist-softmax/train_model.ckpt").string();
    GRAFT_REQUIRE_PATH(meta);
    // preprocessing: raw pixels 0..255 -> [0, 1]
    graft::meta_graph pre;
    graft::graph_builder b(pre.graph);
    auto raw = b.placeholder("raw", dtype::float32, graft::shape{-1, 784});
    b.op("Mul", {raw, b.scalar<float>(1.0f / 255.0f, "scale")}, {}, "scaled");
    auto mnist = graft::tf::load_meta_graph(meta.string());
    auto c = surgery::connect({{"pre", pre, ""}, {"mnist", mnist, ckpt}}, {{"mnist/Placeholder:0", "pre/scaled:0"}});
    CHECK(!c.mg.graph.contains("mnist/Placeholder"));

    // digit-like inputs: raw pixels 0..255
    const int n = 16;
    tensor x(dtype::float32, {n, 784});
    tensor noise = randn({n, 784}, 11, 1.f);
    for (int i = 0; i < n * 784; ++i) {
        int r = i % 784 / 28, col = i % 28;
        bool stroke = (r - 14) * (r - 14) + (col - 14) * (col - 14) < 30 + 10 * (i / 784 % 5);
        x.data<float>()[i] = stroke ? std::round(200.f + 50.f * noise.data<float>()[i]) : 0.f;
    }
    graft::exec::session s(c.mg.graph);
    auto reps = surgery::restore_parts(s, c);
    REQUIRE(reps.size() == 1);
    CHECK(reps[0].restored == std::vector<std::string>{"mnist/Variable", "mnist/Variable_1"});
    tensor got = s.run({{"pre/raw:0", x}}, {"mnist/Add:0"})[0];

    graft::exec::session sp(pre.graph);
    tensor scaled = sp.run({{"raw:0", x}}, {"scaled:0"})[0];
    tensor want = run_alone(mnist, ckpt, "Placeholder:0", scaled, "Add:0");
    CHECK(max_diff(got, want) <= 1e-6);
    // the mapped placeholder's consumers read the preprocessing output
    CHECK(c.mg.graph.at("mnist/MatMul").inputs[0] == graft::endpoint{"pre/scaled", 0});

    // The real MNIST test set through the combined graph, as raw 0..255 pixels: TensorFlow printed
    // 0.7357 for this checkpoint on the [0, 1] features.
    auto images = graft::test::dataset("mnist/t10k-images-idx3-ubyte.gz");
    auto labels = graft::test::dataset("mnist/t10k-labels-idx1-ubyte.gz");
    GRAFT_REQUIRE_PATH(images);
    tensor pixels = graft::cast(graft::data::read_idx(images.string()), dtype::float32).reshaped({10000, 784});
    tensor lab = graft::cast(graft::data::read_idx(labels.string()), dtype::int64);
    tensor logits = s.run({{"pre/raw:0", pixels}}, {"mnist/Add:0"})[0];
    CHECK(graft::test::argmax_hits(logits, lab) == 7357);
}

TEST_CASE("cli: graft connect writes OUT.meta + OUT checkpoint (or a SavedModel) that graft run executes") {
    using namespace connect_t;
    pair_fixture f("surgery_connect_cli");
    std::string out_prefix = (f.dir / "out" / "combined").string();
    std::string out;
    int rc = graft::test::run_cli("connect A=" + f.ca + ".meta:" + f.ca + " B=" + f.cb + ".meta:" + f.cb +
                                      " --map 'B/g2_input:0=A/g1_output:0' --clear-devices -o " + out_prefix,
                                  out);
    CAPTURE(out);
    REQUIRE(rc == 0);
    CHECK(out.find("A/dense/kernel") != std::string::npos);
    tensor x = randn({2, 4}, 3, 1.f);
    graft::write_npy((f.dir / "x.npy").string(), x);
    rc = graft::test::run_cli("run " + out_prefix + ".meta --ckpt " + out_prefix + " --feed A/x=@" + (f.dir / "x.npy").string() +
                                  " --fetch B/logits:0 --out " + (f.dir / "res").string(),
                              out);
    CAPTURE(out);
    REQUIRE(rc == 0);
    tensor got = graft::read_npy((f.dir / "res" / "B_logits_0.npy").string());
    tensor want = run_alone(f.b, f.cb, "g2_input:0", run_alone(f.a, f.ca, "x:0", x, "g1_output:0"), "logits:0");
    CHECK(max_diff(got, want) <= 1e-6);

    // --saved-model: a SavedModel directory graft run restores by itself
    std::string sm = (f.dir / "sm").string();
    REQUIRE(graft::test::run_cli("connect A=" + f.ca + ".meta:" + f.ca + " B=" + f.cb + ".meta:" + f.cb +
                                     " --map 'B/g2_input:0=A/g1_output:0' --saved-model -o " + sm,
                                 out) == 0);
    rc = graft::test::run_cli("run " + sm + " --feed A/x=@" + (f.dir / "x.npy").string() + " --fetch B/logits:0 --out " +
                                  (f.dir / "res_sm").string(),
                              out);
    CAPTURE(out);
    REQUIRE(rc == 0);
    CHECK(max_diff(graft::read_npy((f.dir / "res_sm" / "B_logits_0.npy").string()), want) <= 1e-6);

    // bad seam: a clear error naming the tensors, exit code 1
    rc = graft::test::run_cli("connect A=" + f.ca + ".meta:" + f.ca + " B=" + f.cb + ".meta:" + f.cb +
                                  " --map 'B/g2_input:0=A/nope:0' -o " + out_prefix + "2",
                              out);
    CHECK(rc == 1);
    CHECK(out.find("A/nope:0") != std::string::npos);
}
