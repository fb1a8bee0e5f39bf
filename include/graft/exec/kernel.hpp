// graft/exec/kernel.hpp — kernels bound to op types per device kind, and what a kernel sees while
// it runs.
//
//   graft::exec::kernel_registry::global().add("MyRelu", [](graft::exec::kernel_context& c) {
//       c.set_output(0, my_relu(c.input(0)));
//   });
//
// The registry is open: a graph whose ops all have kernels runs; the plan lists every op type that
// lacks one, with its nodes, at once. GPU kernels (graft::cuda) register under device_kind::cuda
// with a kernel_def: which inputs they read on the host (int32 shapes and axes, as in TF) and
// which dtypes they handle; the executor copies every other input onto the kernel's device.
#pragma once

#include <algorithm>
#include <forward_list>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <typeinfo>
#include <unordered_map>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/exec/device.hpp"
#include "graft/exec/value.hpp"
#include "graft/graph/node.hpp"

namespace graft::exec {

class session_state;

/// A plan step's memo: one value its kernel derives from the node (parsed attributes) and its
/// constant inputs, made on the step's first run and kept with the plan (kernel_context::memo).
struct step_memo {
    std::mutex mu;
    std::shared_ptr<const void> value;
    const std::type_info* type = nullptr;
};

/// What a kernel declares besides its function (all defaults suit a CPU kernel).
struct kernel_def {
    /// Inputs the kernel reads on the host whatever its device (shapes, axes, sizes: TF's
    /// HostMemory inputs). The executor copies every other input onto the kernel's device.
    std::vector<int> host_inputs;
    /// Dtypes of attr `type_attr` this kernel handles; empty: any. Placement sends a node with
    /// another dtype to the CPU (soft placement) — int32 tensors stay on the host as in TF.
    std::vector<dtype> types;
    std::string type_attr = "T";
    /// Further type attrs the kernel restricts (Cast's DstT): attr name -> dtypes handled.
    std::vector<std::pair<std::string, std::vector<dtype>>> more_types;
    /// False for kernels that read only their inputs' dtypes and shapes (Shape, Size, Rank): the
    /// executor then hands inputs over where they are, without a copy.
    bool reads_input_data = true;

    [[nodiscard]] bool reads_on_host(int i) const {
        return std::find(host_inputs.begin(), host_inputs.end(), i) != host_inputs.end();
    }
    [[nodiscard]] bool handles(dtype t) const {
        return types.empty() || std::find(types.begin(), types.end(), base_type(t)) != types.end();
    }
};

/// Moves tensors between the host and devices for a running step (the session provides it).
class transfer_fn {
public:
    virtual ~transfer_fn() = default;
    /// `t` on device `to` (a copy unless it is there already). Throws error on device failure.
    virtual tensor move(const tensor& t, const device& to) = 0;
    /// The session's context for `d` (made on first use). Throws when `d` has no backend.
    virtual device_context& context(const device& d) = 0;
};

/// Inputs, attrs and outputs of one node while it runs.
class kernel_context {
public:
    kernel_context(const node& n, const op_registry& ops, std::span<value*> inputs, std::vector<value>& outputs,
                   session_state& state)
        : node_(n), ops_(ops), inputs_(inputs), outputs_(outputs), state_(state) {}

    /// Set by the executor for a step placed on a device: where the kernel runs, what it declared,
    /// and how to move inputs. Without it (CPU) inputs are handed over as they are, except that
    /// device tensors are copied to the host.
    /// `ctx` (optional) is transfer->context(d), resolved by the caller once for many calls.
    void set_placement(const device& d, const kernel_def* def, transfer_fn* transfer, device_context* ctx = nullptr) {
        dev_ = d;
        def_ = def;
        transfer_ = transfer;
        ctx_ = ctx;
    }
    /// The device this kernel runs on.
    [[nodiscard]] const device& dev() const { return dev_; }
    /// The session's context for this kernel's device (its stream). Throws on the CPU.
    [[nodiscard]] device_context& device_ctx() const {
        if (dev_.is_cpu() || !transfer_) fail("this kernel runs on the CPU and has no device context");
        if (!ctx_) ctx_ = &transfer_->context(dev_);
        return *ctx_;
    }

    [[nodiscard]] const node& n() const { return node_; }
    [[nodiscard]] const std::string& name() const { return node_.name; }
    [[nodiscard]] session_state& state() const { return state_; }
    [[nodiscard]] int num_inputs() const { return static_cast<int>(inputs_.size()); }
    [[nodiscard]] int num_outputs() const { return static_cast<int>(outputs_.size()); }

    /// Input i as a tensor (a ref edge reads the variable). Throws graph_error for a resource
    /// handle or an uninitialized variable, naming this node.
    /// On a device, the input is there (copied once per run and kept in the slot for later
    /// readers) unless the kernel reads it on the host.
    /// The reference stays valid until the kernel returns (it is the run's slot, or for a variable
    /// the value read, held by this context): no tensor copy per input, which was a shape
    /// allocation and two reference-count updates for every input of every node.
    [[nodiscard]] const tensor& input(int i) const {
        const value& v = raw_input(i);
        if (v.is_resource) fail(detail::cat("input ", i, " is a resource handle, not a tensor"));
        const device want = (dev_.is_cpu() || (def_ && def_->reads_on_host(i))) ? device{} : dev_;
        const bool as_is = def_ && !def_->reads_input_data;  // shape-only kernels: wherever it is
        const auto moved_to_want = [&](const tensor& t) {
            return want.is_cpu() && !transfer_ ? to_host(t) : transfer_->move(t, want);
        };
        if (!v.is_ref) {
            if (as_is || v.t.dev() == want) return v.t;
            tensor moved = moved_to_want(v.t);
            // Kept in the slot for later readers, unless another input of this kernel is the same
            // slot (a reference input() gave out for it must keep its device).
            if (std::count(inputs_.begin(), inputs_.end(), inputs_[static_cast<std::size_t>(i)]) > 1)
                return held_.emplace_front(std::move(moved));
            inputs_[static_cast<std::size_t>(i)]->t = std::move(moved);
            return inputs_[static_cast<std::size_t>(i)]->t;
        }
        tensor t = v.var->read();
        if (as_is || t.dev() == want) return held_.emplace_front(std::move(t));
        tensor moved = moved_to_want(t);
        if (!want.is_cpu()) v.var->replace_if(t, moved);  // a variable read on a device moves there
        return held_.emplace_front(std::move(moved));
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
    /// Input i's slot if the kernel may overwrite its buffer (no later step reads it, nobody else
    /// holds it, and it lives on this kernel's device), else null. The slot itself, as input(i)
    /// returns it for a tensor already on this device: a kernel passes it as the `out` of an op that
    /// may run in place, without a tensor copy (a shape's heap block per elementwise node and run).
    /// Ask before holding a tensor copy of the input: the buffer is unique only then.
    [[nodiscard]] const tensor* forwardable_slot(int i) const {
        const value& v = raw_input(i);
        if (v.var || !v.t.valid() || v.t.dev() != dev_ || static_cast<std::size_t>(i) >= forwardable_.size() ||
            !forwardable_[static_cast<std::size_t>(i)]) {
            return nullptr;
        }
        // Wrapped memory (an mmap'd checkpoint shard, a user's array) is never written.
        return v.t.buffer_unique() && v.t.buf()->owns_memory() ? &v.t : nullptr;
    }
    /// forwardable_slot(i) as a tensor copy (invalid where it is null). Call it before input(i) is
    /// held in a tensor of the kernel's own: that copy makes the buffer shared.
    [[nodiscard]] tensor forwardable_input(int i) const {
        const tensor* t = forwardable_slot(i);
        return t ? *t : tensor{};
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
    /// Set by the executor: input i is a graph constant (a Const, directly or through Identity
    /// nodes, and not fed), so it holds the same value on every run of the plan.
    void set_constant_inputs(std::span<const char> c) { constant_ = c; }
    /// True when input i holds the same value on every run of this plan step (see set_constant_inputs).
    [[nodiscard]] bool input_is_constant(int i) const {
        return i >= 0 && static_cast<std::size_t>(i) < constant_.size() && constant_[static_cast<std::size_t>(i)];
    }
    /// Set by the executor: per output, whether nothing in this run reads it (no later step, no
    /// fetch). The span must outlive the kernel call (the plan owns it).
    void set_unread_outputs(std::span<const char> u) { unread_ = u; }
    /// False when nothing in this run reads output i: a kernel may then skip computing it and leave
    /// it unset (BlockLSTM's gate outputs in an inference graph). True wherever the executor does not
    /// say (functions, other executors).
    [[nodiscard]] bool output_read(int i) const {
        return i < 0 || static_cast<std::size_t>(i) >= unread_.size() || !unread_[static_cast<std::size_t>(i)];
    }
    /// Where memo() keeps its value: the plan step's (the executor sets it; without one, memo()
    /// makes the value on every call).
    void set_memo(step_memo* m) { memo_ = m; }

    /// make() (a T computed from the node alone — parsed attributes — or from inputs that
    /// input_is_constant, never from other input values) once per plan step, shared by later runs
    /// of the plan. If make() throws, nothing is kept. One T per kernel: a second type at the same
    /// step is an error.
    template <class T, class Make>
    [[nodiscard]] std::shared_ptr<const T> memo(Make&& make) const {
        if (!memo_) return std::make_shared<const T>(make());
        std::lock_guard lock(memo_->mu);
        if (!memo_->value) {
            memo_->value = std::make_shared<const T>(make());
            memo_->type = &typeid(T);
        } else if (*memo_->type != typeid(T)) {
            fail("the kernel's memo was made as another type");
        }
        return std::static_pointer_cast<const T>(memo_->value);
    }

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
    std::span<const char> constant_;
    std::span<const char> unread_;
    device dev_{};
    const kernel_def* def_ = nullptr;
    transfer_fn* transfer_ = nullptr;
    mutable device_context* ctx_ = nullptr;  // transfer_->context(dev_), cached
    step_memo* memo_ = nullptr;
    mutable std::forward_list<tensor> held_;  // what input() read (variables) or moved and kept out of a slot
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

/// One registered kernel: the function and what it declared.
struct kernel_entry {
    kernel_fn fn;
    kernel_def def;
};

/// (device kind, op type) -> kernel. Thread-safe; global() holds graft's kernels plus the user's.
/// Entries are never removed, so pointers from find() stay valid (a replaced kernel keeps its slot).
class kernel_registry {
public:
    /// Registers (or replaces) the CPU kernel for `op`. Never throws (except bad_alloc).
    void add(std::string op, kernel_fn fn, kernel_def def = {}) { add(device_kind::cpu, std::move(op), std::move(fn), std::move(def)); }
    /// Registers (or replaces) the kernel for `op` on devices of kind `k`.
    void add(device_kind k, std::string op, kernel_fn fn, kernel_def def = {}) {
        std::unique_lock lock(mu_);
        auto& slot = table(k)[std::move(op)];
        if (!slot) slot = std::make_unique<kernel_entry>();
        slot->fn = std::move(fn);
        slot->def = std::move(def);
    }
    /// The CPU kernel for `op`, or nullptr.
    [[nodiscard]] const kernel_fn* find(std::string_view op) const {
        auto* e = find_entry(device_kind::cpu, op);
        return e ? &e->fn : nullptr;
    }
    /// The kernel for `op` on kind `k`, or nullptr.
    [[nodiscard]] const kernel_entry* find_entry(device_kind k, std::string_view op) const {
        std::shared_lock lock(mu_);
        const auto& t = table(k);
        auto it = t.find(std::string(op));
        return it == t.end() ? nullptr : it->second.get();
    }
    /// All op types with a CPU kernel (or a kernel on `k`), sorted.
    [[nodiscard]] std::vector<std::string> ops(device_kind k = device_kind::cpu) const {
        std::shared_lock lock(mu_);
        std::vector<std::string> r;
        for (auto& [name, _] : table(k)) r.push_back(name);
        std::sort(r.begin(), r.end());
        return r;
    }
    /// The process-wide registry with graft's built-in kernels (registered on first use); defined
    /// in graft/exec/cpu_kernels/all.hpp, compiled into graft::compiled.
    static kernel_registry& global();

private:
    using table_t = std::unordered_map<std::string, std::unique_ptr<kernel_entry>>;
    table_t& table(device_kind k) { return k == device_kind::cpu ? cpu_ : cuda_; }
    const table_t& table(device_kind k) const { return k == device_kind::cpu ? cpu_ : cuda_; }
    mutable std::shared_mutex mu_;
    table_t cpu_, cuda_;
};

/// The hint for an op without a kernel.
inline std::string register_kernel_hint() {
    return "register one: graft::exec::kernel_registry::global().add(\"OpType\", [](graft::exec::kernel_context& c) "
           "{ c.set_output(0, ...); }) — and, if graft does not know the op's outputs, "
           "graft::op_registry::global().add(\"OpType(x: T) -> (y: T); T: type\")";
}

}  // namespace graft::exec
