// graft/exec/kernel.hpp — CPU kernels bound to op types, and what a kernel sees while it runs.
//
//   graft::exec::kernel_registry::global().add("MyRelu", [](graft::exec::kernel_context& c) {
//       c.set_output(0, my_relu(c.input(0)));
//   });
//
// The registry is open: a graph whose ops all have kernels runs; the plan lists every op type that
// lacks one, with its nodes, at once.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/exec/value.hpp"
#include "graft/graph/node.hpp"

namespace graft::exec {

class session_state;

/// Inputs, attrs and outputs of one node while it runs.
class kernel_context {
public:
    kernel_context(const node& n, const op_registry& ops, std::span<value*> inputs, std::vector<value>& outputs,
                   session_state& state)
        : node_(n), ops_(ops), inputs_(inputs), outputs_(outputs), state_(state) {}

    [[nodiscard]] const node& n() const { return node_; }
    [[nodiscard]] const std::string& name() const { return node_.name; }
    [[nodiscard]] session_state& state() const { return state_; }
    [[nodiscard]] int num_inputs() const { return static_cast<int>(inputs_.size()); }
    [[nodiscard]] int num_outputs() const { return static_cast<int>(outputs_.size()); }

    /// Input i as a tensor (a ref edge reads the variable). Throws graph_error for a resource
    /// handle or an uninitialized variable, naming this node.
    [[nodiscard]] tensor input(int i) const {
        const value& v = raw_input(i);
        if (v.is_resource) fail(detail::cat("input ", i, " is a resource handle, not a tensor"));
        if (v.is_ref) return v.var->read();
        return v.t;
    }
    /// True when input i carries a variable (ref or resource edge).
    [[nodiscard]] bool input_is_variable(int i) const { return raw_input(i).var != nullptr; }
    /// The variable behind a ref or resource input. Throws graph_error when input i is a plain tensor.
    [[nodiscard]] const std::shared_ptr<variable>& variable_input(int i) const {
        const value& v = raw_input(i);
        if (!v.var) {
            fail(detail::cat("input ", i, " must be a variable (ref or resource edge) but is a plain tensor"),
                 "feed this op from a VariableV2 or VarHandleOp node");
        }
        return v.var;
    }
    [[nodiscard]] const value& raw_input(int i) const {
        if (i < 0 || i >= num_inputs()) fail(detail::cat("input ", i, " out of range (", num_inputs(), " inputs)"));
        return *inputs_[static_cast<std::size_t>(i)];
    }
    /// Input i if the kernel may overwrite its buffer (nobody else holds it), else an invalid tensor.
    [[nodiscard]] tensor forwardable_input(int i) const {
        const value& v = raw_input(i);
        if (v.var || !v.t.valid() || static_cast<std::size_t>(i) >= forwardable_.size() ||
            !forwardable_[static_cast<std::size_t>(i)]) {
            return {};
        }
        return v.t.buffer_unique() ? v.t : tensor{};
    }

    void set_output(int i, tensor t) { out(i) = value::of(std::move(t)); }
    void set_output_value(int i, value v) { out(i) = std::move(v); }

    /// The attr `name` or its op default. Throws graph_error naming the node.
    [[nodiscard]] const attr_value& attr(std::string_view name) const { return node_.attr_or_default(name, ops_); }
    [[nodiscard]] const attr_value* find_attr(std::string_view name) const { return node_.attr(name); }
    [[nodiscard]] std::int64_t attr_int(std::string_view a) const { return attr(a).i(); }
    [[nodiscard]] float attr_float(std::string_view a) const { return attr(a).f(); }
    [[nodiscard]] bool attr_bool(std::string_view a) const { return attr(a).b(); }
    [[nodiscard]] dtype attr_type(std::string_view a) const { return attr(a).type(); }
    [[nodiscard]] const std::string& attr_string(std::string_view a) const { return attr(a).s(); }
    /// An int-list attr as int64s. Throws graph_error.
    [[nodiscard]] const std::vector<std::int64_t>& attr_ints(std::string_view a) const {
        return attr(a).list_of<std::int64_t>();
    }
    /// The attr, or `dflt` when the node lacks it and the op has no default.
    template <class T>
    [[nodiscard]] T attr_or(std::string_view a, T dflt) const;

    /// Throws graph_error naming this node and op.
    [[noreturn]] void fail(const std::string& msg, const std::string& hint = {}) const {
        throw graph_error(msg, location::at_node(node_.name, node_.op), hint);
    }

    /// Set by the executor: input i is read by no later step (its buffer may be reused).
    /// The span must outlive the kernel call (the plan owns it).
    void set_forwardable(std::span<const char> f) { forwardable_ = f; }

private:
    value& out(int i) {
        if (i < 0 || i >= num_outputs()) fail(detail::cat("output ", i, " out of range (", num_outputs(), " outputs)"));
        return outputs_[static_cast<std::size_t>(i)];
    }
    const node& node_;
    const op_registry& ops_;
    std::span<value*> inputs_;
    std::vector<value>& outputs_;
    session_state& state_;
    std::span<const char> forwardable_;
};

template <class T>
T kernel_context::attr_or(std::string_view a, T dflt) const {
    const attr_value* v = node_.attr(a);
    if (!v) {
        if (auto* d = ops_.find(node_.op)) {
            if (auto* ad = d->find_attr(a); ad && ad->default_value) v = &*ad->default_value;
        }
    }
    if (!v) return dflt;
    if constexpr (std::is_same_v<T, bool>) return v->b();
    else if constexpr (std::is_same_v<T, float>) return v->f();
    else if constexpr (std::is_same_v<T, dtype>) return v->type();
    else if constexpr (std::is_same_v<T, std::string>) return v->s();
    else return static_cast<T>(v->i());
}

using kernel_fn = std::function<void(kernel_context&)>;

/// Op type -> CPU kernel. Thread-safe; global() holds graft's kernels plus the user's.
class kernel_registry {
public:
    /// Registers (or replaces) the kernel for `op`. Never throws (except bad_alloc).
    void add(std::string op, kernel_fn fn) {
        std::unique_lock lock(mu_);
        kernels_[std::move(op)] = std::move(fn);
    }
    /// The kernel for `op`, or nullptr.
    [[nodiscard]] const kernel_fn* find(std::string_view op) const {
        std::shared_lock lock(mu_);
        auto it = kernels_.find(std::string(op));
        return it == kernels_.end() ? nullptr : &it->second;
    }
    /// All op types with a kernel, sorted.
    [[nodiscard]] std::vector<std::string> ops() const {
        std::shared_lock lock(mu_);
        std::vector<std::string> r;
        for (auto& [k, _] : kernels_) r.push_back(k);
        std::sort(r.begin(), r.end());
        return r;
    }
    /// The process-wide registry with graft's built-in kernels (registered on first use); defined
    /// in graft/exec/kernels/all.hpp, compiled into graft::tf.
    static kernel_registry& global();

private:
    mutable std::shared_mutex mu_;
    std::unordered_map<std::string, kernel_fn> kernels_;
};

/// The hint for an op without a kernel.
inline std::string register_kernel_hint() {
    return "register one: graft::exec::kernel_registry::global().add(\"OpType\", [](graft::exec::kernel_context& c) "
           "{ c.set_output(0, ...); }) — and, if graft does not know the op's outputs, "
           "graft::op_registry::global().add(\"OpType(x: T) -> (y: T); T: type\")";
}

}  // namespace graft::exec
