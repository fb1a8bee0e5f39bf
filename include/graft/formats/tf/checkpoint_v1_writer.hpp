// graft/formats/tf/checkpoint_v1_writer.hpp — writing deprecated V1 checkpoints (TF's TensorSliceWriter, what
// the V1 Saver's Save / SaveSlices ops write): one uncompressed table per file; key "" holds
// SavedTensorSlices.meta (every tensor's name, full shape, dtype and stored slices, then VersionDef
// producer 1), and each slice is an entry under its slice key whose SavedSlice carries a TensorProto
// with only the typed repeated field (float_val, int_val, ...). graft::tf::v1_reader reads it back.
//
//   graft::tf::v1_writer w("/export/export-00000-of-00001");
//   w.add("a", graft::tensor::scalar_of(0.5f));
//   w.add_slice("emb", {10, 4}, graft::tf::tensor_slice::parse("0,5:-"), rows_0_to_4);
//   w.finish();   // "<file>.tempstate<random>", fsync, rename: readers never see half a file
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "graft/core/io.hpp"
#include "graft/core/tensor.hpp"
#include "graft/formats/tf/ckpt_proto.hpp"
#include "graft/formats/tf/sstable.hpp"
#include "graft/formats/tf/tensor_slice.hpp"
#include "graft/formats/tf/wire.hpp"

namespace graft::tf {

namespace v1_detail {

/// The typed TensorProto field of `t`'s values, as TF's TensorSliceWriter fills it (packed repeated
/// scalars, repeated bytes for strings). Throws unimplemented_error for a dtype V1 cannot hold.
inline std::string encode_values(const tensor& t, const std::string& name) {
    wire::writer w;
    std::string packed;
    const std::int64_t n = t.num_elements();
    auto varints = [&](std::uint32_t field, auto get) {
        for (std::int64_t i = 0; i < n; ++i) wire::put_varint(packed, get(i));
        if (n) w.bytes(field, packed);
    };
    auto as_u64 = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    switch (t.type()) {
        case dtype::float32:
            for (std::int64_t i = 0; i < n; ++i) {
                std::uint32_t b;
                std::memcpy(&b, t.data<float>() + i, 4);
                wire::put_fixed32(packed, b);
            }
            if (n) w.bytes(5, packed);
            break;
        case dtype::float64:
            for (std::int64_t i = 0; i < n; ++i) {
                std::uint64_t b;
                std::memcpy(&b, t.data<double>() + i, 8);
                wire::put_fixed64(packed, b);
            }
            if (n) w.bytes(6, packed);
            break;
        case dtype::complex64:
            for (std::int64_t i = 0; i < 2 * n; ++i) {
                std::uint32_t b;
                std::memcpy(&b, reinterpret_cast<const float*>(t.data<std::complex<float>>()) + i, 4);
                wire::put_fixed32(packed, b);
            }
            if (n) w.bytes(9, packed);
            break;
        case dtype::complex128:
            for (std::int64_t i = 0; i < 2 * n; ++i) {
                std::uint64_t b;
                std::memcpy(&b, reinterpret_cast<const double*>(t.data<std::complex<double>>()) + i, 8);
                wire::put_fixed64(packed, b);
            }
            if (n) w.bytes(12, packed);
            break;
        case dtype::int32: varints(7, [&](std::int64_t i) { return as_u64(t.data<std::int32_t>()[i]); }); break;
        case dtype::int16: varints(7, [&](std::int64_t i) { return as_u64(t.data<std::int16_t>()[i]); }); break;
        case dtype::int8: varints(7, [&](std::int64_t i) { return as_u64(t.data<std::int8_t>()[i]); }); break;
        case dtype::uint8: varints(7, [&](std::int64_t i) { return std::uint64_t{t.data<std::uint8_t>()[i]}; }); break;
        case dtype::int64: varints(10, [&](std::int64_t i) { return as_u64(t.data<std::int64_t>()[i]); }); break;
        case dtype::bool_: varints(11, [&](std::int64_t i) { return std::uint64_t{t.data<bool>()[i] ? 1u : 0u}; }); break;
        case dtype::float16:
            varints(13, [&](std::int64_t i) {
                std::uint16_t b;
                std::memcpy(&b, t.data<half>() + i, 2);
                return std::uint64_t{b};
            });
            break;
        case dtype::string:
            for (std::int64_t i = 0; i < n; ++i) w.bytes(8, t.data<std::string>()[i]);
            break;
        default:
            throw unimplemented_error(graft::detail::cat("a V1 checkpoint cannot hold '", name, "' of dtype ",
                                                         dtype_name(t.type())),
                                      location::at_tensor(name), "save it with SaveV2 (a V2 checkpoint) instead");
    }
    return std::move(w).str();
}

/// True when slices a and b of `full` share an element. Never throws.
inline bool overlap(const tensor_slice& a, const tensor_slice& b, const graft::shape& full) {
    for (int d = 0; d < full.rank(); ++d) {
        const std::int64_t a0 = a.start_in(d), a1 = a0 + a.length_in(d, full);
        const std::int64_t b0 = b.start_in(d), b1 = b0 + b.length_in(d, full);
        if (a1 <= b0 || b1 <= a0) return false;
    }
    return true;
}

}  // namespace v1_detail

class v1_writer {
public:
    /// Writes to `filename` (the whole path: V1 files have no suffix) at finish(). Never throws
    /// (except bad_alloc).
    explicit v1_writer(std::string filename) : filename_(std::move(filename)) {}

    /// Adds the whole tensor `t` as `name`. Throws like add_slice().
    void add(std::string_view name, const tensor& t) { add_slice(name, t.shape(), tensor_slice(t.rank()), t); }

    /// Adds `part`, the values of slice `s` of tensor `name` whose full shape is `full`. Throws
    /// invalid_argument_error for a slice that does not fit `full`, a `part` of another shape, a name
    /// added before with another dtype or full shape, or a slice overlapping one added before (TF's
    /// messages); unimplemented_error for a dtype V1 cannot hold.
    void add_slice(std::string_view name, const graft::shape& full, const tensor_slice& s, const tensor& part) {
        const std::string key(name);
        const auto where = location::at_tensor(key);
        if (!full.fully_defined()) {
            throw invalid_argument_error(graft::detail::cat("V1 tensor '", key, "' needs a fully defined shape, given ",
                                                            full.str()),
                                         where);
        }
        if (s.rank() != full.rank()) {
            throw invalid_argument_error(graft::detail::cat("slice ", s.str(), " of '", key, "' has rank ", s.rank(),
                                                            " but the tensor's shape ", full.str(), " has rank ", full.rank()),
                                         where);
        }
        s.check_fits(full);
        if (!(part.shape() == s.slice_shape(full))) {
            throw invalid_argument_error(graft::detail::cat("slice ", s.str(), " of '", key, "' ", full.str(), " has shape ",
                                                            s.slice_shape(full).str(), " but the data given is ",
                                                            part.describe()),
                                         where);
        }
        if (!part.on_host()) throw invalid_argument_error("V1 checkpoint data must be on the host", where);
        std::string values = v1_detail::encode_values(part, key);
        // TF's conservative per-slice cap: the SavedSlice message must stay under protobuf's 2 GB.
        if (values.size() > (std::size_t{1} << 31) - 1024) {
            throw invalid_argument_error(graft::detail::cat("Tensor slice is too large to serialize (", values.size(),
                                                            " bytes) for '", key, "'"),
                                         where, "partition the variable or save a V2 checkpoint");
        }
        auto it = index_.find(key);
        if (it == index_.end()) {
            it = index_.emplace(key, tensors_.size()).first;
            tensors_.push_back({key, part.type(), full, {}});
        }
        auto& m = tensors_[it->second];
        if (m.type != part.type() || !(m.shape == full)) {
            throw invalid_argument_error(graft::detail::cat("Mismatching shapes: existing tensor = ", dtype_name(m.type),
                                                            m.shape.str(), ", trying to add name ", key, ", shape = ",
                                                            dtype_name(part.type()), full.str()),
                                         where);
        }
        for (const auto& old : m.slices) {
            if (v1_detail::overlap(old, s, full)) {
                throw invalid_argument_error(graft::detail::cat("Overlapping slices: existing slice = ", old.str(),
                                                                ", new slice = ", s.str()),
                                             where);
            }
        }
        m.slices.push_back(s);
        wire::writer saved, slices;
        saved.bytes(1, key);
        saved.message(2, proto::encode(s));
        saved.message(3, values);
        slices.message(2, saved.str());
        data_[encode_slice_key(key, s)] = std::move(slices).str();
    }

    /// Builds the table (meta entry first, then the slices in key order) and renames it into place.
    /// Throws io_error (cannot write), invalid_argument_error when called twice.
    void finish(bool sync = true) {
        if (done_) throw invalid_argument_error("v1_writer::finish called twice", location::in_file(filename_));
        done_ = true;
        wire::writer meta, top;
        for (const auto& t : tensors_) {
            wire::writer m;
            m.bytes(1, t.name);
            m.message(2, proto::encode(t.shape));
            m.int32(3, static_cast<std::int32_t>(t.type));
            for (const auto& s : t.slices) m.message(4, proto::encode(s));
            meta.message(1, m.str());
        }
        proto::version_def v;
        v.producer = 1;  // TF_CHECKPOINT_VERSION
        meta.message(2, proto::encode(v));
        top.message(1, meta.str());
        sstable::table_builder b;
        b.add("", top.str());
        for (const auto& [k, value] : data_) b.add(k, value);
        atomic_file f(filename_);
        f.write(b.finish());
        f.commit(sync);
    }

    [[nodiscard]] const std::string& filename() const { return filename_; }

private:
    struct tensor_meta {
        std::string name;
        dtype type = dtype::invalid;
        graft::shape shape;
        std::vector<tensor_slice> slices;
    };
    std::string filename_;
    std::vector<tensor_meta> tensors_;
    std::map<std::string, std::size_t> index_;
    std::map<std::string, std::string> data_;
    bool done_ = false;
};

}  // namespace graft::tf
