// graft/train/saver.hpp — tf.compat.v1.train.Saver: save and restore a var_list of a session's
// variables as V2 checkpoints, with max_to_keep, keep_checkpoint_every_n_hours, the `checkpoint`
// state file, "-<step>" suffixes and a .meta beside each bundle. Link graft::compiled.
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
#include "graft/formats/tf/bundle_writer.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf/checkpoint_state.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
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
    std::string save(exec::session& s, const std::string& save_path, std::optional<std::int64_t> global_step = std::nullopt);

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
    restore_report restore(exec::session& s, const std::string& save_path, restore_mode mode = restore_mode::strict) const;

private:
    void select();

    void build_ops();

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

// saver's save(), restore() and graph building are a compiled part (core/config.hpp):
// src/compiled/saver.cpp with graft::compiled.
#if !defined(GRAFT_SEPARATE_COMPILATION) || defined(GRAFT_COMPILING_SAVER)
#include "graft/train/detail/saver_impl.hpp"
#endif

#include "graft/train/detail/init_from_checkpoint.hpp"
