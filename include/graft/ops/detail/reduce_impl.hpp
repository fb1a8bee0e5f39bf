// graft/ops/detail/reduce_impl.hpp — the definitions of the ops graft/ops/reduce.hpp declares: inline when
// graft is used header-only, compiled once into graft::compiled by src/compiled/elementwise_ops.cpp
// otherwise (core/config.hpp). Included by reduce.hpp only.
#pragma once

#include "graft/ops/reduce.hpp"

namespace graft::ops {

GRAFT_INLINE tensor reduce(reduction k, const tensor& x, const std::vector<std::int64_t>& axes, bool keep_dims) {
    const char* op = op_detail::reduction_name(k);
    op_detail::require_input(op, x, "input");
    auto plan = op_detail::plan_reduce(op, x.shape(), axes, keep_dims);
    auto run = [&](auto tag) {
        using T = decltype(tag);
        tensor out = tensor::uninitialized(dtype_of<T>, plan.out_shape);
        if constexpr (std::is_same_v<T, bool>) {
            op_detail::run_reduce<T>(k, plan, x, out);
        } else {
            // Where the reduction runs: TF's Mean sums integers in 64 bits; the narrow types
            // compute in their compute type (float16/bfloat16 in float32, wrap-around integer
            // sums and products in 32 or 64 bits, whose low bits are T's own).
            using W = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
            using C = op_detail::compute_t<T>;
            auto widened = [&](auto wtag) {
                using U = decltype(wtag);
                tensor xw = op_detail::widen_tensor<U, T>(x);
                tensor ow = tensor::uninitialized(dtype_of<U>, plan.out_shape);
                op_detail::run_reduce<U>(k, plan, xw, ow);
                op_detail::narrow_tensor<T, U>(ow, out);
            };
            auto in_compute_type = [&] {
                if constexpr (op_detail::is_widened<T>)
                    widened(C{});
                else
                    op_detail::run_reduce<T>(k, plan, x, out);
            };
            if (x.num_elements() == 0) {
                T* o = out.data<T>();
                std::fill(o, o + out.num_elements(), op_detail::reduction_identity<T>(k));
            } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, W>) {
                if (k == reduction::mean)
                    widened(W{});
                else
                    in_compute_type();
            } else {
                in_compute_type();
            }
        }
        return out;
    };
    if (k == reduction::any || k == reduction::all)
        return op_detail::dispatch<bool>(x.type(), op, run);
    return op_detail::dispatch_list(op_detail::all_real_types{}, x.type(), op, run, "input");
}

GRAFT_INLINE tensor reduce_sum(const tensor& x, const std::vector<std::int64_t>& axes, bool keep_dims) {
    return reduce(reduction::sum, x, axes, keep_dims);
}

GRAFT_INLINE tensor reduce_mean(const tensor& x, const std::vector<std::int64_t>& axes, bool keep_dims) {
    return reduce(reduction::mean, x, axes, keep_dims);
}

GRAFT_INLINE tensor reduce_max(const tensor& x, const std::vector<std::int64_t>& axes, bool keep_dims) {
    return reduce(reduction::max, x, axes, keep_dims);
}

GRAFT_INLINE tensor reduce_min(const tensor& x, const std::vector<std::int64_t>& axes, bool keep_dims) {
    return reduce(reduction::min, x, axes, keep_dims);
}

GRAFT_INLINE tensor reduce_prod(const tensor& x, const std::vector<std::int64_t>& axes, bool keep_dims) {
    return reduce(reduction::prod, x, axes, keep_dims);
}

GRAFT_INLINE tensor reduce_any(const tensor& x, const std::vector<std::int64_t>& axes, bool keep_dims) {
    return reduce(reduction::any, x, axes, keep_dims);
}

GRAFT_INLINE tensor reduce_all(const tensor& x, const std::vector<std::int64_t>& axes, bool keep_dims) {
    return reduce(reduction::all, x, axes, keep_dims);
}

GRAFT_INLINE tensor reduce(std::string_view op, const tensor& x, const tensor& axes, bool keep_dims) {
    static constexpr std::pair<std::string_view, reduction> names[] = {
        {"Sum", reduction::sum}, {"Mean", reduction::mean}, {"Max", reduction::max},
        {"Min", reduction::min}, {"Prod", reduction::prod}, {"Any", reduction::any},
        {"All", reduction::all}};
    for (const auto& [n, k] : names) {
        if (n == op)
            return reduce(k, x, op_detail::int_list(op, axes, "reduction_indices"), keep_dims);
    }
    throw unimplemented_error(op_detail::cat("reduce: unknown reduction op '", op, "'"), {},
                              "known: Sum, Mean, Max, Min, Prod, Any, All");
}

GRAFT_INLINE tensor arg_max(const tensor& x, std::int64_t axis, dtype output_type) {
    return op_detail::arg_op<true>("ArgMax", x, axis, output_type);
}

GRAFT_INLINE tensor arg_min(const tensor& x, std::int64_t axis, dtype output_type) {
    return op_detail::arg_op<false>("ArgMin", x, axis, output_type);
}

GRAFT_INLINE tensor arg_max(const tensor& x, const tensor& axis, dtype output_type) {
    return arg_max(x, op_detail::int_scalar("ArgMax", axis, "dimension"), output_type);
}

GRAFT_INLINE tensor arg_min(const tensor& x, const tensor& axis, dtype output_type) {
    return arg_min(x, op_detail::int_scalar("ArgMin", axis, "dimension"), output_type);
}

GRAFT_INLINE tensor l2_loss(const tensor& x) {
    const char* op = "L2Loss";
    op_detail::require_input(op, x, "t");
    return op_detail::dispatch_list(
        op_detail::all_float_types{}, x.type(), op,
        [&](auto tag) {
            using T = decltype(tag);
            using C = op_detail::compute_t<T>;
            tensor xc = x;
            if constexpr (op_detail::is_widened<T>) xc = op_detail::widen_tensor<C, T>(x);
            tensor oc = tensor::uninitialized(dtype_of<C>, shape{});
            const_tensor_map<C, 1> xm(xc.data<C>(), x.num_elements());
            tensor_map<C, 0> om(oc.data<C>());
            om.device(cpu_device()) = xm.square().sum() * static_cast<C>(0.5);
            if constexpr (!op_detail::is_widened<T>) return oc;
            tensor out = tensor::uninitialized(dtype_of<T>, shape{});
            out.data<T>()[0] = static_cast<T>(oc.data<C>()[0]);
            return out;
        },
        "t");
}

}  // namespace graft::ops
