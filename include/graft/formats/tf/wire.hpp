// graft/formats/tf/wire.hpp — graft's one protobuf wire-format codec: a bounds-checked reader and the
// writers, no generated code. Every binary TF message graft reads or writes goes through it:
// GraphDef / MetaGraphDef / SavedModel (src/formats/tf_graph/codec_*.cpp), TensorProto and TensorShapeProto
// (tensor_proto.hpp), the checkpoint messages (ckpt_proto.hpp), tf.Example, Event files.
//
//   graft::tf::wire::reader r(bytes, "model.ckpt.index", block_offset, "BundleEntryProto");
//   std::uint32_t field; graft::tf::wire::wire_type wt;
//   while (r.next(field, wt)) {
//       if (field == 1 && wt == wire_type::varint) n = r.int32();
//       else r.skip(wt);                       // unknown fields are skipped
//   }
//
//   graft::tf::wire::writer w;                 // fields in field-number order, like protoc's C++
//   w.opt_int32(1, num_shards);                // proto3: zero values are omitted
//   w.message(3, version_bytes);
//   graft::tf::wire::put_string(out, 1, name); // or append to a std::string directly
//
// Every read is bounds-checked; errors are graft::format_error naming the file (when given), the
// absolute byte offset and the message being decoded. Sub-messages and groups nest at most
// graft::load_limits::max_message_depth levels. libprotobuf is linked for the *text* format only
// (pbtxt graphs, checkpoint state files); binary messages never need it.
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

// ------------------------------------------------------------------ writing (appends to a string)

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
/// Appends a little-endian fixed32 (no tag). Never throws (except bad_alloc).
inline void put_fixed32(std::string& out, std::uint32_t v) {
    char b[4];
    for (int i = 0; i < 4; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
    out.append(b, 4);
}
/// Appends a little-endian fixed64 (no tag). Never throws (except bad_alloc).
inline void put_fixed64(std::string& out, std::uint64_t v) {
    char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
    out.append(b, 8);
}
/// Appends a field key (number + wire type). Never throws (except bad_alloc).
inline void put_tag(std::string& out, std::uint32_t field, wire_type wt) {
    put_varint(out, (static_cast<std::uint64_t>(field) << 3) | static_cast<std::uint32_t>(wt));
}
/// Appends a length-delimited field (bytes, string or encoded sub-message), even when empty.
inline void put_bytes(std::string& out, std::uint32_t field, std::string_view b) {
    put_tag(out, field, wire_type::bytes);
    put_varint(out, b.size());
    out.append(b);
}
/// proto3 singular scalars: omitted when zero / empty. Signed values are sign-extended, as protoc does.
inline void put_uint(std::string& out, std::uint32_t field, std::uint64_t v) {
    if (!v) return;
    put_tag(out, field, wire_type::varint);
    put_varint(out, v);
}
inline void put_int(std::string& out, std::uint32_t field, std::int64_t v) { put_uint(out, field, static_cast<std::uint64_t>(v)); }
inline void put_string(std::string& out, std::uint32_t field, std::string_view s) {
    if (!s.empty()) put_bytes(out, field, s);
}
inline void put_float(std::string& out, std::uint32_t field, float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    if (!u) return;
    put_tag(out, field, wire_type::fixed32);
    put_fixed32(out, u);
}
/// Appends a sub-message that f(std::string&) encodes, as field `field` (always present).
template <class F>
void put_message(std::string& out, std::uint32_t field, F&& f) {
    std::string sub;
    f(sub);
    put_bytes(out, field, sub);
}

/// Number of bytes put_varint writes for v. Never throws.
constexpr std::size_t varint_size(std::uint64_t v) {
    std::size_t n = 1;
    while (v >= 0x80) { v >>= 7; ++n; }
    return n;
}

// ------------------------------------------------------------------ reading

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

/// Sequential, bounds-checked decoder of one message's bytes. Copying a reader copies its cursor
/// (a cheap look-ahead).
class reader {
public:
    /// Decodes `data`, whose first byte lies at offset `base` in `file`; `what` names the message in
    /// errors.
    explicit reader(std::string_view data, std::string_view file = {}, std::uint64_t base = 0,
                    std::string_view what = "protobuf message")
        : p_(data.data()), begin_(data.data()), end_(data.data() + data.size()), file_(file), base_(base),
          what_(what) {}

    /// True when every byte was consumed. Never throws.
    [[nodiscard]] bool done() const { return p_ >= end_; }
    /// Absolute offset of the next unread byte. Never throws.
    [[nodiscard]] std::uint64_t offset() const { return offset_of(p_); }
    /// Absolute offset of p, a pointer into this reader's bytes (pos() taken earlier). Never throws.
    [[nodiscard]] std::uint64_t offset_of(const char* p) const { return base_ + static_cast<std::uint64_t>(p - begin_); }
    /// The next unread byte (to slice a field's raw bytes with a later pos()). Never throws.
    [[nodiscard]] const char* pos() const { return p_; }
    /// The unread bytes of this message. Never throws.
    [[nodiscard]] std::string_view rest() const { return {p_, static_cast<std::size_t>(end_ - p_)}; }
    /// How deep this message is nested (0 for the outermost). Never throws.
    [[nodiscard]] int depth() const { return depth_; }
    /// The file named in errors. Never throws.
    [[nodiscard]] std::string_view file() const { return file_; }

    /// Reads the next tag; false at the end of the message. Throws format_error on a bad tag.
    [[gnu::always_inline]] bool next(std::uint32_t& field, wire_type& wt) {
        if (p_ >= end_) return false;
        const std::uint64_t tag = varint();
        field = static_cast<std::uint32_t>(tag >> 3);
        const auto t = static_cast<std::uint32_t>(tag & 7);
        if (field == 0 || tag >> 32 || t > 5) [[unlikely]] fail(graft::detail::cat("invalid field tag ", tag));
        wt = static_cast<wire_type>(t);
        return true;
    }

    /// A varint. Throws format_error when truncated or longer than 10 bytes.
    [[gnu::always_inline]] std::uint64_t varint() {
        if (p_ < end_ && !(static_cast<unsigned char>(*p_) & 0x80)) return static_cast<unsigned char>(*p_++);
        return varint_slow();
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
    /// A float (fixed32) field. Throws format_error when truncated.
    float float32() {
        const std::uint32_t u = fixed32();
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    }
    /// A double (fixed64) field. Throws format_error when truncated.
    double float64() {
        const std::uint64_t u = fixed64();
        double d;
        std::memcpy(&d, &u, 8);
        return d;
    }
    /// A length-delimited field's bytes (a view into the input). Throws format_error when truncated.
    [[gnu::always_inline]] std::string_view bytes() {
        const std::uint64_t n = varint();
        need(n);
        std::string_view s(p_, static_cast<std::size_t>(n));
        p_ += n;
        return s;
    }
    /// A length-delimited field's bytes; `at` receives their absolute offset. Throws format_error.
    std::string_view bytes(std::uint64_t& at) {
        const std::uint64_t n = varint();
        need(n);
        at = offset();
        std::string_view s(p_, static_cast<std::size_t>(n));
        p_ += n;
        return s;
    }
    /// A reader over a length-delimited sub-message, one level deeper. Throws format_error when
    /// truncated or nested past load_limits::max_message_depth.
    reader message(std::string_view what) {
        const std::string_view b = bytes();
        return nested(b, what);
    }
    /// A reader over `b`, bytes of this message read earlier (a view into the same input), one level
    /// deeper. Throws format_error past load_limits::max_message_depth.
    [[nodiscard]] reader nested(std::string_view b, std::string_view what) const {
        reader r(b, file_, offset_of(b.data()), what);
        r.depth_ = deeper(r.base_);
        return r;
    }
    /// Skips one field's value of the given wire type; a group is skipped to its end, nested groups
    /// counted against the same depth limit as messages. Throws format_error.
    void skip(wire_type wt) {
        switch (wt) {
            case wire_type::varint: (void)varint(); break;
            case wire_type::fixed64: need(8); p_ += 8; break;
            case wire_type::fixed32: need(4); p_ += 4; break;
            case wire_type::bytes: (void)bytes(); break;
            case wire_type::start_group: {
                const int outer = depth_;
                depth_ = deeper(offset());
                std::uint32_t f;
                wire_type t;
                while (next(f, t)) {
                    if (t == wire_type::end_group) {
                        depth_ = outer;
                        return;
                    }
                    skip(t);
                }
                fail("unterminated group");
            }
            default: fail("end-group tag without a group");
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
    /// Throws format_error unless the field has the wire type the schema says (`field` names it in
    /// the error when given).
    [[gnu::always_inline]] void expect(wire_type got, wire_type want, std::uint32_t field = 0) const {
        if (got != want) [[unlikely]] bad_type(got, want, field);
    }
    /// Throws format_error with this reader's file, offset and message name.
    [[noreturn, gnu::cold, gnu::noinline]] void fail(const std::string& msg) const {
        location where;
        where.file = std::string(file_);
        where.offset = offset();
        throw format_error(graft::detail::cat("bad ", what_, ": ", msg), where,
                           "the file is truncated or corrupt, or not the protobuf message graft expected here");
    }

private:
    [[gnu::noinline]] std::uint64_t varint_slow() {
        std::uint64_t v = 0;
        const char* start = p_;
        if (!get_varint(p_, end_, v)) {
            p_ = start;
            fail("truncated or overlong varint");
        }
        return v;
    }
    [[noreturn, gnu::cold, gnu::noinline]] void bad_type(wire_type got, wire_type want, std::uint32_t field) const {
        fail(graft::detail::cat(field ? graft::detail::cat("field ", field, " has") : std::string("field has"),
                                " wire type ", static_cast<int>(got), ", expected ", static_cast<int>(want)));
    }
    [[gnu::always_inline]] void need(std::uint64_t n) const {
        if (n > static_cast<std::uint64_t>(end_ - p_)) [[unlikely]] short_by(n);
    }
    [[noreturn, gnu::cold, gnu::noinline]] void short_by(std::uint64_t n) const {
        fail(graft::detail::cat("needs ", n, " more bytes but only ", end_ - p_, " remain: truncated or corrupt"));
    }
    /// depth_ + 1, or format_error (at offset `at`) past the limit.
    [[nodiscard]] int deeper(std::uint64_t at) const {
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
        return depth_ + 1;
    }

    const char* p_;
    const char* begin_;
    const char* end_;
    std::string_view file_;
    std::uint64_t base_;
    std::string_view what_;
    int depth_ = 0;
};

/// Encoder that owns the string it appends fields to (the put_* functions above, as methods). Call
/// it in field-number order for protoc-identical bytes. No method throws (except std::bad_alloc).
class writer {
public:
    /// A field key (number + wire type).
    void tag(std::uint32_t field, wire_type wt) { put_tag(out_, field, wt); }
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
    void bytes(std::uint32_t field, std::string_view b) { put_bytes(out_, field, b); }
    /// A sub-message given its encoded bytes (written even when empty).
    void message(std::uint32_t field, std::string_view encoded) { put_bytes(out_, field, encoded); }

    /// proto3 singular fields: omitted when zero / empty.
    void opt_int32(std::uint32_t field, std::int32_t v) { if (v) int32(field, v); }
    void opt_int64(std::uint32_t field, std::int64_t v) { put_int(out_, field, v); }
    void opt_uint64(std::uint32_t field, std::uint64_t v) { put_uint(out_, field, v); }
    void opt_bool(std::uint32_t field, bool v) { if (v) boolean(field, v); }
    void opt_fixed32(std::uint32_t field, std::uint32_t v) { if (v) fixed32(field, v); }
    void opt_bytes(std::uint32_t field, std::string_view b) { put_string(out_, field, b); }
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
