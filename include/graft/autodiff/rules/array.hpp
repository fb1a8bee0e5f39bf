// graft/autodiff/rules/array.hpp — gradients of the shape, joining, slicing, padding, tiling,
// gathering, selecting and casting ops (graft/ops/array_all.hpp), as TF's array_grad.py builds them.
#pragma once

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

namespace array_detail {
/// Shape(x) with the given int dtype (to match an op's index inputs).
inline endpoint shape_as(const graph_builder& b, const endpoint& x, dtype index_type) {
    return b.op("Shape", {x}, {{"out_type", index_type}});
}
inline endpoint to_int32(const graph_builder& b, const endpoint& e) {
    return b.dtype_of(e) == dtype::int32 ? e : b.op("Cast", {e}, {{"DstT", dtype::int32}});
}
/// Gradients of Concat/ConcatV2: SplitV of the gradient at the inputs' sizes along the axis.
inline grad_list concat_grads(const grad_context& c, int first, int count, const endpoint& axis_in) {
    grad_list out(static_cast<std::size_t>(c.num_inputs()));
    auto& g = c.grad(0);
    if (!g) return out;
    const auto& b = c.b();
    std::vector<endpoint> shapes;
    for (int i = 0; i < count; ++i) shapes.push_back(shape_of(b, c.input(first + i)));
    endpoint rank = b.op("Size", {shapes[0]});
    endpoint axis = b.op("FloorMod", {to_int32(b, axis_in), rank});
    endpoint table = b.op("Pack", shapes, {{"axis", std::int64_t{1}}});  // [rank, count]
    endpoint sizes = b.op("GatherV2", {table, axis, int_scalar(b, 0)});  // [count]
    auto parts = b.op_n("SplitV", {*g, sizes, axis}, {{"num_split", static_cast<std::int64_t>(count)}});
    for (int i = 0; i < count; ++i) out[static_cast<std::size_t>(first + i)] = parts[static_cast<std::size_t>(i)];
    return out;
}
/// The gradient of Split/SplitV: the output gradients (zeros where missing) concatenated.
inline endpoint split_grad(const grad_context& c, const endpoint& axis) {
    if (c.num_outputs() == 1) return c.grad_or_zeros(0);
    std::vector<endpoint> parts;
    for (int i = 0; i < c.num_outputs(); ++i) parts.push_back(c.grad_or_zeros(i));
    parts.push_back(axis);
    return c.b().op("ConcatV2", parts);
}
}  // namespace array_detail

inline void register_array(gradient_registry& r) {
    using namespace array_detail;
    // Reshape-likes: the gradient reshaped back to the input's shape.
    for (const char* op : {"Reshape", "Squeeze", "ExpandDims"}) {
        r.add(op, [](grad_context& c) {
            grad_list out(static_cast<std::size_t>(c.num_inputs()));
            if (auto& g = c.grad(0)) out[0] = c.b().op("Reshape", {*g, shape_of(c.b(), c.input(0))});
            return out;
        });
    }
    r.add("Transpose", [](grad_context& c) {
        grad_list out(2);
        if (auto& g = c.grad(0)) out[0] = c.b().op("Transpose", {*g, c.b().op("InvertPermutation", {c.input(1)})});
        return out;
    });
    r.add("ConcatV2", [](grad_context& c) {
        int n = c.num_inputs() - 1;
        return concat_grads(c, 0, n, c.input(n));
    });
    r.add("Concat", [](grad_context& c) { return concat_grads(c, 1, c.num_inputs() - 1, c.input(0)); });
    r.add("Split", [](grad_context& c) {
        grad_list out(2);
        out[1] = split_grad(c, c.input(0));
        return out;
    });
    r.add("SplitV", [](grad_context& c) {
        grad_list out(3);
        out[0] = split_grad(c, c.input(2));
        return out;
    });
    r.add("Pack", [](grad_context& c) {
        grad_list out(static_cast<std::size_t>(c.num_inputs()));
        auto& g = c.grad(0);
        if (!g) return out;
        attr_list a{{"num", static_cast<std::int64_t>(c.num_inputs())}};
        c.copy_attr(a, "axis");
        auto parts = c.b().op_n("Unpack", {*g}, a);
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = parts[i];
        return out;
    });
    r.add("Unpack", [](grad_context& c) {
        std::vector<endpoint> parts;
        for (int i = 0; i < c.num_outputs(); ++i) parts.push_back(c.grad_or_zeros(i));
        attr_list a;
        c.copy_attr(a, "axis");
        return grad_list{c.b().op("Pack", parts, a)};
    });
    r.add("Slice", [](grad_context& c) {
        grad_list out(3);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        dtype it = c.dtype_of(c.input(1));
        endpoint x = c.input(0), begin = c.input(1);
        endpoint rank = b.op("Rank", {x});
        endpoint col = b.op("Pack", {rank, int_scalar(b, 1)});
        endpoint before = b.op("Reshape", {begin, col});
        endpoint after = b.op("Reshape", {b.op("Sub", {b.op("Sub", {shape_as(b, x, it), shape_as(b, c.output(0), it)}), begin}), col});
        endpoint paddings = b.op("ConcatV2", {before, after, int_scalar(b, 1)});
        out[0] = b.op("Pad", {*g, paddings});
        return out;
    });
    r.add("StridedSlice", [](grad_context& c) {
        grad_list out(4);
        auto& g = c.grad(0);
        if (!g) return out;
        attr_list a;
        for (const char* m : {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"}) c.copy_attr(a, m);
        endpoint s = shape_as(c.b(), c.input(0), c.dtype_of(c.input(1)));
        out[0] = c.b().op("StridedSliceGrad", {s, c.input(1), c.input(2), c.input(3), *g}, a);
        return out;
    });
    r.add("StridedSliceGrad", [](grad_context& c) {
        grad_list out(5);
        auto& g = c.grad(0);
        if (!g) return out;
        attr_list a;
        for (const char* m : {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"}) c.copy_attr(a, m);
        out[4] = c.b().op("StridedSlice", {*g, c.input(1), c.input(2), c.input(3)}, a);
        return out;
    });
    auto pad = [](grad_context& c) {
        grad_list out(static_cast<std::size_t>(c.num_inputs()));
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        endpoint x = c.input(0), paddings = c.input(1);
        endpoint size = b.op("Pack", {b.op("Rank", {x}), int_scalar(b, 1)});
        endpoint before = b.op("Reshape", {b.op("Slice", {paddings, ints(b, {0, 0}), size}), ints(b, {-1})});
        out[0] = b.op("Slice", {*g, before, shape_as(b, x, c.dtype_of(paddings))});
        return out;
    };
    r.add("Pad", pad);
    r.add("PadV2", pad);
    r.add("MirrorPad", [](grad_context& c) {
        grad_list out(2);
        attr_list a;
        c.copy_attr(a, "mode");
        if (auto& g = c.grad(0)) out[0] = c.b().op("MirrorPadGrad", {*g, c.input(1)}, a);
        return out;
    });
    r.add("MirrorPadGrad", [](grad_context& c) {
        grad_list out(2);
        attr_list a;
        c.copy_attr(a, "mode");
        if (auto& g = c.grad(0)) out[0] = c.b().op("MirrorPad", {*g, c.input(1)}, a);
        return out;
    });
    r.add("Tile", [](grad_context& c) {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        endpoint multiples = c.input(1);
        endpoint in_shape = shape_as(b, c.input(0), c.dtype_of(multiples));
        // [m0, d0, m1, d1, ...]: sum the gradient over the m axes.
        endpoint split_shape = b.op("Reshape", {b.op("Transpose", {b.op("Pack", {multiples, in_shape}), ints(b, {1, 0})}),
                                                ints(b, {-1})});
        endpoint axes = b.op("Range", {int_scalar(b, 0), b.op("Size", {split_shape}), int_scalar(b, 2)});
        out[0] = b.op("Reshape", {b.op("Sum", {b.op("Reshape", {*g, split_shape}), axes}), in_shape});
        return out;
    });
    // GatherV2 (batch_dims 0): the gradient's slices summed into params' rows (UnsortedSegmentSum),
    // with the gather axis moved to the front and back.
    auto gather = [](grad_context& c, const endpoint& indices, std::int64_t axis) -> endpoint {
        const auto& b = c.b();
        auto a = static_cast<std::int32_t>(axis);
        endpoint ps = shape_of(b, c.input(0));
        auto slice = [&](std::int32_t from, std::int32_t to, bool to_end) {
            return b.op("StridedSlice", {ps, ints(b, {from}), ints(b, {to}), ints(b, {1})},
                        {{"end_mask", std::int64_t{to_end ? 1 : 0}}});
        };
        endpoint outer = slice(0, a, false), inner = slice(a + 1, 0, true);
        endpoint values_shape = b.op("ConcatV2", {outer, ints(b, {-1}), inner, int_scalar(b, 0)});
        endpoint values = b.op("Reshape", {*c.grad(0), values_shape});
        endpoint idx = b.op("Reshape", {indices, ints(b, {-1})});
        endpoint dims = b.op("Size", {values_shape});
        std::vector<std::int32_t> front{a}, back;
        for (std::int32_t i = 0; i < a; ++i) front.push_back(i);
        for (std::int32_t i = 1; i <= a; ++i) back.push_back(i);
        back.push_back(0);
        endpoint rest = b.op("Range", {int_scalar(b, a + 1), dims, int_scalar(b, 1)});
        endpoint perm = b.op("ConcatV2", {ints(b, front), rest, int_scalar(b, 0)});
        endpoint num = b.op("StridedSlice", {ps, ints(b, {a}), ints(b, {a + 1}), ints(b, {1})},
                            {{"shrink_axis_mask", std::int64_t{1}}});
        endpoint summed = b.op("UnsortedSegmentSum", {b.op("Transpose", {values, perm}), idx, num});
        endpoint inv = b.op("ConcatV2", {ints(b, back), rest, int_scalar(b, 0)});
        return b.op("Transpose", {summed, inv});
    };
    r.add("GatherV2", [gather](grad_context& c) {
        grad_list out(3);
        if (!c.grad(0)) return out;
        if (auto* bd = c.find_attr("batch_dims"); bd && bd->i() != 0) {
            c.fail("batch_dims != 0 is not supported", "gather with batch_dims 0 (reshape the batch into the indices)");
        }
        auto axis = constant_ints(c.g(), c.input(2));
        if (!axis || axis->size() != 1 || (*axis)[0] < 0) {
            c.fail("the axis must be a non-negative Const", "pass the gather axis as a constant >= 0");
        }
        out[0] = gather(c, c.input(1), (*axis)[0]);
        return out;
    });
    // ResourceGather (axis 0): the rows of the variable the indices picked, summed per row, as a
    // dense gradient of the variable (TF builds IndexedSlices of the same values).
    r.add("ResourceGather", [](grad_context& c) {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        if (auto* bd = c.find_attr("batch_dims"); bd && bd->i() != 0) {
            c.fail("batch_dims != 0 is not supported", "gather with batch_dims 0 (reshape the batch into the indices)");
        }
        const auto& b = c.b();
        endpoint params = b.op("ReadVariableOp", {c.input(0)}, {{"dtype", c.dtype_of(c.output(0))}});
        endpoint ps = shape_of(b, params);
        endpoint inner = b.op("StridedSlice", {ps, ints(b, {1}), ints(b, {0}), ints(b, {1})},
                              {{"end_mask", std::int64_t{1}}});
        endpoint values = b.op("Reshape", {*g, b.op("ConcatV2", {ints(b, {-1}), inner, int_scalar(b, 0)})});
        endpoint idx = b.op("Reshape", {c.input(1), ints(b, {-1})});
        endpoint rows = b.op("StridedSlice", {ps, ints(b, {0}), ints(b, {1}), ints(b, {1})},
                             {{"shrink_axis_mask", std::int64_t{1}}});
        out[0] = b.op("UnsortedSegmentSum", {values, idx, rows});
        return out;
    });
    r.add("Gather", [gather](grad_context& c) {
        grad_list out(2);
        if (c.grad(0)) out[0] = gather(c, c.input(1), 0);
        return out;
    });
    // DynamicStitch: each data input gets the gradient rows its indices point at.
    auto stitch = [](grad_context& c) {
        grad_list out(static_cast<std::size_t>(c.num_inputs()));
        auto& g = c.grad(0);
        if (!g) return out;
        int n = c.num_inputs() / 2;
        for (int i = 0; i < n; ++i) {
            if (c.wants(n + i)) {
                out[static_cast<std::size_t>(n + i)] = c.b().op("GatherV2", {*g, c.input(i), int_scalar(c.b(), 0)});
            }
        }
        return out;
    };
    r.add("DynamicStitch", stitch);
    r.add("ParallelDynamicStitch", stitch);
    // UnsortedSegmentSum: data gets the gradient row of its segment; ids out of range get zeros.
    r.add("UnsortedSegmentSum", [](grad_context& c) {
        grad_list out(3);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        endpoint ids = c.input(1);
        endpoint num = b.op("Cast", {c.input(2)}, {{"DstT", c.dtype_of(ids)}});
        endpoint valid = b.op("LogicalAnd", {b.op("GreaterEqual", {ids, b.op("ZerosLike", {ids})}), b.op("Less", {ids, num})});
        endpoint safe = b.op("SelectV2", {valid, ids, b.op("ZerosLike", {ids})});
        endpoint gathered = b.op("GatherV2", {*g, safe, int_scalar(b, 0)});
        // valid reshaped to ids.shape + [1] * (rank(data) - rank(ids)) so it broadcasts over the slices.
        endpoint extra = b.op("Sub", {b.op("Rank", {gathered}), b.op("Rank", {ids})});
        endpoint ones = b.op("Fill", {b.op("ExpandDims", {extra, int_scalar(b, 0)}), int_scalar(b, 1)});
        endpoint mask_shape = b.op("ConcatV2", {shape_of(b, ids), ones, int_scalar(b, 0)});
        endpoint mask = b.op("Reshape", {valid, mask_shape});
        out[0] = b.op("SelectV2", {mask, gathered, b.op("ZerosLike", {gathered})});
        return out;
    });
    r.add("Cast", [](grad_context& c) {
        grad_list out(1);
        auto& g = c.grad(0);
        dtype src = c.dtype_of(c.input(0)), dst = c.dtype_of(c.output(0));
        auto differentiable = [](dtype t) { return is_floating(t) || is_complex(t); };
        if (g && differentiable(src) && differentiable(dst)) out[0] = c.b().op("Cast", {*g}, {{"DstT", src}});
        return out;
    });
    r.add("Select", [](grad_context& c) {
        grad_list out(3);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        endpoint zeros = b.op("ZerosLike", {c.input(1)});
        if (c.wants(1)) out[1] = b.op("Select", {c.input(0), *g, zeros});
        if (c.wants(2)) out[2] = b.op("Select", {c.input(0), zeros, *g});
        return out;
    });
    r.add("SelectV2", [](grad_context& c) {
        grad_list out(3);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        endpoint zeros = b.op("ZerosLike", {*g});
        if (c.wants(1)) out[1] = unbroadcast(b, b.op("SelectV2", {c.input(0), *g, zeros}), c.input(1), c.output(0), true);
        if (c.wants(2)) out[2] = unbroadcast(b, b.op("SelectV2", {c.input(0), zeros, *g}), c.input(2), c.output(0), true);
        return out;
    });
}

}  // namespace graft::autodiff::rules
