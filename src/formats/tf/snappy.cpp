// graft::compiled — Snappy wrapper (see include/graft/formats/tf/snappy.hpp).
#include "graft/formats/tf/snappy.hpp"

#include <snappy.h>

#include "graft/core/error.hpp"

namespace graft::tf::snappy {

std::string uncompress(std::string_view compressed, const std::string& file, std::uint64_t offset) {
    std::size_t n = 0;
    if (!::snappy::GetUncompressedLength(compressed.data(), compressed.size(), &n) ||
        !::snappy::IsValidCompressedBuffer(compressed.data(), compressed.size())) {
        throw format_error("corrupt snappy-compressed block", location::in_file(file, offset),
                           "the checkpoint index is damaged");
    }
    std::string out;
    if (!::snappy::Uncompress(compressed.data(), compressed.size(), &out) || out.size() != n) {
        throw format_error("corrupt snappy-compressed block", location::in_file(file, offset),
                           "the checkpoint index is damaged");
    }
    return out;
}

std::string compress(std::string_view raw) {
    std::string out;
    ::snappy::Compress(raw.data(), raw.size(), &out);
    return out;
}

}  // namespace graft::tf::snappy
