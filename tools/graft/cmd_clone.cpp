// `graft clone MODEL --inputs ... --outputs ... --scope copy [--init copy|init|share]
//  [--map 'copy/x:0=y:0'] [--ckpt PREFIX] -o OUT` — copy the ops between the inputs and outputs of
// a MetaGraph under a new scope and write the original plus the copy as OUT.meta + OUT checkpoint
// (or, with --saved-model, as the SavedModel directory OUT).
// With --ckpt the original's variables keep their checkpointed values (and `copy` starts from
// them); without, every variable is initialized by its initializer, so only init/share make sense.
#include <algorithm>
#include <iostream>
#include <optional>
#include <set>

#include "commands.hpp"
#include "saved_model_out.hpp"
#include "graft/exec/session.hpp"
#include "graft/surgery/clone.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/train/saver.hpp"
#include "graft/train/variables.hpp"

namespace graft_cmd_clone {  // named, not anonymous: the CLI builds as one unity translation unit

struct clone_args {
    std::string model, ckpt, scope = "copy", init = "init", out;
    std::vector<std::string> inputs, outputs, maps;
    bool clear_devices = false, saved_model = false;
};

/// Splits "a,b" items of repeated options.
std::vector<std::string> split_list(const std::vector<std::string>& items) {
    std::vector<std::string> r;
    for (auto& s : items) {
        std::size_t start = 0;
        while (start <= s.size()) {
            auto comma = s.find(',', start);
            if (comma == std::string::npos) comma = s.size();
            if (comma > start) r.push_back(s.substr(start, comma - start));
            start = comma + 1;
        }
    }
    return r;
}

void run_clone(const clone_args& a) {
    graft::meta_graph mg = graft::tf::load_meta_graph(a.model);
    graft::surgery::clone_options o;
    o.inputs = split_list(a.inputs);
    o.outputs = split_list(a.outputs);
    o.scope = a.scope;
    o.init = graft::surgery::parse_init_policy(a.init);
    o.clear_devices = a.clear_devices;
    std::string pre = graft::surgery::join_scope(a.scope, "");
    for (auto& m : a.maps) {
        auto eq = m.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == m.size()) {
            throw graft::invalid_argument_error("--map '" + m + "' is not INPUT=TENSOR", {},
                                                "write e.g. --map 'copy/x:0=y:0' (the copy's input = an existing tensor)");
        }
        std::string key = m.substr(0, eq);
        if (key.rfind(pre, 0) == 0) key = key.substr(pre.size());  // "copy/x:0" names the original "x:0"
        o.input_map[key] = m.substr(eq + 1);
    }
    if (o.init == graft::surgery::init_policy::copy) {
        if (a.ckpt.empty()) {
            throw graft::invalid_argument_error(
                "--init copy needs the original's values: pass --ckpt PREFIX", {},
                "without a checkpoint use --init init (fresh values) or --init share");
        }
        o.values = graft::surgery::checkpoint_values(a.ckpt);
    }
    std::vector<std::string> originals;
    for (auto& v : graft::find_variables(mg)) originals.push_back(v.node);

    auto r = graft::surgery::clone(mg, o);

    // values: the original's from --ckpt (else its initializers), then the copy's initializer
    graft::exec::session s(mg.graph);
    if (!a.ckpt.empty() && !originals.empty()) {
        graft::train::saver_options so;
        so.var_list = originals;
        so.build_ops = false;
        so.write_meta_graph = false;
        graft::train::saver(mg, so).restore(s, a.ckpt);
    } else {
        std::vector<std::string> inits;
        for (auto& v : graft::find_variables(mg)) {
            if (!v.initializer_name.empty() && std::find(r.variables.begin(), r.variables.end(), v.node) == r.variables.end()) {
                inits.push_back(v.initializer_name);
            }
        }
        if (!inits.empty()) s.run({}, {}, inits);
    }
    if (!r.init_op.empty()) s.run({}, {}, {r.init_op});

    std::string written;
    std::optional<graft::train::saver> sv;  // over the originals and the copies
    if (!graft::find_variables(mg).empty()) {
        graft::train::saver_options so;
        so.max_to_keep = 0;
        so.write_meta_graph = !a.saved_model;  // a SavedModel holds the graph in saved_model.pb
        sv.emplace(mg, so);
    }
    if (a.saved_model) {
        if (sv) {
            sv->save(s, graft::cli::saved_model_prefix(a.out));
            mg.saver = sv->def();  // the source's own saver (if any) restores only the originals
        }
        graft::cli::finish_saved_model(a.out, mg);
        written = "SavedModel " + a.out;
    } else if (sv) {
        written = sv->save(s, a.out) + ".{meta,index,data-*}";
    } else {
        graft::tf::write_meta_graph(mg, a.out + ".meta");
        written = a.out + ".meta (no variables: no checkpoint)";
    }
    std::cout << "cloned " << r.names.size() << " nodes under '" << a.scope << "' (init " << a.init << ")\n";
    for (auto& [from, to] : r.inputs) std::cout << "  input  " << from << " -> " << to << "\n";
    for (std::size_t i = 0; i < r.outputs.size(); ++i) std::cout << "  output " << o.outputs[i] << " -> " << r.outputs[i] << "\n";
    for (auto& [from, to] : r.variable_map) std::cout << "  variable " << from << " -> " << to << "\n";
    if (!r.init_op.empty()) std::cout << "  initializer " << r.init_op << "\n";
    std::cout << "wrote " << written << "\n";
}

void add_clone(CLI::App& app) {
    static clone_args a;
    auto* cmd = app.add_subcommand("clone", "Copy the ops between --inputs and --outputs under a new scope (original + copy -> OUT)");
    cmd->add_option("model", a.model, "MetaGraph file (.meta)")->required();
    cmd->add_option("--inputs", a.inputs, "Boundary inputs: node or tensor names, comma-separated or repeated");
    cmd->add_option("--outputs", a.outputs, "Outputs to copy: node or tensor names, comma-separated or repeated")->required();
    cmd->add_option("--scope", a.scope, "Scope of the copy")->capture_default_str();
    cmd->add_option("--init", a.init, "Variables of the copy: copy (needs --ckpt), init (fresh) or share")
        ->check(CLI::IsMember({"copy", "init", "share"}))
        ->capture_default_str();
    cmd->add_option("--map", a.maps, "Bind a copy input to an existing tensor: 'copy/x:0=y:0' (repeatable)");
    cmd->add_option("--ckpt", a.ckpt, "Checkpoint of the original (its values are kept; --init copy starts from them)");
    cmd->add_flag("--clear-devices", a.clear_devices, "Drop device placements in the copy");
    cmd->add_option("-o,--out", a.out, "Output prefix: writes OUT.meta, OUT.index, OUT.data-*; a directory with --saved-model")
        ->required();
    cmd->add_flag("--saved-model", a.saved_model, "Write a SavedModel directory instead");
    cmd->callback([] { run_clone(a); });
}

graft::cli::registrar reg(210, &add_clone);

}  // namespace
