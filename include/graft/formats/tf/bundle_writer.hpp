// graft/formats/tf/bundle_writer.hpp — writing TensorFlow V2 checkpoints, byte-identical to TF's BundleWriter.
//
//   graft::tf::bundle_writer w("/ckpt/model.ckpt-1");
//   w.add("dense/kernel", kernel);                                  // data appended in add order
//   w.add_slice("emb", {1000, 64}, tensor_slice::parse("0,500:-"), part0);   // partitioned variable
//   w.finish();                                                      // data file, then index
//
// Crash safety: bytes go to "<final name>.tempstate<pid>-<n>", are fsync'd and put in place at
// finish() as one file set (core/file_set.hpp) anchored at the prefix: saving over an existing prefix
// leaves at every instant the complete old checkpoint or the complete new one, and a writer that dies
// (or is destroyed without finish()) leaves nothing new under the final names. finish_into() adds the
// bundle's files to a larger set instead (a Saver's .meta, a SavedModel's saved_model.pb).
// The index is an uncompressed table with TF's defaults; header 08 01 1A 02 08 01.
#pragma once

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "graft/core/file_set.hpp"
#include "graft/core/io.hpp"
#include "graft/core/tensor.hpp"
#include "graft/formats/tf/bundle.hpp"
#include "graft/formats/tf/ckpt_proto.hpp"
#include "graft/formats/tf/crc32c.hpp"
#include "graft/formats/tf/sstable.hpp"
#include "graft/formats/tf/tensor_slice.hpp"

namespace graft::tf {

struct bundle_write_options {
    bool sync = true;                ///< fsync each file (and the directory) before/after its rename
    std::size_t data_alignment = 1;  ///< pad each tensor's data to this many bytes (TF's default: 1, packed)
};

class bundle_writer {
public:
    /// Starts a bundle at `prefix` (creating its directory). Throws io_error.
    explicit bundle_writer(std::string prefix, bundle_write_options options = {})
        : prefix_(std::move(prefix)), opt_(options) {
        if (opt_.data_alignment == 0) opt_.data_alignment = 1;
        auto dir = std::filesystem::path(prefix_).parent_path();
        std::error_code ec;
        if (!dir.empty()) std::filesystem::create_directories(dir, ec);
        data_ = std::make_unique<atomic_file>(bundle_data_filename(prefix_, 0, 1));
        buf_.reserve(buffer_size);
    }
    bundle_writer(const bundle_writer&) = delete;
    bundle_writer& operator=(const bundle_writer&) = delete;
    /// Without finish(), removes the temporary files; nothing appears under the final names.
    ~bundle_writer() = default;

    /// Appends `value` under `name`. Throws invalid_argument_error (empty or duplicate name, invalid or
    /// device tensor), unimplemented_error (dtype with no portable layout), io_error.
    void add(std::string_view name, const tensor& value) {
        check_open();
        if (name.empty()) throw invalid_argument_error("bundle_writer::add: empty tensor name (reserved for the header)");
        if (entries_.count(std::string(name))) {
            throw invalid_argument_error(graft::detail::cat("bundle_writer::add: duplicate tensor name '", name, "'"),
                                         location::at_tensor(std::string(name)));
        }
        check_value(name, value);
        proto::bundle_entry e;
        e.type = value.type();
        e.shape = value.shape();
        e.offset = static_cast<std::int64_t>(size_);
        try {
            std::uint32_t crc = 0;
            std::uint64_t n = value.type() == dtype::string ? append_strings(value, crc) : append_pod(value, crc);
            e.size = static_cast<std::int64_t>(n);
            e.crc32c = crc32c::mask(crc);
            pad();
        } catch (...) {
            failed_ = true;
            throw;
        }
        entries_.emplace(std::string(name), std::move(e));
    }

    /// Appends one slice of the partitioned tensor `name` whose full shape is `full_shape`; a slice that
    /// covers the whole tensor is stored as a plain tensor (like TF). Throws invalid_argument_error
    /// (slice does not fit, dtype/shape disagree with earlier slices, name already a plain tensor),
    /// unimplemented_error, io_error.
    void add_slice(std::string_view name, const graft::shape& full_shape, const tensor_slice& slice, const tensor& value) {
        check_open();
        if (name.empty()) throw invalid_argument_error("bundle_writer::add_slice: empty tensor name");
        if (slice.covers_all(full_shape) || (slice.is_full() && slice.rank() == full_shape.rank())) {
            add(name, value);
            return;
        }
        const graft::shape want = slice.slice_shape(full_shape);
        check_value(name, value);
        if (!(value.shape() == want)) {
            throw invalid_argument_error(graft::detail::cat("bundle_writer::add_slice: slice ", slice.str(), " of ",
                                                            full_shape.str(), " needs shape ", want.str(), ", got ",
                                                            value.describe()),
                                         location::at_tensor(std::string(name)));
        }
        auto it = entries_.find(std::string(name));
        if (it != entries_.end()) {
            const auto& f = it->second;
            if (f.slices.empty() || f.type != value.type() || !(f.shape == full_shape)) {
                throw invalid_argument_error(graft::detail::cat("bundle_writer::add_slice: '", name,
                                                                "' was already added as ", dtype_name(f.type), f.shape.str(),
                                                                f.slices.empty() ? " (unpartitioned)" : ""),
                                             location::at_tensor(std::string(name)));
            }
            for (const auto& s : f.slices) {
                if (s == slice) {
                    throw invalid_argument_error(graft::detail::cat("bundle_writer::add_slice: slice ", slice.str(), " of '",
                                                                    name, "' added twice"),
                                                 location::at_tensor(std::string(name)));
                }
            }
        }
        add(encode_slice_key(name, slice), value);
        auto& full = entries_[std::string(name)];
        full.type = value.type();
        full.shape = full_shape;
        full.slices.push_back(slice);
    }

    /// Writes the index; renames data then index into place. Throws io_error; invalid_argument_error when
    /// called twice or after a failed add.
    void finish() {
        file_set_writer set(prefix_, opt_.sync);
        finish_into(set);
        set.commit();
    }
    /// Writes the index and hands both files to `set` (data first, index last), which puts them in
    /// place at its commit(). Throws like finish().
    void finish_into(file_set_writer& set) {
        check_open();
        finished_ = true;
        flush();
        set.adopt(std::move(data_));
        proto::bundle_header h;  // num_shards 1, little-endian, version {producer 1}
        sstable::table_builder b;
        b.add("", proto::encode(h));
        for (const auto& [k, e] : entries_) b.add(k, proto::encode(e));
        set.add(bundle_index_filename(prefix_)).write(b.finish());
    }

    [[nodiscard]] const std::string& prefix() const { return prefix_; }
    /// Bytes of tensor data written so far. Never throws.
    [[nodiscard]] std::uint64_t data_bytes() const { return size_; }

private:
    static constexpr std::size_t buffer_size = 8u << 20;
    static constexpr std::size_t direct_threshold = 1u << 20;

    void check_open() const {
        if (finished_) throw invalid_argument_error("bundle_writer used after finish()");
        if (failed_) throw invalid_argument_error("bundle_writer used after a failed add()", {}, "start a new writer");
    }
    static void check_value(std::string_view name, const tensor& v) {
        if (!v.valid()) throw invalid_argument_error("bundle_writer: empty (invalid) tensor", location::at_tensor(std::string(name)));
        if (!v.on_host()) {
            throw invalid_argument_error(graft::detail::cat("bundle_writer: tensor lives on ", v.dev().str()),
                                         location::at_tensor(std::string(name)), "copy it to the host first");
        }
        if (v.type() != dtype::string && !is_pod_dtype(v.type())) {
            throw unimplemented_error(graft::detail::cat("bundle_writer: cannot save dtype ", dtype_name(v.type())),
                                      location::at_tensor(std::string(name)), "resource and variant tensors cannot be saved");
        }
    }
    void put(const void* p, std::size_t n) {
        if (n >= direct_threshold) {
            flush();
            data_->write(p, n);
        } else {
            if (buf_.size() + n > buffer_size) flush();
            buf_.append(static_cast<const char*>(p), n);
        }
        size_ += n;
    }
    void flush() {
        if (!buf_.empty()) data_->write(buf_.data(), buf_.size());
        buf_.clear();
    }
    void pad() {
        const std::size_t over = size_ % opt_.data_alignment;
        if (over) {
            std::string zeros(opt_.data_alignment - over, '\0');
            put(zeros.data(), zeros.size());
        }
    }
    std::uint64_t append_pod(const tensor& v, std::uint32_t& crc) {
        const std::size_t n = v.nbytes();
        const char* p = static_cast<const char*>(v.raw_data());
        if (n < direct_threshold) {
            crc = crc32c::value(p, n);
            put(p, n);
            return n;
        }
        // Large tensors: checksum each chunk right before write() copies it, while it is in cache.
        flush();
        constexpr std::size_t chunk = 512u << 10;
        crc = 0;
        for (std::size_t done = 0; done < n; done += chunk) {
            const std::size_t k = std::min(chunk, n - done);
            crc = crc32c::extend(crc, p + done, k);
            data_->write(p + done, k);
        }
        size_ += n;
        return n;
    }
    std::uint64_t append_strings(const tensor& v, std::uint32_t& crc) {
        const auto* s = v.data<std::string>();
        const auto count = static_cast<std::size_t>(v.num_elements());
        std::string lens;
        crc = 0;
        for (std::size_t i = 0; i < count; ++i) {
            const std::uint64_t l = s[i].size();
            wire::put_varint(lens, l);
            unsigned char b[8];
            const int w = l <= 0xFFFFFFFFull ? 4 : 8;
            for (int k = 0; k < w; ++k) b[k] = static_cast<unsigned char>(l >> (8 * k));
            crc = crc32c::extend(crc, b, static_cast<std::size_t>(w));
        }
        std::string sum;
        wire::put_fixed32(sum, crc32c::mask(crc));
        crc = crc32c::extend(crc, sum);
        put(lens.data(), lens.size());
        put(sum.data(), 4);
        std::uint64_t total = lens.size() + 4;
        for (std::size_t i = 0; i < count; ++i) {
            crc = crc32c::extend(crc, s[i]);
            put(s[i].data(), s[i].size());
            total += s[i].size();
        }
        return total;
    }

    std::string prefix_;
    bundle_write_options opt_;
    std::unique_ptr<atomic_file> data_;
    std::string buf_;
    std::uint64_t size_ = 0;
    std::map<std::string, proto::bundle_entry> entries_;
    bool finished_ = false, failed_ = false;
};

}  // namespace graft::tf
