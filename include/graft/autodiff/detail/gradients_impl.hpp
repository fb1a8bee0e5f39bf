// graft/autodiff/detail/gradients_impl.hpp — gradients(): TF's _GradientsHelper over a graft::graph.
//
// 1. reached: the nodes a data path leads to from the xs; between: those of them from which a
//    data path leads to a y. 2. pending[n]: the data edges from n into between nodes. 3. Walk the
//    between nodes from the ys backwards (a node is ready when all its between consumers are
//    done): sum the gradients of each output (AddN), call the op's rule, hand each input its
//    gradient. 4. Each x's gradient is the sum of what reached it.
// A TF1 while loop on the path is one unit of the walk: it is ready when all its Exits on the path
// are, and tf1_loops.hpp builds its backward loop (whose body is walked by the same code, one
// frame down).
#pragma once

#include <deque>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "graft/autodiff/gradients.hpp"
#include "graft/autodiff/detail/tf1_loops.hpp"

namespace graft::autodiff::detail {

/// `base`, or base_1, base_2, ...: the first name no node has and no node is nested under.
inline std::string fresh_scope(graph& g, const std::string& base) {
    std::unordered_set<std::string> used;
    for (const node& n : g) {
        std::string_view name = n.name;
        used.emplace(name);
        for (auto p = name.find('/'); p != std::string_view::npos; p = name.find('/', p + 1)) used.emplace(name.substr(0, p));
    }
    std::string cand = base;
    for (int k = 1;; ++k) {
        if (!used.count(cand)) {
            std::string got = g.unique_name(cand);
            if (got == cand) return cand;
        }
        cand = base + "_" + std::to_string(k);
    }
}

/// The node of `e`, or invalid_argument_error naming the tensor and what it was for.
inline const node& node_of(const graph& g, const endpoint& e, const char* what) {
    const node* n = g.find(e.node);
    if (!n) {
        throw invalid_argument_error(graft::detail::cat("gradients: ", what, " '", e.str(), "' names no node of the graph"),
                                     location::at_tensor(e.str()), "pass tensors of the graph the gradients are built in");
    }
    return *n;
}

/// Number of outputs of n: its op's count, else the highest index anything reads.
inline int output_count(const graph& g, const node& n, int seen) {
    if (auto k = n.try_num_outputs(g.registry())) return std::max(*k, seen);
    return seen;
}

}  // namespace graft::autodiff::detail

namespace graft::autodiff::detail {

inline std::vector<std::optional<endpoint>> walk(graph& g, const std::vector<endpoint>& ys,
                                                 const std::vector<endpoint>& seeds, const std::vector<endpoint>& xs,
                                                 const graph_builder& root, frame_map* frames, int level,
                                                 const std::unordered_set<std::string_view>* barrier) {
    using graft::detail::cat;
    // Data edges out of each node: (consumer, input slot).
    std::unordered_map<std::string_view, std::vector<std::pair<node*, int>>> out_edges;
    std::unordered_map<std::string_view, int> max_index;
    for (node& n : g) {
        for (std::size_t k = 0; k < n.inputs.size(); ++k) {
            auto& e = n.inputs[k];
            out_edges[e.node].emplace_back(&n, static_cast<int>(k));
            int& m = max_index[e.node];
            m = std::max(m, e.index + 1);
        }
    }
    auto blocked = [&](std::string_view n) { return barrier && barrier->count(n); };
    // 1. reached (forward from the xs) and between (backward from the ys, inside reached).
    std::unordered_set<std::string_view> reached, between;
    std::vector<std::string_view> stack;
    for (auto& x : xs) stack.push_back(g.at(x.node).name);
    bool loops = level != 0;
    while (!stack.empty()) {
        auto n = stack.back();
        stack.pop_back();
        if (!reached.insert(n).second) continue;
        if (auto it = out_edges.find(n); it != out_edges.end()) {
            for (auto& [c, k] : it->second) {
                if (blocked(c->name)) continue;
                loops |= is_enter_op(c->op) || is_exit_op(c->op) || is_next_iteration_op(c->op);
                stack.push_back(c->name);
            }
        }
    }
    // The unit of the walk a node belongs to: 0 for a node of `level` itself, the child frame of
    // `level` (a loop walked as one) that holds it, -1 outside `level`.
    auto unit = [&](const node& n) { return loops && frames ? frames->child_of(frames->of(n), level) : 0; };
    if (level != 0) {
        std::erase_if(reached, [&](std::string_view n) { return unit(g.at(n)) < 0; });
    }
    for (auto& y : ys) {
        if (reached.count(y.node)) stack.push_back(g.at(y.node).name);
    }
    while (!stack.empty()) {
        auto n = stack.back();
        stack.pop_back();
        if (!between.insert(n).second) continue;
        for (auto& e : g.at(n).inputs) {
            if (reached.count(e.node)) stack.push_back(g.at(e.node).name);
        }
    }
    // 2. pending counts. Edges inside a loop are the loop's business: only its Enters wait.
    std::unordered_map<std::string_view, int> pending;
    std::unordered_map<int, int> exits_on_path, exits_ready, loop_nodes;
    auto counted = [&](const node& n) {
        int u = unit(n);
        return u == 0 || (is_enter_op(n.op) && frames->of(n) == u);
    };
    for (auto n : between) {
        const node& nn = g.at(n);
        if (int u = unit(nn); u != 0) {
            ++loop_nodes[u];
            if (is_exit_op(nn.op) && frames->of(nn) == u) ++exits_on_path[u];
        }
        if (!counted(nn)) continue;
        for (auto& e : nn.inputs) {
            if (between.count(e.node)) ++pending[g.at(e.node).name];
        }
    }

    const gradient_registry& rules = gradient_registry::global();
    auto trainable = [&](const endpoint& e) {
        const node& n = g.at(e.node);
        try {
            return is_differentiable(n.output_dtype(e.index, g.registry()));
        } catch (const graft::error&) {
            return true;  // unknown op: let its rule (or the missing-rule error) decide
        }
    };

    // Gradients arriving at each tensor, summed on first use.
    std::map<endpoint, std::vector<endpoint>> grads;
    auto aggregate = [&](const endpoint& e, const graph_builder& b) -> std::optional<endpoint> {
        auto it = grads.find(e);
        if (it == grads.end() || it->second.empty()) return std::nullopt;
        if (it->second.size() > 1) {
            endpoint sum = b.op("AddN", it->second);
            it->second.assign(1, sum);
        }
        return it->second.front();
    };
    for (std::size_t i = 0; i < ys.size(); ++i) grads[ys[i]].push_back(seeds[i]);

    std::unordered_set<std::string_view> x_nodes;
    for (auto& x : xs) {
        const node& n = g.at(x.node);
        if (int u = unit(n); u != 0) {
            throw invalid_argument_error(cat("gradients: x '", x.str(), "' is inside while loop '",
                                             frames->at(u < 0 ? 0 : u).name, "'"),
                                         location::at_node(n.name, n.op).with_tensor(x.str()),
                                         "differentiate w.r.t. tensors outside the loop (the Enter's input)");
        }
        x_nodes.insert(n.name);
    }

    // 3. walk backwards. A node of a loop becomes ready as its loop: when all its Exits on the
    // path are (the ready queue then holds the last of those Exits).
    std::deque<std::string_view> ready;
    std::unordered_set<std::string_view> queued;
    std::unordered_set<int> loops_done;
    auto make_ready = [&](const node& n) {
        int u = unit(n);
        if (u == 0) {
            if (queued.insert(n.name).second) ready.push_back(n.name);
            return;
        }
        if (!is_exit_op(n.op) || frames->of(n) != u) {
            throw graph_error(cat("gradients: a path to the ys leaves while loop '", frames->at(u).name,
                                  "' other than through its Exit nodes"),
                              location::at_node(n.name, n.op), "differentiate tensors computed after the loop");
        }
        if (queued.insert(n.name).second && ++exits_ready[u] == exits_on_path[u]) ready.push_back(n.name);
    };
    for (auto& y : ys) {
        const node& n = g.at(y.node);
        if (between.count(n.name) && pending[n.name] == 0) make_ready(n);
    }
    std::size_t done = 0;
    while (!ready.empty()) {
        std::string_view name = ready.front();
        ready.pop_front();
        node& n = g.at(name);
        if (int u = unit(n); u != 0) {
            // a whole loop: its backward loop gives the gradients of its Enters' inputs
            if (!loops_done.insert(u).second) continue;
            done += static_cast<std::size_t>(loop_nodes[u]);
            std::unordered_map<std::string, endpoint> exit_grads;
            std::vector<const node*> enters;
            for (auto b : between) {
                const node& m = g.at(b);
                if (unit(m) != u || frames->of(m) != u) continue;
                if (is_exit_op(m.op)) {
                    if (auto gx = aggregate(endpoint{m.name, 0}, root)) exit_grads.emplace(m.name, *gx);
                }
                if (is_enter_op(m.op)) enters.push_back(&m);
            }
            for (auto& eg : loop_gradient(g, root, *frames, u, exit_grads)) {
                if (reached.count(eg.target.node) && trainable(eg.target)) grads[eg.target].push_back(eg.grad);
            }
            for (const node* m : enters) {
                for (auto& in : m->inputs) {
                    if (!between.count(in.node)) continue;
                    const node& src = g.at(in.node);
                    if (--pending[src.name] == 0) make_ready(src);
                }
            }
            continue;
        }
        ++done;
        const node* np = &n;
        int k = detail::output_count(g, n, max_index.count(name) ? max_index[name] : 0);
        std::optional<graph_builder> nb;
        auto builder = [&]() -> const graph_builder& {
            if (!nb) nb.emplace(root.sub(n.name + "_grad"));
            return *nb;
        };
        std::vector<std::optional<endpoint>> out_grads(static_cast<std::size_t>(k));
        bool any = false;
        for (int i = 0; i < k; ++i) {
            endpoint e{n.name, i};
            auto it = grads.find(e);
            if (it == grads.end() || it->second.empty()) continue;
            out_grads[static_cast<std::size_t>(i)] = aggregate(e, builder());
            any = true;
        }
        // An x whose inputs come from no between node: the walk stops here (TF's stop ops).
        bool stop = false;
        if (x_nodes.count(name)) {
            stop = true;
            for (auto& e : n.inputs) {
                if (between.count(e.node)) stop = false;
            }
        }
        std::vector<std::optional<endpoint>> in_grads(n.inputs.size());
        if (any && !stop && !rules.not_differentiable(n.op)) {
            const gradient_fn* fn = rules.find(n.op);
            if (!fn) {
                throw graph_error(cat("no gradient rule for op ", n.op), location::at_node(n.name, n.op),
                                  register_gradient_hint(n.op));
            }
            std::vector<bool> wants(n.inputs.size());
            for (std::size_t i = 0; i < n.inputs.size(); ++i) {
                wants[i] = reached.count(n.inputs[i].node) && trainable(n.inputs[i]);
            }
            grad_context ctx(g, *np, out_grads, wants, builder());
            in_grads = (*fn)(ctx);
            if (in_grads.size() != n.inputs.size()) {
                throw graph_error(cat("the gradient rule of ", n.op, " returned ", in_grads.size(), " gradients for ",
                                      n.inputs.size(), " inputs"),
                                  location::at_node(n.name, n.op), "return one (optional) gradient per data input");
            }
        }
        for (std::size_t i = 0; i < n.inputs.size(); ++i) {
            const endpoint& in = n.inputs[i];
            if (in_grads[i] && reached.count(in.node) && trainable(in)) grads[in].push_back(*in_grads[i]);
            if (between.count(in.node)) {
                const node& src = g.at(in.node);
                if (--pending[src.name] == 0) make_ready(src);
            }
        }
    }
    if (done < between.size()) {
        for (auto name : between) {
            const node& n = g.at(name);
            if (!queued.count(name) && unit(n) == 0) {
                throw graph_error("gradients: a path from the xs to the ys goes through a cycle that is not a while loop",
                                  location::at_node(n.name, n.op),
                                  "graft differentiates TF1 while loops built by tf.while_loop (Enter, Merge, Switch, "
                                  "LoopCond, NextIteration, Exit) and acyclic graphs; unroll other cycles");
            }
        }
    }

    // 4. the xs.
    std::vector<std::optional<endpoint>> result;
    result.reserve(xs.size());
    for (auto& x : xs) result.push_back(aggregate(x, root));
    return result;
}

}  // namespace graft::autodiff::detail

namespace graft::autodiff {

GRAFT_INLINE std::vector<std::optional<endpoint>> gradients(graph& g, const std::vector<endpoint>& ys,
                                                      const std::vector<endpoint>& xs,
                                                      const std::vector<endpoint>& grad_ys,
                                                      const gradient_options& options) {
    using graft::detail::cat;
    if (ys.empty()) throw invalid_argument_error("gradients: no ys given", {}, "pass at least one tensor to differentiate");
    if (!grad_ys.empty() && grad_ys.size() != ys.size()) {
        throw invalid_argument_error(cat("gradients: ", grad_ys.size(), " grad_ys for ", ys.size(), " ys"), {},
                                     "pass one grad_y per y, or none for OnesLike(y)");
    }
    for (auto& y : ys) detail::node_of(g, y, "y");
    for (auto& x : xs) detail::node_of(g, x, "x");
    for (auto& gy : grad_ys) detail::node_of(g, gy, "grad_y");

    std::string scope = detail::fresh_scope(g, options.scope);
    graph_builder root(g, scope);
    std::vector<endpoint> seeds;
    for (std::size_t i = 0; i < ys.size(); ++i) {
        const endpoint& y = ys[i];
        if (!grad_ys.empty()) {
            seeds.push_back(grad_ys[i]);
            continue;
        }
        bool ok = true;
        try {
            ok = is_differentiable(g.at(y.node).output_dtype(y.index, g.registry()));
        } catch (const graft::error&) {
        }
        if (!ok) {
            const node& n = g.at(y.node);
            throw invalid_argument_error(cat("gradients: y '", y.str(), "' is ", dtype_name(root.dtype_of(y)),
                                             ", not a floating point tensor"),
                                         location::at_node(n.name, n.op).with_tensor(y.str()),
                                         "pass grad_ys for it, or cast it to a float type first");
        }
        seeds.push_back(root.op("OnesLike", {y}, {}, cat("grad_ys_", i)));
    }
    detail::frame_map frames(g);
    std::unordered_set<std::string> before;
    for (const node& n : g) before.insert(n.name);
    std::vector<std::optional<endpoint>> result = detail::walk(g, ys, seeds, xs, root, &frames, 0, nullptr);
    if (!frames.empty_graph_of_loops()) detail::enter_outer_reads(g, frames, before);
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const endpoint& x = xs[i];
        if (result[i] || !options.zeros_for_unconnected) continue;
        endpoint v = x;
        if (root.dtype_of(x) == dtype::resource) {
            const node& h = g.at(x.node);
            v = root.op("ReadVariableOp", {x}, {{"dtype", h.attr_at("dtype").type()}});
        }
        result[i] = root.op("ZerosLike", {v});
    }
    return result;
}

}  // namespace graft::autodiff
