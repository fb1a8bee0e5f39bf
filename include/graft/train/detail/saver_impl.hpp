// graft/train/detail/saver_impl.hpp — graft::train::saver's save(), restore() and the ops it builds,
// behind graft/train/saver.hpp.
#pragma once

#include "graft/train/saver.hpp"

namespace graft::train {

GRAFT_INLINE std::string saver::save(exec::session& s, const std::string& save_path, std::optional<std::int64_t> global_step) {
    namespace fs = std::filesystem;
    std::string prefix = save_path;
    if (global_step) prefix += "-" + std::to_string(*global_step);
    // 1. values, all read before anything is written
    std::vector<tensor> values;
    values.reserve(items_.size());
    for (auto& it : items_) {
        const node* n = s.g().find(it.variable);
        if (!n) {
            throw not_found_error("variable '" + it.variable + "' is not in the session's graph",
                                  location::at_node(it.variable), "save with a session made from this graph");
        }
        auto v = s.variables().find(exec::variable_key(*n));
        if (!v || !v->initialized()) {
            throw graph_error("cannot save uninitialized variable '" + it.variable + "'", location::at_tensor(it.variable),
                              "run the 'init' op or restore the variables before saving");
        }
        values.push_back(exec::to_host(v->read()));
    }
    // 2. the bundle and the MetaGraph, one file set: over an existing prefix, the old checkpoint
    //    or the new one stands whole at every instant (core/file_set.hpp)
    {
        file_set_writer set(prefix);
        tf::bundle_writer w(prefix);
        for (std::size_t i = 0; i < items_.size(); ++i) w.add(items_[i].key, values[i]);
        w.finish_into(set);
        if (opt_.write_meta_graph) {
            meta_graph copy = *mg_;
            if (!def_.filename_tensor_name.empty()) copy.saver = def_;
            set.add(prefix + ".meta").write(tf::serialize_meta_graph_def(copy));
        }
        set.commit();
    }
    // 3. the state file, then deletions
    record(prefix);
    fs::path dir = fs::path(prefix).parent_path();
    tf::checkpoint_state st;
    auto rel = [&](const std::string& p) {
        return fs::path(p).parent_path() == dir ? fs::path(p).filename().string() : p;
    };
    st.model_checkpoint_path = rel(prefix);
    for (auto& [p, t] : last_) st.all_model_checkpoint_paths.push_back(rel(p));
    if (last_.empty()) st.all_model_checkpoint_paths.push_back(rel(prefix));
    tf::write_checkpoint_state(dir.empty() ? "." : dir.string(), st, opt_.latest_filename);
    delete_old();
    return prefix;
}

GRAFT_INLINE restore_report saver::restore(exec::session& s, const std::string& save_path, restore_mode mode) const {
    std::string prefix = save_path;
    std::error_code ec;
    if (std::filesystem::is_directory(save_path, ec)) {
        auto latest = tf::latest_checkpoint(save_path, opt_.latest_filename);
        if (!latest) {
            throw not_found_error("no checkpoint in directory '" + save_path + "'", location::in_file(save_path),
                                  "its '" + opt_.latest_filename + "' file is missing or names no existing checkpoint");
        }
        prefix = *latest;
    }
    tf::checkpoint_reader reader(prefix);
    restore_report rep;
    rep.prefix = prefix;
    std::unordered_set<std::string> used;
    std::vector<std::pair<const saveable*, tensor>> todo;
    for (auto& it : items_) {
        if (!reader.contains(it.key)) {
            rep.missing.push_back(it.variable == it.key ? it.variable : it.variable + " (key '" + it.key + "')");
            continue;
        }
        used.insert(it.key);
        tensor t = reader.read(it.key);
        if (auto why = detail::mismatch(t, it.type, it.shape); !why.empty()) {
            rep.mismatched.push_back(it.variable + ": " + why);
            continue;
        }
        todo.emplace_back(&it, t);
    }
    for (auto& k : reader.keys()) {
        if (!used.count(k) && k != "_CHECKPOINTABLE_OBJECT_GRAPH") rep.unused.push_back(k);
    }
    bool fail = mode != restore_mode::lenient && !rep.complete();
    if (mode == restore_mode::exact && !rep.unused.empty()) fail = true;
    if (fail) {
        std::string msg = "restoring from '" + prefix + "' failed:";
        if (!rep.missing.empty()) msg += " missing in the checkpoint: " + detail::join(rep.missing) + ";";
        if (!rep.mismatched.empty()) msg += " mismatched: " + detail::join(rep.mismatched, "; ") + ";";
        msg += rep.unused.empty() ? " no unused checkpoint keys" : " unused checkpoint keys: " + detail::join(rep.unused);
        std::string hint = "map the names with saver_options::name_map or renames, or restore with restore_mode::lenient";
        if (rep.missing.empty() && rep.mismatched.empty()) throw invalid_argument_error(msg, location::in_file(prefix), hint);
        if (!rep.mismatched.empty() && rep.missing.empty()) throw invalid_argument_error(msg, location::in_file(prefix), hint);
        throw not_found_error(msg, location::in_file(prefix), hint);
    }
    for (auto& [it, t] : todo) {
        detail::assign_variable(s, it->variable, t);
        rep.restored.push_back(it->variable);
    }
    return rep;
}

GRAFT_INLINE void saver::select() {
    const graph& g = mg_->graph;
    std::vector<std::pair<std::string, std::string>> pairs;  // key, variable
    if (!opt_.name_map.empty()) {
        for (auto& [k, v] : opt_.name_map) pairs.emplace_back(k, v);
    } else {
        std::vector<std::string> names = opt_.var_list;
        if (names.empty()) {
            if (mg_->collection(keys::global_variables)) {
                for (auto& v : global_variables(*mg_)) names.push_back(v.name);
            } else {
                for (auto& v : find_variables(g)) names.push_back(v.node);
            }
        }
        for (auto& n : names) {
            if (!opt_.scope.empty() && n.compare(0, opt_.scope.size(), opt_.scope) != 0) continue;
            std::string key = n;
            for (auto& r : opt_.renames) {
                if (n.compare(0, r.variable_prefix.size(), r.variable_prefix) == 0) {
                    key = r.key_prefix + n.substr(r.variable_prefix.size());
                    break;
                }
            }
            pairs.emplace_back(key, n);
        }
    }
    std::map<std::string, std::string> by_key;
    for (auto& [k, v] : pairs) {
        const node* n = g.find(v);
        if (!n || !is_variable_op(n->op)) {
            throw not_found_error("saver: no variable '" + v + "' in the graph", location::at_node(v),
                                  "list the variables with graft::find_variables(mg)");
        }
        if (auto [it, fresh] = by_key.emplace(k, v); !fresh && it->second != v) {
            throw invalid_argument_error("saver: variables '" + it->second + "' and '" + v + "' both map to key '" + k + "'",
                                         location::at_tensor(k), "give each variable its own checkpoint key");
        }
    }
    if (by_key.empty()) {
        throw invalid_argument_error("saver: no variables to save", {},
                                     "create variables first, or check var_list / scope");
    }
    for (auto& [k, v] : by_key) {
        auto [t, shp] = detail::variable_type(g, v);
        items_.push_back({k, v, t, shp});
    }
}

GRAFT_INLINE void saver::build_ops() {
    graph& g = mg_->graph;
    graph_builder root(g);
    std::string scope = detail::free_scope(g, opt_.name);
    graph_builder s = root.at_scope(scope);
    endpoint filename = s.constant(tensor::scalar_of(std::string("model")), "Const");
    std::vector<std::string> keys, specs;
    for (auto& it : items_) {
        keys.push_back(it.key);
        specs.emplace_back();
    }
    auto value_of = [&](const saveable& it) -> endpoint {
        const node* n = g.find(it.variable);
        if (n->op == "VarHandleOp") {
            variable v = variable_by_name(g, it.variable);
            if (v.read.empty()) return s.op("ReadVariableOp", {{it.variable, 0}}, {{"dtype", it.type}}, "Read");
            return v.value;
        }
        return {it.variable, 0};
    };
    std::string save_name = detail::free_scope(g, scope + "/SaveV2");
    graph_builder sv = root.at_scope(save_name);
    std::vector<endpoint> ins{filename, sv.constant(tensor::from_vector<std::string>(keys), "tensor_names"),
                              sv.constant(tensor::from_vector<std::string>(specs), "shape_and_slices")};
    for (auto& it : items_) ins.push_back(value_of(it));
    std::string save_op = root.add("SaveV2", ins, {}, save_name).name;
    endpoint ctrl = root.with_control_dependencies({save_op}).op("Identity", {filename}, {}, scope + "/control_dependency");
    std::vector<std::string> assigns;
    for (auto& it : items_) {
        std::string rname = detail::free_scope(g, scope + "/RestoreV2");
        graph_builder rs = root.at_scope(rname);
        endpoint names = rs.constant(tensor::from_vector<std::string>({it.key}), "tensor_names");
        endpoint slices = rs.constant(tensor::from_vector<std::string>({std::string()}), "shape_and_slices");
        endpoint restored = root.add("RestoreV2", {filename, names, slices},
                                     {{"dtypes", attr_value::list_of(std::vector<dtype>{it.type})}}, rname).output(0);
        const node* n = g.find(it.variable);
        if (n->op == "VarHandleOp") {
            assigns.push_back(s.add("AssignVariableOp", {{it.variable, 0}, restored}, {{"dtype", it.type}}, "AssignVariableOp").name);
        } else {
            assigns.push_back(s.add("Assign", {{it.variable, 0}, restored},
                                    {{"validate_shape", true}, {"use_locking", true}}, "Assign").name);
        }
    }
    std::string restore_all = root.group(assigns, scope + "/restore_all");
    def_.filename_tensor_name = filename.str();
    def_.save_tensor_name = ctrl.str();
    def_.restore_op_name = restore_all;
    def_.sharded = false;
    if (!mg_->saver) mg_->saver = def_;
}

}  // namespace graft::train
