// graft/formats/tf/checkpoint.hpp — one reader for every kind of TF checkpoint path (like tf.train.load_checkpoint).
//
//   graft::tf::checkpoint_reader r("/models/resnet");       // a SavedModel dir -> variables/variables
//   graft::tf::checkpoint_reader r("/train");               // a dir with a `checkpoint` file -> latest
//   graft::tf::checkpoint_reader r("/train/model.ckpt-100");// a V2 prefix (<prefix>.index exists)
//   graft::tf::checkpoint_reader r("/old/export-?????-of-00001");  // a V1 file or pattern
//   for (auto& k : r.keys()) std::cout << k << " " << dtype_name(r.dtype_of(k)) << r.shape_of(k).str() << "\n";
//   graft::tensor w = r.read("dense/kernel");
//
// V1 vs V2 follows TF: `<prefix>.index` exists -> V2 bundle; otherwise the path is a V1 file pattern.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graft/core/tensor.hpp"
#include "graft/formats/tf/bundle.hpp"
#include "graft/formats/tf/checkpoint_state.hpp"
#include "graft/formats/tf/checkpoint_v1.hpp"

namespace graft::tf {

/// What a checkpoint path resolves to.
struct checkpoint_location {
    std::string prefix;  ///< V2 prefix or V1 file/pattern
    int version = 2;     ///< 1 or 2
};

/// Resolves `path` (SavedModel dir, dir with a `checkpoint` file, V2 prefix — also given as its .index or
/// .data file — or V1 file/pattern). Throws io_error naming what was looked for when nothing is there.
inline checkpoint_location resolve_checkpoint(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        const fs::path vars = fs::path(path) / "variables" / "variables";
        if (fs::exists(vars.string() + ".index", ec)) return {vars.string(), 2};
        if (fs::exists(fs::path(path) / "checkpoint", ec)) {
            if (auto latest = latest_checkpoint(path)) return resolve_checkpoint(*latest);
            throw io_error("the `checkpoint` state file names no checkpoint whose files exist",
                           location::in_file((fs::path(path) / "checkpoint").string()),
                           "check model_checkpoint_path in it, or pass a checkpoint prefix directly");
        }
        throw io_error("directory holds no checkpoint", location::in_file(path),
                       "expected a SavedModel (variables/variables.index) or a `checkpoint` state file");
    }
    if (fs::exists(path + ".index", ec)) return {path, 2};
    auto strip = [&](std::string_view suffix_start) -> std::optional<std::string> {
        auto pos = path.rfind(suffix_start);
        if (pos == std::string::npos) return std::nullopt;
        std::string p = path.substr(0, pos);
        if (fs::exists(p + ".index", ec)) return p;
        return std::nullopt;
    };
    if (path.size() > 6 && path.ends_with(".index")) {
        if (auto p = strip(".index")) return {*p, 2};
    }
    if (path.find(".data-") != std::string::npos) {
        if (auto p = strip(".data-")) return {*p, 2};
    }
    if (!v1_files(path).empty()) return {path, 1};
    throw io_error(graft::detail::cat("no checkpoint at '", path, "': neither '", path, ".index' (V2) nor a V1 file exists"),
                   location::in_file(path),
                   "pass a checkpoint prefix (e.g. model.ckpt-1000), a SavedModel directory or a training directory");
}

/// The checkpoint that comes with a model file when none is named: "<x>.meta" -> "<x>", a SavedModel
/// directory -> "<dir>/variables/variables"; empty when that checkpoint's .index does not exist.
/// Never throws (except bad_alloc).
inline std::string checkpoint_beside(const std::string& model) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::string p;
    if (model.size() > 5 && model.ends_with(".meta")) p = model.substr(0, model.size() - 5);
    else if (fs::is_directory(model, ec)) p = (fs::path(model) / "variables" / "variables").string();
    return !p.empty() && fs::exists(p + ".index", ec) ? p : std::string();
}

class checkpoint_reader {
public:
    /// Opens the checkpoint `path` names (see resolve_checkpoint). Throws io_error, format_error.
    explicit checkpoint_reader(const std::string& path, bundle_read_options options = {})
        : loc_(resolve_checkpoint(path)) {
        if (loc_.version == 2) v2_ = std::make_unique<bundle_reader>(loc_.prefix, options);
        else v1_ = std::make_unique<v1_reader>(loc_.prefix);
    }

    /// The V2 prefix or V1 file/pattern actually read. Never throws.
    [[nodiscard]] const std::string& prefix() const { return loc_.prefix; }
    /// 1 (V1 tables) or 2 (tensor bundle). Never throws.
    [[nodiscard]] int format_version() const { return loc_.version; }

    /// Tensor names, sorted (slices of partitioned tensors are not listed). Never throws (except bad_alloc).
    [[nodiscard]] std::vector<std::string> keys() const { return v2_ ? v2_->keys() : v1_->keys(); }
    /// True when `key` names a tensor. Never throws.
    [[nodiscard]] bool contains(std::string_view key) const {
        if (v1_) return v1_->contains(key);
        auto* e = v2_->find(key);
        return e && !key.empty() && key.front() != '\0';
    }
    /// dtype of `key`. Throws not_found_error listing the closest names.
    [[nodiscard]] dtype dtype_of(std::string_view key) const { return v2_ ? v2_->entry(key).type : v1_->info(key).type; }
    /// Full shape of `key`. Throws not_found_error listing the closest names.
    [[nodiscard]] graft::shape shape_of(std::string_view key) const { return v2_ ? v2_->entry(key).shape : v1_->info(key).shape; }
    /// The value of `key` (partitioned tensors assembled). Throws not_found_error, io_error (missing data
    /// shard), format_error (crc mismatch, corrupt data), unimplemented_error (dtype).
    [[nodiscard]] tensor read(std::string_view key) const { return v2_ ? v2_->read(key) : v1_->read(key); }

    /// The underlying readers (exactly one is non-null). Never throw.
    [[nodiscard]] const bundle_reader* bundle() const { return v2_.get(); }
    [[nodiscard]] const v1_reader* v1() const { return v1_.get(); }

private:
    checkpoint_location loc_;
    std::unique_ptr<bundle_reader> v2_;
    std::unique_ptr<v1_reader> v1_;
};

}  // namespace graft::tf
