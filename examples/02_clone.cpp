// 02_clone — clone the inference part of a trained model into a new scope, with each init policy.
//
// 1. "pre-train" a small MLP (x[?,3] -> 16 tanh -> 1) on generated data, save model.ckpt + .meta;
// 2. load the .meta and clone logits' ops (input x) three times:
//      copy  — the copy starts from the checkpoint's values: same outputs;
//      init  — the copy runs the original's initializers: fresh weights, different outputs;
//      share — the copy reads the original's variables;
// 3. fine-tune the `copy` clone on a shifted task: its loss drops while the original's weights stay
//    bit-identical (and the shared clone keeps matching the original).
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "graft/core.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "graft/surgery/clone.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/saver.hpp"
#include "graft/train/variables.hpp"

namespace {

using graft::dtype;
using graft::tensor;
namespace train = graft::train;
namespace surgery = graft::surgery;

/// x [n,3] in [-1,1]; y = sin(x0) + x1*x2 + shift.
void make_data(std::int64_t n, float shift, tensor& x, tensor& y) {
    x = tensor(dtype::float32, {n, 3});
    y = tensor(dtype::float32, {n, 1});
    for (std::int64_t i = 0; i < n; ++i) {
        float* r = x.data<float>() + i * 3;
        for (int j = 0; j < 3; ++j) r[j] = std::sin(0.91f * static_cast<float>(i * 3 + j) + 0.3f);
        y.data<float>()[i] = std::sin(r[0]) + r[1] * r[2] + shift;
    }
}

graft::endpoint random_init(const graft::graph_builder& b, std::vector<std::int32_t> shape, float limit) {
    auto s = b.constant(tensor::from_vector<std::int32_t>(shape), "shape");
    auto r = b.op("RandomUniform", {s}, {{"dtype", dtype::float32}, {"seed", std::int64_t{1}}, {"seed2", std::int64_t{2}}},
                  "RandomUniform");
    return b.op("Sub", {b.op("Mul", {r, b.scalar(2 * limit, "range")}, {}, "mul"), b.scalar(limit, "limit")}, {}, "sub");
}

/// mean((pred - y)^2) under `scope`.
graft::endpoint mse(graft::meta_graph& mg, const std::string& pred, const std::string& scope) {
    graft::graph_builder b(mg.graph, scope);
    auto sq = b.op("Square", {b.op("Sub", {graft::endpoint::parse(pred), graft::endpoint{"y", 0}})});
    return b.op("Mean", {sq, b.constant(tensor::from_vector<std::int32_t>({0, 1}), "axes")});
}

float scalar(const tensor& t) { return t.data<float>()[0]; }

/// "[a, b, ...]" on one line.
std::string flat(const tensor& t) {
    std::ostringstream os;
    os << "[";
    for (std::int64_t i = 0; i < t.num_elements(); ++i) os << (i ? ", " : "") << std::setprecision(6) << t.data<float>()[i];
    return os.str() + "]";
}

}  // namespace

int main() {
    namespace fs = std::filesystem;
    auto dir = fs::temp_directory_path() / "graft_example_02_clone";
    fs::remove_all(dir);
    fs::create_directories(dir);
    tensor x, y, x2, y2;
    make_data(256, 0.f, x, y);
    make_data(256, 0.5f, x2, y2);  // the fine-tuning task: shifted targets

    // 1. pre-train and save
    std::string ckpt;
    {
        graft::meta_graph mg;
        graft::graph_builder b(mg.graph);
        auto in = b.placeholder("x", dtype::float32, graft::shape{-1, 3});
        b.placeholder("y", dtype::float32, graft::shape{-1, 1});
        auto w1 = train::create_variable(mg, b, "hidden/kernel", dtype::float32, graft::shape{3, 16},
                                         random_init(b.at_scope("hidden/kernel/Initializer/random_uniform"), {3, 16}, 0.6f));
        auto b1 = train::create_filled_variable(mg, b, "hidden/bias", dtype::float32, graft::shape{16}, train::fill_kind::zeros);
        auto w2 = train::create_variable(mg, b, "out/kernel", dtype::float32, graft::shape{16, 1},
                                         random_init(b.at_scope("out/kernel/Initializer/random_uniform"), {16, 1}, 0.6f));
        auto b2 = train::create_filled_variable(mg, b, "out/bias", dtype::float32, graft::shape{1}, train::fill_kind::zeros);
        auto h = b.op("Tanh", {b.op("BiasAdd", {b.op("MatMul", {in, w1.value}), b1.value})}, {}, "hidden/Tanh");
        b.op("BiasAdd", {b.op("MatMul", {h, w2.value}), b2.value}, {}, "pred");
        auto loss = mse(mg, "pred:0", "loss");
        auto step = train::gradient_descent(0.2).minimize(mg, loss);
        auto init = train::global_variables_initializer(mg);
        train::saver sv(mg);
        graft::exec::session s(mg.graph);
        s.run({}, {}, {init});
        std::cout << "[pre-train] MLP 3-16-1 on y = sin(x0) + x1*x2\n";
        for (int i = 0; i <= 300; ++i) {
            if (i % 100 == 0) std::cout << "  step " << std::setw(3) << i << "  loss " << scalar(s.run({{"x", x}, {"y", y}}, {loss.str()})[0]) << "\n";
            if (i < 300) s.run({{"x", x}, {"y", y}}, {}, {step});
        }
        ckpt = sv.save(s, (dir / "model.ckpt").string());
        std::cout << "  saved " << ckpt << ".{meta,index,data-*}\n\n";
    }

    // 2. load the .meta, clone the inference part three times
    graft::meta_graph mg = graft::tf::load_meta_graph(ckpt + ".meta");
    surgery::clone_options o;
    o.inputs = {"x"};
    o.outputs = {"pred:0"};
    auto with = [&](std::string scope, surgery::init_policy p) {
        o.scope = std::move(scope);
        o.init = p;
        o.values = p == surgery::init_policy::copy ? surgery::checkpoint_values(ckpt) : surgery::value_source{};
        return surgery::clone(mg, o);
    };
    auto rc = with("copy", surgery::init_policy::copy);
    auto ri = with("fresh", surgery::init_policy::init);
    auto rs = with("tied", surgery::init_policy::share);
    std::cout << "[clone] pred:0 (input x) -> " << rc.outputs[0] << ", " << ri.outputs[0] << ", " << rs.outputs[0] << "\n";
    for (auto& [from, to] : rc.variable_map) std::cout << "  copy variable " << from << " -> " << to << "\n";
    std::cout << "  share made " << rs.variables.size() << " variables\n";
    auto cl = mse(mg, rc.outputs[0], "copy_loss");
    auto finetune = train::gradient_descent(0.2).minimize(mg, cl, train::var_list::names(rc.variables));

    graft::exec::session s(mg.graph);
    train::saver_options ro;
    ro.build_ops = false;
    train::saver(mg, ro).restore(s, ckpt, train::restore_mode::lenient);
    s.run({}, {}, {rc.init_op, ri.init_op});
    tensor probe = tensor::from_vector<float>({2, 3}, {0.5f, -0.2f, 0.8f, -0.7f, 0.1f, 0.3f});
    auto run_all = [&] {
        return s.run({{"x", probe}, {"copy/x", probe}, {"fresh/x", probe}, {"tied/x", probe}},
                     {"pred:0", rc.outputs[0], ri.outputs[0], rs.outputs[0]});
    };
    auto out = run_all();
    std::cout << "  outputs on 2 probes:\n";
    const char* names[] = {"original", "copy    ", "init    ", "share   "};
    for (int i = 0; i < 4; ++i) std::cout << "    " << names[i] << " " << flat(out[static_cast<std::size_t>(i)]) << "\n";
    bool copy_equal = graft::equal(out[0], out[1]), share_equal = graft::equal(out[0], out[3]);
    std::cout << "  copy == original: " << (copy_equal ? "yes" : "NO") << ";  share == original: " << (share_equal ? "yes" : "NO")
              << ";  init gives fresh weights: " << (graft::equal(out[0], out[2]) ? "NO" : "yes") << "\n\n";

    // 3. fine-tune the copy
    std::vector<tensor> before;
    for (auto& v : {"hidden/kernel", "hidden/bias", "out/kernel", "out/bias"}) before.push_back(s.variable_value(v).clone());
    auto copy_loss = [&] { return scalar(s.run({{"copy/x", x2}, {"y", y2}}, {cl.str()})[0]); };
    std::cout << "[fine-tune copy] on shifted targets (+0.5): loss " << copy_loss();
    for (int i = 0; i < 100; ++i) s.run({{"copy/x", x2}, {"y", y2}}, {}, {finetune});
    std::cout << " -> " << copy_loss() << "\n";
    bool unchanged = true;
    int k = 0;
    for (auto& v : {"hidden/kernel", "hidden/bias", "out/kernel", "out/bias"}) {
        bool same = graft::equal(before[static_cast<std::size_t>(k++)], s.variable_value(v));
        unchanged = unchanged && same;
        std::cout << "  original " << v << ": " << (same ? "unchanged" : "CHANGED") << ";  copy/" << v << ": "
                  << (graft::equal(s.variable_value(v), s.variable_value(std::string("copy/") + v)) ? "same" : "changed") << "\n";
    }
    auto after = run_all();
    std::cout << "  original output " << flat(after[0]) << " (before: " << flat(out[0]) << ")\n"
              << "  fine-tuned copy " << flat(after[1]) << "\n";
    return copy_equal && share_equal && unchanged && graft::equal(after[0], out[0]) ? 0 : 1;
}
