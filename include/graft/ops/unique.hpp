// graft/ops/unique.hpp — grouping ops: Unique / UniqueV2 / UniqueWithCounts(V2) and
// DynamicPartition.
//
//   auto u = ops::unique(ids);                   // u.y: first occurrences in order, u.idx, u.count
//   auto rows = ops::unique(m, 0);               // unique rows of a matrix
//   auto parts = ops::dynamic_partition(data, which, 2);
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "graft/ops/detail/op_support.hpp"

namespace graft::ops {

/// What unique() returns: the unique slices, the slice each input slice maps to, and how often
/// each unique slice occurs.
struct unique_result {
    tensor y, idx, count;
};

/// Unique (axis nullopt: x must be 1-D) or UniqueV2 along `axis`: the distinct slices of x along
/// the axis in order of first occurrence (y), for each input slice the position of its slice in
/// y (idx, [x.dim(axis)]), and the occurrences of each (count). Values compare as TF's hash map
/// does (bit patterns, with -0.0 equal to 0.0). idx and count have dtype `out_idx` (int32/int64).
/// Any dtype. Throws invalid_argument_error for a non-vector x without an axis, an axis out of
/// range or another out_idx.
inline unique_result unique(const tensor& x, std::optional<std::int64_t> axis = std::nullopt,
                            dtype out_idx = dtype::int32) {
    const char* op = axis ? "UniqueV2" : "Unique";
    op_detail::require_input(op, x, "x");
    if (!axis && x.rank() != 1) {
        throw invalid_argument_error(op_detail::cat(op, ": unique expects a 1-D vector (or an axis), got ",
                                                    x.describe()));
    }
    const dtype it = base_type(out_idx);
    if (it != dtype::int32 && it != dtype::int64) {
        throw invalid_argument_error(op_detail::cat(op, ": out_idx must be int32 or int64, got ", dtype_name(out_idx)));
    }
    const int ax = axis ? op_detail::normalize_axis(op, *axis, x.rank()) : 0;
    const auto& d = x.shape().dims();
    const auto uax = static_cast<std::size_t>(ax);
    const std::int64_t outer = op_detail::dim_product(d, 0, uax);
    const std::int64_t n = d[uax];
    const std::int64_t inner = op_detail::dim_product(d, uax + 1, d.size());
    const bool floating = is_floating(x.type());
    std::vector<std::int64_t> idx(static_cast<std::size_t>(n));
    std::vector<std::int64_t> firsts, counts;
    op_detail::visit_element_bytes(x.type(), op, [&](auto tag) {
        using U = decltype(tag);
        const U* p = op_detail::elements_as<U>(x);
        std::unordered_map<std::string, std::int64_t> seen;
        std::string key;
        for (std::int64_t j = 0; j < n; ++j) {
            key.clear();
            for (std::int64_t o = 0; o < outer; ++o) {
                for (std::int64_t i = 0; i < inner; ++i) {
                    const U& v = p[(o * n + j) * inner + i];
                    if constexpr (std::is_same_v<U, std::string>) {
                        const std::uint64_t len = v.size();
                        key.append(reinterpret_cast<const char*>(&len), sizeof len);
                        key += v;
                    } else if constexpr (std::is_unsigned_v<U>) {
                        U w = v;
                        if (floating && w == static_cast<U>(U(1) << (8 * sizeof(U) - 1))) w = 0;  // -0.0 as 0.0
                        key.append(reinterpret_cast<const char*>(&w), sizeof w);
                    } else {
                        key.append(reinterpret_cast<const char*>(&v), sizeof v);
                    }
                }
            }
            auto [pos, fresh] = seen.emplace(key, static_cast<std::int64_t>(firsts.size()));
            if (fresh) {
                firsts.push_back(j);
                counts.push_back(0);
            }
            idx[static_cast<std::size_t>(j)] = pos->second;
            ++counts[static_cast<std::size_t>(pos->second)];
        }
    });
    std::vector<std::int64_t> yd = d;
    yd[uax] = static_cast<std::int64_t>(firsts.size());
    unique_result r;
    r.y = tensor::uninitialized(x.type(), shape(yd));
    op_detail::visit_element_bytes(x.type(), op, [&](auto tag) {
        using U = decltype(tag);
        const U* p = op_detail::elements_as<U>(x);
        U* q = op_detail::elements_as<U>(r.y);
        const auto m = static_cast<std::int64_t>(firsts.size());
        for (std::int64_t o = 0; o < outer; ++o) {
            for (std::int64_t u = 0; u < m; ++u) {
                const U* from = p + (o * n + firsts[static_cast<std::size_t>(u)]) * inner;
                std::copy(from, from + inner, q + (o * m + u) * inner);
            }
        }
    });
    auto as_index = [&](const std::vector<std::int64_t>& v) {
        tensor t = tensor::uninitialized(it, shape{static_cast<std::int64_t>(v.size())});
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (it == dtype::int64) t.data<std::int64_t>()[i] = v[i];
            else t.data<std::int32_t>()[i] = static_cast<std::int32_t>(v[i]);
        }
        return t;
    };
    r.idx = as_index(idx);
    r.count = as_index(counts);
    return r;
}
/// UniqueV2 with the axis as an int32/int64 tensor of 0 or 1 elements (0: x must be 1-D). Throws
/// as above.
inline unique_result unique(const tensor& x, const tensor& axis, dtype out_idx = dtype::int32) {
    const auto a = op_detail::int_list("UniqueV2", axis, "axis");
    if (a.size() > 1) {
        throw invalid_argument_error(op_detail::cat("UniqueV2: axis must hold at most one value, got ",
                                                    axis.shape().str()));
    }
    if (a.empty()) return unique(x, std::nullopt, out_idx);
    return unique(x, a[0], out_idx);
}

/// DynamicPartition: num_partitions outputs; output p holds, in order, the slices data[i...]
/// whose partitions[i...] == p ([count_p] + data.shape[rank(partitions):]). partitions int32 shaped
/// like a prefix of data. Any dtype. Throws invalid_argument_error for a partition outside [0,
/// num_partitions) (naming it) or a shape mismatch.
inline std::vector<tensor> dynamic_partition(const tensor& data, const tensor& partitions,
                                             std::int64_t num_partitions) {
    const char* op = "DynamicPartition";
    op_detail::require_input(op, data, "data");
    op_detail::require_input(op, partitions, "partitions");
    const auto& dd = data.shape().dims();
    const auto& pd = partitions.shape().dims();
    if (pd.size() > dd.size() || !std::equal(pd.begin(), pd.end(), dd.begin())) {
        throw invalid_argument_error(op_detail::cat(op, ": partitions ", partitions.shape().str(),
                                                    " must be a prefix of data's shape ", data.shape().str()));
    }
    const auto parts = op_detail::int_list(op, partitions.reshaped(shape{partitions.num_elements()}), "partitions");
    std::vector<std::int64_t> counts(static_cast<std::size_t>(std::max<std::int64_t>(num_partitions, 0)));
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (parts[i] < 0 || parts[i] >= num_partitions) {
            throw invalid_argument_error(op_detail::cat(op, ": partitions[", i, "] = ", parts[i], " is not in [0, ",
                                                        num_partitions, ")"));
        }
        ++counts[static_cast<std::size_t>(parts[i])];
    }
    const std::vector<std::int64_t> rest(dd.begin() + static_cast<std::ptrdiff_t>(pd.size()), dd.end());
    const std::int64_t slice = op_detail::dim_product(rest, 0, rest.size());
    std::vector<tensor> out;
    for (auto c : counts) {
        std::vector<std::int64_t> od{c};
        od.insert(od.end(), rest.begin(), rest.end());
        out.push_back(tensor::uninitialized(data.type(), shape(od)));
    }
    op_detail::visit_element_bytes(data.type(), op, [&](auto tag) {
        using U = decltype(tag);
        const U* src = op_detail::elements_as<U>(data);
        std::vector<std::int64_t> filled(counts.size());
        for (std::size_t i = 0; i < parts.size(); ++i) {
            const auto p = static_cast<std::size_t>(parts[i]);
            U* dst = op_detail::elements_as<U>(out[p]) + filled[p]++ * slice;
            std::copy(src + static_cast<std::int64_t>(i) * slice, src + static_cast<std::int64_t>(i + 1) * slice, dst);
        }
    });
    return out;
}

}  // namespace graft::ops
