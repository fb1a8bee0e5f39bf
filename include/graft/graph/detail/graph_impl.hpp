// graft/graph/detail/graph_impl.hpp — internal: out-of-line members of graft::graph.
#pragma once

#include <algorithm>
#include <deque>

namespace graft {

inline graph& graph::operator=(const graph& o) {
    if (this == &o) return *this;
    versions = o.versions;
    has_versions = o.has_versions;
    has_library = o.has_library;
    legacy_version = o.legacy_version;
    library = o.library;
    debug_info = o.debug_info;
    extra_fields = o.extra_fields;
    nodes_.clear();
    chunks_.clear();
    next_chunk_ = 256;
    index_.clear();
    live_ = 0;
    reserve(o.size());
    for (const auto& n : o) add_node(n);
    ops_ = o.ops_ ? std::make_shared<op_registry>(*o.ops_) : std::make_shared<op_registry>(&op_registry::global());
    next_suffix_ = o.next_suffix_;
    reserved_ = o.reserved_;
    touch();
    return *this;
}

inline void graph::rename(std::string_view from, std::string to) {
    auto* n = find(from);
    if (!n) throw_not_found(from);
    if (from == to) return;
    if (to.empty() || contains(to)) {
        throw graph_error(detail::cat("cannot rename to '", to, "': ", to.empty() ? "empty name" : "name taken"),
                          location::at_node(std::string(from), n->op));
    }
    std::string old(from);
    auto pos = position(old);
    index_.erase(old, key());
    n->name = std::move(to);
    index_.insert(n->name, pos, key());
    for (auto& m : *this) {
        for (auto& e : m.inputs) if (e.node == old) e.node = n->name;
        for (auto& c : m.control_inputs) if (c == old) c = n->name;
    }
    touch();
}

inline void graph::build_consumers() const {
    if (consumers_built_) return;
    consumers_.clear();
    control_consumers_.clear();
    used_.clear();
    for (auto& p : nodes_) {
        if (!p) continue;
        for (std::size_t i = 0; i < p->inputs.size(); ++i) {
            consumers_[p->inputs[i]].push_back({p.get(), static_cast<int>(i)});
            used_.insert(p->inputs[i].node);
        }
        for (auto& c : p->control_inputs) {
            control_consumers_[c].push_back(p.get());
            used_.insert(c);
        }
    }
    consumers_built_ = true;
}

inline void graph::throw_not_found(std::string_view name) const {
    // close names: same last path component, or a small edit distance
    auto last = [](std::string_view s) {
        auto k = s.rfind('/');
        return k == std::string_view::npos ? s : s.substr(k + 1);
    };
    auto distance = [](std::string_view a, std::string_view b, std::size_t cap) {
        if (a.size() > b.size() + cap || b.size() > a.size() + cap) return cap + 1;
        std::vector<std::size_t> row(b.size() + 1);
        for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
        for (std::size_t i = 1; i <= a.size(); ++i) {
            std::size_t prev = row[0], best = i;
            row[0] = i;
            for (std::size_t j = 1; j <= b.size(); ++j) {
                std::size_t cur = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] != b[j - 1])});
                prev = row[j];
                row[j] = cur;
                best = std::min(best, cur);
            }
            if (best > cap) return cap + 1;
        }
        return row[b.size()];
    };
    std::vector<std::pair<std::size_t, std::string>> close;
    std::size_t cap = std::max<std::size_t>(2, name.size() / 4);
    for (const auto& n : *this) {
        std::size_t d = distance(name, n.name, cap);
        if (d > cap && last(n.name) == last(name)) d = cap;
        if (d <= cap) close.emplace_back(d, n.name);
    }
    std::sort(close.begin(), close.end());
    std::string hint;
    for (std::size_t i = 0; i < close.size() && i < 5; ++i) hint += (i ? ", " : "") + close[i].second;
    throw not_found_error(detail::cat("no node named '", name, "' in a graph of ", size(), " nodes"),
                          location::at_node(std::string(name)),
                          hint.empty() ? std::string("check the name (graft inspect --nodes lists them)")
                                       : "close names: " + hint);
}

/// Positions of the live nodes and their edges (producer -> consumer), data and control, with TF1
/// loop back edges (NextIteration -> Merge) left out of the adjacency.
struct graph::edge_list {
    std::vector<std::uint32_t> live;       ///< positions of live nodes, in insertion order
    std::vector<std::uint32_t> input_pos;  ///< producer position of every data then control input, node by node
    std::vector<std::uint32_t> indeg;      ///< per position, back edges excluded
    std::vector<std::uint32_t> offsets;    ///< CSR: out-edges of position p are targets[offsets[p]..offsets[p+1])
    std::vector<std::uint32_t> targets;
};

inline graph::edge_list graph::collect_edges(const std::string& file) const {
    edge_list el;
    const auto n = nodes_.size();
    el.indeg.assign(n, 0);
    el.offsets.assign(n + 1, 0);
    el.live.reserve(live_);
    el.input_pos.reserve(n * 2);
    std::vector<char> counted;  // per input: part of the adjacency (not a loop back edge)
    counted.reserve(n * 2);
    for (std::uint32_t i = 0; i < n; ++i) {
        const node* to = nodes_[i].get();
        if (!to) continue;
        el.live.push_back(i);
        bool merge = to->op == "Merge" || to->op == "RefMerge";
        auto edge = [&](std::string_view name, bool data) {
            auto p = position(name);
            if (p == detail::name_index::npos) {
                location l = location::at_node(to->name, to->op);
                l.file = file;
                throw graph_error(detail::cat(data ? "input '" : "control input '^", name,
                                              "' names a node that is not in the graph"),
                                  l, "remove the input or add the node");
            }
            el.input_pos.push_back(p);
            const auto& fop = nodes_[p]->op;
            bool back = merge && (fop == "NextIteration" || fop == "RefNextIteration");
            counted.push_back(!back);
            if (back) return;
            ++el.offsets[p + 1];
            ++el.indeg[i];
        };
        for (auto& e : to->inputs) edge(e.node, true);
        for (auto& c : to->control_inputs) edge(c, false);
    }
    for (std::size_t p = 0; p < n; ++p) el.offsets[p + 1] += el.offsets[p];
    el.targets.resize(el.offsets[n]);
    std::vector<std::uint32_t> fill(el.offsets.begin(), el.offsets.end() - 1);
    std::size_t k = 0;
    for (auto i : el.live) {
        std::size_t m = nodes_[i]->inputs.size() + nodes_[i]->control_inputs.size();
        for (std::size_t e = 0; e < m; ++e, ++k) {
            if (counted[k]) el.targets[fill[el.input_pos[k]]++] = i;
        }
    }
    return el;
}

inline std::vector<node*> graph::order_or_throw(const edge_list& el) const {
    auto indeg = el.indeg;
    std::vector<node*> order;
    order.reserve(el.live.size());
    // Kahn's algorithm with a FIFO seeded in insertion order: linear, and close to file order
    std::vector<std::uint32_t> queue;
    queue.reserve(el.live.size());
    for (auto i : el.live) if (!indeg[i]) queue.push_back(i);
    for (std::size_t head = 0; head < queue.size(); ++head) {
        auto i = queue[head];
        order.push_back(nodes_[i].get());
        for (auto t = el.offsets[i]; t < el.offsets[i + 1]; ++t) {
            auto j = el.targets[t];
            if (--indeg[j] == 0) queue.push_back(j);
        }
    }
    if (order.size() == el.live.size()) return order;

    // name one cycle: walk from a blocked node to a blocked input until a node repeats
    std::uint32_t cur = 0;
    for (auto i : el.live) {
        if (indeg[i]) {
            cur = i;
            break;
        }
    }
    std::vector<std::uint32_t> path;
    std::unordered_map<std::uint32_t, std::size_t> seen;
    while (!seen.count(cur)) {
        seen[cur] = path.size();
        path.push_back(cur);
        const node& n = *nodes_[cur];
        bool merge = n.op == "Merge" || n.op == "RefMerge";
        std::uint32_t next = cur;
        auto try_pred = [&](std::string_view from) {
            auto p = position(from);
            if (next != cur || !indeg[p]) return;
            if (merge && (nodes_[p]->op == "NextIteration" || nodes_[p]->op == "RefNextIteration")) return;
            next = p;
        };
        for (auto& e : n.inputs) try_pred(e.node);
        for (auto& c : n.control_inputs) try_pred(c);
        cur = next;
    }
    // path runs against the data flow (node, its input, that one's input, ...); print it along it
    std::string cyc = nodes_[cur]->name;
    for (std::size_t k = path.size(); k-- > seen[cur] + 1;) cyc += " -> " + nodes_[path[k]]->name;
    cyc += " -> " + nodes_[cur]->name;
    throw graph_error(detail::cat("the graph has a cycle: ", cyc), location::at_node(nodes_[cur]->name, nodes_[cur]->op),
                      "only TF1 while loops may cycle, through NextIteration into Merge");
}

inline std::vector<node*> graph::topological_order() const { return order_or_throw(collect_edges({})); }

inline void graph::validate(const std::string& file) const {
    auto fail = [&](const node& n, const std::string& msg, const std::string& hint) {
        location l = location::at_node(n.name, n.op);
        l.file = file;
        throw graph_error(msg, l, hint);
    };
    auto el = collect_edges(file);  // missing inputs fail here
    // op lookups and output counts, once per op type / producer
    std::unordered_map<std::string_view, const op_def*> defs;
    auto def_of = [&](const std::string& op) {
        auto it = defs.find(op);
        if (it == defs.end()) it = defs.emplace(op, ops_->find(op)).first;
        return it->second;
    };
    constexpr int unknown = -2, not_yet = -1;
    std::vector<int> outputs(nodes_.size(), not_yet);
    auto num_outputs_at = [&](std::uint32_t p) {
        if (outputs[p] == not_yet) {
            const node& f = *nodes_[p];
            const op_def* d = def_of(f.op);
            outputs[p] = unknown;
            if (d) {
                try {
                    int k = 0;
                    for (auto& a : d->outputs) k += arg_size(*d, a, f.attrs, f.name);
                    outputs[p] = k;
                } catch (const graph_error&) {
                }
            }
        }
        return outputs[p];
    };
    std::unordered_map<const void*, const op_def*> checked;
    std::size_t k = 0;
    for (auto i : el.live) {
        const node& n = *nodes_[i];
        for (auto& e : n.inputs) {
            auto p = el.input_pos[k++];
            if (e.index < 0) fail(n, detail::cat("input '", e.str(), "' has a negative index"), {});
            if (int c = num_outputs_at(p); c >= 0 && e.index >= c) {
                const node& f = *nodes_[p];
                fail(n, detail::cat("input '", e.str(), "' reads output ", e.index, " but ", f.name, " (op ", f.op,
                                    ") has ", c, " output", c == 1 ? "" : "s"),
                     "check the output index");
            }
        }
        k += n.control_inputs.size();
        const op_def* d = def_of(n.op);
        if (!d) {
            // An op graft does not know may be a function of the library or a newer TF op; a name no
            // op or function can have (empty, bytes outside [A-Za-z0-9_.-/>]) is a corrupt file.
            bool plausible = !n.op.empty() && n.op.size() <= 1024;
            for (char c : n.op) {
                plausible = plausible && ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                                          c == '_' || c == '.' || c == '-' || c == '/' || c == '>');
            }
            if (!plausible) {
                location l = location::at_node(n.name);
                l.file = file;
                throw format_error(detail::cat("node has op '", n.op, "', which is no valid TensorFlow op or function name"),
                                   l, "the file is corrupt (or not a GraphDef); re-export it from TensorFlow");
            }
            continue;
        }
        // nodes often share one attr set (copy-on-write): check each set once per op
        if (n.attrs.is_shared()) {
            auto [it, fresh] = checked.try_emplace(n.attrs.shared_id(), d);
            if (!fresh && it->second == d) continue;
        }
        for (auto& [key, v] : n.attrs) {
            if (!key.empty() && key[0] == '_') continue;  // internal attrs (_output_shapes, _class) are undeclared
            const attr_def* ad = d->find_attr(key);
            if (ad && !v.matches_type(ad->type)) {
                fail(n, detail::cat("attr '", key, "' is a ", v.type_name(), " (", v.str(), ") but op ", n.op,
                                    " declares it as ", ad->type),
                     "fix the attr's value kind");
            }
        }
    }
    try {
        (void)order_or_throw(el);
    } catch (const graph_error& e) {
        location l = e.where();
        l.file = file;
        throw graph_error(e.message(), l, e.hint());
    }
}

inline std::string graph::unique_name(std::string_view base) {
    std::string b(base);
    if (!contains(b) && !reserved_.count(b)) {
        reserved_.insert(b);
        return b;
    }
    int& k = next_suffix_[b];
    for (;;) {
        std::string cand = b + "_" + std::to_string(++k);
        if (!contains(cand) && !reserved_.count(cand)) {
            reserved_.insert(cand);
            return cand;
        }
    }
}

inline graph_scope graph::with_scope(std::string_view scope) { return graph_scope(*this, unique_name(scope)); }

inline bool operator==(const graph& a, const graph& b) {
    if (a.size() != b.size() || !(a.versions == b.versions) || a.legacy_version != b.legacy_version ||
        !(a.library == b.library) || a.debug_info != b.debug_info || a.extra_fields != b.extra_fields) {
        return false;
    }
    auto i = a.begin();
    auto j = b.begin();
    for (; i != a.end(); ++i, ++j) {
        if (!(*i == *j)) return false;
    }
    return true;
}

}  // namespace graft
