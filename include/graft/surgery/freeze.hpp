// graft/surgery/freeze.hpp — freeze a trained graph (variables -> Const, pruned to the outputs)
// and unfreeze a frozen one (chosen Consts -> trainable variables with VariableDefs, an `init` op
// and a Saver), so a frozen GraphDef can be retrained and frozen again. Link graft::compiled.
//
//   graft::graph frozen = graft::surgery::freeze(mg, "train/model.ckpt-100", {"probs"});
//   graft::tf::write_graph(frozen, "frozen.pb");              // runs in graft, TF, OpenCV DNN
//
//   auto u = graft::surgery::unfreeze(graft::tf::load_graph("frozen.pb"));   // weights -> variables
//   graft::surgery::save_unfrozen(u, "retrain/model");        // retrain/model.meta + checkpoint
//   // ... add a loss and an optimizer to u.mg, make a session, run u.init, train ...
//   graft::graph again = graft::surgery::freeze(u.mg, session, {"probs"});
//
// freeze keeps every node the outputs need (data and control inputs) under its own name: a
// VariableV2 / VarHandleOp becomes a Const of the same name holding the variable's value, its
// `w/read` Identity stays (OpenCV DNN and TF's tools expect it), a ReadVariableOp becomes an
// Identity of the same name. Initializers, savers and training ops are not reachable from
// inference outputs and are dropped.
//
// unfreeze turns each chosen Const "w" into a variable "w" (so consumers and checkpoint keys keep
// the name): ref style VariableV2 "w" + "w/initial_value" + "w/Assign" + snapshot, or resource
// style VarHandleOp "w" + "w/Initializer/initial_value" + AssignVariableOp "w/Assign" +
// ReadVariableOp. The snapshot is the Const's existing Identity reader when there is one (the
// `w/read` a TF or graft freeze left), else a new "w/read" / "w/Read/ReadVariableOp".
#pragma once

#include <algorithm>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "graft/graph/inline.hpp"
#include "graft/graph/meta_graph.hpp"
#include "graft/graph/variables.hpp"
#include "graft/formats/tf/bundle_writer.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/train/saver.hpp"
#include "graft/train/variables.hpp"
#include "graft/surgery/values.hpp"

namespace graft::surgery {

namespace freeze_detail {

inline std::string join_names(const std::vector<std::string>& v, std::size_t max = 20) {
    std::string r;
    for (std::size_t i = 0; i < v.size() && i < max; ++i) r += (i ? ", " : "") + v[i];
    if (v.size() > max) r += graft::detail::cat(", ... (", v.size(), " in all)");
    return r;
}

/// Node names of output specs: "a", "a:1", "^a", "a,b" (comma-separated, spaces trimmed).
inline std::vector<std::string> output_nodes(const std::vector<std::string>& specs) {
    std::vector<std::string> out;
    for (const auto& spec : specs) {
        std::size_t i = 0;
        while (i <= spec.size()) {
            auto j = spec.find(',', i);
            if (j == std::string::npos) j = spec.size();
            std::string t = spec.substr(i, j - i);
            auto b = t.find_first_not_of(" \t"), e = t.find_last_not_of(" \t");
            t = b == std::string::npos ? std::string() : t.substr(b, e - b + 1);
            if (!t.empty()) {
                std::string n = endpoint::parse(t.front() == '^' ? std::string_view(t).substr(1) : t).node;
                if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
            }
            i = j + 1;
        }
    }
    return out;
}

/// Does `n` (a consumer of a ref variable's output) only read the value? Identity, or an op whose
/// OpDef takes no ref input (TF1 dereferences the ref then).
inline bool reads_ref_value(const graph& g, const node& n) {
    if (n.op == "Identity" || n.op == "Snapshot") return true;
    const op_def* d = g.registry().find(n.op);
    if (!d) return false;
    return std::none_of(d->inputs.begin(), d->inputs.end(), [](const arg_def& a) { return a.is_ref; });
}

/// Does `n` call or name a function of `g`'s library (as its op or in a func attr)?
inline bool uses_library(const graph& g, const node& n) {
    if (g.library.find(n.op)) return true;
    for (const auto& [k, v] : n.attrs) {
        if (v.which() == attr_value::kind::func) return true;
        if (v.is_list() && std::holds_alternative<std::vector<func_attr>>(v.list())) return true;
    }
    return false;
}

/// Drops "loc:@x" colocation entries naming nodes that are not in `g`.
inline void prune_colocation(graph& g) {
    for (node& n : g) {
        auto* c = n.attrs.find("_class");
        if (!c || !c->is_list() || !std::holds_alternative<std::vector<std::string>>(c->list())) continue;
        auto items = c->list_of<std::string>();
        std::vector<std::string> kept;
        for (auto& s : items) {
            if (s.rfind("loc:@", 0) == 0 && !g.contains(std::string_view(s).substr(5))) continue;
            kept.push_back(s);
        }
        if (kept.size() == items.size()) continue;
        if (kept.empty()) n.attrs.erase("_class");
        else *c = attr_value::list_of(std::move(kept));
    }
}

}  // namespace freeze_detail

/// The frozen GraphDef of `g` for `outputs` (node or tensor names, comma-separated allowed):
/// the nodes the outputs need, each variable read replaced by a Const of its value from `src`.
/// `vars` describes the variables (checkpoint keys; find_variables()). Throws
/// invalid_argument_error (no outputs; a variable's value of the wrong dtype/shape),
/// not_found_error (outputs not in the graph, listed; variables without a value in `src`,
/// listed with their keys), graph_error (a needed node uses a variable other than by reading it,
/// e.g. an Assign or optimizer update: the node is named; an input naming a missing node; a
/// function call that cannot be inlined). Function calls the outputs need (TF2's
/// StatefulPartitionedCall) are inlined first.
inline graph freeze(const graph& g, const std::vector<variable_info>& vars, const value_source& src,
                    const std::vector<std::string>& outputs) {
    auto outs = freeze_detail::output_nodes(outputs);
    if (outs.empty()) {
        throw invalid_argument_error("freeze: no outputs given", {},
                                     "name the inference outputs, e.g. {\"probs\"} or --outputs probs:0");
    }
    std::vector<std::string> missing;
    for (auto& o : outs) if (!g.contains(o)) missing.push_back(o);
    if (!missing.empty()) {
        throw not_found_error("freeze: outputs not in the graph: " + freeze_detail::join_names(missing),
                              location::at_node(missing.front()),
                              "give node names (add_4) or tensor names (add_4:0); `graft inspect MODEL --nodes` lists them");
    }
    // Everything the outputs need, through data and control inputs.
    std::unordered_set<std::string> keep(outs.begin(), outs.end());
    std::deque<std::string> todo(outs.begin(), outs.end());
    while (!todo.empty()) {
        const node& n = g.at(todo.front());
        todo.pop_front();
        auto visit = [&](const std::string& in) {
            if (!g.contains(in)) {
                throw graph_error("freeze: node '" + n.name + "' reads '" + in + "', which is not in the graph",
                                  location::at_node(n.name, n.op), "repair the graph first (graft inspect validates it)");
            }
            if (keep.insert(in).second) todo.push_back(in);
        };
        for (auto& e : n.inputs) visit(e.node);
        for (auto& c : n.control_inputs) visit(c);
    }
    // TF2 graphs read their variables inside function calls (StatefulPartitionedCall with the
    // resource handles as arguments): freeze the needed part with every call inlined, so each read
    // is a ReadVariableOp of the outer VarHandleOp again
    for (const auto& name : keep) {
        if (called_function(g, g.at(name))) {
            graph h = g;
            prune(h, outs);
            inline_functions(h);
            return freeze(h, vars, src, outputs);
        }
    }
    std::unordered_map<std::string, const variable_info*> info;
    for (auto& v : vars) info.emplace(v.node, &v);
    std::unordered_map<std::string, tensor> values;
    std::vector<std::string> no_value;
    for (const node& n : g) {
        if (!keep.count(n.name) || !is_variable_op(n.op)) continue;
        const bool resource = n.op == "VarHandleOp";
        for (auto& use : g.consumers({n.name, 0})) {
            const node& u = *use.consumer;
            if (!keep.count(u.name)) continue;
            bool read = resource ? u.op == "ReadVariableOp" : freeze_detail::reads_ref_value(g, u);
            if (!read) {
                throw graph_error("freeze: node '" + u.name + "' (" + u.op + ") uses variable '" + n.name +
                                      "' other than by reading it, and the outputs need it",
                                  location::at_node(u.name, u.op),
                                  "freeze inference outputs only: fetch tensors that do not depend on assignments or training ops");
            }
        }
        variable_info fallback;
        const variable_info* v = nullptr;
        if (auto it = info.find(n.name); it != info.end()) {
            v = it->second;
        } else {
            fallback.name = fallback.node = fallback.checkpoint_key = n.name;
            if (auto* a = n.attr("dtype")) fallback.dtype = base_type(a->type());
            if (auto* a = n.attr("shape")) fallback.shape = a->shape();
            v = &fallback;
        }
        auto t = src.read(*v);
        if (!t) {
            no_value.push_back(v->checkpoint_key.empty() || v->checkpoint_key == v->name
                                   ? v->name
                                   : v->name + " (key '" + v->checkpoint_key + "')");
            continue;
        }
        dtype want = v->dtype;
        if (want == dtype::invalid) if (auto* a = n.attr("dtype")) want = base_type(a->type());
        if (want != dtype::invalid && t->type() != want) {
            throw invalid_argument_error(graft::detail::cat("freeze: value of variable '", n.name, "' in ", src.description,
                                                            " is ", t->describe(), ", the variable is ", dtype_name(want)),
                                         location::at_node(n.name, n.op));
        }
        if (!v->shape.compatible_with(t->shape())) {
            throw invalid_argument_error(graft::detail::cat("freeze: value of variable '", n.name, "' in ", src.description,
                                                            " has shape ", t->shape().str(), ", the variable is ",
                                                            v->shape.str()),
                                         location::at_node(n.name, n.op));
        }
        values.emplace(n.name, *t);
    }
    if (!no_value.empty()) {
        throw not_found_error("freeze: no value in " + src.description + " for variables: " + freeze_detail::join_names(no_value),
                              location::at_node(no_value.front()),
                              "restore or initialize them first, or pass the checkpoint that holds them");
    }

    graph r;
    r.versions = g.versions;
    r.has_versions = g.has_versions;
    r.legacy_version = g.legacy_version;
    // the library only when a kept node still calls into it (after inlining, none does)
    if (std::any_of(g.begin(), g.end(), [&](const node& n) { return keep.count(n.name) && freeze_detail::uses_library(g, n); })) {
        r.library = g.library;
        r.register_library_ops();
    }
    r.reserve(keep.size());
    for (const node& n : g) {
        if (!keep.count(n.name)) continue;
        if (auto it = values.find(n.name); it != values.end()) {
            node c(n.name, "Const");
            c.device = n.device;
            c.control_inputs = n.control_inputs;
            c.attrs.set("dtype", it->second.type());
            c.attrs.set("value", it->second);
            r.add_node(std::move(c));
            continue;
        }
        node c = n;
        bool reads_frozen = !c.inputs.empty() && values.count(c.inputs[0].node);
        if (c.op == "ReadVariableOp" && reads_frozen) {
            dtype t = base_type(c.attr_at("dtype").type());
            c.op = "Identity";
            c.attrs.erase("dtype");
            c.attrs.set("T", t);
        } else if (c.op == "Identity" && reads_frozen) {
            if (auto* a = c.attrs.find("T"); a && a->which() == attr_value::kind::type) c.attrs.set("T", base_type(a->type()));
        }
        r.add_node(std::move(c));
    }
    freeze_detail::prune_colocation(r);
    return r;
}

/// freeze() with the variables of `mg` (VariableDefs, saver keys) and values from `src`.
/// Throws like freeze().
inline graph freeze(const meta_graph& mg, const value_source& src, const std::vector<std::string>& outputs) {
    return freeze(mg.graph, find_variables(mg), src, outputs);
}
/// freeze() with the current values of a session's variables. Throws like freeze().
inline graph freeze(const meta_graph& mg, exec::session& s, const std::vector<std::string>& outputs) {
    return freeze(mg, session_values(s), outputs);
}
/// freeze() with values from a checkpoint (prefix, training dir, SavedModel dir). Throws like
/// freeze() and checkpoint_values().
inline graph freeze(const meta_graph& mg, const std::string& checkpoint, const std::vector<std::string>& outputs) {
    return freeze(mg, checkpoint_values(checkpoint), outputs);
}
/// freeze() of a bare graph (variables found in it; keys = node names). Throws like freeze().
inline graph freeze(const graph& g, exec::session& s, const std::vector<std::string>& outputs) {
    return freeze(g, find_variables(g), session_values(s), outputs);
}
/// freeze() of a bare graph with values from a checkpoint. Throws like freeze().
inline graph freeze(const graph& g, const std::string& checkpoint, const std::vector<std::string>& outputs) {
    return freeze(g, find_variables(g), checkpoint_values(checkpoint), outputs);
}

// ------------------------------------------------------------------------------------ unfreeze

struct unfreeze_options {
    /// Consts to turn into variables, by exact name.
    std::vector<std::string> names;
    /// Consts to turn into variables: those whose name contains a match of this ECMAScript regex
    /// (anchor with ^...$ for whole names). With `names`, the union.
    std::string select;
    /// Default selection (neither names nor select given): float Consts in a weight role with at
    /// least this many elements. 2 keeps scalars (scales, epsilons, keep_prob) constant.
    std::int64_t min_elements = 2;
    /// Resource variables (VarHandleOp, use_resource=True) instead of ref VariableV2.
    bool resource = false;
    bool trainable = true;
    /// Add TF's save/restore ops and the SaverDef (graft::train::saver).
    bool build_saver = true;
};

/// A frozen graph made trainable again.
struct unfrozen {
    meta_graph mg;                         ///< graph + variable collections + saver
    std::vector<std::string> variables;    ///< the new variables, in graph order (= checkpoint keys)
    std::map<std::string, tensor> values;  ///< initial value of each (the Const it replaces)
    std::string init;                      ///< the NoOp that initializes them all ("init")
};

namespace freeze_detail {

/// Inputs that hold weights: (op, input slots).
inline bool weight_slot(std::string_view op, int input) {
    static const std::unordered_map<std::string_view, std::vector<int>> slots = {
        {"MatMul", {1}}, {"BatchMatMul", {1}}, {"BatchMatMulV2", {1}}, {"BatchMatMulV3", {1}},
        {"Conv2D", {1}}, {"Conv3D", {1}}, {"DepthwiseConv2dNative", {1}}, {"Conv2DBackpropInput", {1}},
        {"BiasAdd", {1}}, {"BiasAddV1", {1}},
        {"FusedBatchNorm", {1, 2, 3, 4}}, {"FusedBatchNormV2", {1, 2, 3, 4}}, {"FusedBatchNormV3", {1, 2, 3, 4}},
        {"Gather", {0}}, {"GatherV2", {0}}, {"Add", {0, 1}}, {"AddV2", {0, 1}}};
    auto it = slots.find(op);
    return it != slots.end() && std::find(it->second.begin(), it->second.end(), input) != it->second.end();
}

inline bool is_float(dtype t) {
    return t == dtype::float32 || t == dtype::float64 || t == dtype::float16 || t == dtype::bfloat16;
}

inline dtype const_dtype(const node& n) {
    if (auto* a = n.attr("dtype"); a && a->which() == attr_value::kind::type) return a->type();
    return dtype::invalid;
}

}  // namespace freeze_detail

/// The Consts unfreeze() picks by default, in graph order: float Consts with at least
/// `min_elements` elements read through an Identity or consumed in a weight slot (MatMul's b,
/// Conv2D / Conv3D / DepthwiseConv2dNative filter, BiasAdd's bias, FusedBatchNorm's scale,
/// offset, mean and variance, Gather's params, either side of Add/AddV2). Never throws (except
/// what decoding a Const's value throws).
inline std::vector<std::string> weight_consts(const graph& g, std::int64_t min_elements = 2) {
    std::vector<std::string> r;
    for (const node& n : g) {
        if (n.op != "Const" || !freeze_detail::is_float(freeze_detail::const_dtype(n))) continue;
        const attr_value* v = n.attr("value");
        if (!v || v->which() != attr_value::kind::tensor) continue;
        if (v->tensor().shape().num_elements() < min_elements) continue;
        bool weight = false;
        for (auto& use : g.consumers({n.name, 0})) {
            weight = weight || use.consumer->op == "Identity" || freeze_detail::weight_slot(use.consumer->op, use.input);
        }
        if (weight) r.push_back(n.name);
    }
    return r;
}

/// The Consts unfreeze() would turn into variables under `o`, in graph order. Throws
/// not_found_error (a name that is not a Const; a regex or default selection that matches
/// nothing, with the Consts there are), invalid_argument_error (a bad regex).
inline std::vector<std::string> select_consts(const graph& g, const unfreeze_options& o) {
    std::vector<std::string> consts;
    for (const node& n : g) if (n.op == "Const") consts.push_back(n.name);
    if (o.names.empty() && o.select.empty()) {
        auto r = weight_consts(g, o.min_elements);
        if (r.empty()) {
            throw not_found_error(graft::detail::cat("unfreeze: no float Const of at least ", o.min_elements,
                                                     " elements feeds a weight input"),
                                  {}, consts.empty() ? "the graph has no Consts"
                                                     : "choose them by name or regex; Consts: " + freeze_detail::join_names(consts));
        }
        return r;
    }
    std::unordered_set<std::string> chosen;
    std::vector<std::string> bad;
    for (auto& name : o.names) {
        const node* n = g.find(name);
        if (!n || n->op != "Const") bad.push_back(n ? name + " (a " + n->op + ")" : name);
        else chosen.insert(name);
    }
    if (!bad.empty()) {
        throw not_found_error("unfreeze: not Consts of the graph: " + freeze_detail::join_names(bad), location::at_node(bad.front()),
                              consts.empty() ? "the graph has no Consts" : "Consts: " + freeze_detail::join_names(consts));
    }
    if (!o.select.empty()) {
        std::regex re;
        try {
            re = std::regex(o.select);
        } catch (const std::regex_error& e) {
            throw invalid_argument_error("unfreeze: --select '" + o.select + "' is not a valid regex: " + e.what());
        }
        std::size_t before = chosen.size();
        bool any = false;
        for (auto& c : consts) {
            if (std::regex_search(c, re)) {
                chosen.insert(c);
                any = true;
            }
        }
        (void)before;
        if (!any) {
            throw not_found_error("unfreeze: --select '" + o.select + "' matches no Const", {},
                                  consts.empty() ? "the graph has no Consts" : "Consts: " + freeze_detail::join_names(consts));
        }
    }
    std::vector<std::string> r;
    for (auto& c : consts) if (chosen.count(c)) r.push_back(c);
    return r;
}

/// `frozen` with the Consts select_consts(frozen, o) picks turned into trainable variables of the
/// same names, initialized with the constants' values, recorded in the `variables` /
/// `trainable_variables` collections with VariableDefs, an `init` op and (build_saver) a Saver.
/// Running the result after `init` gives the frozen graph's outputs. Throws like select_consts,
/// graph_error (a Const without a value, or a name clash while building).
inline unfrozen unfreeze(const graph& frozen, const unfreeze_options& o = {}) {
    auto chosen = select_consts(frozen, o);
    unfrozen u;
    u.mg.graph = frozen;
    graph& g = u.mg.graph;
    graph_builder root(g);
    // The builder keeps names it handed out reserved (a graph built in this process may have
    // reserved the Const's name): take the name back by renaming the fresh node.
    auto exact = [&](node& n, const std::string& want) {
        if (n.name != want) g.rename(n.name, want);
    };
    for (const auto& name : chosen) {
        node& c = g.at(name);
        const attr_value* va = c.attr("value");
        if (!va || va->which() != attr_value::kind::tensor) {
            throw graph_error("unfreeze: Const '" + name + "' has no value attr", location::at_node(name, "Const"));
        }
        tensor value = va->tensor().tensor();
        const dtype t = value.type();
        const graft::shape s = value.shape();
        const compact_string device = c.device;
        const std::vector<std::string> controls = c.control_inputs;
        std::vector<std::pair<std::string, int>> uses;
        std::string snap;
        for (auto& use : g.consumers({name, 0})) {
            const node& n = *use.consumer;
            uses.emplace_back(n.name, use.input);
            if (snap.empty() && n.op == "Identity" && use.input == 0) snap = n.name;
        }
        g.remove_node(name);
        graph_builder dev = device.empty() ? root : root.on_device(device.str());
        train::variable v;
        endpoint init;
        if (!o.resource) {
            init = dev.constant(value, name + "/initial_value");
            exact(dev.add("VariableV2", {}, {{"dtype", t}, {"shape", s}, {"container", std::string()},
                                             {"shared_name", std::string()}}, name), name);
            v.assign = dev.add("Assign", {{name, 0}, init}, {{"validate_shape", true}, {"use_locking", true}},
                               name + "/Assign").name;
            if (snap.empty()) snap = dev.add("Identity", {{name, 0}}, {{"T", t}}, name + "/read").name;
            else g.at(snap).attrs.set("T", t);
        } else {
            init = dev.constant(value, name + "/Initializer/initial_value");
            exact(dev.add("VarHandleOp", {}, {{"dtype", t}, {"shape", s}, {"container", std::string()},
                                              {"shared_name", name}}, name), name);
            v.assign = dev.add("AssignVariableOp", {{name, 0}, init}, {{"dtype", t}}, name + "/Assign").name;
            if (snap.empty()) {
                snap = dev.add("ReadVariableOp", {{name, 0}}, {{"dtype", t}}, name + "/Read/ReadVariableOp").name;
            } else {
                node& r = g.at(snap);
                r.op = "ReadVariableOp";
                r.attrs.erase("T");
                r.attrs.set("dtype", t);
            }
        }
        g.at(name).control_inputs = controls;
        for (auto& [consumer, input] : uses) {
            if (consumer == snap) continue;
            g.at(consumer).inputs[static_cast<std::size_t>(input)] = endpoint{snap, 0};
        }
        g.touch();
        v.name = name;
        v.ref = {name, 0};
        v.read = snap;
        v.value = {snap, 0};
        train::variable_options vo;
        vo.trainable = o.trainable;
        vo.use_resource = o.resource;
        train::record_variable(u.mg, v, init, vo);
        u.variables.push_back(name);
        u.values.emplace(name, value);
    }
    u.init = train::global_variables_initializer(u.mg);
    if (o.build_saver) {
        train::saver_options so;
        so.write_meta_graph = false;
        train::saver sv(u.mg, so);  // adds save/... ops and mg.saver
    }
    return u;
}

/// Writes `u` as "<prefix>.meta" plus a checkpoint "<prefix>.index/.data-*" holding the initial
/// values (keys = variable names), so `graft run <prefix>.meta --ckpt <prefix>` and TF's Saver
/// restore it. Throws io_error.
inline void save_unfrozen(const unfrozen& u, const std::string& prefix) {
    auto dir = std::filesystem::path(prefix).parent_path();
    if (!dir.empty()) std::filesystem::create_directories(dir);
    tf::bundle_writer w(prefix);
    for (auto& [name, value] : u.values) w.add(name, value);
    w.finish();
    tf::write_meta_graph(u.mg, prefix + ".meta");
}

}  // namespace graft::surgery
