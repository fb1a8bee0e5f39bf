// graft/exec/session.hpp — run a graph like tf.compat.v1.Session does.
//
//   graft::exec::session s{g};                       // g: a graft::graph (loaded or built)
//   s.run({}, {}, {"init"});                         // targets: ops run for their effect
//   s.restore("model.ckpt");                         // variables by their checkpoint keys
//   auto out = s.run({{"x:0", x}}, {"y:0"});          // feeds, fetches -> tensors
//
// Each distinct (feeds, fetches, targets) signature is compiled once into a plan: pruned to what
// the fetches and targets need, ordered, with every intermediate released after its last reader
// (kernels may then overwrite it in place). Later runs with new feed values reuse the plan.
#pragma once

#include <map>
#include <memory>
#include <mutex>
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
    /// Run nodes whose op has no kernel? Never: the plan fails listing them. (Reserved.)
    bool verify_crc_on_restore = true;
};

/// State shared by all runs of a session: variables (possibly shared with other sessions).
class session_state {
public:
    explicit session_state(std::shared_ptr<variable_store> vars = std::make_shared<variable_store>())
        : vars_(std::move(vars)) {}
    [[nodiscard]] variable_store& variables() { return *vars_; }
    [[nodiscard]] const std::shared_ptr<variable_store>& variables_ptr() const { return vars_; }
    session_options options;

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
};

/// One compiled (feeds, fetches, targets) signature.
struct plan {
    struct step {
        const node* n = nullptr;
        const kernel_fn* kernel = nullptr;
        std::vector<int> inputs;          ///< slot per data input
        std::vector<int> control;         ///< step index per control input (for deadness)
        int first_output = 0;             ///< slot of output 0
        int num_outputs = 0;
        std::vector<char> last_use;       ///< per input: this step is the slot's last reader
        bool is_merge = false;
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
    std::vector<loop> loops;              ///< outer loops before the loops they contain
    std::vector<int> loop_starting_at;    ///< per step: outermost loop whose range starts there, or -1
    int num_slots = 0;
    std::vector<std::pair<int, int>> feeds;   ///< (slot, index into the feed list)
    std::vector<int> fetches;                 ///< slot per fetch
    std::vector<std::string> fetch_names;
    std::vector<char> pinned;                 ///< slots never released (fed or fetched)
};

class session {
public:
    /// A session over a copy of `g` with fresh variables. Throws graph_error if `g` is invalid.
    explicit session(graph g, std::shared_ptr<variable_store> vars = std::make_shared<variable_store>())
        : graph_(std::make_shared<graph>(std::move(g))), state_(std::move(vars)) {}

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

    /// Reads variable `key` (store key: the variable node's name / shared_name). Throws.
    [[nodiscard]] tensor variable_value(const std::string& key) { return variables().at(key)->read(); }

private:
    std::shared_ptr<graph> graph_;
    session_state state_;
    std::mutex plans_mu_;
    std::map<std::string, std::unique_ptr<plan>> plans_;
};

}  // namespace graft::exec

#include "graft/exec/detail/session_impl.hpp"
