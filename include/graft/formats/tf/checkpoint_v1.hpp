// graft/formats/tf/checkpoint_v1.hpp — reading deprecated V1 checkpoints (TF's TensorSliceReader format): one
// table per shard; key "" holds SavedTensorSliceMeta, every other key is a slice key whose value is a
// SavedSlice with a TensorProto of typed values.
//
//   graft::tf::v1_reader r("export-?????-of-00001");      // a file, or a pattern with ? * [...]
//   graft::tensor a = r.read("a");
#pragma once

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "graft/core/tensor.hpp"
#include "graft/formats/tf/ckpt_proto.hpp"
#include "graft/formats/tf/name_map.hpp"
#include "graft/formats/tf/sstable.hpp"
#include "graft/formats/tf/tensor_proto.hpp"
#include "graft/formats/tf/tensor_slice.hpp"

namespace graft::tf {

/// The files a V1 path names: the path itself when it is a file, else the files matching it as a glob
/// pattern (in the last path component), sorted. Never throws (except bad_alloc); empty when none.
inline std::vector<std::string> v1_files(const std::string& pattern) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_regular_file(pattern, ec)) return {pattern};
    fs::path p(pattern);
    fs::path dir = p.parent_path();
    const std::string glob = p.filename().string();
    std::vector<std::string> out;
    if (glob.find_first_of("?*[") == std::string::npos) return out;
    for (fs::directory_iterator it(dir.empty() ? fs::path(".") : dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (::fnmatch(glob.c_str(), name.c_str(), FNM_PERIOD) == 0 && it->is_regular_file(ec))
            out.push_back((dir / name).string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

/// One tensor of a V1 checkpoint: its dtype, full shape and stored slices (file index per slice).
struct v1_tensor_info {
    std::string name;
    dtype type = dtype::invalid;
    graft::shape shape;
    std::vector<std::pair<std::size_t, tensor_slice>> slices;  ///< (file index, slice)
};

class v1_reader {
public:
    /// Opens every file `path` names (a file or a pattern) and reads their metadata. Throws io_error
    /// (nothing matches), format_error (corrupt table or metadata, or the same tensor with different
    /// dtype/shape in two files).
    explicit v1_reader(std::string path) : path_(std::move(path)) {
        auto files = v1_files(path_);
        if (files.empty()) {
            throw io_error(graft::detail::cat("no V1 checkpoint file matches '", path_, "'"), location::in_file(path_),
                           "give a checkpoint prefix (V2: <prefix>.index must exist) or a V1 file / pattern");
        }
        for (std::size_t i = 0; i < files.size(); ++i) {
            auto t = std::make_unique<sstable::table_reader>(sstable::table_reader::open(files[i]));
            auto it = t->begin();
            if (!it.valid() || !it.key().empty()) {
                throw format_error("V1 checkpoint has no metadata entry (key \"\")", location::in_file(files[i], 0),
                                   "this is not a TensorFlow checkpoint");
            }
            auto meta = proto::decode_v1_meta(wire::reader(it.value(), files[i], it.value_offset(), "SavedTensorSlices"));
            versions_ = meta.versions;
            total_bytes_ += t->bytes().size();
            for (auto& m : meta.tensors) {
                auto& info = tensors_[m.name];
                if (info.name.empty()) {
                    info.name = m.name;
                    info.type = m.type;
                    info.shape = m.shape;
                } else if (info.type != m.type || !(info.shape == m.shape)) {
                    throw format_error(graft::detail::cat("tensor '", m.name, "' has different dtypes or shapes in the files"),
                                       location::in_file(files[i]).with_tensor(m.name));
                }
                for (auto& s : m.slices) info.slices.emplace_back(i, s);
            }
            tables_.push_back(std::move(t));
        }
        files_ = std::move(files);
    }

    /// The path as given, the files it matched, the files' VersionDef. Never throw.
    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] const std::vector<std::string>& files() const { return files_; }
    [[nodiscard]] const proto::version_def& versions() const { return versions_; }
    /// Tensor names, sorted. Never throws (except bad_alloc).
    [[nodiscard]] std::vector<std::string> keys() const {
        std::vector<std::string> k;
        for (const auto& [n, i] : tensors_) k.push_back(n);
        return k;
    }
    /// True when `name` is a tensor of this checkpoint. Never throws (except bad_alloc).
    [[nodiscard]] bool contains(std::string_view name) const { return tensors_.count(std::string(name)) != 0; }
    /// Metadata of `name`. Throws not_found_error listing the closest names.
    [[nodiscard]] const v1_tensor_info& info(std::string_view name) const {
        auto it = tensors_.find(std::string(name));
        if (it == tensors_.end()) {
            throw not_found_error(graft::detail::cat("tensor '", name, "' is not in V1 checkpoint '", path_, "'"),
                                  location::at_tensor(std::string(name)), closest_names_hint(name, keys()));
        }
        return it->second;
    }

    /// The value of `name`, assembled from its slices. Throws not_found_error, format_error (missing or
    /// corrupt slice data, slices that do not cover the tensor), unimplemented_error (dtype).
    [[nodiscard]] tensor read(std::string_view name) const {
        load_scope budget(files_.front());
        const auto& ti = info(name);
        const auto where = location::in_file(files_.front()).with_tensor(ti.name);
        if (!ti.shape.fully_defined()) throw format_error(graft::detail::cat("invalid shape ", ti.shape.str()), where);
        if (ti.type != dtype::string && !is_pod_dtype(ti.type)) {
            throw unimplemented_error(graft::detail::cat("cannot read V1 tensor of dtype ", dtype_name(ti.type)), where);
        }
        std::int64_t n = 0;
        try {
            n = ti.shape.num_elements();
        } catch (const shape_error&) {
            throw format_error(graft::detail::cat("shape ", ti.shape.str(), " has too many elements"), where);
        }
        // Every element takes at least one byte of the files: a cheap bound against corrupt shapes.
        if (static_cast<std::uint64_t>(n) > total_bytes_) {
            throw format_error(graft::detail::cat("shape ", ti.shape.str(), " is larger than the checkpoint files"), where);
        }
        const tensor_slice whole(ti.shape.rank());
        std::uint64_t covered = 0;
        tensor out;
        for (const auto& [fi, s] : ti.slices) {
            try {
                s.check_fits(ti.shape);
            } catch (const invalid_argument_error& e) {
                throw format_error(e.message(), location::in_file(files_[fi]).with_tensor(ti.name));
            }
            tensor piece = read_slice_data(fi, ti, s);
            if (ti.slices.size() == 1 && s.covers_all(ti.shape)) return piece.reshaped(ti.shape);
            if (!out.valid()) out = tensor(ti.type, ti.shape);
            covered += static_cast<std::uint64_t>(copy_slice_overlap(ti.shape, s, piece, whole, out));
        }
        if (covered != static_cast<std::uint64_t>(n)) {
            throw format_error(graft::detail::cat("the slices of '", ti.name, "' cover ", covered, " of its ", n, " elements"),
                               where, "a shard of the V1 checkpoint is missing");
        }
        return out.valid() ? out : tensor(ti.type, ti.shape);
    }

private:
    tensor read_slice_data(std::size_t fi, const v1_tensor_info& ti, const tensor_slice& s) const {
        const std::string key = encode_slice_key(ti.name, s);
        auto it = tables_[fi]->seek(key);
        if (!it.valid() || it.key() != key) {
            throw format_error(graft::detail::cat("slice ", s.str(), " of '", ti.name, "' has no data entry"),
                               location::in_file(files_[fi]).with_tensor(ti.name), "the V1 checkpoint is incomplete");
        }
        auto ss = proto::decode_v1_slice(wire::reader(it.value(), files_[fi], it.value_offset(), "SavedTensorSlices"));
        return proto::decode_tensor_values(wire::reader(ss.data, files_[fi], ss.data_offset, "TensorProto"), ti.type,
                                           s.slice_shape(ti.shape));
    }

    std::string path_;
    std::vector<std::string> files_;
    std::vector<std::unique_ptr<sstable::table_reader>> tables_;
    std::map<std::string, v1_tensor_info> tensors_;
    proto::version_def versions_;
    std::uint64_t total_bytes_ = 0;
};

}  // namespace graft::tf
