// `graft convert IN OUT` — rewrite a graph file between binary and text protobuf, by extension:
// .pb/.meta binary, .pbtxt/.txt text; the message kind (GraphDef, MetaGraphDef, SavedModel) stays.
#include <iostream>

#include "commands.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"

namespace graft_cmd_convert {  // named, not anonymous: the CLI builds as one unity translation unit

void add_convert(CLI::App& app) {
    static std::string in, out;
    auto* cmd = app.add_subcommand("convert", "Convert a graph file between binary (.pb/.meta) and text (.pbtxt)");
    cmd->add_option("in", in, "Input graph file or SavedModel directory")->required();
    cmd->add_option("out", out, "Output file; .pbtxt/.txt writes text, anything else binary")->required();
    cmd->callback([] {
        graft::tf::convert(in, out);
        std::cout << "wrote " << out << " (" << graft::tf::format_name(graft::tf::detect_format(out)) << ")\n";
    });
}

graft::cli::registrar reg(21, &add_convert);

}  // namespace
