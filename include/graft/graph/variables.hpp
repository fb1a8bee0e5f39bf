// graft/graph/variables.hpp — a MetaGraph's variables as first-class objects: which node holds
// each, its dtype, shape, trainability, initializer, snapshot and checkpoint key.
//
//   for (const graft::variable_info& v : graft::find_variables(mg))
//       std::cout << v.name << " " << graft::dtype_name(v.dtype) << v.shape.str() << " -> " << v.checkpoint_key;
//
// Sources, best first: VariableDefs in the variable collections (TF1), the SavedObjectGraph (TF2
// SavedModels: dtype, shape, trainable, and the object-graph checkpoint key), and the graph itself
// (VariableV2/Variable + Assign + Identity ".../read"; VarHandleOp + AssignVariableOp +
// ReadVariableOp). TF1 keys come from the Saver's RestoreV2 wiring when the graph has one, else the
// variable op's name. For TF2 the key is derived from the object graph's first breadth-first path;
// graft/formats/tf_graph/saved_model.hpp confirms it against the checkpoint's own object graph.
#pragma once

#include <algorithm>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graft/graph/meta_graph.hpp"

namespace graft {

enum class variable_kind { ref, resource };

struct variable_info {
    std::string name;                ///< the TF variable name ("dense/kernel")
    std::string node;                ///< node holding it: VariableV2/Variable/VarHandleOp
    variable_kind kind = variable_kind::ref;
    graft::dtype dtype = graft::dtype::invalid;  ///< base dtype (no _ref)
    graft::shape shape = graft::shape::unknown_rank();
    bool trainable = true;
    std::string initializer_name;    ///< "w/Assign"
    std::string initial_value_name;  ///< "w/initial_value:0"
    std::string snapshot_name;       ///< "w/read:0", "w/Read/ReadVariableOp:0"
    std::string checkpoint_key;      ///< "w" (TF1), "w/.ATTRIBUTES/VARIABLE_VALUE" (TF2); "" = not saved
    std::optional<save_slice_info> save_slice;
    int object_id = -1;              ///< TF2: SavedObjectGraph node id
};

/// True for the ops that hold a variable. Never throws.
inline bool is_variable_op(std::string_view op) {
    return op == "VariableV2" || op == "Variable" || op == "VarHandleOp";
}

/// "a/b" with '.' -> ".." and '/' -> ".S" per name (TF's escaping of object-graph local names).
inline std::string escape_object_name(std::string_view local) {
    std::string r;
    for (char c : local) {
        if (c == '.') r += "..";
        else if (c == '/') r += ".S";
        else r += c;
    }
    return r;
}

/// Object path of every node of a SavedObjectGraph (first breadth-first path from the root,
/// escaped names joined with '/'; "" for the root and for unreachable nodes). Never throws.
inline std::vector<std::string> object_paths(const saved_object_graph& og) {
    std::vector<std::string> path(og.nodes.size());
    std::vector<bool> seen(og.nodes.size(), false);
    if (og.nodes.empty()) return path;
    std::deque<int> q{0};
    seen[0] = true;
    while (!q.empty()) {
        int id = q.front();
        q.pop_front();
        for (auto& [child, local] : og.nodes[static_cast<std::size_t>(id)].children) {
            if (child < 0 || static_cast<std::size_t>(child) >= og.nodes.size() || seen[static_cast<std::size_t>(child)]) continue;
            seen[static_cast<std::size_t>(child)] = true;
            auto& p = path[static_cast<std::size_t>(id)];
            path[static_cast<std::size_t>(child)] = (p.empty() ? "" : p + "/") + escape_object_name(local);
            q.push_back(child);
        }
    }
    return path;
}

namespace detail {

/// The node part of tensor name `t` as endpoint::try_split finds it, without copying it ("" where
/// try_split fails). Never throws.
inline std::string_view split_node(std::string_view t) noexcept {
    std::string_view node;
    int index = 0;
    return endpoint::split_view(t, node, index) ? node : std::string_view();
}

/// endpoint::parse(t).node without copying it. Throws invalid_argument_error like endpoint::parse.
inline std::string_view parse_node(std::string_view t) {
    std::string_view n = split_node(t);
    if (n.empty() || t.front() == '^') (void)endpoint::parse(t);  // throws for each of these
    return n;
}

/// checkpoint key per variable node from the Saver's restore ops: RestoreV2 output k (possibly
/// through Identity) assigned to a variable gets tensor_names[k]. With `scope` ("save/"), only the
/// restore ops under it count (a graph with several savers: the MetaGraph's own SaverDef wins).
inline std::unordered_map<std::string, std::string> saver_keys(const graph& g, std::string_view scope = {}) {
    std::unordered_map<std::string, std::string> keys;
    auto names_of = [&](const node& restore) -> std::vector<std::string> {
        if (restore.inputs.size() < 2) return {};
        const node* c = g.find(restore.inputs[1].node);
        if (!c || c->op != "Const") return {};
        const attr_value* v = c->attr("value");
        if (!v || v->which() != attr_value::kind::tensor || v->tensor().type() != dtype::string) return {};
        try {
            auto t = v->tensor().tensor();
            return std::vector<std::string>(t.data<std::string>(), t.data<std::string>() + t.num_elements());
        } catch (const error&) {
            return {};
        }
    };
    for (const auto& n : g) {
        std::string_view op = n.op;  // compared as views: lengths first (this runs over every node)
        bool v2 = op == "RestoreV2", v1 = op == "Restore" || op == "RestoreSlice";
        if (!v2 && !v1) continue;
        if (!scope.empty() && n.name.compare(0, scope.size(), scope) != 0) continue;
        auto names = names_of(n);
        int outs = v2 ? static_cast<int>(names.size()) : 1;
        for (int k = 0; k < outs && k < static_cast<int>(names.size()); ++k) {
            std::vector<endpoint> frontier{{n.name, k}};
            for (int depth = 0; depth < 3 && !frontier.empty(); ++depth) {
                std::vector<endpoint> next;
                for (auto& e : frontier) {
                    for (auto& use : g.consumers(e)) {
                        const node& u = *use.consumer;
                        if ((u.op == "Assign" || u.op == "AssignVariableOp") && use.input == 1 && !u.inputs.empty()) {
                            keys.emplace(u.inputs[0].node, names[static_cast<std::size_t>(k)]);
                        } else if (u.op == "Identity") {
                            next.push_back({u.name, 0});
                        }
                    }
                }
                frontier = std::move(next);
            }
        }
    }
    return keys;
}

/// Fills initializer / initial value / snapshot of `v` from the graph around its node.
inline void infer_from_graph(const graph& g, variable_info& v) {
    const node* n = g.find(v.node);
    if (!n) return;
    for (auto& use : g.consumers({n->name, 0})) {
        const node& u = *use.consumer;
        bool assign = (u.op == "Assign" || u.op == "AssignVariableOp") && use.input == 0;
        bool better_assign = u.name == v.node + "/Assign";
        if (assign && (v.initializer_name.empty() || better_assign)) {
            v.initializer_name = u.name;
            if (u.inputs.size() > 1) v.initial_value_name = u.inputs[1].str();
        }
        bool snap = (v.kind == variable_kind::ref && u.op == "Identity") ||
                    (v.kind == variable_kind::resource && u.op == "ReadVariableOp");
        bool better_snap = u.name == v.node + "/read" || u.name == v.node + "/Read/ReadVariableOp";
        if (snap && (v.snapshot_name.empty() || better_snap)) v.snapshot_name = u.name + ":0";
    }
}

}  // namespace detail

namespace detail {
/// With `nodes`, also each variable's node in `g` (nullptr when absent), for callers that would
/// otherwise look every one up again by name.
inline std::vector<variable_info> find_variables(const graph& g, const meta_graph* mgp,
                                                 std::vector<const node*>* nodes = nullptr) {
    static const meta_graph empty;
    const meta_graph& mg = mgp ? *mgp : empty;
    std::vector<variable_info> out;
    // keys view names held by `g` and by the collections (one allocation less per variable each)
    std::unordered_map<std::string_view, std::size_t> by_node;
    const collection_def* trainable_coll = mg.collection("trainable_variables");
    bool have_trainable_coll = trainable_coll != nullptr;
    // built on first use: VariableDefs written since TF 1.5 carry their own trainable bit
    std::optional<std::unordered_set<std::string_view>> trainable_names;
    auto listed_trainable = [&](std::string_view tensor) {
        if (!trainable_names) {
            trainable_names.emplace();
            for (auto& vd : trainable_coll->variables) trainable_names->insert(vd.variable_name);
        }
        return trainable_names->count(tensor) != 0;
    };
    // the variable op's facts; names left to the caller
    auto from_node = [&](const node& n, variable_info& v) {
        v.kind = n.op == "VarHandleOp" ? variable_kind::resource : variable_kind::ref;
        if (auto* a = n.attr("dtype"); a && a->which() == attr_value::kind::type) v.dtype = base_type(a->type());
        if (auto* a = n.attr("shape"); a && a->which() == attr_value::kind::shape) v.shape = a->shape();
    };
    static constexpr const char* kColls[] = {"variables", "local_variables", "model_variables", "trainable_variables",
                                             "moving_average_variables", "metric_variables"};
    {
        std::size_t listed = 0;
        for (const char* coll : kColls) {
            if (auto* c = mg.collection(coll)) listed = std::max(listed, c->variables.size());
        }
        out.reserve(listed);
        by_node.reserve(listed);
        if (nodes) nodes->reserve(listed);
    }
    // 1. VariableDefs, global then local and the rest
    for (const char* coll : kColls) {
        auto* c = mg.collection(coll);
        if (!c) continue;
        for (auto& vd : c->variables) {
            std::string_view node_name = parse_node(vd.variable_name);
            if (!by_node.try_emplace(node_name, out.size()).second) continue;
            const node* n = g.find(node_name);
            variable_info& v = out.emplace_back();
            if (n) from_node(*n, v);
            v.node = v.name = node_name;
            if (vd.is_resource) v.kind = variable_kind::resource;
            v.initializer_name = vd.initializer_name;
            v.initial_value_name = vd.initial_value_name;
            v.snapshot_name = vd.snapshot_name;
            v.trainable = vd.has_trainable ? vd.trainable : (have_trainable_coll ? listed_trainable(vd.variable_name) : true);
            v.save_slice = vd.save_slice_info_def;
            if (nodes) nodes->push_back(n);
        }
    }
    // 2. variable ops the collections do not list
    for (const auto& n : g) {
        if (!is_variable_op(n.op) || !by_node.try_emplace(n.name, out.size()).second) continue;
        variable_info& v = out.emplace_back();
        from_node(n, v);
        v.node = v.name = n.name;
        if (have_trainable_coll) v.trainable = listed_trainable(n.name + ":0");
        infer_from_graph(g, v);
        if (nodes) nodes->push_back(&n);
    }
    // 3. checkpoint keys: TF1 saver wiring, else the op name (or the full name of a partition)
    // (with a saver in the graph, a variable it does not restore has no key: it is not saved)
    std::unordered_map<std::string, std::string> skeys;
    if (mg.saver && !mg.saver->restore_op_name.empty()) {
        const std::string& r = mg.saver->restore_op_name;  // "save/restore_all" -> "save/"
        if (auto slash = r.rfind('/'); slash != std::string::npos) skeys = saver_keys(g, std::string_view(r).substr(0, slash + 1));
    }
    if (skeys.empty()) skeys = saver_keys(g);
    for (auto& v : out) {
        if (auto it = skeys.find(v.node); it != skeys.end()) v.checkpoint_key = it->second;
        else if (skeys.empty()) v.checkpoint_key = v.save_slice ? v.save_slice->full_name : v.node;
    }
    // 4. TF2: bind handles to SavedObjectGraph variables (captures first, then names)
    if (!mg.objects.empty()) {
        const auto& og = mg.objects;
        auto paths = object_paths(og);
        std::unordered_map<std::string, int> node_to_id;
        for (const auto& n : g) {
            const attr_value* f = n.attr("f");
            std::string fname = f && f->which() == attr_value::kind::func ? f->func().name : n.op;
            auto it = og.bound_inputs.find(fname);
            if (it == og.bound_inputs.end()) continue;
            const auto& ids = it->second;
            if (ids.size() > n.inputs.size()) continue;
            std::size_t first = n.inputs.size() - ids.size();
            for (std::size_t k = 0; k < ids.size(); ++k) node_to_id.emplace(n.inputs[first + k].node, ids[k]);
        }
        std::unordered_map<std::string, int> name_to_id;
        for (std::size_t id = 0; id < og.nodes.size(); ++id) {
            if (og.nodes[id].which == saved_object::kind::variable) name_to_id.emplace(og.nodes[id].name, static_cast<int>(id));
        }
        for (auto& v : out) {
            if (v.kind != variable_kind::resource) continue;
            v.checkpoint_key.clear();  // TF2 checkpoints hold only object-graph variables
            int id = -1;
            if (auto it = node_to_id.find(v.node); it != node_to_id.end()) id = it->second;
            if (id < 0 || og.nodes[static_cast<std::size_t>(id)].which != saved_object::kind::variable) {
                id = -1;
                const node* n = g.find(v.node);
                const attr_value* sn = n ? n->attr("shared_name") : nullptr;
                std::string shared = sn && sn->which() == attr_value::kind::s ? sn->s() : std::string();
                if (auto it = name_to_id.find(shared); !shared.empty() && it != name_to_id.end()) id = it->second;
                else if (auto it2 = name_to_id.find(v.node); it2 != name_to_id.end()) id = it2->second;
            }
            if (id < 0) continue;
            const auto& so = og.nodes[static_cast<std::size_t>(id)];
            v.object_id = id;
            v.name = so.name.empty() ? v.name : so.name;
            if (so.dtype != dtype::invalid) v.dtype = so.dtype;
            v.shape = so.shape;
            v.trainable = so.trainable;
            v.checkpoint_key = paths[static_cast<std::size_t>(id)] + "/.ATTRIBUTES/VARIABLE_VALUE";
        }
    }
    return out;
}

}  // namespace detail

/// The variables of a MetaGraph (see the top of this file for the sources). Never throws.
inline std::vector<variable_info> find_variables(const meta_graph& mg) { return detail::find_variables(mg.graph, &mg); }

/// The variables a plain graph holds (no collections, no object graph). Never throws.
inline std::vector<variable_info> find_variables(const graph& g) { return detail::find_variables(g, nullptr); }

}  // namespace graft
