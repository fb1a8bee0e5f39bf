// graft/surgery/connect.hpp — connect pre-trained models: each MetaGraph is imported under its
// label ("A/...", "B/..."), seams bind an input of a later model to an output of an earlier one,
// and each part keeps what it needs to be restored from its own checkpoint. Fine-tune the whole
// (gradients flow across the seams), or freeze the earlier parts (train only a part's variables,
// or cut gradients at the seams), then save one combined MetaGraph + checkpoint. Link graft::compiled.
//
//   auto c = graft::surgery::connect({{"A", enc_mg, "enc.ckpt"}, {"B", cls_mg, "cls.ckpt"}},
//                                    {{"B/g2_input:0", "A/g1_output:0"}});
//   graft::exec::session s(c.mg.graph);
//   graft::surgery::restore_parts(s, c);                       // A from enc.ckpt, B from cls.ckpt
//   auto y = s.run({{"A/x:0", x}}, {"B/logits:0"});
//   // joint fine-tuning: opt.minimize(c.mg, loss);  frozen A: opt.minimize(c.mg, loss, c.trainable("B"))
//   graft::surgery::save_combined(s, c, "out/combined");     // out/combined.meta + .index/.data
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "graft/graph/meta_graph.hpp"
#include "graft/surgery/import.hpp"
#include "graft/surgery/restore.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/saver.hpp"

namespace graft::surgery {

/// One model to connect: its label (the scope it is imported under), its MetaGraph and
/// optionally the checkpoint prefix its variables come from.
struct model_part {
    std::string label;
    meta_graph mg;
    std::string checkpoint;
};

struct connect_options {
    bool clear_devices = false;
    /// Put a StopGradient on every seam (the earlier parts are frozen for any optimizer).
    bool stop_gradient_at_seams = false;
    /// Check dtypes and static shapes at the seams.
    bool check_seams = true;
};

/// One part of a connected graph.
struct connected_part {
    std::string label;
    std::string checkpoint;  ///< "" when none was given
    import_result imported;
};

/// The combined MetaGraph and how to restore each part.
struct connected {
    meta_graph mg;
    std::vector<connected_part> parts;

    /// The part labelled `label`. Throws not_found_error listing the labels.
    [[nodiscard]] const connected_part& part(std::string_view label) const {
        std::string have;
        for (auto& p : parts) {
            if (p.label == label) return p;
            have += (have.empty() ? "" : ", ") + p.label;
        }
        throw not_found_error("no part labelled '" + std::string(label) + "'", {}, "parts: " + have);
    }
    /// The trainable variables of the parts `labels`: train only these to freeze the others.
    /// Throws not_found_error for an unknown label.
    [[nodiscard]] train::var_list trainable(const std::vector<std::string>& labels) const {
        std::vector<std::string> names;
        for (auto& l : labels) {
            auto& p = part(l);
            names.insert(names.end(), p.imported.trainable_variables.begin(), p.imported.trainable_variables.end());
        }
        return train::var_list::names(std::move(names));
    }
    [[nodiscard]] train::var_list trainable(const std::string& label) const { return trainable(std::vector<std::string>{label}); }
};

namespace detail {
inline std::string label_of(const std::vector<model_part>& parts, const std::string& tensor) {
    std::string best;
    for (auto& p : parts) {
        if (tensor.size() > p.label.size() + 1 && tensor.compare(0, p.label.size(), p.label) == 0 &&
            tensor[p.label.size()] == '/' && p.label.size() > best.size())
            best = p.label;
    }
    return best;
}
}  // namespace detail

/// Imports `parts` in order, each under its label, binding each seam "<label>/<src tensor>" ->
/// tensor of an earlier part (or of the combined graph so far). A seam's input Placeholder is
/// removed. Throws invalid_argument_error (duplicate or empty label, a seam key that names no
/// part, a seam value in a later part, and everything import_meta_graph throws: tensors missing,
/// dtype/shape mismatches at the seams, naming the tensors), graph_error.
inline connected connect(std::vector<model_part> parts, const std::map<std::string, std::string>& seams,
                         const connect_options& o = {}) {
    connected c;
    std::map<std::string, std::size_t> order;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (parts[i].label.empty() || parts[i].label.find(':') != std::string::npos) {
            throw invalid_argument_error("connect: part " + std::to_string(i) + " has no usable label", {},
                                         "label each model, e.g. {\"A\", mg, ckpt}");
        }
        if (!order.emplace(parts[i].label, i).second) {
            throw invalid_argument_error("connect: two parts are labelled '" + parts[i].label + "'", location::at_node(parts[i].label),
                                         "give each model its own label (scope)");
        }
    }
    std::vector<std::map<std::string, std::string>> maps(parts.size());
    for (auto& [k, v] : seams) {
        bool ctrl = !k.empty() && k.front() == '^';
        std::string kk = ctrl ? k.substr(1) : k;
        std::string lk = detail::label_of(parts, kk);
        if (lk.empty()) {
            throw invalid_argument_error("connect: seam '" + k + "' names no part (write '<label>/<tensor>')", location::at_tensor(k),
                                         "the labels are the parts' labels, e.g. 'B/g2_input:0'");
        }
        std::string vv = !v.empty() && v.front() == '^' ? v.substr(1) : v;
        std::string lv = detail::label_of(parts, vv);
        if (!lv.empty() && order[lv] >= order[lk]) {
            throw invalid_argument_error("connect: seam '" + k + "' <- '" + v + "' reads part '" + lv + "', which is not before part '" + lk + "'",
                                         location::at_tensor(v), "list the part that produces a tensor before the parts that read it");
        }
        maps[order[lk]][(ctrl ? "^" : "") + kk.substr(lk.size() + 1)] = v;
    }
    for (std::size_t i = 0; i < parts.size(); ++i) {
        import_options io;
        io.scope = parts[i].label;
        io.clear_devices = o.clear_devices;
        io.check_seams = o.check_seams;
        if (o.stop_gradient_at_seams) {
            graph_builder b(c.mg.graph);
            for (auto& [k, v] : maps[i]) {
                if (k.front() == '^') continue;
                endpoint src = endpoint::parse(v);
                if (!c.mg.graph.contains(src.node)) continue;  // import_meta_graph reports it
                v = b.op("StopGradient", {src}, {}, parts[i].label + "_seam/" + endpoint::parse(k).node).str();
            }
        }
        io.input_map = maps[i];
        connected_part p;
        p.label = parts[i].label;
        p.checkpoint = parts[i].checkpoint;
        p.imported = import_meta_graph(c.mg, parts[i].mg, io);
        c.parts.push_back(std::move(p));
    }
    // one "init" for the whole graph: the parts' own init ops
    std::vector<std::string> inits;
    for (auto& p : c.parts) {
        if (!p.imported.init_op.empty()) inits.push_back(p.imported.init_op);
    }
    if (!inits.empty() && !c.mg.graph.contains("init")) graph_builder(c.mg.graph).group(inits, "init");
    return c;
}

/// Loads a model for connect(): a .meta file or a SavedModel directory (whose checkpoint is
/// "<dir>/variables/variables" unless `checkpoint` is given). Throws like tf::load_meta_graph.
inline model_part load_part(std::string label, const std::string& model_path, std::string checkpoint = {}) {
    model_part p{std::move(label), tf::load_meta_graph(model_path), std::move(checkpoint)};
    std::error_code ec;
    if (p.checkpoint.empty() && std::filesystem::is_directory(model_path, ec)) p.checkpoint = tf::checkpoint_beside(model_path);
    return p;
}

/// Restores each part that has a checkpoint from it ({"": "<label>/"}). Parts without one are
/// left alone (run their init op). Throws like restore_scoped.
inline std::vector<scoped_restore_report> restore_parts(exec::session& s, const connected& c,
                                                        train::restore_mode mode = train::restore_mode::strict) {
    std::vector<scoped_restore_report> out;
    for (auto& p : c.parts) {
        if (p.checkpoint.empty() || p.imported.variables.empty()) continue;
        out.push_back(restore_scoped(s, p.imported.variables, p.checkpoint, into_scope(p.label), mode));
    }
    return out;
}

/// Removes the parts' own save/restore ops (imported from their MetaGraphs; they read the parts'
/// separate checkpoints), so that the combined graph has one Saver and loaders that find
/// checkpoint keys through the save ops see only it. Returns how many nodes went. Never throws
/// (except bad_alloc).
inline std::size_t drop_part_savers(connected& c) {
    std::vector<std::string> prefixes;
    for (auto& p : c.parts) {
        if (!p.imported.saver) continue;
        const std::string& r = p.imported.saver->restore_op_name;
        auto slash = r.rfind('/');
        if (slash == std::string::npos || r.compare(0, p.label.size() + 1, p.label + "/") != 0) continue;
        prefixes.push_back(r.substr(0, slash + 1));  // "A/save/"
        p.imported.saver.reset();
    }
    if (prefixes.empty()) return 0;
    return c.mg.graph.remove_if([&](const node& n) {
        for (auto& pre : prefixes) {
            if (n.name.compare(0, pre.size(), pre) == 0) return true;
        }
        return false;
    });
}

/// Saves every global variable of `c.mg` (keys = the scoped names, as TF would name them) to
/// `prefix` with a Saver, which also writes "<prefix>.meta" with standard save/ ops (added to
/// c.mg the first time, after drop_part_savers: the combined MetaGraph has one Saver). Returns
/// the prefix. Throws like train::saver.
inline std::string save_combined(exec::session& s, connected& c, const std::string& prefix) {
    train::saver_options so;
    so.max_to_keep = 0;
    bool have_ops = c.mg.graph.contains("save/restore_all") && c.mg.saver && c.mg.saver->restore_op_name == "save/restore_all";
    if (!have_ops) drop_part_savers(c);
    so.build_ops = !have_ops;
    train::saver sv(c.mg, so);
    return sv.save(s, prefix);
}

}  // namespace graft::surgery
