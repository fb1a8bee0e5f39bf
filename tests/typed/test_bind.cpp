// typed/bind.hpp: graft::load<Net> on models graft trains and saves as TF files here — a typed
// connect equals the runtime surgery::connect (and the two models run in turn), a typed clone
// equals surgery::clone's copy policy and trains independently, a wrong declaration is one error
// listing every difference, train_step lowers the loss and save + reload gives the same outputs,
// a hand-written leaf (make_graph) joins a composition, and a declaration of the real
// mnist-softmax checkpoint classifies the MNIST test set at 7357/10000.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <type_traits>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/formats/idx.hpp"
#include "graft/surgery/clone.hpp"
#include "graft/surgery/connect.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/typed/bind.hpp"
#include "support/fixtures.hpp"
#include "support/mnist.hpp"

namespace bind_t {

using graft::dtype;
using graft::tensor;
namespace train = graft::train;
namespace surgery = graft::surgery;
namespace typed = graft::typed;
using typed::fixed_string;
using typed::inputs;
using typed::outputs;
using typed::port;
using typed::shape;
using typed::variable;
using typed::variables;

/// Deterministic values in [-a, a].
inline tensor randn(graft::shape s, unsigned seed, float a = 0.5f) {
    tensor t(dtype::float32, s);
    unsigned x = seed * 2654435761u + 12345u;
    for (std::int64_t i = 0; i < t.num_elements(); ++i) {
        x = x * 1664525u + 1013904223u;
        t.data<float>()[i] = a * (static_cast<float>(x >> 8) / 8388608.0f - 1.0f);
    }
    return t;
}

/// in -> Relu(dense) -> dense `out` (+ "labels", a mean-squared "loss"), trained 5 steps with
/// GradientDescent and saved to `prefix` (+ .meta). Returns the MetaGraph read back.
inline graft::meta_graph make_mlp(const std::string& prefix, const std::string& in, const std::string& out, int ni, int nh, int no,
                                  unsigned seed) {
    graft::meta_graph mg;
    graft::graph_builder b(mg.graph);
    auto x = b.placeholder(in, dtype::float32, graft::shape{-1, ni});
    auto y = b.placeholder("labels", dtype::float32, graft::shape{-1, no});
    auto d1 = b.at_scope("dense"), d2 = b.at_scope("dense_1");
    auto w1 = train::create_variable(mg, d1, "kernel", randn({ni, nh}, seed));
    auto b1 = train::create_variable(mg, d1, "bias", randn({nh}, seed + 1, 0.1f));
    auto w2 = train::create_variable(mg, d2, "kernel", randn({nh, no}, seed + 2));
    auto b2 = train::create_variable(mg, d2, "bias", randn({no}, seed + 3, 0.1f));
    auto h = b.op("Relu", {b.op("BiasAdd", {b.op("MatMul", {x, w1.value}), b1.value})});
    auto o = b.op("BiasAdd", {b.op("MatMul", {h, w2.value}), b2.value}, {}, out);
    auto loss = b.op("Mean", {b.op("Square", {b.op("Sub", {o, y})}), b.constant(tensor::from_vector<std::int32_t>({0, 1}))}, {}, "loss");
    train::gradient_descent opt(0.05);
    std::string op = opt.minimize(mg, loss);
    std::string init = train::global_variables_initializer(mg);
    train::saver sv(mg);
    graft::exec::session s(mg.graph);
    s.run({}, {}, {init});
    for (int i = 0; i < 5; ++i) s.run({{in + ":0", randn({8, ni}, seed + 10 + i, 1.f)}, {"labels:0", randn({8, no}, seed + 20 + i, 1.f)}}, {}, {op});
    sv.save(s, prefix);
    return graft::tf::load_meta_graph(prefix + ".meta");
}

inline tensor run_alone(const graft::meta_graph& mg, const std::string& ckpt, const std::string& in, const tensor& x, const std::string& out) {
    graft::exec::session s(mg.graph);
    surgery::restore_scoped(s, mg, "", ckpt, {});
    return s.run({{in, x}}, {out})[0];
}

inline double max_diff(const tensor& a, const tensor& b) {
    REQUIRE(a.shape() == b.shape());
    double m = 0;
    for (std::int64_t i = 0; i < a.num_elements(); ++i) m = std::max(m, std::fabs(double(a.data<float>()[i]) - b.data<float>()[i]));
    return m;
}

/// The variables of make_mlp(ni, nh, no).
template <std::int64_t I, std::int64_t H, std::int64_t O>
using mlp_variables = variables<variable<"dense/kernel", float, shape<I, H>>, variable<"dense/bias", float, shape<H>>,
                                variable<"dense_1/kernel", float, shape<H, O>>, variable<"dense_1/bias", float, shape<O>>>;

using G1 = typed::subgraph<"g1", inputs<port<"x", float, shape<-1, 4>>>, outputs<port<"code", float, shape<-1, 3>, "g1_output">>,
                           mlp_variables<4, 8, 3>>;
using G2 = typed::subgraph<"g2", inputs<port<"code", float, shape<-1, 3>, "g2_input">>, outputs<port<"logits", float, shape<-1, 2>>>,
                           mlp_variables<3, 6, 2>>;
using Net = typed::connect<G1, G2, typed::wire<"g1/code", "g2/code">>;

/// A hand-written leaf: y = x * w, w = [2, 3], built by make_graph (with its "init" op).
struct scale_layer : typed::subgraph<"scale", inputs<port<"x", float, shape<-1, 2>>>, outputs<port<"y", float, shape<-1, 2>>>,
                                     variables<variable<"w", float, shape<2>>>> {
    using leaves = typed::leaves<typed::leaf<"scale", scale_layer>>;
    static graft::meta_graph make_graph() {
        graft::meta_graph mg;
        graft::graph_builder b(mg.graph);
        auto x = b.placeholder("x", dtype::float32, graft::shape{-1, 2});
        auto w = train::create_variable(mg, b, "w", tensor::from_vector<float>({2.f, 3.f}));
        b.op("Mul", {x, w.value}, {}, "y");
        train::global_variables_initializer(mg);
        return mg;
    }
};

struct pair_fixture {
    std::filesystem::path dir;
    graft::meta_graph a, b;
    std::string ca, cb;
    explicit pair_fixture(const std::string& name) : dir(graft::test::scratch(name)) {
        ca = (dir / "a.ckpt").string();
        cb = (dir / "b.ckpt").string();
        a = make_mlp(ca, "x", "g1_output", 4, 8, 3, 1);
        b = make_mlp(cb, "g2_input", "logits", 3, 6, 2, 7);
    }
};

}  // namespace bind_t

TEST_CASE("typed bind: connect<G1, G2> equals the runtime surgery::connect and the two models run in turn") {
    using namespace bind_t;
    using typed::source;
    pair_fixture f("typed_bind_connect");
    auto net = graft::load<Net>(source{"g1", f.ca + ".meta"}, source{"g2", f.cb + ".meta"});
    CHECK(net.scopes() == std::vector<std::string>{"g1", "g2"});
    CHECK_FALSE(net.graph().graph.contains("g2/g2_input"));  // the wired input is gone

    tensor x = randn({5, 4}, 99, 1.f);
    auto y = net.run<"logits">(x);
    static_assert(std::is_same_v<decltype(y), typed::tensor_of<float, shape<-1, 2>>>);
    CHECK(y.dim(0) == 5);
    CHECK(y(1, 1) == y.data()[3]);

    auto c = surgery::connect({{"g1", f.a, f.ca}, {"g2", f.b, f.cb}}, {{"g2/g2_input:0", "g1/g1_output:0"}});
    graft::exec::session s(c.mg.graph);
    surgery::restore_parts(s, c);
    CHECK(max_diff(y, s.run({{"g1/x:0", x}}, {"g2/logits:0"})[0]) == 0);
    tensor mid = run_alone(f.a, f.ca, "x:0", x, "g1_output:0");
    CHECK(max_diff(y, run_alone(f.b, f.cb, "g2_input:0", mid, "logits:0")) <= 1e-6);
    CHECK(max_diff(net.run<"g1/code">(typed::feed<"x">(x)), mid) <= 1e-6);

    // variables, typed, as in the checkpoints
    auto w = net.var<"g1/dense/kernel">();
    static_assert(std::is_same_v<decltype(w), typed::tensor_of<float, shape<4, 8>>>);
    CHECK(graft::equal(w, graft::tf::checkpoint_reader(f.ca).read("dense/kernel")));
    CHECK(graft::equal(net.var<"g2/dense_1/bias">(), graft::tf::checkpoint_reader(f.cb).read("dense_1/bias")));
    net.assign<"g2/dense_1/bias">(tensor::from_vector<float>({0.f, 0.f}));
    CHECK(net.var<"g2/dense_1/bias">().data()[1] == 0.f);

    // a tensor of the wrong dtype or shape names the port
    auto e1 = graft::test::expect_error<graft::invalid_argument_error>([&] { (void)net.run<"logits">(graft::cast(x, dtype::float64)); });
    CHECK(std::string(e1.what()).find("g1/x") != std::string::npos);
    auto e2 = graft::test::expect_error<graft::invalid_argument_error>([&] { (void)net.run<"logits">(randn({5, 3}, 1)); });
    CHECK(std::string(e2.what()).find("float32[?,4]") != std::string::npos);
    auto e3 = graft::test::expect_error<graft::invalid_argument_error>([&] { net.assign<"g1/dense/bias">(randn({7}, 1)); });
    CHECK(std::string(e3.what()).find("g1/dense/bias") != std::string::npos);

    // sources: a missing one and an unknown one, each named with the scopes expected
    auto e4 = graft::test::expect_error<graft::invalid_argument_error>([&] { (void)graft::load<Net>(source{"g1", f.ca + ".meta"}); });
    CHECK(std::string(e4.what()).find("no source for 'g2'") != std::string::npos);
    auto e5 = graft::test::expect_error<graft::invalid_argument_error>(
        [&] { (void)graft::load<Net>(source{"g1", f.ca + ".meta"}, source{"g2", f.cb + ".meta"}, source{"g3", f.cb + ".meta"}); });
    CHECK(std::string(e5.what()).find("'g3' matches no subgraph") != std::string::npos);
    CHECK(std::string(e5.what()).find("'g1', 'g2'") != std::string::npos);

    // a hand-written leaf after the connect: built by make_graph, initialised by its "init"
    using Scaled = typed::connect<Net, scale_layer, typed::wire<"g2/logits", "scale/x">>;
    auto sn = graft::load<Scaled>(source{"g1", f.ca + ".meta"}, source{"g2", f.cb + ".meta"});
    auto ys = sn.run<"scale/y">(x);
    auto y2 = sn.run<"g2/logits">(x);
    for (int i = 0; i < 5; ++i) {
        CHECK(ys(i, 0) == 2.f * y2(i, 0));
        CHECK(ys(i, 1) == 3.f * y2(i, 1));
    }
    CHECK(max_diff(y2, y) == 0);

    // ... or restored from a checkpoint of its own (keys as in make_graph's graph: "w")
    {
        auto mg = scale_layer::make_graph();
        train::saver sv(mg);
        graft::exec::session ss(mg.graph);
        train::detail::assign_variable(ss, "w", tensor::from_vector<float>({5.f, 7.f}));
        sv.save(ss, (f.dir / "scale.ckpt").string());
    }
    auto sc = graft::load<Scaled>(source{"g1", f.ca + ".meta"}, source{"g2", f.cb + ".meta"}, source{"scale", "", (f.dir / "scale.ckpt").string()});
    auto yc = sc.run<"scale/y">(x);
    CHECK(yc(4, 0) == 5.f * y2(4, 0));
    CHECK(yc(4, 1) == 7.f * y2(4, 1));
}

TEST_CASE("typed bind: connect<G, clone<G, \"copy\">> equals surgery::clone (copy policy); training the copy leaves G alone") {
    using namespace bind_t;
    using typed::source;
    auto dir = graft::test::scratch("typed_bind_clone");
    std::string cc = (dir / "sq.ckpt").string();
    auto mg = make_mlp(cc, "x", "y", 3, 5, 3, 3);
    using G = typed::subgraph<"g", inputs<port<"x", float, shape<-1, 3>>>, outputs<port<"y", float, shape<-1, 3>>>, mlp_variables<3, 5, 3>>;
    using Twice = typed::connect<G, typed::clone<G, "copy">, typed::wire<"g/y", "copy/x">>;
    static_assert(Twice::leaves::size == 2);
    auto net = graft::load<Twice>(source{"g", cc + ".meta"});  // one source serves G and its copy
    tensor x = randn({6, 3}, 5, 1.f);
    auto got = net.run<"copy/y">(x);

    // the runtime route: import under "g", restore, clone g/x..g/y into "copy" fed by g/y
    graft::meta_graph host;
    surgery::import_meta_graph(host, mg, surgery::under("g"));
    graft::exec::session s(host.graph);
    surgery::restore_scoped(s, host, "g", cc, surgery::into_scope("g"));
    surgery::clone_options o;
    o.inputs = {"g/x"};
    o.outputs = {"g/y:0"};
    o.scope = "copy";
    o.input_map = {{"g/x:0", "g/y:0"}};
    o.init = surgery::init_policy::copy;
    o.values = surgery::session_values(s);
    auto r = surgery::clone(host, o);
    graft::exec::session s2(host.graph, s.state().variables_ptr());
    s2.run({}, {}, {r.init_op});
    CHECK(max_diff(got, s2.run({{"g/x:0", x}}, {r.outputs[0]})[0]) == 0);

    // the copy's variables start equal to G's and train on their own
    auto k0 = net.var<"g/dense/kernel">().tensor().clone();
    CHECK(graft::equal(net.var<"copy/dense/kernel">(), k0));
    net.minimize<"copy/y">(typed::loss::mean_squared_error, train::gradient_descent(0.05), {"copy"});
    tensor target = randn({6, 3}, 8, 1.f);
    double l0 = net.train_step(x, target);
    for (int i = 0; i < 5; ++i) net.train_step(x, target);
    CHECK(net.loss_value(x, target) < l0);
    CHECK(graft::equal(net.var<"g/dense/kernel">(), k0));
    CHECK(graft::equal(net.var<"g/dense_1/bias">(), graft::tf::checkpoint_reader(cc).read("dense_1/bias")));
    CHECK_FALSE(graft::equal(net.var<"copy/dense/kernel">(), k0));
    CHECK_FALSE(graft::equal(net.var<"copy/dense_1/bias">(), graft::tf::checkpoint_reader(cc).read("dense_1/bias")));
    auto e = graft::test::expect_error<graft::invalid_argument_error>(
        [&] { net.minimize<"copy/y">(typed::loss::mean_squared_error, train::gradient_descent(0.05)); });
    CHECK(std::string(e.what()).find("already") != std::string::npos);
}

TEST_CASE("typed bind: a declaration that does not match the files is one error listing every difference") {
    using namespace bind_t;
    pair_fixture f("typed_bind_mismatch");
    using Bad = typed::subgraph<"g1", inputs<port<"x", double, shape<-1, 4>>>,
                                outputs<port<"code", float, shape<-1, 5>, "g1_output">, port<"probs", float, shape<-1, 3>, "softmax">>,
                                variables<variable<"dense/kernel", float, shape<4, 9>>, variable<"dense/gamma", float, shape<8>>,
                                          variable<"dense/bias", float, shape<8>>>>;
    auto e = graft::test::expect_error<typed::interface_error>([&] { (void)graft::load<Bad>(typed::source{"g1", f.ca + ".meta"}); });
    std::string m = e.what();
    CAPTURE(m);
    CHECK(e.differences().size() == 5);
    for (auto s : {"'g1/x' (tensor 'x:0'): declared float64[?,4], found float32[?,4]", "'g1/code' (tensor 'g1_output:0'): declared float32[?,5], found float32[?,3]",
                   "'g1/probs': declared float32[?,3] at tensor 'softmax:0', not in", "'g1/dense/kernel': declared float32[4,9], found float32[4,8]",
                   "'g1/dense/gamma': declared float32[8], not in", "graft codegen"}) {
        CHECK(m.find(s) != std::string::npos);
    }
    CHECK(m.find("'g1/dense/bias'") == std::string::npos);  // what matches is not listed
}

TEST_CASE("typed bind: train_step lowers the loss; save + reload (load_meta_graph + restore) gives the same outputs") {
    using namespace bind_t;
    using typed::source;
    pair_fixture f("typed_bind_train");
    auto net = graft::load<Net>(source{"g1", f.ca + ".meta", f.ca}, source{"g2", f.cb + ".meta"});
    auto k0 = net.var<"g1/dense/kernel">().tensor().clone();
    auto b0 = net.var<"g2/dense_1/kernel">().tensor().clone();
    net.minimize<"logits">(typed::loss::softmax_cross_entropy, train::gradient_descent(0.2));
    tensor x = randn({16, 4}, 21, 1.f), onehot(dtype::float32, {16, 2});
    for (int i = 0; i < 16; ++i) onehot.data<float>()[i * 2 + (x.data<float>()[i * 4] > 0 ? 1 : 0)] = 1.f;
    double l0 = net.train_step(x, onehot);
    for (int i = 0; i < 20; ++i) net.train_step(x, onehot);
    double l1 = net.loss_value(x, onehot);
    MESSAGE("softmax cross-entropy " << l0 << " -> " << l1);
    CHECK(l1 < l0 - 0.01);
    CHECK_FALSE(graft::equal(net.var<"g1/dense/kernel">(), k0));  // gradients cross the seam
    CHECK_FALSE(graft::equal(net.var<"g2/dense_1/kernel">(), b0));

    tensor xt = randn({3, 4}, 77, 1.f);
    tensor want = net.run<"logits">(xt);
    std::string p = net.save((f.dir / "out" / "net.ckpt").string());
    auto mg = graft::tf::load_meta_graph(p + ".meta");
    REQUIRE(mg.saver);
    graft::exec::session s(mg.graph);
    s.run({{mg.saver->filename_tensor_name, tensor::scalar_of(p)}}, {}, {mg.saver->restore_op_name});  // TF's own restore ops
    CHECK(max_diff(s.run({{"g1/x:0", xt}}, {"g2/logits:0"})[0], want) == 0);
    graft::exec::session s2(mg.graph);
    surgery::restore_scoped(s2, mg, "", p, {});
    CHECK(max_diff(s2.run({{"g1/x:0", xt}}, {"g2/logits:0"})[0], want) == 0);
}

TEST_CASE("typed bind: a declaration of mnist-softmax/train_model.ckpt classifies the MNIST test set at 7357/10000") {
    using namespace bind_t;
    auto meta = graft::test::fixture("mnist-softmax/train_model.ckpt.meta");
    GRAFT_REQUIRE_PATH(meta);
    graft::test::mnist_set mnist;
    if (!graft::test::mnist_test_set_or_skip(mnist)) return;
    using Mnist = typed::subgraph<"mnist", inputs<port<"features", float, shape<-1, 784>, "Placeholder">>,
                                  outputs<port<"logits", float, shape<-1, 10>, "Add">>,
                                  variables<variable<"Variable", float, shape<784, 10>>, variable<"Variable_1", float, shape<10>>>>;
    auto net = graft::load<Mnist>(typed::source{"mnist", meta.string()});  // checkpoint: train_model.ckpt
    auto logits = net.run<"logits">(mnist.features);
    CHECK(graft::test::argmax_hits(logits, mnist.labels) == 7357);
    CHECK(net.var<"Variable">().dim(0) == 784);
}

TEST_CASE("typed bind: a TF1 SavedModel directory as a source (its variables/variables checkpoint by default)") {
    using namespace bind_t;
    auto dir = graft::test::fixture("tf-serving/saved_model_half_plus_two_cpu/00000123");
    GRAFT_REQUIRE_PATH(dir);
    using HalfPlusTwo = typed::subgraph<"hp2", inputs<port<"x", float, shape<-1, 1>>>, outputs<port<"y", float, shape<-1, 1>>>,
                                        variables<variable<"a", float, shape<>>, variable<"b", float, shape<>>>>;
    auto net = graft::load<HalfPlusTwo>(typed::source{"hp2", dir.string()});
    auto y = net.run<"y">(tensor::from_vector<float>(graft::shape{3, 1}, {1.f, 2.f, 5.f}));
    CHECK(y(0, 0) == 2.5f);
    CHECK(y(1, 0) == 3.0f);
    CHECK(y(2, 0) == 4.5f);
    CHECK(net.var<"a">().data()[0] == 0.5f);
}
