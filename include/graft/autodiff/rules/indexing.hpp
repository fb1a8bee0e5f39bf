// graft/autodiff/rules/indexing.hpp — gradients of the indexing family (graft/exec/cpu_kernels/indexing.hpp),
// built as TF's array_grad.py / math_grad.py / nn_grad.py / data_flow_grad.py / sparse_grad.py do:
// GatherNd <-> ScatterNd, TensorScatter*, TopK (the gradient scattered back to the picked indices),
// NthElement, the Segment* and UnsortedSegment{Prod,Min,Max} reductions, DynamicPartition,
// SparseToDense and SparseTensorDenseAdd. The scatters into variables, Unique and InTopK have none.
#pragma once

#include <string>

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

namespace indexing_rules {

/// Shape(x) with the given int dtype (to match an op's index inputs).
inline endpoint shape_in(const graph_builder& b, const endpoint& x, dtype t) {
    return b.op("Shape", {x}, {{"out_type", t}});
}
/// Sum of every element of x (a scalar).
inline endpoint sum_all(const graph_builder& b, const endpoint& x) {
    return b.op("Sum", {x, b.op("Range", {int_scalar(b, 0), b.op("Rank", {x}), int_scalar(b, 1)})});
}
/// The last dim of x as an int32 scalar.
inline endpoint last_dim(const graph_builder& b, const endpoint& x) {
    return b.op("StridedSlice", {shape_of(b, x), ints(b, {-1}), ints(b, {0}), ints(b, {1})},
                {{"end_mask", std::int64_t{1}}, {"shrink_axis_mask", std::int64_t{1}}});
}
/// `mask` (shaped like a prefix of `like`) reshaped to broadcast against `like`: its shape plus
/// one 1 per further dim of `like`.
inline endpoint broadcastable(const graph_builder& b, const endpoint& mask, const endpoint& like) {
    endpoint extra = b.op("Sub", {b.op("Rank", {like}), b.op("Rank", {mask})});
    endpoint ones = b.op("Fill", {b.op("ExpandDims", {extra, int_scalar(b, 0)}), int_scalar(b, 1)});
    return b.op("Reshape", {mask, b.op("ConcatV2", {shape_of(b, mask), ones, int_scalar(b, 0)})});
}

/// TF's _GatherDropNegatives: rows of params at ids, zero where the id is negative. Returns the
/// rows, the ids clipped at 0 and the id >= 0 mask (broadcastable against the rows).
struct dropped {
    endpoint rows, clipped, positive;
};
inline dropped gather_drop_negatives(const graph_builder& b, const endpoint& params, const endpoint& ids) {
    endpoint zeros = b.op("ZerosLike", {ids});
    dropped d;
    d.clipped = b.op("Maximum", {ids, zeros});
    endpoint gathered = b.op("GatherV2", {params, d.clipped, int_scalar(b, 0)});
    d.positive = broadcastable(b, b.op("GreaterEqual", {ids, zeros}), gathered);
    d.rows = b.op("SelectV2", {d.positive, gathered, b.op("ZerosLike", {gathered})});
    return d;
}

/// Gradient of Segment{Min,Max} (sorted: unsorted false) and UnsortedSegment{Min,Max}: the
/// gradient of each output row shared evenly by the inputs equal to it.
inline grad_list segment_min_max(grad_context& c, bool unsorted) {
    grad_list out(static_cast<std::size_t>(c.num_inputs()));
    auto& g = c.grad(0);
    if (!g) return out;
    const auto& b = c.b();
    endpoint data = c.input(0), ids = c.input(1);
    const dtype t = c.dtype_of(data);
    if (!unsorted) {
        endpoint gathered = b.op("GatherV2", {c.output(0), ids, int_scalar(b, 0)});
        endpoint selected = b.op("Equal", {data, gathered});
        endpoint num = b.op("SegmentSum", {b.op("Cast", {selected}, {{"DstT", t}}), ids});
        endpoint shared = b.op("GatherV2", {b.op("RealDiv", {*g, num}), ids, int_scalar(b, 0)});
        out[0] = b.op("SelectV2", {selected, shared, b.op("ZerosLike", {data})});
        return out;
    }
    dropped outs = gather_drop_negatives(b, c.output(0), ids);
    endpoint selected = b.op("LogicalAnd", {b.op("Equal", {data, outs.rows}), outs.positive});
    endpoint num = b.op("UnsortedSegmentSum", {b.op("Cast", {selected}, {{"DstT", t}}), ids, c.input(2)});
    endpoint weighted = b.op("GatherV2", {b.op("RealDiv", {*g, num}), outs.clipped, int_scalar(b, 0)});
    out[0] = b.op("SelectV2", {selected, weighted, b.op("ZerosLike", {data})});
    return out;
}

/// Gradient of SegmentProd / UnsortedSegmentProd: the product of the other members of the
/// segment, taking zeros into account (one zero: only it gets a gradient; two: none).
inline grad_list segment_prod(grad_context& c, bool unsorted) {
    grad_list out(static_cast<std::size_t>(c.num_inputs()));
    auto& g = c.grad(0);
    if (!g) return out;
    const auto& b = c.b();
    endpoint data = c.input(0), ids = c.input(1);
    auto seg = [&](const char* sorted_op, const char* unsorted_op, const endpoint& x) {
        return unsorted ? b.op(unsorted_op, {x, ids, c.input(2)}) : b.op(sorted_op, {x, ids});
    };
    endpoint is_zero = b.op("Equal", {data, b.op("ZerosLike", {data})});
    endpoint num_zeros = seg("SegmentSum", "UnsortedSegmentSum", b.op("Cast", {is_zero}, {{"DstT", dtype::int32}}));
    endpoint grad = b.op("SelectV2", {b.op("Greater", {num_zeros, int_scalar(b, 1)}), b.op("ZerosLike", {*g}), *g});
    endpoint non_zero = b.op("SelectV2", {is_zero, b.op("OnesLike", {data}), data});
    endpoint non_zero_prod = seg("SegmentProd", "UnsortedSegmentProd", non_zero);
    endpoint at = unsorted ? b.op("Maximum", {ids, b.op("ZerosLike", {ids})}) : ids;
    endpoint gathered_prod = b.op("GatherV2", {c.output(0), at, int_scalar(b, 0)});
    endpoint gathered_non_zero = b.op("GatherV2", {non_zero_prod, at, int_scalar(b, 0)});
    endpoint partial = b.op("SelectV2", {is_zero, gathered_non_zero, b.op("RealDiv", {gathered_prod, data})});
    endpoint gathered_grad =
        unsorted ? gather_drop_negatives(b, grad, ids).rows : b.op("GatherV2", {grad, ids, int_scalar(b, 0)});
    out[0] = b.op("Mul", {gathered_grad, partial});
    return out;
}

/// Gradient of TopK/TopKV2 for its input: the values' gradient scattered to the picked indices of
/// each last-dim row (zeros elsewhere).
inline endpoint top_k_input_grad(grad_context& c, const endpoint& g) {
    const auto& b = c.b();
    endpoint x = c.input(0);
    endpoint idx = b.op("Cast", {c.output(1)}, {{"DstT", dtype::int32}});
    endpoint in_last = last_dim(b, x);
    endpoint idx_2d = b.op("Reshape", {idx, b.op("Pack", {int_scalar(b, -1), last_dim(b, idx)})});
    endpoint outer = b.op("StridedSlice", {shape_of(b, idx_2d), ints(b, {0}), ints(b, {1}), ints(b, {1})},
                          {{"shrink_axis_mask", std::int64_t{1}}});
    endpoint offsets = b.op("Range", {int_scalar(b, 0), b.op("Mul", {outer, in_last}), in_last});
    endpoint flat = b.op("Reshape", {b.op("AddV2", {idx_2d, b.op("ExpandDims", {offsets, int_scalar(b, -1)})}),
                                     ints(b, {-1, 1})});
    endpoint size = b.op("ExpandDims", {b.op("Size", {x}), int_scalar(b, 0)});
    endpoint scattered = b.op("ScatterNd", {flat, b.op("Reshape", {g, ints(b, {-1})}), size});
    return b.op("Reshape", {scattered, shape_of(b, x)});
}

}  // namespace indexing_rules

inline void register_indexing(gradient_registry& r) {
    using namespace indexing_rules;
    // GatherNd: the gradient added back at the gathered positions.
    r.add("GatherNd", [](grad_context& c) {
        grad_list out(2);
        if (auto& g = c.grad(0)) {
            const auto& b = c.b();
            out[0] = b.op("ScatterNd", {c.input(1), *g, shape_in(b, c.input(0), c.dtype_of(c.input(1)))});
        }
        return out;
    });
    r.add("ScatterNd", [](grad_context& c) {
        grad_list out(3);
        if (auto& g = c.grad(0)) out[1] = c.b().op("GatherNd", {*g, c.input(0)});
        return out;
    });
    // TensorScatterUpdate: the overwritten positions get no gradient; the updates get theirs.
    r.add("TensorScatterUpdate", [](grad_context& c) {
        grad_list out(3);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        if (c.wants(0)) out[0] = b.op("TensorScatterUpdate", {*g, c.input(1), b.op("ZerosLike", {c.input(2)})});
        if (c.wants(2)) out[2] = b.op("GatherNd", {*g, c.input(1)});
        return out;
    });
    auto add_like = [](bool negate) {
        return [negate](grad_context& c) {
            grad_list out(3);
            auto& g = c.grad(0);
            if (!g) return out;
            out[0] = *g;
            if (c.wants(2)) {
                endpoint picked = c.b().op("GatherNd", {*g, c.input(1)});
                out[2] = negate ? c.b().op("Neg", {picked}) : picked;
            }
            return out;
        };
    };
    r.add("TensorScatterAdd", add_like(false));
    r.add("ScatterNdNonAliasingAdd", add_like(false));
    r.add("TensorScatterSub", add_like(true));
    // TensorScatterMin/Max: the gradient split evenly between the tensor element and the updates
    // equal to the result.
    auto min_max = [](grad_context& c) {
        grad_list out(3);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        endpoint x = c.input(0), idx = c.input(1), upd = c.input(2), y = c.output(0);
        const dtype t = c.dtype_of(x);
        endpoint x_ind = b.op("Cast", {b.op("Equal", {x, y})}, {{"DstT", t}});
        endpoint y_ind = b.op("Cast", {b.op("Equal", {upd, b.op("GatherNd", {y, idx})})}, {{"DstT", t}});
        endpoint ys_ind = b.op("ScatterNd", {idx, y_ind, shape_in(b, x, c.dtype_of(idx))});
        endpoint ind = b.op("AddV2", {x_ind, ys_ind});
        out[0] = b.op("RealDiv", {b.op("Mul", {*g, x_ind}), ind});
        if (c.wants(2)) out[2] = b.op("Mul", {b.op("GatherNd", {b.op("RealDiv", {*g, ind}), idx}), y_ind});
        return out;
    };
    r.add("TensorScatterMin", min_max);
    r.add("TensorScatterMax", min_max);

    // TopK: to the input positions the values came from; k gets none.
    r.add("TopKV2", [](grad_context& c) {
        grad_list out(2);
        if (auto& g = c.grad(0)) out[0] = top_k_input_grad(c, *g);
        return out;
    });
    r.add("TopK", [](grad_context& c) {
        grad_list out(1);
        if (auto& g = c.grad(0)) out[0] = top_k_input_grad(c, *g);
        return out;
    });
    // NthElement: shared evenly by the row's entries equal to the result.
    r.add("NthElement", [](grad_context& c) {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        endpoint x = c.input(0);
        endpoint ind = b.op("Cast", {b.op("Equal", {b.op("ExpandDims", {c.output(0), int_scalar(b, -1)}), x})},
                            {{"DstT", c.dtype_of(x)}});
        endpoint num = b.op("ExpandDims", {b.op("Sum", {ind, ints(b, {-1})}), int_scalar(b, -1)});
        out[0] = b.op("Mul", {b.op("RealDiv", {ind, num}), b.op("ExpandDims", {*g, int_scalar(b, -1)})});
        return out;
    });

    // segment reductions
    r.add("SegmentSum", [](grad_context& c) {
        grad_list out(2);
        if (auto& g = c.grad(0)) out[0] = c.b().op("GatherV2", {*g, c.input(1), int_scalar(c.b(), 0)});
        return out;
    });
    r.add("SegmentMean", [](grad_context& c) {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        endpoint data = c.input(0), ids = c.input(1);
        endpoint rest = b.op("Sub", {b.op("Rank", {data}), int_scalar(b, 1)});
        endpoint ones_shape = b.op("ConcatV2", {shape_of(b, ids),
                                                b.op("Fill", {b.op("ExpandDims", {rest, int_scalar(b, 0)}),
                                                              int_scalar(b, 1)}),
                                                int_scalar(b, 0)});
        endpoint ones = b.op("Fill", {ones_shape, b.scalar_as(c.dtype_of(data), 1.0)});
        endpoint scaled = b.op("RealDiv", {*g, b.op("SegmentSum", {ones, ids})});
        out[0] = b.op("GatherV2", {scaled, ids, int_scalar(b, 0)});
        return out;
    });
    r.add("SegmentMin", [](grad_context& c) { return segment_min_max(c, false); });
    r.add("SegmentMax", [](grad_context& c) { return segment_min_max(c, false); });
    r.add("UnsortedSegmentMin", [](grad_context& c) { return segment_min_max(c, true); });
    r.add("UnsortedSegmentMax", [](grad_context& c) { return segment_min_max(c, true); });
    r.add("SegmentProd", [](grad_context& c) { return segment_prod(c, false); });
    r.add("UnsortedSegmentProd", [](grad_context& c) { return segment_prod(c, true); });

    // DynamicPartition: the outputs' gradients stitched back to the rows they came from.
    r.add("DynamicPartition", [](grad_context& c) {
        grad_list out(2);
        const auto& b = c.b();
        endpoint parts = c.input(1);
        endpoint prefix = shape_of(b, parts);
        endpoint original = b.op("Reshape", {b.op("Range", {int_scalar(b, 0), b.op("Prod", {prefix, int_scalar(b, 0)}),
                                                            int_scalar(b, 1)}),
                                             prefix});
        const std::int64_t n = c.attr("num_partitions").i();
        auto where = b.op_n("DynamicPartition", {original, parts}, {{"num_partitions", n}});
        std::vector<endpoint> in(where.begin(), where.end());
        for (int i = 0; i < c.num_outputs(); ++i) in.push_back(c.grad_or_zeros(i));
        endpoint stitched = b.op("DynamicStitch", in, {{"N", n}});
        out[0] = b.op("Reshape", {stitched, shape_of(b, c.input(0))});
        return out;
    });

    // sparse into dense
    r.add("SparseTensorDenseAdd", [](grad_context& c) {
        grad_list out(4);
        auto& g = c.grad(0);
        if (!g) return out;
        if (c.wants(1)) out[1] = c.b().op("GatherNd", {*g, c.input(0)});
        out[3] = *g;
        return out;
    });
    r.add("SparseToDense", [](grad_context& c) {
        grad_list out(4);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        endpoint idx = b.op("Reshape", {c.input(0), b.op("Pack", {int_scalar(b, -1), b.op("Rank", {*g})})});
        endpoint picked = b.op("GatherNd", {*g, idx});
        endpoint values = c.input(2);
        if (c.wants(2)) out[2] = unbroadcast(b, picked, values, picked, true);  // a scalar value sums them
        if (c.wants(3)) out[3] = b.op("Sub", {sum_all(b, *g), sum_all(b, picked)});
        return out;
    });

    // No gradient flows through the scatters into variables the op table declares, nor Unique.
    for (const char* op : {"ScatterAdd", "ScatterSub", "ScatterUpdate", "ScatterMul", "ScatterDiv", "Unique"}) {
        r.add_none(op);
    }
}

}  // namespace graft::autodiff::rules
