// graft/typed/bind.hpp — the runtime binding of a typed graph (typed/types.hpp): graft::load<Net>
// imports every model file of the composition under its scope, wires the seams, restores each
// part from its checkpoint, checks once that the files have the declared ports and variables,
// and gives typed access to running, reading variables, training and saving. Link graft::tf.
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
//
// Sources are keyed by a leaf's ORIGINAL scope (the scope_name of its subgraph<>), so G and
// clone<G, "copy"> read the same files; the copy gets its own variables, restored from the same
// checkpoint. A leaf whose subgraph type has `static graft::meta_graph make_graph()` (hand-written
// layers) is built instead of read, and initialised by its "init" op unless a source gives it a
// checkpoint (source{"scope", "", "ckpt"}).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "graft/core/dtype.hpp"
#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "graft/graph/meta_graph.hpp"
#include "graft/graph/variables.hpp"
#include "graft/surgery/import.hpp"
#include "graft/surgery/restore.hpp"
#include "graft/tf/graph_io.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/saver.hpp"
#include "graft/typed/types.hpp"

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

namespace detail {

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

}  // namespace detail

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
        if (auto why = detail::tensor_mismatch(t_, dtype_of<T>, detail::dims_of<Shape>()); !why.empty()) {
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

namespace detail {

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

/// What the binding keeps at run time (behind a pointer: the saver points into `mg`).
struct runtime {
    meta_graph mg;
    std::unique_ptr<exec::session> s;
    std::vector<std::string> leaf_scopes;
    std::string labels, loss, train_op;
    std::unique_ptr<train::saver> saver;

    /// A new session over `mg` with the same variables. Throws graph_error.
    void refresh() { s = std::make_unique<exec::session>(mg.graph, s->state().variables_ptr()); }

    /// Runs the initializers of variables that have no value yet (optimizer slots). Throws what run throws.
    void init_new_variables() {
        std::vector<std::string> targets;
        for (auto& v : find_variables(mg)) {
            const node* n = mg.graph.find(v.node);
            if (!n || v.initializer_name.empty()) continue;
            auto var = s->variables().find(exec::variable_key(*n));
            if (!var || !var->initialized()) targets.push_back(v.initializer_name);
        }
        if (!targets.empty()) s->run({}, {}, targets);
    }

    graft::tensor run_one(const exec::session::feed_list& feeds, const std::string& fetch) { return s->run(feeds, {fetch})[0]; }

    /// The node of variable `name` and its store key. Throws not_found_error.
    std::string variable_key(const std::string& name) const {
        const node* n = mg.graph.find(name);
        if (!n || !is_variable_op(n->op)) {
            throw not_found_error("no variable '" + name + "' in the bound graph", location::at_node(name),
                                  "the declaration names a variable the graph does not have");
        }
        return exec::variable_key(*n);
    }

    /// Adds the labels, the loss and the optimizer's update ops once. Throws invalid_argument_error
    /// (called twice, an unknown scope, softmax on a rank other than 2), what the optimizer throws.
    void minimize(const std::string& output, graft::dtype type, const std::vector<std::int64_t>& dims, const loss_builder& make_loss,
                  train::optimizer& opt, const std::vector<std::string>& scopes) {
        if (!train_op.empty()) {
            throw invalid_argument_error("minimize: the bound graph already has a training op ('" + train_op + "')", location::at_node(train_op),
                                         "call minimize once per bound graph (load it again for another loss)");
        }
        std::optional<train::var_list> vars;
        if (!scopes.empty()) {
            std::vector<std::string> names;
            for (auto& sc : scopes) {
                auto vs = train::trainable_variables(mg, surgery::join_scope(sc, ""));
                if (vs.empty()) {
                    std::string have;
                    for (auto& l : leaf_scopes) have += (have.empty() ? "'" : ", '") + l + "'";
                    throw invalid_argument_error("minimize: no trainable variable under scope '" + sc + "'", location::at_node(sc),
                                                 "the model scopes are " + have);
                }
                for (auto& v : vs) names.push_back(v.name);
            }
            vars = train::var_list::names(std::move(names));
        }
        graph_builder root(mg.graph);
        graph_builder b = root.sub("typed_loss");
        std::vector<std::int64_t> ldims = dims;
        endpoint lab = b.placeholder("labels", type, graft::shape(ldims));
        endpoint out = endpoint::parse(output);
        endpoint l = make_loss(b, out, lab);
        std::string op = vars ? opt.minimize(mg, l, *vars) : opt.minimize(mg, l);
        labels = lab.str();
        loss = l.str();
        train_op = op;
        saver.reset();
        refresh();
        init_new_variables();
    }

    /// One step (or only the loss when `step` is false). Throws invalid_argument_error (no
    /// minimize yet), what run throws.
    double step(exec::session::feed_list feeds, const graft::tensor& lab, bool train) {
        if (train_op.empty()) {
            throw invalid_argument_error("train_step: the bound graph has no loss yet", {},
                                         "call net.minimize<\"output\">(loss, optimizer) first");
        }
        feeds.emplace_back(labels, lab);
        auto r = s->run(feeds, {loss}, train ? std::vector<std::string>{train_op} : std::vector<std::string>{});
        return graft::cast(r[0], dtype::float64).data<double>()[0];
    }

    /// Writes `prefix` + .meta. Throws io_error, graph_error.
    std::string save(const std::string& prefix) {
        if (!saver) {
            train::saver_options o;
            o.name = mg.graph.unique_name("save");
            o.max_to_keep = 0;
            saver = std::make_unique<train::saver>(mg, o);
            refresh();
        }
        return saver->save(*s, prefix);
    }
};

/// The checkpoint of a model path when none is given ("" when there is none).
inline std::string default_checkpoint(const std::string& model) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::string p;
    if (model.size() > 5 && model.ends_with(".meta")) p = model.substr(0, model.size() - 5);
    else if (fs::is_directory(model, ec)) p = (fs::path(model) / "variables" / "variables").string();
    return !p.empty() && fs::exists(p + ".index", ec) ? p : std::string();
}

/// Compares the declared ports and variables of `l` with `mg`; appends one line per difference.
inline void check_interface(const leaf_spec& l, const meta_graph& mg, const std::string& file, std::vector<std::string>& diffs) {
    const graph& g = mg.graph;
    auto compatible = [](const std::vector<std::int64_t>& d, const graft::shape& s) {
        if (!s.rank_known()) return true;
        if (s.rank() != static_cast<int>(d.size())) return false;
        for (std::size_t i = 0; i < d.size(); ++i) {
            auto f = s.dim(static_cast<int>(i));
            if (d[i] >= 0 && f >= 0 && d[i] != f) return false;
        }
        return true;
    };
    auto describe = [](graft::dtype t, const graft::shape& s) {
        return (t == graft::dtype::invalid ? std::string("?") : dtype_name(t)) + (s.rank_known() ? s.str() : std::string("[unknown rank]"));
    };
    for (auto* list : {&l.inputs, &l.outputs}) {
        const char* kind = list == &l.inputs ? "input" : "output";
        for (auto& p : *list) {
            endpoint e = endpoint::parse(p.tensor);
            const node* n = g.find(e.node);
            std::string declared = dtype_name(p.dtype) + dims_text(p.dims);
            if (!n || e.index < 0 || (surgery::detail::output_count(g, *n) >= 0 && e.index >= surgery::detail::output_count(g, *n))) {
                diffs.push_back(graft::detail::cat(kind, " '", p.name, "': declared ", declared, " at tensor '", p.tensor, "', not in ", file,
                                                   " (", surgery::detail::close_nodes_hint(g, e.node, "the file"), ")"));
                continue;
            }
            graft::dtype t = graft::dtype::invalid;
            if (auto* a = n->attr("dtype"); a && n->op.rfind("Placeholder", 0) == 0 && a->which() == attr_value::kind::type)
                t = base_type(a->type());
            else
                t = surgery::detail::output_type(g, *n, e.index);
            graft::shape s = surgery::detail::static_shape(g, e);
            if ((t != graft::dtype::invalid && t != p.dtype) || !compatible(p.dims, s)) {
                diffs.push_back(graft::detail::cat(kind, " '", p.name, "' (tensor '", p.tensor, "'): declared ", declared, ", found ",
                                                   describe(t, s), " in ", file));
            }
        }
    }
    std::vector<variable_info> vars = find_variables(mg);
    for (auto& p : l.variables) {
        const variable_info* v = nullptr;
        for (auto& x : vars) {
            if (x.node == p.tensor || x.name == p.tensor) v = &x;
        }
        std::string declared = dtype_name(p.dtype) + dims_text(p.dims);
        if (!v) {
            std::vector<std::string> names;
            for (auto& x : vars) names.push_back(x.node);
            std::string near;
            for (auto& c : tf::closest_names(p.tensor, names)) near += (near.empty() ? "'" : ", '") + c + "'";
            diffs.push_back(graft::detail::cat("variable '", p.name, "': declared ", declared, ", not in ", file,
                                               near.empty() ? std::string(" (it has no variables)") : " (closest variables: " + near + ")"));
            continue;
        }
        if ((v->dtype != graft::dtype::invalid && v->dtype != p.dtype) || !compatible(p.dims, v->shape)) {
            diffs.push_back(graft::detail::cat("variable '", p.name, "': declared ", declared, ", found ", describe(v->dtype, v->shape), " in ", file));
        }
    }
}

/// Imports, checks and restores the leaves. Throws invalid_argument_error (sources: unknown or
/// missing keys, a variable without checkpoint or init), interface_error (declared vs found),
/// and what loading, importing and restoring throw.
inline std::unique_ptr<runtime> bind(const std::vector<leaf_spec>& leaves, const std::vector<wire_spec>& wires,
                                     const std::vector<source>& sources) {
    // 1. sources by key
    std::map<std::string, const source*> by_key;
    std::set<std::string> keys, needed;
    for (auto& l : leaves) {
        keys.insert(l.key);
        if (!l.make) needed.insert(l.key);
    }
    auto list = [](const std::set<std::string>& s) {
        std::string r;
        for (auto& k : s) r += (r.empty() ? "'" : ", '") + k + "'";
        return r.empty() ? std::string("none") : r;
    };
    std::vector<std::string> problems;
    for (auto& s : sources) {
        if (!keys.count(s.scope)) problems.push_back("source '" + s.scope + "' matches no subgraph of the type");
        else if (!by_key.emplace(s.scope, &s).second) problems.push_back("two sources for '" + s.scope + "'");
    }
    for (auto& k : needed) {
        if (!by_key.count(k)) problems.push_back("no source for '" + k + "'");
    }
    if (!problems.empty()) {
        std::string m = "load: ";
        for (std::size_t i = 0; i < problems.size(); ++i) m += (i ? "; " : "") + problems[i];
        throw invalid_argument_error(m, {}, "give one source{\"scope\", \"model.meta\"[, \"checkpoint\"]} per subgraph scope: " + list(needed) +
                                                (keys.size() > needed.size() ? " (optional for the hand-written ones: " + list(keys) + ")" : ""));
    }

    // 2. the models, once per key; the interface check
    struct model {
        meta_graph mg;
        std::string file, checkpoint;
    };
    std::map<std::string, model> models;
    std::vector<std::string> diffs;
    for (auto& l : leaves) {
        if (models.count(l.key)) continue;
        auto it = by_key.find(l.key);
        const source* s = it == by_key.end() ? nullptr : it->second;
        model m;
        if (s && !s->model.empty()) {
            m.mg = tf::load_meta_graph(s->model);
            m.file = "'" + s->model + "'";
            m.checkpoint = s->checkpoint.empty() ? default_checkpoint(s->model) : s->checkpoint;
        } else {
            m.mg = l.make();
            m.file = "the graph of '" + l.key + "'";
            m.checkpoint = s ? s->checkpoint : std::string();
        }
        check_interface(l, m.mg, m.file, diffs);
        models.emplace(l.key, std::move(m));
    }
    if (!diffs.empty()) {
        std::string m = graft::detail::cat("load: the declared interface differs from the model files in ", diffs.size(), " place",
                                           diffs.size() == 1 ? "" : "s", ":");
        for (auto& d : diffs) m += "\n  - " + d;
        throw interface_error(m, diffs, "fix the declaration (run `graft codegen MODEL` to see the real interface), or give the right files");
    }

    // 3. imports, wired
    auto rt = std::make_unique<runtime>();
    std::vector<surgery::import_result> imported;
    for (auto& l : leaves) {
        surgery::import_options o;
        o.scope = l.scope;
        for (auto& w : wires) {
            if (under(w.target, l.scope)) o.input_map[w.target.substr(l.scope.size() + 1)] = w.source;
        }
        imported.push_back(surgery::import_meta_graph(rt->mg, models.at(l.key).mg, o));
        rt->leaf_scopes.push_back(l.scope);
    }

    // 4. values
    rt->s = std::make_unique<exec::session>(rt->mg.graph);
    for (std::size_t i = 0; i < leaves.size(); ++i) {
        auto& l = leaves[i];
        auto& m = models.at(l.key);
        auto& r = imported[i];
        if (r.variables.empty()) continue;
        if (!m.checkpoint.empty()) {
            surgery::restore_scoped(*rt->s, r.variables, m.checkpoint, surgery::into_scope(l.scope));
        } else if (!r.init_op.empty()) {
            rt->s->run({}, {}, {r.init_op});
        } else {
            throw invalid_argument_error("load: the variables of '" + l.scope + "' have no checkpoint and " + m.file + " has no 'init' op",
                                         location::at_node(l.scope),
                                         "give its checkpoint: source{\"" + l.key + "\", \"model.meta\", \"checkpoint prefix\"}");
        }
    }
    return rt;
}

template <class G, fixed_string Name>
struct find_input_impl {
    using list = typename G::inputs;
    static constexpr auto r = lookup(names_of<list>::value, Name.view());
    static_assert(r.count > 0 || error::no_input_port_named<Name, G::scope_name>::value,
                  "feed<name>: the bound graph has no input port of this name (a wired input is fed by its wire)");
    static_assert(r.count < 2 || error::several_ports_end_in<Name>::value,
                  "feed<name>: several inputs end in this name; use the full name (scope/name)");
    using type = typename pick<list, r.index, Name>::type;
};

template <class T>
struct is_fed : std::false_type {};
template <fixed_string N>
struct is_fed<fed<N>> : std::true_type {};

}  // namespace detail

/// A typed graph bound to its model files: made by graft::load<Net>(sources...).
template <graph_type Net>
class bound {
public:
    using type = Net;

    explicit bound(std::unique_ptr<detail::runtime> rt) : rt_(std::move(rt)) {}

    /// Runs the graph to the output (or input) port `Out` (full name or unambiguous tail; a typo is
    /// a compile error). Arguments: feed<"port">(t)..., or one bare tensor when Net has one input.
    /// Throws invalid_argument_error naming the port when a tensor has the wrong dtype or shape,
    /// and what the session throws.
    template <fixed_string Out, class... A>
    auto run(const A&... args) {
        using P = find_port<Net, Out>;
        exec::session::feed_list feeds;
        (add_feed(feeds, args), ...);
        return tensor_of<typename P::value_type, typename P::shape_type>(
            rt_->run_one(feeds, detail::with_index(P::tensor.view())), P::name.view());
    }

    /// The current value of the declared variable `Name`. Throws not_found_error, graph_error
    /// (uninitialised).
    template <fixed_string Name>
    auto var() {
        using V = find_variable<Net, Name>;
        return tensor_of<typename V::value_type, typename V::shape_type>(
            rt_->s->variable_value(rt_->variable_key(std::string(V::name.view()))), V::name.view());
    }

    /// Sets the declared variable `Name`. Throws invalid_argument_error (dtype/shape, naming it).
    template <fixed_string Name>
    void assign(const graft::tensor& t) {
        using V = find_variable<Net, Name>;
        tensor_of<typename V::value_type, typename V::shape_type> checked(t, V::name.view());
        train::detail::assign_variable(*rt_->s, std::string(V::name.view()), checked.tensor());
    }

    /// Adds a labels placeholder shaped like the port `Out`, the loss (`kind` on `Out` vs the
    /// labels) and `opt`'s update ops, once. `scopes`: train only the variables under these scopes
    /// (default: every trainable variable). Throws invalid_argument_error (twice, unknown scope,
    /// softmax on a port whose rank is not 2), graph_error, what the optimizer throws.
    template <fixed_string Out, class Opt>
        requires std::is_base_of_v<train::optimizer, std::remove_cvref_t<Opt>>
    void minimize(loss kind, Opt&& opt, const std::vector<std::string>& scopes = {}) {
        using P = find_port<Net, Out>;
        loss_builder f = [kind, name = std::string(P::name.view())](const graph_builder& b, const endpoint& o, const endpoint& y) {
            int r = static_cast<int>(P::rank);
            if (kind == loss::softmax_cross_entropy) {
                if (r != 2) {
                    throw invalid_argument_error("minimize: softmax cross-entropy needs [batch, classes] logits; '" + name + "' has rank " +
                                                     std::to_string(r),
                                                 location::at_tensor(name), "use loss::mean_squared_error or a loss_builder");
                }
                auto x = b.op_n("SoftmaxCrossEntropyWithLogits", {o, y});
                return b.op("Mean", {x[0], b.constant(graft::tensor::from_vector<std::int32_t>({0}))}, {}, "loss");
            }
            std::vector<std::int32_t> axes;
            for (int i = 0; i < r; ++i) axes.push_back(i);
            return b.op("Mean", {b.op("Square", {b.op("Sub", {o, y})}), b.constant(graft::tensor::from_vector<std::int32_t>(graft::shape{r}, axes))},
                        {}, "loss");
        };
        minimize<Out>(f, std::forward<Opt>(opt), scopes);
    }
    /// minimize with a loss of your own: f(builder, output, labels) -> scalar. Throws like above.
    template <fixed_string Out, class Opt>
        requires std::is_base_of_v<train::optimizer, std::remove_cvref_t<Opt>>
    void minimize(const loss_builder& f, Opt&& opt, const std::vector<std::string>& scopes = {}) {
        using P = find_port<Net, Out>;
        train::optimizer& o = opt;
        rt_->minimize(detail::with_index(P::tensor.view()), dtype_of<typename P::value_type>, detail::dims_of<typename P::shape_type>(), f, o,
                      scopes);
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
    std::string save(const std::string& prefix) { return rt_->save(prefix); }

    /// The combined MetaGraph (scopes as the type says). Changing it needs refresh().
    [[nodiscard]] meta_graph& graph() { return rt_->mg; }
    /// The session (its graph is a copy of graph()). Never throws.
    [[nodiscard]] exec::session& session() { return *rt_->s; }
    /// A new session over graph() keeping the variables. Throws graph_error.
    void refresh() { rt_->refresh(); }
    /// The scopes of the imported model files, in import order. Never throws.
    [[nodiscard]] const std::vector<std::string>& scopes() const { return rt_->leaf_scopes; }

private:
    template <fixed_string N>
    static void add_feed(exec::session::feed_list& feeds, const fed<N>& f) {
        using I = typename detail::find_input_impl<Net, N>::type;
        add_checked<I>(feeds, f.value);
    }
    template <class T>
        requires(!detail::is_fed<T>::value && std::is_convertible_v<const T&, const graft::tensor&>)
    static void add_feed(exec::session::feed_list& feeds, const T& t) {
        static_assert(Net::inputs::size == 1,
                      "run<out>(x) / train_step(x, labels): a bare tensor feeds the only input, but this graph has several (or none): "
                      "use feed<\"input name\">(x) for each");
        if constexpr (Net::inputs::size == 1) add_checked<typename Net::inputs::template at<0>>(feeds, t);
    }
    template <class I>
    static void add_checked(exec::session::feed_list& feeds, const graft::tensor& t) {
        if (auto why = detail::tensor_mismatch(t, dtype_of<typename I::value_type>, detail::dims_of<typename I::shape_type>()); !why.empty()) {
            throw invalid_argument_error(graft::detail::cat("input '", I::name.view(), "' ", why), location::at_tensor(std::string(I::name.view())),
                                         "feed a tensor of the declared dtype and shape");
        }
        feeds.emplace_back(detail::with_index(I::tensor.view()), t);
    }
    template <class Tuple, std::size_t... K>
    double step(bool train, const Tuple& args, std::index_sequence<K...>) {
        exec::session::feed_list feeds;
        (add_feed(feeds, std::get<K>(args)), ...);
        const graft::tensor& labels = std::get<sizeof...(K)>(args);
        return rt_->step(std::move(feeds), labels, train);
    }

    std::unique_ptr<detail::runtime> rt_;
};

/// Binds Net to its model files: see graft::load.
template <graph_type Net, class... S>
    requires(std::is_convertible_v<S, source> && ...)
bound<Net> load(const S&... sources) {
    std::vector<detail::leaf_spec> leaves;
    detail::each<typename Net::leaves>::apply([&](auto l) { leaves.push_back(detail::leaf_of<typename decltype(l)::type>()); });
    std::vector<detail::wire_spec> wires;
    detail::each<typename Net::wires>::apply([&](auto w) {
        using W = typename decltype(w)::type;
        wires.push_back({detail::with_index(W::source::tensor.view()), detail::with_index(W::target::tensor.view())});
    });
    return bound<Net>(detail::bind(leaves, wires, std::vector<source>{source(sources)...}));
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
