// libFuzzer target: what `graft run` / `graft import` do with a graph file before any kernel runs —
// parse and validate a binary GraphDef, import it under a scope into a MetaGraph (surgery's
// renaming, input maps, static shapes through the graph), inline its functions and plan a session
// over every node (placement, kernel lookup, fusion, buffer lifetimes). Hostile attrs (negative
// dims, rank 1000, 2^62-element shapes), cycles, dangling inputs and recursive functions must end
// in a graft::error. Kernels are not run: a valid graph may loop forever or ask for all memory by
// design, which a run's caller bounds, not the file.
#include <string>
#include <utility>
#include <vector>

#include "fuzz_support.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/inline.hpp"
#include "graft/surgery/import.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    graft::fuzz::expect_graft_errors_only([&] {
        graft::meta_graph src;
        src.graph = graft::tf::parse_graph_def(bytes, "fuzz.pb");
        graft::meta_graph into;
        auto r = graft::surgery::import_meta_graph(into, src, graft::surgery::under("imported"));
        (void)r;
        graft::inline_functions(into.graph);
        std::vector<std::string> targets;
        for (const auto& n : std::as_const(into.graph)) targets.push_back(n.name);
        graft::exec::session s(std::move(into.graph));
        (void)s.prepare({}, {}, targets);
    });
    return 0;
}
