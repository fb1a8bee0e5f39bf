// graft/typed/bind.hpp — the runtime binding of a typed graph (typed/types.hpp): graft::load<Net>
// imports every model file of the composition under its scope, wires the seams, restores each
// part from its checkpoint, checks once that the files have the declared ports and variables,
// and gives typed access to running, reading variables, training and saving. Link graft::compiled.
//
//   using namespace graft::typed;
//   using G1 = subgraph<"g1", inputs<port<"x", float, shape<-1, 4>>>,
//                             outputs<port<"code", float, shape<-1, 3>, "g1_output">>>;
//   using G2 = subgraph<"g2", inputs<port<"code", float, shape<-1, 3>, "g2_input">>,
//                             outputs<port<"logits", float, shape<-1, 2>>>>;
//   using Net = connect<G1, G2, wire<"g1/code", "g2/code">>;
//   auto net = graft::load<Net>(source{"g1", "enc.ckpt.meta"}, source{"g2", "cls.ckpt.meta"});
//   tensor_of<float, shape<-1, 2>> y = net.run<"logits">(x);       // x: graft::tensor [n, 4]
//   auto w = net.var<"g1/dense/kernel">();                         // (if declared in G1)
//   net.minimize<"logits">(loss::softmax_cross_entropy, graft::train::gradient_descent(0.1));
//   double l = net.train_step(x, onehot);                          // feeds..., labels
//   net.save("out/net.ckpt");                                      // + out/net.ckpt.meta
//   // several inputs: net.run<"logits">(feed<"g1/x">(x), feed<"g2/keep">(k));
//   // a misspelt port or variable name is a compile error (find_port / find_variable); a tensor
//   // of the wrong dtype or shape is an invalid_argument_error naming the port; a declaration the
//   // files do not match is ONE interface_error listing every difference.
//
// Build time: the runtime part (typed/detail/bind_impl.hpp: loading, wiring, checking, the session,
// training, saving) is compiled once into graft::compiled (src/compiled/typed_runtime.cpp), which every program
// that reads TF files links anyway; this header declares it and includes no session, surgery or
// training header, so a translation unit binding a typed 2-model connect compiles in seconds.
//
// Sources are keyed by a leaf's ORIGINAL scope (the scope_name of its subgraph<>), so G and
// clone<G, "copy"> read the same files; the copy gets its own variables, restored from the same
// checkpoint. A leaf whose subgraph type has `static graft::meta_graph make_graph()` (hand-written
// layers) is built instead of read, and initialised by its "init" op unless a source gives it a
// checkpoint (source{"scope", "", "ckpt"}).
// (With `using namespace graft::typed` at global scope, spell clone as graft::typed::clone: glibc
// declares a global ::clone.)
#pragma once
#define GRAFT_TYPED_BIND_HPP_INCLUDED

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "graft/core/dtype.hpp"
#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/typed/types.hpp"

namespace graft {
struct meta_graph;
struct endpoint;
class graph_builder;
namespace exec {
class session;
}
namespace train {
class optimizer;
}
}  // namespace graft

namespace graft::typed {

/// The graft dtype of a C++ element type: dtype_of<float> == dtype::float32, dtype_of<std::int64_t>
/// == dtype::int64, dtype_of<bool> == dtype::bool_, dtype_of<std::uint8_t> == dtype::uint8.
template <class T>
inline constexpr graft::dtype dtype_of = graft::dtype_of<T>;

/// One model file (and its checkpoint) for the leaves whose subgraph<> has scope `scope`.
/// `model`: a .meta, a SavedModel directory or a graph file; empty for a hand-written leaf.
/// `checkpoint`: empty = derived ("x.meta" -> "x", a SavedModel -> "<dir>/variables/variables",
/// used when its .index exists).
struct source {
    std::string scope;
    std::string model;
    std::string checkpoint;
    /// Never throws (except bad_alloc).
    source(std::string scope_, std::string model_, std::string checkpoint_ = {})
        : scope(std::move(scope_)), model(std::move(model_)), checkpoint(std::move(checkpoint_)) {}
};

/// A loss for bound::minimize.
enum class loss { softmax_cross_entropy, mean_squared_error };

/// Builds a scalar loss from the output and the labels placeholder (both endpoints of the graph `b`
/// builds into).
using loss_builder = std::function<endpoint(const graph_builder& b, const endpoint& output, const endpoint& labels)>;

/// The declared interface does not match the model files; differences() lists each one.
class interface_error : public invalid_argument_error {
public:
    interface_error(std::string message, std::vector<std::string> differences, std::string hint)
        : invalid_argument_error(std::move(message), {}, std::move(hint)), differences_(std::move(differences)) {}
    [[nodiscard]] const std::vector<std::string>& differences() const noexcept { return differences_; }

private:
    std::vector<std::string> differences_;
};

namespace bind_detail {

/// "[?,784]" for shape<-1, 784>. Never throws (except bad_alloc).
inline std::string dims_text(const std::vector<std::int64_t>& d) {
    std::string s = "[";
    for (std::size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + (d[i] < 0 ? std::string("?") : std::to_string(d[i]));
    return s + "]";
}

template <class Shape>
std::vector<std::int64_t> dims_of() {
    return std::vector<std::int64_t>(Shape::dims.begin(), Shape::dims.end());
}

/// Why `t` is not a `type` tensor of `dims` (-1 = any), or "" when it is. Never throws (except bad_alloc).
inline std::string tensor_mismatch(const graft::tensor& t, graft::dtype type, const std::vector<std::int64_t>& dims) {
    if (!t.valid()) return "no tensor (empty)";
    bool ok = t.type() == type && t.rank() == static_cast<int>(dims.size());
    for (std::size_t i = 0; ok && i < dims.size(); ++i) ok = dims[i] < 0 || dims[i] == t.dim(static_cast<int>(i));
    if (ok) return {};
    return graft::detail::cat("wants ", dtype_name(type), dims_text(dims), ", got ", t.describe());
}

}  // namespace bind_detail

/// A graft::tensor whose dtype is T and whose shape fits Shape (rank, known dims), checked when
/// it is made: `y.data()`, `y.dim(0)`, `y(i, j)`.
template <class T, class Shape>
class tensor_of {
public:
    using value_type = T;
    using shape_type = Shape;
    static constexpr std::size_t rank = Shape::rank;

    /// Wraps `t`. Throws invalid_argument_error naming `what` when its dtype, rank or a known
    /// dimension differs from the declared ones.
    explicit tensor_of(graft::tensor t, std::string_view what = "tensor") : t_(std::move(t)) {
        if (auto why = bind_detail::tensor_mismatch(t_, dtype_of<T>, bind_detail::dims_of<Shape>()); !why.empty()) {
            throw invalid_argument_error(graft::detail::cat("'", what, "' ", why), location::at_tensor(std::string(what)),
                                         "give a tensor of the declared dtype and shape");
        }
    }
    /// A zero tensor of these dimensions. Throws invalid_argument_error when one differs from a
    /// known declared dimension.
    static tensor_of zeros(const std::array<std::int64_t, rank>& dims) {
        return tensor_of(graft::tensor(dtype_of<T>, graft::shape(std::vector<std::int64_t>(dims.begin(), dims.end()))),
                         "zeros");
    }

    [[nodiscard]] T* data() const { return t_.template data<T>(); }
    [[nodiscard]] std::int64_t dim(std::size_t i) const { return t_.dim(static_cast<int>(i)); }
    [[nodiscard]] std::int64_t size() const { return t_.num_elements(); }
    /// Element (i, j, ...), row-major; no bounds check.
    template <class... I>
        requires(sizeof...(I) == rank && (std::is_integral_v<I> && ...))
    T& operator()(I... i) const {
        std::array<std::int64_t, rank> idx{static_cast<std::int64_t>(i)...};
        std::int64_t off = 0;
        for (std::size_t k = 0; k < rank; ++k) off = off * t_.dim(static_cast<int>(k)) + idx[k];
        return data()[off];
    }
    [[nodiscard]] const graft::tensor& tensor() const { return t_; }
    operator const graft::tensor&() const { return t_; }  // NOLINT: implicit by design

private:
    graft::tensor t_;
};

/// A tensor for the input port `Name` of a bound graph: net.run<"out">(feed<"g1/x">(t), ...).
template <fixed_string Name>
struct fed {
    graft::tensor value;
};
/// Never throws.
template <fixed_string Name>
fed<Name> feed(graft::tensor t) {
    return {std::move(t)};
}

namespace bind_detail {

/// A port or variable as the runtime sees it.
struct port_spec {
    std::string name;    ///< full name in the composition ("g1/x")
    std::string tensor;  ///< in the model file ("x:0"), or the variable's node name
    graft::dtype dtype = graft::dtype::invalid;
    std::vector<std::int64_t> dims;
};

/// One model file of the composition.
struct leaf_spec {
    std::string scope;  ///< where it lands
    std::string key;    ///< the subgraph's own scope: the source key
    std::vector<port_spec> inputs, outputs, variables;
    std::function<meta_graph()> make;  ///< hand-written leaves
};

struct wire_spec {
    std::string source, target;  ///< full tensor names
};

inline std::string with_index(std::string_view t) {
    return t.find(':') == std::string_view::npos ? std::string(t) + ":0" : std::string(t);
}

template <class P>
port_spec port_of(std::string_view file_name) {
    return {std::string(P::name.view()), std::string(file_name), dtype_of<typename P::value_type>,
            dims_of<typename P::shape_type>()};
}

template <class List>
struct each;
template <template <class...> class L, class... X>
struct each<L<X...>> {
    template <class F>
    static void apply(F&& f) {
        (f(std::type_identity<X>{}), ...);
    }
};

template <class Leaf>
leaf_spec leaf_of() {
    using S = typename Leaf::subgraph_type;
    leaf_spec l;
    l.scope = std::string(Leaf::scope.view());
    l.key = std::string(S::scope_name.view());
    auto add = [&](std::vector<port_spec>& out, auto list, bool is_tensor) {
        each<typename decltype(list)::type>::apply([&](auto p) {
            using P = typename decltype(p)::type;
            std::string full = l.key + "/" + std::string(P::name.view());
            port_spec s = port_of<P>(is_tensor ? with_index(P::tensor.view()) : std::string(P::tensor.view()));
            s.name = full;
            out.push_back(std::move(s));
        });
    };
    add(l.inputs, std::type_identity<typename S::declared_inputs>{}, true);
    add(l.outputs, std::type_identity<typename S::declared_outputs>{}, true);
    add(l.variables, std::type_identity<typename S::declared_variables>{}, false);
    if constexpr (requires { S::make_graph(); }) l.make = [] { return meta_graph(S::make_graph()); };
    return l;
}


using feed_list = std::vector<std::pair<std::string, graft::tensor>>;

/// The state of a bound graph (typed/detail/bind_impl.hpp).
struct runtime;
struct runtime_deleter {
    void operator()(runtime* r) const noexcept;
};
using runtime_ptr = std::unique_ptr<runtime, runtime_deleter>;

/// Loads, checks, imports (wired) and restores the leaves. Throws invalid_argument_error (unknown
/// or missing sources, a variable without checkpoint or init), interface_error, and what loading,
/// importing and restoring throw.
runtime_ptr bind_leaves(const std::vector<leaf_spec>& leaves, const std::vector<wire_spec>& wires,
                                        const std::vector<source>& sources);
/// Runs to `fetch`. Throws what the session throws.
graft::tensor run(runtime& r, const feed_list& feeds, const std::string& fetch);
/// The value of variable node `name`. Throws not_found_error, graph_error (uninitialised).
graft::tensor variable_value(runtime& r, const std::string& name);
/// Sets variable node `name`. Throws not_found_error, invalid_argument_error.
void assign_variable(runtime& r, const std::string& name, const graft::tensor& t);
/// Labels, loss (`kind`, or `*custom` when given) and update ops, once. Throws invalid_argument_error
/// (twice, unknown scope, softmax on rank != 2), graph_error, what the optimizer throws.
void minimize(runtime& r, const std::string& output, const std::string& port, graft::dtype type,
                              const std::vector<std::int64_t>& dims, loss kind, const loss_builder* custom, train::optimizer& opt,
                              const std::vector<std::string>& scopes);
/// One training step (or the loss only). Throws invalid_argument_error (no minimize), what run throws.
double step(runtime& r, feed_list feeds, const graft::tensor& labels, bool train);
/// Saves every variable + the .meta. Throws io_error, graph_error.
std::string save(runtime& r, const std::string& prefix);
/// Escape hatches. Never throw (refresh: graph_error).
meta_graph& graph_of(runtime& r);
exec::session& session_of(runtime& r);
void refresh(runtime& r);
const std::vector<std::string>& scopes_of(const runtime& r);

template <class G, fixed_string Name>
struct find_input_impl {
    using list = typename G::inputs;
    static constexpr auto r = detail::lookup(detail::names_of<list>::value, Name.view());
    static_assert(r.count > 0 || error::no_input_port_named<Name, G::scope_name>::value,
                  "feed<name>: the bound graph has no input port of this name (a wired input is fed by its wire)");
    static_assert(r.count < 2 || error::several_ports_end_in<Name>::value,
                  "feed<name>: several inputs end in this name; use the full name (scope/name)");
    using type = typename detail::pick<list, r.index, Name>::type;
};

template <class T>
struct is_fed : std::false_type {};
template <fixed_string N>
struct is_fed<fed<N>> : std::true_type {};

}  // namespace bind_detail

/// A typed graph bound to its model files: made by graft::load<Net>(sources...).
template <graph_type Net>
class bound {
public:
    using type = Net;

    explicit bound(bind_detail::runtime_ptr rt) : rt_(std::move(rt)) {}

    /// Runs the graph to the output (or input) port `Out` (full name or unambiguous tail; a typo is
    /// a compile error). Arguments: feed<"port">(t)..., or one bare tensor when Net has one input.
    /// Throws invalid_argument_error naming the port when a tensor has the wrong dtype or shape,
    /// and what the session throws.
    template <fixed_string Out, class... A>
    auto run(const A&... args) {
        using P = find_port<Net, Out>;
        if constexpr (std::is_void_v<typename P::value_type>) {
            return;  // no such port: find_port has said so
        } else {
            bind_detail::feed_list feeds;
            (add_feed(feeds, args), ...);
            return tensor_of<typename P::value_type, typename P::shape_type>(
                bind_detail::run(*rt_, feeds, bind_detail::with_index(P::tensor.view())), P::name.view());
        }
    }

    /// The current value of the declared variable `Name`. Throws not_found_error, graph_error
    /// (uninitialised).
    template <fixed_string Name>
    auto var() {
        using V = find_variable<Net, Name>;
        if constexpr (std::is_void_v<typename V::value_type>) {
            return;  // no such variable: find_variable has said so
        } else {
            return tensor_of<typename V::value_type, typename V::shape_type>(bind_detail::variable_value(*rt_, std::string(V::name.view())),
                                                                              V::name.view());
        }
    }

    /// Sets the declared variable `Name`. Throws invalid_argument_error (dtype/shape, naming it).
    template <fixed_string Name>
    void assign(const graft::tensor& t) {
        using V = find_variable<Net, Name>;
        tensor_of<typename V::value_type, typename V::shape_type> checked(t, V::name.view());
        bind_detail::assign_variable(*rt_, std::string(V::name.view()), checked.tensor());
    }

    /// Adds a labels placeholder shaped like the port `Out`, the loss (`kind` on `Out` vs the
    /// labels) and `opt`'s update ops, once. `scopes`: train only the variables under these scopes
    /// (default: every trainable variable). Throws invalid_argument_error (twice, unknown scope,
    /// softmax on a port whose rank is not 2), graph_error, what the optimizer throws.
    template <fixed_string Out, class Opt>
        requires std::is_base_of_v<train::optimizer, std::remove_cvref_t<Opt>>
    void minimize(loss kind, Opt&& opt, const std::vector<std::string>& scopes = {}) {
        using P = find_port<Net, Out>;
        train::optimizer& o = opt;
        bind_detail::minimize(*rt_, bind_detail::with_index(P::tensor.view()), std::string(P::name.view()), dtype_of<typename P::value_type>,
                         bind_detail::dims_of<typename P::shape_type>(), kind, nullptr, o, scopes);
    }
    /// minimize with a loss of your own: f(builder, output, labels) -> scalar endpoint (include
    /// graft/graph/build.hpp). Throws like above.
    template <fixed_string Out, class Opt>
        requires std::is_base_of_v<train::optimizer, std::remove_cvref_t<Opt>>
    void minimize(const loss_builder& f, Opt&& opt, const std::vector<std::string>& scopes = {}) {
        using P = find_port<Net, Out>;
        train::optimizer& o = opt;
        bind_detail::minimize(*rt_, bind_detail::with_index(P::tensor.view()), std::string(P::name.view()), dtype_of<typename P::value_type>,
                         bind_detail::dims_of<typename P::shape_type>(), loss::mean_squared_error, &f, o, scopes);
    }

    /// One training step: feeds as for run(), then the labels; returns the loss (before the
    /// update). Throws invalid_argument_error (no minimize yet, bad feed), what the session throws.
    template <class... A>
    double train_step(const A&... args) {
        static_assert(sizeof...(A) >= 1, "train_step(feeds..., labels): the labels come last");
        return step(true, std::forward_as_tuple(args...), std::make_index_sequence<sizeof...(A) - 1>{});
    }
    /// The loss for these feeds and labels, without training. Throws like train_step.
    template <class... A>
    double loss_value(const A&... args) {
        static_assert(sizeof...(A) >= 1, "loss_value(feeds..., labels): the labels come last");
        return step(false, std::forward_as_tuple(args...), std::make_index_sequence<sizeof...(A) - 1>{});
    }

    /// Saves every variable to the checkpoint `prefix` and the graph to `prefix`.meta (TF's save
    /// ops included, so TF and graft read it back). Returns the prefix. Throws io_error, graph_error.
    std::string save(const std::string& prefix) { return bind_detail::save(*rt_, prefix); }

    /// The combined MetaGraph (scopes as the type says). Changing it needs refresh().
    [[nodiscard]] meta_graph& graph() { return bind_detail::graph_of(*rt_); }
    /// The session (its graph is a copy of graph()). Never throws.
    [[nodiscard]] exec::session& session() { return bind_detail::session_of(*rt_); }
    /// A new session over graph() keeping the variables. Throws graph_error.
    void refresh() { bind_detail::refresh(*rt_); }
    /// The scopes of the imported model files, in import order. Never throws.
    [[nodiscard]] const std::vector<std::string>& scopes() const { return bind_detail::scopes_of(*rt_); }

private:
    template <fixed_string N>
    static void add_feed(bind_detail::feed_list& feeds, const fed<N>& f) {
        using I = typename bind_detail::find_input_impl<Net, N>::type;
        if constexpr (!std::is_void_v<typename I::value_type>) add_checked<I>(feeds, f.value);
    }
    template <class T>
        requires(!bind_detail::is_fed<T>::value && std::is_convertible_v<const T&, const graft::tensor&>)
    static void add_feed(bind_detail::feed_list& feeds, const T& t) {
        static_assert(Net::inputs::size == 1,
                      "run<out>(x) / train_step(x, labels): a bare tensor feeds the only input, but this graph has several (or none): "
                      "use feed<\"input name\">(x) for each");
        if constexpr (Net::inputs::size == 1) add_checked<typename Net::inputs::template at<0>>(feeds, t);
    }
    template <class I>
    static void add_checked(bind_detail::feed_list& feeds, const graft::tensor& t) {
        if (auto why = bind_detail::tensor_mismatch(t, dtype_of<typename I::value_type>, bind_detail::dims_of<typename I::shape_type>()); !why.empty()) {
            throw invalid_argument_error(graft::detail::cat("input '", I::name.view(), "' ", why), location::at_tensor(std::string(I::name.view())),
                                         "feed a tensor of the declared dtype and shape");
        }
        feeds.emplace_back(bind_detail::with_index(I::tensor.view()), t);
    }
    template <class Tuple, std::size_t... K>
    double step(bool train, const Tuple& args, std::index_sequence<K...>) {
        bind_detail::feed_list feeds;
        (add_feed(feeds, std::get<K>(args)), ...);
        const graft::tensor& labels = std::get<sizeof...(K)>(args);
        return bind_detail::step(*rt_, std::move(feeds), labels, train);
    }

    bind_detail::runtime_ptr rt_;
};

/// Binds Net to its model files: see graft::load.
template <graph_type Net, class... S>
    requires(std::is_convertible_v<S, source> && ...)
bound<Net> load(const S&... sources) {
    std::vector<bind_detail::leaf_spec> leaves;
    bind_detail::each<typename Net::leaves>::apply([&](auto l) { leaves.push_back(bind_detail::leaf_of<typename decltype(l)::type>()); });
    std::vector<bind_detail::wire_spec> wires;
    bind_detail::each<typename Net::wires>::apply([&](auto w) {
        using W = typename decltype(w)::type;
        wires.push_back({bind_detail::with_index(W::source::tensor.view()), bind_detail::with_index(W::target::tensor.view())});
    });
    return bound<Net>(bind_detail::bind_leaves(leaves, wires, std::vector<source>{source(sources)...}));
}

}  // namespace graft::typed

namespace graft {

/// Imports the model files of the typed graph Net (one typed::source per subgraph scope), wires
/// them as Net says, restores each part from its checkpoint and checks the declared interface.
/// Throws typed::interface_error listing every declared port/variable the files do not match,
/// invalid_argument_error (unknown or missing sources), and what loading, importing and restoring
/// throw (io_error, format_error, not_found_error, ...).
template <typed::graph_type Net, class... S>
    requires(std::is_convertible_v<S, typed::source> && ...)
typed::bound<Net> load(const S&... sources) {
    return typed::load<Net>(sources...);
}

}  // namespace graft

// The typed runtime is a compiled part of graft::compiled only (core/config.hpp): src/compiled/typed_runtime.cpp
// defines GRAFT_COMPILING_TYPED and compiles it; a program using graft::load links graft::compiled.
#if defined(GRAFT_COMPILING_TYPED)
#include "graft/typed/detail/bind_impl.hpp"
#endif
