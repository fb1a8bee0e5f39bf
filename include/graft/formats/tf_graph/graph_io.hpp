// graft/formats/tf_graph/graph_io.hpp — read and write TensorFlow graph files: binary .pb and text .pbtxt
// GraphDefs, .meta MetaGraphDefs (binary or text), SavedModel directories. Link graft::compiled.
//
//   graft::graph g = graft::tf::load_graph("frozen.pb");                 // any graph file
//   graft::meta_graph mg = graft::tf::load_meta_graph("model.ckpt.meta"); // + collections, saver, ...
//   graft::meta_graph sm = graft::tf::load_meta_graph("export_dir");      // SavedModel, tags {"serve"}
//   graft::tf::write_graph(g, "out.pbtxt");                              // text by extension
//
// The binary codec is graft's own (no protobuf objects, no 2 GiB limit, byte offsets in errors);
// text format goes through protobuf's TextFormat with graft's wire-compatible messages.
// Conversion is lossless: fields graft does not model travel as raw bytes (`extra_fields`).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "graft/graph/meta_graph.hpp"

namespace graft::tf {

enum class file_format {
    unknown,
    graph_def,        ///< binary GraphDef (.pb)
    graph_def_text,   ///< text GraphDef (.pbtxt)
    meta_graph,       ///< binary MetaGraphDef (.meta)
    meta_graph_text,  ///< text MetaGraphDef
    saved_model,      ///< SavedModel directory (saved_model.pb) or the saved_model.pb file
    saved_model_text, ///< SavedModel directory with saved_model.pbtxt
    checkpoint,       ///< a checkpoint prefix (<prefix>.index exists) or a V1 checkpoint file
};

/// "GraphDef (binary)", "MetaGraphDef (text)", "SavedModel", ... Never throws.
std::string format_name(file_format f);

/// What `path` holds, by extension and content (a binary .pb that is really a MetaGraphDef is
/// reported as one). Throws io_error when the path cannot be read and format_error when it is not
/// a graph file graft knows.
file_format detect_format(const std::string& path);

struct load_options {
    /// SavedModel: the MetaGraph whose tag set equals these. Empty: {"serve"}, or the only
    /// MetaGraph when there is exactly one.
    std::vector<std::string> tags;
    /// Check every input names an existing node, output indices, attr kinds against op defs,
    /// and that the graph has no cycle.
    bool validate = true;
};

/// The graph of any graph file or SavedModel. Throws io_error, format_error (with file and byte
/// offset), graph_error (naming the file and node) and not_found_error (SavedModel tags).
graft::graph load_graph(const std::string& path, const load_options& opts = {});
/// A MetaGraph from any graph file (a plain GraphDef gives a MetaGraph with just the graph).
/// Throws like load_graph.
graft::meta_graph load_meta_graph(const std::string& path, const load_options& opts = {});
/// Every MetaGraph of a SavedModel directory (or of its saved_model.pb / .pbtxt). Throws like
/// load_graph.
graft::saved_model load_saved_model(const std::string& path, const load_options& opts = {});
/// Picks the MetaGraph for `tags` (empty: the default rule of load_options::tags). Throws
/// not_found_error listing the tag sets there are.
graft::meta_graph& select_meta_graph(graft::saved_model& sm, const std::vector<std::string>& tags = {});

/// In-memory codec. `file` only names the source in errors. Throw format_error / graph_error.
graft::graph parse_graph_def(std::string_view bytes, const std::string& file = {}, bool validate = true);
graft::meta_graph parse_meta_graph_def(std::string_view bytes, const std::string& file = {}, bool validate = true);
graft::saved_model parse_saved_model(std::string_view bytes, const std::string& file = {}, bool validate = true);
/// Serialized bytes. Throw unimplemented_error only for a tensor attr graft cannot encode.
std::string serialize_graph_def(const graft::graph& g);
std::string serialize_meta_graph_def(const graft::meta_graph& mg);
std::string serialize_saved_model(const graft::saved_model& sm);

/// Protobuf text format of a binary message of `kind` (graph_def, meta_graph or saved_model), and
/// back. Throw format_error naming the line and column of a text parse error.
std::string to_text(std::string_view binary, file_format kind);
std::string from_text(std::string_view text, file_format kind, const std::string& file = {});

/// Writes a GraphDef atomically: text for .pbtxt/.txt (or `fmt` graph_def_text), else binary.
/// Throws io_error.
void write_graph(const graft::graph& g, const std::string& path, file_format fmt = file_format::unknown);
/// Writes a MetaGraphDef atomically: text for .pbtxt/.txt (or meta_graph_text), else binary.
/// Throws io_error.
void write_meta_graph(const graft::meta_graph& mg, const std::string& path, file_format fmt = file_format::unknown);
/// Rewrites a graph file in another format: the output kind follows the input's message type and
/// the output extension (.pb/.meta binary, .pbtxt text). Throws like load_graph and io_error.
void convert(const std::string& in, const std::string& out);

/// VariableDef bytes <-> variable_def (for the "variables" collection items). Throw format_error.
graft::variable_def decode_variable_def(std::string_view bytes);
std::string encode_variable_def(const graft::variable_def& v);

/// Key -> object id -> checkpoint key of a TF2 checkpoint's object graph (the scalar string stored
/// under _CHECKPOINTABLE_OBJECT_GRAPH): for every object id, its VARIABLE_VALUE key ("" if none).
/// Throws format_error.
std::vector<std::string> variable_keys_from_object_graph(std::string_view trackable_object_graph);

}  // namespace graft::tf
