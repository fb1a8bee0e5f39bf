// libFuzzer target: a TF2 checkpoint bundle (prefix.index + prefix.data-00000-of-00001) split from
// one input, every tensor read back; the same first part as a V1 checkpoint file (SSTable of
// SavedTensorSlices) with every tensor read; and as the `checkpoint` state file's text.
#include "fuzz_support.hpp"
#include "graft/formats/tf/bundle.hpp"
#include "graft/formats/tf/checkpoint_state.hpp"
#include "graft/formats/tf/checkpoint_v1.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto parts = graft::fuzz::split2(std::string_view(reinterpret_cast<const char*>(data), size));
    const std::string_view index = parts.first, shard = parts.second;  // plain names: lambdas capture them
    const auto dir = graft::fuzz::scratch();
    graft::fuzz::put_file(dir / "ck.index", index);
    graft::fuzz::put_file(dir / "ck.data-00000-of-00001", shard);
    graft::fuzz::expect_graft_errors_only([&] {
        graft::tf::bundle_reader r((dir / "ck").string());
        for (const auto& k : r.keys()) {
            graft::fuzz::expect_graft_errors_only([&] { (void)r.read(k); });
        }
    });
    graft::fuzz::put_file(dir / "v1.ckpt", index);
    graft::fuzz::expect_graft_errors_only([&] {
        graft::tf::v1_reader r((dir / "v1.ckpt").string());
        for (const auto& k : r.keys()) {
            graft::fuzz::expect_graft_errors_only([&] { (void)r.read(k); });
        }
    });
    graft::fuzz::expect_graft_errors_only([&] { (void)graft::tf::parse_checkpoint_state(index, "checkpoint"); });
    return 0;
}
