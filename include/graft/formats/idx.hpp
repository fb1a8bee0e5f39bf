// graft/formats/idx.hpp — the IDX format of the MNIST files (optionally gzip'd), as graft tensors.
//
//   auto images = graft::data::read_idx("t10k-images-idx3-ubyte.gz");   // uint8 [10000,28,28]
//   auto x = graft::data::mnist_images_as_features(images);              // float32 [10000,784] in [0,1]
//
// Needs zlib (link ZLIB::ZLIB) for .gz files.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "graft/core/error.hpp"
#include "graft/core/io.hpp"
#include "graft/core/tensor.hpp"

namespace graft::data {

/// Decompresses a whole gzip file into memory. Throws io_error / format_error naming the file.
inline std::string read_gzip(const std::string& path) {
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f) throw io_error("cannot open", location::in_file(path), "check the path");
    std::string out;
    char buf[1 << 16];
    for (;;) {
        int n = gzread(f, buf, sizeof buf);
        if (n < 0) {
            int code = 0;
            std::string msg = gzerror(f, &code);
            gzclose(f);
            throw format_error("gzip data is corrupt: " + msg, location::in_file(path, out.size()));
        }
        if (n == 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    gzclose(f);
    return out;
}

/// Decodes IDX bytes (magic 0x0000TTNN: type TT, NN dims, big-endian dims, then data).
/// Throws format_error naming `name` and the offset.
inline tensor parse_idx(std::string_view b, const std::string& name = "<memory>") {
    if (b.size() < 4 || b[0] != 0 || b[1] != 0) {
        throw format_error("not an IDX file (magic must start with two zero bytes)", location::in_file(name, 0));
    }
    auto type = static_cast<unsigned char>(b[2]);
    auto rank = static_cast<unsigned char>(b[3]);
    dtype t;
    std::size_t es;
    switch (type) {
        case 0x08: t = dtype::uint8; es = 1; break;
        case 0x09: t = dtype::int8; es = 1; break;
        case 0x0B: t = dtype::int16; es = 2; break;
        case 0x0C: t = dtype::int32; es = 4; break;
        case 0x0D: t = dtype::float32; es = 4; break;
        case 0x0E: t = dtype::float64; es = 8; break;
        default:
            throw format_error(detail::cat("unknown IDX element type 0x", std::hex, int(type)), location::in_file(name, 2));
    }
    if (b.size() < 4 + 4u * rank) throw format_error("IDX header truncated", location::in_file(name, b.size()));
    std::vector<std::int64_t> dims(rank);
    for (std::size_t i = 0; i < rank; ++i) {
        const auto* p = reinterpret_cast<const unsigned char*>(b.data() + 4 + 4 * i);
        dims[i] = (std::int64_t(p[0]) << 24) | (p[1] << 16) | (p[2] << 8) | p[3];
    }
    shape s(dims);
    auto n = static_cast<std::size_t>(s.num_elements());
    std::size_t off = 4 + 4u * rank;
    if (b.size() - off < n * es) {
        throw format_error(detail::cat("IDX data truncated: need ", n * es, " bytes, have ", b.size() - off),
                           location::in_file(name, b.size()));
    }
    tensor out = tensor::uninitialized(t, s);
    auto* dst = static_cast<unsigned char*>(out.raw_data());
    const auto* src = reinterpret_cast<const unsigned char*>(b.data() + off);
    for (std::size_t i = 0; i < n; ++i)  // big-endian elements
        for (std::size_t k = 0; k < es; ++k) dst[i * es + k] = src[i * es + (es - 1 - k)];
    return out;
}

/// Reads an IDX file, gunzipping when the name ends in .gz. Throws io_error / format_error.
inline tensor read_idx(const std::string& path) {
    bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
    return parse_idx(gz ? read_gzip(path) : read_file(path), path);
}

/// uint8 images [N,H,W] -> float32 [N,H*W] scaled by 1/255 (what TF's MNIST tutorials feed).
inline tensor mnist_images_as_features(const tensor& images) {
    if (images.type() != dtype::uint8 || images.rank() != 3) {
        throw invalid_argument_error("mnist_images_as_features wants uint8 [N,H,W], got " + images.describe());
    }
    auto n = images.dim(0), hw = images.dim(1) * images.dim(2);
    tensor out = tensor::uninitialized(dtype::float32, {n, hw});
    const auto* s = images.data<std::uint8_t>();
    auto* d = out.data<float>();
    for (std::int64_t i = 0; i < n * hw; ++i) d[i] = static_cast<float>(s[i]) / 255.0f;
    return out;
}

}  // namespace graft::data
