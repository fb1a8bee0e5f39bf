// graft/exec/model.hpp — load any TF model file and run it: graph files, MetaGraphs with their
// checkpoints, SavedModels (TF1 and TF2). Link graft::compiled.
//
//   auto m = graft::exec::load_model("saved_model_half_plus_two/00000123");   // + its variables
//   auto r = m.runner("serving_default");                                    // TF2: inlined signature
//   auto y = r.run({{"x", x}}, {"y"})[0];                                    // signature keys or tensor names
//
//   auto m2 = graft::exec::load_model("train_model.ckpt.meta");
//   auto r2 = m2.runner();  r2.restore("train_model.ckpt");                 // variables by checkpoint key
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graft/exec/session.hpp"
#include "graft/graph/inline.hpp"
#include "graft/graph/variables.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/formats/tf_graph/saved_model.hpp"

namespace graft::exec {

/// What restore_variables did.
struct restore_report {
    std::vector<std::string> restored;               ///< variable names set from the checkpoint
    std::vector<std::string> missing_in_checkpoint;  ///< variables whose key the checkpoint lacks
    std::vector<std::string> unused_in_checkpoint;   ///< checkpoint keys no variable asked for
};

/// Sets every variable of `vars` (found in the session's graph) from checkpoint `prefix` by its
/// checkpoint key. strict: a variable whose key is missing is an error listing all of them.
/// Throws io_error / format_error (checkpoint), not_found_error (strict), invalid_argument_error
/// (dtype or shape mismatch, naming the variable).
inline restore_report restore_variables(session& s, const std::vector<variable_info>& vars, const std::string& prefix,
                                        bool strict = true) {
    tf::checkpoint_reader reader(prefix);
    restore_report rep;
    std::unordered_set<std::string> used;
    for (const auto& v : vars) {
        if (v.checkpoint_key.empty()) continue;
        const node* n = s.g().find(v.node);
        if (!n) continue;  // not part of this (pruned / inlined) graph
        if (!reader.contains(v.checkpoint_key)) {
            rep.missing_in_checkpoint.push_back(v.name);
            continue;
        }
        tensor t = reader.read(v.checkpoint_key);
        used.insert(v.checkpoint_key);
        auto var = s.variables().get_or_create(variable_key(*n), v.dtype, v.shape);
        if (t.type() != v.dtype && v.dtype != dtype::invalid) {
            throw invalid_argument_error(detail::cat("checkpoint tensor '", v.checkpoint_key, "' is ", t.describe(),
                                                     " but variable '", v.name, "' is ", dtype_name(v.dtype)),
                                         location::at_tensor(v.name).with_tensor(v.checkpoint_key));
        }
        var->assign(t, v.shape.rank_known());
        rep.restored.push_back(v.name);
    }
    for (auto& k : reader.keys()) {
        if (!used.count(k) && k != tf::object_graph_key) rep.unused_in_checkpoint.push_back(k);
    }
    if (strict && !rep.missing_in_checkpoint.empty()) {
        std::string names;
        for (auto& m : rep.missing_in_checkpoint) names += (names.empty() ? "" : ", ") + m;
        throw not_found_error("checkpoint '" + prefix + "' lacks variables: " + names,
                              location::in_file(prefix), "restore with strict=false to skip them, or map names");
    }
    return rep;
}

/// A session over one runnable graph of a model, with the names a user speaks: signature keys map
/// to tensors, anything else is a tensor name.
class model_runner {
public:
    model_runner(graph g, std::vector<variable_info> vars, std::map<std::string, endpoint> inputs = {},
                 std::map<std::string, endpoint> outputs = {},
                 std::map<std::string, signature_def> signatures = {})
        : session_(std::make_unique<session>(std::move(g))), vars_(std::move(vars)),
          inputs_(std::move(inputs)), outputs_(std::move(outputs)), signatures_(std::move(signatures)) {}

    /// Restores the variables from `prefix` (see restore_variables).
    restore_report restore(const std::string& prefix, bool strict = true) {
        return restore_variables(*session_, vars_, prefix, strict);
    }
    /// Runs with feeds/fetches named by signature key or tensor name; targets are node names.
    std::vector<tensor> run(const session::feed_list& feeds, const std::vector<std::string>& fetches,
                            const std::vector<std::string>& targets = {}) {
        session::feed_list f;
        for (auto& [k, t] : feeds) f.emplace_back(resolve(inputs_, k), t);
        std::vector<std::string> out;
        for (auto& k : fetches) out.push_back(resolve(outputs_, k));
        return session_->run(f, out, targets);
    }
    /// Calls signature `key` of a whole-graph runner (TF1 SavedModels: every signature names tensors
    /// of the one graph, so all calls share this session's variables). Feeds and the returned map
    /// are keyed by the signature's input/output keys. Throws not_found_error for an unknown
    /// signature or input key (listing the known ones), and what run() throws.
    std::map<std::string, tensor> call(const std::string& key, const std::map<std::string, tensor>& feeds = {}) {
        auto it = signatures_.find(key);
        if (it == signatures_.end()) {
            std::string keys;
            for (auto& [k, v] : signatures_) keys += (keys.empty() ? "" : ", ") + k;
            throw not_found_error("no signature '" + key + "' in this runner", {},
                                  keys.empty() ? "this runner has no signatures: make it with model::runner(key)"
                                               : "signatures: " + keys);
        }
        const signature_def& sig = it->second;
        session::feed_list f;
        for (auto& [k, t] : feeds) {
            auto in = sig.inputs.find(k);
            if (in == sig.inputs.end()) {
                std::string keys;
                for (auto& [ik, iv] : sig.inputs) keys += (keys.empty() ? "" : ", ") + ik;
                throw not_found_error("signature '" + key + "' has no input '" + k + "'", location::at_tensor(k),
                                      keys.empty() ? "it takes no inputs" : "inputs: " + keys);
            }
            f.emplace_back(in->second.tensor().str(), t);
        }
        std::vector<std::string> names, keys;
        for (auto& [k, info] : sig.outputs) {
            keys.push_back(k);
            names.push_back(info.tensor().str());
        }
        auto out = session_->run(f, names);
        std::map<std::string, tensor> result;
        for (std::size_t i = 0; i < keys.size(); ++i) result.emplace(keys[i], std::move(out[i]));
        return result;
    }
    [[nodiscard]] const std::map<std::string, signature_def>& signatures() const { return signatures_; }
    [[nodiscard]] session& sess() { return *session_; }
    [[nodiscard]] const std::map<std::string, endpoint>& inputs() const { return inputs_; }
    [[nodiscard]] const std::map<std::string, endpoint>& outputs() const { return outputs_; }
    [[nodiscard]] const std::vector<variable_info>& variables() const { return vars_; }

private:
    static std::string resolve(const std::map<std::string, endpoint>& m, const std::string& k) {
        auto it = m.find(k);
        return it == m.end() ? k : it->second.str();
    }
    std::unique_ptr<session> session_;
    std::vector<variable_info> vars_;
    std::map<std::string, endpoint> inputs_, outputs_;
    std::map<std::string, signature_def> signatures_;
};

/// A model file loaded: its MetaGraph (a bare GraphDef becomes a MetaGraph with just the graph),
/// its variables, and where its own variables live (SavedModel).
struct model {
    std::string path;
    tf::file_format format = tf::file_format::unknown;
    meta_graph mg;
    std::vector<variable_info> variables;
    std::string variables_prefix;  ///< SavedModel "<dir>/variables/variables"; empty otherwise

    [[nodiscard]] bool is_saved_model() const { return !variables_prefix.empty(); }

    /// A runner for signature `key` (TF2 function calls inlined), or the whole graph when `key` is
    /// empty (then `call(signature)` runs any of the MetaGraph's signatures whose tensors are in
    /// the graph, all in one session). A SavedModel's variables are restored when it has any. Throws not_found_error for an
    /// unknown signature, and what loading/restoring throws.
    [[nodiscard]] model_runner runner(const std::string& key = {}) const {
        std::unique_ptr<model_runner> r;
        if (key.empty()) {
            graph g = mg.graph;
            inline_functions(g);
            r = std::make_unique<model_runner>(std::move(g), variables, std::map<std::string, endpoint>{},
                                               std::map<std::string, endpoint>{}, mg.signatures);
        } else {
            auto sig = signature_graph(mg, key, /*prune_graph=*/false);
            r = std::make_unique<model_runner>(std::move(sig.graph), variables, sig.inputs, sig.outputs);
        }
        if (is_saved_model() && has_variables()) r->restore(variables_prefix, false);
        return std::move(*r);
    }
    [[nodiscard]] bool has_variables() const {
        std::error_code ec;
        return std::filesystem::exists(variables_prefix + ".index", ec);
    }
};

/// Loads a .pb/.pbtxt/.meta file or a SavedModel directory (tags default to {"serve"}).
/// Throws io_error, format_error, graph_error, not_found_error naming the file.
inline model load_model(const std::string& path, const std::vector<std::string>& tags = {}) {
    model m;
    m.path = path;
    m.format = tf::detect_format(path);
    tf::load_options opts;
    opts.tags = tags;
    if (m.format == tf::file_format::saved_model || m.format == tf::file_format::saved_model_text) {
        auto sm = tf::load_saved_model(path, opts);
        m.mg = tf::select_meta_graph(sm, tags);
        m.variables_prefix = sm.variables_prefix();
        if (m.has_variables()) {
            tf::checkpoint_reader ckpt(m.variables_prefix);
            m.variables = tf::find_variables(m.mg, ckpt);
        } else {
            m.variables = find_variables(m.mg);
        }
    } else {
        m.mg = tf::load_meta_graph(path, opts);
        m.variables = find_variables(m.mg);
    }
    return m;
}

}  // namespace graft::exec
