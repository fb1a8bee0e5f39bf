// `graft demo` — the embedded default run: needs no downloaded data.
//
// 1. a tensor through NumPy's .npy format and back;
// 2. a linear model built as a TF1 graph (ref variables, initializers, the gradient ops written
//    out by hand as TF's own ops, ApplyGradientDescent), trained on synthetic data by the executor;
// 3. saved as TensorFlow files — a SavedModel (saved_model.pb + variables/ bundle) and a frozen-free
//    GraphDef — then loaded back from disk and run through its serving signature.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <random>

#include "commands.hpp"
#include "graft/core.hpp"
#include "graft/exec/model.hpp"
#include "graft/tf/saved_model.hpp"

namespace {

using graft::dtype;
using graft::node;
using graft::tensor;

node placeholder(const std::string& name, const graft::shape& s) {
    node n(name, "Placeholder");
    n.attrs.set("dtype", dtype::float32);
    n.attrs.set("shape", s);
    return n;
}
node constant(const std::string& name, tensor v) {
    node n(name, "Const");
    n.attrs.set("dtype", v.type());
    n.attrs.set("value", std::move(v));
    return n;
}
node op(const std::string& name, const std::string& type, std::vector<graft::endpoint> in) {
    node n(name, type, std::move(in));
    n.attrs.set("T", dtype::float32);
    return n;
}
/// A TF1 ref variable: VariableV2 + Assign(initial) + Identity "/read", as tf.Variable builds it.
void add_variable(graft::graph& g, const std::string& name, const tensor& initial) {
    node v(name, "VariableV2");
    v.attrs.set("dtype", dtype::float32);
    v.attrs.set("shape", initial.shape());
    v.attrs.set("container", std::string());
    v.attrs.set("shared_name", std::string());
    g.add_node(std::move(v));
    g.add_node(constant(name + "/initial_value", initial));
    node a(name + "/Assign", "Assign", {{name, 0}, {name + "/initial_value", 0}});
    a.attrs.set("T", dtype::float32);
    a.attrs.set("validate_shape", true);
    a.attrs.set("use_locking", true);
    g.add_node(std::move(a));
    g.add_node(op(name + "/read", "Identity", {{name, 0}}));
}

/// pred = x·W + b; loss = mean((pred - y)^2); one gradient-descent step per `train` run.
graft::graph linear_model_graph(std::int64_t features, std::int64_t batch, float learning_rate) {
    graft::graph g;
    g.add_node(placeholder("x", graft::shape{-1, features}));
    g.add_node(placeholder("y", graft::shape{-1, 1}));
    add_variable(g, "W", tensor(dtype::float32, {features, 1}));
    add_variable(g, "b", tensor(dtype::float32, {1}));
    g.add_node(op("MatMul", "MatMul", {{"x", 0}, {"W/read", 0}}));
    g.add_node(op("pred", "BiasAdd", {{"MatMul", 0}, {"b/read", 0}}));
    g.add_node(op("err", "Sub", {{"pred", 0}, {"y", 0}}));
    g.add_node(op("sq", "Square", {{"err", 0}}));
    g.add_node(constant("axes", tensor::from_vector<std::int32_t>({0, 1})));
    node loss("loss", "Mean", {{"sq", 0}, {"axes", 0}});
    loss.attrs.set("T", dtype::float32);
    loss.attrs.set("Tidx", dtype::int32);
    loss.attrs.set("keep_dims", false);
    g.add_node(std::move(loss));
    // d loss / d pred = 2 (pred - y) / N, then the products TF's MatMul and BiasAdd gradients use.
    g.add_node(constant("gradients/scale", tensor::scalar_of(2.f / static_cast<float>(batch))));
    g.add_node(op("gradients/dpred", "Mul", {{"err", 0}, {"gradients/scale", 0}}));
    node dw("gradients/dW", "MatMul", {{"x", 0}, {"gradients/dpred", 0}});
    dw.attrs.set("T", dtype::float32);
    dw.attrs.set("transpose_a", true);
    dw.attrs.set("transpose_b", false);
    g.add_node(std::move(dw));
    g.add_node(op("gradients/db", "BiasAddGrad", {{"gradients/dpred", 0}}));
    g.add_node(constant("learning_rate", tensor::scalar_of(learning_rate)));
    g.add_node(op("train/W", "ApplyGradientDescent", {{"W", 0}, {"learning_rate", 0}, {"gradients/dW", 0}}));
    g.add_node(op("train/b", "ApplyGradientDescent", {{"b", 0}, {"learning_rate", 0}, {"gradients/db", 0}}));
    node train("train", "NoOp");
    train.control_inputs = {"train/W", "train/b"};
    g.add_node(std::move(train));
    node init("init", "NoOp");
    init.control_inputs = {"W/Assign", "b/Assign"};
    g.add_node(std::move(init));
    return g;
}

void run_demo(const std::string& dir) {
    namespace fs = std::filesystem;
    fs::create_directories(dir);
    std::cout << "graft " << graft::version << " demo (files in " << dir << ")\n\n";

    // 1. Tensors through NumPy's .npy format and back.
    tensor w(dtype::float32, {2, 3});
    auto m = w.matrix<float>();
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j) m(i, j) = 0.5f * static_cast<float>(i * 3 + j) - 1.0f;
    auto path = (fs::path(dir) / "w.npy").string();
    graft::write_npy(path, w);
    tensor r = graft::read_npy(path);
    std::cout << "[tensor] wrote " << w.describe() << " to " << path << ", read back " << r.describe() << ": "
              << (graft::equal(w, r) ? "identical" : "DIFFERENT") << "\n"
              << graft::to_string(r) << "\n"
              << "  python: numpy.load('" << path << "')\n\n";
    if (!graft::equal(w, r)) throw graft::error("demo: .npy round trip changed the tensor");

    // 2. Build and train y = x·W + b on y = 3 x0 - 2 x1 + 0.5 (+ a little noise).
    constexpr std::int64_t n = 256;
    std::mt19937 rng(2026);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    tensor x(dtype::float32, {n, 2}), y(dtype::float32, {n, 1});
    for (std::int64_t i = 0; i < n; ++i) {
        float a = u(rng), b = u(rng);
        x.matrix<float>()(i, 0) = a;
        x.matrix<float>()(i, 1) = b;
        y.matrix<float>()(i, 0) = 3.f * a - 2.f * b + 0.5f + 0.01f * u(rng);
    }
    graft::graph g = linear_model_graph(2, n, 0.3f);
    graft::exec::session s(g);
    s.run({}, {}, {"init"});
    std::cout << "[train] " << g.size() << "-node TF1 graph (VariableV2, MatMul, BiasAdd, Mean, BiasAddGrad, "
              << "ApplyGradientDescent); 100 steps of gradient descent:\n";
    for (int step = 0; step <= 100; ++step) {
        if (step % 25 == 0) {
            float loss = s.run({{"x", x}, {"y", y}}, {"loss"})[0].scalar<float>()();
            std::cout << "  step " << step << "  loss " << loss << "\n";
        }
        if (step < 100) s.run({{"x", x}, {"y", y}}, {}, {"train"});
    }
    tensor W = s.variable_value("W"), b = s.variable_value("b");
    std::cout << "  W = " << graft::to_string(W) << "  b = " << graft::to_string(b) << "  (truth: [3,-2], 0.5)\n\n";
    if (std::abs(W.flat<float>()(0) - 3.f) > 0.05f || std::abs(b.flat<float>()(0) - 0.5f) > 0.05f) {
        throw graft::error("demo: training did not converge");
    }

    // 3. Save as TensorFlow files: a SavedModel with a serving signature, and the GraphDef.
    graft::meta_graph mg;
    mg.graph = g;
    graft::signature_def sig;
    sig.method_name = "tensorflow/serving/predict";
    sig.inputs["x"] = graft::tensor_info{"x:0", dtype::float32, graft::shape{-1, 2}};
    sig.outputs["y"] = graft::tensor_info{"pred:0", dtype::float32, graft::shape{-1, 1}};
    mg.signatures["serving_default"] = sig;
    auto sm_dir = (fs::path(dir) / "linear_model").string();
    graft::tf::write_saved_model(sm_dir, mg, {{"W", W}, {"b", b}});
    auto pb = (fs::path(dir) / "linear_model.pbtxt").string();
    graft::tf::write_graph(g, pb);
    std::cout << "[save] SavedModel " << sm_dir << " (saved_model.pb, variables/variables.{index,data-00000-of-00001})\n"
              << "       GraphDef  " << pb << " (text)\n\n";

    // Load from disk (variables restored by checkpoint key) and predict through the signature.
    auto loaded = graft::exec::load_model(sm_dir);
    auto runner = loaded.runner("serving_default");
    tensor probe = tensor::from_vector<float>({3, 2}, {1, 0, 0, 1, 0.5f, 0.5f});
    tensor got = runner.run({{"x", probe}}, {"y"})[0];
    tensor want = s.run({{"x", probe}}, {"pred"})[0];
    std::cout << "[load] " << sm_dir << ": " << loaded.variables.size() << " variables restored; predict x = "
              << graft::to_string(probe) << "\n  y = " << graft::to_string(got) << " (in-memory model: "
              << (graft::equal(got, want) ? "identical" : "DIFFERENT") << ")\n";
    if (!graft::equal(got, want)) throw graft::error("demo: the reloaded model predicts differently");
    std::cout << "  try: graft inspect " << sm_dir << " ; graft ckpt ls " << sm_dir
              << " ; graft run " << sm_dir << " --signature serving_default --feed x=@" << dir << "/x.npy\n";
    graft::write_npy((fs::path(dir) / "x.npy").string(), probe);
}

void add_demo(CLI::App& app) {
    auto* cmd = app.add_subcommand("demo", "Run the built-in demo (no downloaded data needed)");
    static std::string dir = "graft-demo";
    cmd->add_option("--dir", dir, "Folder for the files the demo writes")->capture_default_str();
    cmd->callback([] { run_demo(dir); });
}

graft::cli::registrar reg(1000, &add_demo);

}  // namespace
