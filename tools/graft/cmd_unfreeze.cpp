// `graft unfreeze frozen.pb [--select REGEX] [--name N] [--resource] [--saved-model] -o OUT` —
// chosen Consts back to trainable variables: OUT.meta + checkpoint OUT holding their values, or the
// SavedModel directory OUT (graft::surgery::unfreeze).
#include <iostream>

#include "commands.hpp"
#include "saved_model_out.hpp"
#include "graft/core.hpp"
#include "graft/surgery/freeze.hpp"

namespace graft_cmd_unfreeze {  // named, not anonymous: the CLI builds as one unity translation unit

struct unfreeze_args {
    std::string model, out;
    graft::surgery::unfreeze_options o;
    bool saved_model = false;
};

void run_unfreeze(const unfreeze_args& a) {
    graft::graph g = graft::tf::load_graph(a.model);
    auto u = graft::surgery::unfreeze(g, a.o);
    if (a.saved_model) {
        // the values under their checkpoint keys (= the variables' names), as save_unfrozen writes them
        if (u.mg.info.tags.empty()) u.mg.info.tags = {"serve"};
        graft::tf::write_saved_model(a.out, u.mg, u.values);
    } else {
        graft::surgery::save_unfrozen(u, a.out);
    }
    std::cout << "made " << u.variables.size() << (a.o.resource ? " resource" : " ref") << " variables:\n";
    for (auto& v : u.variables) {
        const auto& t = u.values.at(v);
        std::cout << "    " << v << "  " << graft::dtype_name(t.type()) << t.shape().str() << "\n";
    }
    if (a.saved_model) std::cout << "init op: " << u.init << "\nwrote SavedModel " << a.out << " (graft run " << a.out << ")\n";
    else std::cout << "init op: " << u.init << "\nwrote " << a.out << ".meta and checkpoint " << a.out
                   << " (graft run " << a.out << ".meta --ckpt " << a.out << ")\n";
}

void add_unfreeze(CLI::App& app) {
    static unfreeze_args a;
    auto* cmd = app.add_subcommand("unfreeze", "Turn a frozen graph's weight Consts into trainable variables");
    cmd->add_option("graph", a.model, "Frozen GraphDef (.pb/.pbtxt)")->required();
    cmd->add_option("--select", a.o.select, "Consts whose name matches this regex (default: float weight Consts)");
    cmd->add_option("--name", a.o.names, "A Const to turn into a variable (repeatable)");
    cmd->add_option("--min-elements", a.o.min_elements, "Default selection: at least this many elements")->capture_default_str();
    cmd->add_flag("--resource", a.o.resource, "Resource variables (VarHandleOp) instead of ref VariableV2");
    cmd->add_option("-o,--out", a.out, "Output prefix: writes OUT.meta and the checkpoint OUT.index/.data-*; a directory with --saved-model")
        ->required();
    cmd->add_flag("--saved-model", a.saved_model, "Write a SavedModel directory instead");
    cmd->callback([] { run_unfreeze(a); });
}

graft::cli::registrar reg(77, &add_unfreeze);

}  // namespace
