// graft/ops/segment.hpp — segment reductions: SegmentSum/Mean/Prod/Min/Max (sorted ids, along
// dim 0) and UnsortedSegmentProd/Min/Max (ids of any prefix shape, num_segments given).
//
//   tensor s = ops::segment_reduce(ops::segment_kind::max, data, ids);          // ids sorted
//   tensor u = ops::unsorted_segment_reduce(ops::segment_kind::prod, data, ids, 4);
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "graft/ops/scatter.hpp"

namespace graft::ops {

/// The reduction of a segment op.
enum class segment_kind { sum, mean, prod, min, max };

namespace segment_detail {

inline const char* sorted_name(segment_kind k) {
    switch (k) {
        case segment_kind::sum: return "SegmentSum";
        case segment_kind::mean: return "SegmentMean";
        case segment_kind::prod: return "SegmentProd";
        case segment_kind::min: return "SegmentMin";
        case segment_kind::max: return "SegmentMax";
    }
    return "Segment";
}
inline const char* unsorted_name(segment_kind k) {
    switch (k) {
        case segment_kind::sum: return "UnsortedSegmentSum";
        case segment_kind::mean: return "UnsortedSegmentMean";
        case segment_kind::prod: return "UnsortedSegmentProd";
        case segment_kind::min: return "UnsortedSegmentMin";
        case segment_kind::max: return "UnsortedSegmentMax";
    }
    return "UnsortedSegment";
}

/// Folds `inner` elements of src into dst (the kind's combine; mean sums).
template <class T>
inline void fold(segment_kind k, T* dst, const T* src, std::int64_t inner) {
    switch (k) {
        case segment_kind::sum:
        case segment_kind::mean:
            for (std::int64_t j = 0; j < inner; ++j) dst[j] = static_cast<T>(dst[j] + src[j]);
            break;
        case segment_kind::prod:
            for (std::int64_t j = 0; j < inner; ++j) dst[j] = static_cast<T>(dst[j] * src[j]);
            break;
        case segment_kind::min:
            for (std::int64_t j = 0; j < inner; ++j) dst[j] = src[j] < dst[j] ? src[j] : dst[j];
            break;
        case segment_kind::max:
            for (std::int64_t j = 0; j < inner; ++j) dst[j] = dst[j] < src[j] ? src[j] : dst[j];
            break;
    }
}

/// The value a reduction over nothing starts from: 0 for sums, 1 for products, the largest value
/// for min and the lowest for max (TF's Zero/One/Highest/Lowest).
template <class T>
inline T identity(segment_kind k) {
    switch (k) {
        case segment_kind::prod: return T(1);
        case segment_kind::min: return Eigen::NumTraits<T>::highest();
        case segment_kind::max: return Eigen::NumTraits<T>::lowest();
        default: return T(0);
    }
}

}  // namespace segment_detail

/// SegmentSum/Mean/Prod/Min/Max: output[k, ...] = the reduction of data[i, ...] over the i with
/// segment_ids[i] == k. segment_ids: int32/int64 vector of data.dim(0) sorted non-negative ids;
/// the output has last id + 1 rows, and a row no id names is 0 (1 for SegmentProd), as in TF. Mean
/// of integers divides as integers. Real-number data. Throws invalid_argument_error for unsorted or
/// negative ids, a size mismatch or another dtype.
inline tensor segment_reduce(segment_kind k, const tensor& data, const tensor& segment_ids) {
    const char* op = segment_detail::sorted_name(k);
    op_detail::require_input(op, data, "data");
    op_detail::require_input(op, segment_ids, "segment_ids");
    if (segment_ids.rank() != 1) {
        throw invalid_argument_error(op_detail::cat(op, ": segment_ids must be a vector, got shape ",
                                                    segment_ids.shape().str()));
    }
    if (data.rank() < 1 || data.dim(0) != segment_ids.dim(0)) {
        throw invalid_argument_error(op_detail::cat(op, ": segment_ids ", segment_ids.shape().str(),
                                                    " must have one id per row of data ", data.shape().str()));
    }
    const auto ids = op_detail::index_values(op, segment_ids, "segment_ids");
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] < 0) {
            throw invalid_argument_error(op_detail::cat(op, ": segment_ids[", i, "] = ", ids[i], " is negative"));
        }
        if (i > 0 && ids[i] < ids[i - 1]) {
            throw invalid_argument_error(op_detail::cat(op, ": segment ids are not increasing: segment_ids[", i - 1,
                                                        "] = ", ids[i - 1], " but segment_ids[", i, "] = ", ids[i]),
                                         {}, "sort the ids (or use the UnsortedSegment op)");
        }
    }
    const std::int64_t rows = ids.empty() ? 0 : ids.back() + 1;
    std::vector<std::int64_t> od = data.shape().dims();
    od[0] = rows;
    const std::int64_t inner = op_detail::dim_product(od, 1, od.size());
    tensor out = tensor::uninitialized(data.type(), shape(od));
    scatter_detail::dispatch_real(data.type(), op, [&](auto tag) {
        using T = decltype(tag);
        T* o = out.data<T>();
        const T* s = data.data<T>();
        const T empty = k == segment_kind::prod ? T(1) : T(0);
        std::fill(o, o + out.num_elements(), empty);
        std::size_t i = 0;
        while (i < ids.size()) {
            std::size_t e = i + 1;
            while (e < ids.size() && ids[e] == ids[i]) ++e;
            T* dst = o + ids[i] * inner;
            std::copy(s + static_cast<std::int64_t>(i) * inner, s + static_cast<std::int64_t>(i + 1) * inner, dst);
            for (std::size_t r = i + 1; r < e; ++r) {
                segment_detail::fold(k, dst, s + static_cast<std::int64_t>(r) * inner, inner);
            }
            if (k == segment_kind::mean) {
                const T count = static_cast<T>(static_cast<double>(e - i));
                for (std::int64_t j = 0; j < inner; ++j) dst[j] = static_cast<T>(dst[j] / count);
            }
            i = e;
        }
    }, "data");
    return out;
}

/// UnsortedSegmentSum/Prod/Min/Max: output[k, ...] = the reduction of data[i..., ...] over the i
/// with segment_ids[i...] == k; the output is [num_segments] + data.shape[rank(segment_ids):], a
/// row no id names holds the reduction's identity (0, 1, the dtype's highest / lowest), negative
/// ids are dropped. Real-number data; ids int32/int64 shaped like a prefix of data. Throws
/// invalid_argument_error for an id >= num_segments (naming it), a shape mismatch, negative
/// num_segments or another dtype.
inline tensor unsorted_segment_reduce(segment_kind k, const tensor& data, const tensor& segment_ids,
                                      std::int64_t num_segments) {
    const char* op = segment_detail::unsorted_name(k);
    op_detail::require_input(op, data, "data");
    op_detail::require_input(op, segment_ids, "segment_ids");
    if (num_segments < 0) {
        throw invalid_argument_error(op_detail::cat(op, ": num_segments ", num_segments, " is negative"));
    }
    const auto& dd = data.shape().dims();
    const auto& id = segment_ids.shape().dims();
    if (id.size() > dd.size() || !std::equal(id.begin(), id.end(), dd.begin())) {
        throw invalid_argument_error(op_detail::cat(op, ": segment_ids ", segment_ids.shape().str(),
                                                    " must be a prefix of data's shape ", data.shape().str()));
    }
    const auto ids = op_detail::index_values(op, segment_ids, "segment_ids");
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] >= num_segments) {
            throw invalid_argument_error(op_detail::cat(op, ": segment_ids[", i, "] = ", ids[i],
                                                        " is out of range [0, ", num_segments, ")"));
        }
    }
    std::vector<std::int64_t> od{num_segments};
    od.insert(od.end(), dd.begin() + static_cast<std::ptrdiff_t>(id.size()), dd.end());
    const std::int64_t inner = op_detail::dim_product(od, 1, od.size());
    tensor out = tensor::uninitialized(data.type(), shape(od));
    scatter_detail::dispatch_real(data.type(), op, [&](auto tag) {
        using T = decltype(tag);
        T* o = out.data<T>();
        const T* s = data.data<T>();
        std::fill(o, o + out.num_elements(), segment_detail::identity<T>(k));
        std::vector<std::int64_t> count(k == segment_kind::mean ? static_cast<std::size_t>(num_segments) : 0);
        for (std::size_t i = 0; i < ids.size(); ++i) {
            if (ids[i] < 0) continue;
            segment_detail::fold(k, o + ids[i] * inner, s + static_cast<std::int64_t>(i) * inner, inner);
            if (!count.empty()) ++count[static_cast<std::size_t>(ids[i])];
        }
        for (std::size_t r = 0; r < count.size(); ++r) {
            if (count[r] < 2) continue;
            const T c = static_cast<T>(static_cast<double>(count[r]));
            T* row = o + static_cast<std::int64_t>(r) * inner;
            for (std::int64_t j = 0; j < inner; ++j) row[j] = static_cast<T>(row[j] / c);
        }
    }, "data");
    return out;
}

}  // namespace graft::ops
