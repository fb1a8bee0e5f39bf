// `graft codegen --embedded MODEL [--ckpt PREFIX] [--inputs name[:d0,d1,...]...] --outputs name...
// [--namespace NS] -o net.hpp` — a self-contained C++ header for embedded inference
// (graft::typed::generate_embedded). Without --embedded: the typed declaration of a graph (not
// built yet).
#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "graft/core.hpp"
#include "graft/core/io.hpp"
#include "graft/typed/embedded.hpp"

namespace graft_cmd_codegen {  // named, not anonymous: the CLI builds as one unity translation unit

struct codegen_args {
    std::string model, ckpt, out, ns, struct_name = "net";
    std::vector<std::string> inputs, outputs;
    bool embedded = false;
};

void run_embedded(const codegen_args& a) {
    graft::typed::embedded_options o;
    for (auto& spec : a.inputs) o.inputs.push_back(graft::typed::parse_embedded_input(spec));
    o.outputs = a.outputs;
    if (!a.ns.empty()) o.ns = a.ns;
    o.struct_name = a.struct_name;
    auto code = graft::typed::generate_embedded_file(a.model, a.ckpt, o);
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

void run_codegen(const codegen_args& a) {
    if (a.embedded) return run_embedded(a);
    // The typed declaration (ports, variables, scopes) goes here.
    throw graft::unimplemented_error("codegen without --embedded: not built yet", graft::location::in_file(a.model),
                                     "use --embedded for a self-contained inference header");
}

void add_codegen(CLI::App& app) {
    static codegen_args a;
    auto* cmd = app.add_subcommand("codegen", "C++ from a graph: --embedded writes a self-contained inference header");
    cmd->add_option("model", a.model, "Frozen GraphDef (.pb/.pbtxt), MetaGraph (.meta) or SavedModel directory")->required();
    cmd->add_flag("--embedded", a.embedded, "A self-contained header: weights as constant arrays, plain loops, no heap");
    cmd->add_option("--ckpt", a.ckpt, "Checkpoint with the variables' values (default: beside the model)");
    cmd->add_option("--inputs", a.inputs, "Inputs with their shapes: name[:d0,d1,...] (-1 batch -> 1), repeated");
    cmd->add_option("--outputs", a.outputs, "Output nodes or tensors (probs, probs:0), comma-separated or repeated");
    cmd->add_option("--namespace", a.ns, "C++ namespace of the generated code (default graft_embedded)");
    cmd->add_option("--struct", a.struct_name, "The struct holding forward() (default net)");
    cmd->add_option("-o,--out", a.out, "The header to write")->required();
    cmd->callback([] { run_codegen(a); });
}

graft::cli::registrar reg(230, &add_codegen);

}  // namespace graft_cmd_codegen
