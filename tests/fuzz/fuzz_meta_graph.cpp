// libFuzzer target: a MetaGraphDef (.meta) and a SavedModel (saved_model.pb) from the same bytes,
// with their signatures resolved and the result written back and read again.
#include "fuzz_support.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    graft::fuzz::expect_graft_errors_only([&] {
        auto mg = graft::tf::parse_meta_graph_def(bytes, "fuzz.meta");
        auto again = graft::tf::parse_meta_graph_def(graft::tf::serialize_meta_graph_def(mg), "again.meta");
        (void)again;
    });
    graft::fuzz::expect_graft_errors_only([&] {
        auto sm = graft::tf::parse_saved_model(bytes, "saved_model.pb");
        if (!sm.meta_graphs.empty()) (void)graft::tf::select_meta_graph(sm);
    });
    return 0;
}
