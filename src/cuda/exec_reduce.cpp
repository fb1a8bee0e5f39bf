// GPU kernels of the reduce family: Sum, Mean, Max, Min, Prod (axes read on the host), ArgMax /
// ArgMin (dimension on the host), SoftmaxCrossEntropyWithLogits (with the CPU's broadcasting) and
// SparseSoftmaxCrossEntropyWithLogits, float32. Axes are simplified as on the CPU (size-1 dims
// dropped, neighbours merged); one reduced run is folded as a [K1, R, K2] view, several are first
// gathered behind the kept ones with the array family's strided copy.
#include <cstdint>
#include <string>
#include <vector>

#include "families.hpp"
#include "graft/cuda/exec.hpp"
#include "graft/ops/reduce.hpp"
#include "graft/ops/softmax.hpp"
#include "launch_array.hpp"
#include "launch_reduce.hpp"

namespace graft::cuda::families {

namespace {

namespace od = graft::ops::op_detail;
using dims_t = std::vector<std::int64_t>;

void reduce_kernel(exec::kernel_context& c, const char* op, launch::reduce_op kind) {
    tensor x = c.input(0);
    const auto axes = od::int_list(op, c.input(1), "reduction_indices");
    const auto plan = od::plan_reduce(op, x.shape(), axes, c.attr_or<bool>("keep_dims", false));
    auto& s = stream_of(c);
    tensor out = output(c, x.type(), plan.out_shape);
    const std::int64_t n_out = out.num_elements();
    auto* o = static_cast<float*>(out.raw_data());
    const auto* in = static_cast<const float*>(x.raw_data());
    const auto& runs = plan.dims;
    const auto& red = plan.reduced;
    std::size_t num_reduced = 0, last_reduced = 0;
    for (std::size_t i = 0; i < red.size(); ++i) {
        if (red[i]) {
            ++num_reduced;
            last_reduced = i;
        }
    }
    if (n_out == 0) {
        // nothing to write
    } else if (x.num_elements() == 0) {
        launch::reduce_f32(nullptr, o, n_out, 0, 1, kind,
                           s.native());  // the identity (NaN for Mean)
    } else if (num_reduced == 0) {
        copy_async(o, in, out.nbytes(), s);  // values pass through
    } else if (num_reduced == 1) {
        launch::reduce_f32(in, o, od::dim_product(runs, 0, last_reduced), runs[last_reduced],
                           od::dim_product(runs, last_reduced + 1, runs.size()), kind, s.native());
    } else {
        // Kept runs first, then reduced runs (each keeps its order): a [K, R] matrix of rows.
        dims_t run_strides(runs.size(), 1);
        for (std::size_t i = runs.size(); i-- > 1;) run_strides[i - 1] = run_strides[i] * runs[i];
        dims_t ext, src_strides;
        std::int64_t K = 1, R = 1;
        for (int pass = 0; pass < 2; ++pass) {
            for (std::size_t i = 0; i < runs.size(); ++i) {
                if (red[i] != (pass == 1)) continue;
                ext.push_back(runs[i]);
                src_strides.push_back(run_strides[i]);
                (pass == 0 ? K : R) *= runs[i];
            }
        }
        dims_t dst_strides(ext.size(), 1);
        for (std::size_t i = ext.size(); i-- > 1;) dst_strides[i - 1] = dst_strides[i] * ext[i];
        tensor gathered = output(c, x.type(), shape{K, R});
        launch::strided_copy(gathered.raw_data(), dst_strides.data(), in, src_strides.data(),
                             ext.data(), static_cast<int>(ext.size()), 4, s.native());
        launch::reduce_f32(static_cast<const float*>(gathered.raw_data()), o, K, R, 1, kind,
                           s.native());
    }
    c.set_output(0, out);
}

void arg_kernel(exec::kernel_context& c, const char* op, bool is_max) {
    tensor x = c.input(0);
    const std::int64_t axis = od::int_scalar(op, c.input(1), "dimension");
    const dtype output_type = c.attr_or("output_type", dtype::int64);
    if (output_type != dtype::int64 && output_type != dtype::int32) {
        c.fail(
            detail::cat(op, ": output_type must be int32 or int64, got ", dtype_name(output_type)));
    }
    const int ax = od::normalize_axis(op, axis, x.rank(), "dimension");
    const auto& d = x.shape().dims();
    if (d[static_cast<std::size_t>(ax)] == 0) {
        c.fail(detail::cat(op, ": reduction axis ", ax, " is empty in shape ", x.shape().str()));
    }
    dims_t out_dims;
    for (std::size_t i = 0; i < d.size(); ++i) {
        if (static_cast<int>(i) != ax) out_dims.push_back(d[i]);
    }
    const auto uax = static_cast<std::size_t>(ax);
    tensor out = output(c, output_type, shape(out_dims));
    launch::arg_reduce_f32(static_cast<const float*>(x.raw_data()), out.raw_data(),
                           output_type == dtype::int64, od::dim_product(d, 0, uax), d[uax],
                           od::dim_product(d, uax + 1, d.size()), is_max, stream_of(c).native());
    c.set_output(0, out);
}

void softmax_xent_kernel(exec::kernel_context& c) {
    const char* op = "SoftmaxCrossEntropyWithLogits";
    tensor features = c.input(0), labels = c.input(1);
    const auto l = ops::nn_detail::xent_layout_of(op, features, labels);  // the CPU kernel's checks and layout
    tensor loss = output(c, features.type(), shape{l.B});
    tensor backprop = output(c, features.type(), shape{l.B, l.C});
    launch::softmax_xent_f32(
        static_cast<const float*>(features.raw_data()),
        static_cast<const float*>(labels.raw_data()), static_cast<float*>(loss.raw_data()),
        static_cast<float*>(backprop.raw_data()), l.B, l.C, l.fb, l.fc, l.lb, l.lc, stream_of(c).native());
    c.set_output(0, loss);
    c.set_output(1, backprop);
}

void sparse_softmax_xent_kernel(exec::kernel_context& c) {
    const char* op = "SparseSoftmaxCrossEntropyWithLogits";
    tensor features = c.input(0), labels = c.input(1);
    ops::nn_detail::check_float(op, "features", features);
    if (labels.type() != dtype::int32 && labels.type() != dtype::int64) {
        c.fail(detail::cat(op, ": labels must be int32 or int64, given ", labels.describe()));
    }
    if (features.rank() != 2 || labels.rank() != 1 || labels.dim(0) != features.dim(0)) {
        c.fail(detail::cat(
            op, ": features must be [batch, classes] and labels [batch], given features ",
            features.shape().str(), " and labels ", labels.shape().str()));
    }
    const std::int64_t B = features.dim(0), C = features.dim(1);
    tensor loss = output(c, features.type(), shape{B});
    tensor backprop = output(c, features.type(), shape{B, C});
    launch::sparse_softmax_xent_f32(
        static_cast<const float*>(features.raw_data()), labels.raw_data(),
        labels.type() == dtype::int64, static_cast<float*>(loss.raw_data()),
        static_cast<float*>(backprop.raw_data()), B, C, stream_of(c).native());
    c.set_output(0, loss);
    c.set_output(1, backprop);
}

}  // namespace

void register_reduce(exec::kernel_registry& r) {
    const auto cuda = device_kind::cuda;
    const std::pair<const char*, launch::reduce_op> reductions[] = {
        {"Sum", launch::reduce_op::sum},
        {"Mean", launch::reduce_op::mean},
        {"Max", launch::reduce_op::max},
        {"Min", launch::reduce_op::min},
        {"Prod", launch::reduce_op::prod}};
    for (const auto& [op, kind] : reductions) {
        r.add(
            cuda, op,
            [op = op, kind = kind](exec::kernel_context& c) { reduce_kernel(c, op, kind); },
            float_kernel({1}));
    }
    r.add(
        cuda, "ArgMax", [](exec::kernel_context& c) { arg_kernel(c, "ArgMax", true); },
        float_kernel({1}));
    r.add(
        cuda, "ArgMin", [](exec::kernel_context& c) { arg_kernel(c, "ArgMin", false); },
        float_kernel({1}));
    r.add(cuda, "SoftmaxCrossEntropyWithLogits", softmax_xent_kernel, float_kernel());
    r.add(cuda, "SparseSoftmaxCrossEntropyWithLogits", sparse_softmax_xent_kernel, float_kernel());
}

}  // namespace graft::cuda::families
