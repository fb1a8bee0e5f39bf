// graft/formats/tf/ckpt_proto.hpp — the few TF messages a checkpoint holds, decoded and encoded with
// graft/formats/tf/wire.hpp (no generated protobuf code): VersionDef, TensorSliceProto, BundleHeaderProto,
// BundleEntryProto, and the V1 SavedTensorSlices family. Encoders write the bytes protoc's C++
// serializer writes (field-number order, proto3 zero omission), so a bundle graft writes is
// byte-identical to TensorFlow's. TensorShapeProto and TensorProto: tensor_proto.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graft/core/dtype.hpp"
#include "graft/core/shape.hpp"
#include "graft/formats/tf/tensor_proto.hpp"
#include "graft/formats/tf/tensor_slice.hpp"
#include "graft/formats/tf/wire.hpp"

namespace graft::tf::proto {

using wire::reader;
using wire::wire_type;

/// VersionDef {producer = 1; min_consumer = 2; repeated bad_consumers = 3}.
struct version_def {
    std::int32_t producer = 0;
    std::int32_t min_consumer = 0;
    std::vector<std::int32_t> bad_consumers;
    friend bool operator==(const version_def&, const version_def&) = default;
};

/// Decodes a VersionDef. Throws format_error.
inline version_def decode_version(reader r) {
    version_def v;
    std::uint32_t f;
    wire_type wt;
    while (r.next(f, wt)) {
        if (f == 1 && wt == wire_type::varint) v.producer = r.int32();
        else if (f == 2 && wt == wire_type::varint) v.min_consumer = r.int32();
        else if (f == 3) r.varints(wt, [&](std::uint64_t x) { v.bad_consumers.push_back(static_cast<std::int32_t>(x)); });
        else r.skip(wt);
    }
    return v;
}
/// Encodes a VersionDef (bad_consumers packed). Never throws (except bad_alloc).
inline std::string encode(const version_def& v) {
    wire::writer w;
    w.opt_int32(1, v.producer);
    w.opt_int32(2, v.min_consumer);
    if (!v.bad_consumers.empty()) {
        std::string packed;
        for (auto b : v.bad_consumers) wire::put_varint(packed, static_cast<std::uint64_t>(static_cast<std::int64_t>(b)));
        w.bytes(3, packed);
    }
    return std::move(w).str();
}

/// Decodes a TensorSliceProto (an extent without `length` is a full dimension). Throws format_error.
inline tensor_slice decode_slice(reader r) {
    tensor_slice s;
    std::uint32_t f;
    wire_type wt;
    while (r.next(f, wt)) {
        if (f == 1 && wt == wire_type::bytes) {
            const auto at = r.offset();
            reader e = r.message("TensorSliceProto.Extent");
            std::int64_t start = 0, length = tensor_slice::full_extent;
            std::uint32_t g;
            wire_type wt2;
            while (e.next(g, wt2)) {
                if (g == 1 && wt2 == wire_type::varint) start = e.int64();
                else if (g == 2 && wt2 == wire_type::varint) length = e.int64();
                else e.skip(wt2);
            }
            if (s.rank() >= 254 || start < 0 || length < tensor_slice::full_extent ||
                (length > 0 && start > INT64_MAX - length)) {
                wire::reader(std::string_view(), r.file(), at, "TensorSliceProto").fail(
                    graft::detail::cat("bad extent start=", start, " length=", length));
            }
            if (length == tensor_slice::full_extent) start = 0;
            s.add(start, length);
        } else {
            r.skip(wt);
        }
    }
    return s;
}
/// Encodes a TensorSliceProto like TF (a full dimension is an empty Extent). Never throws (except bad_alloc).
inline std::string encode(const tensor_slice& s) {
    wire::writer w;
    for (int d = 0; d < s.rank(); ++d) {
        wire::writer e;
        if (!s.is_full_at(d)) {
            e.opt_int64(1, s.start(d));
            e.int64(2, s.length(d));
        }
        w.message(1, e.str());
    }
    return std::move(w).str();
}

/// BundleHeaderProto {num_shards = 1; endianness = 2 (0 little, 1 big); version = 3}.
struct bundle_header {
    std::int32_t num_shards = 1;
    std::int32_t endianness = 0;
    version_def version{1, 0, {}};
};
/// Decodes a BundleHeaderProto. Throws format_error.
inline bundle_header decode_header(reader r) {
    bundle_header h;
    h.num_shards = 0;
    h.version = {};
    std::uint32_t f;
    wire_type wt;
    while (r.next(f, wt)) {
        if (f == 1 && wt == wire_type::varint) h.num_shards = r.int32();
        else if (f == 2 && wt == wire_type::varint) h.endianness = r.int32();
        else if (f == 3 && wt == wire_type::bytes) h.version = decode_version(r.message("VersionDef"));
        else r.skip(wt);
    }
    return h;
}
/// Encodes a BundleHeaderProto (TF's default: 08 01 1A 02 08 01). Never throws (except bad_alloc).
inline std::string encode(const bundle_header& h) {
    wire::writer w;
    w.opt_int32(1, h.num_shards);
    w.opt_int32(2, h.endianness);
    w.message(3, encode(h.version));
    return std::move(w).str();
}

/// BundleEntryProto: where one tensor (or one slice, or a partitioned tensor's full entry) lives.
struct bundle_entry {
    dtype type = dtype::invalid;  ///< raw enum value (may be one graft does not know)
    graft::shape shape;
    std::int32_t shard_id = 0;
    std::int64_t offset = 0;
    std::int64_t size = 0;
    std::uint32_t crc32c = 0;  ///< masked, as stored
    std::vector<tensor_slice> slices;  ///< non-empty only on a partitioned tensor's full entry
};
/// Decodes a BundleEntryProto. Throws format_error.
inline bundle_entry decode_entry(reader r) {
    bundle_entry e;
    std::uint32_t f;
    wire_type wt;
    while (r.next(f, wt)) {
        switch (f) {
            case 1: r.expect(wt, wire_type::varint); e.type = static_cast<dtype>(r.int32()); break;
            case 2: r.expect(wt, wire_type::bytes); e.shape = decode_shape(r.message("TensorShapeProto")); break;
            case 3: r.expect(wt, wire_type::varint); e.shard_id = r.int32(); break;
            case 4: r.expect(wt, wire_type::varint); e.offset = r.int64(); break;
            case 5: r.expect(wt, wire_type::varint); e.size = r.int64(); break;
            case 6: r.expect(wt, wire_type::fixed32); e.crc32c = r.fixed32(); break;
            case 7: r.expect(wt, wire_type::bytes); e.slices.push_back(decode_slice(r.message("TensorSliceProto"))); break;
            default: r.skip(wt);
        }
    }
    return e;
}
/// Encodes a BundleEntryProto exactly as TF's BundleWriter does (shape always present). Never throws
/// (except bad_alloc).
inline std::string encode(const bundle_entry& e) {
    wire::writer w;
    w.opt_int32(1, static_cast<std::int32_t>(e.type));
    w.message(2, encode(e.shape));
    w.opt_int32(3, e.shard_id);
    w.opt_int64(4, e.offset);
    w.opt_int64(5, e.size);
    w.opt_fixed32(6, e.crc32c);
    for (const auto& s : e.slices) w.message(7, encode(s));
    return std::move(w).str();
}

// ------------------------------------------------------------------ V1 (SavedTensorSlices)

/// SavedSliceMeta {name = 1; shape = 2; type = 3; repeated slice = 4}.
struct saved_slice_meta {
    std::string name;
    graft::shape shape;
    dtype type = dtype::invalid;
    std::vector<tensor_slice> slices;
};
/// SavedTensorSliceMeta {repeated tensor = 1; versions = 2}.
struct saved_tensor_slice_meta {
    std::vector<saved_slice_meta> tensors;
    version_def versions;
};

/// Decodes the "" entry of a V1 file: SavedTensorSlices.meta. Throws format_error when it has no meta.
inline saved_tensor_slice_meta decode_v1_meta(reader r) {
    saved_tensor_slice_meta m;
    bool seen = false;
    std::uint32_t f;
    wire_type wt;
    while (r.next(f, wt)) {
        if (f != 1 || wt != wire_type::bytes) { r.skip(wt); continue; }
        seen = true;
        reader mr = r.message("SavedTensorSliceMeta");
        std::uint32_t g;
        wire_type wt2;
        while (mr.next(g, wt2)) {
            if (g == 1 && wt2 == wire_type::bytes) {
                reader t = mr.message("SavedSliceMeta");
                saved_slice_meta s;
                std::uint32_t h;
                wire_type wt3;
                while (t.next(h, wt3)) {
                    if (h == 1 && wt3 == wire_type::bytes) s.name = std::string(t.bytes());
                    else if (h == 2 && wt3 == wire_type::bytes) s.shape = decode_shape(t.message("TensorShapeProto"));
                    else if (h == 3 && wt3 == wire_type::varint) s.type = static_cast<dtype>(t.int32());
                    else if (h == 4 && wt3 == wire_type::bytes) s.slices.push_back(decode_slice(t.message("TensorSliceProto")));
                    else t.skip(wt3);
                }
                m.tensors.push_back(std::move(s));
            } else if (g == 2 && wt2 == wire_type::bytes) {
                m.versions = decode_version(mr.message("VersionDef"));
            } else {
                mr.skip(wt2);
            }
        }
    }
    if (!seen) r.fail("V1 checkpoint header has no SavedTensorSliceMeta");
    return m;
}

/// SavedSlice {name = 1; slice = 2; data = 3 (TensorProto bytes)}.
struct saved_slice {
    std::string name;
    tensor_slice slice;
    std::string_view data;       ///< encoded TensorProto (a view into the input)
    std::uint64_t data_offset = 0;
};
/// Decodes SavedTensorSlices.data of a V1 slice entry. Throws format_error when it has no data.
inline saved_slice decode_v1_slice(reader r) {
    saved_slice s;
    bool seen = false;
    std::uint32_t f;
    wire_type wt;
    while (r.next(f, wt)) {
        if (f != 2 || wt != wire_type::bytes) { r.skip(wt); continue; }
        seen = true;
        reader d = r.message("SavedSlice");
        std::uint32_t g;
        wire_type wt2;
        while (d.next(g, wt2)) {
            if (g == 1 && wt2 == wire_type::bytes) s.name = std::string(d.bytes());
            else if (g == 2 && wt2 == wire_type::bytes) s.slice = decode_slice(d.message("TensorSliceProto"));
            else if (g == 3 && wt2 == wire_type::bytes) s.data = d.bytes(s.data_offset);
            else {
                d.skip(wt2);
            }
        }
    }
    if (!seen) r.fail("V1 slice entry has no SavedSlice data");
    return s;
}

}  // namespace graft::tf::proto
