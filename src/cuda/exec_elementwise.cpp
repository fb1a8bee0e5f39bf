// GPU kernels of the elementwise family: the float32 unary ops and LeakyRelu, the broadcasting
// binary ops (arithmetic, comparisons with a bool result) and the activation gradients,
// LogicalNot/And/Or, Cast, ZerosLike/OnesLike, AddN, Select/SelectV2, BiasAdd/BiasAddV1,
// BiasAddGrad and L2Loss. Shapes, dtypes and attrs are checked on the host with the CPU kernels'
// messages (graft/ops/*.hpp) before anything is queued; broadcasting uses the CPU's plan
// (ops::make_broadcast: merged dims and per-input strides), handed to one launch.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "families.hpp"
#include "graft/cuda/exec.hpp"
#include "graft/ops/broadcast.hpp"
#include "launch_elementwise.hpp"

namespace graft::cuda::families {

namespace {

using exec::kernel_context;
using launch::binary_op;
using launch::unary_op;
using ops::op_detail::require_same_dtype;

const float* cf32(const tensor& t) {
    return static_cast<const float*>(t.raw_data());
}
float* f32(const tensor& t) {
    return static_cast<float*>(t.raw_data());
}

/// Throws invalid_argument_error naming `op` and `what` unless `t` is a tensor with a fully
/// defined shape (op_detail::require_input without its host-only rule).
void require_tensor(std::string_view op, const tensor& t, std::string_view what) {
    if (!t.valid())
        throw invalid_argument_error(detail::cat(op, ": ", what, " is an empty (invalid) tensor"));
    if (!t.shape().fully_defined()) {
        throw shape_error(detail::cat(op, ": ", what, " has shape ", t.shape().str(),
                                      " that is not fully defined"));
    }
}

/// Throws invalid_argument_error unless `t` is float32 (placement sends other dtypes to the CPU;
/// an input that disagrees with the node's T lands here).
void require_f32(std::string_view op, const tensor& t, std::string_view what) {
    if (base_type(t.type()) != dtype::float32) {
        throw invalid_argument_error(
            detail::cat(op, ": ", what, " has dtype ", dtype_name(t.type()),
                        ", which the GPU kernel does not support (supported: float32)"),
            {}, "place the node on /device:CPU:0");
    }
}

/// Input i on this GPU; `writable` says whether the kernel may write its buffer in place (no later
/// step reads it and nobody else holds it — the CPU kernels' forwarding).
tensor take_input(kernel_context& c, int i, bool& writable) {
    (void)c.input(i);  // onto this device; a plain value is kept in the slot
    tensor f = c.forwardable_input(i);
    writable = f.valid() && f.dev() == c.dev();
    return writable ? f : c.input(i);
}

/// The launch form of a broadcast plan. Throws unimplemented_error naming `op` for more than
/// launch::max_broadcast_rank merged dims.
launch::broadcast_desc to_desc(std::string_view op, const ops::broadcast_plan& p) {
    launch::broadcast_desc d;
    if (p.dims.size() > static_cast<std::size_t>(launch::max_broadcast_rank)) {
        throw unimplemented_error(
            detail::cat(op, ": the GPU kernel broadcasts up to ", launch::max_broadcast_rank,
                        " merged dims, the shapes need ", p.dims.size()),
            {}, "place the node on /device:CPU:0");
    }
    d.rank = static_cast<int>(p.dims.size());
    for (std::size_t j = 0; j < p.dims.size(); ++j) {
        d.dims[j] = p.dims[j];
        for (std::size_t k = 0; k < p.strides.size() && k < 3; ++k)
            d.strides[k][j] = p.strides[k][j];
    }
    return d;
}

/// A float32 output of shape `s`: input `x` itself when it may be overwritten and has that shape.
tensor f32_output(kernel_context& c, const tensor& x, bool writable, const graft::shape& s) {
    if (writable && x.type() == dtype::float32 && x.shape() == s) return x;
    return output(c, dtype::float32, s);
}

struct unary_spec {
    const char* tf;   ///< the op type
    const char* msg;  ///< the name the CPU kernel's errors use
    unary_op op;
};
constexpr unary_spec unary_specs[] = {
    {"Neg", "Neg", unary_op::neg},
    {"Abs", "Abs", unary_op::abs},
    {"Sign", "Sign", unary_op::sign},
    {"Square", "Square", unary_op::square},
    {"Sqrt", "Sqrt", unary_op::sqrt},
    {"Rsqrt", "Rsqrt", unary_op::rsqrt},
    {"Reciprocal", "Reciprocal", unary_op::reciprocal},
    {"Inv", "Reciprocal", unary_op::reciprocal},
    {"Exp", "Exp", unary_op::exp},
    {"Log", "Log", unary_op::log},
    {"Log1p", "Log1p", unary_op::log1p},
    {"Tanh", "Tanh", unary_op::tanh},
    {"Sigmoid", "Sigmoid", unary_op::sigmoid},
    {"Relu", "Relu", unary_op::relu},
    {"Relu6", "Relu6", unary_op::relu6},
    {"Elu", "Elu", unary_op::elu},
    {"Selu", "Selu", unary_op::selu},
    {"Softplus", "Softplus", unary_op::softplus},
    {"LeakyRelu", "LeakyRelu", unary_op::leaky_relu},
    {"Floor", "Floor", unary_op::floor},
    {"Ceil", "Ceil", unary_op::ceil},
    {"Round", "Round", unary_op::round},
    {"Sin", "Sin", unary_op::sin},
    {"Cos", "Cos", unary_op::cos},
    {"Erf", "Erf", unary_op::erf},
};

struct binary_spec {
    const char* tf;
    const char* msg;
    binary_op op;
    bool same_shape;     ///< the activation gradients: equal shapes, no broadcasting
    const char* a_name;  ///< TF's input names, as the CPU's errors say them
    const char* b_name;
};
constexpr binary_spec binary_specs[] = {
    {"Add", "Add", binary_op::add, false, "x", "y"},
    {"AddV2", "Add", binary_op::add, false, "x", "y"},
    {"Sub", "Sub", binary_op::sub, false, "x", "y"},
    {"Mul", "Mul", binary_op::mul, false, "x", "y"},
    {"Div", "Div", binary_op::div, false, "x", "y"},
    {"RealDiv", "RealDiv", binary_op::div, false, "x", "y"},
    {"FloorDiv", "FloorDiv", binary_op::floor_div, false, "x", "y"},
    {"FloorMod", "FloorMod", binary_op::floor_mod, false, "x", "y"},
    {"Maximum", "Maximum", binary_op::maximum, false, "x", "y"},
    {"Minimum", "Minimum", binary_op::minimum, false, "x", "y"},
    {"Pow", "Pow", binary_op::pow, false, "x", "y"},
    {"SquaredDifference", "SquaredDifference", binary_op::squared_difference, false, "x", "y"},
    {"Equal", "Equal", binary_op::equal, false, "x", "y"},
    {"NotEqual", "NotEqual", binary_op::not_equal, false, "x", "y"},
    {"Less", "Less", binary_op::less, false, "x", "y"},
    {"LessEqual", "LessEqual", binary_op::less_equal, false, "x", "y"},
    {"Greater", "Greater", binary_op::greater, false, "x", "y"},
    {"GreaterEqual", "GreaterEqual", binary_op::greater_equal, false, "x", "y"},
    {"ReluGrad", "ReluGrad", binary_op::relu_grad, true, "gradients", "features"},
    {"Relu6Grad", "Relu6Grad", binary_op::relu6_grad, true, "gradients", "features"},
    {"EluGrad", "EluGrad", binary_op::elu_grad, true, "gradients", "outputs"},
    {"SeluGrad", "SeluGrad", binary_op::selu_grad, true, "gradients", "outputs"},
    {"SoftplusGrad", "SoftplusGrad", binary_op::softplus_grad, true, "gradients", "features"},
    {"LeakyReluGrad", "LeakyReluGrad", binary_op::leaky_relu_grad, true, "gradients", "features"},
    {"SigmoidGrad", "SigmoidGrad", binary_op::sigmoid_grad, true, "y", "dy"},
    {"TanhGrad", "TanhGrad", binary_op::tanh_grad, true, "y", "dy"},
    {"RsqrtGrad", "RsqrtGrad", binary_op::rsqrt_grad, true, "y", "dy"},
    {"SqrtGrad", "SqrtGrad", binary_op::sqrt_grad, true, "y", "dy"},
    {"ReciprocalGrad", "ReciprocalGrad", binary_op::reciprocal_grad, true, "y", "dy"},
    {"InvGrad", "ReciprocalGrad", binary_op::reciprocal_grad, true, "y", "dy"},
};

void run_unary(kernel_context& c, const unary_spec& u) {
    bool w = false;
    tensor x = take_input(c, 0, w);
    require_tensor(u.msg, x, "x");
    require_f32(u.msg, x, "x");
    float param = 0.f;
    if (u.op == unary_op::leaky_relu) param = c.attr_or<float>("alpha", 0.2f);
    // The CPU's threshold, computed the same way (std::log of float epsilon, then + 2).
    if (u.op == unary_op::softplus)
        param = static_cast<float>(std::log(std::numeric_limits<float>::epsilon()) + 2);
    auto& s = stream_of(c);
    tensor y = f32_output(c, x, w, x.shape());
    launch::unary_f32(u.op, cf32(x), f32(y), x.num_elements(), param, s.native());
    c.set_output(0, y);
}

void run_binary(kernel_context& c, const binary_spec& b) {
    bool wa = false, wb = false;
    tensor x = take_input(c, 0, wa);
    tensor y = take_input(c, 1, wb);
    require_tensor(b.msg, x, b.a_name);
    require_tensor(b.msg, y, b.b_name);
    require_same_dtype(b.msg, x, b.a_name, y, b.b_name);
    if (b.same_shape && !(x.shape() == y.shape())) {
        throw shape_error(detail::cat(b.msg, ": ", b.a_name, " has shape ", x.shape().str(),
                                      " but ", b.b_name, " has ", y.shape().str(),
                                      ": they must be equal"));
    }
    require_f32(b.msg, x, b.a_name);
    auto plan = ops::make_broadcast(b.msg, x.shape(), y.shape());
    auto desc = to_desc(b.msg, plan);
    const float param = b.op == binary_op::leaky_relu_grad ? c.attr_or<float>("alpha", 0.2f) : 0.f;
    auto& s = stream_of(c);
    tensor out;
    if (launch::is_comparison(b.op)) {
        out = output(c, dtype::bool_, plan.out_shape);
    } else {
        out = (wa && x.shape() == plan.out_shape) ? x : f32_output(c, y, wb, plan.out_shape);
    }
    launch::binary_f32(b.op, cf32(x), cf32(y), out.raw_data(), plan.num_elements, desc, param,
                       s.native());
    c.set_output(0, out);
}

void run_logical(kernel_context& c, bool is_and) {
    const char* op = is_and ? "LogicalAnd" : "LogicalOr";
    tensor x = c.input(0), y = c.input(1);
    require_tensor(op, x, "x");
    require_tensor(op, y, "y");
    require_same_dtype(op, x, "x", y, "y");
    ops::op_detail::require_dtype(op, x, "x", dtype::bool_);
    auto plan = ops::make_broadcast(op, x.shape(), y.shape());
    auto desc = to_desc(op, plan);
    auto& s = stream_of(c);
    tensor out = output(c, dtype::bool_, plan.out_shape);
    launch::logical_binary(is_and, static_cast<const bool*>(x.raw_data()),
                           static_cast<const bool*>(y.raw_data()),
                           static_cast<bool*>(out.raw_data()), plan.num_elements, desc, s.native());
    c.set_output(0, out);
}

/// The dtypes Cast moves on the device.
std::optional<launch::elem> cast_elem(dtype t) {
    switch (base_type(t)) {
        case dtype::float32:
            return launch::elem::f32;
        case dtype::float64:
            return launch::elem::f64;
        case dtype::float16:
            return launch::elem::f16;
        case dtype::bfloat16:
            return launch::elem::bf16;
        case dtype::int32:
            return launch::elem::i32;
        case dtype::int64:
            return launch::elem::i64;
        case dtype::bool_:
            return launch::elem::boolean;
        case dtype::uint8:
            return launch::elem::u8;
        default:
            return std::nullopt;
    }
}

/// The bits of 1 in `t` (OnesLike: the CPU's dtypes that also live on the GPU; it has no 1 for
/// float16/bfloat16), or nullopt.
std::optional<std::uint64_t> one_bits(dtype t) {
    switch (base_type(t)) {
        case dtype::float32:
            return 0x3f800000u;
        case dtype::float64:
            return 0x3ff0000000000000ull;
        case dtype::int64:
        case dtype::bool_:
            return 1u;
        default:
            return std::nullopt;
    }
}

/// The dtypes of T that ZerosLike, Select and SelectV2 run on the GPU (int32 stays on the host,
/// as in TF).
std::vector<dtype> moved_types() {
    return {dtype::float32,  dtype::float64, dtype::float16,
            dtype::bfloat16, dtype::int64,   dtype::bool_};
}

/// Select (TF1, `v2` false: cond is a scalar, has t's shape or is a vector over dim 0) or
/// SelectV2 (cond, t and e broadcast together). The CPU's checks and messages (ops/nary.hpp).
void run_select(kernel_context& c, bool v2) {
    const char* op = v2 ? "SelectV2" : "Select";
    tensor cond = c.input(0), t = c.input(1), e = c.input(2);
    require_tensor(op, cond, "condition");
    require_tensor(op, t, "t");
    require_tensor(op, e, "e");
    graft::shape cs = cond.shape();
    if (!v2) {
        if (!(t.shape() == e.shape())) {
            throw shape_error(detail::cat(op, ": t has shape ", t.shape().str(), " but e has ",
                                          e.shape().str(), ": they must be equal"));
        }
        if (cond.rank() == 1 && t.rank() > 1) {
            if (cond.dim(0) != t.dim(0)) {
                throw shape_error(detail::cat(op, ": condition ", cond.shape().str(),
                                              " must have one entry per row of t ",
                                              t.shape().str()));
            }
            std::vector<std::int64_t> d(static_cast<std::size_t>(t.rank()), 1);
            d[0] = cond.dim(0);
            cs = graft::shape(d);
        } else if (cond.rank() != 0 && !(cond.shape() == t.shape())) {
            throw shape_error(detail::cat(op, ": condition ", cond.shape().str(),
                                          " must be a scalar, a vector over dim 0 of t ",
                                          t.shape().str(), ", or have t's shape"));
        }
    }
    ops::op_detail::require_dtype(op, cond, "condition", dtype::bool_);
    require_same_dtype(op, t, "t", e, "e");
    const auto bytes = static_cast<int>(dtype_size(base_type(t.type())));
    if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) {
        throw invalid_argument_error(detail::cat(op, ": t has dtype ", dtype_name(t.type()),
                                                 ", which the GPU kernel does not move"),
                                     {}, "place the node on /device:CPU:0");
    }
    auto plan = ops::make_broadcast(op, {cs, t.shape(), e.shape()});
    auto desc = to_desc(op, plan);
    auto& s = stream_of(c);
    tensor out = output(c, base_type(t.type()), plan.out_shape);
    launch::select(static_cast<const bool*>(cond.raw_data()), t.raw_data(), e.raw_data(),
                   out.raw_data(), bytes, plan.num_elements, desc, s.native());
    c.set_output(0, out);
}

/// BiasAdd / BiasAddV1 (ops/bias_add.hpp): value + bias along the channel dim of `data_format`.
void run_bias_add(kernel_context& c, const std::string& data_format) {
    const char* op = "BiasAdd";
    bool wv = false, wb = false;
    tensor value = take_input(c, 0, wv);
    tensor bias = take_input(c, 1, wb);
    require_tensor(op, value, "value");
    require_tensor(op, bias, "bias");
    const int ch = ops::op_detail::channel_dim(op, value, data_format);
    if (bias.rank() != 1 || bias.dim(0) != value.dim(ch)) {
        throw shape_error(detail::cat(
            op, ": bias ", bias.shape().str(), " must be a vector of the ", value.dim(ch),
            " channels of value ", value.shape().str(), " (dim ", ch, ", ", data_format, ")"));
    }
    std::vector<std::int64_t> bd(static_cast<std::size_t>(value.rank() - ch), 1);
    bd[0] = bias.dim(0);
    require_same_dtype(op, value, "x", bias, "y");
    require_f32(op, value, "x");
    auto plan = ops::make_broadcast(op, value.shape(), graft::shape(bd));
    auto desc = to_desc(op, plan);
    auto& s = stream_of(c);
    tensor out = f32_output(c, value, wv, plan.out_shape);
    launch::binary_f32(binary_op::add, cf32(value), cf32(bias), out.raw_data(), plan.num_elements,
                       desc, 0.f, s.native());
    c.set_output(0, out);
}

/// BiasAddGrad: out_backprop summed over every dim but the channel dim.
void run_bias_add_grad(kernel_context& c) {
    const char* op = "BiasAddGrad";
    tensor dy = c.input(0);
    require_tensor(op, dy, "out_backprop");
    const int ch = ops::op_detail::channel_dim(op, dy, c.attr_or<std::string>("data_format", "NHWC"));
    require_f32(op, dy, "out_backprop");
    std::int64_t outer = 1, inner = 1;
    for (int i = 0; i < ch; ++i) outer *= dy.dim(i);
    for (int i = ch + 1; i < dy.rank(); ++i) inner *= dy.dim(i);
    const std::int64_t channels = dy.dim(ch);
    auto& s = stream_of(c);
    tensor db = output(c, dtype::float32, graft::shape{channels});
    launch::bias_add_grad_f32(cf32(dy), f32(db), outer, channels, inner, s.native());
    c.set_output(0, db);
}

/// AddN: N same-shape float32 inputs summed left to right (ops/nary.hpp's checks).
void run_add_n(kernel_context& c) {
    const char* op = "AddN";
    const int n = c.num_inputs();
    if (n == 0) throw invalid_argument_error(detail::cat(op, ": needs at least one input"));
    bool w0 = false;
    std::vector<tensor> in;
    in.reserve(static_cast<std::size_t>(n));
    in.push_back(take_input(c, 0, w0));
    for (int k = 1; k < n; ++k) in.push_back(c.input(k));
    for (int k = 0; k < n; ++k) {
        const auto& t = in[static_cast<std::size_t>(k)];
        const std::string what = detail::cat("input ", k);
        require_tensor(op, t, what);
        require_same_dtype(op, t, what, in[0], "input 0");
        if (!(t.shape() == in[0].shape())) {
            throw shape_error(detail::cat(op, ": input ", k, " has shape ", t.shape().str(),
                                          " but input 0 has ", in[0].shape().str(),
                                          ": all must match"));
        }
    }
    require_f32(op, in[0], "input 0");
    std::vector<const float*> ptrs;
    for (const auto& t : in) ptrs.push_back(cf32(t));
    auto& s = stream_of(c);
    tensor out = f32_output(c, in[0], w0, in[0].shape());
    launch::add_n_f32(ptrs.data(), n, f32(out), out.num_elements(), s.native());
    c.set_output(0, out);
}

void run_l2_loss(kernel_context& c) {
    const char* op = "L2Loss";
    tensor x = c.input(0);
    require_tensor(op, x, "t");
    require_f32(op, x, "t");
    auto& s = stream_of(c);
    tensor out = output(c, dtype::float32, graft::shape{});
    // Freed when this returns: the allocator hands it to later work on this stream only.
    auto scratch =
        allocate(static_cast<std::size_t>(launch::l2_loss_scratch_bytes(x.num_elements())), s);
    launch::l2_loss_f32(cf32(x), f32(out), x.num_elements(), scratch->data(), s.native());
    c.set_output(0, out);
}

void run_cast(kernel_context& c) {
    tensor x = c.input(0);
    require_tensor("Cast", x, "x");
    const dtype to = base_type(c.attr_type("DstT"));
    if (base_type(x.type()) == to) {  // as the CPU: the input itself
        c.set_output(0, x);
        return;
    }
    auto from = cast_elem(x.type());
    auto dst = cast_elem(to);
    if (!from || !dst) {
        c.fail(detail::cat("Cast from ", dtype_name(x.type()), " to ", dtype_name(to),
                           " has no GPU kernel"),
               "the GPU Cast converts among float32, float64, float16, bfloat16, int32, int64, "
               "bool and uint8; "
               "place the node on /device:CPU:0");
    }
    auto& s = stream_of(c);
    tensor y = output(c, to, x.shape());
    launch::cast(x.raw_data(), *from, y.raw_data(), *dst, x.num_elements(), s.native());
    c.set_output(0, y);
}

}  // namespace

void register_elementwise(exec::kernel_registry& r) {
    const auto cuda = device_kind::cuda;
    for (const auto& u : unary_specs) {
        r.add(
            cuda, u.tf, [&u](kernel_context& c) { run_unary(c, u); }, float_kernel());
    }
    for (const auto& b : binary_specs) {
        r.add(
            cuda, b.tf, [&b](kernel_context& c) { run_binary(c, b); }, float_kernel());
    }

    // bool logic: no type attr, so any node of these ops runs here.
    r.add(
        cuda, "LogicalNot",
        [](kernel_context& c) {
            tensor x = c.input(0);
            require_tensor("LogicalNot", x, "x");
            ops::op_detail::require_dtype("LogicalNot", x, "x", dtype::bool_);
            auto& s = stream_of(c);
            tensor y = output(c, dtype::bool_, x.shape());
            launch::logical_not(static_cast<const bool*>(x.raw_data()),
                                static_cast<bool*>(y.raw_data()), x.num_elements(), s.native());
            c.set_output(0, y);
        },
        exec::kernel_def{});
    r.add(
        cuda, "LogicalAnd", [](kernel_context& c) { run_logical(c, true); }, exec::kernel_def{});
    r.add(
        cuda, "LogicalOr", [](kernel_context& c) { run_logical(c, false); }, exec::kernel_def{});

    {
        const std::vector<dtype> cast_types = {dtype::float32, dtype::float64, dtype::float16, dtype::bfloat16,
                                               dtype::int32,   dtype::int64,   dtype::bool_,   dtype::uint8};
        exec::kernel_def cast = float_kernel({}, "SrcT", cast_types);
        cast.more_types.emplace_back("DstT", cast_types);  // another DstT: placed on the CPU
        r.add(cuda, "Cast", run_cast, cast);
    }

    // ZerosLike/OnesLike read only their input's dtype and shape: it is not copied here.
    exec::kernel_def like = float_kernel({}, "T", moved_types());
    like.reads_input_data = false;
    exec::kernel_def ones =
        float_kernel({}, "T", {dtype::float32, dtype::float64, dtype::int64, dtype::bool_});
    ones.reads_input_data = false;
    r.add(
        cuda, "ZerosLike",
        [](kernel_context& c) {
            tensor x = c.input(0);
            require_tensor("ZerosLike", x, "x");
            c.set_output(0, zeros(base_type(x.type()), x.shape(), stream_of(c)));
        },
        like);
    r.add(
        cuda, "OnesLike",
        [](kernel_context& c) {
            tensor x = c.input(0);
            require_tensor("OnesLike", x, "x");
            auto bits = one_bits(x.type());
            if (!bits) {
                throw invalid_argument_error(
                    detail::cat("OnesLike: x has dtype ", dtype_name(x.type()),
                                ", which the GPU kernel does not support (supported: "
                                "float32, float64, int64, bool)"),
                    {}, "place the node on /device:CPU:0");
            }
            auto& s = stream_of(c);
            const dtype t = base_type(x.type());
            tensor y = output(c, t, x.shape());
            launch::fill(y.raw_data(), static_cast<int>(dtype_size(t)), *bits, y.num_elements(),
                         s.native());
            c.set_output(0, y);
        },
        ones);

    r.add(
        cuda, "Select", [](kernel_context& c) { run_select(c, false); },
        float_kernel({}, "T", moved_types()));
    r.add(
        cuda, "SelectV2", [](kernel_context& c) { run_select(c, true); },
        float_kernel({}, "T", moved_types()));

    r.add(cuda, "AddN", run_add_n, float_kernel());
    r.add(
        cuda, "BiasAdd",
        [](kernel_context& c) { run_bias_add(c, c.attr_or<std::string>("data_format", "NHWC")); },
        float_kernel());
    r.add(
        cuda, "BiasAddV1", [](kernel_context& c) { run_bias_add(c, "NHWC"); }, float_kernel());
    r.add(cuda, "BiasAddGrad", run_bias_add_grad, float_kernel());
    r.add(cuda, "L2Loss", run_l2_loss, float_kernel());
}

}  // namespace graft::cuda::families
