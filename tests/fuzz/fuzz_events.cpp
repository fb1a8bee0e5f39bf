// libFuzzer target: a TensorBoard event file (TFRecord framing with masked crc32c, Event protos).
#include "fuzz_support.hpp"
#include "graft/formats/tf_graph/events.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto path = graft::fuzz::scratch() / "events.out.tfevents.fuzz";
    graft::fuzz::put_file(path, std::string_view(reinterpret_cast<const char*>(data), size));
    graft::fuzz::expect_graft_errors_only([&] { (void)graft::train::read_events(path.string()); });
    return 0;
}
