// graft/formats/tf/tensor_proto.hpp — TensorShapeProto and TensorProto <-> graft types, on graft's one wire
// codec (wire.hpp), no generated protobuf code. The one home of both messages: the graph codec (Const
// values, tensor and shape attrs), graph/attr.hpp's lazy tensor values and the checkpoint readers (V1
// slices, bundle entries) all decode and encode them here.
//
//   graft::tensor t = graft::tf::proto::decode_tensor(const_value_bytes);        // dtype, shape, values
//   graft::tensor s = graft::tf::proto::decode_tensor_values(reader, dtype::float32, {2, 3});
//   std::string b = graft::tf::proto::encode_tensor(t);                          // as make_tensor_proto
//
// Values follow TF's Tensor::FromProto: `tensor_content` when present (and N > 0), else the typed field
// (float_val, int_val, half_val, ...); a typed field shorter than N repeats its last value, an empty one
// gives zeros; bool bytes other than 0 read as true.
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "graft/core/limits.hpp"
#include "graft/core/shape.hpp"
#include "graft/core/tensor.hpp"
#include "graft/formats/tf/wire.hpp"

namespace graft::tf::proto {

namespace detail {
/// Which TensorProto field holds values of dtype t (0: none, e.g. resource, variant). The one table
/// of it, for decoding and encoding.
inline std::uint32_t value_field(dtype t) {
    switch (base_type(t)) {
        case dtype::float32: return 5;
        case dtype::float64: return 6;
        case dtype::int32: case dtype::int16: case dtype::int8: case dtype::uint8: case dtype::uint16:
        case dtype::qint8: case dtype::quint8: case dtype::qint16: case dtype::quint16: case dtype::qint32: return 7;
        case dtype::string: return 8;
        case dtype::complex64: return 9;
        case dtype::int64: return 10;
        case dtype::bool_: return 11;
        case dtype::complex128: return 12;
        case dtype::float16: case dtype::bfloat16: return 13;
        case dtype::uint32: return 16;
        case dtype::uint64: return 17;
        case dtype::float8_e5m2: case dtype::float8_e4m3fn: return 18;
        default: return 0;
    }
}
}  // namespace detail

// ------------------------------------------------------------------ TensorShapeProto

/// Decodes a TensorShapeProto (dims -1 = unknown; unknown_rank; dim names are dropped). Throws
/// format_error on dims < -1 or rank > 254.
inline graft::shape decode_shape(wire::reader r) {
    using wire::wire_type;
    std::vector<std::int64_t> dims;
    bool unknown_rank = false;
    std::uint32_t f;
    wire_type wt;
    {
        // count the dims first: one allocation of the right size
        wire::reader pre = r;
        std::size_t n = 0;
        while (pre.next(f, wt)) {
            n += f == 2 && wt == wire_type::bytes;
            pre.skip(wt);
        }
        if (n > 254) r.fail(graft::detail::cat(n, " dimensions: TensorFlow allows at most 254"));
        dims.reserve(n);
    }
    while (r.next(f, wt)) {
        if (f == 2 && wt == wire_type::bytes) {
            wire::reader d = r.message("TensorShapeProto.Dim");
            std::int64_t size = 0;
            std::uint32_t g;
            wire_type wt2;
            while (d.next(g, wt2)) {
                if (g == 1 && wt2 == wire_type::varint) size = d.int64();
                else d.skip(wt2);
            }
            if (size < -1) r.fail(graft::detail::cat("dimension ", size, " is below -1"));
            dims.push_back(size);
        } else if (f == 3 && wt == wire_type::varint) {
            unknown_rank = r.boolean();
        } else {
            r.skip(wt);
        }
    }
    if (unknown_rank) return graft::shape::unknown_rank();
    return graft::shape(std::move(dims));
}

/// Appends a TensorShapeProto's fields to `out` (protoc's bytes). Never throws (except bad_alloc).
inline void encode_shape(std::string& out, const graft::shape& s) {
    if (!s.rank_known()) {
        wire::put_uint(out, 3, 1);
        return;
    }
    for (auto d : s.dims()) {
        wire::put_tag(out, 2, wire::wire_type::bytes);
        if (d == 0) {
            wire::put_varint(out, 0);
        } else {
            const auto v = static_cast<std::uint64_t>(d);
            wire::put_varint(out, 1 + wire::varint_size(v));
            wire::put_tag(out, 1, wire::wire_type::varint);
            wire::put_varint(out, v);
        }
    }
}
/// Encodes a TensorShapeProto. Never throws (except bad_alloc).
inline std::string encode(const graft::shape& s) {
    std::string out;
    encode_shape(out, s);
    return out;
}

// ------------------------------------------------------------------ TensorProto

/// A TensorProto's dtype and shape.
struct tensor_header {
    graft::dtype type = dtype::invalid;
    graft::shape shape;
};

/// dtype and shape of a TensorProto without decoding its values. Throws format_error.
inline tensor_header decode_tensor_header(wire::reader r) {
    using wire::wire_type;
    tensor_header h;
    std::uint32_t f;
    wire_type wt;
    while (r.next(f, wt)) {
        if (f == 1 && wt == wire_type::varint) h.type = static_cast<graft::dtype>(r.int32());
        else if (f == 2 && wt == wire_type::bytes) h.shape = decode_shape(r.message("TensorShapeProto"));
        else r.skip(wt);
    }
    return h;
}

/// True when graft can decode a TensorProto of this dtype into a graft::tensor. Never throws.
inline bool decodable_dtype(graft::dtype t) {
    return t == dtype::string || (is_known(t) && !is_ref(t) && is_pod_dtype(t));
}

/// Decodes the values of a TensorProto as a tensor of dtype `t` and shape `s` (V1 checkpoint slices
/// carry neither in the proto). Throws format_error on malformed bytes or a tensor_content of the
/// wrong size, unimplemented_error for dtypes without a value field (resource, variant).
inline tensor decode_tensor_values(wire::reader r, dtype t, const graft::shape& s) {
    using wire::wire_type;
    t = base_type(t);
    const std::uint32_t want = detail::value_field(t);
    if (want == 0) {
        throw unimplemented_error(graft::detail::cat("cannot decode TensorProto values of dtype ", dtype_name(t)), {},
                                  "graft decodes numeric, bool and string tensors");
    }
    const std::int64_t n = s.num_elements();
    std::string_view content, f8;
    std::uint64_t content_at = 0;
    std::vector<std::uint64_t> vals;       // varint / fixed values, in order
    std::vector<std::string_view> strs;    // string_val
    std::uint32_t f;
    wire_type wt;
    auto push = [&](std::uint64_t v) { vals.push_back(v); };
    while (r.next(f, wt)) {
        if (f == 4 && wt == wire_type::bytes) { content = r.bytes(content_at); continue; }
        if (f == 7 && t == dtype::bfloat16) { r.varints(wt, push); continue; }  // pre-2.x bfloat16
        if (f != want) { r.skip(wt); continue; }
        switch (f) {
            case 5: case 9: r.fixed32s(wt, push); break;
            case 6: case 12: r.fixed64s(wt, push); break;
            case 8: r.expect(wt, wire_type::bytes, f); strs.push_back(r.bytes()); break;
            case 18: r.expect(wt, wire_type::bytes, f); f8 = r.bytes(); break;
            default: r.varints(wt, push);
        }
    }
    tensor out(t, s);
    if (n == 0) return out;
    auto bad_content = [&](const std::string& msg) {
        wire::reader({}, r.file(), content_at, "TensorProto.tensor_content").fail(msg);
    };
    if (!content.empty()) {
        if (t == dtype::string) {  // varint lengths, then the bytes
            const char* p = content.data();
            const char* end = p + content.size();
            std::vector<std::uint64_t> lens(static_cast<std::size_t>(n));
            for (auto& l : lens)
                if (!wire::get_varint(p, end, l)) bad_content("string lengths truncated or overlong");
            auto* d = out.data<std::string>();
            for (std::int64_t i = 0; i < n; ++i) {
                const auto l = lens[static_cast<std::size_t>(i)];
                if (l > static_cast<std::uint64_t>(end - p)) bad_content("string bytes run past tensor_content");
                d[i].assign(p, static_cast<std::size_t>(l));
                p += l;
            }
            if (p != end) bad_content("extra bytes after the strings of tensor_content");
            return out;
        }
        if (content.size() != out.nbytes()) {
            bad_content(graft::detail::cat("tensor_content has ", content.size(), " bytes, ", dtype_name(t), s.str(),
                                           " needs ", out.nbytes()));
        }
        std::memcpy(out.raw_data(), content.data(), content.size());
        if (t == dtype::bool_) {
            auto* b = static_cast<unsigned char*>(out.raw_data());
            for (std::int64_t i = 0; i < n; ++i) b[i] = b[i] ? 1 : 0;
        }
        return out;
    }
    if (t == dtype::string) {
        auto* d = out.data<std::string>();
        for (std::int64_t i = 0; i < n && !strs.empty(); ++i)
            d[i].assign(strs[std::min<std::size_t>(static_cast<std::size_t>(i), strs.size() - 1)]);
        return out;
    }
    if (want == 18) {  // float8_val: one byte per value
        auto* d = static_cast<unsigned char*>(out.raw_data());
        for (std::int64_t i = 0; i < n && !f8.empty(); ++i)
            d[i] = static_cast<unsigned char>(f8[std::min<std::size_t>(static_cast<std::size_t>(i), f8.size() - 1)]);
        return out;
    }
    // typed field, last value repeated; complex values come as (re, im) pairs
    const std::size_t per = graft::is_complex(t) ? 2 : 1;
    const std::size_t count = vals.size() / per;
    if (count == 0) return out;
    auto at = [&](std::int64_t i, std::size_t k) { return vals[std::min(static_cast<std::size_t>(i), count - 1) * per + k]; };
    auto f32 = [](std::uint64_t v) { float x; auto u = static_cast<std::uint32_t>(v); std::memcpy(&x, &u, 4); return x; };
    auto f64 = [](std::uint64_t v) { double x; std::memcpy(&x, &v, 8); return x; };
    char* base = static_cast<char*>(out.raw_data());
    const std::size_t esz = dtype_size(t);
    for (std::int64_t i = 0; i < n; ++i) {
        char* e = base + static_cast<std::size_t>(i) * esz;
        switch (t) {
            case dtype::float32: { float x = f32(at(i, 0)); std::memcpy(e, &x, 4); break; }
            case dtype::float64: { double x = f64(at(i, 0)); std::memcpy(e, &x, 8); break; }
            case dtype::complex64: { std::complex<float> x(f32(at(i, 0)), f32(at(i, 1))); std::memcpy(e, &x, 8); break; }
            case dtype::complex128: { std::complex<double> x(f64(at(i, 0)), f64(at(i, 1))); std::memcpy(e, &x, 16); break; }
            case dtype::bool_: *e = at(i, 0) ? 1 : 0; break;
            default: {  // integers and 16-bit floats: little-endian truncation of the value
                std::uint64_t v = at(i, 0);
                for (std::size_t k = 0; k < esz; ++k) e[k] = static_cast<char>((v >> (8 * k)) & 0xFF);
            }
        }
    }
    return out;
}

/// TensorProto bytes (dtype, shape and values) -> tensor; `file` and `base` place the bytes in errors.
/// Throws format_error on bad bytes or a shape not fully defined, unimplemented_error for dtypes graft
/// cannot hold.
inline graft::tensor decode_tensor(std::string_view bytes, std::string_view file = {}, std::uint64_t base = 0) {
    const wire::reader r(bytes, file, base, "TensorProto");
    auto h = decode_tensor_header(r);
    if (!decodable_dtype(h.type)) {
        throw unimplemented_error(graft::detail::cat("TensorProto of dtype ", dtype_name(h.type), " cannot be decoded"),
                                  {}, "graft decodes numeric, bool and string tensors");
    }
    if (!h.shape.fully_defined()) r.fail(graft::detail::cat("tensor shape ", h.shape.str(), " is not fully defined"));
    // One value may stand for all elements (TF's "fill" form), so the bytes present do not bound the
    // allocation: it is charged to the load (the file's, or this decode's own) under max_load_bytes.
    load_scope budget(!file.empty() ? std::string(file) : std::string("a TensorProto (a Const's value or a tensor attr)"));
    return decode_tensor_values(r, h.type, h.shape);
}

/// tensor -> TensorProto bytes, the way Python's make_tensor_proto writes them: tensor_content for
/// numeric tensors of more than one element (and float8), the typed field for scalars, string_val for
/// strings. Throws unimplemented_error for dtypes without a value field.
inline std::string encode_tensor(const graft::tensor& t) {
    std::string o;
    wire::put_uint(o, 1, static_cast<std::uint64_t>(t.type()));
    wire::put_message(o, 2, [&](std::string& s) { encode_shape(s, t.shape()); });
    const auto n = t.num_elements();
    if (n == 0) return o;
    const auto bt = base_type(t.type());
    if (bt == dtype::string) {
        for (std::int64_t i = 0; i < n; ++i) wire::put_bytes(o, 8, t.data<std::string>()[i]);
        return o;
    }
    const auto esize = dtype_size(bt);
    const char* raw = static_cast<const char*>(t.raw_data());
    const bool float8 = bt == dtype::float8_e5m2 || bt == dtype::float8_e4m3fn;
    if (n > 1 || float8) {
        wire::put_bytes(o, float8 ? 18 : 4, std::string_view(raw, static_cast<std::size_t>(n) * esize));
        return o;
    }
    const std::uint32_t field = detail::value_field(bt);
    std::string packed;
    switch (bt) {
        case dtype::float32: packed.assign(raw, 4); break;
        case dtype::float64: packed.assign(raw, 8); break;
        case dtype::complex64: packed.assign(raw, 8); break;
        case dtype::complex128: packed.assign(raw, 16); break;
        default: {
            std::uint64_t v = 0;  // the varint fields: signed values sign-extended, as protoc writes them
            switch (bt) {
                case dtype::int8: case dtype::qint8: v = static_cast<std::uint64_t>(std::int64_t{*reinterpret_cast<const std::int8_t*>(raw)}); break;
                case dtype::int16: case dtype::qint16: { std::int16_t x; std::memcpy(&x, raw, 2); v = static_cast<std::uint64_t>(std::int64_t{x}); break; }
                case dtype::int32: case dtype::qint32: { std::int32_t x; std::memcpy(&x, raw, 4); v = static_cast<std::uint64_t>(std::int64_t{x}); break; }
                case dtype::uint8: case dtype::quint8: v = static_cast<unsigned char>(*raw); break;
                case dtype::uint16: case dtype::quint16: case dtype::float16: case dtype::bfloat16: { std::uint16_t x; std::memcpy(&x, raw, 2); v = x; break; }
                case dtype::int64: { std::int64_t x; std::memcpy(&x, raw, 8); v = static_cast<std::uint64_t>(x); break; }
                case dtype::bool_: v = *raw ? 1 : 0; break;
                case dtype::uint32: { std::uint32_t x; std::memcpy(&x, raw, 4); v = x; break; }
                case dtype::uint64: std::memcpy(&v, raw, 8); break;
                default:
                    throw unimplemented_error(graft::detail::cat("cannot encode a ", dtype_name(bt), " tensor"));
            }
            wire::put_varint(packed, v);
        }
    }
    wire::put_bytes(o, field, packed);
    return o;
}

}  // namespace graft::tf::proto
