// graft/autodiff/detail/gradients_impl.hpp — gradients(): TF's _GradientsHelper over a graft::graph.
//
// 1. reached: the nodes a data path leads to from the xs; between: those of them from which a
//    data path leads to a y. 2. pending[n]: the data edges from n into between nodes. 3. Walk the
//    between nodes from the ys backwards (a node is ready when all its between consumers are
//    done): sum the gradients of each output (AddN), call the op's rule, hand each input its
//    gradient. 4. Each x's gradient is the sum of what reached it.
#pragma once

#include <deque>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "graft/autodiff/gradients.hpp"

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

namespace graft::autodiff {

inline std::vector<std::optional<endpoint>> gradients(graph& g, const std::vector<endpoint>& ys,
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
    // 1. reached (forward from the xs) and between (backward from the ys, inside reached).
    std::unordered_set<std::string_view> reached, between;
    std::vector<std::string_view> stack;
    for (auto& x : xs) stack.push_back(g.at(x.node).name);
    while (!stack.empty()) {
        auto n = stack.back();
        stack.pop_back();
        if (!reached.insert(n).second) continue;
        if (auto it = out_edges.find(n); it != out_edges.end()) {
            for (auto& [c, k] : it->second) stack.push_back(c->name);
        }
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
    // 2. pending counts.
    std::unordered_map<std::string_view, int> pending;
    for (auto n : between) {
        for (auto& e : g.at(n).inputs) {
            if (between.count(e.node)) ++pending[g.at(e.node).name];
        }
    }

    std::string scope = detail::fresh_scope(g, options.scope);
    graph_builder root(g, scope);
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

    for (std::size_t i = 0; i < ys.size(); ++i) {
        const endpoint& y = ys[i];
        if (!grad_ys.empty()) {
            grads[y].push_back(grad_ys[i]);
            continue;
        }
        if (!trainable(y)) {
            const node& n = g.at(y.node);
            throw invalid_argument_error(cat("gradients: y '", y.str(), "' is ", dtype_name(root.dtype_of(y)),
                                             ", not a floating point tensor"),
                                         location::at_node(n.name, n.op).with_tensor(y.str()),
                                         "pass grad_ys for it, or cast it to a float type first");
        }
        grads[y].push_back(root.op("OnesLike", {y}, {}, cat("grad_ys_", i)));
    }

    std::unordered_set<std::string_view> x_nodes;
    for (auto& x : xs) x_nodes.insert(g.at(x.node).name);

    // 3. walk backwards.
    std::deque<std::string_view> ready;
    std::unordered_set<std::string_view> queued;
    for (auto& y : ys) {
        std::string_view n = g.at(y.node).name;
        if (between.count(n) && pending[n] == 0 && queued.insert(n).second) ready.push_back(n);
    }
    std::size_t done = 0;
    while (!ready.empty()) {
        std::string_view name = ready.front();
        ready.pop_front();
        ++done;
        node& n = g.at(name);
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
                std::string_view src = g.at(in.node).name;
                if (--pending[src] == 0 && queued.insert(src).second) ready.push_back(src);
            }
        }
    }
    if (done < between.size()) {
        for (auto name : between) {
            if (!queued.count(name)) {
                const node& n = g.at(name);
                throw graph_error("gradients: a path from the xs to the ys goes through a cycle (a while loop)",
                                  location::at_node(n.name, n.op),
                                  "graft builds gradients of acyclic graphs only; differentiate the loop body or unroll it");
            }
        }
    }

    // 4. the xs.
    std::vector<std::optional<endpoint>> result;
    result.reserve(xs.size());
    for (auto& x : xs) {
        std::optional<endpoint> gx = aggregate(x, root);
        if (!gx && options.zeros_for_unconnected) {
            endpoint v = x;
            if (root.dtype_of(x) == dtype::resource) {
                const node& h = g.at(x.node);
                v = root.op("ReadVariableOp", {x}, {{"dtype", h.attr_at("dtype").type()}});
            }
            gx = root.op("ZerosLike", {v});
        }
        result.push_back(gx);
    }
    return result;
}

}  // namespace graft::autodiff
