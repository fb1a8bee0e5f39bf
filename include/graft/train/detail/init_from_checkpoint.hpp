// graft/train/detail/init_from_checkpoint.hpp — tf.compat.v1.train.init_from_checkpoint for a
// session. Include graft/train/saver.hpp.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "graft/train/saver.hpp"

namespace graft::train {

/// One variable set by init_from_checkpoint.
struct initialized_variable {
    std::string variable;  ///< node name in the graph
    std::string key;       ///< checkpoint key it came from
};

/// tf.compat.v1.train.init_from_checkpoint(ckpt, assignment_map) applied to the session's
/// variables at once (call it after running the init op; the values stay until the next
/// assignment). `assignment_map` maps checkpoint names to graph names:
///   {"old/", "new/"}   every graph variable under "new/" from the key "old/<rest>";
///   {"/", "new/"}      every graph variable under "new/" from the key "<rest>";
///   {"old/", "/"} or {"old/", ""}: every graph variable from "old/<name>";
///   {"old/w", "new/w"} one variable from one key.
/// Every variable selected must find its key (TF raises ValueError otherwise). `ckpt` is a prefix
/// or a directory with a state file. Returns what was set, sorted by variable. Throws
/// not_found_error naming the variable and key (nothing is assigned then), invalid_argument_error
/// (a scope mapped to a variable name, or dtype/shape mismatches), io_error / format_error.
inline std::vector<initialized_variable> init_from_checkpoint(exec::session& s, const std::string& ckpt,
                                                              const std::map<std::string, std::string>& assignment_map) {
    std::string prefix = ckpt;
    std::error_code ec;
    if (std::filesystem::is_directory(ckpt, ec)) {
        auto latest = tf::latest_checkpoint(ckpt);
        if (!latest) throw not_found_error("no checkpoint in directory '" + ckpt + "'", location::in_file(ckpt));
        prefix = *latest;
    }
    tf::checkpoint_reader reader(prefix);
    std::vector<std::string> graph_vars;
    for (const auto& n : s.g()) {
        if (is_variable_op(n.op)) graph_vars.push_back(n.name);
    }
    std::sort(graph_vars.begin(), graph_vars.end());
    std::map<std::string, std::string> plan;  // variable -> key
    auto need_key = [&](const std::string& var, const std::string& key) {
        if (!reader.contains(key)) {
            throw not_found_error("init_from_checkpoint: tensor '" + key + "' (for variable '" + var + "') is not in checkpoint '" +
                                      prefix + "'",
                                  location::in_file(prefix).with_tensor(key), "check the assignment map's checkpoint side");
        }
        plan[var] = key;
    };
    for (const auto& [ckpt_name, graph_name] : assignment_map) {
        bool ckpt_scope = ckpt_name.empty() || ckpt_name.back() == '/';
        bool graph_scope = graph_name.empty() || graph_name.back() == '/';
        if (!ckpt_scope) {
            if (graph_scope) {
                throw invalid_argument_error("init_from_checkpoint: checkpoint tensor '" + ckpt_name + "' maps to scope '" +
                                             graph_name + "'", location::at_tensor(ckpt_name),
                                             "map a tensor to a variable name, or a scope ending in '/' to a scope");
            }
            if (!std::binary_search(graph_vars.begin(), graph_vars.end(), graph_name)) {
                throw not_found_error("init_from_checkpoint: no variable '" + graph_name + "' in the graph", location::at_node(graph_name));
            }
            need_key(graph_name, ckpt_name);
            continue;
        }
        if (!graph_scope) {
            throw invalid_argument_error("init_from_checkpoint: checkpoint scope '" + ckpt_name + "' maps to variable '" +
                                         graph_name + "'", location::at_tensor(ckpt_name),
                                         "end both sides with '/' to map scopes");
        }
        std::string gscope = graph_name == "/" ? std::string() : graph_name;
        std::string cscope = ckpt_name == "/" ? std::string() : ckpt_name;
        int matched = 0;
        for (auto& v : graph_vars) {
            if (v.compare(0, gscope.size(), gscope) != 0) continue;
            ++matched;
            need_key(v, cscope + v.substr(gscope.size()));
        }
        if (matched == 0) {
            throw not_found_error("init_from_checkpoint: no variable under scope '" + graph_name + "' in the graph",
                                  location::at_node(graph_name), "check the assignment map's graph side");
        }
    }
    std::vector<std::pair<std::string, tensor>> values;
    for (auto& [var, key] : plan) {
        tensor t = reader.read(key);
        auto [type, shp] = detail::variable_type(s.g(), var);
        if (auto why = detail::mismatch(t, type, shp); !why.empty()) {
            throw invalid_argument_error("init_from_checkpoint: variable '" + var + "' from '" + key + "': " + why,
                                         location::in_file(prefix).with_tensor(key));
        }
        values.emplace_back(var, t);
    }
    std::vector<initialized_variable> out;
    for (auto& [var, t] : values) {
        detail::assign_variable(s, var, t);
        out.push_back({var, plan[var]});
    }
    return out;
}

}  // namespace graft::train
