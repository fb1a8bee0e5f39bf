// mix: one MetaGraph imported twice under two scopes: both initialize (own init ops) and both
// restore from the one original checkpoint (prefix maps, or each copy's own renamed save ops);
// per-model savers over a scope; partial restore reports; restore into another scope.
#include <doctest/doctest.h>

#include <algorithm>
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
#include "support/fixtures.hpp"

namespace mix_t {

using graft::dtype;
using graft::tensor;
namespace train = graft::train;
namespace surgery = graft::surgery;

inline tensor values(graft::shape s, float start, float step) {
    tensor t(dtype::float32, s);
    for (std::int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = start + step * static_cast<float>(i % 7) - 0.1f * static_cast<float>(i % 3);
    return t;
}

/// x[?,3] -> tanh(dense) -> dense "y"; Adam train op "train" on "loss"; trained 3 steps from its
/// init values, saved to `prefix`; the .meta is read back.
inline graft::meta_graph make_model(const std::string& prefix) {
    graft::meta_graph mg;
    graft::graph_builder b(mg.graph);
    auto x = b.placeholder("x", dtype::float32, graft::shape{-1, 3});
    auto d1 = b.at_scope("dense"), d2 = b.at_scope("dense_1");
    auto w1 = train::create_variable(mg, d1, "kernel", values({3, 4}, -0.3f, 0.1f));
    auto b1 = train::create_variable(mg, d1, "bias", values({4}, 0.05f, 0.01f));
    auto w2 = train::create_variable(mg, d2, "kernel", values({4, 2}, 0.2f, -0.07f));
    auto h = b.op("Tanh", {b.op("BiasAdd", {b.op("MatMul", {x, w1.value}), b1.value})});
    auto y = b.op("MatMul", {h, w2.value}, {}, "y");
    auto loss = b.op("Mean", {b.op("Square", {y}), b.constant(tensor::from_vector<std::int32_t>({0, 1}))}, {}, "loss");
    auto step = train::get_or_create_global_step(mg);
    train::adam opt(0.05);
    opt.minimize(mg, loss, train::var_list::trainable(), step, "train");
    std::string init = train::global_variables_initializer(mg);
    train::saver sv(mg);
    graft::exec::session s(mg.graph);
    s.run({}, {}, {init});
    for (int i = 0; i < 3; ++i) s.run({{"x:0", values({5, 3}, 1.f, -0.3f)}}, {}, {"train"});
    sv.save(s, prefix);
    return graft::tf::load_meta_graph(prefix + ".meta");
}

inline tensor run_y(graft::exec::session& s, const std::string& scope, const tensor& x) {
    return s.run({{surgery::join_scope(scope, "x:0"), x}}, {surgery::join_scope(scope, "y:0")})[0];
}

}  // namespace mix_t

TEST_CASE("mix: the same MetaGraph twice under two scopes initializes and restores from one checkpoint") {
    using namespace mix_t;
    auto dir = graft::test::scratch("surgery_mix");
    std::string ckpt = (dir / "model.ckpt").string();
    auto src = make_model(ckpt);
    tensor x = values({4, 3}, 0.5f, 0.2f);
    graft::exec::session orig(src.graph);
    surgery::restore_scoped(orig, src, "", ckpt, {});
    tensor want = run_y(orig, "", x);
    graft::exec::session fresh(src.graph);
    fresh.run({}, {}, {"init"});
    tensor want_init = run_y(fresh, "", x);
    CHECK(!graft::equal(want, want_init));

    graft::meta_graph mg;
    auto r1 = surgery::import_meta_graph(mg, src, surgery::under("copy1"));
    auto r2 = surgery::import_meta_graph(mg, src, surgery::under("copy2"));
    const std::size_t nk = graft::tf::checkpoint_reader(ckpt).keys().size();
    CHECK(nk == 12);  // 3 weights, 6 Adam slots, 2 beta powers, global_step
    CHECK(r1.variables.size() == nk);
    CHECK(r2.init_op == "copy2/init");
    CHECK(mg.collections.at("variables").variables.size() == 2 * nk);
    CHECK(mg.collections.at("trainable_variables").variables.size() == 6);
    CHECK(mg.graph.contains("copy1/train"));
    CHECK(mg.graph.contains("copy2/train"));

    SUBCASE("each copy initializes through its own init op") {
        graft::exec::session s(mg.graph);
        s.run({}, {}, {r1.init_op, r2.init_op});
        CHECK(graft::equal(run_y(s, "copy1", x), want_init));
        CHECK(graft::equal(run_y(s, "copy2", x), want_init));
    }
    SUBCASE("both restore from the original checkpoint through prefix maps") {
        graft::exec::session s(mg.graph);
        auto a = surgery::restore_scoped(s, mg, "copy1", ckpt, surgery::into_scope("copy1"), train::restore_mode::exact);
        auto b = surgery::restore_scoped(s, r2.variables, ckpt, graft::tf::assignment_map::from({{"", "copy2/"}}));
        CHECK(a.restored.size() == nk);
        CHECK(b.restored.size() == nk);
        CHECK(b.unused.empty());
        CHECK(graft::equal(run_y(s, "copy1", x), want));
        CHECK(graft::equal(run_y(s, "copy2", x), want));
        // training one copy leaves the other alone
        s.run({{"copy1/x:0", x}}, {}, {"copy1/train"});
        CHECK(!graft::equal(run_y(s, "copy1", x), want));
        CHECK(graft::equal(run_y(s, "copy2", x), want));
    }
    SUBCASE("both restore through their own renamed TF save ops") {
        graft::exec::session s(mg.graph);
        for (auto* r : {&r1, &r2}) s.run({{r->saver->filename_tensor_name, tensor::scalar_of(ckpt)}}, {}, {r->saver->restore_op_name});
        CHECK(graft::equal(run_y(s, "copy1", x), want));
        CHECK(graft::equal(run_y(s, "copy2", x), want));
    }
}

TEST_CASE("mix: per-model savers over a scope, partial restore reports, restore into another scope") {
    using namespace mix_t;
    auto dir = graft::test::scratch("surgery_mix_savers");
    std::string ckpt = (dir / "model.ckpt").string();
    auto src = make_model(ckpt);
    tensor x = values({2, 3}, -0.5f, 0.3f);
    const std::size_t nk = graft::tf::checkpoint_reader(ckpt).keys().size();

    graft::meta_graph mg;
    auto r1 = surgery::import_meta_graph(mg, src, surgery::under("copy1"));
    auto r2 = surgery::import_meta_graph(mg, src, surgery::under("copy2"));
    auto extra = train::create_variable(mg, graft::graph_builder(mg.graph).at_scope("copy2"), "extra", tensor::scalar_of(1.0f));
    train::saver s1(mg, surgery::scoped_saver_options("copy1"));   // keys without "copy1/"
    train::saver_options all;
    train::saver sall(mg, all);                                     // keys = scoped names
    graft::exec::session s(mg.graph);
    surgery::restore_scoped(s, mg, "copy1", ckpt, surgery::into_scope("copy1"));
    s.run({{"copy1/x:0", x}}, {}, {"copy1/train"});  // copy1 now differs from the checkpoint
    tensor y1 = run_y(s, "copy1", x);
    std::string p1 = s1.save(s, (dir / "copy1.ckpt").string());
    auto keys = graft::tf::checkpoint_reader(p1).keys();
    CHECK(std::find(keys.begin(), keys.end(), "dense/kernel") != keys.end());
    CHECK(keys.size() == nk);

    // copy1's checkpoint (unscoped keys) into copy2: {"": "copy2/"}; copy2/extra is reported missing
    auto rep = surgery::restore_scoped(s, mg, "copy2", p1, surgery::into_scope("copy2"), train::restore_mode::lenient);
    CHECK(rep.missing == std::vector<std::string>{"copy2/extra"});
    CHECK(rep.restored.size() == nk);
    CHECK(rep.unused.empty());
    CHECK(graft::equal(run_y(s, "copy2", x), y1));
    // strict: the error names the variable, its key and close keys
    auto e = graft::test::expect_error<graft::not_found_error>(
        [&] { surgery::restore_scoped(s, mg, "copy2", p1, surgery::into_scope("copy2")); });
    CHECK(std::string(e.what()).find("'copy2/extra' (key 'extra'") != std::string::npos);
    CHECK(std::string(e.what()).find("closest names") != std::string::npos);
    // partial restore of a subset: unused keys reported
    auto part = surgery::restore_scoped(s, {"copy2/dense/kernel"}, ckpt, surgery::into_scope("copy2"), train::restore_mode::lenient);
    CHECK(part.restored == std::vector<std::string>{"copy2/dense/kernel"});
    CHECK(part.unused.size() == nk - 1);

    // a scoped checkpoint ("copy1/...") into copy2 with {"copy1/": "copy2/"}
    s.run({}, {}, {extra.assign});
    std::string pall = sall.save(s, (dir / "all.ckpt").string());
    graft::exec::session s2(mg.graph);
    auto rep2 = surgery::restore_scoped(s2, r2.variables, pall, graft::tf::assignment_map::from({{"copy1/", "copy2/"}}));
    CHECK(rep2.restored.size() == nk);
    CHECK(graft::equal(run_y(s2, "copy2", x), y1));
    // dtype/shape disagreement is reported as mismatched
    auto bad = surgery::restore_scoped(s2, {"copy2/dense/bias"}, pall,
                                       graft::tf::assignment_map::from({{"copy1/dense/kernel", "copy2/dense/bias"}}),
                                       train::restore_mode::lenient);
    REQUIRE(bad.mismatched.size() == 1);
    CHECK(bad.mismatched[0].find("copy2/dense/bias (key 'copy1/dense/kernel')") != std::string::npos);
    (void)r1;
}
