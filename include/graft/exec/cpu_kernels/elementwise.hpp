// graft/exec/cpu_kernels/elementwise.hpp — unary and binary math ops (graft/ops/elementwise.hpp) bound to
// their TF op types. A kernel writes into its input's buffer when the executor says nobody reads it
// later and the output has the same dtype and shape.
#pragma once

#include "graft/exec/kernel.hpp"
#include "graft/ops/elementwise.hpp"
#include "graft/ops/unary.hpp"

namespace graft::exec::kernels {

namespace impl {
inline const tensor* reusable(const tensor* candidate, dtype t, const graft::shape& s) {
    if (!candidate || candidate->type() != t || !(candidate->shape() == s)) return nullptr;
    return candidate;
}
inline bool bool_result(std::string_view op) {
    return op == "Equal" || op == "NotEqual" || op == "Less" || op == "LessEqual" || op == "Greater" ||
           op == "GreaterEqual";
}
}  // namespace impl

inline void register_elementwise(kernel_registry& r) {
    for (auto name : ops::unary_op_names()) {
        std::string op(name);
        if (op == "LeakyRelu") continue;
        r.add(op, [op](kernel_context& c) {
            const tensor* fwd = c.forwardable_slot(0);  // (input(0) is then this slot itself)
            const tensor& x = c.input(0);
            bool same_type = op != "LogicalNot" || x.type() == dtype::bool_;
            const tensor* out = same_type ? impl::reusable(fwd, x.type(), x.shape()) : nullptr;
            c.set_output(0, ops::unary(op, x, out));
        });
    }
    r.add("LeakyRelu", [](kernel_context& c) {
        c.set_output(0, ops::leaky_relu(c.input(0), c.attr_or<float>("alpha", 0.2f)));
    });
    for (auto name : ops::binary_op_names()) {
        std::string op(name);
        if (op == "LeakyReluGrad") continue;
        r.add(op, [op](kernel_context& c) {
            const tensor *fa = c.forwardable_slot(0), *fb = c.forwardable_slot(1);  // (the slots a and b are)
            const tensor &a = c.input(0), &b = c.input(1);
            const tensor* out = nullptr;
            if (!impl::bool_result(op) && a.type() == b.type()) {
                if (a.shape() == b.shape() || b.num_elements() == 1) out = impl::reusable(fa, a.type(), a.shape());
                if (!out && (a.shape() == b.shape() || a.num_elements() == 1))
                    out = impl::reusable(fb, b.type(), b.shape());
                if (out && a.rank() != b.rank() && !(a.shape() == b.shape())) out = nullptr;
            }
            c.set_output(0, ops::binary(op, a, b, out));
        });
    }
    r.add("LeakyReluGrad", [](kernel_context& c) {
        c.set_output(0, ops::leaky_relu_grad(c.input(0), c.input(1), c.attr_or<float>("alpha", 0.2f)));
    });
}

}  // namespace graft::exec::kernels
