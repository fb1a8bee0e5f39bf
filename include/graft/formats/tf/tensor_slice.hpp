// graft/formats/tf/tensor_slice.hpp — slices of partitioned tensors as TensorFlow saves them.
//
//   auto s = graft::tf::tensor_slice::parse("0,5:-");       // rows 0..4, all columns
//   graft::shape part = s.slice_shape({10, 3});             // [5,3]
//   auto spec = graft::tf::parse_slice_spec("10 3 5,5:-");  // full shape [10,3] + slice 5,5:-
//   std::string key = graft::tf::encode_slice_key("w", s);  // 00 77 00 01 01 02 80 85 80 7F
//   auto [name, slice] = *graft::tf::decode_slice_key(key);
//
// An extent is (start, length); length -1 means "the whole dimension". Slice keys use TF's
// OrderedCode (section 3.8 of docs/tf-formats.md) so they sort before every printable name.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/shape.hpp"
#include "graft/core/tensor.hpp"

namespace graft::tf {

class tensor_slice {
public:
    static constexpr std::int64_t full_extent = -1;

    /// The slice of a scalar (rank 0).
    tensor_slice() = default;
    /// The full slice of a rank-`rank` tensor.
    explicit tensor_slice(int rank)
        : starts_(static_cast<std::size_t>(rank), 0), lengths_(static_cast<std::size_t>(rank), full_extent) {}
    /// From (start, length) pairs; length -1 = full. Throws invalid_argument_error on a negative
    /// start or a length below -1.
    explicit tensor_slice(const std::vector<std::pair<std::int64_t, std::int64_t>>& extents) {
        for (auto [s, l] : extents) add(s, l);
    }

    /// Appends one dimension. Throws invalid_argument_error on start < 0, length < -1, or a full extent
    /// with a nonzero start.
    void add(std::int64_t start, std::int64_t length) {
        if (length == full_extent && start != 0) start = 0;
        if (start < 0 || length < full_extent || (length > 0 && start > INT64_MAX - length)) {
            throw invalid_argument_error(graft::detail::cat("bad slice extent start=", start, " length=", length),
                                         {}, "starts are >= 0 and lengths >= 0 (or - for the full dimension)");
        }
        starts_.push_back(start);
        lengths_.push_back(length);
    }

    /// Parses "0,5:-" (one `start,length` or `-` per dimension, `:`-separated; "" is rank 0).
    /// Throws invalid_argument_error.
    static tensor_slice parse(std::string_view text) {
        tensor_slice s;
        if (text.empty()) return s;
        std::size_t i = 0;
        while (i <= text.size()) {
            auto j = text.find(':', i);
            if (j == std::string_view::npos) j = text.size();
            auto item = text.substr(i, j - i);
            if (item == "-") {
                s.add(0, full_extent);
            } else {
                auto c = item.find(',');
                std::int64_t a = 0, b = 0;
                if (c == std::string_view::npos || !to_int(item.substr(0, c), a) || !to_int(item.substr(c + 1), b) ||
                    b < 0) {
                    throw invalid_argument_error(graft::detail::cat("cannot parse slice '", text, "' at '", item, "'"),
                                                 {}, "write one 'start,length' or '-' per dimension, e.g. 0,5:-");
                }
                s.add(a, b);
            }
            i = j + 1;
        }
        return s;
    }

    /// Rank. Never throws.
    [[nodiscard]] int rank() const { return static_cast<int>(starts_.size()); }
    /// Stored start of dimension d. Throws std::out_of_range for a bad d.
    [[nodiscard]] std::int64_t start(int d) const { return starts_.at(static_cast<std::size_t>(d)); }
    /// Stored length; -1 for a full dimension. Throws std::out_of_range for a bad d.
    [[nodiscard]] std::int64_t length(int d) const { return lengths_.at(static_cast<std::size_t>(d)); }
    /// Whether dimension d / every dimension is taken in full. is_full never throws.
    [[nodiscard]] bool is_full_at(int d) const { return length(d) == full_extent; }
    [[nodiscard]] bool is_full() const {
        for (int d = 0; d < rank(); ++d) if (!is_full_at(d)) return false;
        return true;
    }
    /// Start / length of dimension d resolved against the full shape (throw like start/length).
    [[nodiscard]] std::int64_t start_in(int d) const { return is_full_at(d) ? 0 : start(d); }
    [[nodiscard]] std::int64_t length_in(int d, const graft::shape& full) const {
        return is_full_at(d) ? full.dim(d) : length(d);
    }

    /// Throws invalid_argument_error unless the slice fits in `full` (same rank, within bounds).
    void check_fits(const graft::shape& full) const {
        if (full.rank() != rank()) {
            throw invalid_argument_error(graft::detail::cat("slice ", str(), " has rank ", rank(), " but the tensor is ",
                                                            full.str()));
        }
        for (int d = 0; d < rank(); ++d) {
            if (!is_full_at(d) && (start(d) > full.dim(d) || length(d) > full.dim(d) - start(d))) {
                throw invalid_argument_error(graft::detail::cat("slice ", str(), " is out of range for ", full.str(),
                                                                " in dimension ", d));
            }
        }
    }
    /// Shape of the slice's values. Throws invalid_argument_error when it does not fit `full`.
    [[nodiscard]] graft::shape slice_shape(const graft::shape& full) const {
        check_fits(full);
        std::vector<std::int64_t> d;
        for (int i = 0; i < rank(); ++i) d.push_back(length_in(i, full));
        return graft::shape(std::move(d));
    }
    /// True when the slice covers all of `full` (also when written with explicit extents). Never throws.
    [[nodiscard]] bool covers_all(const graft::shape& full) const {
        if (full.rank() != rank()) return false;
        for (int d = 0; d < rank(); ++d)
            if (start_in(d) != 0 || length_in(d, full) != full.dim(d)) return false;
        return true;
    }

    /// "0,5:-". Never throws (except bad_alloc).
    [[nodiscard]] std::string str() const {
        std::string s;
        for (int d = 0; d < rank(); ++d) {
            if (d) s += ':';
            s += is_full_at(d) ? std::string("-") : std::to_string(start(d)) + "," + std::to_string(length(d));
        }
        return s;
    }
    friend bool operator==(const tensor_slice& a, const tensor_slice& b) {
        return a.starts_ == b.starts_ && a.lengths_ == b.lengths_;
    }

private:
    static bool to_int(std::string_view s, std::int64_t& out) {
        if (s.empty() || s.size() > 18) return false;
        std::int64_t v = 0;
        for (char c : s) {
            if (c < '0' || c > '9') return false;
            v = v * 10 + (c - '0');
        }
        out = v;
        return true;
    }
    std::vector<std::int64_t> starts_, lengths_;
};

/// A SaveV2/RestoreV2 `shape_and_slices` item: the full shape and the slice.
struct slice_spec {
    graft::shape full_shape;
    tensor_slice slice;
};

/// Parses "10 3 5,5:-" (full dims, then the slice). Throws invalid_argument_error.
inline slice_spec parse_slice_spec(std::string_view text) {
    std::vector<std::string_view> parts;
    std::size_t i = 0;
    while (i < text.size()) {
        auto j = text.find(' ', i);
        if (j == std::string_view::npos) j = text.size();
        if (j > i) parts.push_back(text.substr(i, j - i));
        i = j + 1;
    }
    if (parts.empty()) {
        throw invalid_argument_error(graft::detail::cat("empty slice spec '", text, "'"), {},
                                     "write the full shape then the slice, e.g. \"10 3 5,5:-\"");
    }
    std::vector<std::int64_t> dims;
    for (std::size_t k = 0; k + 1 < parts.size(); ++k) dims.push_back(graft::shape::parse(parts[k]).dims().at(0));
    slice_spec s{graft::shape(dims), tensor_slice::parse(parts.back())};
    s.slice.check_fits(s.full_shape);
    return s;
}
/// Formats a slice spec like TF ("10 3 5,5:-"). Never throws (except bad_alloc).
inline std::string format_slice_spec(const graft::shape& full, const tensor_slice& s) {
    std::string out;
    for (auto d : full.dims()) out += std::to_string(d) + " ";
    return out + s.str();
}

// ------------------------------------------------------------------ OrderedCode (slice keys)

namespace ordered_code {

/// Appends an unsigned number: a length byte then big-endian bytes. Never throws.
inline void write_num_increasing(std::string& out, std::uint64_t v) {
    unsigned char b[8];
    int n = 0;
    while (v) { b[n++] = static_cast<unsigned char>(v & 0xFF); v >>= 8; }
    out.push_back(static_cast<char>(n));
    while (n) out.push_back(static_cast<char>(b[--n]));
}
/// Reads what write_num_increasing wrote; false when malformed. Never throws.
inline bool read_num_increasing(std::string_view& src, std::uint64_t& v) {
    if (src.empty()) return false;
    auto n = static_cast<unsigned char>(src[0]);
    if (n > 8 || src.size() < 1u + n) return false;
    v = 0;
    for (unsigned i = 1; i <= n; ++i) v = (v << 8) | static_cast<unsigned char>(src[i]);
    src.remove_prefix(1u + n);
    return true;
}
/// Appends a string: 00 -> 00 FF, FF -> FF 00, then the terminator 00 01. Never throws.
inline void write_string(std::string& out, std::string_view s) {
    for (char c : s) {
        out.push_back(c);
        if (c == '\0') out.push_back('\xff');
        else if (c == '\xff') out.push_back('\0');
    }
    out.append("\0\x01", 2);
}
/// Reads what write_string wrote; false when malformed. Never throws.
inline bool read_string(std::string_view& src, std::string& s) {
    s.clear();
    for (std::size_t i = 0; i < src.size(); ++i) {
        char c = src[i];
        if (c != '\0' && c != '\xff') { s.push_back(c); continue; }
        if (i + 1 >= src.size()) return false;
        char d = src[i + 1];
        if (c == '\0' && d == '\x01') { src.remove_prefix(i + 2); return true; }
        if ((c == '\0' && d == '\xff') || (c == '\xff' && d == '\0')) { s.push_back(c); ++i; continue; }
        return false;
    }
    return false;
}

inline constexpr unsigned char header_bits[11][2] = {
    {0, 0}, {0x80, 0}, {0xC0, 0}, {0xE0, 0}, {0xF0, 0}, {0xF8, 0}, {0xFC, 0}, {0xFE, 0}, {0xFF, 0}, {0xFF, 0x80}, {0xFF, 0xC0}};

/// Appends a signed number so that byte order equals numeric order. Never throws.
inline void write_signed_num_increasing(std::string& out, std::int64_t v) {
    const std::uint64_t x = v < 0 ? ~static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
    if (x < 64) {
        out.push_back(static_cast<char>(0x80 ^ (static_cast<std::uint64_t>(v) & 0xFF)));
        return;
    }
    const int len = (64 - std::countl_zero(x)) / 7 + 1;
    unsigned char buf[10];
    const unsigned char sign = v < 0 ? 0xFF : 0x00;
    buf[0] = buf[1] = sign;
    for (int i = 0; i < 8; ++i) buf[2 + i] = static_cast<unsigned char>(static_cast<std::uint64_t>(v) >> (56 - 8 * i));
    unsigned char* w = buf + 10 - len;
    w[0] ^= header_bits[len][0];
    w[1] ^= header_bits[len][1];
    out.append(reinterpret_cast<const char*>(w), static_cast<std::size_t>(len));
}
/// Reads what write_signed_num_increasing wrote; false when malformed. Never throws.
inline bool read_signed_num_increasing(std::string_view& src, std::int64_t& v) {
    if (src.empty()) return false;
    const auto b0 = static_cast<unsigned char>(src[0]);
    const bool neg = !(b0 & 0x80);
    const unsigned char flip = neg ? 0xFF : 0x00;
    unsigned n16 = static_cast<unsigned>((b0 ^ flip) << 8);
    if (src.size() > 1) n16 |= static_cast<unsigned char>(src[1]) ^ flip;
    const int len = std::countl_one(static_cast<std::uint16_t>(n16));
    if (len < 1 || len > 10 || src.size() < static_cast<std::size_t>(len)) return false;
    unsigned char w[10];
    std::memcpy(w, src.data(), static_cast<std::size_t>(len));
    w[0] ^= header_bits[len][0];
    if (len > 1) w[1] ^= header_bits[len][1];
    std::uint64_t x = neg ? ~0ull : 0ull;
    for (int i = 0; i < len; ++i) x = (x << 8) | w[i];
    v = static_cast<std::int64_t>(x);
    src.remove_prefix(static_cast<std::size_t>(len));
    return true;
}

}  // namespace ordered_code

/// The bundle / V1 key of one stored slice of `name`. Never throws (except bad_alloc).
inline std::string encode_slice_key(std::string_view name, const tensor_slice& s) {
    std::string out;
    ordered_code::write_num_increasing(out, 0);
    ordered_code::write_string(out, name);
    ordered_code::write_num_increasing(out, static_cast<std::uint64_t>(s.rank()));
    for (int d = 0; d < s.rank(); ++d) {
        ordered_code::write_signed_num_increasing(out, s.start(d));
        ordered_code::write_signed_num_increasing(out, s.length(d));
    }
    return out;
}

/// Splits a slice key into (name, slice); nullopt when `key` is not one. Never throws (except bad_alloc).
inline std::optional<std::pair<std::string, tensor_slice>> decode_slice_key(std::string_view key) {
    std::uint64_t lead = 0, rank = 0;
    std::string name;
    if (!ordered_code::read_num_increasing(key, lead) || lead != 0) return std::nullopt;
    if (!ordered_code::read_string(key, name)) return std::nullopt;
    if (!ordered_code::read_num_increasing(key, rank) || rank > 254) return std::nullopt;
    tensor_slice s;
    for (std::uint64_t d = 0; d < rank; ++d) {
        std::int64_t start = 0, len = 0;
        if (!ordered_code::read_signed_num_increasing(key, start) ||
            !ordered_code::read_signed_num_increasing(key, len)) return std::nullopt;
        if (len < 0) { start = 0; len = tensor_slice::full_extent; }
        if (start < 0) return std::nullopt;
        s.add(start, len);
    }
    if (!key.empty()) return std::nullopt;
    return std::make_pair(std::move(name), std::move(s));
}

/// Copies the elements where `src_slice` and `dst_slice` (both slices of `full`) overlap, from `src`
/// (holding src_slice's values) into `dst` (holding dst_slice's values); returns the elements copied.
/// Throws invalid_argument_error when a slice does not fit or the tensors do not match their slices.
inline std::int64_t copy_slice_overlap(const graft::shape& full, const tensor_slice& src_slice, const tensor& src,
                                       const tensor_slice& dst_slice, const tensor& dst) {
    const graft::shape ss = src_slice.slice_shape(full), ds = dst_slice.slice_shape(full);
    if (!(src.shape() == ss) || !(dst.shape() == ds) || src.type() != dst.type()) {
        throw invalid_argument_error(graft::detail::cat("copy_slice_overlap: ", src.describe(), " for slice ",
                                                        src_slice.str(), " into ", dst.describe(), " for slice ",
                                                        dst_slice.str(), " of ", full.str()));
    }
    const int r = full.rank();
    std::vector<std::int64_t> lo(static_cast<std::size_t>(r)), hi(static_cast<std::size_t>(r));
    for (int d = 0; d < r; ++d) {
        auto a0 = src_slice.start_in(d), a1 = a0 + src_slice.length_in(d, full);
        auto b0 = dst_slice.start_in(d), b1 = b0 + dst_slice.length_in(d, full);
        lo[static_cast<std::size_t>(d)] = std::max(a0, b0);
        hi[static_cast<std::size_t>(d)] = std::min(a1, b1);
        if (lo[static_cast<std::size_t>(d)] >= hi[static_cast<std::size_t>(d)]) return 0;
    }
    const auto sst = row_major_strides(ss), dst_st = row_major_strides(ds);
    const bool is_str = src.type() == dtype::string;
    const std::size_t esz = is_str ? 0 : dtype_size(src.type());
    const std::int64_t run = r ? hi.back() - lo.back() : 1;
    std::vector<std::int64_t> idx(lo);
    std::int64_t copied = 0;
    for (;;) {
        std::int64_t so = 0, doff = 0;
        for (int d = 0; d < r; ++d) {
            so += (idx[static_cast<std::size_t>(d)] - src_slice.start_in(d)) * sst[static_cast<std::size_t>(d)];
            doff += (idx[static_cast<std::size_t>(d)] - dst_slice.start_in(d)) * dst_st[static_cast<std::size_t>(d)];
        }
        if (is_str) {
            for (std::int64_t k = 0; k < run; ++k) dst.data<std::string>()[doff + k] = src.data<std::string>()[so + k];
        } else {
            std::memcpy(static_cast<char*>(dst.raw_data()) + static_cast<std::size_t>(doff) * esz,
                        static_cast<const char*>(src.raw_data()) + static_cast<std::size_t>(so) * esz,
                        static_cast<std::size_t>(run) * esz);
        }
        copied += run;
        int d = r - 2;
        for (; d >= 0; --d) {
            auto& i = idx[static_cast<std::size_t>(d)];
            if (++i < hi[static_cast<std::size_t>(d)]) break;
            i = lo[static_cast<std::size_t>(d)];
        }
        if (d < 0) break;
    }
    return copied;
}

}  // namespace graft::tf
