// graft/formats/tf_graph/saved_model.hpp — SavedModel directories: variables with their checkpoint keys checked
// against the variables bundle, and writing a TF1-layout SavedModel TensorFlow can load.
//
//   auto mg = graft::tf::load_meta_graph("export_dir");                       // tags {"serve"}
//   graft::tf::checkpoint_reader ckpt("export_dir");                          // variables/variables
//   for (auto& v : graft::tf::find_variables(mg, ckpt))
//       graft::tensor value = ckpt.read(v.checkpoint_key);
//   graft::tf::write_saved_model("out_dir", mg, {{"w", w}, {"b", b}});        // saved_model.pb + variables/
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graft/core/file_set.hpp"
#include "graft/core/io.hpp"
#include "graft/graph/variables.hpp"
#include "graft/formats/tf/bundle_writer.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"

namespace graft::tf {

/// The checkpoint key under which a TF2 checkpoint stores its object graph.
inline constexpr const char* object_graph_key = "_CHECKPOINTABLE_OBJECT_GRAPH";

/// find_variables(mg), with TF2 keys taken from the checkpoint's own object graph (node ids match
/// the SavedObjectGraph's) instead of derived. Throws format_error for a corrupt object graph.
inline std::vector<variable_info> find_variables(const meta_graph& mg, const checkpoint_reader& ckpt) {
    auto vars = graft::find_variables(mg);
    if (!ckpt.contains(object_graph_key)) return vars;
    tensor og = ckpt.read(object_graph_key);
    if (og.type() != dtype::string || og.num_elements() != 1) {
        throw format_error(graft::detail::cat(object_graph_key, " is ", og.describe(), ", expected a scalar string"),
                           location::at_tensor(object_graph_key));
    }
    auto keys = variable_keys_from_object_graph(og.data<std::string>()[0]);
    for (auto& v : vars) {
        if (v.object_id >= 0 && static_cast<std::size_t>(v.object_id) < keys.size() &&
            !keys[static_cast<std::size_t>(v.object_id)].empty()) {
            v.checkpoint_key = keys[static_cast<std::size_t>(v.object_id)];
        }
    }
    return vars;
}

/// Writes a SavedModel in TF1 layout: `dir`/saved_model.pb holding `mg` (tags default to
/// {"serve"}) and, when `variables` is not empty, the bundle `dir`/variables/variables with those
/// tensors under their checkpoint keys (with none, variables/ is left as it is: callers that saved
/// it themselves, as the CLI's --saved-model does, write saved_model.pb last). The files replace an
/// existing SavedModel as one set (core/file_set.hpp: at every instant the old model or the new one
/// loads, whole). Throws io_error,
/// invalid_argument_error (bad tensor) and unimplemented_error (dtype with no checkpoint layout).
inline void write_saved_model(const std::string& dir, const meta_graph& mg,
                              const std::map<std::string, tensor>& variables = {}) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(fs::path(dir) / "variables", ec);
    if (ec) throw io_error(graft::detail::cat("cannot create directory: ", ec.message()), location::in_file(dir));
    // One file set: saving over an existing SavedModel leaves the old one or the new one, whole.
    file_set_writer set((fs::path(dir) / "saved_model").string());
    const std::string vprefix = (fs::path(dir) / "variables" / "variables").string();
    std::optional<bundle_writer> w;
    if (!variables.empty()) {
        w.emplace(vprefix);
        for (auto& [key, t] : variables) w->add(key, t);
        w->finish_into(set);
    }
    saved_model sm;
    sm.schema_version = 1;
    sm.meta_graphs.push_back(mg);
    if (sm.meta_graphs.back().info.tags.empty()) sm.meta_graphs.back().info.tags = {"serve"};
    set.add((fs::path(dir) / "saved_model.pb").string()).write(serialize_saved_model(sm));
    set.commit();
}

}  // namespace graft::tf
