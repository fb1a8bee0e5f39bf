// graft/train/variables.hpp — TF1 training state on a MetaGraph: variables recorded in the
// `variables` / `trainable_variables` collections with the VariableDefs tf.Variable writes, the
// `init` op, variable lists by scope or collection, and the global step. Link graft::compiled.
//
//   graft::meta_graph mg;
//   graft::graph_builder b(mg.graph);
//   auto w = graft::train::create_variable(mg, b, "dense/kernel", graft::tensor(graft::dtype::float32, {784, 10}));
//   auto step = graft::train::get_or_create_global_step(mg);          // int64 "global_step"
//   std::string init = graft::train::global_variables_initializer(mg);  // NoOp "init"
//   graft::train::trainable_variables(mg, "dense").size() == 1;
//
// A variable is handled as graft::variable_nodes: `ref` ("w:0") for Assign/Apply ops, `value`
// ("w/read:0") for everything else.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/graph/build.hpp"
#include "graft/graph/meta_graph.hpp"
#include "graft/graph/variables.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/train/detail/names.hpp"

namespace graft::train {

/// A TF1 ref variable: VariableV2 node, "<name>/Assign", "<name>/read".
using variable = graft::variable_nodes;

/// TF's GraphKeys.
namespace keys {
inline constexpr const char* global_variables = "variables";
inline constexpr const char* trainable_variables = "trainable_variables";
inline constexpr const char* local_variables = "local_variables";
inline constexpr const char* global_step = "global_step";
inline constexpr const char* train_op = "train_op";
}  // namespace keys

struct variable_options {
    bool trainable = true;
    /// Collections to record the VariableDef in. Empty: {"variables"}, plus
    /// "trainable_variables" when trainable (tf.Variable's default).
    std::vector<std::string> collections;
    int aggregation = 0;  ///< VariableAggregation (global_step: 3, ONLY_FIRST_REPLICA)
    /// A resource variable (VarHandleOp + "<name>/Assign" AssignVariableOp +
    /// "<name>/Read/ReadVariableOp", use_resource=True) instead of a VariableV2.
    bool use_resource = false;
};

namespace detail {

/// Base dtype and shape of the VariableV2 node `name`. Throws not_found_error / graph_error.
inline std::pair<dtype, graft::shape> variable_type(const graph& g, const std::string& name) {
    const node* n = g.find(name);
    if (!n) throw not_found_error("no variable node '" + name + "' in the graph", location::at_node(name));
    dtype t = dtype::invalid;
    graft::shape s = graft::shape::unknown_rank();
    if (auto* a = n->attr("dtype"); a && a->which() == attr_value::kind::type) t = base_type(a->type());
    if (auto* a = n->attr("shape"); a && a->which() == attr_value::kind::shape) s = a->shape();
    return {t, s};
}

/// The VariableDef tf.Variable writes for `v` with initial value `init`.
inline variable_def make_variable_def(const variable& v, const endpoint& init, bool trainable, int aggregation,
                                      bool resource = false) {
    variable_def d;
    d.variable_name = v.name + ":0";
    d.initializer_name = v.assign;
    d.snapshot_name = v.read + ":0";
    d.initial_value_name = init.str();
    if (d.initial_value_name.find(':') == std::string::npos) d.initial_value_name += ":0";
    d.trainable = trainable;
    d.has_trainable = true;
    d.aggregation = aggregation;
    d.is_resource = resource;
    return d;
}

}  // namespace detail

/// Appends a VariableDef to the bytes-list collection `name` (created when absent). Throws
/// invalid_argument_error when the collection exists with another kind.
inline void add_to_collection(meta_graph& mg, const std::string& name, const variable_def& v) {
    auto& c = mg.collections[name];
    if (c.which == collection_def::kind::none) c.which = collection_def::kind::bytes_list;
    if (c.which != collection_def::kind::bytes_list) {
        throw invalid_argument_error("collection '" + name + "' is not a bytes list; cannot add a VariableDef",
                                     location::at_tensor(v.variable_name));
    }
    c.values.push_back(tf::encode_variable_def(v));
    c.variables.push_back(v);
}

/// Appends a node name to the node-list collection `name` (e.g. "train_op"). Throws
/// invalid_argument_error when the collection exists with another kind.
inline void add_to_collection(meta_graph& mg, const std::string& name, const std::string& node_name) {
    auto& c = mg.collections[name];
    if (c.which == collection_def::kind::none) c.which = collection_def::kind::node_list;
    if (c.which != collection_def::kind::node_list) {
        throw invalid_argument_error("collection '" + name + "' is not a node list; cannot add '" + node_name + "'",
                                     location::at_node(node_name));
    }
    c.values.push_back(node_name);
}

/// Records `v` (initial value `init`) in its collections as tf.Variable does. Throws like
/// add_to_collection.
inline void record_variable(meta_graph& mg, const variable& v, const endpoint& init, const variable_options& o = {}) {
    variable_def d = detail::make_variable_def(v, init, o.trainable, o.aggregation, o.use_resource);
    std::vector<std::string> colls = o.collections;
    if (colls.empty()) {
        colls.push_back(keys::global_variables);
        if (o.trainable) colls.push_back(keys::trainable_variables);
    } else if (o.trainable && std::find(colls.begin(), colls.end(), keys::trainable_variables) == colls.end()) {
        colls.push_back(keys::trainable_variables);
    }
    for (auto& c : colls) add_to_collection(mg, c, d);
}

inline variable create_variable(meta_graph& mg, const graph_builder& b, std::string_view name, dtype type,
                                const graft::shape& s, const endpoint& initial_value, const variable_options& o = {});

/// tf.Variable(initial, name=name) under `b`'s scope: VariableV2 + "<name>/initial_value" Const +
/// Assign + read, recorded in the collections. `b` must build into mg.graph. Throws graph_error,
/// invalid_argument_error.
inline variable create_variable(meta_graph& mg, const graph_builder& b, std::string_view name, const tensor& initial,
                                const variable_options& o = {}) {
    if (&b.g() != &mg.graph) {
        throw invalid_argument_error("create_variable: the builder does not build into this MetaGraph's graph",
                                     location::at_node(std::string(name)), "make it with graph_builder(mg.graph)");
    }
    if (o.use_resource) {
        std::string full = detail::free_scope(mg.graph, b.scope().empty() ? std::string(name) : b.scope() + "/" + std::string(name));
        endpoint init = b.at_scope(full + "/Initializer").constant(initial, "initial_value");
        return create_variable(mg, b.at_scope({}), full, initial.type(), initial.shape(), init, o);
    }
    variable v = b.variable(name, initial);
    record_variable(mg, v, endpoint{v.name + "/initial_value", 0}, o);
    return v;
}

/// A variable whose initial value is `initial_value` (an endpoint of mg.graph). Throws like above.
inline variable create_variable(meta_graph& mg, const graph_builder& b, std::string_view name, dtype type,
                                const graft::shape& s, const endpoint& initial_value, const variable_options& o) {
    if (&b.g() != &mg.graph) {
        throw invalid_argument_error("create_variable: the builder does not build into this MetaGraph's graph",
                                     location::at_node(std::string(name)), "make it with graph_builder(mg.graph)");
    }
    variable v;
    if (o.use_resource) {
        std::string full = b.scope().empty() ? std::string(name) : b.scope() + "/" + std::string(name);
        if (mg.graph.contains(full)) {
            throw invalid_argument_error("variable '" + full + "' already exists", location::at_node(full),
                                         "choose another name");
        }
        graph_builder root = b.at_scope({});
        v.name = root.add("VarHandleOp", {}, {{"dtype", type}, {"shape", s}, {"container", std::string()},
                                              {"shared_name", full}}, full).name;
        v.ref = {v.name, 0};
        v.assign = root.at_scope(v.name).add("AssignVariableOp", {v.ref, initial_value}, {{"dtype", type}}, "Assign").name;
        v.read = root.at_scope(v.name + "/Read").add("ReadVariableOp", {v.ref}, {{"dtype", type}}, "ReadVariableOp").name;
        v.value = {v.read, 0};
    } else {
        v = b.variable(name, type, s, initial_value);
    }
    record_variable(mg, v, initial_value, o);
    return v;
}

/// Constant initializer values as TF's init_ops build them under "<var>/Initializer/":
/// zeros/ones give "zeros"/"ones" (a Const below 1000 elements, else shape_as_tensor + Const +
/// Fill, as array_ops.zeros does); any other value gives "Const".
enum class fill_kind { zeros, ones, constant };

namespace detail {
inline endpoint fill_initializer(const graph_builder& in, dtype type, const graft::shape& s, fill_kind k, double value) {
    const char* name = k == fill_kind::zeros ? "zeros" : k == fill_kind::ones ? "ones" : "Const";
    double v = k == fill_kind::zeros ? 0.0 : k == fill_kind::ones ? 1.0 : value;
    if (!s.fully_defined()) {
        throw invalid_argument_error("slot/initializer shape " + s.str() + " is not fully defined",
                                     location::at_node(in.scope()), "give the variable a static shape");
    }
    if (k == fill_kind::constant || s.num_elements() < 1000) {
        tensor d(dtype::float64, s);
        std::fill(d.data<double>(), d.data<double>() + d.num_elements(), v);
        tensor t = graft::cast(d, type);
        return in.constant(t, name);
    }
    graph_builder z = in.at_scope(in.scope() + "/" + name);
    std::vector<std::int32_t> dims;
    for (auto d : s.dims()) dims.push_back(static_cast<std::int32_t>(d));
    endpoint shp = z.constant(tensor::from_vector<std::int32_t>(dims), "shape_as_tensor");
    endpoint c = z.constant(graft::cast(tensor::scalar_of(v), type), "Const");
    return in.op("Fill", {shp, c}, {}, name);
}
}  // namespace detail

/// tf.compat.v1.get_variable(name, shape, dtype, initializer=zeros/ones/constant): the initial
/// value lives under "<name>/Initializer/". Throws graph_error, invalid_argument_error.
inline variable create_filled_variable(meta_graph& mg, const graph_builder& b, std::string_view name, dtype type,
                                       const graft::shape& s, fill_kind k, double value = 0,
                                       const variable_options& o = {}) {
    std::string full = b.scope().empty() ? std::string(name) : b.scope() + "/" + std::string(name);
    if (mg.graph.contains(full)) {
        throw invalid_argument_error("variable '" + full + "' already exists", location::at_node(full),
                                     "choose another name or reuse the existing variable");
    }
    graph_builder top = b.at_scope({});
    endpoint init = detail::fill_initializer(top.at_scope(full + "/Initializer"), type, s, k, value);
    return create_variable(mg, top, full, type, s, init, o);
}

/// True when `v` is a resource variable (VarHandleOp). Never throws.
inline bool is_resource_variable(const graph& g, const variable& v) {
    const node* n = g.find(v.name);
    return n && n->op == "VarHandleOp";
}

/// The variable whose VariableV2 node is `name` (as handles). Throws not_found_error.
inline variable variable_by_name(const graph& g, const std::string& name) {
    const node* n = g.find(name);
    if (!n || !is_variable_op(n->op)) {
        throw not_found_error("no variable '" + name + "' in the graph", location::at_node(name),
                              "list them with graft::find_variables(mg)");
    }
    variable v;
    v.name = name;
    v.ref = {name, 0};
    for (auto& use : g.consumers({name, 0})) {
        const node& u = *use.consumer;
        if ((u.op == "Assign" || u.op == "AssignVariableOp") && use.input == 0 && (v.assign.empty() || u.name == name + "/Assign")) v.assign = u.name;
        if ((u.op == "Identity" || u.op == "ReadVariableOp") && (v.read.empty() || u.name == name + "/read" || u.name == name + "/Read/ReadVariableOp")) v.read = u.name;
    }
    v.value = v.read.empty() ? v.ref : endpoint{v.read, 0};
    return v;
}

/// The variables of collection `name` (VariableDef lists) whose names start with `scope` (TF's
/// get_collection(key, scope) for plain scope strings), in collection order. Never throws except
/// not_found_error when a listed variable is not in the graph.
inline std::vector<variable> variables_in_collection(const meta_graph& mg, std::string_view name,
                                                     std::string_view scope = {}) {
    std::vector<variable> out;
    const collection_def* c = mg.collection(name);
    if (!c) return out;
    for (const auto& vd : c->variables) {
        std::string node = endpoint::parse(vd.variable_name).node;
        if (!scope.empty() && node.compare(0, scope.size(), scope) != 0) continue;
        out.push_back(variable_by_name(mg.graph, node));
    }
    return out;
}

/// tf.compat.v1.trainable_variables(scope). Throws like variables_in_collection.
inline std::vector<variable> trainable_variables(const meta_graph& mg, std::string_view scope = {}) {
    return variables_in_collection(mg, keys::trainable_variables, scope);
}

/// tf.compat.v1.global_variables(scope). Throws like variables_in_collection.
inline std::vector<variable> global_variables(const meta_graph& mg, std::string_view scope = {}) {
    return variables_in_collection(mg, keys::global_variables, scope);
}

/// tf.compat.v1.global_variables_initializer(): a NoOp "init" (made unique) depending on every
/// global variable's initializer. Returns its name. Throws graph_error.
inline std::string global_variables_initializer(meta_graph& mg, std::string_view name = "init") {
    std::vector<std::string> deps;
    if (auto* c = mg.collection(keys::global_variables)) {
        for (auto& vd : c->variables) deps.push_back(vd.initializer_name);
    }
    graph_builder b(mg.graph);
    return b.group(deps, name);
}

/// The global step variable (collection "global_step", else a variable node named "global_step"),
/// or nullopt. Never throws (except bad_alloc).
inline std::optional<variable> get_global_step(const meta_graph& mg) {
    if (auto* c = mg.collection(keys::global_step); c && !c->variables.empty()) {
        return variable_by_name(mg.graph, endpoint::parse(c->variables.front().variable_name).node);
    }
    if (const node* n = mg.graph.find("global_step"); n && is_variable_op(n->op)) return variable_by_name(mg.graph, "global_step");
    return std::nullopt;
}

/// tf.compat.v1.train.get_or_create_global_step(): an int64 scalar VariableV2 "global_step"
/// initialized by "global_step/Initializer/zeros", in collections "global_step" and "variables",
/// not trainable. Throws graph_error.
inline variable get_or_create_global_step(meta_graph& mg) {
    if (auto v = get_global_step(mg)) return *v;
    graph_builder b(mg.graph);
    variable_options o;
    o.trainable = false;
    o.aggregation = 3;  // ONLY_FIRST_REPLICA
    o.collections = {keys::global_variables, keys::global_step};
    return create_filled_variable(mg, b, "global_step", dtype::int64, graft::shape{}, fill_kind::zeros, 0, o);
}

}  // namespace graft::train
