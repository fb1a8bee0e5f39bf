// graft/ops/gather.hpp — index-driven ops: GatherV2, OneHot, Where, DynamicStitch,
// UnsortedSegmentSum.
//
//   tensor rows = ops::gather(params, indices, 0);           // params[indices]
//   tensor oh = ops::one_hot(labels, 10, tensor::scalar_of(1.f), tensor::scalar_of(0.f));
//   tensor coords = ops::where(mask);                        // int64 [num_true, rank]
//   tensor merged = ops::dynamic_stitch({i0, i1}, {d0, d1});
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graft/ops/detail/op_support.hpp"

namespace graft::ops {

namespace op_detail {

/// "[1,0]": the multi-index of flat position i in shape s.
inline std::string index_str(const shape& s, std::int64_t i) {
    std::vector<std::int64_t> idx(s.dims().size());
    for (std::size_t k = idx.size(); k-- > 0;) {
        idx[k] = i % s.dims()[k];
        i /= s.dims()[k];
    }
    return list_str(idx);
}

/// The values of an int32/int64 index tensor of any shape, as int64.
inline std::vector<std::int64_t> index_values(std::string_view op, const tensor& t,
                                              std::string_view what) {
    require_input(op, t, what);
    return int_list(op, t.reshaped(shape{t.num_elements()}), what);
}

}  // namespace op_detail

/// GatherV2: slices of params along `axis` picked by `indices` (int32/int64, any shape); the
/// first batch_dims dims of params and indices are batch dims that must match. Output shape is
/// params[:axis] + indices[batch_dims:] + params[axis+1:]. Any dense params dtype. Throws
/// invalid_argument_error for an index outside [0, params.dim(axis)) (naming it), a bad axis or
/// batch_dims.
inline tensor gather(const tensor& params, const tensor& indices, std::int64_t axis = 0,
                     std::int64_t batch_dims = 0) {
    const char* op = "GatherV2";
    op_detail::require_input(op, params, "params");
    const auto idx = op_detail::index_values(op, indices, "indices");
    if (params.rank() == 0)
        throw invalid_argument_error(
            op_detail::cat(op, ": params must be at least 1-D, got a scalar"));
    const int ax = op_detail::normalize_axis(op, axis, params.rank());
    if (batch_dims < 0) batch_dims += indices.rank();
    if (batch_dims < 0 || batch_dims > indices.rank() || batch_dims > ax) {
        throw invalid_argument_error(op_detail::cat(op, ": batch_dims ", batch_dims,
                                                    " must be in [0, min(axis ", ax,
                                                    ", rank(indices) ", indices.rank(), ")]"));
    }
    const auto bd = static_cast<std::size_t>(batch_dims);
    const auto& pd = params.shape().dims();
    const auto& id = indices.shape().dims();
    for (std::size_t i = 0; i < bd; ++i) {
        if (pd[i] != id[i]) {
            throw invalid_argument_error(op_detail::cat(op, ": params ", params.shape().str(),
                                                        " and indices ", indices.shape().str(),
                                                        " differ in batch dim ", i));
        }
    }
    const auto uax = static_cast<std::size_t>(ax);
    std::vector<std::int64_t> od(pd.begin(), pd.begin() + ax);
    od.insert(od.end(), id.begin() + batch_dims, id.end());
    od.insert(od.end(), pd.begin() + ax + 1, pd.end());
    const std::int64_t batch = op_detail::dim_product(pd, 0, bd);
    const std::int64_t outer = op_detail::dim_product(pd, bd, uax);
    const std::int64_t n = pd[uax];
    const std::int64_t inner = op_detail::dim_product(pd, uax + 1, pd.size());
    const std::int64_t per_batch = op_detail::dim_product(id, bd, id.size());
    for (std::size_t i = 0; i < idx.size(); ++i) {
        if (idx[i] < 0 || idx[i] >= n) {
            throw invalid_argument_error(op_detail::cat(
                op, ": indices",
                op_detail::index_str(indices.shape(), static_cast<std::int64_t>(i)), " = ", idx[i],
                " is not in [0, ", n, ") (params ", params.shape().str(), ", axis ", ax, ")"));
        }
    }
    tensor out = tensor::uninitialized(params.type(), shape(od));
    if (out.num_elements() == 0) return out;
    op_detail::visit_element_bytes(params.type(), op, [&](auto tag) {
        using U = decltype(tag);
        const U* src = op_detail::elements_as<U>(params);
        U* dst = op_detail::elements_as<U>(out);
        const std::int64_t rows = batch * outer * per_batch;
        op_detail::parallel_for(
            rows, 2.0 * sizeof(U) * static_cast<double>(inner), static_cast<double>(inner),
            [&](std::int64_t first, std::int64_t last) {
                for (std::int64_t row = first; row < last; ++row) {
                    const std::int64_t j = row % per_batch;
                    const std::int64_t bo = row / per_batch;  // b * outer + o
                    const std::int64_t b = bo / outer;
                    const std::int64_t k = idx[static_cast<std::size_t>(b * per_batch + j)];
                    const U* s = src + (bo * n + k) * inner;
                    std::copy(s, s + inner, dst + row * inner);
                }
            });
    });
    return out;
}
/// GatherV2 with the axis as an int32/int64 scalar tensor. Throws as above.
inline tensor gather(const tensor& params, const tensor& indices, const tensor& axis,
                     std::int64_t batch_dims = 0) {
    return gather(params, indices, op_detail::int_scalar("GatherV2", axis, "axis"), batch_dims);
}

/// OneHot: for each index a vector of `depth` entries, on_value at the index and off_value
/// elsewhere (indices outside [0, depth) give all off_value), inserted as a new dim at `axis`
/// (-1: last). indices uint8/int32/int64; on/off scalars of the output dtype (any dense dtype).
/// Throws invalid_argument_error for negative depth, a bad axis or mismatched on/off values.
inline tensor one_hot(const tensor& indices, std::int64_t depth, const tensor& on_value,
                      const tensor& off_value, std::int64_t axis = -1) {
    const char* op = "OneHot";
    op_detail::require_input(op, indices, "indices");
    op_detail::require_input(op, on_value, "on_value");
    op_detail::require_input(op, off_value, "off_value");
    op_detail::require_same_dtype(op, on_value, "on_value", off_value, "off_value");
    if (on_value.rank() != 0 || off_value.rank() != 0) {
        throw invalid_argument_error(
            op_detail::cat(op, ": on_value and off_value must be scalars, got ",
                           on_value.shape().str(), " and ", off_value.shape().str()));
    }
    if (depth < 0)
        throw invalid_argument_error(
            op_detail::cat(op, ": depth must be non-negative, got ", depth));
    const int r = indices.rank();
    if (axis < -1 || axis > r) {
        throw invalid_argument_error(
            op_detail::cat(op, ": axis must be -1 or in [0, ", r, "], got ", axis));
    }
    const auto ax = static_cast<std::size_t>(axis == -1 ? r : axis);
    std::vector<std::int64_t> idx;
    if (base_type(indices.type()) == dtype::uint8) {
        const auto* p = indices.data<std::uint8_t>();
        idx.assign(p, p + indices.num_elements());
    } else {
        idx = op_detail::index_values(op, indices, "indices");
    }
    auto od = indices.shape().dims();
    od.insert(od.begin() + static_cast<std::ptrdiff_t>(ax), depth);
    const std::int64_t prefix = op_detail::dim_product(indices.shape().dims(), 0, ax);
    const std::int64_t suffix =
        op_detail::dim_product(indices.shape().dims(), ax, indices.shape().dims().size());
    tensor out = tensor::uninitialized(on_value.type(), shape(od));
    op_detail::visit_element_bytes(on_value.type(), op, [&](auto tag) {
        using U = decltype(tag);
        const U on = *op_detail::elements_as<U>(on_value);
        const U off = *op_detail::elements_as<U>(off_value);
        U* o = op_detail::elements_as<U>(out);
        op_detail::parallel_for(
            prefix, sizeof(U) * static_cast<double>(depth * suffix),
            static_cast<double>(depth * suffix), [&](std::int64_t first, std::int64_t last) {
                for (std::int64_t p = first; p < last; ++p) {
                    U* block = o + p * depth * suffix;
                    std::fill(block, block + depth * suffix, off);
                    for (std::int64_t s = 0; s < suffix; ++s) {
                        const std::int64_t k = idx[static_cast<std::size_t>(p * suffix + s)];
                        if (k >= 0 && k < depth) block[k * suffix + s] = on;
                    }
                }
            });
    });
    return out;
}
/// OneHot with depth as an int32 scalar tensor (TF's "depth" input). Throws as above.
inline tensor one_hot(const tensor& indices, const tensor& depth, const tensor& on_value,
                      const tensor& off_value, std::int64_t axis = -1) {
    return one_hot(indices, op_detail::int_scalar("OneHot", depth, "depth"), on_value, off_value,
                   axis);
}

/// Where (one input): the coordinates of the true / non-zero elements of x in row-major order,
/// as int64 [num_true, rank]. bool and numeric inputs. Throws invalid_argument_error for strings.
inline tensor where(const tensor& x) {
    const char* op = "Where";
    op_detail::require_input(op, x, "input");
    return op_detail::dispatch<bool, float, double, std::int32_t, std::int64_t, std::int8_t,
                               std::int16_t, std::uint8_t, std::uint16_t, std::uint32_t,
                               std::uint64_t>(
        x.type(), op,
        [&](auto tag) {
            using T = decltype(tag);
            const T* p = x.data<T>();
            const std::int64_t n = x.num_elements();
            std::int64_t count = 0;
            for (std::int64_t i = 0; i < n; ++i) count += p[i] != T(0);
            const auto r = static_cast<std::int64_t>(x.rank());
            tensor out = tensor::uninitialized(dtype::int64, shape{count, r});
            std::int64_t* o = out.data<std::int64_t>();
            std::vector<std::int64_t> idx(static_cast<std::size_t>(r), 0);
            const auto& d = x.shape().dims();
            for (std::int64_t i = 0; i < n; ++i) {
                if (p[i] != T(0)) {
                    std::copy(idx.begin(), idx.end(), o);
                    o += r;
                }
                for (std::size_t k = idx.size(); k-- > 0;) {
                    if (++idx[k] < d[k]) break;
                    idx[k] = 0;
                }
            }
            return out;
        },
        "input");
}

/// DynamicStitch: merged[indices[m][i...], ...] = data[m][i..., ...], later entries winning; the
/// output has max(index) + 1 rows (zeros where no index points). indices int32/int64; data of one
/// dtype, each shaped indices[m].shape + a common slice shape. Throws invalid_argument_error for
/// negative indices, mismatched shapes or dtypes.
inline tensor dynamic_stitch(const std::vector<tensor>& indices, const std::vector<tensor>& data) {
    const char* op = "DynamicStitch";
    if (indices.empty() || indices.size() != data.size()) {
        throw invalid_argument_error(
            op_detail::cat(op, ": needs N >= 1 indices and N data tensors, got ", indices.size(),
                           " and ", data.size()));
    }
    std::vector<std::vector<std::int64_t>> idx;
    std::int64_t rows = 0;
    for (std::size_t m = 0; m < indices.size(); ++m) {
        idx.push_back(op_detail::index_values(op, indices[m], op_detail::cat("indices[", m, "]")));
        for (auto v : idx.back()) {
            if (v < 0)
                throw invalid_argument_error(
                    op_detail::cat(op, ": indices[", m, "] holds the negative index ", v));
            rows = std::max(rows, v + 1);
        }
        op_detail::require_input(op, data[m], op_detail::cat("data[", m, "]"));
    }
    const auto& d0 = data[0].shape().dims();
    const auto r0 = static_cast<std::size_t>(indices[0].rank());
    if (d0.size() < r0) {
        throw invalid_argument_error(op_detail::cat(op, ": data[0] ", data[0].shape().str(),
                                                    " has lower rank than indices[0] ",
                                                    indices[0].shape().str()));
    }
    const std::vector<std::int64_t> slice_dims(d0.begin() + static_cast<std::ptrdiff_t>(r0),
                                               d0.end());
    const std::int64_t slice = op_detail::dim_product(slice_dims, 0, slice_dims.size());
    for (std::size_t m = 0; m < data.size(); ++m) {
        auto want = indices[m].shape().dims();
        want.insert(want.end(), slice_dims.begin(), slice_dims.end());
        op_detail::require_same_dtype(op, data[m], op_detail::cat("data[", m, "]"), data[0],
                                      "data[0]");
        if (!(data[m].shape() == shape(want))) {
            throw invalid_argument_error(op_detail::cat(
                op, ": data[", m, "] has shape ", data[m].shape().str(), " but indices[", m, "] ",
                indices[m].shape().str(), " and the slice shape ", shape(slice_dims).str(),
                " need ", shape(want).str()));
        }
    }
    std::vector<std::int64_t> od{rows};
    od.insert(od.end(), slice_dims.begin(), slice_dims.end());
    tensor out(data[0].type(), shape(od));
    op_detail::visit_element_bytes(out.type(), op, [&](auto tag) {
        using U = decltype(tag);
        U* o = op_detail::elements_as<U>(out);
        for (std::size_t m = 0; m < data.size(); ++m) {
            const U* s = op_detail::elements_as<U>(data[m]);
            for (std::size_t i = 0; i < idx[m].size(); ++i) {
                std::copy(s + static_cast<std::int64_t>(i) * slice,
                          s + static_cast<std::int64_t>(i + 1) * slice, o + idx[m][i] * slice);
            }
        }
    });
    return out;
}

/// UnsortedSegmentSum: output[k, ...] = sum of data[i..., ...] over the i with segment_ids[i...] == k;
/// the output is [num_segments] + data.shape[rank(segment_ids):], zeros where no id points, and ids
/// outside [0, num_segments) are dropped (as TF's CPU kernel does for negative ids). data float,
/// double, int32 or int64; ids int32/int64 shaped like a prefix of data. Throws
/// invalid_argument_error for another dtype, a shape mismatch or negative num_segments.
inline tensor unsorted_segment_sum(const tensor& data, const tensor& segment_ids,
                                   const tensor& num_segments) {
    const char* op = "UnsortedSegmentSum";
    op_detail::require_input(op, data, "data");
    const auto ids = op_detail::index_values(op, segment_ids, "segment_ids");
    const std::int64_t n = op_detail::int_scalar(op, num_segments, "num_segments");
    if (n < 0) throw invalid_argument_error(op_detail::cat(op, ": num_segments ", n, " is negative"));
    const auto& dd = data.shape().dims();
    const auto& id = segment_ids.shape().dims();
    if (id.size() > dd.size() || !std::equal(id.begin(), id.end(), dd.begin())) {
        throw invalid_argument_error(op_detail::cat(op, ": segment_ids ", segment_ids.shape().str(),
                                                    " must be a prefix of data's shape ", data.shape().str()));
    }
    std::vector<std::int64_t> od{n};
    od.insert(od.end(), dd.begin() + static_cast<std::ptrdiff_t>(id.size()), dd.end());
    const std::int64_t inner = op_detail::dim_product(od, 1, od.size());
    tensor out(data.type(), shape(od));
    op_detail::dispatch<float, double, std::int32_t, std::int64_t>(
        data.type(), op,
        [&](auto tag) {
            using T = decltype(tag);
            T* o = out.data<T>();
            std::fill(o, o + out.num_elements(), T{});
            const T* s = data.data<T>();
            for (std::size_t i = 0; i < ids.size(); ++i) {
                const std::int64_t k = ids[i];
                if (k < 0 || k >= n) continue;
                const T* src = s + static_cast<std::int64_t>(i) * inner;
                T* dst = o + k * inner;
                for (std::int64_t j = 0; j < inner; ++j) dst[j] += src[j];
            }
        },
        "data");
    return out;
}

}  // namespace graft::ops
