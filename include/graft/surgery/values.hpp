// graft/surgery/values.hpp — where surgery reads variables' current values: freeze() turns them
// into Consts, clone() with init_policy::copy starts the copies from them. A source is a session,
// a checkpoint or a map. Link graft::compiled.
//
//   auto src = graft::surgery::session_values(s);              // or checkpoint_values("model.ckpt")
//   std::optional<graft::tensor> w = src.read(var_info);       // nullopt: the source has no value
//   src.description == "the session";                          // for error messages
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "graft/exec/session.hpp"
#include "graft/graph/variables.hpp"
#include "graft/formats/tf/checkpoint.hpp"

namespace graft::surgery {

/// `read` returns a variable's value, or nullopt when the source has none; `description` names
/// the source in errors ("checkpoint 'model.ckpt'"). An empty source (no `read`) is false.
struct value_source {
    std::function<std::optional<tensor>(const variable_info&)> read;
    std::string description;
    explicit operator bool() const { return static_cast<bool>(read); }
};

/// The current values of a session's variables (uninitialized ones count as missing). The
/// session must outlive the source. Never throws.
inline value_source session_values(exec::session& s) {
    return {[&s](const variable_info& v) -> std::optional<tensor> {
                const node* n = s.g().find(v.node);
                auto var = s.variables().find(n ? exec::variable_key(*n) : v.node);
                if (!var || !var->initialized()) return std::nullopt;
                return exec::to_host(var->read());
            },
            "the session"};
}

/// Values from a checkpoint (prefix, directory with a `checkpoint` file, SavedModel dir), by each
/// variable's checkpoint key (its name when it has none). Throws io_error / format_error when it
/// cannot be opened.
inline value_source checkpoint_values(const std::string& path) {
    auto r = std::make_shared<tf::checkpoint_reader>(path);
    return {[r](const variable_info& v) -> std::optional<tensor> {
                const std::string& key = v.checkpoint_key.empty() ? v.name : v.checkpoint_key;
                if (!r->contains(key)) return std::nullopt;
                return r->read(key);
            },
            "checkpoint '" + r->prefix() + "'"};
}

/// Values from a map keyed by variable node name, variable name or checkpoint key. Never throws.
inline value_source map_values(std::map<std::string, tensor> m) {
    return {[m = std::move(m)](const variable_info& v) -> std::optional<tensor> {
                for (const std::string* k : {&v.node, &v.name, &v.checkpoint_key}) {
                    if (auto it = m.find(*k); it != m.end()) return it->second;
                }
                return std::nullopt;
            },
            "the given values"};
}

}  // namespace graft::surgery
