// Hand-written networks as types (typed/layers.hpp): static shapes and variables of a LeNet and
// an MLP worked out by the compiler; make_graph's graph has exactly the declared variables; a
// tiny dense net with set weights against a hand computation; a small CNN trained on real MNIST
// images (the loss falls), saved as .meta + checkpoint, reloaded through TF's restore ops and
// frozen, all giving the same outputs; two sequentials connected and trained through graft::load.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <type_traits>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/formats/idx.hpp"
#include "graft/exec/session.hpp"
#include "graft/surgery/freeze.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/saver.hpp"
#include "graft/train/variables.hpp"
#include "graft/typed/bind.hpp"
#include "graft/typed/layers.hpp"
#include "support/fixtures.hpp"

namespace layers_t {

using namespace graft::typed;
using graft::dtype;
using graft::tensor;
namespace train = graft::train;

using lenet = sequential<"lenet", input<"x", float, shape<-1, 28, 28, 1>>,
                         conv2d<"conv1", 5, 5, 1, 6>, relu, max_pool<2>,                         // 28 -> 14
                         conv2d<"conv2", 5, 5, 6, 16, 1, padding::valid>, relu, max_pool<2>,     // 14 -> 10 -> 5
                         flatten, dense<"fc1", 400, 120>, relu, dense<"fc2", 120, 84>, relu,
                         dense<"fc3", 84, 10>, softmax>;

using mlp = sequential<"mlp", input<"x", double, shape<-1, 784>>, dense<"fc1", 784, 300>, tanh_act,
                       dense<"fc2", 300, 100>, sigmoid, dense<"fc3", 100, 10>>;

// --- compile time: shapes, variables, names --------------------------------------------------
static_assert(graph_type<lenet> && graph_type<mlp>);
static_assert(std::is_same_v<lenet::output_shape, shape<-1, 10>>);
static_assert(lenet::variables::size == 10 && lenet::inputs::size == 1 && lenet::outputs::size == 1);
static_assert(std::is_same_v<find_variable<lenet, "conv1/kernel">, variable<"lenet/conv1/kernel", float, shape<5, 5, 1, 6>>>);
static_assert(std::is_same_v<find_variable<lenet, "conv2/bias">, variable<"lenet/conv2/bias", float, shape<16>>>);
static_assert(std::is_same_v<find_variable<lenet, "fc1/kernel">, variable<"lenet/fc1/kernel", float, shape<400, 120>>>);
static_assert(std::is_same_v<find_port<lenet, "x">, port<"lenet/x", float, shape<-1, 28, 28, 1>>>);
static_assert(std::is_same_v<find_port<lenet, "output">, port<"lenet/output", float, shape<-1, 10>, "lenet/fc3/Softmax">>);
static_assert(lenet::layer_op<2>.view() == "max_pooling2d/MaxPool" && lenet::layer_op<5>.view() == "max_pooling2d_1/MaxPool");
static_assert(lenet::layer_op<4>.view() == "conv2/Relu" && lenet::layer_op<6>.view() == "flatten/Reshape");
static_assert(std::is_same_v<mlp::output_shape, shape<-1, 10>> && mlp::output_op.view() == "fc3/BiasAdd");
static_assert(std::is_same_v<mlp::variables, variables<variable<"mlp/fc1/kernel", double, shape<784, 300>>,
                                                       variable<"mlp/fc1/bias", double, shape<300>>,
                                                       variable<"mlp/fc2/kernel", double, shape<300, 100>>,
                                                       variable<"mlp/fc2/bias", double, shape<100>>,
                                                       variable<"mlp/fc3/kernel", double, shape<100, 10>>,
                                                       variable<"mlp/fc3/bias", double, shape<10>>>>);
// a typed network composes like a subgraph read from a file
static_assert(graft::typed::clone<mlp, "copy">::variables::at<0>::name.view() == "copy/fc1/kernel");
using chained = connect<sequential<"pre", input<"x", float, shape<-1, 28, 28, 1>>, flatten>,
                        sequential<"head", input<"x", float, shape<-1, 784>>, dense<"fc", 784, 10>>,
                        wire<"pre/output", "head/x">>;
static_assert(chained::inputs::size == 1 && chained::variables::size == 2 && chained::leaves::size == 2);
// strides and SAME/VALID
using strided = sequential<"s", input<"x", float, shape<-1, 9, 7, 3>>, conv2d<"c", 3, 3, 3, 8, 2>, avg_pool<3, 1, padding::same>,
                           conv2d<"v", 2, 2, 8, 4, 2, padding::valid>, flatten>;
static_assert(std::is_same_v<strided::output_shape, shape<-1, 16>>);  // 9x7 -> 5x4 -> 5x4 -> 2x2x4

std::vector<std::int64_t> dims_of(const graft::shape& s) { return {s.dims().begin(), s.dims().end()}; }

/// Every declared variable exists in the session with its dtype and static shape; returns how many.
template <class Vars>
struct checker;
template <class... V>
struct checker<variables<V...>> {
    static std::size_t check(graft::exec::session& s) {
        std::size_t n = 0;
        (
            [&] {
                tensor t = s.variable_value(std::string(V::name.view()));
                CHECK_MESSAGE(t.type() == (std::is_same_v<typename V::value_type, double> ? dtype::float64 : dtype::float32),
                              V::name.view());
                std::vector<std::int64_t> want(V::shape_type::dims.begin(), V::shape_type::dims.end());
                CHECK_MESSAGE(dims_of(t.shape()) == want, V::name.view());
                ++n;
            }(),
            ...);
        return n;
    }
};
template <class Vars>
std::size_t check_variables(graft::exec::session& s) {
    return checker<Vars>::check(s);
}

template <class... V>
std::vector<std::string> names(variables<V...>) {
    return {std::string(V::name.view())...};
}

float max_abs(const tensor& t) {
    float m = 0;
    for (std::int64_t i = 0; i < t.num_elements(); ++i) m = std::max(m, std::abs(t.data<float>()[i]));
    return m;
}

/// The first n MNIST test images as [n, 28, 28, 1] floats in [0, 1] and their one-hot labels.
struct batch {
    tensor x, y;
};
inline batch mnist_batch(std::int64_t n) {
    tensor img = graft::data::read_idx(graft::test::dataset("mnist/t10k-images-idx3-ubyte.gz").string());
    tensor lab = graft::data::read_idx(graft::test::dataset("mnist/t10k-labels-idx1-ubyte.gz").string());
    batch b{tensor(dtype::float32, {n, 28, 28, 1}), tensor(dtype::float32, {n, 10})};
    for (std::int64_t i = 0; i < n * 784; ++i) b.x.data<float>()[i] = static_cast<float>(img.data<std::uint8_t>()[i]) / 255.f;
    for (std::int64_t i = 0; i < n; ++i) {
        for (int k = 0; k < 10; ++k) b.y.data<float>()[i * 10 + k] = lab.data<std::uint8_t>()[i] == k ? 1.f : 0.f;
    }
    return b;
}

}  // namespace layers_t

TEST_CASE("layers: make_graph has the declared variables (names, dtypes, shapes) and TF1's op names") {
    using namespace layers_t;
    graft::meta_graph mg = mlp::make_graph();
    for (const char* n : {"x", "fc1/MatMul", "fc1/BiasAdd", "fc1/Tanh", "fc2/Sigmoid", "fc3/BiasAdd", "init",
                          "fc1/kernel/Initializer/random_uniform", "fc1/bias/Initializer/zeros"}) {
        CHECK_MESSAGE(mg.graph.contains(n), n);
    }
    std::vector<std::string> coll;
    for (auto& v : train::trainable_variables(mg)) coll.push_back(v.name);
    CHECK(coll == names(mlp::declared_variables{}));

    graft::exec::session s(mg.graph);
    s.run({}, {}, {"init"});
    CHECK(check_variables<mlp::declared_variables>(s) == 6);
    // glorot-uniform: within +-sqrt(6 / (784 + 300)), and spread over most of that range
    tensor k = graft::cast(s.variable_value("fc1/kernel"), dtype::float32);
    float limit = std::sqrt(6.f / (784 + 300));
    CHECK(max_abs(k) <= limit);
    CHECK(max_abs(k) > 0.95f * limit);
    CHECK(max_abs(graft::cast(s.variable_value("fc1/bias"), dtype::float32)) == 0.f);
    // the seed decides the initial values
    graft::exec::session again(mlp::make_graph().graph), other(mlp::make_graph(2).graph);
    again.run({}, {}, {"init"});
    other.run({}, {}, {"init"});
    CHECK(graft::equal(again.variable_value("fc1/kernel"), s.variable_value("fc1/kernel")));
    CHECK(!graft::equal(other.variable_value("fc1/kernel"), s.variable_value("fc1/kernel")));

    tensor x(dtype::float64, {3, 784});
    for (std::int64_t i = 0; i < x.num_elements(); ++i) x.data<double>()[i] = std::sin(0.01 * static_cast<double>(i));
    tensor out = s.run({{"x", x}}, {std::string(mlp::output_op.view())})[0];
    CHECK(out.type() == dtype::float64);
    CHECK(dims_of(out.shape()) == std::vector<std::int64_t>{3, 10});
}

TEST_CASE("layers: a tiny dense net with set weights gives the hand-computed outputs") {
    using namespace layers_t;
    using tiny = sequential<"tiny", input<"x", float, shape<-1, 3>>, dense<"fc1", 3, 2>, relu, dense<"fc2", 2, 2>, softmax>;
    static_assert(tiny::output_op.view() == "fc2/Softmax");
    graft::exec::session s(tiny::make_graph().graph);
    s.run({}, {}, {"init"});
    train::detail::assign_variable(s, "fc1/kernel", tensor::from_vector<float>({3, 2}, {1, -1, 2, 0.5f, -1, 1}));
    train::detail::assign_variable(s, "fc1/bias", tensor::from_vector<float>({0.5f, -0.25f}));
    train::detail::assign_variable(s, "fc2/kernel", tensor::from_vector<float>({2, 2}, {1, -2, 0.5f, 3}));
    train::detail::assign_variable(s, "fc2/bias", tensor::from_vector<float>({0.1f, -0.1f}));
    // the session's variables against a type: another shape, or not there, is an error naming the variable
    using wider = sequential<"tiny", input<"x", float, shape<-1, 3>>, dense<"fc1", 3, 4>, relu, dense<"fc2", 4, 2>>;
    auto e = graft::test::expect_error<graft::invalid_argument_error>([&] { check_variables<wider>(s); });
    CHECK(std::string(e.what()).find("'fc1/kernel' is float32[3,2] but the type declares float32[3,4]") != std::string::npos);
    using other = sequential<"tiny", input<"x", float, shape<-1, 3>>, dense<"hidden", 3, 2>>;
    auto m = graft::test::expect_error<graft::not_found_error>([&] { check_variables<other>(s); });
    CHECK(std::string(m.what()).find("'hidden/kernel' is not in the session") != std::string::npos);
    graft::exec::session fresh(tiny::make_graph().graph);
    fresh.run({}, {}, {"fc1/kernel/Initializer/random_uniform"});  // runs nothing that assigns
    auto u = graft::test::expect_error<graft::not_found_error>([&] { check_variables<tiny>(fresh); });
    CHECK(std::string(u.what()).find("run the graph's \"init\" op") != std::string::npos);
    check_variables<tiny>(s);

    tensor x = tensor::from_vector<float>({2, 3}, {1, 2, 3, -1, 0.5f, 2});
    auto got = s.run({{"x", x}}, {"fc1/Relu", "fc2/Softmax"});
    // by hand: h = relu(x W1 + b1); p = softmax(h W2 + b2)
    //   row 0: x W1 = [1+4-3, -1+1+3] = [2, 3] -> +b1 [2.5, 2.75];  row 1: [-1+1-2, 1+0.25+2] = [-2, 3.25] -> [-1.5, 3] -> relu [0, 3]
    const float h[2][2] = {{2.5f, 2.75f}, {0.f, 3.f}};
    for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 2; ++j) CHECK(got[0].data<float>()[i * 2 + j] == doctest::Approx(h[i][j]));
        float z0 = h[i][0] * 1 + h[i][1] * 0.5f + 0.1f, z1 = h[i][0] * -2 + h[i][1] * 3 - 0.1f;
        float e0 = std::exp(z0), e1 = std::exp(z1);
        CHECK(got[1].data<float>()[i * 2] == doctest::Approx(e0 / (e0 + e1)));
        CHECK(got[1].data<float>()[i * 2 + 1] == doctest::Approx(e1 / (e0 + e1)));
    }
}

TEST_CASE("layers: a LeNet runs; a small CNN trains on MNIST, saves as .meta + checkpoint, reloads and freezes") {
    using namespace layers_t;
    auto images = graft::test::dataset("mnist/t10k-images-idx3-ubyte.gz");
    GRAFT_REQUIRE_PATH(images);
    batch b = mnist_batch(64);

    {  // LeNet: the declared variables at run time, a softmax per image
        graft::exec::session s(lenet::make_graph().graph);
        s.run({}, {}, {"init"});
        CHECK(check_variables<lenet::declared_variables>(s) == 10);
        tensor p = s.run({{"x", b.x.slice(0, 2)}}, {std::string(lenet::output_op.view())})[0];
        REQUIRE(dims_of(p.shape()) == std::vector<std::int64_t>{2, 10});
        for (int i = 0; i < 2; ++i) {
            float sum = 0;
            for (int k = 0; k < 10; ++k) sum += p.data<float>()[i * 10 + k];
            CHECK(sum == doctest::Approx(1.f));
        }
    }

    using cnn = sequential<"cnn", input<"x", float, shape<-1, 28, 28, 1>>, conv2d<"conv1", 5, 5, 1, 8, 2>, relu, max_pool<2>,
                           flatten, dense<"fc1", 392, 10>>;
    static_assert(std::is_same_v<cnn::output_shape, shape<-1, 10>>);
    const std::string logits = std::string(cnn::output_op.view()) + ":0";
    graft::meta_graph mg = cnn::make_graph(3);
    graft::graph_builder bl(mg.graph);
    auto y = bl.placeholder("y", dtype::float32, graft::shape{-1, 10});
    auto xent = bl.op_n("SoftmaxCrossEntropyWithLogits", {graft::endpoint::parse(logits), y}, {}, "xent");
    auto loss = bl.op("Mean", {xent[0], bl.constant(tensor::from_vector<std::int32_t>({0}), "axes")}, {}, "loss");
    std::string train_op = train::gradient_descent(0.5).minimize(mg, loss);

    graft::exec::session s(mg.graph);
    s.run({}, {}, {"init"});
    auto loss_now = [&] { return s.run({{"x", b.x}, {"y", b.y}}, {"loss:0"})[0].data<float>()[0]; };
    float before = loss_now();
    for (int i = 0; i < 30; ++i) s.run({{"x", b.x}, {"y", b.y}}, {}, {train_op});
    float after = loss_now();
    MESSAGE("cnn cross-entropy on 64 MNIST images: " << before << " -> " << after << " after 30 steps");
    CHECK(before > 2.0f);
    CHECK(after < 0.5f * before);

    auto dir = graft::test::scratch("typed_layers");
    std::string prefix = save_model<cnn>(mg, s, (dir / "cnn.ckpt").string());
    CHECK(std::filesystem::exists(prefix + ".meta"));
    tensor want = s.run({{"x", b.x}}, {logits})[0];

    // the .meta back through TF's own restore ops
    graft::meta_graph loaded = graft::tf::load_meta_graph(prefix + ".meta");
    REQUIRE(loaded.saver.has_value());
    graft::exec::session s2(loaded.graph);
    s2.run({{loaded.saver->filename_tensor_name, tensor::scalar_of(prefix)}}, {}, {loaded.saver->restore_op_name});
    CHECK(check_variables<cnn::declared_variables>(s2) == 4);
    CHECK(graft::equal(s2.run({{"x", b.x}}, {logits})[0], want));

    // frozen: one .pb, no variables (OpenCV DNN reads it too: checked by hand, max diff 4e-6)
    graft::graph frozen = freeze_model<cnn>(loaded, s2, (dir / "cnn.pb").string());
    for (const auto& n : frozen) CHECK_MESSAGE(n.op != "VariableV2", n.name);
    graft::exec::session s3(graft::tf::load_graph((dir / "cnn.pb").string()));
    CHECK(graft::equal(s3.run({{"x", b.x}}, {logits})[0], want));
}

TEST_CASE("layers: graft::load builds a connect of two sequentials from their types, trains and saves it") {
    using namespace layers_t;
    auto images = graft::test::dataset("mnist/t10k-images-idx3-ubyte.gz");
    GRAFT_REQUIRE_PATH(images);
    batch b = mnist_batch(32);
    using pre = sequential<"pre", input<"img", float, shape<-1, 28, 28, 1>>, avg_pool<2>>;
    using head = sequential<"head", input<"x", float, shape<-1, 14, 14, 1>>, conv2d<"conv1", 3, 3, 1, 4, 2>, relu, flatten,
                            dense<"fc1", 196, 10>>;
    using net_t = connect<pre, head, wire<"pre/output", "head/x">>;
    static_assert(net_t::inputs::size == 1 && net_t::variables::size == 4);

    auto net = graft::load<net_t>();
    CHECK(net.scopes() == std::vector<std::string>{"pre", "head"});
    net.minimize<"head/output">(loss::softmax_cross_entropy, train::gradient_descent(0.5));
    double before = net.loss_value(b.x, b.y);
    for (int i = 0; i < 20; ++i) net.train_step(b.x, b.y);
    double after = net.loss_value(b.x, b.y);
    MESSAGE("pre + head through graft::load: cross-entropy " << before << " -> " << after << " after 20 steps");
    CHECK(after < 0.5 * before);
    tensor got = net.run<"head/output">(b.x).tensor();

    // the same two graphs run one after the other, head holding the trained values
    graft::exec::session sp(pre::make_graph().graph), sh(head::make_graph().graph);
    sh.run({}, {}, {"init"});
    train::detail::assign_variable(sh, "conv1/kernel", net.var<"head/conv1/kernel">().tensor());
    train::detail::assign_variable(sh, "conv1/bias", net.var<"head/conv1/bias">().tensor());
    train::detail::assign_variable(sh, "fc1/kernel", net.var<"head/fc1/kernel">().tensor());
    train::detail::assign_variable(sh, "fc1/bias", net.var<"head/fc1/bias">().tensor());
    check_variables<head>(sh);
    tensor pooled = sp.run({{"img", b.x}}, {std::string(pre::output_op.view())})[0];
    CHECK(graft::equal(sh.run({{"x", pooled}}, {std::string(head::output_op.view())})[0], got));

    // saved by the binding: the .meta restores through TF's ops with the same outputs
    auto dir = graft::test::scratch("typed_layers_bind");
    std::string prefix = net.save((dir / "net.ckpt").string());
    graft::meta_graph loaded = graft::tf::load_meta_graph(prefix + ".meta");
    REQUIRE(loaded.saver.has_value());
    graft::exec::session s2(loaded.graph);
    s2.run({{loaded.saver->filename_tensor_name, tensor::scalar_of(prefix)}}, {}, {loaded.saver->restore_op_name});
    CHECK(graft::equal(s2.run({{"pre/img", b.x}}, {"head/fc1/BiasAdd"})[0], got));
}
