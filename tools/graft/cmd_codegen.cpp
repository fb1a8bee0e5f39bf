// `graft codegen --embedded MODEL [--ckpt PREFIX] [--inputs name[@d0,d1,...]...] --outputs name...
// [--namespace NS] -o net.hpp` — a self-contained C++ header for embedded inference
// (graft::embedded::generate_embedded).
// `graft codegen MODEL [--signature S | --inputs [PORT=]TENSOR[@dims]... --outputs ...] [--scope NAME]
// -o model.hpp` — the typed declaration of the graph (graft::typed::declaration): a
// graft::typed::subgraph<> with its ports, variables and scope, to bind with graft::load<T>.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "graft/core.hpp"
#include "graft/core/io.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/typed/codegen.hpp"
#include "graft/embedded/exporter.hpp"

namespace graft_cmd_codegen {  // named, not anonymous: the CLI builds as one unity translation unit

struct codegen_args {
    std::string model, ckpt, out, ns, struct_name = "net", scope, signature, type_name;
    std::vector<std::string> tags;
    std::vector<std::string> inputs, outputs;
    bool embedded = false;
};

void run_embedded(const codegen_args& a) {
    graft::embedded::embedded_options o;
    for (auto& spec : a.inputs) o.inputs.push_back(graft::embedded::parse_embedded_input(spec));
    o.outputs = a.outputs;
    if (!a.ns.empty()) o.ns = a.ns;
    o.struct_name = a.struct_name;
    auto code = graft::embedded::generate_embedded_file(a.model, a.ckpt, o);
    graft::write_file_atomic(a.out, code.header);
    for (auto& p : code.inputs) std::cout << "input  " << p.param << ": " << p.tensor << " float" << graft::shape(p.shape).str() << "\n";
    for (auto& p : code.outputs) std::cout << "output " << p.param << ": " << p.tensor << " float" << graft::shape(p.shape).str() << "\n";
    std::cout << "ops: ";
    for (std::size_t i = 0; i < code.ops.size(); ++i) std::cout << (i ? ", " : "") << code.ops[i];
    std::cout << "\nweights: " << code.weight_floats << " floats (" << code.weight_floats * 4 << " bytes)\n"
              << "arena: " << code.arena_floats << " floats (" << code.arena_floats * 4 << " bytes; "
              << code.naive_floats << " floats without buffer reuse), " << code.steps << " kernel calls\n"
              << "wrote " << a.out << " (" << code.header.size() << " bytes): " << o.ns << "::" << o.struct_name
              << "::forward(...)\n";
}

/// "models/train_model.ckpt.meta" -> "train_model"; a SavedModel directory -> its name.
std::string default_scope(const std::string& model) {
    std::filesystem::path p(model);
    if (!p.has_filename()) p = p.parent_path();
    std::string s = p.filename().string();
    // A SavedModel's version directory ("export/00000123"): the export's name.
    if (!s.empty() && s.find_first_not_of("0123456789") == std::string::npos && p.has_parent_path()) {
        s = p.parent_path().filename().string();
    }
    for (const char* ext : {".meta", ".pbtxt", ".pb", ".ckpt"}) {
        if (s.size() > std::string_view(ext).size() && s.ends_with(ext)) s.resize(s.size() - std::string_view(ext).size());
    }
    return graft::typed::detail::identifier(s);
}

void run_declaration(const codegen_args& a) {
    graft::tf::load_options lo;
    lo.tags = a.tags;
    graft::meta_graph mg = graft::tf::load_meta_graph(a.model, lo);
    graft::typed::declaration_options o;
    o.scope = a.scope.empty() ? default_scope(a.model) : a.scope;
    o.type_name = a.type_name;
    o.cpp_namespace = a.ns;
    o.signature = a.signature;
    o.inputs = a.inputs;
    o.outputs = a.outputs;
    o.source = std::filesystem::path(a.model).filename().string();
    std::string h = graft::typed::declaration(mg, o);
    graft::write_file_atomic(a.out, h);
    std::cout << "wrote " << a.out << ": " << (a.ns.empty() ? "" : a.ns + "::")
              << (o.type_name.empty() ? graft::typed::detail::identifier(o.scope) : o.type_name) << " (scope \"" << o.scope
              << "\")\n";
}

void run_codegen(const codegen_args& a) {
    if (a.embedded) return run_embedded(a);
    run_declaration(a);
}

void add_codegen(CLI::App& app) {
    static codegen_args a;
    auto* cmd = app.add_subcommand("codegen", "C++ from a graph: its typed declaration (graft::typed::subgraph) or, with "
                                              "--embedded, a self-contained inference header");
    cmd->add_option("model", a.model, "Frozen GraphDef (.pb/.pbtxt), MetaGraph (.meta) or SavedModel directory")->required();
    cmd->add_flag("--embedded", a.embedded, "A self-contained header: weights as constant arrays, plain loops, no heap");
    cmd->add_option("--ckpt", a.ckpt, "Checkpoint with the variables' values (default: beside the model)");
    cmd->add_option("--inputs", a.inputs,
                    "Inputs: embedded name[@d0,d1,...] (-1 batch -> 1); declaration [PORT=]TENSOR[@d0,d1,...]; repeated");
    cmd->add_option("--outputs", a.outputs, "Output nodes or tensors (probs, probs:0; declaration: [PORT=]TENSOR[@dims]), repeated");
    cmd->add_option("--namespace", a.ns, "C++ namespace of the generated code (embedded default graft_embedded)");
    cmd->add_option("--scope", a.scope, "Declaration: the subgraph's scope (default: the model file's stem)");
    cmd->add_option("--signature", a.signature, "Declaration: take the ports from this signature (default serving_default)");
    cmd->add_option("--type-name", a.type_name, "Declaration: the C++ alias (default: the scope)");
    cmd->add_option("--tags", a.tags, "SavedModel MetaGraph tags (default serve)")->delimiter(',');
    cmd->add_option("--struct", a.struct_name, "The struct holding forward() (default net)");
    cmd->add_option("-o,--out", a.out, "The header to write")->required();
    cmd->callback([] { run_codegen(a); });
}

graft::cli::registrar reg(230, &add_codegen);

}  // namespace graft_cmd_codegen
