// Issue 6 end to end: autodiff + optimizers + Saver on real files.
//  - Fine-tuning a TF checkpoint: mnist-softmax/train_model.ckpt restored, GradientDescent(0.5),
//    batch 100, 5 epochs on the first 5,000 MNIST test images, evaluated on the other 5,000, and
//    checked against the same training written out by hand in float64.
//  - Resuming with optimizer state: Adam, save, continue in a new process, bit-for-bit equal to an
//    uninterrupted run.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "graft/autodiff/gradients.hpp"
#include "graft/formats/npy.hpp"
#include "graft/formats/idx.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/train/loop.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/saver.hpp"
#include "support/fixtures.hpp"

namespace fs = std::filesystem;
using graft::dtype;
using graft::endpoint;
using graft::tensor;

namespace {

/// Labels [N] (uint8) -> one-hot float32 [N,10].
tensor one_hot10(const tensor& labels) {
    auto n = labels.dim(0);
    tensor out(dtype::float32, {n, 10});
    const auto* l = labels.data<std::uint8_t>();
    auto* o = out.data<float>();
    for (std::int64_t i = 0; i < n; ++i) o[i * 10 + l[i]] = 1.0f;
    return out;
}

/// Share of rows whose argmax of logits equals the label.
double accuracy(const tensor& logits, const tensor& labels) {
    auto n = logits.dim(0);
    const float* p = logits.data<float>();
    const auto* l = labels.data<std::uint8_t>();
    std::int64_t correct = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        int best = 0;
        for (int k = 1; k < 10; ++k) if (p[i * 10 + k] > p[i * 10 + best]) best = k;
        correct += best == l[i];
    }
    return static_cast<double>(correct) / static_cast<double>(n);
}

/// The model of mnist-softmax/train_model.ckpt: logits = features · Variable + Variable_1, with a
/// softmax cross-entropy loss, as the script that trained it built it.
struct softmax_model {
    graft::meta_graph mg;
    endpoint logits, loss;
    std::string train, init;
};

softmax_model make_softmax_model(double learning_rate) {
    softmax_model m;
    graft::graph_builder b(m.mg.graph);
    auto x = b.placeholder("features", dtype::float32, graft::shape{-1, 784});
    auto y = b.placeholder("labels", dtype::float32, graft::shape{-1, 10});
    auto w = graft::train::create_variable(m.mg, b, "Variable", tensor(dtype::float32, {784, 10}));
    auto bias = graft::train::create_variable(m.mg, b, "Variable_1", tensor(dtype::float32, {10}));
    m.logits = b.op("Add", {b.op("MatMul", {x, w.value}), bias.value}, {}, "logits");
    auto xent = b.op_n("SoftmaxCrossEntropyWithLogits", {m.logits, y});
    m.loss = b.op("Mean", {xent[0], b.constant(tensor::from_vector<std::int32_t>({0}))}, {}, "loss");
    graft::train::gradient_descent opt(learning_rate);
    m.train = opt.minimize(m.mg, m.loss);
    m.init = graft::train::global_variables_initializer(m.mg);
    return m;
}

/// The same fine-tuning written out by hand in float64 (softmax, mean cross-entropy over the batch,
/// its gradient, plain SGD): the independent reference graft's graph-built training must match.
void reference_softmax_sgd(const tensor& x, const tensor& labels, std::vector<double>& w, std::vector<double>& b,
                           double lr, int batch, int epochs) {
    const float* px = x.data<float>();
    const auto* pl = labels.data<std::uint8_t>();
    auto rows = static_cast<int>(x.dim(0));
    std::vector<double> gw(w.size()), gb(10), z(10);
    for (int ep = 0; ep < epochs; ++ep) {
        for (int start = 0; start + batch <= rows; start += batch) {
            std::fill(gw.begin(), gw.end(), 0.0);
            std::fill(gb.begin(), gb.end(), 0.0);
            for (int i = start; i < start + batch; ++i) {
                const float* xi = px + static_cast<std::ptrdiff_t>(i) * 784;
                double mx = -1e300, sum = 0;
                for (int k = 0; k < 10; ++k) {
                    z[k] = b[k];
                    for (int j = 0; j < 784; ++j) z[k] += xi[j] * w[j * 10 + k];
                    mx = std::max(mx, z[k]);
                }
                for (int k = 0; k < 10; ++k) sum += std::exp(z[k] - mx);
                for (int k = 0; k < 10; ++k) {
                    double g = (std::exp(z[k] - mx) / sum - (k == pl[i] ? 1.0 : 0.0)) / batch;
                    gb[k] += g;
                    for (int j = 0; j < 784; ++j) gw[j * 10 + k] += xi[j] * g;
                }
            }
            for (std::size_t q = 0; q < w.size(); ++q) w[q] -= lr * gw[q];
            for (int k = 0; k < 10; ++k) b[k] -= lr * gb[k];
        }
    }
}

// ---------------------------------------------------------------- Adam resume

/// A small regression model trained by Adam with a global step. Same graph in every process.
struct adam_model {
    graft::meta_graph mg;
    std::string train, init;
    tensor x, y;
};

adam_model make_adam_model() {
    adam_model m;
    graft::graph_builder b(m.mg.graph);
    std::vector<float> xs(16 * 4), ys(16), w0(4 * 3), w1(3);
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = std::sin(0.37f * static_cast<float>(i)) * 2.0f;
    for (std::size_t i = 0; i < ys.size(); ++i) ys[i] = std::cos(0.91f * static_cast<float>(i));
    for (std::size_t i = 0; i < w0.size(); ++i) w0[i] = 0.1f * static_cast<float>(i % 5) - 0.2f;
    for (std::size_t i = 0; i < w1.size(); ++i) w1[i] = 0.3f - 0.2f * static_cast<float>(i);
    m.x = tensor::from_vector<float>({16, 4}, xs);
    m.y = tensor::from_vector<float>({16, 1}, ys);
    auto x = b.placeholder("x", dtype::float32, graft::shape{-1, 4});
    auto y = b.placeholder("y", dtype::float32, graft::shape{-1, 1});
    auto h = b.sub("hidden");
    auto k0 = graft::train::create_variable(m.mg, h, "kernel", tensor::from_vector<float>({4, 3}, w0));
    auto hid = h.op("Tanh", {h.op("MatMul", {x, k0.value})});
    auto o = b.sub("out");
    auto k1 = graft::train::create_variable(m.mg, o, "kernel", tensor::from_vector<float>({3, 1}, w1));
    auto b1 = graft::train::create_variable(m.mg, o, "bias", tensor(dtype::float32, {1}));
    auto pred = o.op("BiasAdd", {o.op("MatMul", {hid, k1.value}), b1.value});
    auto loss = b.op("Mean", {b.op("SquaredDifference", {pred, y}), b.constant(tensor::from_vector<std::int32_t>({0, 1}))},
                     {}, "loss");
    auto step = graft::train::get_or_create_global_step(m.mg);
    graft::train::adam opt(0.05);
    m.train = opt.minimize(m.mg, loss, graft::train::var_list::trainable(), step);
    m.init = graft::train::global_variables_initializer(m.mg);
    return m;
}

const std::vector<std::string> adam_state = {"hidden/kernel", "out/kernel", "out/bias",
                                             "hidden/kernel/Adam", "hidden/kernel/Adam_1", "out/kernel/Adam_1",
                                             "beta1_power", "beta2_power", "global_step"};

void run_steps(graft::exec::session& s, adam_model& m, int n) {
    for (int i = 0; i < n; ++i) s.run({{"x", m.x}, {"y", m.y}}, {}, {m.train});
}

/// Where the child leaves variable `v` for the parent: "<dir>/hidden_kernel_Adam.npy".
std::string state_file(const fs::path& dir, std::string v) {
    std::replace(v.begin(), v.end(), '/', '_');
    return (dir / (v + ".npy")).string();
}

bool same_bits(const tensor& a, const tensor& b) {
    return a.type() == b.type() && a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

}  // namespace

TEST_CASE("fine-tuning mnist-softmax/train_model.ckpt on MNIST: 0.785 -> 0.834 as a float64 reference, reload bit for bit") {
    auto ckpt = graft::test::fixture("mnist-softmax/train_model.ckpt");
    auto images_file = graft::test::dataset("mnist/t10k-images-idx3-ubyte.gz");
    auto labels_file = graft::test::dataset("mnist/t10k-labels-idx1-ubyte.gz");
    GRAFT_REQUIRE_PATH(ckpt.string() + ".index");
    GRAFT_REQUIRE_PATH(images_file);
    GRAFT_REQUIRE_PATH(labels_file);
    auto features = graft::data::mnist_images_as_features(graft::data::read_idx(images_file.string()));
    auto labels = graft::data::read_idx(labels_file.string());
    REQUIRE(features.dim(0) == 10000);
    tensor train_x = features.slice(0, 5000).clone(), eval_x = features.slice(5000, 5000).clone();
    tensor train_l = labels.slice(0, 5000).clone(), eval_l = labels.slice(5000, 5000).clone();
    tensor train_y = one_hot10(train_l);

    auto m = make_softmax_model(0.5);
    graft::train::saver sv(m.mg);
    graft::exec::session s(m.mg.graph);
    s.run({}, {}, {m.init});
    auto rep = sv.restore(s, ckpt.string());
    CHECK(rep.missing.empty());
    auto before = accuracy(s.run({{"features", eval_x}}, {m.logits.str()})[0], eval_l);
    MESSAGE("restored accuracy on images 5000..9999: " << before);
    CHECK(before == doctest::Approx(0.7854).epsilon(1e-9));  // 3927 of 5000 (0.7357 over all 10,000)

    std::vector<double> ref_w(s.variable_value("Variable").data<float>(), s.variable_value("Variable").data<float>() + 7840);
    std::vector<double> ref_b(s.variable_value("Variable_1").data<float>(), s.variable_value("Variable_1").data<float>() + 10);

    graft::train::batches data({train_x, train_y}, {.batch_size = 100, .shuffle = false, .epochs = 5});
    CHECK(data.total_steps() == 250);
    float first_loss = 0, last_loss = 0;
    for (const auto& bt : data) {
        auto out = s.run({{"features", bt.tensors[0]}, {"labels", bt.tensors[1]}}, {m.loss.str()}, {m.train});
        float l = out[0].data<float>()[0];
        if (bt.step == 0) first_loss = l;
        last_loss = l;
    }
    CHECK(last_loss < 0.6f * first_loss);
    auto logits_after = s.run({{"features", eval_x}}, {m.logits.str()})[0];
    auto after = accuracy(logits_after, eval_l);
    MESSAGE("fine-tuned accuracy on images 5000..9999: " << after << " (batch loss " << first_loss << " -> " << last_loss << ")");

    // The same 250 steps by hand in float64 land on the same weights and the same accuracy. (This
    // procedure tops out at 0.834 for softmax regression: the "above 0.85" is not reached
    // by the reference either, with or without shuffling.)
    reference_softmax_sgd(train_x, train_l, ref_w, ref_b, 0.5, 100, 5);
    tensor w_after = s.variable_value("Variable");
    double max_dw = 0;
    for (int q = 0; q < 7840; ++q) max_dw = std::max(max_dw, std::abs(w_after.data<float>()[q] - ref_w[static_cast<std::size_t>(q)]));
    CHECK(max_dw < 1e-3);
    CHECK(after > before + 0.04);
    CHECK(after == doctest::Approx(0.8338).epsilon(0.003));

    // Save, then a new session over the graph read back from the .meta restores the same values.
    auto dir = graft::test::scratch("finetune_mnist");
    std::string prefix = sv.save(s, (dir / "model.ckpt").string(), 250);
    CHECK(prefix == (dir / "model.ckpt-250").string());
    auto mg2 = graft::tf::load_meta_graph(prefix + ".meta");
    graft::exec::session s2(mg2.graph);
    REQUIRE(mg2.saver);
    s2.run({{mg2.saver->filename_tensor_name, tensor::scalar_of(prefix)}}, {}, {mg2.saver->restore_op_name});
    auto logits_reloaded = s2.run({{"features", eval_x}}, {m.logits.str()})[0];
    CHECK(same_bits(logits_after, logits_reloaded));
}

TEST_CASE("Adam resume child: continue a saved run (runs only as the child of the next test)") {
    const char* dir = std::getenv("GRAFT_ADAM_RESUME_DIR");
    if (!dir) return;
    auto m = make_adam_model();
    graft::train::saver sv(m.mg);
    graft::exec::session s(m.mg.graph);
    auto latest = graft::train::latest_checkpoint(dir);
    REQUIRE(latest);
    sv.restore(s, *latest);
    run_steps(s, m, 10);
    for (auto& v : adam_state) graft::write_npy(state_file(dir, v), s.variable_value(v));
}

TEST_CASE("Adam with state saved and resumed in a new process equals an uninterrupted run bit for bit") {
    // Uninterrupted: 20 steps.
    auto m = make_adam_model();
    graft::exec::session whole(m.mg.graph);
    whole.run({}, {}, {m.init});
    run_steps(whole, m, 20);
    CHECK(whole.variable_value("global_step").data<std::int64_t>()[0] == 20);

    // Interrupted: 10 steps, save, another process restores and runs 10 more.
    auto dir = graft::test::scratch("adam_resume");
    {
        auto m2 = make_adam_model();
        graft::train::saver sv(m2.mg);
        graft::exec::session s(m2.mg.graph);
        s.run({}, {}, {m2.init});
        run_steps(s, m2, 10);
        auto p = sv.save(s, (dir / "model.ckpt").string(), 10);
        CHECK(fs::exists(p + ".index"));
        graft::tf::checkpoint_reader r(p);
        for (auto& v : adam_state) CHECK_MESSAGE(r.contains(v), "checkpoint lacks " << v);
    }
    auto self = fs::read_symlink("/proc/self/exe").string();
    auto res = graft::test::run_command("GRAFT_ADAM_RESUME_DIR=" + dir.string() + " " + self +
                                        " --test-case='Adam resume child*' --no-intro --no-version");
    INFO(res.output);
    REQUIRE(res.code == 0);
    for (auto& v : adam_state) {
        std::string file = state_file(dir, v);
        REQUIRE(fs::exists(file));
        auto resumed = graft::read_npy(file);
        CHECK_MESSAGE(same_bits(whole.variable_value(v), resumed), v << " differs after resume");
    }
    // And the run moved: 20 Adam steps changed the kernel.
    CHECK(whole.variable_value("out/bias").data<float>()[0] != 0.0f);
}
