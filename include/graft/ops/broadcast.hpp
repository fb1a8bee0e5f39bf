// graft/ops/broadcast.hpp — NumPy/TensorFlow broadcasting for the elementwise kernels.
//
//   auto p = ops::make_broadcast("Add", {a.shape(), b.shape()});   // [2,1,3] and [4,1] -> [2,4,3]
//   p.dims;        // the output with adjacent dims of the same broadcast pattern merged
//   p.strides[k];  // input k's element stride per merged dim, 0 where input k is repeated
//   auto [r0, r1] = ops::bcast_gradient_args(shape{2,1,5}, shape{3,1});   // r0 = [1], r1 = [0,2]
//
// The merged form is what makes the fast paths fall out of one loop: equal shapes merge into one
// dim (a flat loop), a scalar operand becomes stride 0 (an Eigen constant), a row vector against a
// matrix becomes [rows, cols] with stride 0 on the rows.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "graft/core/small_vector.hpp"
#include "graft/ops/detail/op_support.hpp"

namespace graft::ops {

/// How k input shapes broadcast to one output shape.
struct broadcast_plan {
    /// Merged dims (or one input's strides over them): held in place up to 8, as an elementwise op
    /// plans its broadcast on every run (std::vectors here were 6 of a [1] + [1] Add's 7 heap blocks).
    using dim_list = small_vector<std::int64_t, 8>;
    shape out_shape;                ///< the full broadcast shape
    std::int64_t num_elements = 0;  ///< elements of out_shape
    dim_list dims;                  ///< out_shape with size-1 dims dropped and runs merged
    small_vector<dim_list, 3> strides;  ///< per input, per merged dim; 0 = repeated
    bool same_shapes = false;           ///< every input already has out_shape
};

namespace op_detail {
/// make_broadcast over the shapes behind `shapes`, read in place (an elementwise op plans its
/// broadcast on every run: its input shapes are not copied for it).
inline broadcast_plan plan_broadcast(std::string_view op, std::span<const shape* const> shapes) {
    broadcast_plan p;
    std::size_t rank = 0;
    for (const shape* s : shapes) {
        if (!s->fully_defined()) {
            throw shape_error(op_detail::cat(op, ": shape ", s->str(), " is not fully defined"));
        }
        rank = std::max(rank, s->dims().size());
    }
    const std::size_t k = shapes.size();
    auto in_dim = [&](std::size_t i, std::size_t j) -> std::int64_t {
        const auto& d = shapes[i]->dims();
        std::size_t pad = rank - d.size();
        return j < pad ? 1 : d[j - pad];
    };
    std::vector<std::int64_t> out(rank, 1);
    for (std::size_t j = 0; j < rank; ++j) {
        std::size_t from = k;
        for (std::size_t i = 0; i < k; ++i) {
            std::int64_t d = in_dim(i, j);
            if (d == 1) continue;
            if (from == k) {
                out[j] = d;
                from = i;
            } else if (d != out[j]) {
                std::string all;
                for (std::size_t q = 0; q < k; ++q) all += (q ? " and " : "") + shapes[q]->str();
                throw shape_error(
                    op_detail::cat(op, ": shapes ", all, " cannot be broadcast: input ", from,
                                   " has ", out[j], " and input ", i, " has ", d, " at output dim ",
                                   j),
                    {}, "broadcasting needs equal dims or 1 on one side (aligned from the right)");
            }
        }
    }
    p.out_shape = shape(std::move(out));
    const auto& od = p.out_shape.dims();
    p.num_elements = p.out_shape.num_elements();
    p.same_shapes = true;
    for (const shape* s : shapes) p.same_shapes = p.same_shapes && *s == p.out_shape;
    p.strides.assign(k, {});
    if (p.num_elements == 0) return p;
    // Merge runs of dims with the same pattern of repeated inputs; drop output dims of size 1.
    small_vector<std::uint64_t, 8> patterns;
    patterns.reserve(rank);
    p.dims.reserve(rank);
    for (std::size_t j = 0; j < rank; ++j) {
        if (od[j] == 1) continue;
        std::uint64_t pat = 0;
        for (std::size_t i = 0; i < k; ++i) {
            if (in_dim(i, j) == 1) pat |= (std::uint64_t{1} << i);
        }
        if (!patterns.empty() && patterns.back() == pat) {
            p.dims.back() *= od[j];
        } else {
            p.dims.push_back(od[j]);
            patterns.push_back(pat);
        }
    }
    if (p.dims.empty()) {  // every dim is 1: one element each
        p.dims.push_back(1);
        patterns.push_back(0);
    }
    for (std::size_t i = 0; i < k; ++i) {
        auto& st = p.strides[i];
        st.assign(p.dims.size(), 0);
        std::int64_t acc = 1;
        for (std::size_t j = p.dims.size(); j-- > 0;) {
            if (!(patterns[j] >> i & 1)) {
                st[j] = acc;
                acc *= p.dims[j];
            }
        }
    }
    return p;
}
}  // namespace op_detail

/// Plans the broadcast of `shapes` (aligned from the right; each dim equal or 1). Throws
/// shape_error naming `op`, the inputs and the first dim that does not fit.
inline broadcast_plan make_broadcast(std::string_view op, const std::vector<shape>& shapes) {
    std::vector<const shape*> in;
    in.reserve(shapes.size());
    for (const auto& s : shapes) in.push_back(&s);
    return op_detail::plan_broadcast(op, in);
}
/// The same for two shapes, read in place.
inline broadcast_plan make_broadcast(std::string_view op, const shape& a, const shape& b) {
    const std::array<const shape*, 2> in{&a, &b};
    return op_detail::plan_broadcast(op, in);
}

/// The broadcast shape of `a` and `b`; throws shape_error naming `op` when they do not broadcast.
inline shape broadcast_shape(std::string_view op, const shape& a, const shape& b) {
    return make_broadcast(op, a, b).out_shape;
}

/// TF's BroadcastGradientArgs on shapes: the output axes over which the gradient must be summed to
/// get the gradient of `a` (r0) and of `b` (r1). Throws shape_error when they do not broadcast.
inline std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> bcast_gradient_args(
    const shape& a, const shape& b) {
    make_broadcast("BroadcastGradientArgs", a, b);  // validates
    const auto& da = a.dims();
    const auto& db = b.dims();
    const std::size_t n = std::max(da.size(), db.size());
    std::vector<std::int64_t> r0, r1;
    for (std::size_t j = 0; j < n; ++j) {
        std::int64_t x = j < n - da.size() ? 1 : da[j - (n - da.size())];
        std::int64_t y = j < n - db.size() ? 1 : db[j - (n - db.size())];
        const auto axis = static_cast<std::int64_t>(j);
        if (x == 1 && y == 1) {  // both reduced (TF keeps such axes in both lists)
            r0.push_back(axis);
            r1.push_back(axis);
        } else if (x == 1) {
            r0.push_back(axis);
        } else if (y == 1) {
            r1.push_back(axis);
        }
    }
    return {r0, r1};
}

namespace op_detail {

/// A 1-D int tensor of dtype `t` (int32 or int64) holding `v`. Throws as above.
inline tensor int_vector(dtype t, const std::vector<std::int64_t>& v) {
    tensor r = tensor::uninitialized(t, shape{static_cast<std::int64_t>(v.size())});
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (t == dtype::int32)
            r.data<std::int32_t>()[i] = static_cast<std::int32_t>(v[i]);
        else
            r.data<std::int64_t>()[i] = v[i];
    }
    return r;
}

inline shape shape_from_tensor(std::string_view op, const tensor& t, std::string_view what) {
    auto v = int_list(op, t, what);
    if (t.rank() != 1)
        throw shape_error(cat(op, ": ", what, " must be a vector but has shape ", t.shape().str()));
    for (auto d : v) {
        if (d < 0)
            throw invalid_argument_error(
                cat(op, ": ", what, " ", list_str(v), " has a negative dim"));
    }
    return shape(v);
}

/// Visits the output of plan `p` in contiguous runs: f(out_offset, len, in_offsets, in_contiguous)
/// where input k's run starts at in_offsets[k] and advances by 1 (in_contiguous[k]) or stays put.
/// Runs in parallel on graft's pool; `bytes`/`cycles` are per output element.
template <std::size_t K, class F>
void for_each_run(const broadcast_plan& p, double bytes, double cycles, const F& f) {
    if (p.num_elements == 0) return;
    const std::size_t r = p.dims.size();
    const std::int64_t inner = p.dims.back();
    std::array<std::int64_t, K> inner_stride{};
    std::array<bool, K> contiguous{};
    for (std::size_t k = 0; k < K; ++k) {
        inner_stride[k] = p.strides[k][r - 1];
        contiguous[k] = inner_stride[k] != 0;
    }
    parallel_for(p.num_elements, bytes, cycles, [&](std::int64_t first, std::int64_t last) {
        std::int64_t row = first / inner;
        std::int64_t col = first % inner;
        std::array<std::int64_t, 8> idx_small{};  // the odometer, in place for up to 8 merged dims
        std::vector<std::int64_t> idx_big(r > idx_small.size() ? r : 0, 0);
        std::int64_t* idx = r > idx_small.size() ? idx_big.data() : idx_small.data();
        std::array<std::int64_t, K> base{};
        for (std::size_t d = r - 1; d-- > 0;) {
            idx[d] = row % p.dims[d];
            row /= p.dims[d];
            for (std::size_t k = 0; k < K; ++k) base[k] += idx[d] * p.strides[k][d];
        }
        std::int64_t i = first;
        while (i < last) {
            const std::int64_t len = std::min(inner - col, last - i);
            std::array<std::int64_t, K> off;
            for (std::size_t k = 0; k < K; ++k) off[k] = base[k] + col * inner_stride[k];
            f(i, len, off, contiguous);
            i += len;
            col = 0;
            for (std::size_t d = r - 1; d-- > 0;) {  // odometer over the outer dims
                ++idx[d];
                for (std::size_t k = 0; k < K; ++k) base[k] += p.strides[k][d];
                if (idx[d] < p.dims[d]) break;
                for (std::size_t k = 0; k < K; ++k) base[k] -= p.strides[k][d] * p.dims[d];
                idx[d] = 0;
            }
        }
    });
}

}  // namespace op_detail

/// BroadcastGradientArgs: s0, s1 are int32/int64 shape vectors; returns (r0, r1) of the same dtype.
/// Throws shape_error when the shapes do not broadcast, invalid_argument_error for bad inputs.
inline std::pair<tensor, tensor> broadcast_gradient_args(const tensor& s0, const tensor& s1) {
    const char* op = "BroadcastGradientArgs";
    auto a = op_detail::shape_from_tensor(op, s0, "s0");
    auto b = op_detail::shape_from_tensor(op, s1, "s1");
    op_detail::require_same_dtype(op, s0, "s0", s1, "s1");
    auto [r0, r1] = bcast_gradient_args(a, b);
    return {op_detail::int_vector(s0.type(), r0), op_detail::int_vector(s0.type(), r1)};
}

/// BroadcastArgs: the broadcast shape of two int32/int64 shape vectors, same dtype.
/// Throws shape_error when they do not broadcast.
inline tensor broadcast_args(const tensor& s0, const tensor& s1) {
    const char* op = "BroadcastArgs";
    auto a = op_detail::shape_from_tensor(op, s0, "s0");
    auto b = op_detail::shape_from_tensor(op, s1, "s1");
    op_detail::require_same_dtype(op, s0, "s0", s1, "s1");
    return op_detail::int_vector(s0.type(), broadcast_shape(op, a, b).dims());
}

/// BroadcastTo: `x` repeated to shape `s` (x must broadcast to exactly s). Any dense dtype.
/// Throws shape_error when it does not.
inline tensor broadcast_to(const tensor& x, const shape& s) {
    const char* op = "BroadcastTo";
    op_detail::require_input(op, x, "input");
    auto p = make_broadcast(op, x.shape(), s);
    if (!(p.out_shape == s)) {
        throw shape_error(op_detail::cat(op, ": input ", x.shape().str(),
                                         " cannot be broadcast to ", s.str(), " (it would give ",
                                         p.out_shape.str(), ")"));
    }
    if (p.same_shapes) return x;
    tensor out = tensor::uninitialized(x.type(), s);
    op_detail::visit_element_bytes(x.type(), op, [&](auto tag) {
        using U = decltype(tag);
        const U* src = op_detail::elements_as<U>(x);
        U* dst = op_detail::elements_as<U>(out);
        op_detail::for_each_run<1>(
            p, 2.0 * sizeof(U), 1.0,
            [&](std::int64_t i, std::int64_t len, const auto& off, const auto& contig) {
                if (contig[0])
                    std::copy(src + off[0], src + off[0] + len, dst + i);
                else
                    std::fill(dst + i, dst + i + len, src[off[0]]);
            });
    });
    return out;
}

/// BroadcastTo with the shape given as an int32/int64 vector tensor. Throws as above.
inline tensor broadcast_to(const tensor& x, const tensor& shape_t) {
    return broadcast_to(x, op_detail::shape_from_tensor("BroadcastTo", shape_t, "shape"));
}

}  // namespace graft::ops
