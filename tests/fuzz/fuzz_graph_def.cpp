// libFuzzer target: a binary GraphDef (parse_graph_def), the same bytes as a text GraphDef (.pbtxt,
// from_text), and whatever parses written back out and read again.
#include "fuzz_support.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    graft::fuzz::expect_graft_errors_only([&] {
        auto g = graft::tf::parse_graph_def(bytes, "fuzz.pb");
        auto again = graft::tf::parse_graph_def(graft::tf::serialize_graph_def(g), "again.pb");
        (void)again;
    });
    graft::fuzz::expect_graft_errors_only([&] {
        auto bin = graft::tf::from_text(bytes, graft::tf::file_format::graph_def, "fuzz.pbtxt");
        auto g = graft::tf::parse_graph_def(bin, "fuzz.pbtxt");
        (void)g;
    });
    return 0;
}
