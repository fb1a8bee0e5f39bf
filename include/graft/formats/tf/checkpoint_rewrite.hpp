// graft/formats/tf/checkpoint_rewrite.hpp — copy a checkpoint (any kind checkpoint_reader opens) to a new V2
// bundle, tensors appended in the original data order, so an uncompressed single-shard TF bundle comes
// out byte-identical; compressed, merged or V1 inputs come out with identical content.
//
//   graft::tf::rewrite_checkpoint("/old/model.ckpt-9", "/new/model.ckpt-9");
#pragma once

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "graft/formats/tf/bundle_writer.hpp"
#include "graft/formats/tf/checkpoint.hpp"

namespace graft::tf {

/// Writes every tensor of `in` to a new bundle at `out_prefix`; returns the number of entries written.
/// Throws like checkpoint_reader::read and bundle_writer (io_error, format_error, unimplemented_error).
inline std::size_t rewrite_checkpoint(const checkpoint_reader& in, const std::string& out_prefix,
                                      bundle_write_options options = {}) {
    bundle_writer w(out_prefix, options);
    std::size_t n = 0;
    if (const bundle_reader* b = in.bundle()) {
        std::vector<const bundle_entry*> order;
        for (const auto& e : b->all_entries())
            if (!e.partitioned()) order.push_back(&e);
        std::stable_sort(order.begin(), order.end(), [](const bundle_entry* x, const bundle_entry* y) {
            return std::tie(x->shard_id, x->offset) < std::tie(y->shard_id, y->offset);
        });
        for (const bundle_entry* e : order) {
            tensor v = b->read_entry(*e, e->name, nullptr);
            auto sk = e->name.empty() || e->name.front() != '\0' ? std::nullopt : decode_slice_key(e->name);
            const bundle_entry* full = sk ? b->find(sk->first) : nullptr;
            if (full && full->partitioned()) w.add_slice(sk->first, full->shape, sk->second, v);
            else w.add(e->name, v);
            ++n;
        }
    } else {
        for (const auto& k : in.keys()) {
            w.add(k, in.read(k));
            ++n;
        }
    }
    w.finish();
    return n;
}

/// rewrite_checkpoint from a path (SavedModel dir, training dir, V2 prefix or V1 file). Throws likewise.
inline std::size_t rewrite_checkpoint(const std::string& in_path, const std::string& out_prefix,
                                      bundle_write_options options = {}) {
    return rewrite_checkpoint(checkpoint_reader(in_path), out_prefix, options);
}

}  // namespace graft::tf
