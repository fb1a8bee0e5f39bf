// graft/graph/graph.hpp — a TensorFlow graph: nodes in insertion order, found by name in O(1),
// with a lazily built consumer index, topological order, TF's unique-name rule and scopes.
//
//   graft::graph g;
//   g.add_node({"x", "Placeholder"}).attrs.set("dtype", graft::dtype::float32);
//   g.add_node({"y", "Identity", {{"x", 0}}}).attrs.set("T", graft::dtype::float32);
//   g.at("y").inputs[0] == graft::endpoint{"x", 0};
//   g.consumers({"x", 0}).size() == 1;  g.unique_name("y") == "y_1";
//   for (graft::node* n : g.topological_order()) { ... }   // x before y
//
// Editing a node's inputs through find()/at() is allowed; call g.touch() afterwards so the consumer
// index is rebuilt. Graph methods (add_node, remove_node, rename, ...) do that themselves. Rename
// nodes only through rename() (the name index keys on node::name). Const methods may run
// concurrently, except consumers() / control_consumers() / has_consumers(), which build their index
// on first use: call one of them once before sharing the graph between threads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graft/graph/detail/name_index.hpp"
#include "graft/graph/function.hpp"
#include "graft/graph/node.hpp"

namespace graft {

/// GraphDef versions (VersionDef).
struct version_def {
    std::int32_t producer = 0;
    std::int32_t min_consumer = 0;
    std::vector<std::int32_t> bad_consumers;
    friend bool operator==(const version_def&, const version_def&) = default;
};

/// One use of a node's output: input slot `input` of `consumer`.
struct consumer_ref {
    node* consumer = nullptr;
    int input = 0;
};

class graph_scope;

namespace detail {
/// Nodes live in chunks owned by their graph; a node_ptr only destroys its node.
struct node_destroy {
    void operator()(node* n) const noexcept { n->~node(); }
};
}  // namespace detail

class graph {
    using node_ptr = std::unique_ptr<node, detail::node_destroy>;

public:
    version_def versions;
    bool has_versions = true;         ///< GraphDef.versions present (very old files lack it)
    std::int32_t legacy_version = 0;  ///< GraphDef.version (deprecated field 3), kept for round trips
    function_library library;
    bool has_library = false;          ///< GraphDef.library present even when empty (frozen graphs write `library {}`)
    std::string debug_info;            ///< serialized GraphDebugInfo, verbatim
    std::string extra_fields;          ///< unmodelled GraphDef fields, verbatim

    graph() : ops_(std::make_shared<op_registry>(&op_registry::global())) {}
    graph(const graph& o) { *this = o; }
    graph& operator=(const graph& o);
    graph(graph&&) noexcept = default;
    graph& operator=(graph&& o) noexcept {
        if (this == &o) return *this;
        nodes_.clear();  // destroy this graph's nodes while their chunks still exist
        versions = std::move(o.versions);
        has_versions = o.has_versions;
        legacy_version = o.legacy_version;
        library = std::move(o.library);
        has_library = o.has_library;
        debug_info = std::move(o.debug_info);
        extra_fields = std::move(o.extra_fields);
        chunks_ = std::move(o.chunks_);
        next_chunk_ = o.next_chunk_;
        nodes_ = std::move(o.nodes_);
        live_ = o.live_;
        index_ = std::move(o.index_);
        ops_ = std::move(o.ops_);
        next_suffix_ = std::move(o.next_suffix_);
        reserved_ = std::move(o.reserved_);
        consumers_built_ = false;
        o.live_ = 0;
        return *this;
    }

    // ---------------------------------------------------------------- nodes

    /// Adds a node and returns it (stable address). Throws graph_error on an empty or duplicate name.
    node& add_node(node n) { return adopt(make_node(std::move(n))); }
    /// Adds a node built in place by fill(node&) (loaders: no temporary node to move), with the
    /// checks and errors of add_node. When fill or a check throws, the graph is left unchanged.
    template <class Fill>
    node& add_node_with(Fill&& fill) {
        node_ptr p = make_node();
        try {
            fill(*p);
        } catch (...) {
            give_back(std::move(p));
            throw;
        }
        return adopt(std::move(p));
    }
    /// The node `name`, or nullptr. O(1). Never throws.
    [[nodiscard]] node* find(std::string_view name) {
        auto p = index_.find(name, key());
        return p == detail::name_index::npos ? nullptr : nodes_[p].get();
    }
    [[nodiscard]] const node* find(std::string_view name) const { return const_cast<graph*>(this)->find(name); }
    [[nodiscard]] bool contains(std::string_view name) const { return find(name) != nullptr; }
    /// The node `name`. Throws not_found_error naming close matches.
    [[nodiscard]] node& at(std::string_view name) {
        if (auto* n = find(name)) return *n;
        throw_not_found(name);
    }
    [[nodiscard]] const node& at(std::string_view name) const { return const_cast<graph*>(this)->at(name); }

    /// Removes `name` (references to it are left dangling). Throws not_found_error.
    void remove_node(std::string_view name) {
        auto p = index_.find(name, key());
        if (p == detail::name_index::npos) throw_not_found(name);
        index_.erase(name, key());
        nodes_[p].reset();
        --live_;
        if (nodes_.size() > 64 && live_ < nodes_.size() / 2) compact();
        touch();
    }
    /// Removes every node for which pred(node) is true; returns how many. Never throws (unless pred does).
    template <class Pred>
    std::size_t remove_if(Pred pred) {
        std::size_t removed = 0;
        for (auto& p : nodes_) {
            if (p && pred(static_cast<const node&>(*p))) {
                index_.erase(p->name, key());
                p.reset();
                ++removed;
            }
        }
        live_ -= removed;
        compact();
        touch();
        return removed;
    }
    /// Renames a node and rewrites every data and control input that named it. Throws
    /// not_found_error when `from` is absent and graph_error when `to` is taken.
    void rename(std::string_view from, std::string to);

    [[nodiscard]] std::size_t size() const { return live_; }
    [[nodiscard]] bool empty() const { return live_ == 0; }
    void reserve(std::size_t n) {
        nodes_.reserve(n);
        index_.reserve(n, key());
        std::size_t room = chunks_.empty() ? 0 : chunks_.back().capacity - chunks_.back().used;
        if (n > size() + room) next_chunk_ = n - size() - room;
    }

    template <class N, class It>
    class iter {
    public:
        using value_type = N;
        using difference_type = std::ptrdiff_t;
        using reference = N&;
        using pointer = N*;
        using iterator_category = std::forward_iterator_tag;
        iter() = default;
        iter(It it, It end) : it_(it), end_(end) { skip(); }
        N& operator*() const { return **it_; }
        N* operator->() const { return it_->get(); }
        iter& operator++() { ++it_; skip(); return *this; }
        iter operator++(int) { auto t = *this; ++*this; return t; }
        friend bool operator==(const iter& a, const iter& b) { return a.it_ == b.it_; }
    private:
        void skip() { while (it_ != end_ && !*it_) ++it_; }
        It it_{}, end_{};
    };
    using iterator = iter<node, std::vector<node_ptr>::iterator>;
    using const_iterator = iter<const node, std::vector<node_ptr>::const_iterator>;
    /// Nodes in insertion order.
    iterator begin() { return {nodes_.begin(), nodes_.end()}; }
    iterator end() { return {nodes_.end(), nodes_.end()}; }
    const_iterator begin() const { return {nodes_.begin(), nodes_.end()}; }
    const_iterator end() const { return {nodes_.end(), nodes_.end()}; }

    // ---------------------------------------------------------------- edges

    /// Every data input that reads `e`, in node order. Builds the consumer index on first use.
    [[nodiscard]] const std::vector<consumer_ref>& consumers(const endpoint& e) const {
        build_consumers();
        static const std::vector<consumer_ref> none;
        auto it = consumers_.find(e);
        return it == consumers_.end() ? none : it->second;
    }
    /// Every node with a control input on `name`. Builds the consumer index on first use.
    [[nodiscard]] const std::vector<node*>& control_consumers(std::string_view name) const {
        build_consumers();
        static const std::vector<node*> none;
        auto it = control_consumers_.find(std::string(name));
        return it == control_consumers_.end() ? none : it->second;
    }
    /// True when any node reads an output of `name` or has a control input on it.
    [[nodiscard]] bool has_consumers(std::string_view name) const {
        build_consumers();
        return used_.count(std::string(name)) != 0;
    }
    /// Marks the consumer index stale (call after editing inputs through find()/at()). Never throws.
    void touch() { consumers_built_ = false; }

    /// Nodes so that every node comes after its data and control inputs; ties keep insertion order.
    /// Edges from NextIteration into Merge (TF1 loop back edges) are ignored. Throws graph_error
    /// naming the nodes of a cycle, or a node whose input names a missing node.
    [[nodiscard]] std::vector<node*> topological_order() const;

    /// Checks that every input names an existing node, output indices are in range where the op is
    /// known, and there is no cycle. Throws graph_error naming the node (and `file`, when given).
    void validate(const std::string& file = {}) const;

    // ---------------------------------------------------------------- names

    /// `base` if free, else `base_1`, `base_2`, ... (TF's rule); the name is reserved so the next
    /// call gives another one. Never throws (except bad_alloc).
    std::string unique_name(std::string_view base);
    /// A scope whose names are prefixed with a unique "scope/" (TF name_scope). Never throws.
    graph_scope with_scope(std::string_view scope);

    // ---------------------------------------------------------------- ops

    /// The registry this graph resolves op types with: its own ops (the stripped_op_list entries
    /// whose signature differs from graft's table, library functions), then graft's global table.
    [[nodiscard]] const op_registry& registry() const { return *ops_; }
    [[nodiscard]] op_registry& registry() { return *ops_; }
    /// Output count of `n` through registry(). Throws graph_error naming the op and node.
    [[nodiscard]] int num_outputs(const node& n) const { return n.num_outputs(*ops_); }
    /// Output dtypes of `n` through registry(). Throws graph_error naming the op and node.
    [[nodiscard]] std::vector<graft::dtype> output_dtypes(const node& n) const { return n.output_dtypes(*ops_); }
    /// Adds a function to the library and registers its signature as an op. Throws graph_error
    /// when a function of that name exists.
    function_def& add_function(function_def f) {
        if (library.find(f.name())) {
            throw graph_error(detail::cat("function '", f.name(), "' already in the library"));
        }
        ops_->add(f.signature);
        library.functions.push_back(std::move(f));
        return library.functions.back();
    }
    /// Registers every library function's signature as an op of this graph. Never throws.
    void register_library_ops() {
        for (auto& f : library.functions) ops_->add(f.signature);
    }

    /// Same nodes (in the same order), attrs, edges, versions and library. Never throws.
    friend bool operator==(const graph& a, const graph& b);

private:
    [[noreturn]] void throw_not_found(std::string_view name) const;
    /// Drops removed slots; positions change, so the index is rebuilt.
    void compact() {
        std::erase_if(nodes_, [](const auto& p) { return !p; });
        index_.clear();
        for (std::size_t i = 0; i < nodes_.size(); ++i) index_.insert(nodes_[i]->name, static_cast<std::uint32_t>(i), key());
    }
    /// The index's view of a position's key.
    struct key_of {
        const std::vector<node_ptr>* nodes;
        std::string_view operator()(std::uint32_t p) const { return (*nodes)[p]->name; }
    };
    [[nodiscard]] key_of key() const { return key_of{&nodes_}; }
    /// Position of `name` in nodes_, or name_index::npos.
    [[nodiscard]] std::uint32_t position(std::string_view name) const { return index_.find(name, key()); }
    /// Data and control edges as a CSR adjacency over positions (see graph_impl.hpp).
    struct edge_list;
    edge_list collect_edges(const std::string& file) const;
    std::vector<node*> order_or_throw(const edge_list& el) const;
    void build_consumers() const;

    /// Indexes a node just made by make_node() and returns it. On an empty or duplicate name (or
    /// bad_alloc) the node is destroyed, its slot given back, and the error thrown.
    node& adopt(node_ptr p) {
        if (p->name.empty()) {
            auto where = location::at_node("", p->op);
            give_back(std::move(p));
            throw graph_error("node without a name", std::move(where), "give every node a name");
        }
        node* raw = p.get();
        bool inserted = false;
        try {
            nodes_.push_back(std::move(p));
            inserted = index_.insert(raw->name, static_cast<std::uint32_t>(nodes_.size() - 1), key());
        } catch (...) {
            drop_last_made(raw, p);
            throw;
        }
        if (!inserted) {
            auto where = location::at_node(raw->name, raw->op);
            auto hint = detail::cat("names must be unique; g.unique_name(\"", raw->name, "\") gives a free one");
            drop_last_made(raw, p);
            throw graph_error("duplicate node name", std::move(where), std::move(hint));
        }
        ++live_;
        touch();
        return *raw;
    }
    /// Undoes adopt()'s push_back (if it happened) of the node `raw` that make_node() made last.
    void drop_last_made(node* raw, node_ptr& p) noexcept {
        if (!nodes_.empty() && nodes_.back().get() == raw) {
            p = std::move(nodes_.back());
            nodes_.pop_back();
        }
        give_back(std::move(p));
    }
    /// Destroys the node make_node() made last and returns its slot to the chunk.
    void give_back(node_ptr p) noexcept {
        p.reset();
        --chunks_.back().used;
    }
    /// A node constructed in the current chunk (one allocation per chunk, not per node). Chunks hold
    /// 256 nodes, or what reserve() asked for.
    template <class... Args>
    node_ptr make_node(Args&&... args) {
        if (chunks_.empty() || chunks_.back().used == chunks_.back().capacity) {
            std::size_t cap = std::max<std::size_t>(next_chunk_, 16);
            next_chunk_ = 256;
            chunks_.push_back({std::unique_ptr<std::byte[]>(new std::byte[cap * sizeof(node)]), cap, 0});
        }
        auto& c = chunks_.back();
        node* p = new (c.bytes.get() + sizeof(node) * c.used) node(std::forward<Args>(args)...);
        ++c.used;
        return node_ptr(p);
    }
    struct chunk {
        std::unique_ptr<std::byte[]> bytes;  // operator new[] storage: aligned for any node member
        std::size_t capacity = 0, used = 0;
    };
    std::vector<chunk> chunks_;  // declared before nodes_: freed after the nodes are destroyed
    std::size_t next_chunk_ = 256;
    std::vector<node_ptr> nodes_;
    std::size_t live_ = 0;
    detail::name_index index_;
    std::shared_ptr<op_registry> ops_;
    std::unordered_map<std::string, int> next_suffix_;
    std::unordered_set<std::string> reserved_;

    mutable bool consumers_built_ = false;
    mutable std::unordered_map<endpoint, std::vector<consumer_ref>> consumers_;
    mutable std::unordered_map<std::string, std::vector<node*>> control_consumers_;
    mutable std::unordered_set<std::string> used_;
};

/// Names under a prefix: scope.name("dense") == "g1/dense" (made unique in the graph).
class graph_scope {
public:
    graph_scope(graph& g, std::string prefix) : g_(&g), prefix_(std::move(prefix)) {}
    [[nodiscard]] const std::string& prefix() const { return prefix_; }
    /// A unique full name "prefix/base". Never throws (except bad_alloc).
    std::string name(std::string_view base) { return g_->unique_name(prefix_ + "/" + std::string(base)); }
    /// Adds `n` with its name placed under this scope (made unique). Throws graph_error like add_node.
    node& add_node(node n) {
        n.name = name(n.name);
        return g_->add_node(std::move(n));
    }
    /// A nested scope "prefix/sub" (made unique). Never throws (except bad_alloc).
    graph_scope sub(std::string_view s) { return graph_scope(*g_, name(s)); }
    [[nodiscard]] graph& target() const { return *g_; }

private:
    graph* g_;
    std::string prefix_;
};

}  // namespace graft

#include "graft/graph/detail/graph_impl.hpp"
