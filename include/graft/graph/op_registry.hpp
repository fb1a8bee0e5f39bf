// graft/graph/op_registry.hpp — op type -> op_def, and from a node's attrs: how many outputs it has
// and their dtypes.
//
//   auto& r = graft::op_registry::global();                  // graft's own table (op_table.hpp)
//   r.add("MyRelu(x: T) -> (y: T); T: type = float");        // users register their own ops
//   graft::attr_map a; a.set("num_split", std::int64_t{3}); a.set("T", graft::dtype::float32);
//   r.num_outputs("Split", a) == 3;
//
// Registries chain: a graph's own registry holds the ops its MetaGraph lists (stripped_op_list)
// where they differ from the global table (see same_signature) and its library functions, and
// falls back to the global one for everything else.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graft/graph/op_def.hpp"

namespace graft {

namespace detail {
struct string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
const std::vector<std::string>& builtin_op_specs();  // op_table.hpp

/// The hint every "unknown op" error carries.
inline std::string register_op_hint(std::string_view op) {
    return detail::cat("register its outputs before loading: graft::op_registry::global().add(\"", op,
                       "(x: T) -> (y: T); T: type\") (see graft/graph/op_def.hpp for the spec syntax)");
}
}  // namespace detail

/// The attr an op_def needs for an output count or dtype: the node's value or the op's default.
/// Throws graph_error naming the node when neither exists.
inline const attr_value& resolve_attr(const op_def& d, const attr_map& attrs, std::string_view attr,
                                      std::string_view node_name) {
    if (auto* v = attrs.find(attr)) return *v;
    if (auto* ad = d.find_attr(attr); ad && ad->default_value) return *ad->default_value;
    throw graph_error(detail::cat("attr '", attr, "' is missing and op ", d.name, " gives it no default"),
                      location::at_node(std::string(node_name), d.name),
                      "set the attr on the node (TF strips only attrs that have defaults)");
}

/// Number of tensors `arg` stands for (1, or the value of its number_attr, or the length of its
/// type_list_attr). Throws graph_error naming the node when the attr is missing or has a wrong kind.
inline int arg_size(const op_def& d, const arg_def& arg, const attr_map& attrs, std::string_view node_name) {
    try {
        if (!arg.number_attr.empty()) {
            auto n = resolve_attr(d, attrs, arg.number_attr, node_name).i();
            if (n < 0) throw graph_error(detail::cat("attr '", arg.number_attr, "' is negative (", n, ")"));
            return static_cast<int>(n);
        }
        if (!arg.type_list_attr.empty()) {
            return static_cast<int>(resolve_attr(d, attrs, arg.type_list_attr, node_name).list_size());
        }
    } catch (const graph_error& e) {
        if (!e.where().node.empty()) throw;
        throw graph_error(detail::cat("argument '", arg.name, "' of op ", d.name, ": ", e.message()),
                          location::at_node(std::string(node_name), d.name));
    }
    return 1;
}

/// The dtypes of the tensors `arg` stands for, refs as dtype + 100. Throws graph_error like arg_size.
inline void append_arg_dtypes(const op_def& d, const arg_def& arg, const attr_map& attrs,
                              std::string_view node_name, std::vector<graft::dtype>& out) {
    try {
        if (!arg.type_list_attr.empty()) {
            const auto& v = resolve_attr(d, attrs, arg.type_list_attr, node_name);
            for (auto t : v.list_of<graft::dtype>()) {
                out.push_back(arg.is_ref ? make_ref(t) : t);
            }
            return;
        }
        graft::dtype t = arg.type;
        if (!arg.type_attr.empty()) t = resolve_attr(d, attrs, arg.type_attr, node_name).type();
        if (arg.is_ref) t = make_ref(t);
        int n = arg_size(d, arg, attrs, node_name);
        out.insert(out.end(), static_cast<std::size_t>(n), t);
    } catch (const graph_error& e) {
        if (!e.where().node.empty()) throw;
        throw graph_error(detail::cat("argument '", arg.name, "' of op ", d.name, ": ", e.message()),
                          location::at_node(std::string(node_name), d.name));
    }
}

class op_registry {
public:
    /// An empty registry that looks up what it lacks in `fallback` (which must outlive it).
    explicit op_registry(const op_registry* fallback = nullptr) : fallback_(fallback) {}
    op_registry(const op_registry& o) : ops_(o.snapshot()), fallback_(o.fallback_) {}
    op_registry& operator=(const op_registry& o) {
        if (this != &o) {
            auto s = o.snapshot();
            std::unique_lock lk(mu_);
            ops_ = std::move(s);
            fallback_ = o.fallback_;
        }
        return *this;
    }

    /// graft's own op table (op_table.hpp) plus whatever users added. Never throws after first use.
    static op_registry& global() {
        static op_registry* g = [] {
            auto* r = new op_registry();
            for (const auto& spec : detail::builtin_op_specs()) r->add(std::string_view(spec));
            return r;
        }();
        return *g;
    }

    /// Adds or replaces an op. Never throws (except bad_alloc).
    void add(op_def d) {
        auto name = d.name;
        auto p = std::make_shared<const op_def>(std::move(d));
        std::unique_lock lk(mu_);
        ops_[std::move(name)] = std::move(p);
    }
    /// Adds or replaces an op, sharing `d` (not copied). Never throws (except bad_alloc).
    void add(std::shared_ptr<const op_def> d) {
        auto name = d->name;
        std::unique_lock lk(mu_);
        ops_[std::move(name)] = std::move(d);
    }
    /// Adds or replaces an op from a one-line spec. Throws invalid_argument_error on a bad spec.
    void add(std::string_view spec) { add(op_def::parse(spec)); }
    /// Removes an op from this registry (not from its fallback). Never throws.
    void remove(std::string_view op) {
        std::unique_lock lk(mu_);
        if (auto it = ops_.find(op); it != ops_.end()) ops_.erase(it);
    }
    void set_fallback(const op_registry* f) { fallback_ = f; }
    [[nodiscard]] const op_registry* fallback() const { return fallback_; }

    /// The definition of `op` here or in the fallback chain, or nullptr. The pointer stays valid
    /// until the op is replaced or removed. Never throws.
    [[nodiscard]] const op_def* find(std::string_view op) const {
        {
            std::shared_lock lk(mu_);
            if (auto it = ops_.find(op); it != ops_.end()) return it->second.get();
        }
        return fallback_ ? fallback_->find(op) : nullptr;
    }
    [[nodiscard]] bool contains(std::string_view op) const { return find(op) != nullptr; }
    /// True when this registry itself (not its fallback) defines `op`.
    [[nodiscard]] bool defines(std::string_view op) const {
        std::shared_lock lk(mu_);
        return ops_.find(op) != ops_.end();
    }
    /// The definition of `op`. Throws graph_error naming the node and how to register the op.
    [[nodiscard]] const op_def& at(std::string_view op, std::string_view node_name = {}) const {
        if (auto* d = find(op)) return *d;
        throw graph_error(detail::cat("op type '", op, "' is not registered with graft"),
                          location::at_node(std::string(node_name), std::string(op)),
                          detail::register_op_hint(op));
    }
    /// Names defined in this registry (not the fallback), unsorted. Never throws.
    [[nodiscard]] std::vector<std::string> names() const {
        std::shared_lock lk(mu_);
        std::vector<std::string> r;
        r.reserve(ops_.size());
        for (auto& [k, v] : ops_) r.push_back(k);
        return r;
    }
    [[nodiscard]] std::size_t size() const {
        std::shared_lock lk(mu_);
        return ops_.size();
    }

    /// Output count of a node of `op` with `attrs`; nullopt when the op is unknown or an attr the
    /// count needs is missing. Never throws (except bad_alloc).
    [[nodiscard]] std::optional<int> try_num_outputs(std::string_view op, const attr_map& attrs) const {
        auto* d = find(op);
        if (!d) return std::nullopt;
        try {
            int n = 0;
            for (auto& a : d->outputs) n += arg_size(*d, a, attrs, {});
            return n;
        } catch (const graph_error&) {
            return std::nullopt;
        }
    }
    /// Output count. Throws graph_error naming the op, the node and how to register the op.
    [[nodiscard]] int num_outputs(std::string_view op, const attr_map& attrs, std::string_view node_name = {}) const {
        const auto& d = at(op, node_name);
        int n = 0;
        for (auto& a : d.outputs) n += arg_size(d, a, attrs, node_name);
        return n;
    }
    /// Output dtypes (refs as dtype + 100). Throws graph_error like num_outputs.
    [[nodiscard]] std::vector<graft::dtype> output_dtypes(std::string_view op, const attr_map& attrs,
                                                          std::string_view node_name = {}) const {
        const auto& d = at(op, node_name);
        std::vector<graft::dtype> r;
        for (auto& a : d.outputs) append_arg_dtypes(d, a, attrs, node_name, r);
        return r;
    }
    /// Dtypes the op expects on its (flattened) data inputs. Throws graph_error like num_outputs.
    [[nodiscard]] std::vector<graft::dtype> input_dtypes(std::string_view op, const attr_map& attrs,
                                                         std::string_view node_name = {}) const {
        const auto& d = at(op, node_name);
        std::vector<graft::dtype> r;
        for (auto& a : d.inputs) append_arg_dtypes(d, a, attrs, node_name, r);
        return r;
    }
    /// Flat index range [first, second) of output argument `arg`. Throws graph_error when the op
    /// is unknown or has no such output argument.
    [[nodiscard]] std::pair<int, int> output_range(std::string_view op, const attr_map& attrs, std::string_view arg,
                                                   std::string_view node_name = {}) const {
        const auto& d = at(op, node_name);
        int start = 0;
        for (auto& a : d.outputs) {
            int n = arg_size(d, a, attrs, node_name);
            if (a.name == arg) return {start, start + n};
            start += n;
        }
        std::string have;
        for (auto& a : d.outputs) have += (have.empty() ? "" : ", ") + a.name;
        throw graph_error(detail::cat("op ", op, " has no output argument '", arg, "'"),
                          location::at_node(std::string(node_name), std::string(op)),
                          have.empty() ? "it has no outputs" : "its outputs are: " + have);
    }

private:
    using map_t = std::unordered_map<std::string, std::shared_ptr<const op_def>, detail::string_hash,
                                     std::equal_to<>>;
    map_t snapshot() const {
        std::shared_lock lk(mu_);
        return ops_;
    }
    mutable std::shared_mutex mu_;
    map_t ops_;
    const op_registry* fallback_ = nullptr;
};

/// graft's traits of `op` (the flags on its line of the op table; op_def.hpp), or none for an op
/// the table lacks. Read from the global table: a graph's own OpDefs carry no traits.
/// Never throws (except bad_alloc on first use).
inline op_traits traits_of(std::string_view op) {
    auto* d = op_registry::global().find(op);
    return d ? d->traits : op_traits{};
}

}  // namespace graft

// The op table is a compiled part (core/config.hpp): with graft::compiled, src/compiled/op_table.cpp compiles it
// once, so a new spec line recompiles one file; a program without graft::compiled gets it inline here.
#if !defined(GRAFT_SEPARATE_COMPILATION) || defined(GRAFT_COMPILING_OP_TABLE)
#include "graft/graph/op_table.hpp"
#endif
