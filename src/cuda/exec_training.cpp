// GPU kernels of the training family: ApplyGradientDescent, ApplyMomentum, ApplyAdam, ApplyRMSProp,
// ApplyCenteredRMSProp, ApplyAdagrad, ApplyAdagradV2 and their Resource* forms, float32. var and
// its slots (TF1 ref edges or resource handles) are made private device tensors on this GPU (a
// value still on the host, e.g. set by a CPU initializer, moves there; a value someone else holds
// is copied first, so tensors read earlier keep their values), then one fused kernel updates them
// in place. The scalar hyper-parameters stay on the device (no host inputs): the kernels read them
// there, so a step with GPU-resident scalars (Adam's beta powers) needs no device-to-host copy.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "families.hpp"
#include "graft/cuda/exec.hpp"
#include "graft/ops/training.hpp"
#include "launch_training.hpp"

namespace graft::cuda::families {

namespace {

using named = std::pair<const char*, int>;  // input name, input index

/// What an apply kernel works on: device pointers of var (0) and its slots, the gradient, and the
/// scalar hyper-parameters (one float each, in the order the op lists them), with the scalar
/// tensors held until the launch is queued.
struct apply_args {
    std::vector<float*> vars;
    const float* grad = nullptr;
    std::vector<const float*> scalars;
    std::vector<tensor> held;
    std::int64_t n = 0;
    void* stream = nullptr;
};

/// Checks the op's inputs as the CPU kernel does (ops::nn_detail::check_apply: slots and grad
/// shaped like var, hyper-parameters scalars of var's dtype; only shapes and dtypes are read), then
/// makes var and its `slots` (inputs 1..slots.size()) private float32 tensors on this kernel's GPU.
/// The scalars stay where the executor put them (this GPU) and are passed as device pointers.
/// Throws graph_error naming the node for an uninitialized variable (slots first, as the CPU) or a
/// mismatched input.
apply_args prepare(exec::kernel_context& c, const char* op, const std::vector<const char*>& slots,
                   named grad, const std::vector<named>& scalars) {
    const int num_vars = static_cast<int>(slots.size()) + 1;
    std::vector<std::shared_ptr<exec::variable>> vars;
    for (int i = 0; i < num_vars; ++i) vars.push_back(c.variable_input(i));
    for (int i = 1; i <= num_vars; ++i)
        vars[static_cast<std::size_t>(i % num_vars)]->modify([](tensor&) {});

    apply_args a;
    {
        // Validation on the current values (released before the buffers are made private).
        std::vector<tensor> values;
        for (auto& v : vars) values.push_back(v->read());
        std::vector<tensor> scalar_values;
        for (const auto& [name, i] : scalars) scalar_values.push_back(c.input(i));
        tensor g = c.input(grad.second);
        std::vector<std::pair<const char*, const tensor*>> same, sc;
        for (std::size_t k = 0; k < slots.size(); ++k) same.emplace_back(slots[k], &values[k + 1]);
        same.emplace_back(grad.first, &g);
        for (std::size_t k = 0; k < scalars.size(); ++k)
            sc.emplace_back(scalars[k].first, &scalar_values[k]);
        // check_apply takes initializer lists: check one entry at a time.
        ops::nn_detail::check_apply(op, values[0], {}, {});
        for (const auto& e : same) ops::nn_detail::check_apply(op, values[0], {e}, {});
        for (const auto& e : sc) ops::nn_detail::check_apply(op, values[0], {}, {e});
        if (values[0].type() != dtype::float32) {
            c.fail(detail::cat(op, ": the GPU kernel updates float32 variables, not ",
                               values[0].describe()));
        }
        for (const auto& t : scalar_values) {
            if (!(t.dev() == c.dev()))
                c.fail(detail::cat(op, ": a scalar input is not on this kernel's device"));
            a.scalars.push_back(static_cast<const float*>(t.raw_data()));
        }
        a.held = std::move(scalar_values);
        a.grad = static_cast<const float*>(g.raw_data());
        a.n = values[0].num_elements();
        // The gradient tensor stays alive in its input slot until this kernel returns.
    }

    auto& s = stream_of(c);
    a.stream = s.native();
    a.vars.assign(static_cast<std::size_t>(num_vars), nullptr);
    for (int i = 1; i <= num_vars; ++i) {
        const auto k = static_cast<std::size_t>(i % num_vars);
        vars[k]->modify([&](tensor& v) {
            if (!(v.dev() == c.dev()))
                v = to_device(v, s);  // a fresh buffer on this GPU
            else if (!v.buffer_unique())
                v = clone(v, s);  // copy-on-write
            a.vars[k] = static_cast<float*>(v.raw_data());
        });
    }
    return a;
}

/// The ref output of the TF1 form (the resource form has none).
void finish(exec::kernel_context& c) {
    if (!c.raw_input(0).is_resource && c.num_outputs() > 0)
        c.set_output_value(0, exec::value::ref(c.variable_input(0)));
}

}  // namespace

void register_training(exec::kernel_registry& r) {
    auto both = [&r](const std::string& op, exec::kernel_fn fn, const exec::kernel_def& def) {
        r.add(device_kind::cuda, op, fn, def);
        r.add(device_kind::cuda, "Resource" + op, fn, def);
    };
    both(
        "ApplyGradientDescent",
        [](exec::kernel_context& c) {
            auto a = prepare(c, "ApplyGradientDescent", {}, {"delta", 2}, {{"alpha", 1}});
            launch::apply_gradient_descent_f32(a.vars[0], a.grad, a.scalars[0], a.n, a.stream);
            finish(c);
        },
        float_kernel());
    both(
        "ApplyMomentum",
        [](exec::kernel_context& c) {
            auto a =
                prepare(c, "ApplyMomentum", {"accum"}, {"grad", 3}, {{"lr", 2}, {"momentum", 4}});
            launch::apply_momentum_f32(a.vars[0], a.vars[1], a.grad, a.scalars[0], a.scalars[1],
                                       c.attr_or<bool>("use_nesterov", false), a.n, a.stream);
            finish(c);
        },
        float_kernel());
    both(
        "ApplyAdam",
        [](exec::kernel_context& c) {
            auto a = prepare(c, "ApplyAdam", {"m", "v"}, {"grad", 9},
                             {{"beta1_power", 3},
                              {"beta2_power", 4},
                              {"lr", 5},
                              {"beta1", 6},
                              {"beta2", 7},
                              {"epsilon", 8}});
            const launch::adam_scalars s{a.scalars[0], a.scalars[1], a.scalars[2],
                                         a.scalars[3], a.scalars[4], a.scalars[5]};
            launch::apply_adam_f32(a.vars[0], a.vars[1], a.vars[2], a.grad, s,
                                   c.attr_or<bool>("use_nesterov", false), a.n, a.stream);
            finish(c);
        },
        float_kernel());
    both(
        "ApplyRMSProp",
        [](exec::kernel_context& c) {
            auto a = prepare(c, "ApplyRMSProp", {"ms", "mom"}, {"grad", 7},
                             {{"lr", 3}, {"rho", 4}, {"momentum", 5}, {"epsilon", 6}});
            const launch::rms_prop_scalars s{a.scalars[0], a.scalars[1], a.scalars[2],
                                             a.scalars[3]};
            launch::apply_rms_prop_f32(a.vars[0], a.vars[1], a.vars[2], a.grad, s, a.n, a.stream);
            finish(c);
        },
        float_kernel());
    both(
        "ApplyCenteredRMSProp",
        [](exec::kernel_context& c) {
            auto a = prepare(c, "ApplyCenteredRMSProp", {"mg", "ms", "mom"}, {"grad", 8},
                             {{"lr", 4}, {"rho", 5}, {"momentum", 6}, {"epsilon", 7}});
            const launch::rms_prop_scalars s{a.scalars[0], a.scalars[1], a.scalars[2],
                                             a.scalars[3]};
            launch::apply_centered_rms_prop_f32(a.vars[0], a.vars[1], a.vars[2], a.vars[3], a.grad,
                                                s, a.n, a.stream);
            finish(c);
        },
        float_kernel());
    both(
        "ApplyAdagrad",
        [](exec::kernel_context& c) {
            auto a = prepare(c, "ApplyAdagrad", {"accum"}, {"grad", 3}, {{"lr", 2}});
            launch::apply_adagrad_f32(a.vars[0], a.vars[1], a.grad, a.scalars[0],
                                      c.attr_or<bool>("update_slots", true), a.n, a.stream);
            finish(c);
        },
        float_kernel());
    both(
        "ApplyAdagradV2",
        [](exec::kernel_context& c) {
            auto a =
                prepare(c, "ApplyAdagradV2", {"accum"}, {"grad", 4}, {{"lr", 2}, {"epsilon", 3}});
            launch::apply_adagrad_v2_f32(a.vars[0], a.vars[1], a.grad, a.scalars[0], a.scalars[1],
                                         c.attr_or<bool>("update_slots", true), a.n, a.stream);
            finish(c);
        },
        float_kernel());
}

}  // namespace graft::cuda::families
