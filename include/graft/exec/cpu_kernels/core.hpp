// graft/exec/cpu_kernels/core.hpp — kernels for constants, feeds, identities, cond (Switch/Merge) and
// variables (TF1 ref variables and resource variables).
#pragma once

#include <atomic>
#include <iostream>
#include <sstream>

#include "graft/core/tensor_util.hpp"
#include "graft/exec/kernel.hpp"
#include "graft/exec/session.hpp"
#include "graft/ops/binary.hpp"
#include "graft/ops/gather.hpp"

namespace graft::exec::kernels {

/// The variable a VariableV2/VarHandleOp node stands for, created on first use.
inline std::shared_ptr<variable> variable_of(kernel_context& c) {
    dtype t = c.attr_type("dtype");
    graft::shape s = graft::shape::unknown_rank();
    if (auto* a = c.find_attr("shape")) s = a->shape();
    return c.state().variables().get_or_create(exec::variable_key(c.n()), t, s);
}

namespace impl {
/// TF's SummarizeValue for Assert and Print: the first `n` values, space-separated, "..." after them
/// when there are more; a string tensor's strings as they are.
inline std::string summarize_values(const tensor& t, std::int64_t n) {
    std::ostringstream os;
    tensor h = exec::to_host(t);
    const std::int64_t count = h.num_elements();
    const std::int64_t shown = n < 0 ? count : std::min(n, count);
    visit_dtype(h.type(), [&](auto tag) {
        using T = decltype(tag);
        const T* p = h.data<T>();
        for (std::int64_t i = 0; i < shown; ++i) {
            if (i) os << ' ';
            if constexpr (std::is_same_v<T, std::string>) os << p[i];
            else if constexpr (std::is_same_v<T, bool>) os << (p[i] ? 1 : 0);
            else if constexpr (detail::is_complex_t<T>::value) os << '(' << p[i].real() << ',' << p[i].imag() << ')';
            else if constexpr (std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::uint8_t>) os << static_cast<int>(p[i]);
            else os << detail::to_double(p[i]);
        }
    });
    if (shown < count) os << "...";
    return os.str();
}
/// How many times a Print step has printed (first_n), kept with the plan step.
struct print_count {
    std::shared_ptr<std::atomic<std::int64_t>> n = std::make_shared<std::atomic<std::int64_t>>(0);
};
}  // namespace impl

inline void register_core(kernel_registry& r) {
    r.add("Const", [](kernel_context& c) {
        const auto& v = c.attr("value").tensor();
        c.set_output(0, v.tensor());
    });
    auto must_feed = [](kernel_context& c) {
        c.fail("you must feed a value for placeholder tensor '" + c.name() + ":0'",
               "pass it in the feeds of session::run, e.g. {{\"" + c.name() + ":0\", tensor}}");
    };
    r.add("Placeholder", must_feed);
    r.add("PlaceholderV2", must_feed);
    r.add("PlaceholderWithDefault", [](kernel_context& c) { c.set_output(0, c.input(0)); });
    for (const char* op : {"Identity", "StopGradient", "PreventGradient", "Snapshot", "EnsureShape",
                           "CheckNumerics", "DebugIdentity"}) {
        r.add(op, [](kernel_context& c) { c.set_output(0, c.input(0)); });
    }
    r.add("RefIdentity", [](kernel_context& c) { c.set_output_value(0, c.raw_input(0)); });
    r.add("IdentityN", [](kernel_context& c) {
        for (int i = 0; i < c.num_inputs(); ++i) c.set_output(i, c.input(i));
    });
    // Assert checks its condition when it runs (TF runs it on the CPU) and fails naming the node,
    // with each data tensor summarized as TF does: "assertion failed: [msg] [x =] [1 2 3...]".
    r.add("Assert", [](kernel_context& c) {
        tensor cond = c.input(0);
        if (cond.type() != dtype::bool_ || cond.num_elements() != 1) {
            c.fail("Assert's condition must be a bool scalar, given " + cond.describe());
        }
        if (exec::to_host(cond).data<bool>()[0]) return;
        const std::int64_t n = c.attr_or<std::int64_t>("summarize", 3);
        std::string msg = "assertion failed:";
        for (int i = 1; i < c.num_inputs(); ++i) msg += " [" + impl::summarize_values(c.input(i), n) + "]";
        c.fail(msg, "the graph's own check failed on these values: look at the inputs that reach this Assert");
    });
    // Print passes input 0 through and writes "message" and each data tensor summarized to stderr
    // (TF's logging), the first `first_n` runs of the plan step only when first_n >= 0.
    r.add("Print", [](kernel_context& c) {
        const std::int64_t first_n = c.attr_or<std::int64_t>("first_n", -1);
        auto count = c.memo<impl::print_count>([] { return impl::print_count{}; });
        if (first_n < 0 || count->n->fetch_add(1) < first_n) {
            const std::int64_t n = c.attr_or<std::int64_t>("summarize", 3);
            std::string line = c.attr_or<std::string>("message", "");
            for (int i = 1; i < c.num_inputs(); ++i) line += "[" + impl::summarize_values(c.input(i), n) + "]";
            std::cerr << line << std::endl;
        }
        c.set_output(0, c.input(0));
    });
    r.add("NoOp", [](kernel_context&) {});
    r.add("ControlTrigger", [](kernel_context&) {});

    // cond: Switch routes data to output 1 when pred is true, to output 0 otherwise; the other is dead.
    auto switch_fn = [](kernel_context& c) {
        tensor pred = c.input(1);
        if (pred.type() != dtype::bool_ || pred.num_elements() != 1) {
            c.fail("Switch predicate must be a bool scalar, got " + pred.describe());
        }
        bool taken = pred.data<bool>()[0];
        c.set_output_value(taken ? 1 : 0, c.raw_input(0));
        c.set_output_value(taken ? 0 : 1, value::dead_value());
    };
    r.add("Switch", switch_fn);
    r.add("RefSwitch", switch_fn);
    auto merge_fn = [](kernel_context& c) {
        for (int i = 0; i < c.num_inputs(); ++i) {
            if (!c.raw_input(i).dead) {
                c.set_output_value(0, c.raw_input(i));
                c.set_output(1, tensor::scalar_of<std::int32_t>(i));
                return;
            }
        }
        c.fail("Merge has no live input");
    };
    r.add("Merge", merge_fn);
    r.add("RefMerge", merge_fn);

    // while loops: the executor runs a frame's steps once per iteration (see session.hpp); these
    // ops only pass their input on (refs as refs).
    for (const char* op : {"Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration", "LoopCond"}) {
        r.add(op, [](kernel_context& c) { c.set_output_value(0, c.raw_input(0)); });
    }

    // TF1 ref variables.
    auto var_fn = [](kernel_context& c) { c.set_output_value(0, value::ref(variable_of(c))); };
    r.add("VariableV2", var_fn);
    r.add("Variable", var_fn);
    // A frozen graph whose variable became a Const may keep the ops that assigned it (freezing
    // prunes only what the outputs do not reach): on a plain tensor, Assign/AssignAdd/AssignSub
    // output the value the variable would have held, as the Scatter* kernels update a copy.
    r.add("Assign", [](kernel_context& c) {
        if (!c.input_is_variable(0)) {
            tensor cur = c.input(0), v = c.input(1);
            if (c.attr_or<bool>("validate_shape", true) && !(cur.shape() == v.shape())) {
                c.fail("Assign: value shape " + v.shape().str() + " != frozen variable shape " + cur.shape().str());
            }
            c.set_output(0, v);
            return;
        }
        auto& var = c.variable_input(0);
        bool validate = c.attr_or<bool>("validate_shape", true);
        tensor v = c.input(1);
        // A fresh copy: readers that hold the old value keep it (snapshot semantics).
        var->assign(v.buffer_unique() ? v : v.clone(), validate && var->declared_shape.rank_known());
        c.set_output_value(0, value::ref(var));
    });
    auto assign_update = [](bool add) {
        return [add](kernel_context& c) {
            const bool frozen = !c.input_is_variable(0);
            tensor cur = frozen ? c.input(0) : c.variable_input(0)->read();
            tensor upd = c.input(1);
            if (!(cur.shape() == upd.shape())) {
                c.fail(detail::cat(add ? "AssignAdd" : "AssignSub", ": update shape ", upd.shape().str(),
                                   " != variable shape ", cur.shape().str()));
            }
            if (frozen) {
                c.set_output(0, add ? ops::add(cur, upd) : ops::sub(cur, upd));
                return;
            }
            auto& var = c.variable_input(0);
            var->assign(add ? ops::add(cur, upd) : ops::sub(cur, upd), false);
            if (c.raw_input(0).is_resource) return;
            c.set_output_value(0, value::ref(var));
        };
    };
    r.add("AssignAdd", assign_update(true));
    r.add("AssignSub", assign_update(false));
    r.add("IsVariableInitialized", [](kernel_context& c) {
        c.set_output(0, tensor::scalar_of(c.variable_input(0)->initialized()));
    });

    // Resource variables.
    r.add("VarHandleOp", [](kernel_context& c) { c.set_output_value(0, value::resource(variable_of(c))); });
    r.add("ReadVariableOp", [](kernel_context& c) { c.set_output(0, c.variable_input(0)->read()); });
    r.add("AssignVariableOp", [](kernel_context& c) {
        auto& var = c.variable_input(0);
        tensor v = c.input(1);
        bool validate = c.attr_or<bool>("validate_shape", false);
        var->assign(v.buffer_unique() ? v : v.clone(), validate);
    });
    r.add("AssignAddVariableOp", assign_update(true));
    r.add("AssignSubVariableOp", assign_update(false));
    r.add("VarIsInitializedOp", [](kernel_context& c) {
        c.set_output(0, tensor::scalar_of(c.variable_input(0)->initialized()));
    });
    r.add("DestroyResourceOp", [](kernel_context&) {});
    // graft's variables are copy-on-write already: reads never copy, so this is a no-op.
    r.add("DisableCopyOnRead", [](kernel_context& c) { (void)c.variable_input(0); });
    // tf.gather on a resource variable (embedding lookups of TF2 / use_resource models).
    r.add("ResourceGather", [](kernel_context& c) {
        tensor params = c.variable_input(0)->read();
        c.set_output(0, ops::gather(params, c.input(1), std::int64_t{0}, c.attr_or<std::int64_t>("batch_dims", 0)));
    });
}

}  // namespace graft::exec::kernels
