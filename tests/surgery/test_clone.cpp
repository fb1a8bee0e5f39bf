// Clone a subgraph into a new scope: copy/init/share policies on a graft-trained MLP (ref and
// resource variables), training isolation, clone_into another graph from a checkpoint, the real
// word_cnn.meta, bad boundaries, and the `graft clone` CLI.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "graft/formats/npy.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/surgery/clone.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/saver.hpp"
#include "graft/train/variables.hpp"
#include "support/fixtures.hpp"

namespace clone_t {

using graft::dtype;
using graft::tensor;
namespace train = graft::train;
namespace surgery = graft::surgery;

/// x[?,4] -> dense (ref variables: truncated-normal kernel, zeros bias) -> Relu -> out (resource
/// variables: glorot-uniform kernel, zeros bias) -> logits; loss = mean((logits - y)^2).
struct mlp {
    graft::meta_graph mg;
    std::string train_op, init;
};

inline graft::endpoint truncated_normal(const graft::graph_builder& b, std::vector<std::int32_t> shape, float stddev) {
    auto s = b.constant(tensor::from_vector<std::int32_t>(shape), "shape");
    auto r = b.op("TruncatedNormal", {s}, {{"dtype", dtype::float32}, {"seed", std::int64_t{7}}, {"seed2", std::int64_t{3}}},
                  "TruncatedNormal");
    return b.op("Mul", {r, b.scalar(stddev, "stddev")}, {}, "mul");
}

inline graft::endpoint glorot_uniform(const graft::graph_builder& b, std::vector<std::int32_t> shape, float limit) {
    auto s = b.constant(tensor::from_vector<std::int32_t>(shape), "shape");
    auto r = b.op("RandomUniform", {s}, {{"dtype", dtype::float32}, {"seed", std::int64_t{7}}, {"seed2", std::int64_t{4}}},
                  "RandomUniform");
    auto scaled = b.op("Mul", {r, b.scalar(2 * limit, "range")}, {}, "mul");
    return b.op("Sub", {scaled, b.scalar(limit, "limit")}, {}, "sub");
}

inline float glorot_limit() { return std::sqrt(6.f / (8 + 2)); }

inline mlp make_mlp() {
    mlp m;
    graft::graph_builder b(m.mg.graph);
    auto x = b.placeholder("x", dtype::float32, graft::shape{-1, 4});
    auto y = b.placeholder("y", dtype::float32, graft::shape{-1, 2});
    auto k1 = train::create_variable(m.mg, b, "dense/kernel", dtype::float32, graft::shape{4, 8},
                                     truncated_normal(b.at_scope("dense/kernel/Initializer/truncated_normal"), {4, 8}, 0.5f));
    auto b1 = train::create_filled_variable(m.mg, b, "dense/bias", dtype::float32, graft::shape{8}, train::fill_kind::zeros);
    train::variable_options res;
    res.use_resource = true;
    auto k2 = train::create_variable(m.mg, b, "out/kernel", dtype::float32, graft::shape{8, 2},
                                     glorot_uniform(b.at_scope("out/kernel/Initializer/random_uniform"), {8, 2}, glorot_limit()), res);
    auto b2 = train::create_filled_variable(m.mg, b, "out/bias", dtype::float32, graft::shape{2}, train::fill_kind::zeros, 0, res);
    auto h = b.op("Relu", {b.op("BiasAdd", {b.op("MatMul", {x, k1.value}, {}, "dense/MatMul"), b1.value}, {}, "dense/BiasAdd")}, {},
                  "dense/Relu");
    auto logits = b.op("BiasAdd", {b.op("MatMul", {h, k2.value}, {}, "out/MatMul"), b2.value}, {}, "logits");
    auto sq = b.op("Square", {b.op("Sub", {logits, y}, {}, "err")}, {}, "sq");
    auto loss = b.op("Mean", {sq, b.constant(tensor::from_vector<std::int32_t>({0, 1}), "axes")}, {}, "loss");
    m.train_op = train::gradient_descent(0.1).minimize(m.mg, loss, train::var_list::trainable());
    m.init = train::global_variables_initializer(m.mg);
    return m;
}

inline tensor inputs(std::int64_t n, float phase) {
    tensor t(dtype::float32, {n, 4});
    for (std::int64_t i = 0; i < n * 4; ++i) t.data<float>()[i] = std::sin(0.37f * static_cast<float>(i) + phase);
    return t;
}

inline tensor targets(const tensor& x) {
    std::int64_t n = x.shape().dims()[0];
    tensor t(dtype::float32, {n, 2});
    for (std::int64_t i = 0; i < n; ++i) {
        const float* r = x.data<float>() + i * 4;
        t.data<float>()[i * 2] = r[0] - 0.5f * r[1];
        t.data<float>()[i * 2 + 1] = r[2] * r[3];
    }
    return t;
}

/// A loss on the clone's logits and a GradientDescent op over exactly `vars`.
inline std::string train_op_for(graft::meta_graph& mg, const std::string& logits, const std::string& scope,
                                 const std::vector<std::string>& vars) {
    graft::graph_builder b(mg.graph, scope + "_loss");
    auto sq = b.op("Square", {b.op("Sub", {graft::endpoint::parse(logits), graft::endpoint{"y", 0}})});
    auto loss = b.op("Mean", {sq, b.constant(tensor::from_vector<std::int32_t>({0, 1}), "axes")});
    return train::gradient_descent(0.1).minimize(mg, loss, train::var_list::names(vars));
}

inline const graft::variable_def* find_def(const graft::meta_graph& mg, const std::string& coll, const std::string& var) {
    auto* c = mg.collection(coll);
    if (!c) return nullptr;
    for (std::size_t i = 0; i < c->variables.size(); ++i) {
        auto d = graft::tf::decode_variable_def(c->values[i]);  // the bytes, not just the decoded copy
        if (d.variable_name == var + ":0") {
            CHECK(d == c->variables[i]);
            return &c->variables[i];
        }
    }
    return nullptr;
}

inline std::vector<std::string> original_vars() { return {"dense/kernel", "dense/bias", "out/kernel", "out/bias"}; }

}  // namespace clone_t

TEST_CASE("clone: copy, init and share on a trained MLP; training one leaves the other bit-identical") {
    using namespace clone_t;
    mlp m = make_mlp();
    auto store = std::make_shared<graft::exec::variable_store>();
    tensor x = inputs(16, 0.f), y = targets(x);
    {
        graft::exec::session s(m.mg.graph, store);
        s.run({}, {}, {m.init});
        for (int i = 0; i < 5; ++i) s.run({{"x", x}, {"y", y}}, {}, {m.train_op});
    }
    graft::exec::session trained(m.mg.graph, store);

    surgery::clone_options o;
    o.inputs = {"x"};
    o.outputs = {"logits:0"};
    o.scope = "copy";
    o.init = surgery::init_policy::copy;
    o.values = surgery::session_values(trained);
    auto rc = surgery::clone(m.mg, o);
    o.scope = "fresh";
    o.init = surgery::init_policy::init;
    o.values = {};
    auto ri = surgery::clone(m.mg, o);
    o.scope = "tied";
    o.init = surgery::init_policy::share;
    auto rs = surgery::clone(m.mg, o);

    CHECK(rc.outputs == std::vector<std::string>{"copy/logits:0"});
    CHECK(rc.placeholders == std::vector<std::string>{"copy/x"});
    CHECK(rc.init_op == "copy/init");
    CHECK(rc.variables == std::vector<std::string>{"copy/dense/kernel", "copy/dense/bias", "copy/out/kernel", "copy/out/bias"});
    CHECK(rs.variables.empty());
    CHECK(rs.init_op.empty());
    CHECK(rs.variable_map.at("out/kernel") == "out/kernel");
    CHECK(m.mg.graph.at("copy/x").attr("shape")->shape() == graft::shape{-1, 4});
    CHECK(m.mg.graph.at("copy/out/kernel").op == "VarHandleOp");
    CHECK(m.mg.graph.at("copy/out/kernel").attr("shared_name")->s() == "copy/out/kernel");

    // VariableDefs in both collections, decoded from their bytes
    for (const std::string& scope : {std::string("copy"), std::string("fresh")}) {
        for (auto& v : original_vars()) {
            INFO(scope << "/" << v);
            auto* d = find_def(m.mg, "variables", scope + "/" + v);
            REQUIRE(d != nullptr);
            CHECK(find_def(m.mg, "trainable_variables", scope + "/" + v) != nullptr);
            CHECK(d->initializer_name == scope + "/" + v + "/Assign");
            bool resource = v.rfind("out/", 0) == 0;
            CHECK(d->is_resource == resource);
            CHECK(d->snapshot_name == scope + "/" + v + (resource ? "/Read/ReadVariableOp:0" : "/read:0"));
            CHECK(m.mg.graph.contains(graft::endpoint::parse(d->initial_value_name).node));
            if (scope == "copy") CHECK(d->initial_value_name == "copy/" + v + "/initial_value:0");
            else CHECK(d->initial_value_name.rfind("fresh/" + v + "/Initializer/", 0) == 0);
        }
    }
    // the init clone's random initializers got their own seed2, deterministically
    auto& tn = m.mg.graph.at("fresh/dense/kernel/Initializer/truncated_normal/TruncatedNormal");
    CHECK(tn.attr("seed")->i() == 7);
    CHECK(tn.attr("seed2")->i() != 3);

    std::string train_copy = train_op_for(m.mg, rc.outputs[0], "copy", rc.variables);
    std::string train_orig = train_op_for(m.mg, "logits:0", "orig", original_vars());

    graft::exec::session s(m.mg.graph, store);  // the original's trained values are in `store`
    s.run({}, {}, {rc.init_op, ri.init_op});
    tensor probe = inputs(8, 1.f);
    auto out = s.run({{"x", probe}, {"copy/x", probe}, {"fresh/x", probe}, {"tied/x", probe}},
                     {"logits:0", "copy/logits:0", "fresh/logits:0", "tied/logits:0"});
    CHECK(graft::equal(out[0], out[1]));  // copy: bit-equal
    CHECK(graft::equal(out[0], out[3]));  // share
    CHECK_FALSE(graft::equal(out[0], out[2]));

    // init: fresh values from the original's initializers
    tensor fk = s.variable_value("fresh/dense/kernel"), ok = s.variable_value("dense/kernel");
    CHECK_FALSE(graft::equal(fk, ok));
    for (std::int64_t i = 0; i < fk.num_elements(); ++i) CHECK(std::abs(fk.data<float>()[i]) <= 1.0f);  // 2 stddev
    tensor fo = s.variable_value("fresh/out/kernel");
    for (std::int64_t i = 0; i < fo.num_elements(); ++i) CHECK(std::abs(fo.data<float>()[i]) <= glorot_limit());
    tensor fb = s.variable_value("fresh/dense/bias");
    for (std::int64_t i = 0; i < fb.num_elements(); ++i) CHECK(fb.data<float>()[i] == 0.f);
    CHECK_FALSE(graft::equal(s.variable_value("fresh/out/kernel"), s.variable_value("out/kernel")));

    auto values = [&](const std::string& scope) {
        std::vector<tensor> r;
        for (auto& v : original_vars()) r.push_back(s.variable_value(scope.empty() ? v : scope + "/" + v).clone());
        return r;
    };
    auto same = [](const std::vector<tensor>& a, const std::vector<tensor>& b) {
        for (std::size_t i = 0; i < a.size(); ++i) if (!graft::equal(a[i], b[i])) return false;
        return true;
    };
    // train the clone: the original stays bit-identical
    auto orig0 = values(""), copy0 = values("copy");
    for (int i = 0; i < 3; ++i) s.run({{"copy/x", x}, {"y", y}}, {}, {train_copy});
    CHECK(same(values(""), orig0));
    CHECK_FALSE(same(values("copy"), copy0));
    // train the original: the copy stays bit-identical, the shared clone follows
    auto copy1 = values("copy");
    for (int i = 0; i < 3; ++i) s.run({{"x", x}, {"y", y}}, {}, {train_orig});
    CHECK(same(values("copy"), copy1));
    CHECK_FALSE(same(values(""), orig0));
    auto after = s.run({{"x", probe}, {"tied/x", probe}}, {"logits:0", "tied/logits:0"});
    CHECK(graft::equal(after[0], after[1]));
    CHECK_FALSE(graft::equal(after[0], out[0]));
}

TEST_CASE("clone_into another graph from a checkpoint, with an input map; the export reloads") {
    using namespace clone_t;
    mlp m = make_mlp();
    auto dir = graft::test::scratch("clone_into");
    std::string prefix;
    {
        train::saver sv(m.mg);
        graft::exec::session s(m.mg.graph);
        s.run({}, {}, {m.init});
        tensor x = inputs(16, 0.f), y = targets(x);
        for (int i = 0; i < 3; ++i) s.run({{"x", x}, {"y", y}}, {}, {m.train_op});
        prefix = sv.save(s, (dir / "mlp.ckpt").string());
    }
    graft::meta_graph dst;
    graft::graph_builder b(dst.graph);
    auto raw = b.placeholder("raw", dtype::float32, graft::shape{-1, 4});
    b.op("Mul", {raw, b.scalar(2.f, "two")}, {}, "scaled");

    surgery::clone_options o;
    o.inputs = {"x:0"};
    o.outputs = {"logits"};
    o.scope = "net";
    o.input_map = {{"x:0", "scaled:0"}};
    o.init = surgery::init_policy::copy;
    o.values = surgery::checkpoint_values(prefix);
    auto r = surgery::clone_into(dst, m.mg, o);
    CHECK(r.placeholders.empty());
    CHECK(r.inputs.at("x:0") == "scaled:0");
    CHECK(r.outputs == std::vector<std::string>{"net/logits"});
    CHECK(dst.graph.at("net/dense/MatMul").inputs[0] == graft::endpoint{"scaled", 0});
    CHECK_FALSE(dst.graph.contains("net/y"));  // the loss side was not copied
    // deterministic: the same clone again gives the same names
    graft::meta_graph dst2;
    graft::graph_builder(dst2.graph).placeholder("scaled", dtype::float32);
    auto r2 = surgery::clone_into(dst2, m.mg, o);
    CHECK(r2.names == r.names);

    auto path = (dir / "clone.meta").string();
    graft::tf::write_meta_graph(dst, path);
    graft::meta_graph back = graft::tf::load_meta_graph(path);
    CHECK(find_def(back, "trainable_variables", "net/out/kernel") != nullptr);

    tensor probe = inputs(5, 2.f), doubled = probe.clone();
    for (std::int64_t i = 0; i < doubled.num_elements(); ++i) doubled.data<float>()[i] *= 2.f;
    graft::exec::session orig(m.mg.graph);
    train::saver_options ro;
    ro.build_ops = false;
    train::saver(m.mg, ro).restore(orig, prefix);
    tensor want = orig.run({{"x", doubled}}, {"logits:0"})[0];
    graft::exec::session s(back.graph);
    s.run({}, {}, {r.init_op});
    tensor got = s.run({{"raw", probe}}, {"net/logits:0"})[0];
    CHECK(graft::equal(got, want));
}

TEST_CASE("clone: word_cnn.meta's inference part, exported and reloaded") {
    using namespace clone_t;
    auto file = graft::test::fixture("tfnet-graphs/word_cnn.meta");
    if (!graft::test::present_or_skip(file)) return;
    graft::meta_graph mg = graft::tf::load_meta_graph(file.string());
    std::size_t vars_before = mg.collection("variables")->variables.size();
    graft::exec::session orig(mg.graph);
    std::vector<std::string> inits;  // the file has no "init" op: run every variable's initializer
    for (auto& vd : mg.collection("variables")->variables) inits.push_back(vd.initializer_name);
    orig.run({}, {}, inits);

    surgery::clone_options o;
    o.inputs = {"x", "is_training"};
    o.outputs = {"output/dense/BiasAdd:0", "output/ArgMax"};
    o.scope = "copy";
    o.init = surgery::init_policy::copy;
    o.values = surgery::session_values(orig);
    auto r = surgery::clone(mg, o);
    CHECK(r.placeholders == std::vector<std::string>{"copy/x", "copy/is_training"});
    CHECK(mg.graph.at("copy/x").attr("dtype")->type() == dtype::int32);
    CHECK(r.variables.size() == 9);  // embeddings + 3 conv kernels/biases + dense kernel/bias
    CHECK(mg.collection("variables")->variables.size() == vars_before + 9);
    CHECK_FALSE(mg.graph.contains("copy/loss/Mean"));

    auto dir = graft::test::scratch("clone_word_cnn");
    auto path = (dir / "word_cnn_clone.meta").string();
    graft::tf::write_meta_graph(mg, path);
    graft::meta_graph back = graft::tf::load_meta_graph(path);
    CHECK(back.graph.size() == mg.graph.size());
    CHECK(find_def(back, "trainable_variables", "copy/embeddings") != nullptr);

    tensor x(dtype::int32, {2, 100});
    for (std::int64_t i = 0; i < x.num_elements(); ++i) x.data<std::int32_t>()[i] = static_cast<std::int32_t>((i * 7919) % 50000);
    tensor no = tensor::scalar_of(false);
    auto want = orig.run({{"x", x}, {"is_training", no}}, {"output/dense/BiasAdd:0", "output/ArgMax:0"});
    graft::exec::session s(back.graph);
    s.run({}, {}, {r.init_op});
    auto got = s.run({{"copy/x", x}, {"copy/is_training", no}}, {"copy/output/dense/BiasAdd:0", "copy/output/ArgMax:0"});
    CHECK(graft::equal(got[0], want[0]));
    CHECK(graft::equal(got[1], want[1]));
}

TEST_CASE("clone on two threads gives the one-thread result: init, share, copy, into another graph") {
    using namespace clone_t;
    // parallel_from = 0 takes the two-thread path on these small graphs (the default takes it from
    // 8192 nodes): variable facts found beside the walk, names and VariableDefs beside the commit
    auto both = [](auto&& clone_fn, const graft::meta_graph& start) {
        graft::meta_graph one = start, two = start;
        surgery::clone_options o1;
        o1.parallel_from = SIZE_MAX;
        surgery::clone_options o2;
        o2.parallel_from = 0;
        auto r1 = clone_fn(one, o1);
        auto r2 = clone_fn(two, o2);
        CHECK(r1.names.size() > 0);
        CHECK(r1.names == r2.names);
        CHECK(std::equal(r1.names.begin(), r1.names.end(), r2.names.begin(), r2.names.end()));  // same order too
        CHECK(r1.variable_map == r2.variable_map);
        CHECK(r1.variables == r2.variables);
        CHECK(r1.placeholders == r2.placeholders);
        CHECK(r1.outputs == r2.outputs);
        CHECK(r1.init_op == r2.init_op);
        CHECK(graft::tf::serialize_meta_graph_def(one) == graft::tf::serialize_meta_graph_def(two));
        return r2;
    };
    mlp m = make_mlp();
    for (auto policy : {surgery::init_policy::init, surgery::init_policy::share}) {
        CAPTURE(static_cast<int>(policy));
        auto r = both([&](graft::meta_graph& mg, surgery::clone_options o) {
            o.inputs = {"x"};
            o.outputs = {"logits"};
            o.scope = "copy";
            o.init = policy;
            return surgery::clone(mg, o);
        }, m.mg);
        CHECK(r.variable_map.size() == 4);
    }
    {
        // into an empty graph
        auto r = both([&](graft::meta_graph& into, surgery::clone_options o) {
            o.inputs = {"x"};
            o.outputs = {"logits"};
            o.scope = "copy";
            return surgery::clone_into(into, m.mg, o);
        }, graft::meta_graph{});
        CHECK(r.placeholders == std::vector<std::string>{"copy/x"});
    }
    auto file = graft::test::fixture("tfnet-graphs/word_cnn.meta");
    if (!graft::test::present_or_skip(file)) return;
    graft::meta_graph mg = graft::tf::load_meta_graph(file.string());
    graft::exec::session orig(mg.graph);
    std::vector<std::string> inits;
    for (auto& vd : mg.collection("variables")->variables) inits.push_back(vd.initializer_name);
    orig.run({}, {}, inits);
    auto r = both([&](graft::meta_graph& g, surgery::clone_options o) {
        o.inputs = {"x", "is_training"};
        o.outputs = {"output/dense/BiasAdd:0", "output/ArgMax"};
        o.init = surgery::init_policy::copy;
        o.values = surgery::session_values(orig);
        return surgery::clone(g, o);
    }, mg);
    CHECK(r.variables.size() == 9);
}

TEST_CASE("clone_names: lookups, iteration order, copies that own their names, growth past start()") {
    using namespace clone_t;
    surgery::clone_names m;
    CHECK(m.empty());
    CHECK(m.find("a") == m.end());
    m.start("copy/", 2, 3);  // announces fewer names and bytes than are added below
    std::vector<std::string> names;
    for (int i = 0; i < 100; ++i) names.push_back("layer" + std::to_string(i) + "/kernel/read");
    for (auto& n : names) CHECK(m.add(n));
    CHECK_FALSE(m.add("layer7/kernel/read"));  // already there: unchanged
    REQUIRE(m.size() == 100);
    CHECK(m.at("layer42/kernel/read") == "copy/layer42/kernel/read");
    CHECK(m.count("layer99/kernel/read") == 1);
    CHECK(m.count("layer100/kernel/read") == 0);
    CHECK_FALSE(m.contains("copy/layer1/kernel/read"));  // keys are the originals
    CHECK_THROWS_AS((void)m.at("nope"), graft::not_found_error);
    std::size_t i = 0;
    for (const auto& [from, to] : m) {  // in the order added
        CHECK(from == names[i]);
        CHECK(to == "copy/" + names[i]);
        ++i;
    }
    // a copy owns its names: the views stay valid after the original is gone
    surgery::clone_names c;
    {
        surgery::clone_names tmp = m;
        c = tmp;
    }
    CHECK(c == m);
    CHECK(c.at("layer0/kernel/read") == "copy/layer0/kernel/read");
    CHECK(c.find("layer5/kernel/read")->first.data() != m.find("layer5/kernel/read")->first.data());
    surgery::clone_names moved = std::move(c);
    CHECK(moved.at("layer63/kernel/read") == "copy/layer63/kernel/read");
    // equality ignores order, not values
    surgery::clone_names r, other;
    r.start("copy/", 2, 2);
    other.start("other/", 2, 2);
    r.add("b");
    r.add("a");
    surgery::clone_names ab;
    ab.start("copy/", 2, 2);
    ab.add("a");
    ab.add("b");
    other.add("a");
    other.add("b");
    CHECK(r == ab);
    CHECK_FALSE(r == other);
    CHECK_FALSE(r == m);
}

TEST_CASE("clone: bad boundaries, scopes and maps are errors naming the tensors") {
    using namespace clone_t;
    mlp m = make_mlp();
    surgery::clone_options o;
    o.inputs = {"x"};
    o.outputs = {"logits"};
    o.scope = "c";
    auto msg = [&](const surgery::clone_options& opt) {
        return std::string(graft::test::expect_error<graft::error>([&] { surgery::clone(m.mg, opt); }).what());
    };
    std::size_t n = m.mg.graph.size();
    auto bad = o;
    bad.outputs = {"logitz:0"};
    CHECK(msg(bad).find("'logitz:0'") != std::string::npos);
    bad = o;
    bad.inputs = {"x:3"};
    CHECK(msg(bad).find("'x:3'") != std::string::npos);
    bad = o;
    bad.outputs = {"loss"};  // walks back to y, not an input
    auto e = msg(bad);
    CHECK(e.find("placeholder 'y'") != std::string::npos);
    CHECK(e.find("err") != std::string::npos);
    bad = o;
    bad.scope = "dense";
    CHECK(msg(bad).find("scope 'dense' is already in use") != std::string::npos);
    bad = o;
    graft::graph_builder(m.mg.graph).placeholder("ids", dtype::int32);
    bad.input_map = {{"x:0", "ids:0"}};
    e = msg(bad);
    CHECK(e.find("'x:0' is float32") != std::string::npos);
    CHECK(e.find("'ids:0' is int32") != std::string::npos);
    bad = o;
    bad.init = surgery::init_policy::copy;
    CHECK(msg(bad).find("value source") != std::string::npos);
    std::string apply;
    for (auto& nd : m.mg.graph) if (apply.empty() && nd.op == "ApplyGradientDescent") apply = nd.name;
    REQUIRE_FALSE(apply.empty());
    bad = o;
    bad.outputs = {apply};
    e = msg(bad);
    CHECK(e.find("stateful op '" + apply + "'") != std::string::npos);
    CHECK(m.mg.graph.size() == n + 1);  // only the "ids" placeholder: failed clones add nothing
}

TEST_CASE("graft clone CLI writes the original plus the copy; graft run runs the copy") {
    using namespace clone_t;
    mlp m = make_mlp();
    auto dir = graft::test::scratch("clone_cli");
    std::string prefix;
    {
        train::saver sv(m.mg);
        graft::exec::session s(m.mg.graph);
        s.run({}, {}, {m.init});
        prefix = sv.save(s, (dir / "mlp.ckpt").string());
    }
    auto out = (dir / "out").string();
    auto r = graft::test::run_cli("clone " + prefix + ".meta --inputs x --outputs logits:0 --scope copy --init copy -o " + out);
    CHECK(r.code != 0);  // copy needs --ckpt
    CHECK(r.output.find("--ckpt") != std::string::npos);
    r = graft::test::run_cli("clone " + prefix + ".meta --inputs x --outputs logits:0 --scope copy --init copy --ckpt " + prefix +
                             " -o " + out);
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(r.output.find("copy/logits:0") != std::string::npos);
    graft::meta_graph back = graft::tf::load_meta_graph(out + ".meta");
    CHECK(back.graph.contains("copy/dense/kernel"));
    CHECK(back.graph.contains("dense/kernel"));
    auto keys = graft::tf::checkpoint_reader(out).keys();
    CHECK(std::find(keys.begin(), keys.end(), "copy/out/kernel") != keys.end());
    CHECK(std::find(keys.begin(), keys.end(), "out/kernel") != keys.end());
    auto npy = (dir / "x.npy").string();
    graft::write_npy(npy, inputs(3, 0.5f));
    auto run = graft::test::run_cli("run " + out + ".meta --ckpt " + out + " --feed copy/x=@" + npy + " --feed x=@" + npy +
                                    " --fetch copy/logits:0 --fetch logits:0");
    INFO(run.output);
    CHECK(run.code == 0);
    // --saved-model: the same as one SavedModel directory; the copy answers as the original does
    auto sm = (dir / "sm").string();
    r = graft::test::run_cli("clone " + prefix + ".meta --inputs x --outputs logits:0 --scope copy --init copy --ckpt " + prefix +
                             " --saved-model -o " + sm);
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(std::filesystem::exists(sm + "/saved_model.pb"));
    CHECK_FALSE(std::filesystem::exists(sm + "/variables/variables.meta"));
    auto res = (dir / "sm_out").string();
    run = graft::test::run_cli("run " + sm + " --feed copy/x=@" + npy + " --feed x=@" + npy +
                               " --fetch copy/logits:0 --fetch logits:0 --out " + res);
    INFO(run.output);
    REQUIRE(run.code == 0);
    tensor copy_logits = graft::read_npy(res + "/copy_logits_0.npy");
    CHECK(copy_logits.shape() == graft::shape{3, 2});
    CHECK(graft::equal(copy_logits, graft::read_npy(res + "/logits_0.npy")));
    // share, with the copy's input bound to the original's x: no new placeholder, no checkpoint needed
    auto out2 = (dir / "tied").string();
    r = graft::test::run_cli("clone " + prefix + ".meta --outputs logits --scope tied --init share --map 'tied/x:0=x:0' -o " + out2);
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(r.output.find("input  x:0 -> x:0") != std::string::npos);
    graft::meta_graph tied = graft::tf::load_meta_graph(out2 + ".meta");
    CHECK(tied.graph.at("tied/dense/MatMul").inputs[0] == graft::endpoint{"x", 0});
    CHECK_FALSE(tied.graph.contains("tied/x"));
    CHECK_FALSE(tied.graph.contains("tied/dense/kernel"));
    r = graft::test::run_cli("clone " + prefix + ".meta --inputs x --outputs logits --scope dense -o " + out);
    CHECK(r.code != 0);
    CHECK(r.output.find("scope 'dense'") != std::string::npos);
}
