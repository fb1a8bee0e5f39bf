// graft/surgery/clone.hpp — copy the ops between boundary inputs and outputs under a new scope,
// within one MetaGraph (clone) or from one into another (clone_into). Variables reached are
// copied as real variables (VariableV2 or VarHandleOp + initializer + read, VariableDefs in the
// collections the original is in, one "<scope>/init" NoOp), initialized by policy:
//   copy  — the clone starts from the original's current values (a Const initial value filled
//           from a value source: a session, a checkpoint, or a map);
//   init  — the original's initializer subgraph is cloned, so the clone draws fresh values with the
//           same initializer ops (random ops get a new seed2, derived from their new name);
//   share — no new variable: the copied ops read the original's variable.
// Link graft::tf.
//
//   graft::surgery::clone_options o;
//   o.inputs = {"x"};  o.outputs = {"logits:0"};  o.scope = "copy";
//   o.init = graft::surgery::init_policy::copy;
//   o.values = graft::surgery::session_values(session);       // or checkpoint_values("model.ckpt")
//   auto r = graft::surgery::clone(mg, o);
//   r.outputs[0] == "copy/logits:0";  r.placeholders[0] == "copy/x";  r.init_op == "copy/init";
//
// Names are deterministic: node "a/b" becomes "<scope>/a/b"; a scope already used by a node of the
// destination graph is an error (no silent "_1" scopes); new placeholders are "<scope>/<node>"
// ("<scope>/<node>_<k>" for output k > 0 of a multi-output boundary node). Control inputs on ops
// that are copied too follow the copy; others are kept (clone) or dropped (clone_into). Time is
// linear in the number of copied nodes plus one pass over the destination graph.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "graft/exec/session.hpp"
#include "graft/graph/meta_graph.hpp"
#include "graft/graph/variables.hpp"
#include "graft/surgery/rename.hpp"
#include "graft/surgery/values.hpp"
#include "graft/tf/checkpoint.hpp"
#include "graft/tf/graph_io.hpp"

namespace graft::surgery {

/// How the clone's variables start.
enum class init_policy { copy, init, share };

/// "copy" / "init" / "share" -> policy. Throws invalid_argument_error for anything else.
inline init_policy parse_init_policy(std::string_view s) {
    if (s == "copy") return init_policy::copy;
    if (s == "init") return init_policy::init;
    if (s == "share") return init_policy::share;
    throw invalid_argument_error(detail::cat("unknown init policy '", s, "'"), {}, "use copy, init or share");
}

struct clone_options {
    /// Boundary inputs: tensors ("add_4:0") or nodes ("add_4": each of its outputs). Not copied.
    std::vector<std::string> inputs;
    /// Boundary outputs: tensors or nodes. The ops they depend on, back to the inputs, are copied.
    std::vector<std::string> outputs;
    std::string scope = "copy";
    /// Boundary input tensor (source graph) -> existing tensor of the destination graph that
    /// replaces it. Keys are boundary inputs even when not listed in `inputs`. Unmapped inputs
    /// become Placeholders "<scope>/<node>".
    std::map<std::string, std::string> input_map;
    init_policy init = init_policy::init;
    /// Required for init_policy::copy: session_values(s), checkpoint_values(prefix), map_values(m)
    value_source values;
    /// init policy: give copied random initializer ops (seed or seed2 set) a new seed2.
    bool reseed = true;
    bool clear_devices = false;
};

struct clone_result {
    std::string scope;
    std::unordered_map<std::string, std::string> names;  ///< original node -> copy (every copied node)
    std::vector<std::string> outputs;                 ///< the outputs' copies, in options order
    std::map<std::string, std::string> inputs;        ///< boundary tensor "n:k" -> its replacement
    std::vector<std::string> placeholders;            ///< new Placeholder nodes
    std::vector<std::string> variables;               ///< new variable nodes (not under share)
    std::map<std::string, std::string> variable_map;  ///< original variable node -> clone's (share: itself)
    std::map<std::string, tensor> values;             ///< copy: the clone variable's initial value
    std::string init_op;                              ///< "<scope>/init", empty when no variable was made

    /// The copy of an original tensor or node name ("a:0" -> "copy/a:0"). Throws not_found_error
    /// when that node was not copied.
    [[nodiscard]] std::string copy_of(std::string_view original) const {
        endpoint e;
        endpoint::try_split(original, e);
        auto it = names.find(e.node);
        if (it == names.end()) {
            throw not_found_error(detail::cat("'", original, "' was not copied into scope '", scope, "'"),
                                  location::at_tensor(std::string(original)));
        }
        return original.find(':') == std::string_view::npos ? it->second : endpoint{it->second, e.index}.str();
    }
};

clone_result clone_into(meta_graph& dst, const meta_graph& src, const clone_options& o);

/// Clones within one MetaGraph. Throws not_found_error (a missing boundary tensor or node),
/// invalid_argument_error (scope in use, boundary that does not separate the graph, input_map
/// dtype mismatch, copy without a value source, a stateful op in the subgraph), graph_error, and
/// what the value source throws.
inline clone_result clone(meta_graph& g, const clone_options& o) { return clone_into(g, g, o); }

}  // namespace graft::surgery

#include "graft/surgery/detail/clone_impl.hpp"
