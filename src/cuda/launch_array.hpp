// src/cuda/launch_array.hpp — launchers of kernels/array.cu: strided copies (Transpose, Slice,
// StridedSlice, Concat, Pack, Unpack, Split, Pad, Tile are all one), fills, GatherV2 and OneHot.
// Raw device pointers, element counts and strides in elements (int64), the stream as void*.
#pragma once

#include <cstdint>

namespace graft::cuda::launch {

/// The most dims strided_copy() handles after it has simplified its geometry.
constexpr int max_copy_rank = 16;

/// Index dtypes of gather_f32 / one_hot_f32: uint8, int32, int64.
enum class index_kind : int { uint8 = 1, int32 = 4, int64 = 8 };

/// For every index i of `extents` (rank dims, row-major order):
///   dst[sum_d i[d] * dst_strides[d]] = src[sum_d i[d] * src_strides[d]]
/// with elements of `elem_bytes` (1, 2, 4 or 8) and strides in elements (src strides may be 0 or
/// negative: `src` then points at the element of index 0). Size-1 dims are dropped and neighbours
/// that stay contiguous on both sides merged first; a fully contiguous copy is one memcpy. Queued
/// on `stream`. Throws std::invalid_argument for a bad elem_bytes or more than max_copy_rank dims
/// after simplification, graft::error on a CUDA failure.
void strided_copy(void* dst, const std::int64_t* dst_strides, const void* src,
                  const std::int64_t* src_strides, const std::int64_t* extents, int rank,
                  int elem_bytes, void* stream);

/// dst[i] = value for i < n. Queued on `stream`; throws graft::error on a CUDA failure.
void fill_f32(float* dst, std::int64_t n, float value, void* stream);

/// dst[i] = *value (a device scalar) for i < n. Queued on `stream`; throws graft::error on failure.
void fill_from_device_f32(float* dst, std::int64_t n, const float* value, void* stream);

/// GatherV2 over params viewed as [batch, outer, n, inner] and indices as [batch, per_batch]:
/// out[b, o, j, :] = params[b, o, indices[b, j], :]; an index outside [0, n) gives zeros (TF's GPU
/// kernel; the host cannot check device indices without waiting). Queued on `stream`.
void gather_f32(const float* params, const void* indices, index_kind kind, float* out,
                std::int64_t batch, std::int64_t outer, std::int64_t n, std::int64_t inner,
                std::int64_t per_batch, void* stream);

/// OneHot with the output viewed as [prefix, depth, suffix] and indices as [prefix, suffix]:
/// out[p, d, s] = indices[p, s] == d ? *on : *off (on/off are device scalars). Queued on `stream`.
void one_hot_f32(const void* indices, index_kind kind, float* out, std::int64_t prefix,
                 std::int64_t depth, std::int64_t suffix, const float* on, const float* off,
                 void* stream);

}  // namespace graft::cuda::launch
