// graft/formats/npy.hpp — NumPy .npy files (format 1.0, 2.0 and 3.0; little-endian; C order).
//
//   graft::write_npy("x.npy", t);          // atomic
//   graft::tensor t = graft::read_npy("x.npy");
//   # python: np.load("x.npy")
//
// dtypes: float16/32/64, int8/16/32/64, uint8/16/32/64, bool, complex64/128, and strings (read from
// '|S<n>' bytes or '<U<n>' unicode, written as '|S<n>'); float16 is NumPy's '<f2'. bfloat16 has no
// NumPy dtype and is refused: npy_storable(t) widens it to float32 first (what `graft run` writes).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/io.hpp"
#include "graft/core/tensor.hpp"

namespace graft {

namespace detail {

inline std::string npy_descr(dtype t) {
    switch (t) {
        case dtype::float16: return "<f2";
        case dtype::float32: return "<f4";
        case dtype::float64: return "<f8";
        case dtype::int8: return "|i1";
        case dtype::int16: return "<i2";
        case dtype::int32: return "<i4";
        case dtype::int64: return "<i8";
        case dtype::uint8: return "|u1";
        case dtype::uint16: return "<u2";
        case dtype::uint32: return "<u4";
        case dtype::uint64: return "<u8";
        case dtype::bool_: return "|b1";
        case dtype::complex64: return "<c8";
        case dtype::complex128: return "<c16";
        default:
            throw unimplemented_error(detail::cat("dtype ", dtype_name(t), " has no .npy equivalent"), {},
                                      "cast it (e.g. bfloat16 -> float32) before writing .npy");
    }
}

struct npy_header {
    std::string descr;
    bool fortran = false;
    std::vector<std::int64_t> shape;
    std::size_t data_offset = 0;
};

// Parses the Python-literal dict of an .npy header: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
inline npy_header parse_npy_header(std::string_view bytes, const std::string& file) {
    auto fail = [&](std::uint64_t off, const std::string& what) -> void {
        throw format_error("not a valid .npy file: " + what, location::in_file(file, off),
                           "write it with numpy.save (format 1.0-3.0, C order)");
    };
    if (bytes.size() < 10 || bytes.substr(0, 6) != std::string_view("\x93NUMPY", 6)) {
        fail(0, "missing \\x93NUMPY magic");
    }
    const auto major = static_cast<unsigned char>(bytes[6]);
    std::size_t hlen = 0, pos = 0;
    if (major == 1) {
        hlen = static_cast<unsigned char>(bytes[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
        pos = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12) fail(bytes.size(), "truncated header length");
        hlen = 0;
        for (int i = 0; i < 4; ++i) hlen |= static_cast<std::size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
        pos = 12;
    } else {
        fail(6, detail::cat("unsupported format version ", static_cast<int>(major)));
    }
    if (pos + hlen > bytes.size()) fail(bytes.size(), detail::cat("header says ", hlen, " bytes but the file ends first"));
    std::string_view h = bytes.substr(pos, hlen);
    npy_header out;
    out.data_offset = pos + hlen;

    auto find_key = [&](std::string_view key) -> std::size_t {
        auto k1 = h.find("'" + std::string(key) + "'");
        if (k1 == std::string_view::npos) k1 = h.find("\"" + std::string(key) + "\"");
        if (k1 == std::string_view::npos) fail(pos, detail::cat("header has no '", key, "' key"));
        auto colon = h.find(':', k1);
        if (colon == std::string_view::npos) fail(pos + k1, "header key without ':'");
        auto v = colon + 1;
        while (v < h.size() && h[v] == ' ') ++v;
        return v;
    };
    // descr
    {
        auto v = find_key("descr");
        if (v >= h.size() || (h[v] != '\'' && h[v] != '"')) fail(pos + v, "descr is not a string (structured dtypes are not supported)");
        auto e = h.find(h[v], v + 1);
        if (e == std::string_view::npos) fail(pos + v, "unterminated descr string");
        out.descr = std::string(h.substr(v + 1, e - v - 1));
    }
    // fortran_order
    {
        auto v = find_key("fortran_order");
        if (h.substr(v, 4) == "True") out.fortran = true;
        else if (h.substr(v, 5) == "False") out.fortran = false;
        else fail(pos + v, "fortran_order is neither True nor False");
    }
    // shape
    {
        auto v = find_key("shape");
        if (v >= h.size() || h[v] != '(') fail(pos + v, "shape is not a tuple");
        auto e = h.find(')', v);
        if (e == std::string_view::npos) fail(pos + v, "unterminated shape tuple");
        std::string_view tup = h.substr(v + 1, e - v - 1);
        std::size_t i = 0;
        while (i < tup.size()) {
            while (i < tup.size() && (tup[i] == ' ' || tup[i] == ',')) ++i;
            if (i >= tup.size()) break;
            std::size_t j = i;
            while (j < tup.size() && tup[j] >= '0' && tup[j] <= '9') ++j;
            if (j == i) fail(pos + v + 1 + i, "shape entry is not a non-negative integer");
            std::int64_t d = 0;
            for (std::size_t k = i; k < j; ++k) {
                if (d > (INT64_MAX - 9) / 10) fail(pos + v + 1 + i, "shape entry overflows");
                d = d * 10 + (tup[k] - '0');
            }
            out.shape.push_back(d);
            while (j < tup.size() && tup[j] == 'L') ++j;  // Python 2 longs
            i = j;
        }
    }
    return out;
}

inline dtype npy_dtype(const std::string& descr, std::size_t& itemsize, const std::string& file) {
    if (descr.size() < 3) {
        throw format_error(detail::cat("unsupported .npy descr '", descr, "'"), location::in_file(file));
    }
    char order = descr[0];
    char kind = descr[1];
    std::size_t n = 0;
    try { n = std::stoul(descr.substr(2)); } catch (...) {
        throw format_error(detail::cat("unsupported .npy descr '", descr, "'"), location::in_file(file));
    }
    itemsize = n;
    if (kind == 'S' || kind == 'a') return dtype::string;
    if (kind == 'U') { itemsize = 4 * n; return dtype::string; }
    if (order == '>' && n > 1) {
        throw unimplemented_error(detail::cat("big-endian .npy descr '", descr, "'"), location::in_file(file),
                                  "save it little-endian: arr.astype(arr.dtype.newbyteorder('<'))");
    }
    struct { char k; std::size_t n; dtype t; } table[] = {
        {'f', 2, dtype::float16}, {'f', 4, dtype::float32}, {'f', 8, dtype::float64},
        {'i', 1, dtype::int8}, {'i', 2, dtype::int16}, {'i', 4, dtype::int32}, {'i', 8, dtype::int64},
        {'u', 1, dtype::uint8}, {'u', 2, dtype::uint16}, {'u', 4, dtype::uint32}, {'u', 8, dtype::uint64},
        {'b', 1, dtype::bool_}, {'c', 8, dtype::complex64}, {'c', 16, dtype::complex128}};
    for (auto& e : table) if (e.k == kind && e.n == n) return e.t;
    throw unimplemented_error(detail::cat("unsupported .npy descr '", descr, "'"), location::in_file(file),
                              "graft reads float16/32/64, (u)int8-64, bool, complex64/128 and S/U strings");
}

inline void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) out += static_cast<char>(cp);
    else if (cp < 0x800) { out += static_cast<char>(0xC0 | (cp >> 6)); out += static_cast<char>(0x80 | (cp & 0x3F)); }
    else if (cp < 0x10000) { out += static_cast<char>(0xE0 | (cp >> 12)); out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)); out += static_cast<char>(0x80 | (cp & 0x3F)); }
    else { out += static_cast<char>(0xF0 | (cp >> 18)); out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F)); out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)); out += static_cast<char>(0x80 | (cp & 0x3F)); }
}

}  // namespace detail

/// Decodes the bytes of an .npy file (`name` is used in errors). Throws format_error /
/// unimplemented_error naming the file and offset.
inline tensor parse_npy(std::string_view bytes, const std::string& name = "<memory>") {
    load_scope budget(name);
    auto h = detail::parse_npy_header(bytes, name);
    if (h.fortran) {
        throw unimplemented_error("Fortran-order .npy arrays are not supported", location::in_file(name),
                                  "save with np.save(path, np.ascontiguousarray(arr))");
    }
    std::size_t itemsize = 0;
    dtype t = detail::npy_dtype(h.descr, itemsize, name);
    shape s(h.shape);
    auto n = static_cast<std::size_t>(s.num_elements());
    // Checked before anything is allocated. A zero-byte element type ('<U0', 'S0') counts as one
    // byte here: the file must still pay for each element graft would allocate.
    if (n > bytes.size() / std::max<std::size_t>(itemsize, 1) + 1) {
        throw format_error(detail::cat("data truncated: header promises ", n, " elements of ", itemsize,
                                       " bytes, the file has ", bytes.size()),
                           location::in_file(name, bytes.size()), "the file was cut short or its header is corrupt");
    }
    std::size_t need = n * itemsize;
    if (h.data_offset + need > bytes.size()) {
        throw format_error(detail::cat("data truncated: need ", need, " bytes after the header, file has ",
                                       bytes.size() - h.data_offset),
                           location::in_file(name, bytes.size()), "the file was cut short; write it again");
    }
    const char* p = bytes.data() + h.data_offset;
    tensor out = tensor::uninitialized(t, s);
    if (t == dtype::string) {
        auto* dst = out.data<std::string>();
        bool unicode = h.descr[1] == 'U';
        for (std::size_t i = 0; i < n; ++i) {
            const char* e = p + i * itemsize;
            std::string v;
            if (unicode) {
                for (std::size_t k = 0; k + 4 <= itemsize; k += 4) {
                    std::uint32_t cp;
                    std::memcpy(&cp, e + k, 4);
                    if (cp == 0) break;
                    detail::append_utf8(v, cp);
                }
            } else {
                std::size_t len = itemsize;
                while (len > 0 && e[len - 1] == '\0') --len;
                v.assign(e, len);
            }
            dst[i] = std::move(v);
        }
    } else if (t == dtype::bool_) {
        auto* dst = out.data<bool>();
        for (std::size_t i = 0; i < n; ++i) {
            auto b = static_cast<unsigned char>(p[i]);
            if (b > 1) {
                throw format_error(detail::cat("bool element ", i, " holds byte ", static_cast<int>(b)),
                                   location::in_file(name, h.data_offset + i));
            }
            dst[i] = b != 0;
        }
    } else if (need) {
        std::memcpy(out.raw_data(), p, need);
    }
    return out;
}

/// Reads an .npy file. Throws io_error, format_error or unimplemented_error naming the file.
inline tensor read_npy(const std::string& path) { return parse_npy(read_file(path), path); }

/// The bytes of an .npy file for `t` (format 1.0 when the header fits, else 2.0; 64-byte aligned data).
inline std::string serialize_npy(const tensor& t) {
    std::string descr;
    std::size_t itemsize = 0;
    if (t.type() == dtype::string) {
        for (std::int64_t i = 0; i < t.num_elements(); ++i) itemsize = std::max(itemsize, t.data<std::string>()[i].size());
        if (itemsize == 0) itemsize = 1;
        descr = "|S" + std::to_string(itemsize);
    } else {
        descr = detail::npy_descr(t.type());
        itemsize = dtype_size(t.type());
    }
    std::string shp = "(";
    for (auto d : t.shape().dims()) shp += std::to_string(d) + ", ";
    if (t.rank() > 0) { shp.pop_back(); if (t.rank() > 1) shp.pop_back(); }
    shp += ")";
    std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shp + ", }";
    int major = 1;
    std::size_t prefix = 10;
    std::size_t total = prefix + dict.size() + 1;
    if ((total + 63) / 64 * 64 - prefix > 0xFFFF) { major = 2; prefix = 12; total = prefix + dict.size() + 1; }
    std::size_t padded = (total + 63) / 64 * 64;
    dict.append(padded - total, ' ');
    dict += '\n';
    std::string out("\x93NUMPY", 6);
    out += static_cast<char>(major);
    out += '\0';
    std::size_t hlen = dict.size();
    for (std::size_t i = 0; i < (major == 1 ? 2u : 4u); ++i) out += static_cast<char>((hlen >> (8 * i)) & 0xFF);
    out += dict;
    if (t.type() == dtype::string) {
        for (std::int64_t i = 0; i < t.num_elements(); ++i) {
            const auto& s = t.data<std::string>()[i];
            out += s;
            out.append(itemsize - s.size(), '\0');
        }
    } else {
        out.append(static_cast<const char*>(t.raw_data()), t.nbytes());
    }
    return out;
}

/// `t` in a dtype .npy has: bfloat16, which NumPy has no dtype for, widened to float32 (exactly:
/// every bfloat16 is a float32); any other tensor as it is. Sets *widened (when given) to whether
/// it converted, so a caller can say so. Throws nothing beyond allocation.
inline tensor npy_storable(const tensor& t, bool* widened = nullptr) {
    const bool bf = base_type(t.type()) == dtype::bfloat16;
    if (widened) *widened = bf;
    if (!bf) return t;
    tensor out = tensor::uninitialized(dtype::float32, t.shape());
    const bfloat16* in = t.data<bfloat16>();
    float* o = out.data<float>();
    for (std::int64_t i = 0; i < t.num_elements(); ++i) o[i] = static_cast<float>(in[i]);
    return out;
}

/// Writes `t` to `path` as .npy, atomically. Throws io_error / unimplemented_error.
inline void write_npy(const std::string& path, const tensor& t) {
    write_file_atomic(path, serialize_npy(t), false);
}

}  // namespace graft
