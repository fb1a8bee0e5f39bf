// graft/surgery/clone.hpp — copy the ops between boundary inputs and outputs under a new scope,
// within one MetaGraph (clone) or from one into another (clone_into). Variables reached are
// copied as real variables (VariableV2 or VarHandleOp + initializer + read, VariableDefs in the
// collections the original is in, one "<scope>/init" NoOp), initialized by policy:
//   copy  — the clone starts from the original's current values (a Const initial value filled
//           from a value source: a session, a checkpoint, or a map);
//   init  — the original's initializer subgraph is cloned, so the clone draws fresh values with the
//           same initializer ops (random ops get a new seed2, derived from their new name);
//   share — no new variable: the copied ops read the original's variable.
// Link graft::compiled.
//
//   graft::surgery::clone_options o;
//   o.inputs = {"x"};  o.outputs = {"logits:0"};  o.scope = "copy";
//   o.init = graft::surgery::init_policy::copy;
//   o.values = graft::surgery::session_values(session);       // or checkpoint_values("model.ckpt")
//   auto r = graft::surgery::clone(mg, o);
//   r.outputs[0] == "copy/logits:0";  r.placeholders[0] == "copy/x";  r.init_op == "copy/init";
//
// Names are deterministic: node "a/b" becomes "<scope>/a/b"; a scope already used by a node of the
// destination graph is an error (no silent "_1" scopes); new placeholders are "<scope>/<node>"
// ("<scope>/<node>_<k>" for output k > 0 of a multi-output boundary node). Control inputs on ops
// that are copied too follow the copy; others are kept (clone) or dropped (clone_into). Time is
// linear in the number of copied nodes plus one pass over the destination graph.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "graft/exec/session.hpp"
#include "graft/graph/detail/name_index.hpp"
#include "graft/graph/meta_graph.hpp"
#include "graft/graph/variables.hpp"
#include "graft/surgery/rename.hpp"
#include "graft/surgery/values.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"

namespace graft::surgery {

/// How the clone's variables start.
enum class init_policy { copy, init, share };

/// "copy" / "init" / "share" -> policy. Throws invalid_argument_error for anything else.
inline init_policy parse_init_policy(std::string_view s) {
    if (s == "copy") return init_policy::copy;
    if (s == "init") return init_policy::init;
    if (s == "share") return init_policy::share;
    throw invalid_argument_error(detail::cat("unknown init policy '", s, "'"), {}, "use copy, init or share");
}

struct clone_options {
    /// Boundary inputs: tensors ("add_4:0") or nodes ("add_4": each of its outputs). Not copied.
    std::vector<std::string> inputs;
    /// Boundary outputs: tensors or nodes. The ops they depend on, back to the inputs, are copied.
    std::vector<std::string> outputs;
    std::string scope = "copy";
    /// Boundary input tensor (source graph) -> existing tensor of the destination graph that
    /// replaces it. Keys are boundary inputs even when not listed in `inputs`. Unmapped inputs
    /// become Placeholders "<scope>/<node>".
    std::map<std::string, std::string> input_map;
    init_policy init = init_policy::init;
    /// Required for init_policy::copy: session_values(s), checkpoint_values(prefix), map_values(m)
    value_source values;
    /// init policy: give copied random initializer ops (seed or seed2 set) a new seed2.
    bool reseed = true;
    bool clear_devices = false;
    /// A source graph of at least this many nodes is cloned on two threads: its variables are
    /// found while the subgraph is walked, and the result's names and the VariableDefs are written
    /// while the copies are added to the graph. The result is the same either way (0: always,
    /// SIZE_MAX: never; one hardware thread: never).
    std::size_t parallel_from = 8192;
};

/// Original node name -> its copy's name ("<scope>/<name>"), for every node a clone copied. A
/// read-only map over one buffer of names and the graph's own name_index (open addressing, keys
/// read from the entries): a clone of 100k nodes makes a few allocations for it, where a
/// std::unordered_map<string, string> makes 300k (and frees them again with the result). Entries are pairs of string_views into the map itself;
/// iteration follows the order the nodes were copied in.
class clone_names {
public:
    using value_type = std::pair<std::string_view, std::string_view>;
    using const_iterator = std::vector<value_type>::const_iterator;
    using iterator = const_iterator;

    clone_names() = default;
    clone_names(const clone_names& o) { *this = o; }
    clone_names(clone_names&&) noexcept = default;  // a vector's buffer moves with it: the views stay valid
    clone_names& operator=(clone_names&&) noexcept = default;
    clone_names& operator=(const clone_names& o) {
        if (this == &o) return *this;
        buf_ = o.buf_;
        index_ = o.index_;
        scope_ = o.scope_;
        entries_.clear();
        entries_.reserve(o.entries_.size());
        for (auto& [from, to] : o.entries_) entries_.emplace_back(rebase(from, o), rebase(to, o));
        return *this;
    }

    [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
    [[nodiscard]] bool empty() const noexcept { return entries_.empty(); }
    [[nodiscard]] const_iterator begin() const noexcept { return entries_.begin(); }
    [[nodiscard]] const_iterator end() const noexcept { return entries_.end(); }

    /// The entry of original node `name`, or end().
    [[nodiscard]] const_iterator find(std::string_view name) const noexcept {
        const std::uint32_t p = index_.find(name, key());
        return p == detail::name_index::npos ? end() : entries_.begin() + p;
    }
    [[nodiscard]] bool contains(std::string_view name) const noexcept { return find(name) != end(); }
    [[nodiscard]] std::size_t count(std::string_view name) const noexcept { return contains(name) ? 1 : 0; }
    /// The copy's name of original node `name`. Throws not_found_error when it was not copied.
    [[nodiscard]] std::string_view at(std::string_view name) const {
        auto it = find(name);
        if (it == end()) {
            throw not_found_error(detail::cat("node '", name, "' was not copied"), location::at_node(std::string(name)));
        }
        return it->second;
    }

    /// Same originals with the same copies (in any order).
    friend bool operator==(const clone_names& a, const clone_names& b) {
        if (a.size() != b.size()) return false;
        for (auto& [from, to] : a) {
            auto it = b.find(from);
            if (it == b.end() || it->second != to) return false;
        }
        return true;
    }

    // ---------------------------------------------------------------- building (the cloner)

    /// Starts a map whose copies are "<prefix><name>", for `count` names of `bytes` characters in all.
    void start(std::string_view prefix, std::size_t count, std::size_t bytes) {
        buf_.clear();
        buf_.reserve(count * prefix.size() + bytes);
        entries_.clear();
        entries_.reserve(count);
        index_.clear();
        index_.reserve(count, key());
        scope_.assign(prefix);
    }
    /// Adds original `name` (copied as "<prefix><name>"); false when it is there already. Adding more
    /// names or bytes than start() announced is allowed (slower: the views are rebuilt).
    bool add(std::string_view name) {
        // indexed first (the index reads keys of existing entries only), then stored
        if (!index_.insert(name, static_cast<std::uint32_t>(entries_.size()), key())) return false;
        const char* old = buf_.data();
        std::size_t at = buf_.size();
        buf_.insert(buf_.end(), scope_.begin(), scope_.end());
        buf_.insert(buf_.end(), name.begin(), name.end());
        if (buf_.data() != old) {
            for (auto& [from, to] : entries_) {
                from = {buf_.data() + (from.data() - old), from.size()};
                to = {buf_.data() + (to.data() - old), to.size()};
            }
        }
        std::string_view to(buf_.data() + at, scope_.size() + name.size());
        entries_.emplace_back(to.substr(scope_.size()), to);
        return true;
    }

private:
    /// name_index's key: the original name of the entry at a position.
    struct key_of {
        const std::vector<value_type>* entries;
        std::string_view operator()(std::uint32_t p) const noexcept { return (*entries)[p].first; }
    };
    [[nodiscard]] key_of key() const noexcept { return key_of{&entries_}; }
    [[nodiscard]] std::string_view rebase(std::string_view v, const clone_names& o) const noexcept {
        return {buf_.data() + (v.data() - o.buf_.data()), v.size()};
    }

    std::vector<char> buf_;                 ///< "<prefix><name>" of every entry, back to back
    std::vector<value_type> entries_;       ///< (original, copy), views into buf_
    detail::name_index index_;              ///< original name -> position in entries_
    std::string scope_;                     ///< the prefix of every copy's name
};

struct clone_result {
    std::string scope;
    clone_names names;  ///< original node -> copy (every copied node)
    std::vector<std::string> outputs;                 ///< the outputs' copies, in options order
    std::map<std::string, std::string> inputs;        ///< boundary tensor "n:k" -> its replacement
    std::vector<std::string> placeholders;            ///< new Placeholder nodes
    std::vector<std::string> variables;               ///< new variable nodes (not under share)
    std::map<std::string, std::string> variable_map;  ///< original variable node -> clone's (share: itself)
    std::map<std::string, tensor> values;             ///< copy: the clone variable's initial value
    std::string init_op;                              ///< "<scope>/init", empty when no variable was made

    /// The copy of an original tensor or node name ("a:0" -> "copy/a:0"). Throws not_found_error
    /// when that node was not copied.
    [[nodiscard]] std::string copy_of(std::string_view original) const {
        endpoint e;
        endpoint::try_split(original, e);
        auto it = names.find(e.node);
        if (it == names.end()) {
            throw not_found_error(detail::cat("'", original, "' was not copied into scope '", scope, "'"),
                                  location::at_tensor(std::string(original)));
        }
        return original.find(':') == std::string_view::npos ? std::string(it->second)
                                                             : endpoint{std::string(it->second), e.index}.str();
    }
};

clone_result clone_into(meta_graph& dst, const meta_graph& src, const clone_options& o);

/// Clones within one MetaGraph. Throws not_found_error (a missing boundary tensor or node),
/// invalid_argument_error (scope in use, boundary that does not separate the graph, input_map
/// dtype mismatch, copy without a value source, a stateful op in the subgraph), graph_error, and
/// what the value source throws.
inline clone_result clone(meta_graph& g, const clone_options& o) { return clone_into(g, g, o); }

}  // namespace graft::surgery

// clone_into() is a compiled part (core/config.hpp): src/compiled/clone.cpp with graft::compiled.
#if !defined(GRAFT_SEPARATE_COMPILATION) || defined(GRAFT_COMPILING_CLONE)
#include "graft/surgery/detail/clone_impl.hpp"
#endif
