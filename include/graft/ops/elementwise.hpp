// graft/ops/elementwise.hpp — every elementwise op, and a way to call them by TF op name.
//
//   tensor y = ops::unary("Relu", x);                      // == ops::relu(x)
//   tensor z = ops::binary("AddV2", a, b);                 // == ops::add(a, b), with broadcasting
//   tensor g = ops::binary("ReluGrad", dy, x);             // activation gradients are binary too
//   if (ops::has_binary(node.op())) ...                    // what a registry binds
//
// The names alone (has_unary, unary_op_names, ...) are in elementwise_names.hpp: include that
// where the kernels are not called, it costs a fraction of this header's compile time.
//
// The by-name calls use each op's default attrs: LeakyRelu and LeakyReluGrad take alpha = 0.2
// (call ops::leaky_relu(x, alpha) for a node's own alpha); BiasAdd, AddN and Select* have their own
// functions (bias_add.hpp, nary.hpp).
#pragma once

#include <array>
#include <string_view>

#include "graft/ops/elementwise_names.hpp"

#include "graft/ops/activation_grad.hpp"
#include "graft/ops/bias_add.hpp"
#include "graft/ops/binary.hpp"
#include "graft/ops/broadcast.hpp"
#include "graft/ops/nary.hpp"
#include "graft/ops/unary.hpp"

namespace graft::ops {

namespace op_detail {

using unary_fn = tensor (*)(const tensor&, const tensor*);
using binary_fn = tensor (*)(const tensor&, const tensor&, const tensor*);

// The by-name kernels, at the index of their name in elementwise_names.hpp's lists (which they
// are built from).
#define GRAFT_ELEMENTWISE_UNARY_FN_(name, call) [](const tensor& x, const tensor* o) { return call; },
#define GRAFT_ELEMENTWISE_BINARY_FN_(name, call) \
    [](const tensor& x, const tensor& y, const tensor* o) { return call; },
inline constexpr std::array<unary_fn, unary_names.size()> unary_fns{
    GRAFT_ELEMENTWISE_UNARY_OPS(GRAFT_ELEMENTWISE_UNARY_FN_)};
inline constexpr std::array<binary_fn, binary_names.size()> binary_fns{
    GRAFT_ELEMENTWISE_BINARY_OPS(GRAFT_ELEMENTWISE_BINARY_FN_)};
#undef GRAFT_ELEMENTWISE_UNARY_FN_
#undef GRAFT_ELEMENTWISE_BINARY_FN_

}  // namespace op_detail

/// The unary op named `op` (TF name, e.g. "Relu") applied to x; into *out when given. Throws
/// unimplemented_error for an unknown name, else what the op throws.
inline tensor unary(std::string_view op, const tensor& x, const tensor* out = nullptr) {
    for (std::size_t i = 0; i < op_detail::unary_names.size(); ++i) {
        if (op_detail::unary_names[i] == op) return op_detail::unary_fns[i](x, out);
    }
    throw unimplemented_error(op_detail::cat("unary: no elementwise kernel for op '", op, "'"), {},
                              "see ops::unary_op_names() for the supported ones");
}

/// The binary op named `op` (TF name, e.g. "AddV2" or "ReluGrad") applied to (x, y) in TF's input
/// order; into *out when given. Throws unimplemented_error for an unknown name, else what the op
/// throws.
inline tensor binary(std::string_view op, const tensor& x, const tensor& y,
                     const tensor* out = nullptr) {
    for (std::size_t i = 0; i < op_detail::binary_names.size(); ++i) {
        if (op_detail::binary_names[i] == op) return op_detail::binary_fns[i](x, y, out);
    }
    throw unimplemented_error(op_detail::cat("binary: no elementwise kernel for op '", op, "'"), {},
                              "see ops::binary_op_names() for the supported ones");
}

}  // namespace graft::ops
