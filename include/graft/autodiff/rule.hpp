// graft/autodiff/rule.hpp — what a gradient rule is: the context it reads (the forward node, the
// gradients of its outputs, a builder scoped under the gradients scope) and the registry type.
// Rule authors include this (and graft/autodiff/registry.hpp to register into the global one).
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graft/graph/build.hpp"
#include "graft/graph/graph.hpp"

namespace graft::autodiff {

/// One optional gradient per data input of the node.
using grad_list = std::vector<std::optional<endpoint>>;

/// What a rule sees: the forward node, the gradients of its outputs and a builder scoped under
/// "<gradients scope>/<node>_grad".
class grad_context {
public:
    grad_context(graph& g, const node& n, std::vector<std::optional<endpoint>> out_grads,
                 std::vector<bool> wants, graph_builder b)
        : g_(&g), n_(&n), out_grads_(std::move(out_grads)), wants_(std::move(wants)), b_(std::move(b)) {}

    [[nodiscard]] graph& g() const { return *g_; }
    /// The forward node.
    [[nodiscard]] const node& op() const { return *n_; }
    [[nodiscard]] const std::string& name() const { return n_->name; }
    /// The builder for this rule's nodes (names under "<scope>/<node>_grad/").
    [[nodiscard]] const graph_builder& b() const { return b_; }

    [[nodiscard]] int num_inputs() const { return static_cast<int>(n_->inputs.size()); }
    [[nodiscard]] int num_outputs() const { return static_cast<int>(out_grads_.size()); }
    /// Data input i of the forward node.
    [[nodiscard]] const endpoint& input(int i) const { return n_->inputs.at(static_cast<std::size_t>(i)); }
    /// Output i of the forward node.
    [[nodiscard]] endpoint output(int i = 0) const { return endpoint{n_->name, i}; }
    /// The gradient arriving at output i; nullopt when nothing downstream of it needs one.
    [[nodiscard]] const std::optional<endpoint>& grad(int i = 0) const {
        return out_grads_.at(static_cast<std::size_t>(i));
    }
    /// grad(i), or ZerosLike(output(i)) when it is nullopt.
    [[nodiscard]] endpoint grad_or_zeros(int i) const {
        if (auto& g = grad(i)) return *g;
        return b_.op("ZerosLike", {output(i)});
    }
    /// True when the gradient of input i is used (it lies on a path from an x). Rules may skip the
    /// nodes of unwanted gradients; gradients() drops them anyway.
    [[nodiscard]] bool wants(int i) const { return wants_.at(static_cast<std::size_t>(i)); }
    /// The dtype of `e` (refs as their base type).
    [[nodiscard]] graft::dtype dtype_of(const endpoint& e) const { return b_.dtype_of(e); }

    /// The node's attr `name`, else its OpDef default. Throws graph_error naming the node.
    [[nodiscard]] const attr_value& attr(std::string_view name) const {
        return n_->attr_or_default(name, g_->registry());
    }
    /// attr(name), or nullptr when neither the node nor its OpDef has it. Never throws.
    [[nodiscard]] const attr_value* find_attr(std::string_view name) const {
        if (auto* a = n_->attr(name)) return a;
        try {
            return &n_->attr_or_default(name, g_->registry());
        } catch (const graft::error&) {
            return nullptr;
        }
    }
    /// The node's attr `name` copied into a rule's attr list (so grad ops keep padding, strides, ...).
    void copy_attr(attr_list& to, std::string_view name) const {
        if (auto* a = find_attr(name)) to.emplace_back(std::string(name), *a);
    }

    /// Throws graph_error at this node with `message` and `hint`.
    [[noreturn]] void fail(const std::string& message, std::string hint = {}) const {
        throw graph_error(detail::cat("gradient of ", n_->op, ": ", message), location::at_node(n_->name, n_->op),
                          std::move(hint));
    }

private:
    graph* g_;
    const node* n_;
    std::vector<std::optional<endpoint>> out_grads_;
    std::vector<bool> wants_;
    graph_builder b_;
};

/// A gradient rule: one optional gradient per data input of c.op().
using gradient_fn = std::function<grad_list(grad_context& c)>;

/// Op type -> rule, or "not differentiable" (no gradient flows through the op).
class gradient_registry {
public:
    /// Registers (or replaces) the rule for `op`. Never throws (except bad_alloc).
    void add(std::string op, gradient_fn fn) {
        entries_[std::move(op)] = entry{std::move(fn), false};
    }
    /// Declares that no gradient flows through `op` (tf.no_gradient). Never throws (except bad_alloc).
    void add_none(std::string op) { entries_[std::move(op)] = entry{{}, true}; }
    /// The rule for `op`, or nullptr (also for ops declared not differentiable). Never throws.
    [[nodiscard]] const gradient_fn* find(std::string_view op) const {
        auto it = entries_.find(std::string(op));
        return it == entries_.end() || it->second.none ? nullptr : &it->second.fn;
    }
    /// True for ops declared with add_none(). Never throws.
    [[nodiscard]] bool not_differentiable(std::string_view op) const {
        auto it = entries_.find(std::string(op));
        return it != entries_.end() && it->second.none;
    }
    /// True when `op` has a rule or is declared not differentiable. Never throws.
    [[nodiscard]] bool known(std::string_view op) const { return entries_.count(std::string(op)) != 0; }
    /// Op types with a rule (sorted).
    [[nodiscard]] std::vector<std::string> ops_with_rules() const { return sorted(false); }
    /// Op types declared not differentiable (sorted).
    [[nodiscard]] std::vector<std::string> not_differentiable_ops() const { return sorted(true); }

    /// The process-wide registry, holding graft's built-in rules (rules/*.hpp) from first use.
    static gradient_registry& global();  // defined in graft/autodiff/registry.hpp (or src/compiled/gradient_rules.cpp)

private:
    struct entry {
        gradient_fn fn;
        bool none = false;
    };
    [[nodiscard]] std::vector<std::string> sorted(bool none) const {
        std::vector<std::string> r;
        for (auto& [k, e] : entries_) {
            if (e.none == none) r.push_back(k);
        }
        std::sort(r.begin(), r.end());
        return r;
    }
    std::unordered_map<std::string, entry> entries_;
};

/// The hint of the "no gradient rule" error.
inline std::string register_gradient_hint(std::string_view op) {
    return detail::cat("register one: graft::autodiff::register_gradient(\"", op,
                       "\", [](graft::autodiff::grad_context& c) { ... return graft::autodiff::grad_list{...}; }), "
                       "or graft::autodiff::no_gradient(\"", op, "\") when no gradient flows through it");
}

}  // namespace graft::autodiff
