// graft/formats/tf/bundle_merge.hpp — merging the per-device bundles of a sharded save into one checkpoint,
// as TensorFlow's MergeV2Checkpoints does.
//
//   graft::tf::merge_bundles({"/ckpt/tmp/part-00000-of-00002", "/ckpt/tmp/part-00001-of-00002"},
//                            "/ckpt/model.ckpt-7");
//
// Each distinct input data file gets a new shard id in order of first reference and is renamed (not
// copied) to <out>.data-<id>-of-<count>; partitioned tensors' full entries that appear in several
// inputs have their slice lists concatenated; the merged index is written atomically; the input index
// files are deleted (best effort).
#pragma once

#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graft/core/io.hpp"
#include "graft/formats/tf/bundle.hpp"
#include "graft/formats/tf/ckpt_proto.hpp"
#include "graft/formats/tf/sstable.hpp"

namespace graft::tf {

/// Merges the bundles at `in_prefixes` into `out_prefix`. Throws io_error (missing index or data file,
/// rename failure), format_error (corrupt index), invalid_argument_error (no inputs, conflicting
/// endianness or versions, the same unpartitioned tensor in two inputs, partitioned entries whose dtype
/// or shape differ).
inline void merge_bundles(const std::vector<std::string>& in_prefixes, const std::string& out_prefix) {
    if (in_prefixes.empty()) throw invalid_argument_error("merge_bundles: no input bundles");
    std::map<std::string, proto::bundle_entry> entries;
    std::vector<std::string> data_files;           // by new shard id
    std::map<std::string, std::int32_t> new_id;    // old data path -> new shard id
    std::int64_t sum_shards = 0;
    std::optional<proto::bundle_header> first;
    for (const auto& prefix : in_prefixes) {
        const std::string index = bundle_index_filename(prefix);
        auto table = sstable::table_reader::open(index);
        auto it = table.begin();
        if (!it.valid() || !it.key().empty()) {
            throw format_error("missing header entry", location::in_file(index, 0), "not a V2 checkpoint index");
        }
        auto h = proto::decode_header(wire::reader(it.value(), index, it.value_offset(), "BundleHeaderProto"));
        sum_shards += h.num_shards;
        if (!first) {
            first = h;
        } else if (h.endianness != first->endianness) {
            throw invalid_argument_error(graft::detail::cat("merge_bundles: '", prefix, "' has another endianness"),
                                         location::in_file(index));
        } else if (!(h.version == first->version)) {
            throw invalid_argument_error(graft::detail::cat("merge_bundles: '", prefix, "' has another format version"),
                                         location::in_file(index));
        }
        for (it.next(); it.valid(); it.next()) {
            std::string key(it.key());
            auto e = proto::decode_entry(wire::reader(it.value(), index, it.value_offset(), "BundleEntryProto"));
            auto found = entries.find(key);
            if (found != entries.end()) {
                auto& have = found->second;
                if (have.slices.empty() || e.slices.empty()) {
                    throw invalid_argument_error(graft::detail::cat("merge_bundles: tensor '", key,
                                                                    "' appears in more than one input (last: '", prefix, "')"),
                                                 location::at_tensor(key));
                }
                if (have.type != e.type || !(have.shape == e.shape)) {
                    throw invalid_argument_error(graft::detail::cat("merge_bundles: partitioned tensor '", key,
                                                                    "' has different dtypes or shapes in the inputs"),
                                                 location::at_tensor(key));
                }
                have.slices.insert(have.slices.end(), e.slices.begin(), e.slices.end());
                continue;
            }
            // Like TF, a partitioned tensor's full entry also claims (and records) its bundle's data file.
            const std::string path = bundle_data_filename(prefix, e.shard_id, h.num_shards);
            auto [pos, added] = new_id.emplace(path, static_cast<std::int32_t>(data_files.size()));
            if (added) data_files.push_back(path);
            e.shard_id = pos->second;
            entries.emplace(std::move(key), std::move(e));
        }
    }
    const int count = static_cast<int>(data_files.size());
    // TF writes the sum of the inputs' num_shards; that equals the number of data files unless an input
    // had no tensors, in which case the count keeps the merged bundle readable.
    proto::bundle_header out = *first;
    out.num_shards = count > 0 ? count : static_cast<std::int32_t>(sum_shards);
    auto dir = std::filesystem::path(out_prefix).parent_path();
    std::error_code ec;
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    for (int i = 0; i < count; ++i) {
        const std::string to = bundle_data_filename(out_prefix, i, count);
        if (data_files[static_cast<std::size_t>(i)] == to) continue;
        if (std::rename(data_files[static_cast<std::size_t>(i)].c_str(), to.c_str()) != 0) {
            throw io_error(graft::detail::cat("merge_bundles: cannot rename '", data_files[static_cast<std::size_t>(i)],
                                              "' to '", to, "': ", graft::detail::errno_text()),
                           location::in_file(data_files[static_cast<std::size_t>(i)]));
        }
    }
    sstable::table_builder b;
    b.add("", proto::encode(out));
    for (const auto& [k, e] : entries) b.add(k, proto::encode(e));
    const std::string out_index = bundle_index_filename(out_prefix);
    write_file_atomic(out_index, b.finish());
    for (const auto& prefix : in_prefixes) {
        const std::string index = bundle_index_filename(prefix);
        if (index != out_index) std::remove(index.c_str());
    }
}

}  // namespace graft::tf
