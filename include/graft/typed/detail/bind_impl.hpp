// graft/typed/detail/bind_impl.hpp — the non-template part of typed/bind.hpp: loading, wiring,
// checking and restoring the leaves, and the runtime state of a bound graph (MetaGraph, session,
// training ops, saver). Compiled once into graft::compiled by src/compiled/typed_runtime.cpp (which defines
// GRAFT_COMPILING_TYPED and includes typed/bind.hpp). Not to be included directly.
#pragma once

#ifndef GRAFT_TYPED_BIND_HPP_INCLUDED
#error "include graft/typed/bind.hpp, not graft/typed/detail/bind_impl.hpp"
#endif

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "graft/graph/meta_graph.hpp"
#include "graft/graph/variables.hpp"
#include "graft/surgery/import.hpp"
#include "graft/surgery/restore.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/saver.hpp"

namespace graft::typed::bind_detail {

/// What the binding keeps at run time (behind a pointer: the saver points into `mg`).
struct runtime {
    meta_graph mg;
    std::unique_ptr<exec::session> s;
    std::vector<std::string> leaf_scopes;
    std::string labels, loss_name, train_op;
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
        loss_name = l.str();
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
        auto r = s->run(feeds, {loss_name}, train ? std::vector<std::string>{train_op} : std::vector<std::string>{});
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
runtime_ptr bind_leaves(const std::vector<leaf_spec>& leaves, const std::vector<wire_spec>& wires,
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
            m.checkpoint = s->checkpoint.empty() ? tf::checkpoint_beside(s->model) : s->checkpoint;
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
    runtime_ptr rt(new runtime);
    std::vector<surgery::import_result> imported;
    for (auto& l : leaves) {
        surgery::import_options o;
        o.scope = l.scope;
        for (auto& w : wires) {
            if (detail::under(w.target, l.scope)) o.input_map[w.target.substr(l.scope.size() + 1)] = w.source;
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


void runtime_deleter::operator()(runtime* r) const noexcept { delete r; }

graft::tensor run(runtime& r, const feed_list& feeds, const std::string& fetch) { return r.run_one(feeds, fetch); }

graft::tensor variable_value(runtime& r, const std::string& name) { return r.s->variable_value(r.variable_key(name)); }

void assign_variable(runtime& r, const std::string& name, const graft::tensor& t) {
    train::detail::assign_variable(*r.s, name, t);
}

void minimize(runtime& r, const std::string& output, const std::string& port, graft::dtype type,
                              const std::vector<std::int64_t>& dims, loss kind, const loss_builder* custom, train::optimizer& opt,
                              const std::vector<std::string>& scopes) {
    if (custom) {
        r.minimize(output, type, dims, *custom, opt, scopes);
        return;
    }
    int rank = static_cast<int>(dims.size());
    if (kind == loss::softmax_cross_entropy && rank != 2) {
        throw invalid_argument_error("minimize: softmax cross-entropy needs [batch, classes] logits; '" + port + "' has rank " +
                                         std::to_string(rank),
                                     location::at_tensor(port), "use loss::mean_squared_error or a loss_builder");
    }
    loss_builder f = [kind, rank](const graph_builder& b, const endpoint& o, const endpoint& y) {
        if (kind == loss::softmax_cross_entropy) {
            auto x = b.op_n("SoftmaxCrossEntropyWithLogits", {o, y});
            return b.op("Mean", {x[0], b.constant(graft::tensor::from_vector<std::int32_t>({0}))}, {}, "loss");
        }
        std::vector<std::int32_t> axes;
        for (int i = 0; i < rank; ++i) axes.push_back(i);
        return b.op("Mean", {b.op("Square", {b.op("Sub", {o, y})}), b.constant(graft::tensor::from_vector<std::int32_t>(graft::shape{rank}, axes))},
                    {}, "loss");
    };
    r.minimize(output, type, dims, f, opt, scopes);
}

double step(runtime& r, feed_list feeds, const graft::tensor& labels, bool train) {
    return r.step(std::move(feeds), labels, train);
}

std::string save(runtime& r, const std::string& prefix) { return r.save(prefix); }

meta_graph& graph_of(runtime& r) { return r.mg; }

exec::session& session_of(runtime& r) { return *r.s; }

void refresh(runtime& r) { r.refresh(); }

const std::vector<std::string>& scopes_of(const runtime& r) { return r.leaf_scopes; }

}  // namespace graft::typed::bind_detail
