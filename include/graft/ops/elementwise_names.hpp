// graft/ops/elementwise_names.hpp — the TF op names ops::unary() and ops::binary() know, without
// their kernels: code that only asks "is this an elementwise op?" (kernel registries, tests)
// includes this and not elementwise.hpp, whose by-name tables instantiate every kernel and dtype.
//
//   for (auto name : ops::unary_op_names()) ...           // "Neg", "Abs", ... "LogicalNot"
//   if (ops::has_binary(node.op())) ...
//
// Each list below is the one home of its family: an entry is (TF op name, the call that computes it
// from x [, y] into o), and elementwise.hpp builds its by-name tables from the same lists.
#pragma once

#include <array>
#include <string_view>
#include <vector>

// clang-format off
#define GRAFT_ELEMENTWISE_UNARY_OPS(X)   \
    X(Neg, neg(x, o))                    \
    X(Abs, ops::abs(x, o))               \
    X(Sign, sign(x, o))                  \
    X(Square, square(x, o))              \
    X(Sqrt, ops::sqrt(x, o))             \
    X(Rsqrt, rsqrt(x, o))                \
    X(Reciprocal, reciprocal(x, o))      \
    X(Inv, reciprocal(x, o))             \
    X(Exp, ops::exp(x, o))               \
    X(Log, ops::log(x, o))               \
    X(Log1p, ops::log1p(x, o))           \
    X(Tanh, ops::tanh(x, o))             \
    X(Sigmoid, sigmoid(x, o))            \
    X(Relu, relu(x, o))                  \
    X(Relu6, relu6(x, o))                \
    X(Elu, elu(x, o))                    \
    X(Selu, selu(x, o))                  \
    X(Softplus, softplus(x, o))          \
    X(LeakyRelu, leaky_relu(x, 0.2f, o)) \
    X(Floor, ops::floor(x, o))           \
    X(Ceil, ops::ceil(x, o))             \
    X(Round, ops::round(x, o))           \
    X(Sin, ops::sin(x, o))               \
    X(Cos, ops::cos(x, o))               \
    X(Erf, ops::erf(x, o))               \
    X(LogicalNot, logical_not(x, o))

#define GRAFT_ELEMENTWISE_BINARY_OPS(X)               \
    X(Add, add(x, y, o))                              \
    X(AddV2, add(x, y, o))                            \
    X(Sub, sub(x, y, o))                              \
    X(Mul, mul(x, y, o))                              \
    X(Div, ops::div(x, y, o))                         \
    X(RealDiv, real_div(x, y, o))                     \
    X(FloorDiv, floor_div(x, y, o))                   \
    X(FloorMod, floor_mod(x, y, o))                   \
    X(Maximum, maximum(x, y, o))                      \
    X(Minimum, minimum(x, y, o))                      \
    X(Pow, ops::pow(x, y, o))                         \
    X(SquaredDifference, squared_difference(x, y, o)) \
    X(Equal, equal_to(x, y, o))                       \
    X(NotEqual, not_equal_to(x, y, o))                \
    X(Less, less(x, y, o))                            \
    X(LessEqual, less_equal(x, y, o))                 \
    X(Greater, greater(x, y, o))                      \
    X(GreaterEqual, greater_equal(x, y, o))           \
    X(LogicalAnd, logical_and(x, y, o))               \
    X(LogicalOr, logical_or(x, y, o))                 \
    X(ReluGrad, relu_grad(x, y, o))                   \
    X(Relu6Grad, relu6_grad(x, y, o))                 \
    X(EluGrad, elu_grad(x, y, o))                     \
    X(SeluGrad, selu_grad(x, y, o))                   \
    X(SoftplusGrad, softplus_grad(x, y, o))           \
    X(LeakyReluGrad, leaky_relu_grad(x, y, 0.2f, o))  \
    X(SigmoidGrad, sigmoid_grad(x, y, o))             \
    X(TanhGrad, tanh_grad(x, y, o))                   \
    X(RsqrtGrad, rsqrt_grad(x, y, o))                 \
    X(SqrtGrad, sqrt_grad(x, y, o))                   \
    X(ReciprocalGrad, reciprocal_grad(x, y, o))       \
    X(InvGrad, reciprocal_grad(x, y, o))
// clang-format on

namespace graft::ops {

namespace op_detail {
#define GRAFT_ELEMENTWISE_NAME_(name, call) std::string_view(#name),
inline constexpr std::array unary_names{GRAFT_ELEMENTWISE_UNARY_OPS(GRAFT_ELEMENTWISE_NAME_)};
inline constexpr std::array binary_names{GRAFT_ELEMENTWISE_BINARY_OPS(GRAFT_ELEMENTWISE_NAME_)};
#undef GRAFT_ELEMENTWISE_NAME_
}  // namespace op_detail

/// True when unary() knows the TF op name.
inline bool has_unary(std::string_view op) {
    for (auto n : op_detail::unary_names) {
        if (n == op) return true;
    }
    return false;
}
/// True when binary() knows the TF op name.
inline bool has_binary(std::string_view op) {
    for (auto n : op_detail::binary_names) {
        if (n == op) return true;
    }
    return false;
}
/// The TF op names unary() knows.
inline std::vector<std::string_view> unary_op_names() {
    return {op_detail::unary_names.begin(), op_detail::unary_names.end()};
}
/// The TF op names binary() knows.
inline std::vector<std::string_view> binary_op_names() {
    return {op_detail::binary_names.begin(), op_detail::binary_names.end()};
}

}  // namespace graft::ops
