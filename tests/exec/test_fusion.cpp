// The executor's remapper (session_options::fuse_ops) and the _FusedMatMul / _FusedConv2D ops TF's
// grappler writes: fused and unfused runs give the same bits, fewer steps, and chains whose
// intermediates are read elsewhere stay apart.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"

using graft::dtype;
using graft::node;
using graft::tensor;

namespace {
node fz_placeholder(std::string name, graft::shape s) {
    node n(std::move(name), "Placeholder");
    n.attrs.set("dtype", dtype::float32);
    n.attrs.set("shape", std::move(s));
    return n;
}
// values in [-1, 1) from a fixed formula (sign changes, so activations take both branches)
tensor fz_values(graft::shape s, int seed) {
    std::vector<float> v(static_cast<std::size_t>(s.num_elements()));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::sin(0.37 * (i + 1) * (seed + 1.3)));
    return tensor::from_vector<float>(s, v);
}
node fz_const(std::string name, tensor v) {
    node n(std::move(name), "Const");
    n.attrs.set("dtype", v.type());
    n.attrs.set("value", std::move(v));
    return n;
}
node fz_op(std::string name, std::string type, std::vector<graft::endpoint> in) {
    node n(std::move(name), std::move(type), std::move(in));
    n.attrs.set("T", dtype::float32);
    return n;
}
node fz_conv(std::string name, graft::endpoint x, graft::endpoint f, const char* padding) {
    node n = fz_op(std::move(name), "Conv2D", {std::move(x), std::move(f)});
    n.attrs.set("strides", graft::attr_value::list_of(std::vector<std::int64_t>{1, 1, 1, 1}));
    n.attrs.set("padding", std::string(padding));
    return n;
}

// An MLP (MatMul+BiasAdd+Relu, MatMul+BiasAdd) and three convolution chains ending in Relu6,
// LeakyRelu (alpha 0.3) and Elu.
graft::graph fz_model() {
    graft::graph g;
    g.add_node(fz_placeholder("x", graft::shape{4, 8}));
    g.add_node(fz_const("w1", fz_values({8, 6}, 1)));
    g.add_node(fz_const("b1", fz_values({6}, 2)));
    g.add_node(fz_const("w2", fz_values({6, 3}, 3)));
    g.add_node(fz_const("b2", fz_values({3}, 4)));
    g.add_node(fz_op("mm1", "MatMul", {{"x", 0}, {"w1", 0}}));
    g.add_node(fz_op("ba1", "BiasAdd", {{"mm1", 0}, {"b1", 0}}));
    g.add_node(fz_op("h1", "Relu", {{"ba1", 0}}));
    g.add_node(fz_op("mm2", "MatMul", {{"h1", 0}, {"w2", 0}}));
    g.add_node(fz_op("logits", "BiasAdd", {{"mm2", 0}, {"b2", 0}}));
    g.add_node(fz_placeholder("img", graft::shape{2, 7, 6, 3}));
    g.add_node(fz_const("f", fz_values({3, 3, 3, 5}, 5)));
    g.add_node(fz_const("fb", fz_values({5}, 6)));
    const char* acts[] = {"Relu6", "LeakyRelu", "Elu"};
    for (int i = 0; i < 3; ++i) {
        const std::string k = std::to_string(i);
        g.add_node(fz_conv("conv" + k, {"img", 0}, {"f", 0}, i == 1 ? "VALID" : "SAME"));
        g.add_node(fz_op("cb" + k, "BiasAdd", {{"conv" + k, 0}, {"fb", 0}}));
        node a = fz_op(std::string("act") + k, acts[i], {{"cb" + k, 0}});
        if (i == 1) a.attrs.set("alpha", 0.3f);
        g.add_node(std::move(a));
    }
    return g;
}

graft::exec::session_options unfused() {
    graft::exec::session_options o;
    o.fuse_ops = false;
    return o;
}
}  // namespace

TEST_CASE("fusion: MatMul/Conv2D + BiasAdd + activation run as one step with the unfused bits") {
    const graft::graph g = fz_model();
    graft::exec::session fused(g), plain(g, unfused());
    const graft::exec::session::feed_list feeds{{"x:0", fz_values({4, 8}, 7)}, {"img:0", fz_values({2, 7, 6, 3}, 8)}};
    const std::vector<std::string> fetches{"logits:0", "act0:0", "act1:0", "act2:0"};
    const auto a = fused.run(feeds, fetches), b = plain.run(feeds, fetches);
    for (std::size_t i = 0; i < fetches.size(); ++i) {
        INFO(fetches[i]);
        CHECK(graft::equal(a[i], b[i]));
    }
    CHECK(a[1].shape() == graft::shape{2, 7, 6, 5});
    CHECK(a[2].shape() == graft::shape{2, 5, 4, 5});
    // each chain is one step: 2 + 3 fused steps instead of 5 + 9
    const auto& fp = fused.prepare({"x:0", "img:0"}, fetches, {});
    const auto& pp = plain.prepare({"x:0", "img:0"}, fetches, {});
    CHECK(pp.steps.size() - fp.steps.size() == 9);
    std::vector<std::string> fused_ops;
    for (const auto& s : fp.steps)
        if (s.n->op.starts_with("_Fused")) fused_ops.push_back(s.n->name + ":" + s.n->op);
    CHECK(fused_ops == std::vector<std::string>{"h1:_FusedMatMul", "logits:_FusedMatMul", "act0:_FusedConv2D",
                                                "act1:_FusedConv2D", "act2:_FusedConv2D"});
    // the activation is applied: Relu6 is within [0, 6] and the hidden layer of the MLP is >= 0
    for (float v : std::vector<float>(a[1].data<float>(), a[1].data<float>() + a[1].num_elements())) {
        CHECK(v >= 0.f);
        CHECK(v <= 6.f);
    }
}

TEST_CASE("fusion: a chain whose intermediate is fetched, read twice or a control input stays apart") {
    graft::graph g = fz_model();
    g.add_node(fz_op("also", "Neg", {{"cb2", 0}}));  // second reader of conv chain 2's BiasAdd
    node after(std::string("after"), "NoOp");
    after.control_inputs.push_back("mm2");  // a control edge from the second MatMul
    g.add_node(std::move(after));
    graft::exec::session fused(g), plain(g, unfused());
    const graft::exec::session::feed_list feeds{{"x:0", fz_values({4, 8}, 9)}, {"img:0", fz_values({2, 7, 6, 3}, 10)}};
    // mm1 fetched: chain 1 stays apart; mm2 a control input: chain 2 too; cb2 read twice: conv2 and
    // cb2 fuse without the Elu (a step named cb2), conv0 and conv1 fuse whole
    const std::vector<std::string> fetches{"mm1:0", "h1:0", "logits:0", "act0:0", "act1:0", "act2:0", "also:0"};
    const auto a = fused.run(feeds, fetches, {"after"}), b = plain.run(feeds, fetches, {"after"});
    for (std::size_t i = 0; i < fetches.size(); ++i) {
        INFO(fetches[i]);
        CHECK(graft::equal(a[i], b[i]));
    }
    const auto& fp = fused.prepare({"x:0", "img:0"}, fetches, {"after"});
    std::vector<std::string> fused_names;
    for (const auto& s : fp.steps)
        if (s.n->op.starts_with("_Fused")) fused_names.push_back(s.n->name);
    std::sort(fused_names.begin(), fused_names.end());
    CHECK(fused_names == std::vector<std::string>{"act0", "act1", "cb2"});
}

TEST_CASE("fusion: _FusedMatMul and _FusedConv2D nodes as TF's grappler writes them") {
    graft::graph g = fz_model();
    node fm = fz_op("fm", "_FusedMatMul", {{"x", 0}, {"w1", 0}, {"b1", 0}});
    fm.attrs.set("num_args", std::int64_t{1});
    fm.attrs.set("fused_ops", graft::attr_value::list_of(std::vector<std::string>{"BiasAdd", "Relu"}));
    g.add_node(std::move(fm));
    node fc = fz_op("fc", "_FusedConv2D", {{"img", 0}, {"f", 0}, {"fb", 0}});
    fc.attrs.set("strides", graft::attr_value::list_of(std::vector<std::int64_t>{1, 1, 1, 1}));
    fc.attrs.set("padding", std::string("VALID"));
    fc.attrs.set("num_args", std::int64_t{1});
    fc.attrs.set("fused_ops", graft::attr_value::list_of(std::vector<std::string>{"BiasAdd", "LeakyRelu"}));
    fc.attrs.set("leakyrelu_alpha", 0.3f);
    g.add_node(std::move(fc));
    node bad = fz_op("bad", "_FusedMatMul", {{"x", 0}, {"w1", 0}, {"b1", 0}});
    bad.attrs.set("num_args", std::int64_t{1});
    bad.attrs.set("fused_ops", graft::attr_value::list_of(std::vector<std::string>{"BiasAdd", "Tanh"}));
    g.add_node(std::move(bad));
    graft::exec::session s(g, unfused());
    const graft::exec::session::feed_list feeds{{"x:0", fz_values({4, 8}, 11)}, {"img:0", fz_values({2, 7, 6, 3}, 12)}};
    const auto out = s.run(feeds, {"fm:0", "h1:0", "fc:0", "act1:0"});
    CHECK(graft::equal(out[0], out[1]));
    CHECK(graft::equal(out[2], out[3]));
    try {
        (void)s.run(feeds, {"bad:0"});
        FAIL("an unsupported fused_ops list must fail");
    } catch (const graft::error& e) {
        const std::string what = e.what();
        CHECK(what.find("bad") != std::string::npos);
        CHECK(what.find("BiasAdd, Tanh") != std::string::npos);
    }
}
