// `graft demo` — the embedded default run: needs no downloaded data.
//
// 1. a tensor through NumPy's .npy format and back;
// 2. a linear model built as a TF1 graph from C++ (graph_builder, ref variables), its gradients
//    made by graft's autodiff and applied by GradientDescent (TF1's ApplyGradientDescent ops),
//    trained on synthetic data by the executor: the loss printed going down, a TF checkpoint
//    (model.ckpt-100 + .meta + `checkpoint`) saved by the Saver, the loss curve and the graph
//    written as a TensorBoard event file;
// 3. saved as TensorFlow files — a SavedModel (saved_model.pb + variables/ bundle) and a GraphDef —
//    then loaded back from disk and run through its serving signature.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <random>

#include "commands.hpp"
#include "graft/core.hpp"
#include "graft/exec/model.hpp"
#include "graft/graph/build.hpp"
#include "graft/formats/tf_graph/saved_model.hpp"
#include "graft/train/loop.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/saver.hpp"
#include "graft/formats/tf_graph/events.hpp"

namespace graft_cmd_demo {  // named, not anonymous: the CLI builds as one unity translation unit

using graft::dtype;
using graft::tensor;

/// pred = x·W + b; loss = mean((pred - y)^2); `train` = GradientDescent(learning_rate) on the
/// gradients graft's autodiff builds, with a global step.
struct linear_model {
    graft::meta_graph mg;
    graft::endpoint pred, loss;
    std::string train, init;
};

linear_model make_linear_model(std::int64_t features, float learning_rate) {
    linear_model m;
    graft::graph_builder b(m.mg.graph);
    auto x = b.placeholder("x", dtype::float32, graft::shape{-1, features});
    auto y = b.placeholder("y", dtype::float32, graft::shape{-1, 1});
    auto w = graft::train::create_variable(m.mg, b, "W", tensor(dtype::float32, {features, 1}));
    auto bias = graft::train::create_variable(m.mg, b, "b", tensor(dtype::float32, {1}));
    m.pred = b.op("BiasAdd", {b.op("MatMul", {x, w.value}), bias.value}, {}, "pred");
    auto sq = b.op("Square", {b.op("Sub", {m.pred, y}, {}, "err")}, {}, "sq");
    m.loss = b.op("Mean", {sq, b.constant(tensor::from_vector<std::int32_t>({0, 1}), "axes")}, {}, "loss");
    auto step = graft::train::get_or_create_global_step(m.mg);
    graft::train::gradient_descent opt(learning_rate);
    m.train = opt.minimize(m.mg, m.loss, graft::train::var_list::trainable(), step);
    m.init = graft::train::global_variables_initializer(m.mg);
    return m;
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
    auto lm = make_linear_model(2, 0.3f);
    graft::train::saver_options keep_two;
    keep_two.max_to_keep = 2;
    graft::train::saver saver(lm.mg, keep_two);  // adds TF's save/restore ops
    graft::exec::session s(lm.mg.graph);
    s.run({}, {}, {lm.init});
    auto logs = (fs::path(dir) / "logs").string();
    graft::train::summary_writer events(logs);
    events.add_graph(lm.mg.graph);
    std::cout << "[train] " << lm.mg.graph.size() << "-node TF1 graph built from C++; gradients by graft::autodiff "
              << "(gradients/...), GradientDescent(0.3) with a global step; 100 steps:\n";
    for (int step = 0; step <= 100; ++step) {
        float loss = s.run({{"x", x}, {"y", y}}, {lm.loss.str()})[0].scalar<float>()();
        events.add_scalar("loss", loss, step);
        if (step % 25 == 0) std::cout << "  step " << step << "  loss " << loss << "\n";
        if (step < 100) s.run({{"x", x}, {"y", y}}, {}, {lm.train});
    }
    tensor W = s.variable_value("W"), b = s.variable_value("b");
    std::cout << "  W = " << graft::to_string(W) << "  b = " << graft::to_string(b) << "  (truth: [3,-2], 0.5)\n";
    if (std::abs(W.flat<float>()(0) - 3.f) > 0.05f || std::abs(b.flat<float>()(0) - 0.5f) > 0.05f) {
        throw graft::error("demo: training did not converge");
    }
    auto ckpt = saver.save(s, (fs::path(dir) / "train" / "model.ckpt").string(), graft::train::get_global_step(lm.mg).value());
    std::cout << "[checkpoint] " << ckpt << ".{index,data-00000-of-00001,meta} (+ checkpoint state file); "
              << "TensorBoard: tensorboard --logdir " << logs << "\n\n";
    graft::graph& g = lm.mg.graph;

    // 3. Save as TensorFlow files: a SavedModel with a serving signature, and the GraphDef.
    graft::meta_graph mg = lm.mg;  // graph, variable collections and the Saver's SaverDef
    graft::signature_def sig;
    sig.method_name = "tensorflow/serving/predict";
    auto dense_info = [](std::string name, graft::shape shape) {
        graft::tensor_info ti;
        ti.name = std::move(name);
        ti.dtype = dtype::float32;
        ti.shape = std::move(shape);
        return ti;
    };
    sig.inputs["x"] = dense_info("x:0", graft::shape{-1, 2});
    sig.outputs["y"] = dense_info("pred:0", graft::shape{-1, 1});
    mg.signatures["serving_default"] = sig;
    auto sm_dir = (fs::path(dir) / "linear_model").string();
    graft::tf::write_saved_model(sm_dir, mg, {{"W", W}, {"b", b}, {"global_step", s.variable_value("global_step")}});
    auto pb = (fs::path(dir) / "linear_model.pbtxt").string();
    graft::tf::write_graph(g, pb);
    std::cout << "[save] SavedModel " << sm_dir << " (saved_model.pb, variables/variables.{index,data-00000-of-00001})\n"
              << "       GraphDef  " << pb << " (text)\n\n";

    // Load from disk (variables restored by checkpoint key) and predict through the signature.
    auto loaded = graft::exec::load_model(sm_dir);
    auto runner = loaded.runner("serving_default");
    tensor probe = tensor::from_vector<float>({3, 2}, {1, 0, 0, 1, 0.5f, 0.5f});
    tensor got = runner.run({{"x", probe}}, {"y"})[0];
    tensor want = s.run({{"x", probe}}, {lm.pred.str()})[0];
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
