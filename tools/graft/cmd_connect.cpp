// `graft connect A=MODEL_A[:CKPT] B=MODEL_B[:CKPT] --map 'B/g2_input:0=A/g1_output:0' -o OUT` —
// import each model under its label, bind the mapped inputs, restore each part from its
// checkpoint and write OUT.meta + the OUT checkpoint (or a SavedModel directory with
// --saved-model).
#include <filesystem>
#include <iostream>
#include <map>

#include "commands.hpp"
#include "saved_model_out.hpp"
#include "graft/core.hpp"
#include "graft/surgery/connect.hpp"
#include "graft/formats/tf_graph/saved_model.hpp"

namespace graft_cmd_connect {  // named, not anonymous: the CLI builds as one unity translation unit

struct connect_args {
    std::vector<std::string> models, maps;
    std::string out;
    bool clear_devices = false, saved_model = false, stop_gradient = false;
};

// "A=path[:ckpt]" -> part (a SavedModel directory brings its own variables).
graft::surgery::model_part parse_part(const std::string& spec) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
        throw graft::invalid_argument_error("model '" + spec + "' is not LABEL=MODEL[:CKPT]", {},
                                            "write e.g. A=enc.ckpt.meta:enc.ckpt or B=export_dir");
    }
    std::string label = spec.substr(0, eq), rest = spec.substr(eq + 1), ckpt;
    if (!std::filesystem::exists(rest)) {
        if (auto colon = rest.find(':'); colon != std::string::npos) {
            ckpt = rest.substr(colon + 1);
            rest = rest.substr(0, colon);
        }
    }
    return graft::surgery::load_part(label, rest, ckpt);
}

void run_connect(const connect_args& a) {
    std::vector<graft::surgery::model_part> parts;
    for (auto& m : a.models) parts.push_back(parse_part(m));
    std::map<std::string, std::string> seams;
    for (auto& m : a.maps) {
        auto eq = m.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == m.size()) {
            throw graft::invalid_argument_error("--map '" + m + "' is not LABEL/INPUT:0=LABEL/OUTPUT:0", {},
                                                "write e.g. --map 'B/g2_input:0=A/g1_output:0'");
        }
        seams[m.substr(0, eq)] = m.substr(eq + 1);
    }
    graft::surgery::connect_options o;
    o.clear_devices = a.clear_devices;
    o.stop_gradient_at_seams = a.stop_gradient;
    auto c = graft::surgery::connect(std::move(parts), seams, o);
    for (auto& p : c.parts) {
        std::cout << p.label << ": " << p.imported.imported_nodes << " nodes, " << p.imported.variables.size()
                  << " variables";
        if (!p.imported.removed.empty()) std::cout << ", inputs bound: " << p.imported.removed.size();
        if (!p.imported.dropped_collections.empty()) std::cout << ", collections dropped: " << p.imported.dropped_collections.size();
        std::cout << "\n";
    }
    graft::exec::session s(c.mg.graph);
    for (auto& p : c.parts) {
        if (p.checkpoint.empty() && !p.imported.init_op.empty()) s.run({}, {}, {p.imported.init_op});
    }
    for (auto& rep : graft::surgery::restore_parts(s, c)) {
        std::cout << "restored " << rep.restored.size() << " variables from " << rep.prefix << ":";
        for (auto& v : rep.restored) std::cout << " " << v;
        std::cout << "\n";
    }
    if (a.saved_model) {
        graft::surgery::save_combined(s, c, graft::cli::saved_model_prefix(a.out));
        c.mg.info.tags = {"serve"};
        graft::cli::finish_saved_model(a.out, c.mg);
        std::cout << "wrote SavedModel " << a.out << "\n";
    } else {
        if (auto dir = std::filesystem::path(a.out).parent_path(); !dir.empty()) std::filesystem::create_directories(dir);
        std::string p = graft::surgery::save_combined(s, c, a.out);
        std::cout << "wrote " << p << ".meta and checkpoint " << p << "\n";
    }
}

void add_connect(CLI::App& app) {
    static connect_args a;
    auto* cmd = app.add_subcommand("connect", "Connect models: import each under its label, bind inputs to outputs, save one model");
    cmd->add_option("models", a.models, "LABEL=MODEL[:CKPT]: a .meta file (and checkpoint prefix) or a SavedModel directory")
        ->required();
    cmd->add_option("--map", a.maps, "Seam 'LABEL/INPUT:0=LABEL/OUTPUT:0' (the input's placeholder is removed)");
    cmd->add_option("-o,--out", a.out, "Output prefix (OUT.meta + OUT.index/.data), or directory with --saved-model")->required();
    cmd->add_flag("--clear-devices", a.clear_devices, "Drop device placements");
    cmd->add_flag("--stop-gradient", a.stop_gradient, "Put a StopGradient on every seam (freeze the earlier models)");
    cmd->add_flag("--saved-model", a.saved_model, "Write a SavedModel directory instead");
    cmd->callback([] { run_connect(a); });
}

graft::cli::registrar reg(72, &add_connect);

}  // namespace
