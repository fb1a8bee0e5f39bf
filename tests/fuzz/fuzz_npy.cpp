// libFuzzer target: a .npy file's bytes (graft::parse_npy), then the tensor written back and re-read.
#include "fuzz_support.hpp"
#include "graft/formats/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    graft::fuzz::expect_graft_errors_only([&] {
        auto t = graft::parse_npy(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.npy");
        auto again = graft::parse_npy(graft::serialize_npy(graft::npy_storable(t)), "again.npy");
        (void)again;
    });
    return 0;
}
