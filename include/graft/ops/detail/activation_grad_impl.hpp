// graft/ops/detail/activation_grad_impl.hpp — the definitions of the ops graft/ops/activation_grad.hpp declares: inline when
// graft is used header-only, compiled once into graft::compiled by src/compiled/elementwise_ops.cpp
// otherwise (core/config.hpp). Included by activation_grad.hpp only.
#pragma once

#include "graft/ops/activation_grad.hpp"

namespace graft::ops {

GRAFT_INLINE tensor relu_grad(const tensor& gradients, const tensor& features, const tensor* out) {
    return op_detail::same_shape_op(op_detail::real_types{}, "ReluGrad", gradients, "gradients",
                                    features, "features", out, 1,
                                    [](const auto& g, const auto& f, auto tag) {
                                        using T = decltype(tag);
                                        return (f > f.constant(T(0))).select(g, g.constant(T(0)));
                                    },
#ifdef GRAFT_X86_DISPATCH
                                    &op_detail::relu_grad_x86
#else
                                    nullptr
#endif
    );
}

GRAFT_INLINE tensor relu6_grad(const tensor& gradients, const tensor& features, const tensor* out) {
    return op_detail::same_shape_op(
        op_detail::real_types{}, "Relu6Grad", gradients, "gradients", features, "features", out, 2,
        [](const auto& g, const auto& f, auto tag) {
            using T = decltype(tag);
            return ((f > f.constant(T(0))) && (f < f.constant(T(6)))).select(g, g.constant(T(0)));
        });
}

GRAFT_INLINE tensor elu_grad(const tensor& gradients, const tensor& outputs, const tensor* out) {
    return op_detail::same_shape_op(
        op_detail::float_types{}, "EluGrad", gradients, "gradients", outputs, "outputs", out, 3,
        [](const auto& g, const auto& y, auto tag) {
            using T = decltype(tag);
            return (y < y.constant(T(0))).select(g * (y + y.constant(T(1))), g);
        });
}

GRAFT_INLINE tensor selu_grad(const tensor& gradients, const tensor& outputs, const tensor* out) {
    return op_detail::same_shape_op(
        op_detail::float_types{}, "SeluGrad", gradients, "gradients", outputs, "outputs", out, 3,
        [](const auto& g, const auto& y, auto tag) {
            using T = decltype(tag);
            const T scale = static_cast<T>(op_detail::selu_scale);
            const T scale_alpha = static_cast<T>(op_detail::selu_scale * op_detail::selu_alpha);
            return (y < y.constant(T(0)))
                .select(g * (y + y.constant(scale_alpha)), g * g.constant(scale));
        });
}

GRAFT_INLINE tensor softplus_grad(const tensor& gradients, const tensor& features, const tensor* out) {
    return op_detail::same_shape_op(
        op_detail::float_types{}, "SoftplusGrad", gradients, "gradients", features, "features", out,
        14, [](const auto& g, const auto& f, auto) { return g * f.sigmoid(); });
}

GRAFT_INLINE tensor leaky_relu_grad(const tensor& gradients, const tensor& features, float alpha, const tensor* out) {
    return op_detail::same_shape_op(
        op_detail::float_types{}, "LeakyReluGrad", gradients, "gradients", features, "features",
        out, 2, [alpha](const auto& g, const auto& f, auto tag) {
            using T = decltype(tag);
            return (f > f.constant(T(0))).select(g, g * g.constant(static_cast<T>(alpha)));
        });
}

GRAFT_INLINE tensor sigmoid_grad(const tensor& y, const tensor& dy, const tensor* out) {
    return op_detail::same_shape_op(op_detail::float_types{}, "SigmoidGrad", y, "y", dy, "dy", out,
                                    3, [](const auto& v, const auto& d, auto tag) {
                                        using T = decltype(tag);
                                        return d * v * (v.constant(T(1)) - v);
                                    });
}

GRAFT_INLINE tensor tanh_grad(const tensor& y, const tensor& dy, const tensor* out) {
    return op_detail::same_shape_op(op_detail::float_types{}, "TanhGrad", y, "y", dy, "dy", out, 3,
                                    [](const auto& v, const auto& d, auto tag) {
                                        using T = decltype(tag);
                                        return d * (v.constant(T(1)) - v * v);
                                    });
}

GRAFT_INLINE tensor rsqrt_grad(const tensor& y, const tensor& dy, const tensor* out) {
    return op_detail::same_shape_op(op_detail::float_types{}, "RsqrtGrad", y, "y", dy, "dy", out, 4,
                                    [](const auto& v, const auto& d, auto tag) {
                                        using T = decltype(tag);
                                        return v * v * v * d * v.constant(T(-0.5));
                                    });
}

GRAFT_INLINE tensor sqrt_grad(const tensor& y, const tensor& dy, const tensor* out) {
    return op_detail::same_shape_op(op_detail::float_types{}, "SqrtGrad", y, "y", dy, "dy", out, 6,
                                    [](const auto& v, const auto& d, auto tag) {
                                        using T = decltype(tag);
                                        return d * v.constant(T(0.5)) / v;
                                    });
}

GRAFT_INLINE tensor reciprocal_grad(const tensor& y, const tensor& dy, const tensor* out) {
    return op_detail::same_shape_op(op_detail::float_types{}, "ReciprocalGrad", y, "y", dy, "dy",
                                    out, 3,
                                    [](const auto& v, const auto& d, auto) { return -d * v * v; });
}

}  // namespace graft::ops
