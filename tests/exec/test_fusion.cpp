// The executor's remapper (session_options::fuse_ops) and the _FusedMatMul / _FusedConv2D ops TF's
// grappler writes: fused and unfused runs give the same bits, fewer steps, and chains whose
// intermediates are read elsewhere stay apart; a weight gradient runs inside its SGD update.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/core/threads.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/variables.hpp"

using graft::dtype;
using graft::tensor;

namespace {
// values in [-1, 1) from a fixed formula (sign changes, so activations take both branches)
tensor fz_values(graft::shape s, int seed) {
    std::vector<float> v(static_cast<std::size_t>(s.num_elements()));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::sin(0.37 * (i + 1) * (seed + 1.3)));
    return tensor::from_vector<float>(s, v);
}

// An MLP (MatMul+BiasAdd+Relu, MatMul+BiasAdd) and three convolution chains ending in Relu6,
// LeakyRelu (alpha 0.3) and Elu.
graft::graph fz_model() {
    graft::graph g;
    const graft::graph_builder b(g);
    const auto x = b.placeholder("x", dtype::float32, graft::shape{-1, -1});  // any shape: see the error test
    const auto mm1 = b.op("MatMul", {x, b.constant(fz_values({8, 6}, 1), "w1")}, {}, "mm1");
    const auto ba1 = b.op("BiasAdd", {mm1, b.constant(fz_values({6}, 2), "b1")}, {}, "ba1");
    const auto h1 = b.op("Relu", {ba1}, {}, "h1");
    const auto mm2 = b.op("MatMul", {h1, b.constant(fz_values({6, 3}, 3), "w2")}, {}, "mm2");
    b.op("BiasAdd", {mm2, b.constant(fz_values({3}, 4), "b2")}, {}, "logits");
    const auto img = b.placeholder("img", dtype::float32, graft::shape{2, 7, 6, 3});
    const auto f = b.constant(fz_values({3, 3, 3, 5}, 5), "f");
    const auto fb = b.constant(fz_values({5}, 6), "fb");
    const char* acts[] = {"Relu6", "LeakyRelu", "Elu"};
    for (int i = 0; i < 3; ++i) {
        const std::string k = std::to_string(i);
        const graft::attr_list conv_attrs{{"strides", graft::attr_value::list_of(std::vector<std::int64_t>{1, 1, 1, 1})},
                                          {"padding", std::string(i == 1 ? "VALID" : "SAME")}};
        const auto conv = b.op("Conv2D", {img, f}, conv_attrs, "conv" + k);
        const auto cb = b.op("BiasAdd", {conv, fb}, {}, "cb" + k);
        graft::attr_list act_attrs;
        if (i == 1) act_attrs.emplace_back("alpha", 0.3f);
        b.op(acts[i], {cb}, act_attrs, "act" + k);
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
    // a kernel error in a fused step names the nodes it runs
    try {
        (void)fused.run({{"x:0", fz_values({4, 7}, 7)}, {"img:0", fz_values({2, 7, 6, 3}, 8)}}, fetches);
        FAIL("a [4,7] input to an [8,6] weight must fail");
    } catch (const graft::error& e) {
        const std::string what = e.what();
        CHECK(what.find("mm1 (MatMul), ba1 (BiasAdd), h1 (Relu)") != std::string::npos);
    }
    // the activation is applied: Relu6 is within [0, 6]
    for (float v : std::vector<float>(a[1].data<float>(), a[1].data<float>() + a[1].num_elements())) {
        CHECK(v >= 0.f);
        CHECK(v <= 6.f);
    }
}

TEST_CASE("fusion: a chain whose intermediate is fetched, read twice or a control input stays apart") {
    graft::graph g = fz_model();
    const graft::graph_builder gb(g);
    gb.op("Neg", {{"cb2", 0}}, {}, "also");  // second reader of conv chain 2's BiasAdd
    gb.group({"mm2"}, "after");              // a control edge from the second MatMul
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
    const graft::graph_builder b(g);
    const auto fused_ops = [](std::vector<std::string> ops) { return graft::attr_value::list_of(std::move(ops)); };
    b.op("_FusedMatMul", {{"x", 0}, {"w1", 0}, {"b1", 0}},
         {{"num_args", std::int64_t{1}}, {"fused_ops", fused_ops({"BiasAdd", "Relu"})}}, "fm");
    b.op("_FusedConv2D", {{"img", 0}, {"f", 0}, {"fb", 0}},
         {{"strides", graft::attr_value::list_of(std::vector<std::int64_t>{1, 1, 1, 1})},
          {"padding", std::string("VALID")},
          {"num_args", std::int64_t{1}},
          {"fused_ops", fused_ops({"BiasAdd", "LeakyRelu"})},
          {"leakyrelu_alpha", 0.3f}},
         "fc");
    b.op("_FusedMatMul", {{"x", 0}, {"w1", 0}, {"b1", 0}},
         {{"num_args", std::int64_t{1}}, {"fused_ops", fused_ops({"BiasAdd", "Tanh"})}}, "bad");
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

namespace {
/// {relu(x w + bias), x w} from an unfused session with every operand fed (nothing packed ahead).
std::pair<tensor, tensor> fz_reference(const tensor& x, const tensor& w, const tensor& bias) {
    graft::graph g;
    const graft::graph_builder b(g);
    const auto xp = b.placeholder("x", dtype::float32, graft::shape{-1, 40});
    const auto wp = b.placeholder("w", dtype::float32, graft::shape{40, 70});
    const auto bp = b.placeholder("bias", dtype::float32, graft::shape{70});
    const auto mm = b.op("MatMul", {xp, wp}, {}, "mm");
    b.op("Relu", {b.op("BiasAdd", {mm, bp}, {}, "ba")}, {}, "y");
    graft::exec::session s(g, unfused());
    auto r = s.run({{"x:0", x}, {"w:0", w}, {"bias:0", bias}}, {"y:0", "mm:0"});
    return {r[0], r[1]};
}
}  // namespace

TEST_CASE("constant weights: MatMul and _FusedMatMul pack a Const b once per plan, fed values still win") {
    // x [M,40] * w [40,70] (a Const read through an Identity, as TF's frozen graphs have it) + bias,
    // Relu: the fused step keeps w packed (kernel_context::input_is_constant) across runs of any M
    graft::graph g;
    const graft::graph_builder b(g);
    const auto x = b.placeholder("x", dtype::float32, graft::shape{-1, 40});
    const auto w = b.op("Identity", {b.constant(fz_values({40, 70}, 7), "w")}, {}, "w_read");
    const auto mm = b.op("MatMul", {x, w}, {}, "mm");
    b.op("Relu", {b.op("BiasAdd", {mm, b.constant(fz_values({70}, 8), "bias")}, {}, "ba")}, {}, "y");
    const tensor w_other = fz_values({40, 70}, 9);
    for (bool fuse : {true, false}) {
        CAPTURE(fuse);
        graft::exec::session_options o;
        o.fuse_ops = fuse;
        graft::exec::session s(g, o);
        graft::exec::session plain(g, unfused());
        // the plan marks b as constant (and x not); fed, w is not
        auto matmul_step = [](const graft::exec::plan& p) {
            for (const auto& st : p.steps)
                if (st.n->op == "MatMul" || st.n->op == "_FusedMatMul") return st;
            FAIL("no MatMul step");
            return p.steps.front();
        };
        CHECK(matmul_step(s.prepare({"x:0"}, {"y:0"}, {})).constant_inputs[0] == 0);
        CHECK(matmul_step(s.prepare({"x:0"}, {"y:0"}, {})).constant_inputs[1] == 1);
        CHECK(matmul_step(s.prepare({"x:0", "w:0"}, {"y:0"}, {})).constant_inputs[1] == 0);
        CHECK(matmul_step(s.prepare({"x:0", "w_read:0"}, {"y:0"}, {})).constant_inputs[1] == 0);
        for (std::int64_t M : {37, 1, 128, 37}) {
            CAPTURE(M);
            const tensor xv = fz_values({M, 40}, static_cast<int>(M));
            const auto [want, want_mm] = fz_reference(xv, fz_values({40, 70}, 7), fz_values({70}, 8));
            CHECK(graft::equal(s.run({{"x:0", xv}}, {"y:0"})[0], want));
            CHECK(graft::equal(s.run({{"x:0", xv}}, {"mm:0"})[0], want_mm));
            // feeding the Const (or its read) replaces it: that plan packs nothing from the graph's w
            for (const char* fed : {"w:0", "w_read:0"}) {
                CAPTURE(fed);
                const tensor got = s.run({{"x:0", xv}, {fed, w_other}}, {"y:0"})[0];
                const tensor other = fz_reference(xv, w_other, fz_values({70}, 8)).first;
                CHECK(graft::equal(got, other));
            }
            CHECK(graft::equal(plain.run({{"x:0", xv}}, {"y:0"})[0], want));
        }
    }
}

TEST_CASE("fusion: _FusedConv2D applies bias and activation to each row as the direct kernel writes it, with the unfused bits") {
    // LeNet's layers (1 -> 6 channels, 5x5 SAME: the direct narrow kernel; 6 -> 16: GEMM), batch 1
    // (rows split between threads) and 16 (whole images per thread), Relu / Relu6 / LeakyRelu.
    struct layer {
        std::int64_t ic, oc;
        const char* act;
    };
    const int before = graft::num_threads();
    for (const layer L : {layer{1, 6, "Relu"}, layer{1, 6, "Relu6"}, layer{3, 5, "LeakyRelu"}, layer{6, 16, "Relu"}}) {
        for (std::int64_t n : {1, 16}) {
            graft::graph g;
            const graft::graph_builder b(g);
            const auto img = b.placeholder("img", dtype::float32, graft::shape{n, 28, 28, L.ic});
            const auto conv = b.op("Conv2D", {img, b.constant(fz_values({5, 5, L.ic, L.oc}, 11), "f")},
                                   {{"strides", graft::attr_value::list_of(std::vector<std::int64_t>{1, 1, 1, 1})},
                                    {"padding", std::string("SAME")}},
                                   "conv");
            const auto cb = b.op("BiasAdd", {conv, b.constant(fz_values({L.oc}, 12), "fb")}, {}, "cb");
            graft::attr_list act_attrs;
            if (std::string(L.act) == "LeakyRelu") act_attrs.emplace_back("alpha", 0.3f);
            b.op(L.act, {cb}, act_attrs, "act");
            const graft::exec::session::feed_list feeds{{"img:0", fz_values({n, 28, 28, L.ic}, 13)}};
            graft::exec::session plain(g, unfused());
            const tensor want = plain.run(feeds, {"act:0"})[0];
            for (int threads : {1, 2}) {
                INFO(L.ic << " -> " << L.oc << " " << L.act << ", batch " << n << ", " << threads << " threads");
                graft::set_num_threads(threads);
                graft::exec::session fused(g);
                const tensor got = fused.run(feeds, {"act:0"})[0];
                CHECK(graft::equal(got, want));
                const auto& plan = fused.prepare({"img:0"}, {"act:0"}, {});
                CHECK(std::any_of(plan.steps.begin(), plan.steps.end(),
                                  [](const auto& s) { return s.n->op == "_FusedConv2D"; }));
            }
            graft::set_num_threads(before);
        }
    }
}

namespace {
// A two-layer MLP's training graph (plain SGD through graft::train, as tf.compat.v1's
// GradientDescentOptimizer builds it), ref or resource variables.
struct sgd_model {
    graft::meta_graph mg;
    std::string train, init;
    std::vector<std::string> reads;  // the kernels' and biases' read endpoints
    explicit sgd_model(bool resource) {
        const graft::graph_builder b(mg.graph);
        const auto x = b.placeholder("x", dtype::float32, graft::shape{-1, 20});
        const auto y = b.placeholder("y", dtype::float32, graft::shape{-1, 3});
        graft::train::variable_options o;
        o.use_resource = resource;
        graft::endpoint h = x;
        const std::int64_t sizes[] = {20, 12, 3};
        for (int i = 0; i < 2; ++i) {
            const auto sc = b.sub("dense" + std::to_string(i));
            auto w = graft::train::create_variable(mg, sc, "kernel", fz_values({sizes[i], sizes[i + 1]}, 11 + i), o);
            auto bias = graft::train::create_variable(mg, sc, "bias", fz_values({sizes[i + 1]}, 21 + i), o);
            h = sc.op("BiasAdd", {sc.op("MatMul", {h, w.value}), bias.value});
            if (i == 0) h = sc.op("Relu", {h});
            reads.push_back(w.value.str());
            reads.push_back(bias.value.str());
        }
        const auto xent = b.op_n("SoftmaxCrossEntropyWithLogits", {h, y});
        const auto loss = b.op("Mean", {xent[0], b.constant(tensor::from_vector<std::int32_t>({0}))}, {}, "loss");
        train = graft::train::gradient_descent(0.05f).minimize(mg, loss);
        init = graft::train::global_variables_initializer(mg);
    }
};
}  // namespace

TEST_CASE("fusion: a weight gradient's MatMul runs inside its ApplyGradientDescent with the unfused bits") {
    const int threads_before = graft::num_threads();
    for (bool resource : {false, true})
        for (int threads : {1, 2}) {
            CAPTURE(resource);
            CAPTURE(threads);
            graft::set_num_threads(threads);
            sgd_model m(resource);
            graft::exec::session fused(m.mg.graph), plain(m.mg.graph, unfused());
            fused.run({}, {}, {m.init});
            plain.run({}, {}, {m.init});
            for (int step = 0; step < 3; ++step) {
                const graft::exec::session::feed_list feeds{{"x:0", fz_values({37, 20}, 30 + step)},
                                                            {"y:0", fz_values({37, 3}, 40 + step)}};
                fused.run(feeds, {}, {m.train});
                plain.run(feeds, {}, {m.train});
            }
            const auto a = fused.run({}, m.reads), b = plain.run({}, m.reads);
            for (std::size_t i = 0; i < a.size(); ++i) {
                INFO(m.reads[i]);
                CHECK(graft::equal(a[i], b[i]));
            }
            CHECK(!graft::equal(a[0], fz_values({20, 12}, 11)));  // trained
            // both kernels' updates are fused steps; the biases' (BiasAddGrad) are not
            const std::string op = resource ? "_MatMulResourceApplyGradientDescent" : "_MatMulApplyGradientDescent";
            const auto& fp = fused.prepare({"x:0", "y:0"}, {}, {m.train});
            std::vector<std::string> matmuls;  // the gradient MatMuls they absorbed
            int count = 0;
            for (const auto& s : fp.steps) {
                if (s.n->op != op) continue;
                ++count;
                matmuls.push_back(s.n->attr("_fused_from")->list_of<std::string>().at(0));
            }
            CHECK(count == 2);
            // fetched in the same run, the gradient stays a step of its own (same bits again)
            REQUIRE(!matmuls.empty());
            const std::string grad = matmuls[0].substr(0, matmuls[0].find(' ')) + ":0";
            const graft::exec::session::feed_list feeds{{"x:0", fz_values({5, 20}, 50)}, {"y:0", fz_values({5, 3}, 51)}};
            const tensor ga = fused.run(feeds, {grad}, {m.train})[0], gb = plain.run(feeds, {grad}, {m.train})[0];
            CHECK(graft::equal(ga, gb));
            int left = 0;
            for (const auto& s : fused.prepare({"x:0", "y:0"}, {grad}, {m.train}).steps) left += s.n->op == op;
            CHECK(left == 1);
            const auto a2 = fused.run({}, m.reads), b2 = plain.run({}, m.reads);
            for (std::size_t i = 0; i < a2.size(); ++i) CHECK(graft::equal(a2[i], b2[i]));
        }
    graft::set_num_threads(threads_before);
}
