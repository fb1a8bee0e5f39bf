// graft/formats/tf/snappy.hpp — Snappy block (de)compression for SSTable blocks, a thin wrapper over libsnappy.
//
//   std::string raw = graft::tf::snappy::uncompress(block, "variables.index", 0);
//
// These functions are compiled into the `graft::compiled` library (src/formats/tf/snappy.cpp), so a program that
// reads a checkpoint whose index has snappy-compressed blocks (older TF releases wrote some, e.g.
// tf-serving's half_plus_two) must link graft::compiled. Header-only users that never meet compressed
// blocks can define GRAFT_TF_NO_SNAPPY (project-wide) before including graft/tf headers: the table
// reader then throws unimplemented_error on a compressed block instead of calling in here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace graft::tf::snappy {

/// Decompresses one Snappy block. Throws format_error naming `file` and the block's `offset` when the
/// bytes are not valid Snappy data.
std::string uncompress(std::string_view compressed, const std::string& file = {}, std::uint64_t offset = 0);

/// Compresses `raw` into one Snappy block. Never throws (except bad_alloc).
std::string compress(std::string_view raw);

}  // namespace graft::tf::snappy
