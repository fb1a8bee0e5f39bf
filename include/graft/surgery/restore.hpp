// graft/surgery/restore.hpp — restore a checkpoint into variables that live under another scope
// (an imported model, a second copy of one): checkpoint keys are matched to the variable names
// through a tf::assignment_map ({"": "copy2/"}: key "w" -> variable "copy2/w"; {"old/": "new/"}),
// and what is left over on both sides is reported. Link graft::compiled.
//
//   graft::exec::session s(mg.graph);
//   auto rep = graft::surgery::restore_scoped(s, mg, "copy2", "model.ckpt",
//                                             graft::tf::assignment_map::from({{"", "copy2/"}}));
//   rep.restored;   // {"copy2/b", "copy2/w"}
//   auto part = graft::surgery::restore_scoped(s, {"copy2/w", "copy2/extra"}, "model.ckpt",
//                                              map, graft::train::restore_mode::lenient);
//   part.missing;   // {"copy2/extra"}   part.unused: checkpoint keys nobody asked for
//
//   // A Saver over one scope that writes and reads the keys without the scope:
//   graft::train::saver sv(mg, graft::surgery::scoped_saver_options("copy2"));
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graft/exec/session.hpp"
#include "graft/graph/meta_graph.hpp"
#include "graft/surgery/rename.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf/name_map.hpp"
#include "graft/train/saver.hpp"
#include "graft/train/variables.hpp"

namespace graft::surgery {

/// What restore_scoped did (train::restore_report: restored / missing / unused / mismatched).
using scoped_restore_report = train::restore_report;

/// Sets `variables` (variable node names of the session's graph) from the checkpoint `ckpt_prefix`
/// (a prefix, or a directory with a `checkpoint` state file); `map` says which key feeds which
/// variable. strict: nothing is assigned when a variable has no key or a dtype/shape mismatch;
/// exact: also when keys are left unused; lenient: assigns what matches and reports the rest.
/// Throws io_error / format_error (reading), not_found_error (a variable not in the session's
/// graph; strict/exact: variables without a key, naming them, their keys and the closest keys the
/// checkpoint has), invalid_argument_error (strict/exact: dtype/shape mismatches, or unused keys
/// in exact mode).
inline scoped_restore_report restore_scoped(exec::session& s, const std::vector<std::string>& variables,
                                            const std::string& ckpt_prefix, const tf::assignment_map& map,
                                            train::restore_mode mode = train::restore_mode::strict) {
    std::string prefix = ckpt_prefix;
    std::error_code ec;
    if (std::filesystem::is_directory(ckpt_prefix, ec)) {
        auto latest = tf::latest_checkpoint(ckpt_prefix);
        if (!latest) {
            throw not_found_error("no checkpoint in directory '" + ckpt_prefix + "'", location::in_file(ckpt_prefix),
                                  "its 'checkpoint' file is missing or names no existing checkpoint");
        }
        prefix = *latest;
    }
    for (auto& v : variables) {
        const node* n = s.g().find(v);
        if (!n || !is_variable_op(n->op)) {
            throw not_found_error("restore_scoped: no variable '" + v + "' in the session's graph", location::at_node(v),
                                  "list the variables with graft::train::global_variables(mg)");
        }
    }
    tf::checkpoint_reader reader(prefix);
    std::vector<std::string> keys = reader.keys();
    std::erase(keys, std::string("_CHECKPOINTABLE_OBJECT_GRAPH"));
    tf::name_match m = tf::match_names(keys, variables, map);
    scoped_restore_report rep;
    rep.prefix = prefix;
    rep.unused = m.unused_keys;
    std::vector<std::string> missing_detail;
    for (auto& v : m.missing) {
        std::string key = tf::source_key(v, map);
        rep.missing.push_back(v);
        missing_detail.push_back("'" + v + "' (key '" + key + "'; " + tf::closest_names_hint(key, keys) + ")");
    }
    std::vector<std::pair<std::string, tensor>> todo;
    for (auto& [var, key] : m.pairs) {
        tensor t = reader.read(key);
        auto [type, shp] = train::detail::variable_type(s.g(), var);
        if (auto why = train::detail::mismatch(t, type, shp); !why.empty()) {
            rep.mismatched.push_back(var + " (key '" + key + "'): " + why);
            continue;
        }
        todo.emplace_back(var, std::move(t));
    }
    bool fail = mode != train::restore_mode::lenient && !rep.complete();
    if (mode == train::restore_mode::exact && !rep.unused.empty()) fail = true;
    if (fail) {
        std::string msg = "restoring from '" + prefix + "' failed:";
        if (!missing_detail.empty()) msg += " variables without a checkpoint key: " + train::detail::join(missing_detail, "; ") + ";";
        if (!rep.mismatched.empty()) msg += " mismatched: " + train::detail::join(rep.mismatched, "; ") + ";";
        msg += rep.unused.empty() ? " no unused checkpoint keys" : " unused checkpoint keys: " + train::detail::join(rep.unused);
        std::string hint = "fix the assignment map (e.g. {\"\", \"scope/\"} or {\"old/\", \"new/\"}), or restore with restore_mode::lenient";
        if (!rep.missing.empty()) throw not_found_error(msg, location::in_file(prefix), hint);
        throw invalid_argument_error(msg, location::in_file(prefix), hint);
    }
    for (auto& [var, t] : todo) {
        train::detail::assign_variable(s, var, t);
        rep.restored.push_back(var);
    }
    return rep;
}

/// The global variables of `mg` under `scope` ("scope/..."; every one for an empty scope).
/// Never throws (except bad_alloc).
inline std::vector<std::string> scoped_variables(const meta_graph& mg, std::string_view scope) {
    std::vector<std::string> out;
    std::string pre = join_scope(scope, "");
    auto add = [&](const std::string& n) {
        if (scope.empty() || n.compare(0, pre.size(), pre) == 0) out.push_back(n);
    };
    if (mg.collection(train::keys::global_variables)) {
        for (auto& v : train::global_variables(mg)) add(v.name);
    } else {
        for (auto& v : find_variables(mg.graph)) add(v.node);
    }
    return out;
}

/// restore_scoped over the global variables of `mg` under `scope`. Throws like the overload
/// above, and invalid_argument_error when `scope` holds no variable.
inline scoped_restore_report restore_scoped(exec::session& s, const meta_graph& mg, std::string_view scope,
                                            const std::string& ckpt_prefix, const tf::assignment_map& map,
                                            train::restore_mode mode = train::restore_mode::strict) {
    auto vars = scoped_variables(mg, scope);
    if (vars.empty()) {
        throw invalid_argument_error("restore_scoped: no variables under scope '" + std::string(scope) + "'",
                                     location::at_node(std::string(scope)), "check the scope the model was imported under");
    }
    return restore_scoped(s, vars, ckpt_prefix, map, mode);
}

/// The assignment map that reads a checkpoint written without a scope into "scope/...":
/// {"": "scope/"}. Never throws (except bad_alloc).
inline tf::assignment_map into_scope(std::string_view scope) {
    return tf::assignment_map::from({{"", join_scope(scope, "")}});
}

/// Saver options for the variables under `scope` only, with the scope stripped from the keys (so
/// the checkpoint reads back into the original model, or into another scope), and the save ops
/// under "<scope>/save". Never throws (except bad_alloc).
inline train::saver_options scoped_saver_options(std::string_view scope, train::saver_options o = {}) {
    std::string pre = join_scope(scope, "");
    o.scope = pre;
    o.renames.insert(o.renames.begin(), train::prefix_rename{pre, ""});
    o.name = join_scope(scope, "save");
    return o;
}

}  // namespace graft::surgery
