// graft/surgery/rename.hpp — the renaming every surgery job shares: one function from old node
// names to new ones, applied to everything in a MetaGraph that names a node (data and control
// inputs, colocation attrs, collections, VariableDefs, the SaverDef, signatures). Link graft::compiled
// (VariableDefs are re-encoded).
//
//   auto f = graft::surgery::prefixer("A");                       // "w" -> "A/w"
//   graft::surgery::rename_tensor("w/read:0", f) == "A/w/read:0";
//   graft::surgery::rename_tensor("^init", f) == "^A/init";
//   graft::surgery::rename_refs(n, f);                           // inputs, ^controls, _class loc:@
//   graft::surgery::rename_collection(mg.collections["variables"], f);
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "graft/graph/graph.hpp"
#include "graft/graph/meta_graph.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"

namespace graft::surgery {

/// Maps an old node name to its new one.
using rename_fn = std::function<std::string(std::string_view)>;

/// "scope/name", or `name` when scope is empty. A trailing '/' on scope is not doubled.
inline std::string join_scope(std::string_view scope, std::string_view name) {
    if (scope.empty()) return std::string(name);
    std::string r(scope);
    if (r.back() != '/') r += '/';
    r += name;
    return r;
}

/// name -> "scope/name" (identity for an empty scope).
inline rename_fn prefixer(std::string scope) {
    return [s = std::move(scope)](std::string_view n) { return join_scope(s, n); };
}

/// A tensor or control-input name in three parts: "^" or "", the node name, ":k" or "" (a ':' followed
/// by digits only). Never throws.
struct tensor_name_parts {
    std::string_view lead, name, tail;
};
inline tensor_name_parts split_tensor_name(std::string_view t) noexcept {
    if (!t.empty() && t.front() == '^') return {t.substr(0, 1), t.substr(1), {}};
    auto colon = t.rfind(':');
    if (colon != std::string_view::npos && colon + 1 < t.size()) {
        bool digits = true;
        for (auto c : t.substr(colon + 1)) digits = digits && c >= '0' && c <= '9';
        if (digits) return {{}, t.substr(0, colon), t.substr(colon)};
    }
    return {{}, t, {}};
}

/// A tensor or node reference through `f` on its node part: "a", "a:1", "^a"; an empty string
/// stays empty. Never throws (except what `f` throws).
inline std::string rename_tensor(std::string_view t, const rename_fn& f) {
    if (t.empty()) return {};
    auto p = split_tensor_name(t);
    return std::string(p.lead) + f(p.name) + std::string(p.tail);
}

/// The colocation attr `_class` ("loc:@name" entries) through `f`. Never throws (except bad_alloc).
inline void rename_colocation(node& n, const rename_fn& f) {
    auto* c = n.attrs.find("_class");
    if (!c || !c->is_list() || c->list_size() == 0) return;
    if (!std::holds_alternative<std::vector<std::string>>(c->list())) return;
    auto items = c->list_of<std::string>();
    for (auto& s : items) {
        if (s.rfind("loc:@", 0) == 0) s = "loc:@" + f(std::string_view(s).substr(5));
    }
    *c = attr_value::list_of(std::move(items));
}

/// Data inputs, control inputs and colocation of `n` through `f` (not n.name itself).
inline void rename_refs(node& n, const rename_fn& f) {
    for (auto& e : n.inputs) e.node = f(e.node);
    for (auto& c : n.control_inputs) c = f(c);
    rename_colocation(n, f);
}

/// A VariableDef with every tensor/op name through `f` (the save-slice full name too).
inline variable_def rename(const variable_def& v, const rename_fn& f) {
    variable_def r = v;
    r.variable_name = rename_tensor(v.variable_name, f);
    r.initial_value_name = rename_tensor(v.initial_value_name, f);
    r.initializer_name = rename_tensor(v.initializer_name, f);
    r.snapshot_name = rename_tensor(v.snapshot_name, f);
    if (r.save_slice_info_def) r.save_slice_info_def->full_name = rename_tensor(r.save_slice_info_def->full_name, f);
    return r;
}

/// A SaverDef with its three tensor/op names through `f`.
inline saver_def rename(const saver_def& s, const rename_fn& f) {
    saver_def r = s;
    r.filename_tensor_name = rename_tensor(s.filename_tensor_name, f);
    r.save_tensor_name = rename_tensor(s.save_tensor_name, f);
    r.restore_op_name = rename_tensor(s.restore_op_name, f);
    return r;
}

/// A SignatureDef with its tensor names through `f`.
inline signature_def rename(const signature_def& s, const rename_fn& f) {
    signature_def r = s;
    for (auto* m : {&r.inputs, &r.outputs}) {
        for (auto& [k, ti] : *m) {
            ti.name = rename_tensor(ti.name, f);
            ti.coo_values = rename_tensor(ti.coo_values, f);
            ti.coo_indices = rename_tensor(ti.coo_indices, f);
            ti.coo_dense_shape = rename_tensor(ti.coo_dense_shape, f);
        }
    }
    return r;
}

/// Renames one collection in place: node lists (node or tensor names) and VariableDef lists are
/// renamed; int64/float lists need nothing. Returns false for a collection whose items name
/// nodes in a form graft does not decode (bytes lists other than VariableDefs: while/cond
/// contexts, queue runners, savers) — the caller drops or keeps it knowingly.
inline bool rename_collection(collection_def& c, const rename_fn& f) {
    switch (c.which) {
        case collection_def::kind::node_list:
            for (auto& v : c.values) v = rename_tensor(v, f);
            return true;
        case collection_def::kind::bytes_list:
            if (c.variables.size() != c.values.size() || c.values.empty()) return c.values.empty();
            for (std::size_t i = 0; i < c.variables.size(); ++i) {
                c.variables[i] = rename(c.variables[i], f);
                c.values[i] = tf::encode_variable_def(c.variables[i]);
            }
            return true;
        default:
            return true;
    }
}

/// True when some node of `g` is named `scope` or lives under "scope/". Never throws.
inline bool scope_in_use(const graph& g, std::string_view scope) {
    if (scope.empty()) return g.size() != 0;
    std::string pre = join_scope(scope, "");
    for (const auto& n : g) {
        if (n.name == scope || n.name.compare(0, pre.size(), pre) == 0) return true;
    }
    return false;
}

}  // namespace graft::surgery
