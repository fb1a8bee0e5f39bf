// graft/typed/layers.hpp — hand-written networks as types (typed/layers_types.hpp) built into a
// real TF1 graph: sequential<...>::make_graph() writes the ops and variables tf.layers would, so
// the model trains with train::optimizer, saves with train::saver as .meta + checkpoint in TF's
// formats (TF's save/restore ops included), freezes with surgery::freeze (OpenCV DNN reads the
// .pb), and binds with graft::load<Net>(). Link graft::compiled.
//
//   using namespace graft::typed;
//   using mlp = sequential<"mlp", input<"x", float, shape<-1, 784>>,
//                          dense<"fc1", 784, 256>, relu, dense<"fc2", 256, 10>>;
//   graft::meta_graph mg = mlp::make_graph(/*seed=*/7);   // x, fc1/MatMul, fc1/BiasAdd, fc1/Relu, ..., init
//   graft::exec::session s(mg.graph);
//   s.run({}, {}, {"init"});
//   auto logits = s.run({{"x", images}}, {std::string(mlp::output_op.view())})[0];   // [n, 10]
//   ... train it (graft::train::gradient_descent(0.1).minimize(mg, loss), run the op) ...
//   check_variables<mlp>(s);                             // the session holds what the type declares
//   save_model<mlp>(mg, s, "out/mlp.ckpt");              // out/mlp.ckpt.meta + checkpoint
//   freeze_model<mlp>(mg, s, "out/mlp.pb");              // a frozen GraphDef (graft, TF, OpenCV DNN)
//
// Variables: kernels "<layer>/kernel" initialised glorot-uniform as tf.layers does
// (U(-l, l), l = sqrt(6 / (fan_in + fan_out)); conv fans are KH*KW*Cin and KH*KW*Cout) through
// "<kernel>/Initializer/random_uniform" ops (RandomUniform seed = make_graph's seed, seed2 = the
// layer's index + 1), biases "<layer>/bias" from "<bias>/Initializer/zeros". All in the
// "variables" and "trainable_variables" collections; the NoOp "init" runs every initializer.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "graft/graph/meta_graph.hpp"
#include "graft/surgery/freeze.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/train/saver.hpp"
#include "graft/train/variables.hpp"
#include "graft/typed/layers_types.hpp"

namespace graft::typed {

namespace layers_detail {

template <class T>
inline graft::dtype dtype_of() {
    return std::is_same_v<T, double> ? graft::dtype::float64 : graft::dtype::float32;
}

template <class S>
struct to_shape;
template <std::int64_t... D>
struct to_shape<shape<D...>> {
    static graft::shape get() { return graft::shape(std::vector<std::int64_t>{D...}); }
};

/// What every layer builds with: the MetaGraph, a top-level builder, the dtype and the seeds.
struct build_context {
    graft::meta_graph* mg;
    graft::graph_builder root;
    graft::dtype type;
    std::uint64_t seed;
    std::size_t index;  ///< the layer being built
};

/// tf.random_uniform(dims, -limit, limit) under "<var>/Initializer/random_uniform" (TF's nodes:
/// shape, min, max, RandomUniform, sub, mul and the Add named "random_uniform").
inline graft::endpoint glorot_uniform(const build_context& c, const std::string& var, const std::vector<std::int64_t>& dims,
                                      std::int64_t fan_in, std::int64_t fan_out) {
    const double limit = std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
    const std::string scope = var + "/Initializer/random_uniform";
    graft::graph_builder b = c.root.at_scope(scope);
    std::vector<std::int32_t> d32(dims.begin(), dims.end());
    auto shp = b.constant(graft::tensor::from_vector<std::int32_t>(d32), "shape");
    auto lo = b.scalar_as(c.type, -limit, "min");
    auto hi = b.scalar_as(c.type, limit, "max");
    auto rnd = b.op("RandomUniform", {shp},
                    {{"dtype", c.type}, {"seed", static_cast<std::int64_t>(c.seed)},
                     {"seed2", static_cast<std::int64_t>(c.index + 1)}},
                    "RandomUniform");
    auto range = b.op("Sub", {hi, lo}, {}, "sub");
    auto scaled = b.op("Mul", {rnd, range}, {}, "mul");
    return c.root.op("AddV2", {scaled, lo}, {}, scope);
}

/// "<layer>/kernel" (glorot-uniform) and "<layer>/bias" (zeros).
inline std::pair<train::variable, train::variable> kernel_and_bias(const build_context& c, const std::string& layer,
                                                                   const std::vector<std::int64_t>& dims, std::int64_t fan_in,
                                                                   std::int64_t fan_out) {
    const std::string k = layer + "/kernel";
    auto init = glorot_uniform(c, k, dims, fan_in, fan_out);
    auto kernel = train::create_variable(*c.mg, c.root, k, c.type, graft::shape(dims), init);
    auto bias = train::create_filled_variable(*c.mg, c.root, layer + "/bias", c.type, graft::shape{dims.back()},
                                              train::fill_kind::zeros);
    return {kernel, bias};
}

inline graft::attr_value ints(std::vector<std::int64_t> v) { return graft::attr_value::list_of(std::move(v)); }
inline const char* padding_name(padding p) { return p == padding::same ? "SAME" : "VALID"; }

// One overload per layer family: builds the layer's ops on `x`; `scope` and `op` are the names the
// type computed (layer_scope<I>, layer_op<I>); S is the incoming static shape.

template <class S, fixed_string Name, std::int64_t In, std::int64_t Out>
graft::endpoint build_layer(const dense<Name, In, Out>*, const build_context& c, const graft::endpoint& x,
                            const std::string& scope, const std::string& op) {
    auto [k, b] = kernel_and_bias(c, scope, {In, Out}, In, Out);
    auto mm = c.root.op("MatMul", {x, k.value}, {}, scope + "/MatMul");
    return c.root.op("BiasAdd", {mm, b.value}, {}, op);
}

template <class S, fixed_string Name, std::int64_t KH, std::int64_t KW, std::int64_t Cin, std::int64_t Cout, std::int64_t Stride,
          padding Pad>
graft::endpoint build_layer(const conv2d<Name, KH, KW, Cin, Cout, Stride, Pad>*, const build_context& c, const graft::endpoint& x,
                            const std::string& scope, const std::string& op) {
    auto [k, b] = kernel_and_bias(c, scope, {KH, KW, Cin, Cout}, KH * KW * Cin, KH * KW * Cout);
    auto conv = c.root.op("Conv2D", {x, k.value},
                          {{"strides", ints({1, Stride, Stride, 1})}, {"padding", padding_name(Pad)}, {"data_format", "NHWC"}},
                          scope + "/Conv2D");
    return c.root.op("BiasAdd", {conv, b.value}, {}, op);
}

template <class S, fixed_string Base, fixed_string Op, std::int64_t K, std::int64_t Stride, padding Pad>
graft::endpoint build_layer(const layers_detail::pool_layer<Base, Op, K, Stride, Pad>*, const build_context& c, const graft::endpoint& x,
                            const std::string&, const std::string& op) {
    return c.root.op(Op.view(), {x},
                     {{"ksize", ints({1, K, K, 1})}, {"strides", ints({1, Stride, Stride, 1})}, {"padding", padding_name(Pad)},
                      {"data_format", "NHWC"}},
                     op);
}

template <class S>
graft::endpoint build_layer(const flatten*, const build_context& c, const graft::endpoint& x, const std::string&,
                            const std::string& op) {
    auto dims = c.root.at_scope(op).constant(
        graft::tensor::from_vector<std::int32_t>({-1, static_cast<std::int32_t>(layers_detail::inner_product<S>::value)}), "shape");
    return c.root.op("Reshape", {x, dims}, {}, op);
}

template <class S, fixed_string Op>
graft::endpoint build_layer(const layers_detail::activation_layer<Op>*, const build_context& c, const graft::endpoint& x,
                            const std::string&, const std::string& op) {
    return c.root.op(Op.view(), {x}, {}, op);
}

/// Layers I.. of Seq on `x` (whose static shape is S).
template <class Seq, std::size_t I, class S>
graft::endpoint build_from(build_context& c, const graft::endpoint& x) {
    if constexpr (I == std::tuple_size_v<typename Seq::layers>) {
        return x;
    } else {
        using L = std::tuple_element_t<I, typename Seq::layers>;
        using step = typename L::template apply<typename Seq::value_type, S, Seq::template layer_scope<I>>;
        c.index = I;
        graft::endpoint y = build_layer<S>(static_cast<const L*>(nullptr), c, x, std::string(Seq::template layer_scope<I>.view()),
                                           std::string(Seq::template layer_op<I>.view()));
        return build_from<Seq, I + 1, typename step::type>(c, y);
    }
}

}  // namespace layers_detail

template <fixed_string Scope, fixed_string X, class T, class XShape, fixed_string XTensor, class... Layers>
graft::meta_graph sequential<Scope, port<X, T, XShape, XTensor>, Layers...>::make_graph(std::uint64_t seed) {
    graft::meta_graph mg;
    layers_detail::build_context c{&mg, graft::graph_builder(mg.graph), layers_detail::dtype_of<T>(), seed, 0};
    graft::endpoint x = c.root.placeholder(X.view(), c.type, layers_detail::to_shape<XShape>::get());
    layers_detail::build_from<sequential, 0, XShape>(c, x);
    train::global_variables_initializer(mg);
    return mg;
}

/// A sequential's type: the names of its built graph are known (declared_variables, output_op).
template <class Net>
concept built_network = graph_type<Net> && requires {
    Net::output_op;
    typename Net::declared_variables;
};

namespace layers_detail {
template <class Vars>
struct check_each;
template <class... V>
struct check_each<variables<V...>> {
    static void run(exec::session& s) {
        (check_one<V>(s), ...);
    }
    template <class Var>
    static void check_one(exec::session& s) {
        const std::string name(Var::name.view());
        auto v = s.variables().find(name);
        graft::tensor t;
        if (v) {
            try {
                t = exec::to_host(v->read());
            } catch (const graph_error&) {  // never initialised
            }
        }
        if (!t.valid()) {
            throw not_found_error("the network's variable '" + name + "' is " + (v ? "not initialised" : "not in the session"),
                                  location::at_node(name),
                                  "run the graph's \"init\" op (or restore a checkpoint) in a session of make_graph()'s graph first");
        }
        const graft::dtype want = dtype_of<typename Var::value_type>();
        const graft::shape shp = to_shape<typename Var::shape_type>::get();
        if (t.type() != want || t.shape() != shp) {
            throw invalid_argument_error("the network's variable '" + name + "' is " + std::string(graft::dtype_name(t.type())) +
                                             t.shape().str() + " but the type declares " + std::string(graft::dtype_name(want)) +
                                             shp.str(),
                                         location::at_node(name), "assign it a value of the declared dtype and shape");
        }
    }
};
}  // namespace layers_detail

/// Checks that `s` holds every variable Net declares (its names in make_graph's graph),
/// initialised, with the declared dtype and static shape. Throws not_found_error naming a missing
/// or uninitialised variable, invalid_argument_error naming one of another dtype or shape.
template <built_network Net>
void check_variables(exec::session& s) {
    layers_detail::check_each<typename Net::declared_variables>::run(s);
}

/// Net as TF files: "<prefix>.meta" (mg with TF's save/restore ops, which this adds to mg when it
/// has none) and the checkpoint of s's values ("<prefix>.index", "<prefix>.data-00000-of-00001",
/// the `checkpoint` file). `mg` is make_graph()'s graph (plus whatever was added, e.g. training
/// ops), `s` a session over it. Returns the prefix. Throws like check_variables, and io_error.
template <built_network Net>
std::string save_model(graft::meta_graph& mg, exec::session& s, const std::string& prefix) {
    check_variables<Net>(s);
    train::saver_options o;
    o.build_ops = !mg.saver.has_value();
    train::saver sv(mg, o);
    return sv.save(s, prefix);
}

/// Net frozen: its variables as Consts holding s's values, pruned to the output op (kept under its
/// name), written to `path` as a binary GraphDef when `path` is not empty. Throws like
/// check_variables, graph_error from surgery::freeze, io_error.
template <built_network Net>
graft::graph freeze_model(const graft::meta_graph& mg, exec::session& s, const std::string& path = {}) {
    check_variables<Net>(s);
    graft::graph g = surgery::freeze(mg, s, {std::string(Net::output_op.view()) + ":0"});
    if (!path.empty()) tf::write_graph(g, path);
    return g;
}

}  // namespace graft::typed
