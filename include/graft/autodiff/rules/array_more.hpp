// graft/autodiff/rules/array_more.hpp — gradients of the array_more family (graft/exec/cpu_kernels/array_more.hpp),
// as TF's array_grad.py / manip_grad.py build them: each element-moving op is undone by its inverse move
// (ReverseV2 by itself, Roll by Roll of -shift, SpaceToBatchND by BatchToSpaceND, a diagonal setter by
// its getter, ...); BroadcastTo sums over the broadcast axes; ExtractImagePatches sums each patch
// element back into the pixel it came from.
#pragma once

#include <string>

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

namespace array_more_detail {
/// A rule whose input 0 gets op(g, inputs[from...]) with the forward node's `attrs`, the other
/// inputs nothing.
inline gradient_fn inverse_move(std::string op, std::vector<int> pass, std::vector<std::string> attrs) {
    return [op = std::move(op), pass = std::move(pass), attrs = std::move(attrs)](grad_context& c) {
        grad_list out(static_cast<std::size_t>(c.num_inputs()));
        auto& g = c.grad(0);
        if (!g) return out;
        std::vector<endpoint> in{*g};
        for (int i : pass) in.push_back(c.input(i));
        attr_list a;
        for (auto& n : attrs) c.copy_attr(a, n);
        out[0] = c.b().op(op, in, a);
        return out;
    };
}
/// Element i of an int32 vector as a scalar.
inline endpoint element(const graph_builder& b, const endpoint& v, std::int32_t i) {
    return b.op("StridedSlice", {v, ints(b, {i}), ints(b, {i + 1}), ints(b, {1})},
                {{"shrink_axis_mask", std::int64_t{1}}});
}
}  // namespace array_more_detail

inline void register_array_more(gradient_registry& r) {
    using namespace array_more_detail;
    r.add("ReverseV2", inverse_move("ReverseV2", {1}, {}));
    r.add("Reverse", inverse_move("Reverse", {1}, {}));
    r.add("ReverseSequence", inverse_move("ReverseSequence", {1}, {"seq_dim", "batch_dim"}));
    r.add("Roll", [](grad_context& c) {
        grad_list out(3);
        if (auto& g = c.grad(0)) out[0] = c.b().op("Roll", {*g, c.b().op("Neg", {c.input(1)}), c.input(2)});
        return out;
    });

    // diagonals: a diagonal's gradient is the gradient's diagonal, and the other way round
    r.add("MatrixDiag", inverse_move("MatrixDiagPart", {}, {}));
    auto diag_v23 = [](const char* part) {
        return [part = std::string(part)](grad_context& c) {
            grad_list out(5);
            auto& g = c.grad(0);
            if (!g) return out;
            attr_list a;
            c.copy_attr(a, "align");
            out[0] = c.b().op(part, {*g, c.input(1), c.b().scalar_as(c.dtype_of(*g), 0.0)}, a);
            return out;
        };
    };
    r.add("MatrixDiagV2", diag_v23("MatrixDiagPartV2"));
    r.add("MatrixDiagV3", diag_v23("MatrixDiagPartV3"));
    r.add("MatrixDiagPart", [](grad_context& c) {
        grad_list out(1);
        if (auto& g = c.grad(0)) out[0] = c.b().op("MatrixSetDiag", {c.b().op("ZerosLike", {c.input(0)}), *g});
        return out;
    });
    auto part_v23 = [](const char* set) {
        return [set = std::string(set)](grad_context& c) {
            grad_list out(3);
            auto& g = c.grad(0);
            if (!g) return out;
            attr_list a;
            c.copy_attr(a, "align");
            out[0] = c.b().op(set, {c.b().op("ZerosLike", {c.input(0)}), *g, c.input(1)}, a);
            return out;
        };
    };
    r.add("MatrixDiagPartV2", part_v23("MatrixSetDiagV2"));
    r.add("MatrixDiagPartV3", part_v23("MatrixSetDiagV3"));
    // MatrixSetDiag: the input keeps the gradient off the band; the diagonal takes the band.
    auto set_diag = [](const char* set, const char* part) {
        return [set = std::string(set), part = std::string(part)](grad_context& c) {
            grad_list out(static_cast<std::size_t>(c.num_inputs()));
            auto& g = c.grad(0);
            if (!g) return out;
            const auto& b = c.b();
            attr_list a;
            c.copy_attr(a, "align");
            std::vector<endpoint> sin{*g, b.op("ZerosLike", {c.input(1)})}, pin{*g};
            if (c.num_inputs() == 3) {
                sin.push_back(c.input(2));
                pin.push_back(c.input(2));
                pin.push_back(b.scalar_as(c.dtype_of(*g), 0.0));
            }
            if (c.wants(0)) out[0] = b.op(set, sin, a);
            if (c.wants(1)) out[1] = b.op(part, pin, a);
            return out;
        };
    };
    r.add("MatrixSetDiag", set_diag("MatrixSetDiag", "MatrixDiagPart"));
    r.add("MatrixSetDiagV2", set_diag("MatrixSetDiagV2", "MatrixDiagPartV2"));
    r.add("MatrixSetDiagV3", set_diag("MatrixSetDiagV3", "MatrixDiagPartV3"));
    r.add("MatrixBandPart", inverse_move("MatrixBandPart", {1, 2}, {}));
    r.add("Diag", inverse_move("DiagPart", {}, {}));
    r.add("DiagPart", inverse_move("Diag", {}, {}));

    // space <-> batch <-> depth: each undoes the other
    r.add("SpaceToBatchND", inverse_move("BatchToSpaceND", {1, 2}, {}));
    r.add("BatchToSpaceND", inverse_move("SpaceToBatchND", {1, 2}, {}));
    r.add("SpaceToBatch", inverse_move("BatchToSpace", {1}, {"block_size"}));
    r.add("BatchToSpace", inverse_move("SpaceToBatch", {1}, {"block_size"}));
    r.add("SpaceToDepth", inverse_move("DepthToSpace", {}, {"block_size", "data_format"}));
    r.add("DepthToSpace", inverse_move("SpaceToDepth", {}, {"block_size", "data_format"}));

    // ExtractImagePatches: patches of an image of pixel numbers (1-based, 0 where a window leaves
    // the image) say where each gradient element goes; UnsortedSegmentSum adds them up there.
    r.add("ExtractImagePatches", [](grad_context& c) {
        grad_list out(1);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        const auto& k = c.attr("ksizes").list_of<std::int64_t>();
        if (k.size() != 4) c.fail("ksizes must have 4 entries");
        endpoint xs = shape_of(b, c.input(0));
        endpoint n = element(b, xs, 0), rows = element(b, xs, 1), cols = element(b, xs, 2), ch = element(b, xs, 3);
        endpoint pixels = b.op("Mul", {rows, cols});
        endpoint numbers = b.op("Range", {int_scalar(b, 1), b.op("AddV2", {pixels, int_scalar(b, 1)}), int_scalar(b, 1)});
        endpoint image = b.op("Reshape", {numbers, b.op("Pack", {int_scalar(b, 1), rows, cols, int_scalar(b, 1)})});
        attr_list a;
        for (const char* name : {"ksizes", "strides", "rates", "padding"}) c.copy_attr(a, name);
        endpoint where = b.op("Reshape", {b.op("ExtractImagePatches", {image}, a), ints(b, {-1})});
        endpoint ys = shape_of(b, c.output(0));
        endpoint g6 = b.op("Reshape", {*g, b.op("Pack", {n, element(b, ys, 1), element(b, ys, 2),
                                                          int_scalar(b, static_cast<std::int32_t>(k[1])),
                                                          int_scalar(b, static_cast<std::int32_t>(k[2])), ch})});
        endpoint flat = b.op("Reshape", {b.op("Transpose", {g6, ints(b, {1, 2, 3, 4, 0, 5})}),
                                         b.op("Pack", {int_scalar(b, -1), b.op("Mul", {n, ch})})});
        endpoint summed = b.op("UnsortedSegmentSum", {flat, where, b.op("AddV2", {pixels, int_scalar(b, 1)})});
        endpoint inside = b.op("Slice", {summed, ints(b, {1, 0}), ints(b, {-1, -1})});
        endpoint hwnc = b.op("Reshape", {inside, b.op("Pack", {rows, cols, n, ch})});
        out[0] = b.op("Transpose", {hwnc, ints(b, {2, 0, 1, 3})});
        return out;
    });

    // BroadcastTo: summed over the axes the broadcast added or stretched, back to the input's shape.
    r.add("BroadcastTo", [](grad_context& c) {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        endpoint xs = b.op("Shape", {c.input(0)}, {{"out_type", c.dtype_of(c.input(1))}});
        auto axes = b.op_n("BroadcastGradientArgs", {c.input(1), xs});
        out[0] = b.op("Reshape", {b.op("Sum", {*g, axes[1]}, {{"keep_dims", true}}), xs});
        return out;
    });
    r.add_none("BroadcastArgs");  // shape arithmetic on ints

    // ParallelConcat stacks [1, ...] values along dim 0: each takes its row of the gradient.
    r.add("ParallelConcat", [](grad_context& c) {
        grad_list out(static_cast<std::size_t>(c.num_inputs()));
        auto& g = c.grad(0);
        if (!g) return out;
        if (c.num_inputs() == 1) {
            out[0] = *g;
            return out;
        }
        auto parts = c.b().op_n("Split", {int_scalar(c.b(), 0), *g},
                                {{"num_split", static_cast<std::int64_t>(c.num_inputs())}});
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = parts[i];
        return out;
    });
    r.add("DeepCopy", [](grad_context& c) {
        grad_list out(1);
        if (auto& g = c.grad(0)) out[0] = c.b().op("Identity", {*g});
        return out;
    });
}

}  // namespace graft::autodiff::rules
