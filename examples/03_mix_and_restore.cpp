// 03_mix_and_restore: several models in one graph. One small regression model is trained with
// graft and saved (.meta + checkpoint); two copies of its MetaGraph are imported under "copy1" and
// "copy2" (no name or collection clashes), both initialize through their own init ops and both
// restore from the one original checkpoint through prefix maps. Then: a per-model saver over one
// scope, a partial restore that reports missing and unused names, and a restore into another
// scope with an {"old/": "new/"} map.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/surgery/import.hpp"
#include "graft/surgery/restore.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/saver.hpp"

using graft::dtype;
using graft::tensor;
namespace train = graft::train;
namespace surgery = graft::surgery;

namespace {

tensor grid(int n) {  // x in [-1,1]^2
    tensor t(dtype::float32, {n, 2});
    for (int i = 0; i < n; ++i) {
        t.data<float>()[i * 2] = -1.f + 2.f * static_cast<float>(i % 8) / 7.f;
        t.data<float>()[i * 2 + 1] = -1.f + 2.f * static_cast<float>(i / 8 % 8) / 7.f;
    }
    return t;
}

tensor target(const tensor& x) {  // y = sin-ish bump
    int n = static_cast<int>(x.dim(0));
    tensor t(dtype::float32, {n, 1});
    for (int i = 0; i < n; ++i) {
        float a = x.data<float>()[i * 2], b = x.data<float>()[i * 2 + 1];
        t.data<float>()[i] = a * b + 0.5f * a;
    }
    return t;
}

float first(const tensor& t) { return t.data<float>()[0]; }

void print_report(const char* what, const surgery::scoped_restore_report& r) {
    std::printf("  %s: restored %zu, missing [", what, r.restored.size());
    for (auto& m : r.missing) std::printf(" %s", m.c_str());
    std::printf(" ], unused keys [");
    for (auto& u : r.unused) std::printf(" %s", u.c_str());
    std::printf(" ]\n");
}

}  // namespace

int main() {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / "graft_example_03_mix";
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::string ckpt = (dir / "model.ckpt").string();

    std::printf("1. a pre-trained model\n");
    {
        graft::meta_graph mg;
        graft::graph_builder b(mg.graph);
        auto x = b.placeholder("x", dtype::float32, graft::shape{-1, 2});
        auto t = b.placeholder("t", dtype::float32, graft::shape{-1, 1});
        auto d1 = b.at_scope("hidden"), d2 = b.at_scope("out");
        auto w1 = train::create_variable(mg, d1, "kernel", tensor::from_vector<float>({2, 6}, {0.3f, -0.2f, 0.5f, 0.1f, -0.4f, 0.2f,
                                                                                             0.1f, 0.4f, -0.3f, 0.2f, 0.3f, -0.5f}));
        auto b1 = train::create_variable(mg, d1, "bias", tensor::from_vector<float>({0.f, 0.f, 0.f, 0.f, 0.f, 0.f}));
        auto w2 = train::create_variable(mg, d2, "kernel", tensor::from_vector<float>({6, 1}, {0.2f, -0.1f, 0.3f, 0.1f, -0.2f, 0.25f}));
        auto h = b.op("Tanh", {b.op("BiasAdd", {b.op("MatMul", {x, w1.value}), b1.value})});
        auto y = b.op("MatMul", {h, w2.value}, {}, "y");
        auto loss = b.op("Mean", {b.op("Square", {b.op("Sub", {y, t})}), b.constant(tensor::from_vector<std::int32_t>({0, 1}))}, {}, "loss");
        train::adam opt(0.05);
        std::string op = opt.minimize(mg, loss, train::var_list::trainable(), train::get_or_create_global_step(mg));
        std::string init = train::global_variables_initializer(mg);
        train::saver sv(mg);
        graft::exec::session s(mg.graph);
        s.run({}, {}, {init});
        tensor xs = grid(64), ts = target(xs);
        for (int i = 0; i <= 300; ++i) {
            auto l = s.run({{"x:0", xs}, {"t:0", ts}}, {"loss:0"}, i < 300 ? std::vector<std::string>{op} : std::vector<std::string>{})[0];
            if (i % 100 == 0) std::printf("  step %3d loss %.5f\n", i, first(l));
        }
        std::string saved = sv.save(s, ckpt);
        std::printf("  saved %s (%zu tensors: weights, Adam slots, global_step)\n", saved.c_str(),
                    graft::tf::checkpoint_reader(saved).keys().size());
    }
    auto src = graft::tf::load_meta_graph(ckpt + ".meta");
    tensor x = grid(4);
    graft::exec::session orig(src.graph);
    surgery::restore_scoped(orig, src, "", ckpt, {});
    tensor want = orig.run({{"x:0", x}}, {"y:0"})[0];

    std::printf("\n2. two copies of the same MetaGraph under copy1/ and copy2/\n");
    graft::meta_graph mg;
    auto r1 = surgery::import_meta_graph(mg, src, surgery::under("copy1"));
    auto r2 = surgery::import_meta_graph(mg, src, surgery::under("copy2"));
    std::printf("  %zu nodes; 'variables' collection: %zu entries; init ops %s, %s; savers %s, %s\n", mg.graph.size(),
                mg.collections.at("variables").variables.size(), r1.init_op.c_str(), r2.init_op.c_str(),
                r1.saver->restore_op_name.c_str(), r2.saver->restore_op_name.c_str());
    auto extra = train::create_variable(mg, graft::graph_builder(mg.graph).at_scope("copy2"), "calibration", tensor::scalar_of(1.0f));
    train::saver per_model(mg, surgery::scoped_saver_options("copy1"));
    graft::exec::session s(mg.graph);
    s.run({}, {}, {r1.init_op, r2.init_op});
    std::printf("  after their init ops:   copy1 y[0] = %.5f, copy2 y[0] = %.5f\n", first(s.run({{"copy1/x:0", x}}, {"copy1/y:0"})[0]),
                first(s.run({{"copy2/x:0", x}}, {"copy2/y:0"})[0]));

    std::printf("\n3. both restore from the one original checkpoint\n");
    print_report("copy1 {\"\": \"copy1/\"}", surgery::restore_scoped(s, r1.variables, ckpt, surgery::into_scope("copy1")));
    print_report("copy2 {\"\": \"copy2/\"}", surgery::restore_scoped(s, r2.variables, ckpt, surgery::into_scope("copy2")));
    tensor y1 = s.run({{"copy1/x:0", x}}, {"copy1/y:0"})[0], y2 = s.run({{"copy2/x:0", x}}, {"copy2/y:0"})[0];
    std::printf("  original y[0] = %.5f, copy1 %.5f, copy2 %.5f -> %s\n", first(want), first(y1), first(y2),
                graft::equal(y1, want) && graft::equal(y2, want) ? "equal" : "DIFFERENT");
    bool ok = graft::equal(y1, want) && graft::equal(y2, want);

    std::printf("\n4. train copy1 a few steps, save it with a per-model saver (keys without the scope)\n");
    tensor xs = grid(64), ts = target(xs);
    for (int i = 0; i < 20; ++i) s.run({{"copy1/x:0", xs}, {"copy1/t:0", ts}}, {}, {"copy1/Adam"});
    std::string p1 = per_model.save(s, (dir / "copy1.ckpt").string());
    std::printf("  %s holds:", p1.c_str());
    for (auto& k : graft::tf::checkpoint_reader(p1).keys()) std::printf(" %s", k.c_str());
    std::printf("\n");

    std::printf("\n5. partial restore of copy1's checkpoint into copy2 (copy2 has an extra variable)\n");
    auto rep = surgery::restore_scoped(s, mg, "copy2", p1, surgery::into_scope("copy2"), train::restore_mode::lenient);
    print_report("lenient", rep);
    try {
        surgery::restore_scoped(s, mg, "copy2", p1, surgery::into_scope("copy2"));
    } catch (const graft::error& e) {
        std::printf("  strict mode says: %.200s...\n", e.what());
    }
    print_report("only copy2/hidden/kernel",
                 surgery::restore_scoped(s, {"copy2/hidden/kernel"}, p1, surgery::into_scope("copy2"), train::restore_mode::lenient));
    tensor c1 = s.run({{"copy1/x:0", x}}, {"copy1/y:0"})[0], c2 = s.run({{"copy2/x:0", x}}, {"copy2/y:0"})[0];
    std::printf("  copy1 y[0] = %.5f, copy2 y[0] = %.5f -> %s\n", first(c1), first(c2), graft::equal(c1, c2) ? "equal" : "DIFFERENT");
    ok = ok && graft::equal(c1, c2);

    std::printf("\n6. a scoped checkpoint (\"copy1/...\") into copy2 with {\"copy1/\": \"copy2/\"}\n");
    s.run({}, {}, {extra.assign});
    train::saver all(mg);
    std::string pall = all.save(s, (dir / "all.ckpt").string());
    graft::exec::session s2(mg.graph);
    print_report("copy1/ -> copy2/", surgery::restore_scoped(s2, r2.variables, pall, graft::tf::assignment_map::from({{"copy1/", "copy2/"}})));
    tensor c3 = s2.run({{"copy2/x:0", x}}, {"copy2/y:0"})[0];
    std::printf("  copy2 y[0] = %.5f (copy1's trained value %.5f) -> %s\n", first(c3), first(c1), graft::equal(c3, c1) ? "equal" : "DIFFERENT");
    ok = ok && graft::equal(c3, c1);
    return ok ? 0 : 1;
}
