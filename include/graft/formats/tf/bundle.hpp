// graft/formats/tf/bundle.hpp — reading TensorFlow V2 checkpoints ("tensor bundles": <prefix>.index +
// <prefix>.data-SSSSS-of-NNNNN), without TensorFlow.
//
//   graft::tf::bundle_reader r("/ckpt/model.ckpt-1000");          // reads and checks the .index
//   for (const auto& e : r.tensors()) std::cout << e.name << " " << e.shape.str() << "\n";
//   graft::tensor w = r.read("dense/kernel");                     // crc32c verified
//   graft::tensor part = r.read_slice("emb", tensor_slice::parse("0,100:-"));
//
// Data shards are opened lazily (an index-only checkpoint lists fine) and, for fixed-size dtypes whose
// offset is element-aligned, read() returns a zero-copy view into a private (copy-on-write) memory map
// of the shard: writing to the tensor never touches the file. Otherwise one copy is made with pread.
// Files are expected not to change while read (TF and graft replace checkpoints by rename, which is
// safe; truncating a mapped shard in place is not). Writing: bundle_writer.hpp; merging: bundle_merge.hpp.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "graft/core/file_set.hpp"
#include "graft/core/io.hpp"
#include "graft/core/tensor.hpp"
#include "graft/formats/tf/bundle_detail.hpp"
#include "graft/formats/tf/ckpt_proto.hpp"
#include "graft/formats/tf/name_map.hpp"
#include "graft/formats/tf/sstable.hpp"
#include "graft/formats/tf/tensor_slice.hpp"

namespace graft::tf {

/// One entry of a bundle's index: a tensor, a stored slice, or a partitioned tensor's full entry.
struct bundle_entry : proto::bundle_entry {
    std::string name;          ///< the key (a slice key for slice entries)
    std::uint64_t index_offset = 0;  ///< where its BundleEntryProto lies in the .index (for errors)
    /// True for a partitioned tensor's full entry (its data lives in slice entries). Never throws.
    [[nodiscard]] bool partitioned() const { return !slices.empty(); }
};

/// "<prefix>.index". Never throws (except bad_alloc).
inline std::string bundle_index_filename(std::string_view prefix) { return std::string(prefix) + ".index"; }
/// "<prefix>.data-00000-of-00001". Never throws (except bad_alloc).
inline std::string bundle_data_filename(std::string_view prefix, int shard, int num_shards) {
    char buf[48];
    std::snprintf(buf, sizeof buf, ".data-%05d-of-%05d", shard, num_shards);
    return std::string(prefix) + buf;
}

class bundle_reader {
public:
    /// Opens `<prefix>.index`: reads every entry, checks the header (endianness, versions). Throws
    /// io_error (no index file) or format_error (corrupt or unsupported index, naming file and offset).
    explicit bundle_reader(std::string prefix, bundle_read_options options = {})
        : prefix_(std::move(prefix)), opt_(options) {
        recover_file_set(prefix_);  // a save over this prefix that died half-way: put the old files back
        index_path_ = bundle_index_filename(prefix_);
        auto table = sstable::table_reader::open(index_path_);
        auto it = table.begin();
        if (!it.valid() || !it.key().empty()) {
            throw format_error("missing header entry (the first key of a bundle index is \"\")",
                               location::in_file(index_path_, it.valid() ? it.value_offset() : 0),
                               "this is not a V2 checkpoint index, or it is corrupt");
        }
        header_ = proto::decode_header(wire::reader(it.value(), index_path_, it.value_offset(), "BundleHeaderProto"));
        check_header(it.value_offset());
        for (it.next(); it.valid(); it.next()) {
            bundle_entry e;
            static_cast<proto::bundle_entry&>(e) =
                proto::decode_entry(wire::reader(it.value(), index_path_, it.value_offset(), "BundleEntryProto"));
            e.name = std::string(it.key());
            e.index_offset = it.value_offset();
            entries_.push_back(std::move(e));
        }
        // TF's rule: the slice entries of partitioned tensors are not tensors of their own.
        std::vector<std::string> hidden;
        for (const auto& e : entries_)
            for (const auto& s : e.slices) hidden.push_back(encode_slice_key(e.name, s));
        std::sort(hidden.begin(), hidden.end());
        for (std::size_t i = 0; i < entries_.size(); ++i)
            if (!std::binary_search(hidden.begin(), hidden.end(), entries_[i].name)) tensors_.push_back(i);
    }

    /// Prefix, index path, header, shard count, options as opened. Never throw.
    [[nodiscard]] const std::string& prefix() const { return prefix_; }
    [[nodiscard]] const std::string& index_path() const { return index_path_; }
    [[nodiscard]] const proto::bundle_header& header() const { return header_; }
    [[nodiscard]] int num_shards() const { return header_.num_shards; }
    [[nodiscard]] const bundle_read_options& options() const { return opt_; }

    /// Every entry (tensors, slices, full entries), sorted by key. Never throws.
    [[nodiscard]] const std::vector<bundle_entry>& all_entries() const { return entries_; }
    /// The tensors (slice entries of partitioned tensors left out), sorted by name. Never throws
    /// (except bad_alloc).
    [[nodiscard]] std::vector<bundle_entry> tensors() const {
        std::vector<bundle_entry> out;
        for (auto i : tensors_) out.push_back(entries_[i]);
        return out;
    }
    /// Names of tensors(), sorted. Never throws (except bad_alloc).
    [[nodiscard]] std::vector<std::string> keys() const {
        std::vector<std::string> out;
        for (auto i : tensors_) out.push_back(entries_[i].name);
        return out;
    }
    /// Tensor names in `scope` (see list_scope). Never throws (except bad_alloc).
    [[nodiscard]] std::vector<std::string> list(std::string_view scope) const { return list_scope(keys(), scope); }
    /// The entry stored under exactly `key` (any kind), or nullptr. Never throws.
    [[nodiscard]] const bundle_entry* find(std::string_view key) const {
        auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                                   [](const bundle_entry& e, std::string_view k) { return e.name < k; });
        return it != entries_.end() && it->name == key ? &*it : nullptr;
    }
    /// True when `key` is a tensor or any stored entry. Never throws.
    [[nodiscard]] bool contains(std::string_view key) const { return find(key) != nullptr; }
    /// The entry of `key`. Throws not_found_error listing the closest names.
    [[nodiscard]] const bundle_entry& entry(std::string_view key) const {
        if (auto* e = find(key)) return *e;
        throw not_found_error(graft::detail::cat("tensor '", key, "' is not in checkpoint '", prefix_, "'"),
                              location::at_tensor(std::string(key)), closest_names_hint(key, keys()));
    }
    /// Data file path of shard `shard`. Never throws (except bad_alloc).
    [[nodiscard]] std::string data_path(int shard) const { return bundle_data_filename(prefix_, shard, header_.num_shards); }

    /// The value of `key`: plain tensors directly, partitioned ones assembled from their slices. Throws
    /// not_found_error (no such key), io_error (missing shard, naming it), format_error (crc mismatch or
    /// bad entry, naming the tensor), unimplemented_error (dtype graft cannot read).
    [[nodiscard]] tensor read(std::string_view key, read_info* info = nullptr) const {
        load_scope budget(index_path_);
        const bundle_entry& e = entry(key);
        if (e.partitioned()) {
            if (info) *info = read_info{false, opt_.verify_crc};
            return read_slice(key, tensor_slice(e.shape.rank()));
        }
        return read_entry(e, e.name, info);
    }

    /// The part `slice` of `key` (which may be partitioned or stored whole), copied from every stored
    /// slice that overlaps it. Throws like read(), plus invalid_argument_error when the slice does not fit
    /// or the stored slices do not cover it.
    [[nodiscard]] tensor read_slice(std::string_view key, const tensor_slice& slice) const {
        load_scope budget(index_path_);
        const bundle_entry& full = entry(key);
        check_readable(full, full.name);
        const graft::shape want = slice.slice_shape(full.shape);
        if (!full.partitioned()) {
            tensor whole = read_entry(full, full.name, nullptr);
            if (slice.covers_all(full.shape)) return whole;
            tensor out(full.type, want);
            copy_slice_overlap(full.shape, tensor_slice(full.shape.rank()), whole, slice, out);
            return out;
        }
        // Stored slices overlapping the request must cover it exactly once.
        std::vector<const bundle_entry*> parts;
        std::vector<const tensor_slice*> part_slices;
        std::uint64_t stored_bytes = 0, covered = 0;
        const auto here = location::in_file(index_path_, full.index_offset).with_tensor(full.name);
        for (const auto& s : full.slices) {
            try {
                s.check_fits(full.shape);
            } catch (const invalid_argument_error& ex) {
                throw format_error(ex.message(), here, "the index entry is corrupt");
            }
            const std::int64_t c = detail::overlap_count(s, slice, full.shape);
            if (c == 0) continue;
            for (auto* other : part_slices) {
                if (detail::overlap_count(*other, s, full.shape) != 0) {
                    throw format_error(graft::detail::cat("stored slices ", other->str(), " and ", s.str(), " of '",
                                                          full.name, "' overlap"), here, "the index entry is corrupt");
                }
            }
            const bundle_entry* pe = find(encode_slice_key(full.name, s));
            if (!pe) {
                throw format_error(graft::detail::cat("slice ", s.str(), " of partitioned tensor '", full.name,
                                                      "' is listed but has no entry"),
                                   here, "the index is incomplete (an interrupted merge?)");
            }
            parts.push_back(pe);
            part_slices.push_back(&s);
            stored_bytes += static_cast<std::uint64_t>(std::max<std::int64_t>(pe->size, 0));
            covered += static_cast<std::uint64_t>(c);
        }
        const auto want_n = static_cast<std::uint64_t>(want.num_elements());
        if (covered != want_n) {
            throw invalid_argument_error(graft::detail::cat("the stored slices of partitioned tensor '", full.name,
                                                            "' cover ", covered, " of the ", want_n,
                                                            " elements of slice ", slice.str()),
                                         here, "the checkpoint lacks some slices (was every shard merged?)");
        }
        const std::size_t esz = full.type == dtype::string ? 1 : dtype_size(full.type);
        if (want_n > stored_bytes / esz) {
            throw format_error(graft::detail::cat("partitioned tensor '", full.name, "' claims ", want_n,
                                                  " elements but its slices hold ", stored_bytes, " bytes"),
                               here, "the index entry is corrupt");
        }
        if (parts.size() == 1 && *part_slices[0] == slice) return read_entry(*parts[0], full.name, nullptr);
        tensor out(full.type, want);
        for (std::size_t i = 0; i < parts.size(); ++i) {
            tensor piece = read_entry(*parts[i], full.name, nullptr);
            if (!(piece.shape() == part_slices[i]->slice_shape(full.shape)) || piece.type() != full.type) {
                throw format_error(graft::detail::cat("slice ", part_slices[i]->str(), " of '", full.name, "' is stored as ",
                                                      piece.describe()),
                                   location::in_file(index_path_, parts[i]->index_offset).with_tensor(full.name));
            }
            copy_slice_overlap(full.shape, *part_slices[i], piece, slice, out);
        }
        return out;
    }

    /// The stored slices of a partitioned tensor (empty for a plain one). Throws not_found_error.
    [[nodiscard]] std::vector<tensor_slice> slices_of(std::string_view key) const { return entry(key).slices; }

    /// Reads one entry as stored (a tensor or a slice entry); `display` names it in errors. Throws like read().
    [[nodiscard]] tensor read_entry(const bundle_entry& e, const std::string& display, read_info* info) const {
        check_readable(e, display);
        auto sh = checked_shard(e, display);
        const auto at_index = location::in_file(index_path_, e.index_offset).with_tensor(display);
        if (e.type == dtype::string) {
            return detail::read_string_tensor(*sh, e, display, opt_.verify_crc, header_.endianness == 1, at_index, info);
        }
        return detail::read_pod_tensor(sh, e, display, opt_.verify_crc, opt_.zero_copy, swap_, at_index, info);
    }

    /// Restores `key` into the existing tensor `dst` (same dtype and shape), e.g. a model's variable:
    /// fixed-size dtypes are pread straight into its memory. Throws like read(), plus
    /// invalid_argument_error when dst does not match.
    void read_into(std::string_view key, const tensor& dst) const {
        const bundle_entry& e = entry(key);
        if (!dst.valid() || dst.type() != base_type(e.type) || !(dst.shape() == e.shape) || !dst.on_host()) {
            throw invalid_argument_error(graft::detail::cat("read_into: checkpoint has ", dtype_name(e.type), e.shape.str(),
                                                            " but the destination is ", dst.valid() ? dst.describe() : "empty"),
                                         location::at_tensor(std::string(key)));
        }
        if (e.partitioned() || e.type == dtype::string) {
            dst.copy_from(read(key));
            return;
        }
        check_readable(e, e.name);
        auto sh = checked_shard(e, e.name);
        const auto at_index = location::in_file(index_path_, e.index_offset).with_tensor(e.name);
        detail::check_pod_size(e, at_index);
        detail::copy_pod_bytes(*sh, e, e.name, opt_.verify_crc, swap_, dst.raw_data());
    }

private:
    std::shared_ptr<detail::shard_file> checked_shard(const bundle_entry& e, const std::string& display) const {
        if (e.shard_id < 0 || e.shard_id >= header_.num_shards) {
            throw format_error(graft::detail::cat("shard id ", e.shard_id, " out of range (bundle has ", header_.num_shards,
                                                  " shards)"),
                               location::in_file(index_path_, e.index_offset).with_tensor(display));
        }
        auto sh = shard(e.shard_id, display);
        if (e.offset < 0 || e.size < 0 || static_cast<std::uint64_t>(e.offset) > sh->size ||
            static_cast<std::uint64_t>(e.size) > sh->size - static_cast<std::uint64_t>(e.offset)) {
            throw format_error(graft::detail::cat("tensor data [", e.offset, ", +", e.size, ") lies past the end of the ",
                                                  sh->size, "-byte data file"),
                               location::in_file(sh->path, static_cast<std::uint64_t>(std::max<std::int64_t>(e.offset, 0)))
                                   .with_tensor(display),
                               "the data file is truncated or belongs to another checkpoint");
        }
        return sh;
    }

    void check_header(std::uint64_t at) {
        auto where = location::in_file(index_path_, at);
        if (header_.num_shards < 0)
            throw format_error(graft::detail::cat("negative num_shards ", header_.num_shards), where);
        if (header_.endianness != 0 && header_.endianness != 1)
            throw format_error(graft::detail::cat("unknown endianness ", header_.endianness), where);
        swap_ = (header_.endianness == 1) != (std::endian::native == std::endian::big);
        const auto& v = header_.version;
        if (v.producer < 0)
            throw format_error(graft::detail::cat("checkpoint producer version ", v.producer, " is below the minimum 0"), where);
        if (v.min_consumer > 1)
            throw format_error(graft::detail::cat("checkpoint needs a reader of version >= ", v.min_consumer,
                                                  "; graft reads version 1"),
                               where, "it was written by a newer TensorFlow with format changes");
        if (std::find(v.bad_consumers.begin(), v.bad_consumers.end(), 1) != v.bad_consumers.end())
            throw format_error("checkpoint disallows readers of version 1 (bad_consumers)", where);
    }

    void check_readable(const bundle_entry& e, const std::string& display) const {
        const dtype t = e.type;
        if (t != dtype::string && !is_pod_dtype(t)) {
            throw unimplemented_error(graft::detail::cat("cannot read tensor of dtype ", dtype_name(t)),
                                      location::in_file(index_path_, e.index_offset).with_tensor(display),
                                      is_known(t) ? "resource and variant tensors have no portable value"
                                                  : "the checkpoint uses a DataType graft does not know");
        }
        if (!e.shape.fully_defined()) {
            throw format_error(graft::detail::cat("invalid tensor shape ", e.shape.str()),
                               location::in_file(index_path_, e.index_offset).with_tensor(display));
        }
        try {
            (void)e.shape.num_elements();
        } catch (const shape_error&) {
            throw format_error(graft::detail::cat("tensor shape ", e.shape.str(), " has too many elements"),
                               location::in_file(index_path_, e.index_offset).with_tensor(display));
        }
    }

    std::shared_ptr<detail::shard_file> shard(int id, const std::string& display) const {
        std::lock_guard<std::mutex> lock(mu_);
        auto& s = shards_[id];
        if (!s) s = detail::shard_file::open(data_path(id), prefix_, display);
        return s;
    }

    std::string prefix_, index_path_;
    bundle_read_options opt_;
    proto::bundle_header header_;
    bool swap_ = false;
    std::vector<bundle_entry> entries_;
    std::vector<std::size_t> tensors_;
    mutable std::mutex mu_;
    mutable std::map<int, std::shared_ptr<detail::shard_file>> shards_;
};

}  // namespace graft::tf
