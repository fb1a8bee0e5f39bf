// graft/exec/session.hpp — run a graph like tf.compat.v1.Session does.
//
//   graft::exec::session s{g};                       // g: a graft::graph (loaded or built)
//   s.run({}, {}, {"init"});                         // targets: ops run for their effect
//   // or, instead of init, variables from a checkpoint by their keys (graft/exec/model.hpp):
//   // graft::exec::restore_variables(s, graft::find_variables(mg), "model.ckpt");
//   auto out = s.run({{"x:0", x}}, {"y:0"});          // feeds, fetches -> tensors
//
// Each distinct (feeds, fetches, targets) signature is compiled once into a plan: pruned to what
// the fetches and targets need, ordered, with every intermediate released after its last reader
// (kernels may then overwrite it in place). Later runs with new feed values reuse the plan.
//
// Placement: a node runs where its `device` attr says ("/device:GPU:0", "/gpu:0", TF's
// spellings), else on options.default_device. With soft placement (the default) a node whose op
// has no kernel there, whose dtype that kernel does not handle (int32 stays on the host), or whose
// device is absent runs on the CPU; the executor copies inputs between devices and returns
// fetches on the host.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <string>
#include <utility>
#include <vector>

#include "graft/core/tensor.hpp"
#include "graft/exec/kernel.hpp"
#include "graft/exec/variable_store.hpp"
#include "graft/graph/graph.hpp"

namespace graft::exec {

struct session_options {
    /// Where nodes without a `device` attr run ("" = the CPU; "/device:GPU:0", "/gpu:0", ...).
    std::string default_device;
    /// A node that cannot run where it is placed runs on the CPU instead of failing the plan.
    bool allow_soft_placement = true;
    /// Print "node (op) -> device" for every step when a plan is made (to stderr).
    bool log_device_placement = false;
    /// Run MatMul / Conv2D -> BiasAdd (-> Relu, Relu6, Elu or LeakyRelu) chains on the CPU as one
    /// _FusedMatMul / _FusedConv2D step, as TF's grappler remapper does, where nothing else reads
    /// (or fetches) the intermediate tensors. Same results bit for bit; fewer steps and buffers.
    bool fuse_ops = true;
    /// Time every kernel call (the wall clock around it) and add it to session_state::step_stats(),
    /// per node: what TF's RunMetadata step stats tell. A GPU kernel's time is its launch, not its
    /// run, unless something synchronizes the stream. Off (the default), no clock is read.
    bool collect_step_stats = false;
};

/// One node's kernel time summed over the runs since the last clear_step_stats()
/// (session_options::collect_step_stats). A fused step (_FusedMatMul, ...) is one entry.
struct node_stats {
    std::string node;  ///< the node's name
    std::string op;    ///< its op type (the fused op for a fused step)
    device dev;        ///< where it ran
    std::int64_t calls = 0;
    std::chrono::nanoseconds total{0};
};

/// Where one node runs and why (for log_device_placement and tests).
struct placement_decision {
    device dev;                ///< where it runs
    const kernel_entry* kernel = nullptr;
    std::string note;          ///< why it is not where it asked to be ("" when it is)
};

/// Places node `n`: its `device` attr or options.default_device, if a kernel of that kind exists,
/// handles the node's dtype and the device is present (`available(kind)` devices of the kind);
/// else the CPU when soft placement is on. Throws invalid_argument_error naming the node and the
/// device (and why) when soft placement is off, or when the device spec is malformed.
template <class Available>
placement_decision place_node(const node& n, const op_registry& ops, const kernel_registry& kernels,
                              const session_options& options, Available&& available) {
    placement_decision d;
    std::optional<device> want;
    try {
        want = parse_device(n.device);
        if (!want) want = parse_device(options.default_device);
    } catch (const invalid_argument_error& e) {
        throw invalid_argument_error(e.message(), location::at_node(n.name, n.op), e.hint());
    }
    auto cpu = [&] { return kernels.find_entry(device_kind::cpu, n.op); };
    if (!want || want->is_cpu()) {
        d.kernel = cpu();
        return d;
    }
    std::string why;
    bool host_dtype = false;  // int32 and friends stay on the host even without soft placement (TF's HostMemory)
    const kernel_entry* k = kernels.find_entry(want->kind, n.op);
    if (!k) {
        why = "graft has no GPU kernel for op " + n.op;
    } else {
        auto type_attr = [&](const std::string& name) -> const attr_value* {
            const attr_value* a = n.attr(name);
            if (!a) {
                if (auto* od = ops.find(n.op)) {
                    if (auto* ad = od->find_attr(name); ad && ad->default_value) a = &*ad->default_value;
                }
            }
            return a && a->which() == attr_value::kind::type ? a : nullptr;
        };
        auto check = [&](const std::string& name, const std::vector<dtype>& types) {
            const attr_value* a = types.empty() || !why.empty() ? nullptr : type_attr(name);
            if (a && std::find(types.begin(), types.end(), base_type(a->type())) == types.end()) {
                why = "the GPU kernel for " + n.op + " does not handle " + std::string(dtype_name(a->type()));
                host_dtype = true;
            }
        };
        check(k->def.type_attr, k->def.types);
        for (const auto& [name, types] : k->def.more_types) check(name, types);
    }
    if (why.empty() && want->index >= available(want->kind)) {
        int have = available(want->kind);
        why = have == 0 ? std::string("there is no GPU (no CUDA device, or graft::cuda is not installed)")
                        : detail::cat("there are only ", have, " GPUs");
    }
    if (why.empty()) {
        d.dev = *want;
        d.kernel = k;
        return d;
    }
    if (!options.allow_soft_placement && !host_dtype) {
        throw invalid_argument_error("node cannot be placed on " + want->str() + ": " + why,
                                     location::at_node(n.name, n.op),
                                     "turn on allow_soft_placement, place the node on /device:CPU:0, or import with clear_devices");
    }
    d.kernel = cpu();
    d.note = want->str() + " -> CPU: " + why;
    return d;
}

/// State shared by all runs of a session: variables (possibly shared with other sessions).
class session_state : public transfer_fn {
public:
    explicit session_state(std::shared_ptr<variable_store> vars = std::make_shared<variable_store>())
        : vars_(std::move(vars)) {}

    /// The session's context for device `d` (one stream per device per session), made on first
    /// use. Throws error when `d` has no installed backend.
    device_context& context(const device& d) override {
        std::lock_guard lock(state_mu_);
        for (auto& [dev, ctx] : contexts_) if (dev == d) return *ctx;
        auto* b = find_backend(d.kind);
        if (!b) throw error("no backend runs " + d.str(), {}, "link graft::cuda and call graft::cuda::install()");
        contexts_.emplace_back(d, b->make_context(d.index));
        return *contexts_.back().second;
    }
    /// `t` on `to`: a host copy, a copy onto a device (ordered on this session's stream there).
    tensor move(const tensor& t, const device& to) override {
        if (!t.valid() || t.dev() == to) return t;
        if (to.is_cpu()) return to_host(t);
        return context(to).to_device(t);
    }
    /// Waits for all work this session queued on its devices.
    void synchronize() {
        std::vector<device_context*> ctxs;
        {
            std::lock_guard lock(state_mu_);
            for (auto& [_, c] : contexts_) ctxs.push_back(c.get());
        }
        for (auto* c : ctxs) c->synchronize();
    }
    [[nodiscard]] variable_store& variables() { return *vars_; }
    [[nodiscard]] const std::shared_ptr<variable_store>& variables_ptr() const { return vars_; }
    session_options options;
    /// The running graph's function library (the bodies of While / If / Case), set by session.
    const function_library* library = nullptr;

    /// Adds one kernel call of `n` on `d` that took `t` (see session_options::collect_step_stats).
    void add_step_time(const node& n, const device& d, std::chrono::nanoseconds t) {
        std::lock_guard lock(stats_mu_);
        auto& e = stats_[&n];
        if (e.calls == 0) e = node_stats{n.name, n.op, d, 0, {}};
        ++e.calls;
        e.total += t;
    }
    /// Every timed node, the longest total first.
    [[nodiscard]] std::vector<node_stats> step_stats() const {
        std::lock_guard lock(stats_mu_);
        std::vector<node_stats> r;
        r.reserve(stats_.size());
        for (const auto& [_, e] : stats_) r.push_back(e);
        std::sort(r.begin(), r.end(), [](const node_stats& a, const node_stats& b) {
            return a.total != b.total ? a.total > b.total : a.node < b.node;
        });
        return r;
    }
    void clear_step_stats() {
        std::lock_guard lock(stats_mu_);
        stats_.clear();
    }

    /// State a node's kernel keeps across runs (e.g. a random op's generator), made by `make` on
    /// first use. Never throws except what `make` throws.
    template <class T, class Make>
    T& node_state(const std::string& node_name, Make&& make) {
        std::lock_guard lock(state_mu_);
        auto& p = node_state_[node_name];
        if (!p) p = std::shared_ptr<void>(new T(make()), [](void* q) { delete static_cast<T*>(q); });
        return *static_cast<T*>(p.get());
    }

private:
    std::shared_ptr<variable_store> vars_;
    std::mutex state_mu_;
    std::unordered_map<std::string, std::shared_ptr<void>> node_state_;
    std::vector<std::pair<device, std::unique_ptr<device_context>>> contexts_;
    mutable std::mutex stats_mu_;
    std::unordered_map<const node*, node_stats> stats_;  ///< keyed by the plan's node (stable)
};

/// One compiled (feeds, fetches, targets) signature.
struct plan {
    struct step {
        const node* n = nullptr;
        const kernel_fn* kernel = nullptr;
        const kernel_def* def = nullptr;  ///< what the kernel declared (host inputs, dtypes)
        device dev;                       ///< where it runs
        device_context* ctx = nullptr;    ///< the session's context for dev (null on the CPU)
        std::vector<int> inputs;          ///< slot per data input; -1 - k: the plan's constants[k]
        std::vector<int> control;         ///< step index per control input (for deadness)
        int first_output = 0;             ///< slot of output 0
        int num_outputs = 0;
        std::vector<char> last_use;       ///< per input: this step is the slot's last reader
        std::vector<char> constant_inputs;  ///< per input: a Const (through Identity nodes), not fed
        std::vector<char> unread_outputs;   ///< per output: no step, fetch or loop reads it (empty: none such)
        bool is_merge = false;
        bool hoisted = false;             ///< a Const computed when the plan was built: never runs
        std::shared_ptr<step_memo> memo = std::make_shared<step_memo>();  ///< the kernel's (kernel_context::memo)
    };
    /// A while loop (one TF frame): steps [begin, end) run once per iteration until the LoopCond
    /// step's output is false. Nested loops are sub-ranges with their own entry.
    struct loop {
        std::string frame;
        int parent = -1;                  ///< enclosing loop, -1 at top level
        int begin = 0, end = 0;           ///< step range, contiguous
        int cond_step = -1;               ///< the LoopCond
        std::vector<int> enter_steps;     ///< non-constant Enters: dead after the first iteration
        std::vector<int> constant_enter_steps;  ///< loop invariants: computed once
        std::vector<int> next_iteration_steps;  ///< dead before the first iteration
    };
    std::vector<step> steps;
    std::deque<node> fused_nodes;         ///< the nodes of fused steps (see session_options::fuse_ops)
    std::vector<loop> loops;              ///< outer loops before the loops they contain
    std::vector<int> loop_starting_at;    ///< per step: outermost loop whose range starts there, or -1
    int num_slots = 0;
    std::vector<std::pair<int, int>> feeds;   ///< (slot, index into the feed list)
    std::vector<const node*> fed_placeholders;  ///< per feed: the (Placeholder / PlaceholderWithDefault) node fed, or null
    std::vector<int> fetches;                 ///< slot per fetch
    std::vector<std::string> fetch_names;
    std::vector<char> pinned;                 ///< slots never released (fed or fetched)
    /// The values of hoisted steps (Consts every reader of which runs on the CPU), made once when
    /// the plan is built; readers' inputs point at them instead of a slot, so a run neither runs
    /// those kernels nor copies their tensors. Kernels only read them (input() moves nothing on the
    /// CPU, and they are never forwardable).
    mutable std::vector<value> constants;

    /// What one run of the plan works in (the slots, deadness, a step's inputs and outputs), kept
    /// between runs so a run allocates none of it: session::run takes one from the free list (or
    /// makes one, when runs of the plan overlap) and gives it back with every slot released.
    struct run_scratch {
        std::vector<value> slots;
        std::vector<char> dead;
        std::vector<value*> in_ptrs;
        std::vector<value> outs;
        std::vector<int> enter_of;  ///< per step: 1 + the loop whose Enter it is (made on first use)
    };
    mutable std::mutex scratch_mu;
    mutable std::vector<std::unique_ptr<run_scratch>> scratch_free;
};

class session {
public:
    /// A session over a copy of `g` with fresh variables. Throws graph_error if `g` is invalid.
    explicit session(graph g, std::shared_ptr<variable_store> vars = std::make_shared<variable_store>())
        : graph_(std::make_shared<graph>(std::move(g))), state_(std::move(vars)) {
        state_.library = &graph_->library;
    }
    /// A session with options (default device, soft placement).
    session(graph g, session_options options, std::shared_ptr<variable_store> vars = std::make_shared<variable_store>())
        : session(std::move(g), std::move(vars)) {
        state_.options = std::move(options);
    }

    using feed_list = std::vector<std::pair<std::string, tensor>>;

    /// Runs the graph: feeds ("x:0" or "x" -> tensor), fetches (tensor names), targets (node names).
    /// Returns one tensor per fetch. Throws graph_error / not_found_error / unimplemented_error naming
    /// the node, or what a kernel throws.
    std::vector<tensor> run(const feed_list& feeds, const std::vector<std::string>& fetches,
                            const std::vector<std::string>& targets = {});

    /// Compiles (and caches) the plan for this signature without running it. Throws like run().
    const plan& prepare(const std::vector<std::string>& feed_names, const std::vector<std::string>& fetches,
                        const std::vector<std::string>& targets);

    [[nodiscard]] const graph& g() const { return *graph_; }
    [[nodiscard]] variable_store& variables() { return state_.variables(); }
    [[nodiscard]] session_state& state() { return state_; }

    /// Reads variable `key` (store key: the variable node's name / shared_name) as a host tensor.
    [[nodiscard]] tensor variable_value(const std::string& key) { return to_host(variables().at(key)->read()); }

private:
    /// The plan for `feeds`' names, `fetches` and `targets` (prepare's, under its key).
    const plan& plan_for(const feed_list& feeds, const std::vector<std::string>& fetches,
                         const std::vector<std::string>& targets);

    std::shared_ptr<graph> graph_;
    session_state state_;
    std::mutex plans_mu_;
    std::map<std::string, std::unique_ptr<plan>> plans_;
    /// The signature run last and its plan: a run with the same one (the usual loop) finds its plan
    /// by comparing names, without building prepare's key. Plans are never dropped, so p stays valid.
    struct signature {
        std::vector<std::string> feeds, fetches, targets;
        const plan* p = nullptr;
    };
    signature last_;
};

}  // namespace graft::exec

// The planner and run() are a compiled part (core/config.hpp): src/compiled/session.cpp with graft::compiled.
#if !defined(GRAFT_SEPARATE_COMPILATION) || defined(GRAFT_COMPILING_SESSION)
#include "graft/exec/detail/session_impl.hpp"
#endif

#if defined(GRAFT_WITH_CUDA)
// A program linked with graft::cuda gets GPU placement without a call: the backend and the GPU
// kernels are registered before main (graft::cuda::install() is idempotent; no CUDA call is made
// until a session places a node on a GPU).
#include "graft/device/cuda_runtime.hpp"
namespace graft::exec::device_detail {
inline const bool cuda_installed = (graft::cuda::install(), true);
}  // namespace graft::exec::device_detail
#endif
