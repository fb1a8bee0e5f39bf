// graft/exec/cpu_kernels/indexing.hpp — the indexing family's CPU kernels bound to their TF op types:
// GatherNd, ScatterNd, TensorScatter*, the scatters into TF1 ref and resource variables, TopKV2,
// NthElement, InTopKV2, Segment* / UnsortedSegment{Prod,Min,Max}, Unique*, DynamicPartition,
// SparseToDense and SparseTensorDenseAdd (ops/scatter.hpp, segment.hpp, top_k.hpp, unique.hpp,
// sparse_dense.hpp).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graft/exec/kernel.hpp"
#include "graft/exec/session.hpp"
#include "graft/ops/scatter.hpp"
#include "graft/ops/segment.hpp"
#include "graft/ops/sparse_dense.hpp"
#include "graft/ops/top_k.hpp"
#include "graft/ops/unique.hpp"

namespace graft::exec::kernels {

namespace indexing_detail {

/// A scatter into input 0: in place on the variable when input 0 is a ref or resource edge (the
/// value made private first: tensors read earlier keep theirs), else on a copy of the tensor (a
/// frozen graph's Const in place of the variable) that becomes output 0. Ref ops output the ref.
template <class Apply>
void scatter_into_input0(kernel_context& c, Apply apply) {
    tensor indices = c.input(1), updates = c.input(2);
    if (c.input_is_variable(0)) {
        auto& var = c.variable_input(0);
        var->update_in_place([&](tensor& v) { apply(v, indices, updates); });
        if (!c.raw_input(0).is_resource && c.num_outputs() > 0) c.set_output_value(0, value::ref(var));
        return;
    }
    tensor copy = c.input(0).clone();
    apply(copy, indices, updates);
    if (c.num_outputs() > 0) c.set_output(0, std::move(copy));
}

inline void add_ref_scatters(kernel_registry& r, const std::string& prefix, bool nd,
                             std::initializer_list<std::pair<const char*, ops::scatter_kind>> kinds) {
    for (auto [suffix, kind] : kinds) {
        const std::string op = prefix + suffix;
        r.add(op, [op, nd, kind = kind](kernel_context& c) {
            scatter_into_input0(c, [&](const tensor& v, const tensor& i, const tensor& u) {
                if (nd) ops::scatter_nd_into(kind, v, i, u, op);
                else ops::scatter_rows_into(kind, v, i, u, op);
            });
        });
    }
}

/// A CPU kernel_def that reads inputs `i` (shapes, k, axes) on the host.
inline kernel_def on_host(std::vector<int> i) {
    kernel_def d;
    d.host_inputs = std::move(i);
    return d;
}

inline void set_unique_outputs(kernel_context& c, const ops::unique_result& u) {
    c.set_output(0, u.y);
    c.set_output(1, u.idx);
    if (c.num_outputs() > 2) c.set_output(2, u.count);
}

}  // namespace indexing_detail

inline void register_indexing(kernel_registry& r) {
    using K = ops::scatter_kind;
    using S = ops::segment_kind;

    // gather / scatter on tensors
    r.add("GatherNd", [](kernel_context& c) { c.set_output(0, ops::gather_nd(c.input(0), c.input(1))); });
    r.add("ScatterNd", [](kernel_context& c) {
        c.set_output(0, ops::scatter_nd(c.input(0), c.input(1), c.input(2)));
    }, indexing_detail::on_host({2}));
    for (auto [op, kind] : {std::pair{"TensorScatterUpdate", K::update}, std::pair{"TensorScatterAdd", K::add},
                            std::pair{"TensorScatterSub", K::sub}, std::pair{"TensorScatterMin", K::min},
                            std::pair{"TensorScatterMax", K::max}, std::pair{"ScatterNdNonAliasingAdd", K::add}}) {
        r.add(op, [op = std::string(op), kind = kind](kernel_context& c) {
            c.set_output(0, ops::tensor_scatter(kind, c.input(0), c.input(1), c.input(2), op));
        });
    }

    // scatters into variables (TF1 refs output the ref; a plain tensor input is updated on a copy)
    const std::initializer_list<std::pair<const char*, K>> nd = {
        {"Update", K::update}, {"Add", K::add}, {"Sub", K::sub}, {"Min", K::min}, {"Max", K::max}};
    indexing_detail::add_ref_scatters(r, "ScatterNd", true, nd);
    indexing_detail::add_ref_scatters(r, "ResourceScatterNd", true, nd);
    const std::initializer_list<std::pair<const char*, K>> rows = {
        {"Update", K::update}, {"Add", K::add}, {"Sub", K::sub}, {"Mul", K::mul},
        {"Div", K::div},       {"Min", K::min}, {"Max", K::max}};
    indexing_detail::add_ref_scatters(r, "Scatter", false, rows);
    indexing_detail::add_ref_scatters(r, "ResourceScatter", false, rows);

    // order statistics
    r.add("TopKV2", [](kernel_context& c) {
        auto [v, i] = ops::top_k(c.input(0), c.input(1), c.attr_or<dtype>("index_type", dtype::int32));
        c.set_output(0, std::move(v));
        c.set_output(1, std::move(i));
    }, indexing_detail::on_host({1}));
    r.add("TopK", [](kernel_context& c) {
        auto [v, i] = ops::top_k(c.input(0), c.attr_int("k"));
        c.set_output(0, std::move(v));
        c.set_output(1, std::move(i));
    });
    r.add("NthElement", [](kernel_context& c) {
        c.set_output(0, ops::nth_element(c.input(0), c.input(1), c.attr_or<bool>("reverse", false)));
    }, indexing_detail::on_host({1}));
    r.add("InTopKV2", [](kernel_context& c) {
        c.set_output(0, ops::in_top_k(c.input(0), c.input(1), c.input(2)));
    }, indexing_detail::on_host({2}));
    r.add("InTopK", [](kernel_context& c) {
        c.set_output(0, ops::in_top_k(c.input(0), c.input(1), c.attr_int("k")));
    });

    // segment reductions
    for (auto [op, kind] : {std::pair{"SegmentSum", S::sum}, std::pair{"SegmentMean", S::mean},
                            std::pair{"SegmentProd", S::prod}, std::pair{"SegmentMin", S::min},
                            std::pair{"SegmentMax", S::max}}) {
        r.add(op, [kind = kind](kernel_context& c) {
            c.set_output(0, ops::segment_reduce(kind, c.input(0), c.input(1)));
        });
    }
    for (auto [op, kind] : {std::pair{"UnsortedSegmentProd", S::prod}, std::pair{"UnsortedSegmentMin", S::min},
                            std::pair{"UnsortedSegmentMax", S::max}}) {
        r.add(op, [op = std::string(op), kind = kind](kernel_context& c) {
            const auto n = ops::op_detail::int_scalar(op, c.input(2), "num_segments");
            c.set_output(0, ops::unsorted_segment_reduce(kind, c.input(0), c.input(1), n));
        }, indexing_detail::on_host({2}));
    }

    // unique, partition
    auto out_idx = [](kernel_context& c) { return c.attr_or<dtype>("out_idx", dtype::int32); };
    r.add("Unique", [out_idx](kernel_context& c) {
        indexing_detail::set_unique_outputs(c, ops::unique(c.input(0), std::nullopt, out_idx(c)));
    });
    r.add("UniqueWithCounts", *r.find("Unique"));
    r.add("UniqueV2", [out_idx](kernel_context& c) {
        indexing_detail::set_unique_outputs(c, ops::unique(c.input(0), c.input(1), out_idx(c)));
    }, indexing_detail::on_host({1}));
    r.add("UniqueWithCountsV2", *r.find("UniqueV2"), indexing_detail::on_host({1}));
    r.add("DynamicPartition", [](kernel_context& c) {
        auto parts = ops::dynamic_partition(c.input(0), c.input(1), c.attr_int("num_partitions"));
        for (std::size_t i = 0; i < parts.size(); ++i) c.set_output(static_cast<int>(i), std::move(parts[i]));
    });

    // sparse into dense
    r.add("SparseToDense", [](kernel_context& c) {
        c.set_output(0, ops::sparse_to_dense(c.input(0), c.input(1), c.input(2), c.input(3),
                                             c.attr_or<bool>("validate_indices", true)));
    }, indexing_detail::on_host({0, 1}));
    r.add("SparseTensorDenseAdd", [](kernel_context& c) {
        c.set_output(0, ops::sparse_tensor_dense_add(c.input(0), c.input(1), c.input(2), c.input(3)));
    }, indexing_detail::on_host({0, 2}));
}

}  // namespace graft::exec::kernels
