// graft/graph/detail/pb_wire.hpp — internal: protobuf wire-format reading and writing for the graph
// layer (TensorProto, NodeDef, GraphDef, ...), with errors that name the file and byte offset.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "graft/core/error.hpp"
#include "graft/core/limits.hpp"

namespace graft::detail::pb {

enum wire : std::uint32_t { varint = 0, fixed64 = 1, len = 2, sgroup = 3, egroup = 4, fixed32 = 5 };

/// A bounds-checked cursor over one message. `base` is the start of the whole buffer, so offsets in
/// errors are file offsets; `file` names the file (may be empty).
class reader {
public:
    reader(std::string_view bytes, const char* base = nullptr, const std::string* file = nullptr,
           const char* what = "message")
        : p_(bytes.data()), end_(bytes.data() + bytes.size()), base_(base ? base : bytes.data()), file_(file),
          what_(what) {}

    [[nodiscard]] bool done() const { return p_ >= end_; }
    [[nodiscard]] const char* pos() const { return p_; }
    /// The unread bytes of this message.
    [[nodiscard]] std::string_view rest() const { return {p_, static_cast<std::size_t>(end_ - p_)}; }
    [[nodiscard]] std::uint64_t offset() const { return static_cast<std::uint64_t>(p_ - base_); }
    [[nodiscard]] const char* base() const { return base_; }
    [[nodiscard]] const std::string* file() const { return file_; }

    /// Reads a field tag; false at the end of the message.
    [[gnu::always_inline]] bool next(std::uint32_t& field, std::uint32_t& type) {
        if (p_ >= end_) return false;
        auto t = get_varint();
        field = static_cast<std::uint32_t>(t >> 3);
        type = static_cast<std::uint32_t>(t & 7);
        if (field == 0) fail("field number 0");
        return true;
    }
    [[gnu::always_inline]] std::uint64_t get_varint() {
        if (p_ < end_ && !(static_cast<unsigned char>(*p_) & 0x80)) return static_cast<unsigned char>(*p_++);
        return get_varint_slow();
    }
    [[gnu::noinline]] std::uint64_t get_varint_slow() {
        std::uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (p_ >= end_) fail("truncated varint");
            auto b = static_cast<unsigned char>(*p_++);
            v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
            if (!(b & 0x80)) return v;
        }
        fail("varint longer than 10 bytes");
    }
    std::uint32_t get_fixed32() {
        need(4);
        std::uint32_t v;
        std::memcpy(&v, p_, 4);  // little-endian hosts only (as TF itself)
        p_ += 4;
        return v;
    }
    std::uint64_t get_fixed64() {
        need(8);
        std::uint64_t v;
        std::memcpy(&v, p_, 8);
        p_ += 8;
        return v;
    }
    float get_float() {
        auto u = get_fixed32();
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    }
    double get_double() {
        auto u = get_fixed64();
        double d;
        std::memcpy(&d, &u, 8);
        return d;
    }
    /// A length-delimited payload.
    [[gnu::always_inline]] std::string_view get_bytes() {
        auto n = get_varint();
        if (n > static_cast<std::uint64_t>(end_ - p_)) {
            fail(detail::cat("length ", n, " runs past the end (", end_ - p_, " bytes left): truncated or corrupt"));
        }
        std::string_view r(p_, static_cast<std::size_t>(n));
        p_ += n;
        return r;
    }
    /// A reader over a length-delimited sub-message, one level deeper. Throws format_error past
    /// load_limits::max_message_depth.
    reader sub(const char* what) {
        auto b = get_bytes();
        reader r(b, base_, file_, what);
        r.depth_ = deeper();
        return r;
    }
    /// A reader over `bytes` (a field of this message read earlier), one level deeper.
    [[nodiscard]] reader nested(std::string_view bytes, const char* what) const {
        reader r(bytes, base_, file_, what);
        r.depth_ = deeper();
        return r;
    }
    /// How deep this message is nested (0 for the outermost). Never throws.
    [[nodiscard]] int depth() const { return depth_; }
    /// Skips a field of wire type `type`.
    void skip(std::uint32_t type) {
        switch (type) {
            case varint: (void)get_varint(); break;
            case fixed64: need(8); p_ += 8; break;
            case len: (void)get_bytes(); break;
            case fixed32: need(4); p_ += 4; break;
            case sgroup: {  // groups nest like messages: count them against the same limit
                const int outer = depth_;
                depth_ = deeper();
                std::uint32_t f, t;
                while (next(f, t)) {
                    if (t == egroup) {
                        depth_ = outer;
                        return;
                    }
                    skip(t);
                }
                fail("unterminated group");
            }
            default: fail(detail::cat("bad wire type ", type));
        }
    }
    /// Checks that a field has the wire type the schema says.
    [[gnu::always_inline]] void expect(std::uint32_t got, std::uint32_t want, std::uint32_t field) {
        if (got != want) [[unlikely]] fail(detail::cat("field ", field, " has wire type ", got, ", expected ", want));
    }
    [[noreturn, gnu::cold, gnu::noinline]] void fail(const std::string& msg) const {
        location l;
        if (file_) l.file = *file_;
        l.offset = offset();
        throw format_error(detail::cat("bad protobuf in ", what_, ": ", msg), l,
                           "the file is truncated or is not the protobuf message graft expected");
    }

private:
    void need(std::size_t n) {
        if (static_cast<std::size_t>(end_ - p_) < n) fail("truncated fixed-width field");
    }
    [[nodiscard]] int deeper() const {
        const int limit = max_message_depth();
        if (depth_ + 1 > limit) {
            location l;
            if (file_) l.file = *file_;
            l.offset = offset();
            throw format_error(detail::cat("protobuf messages in ", what_, " nest deeper than ", limit, " levels"), l,
                               "a real model nests a few levels; if the file is trusted, raise "
                               "graft::load_limits::max_message_depth (graft::set_load_limits)");
        }
        return depth_ + 1;
    }
    int depth_ = 0;
    const char* p_;
    const char* end_;
    const char* base_;
    const std::string* file_;
    const char* what_;
};

// ------------------------------------------------------------------ writing

inline void put_varint(std::string& o, std::uint64_t v) {
    char b[10];
    int n = 0;
    while (v >= 0x80) {
        b[n++] = static_cast<char>((v & 0x7F) | 0x80);
        v >>= 7;
    }
    b[n++] = static_cast<char>(v);
    o.append(b, static_cast<std::size_t>(n));
}
inline void put_tag(std::string& o, std::uint32_t field, std::uint32_t type) { put_varint(o, (field << 3) | type); }
inline void put_bytes(std::string& o, std::uint32_t field, std::string_view s) {
    put_tag(o, field, len);
    put_varint(o, s.size());
    o.append(s);
}
/// proto3 scalar: omitted when zero.
inline void put_uint(std::string& o, std::uint32_t field, std::uint64_t v) {
    if (!v) return;
    put_tag(o, field, varint);
    put_varint(o, v);
}
inline void put_int(std::string& o, std::uint32_t field, std::int64_t v) {
    put_uint(o, field, static_cast<std::uint64_t>(v));
}
inline void put_string(std::string& o, std::uint32_t field, std::string_view s) {
    if (!s.empty()) put_bytes(o, field, s);
}
inline void put_float(std::string& o, std::uint32_t field, float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    if (!u) return;
    put_tag(o, field, fixed32);
    o.append(reinterpret_cast<const char*>(&u), 4);
}
inline void put_fixed32_raw(std::string& o, std::uint32_t u) { o.append(reinterpret_cast<const char*>(&u), 4); }
inline void put_fixed64_raw(std::string& o, std::uint64_t u) { o.append(reinterpret_cast<const char*>(&u), 8); }

/// Writes a sub-message built by f(std::string&) as field `field` (always present).
template <class F>
void put_message(std::string& o, std::uint32_t field, F&& f) {
    std::string sub;
    f(sub);
    put_bytes(o, field, sub);
}

/// Appends the elements of a repeated scalar field, packed or not, to `out` via get(reader&).
template <class G>
void read_repeated(reader& r, std::uint32_t type, std::uint32_t elem_type, G&& get) {
    if (type == len && elem_type != len) {
        auto b = r.get_bytes();
        reader s(b, r.base(), r.file(), "packed field");
        while (!s.done()) get(s);
    } else {
        r.expect(type, elem_type, 0);
        get(r);
    }
}

}  // namespace graft::detail::pb
