// graft/tf/tensor_proto.hpp — TensorProto values -> graft::tensor, without generated protobuf code
// (what V1 checkpoints store per slice).
//
//   graft::tensor t = graft::tf::proto::decode_tensor_values(reader, dtype::float32, {2, 3});
//
// Follows TF's Tensor::FromProto: `tensor_content` when present (and N > 0), else the typed field
// (float_val, int_val, half_val, ...); a typed field shorter than N repeats its last value, an empty one
// gives zeros. The dtype and shape come from the caller (V1 slices carry neither).
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "graft/core/tensor.hpp"
#include "graft/tf/wire.hpp"

namespace graft::tf::proto {

namespace detail {
/// Which TensorProto field holds values of dtype t (0: none, e.g. resource, variant). The one table
/// of it: the graph codec (graph/detail/tensor_proto.hpp) reads and writes with it too.
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

/// Decodes the values of a TensorProto as a tensor of dtype `t` and shape `s`. Throws format_error on
/// malformed bytes or a tensor_content of the wrong size, unimplemented_error for dtypes without a
/// value field (resource, variant).
inline tensor decode_tensor_values(wire::reader r, dtype t, const graft::shape& s) {
    t = base_type(t);
    const std::uint32_t want = detail::value_field(t);
    if (want == 0) {
        throw unimplemented_error(graft::detail::cat("cannot decode TensorProto values of dtype ", dtype_name(t)), {},
                                  "only numeric, bool and string tensors are supported");
    }
    const std::int64_t n = s.num_elements();
    std::string_view content, f8;
    std::uint64_t content_at = 0;
    std::vector<std::uint64_t> vals;       // varint / fixed values, in order
    std::vector<std::string_view> strs;    // string_val
    std::uint32_t f;
    wire::wire_type wt;
    auto push = [&](std::uint64_t v) { vals.push_back(v); };
    while (r.next(f, wt)) {
        if (f == 4 && wt == wire::wire_type::bytes) { content = r.bytes(content_at); continue; }
        if (f == 13 && want == 13) { r.varints(wt, push); continue; }
        if (f == 7 && t == dtype::bfloat16) { r.varints(wt, push); continue; }  // pre-2.x bfloat16
        if (f != want) { r.skip(wt); continue; }
        switch (f) {
            case 5: case 9: r.fixed32s(wt, push); break;
            case 6: case 12: r.fixed64s(wt, push); break;
            case 8: r.expect(wt, wire::wire_type::bytes); strs.push_back(r.bytes()); break;
            case 18: r.expect(wt, wire::wire_type::bytes); f8 = r.bytes(); break;
            default: r.varints(wt, push);
        }
    }
    tensor out(t, s);
    if (n == 0) return out;
    if (!content.empty()) {
        if (t == dtype::string) {
            const char* p = content.data();
            const char* end = p + content.size();
            std::vector<std::uint64_t> lens(static_cast<std::size_t>(n));
            for (auto& l : lens)
                if (!wire::get_varint(p, end, l, 5)) wire::reader({}, r.file(), content_at, "TensorProto").fail("bad string lengths");
            auto* d = out.data<std::string>();
            for (std::int64_t i = 0; i < n; ++i) {
                if (lens[static_cast<std::size_t>(i)] > static_cast<std::uint64_t>(end - p))
                    wire::reader({}, r.file(), content_at, "TensorProto").fail("string bytes run past tensor_content");
                d[i].assign(p, static_cast<std::size_t>(lens[static_cast<std::size_t>(i)]));
                p += lens[static_cast<std::size_t>(i)];
            }
            if (p != end) wire::reader({}, r.file(), content_at, "TensorProto").fail("extra bytes in tensor_content");
            return out;
        }
        if (content.size() != out.nbytes()) {
            wire::reader({}, r.file(), content_at, "TensorProto").fail(graft::detail::cat(
                "tensor_content has ", content.size(), " bytes, ", dtype_name(t), s.str(), " needs ", out.nbytes()));
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
            d[i] = std::string(strs[std::min<std::size_t>(static_cast<std::size_t>(i), strs.size() - 1)]);
        return out;
    }
    if (want == 18) {
        auto* d = static_cast<unsigned char*>(out.raw_data());
        for (std::int64_t i = 0; i < n && !f8.empty(); ++i)
            d[i] = static_cast<unsigned char>(f8[std::min<std::size_t>(static_cast<std::size_t>(i), f8.size() - 1)]);
        return out;
    }
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

}  // namespace graft::tf::proto
