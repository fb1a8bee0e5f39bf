// graft/surgery/import.hpp — tf.compat.v1.train.import_meta_graph into an existing MetaGraph: every
// node of `src` lands under a scope, inputs can be bound to tensors already in the target
// (input_map), and everything that names a node follows (data and control inputs, colocation,
// collections with their VariableDefs, the SaverDef, signatures, resource shared_names). Linear in
// the size of both graphs. Link graft::compiled.
//
//   graft::meta_graph combined;
//   auto a = graft::surgery::import_meta_graph(combined, enc, graft::surgery::under("A"));
//   graft::surgery::import_options o;
//   o.scope = "B";
//   o.input_map = {{"g2_input:0", "A/g1_output:0"}};   // src tensor -> tensor of `combined`
//   auto b = graft::surgery::import_meta_graph(combined, cls, o);
//   // "B/g2_input" (a Placeholder whose outputs are all mapped) is gone; its consumers read
//   // "A/g1_output:0". b.saver is cls's SaverDef renamed ("B/save/Const:0", ...).
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "graft/graph/graph.hpp"
#include "graft/graph/meta_graph.hpp"
#include "graft/surgery/rename.hpp"
#include "graft/formats/tf/name_map.hpp"

namespace graft::surgery {

struct import_options {
    /// Every imported node becomes "scope/name". Empty: names are kept (then no name may clash).
    std::string scope;
    /// Source tensor ("x:0", or "x" for "x:0") -> tensor of the target graph that replaces it;
    /// "^x" -> "^y" replaces control inputs on node x by control inputs on y. A Placeholder whose
    /// output is mapped is not imported.
    std::map<std::string, std::string> input_map;
    /// Drop every node's device.
    bool clear_devices = false;
    /// Source tensor or op names whose imported names import_result::return_elements gives.
    std::vector<std::string> return_elements;
    /// Merge the source's collections into the target's.
    bool import_collections = true;
    /// Add the source's signatures to the target as "<scope>/<key>" ("<key>" without a scope).
    bool import_signatures = true;
    /// Set the target's SaverDef to the imported one (the default keeps the target's).
    bool replace_saver = false;
    /// Check dtypes and static shapes at each mapped input.
    bool check_seams = true;
};

/// import_options with a scope (and an input map): import_meta_graph(into, src, under("A")).
/// Never throws (except bad_alloc).
inline import_options under(std::string scope, std::map<std::string, std::string> input_map = {}) {
    import_options o;
    o.scope = std::move(scope);
    o.input_map = std::move(input_map);
    return o;
}

struct import_result {
    std::string scope;
    std::size_t imported_nodes = 0;
    /// Source nodes that were not imported (Placeholders whose outputs are all mapped).
    std::vector<std::string> removed;
    /// Collections dropped: their items are not decodable by graft, or their kind differs from
    /// the target's collection of that name.
    std::vector<std::string> dropped_collections;
    /// The source's SaverDef with the imported names (restore this model alone with it).
    std::optional<saver_def> saver;
    /// The source's signatures with the imported names, under their original keys.
    std::map<std::string, signature_def> signatures;
    /// The imported names of import_options::return_elements, in order.
    std::vector<std::string> return_elements;
    /// The source's global variables (the "variables" collection, or every variable op when it
    /// has none) with the imported names.
    std::vector<std::string> variables;
    /// The source's trainable variables with the imported names.
    std::vector<std::string> trainable_variables;
    /// The imported name of the source's "init" op, if it had one.
    std::string init_op;

    /// The imported name of source node `n`. Never throws (except bad_alloc).
    [[nodiscard]] std::string name(std::string_view n) const { return join_scope(scope, n); }
};

namespace detail {

/// Ops whose output 0 has the shape of input 0 (`shape_preserving` on their line of the op table).
inline bool shape_preserving(std::string_view op) { return traits_of(op).shape_preserving; }

/// A cheap static shape of `e` in `g`: from attrs (Placeholder, Const, variables, _output_shapes)
/// and a few shape rules (unary ops, broadcasting binaries, MatMul), following at most `depth`
/// producers. Unknown rank when nothing is known. Never throws (except bad_alloc).
inline graft::shape static_shape(const graph& g, const endpoint& e, int depth = 32) {
    const graft::shape unknown = graft::shape::unknown_rank();
    const node* n = g.find(e.node);
    if (!n || depth <= 0) return unknown;
    auto attr_shape = [&](std::string_view a) -> graft::shape {
        auto* v = n->attr(a);
        return v && v->which() == attr_value::kind::shape ? v->shape() : unknown;
    };
    if (auto* os = n->attr("_output_shapes"); os && os->is_list() &&
        std::holds_alternative<std::vector<graft::shape>>(os->list())) {
        auto& l = os->list_of<graft::shape>();
        if (e.index >= 0 && static_cast<std::size_t>(e.index) < l.size() && l[static_cast<std::size_t>(e.index)].rank_known())
            return l[static_cast<std::size_t>(e.index)];
    }
    if (e.index != 0) return unknown;
    const std::string& op = n->op;
    if (op == "Placeholder" || op == "VariableV2" || op == "Variable") return attr_shape("shape");
    if (op == "PlaceholderWithDefault") {
        auto s = attr_shape("shape");
        return s.rank_known() || n->inputs.empty() ? s : static_shape(g, n->inputs[0], depth - 1);
    }
    if (op == "Const") {
        auto* v = n->attr("value");
        return v && v->which() == attr_value::kind::tensor ? v->tensor().shape() : unknown;
    }
    if (op == "ReadVariableOp" && !n->inputs.empty()) {
        const node* h = g.find(n->inputs[0].node);
        if (h && h->op == "VarHandleOp") {
            auto* v = h->attr("shape");
            return v && v->which() == attr_value::kind::shape ? v->shape() : unknown;
        }
        return unknown;
    }
    if (shape_preserving(op) && !n->inputs.empty()) return static_shape(g, n->inputs[0], depth - 1);
    if ((op == "Add" || op == "AddV2" || op == "Sub" || op == "Mul" || op == "RealDiv" || op == "Maximum" ||
         op == "Minimum" || op == "SquaredDifference") && n->inputs.size() == 2) {
        auto a = static_shape(g, n->inputs[0], depth - 1), b = static_shape(g, n->inputs[1], depth - 1);
        if (!a.rank_known() || !b.rank_known()) return unknown;
        int r = std::max(a.rank(), b.rank());
        std::vector<std::int64_t> d(static_cast<std::size_t>(r), -1);
        for (int i = 0; i < r; ++i) {
            int ia = a.rank() - r + i, ib = b.rank() - r + i;
            std::int64_t x = ia >= 0 ? a.dim(ia) : 1, y = ib >= 0 ? b.dim(ib) : 1;
            d[static_cast<std::size_t>(i)] = x == 1 ? y : y == 1 ? x : (x >= 0 ? x : y);
        }
        return graft::shape(std::move(d));
    }
    if (op == "MatMul" && n->inputs.size() == 2) {
        auto a = static_shape(g, n->inputs[0], depth - 1), b = static_shape(g, n->inputs[1], depth - 1);
        auto flag = [&](std::string_view k) { auto* v = n->attr(k); return v && v->which() == attr_value::kind::b && v->b(); };
        std::int64_t m = -1, k = -1;
        if (a.rank() == 2) m = a.dim(flag("transpose_a") ? 1 : 0);
        if (b.rank() == 2) k = b.dim(flag("transpose_b") ? 0 : 1);
        return graft::shape{m, k};
    }
    return unknown;
}

/// Variable node names of `mg`'s collection `name` (or of every variable op for the global
/// collection when `mg` has none). Never throws (except bad_alloc).
inline std::vector<std::string> variable_names(const meta_graph& mg, const char* name, bool fallback) {
    std::vector<std::string> out;
    if (const collection_def* c = mg.collection(name)) {
        for (auto& v : c->variables) out.push_back(endpoint::parse(v.variable_name).node);
        return out;
    }
    if (fallback) {
        for (const auto& n : mg.graph) {
            if (n.op == "VariableV2" || n.op == "Variable" || n.op == "VarHandleOp") out.push_back(n.name);
        }
    }
    return out;
}

inline std::string list_names(const std::vector<std::string>& v) {
    std::string r;
    for (auto& s : v) r += (r.empty() ? "'" : ", '") + s + "'";
    return r;
}

/// Base dtype of output `e` of `g`, or invalid when the op is unknown. Never throws.
inline graft::dtype output_type(const graph& g, const node& n, int index) {
    try {
        auto t = g.output_dtypes(n);
        if (index < 0 || static_cast<std::size_t>(index) >= t.size()) return graft::dtype::invalid;
        return base_type(t[static_cast<std::size_t>(index)]);
    } catch (const std::exception&) {
        return graft::dtype::invalid;
    }
}

/// -1 when the op of `n` is unknown, else its output count. Never throws.
inline int output_count(const graph& g, const node& n) {
    try {
        return g.num_outputs(n);
    } catch (const std::exception&) {
        return -1;
    }
}

/// Up to five node names of `g` close to `name`, as a hint. Never throws (except bad_alloc).
inline std::string close_nodes_hint(const graph& g, std::string_view name, std::string_view where) {
    std::vector<std::string> all;
    all.reserve(g.size());
    for (const auto& n : g) all.push_back(n.name);
    if (all.empty()) return graft::detail::cat(where, " is empty");
    std::string h = graft::detail::cat("closest nodes in ", where, ": ");
    auto c = tf::closest_names(name, all);
    for (std::size_t i = 0; i < c.size(); ++i) h += (i ? ", '" : "'") + c[i] + "'";
    return h;
}

}  // namespace detail

/// Imports `src` into `into` under o.scope; see import_options. `into` is left unchanged when
/// anything fails. Throws invalid_argument_error when the scope is already used in `into` (or,
/// without a scope, a name clashes), an input_map entry names a tensor missing from `src` or from
/// `into`, or the dtypes/static shapes at a mapped input disagree (naming both tensors);
/// not_found_error for a return element `src` lacks; graph_error when a function of `src`'s
/// library clashes with a different one of the same name in `into`.
import_result import_meta_graph(meta_graph& into, const meta_graph& src, const import_options& o = {});

}  // namespace graft::surgery

// import_meta_graph() is a compiled part (core/config.hpp): src/compiled/import.cpp with graft::compiled.
#if !defined(GRAFT_SEPARATE_COMPILATION) || defined(GRAFT_COMPILING_IMPORT)
#include "graft/surgery/detail/import_impl.hpp"
#endif
