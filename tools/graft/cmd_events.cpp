// `graft events FILE [--tag TAG]` — list a TensorBoard event file: one line per event (step,
// wall time, and its file_version, scalars or graph), every record's crcs checked.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "graft/formats/tf_graph/events.hpp"

namespace graft_cmd_events {  // named, not anonymous: the CLI builds as one unity translation unit

void add_events(CLI::App& app) {
    static std::string path, tag;
    auto* cmd = app.add_subcommand("events", "List a TensorBoard event file (events.out.tfevents.*): scalars, graphs");
    cmd->add_option("file", path, "Event file, or a log directory (its newest event file)")->required();
    cmd->add_option("--tag", tag, "Only the scalars of this tag");
    cmd->callback([] {
        std::string file = path;
        if (std::filesystem::is_directory(file)) {
            std::filesystem::path newest;
            for (const auto& e : std::filesystem::directory_iterator(file)) {
                auto n = e.path().filename().string();
                if (n.find("tfevents") != std::string::npos && (newest.empty() || n > newest.filename().string())) {
                    newest = e.path();
                }
            }
            if (newest.empty()) {
                throw graft::not_found_error("no event file (events.out.tfevents.*) in the directory",
                                             graft::location::in_file(file));
            }
            file = newest.string();
        }
        auto events = graft::train::read_events(file);
        std::size_t shown = 0;
        for (const auto& e : events) {
            char head[96];
            std::snprintf(head, sizeof head, "step %lld  wall_time %.3f", static_cast<long long>(e.step), e.wall_time);
            if (!tag.empty()) {
                if (auto v = e.scalar(tag)) {
                    std::cout << head << "  " << tag << " = " << *v << "\n";
                    ++shown;
                }
                continue;
            }
            std::cout << head;
            if (!e.file_version.empty()) std::cout << "  file_version " << e.file_version;
            if (!e.graph_def.empty()) std::cout << "  graph_def (" << e.graph_def.size() << " bytes)";
            if (!e.meta_graph_def.empty()) std::cout << "  meta_graph_def (" << e.meta_graph_def.size() << " bytes)";
            for (const auto& [t, v] : e.scalars) std::cout << "  " << t << " = " << v;
            if (!e.other_fields.empty()) std::cout << "  (+" << e.other_fields.size() << " bytes of other fields)";
            std::cout << "\n";
            ++shown;
        }
        std::cerr << file << ": " << events.size() << " events" << (tag.empty() ? "" : ", shown " + std::to_string(shown))
                  << "\n";
    });
}

graft::cli::registrar reg(60, &add_events);

}  // namespace
