// `graft freeze MODEL --ckpt PREFIX --outputs probs[,...] -o frozen.pb` — variables to Consts,
// pruned to the outputs (graft::surgery::freeze).
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "graft/core.hpp"
#include "graft/surgery/freeze.hpp"
#include "graft/formats/tf/checkpoint.hpp"

namespace graft_cmd_freeze {  // named, not anonymous: the CLI builds as one unity translation unit

struct freeze_args {
    std::string model, ckpt, out;
    std::vector<std::string> outputs, tags;
};

void run_freeze(const freeze_args& a) {
    graft::tf::load_options lo;
    lo.tags = a.tags;
    graft::meta_graph mg = graft::tf::load_meta_graph(a.model, lo);
    std::vector<std::string> outputs = a.outputs;
    if (outputs.empty()) {
        if (auto it = mg.signatures.find("serving_default"); it != mg.signatures.end()) {
            for (auto& [k, t] : it->second.outputs) outputs.push_back(t.name);
        }
        if (outputs.empty()) {
            throw graft::invalid_argument_error("freeze: no --outputs given", graft::location::in_file(a.model),
                                                "name the inference outputs: --outputs probs or --outputs probs:0,logits:0");
        }
    }
    auto vars = graft::find_variables(mg);
    std::string ckpt = a.ckpt.empty() ? graft::tf::checkpoint_beside(a.model) : a.ckpt;
    graft::surgery::value_source src;
    if (!ckpt.empty()) {
        src = graft::surgery::checkpoint_values(ckpt);
    } else {
        src = {[](const graft::variable_info&) -> std::optional<graft::tensor> { return std::nullopt; },
               "no checkpoint (give --ckpt PREFIX)"};
    }
    graft::graph frozen = graft::surgery::freeze(mg.graph, vars, src, outputs);
    int consts = 0;
    std::vector<std::string> frozen_vars;
    for (auto& v : vars) {
        if (auto* n = frozen.find(v.node); n && n->op == "Const") frozen_vars.push_back(v.node);
    }
    for (auto& n : frozen) consts += n.op == "Const";
    graft::tf::write_graph(frozen, a.out);
    std::cout << "froze " << frozen_vars.size() << " variables" << (ckpt.empty() ? "" : " from " + ckpt) << ":";
    for (auto& v : frozen_vars) std::cout << " " << v;
    std::cout << "\nkept " << frozen.size() << " of " << mg.graph.size() << " nodes (" << consts
              << " Const) for outputs:";
    for (auto& o : outputs) std::cout << " " << o;
    std::cout << "\nwrote " << a.out << "\n";
}

void add_freeze(CLI::App& app) {
    static freeze_args a;
    auto* cmd = app.add_subcommand("freeze", "Variables to Consts, pruned to the outputs: a frozen GraphDef");
    cmd->add_option("model", a.model, "MetaGraph (.meta), SavedModel directory or graph file")->required();
    cmd->add_option("--ckpt", a.ckpt, "Checkpoint with the variables' values (default: beside the model)");
    cmd->add_option("--outputs", a.outputs, "Output nodes or tensors (probs, probs:0), comma-separated or repeated");
    cmd->add_option("--tag", a.tags, "SavedModel MetaGraph tag (default serve)");
    cmd->add_option("-o,--out", a.out, "The frozen GraphDef to write (.pb binary, .pbtxt text)")->required();
    cmd->callback([] { run_freeze(a); });
}

graft::cli::registrar reg(76, &add_freeze);

}  // namespace
