// GPU kernels of the core ops: constants (copied to the device once per session), the Identity
// family and shape-only ops (views of the device buffer: no data moves), TF1 ref and resource
// variables whose values live on the GPU, Assign*.
#include <string>
#include <vector>

#include "families.hpp"
#include "graft/cuda/exec.hpp"
#include "graft/exec/session.hpp"
#include "launch_core.hpp"

namespace graft::cuda::families {

namespace {

const std::vector<dtype>& device_types() {
    static const std::vector<dtype> t = {dtype::float32, dtype::float16, dtype::bfloat16, dtype::float64};
    return t;
}

exec::kernel_def def_for(std::string type_attr = "T", std::vector<int> host = {}) {
    exec::kernel_def d;
    d.types = device_types();
    d.type_attr = std::move(type_attr);
    d.host_inputs = std::move(host);
    return d;
}

exec::kernel_fn cpu_kernel(exec::kernel_registry& r, const char* op) {
    const exec::kernel_fn* f = r.find(op);
    if (!f) throw error(std::string("graft::cuda: the CPU kernel for ") + op + " is not registered");
    return *f;
}

/// The variable's value on this kernel's GPU: a host value (initialized or restored on the CPU)
/// moves to the device once and stays there.
tensor device_value(exec::kernel_context& c, exec::variable& v) {
    tensor t = v.read();
    if (t.dev() == c.dev()) return t;
    tensor d = to_device(t, stream_of(c));
    v.replace_if(t, d);
    return d;
}

/// TF's snapshot semantics: the variable gets memory nobody else holds.
tensor private_copy(exec::kernel_context& c, const tensor& v) {
    return v.buffer_unique() ? v : clone(v, stream_of(c));
}

}  // namespace

void register_core(exec::kernel_registry& r) {
    const auto cuda = device_kind::cuda;

    // No data moves: the output is the input (or a view of it with another shape).
    for (const char* op : {"Identity", "StopGradient", "PreventGradient", "Snapshot", "EnsureShape", "Squeeze"}) {
        r.add(cuda, op, cpu_kernel(r, op), def_for());
    }
    r.add(cuda, "IdentityN", cpu_kernel(r, "IdentityN"), exec::kernel_def{});
    r.add(cuda, "Reshape", cpu_kernel(r, "Reshape"), def_for("T", {1}));
    r.add(cuda, "ExpandDims", cpu_kernel(r, "ExpandDims"), def_for("T", {1}));
    r.add(cuda, "PlaceholderWithDefault", cpu_kernel(r, "PlaceholderWithDefault"), def_for("dtype"));
    r.add(cuda, "NoOp", cpu_kernel(r, "NoOp"), exec::kernel_def{});

    // Constants: the attr's value copied to the device on the first run of each session.
    r.add(cuda, "Const", [](exec::kernel_context& c) {
        auto& s = stream_of(c);
        const std::string key = c.name() + "\x1f" + c.dev().str();
        tensor& cached = c.state().node_state<tensor>(key, [&] { return to_device(c.attr("value").tensor().tensor(), s); });
        c.set_output(0, cached);
    }, def_for("dtype"));

    // Variables: the node only names the storage; values placed here live on this GPU.
    r.add(cuda, "VariableV2", cpu_kernel(r, "VariableV2"), def_for("dtype"));
    r.add(cuda, "Variable", cpu_kernel(r, "Variable"), def_for("dtype"));
    r.add(cuda, "VarHandleOp", cpu_kernel(r, "VarHandleOp"), def_for("dtype"));
    r.add(cuda, "ReadVariableOp", [](exec::kernel_context& c) {
        c.set_output(0, device_value(c, *c.variable_input(0)));
    }, def_for("dtype"));
    r.add(cuda, "Assign", [](exec::kernel_context& c) {
        auto& var = c.variable_input(0);
        bool validate = c.attr_or<bool>("validate_shape", true);
        var->assign(private_copy(c, c.input(1)), validate && var->declared_shape.rank_known());
        c.set_output_value(0, exec::value::ref(var));
    }, def_for());
    r.add(cuda, "AssignVariableOp", [](exec::kernel_context& c) {
        auto& var = c.variable_input(0);
        bool validate = c.attr_or<bool>("validate_shape", false);
        var->assign(private_copy(c, c.input(1)), validate);
    }, def_for("dtype"));

    auto assign_update = [](bool add, const char* name) {
        return [add, name](exec::kernel_context& c) {
            auto& var = c.variable_input(0);
            tensor upd = c.input(1);
            tensor cur = device_value(c, *var);
            if (!(cur.shape() == upd.shape())) {
                c.fail(detail::cat(name, ": update shape ", upd.shape().str(), " != variable shape ", cur.shape().str()));
            }
            if (cur.type() != dtype::float32) c.fail(detail::cat(name, " on the GPU handles float32, not ", dtype_name(cur.type())));
            auto& s = stream_of(c);
            // Copy-on-write: a tensor read from the variable earlier keeps its value.
            var->modify([&](tensor& value) {
                if (!value.buffer_unique()) value = clone(value, s);
            });
            tensor now = var->read();
            launch::accumulate_f32(static_cast<float*>(now.raw_data()), static_cast<const float*>(upd.raw_data()),
                                   now.num_elements(), add ? 1.f : -1.f, s.native());
            if (!c.raw_input(0).is_resource) c.set_output_value(0, exec::value::ref(var));
        };
    };
    r.add(cuda, "AssignAdd", assign_update(true, "AssignAdd"), def_for());
    r.add(cuda, "AssignSub", assign_update(false, "AssignSub"), def_for());
    r.add(cuda, "AssignAddVariableOp", assign_update(true, "AssignAddVariableOp"), def_for("dtype"));
    r.add(cuda, "AssignSubVariableOp", assign_update(false, "AssignSubVariableOp"), def_for("dtype"));
}

}  // namespace graft::cuda::families
