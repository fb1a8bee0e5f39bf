// graft/tf/wire.hpp — a minimal protobuf wire-format reader and writer, no generated code.
//
//   graft::tf::wire::reader r(bytes, "model.ckpt.index", block_offset);
//   std::uint32_t field; graft::tf::wire::wire_type wt;
//   while (r.next(field, wt)) {
//       if (field == 1 && wt == wire_type::varint) n = r.int32();
//       else r.skip(wt);                       // unknown fields are skipped
//   }
//
//   graft::tf::wire::writer w;                 // fields in field-number order, like protoc's C++
//   w.opt_int32(1, num_shards);                // proto3: zero values are omitted
//   w.message(3, version_bytes);
//
// Every read is bounds-checked; errors are graft::format_error naming the file (when given), the
// absolute byte offset and the message being decoded. The checkpoint layer decodes
// BundleHeaderProto, BundleEntryProto, TensorShapeProto, TensorSliceProto, SavedTensorSlices and
// TensorProto with it (see ckpt_proto.hpp), so reading checkpoints needs no protobuf library.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "graft/core/error.hpp"
#include "graft/core/limits.hpp"

namespace graft::tf::wire {

enum class wire_type : std::uint8_t { varint = 0, fixed64 = 1, bytes = 2, start_group = 3, end_group = 4, fixed32 = 5 };

/// Appends a base-128 varint. Never throws (except bad_alloc).
inline void put_varint(std::string& out, std::uint64_t v) {
    char buf[10];
    int n = 0;
    while (v >= 0x80) {
        buf[n++] = static_cast<char>((v & 0x7F) | 0x80);
        v >>= 7;
    }
    buf[n++] = static_cast<char>(v);
    out.append(buf, static_cast<std::size_t>(n));
}
/// Appends a little-endian fixed32. Never throws (except bad_alloc).
inline void put_fixed32(std::string& out, std::uint32_t v) {
    char b[4];
    for (int i = 0; i < 4; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
    out.append(b, 4);
}
/// Appends a little-endian fixed64. Never throws (except bad_alloc).
inline void put_fixed64(std::string& out, std::uint64_t v) {
    char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
    out.append(b, 8);
}
/// Number of bytes put_varint writes for v. Never throws.
constexpr std::size_t varint_size(std::uint64_t v) {
    std::size_t n = 1;
    while (v >= 0x80) { v >>= 7; ++n; }
    return n;
}
/// Reads a little-endian fixed32 from 4 bytes at p (caller checks bounds). Never throws.
inline std::uint32_t load_fixed32(const char* p) {
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
    return v;
}
/// Reads a little-endian fixed64 from 8 bytes at p (caller checks bounds). Never throws.
inline std::uint64_t load_fixed64(const char* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
    return v;
}

/// Decodes a varint at p (at most `max_bytes` long, within [p, end)); advances p. Returns false when
/// truncated or too long. Never throws.
inline bool get_varint(const char*& p, const char* end, std::uint64_t& out, int max_bytes = 10) {
    std::uint64_t v = 0;
    for (int i = 0; i < max_bytes && p < end; ++i) {
        auto b = static_cast<unsigned char>(*p++);
        v |= static_cast<std::uint64_t>(b & 0x7F) << (7 * i);
        if (!(b & 0x80)) {
            out = v;
            return true;
        }
    }
    return false;
}

/// Sequential, bounds-checked decoder of one message's bytes.
class reader {
public:
    /// Decodes `data`, whose first byte lies at `base` in `file`; `what` names the message in errors.
    explicit reader(std::string_view data, std::string_view file = {}, std::uint64_t base = 0,
                    std::string_view what = "protobuf message")
        : p_(data.data()), begin_(data.data()), end_(data.data() + data.size()), file_(file), base_(base),
          what_(what) {}

    /// True when every byte was consumed. Never throws.
    [[nodiscard]] bool done() const { return p_ >= end_; }
    /// Absolute offset of the next unread byte. Never throws.
    [[nodiscard]] std::uint64_t offset() const { return base_ + static_cast<std::uint64_t>(p_ - begin_); }

    /// Reads the next tag; false at the end of the message. Throws format_error on a bad tag.
    bool next(std::uint32_t& field, wire_type& wt) {
        if (p_ >= end_) return false;
        std::uint64_t tag = varint();
        field = static_cast<std::uint32_t>(tag >> 3);
        auto t = static_cast<std::uint32_t>(tag & 7);
        if (field == 0 || tag >> 32 || t > 5) fail(graft::detail::cat("invalid field tag ", tag));
        wt = static_cast<wire_type>(t);
        return true;
    }

    /// A varint. Throws format_error when truncated or longer than 10 bytes.
    std::uint64_t varint() {
        std::uint64_t v = 0;
        const char* start = p_;
        if (!get_varint(p_, end_, v)) {
            p_ = start;
            fail("truncated or overlong varint");
        }
        return v;
    }
    /// An int32 field (negative values arrive as 10-byte varints). Throws format_error.
    std::int32_t int32() { return static_cast<std::int32_t>(static_cast<std::uint32_t>(varint())); }
    /// An int64 field. Throws format_error.
    std::int64_t int64() { return static_cast<std::int64_t>(varint()); }
    /// A bool field. Throws format_error.
    bool boolean() { return varint() != 0; }
    /// A fixed32. Throws format_error when truncated.
    std::uint32_t fixed32() {
        need(4);
        auto v = load_fixed32(p_);
        p_ += 4;
        return v;
    }
    /// A fixed64. Throws format_error when truncated.
    std::uint64_t fixed64() {
        need(8);
        auto v = load_fixed64(p_);
        p_ += 8;
        return v;
    }
    /// A length-delimited field's bytes (a view into the input). Throws format_error when truncated.
    std::string_view bytes() {
        std::uint64_t n = varint();
        need(n);
        std::string_view s(p_, static_cast<std::size_t>(n));
        p_ += n;
        return s;
    }
    /// A length-delimited field's bytes; `at` receives their absolute offset. Throws format_error.
    std::string_view bytes(std::uint64_t& at) {
        std::uint64_t n = varint();
        need(n);
        at = offset();
        std::string_view s(p_, static_cast<std::size_t>(n));
        p_ += n;
        return s;
    }
    /// A reader over a length-delimited sub-message. Throws format_error when truncated.
    reader message(std::string_view what) {
        std::uint64_t at = 0;
        std::string_view b = bytes(at);
        const int limit = graft::detail::max_message_depth();
        if (depth_ + 1 > limit) {
            location where;
            where.file = std::string(file_);
            where.offset = at;
            throw format_error(graft::detail::cat("protobuf messages in ", what_, " nest deeper than ", limit, " levels"),
                               where,
                               "a real file nests a few levels; if the file is trusted, raise "
                               "graft::load_limits::max_message_depth (graft::set_load_limits)");
        }
        reader r(b, file_, at, what);
        r.depth_ = depth_ + 1;
        return r;
    }
    /// Skips one field's value of the given wire type. Throws format_error (groups are rejected).
    void skip(wire_type wt) {
        switch (wt) {
            case wire_type::varint: (void)varint(); break;
            case wire_type::fixed64: need(8); p_ += 8; break;
            case wire_type::fixed32: need(4); p_ += 4; break;
            case wire_type::bytes: (void)bytes(); break;
            default: fail("unsupported wire type (group)");
        }
    }
    /// Calls f(uint64) for each varint of a repeated field, packed (bytes) or not. Throws format_error.
    template <class F>
    void varints(wire_type wt, F&& f) {
        if (wt == wire_type::varint) { f(varint()); return; }
        expect(wt, wire_type::bytes);
        reader sub = message(what_);
        while (!sub.done()) f(sub.varint());
    }
    /// Calls f(uint32) for each fixed32 of a repeated field, packed or not. Throws format_error.
    template <class F>
    void fixed32s(wire_type wt, F&& f) {
        if (wt == wire_type::fixed32) { f(fixed32()); return; }
        expect(wt, wire_type::bytes);
        reader sub = message(what_);
        while (!sub.done()) f(sub.fixed32());
    }
    /// Calls f(uint64) for each fixed64 of a repeated field, packed or not. Throws format_error.
    template <class F>
    void fixed64s(wire_type wt, F&& f) {
        if (wt == wire_type::fixed64) { f(fixed64()); return; }
        expect(wt, wire_type::bytes);
        reader sub = message(what_);
        while (!sub.done()) f(sub.fixed64());
    }
    /// Throws format_error unless the field has the wire type the schema says.
    void expect(wire_type got, wire_type want) const {
        if (got != want) {
            fail(graft::detail::cat("field has wire type ", static_cast<int>(got), ", expected ", static_cast<int>(want)));
        }
    }
    /// Throws format_error with this reader's file, offset and message name.
    [[noreturn]] void fail(const std::string& msg) const {
        location where;
        where.file = std::string(file_);
        where.offset = offset();
        throw format_error(graft::detail::cat("bad ", what_, ": ", msg), where,
                           "the file is truncated or corrupt, or not the format expected here");
    }
    /// The file named in errors. Never throws.
    [[nodiscard]] std::string_view file() const { return file_; }

private:
    void need(std::uint64_t n) const {
        if (n > static_cast<std::uint64_t>(end_ - p_)) {
            fail(graft::detail::cat("needs ", n, " more bytes but only ", end_ - p_, " remain"));
        }
    }

    const char* p_;
    const char* begin_;
    const char* end_;
    std::string_view file_;
    std::uint64_t base_;
    std::string_view what_;
    int depth_ = 0;
};

/// Encoder that appends fields to a string. Call it in field-number order for protoc-identical bytes.
/// No method throws (except std::bad_alloc).
class writer {
public:
    /// A field key (number + wire type).
    void tag(std::uint32_t field, wire_type wt) {
        put_varint(out_, (static_cast<std::uint64_t>(field) << 3) | static_cast<std::uint32_t>(wt));
    }
    /// Varint fields, always written (for repeated/oneof/explicit fields).
    void uint64(std::uint32_t field, std::uint64_t v) { tag(field, wire_type::varint); put_varint(out_, v); }
    void int64(std::uint32_t field, std::int64_t v) { uint64(field, static_cast<std::uint64_t>(v)); }
    /// int32 and enums: negative values are sign-extended to 10 bytes, like protoc.
    void int32(std::uint32_t field, std::int32_t v) {
        uint64(field, static_cast<std::uint64_t>(static_cast<std::int64_t>(v)));
    }
    void boolean(std::uint32_t field, bool v) { uint64(field, v ? 1 : 0); }
    /// Fixed-width and length-delimited fields, always written.
    void fixed32(std::uint32_t field, std::uint32_t v) { tag(field, wire_type::fixed32); put_fixed32(out_, v); }
    void fixed64(std::uint32_t field, std::uint64_t v) { tag(field, wire_type::fixed64); put_fixed64(out_, v); }
    void bytes(std::uint32_t field, std::string_view b) {
        tag(field, wire_type::bytes);
        put_varint(out_, b.size());
        out_.append(b);
    }
    /// A sub-message given its encoded bytes (written even when empty).
    void message(std::uint32_t field, std::string_view encoded) { bytes(field, encoded); }

    /// proto3 singular fields: omitted when zero / empty.
    void opt_int32(std::uint32_t field, std::int32_t v) { if (v) int32(field, v); }
    void opt_int64(std::uint32_t field, std::int64_t v) { if (v) int64(field, v); }
    void opt_uint64(std::uint32_t field, std::uint64_t v) { if (v) uint64(field, v); }
    void opt_bool(std::uint32_t field, bool v) { if (v) boolean(field, v); }
    void opt_fixed32(std::uint32_t field, std::uint32_t v) { if (v) fixed32(field, v); }
    void opt_bytes(std::uint32_t field, std::string_view b) { if (!b.empty()) bytes(field, b); }
    void opt_double(std::uint32_t field, double v) {
        std::uint64_t bits;
        std::memcpy(&bits, &v, 8);
        if (bits) fixed64(field, bits);
    }

    /// The bytes written so far.
    [[nodiscard]] const std::string& str() const& { return out_; }
    [[nodiscard]] std::string str() && { return std::move(out_); }
    [[nodiscard]] std::string& buffer() { return out_; }

private:
    std::string out_;
};

}  // namespace graft::tf::wire
