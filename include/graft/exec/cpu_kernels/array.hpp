// graft/exec/cpu_kernels/array.hpp — shape, slicing, joining, gathering, filling and reduction ops
// (graft/ops/array_all.hpp) bound to their TF op types.
#pragma once

#include "graft/exec/kernel.hpp"
#include "graft/ops/array_all.hpp"
// The ops it calls by their own functions, not ops::unary/binary by name: a by-name call compiles
// every elementwise kernel for every dtype into this file (exec_kernels_elementwise.cpp has them).
#include "graft/ops/binary.hpp"
#include "graft/ops/unary.hpp"

namespace graft::exec::kernels {

namespace impl {
inline std::vector<tensor> inputs_from(kernel_context& c, int first, int count) {
    std::vector<tensor> v;
    v.reserve(static_cast<std::size_t>(count));
    for (int i = first; i < first + count; ++i) v.push_back(c.input(i));
    return v;
}
inline void set_outputs(kernel_context& c, const std::vector<tensor>& outs) {
    if (static_cast<int>(outs.size()) != c.num_outputs()) {
        c.fail(detail::cat("op produced ", outs.size(), " tensors for ", c.num_outputs(), " outputs"));
    }
    for (std::size_t i = 0; i < outs.size(); ++i) c.set_output(static_cast<int>(i), outs[i]);
}
inline ops::strided_slice_masks masks_of(kernel_context& c) {
    ops::strided_slice_masks m;
    m.begin_mask = c.attr_or<std::int32_t>("begin_mask", 0);
    m.end_mask = c.attr_or<std::int32_t>("end_mask", 0);
    m.ellipsis_mask = c.attr_or<std::int32_t>("ellipsis_mask", 0);
    m.new_axis_mask = c.attr_or<std::int32_t>("new_axis_mask", 0);
    m.shrink_axis_mask = c.attr_or<std::int32_t>("shrink_axis_mask", 0);
    return m;
}
}  // namespace impl

inline void register_array(kernel_registry& r) {
    // Shape-only ops read no data: a GPU tensor is not copied to the host to learn its shape.
    kernel_def shape_only;
    shape_only.reads_input_data = false;
    r.add("Shape", [](kernel_context& c) { c.set_output(0, ops::shape_of(c.input(0), c.attr_or("out_type", dtype::int32))); },
          shape_only);
    r.add("ShapeN", [](kernel_context& c) {
        impl::set_outputs(c, ops::shape_n(impl::inputs_from(c, 0, c.num_inputs()), c.attr_or("out_type", dtype::int32)));
    }, shape_only);
    r.add("Size", [](kernel_context& c) { c.set_output(0, ops::size_of(c.input(0), c.attr_or("out_type", dtype::int32))); },
          shape_only);
    r.add("Rank", [](kernel_context& c) { c.set_output(0, ops::rank_of(c.input(0))); }, shape_only);
    r.add("Reshape", [](kernel_context& c) { c.set_output(0, ops::reshape(c.input(0), c.input(1))); });
    r.add("Squeeze", [](kernel_context& c) {
        std::vector<std::int64_t> axes;
        if (auto* a = c.find_attr("squeeze_dims")) axes = a->list_of<std::int64_t>();
        c.set_output(0, ops::squeeze(c.input(0), axes));
    });
    r.add("ExpandDims", [](kernel_context& c) { c.set_output(0, ops::expand_dims(c.input(0), c.input(1))); });
    r.add("Transpose", [](kernel_context& c) { c.set_output(0, ops::transpose(c.input(0), c.input(1))); });
    r.add("InvertPermutation", [](kernel_context& c) { c.set_output(0, ops::invert_permutation(c.input(0))); });
    r.add("ConcatV2", [](kernel_context& c) {
        int n = c.num_inputs() - 1;
        c.set_output(0, ops::concat(impl::inputs_from(c, 0, n), c.input(n)));
    });
    r.add("Concat", [](kernel_context& c) {
        c.set_output(0, ops::concat(impl::inputs_from(c, 1, c.num_inputs() - 1), c.input(0)));
    });
    r.add("Pack", [](kernel_context& c) {
        c.set_output(0, ops::pack(impl::inputs_from(c, 0, c.num_inputs()), c.attr_or<std::int64_t>("axis", 0)));
    });
    r.add("Unpack", [](kernel_context& c) {
        impl::set_outputs(c, ops::unpack(c.input(0), c.attr_or<std::int64_t>("axis", 0), c.attr_or<std::int64_t>("num", -1)));
    });
    r.add("Slice", [](kernel_context& c) { c.set_output(0, ops::slice(c.input(0), c.input(1), c.input(2))); });
    r.add("StridedSlice", [](kernel_context& c) {
        c.set_output(0, ops::strided_slice(c.input(0), c.input(1), c.input(2), c.input(3), impl::masks_of(c)));
    });
    r.add("StridedSliceGrad", [](kernel_context& c) {
        c.set_output(0, ops::strided_slice_grad(c.input(0), c.input(1), c.input(2), c.input(3), c.input(4), impl::masks_of(c)));
    });
    r.add("Split", [](kernel_context& c) {
        impl::set_outputs(c, ops::split(c.input(1), c.attr_int("num_split"), c.input(0)));
    });
    r.add("SplitV", [](kernel_context& c) { impl::set_outputs(c, ops::split_v(c.input(0), c.input(1), c.input(2))); });
    r.add("Tile", [](kernel_context& c) { c.set_output(0, ops::tile(c.input(0), c.input(1))); });
    r.add("Fill", [](kernel_context& c) { c.set_output(0, ops::fill(c.input(0), c.input(1))); });
    r.add("ZerosLike", [](kernel_context& c) { c.set_output(0, ops::zeros_like(c.input(0))); });
    r.add("OnesLike", [](kernel_context& c) { c.set_output(0, ops::ones_like(c.input(0))); });
    r.add("Range", [](kernel_context& c) { c.set_output(0, ops::range(c.input(0), c.input(1), c.input(2))); });
    r.add("Cast", [](kernel_context& c) { c.set_output(0, ops::cast_to(c.input(0), c.attr_type("DstT"))); });
    r.add("Pad", [](kernel_context& c) { c.set_output(0, ops::pad(c.input(0), c.input(1))); });
    r.add("PadV2", [](kernel_context& c) { c.set_output(0, ops::pad(c.input(0), c.input(1), c.input(2))); });
    r.add("MirrorPad", [](kernel_context& c) {
        c.set_output(0, ops::mirror_pad(c.input(0), c.input(1), c.attr_string("mode")));
    });
    r.add("MirrorPadGrad", [](kernel_context& c) {
        c.set_output(0, ops::mirror_pad_grad(c.input(0), c.input(1), c.attr_string("mode")));
    });
    r.add("GatherV2", [](kernel_context& c) {
        c.set_output(0, ops::gather(c.input(0), c.input(1), c.input(2), c.attr_or<std::int64_t>("batch_dims", 0)));
    });
    r.add("UnsortedSegmentSum", [](kernel_context& c) {
        c.set_output(0, ops::unsorted_segment_sum(c.input(0), c.input(1), c.input(2)));
    });
    r.add("Gather", [](kernel_context& c) { c.set_output(0, ops::gather(c.input(0), c.input(1), std::int64_t{0})); });
    r.add("OneHot", [](kernel_context& c) {
        c.set_output(0, ops::one_hot(c.input(0), c.input(1), c.input(2), c.input(3), c.attr_or<std::int64_t>("axis", -1)));
    });
    r.add("Select", [](kernel_context& c) { c.set_output(0, ops::select(c.input(0), c.input(1), c.input(2))); });
    r.add("SelectV2", [](kernel_context& c) { c.set_output(0, ops::select_v2(c.input(0), c.input(1), c.input(2))); });
    r.add("Where", [](kernel_context& c) { c.set_output(0, ops::where(c.input(0))); });
    r.add("DynamicStitch", [](kernel_context& c) {
        int n = c.num_inputs() / 2;
        c.set_output(0, ops::dynamic_stitch(impl::inputs_from(c, 0, n), impl::inputs_from(c, n, n)));
    });
    r.add("ParallelDynamicStitch", *r.find("DynamicStitch"));
    r.add("AddN", [](kernel_context& c) { c.set_output(0, ops::add_n(impl::inputs_from(c, 0, c.num_inputs()))); });
    r.add("BiasAdd", [](kernel_context& c) {
        c.set_output(0, ops::bias_add(c.input(0), c.input(1), c.attr_or<std::string>("data_format", "NHWC")));
    });
    r.add("BiasAddV1", [](kernel_context& c) { c.set_output(0, ops::bias_add(c.input(0), c.input(1))); });
    r.add("BiasAddGrad", [](kernel_context& c) {
        c.set_output(0, ops::bias_add_grad(c.input(0), c.attr_or<std::string>("data_format", "NHWC")));
    });
    r.add("BroadcastGradientArgs", [](kernel_context& c) {
        auto [r0, r1] = ops::broadcast_gradient_args(c.input(0), c.input(1));
        c.set_output(0, r0);
        c.set_output(1, r1);
    });
    for (const char* op : {"Sum", "Mean", "Max", "Min", "Prod", "Any", "All"}) {
        r.add(op, [op](kernel_context& c) {
            c.set_output(0, ops::reduce(op, c.input(0), c.input(1), c.attr_or<bool>("keep_dims", false)));
        });
    }
    // EuclideanNorm = sqrt(sum(x * x)) over the axes; integers square, sum and take the root in
    // float64 and truncate back, as TF's integer kernel does.
    r.add("EuclideanNorm", [](kernel_context& c) {
        tensor x = c.input(0);
        bool keep = c.attr_or<bool>("keep_dims", false);
        if (is_floating(x.type())) {
            c.set_output(0, ops::sqrt(ops::reduce("Sum", ops::mul(x, x), c.input(1), keep)));
            return;
        }
        tensor d = cast(x, dtype::float64);
        tensor n = ops::sqrt(ops::reduce("Sum", ops::mul(d, d), c.input(1), keep));
        c.set_output(0, cast(ops::floor(n), x.type()));
    });
    r.add("ArgMax", [](kernel_context& c) {
        c.set_output(0, ops::arg_max(c.input(0), c.input(1), c.attr_or("output_type", dtype::int64)));
    });
    r.add("ArgMin", [](kernel_context& c) {
        c.set_output(0, ops::arg_min(c.input(0), c.input(1), c.attr_or("output_type", dtype::int64)));
    });
    r.add("L2Loss", [](kernel_context& c) { c.set_output(0, ops::l2_loss(c.input(0))); });
}

}  // namespace graft::exec::kernels
