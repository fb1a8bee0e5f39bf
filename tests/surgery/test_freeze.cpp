// Job 4 of graph surgery: freeze a graft-trained model, unfreeze the frozen graph, retrain it,
// freeze it again; both frozen graphs run under graft and (when OpenCV's dnn module is there)
// under cv::dnn::readNetFromTensorflow with equal outputs. Real TF files: mnist-softmax.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include "graft/core.hpp"
#include "graft/exec/model.hpp"
#include "graft/surgery/freeze.hpp"
#include "graft/formats/tf/bundle_writer.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/saver.hpp"
#include "support/fixtures.hpp"

#ifdef GRAFT_HAVE_OPENCV_DNN
#include <opencv2/dnn.hpp>
#endif

namespace freeze_t {

using graft::dtype;
using graft::tensor;
namespace train = graft::train;
namespace surgery = graft::surgery;

inline tensor random(const graft::shape& s, std::mt19937& rng, float scale) {
    tensor t(dtype::float32, s);
    std::normal_distribution<float> d(0.f, scale);
    for (std::int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = d(rng);
    return t;
}

/// Largest |a - b| (same shapes required).
inline double max_diff(const tensor& a, const tensor& b) {
    REQUIRE(a.shape() == b.shape());
    double m = 0;
    for (std::int64_t i = 0; i < a.num_elements(); ++i) {
        m = std::max(m, std::abs(double(a.data<float>()[i]) - double(b.data<float>()[i])));
    }
    return m;
}

/// Input "x", output "probs" = Softmax("logits"); variables with random values.
struct model {
    graft::meta_graph mg;
    std::vector<std::string> weights;  ///< variable names
    tensor x;                          ///< a batch of inputs
    tensor y;                          ///< one-hot labels for it
};

inline graft::attr_value list4(std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
    return graft::attr_value::list_of(std::vector<std::int64_t>{a, b, c, d});
}

inline model make_model(bool cnn, bool resource, std::uint32_t seed) {
    model m;
    std::mt19937 rng(seed);
    graft::graph_builder b(m.mg.graph);
    train::variable_options vo;
    vo.use_resource = resource;
    auto var = [&](const std::string& name, const graft::shape& s, float scale) {
        m.weights.push_back(name);
        return train::create_variable(m.mg, b, name, random(s, rng, scale), vo).value;
    };
    const std::int64_t n = 16;
    graft::endpoint feat;
    std::int64_t width = 0;
    if (!cnn) {
        auto x = b.placeholder("x", dtype::float32, graft::shape{-1, 8});
        auto w = var("dense/kernel", {8, 16}, 0.4f);
        auto bias = var("dense/bias", {16}, 0.1f);
        feat = b.op("Relu", {b.op("BiasAdd", {b.op("MatMul", {x, w}, {}, "dense/MatMul"), bias}, {}, "dense/BiasAdd")},
                    {}, "dense/Relu");
        width = 16;
        m.x = random({n, 8}, rng, 1.f);
    } else {
        auto x = b.placeholder("x", dtype::float32, graft::shape{-1, 8, 8, 1});
        auto k = var("conv/kernel", {3, 3, 1, 4}, 0.4f);
        auto kb = var("conv/bias", {4}, 0.1f);
        auto conv = b.op("Conv2D", {x, k}, {{"strides", list4(1, 1, 1, 1)}, {"padding", std::string("SAME")}}, "conv/Conv2D");
        auto relu = b.op("Relu", {b.op("BiasAdd", {conv, kb}, {}, "conv/BiasAdd")}, {}, "conv/Relu");
        auto pool = b.op("MaxPool", {relu}, {{"ksize", list4(1, 2, 2, 1)}, {"strides", list4(1, 2, 2, 1)},
                                             {"padding", std::string("VALID")}}, "pool");
        feat = b.op("Reshape", {pool, b.constant(tensor::from_vector<std::int32_t>({-1, 64}), "flatten/shape")}, {}, "flatten");
        width = 64;
        m.x = random({n, 8, 8, 1}, rng, 1.f);
    }
    auto w = var("out/kernel", {width, 3}, 0.3f);
    auto bias = var("out/bias", {3}, 0.1f);
    auto logits = b.op("BiasAdd", {b.op("MatMul", {feat, w}, {}, "out/MatMul"), bias}, {}, "logits");
    b.op("Softmax", {logits}, {}, "probs");
    m.y = tensor(dtype::float32, {n, 3});
    for (std::int64_t i = 0; i < n; ++i) {
        for (int j = 0; j < 3; ++j) m.y.data<float>()[i * 3 + j] = (i % 3 == j) ? 1.f : 0.f;
    }
    return m;
}

/// Loss (mean softmax cross-entropy of "logits" against a new placeholder) and a GradientDescent
/// step; returns {loss tensor, train op, label placeholder}.
struct training {
    std::string loss, op, labels;
};
inline training add_training(graft::meta_graph& mg, float lr) {
    graft::graph_builder b(mg.graph);
    training t;
    t.labels = b.placeholder("labels", dtype::float32, graft::shape{-1, 3}).node;
    auto xent = b.op_n("SoftmaxCrossEntropyWithLogits", {{"logits", 0}, {t.labels, 0}}, {}, "xent")[0];
    auto loss = b.op("Mean", {xent, b.constant(tensor::from_vector<std::int32_t>({0}), "loss/axes")}, {}, "loss");
    t.loss = loss.str();
    t.op = train::gradient_descent(lr).minimize(mg, loss);
    return t;
}

inline float run_loss(graft::exec::session& s, const training& t, const model& m) {
    return s.run({{"x", m.x}, {t.labels, m.y}}, {t.loss})[0].scalar<float>()();
}

inline tensor run_frozen(const graft::graph& g, const tensor& x) {
    graft::exec::session s(g);
    return s.run({{"x", x}}, {"probs:0"})[0];
}

#ifdef GRAFT_HAVE_OPENCV_DNN
/// The frozen .pb through OpenCV's TF importer; x is [N,8] or [N,8,8,1] (one channel: NHWC and
/// NCHW lay out the same bytes).
inline tensor run_opencv(const std::string& pb, const tensor& x) {
    cv::dnn::Net net = cv::dnn::readNetFromTensorflow(pb);
    cv::Mat blob;
    if (x.shape().rank() == 2) {
        blob = cv::Mat(int(x.shape().dim(0)), int(x.shape().dim(1)), CV_32F, const_cast<float*>(x.data<float>())).clone();
    } else {
        int sz[4] = {int(x.shape().dim(0)), 1, int(x.shape().dim(1)), int(x.shape().dim(2))};
        blob = cv::Mat(4, sz, CV_32F, const_cast<float*>(x.data<float>())).clone();
    }
    net.setInput(blob);
    cv::Mat out = net.forward("probs");
    REQUIRE(out.total() == std::size_t(x.shape().dim(0) * 3));
    tensor r(dtype::float32, {x.shape().dim(0), 3});
    std::copy(out.ptr<float>(), out.ptr<float>() + out.total(), r.data<float>());
    return r;
}
#endif

inline void check_opencv(const graft::graph& frozen, const tensor& x, const tensor& want, const std::string& pb) {
    graft::tf::write_graph(frozen, pb);
#ifdef GRAFT_HAVE_OPENCV_DNN
    tensor got = run_opencv(pb, x);
    CHECK(max_diff(got, want) < 1e-5);
#else
    (void)x;
    (void)want;
    MESSAGE("SKIP: OpenCV DNN not found; " << pb << " not run through cv::dnn::readNetFromTensorflow");
#endif
}

inline int count_ops(const graft::graph& g, const std::string& op) {
    int k = 0;
    for (auto& n : g) k += n.op == op;
    return k;
}

}  // namespace freeze_t

TEST_CASE("freeze -> unfreeze -> retrain -> refreeze: MLP and CNN, ref and resource, graft and OpenCV DNN") {
    using namespace freeze_t;
    auto dir = graft::test::scratch("freeze_roundtrip");
    for (bool cnn : {false, true}) {
        for (bool resource : {false, true}) {
            CAPTURE(cnn);
            CAPTURE(resource);
            const std::string tag = std::string(cnn ? "cnn" : "mlp") + (resource ? "_res" : "_ref");
            // 1. a graft-trained model, saved by the Saver
            model m = make_model(cnn, resource, cnn ? 7u : 3u);
            training t = add_training(m.mg, 0.2f);
            std::string init = train::global_variables_initializer(m.mg);
            train::saver sv(m.mg);
            graft::exec::session s(m.mg.graph);
            s.run({}, {}, {init});
            for (int i = 0; i < 3; ++i) s.run({{"x", m.x}, {t.labels, m.y}}, {}, {t.op});
            tensor trained = s.run({{"x", m.x}}, {"probs:0"})[0];
            std::string ckpt = sv.save(s, (dir / tag / "model.ckpt").string());

            // 2. freeze from the session and from the checkpoint
            graft::graph frozen = surgery::freeze(m.mg, s, {"probs:0"});
            CHECK(count_ops(frozen, "VariableV2") + count_ops(frozen, "VarHandleOp") == 0);
            CHECK(count_ops(frozen, "ReadVariableOp") + count_ops(frozen, "Assign") + count_ops(frozen, "SaveV2") +
                      count_ops(frozen, "ApplyGradientDescent") + count_ops(frozen, "ResourceApplyGradientDescent") == 0);
            CHECK(frozen.size() < m.mg.graph.size());
            for (auto& n : frozen) CHECK(m.mg.graph.contains(n.name));  // names kept
            for (auto& w : m.weights) CHECK(frozen.at(w).op == "Const");
            tensor f1 = run_frozen(frozen, m.x);
            CHECK(max_diff(f1, trained) < 1e-6);
            graft::graph frozen_ckpt = surgery::freeze(m.mg, ckpt, {"probs"});
            CHECK(frozen_ckpt == frozen);

            // 3. unfreeze: the weights come back as variables, outputs unchanged
            surgery::unfreeze_options uo;
            uo.resource = resource;
            auto u = surgery::unfreeze(frozen, uo);
            auto sorted = m.weights;
            std::sort(sorted.begin(), sorted.end());
            auto got = u.variables;
            std::sort(got.begin(), got.end());
            CHECK(got == sorted);
            CHECK(u.mg.collection("trainable_variables")->variables.size() == m.weights.size());
            CHECK(u.mg.saver.has_value());
            for (auto& w : m.weights) {
                CHECK(u.mg.graph.at(w).op == (resource ? "VarHandleOp" : "VariableV2"));
                CHECK(u.values.at(w).shape() == frozen.at(w).attr_at("value").tensor().shape());
            }
            training t2 = add_training(u.mg, 0.2f);
            graft::exec::session s2(u.mg.graph);
            s2.run({}, {}, {u.init});
            CHECK(max_diff(s2.run({{"x", m.x}}, {"probs:0"})[0], f1) < 1e-6);

            // 4. retrain on shifted labels: the loss goes down, every weight changes
            model shifted = m;
            for (std::int64_t i = 0; i < m.y.shape().dim(0); ++i) {
                for (int j = 0; j < 3; ++j) shifted.y.data<float>()[i * 3 + j] = ((i + 1) % 3 == j) ? 1.f : 0.f;
            }
            float before = run_loss(s2, t2, shifted);
            for (int i = 0; i < 8; ++i) s2.run({{"x", m.x}, {t2.labels, shifted.y}}, {}, {t2.op});
            float after = run_loss(s2, t2, shifted);
            CHECK(after < before);
            for (auto& w : m.weights) CHECK(max_diff(s2.variable_value(w), u.values.at(w)) > 0);

            // 5. refreeze: runs in graft and OpenCV with the retrained outputs
            graft::graph again = surgery::freeze(u.mg, s2, {"probs"});
            CHECK(count_ops(again, "VariableV2") + count_ops(again, "VarHandleOp") + count_ops(again, "ReadVariableOp") == 0);
            CHECK(!again.contains("labels"));
            tensor f2 = run_frozen(again, m.x);
            CHECK(max_diff(f2, s2.run({{"x", m.x}}, {"probs:0"})[0]) < 1e-6);
            CHECK(max_diff(f2, f1) > 1e-4);
            check_opencv(frozen, m.x, f1, (dir / (tag + "_frozen.pb")).string());
            check_opencv(again, m.x, f2, (dir / (tag + "_refrozen.pb")).string());
            // the written .pb reads back into graft with the same outputs
            CHECK(max_diff(run_frozen(graft::tf::load_graph((dir / (tag + "_refrozen.pb")).string()), m.x), f2) < 1e-6);
        }
    }
}

TEST_CASE("unfreeze: default selection picks the weight Consts; names and regex select others") {
    using namespace freeze_t;
    graft::graph g;
    graft::graph_builder b(g);
    std::mt19937 rng(11);
    auto x = b.placeholder("x", dtype::float32, graft::shape{-1, 4});
    auto w = b.constant(random({4, 4}, rng, 0.5f), "w");                  // MatMul b, directly
    auto bias = b.constant(random({4}, rng, 0.5f), "b");                  // BiasAdd bias
    auto emb = b.constant(random({4, 4}, rng, 0.5f), "emb");              // read through an Identity
    auto gain = b.constant(random({4}, rng, 0.5f), "gain");               // Mul: not a weight input
    auto scale = b.constant(tensor::scalar_of(0.5f), "scale");            // scalar
    auto tiny = b.constant(tensor::from_vector<float>({1}, {0.25f}), "tiny");  // BiasAdd but 1 element
    auto h = b.op("BiasAdd", {b.op("MatMul", {x, w}), bias}, {}, "h");
    h = b.op("MatMul", {h, b.op("Identity", {emb}, {}, "emb/read")}, {}, "h2");
    h = b.op("Mul", {b.op("Mul", {h, gain}), scale}, {}, "h3");
    auto r = b.op("Reshape", {h, b.constant(tensor::from_vector<std::int32_t>({-1, 1}), "shape")});
    auto out = b.op("Mean", {b.op("BiasAdd", {r, tiny}), b.constant(tensor::from_vector<std::int32_t>({1}), "axis")}, {}, "out");
    (void)out;
    tensor xv = random({5, 4}, rng, 1.f);
    tensor want = graft::exec::session(g).run({{"x", xv}}, {"out:0"})[0];

    auto def = surgery::weight_consts(g);
    CHECK(def == std::vector<std::string>{"w", "b", "emb"});
    CHECK(surgery::weight_consts(g, 1) == std::vector<std::string>{"w", "b", "emb", "tiny"});
    CHECK(surgery::weight_consts(g, 5) == std::vector<std::string>{"w", "emb"});
    surgery::unfreeze_options o;
    o.select = "^(w|gain)$";
    CHECK(surgery::select_consts(g, o) == std::vector<std::string>{"w", "gain"});
    o.names = {"scale"};
    CHECK(surgery::select_consts(g, o) == std::vector<std::string>{"w", "gain", "scale"});

    for (bool resource : {false, true}) {
        CAPTURE(resource);
        surgery::unfreeze_options uo;
        uo.resource = resource;
        auto u = surgery::unfreeze(g, uo);
        CHECK(u.variables == def);
        CHECK(u.mg.graph.at("emb/read").op == (resource ? "ReadVariableOp" : "Identity"));  // reused snapshot
        CHECK(u.mg.graph.at("emb/read").inputs[0].node == "emb");
        CHECK(u.mg.graph.at("h2").inputs[1].node == "emb/read");
        CHECK(u.mg.graph.at("MatMul").inputs[1].node == (resource ? "w/Read/ReadVariableOp" : "w/read"));
        CHECK(u.mg.graph.at("gain").op == "Const");
        graft::exec::session s(u.mg.graph);
        s.run({}, {}, {u.init});
        CHECK(max_diff(s.run({{"x", xv}}, {"out:0"})[0], want) < 1e-6);
        // scalar by name, as a variable too
        surgery::unfreeze_options so = uo;
        so.names = {"scale", "tiny"};
        auto u2 = surgery::unfreeze(g, so);
        CHECK(u2.variables == std::vector<std::string>{"scale", "tiny"});
        graft::exec::session s2(u2.mg.graph);
        s2.run({}, {}, {u2.init});
        CHECK(max_diff(s2.run({{"x", xv}}, {"out:0"})[0], want) < 1e-6);
    }

    // bad selections name what was asked for
    surgery::unfreeze_options bad;
    bad.select = "^nothing";
    auto e = graft::test::expect_error<graft::not_found_error>([&] { (void)surgery::unfreeze(g, bad); });
    CHECK(std::string(e.what()).find("^nothing") != std::string::npos);
    bad.select.clear();
    bad.names = {"w", "nope", "h"};
    e = graft::test::expect_error<graft::not_found_error>([&] { (void)surgery::unfreeze(g, bad); });
    CHECK(std::string(e.what()).find("nope") != std::string::npos);
    CHECK(std::string(e.what()).find("h (a BiasAdd)") != std::string::npos);
    bad.names.clear();
    bad.select = "([";
    CHECK_THROWS_AS((void)surgery::unfreeze(g, bad), graft::invalid_argument_error);
}

TEST_CASE("freeze: bad outputs, missing values and non-read uses are errors naming them") {
    using namespace freeze_t;
    auto dir = graft::test::scratch("freeze_errors");
    model m = make_model(false, false, 5);
    training t = add_training(m.mg, 0.1f);
    std::string init = train::global_variables_initializer(m.mg);
    graft::exec::session s(m.mg.graph);

    auto e = graft::test::expect_error<graft::not_found_error>([&] { (void)surgery::freeze(m.mg, s, {"probs,nope:0", "gone"}); });
    CHECK(std::string(e.what()).find("nope, gone") != std::string::npos);
    CHECK_THROWS_AS((void)surgery::freeze(m.mg, s, {}), graft::invalid_argument_error);
    // uninitialized session variables
    e = graft::test::expect_error<graft::not_found_error>([&] { (void)surgery::freeze(m.mg, s, {"probs"}); });
    CHECK(std::string(e.what()).find("dense/kernel") != std::string::npos);
    // a checkpoint that lacks two of the variables
    {
        graft::tf::bundle_writer w((dir / "partial").string());
        w.add("dense/bias", tensor(dtype::float32, {16}));
        w.add("dense/kernel", tensor(dtype::float32, {8, 16}));
        w.finish();
    }
    e = graft::test::expect_error<graft::not_found_error>([&] { (void)surgery::freeze(m.mg, (dir / "partial").string(), {"probs"}); });
    CHECK(std::string(e.what()).find("out/kernel, out/bias") != std::string::npos);
    // outputs that need an assignment or a training op
    s.run({}, {}, {init});
    auto g = graft::test::expect_error<graft::graph_error>([&] { (void)surgery::freeze(m.mg, s, {t.op}); });
    CHECK(std::string(g.what()).find("ApplyGradientDescent") != std::string::npos);
    g = graft::test::expect_error<graft::graph_error>([&] { (void)surgery::freeze(m.mg, s, {"dense/kernel/Assign"}); });
    CHECK(std::string(g.what()).find("'dense/kernel/Assign'") != std::string::npos);
}

TEST_CASE("freeze/unfreeze the real TF mnist-softmax checkpoint; the written .meta + checkpoint reload") {
    using namespace freeze_t;
    auto prefix = graft::test::fixture("mnist-softmax/train_model.ckpt");
    GRAFT_REQUIRE_PATH(prefix.string() + ".index");
    auto dir = graft::test::scratch("freeze_mnist");
    auto mg = graft::tf::load_meta_graph(prefix.string() + ".meta");
    graft::graph frozen = surgery::freeze(mg, prefix.string(), {"Add:0"});
    CHECK(frozen.at("Variable").op == "Const");
    CHECK(frozen.at("Variable/read").op == "Identity");
    CHECK(frozen.size() == 7);  // Placeholder, 2 Const, 2 Identity reads, MatMul, Add
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u01(0.f, 1.f);
    tensor x(dtype::float32, {4, 784});
    for (std::int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] = u01(rng);
    // the original graph with its checkpoint restored
    auto loaded = graft::exec::load_model(prefix.string() + ".meta");
    auto runner = loaded.runner();
    runner.restore(prefix.string());
    tensor want = runner.run({{"Placeholder", x}}, {"Add:0"})[0];
    tensor f = graft::exec::session(frozen).run({{"Placeholder", x}}, {"Add:0"})[0];
    CHECK(max_diff(f, want) == 0);
    for (bool resource : {false, true}) {
        CAPTURE(resource);
        surgery::unfreeze_options o;
        o.resource = resource;
        auto u = surgery::unfreeze(frozen, o);
        CHECK(u.variables == std::vector<std::string>{"Variable", "Variable_1"});
        graft::exec::session s(u.mg.graph);
        s.run({}, {}, {u.init});
        CHECK(max_diff(s.run({{"Placeholder", x}}, {"Add:0"})[0], f) < 1e-6);
        auto out = (dir / (resource ? "res" : "ref") / "model").string();
        surgery::save_unfrozen(u, out);
        auto back = graft::exec::load_model(out + ".meta");
        auto r = back.runner();
        auto rep = r.restore(out);
        CHECK(rep.restored.size() == 2);
        CHECK(max_diff(r.run({{"Placeholder", x}}, {"Add:0"})[0], f) < 1e-6);
        // and freezes again (from the written checkpoint) to a graph with the same outputs
        graft::graph again = surgery::freeze(u.mg, out, {"Add"});
        CHECK(again.size() == frozen.size());
        CHECK(max_diff(graft::exec::session(again).run({{"Placeholder", x}}, {"Add:0"})[0], f) == 0);
    }
}

TEST_CASE("graft freeze / unfreeze / run on the command line") {
    using namespace freeze_t;
    auto dir = graft::test::scratch("freeze_cli");
    model m = make_model(false, false, 9);
    std::string init = train::global_variables_initializer(m.mg);
    train::saver sv(m.mg);
    graft::exec::session s(m.mg.graph);
    s.run({}, {}, {init});
    std::string ckpt = sv.save(s, (dir / "model.ckpt").string());
    tensor want = s.run({{"x", m.x}}, {"probs:0"})[0];
    graft::write_npy((dir / "x.npy").string(), m.x);
    auto d = dir.string();

    auto r = graft::test::run_cli("freeze " + ckpt + ".meta --ckpt " + ckpt + " --outputs probs:0 -o " + d + "/frozen.pb");
    INFO(r.output);
    REQUIRE(r.code == 0);
    r = graft::test::run_cli("run " + d + "/frozen.pb --feed x=@" + d + "/x.npy --fetch probs:0 --out " + d + "/f");
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(max_diff(graft::read_npy(d + "/f/probs_0.npy"), want) < 1e-6);
    r = graft::test::run_cli("unfreeze " + d + "/frozen.pb --resource -o " + d + "/retrain/model");
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(r.output.find("out/kernel") != std::string::npos);
    r = graft::test::run_cli("run " + d + "/retrain/model.meta --ckpt " + d + "/retrain/model --feed x=@" + d +
                             "/x.npy --fetch probs:0 --out " + d + "/u");
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(max_diff(graft::read_npy(d + "/u/probs_0.npy"), want) < 1e-6);
    // --saved-model: one directory that graft run restores by itself
    r = graft::test::run_cli("unfreeze " + d + "/frozen.pb --saved-model -o " + d + "/unfrozen_sm");
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(std::filesystem::exists(d + "/unfrozen_sm/saved_model.pb"));
    CHECK(graft::tf::load_saved_model(d + "/unfrozen_sm").meta_graphs.at(0).graph.at("out/kernel").op == "VariableV2");
    r = graft::test::run_cli("run " + d + "/unfrozen_sm --feed x=@" + d + "/x.npy --fetch probs:0 --out " + d + "/usm");
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(max_diff(graft::read_npy(d + "/usm/probs_0.npy"), want) < 1e-6);
    r = graft::test::run_cli("unfreeze " + d + "/frozen.pb --select '^out/' -o " + d + "/sel/model");
    CHECK(r.code == 0);
    CHECK(graft::tf::load_meta_graph(d + "/sel/model.meta").graph.at("dense/kernel").op == "Const");
    r = graft::test::run_cli("unfreeze " + d + "/frozen.pb --select 'zzz' -o " + d + "/bad/model");
    CHECK(r.code == 1);
    CHECK(r.output.find("zzz") != std::string::npos);
    r = graft::test::run_cli("freeze " + ckpt + ".meta --outputs nope -o " + d + "/bad.pb");
    CHECK(r.code == 1);
    CHECK(r.output.find("nope") != std::string::npos);
}

TEST_CASE("graft freeze of TF's half_plus_two SavedModel (serving_default outputs), unfreeze by name, run both") {
    using namespace freeze_t;
    auto sm = graft::test::fixture("tf-serving/saved_model_half_plus_two_cpu/00000123");
    GRAFT_REQUIRE_PATH(sm);
    auto d = graft::test::scratch("freeze_hp2").string();
    auto r = graft::test::run_cli("freeze " + sm.string() + " -o " + d + "/hp2.pb");
    INFO(r.output);
    REQUIRE(r.code == 0);
    graft::graph frozen = graft::tf::load_graph(d + "/hp2.pb");
    CHECK(frozen.at("a").op == "Const");
    CHECK(frozen.at("b").op == "Const");
    CHECK(!frozen.contains("c"));  // y = a*x + b does not need c
    r = graft::test::run_cli("run " + d + "/hp2.pb --feed x=[1,2,5] --fetch y:0 --out " + d + "/f");
    INFO(r.output);
    REQUIRE(r.code == 0);
    tensor want = tensor::from_vector<float>({3}, {2.5f, 3.0f, 4.5f});
    CHECK(max_diff(graft::read_npy(d + "/f/y_0.npy"), want) < 1e-6);
    // scalars are not picked by default; by name they are
    r = graft::test::run_cli("unfreeze " + d + "/hp2.pb -o " + d + "/u/model");
    CHECK(r.code == 1);
    r = graft::test::run_cli("unfreeze " + d + "/hp2.pb --name a --name b -o " + d + "/u/model");
    INFO(r.output);
    REQUIRE(r.code == 0);
    r = graft::test::run_cli("run " + d + "/u/model.meta --ckpt " + d + "/u/model --feed x=[1,2,5] --fetch y:0 --out " + d + "/u");
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(max_diff(graft::read_npy(d + "/u/y_0.npy"), want) < 1e-6);
}

TEST_CASE("freeze of TF2's half_plus_two SavedModel: the variables its StatefulPartitionedCall reads become Consts") {
    using namespace freeze_t;
    auto sm = graft::test::fixture("tf-serving/saved_model_half_plus_two_tf2_cpu/00000123");
    GRAFT_REQUIRE_PATH(sm);
    // the C++ call: the signature's output is the call node's output; the call is inlined
    graft::saved_model model = graft::tf::load_saved_model(sm.string());
    const graft::meta_graph& mg = graft::tf::select_meta_graph(model);
    std::string out = mg.signature("serving_default").outputs.begin()->second.name;
    CHECK(mg.graph.at(graft::endpoint::parse(out).node).op == "StatefulPartitionedCall");
    graft::graph frozen = graft::surgery::freeze(mg, (sm / "variables" / "variables").string(), {out});
    for (const auto& n : frozen) {
        CAPTURE(n.name);
        CHECK(n.op != "StatefulPartitionedCall");
        CHECK(n.op != "PartitionedCall");
        CHECK(n.op != "VarHandleOp");
        CHECK(n.op != "ReadVariableOp");
    }
    CHECK(frozen.at("a").op == "Const");
    CHECK(frozen.at("b").op == "Const");
    CHECK(frozen.library.functions.empty());  // every call inlined: the library goes
    std::string x_name = mg.signature("serving_default").inputs.begin()->second.name;
    graft::exec::session s(frozen);
    // the TF2 export's x is float32[1]: one value per run
    for (float v : {1.f, 2.f, 5.f}) {
        tensor y = s.run({{x_name, tensor::from_vector<float>({v})}}, {out})[0];
        CHECK(max_diff(y, tensor::from_vector<float>({0.5f * v + 2.f})) < 1e-6);
    }
    // the CLI, outputs from serving_default; the frozen GraphDef runs under graft run
    auto d = graft::test::scratch("freeze_hp2_tf2").string();
    auto r = graft::test::run_cli("freeze " + sm.string() + " -o " + d + "/hp2.pb");
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(r.output.find("froze 2 variables") != std::string::npos);
    r = graft::test::run_cli("run " + d + "/hp2.pb --feed " + x_name + "=[5] --fetch " + out + " --out " + d + "/f");
    INFO(r.output);
    REQUIRE(r.code == 0);
    std::string file = out;
    std::replace(file.begin(), file.end(), ':', '_');
    std::replace(file.begin(), file.end(), '/', '_');
    CHECK(max_diff(graft::read_npy(d + "/f/" + file + ".npy"), tensor::from_vector<float>({4.5f})) < 1e-6);
}
