// `--saved-model` for the subcommands that write a model (connect, clone, unfreeze): OUT as a TF1
// SavedModel directory instead of OUT.meta + OUT checkpoint.
#pragma once

#include <filesystem>
#include <string>
#include <system_error>

#include "graft/graph/meta_graph.hpp"
#include "graft/formats/tf_graph/saved_model.hpp"

namespace graft::cli {

/// The checkpoint prefix of SavedModel `dir` ("dir/variables/variables"), its folder made.
inline std::string saved_model_prefix(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(fs::path(dir) / "variables", ec);
    if (ec) throw graft::io_error("cannot create directory: " + ec.message(), graft::location::in_file(dir));
    return (fs::path(dir) / "variables" / "variables").string();
}

/// Completes SavedModel `dir` after a saver wrote its checkpoint at saved_model_prefix(dir):
/// removes what a saver writes beside the bundle and a SavedModel does not hold ("<prefix>.meta",
/// the "checkpoint" state file) and writes dir/saved_model.pb with `mg` (the graph holding the
/// saver's ops; tagged "serve" when it has no tags).
inline void finish_saved_model(const std::string& dir, graft::meta_graph& mg) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::remove(saved_model_prefix(dir) + ".meta", ec);
    fs::remove(fs::path(dir) / "variables" / "checkpoint", ec);
    if (mg.info.tags.empty()) mg.info.tags = {"serve"};
    graft::tf::write_saved_model(dir, mg);
}

}  // namespace graft::cli
