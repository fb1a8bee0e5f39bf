// graft/graph/detail/tensor_proto.hpp — internal: TensorShapeProto and TensorProto <-> graft types,
// by hand on the wire format (no protobuf library), following TF's Tensor::FromProto rules:
// tensor_content when present, else the typed field with the last value repeated.
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "graft/core/shape.hpp"
#include "graft/core/tensor.hpp"
#include "graft/graph/detail/pb_wire.hpp"
#include "graft/tf/tensor_proto.hpp"

namespace graft::detail::pb {

/// TensorShapeProto -> shape (dim names are dropped). Throws format_error on bad bytes or dims < -1.
inline graft::shape decode_shape(reader r) {
    std::vector<std::int64_t> dims;
    bool unknown = false;
    std::uint32_t f, t;
    {
        // count the dims first: one allocation of the right size
        reader pre = r;
        std::size_t n = 0;
        while (pre.next(f, t)) {
            n += f == 2 && t == len;
            pre.skip(t);
        }
        dims.reserve(n);
    }
    while (r.next(f, t)) {
        if (f == 2 && t == len) {
            auto d = r.sub("TensorShapeProto.Dim");
            std::int64_t size = 0;
            std::uint32_t g, u;
            while (d.next(g, u)) {
                if (g == 1 && u == varint) size = static_cast<std::int64_t>(d.get_varint());
                else d.skip(u);
            }
            if (size < -1) r.fail(detail::cat("dimension ", size, " is below -1"));
            dims.push_back(size);
        } else if (f == 3 && t == varint) {
            unknown = r.get_varint() != 0;
        } else {
            r.skip(t);
        }
    }
    if (unknown) return graft::shape::unknown_rank();
    return graft::shape(std::move(dims));
}

inline void encode_shape(std::string& o, const graft::shape& s) {
    if (!s.rank_known()) {
        put_uint(o, 3, 1);
        return;
    }
    for (auto d : s.dims()) {
        put_tag(o, 2, len);
        if (d == 0) {
            put_varint(o, 0);
        } else {
            std::string dim;
            put_tag(dim, 1, varint);
            put_varint(dim, static_cast<std::uint64_t>(d));
            put_varint(o, dim.size());
            o += dim;
        }
    }
}

struct tensor_header {
    graft::dtype type = dtype::invalid;
    graft::shape shape;
};

/// dtype and shape of a TensorProto without decoding its values. Throws format_error.
inline tensor_header decode_tensor_header(reader r) {
    tensor_header h;
    std::uint32_t f, t;
    while (r.next(f, t)) {
        if (f == 1 && t == varint) h.type = static_cast<graft::dtype>(static_cast<std::int32_t>(r.get_varint()));
        else if (f == 2 && t == len) h.shape = decode_shape(r.sub("TensorShapeProto"));
        else r.skip(t);
    }
    return h;
}

/// True when graft can decode a TensorProto of this dtype into a graft::tensor.
inline bool decodable_dtype(graft::dtype t) {
    return t == dtype::string || (is_known(t) && !is_ref(t) && is_pod_dtype(t));
}

/// TensorProto bytes -> tensor. Throws format_error on bad bytes and unimplemented_error for dtypes
/// graft cannot hold.
inline graft::tensor decode_tensor(std::string_view bytes, const std::string* file = nullptr,
                                   const char* base = nullptr) {
    reader r(bytes, base, file, "TensorProto");
    auto h = decode_tensor_header(r);
    if (!decodable_dtype(h.type)) {
        throw unimplemented_error(detail::cat("TensorProto of dtype ", dtype_name(h.type), " cannot be decoded"),
                                  {}, "graft decodes numeric, bool and string tensors");
    }
    if (!h.shape.fully_defined()) r.fail(detail::cat("tensor shape ", h.shape.str(), " is not fully defined"));
    // One value may stand for all elements (TF's "fill" form), so the bytes present do not bound the
    // allocation: it is charged to the load (the file's, or this decode's own) under max_load_bytes.
    load_scope budget(file && !file->empty() ? *file : std::string("a TensorProto (a Const's value or a tensor attr)"));
    graft::tensor out(h.type, h.shape);
    const auto n = out.num_elements();
    std::string_view content;
    std::vector<std::string_view> strings;
    std::vector<std::uint64_t> ints;     // int_val, int64_val, bool_val, half_val, uint*_val
    std::vector<double> reals;           // float_val, double_val, scomplex, dcomplex (as parts)
    std::uint32_t f, t;
    const auto base_t = base_type(h.type);
    // TensorProto's typed field for this dtype: one table with the checkpoint reader's
    // (tf/tensor_proto.hpp); decodable_dtype() above admits only dtypes that have one.
    const std::uint32_t want_field = graft::tf::proto::detail::value_field(base_t);
    while (r.next(f, t)) {
        if (f == 4 && t == len) {
            content = r.get_bytes();
        } else if (f == 8 && t == len && want_field == 8) {
            strings.push_back(r.get_bytes());
        } else if (f == 18 && t == len && want_field == 18) {
            content = r.get_bytes();
        } else if (f == want_field || (f == 7 && base_t == dtype::bfloat16)) {
            switch (f) {
                case 5: case 9: read_repeated(r, t, fixed32, [&](reader& s) { reals.push_back(s.get_float()); }); break;
                case 6: case 12: read_repeated(r, t, fixed64, [&](reader& s) { reals.push_back(s.get_double()); }); break;
                default: read_repeated(r, t, varint, [&](reader& s) { ints.push_back(s.get_varint()); }); break;
            }
        } else {
            r.skip(t);
        }
    }
    if (n == 0) return out;
    if (base_t == dtype::string) {
        auto* d = out.data<std::string>();
        if (!content.empty()) {  // varint lengths, then the bytes
            reader c(content, r.base(), r.file(), "string tensor_content");
            std::vector<std::uint64_t> lens(static_cast<std::size_t>(n));
            for (auto& l : lens) l = c.get_varint();
            std::size_t at = static_cast<std::size_t>(c.pos() - content.data());
            for (std::int64_t i = 0; i < n; ++i) {
                auto l = lens[static_cast<std::size_t>(i)];
                if (l > content.size() - at) c.fail("string tensor_content shorter than its lengths");
                d[i].assign(content.substr(at, l));
                at += l;
            }
            if (at != content.size()) c.fail("string tensor_content longer than its lengths");
            return out;
        }
        for (std::int64_t i = 0; i < n && !strings.empty(); ++i) {
            d[i].assign(strings[std::min<std::size_t>(static_cast<std::size_t>(i), strings.size() - 1)]);
        }
        return out;
    }
    const auto esize = dtype_size(base_t);
    if (!content.empty()) {
        if (content.size() != static_cast<std::size_t>(n) * esize) {
            r.fail(detail::cat("tensor_content has ", content.size(), " bytes, ", dtype_name(h.type), h.shape.str(),
                               " needs ", static_cast<std::size_t>(n) * esize));
        }
        std::memcpy(out.raw_data(), content.data(), content.size());
        if (base_t == dtype::bool_) {
            auto* b = static_cast<unsigned char*>(out.raw_data());
            for (std::int64_t i = 0; i < n; ++i) if (b[i] > 1) r.fail("bool tensor_content holds a value other than 0/1");
        }
        return out;
    }
    // typed field, last value repeated (TF's rule); complex values come as (re, im) pairs
    const std::size_t parts = is_complex(base_t) ? 2 : 1;
    const std::size_t have = (ints.empty() ? reals.size() : ints.size()) / parts;
    if (have == 0) return out;
    auto* raw = static_cast<char*>(out.raw_data());
    for (std::int64_t i = 0; i < n; ++i) {
        std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(i), have - 1);
        char* dst = raw + static_cast<std::size_t>(i) * esize;
        switch (base_t) {
            case dtype::float32: { float v = static_cast<float>(reals[k]); std::memcpy(dst, &v, 4); break; }
            case dtype::float64: std::memcpy(dst, &reals[k], 8); break;
            case dtype::complex64: {
                float v[2] = {static_cast<float>(reals[2 * k]), static_cast<float>(reals[2 * k + 1])};
                std::memcpy(dst, v, 8);
                break;
            }
            case dtype::complex128: std::memcpy(dst, &reals[2 * k], 16); break;
            case dtype::bool_: *dst = ints[k] ? 1 : 0; break;
            default: {
                std::uint64_t v = ints[k];  // little-endian: the low bytes are the value
                std::memcpy(dst, &v, esize);
            }
        }
    }
    return out;
}

/// tensor -> TensorProto bytes, the way Python's make_tensor_proto writes them: tensor_content for
/// numeric tensors of more than one element, the typed field for scalars, string_val for strings.
inline std::string encode_tensor(const graft::tensor& t) {
    std::string o;
    put_uint(o, 1, static_cast<std::uint64_t>(t.type()));
    put_message(o, 2, [&](std::string& s) { encode_shape(s, t.shape()); });
    const auto n = t.num_elements();
    if (n == 0) return o;
    const auto bt = base_type(t.type());
    if (bt == dtype::string) {
        for (std::int64_t i = 0; i < n; ++i) put_bytes(o, 8, t.data<std::string>()[i]);
        return o;
    }
    const auto esize = dtype_size(bt);
    const char* raw = static_cast<const char*>(t.raw_data());
    bool float8 = bt == dtype::float8_e5m2 || bt == dtype::float8_e4m3fn;
    if (n > 1 || float8) {
        put_bytes(o, float8 ? 18 : 4, std::string_view(raw, static_cast<std::size_t>(n) * esize));
        return o;
    }
    const std::uint32_t field = graft::tf::proto::detail::value_field(bt);
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
                    throw unimplemented_error(detail::cat("cannot encode a ", dtype_name(bt), " tensor"));
            }
            put_varint(packed, v);
        }
    }
    put_bytes(o, field, packed);
    return o;
}

}  // namespace graft::detail::pb
