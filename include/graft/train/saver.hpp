// graft/train/saver.hpp — tf.compat.v1.train.Saver: save and restore a var_list of a session's
// variables as V2 checkpoints, with max_to_keep, keep_checkpoint_every_n_hours, the `checkpoint`
// state file, "-<step>" suffixes and a .meta beside each bundle. Link graft::tf.
//
//   graft::train::saver sv(mg);                       // adds save/... ops to mg.graph, sets mg.saver
//   graft::exec::session s(mg.graph);                 // (the session copies the graph: make it after)
//   s.run({}, {}, {"init"});
//   std::string p = sv.save(s, "run/model.ckpt", 1000);   // "run/model.ckpt-1000" (+ .index/.data/.meta)
//   sv.restore(s, "run");                             // the latest checkpoint of run/checkpoint
//   auto rep = sv.restore(s, p, graft::train::restore_mode::lenient);   // missing/unused reported
//
// As in TF, make the saver after the optimizer: it saves the variables that exist when it is made
// (slots and beta powers included). The graph gets TF1's own save/restore ops (save/Const, save/SaveV2, save/control_dependency,
// save/RestoreV2[_k], save/Assign[_k], save/restore_all), so TensorFlow can restore from the .meta.
// graft's save() and restore() work on the session's variable store directly, which also serves
// sessions made before the saver.
//
// Crash safety: a bundle's files are written under temporary names and renamed into place, the
// .meta atomically, and the `checkpoint` file (rewritten atomically) names a prefix only after its
// files are complete; old bundles are deleted only after that. A process killed while saving
// leaves the previous checkpoint and the state file intact. (Saving again to the same prefix
// without a step replaces two files by two renames; a kill exactly between them leaves that prefix
// unreadable, so train with a global step, as TF does.)
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "graft/exec/session.hpp"
#include "graft/exec/variable_store.hpp"
#include "graft/graph/variables.hpp"
#include "graft/tf/bundle_writer.hpp"
#include "graft/tf/checkpoint.hpp"
#include "graft/tf/checkpoint_state.hpp"
#include "graft/tf/graph_io.hpp"
#include "graft/train/variables.hpp"

namespace graft::train {

/// Saving variables whose names start with `variable_prefix` under keys starting with
/// `key_prefix` instead ({"new/", "old/"}: variable "new/w" <-> key "old/w").
struct prefix_rename {
    std::string variable_prefix;
    std::string key_prefix;
};

struct saver_options {
    /// Variable names to save (VariableV2/VarHandleOp nodes). Empty: every global variable (the
    /// "variables" collection, or every variable op when the graph has no such collection).
    std::vector<std::string> var_list;
    /// Only variables whose names start with this.
    std::string scope;
    /// Checkpoint key -> variable name (TF's dict var_list). When given, exactly these are saved.
    std::map<std::string, std::string> name_map;
    /// Key renames by prefix, first match wins (applied to var_list/scope selections).
    std::vector<prefix_rename> renames;
    /// Checkpoints kept by this saver; the oldest beyond it are deleted. <= 0 keeps all.
    int max_to_keep = 5;
    /// A checkpoint due for deletion is kept when it was saved this many hours after the last
    /// one kept this way (TF's rule).
    double keep_checkpoint_every_n_hours = 10000.0;
    /// Write "<prefix>.meta" on save().
    bool write_meta_graph = true;
    /// Name of the state file in the checkpoint directory.
    std::string latest_filename = "checkpoint";
    /// Scope of the save/restore ops ("save", then "save_1", ...).
    std::string name = "save";
    /// Add TF's save/restore ops to the graph (and set mg.saver when it has none).
    bool build_ops = true;
};

/// One variable as the saver sees it.
struct saveable {
    std::string key;       ///< checkpoint key
    std::string variable;  ///< variable node name
    dtype type = dtype::invalid;
    graft::shape shape = graft::shape::unknown_rank();
};

enum class restore_mode {
    strict,   ///< a var_list variable missing from the checkpoint (or of another dtype/shape) is an error
    exact,    ///< as strict, and checkpoint keys no variable uses are an error too
    lenient,  ///< restore what matches, report the rest
};

/// What restore() did.
struct restore_report {
    std::string prefix;                   ///< the checkpoint read
    std::vector<std::string> restored;    ///< variable names set
    std::vector<std::string> missing;     ///< "variable (key 'k')" for keys the checkpoint lacks
    std::vector<std::string> unused;      ///< checkpoint keys no variable asked for
    std::vector<std::string> mismatched;  ///< "variable: why" for dtype/shape disagreements
    [[nodiscard]] bool complete() const { return missing.empty() && mismatched.empty(); }
};

namespace detail {

inline std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
    std::string r;
    for (auto& s : v) r += (r.empty() ? "" : sep) + s;
    return r;
}

/// Sets the session variable of node `var` to `t` (created in the store if needed). Throws
/// not_found_error (no such node), invalid_argument_error (dtype/shape).
inline void assign_variable(exec::session& s, const std::string& var, const tensor& t) {
    const node* n = s.g().find(var);
    if (!n) {
        throw not_found_error("variable '" + var + "' is not in the session's graph", location::at_node(var),
                              "make the session after building the graph");
    }
    auto [type, shp] = variable_type(s.g(), var);
    auto v = s.variables().get_or_create(exec::variable_key(*n), type, shp);
    v->assign(t, shp.rank_known());
}

/// Why `t` cannot go into a variable of `type`/`shp`, or "" when it can.
inline std::string mismatch(const tensor& t, dtype type, const graft::shape& shp) {
    if (type != dtype::invalid && t.type() != type) {
        return graft::detail::cat("checkpoint has ", t.describe(), ", variable is ", dtype_name(type));
    }
    if (!shp.compatible_with(t.shape())) {
        return graft::detail::cat("checkpoint has shape ", t.shape().str(), ", variable is ", shp.str());
    }
    return {};
}

/// Removes "<p>.index", "<p>.data-*" and "<p>.meta". Best effort; never throws.
inline void remove_checkpoint_files(const std::string& p) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::remove(p + ".index", ec);
    fs::remove(p + ".meta", ec);
    fs::path dir = fs::path(p).parent_path();
    std::string base = fs::path(p).filename().string() + ".data-";
    for (auto it = fs::directory_iterator(dir.empty() ? "." : dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        std::string f = it->path().filename().string();
        if (f.compare(0, base.size(), base) == 0) fs::remove(it->path(), ec);
    }
}

inline double now_seconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace detail

class saver {
public:
    /// A saver over `mg`'s variables chosen by `o` (adds the save/restore ops when o.build_ops).
    /// Keeps a pointer to `mg` for writing .meta files: `mg` must outlive the saver. Throws
    /// not_found_error naming a var_list variable that is not in the graph, invalid_argument_error
    /// when two variables map to one key or nothing is to be saved, graph_error from building.
    explicit saver(meta_graph& mg, saver_options o = {}) : mg_(&mg), opt_(std::move(o)) {
        select();
        next_keep_time_ = detail::now_seconds() + opt_.keep_checkpoint_every_n_hours * 3600.0;
        def_.max_to_keep = opt_.max_to_keep;
        def_.keep_checkpoint_every_n_hours = static_cast<float>(opt_.keep_checkpoint_every_n_hours);
        def_.version = 2;
        if (opt_.build_ops) build_ops();
    }

    /// The variables saved, sorted by checkpoint key.
    [[nodiscard]] const std::vector<saveable>& saveables() const { return items_; }
    /// The SaverDef (empty tensor names when no ops were built).
    [[nodiscard]] const saver_def& def() const { return def_; }
    /// Kept checkpoint prefixes, oldest first (TF's last_checkpoints).
    [[nodiscard]] std::vector<std::string> last_checkpoints() const {
        std::vector<std::string> r;
        for (auto& [p, t] : last_) r.push_back(p);
        return r;
    }
    /// Adopts prefixes saved earlier (e.g. by another process) as kept checkpoints, oldest first,
    /// so max_to_keep counts and deletes them too (TF's recover_last_checkpoints). Never throws.
    void recover_last_checkpoints(const std::vector<std::string>& prefixes) {
        for (auto& p : prefixes) last_.emplace_back(p, detail::now_seconds());
    }

    /// Saves the variables' current values to `save_path` ("-<global_step>" appended when given)
    /// and returns that prefix. Writes "<prefix>.meta" (write_meta_graph), updates the state file
    /// in the prefix's directory and deletes checkpoints beyond max_to_keep. Throws
    /// graph_error (a variable is uninitialized: run init first), not_found_error, io_error.
    std::string save(exec::session& s, const std::string& save_path, std::optional<std::int64_t> global_step = std::nullopt) {
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

    /// save() with the step read from the global-step variable in the session. Throws like save().
    std::string save(exec::session& s, const std::string& save_path, const variable& global_step) {
        const node* n = s.g().find(global_step.name);
        if (!n) throw not_found_error("global step '" + global_step.name + "' is not in the session's graph", location::at_node(global_step.name));
        tensor t = exec::to_host(s.variables().at(exec::variable_key(*n))->read());
        return save(s, save_path, static_cast<std::int64_t>(graft::cast(t, dtype::int64).data<std::int64_t>()[0]));
    }

    /// Restores the variables from `save_path`: a prefix, or a directory whose state file names the
    /// latest checkpoint. strict/exact: nothing is assigned when a check fails, and the error lists
    /// the missing variables (with their keys), mismatches and the unused checkpoint keys.
    /// Throws io_error / format_error (reading), not_found_error (strict/exact),
    /// invalid_argument_error (dtype/shape mismatch in strict/exact).
    restore_report restore(exec::session& s, const std::string& save_path, restore_mode mode = restore_mode::strict) const {
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

private:
    void select() {
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

    void build_ops() {
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

    void record(const std::string& prefix) {
        if (opt_.max_to_keep <= 0) return;
        for (auto it = last_.begin(); it != last_.end();) {
            it = it->first == prefix ? last_.erase(it) : it + 1;
        }
        last_.emplace_back(prefix, detail::now_seconds());
        while (static_cast<int>(last_.size()) > opt_.max_to_keep) {
            to_delete_.push_back(last_.front());
            last_.erase(last_.begin());
        }
    }

    void delete_old() {
        while (!to_delete_.empty()) {
            auto [p, t] = to_delete_.front();
            to_delete_.erase(to_delete_.begin());
            if (t > next_keep_time_) {  // kept for keep_checkpoint_every_n_hours
                next_keep_time_ += opt_.keep_checkpoint_every_n_hours * 3600.0;
                continue;
            }
            detail::remove_checkpoint_files(p);
        }
    }

    meta_graph* mg_;
    saver_options opt_;
    saver_def def_;
    std::vector<saveable> items_;
    std::vector<std::pair<std::string, double>> last_;
    std::vector<std::pair<std::string, double>> to_delete_;
    double next_keep_time_ = 0;
};

/// tf.compat.v1.train.latest_checkpoint: the prefix `<dir>/<latest_filename>` names, if its
/// files exist. Never throws (except bad_alloc).
inline std::optional<std::string> latest_checkpoint(const std::string& dir, const std::string& latest_filename = "checkpoint") {
    return tf::latest_checkpoint(dir, latest_filename);
}

}  // namespace graft::train

#include "graft/train/detail/init_from_checkpoint.hpp"
