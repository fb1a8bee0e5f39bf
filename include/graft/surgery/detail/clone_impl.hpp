// graft/surgery/detail/clone_impl.hpp — the walk and the copy behind graft/surgery/clone.hpp.
// Include graft/surgery/clone.hpp instead.
#pragma once

#include <future>
#include <system_error>
#include <thread>

#include "graft/surgery/clone.hpp"

namespace graft::surgery {
namespace clone_detail {

/// Random ops (`random` on their line of the op table): clone reseeds copied initializers.
inline bool is_random_op(std::string_view op) { return traits_of(op).random; }

/// Stateful ops a copy may hold: random ops (copied), variable reads and the variables themselves.
inline bool stateful_ok(std::string_view op) {
    return is_random_op(op) || is_variable_op(op) || op == "ReadVariableOp" || op == "ResourceGather" ||
           op == "VarIsInitializedOp" || op == "Placeholder" || op == "PlaceholderV2";
}

/// Ops that write a variable through a ref input (TF does not mark them stateful).
inline bool mutates_variable(std::string_view op) {
    for (std::string_view p : {"Apply", "ResourceApply", "SparseApply", "ResourceSparseApply", "Assign", "Scatter",
                               "ResourceScatter"}) {
        if (op.substr(0, p.size()) == p) return true;
    }
    return op == "CountUpTo";
}

/// A deterministic non-zero 31-bit seed from a node name (FNV-1a).
inline std::int64_t name_seed(std::string_view s) {
    std::uint32_t h = 2166136261u;
    for (char c : s) {
        h ^= static_cast<unsigned char>(c);
        h *= 16777619u;
    }
    std::int64_t r = static_cast<std::int64_t>(h & 0x7fffffffu);
    return r == 0 ? 1 : r;
}

inline std::int64_t int_attr(const node& n, std::string_view a) {
    if (auto* v = n.attr(a); v && v->which() == attr_value::kind::i) return v->i();
    return 0;
}

/// What the clone knows about one source node.
struct node_facts {
    static constexpr std::uint32_t none = 0xffffffffu;
    const node* n = nullptr;       ///< the node (nullptr: a free slot)
    const node* parent = nullptr;  ///< walked: the consumer the walk came from (nullptr for a start node);
                                   ///< a variable: the first consumer the walk came from (its read, mostly)
    std::uint32_t codes = 0;       ///< walked: offset of its input edges' codes in cloner::codes_
    std::uint32_t vinfo = none;    ///< a variable: its index in cloner::vinfo_
    bool walked = false;           ///< reached by the walk (copied)
    bool part = false;             ///< not necessarily walked but part of the copy: a variable, its Assign or snapshot
    bool same = false;             ///< part: the copy uses the original itself (share), else "<scope>/<name>"
    bool reseed = false;           ///< a random initializer op whose copy gets a new seed2
    bool reached = false;          ///< a variable in cloner::reached_vars_
};

/// Source node -> node_facts, open addressing on the node's address. A clone looks up every node
/// it copies several times; a node-based hash map costs an allocation (and a free) per node, a
/// large part of clone's time on graphs of 100k nodes.
class facts_table {
public:
    /// The facts of `n`, or nullptr when none were recorded. Never throws.
    [[nodiscard]] const node_facts* find(const node* n) const {
        if (slots_.empty()) return nullptr;
        for (std::size_t i = slot(n);; i = (i + 1) & mask()) {
            if (slots_[i].n == n) return &slots_[i];
            if (!slots_[i].n) return nullptr;
        }
    }
    /// The facts of `n`, recorded empty when new; valid until the next call. Never throws (except bad_alloc).
    node_facts& operator[](const node* n) {
        if (2 * (used_ + 1) > slots_.size()) grow();
        std::size_t i = slot(n);
        while (slots_[i].n && slots_[i].n != n) i = (i + 1) & mask();
        if (!slots_[i].n) {
            slots_[i].n = n;
            ++used_;
        }
        return slots_[i];
    }

private:
    [[nodiscard]] std::size_t mask() const { return slots_.size() - 1; }
    /// Fibonacci hashing: node addresses come at regular strides (nodes live in chunks).
    [[nodiscard]] std::size_t slot(const node* n) const {
        return static_cast<std::size_t>((reinterpret_cast<std::uintptr_t>(n) * 0x9E3779B97F4A7C15ull) >> shift_);
    }
    void grow() {
        std::vector<node_facts> old = std::move(slots_);
        slots_.assign(old.empty() ? 1024 : 2 * old.size(), node_facts{});
        shift_ = 64 - std::countr_zero(slots_.size());
        for (const node_facts& f : old) {
            if (!f.n) continue;
            std::size_t i = slot(f.n);
            while (slots_[i].n) i = (i + 1) & mask();
            slots_[i] = f;
        }
    }

    std::vector<node_facts> slots_;
    std::size_t used_ = 0;
    int shift_ = 64;
};

/// One clone_into call, in four phases (run() calls them in order; each section below is one):
///   boundary   check the scope, parse inputs / input_map / outputs into the copy's edges
///   walk       from the outputs back to the boundary: the nodes to copy, the variables reached
///              (and, on a large graph, the source's variable facts found on a second thread)
///   variables  per variable reached: share it or copy it (its initializer walked too), its
///              VariableDef renamed into the scope
///   emit       the boundary's replacements, then the copies, the variables' nodes and their
///              collections added to `dst` in one commit
class cloner {
public:
    cloner(meta_graph& dst, const meta_graph& src, const clone_options& o)
        : dst_(dst), src_(src), o_(o), same_(&dst == &src) {}

    clone_result run() {
        r_.scope = o_.scope;
        check_scope();
        parse_boundary();
        std::vector<const node*> out_nodes;
        for (auto& s : o_.outputs) out_nodes.push_back(&output_node(s));
        if (out_nodes.empty()) {
            throw invalid_argument_error("clone: no outputs given", {}, "name the tensors or nodes to copy in outputs");
        }
        {
            // On a large graph the source's variable facts are found on a second thread while
            // this one walks: both only read the source (find_variables alone builds its
            // consumer index), and facts_ is written here only. The future waits in its
            // destructor, so a walk that throws leaves no thread behind.
            std::future<void> found;
            if (!found_ && parallel()) found = beside([this] { find_vinfo(); });
            for (auto* n : out_nodes) walk(*n, false);
            if (found.valid()) found.get();  // rethrows what find_variables threw
        }
        // variables (the list grows while initializers are walked)
        vinfo_index();
        for (std::size_t i = 0; i < reached_vars_.size(); ++i) prepare_variable(*reached_vars_[i]);
        emit();
        for (auto& s : o_.outputs) r_.outputs.push_back(r_.copy_of(s));
        return std::move(r_);
    }

private:
    // ------------------------------------------------------------ boundary

    void check_scope() {
        if (o_.scope.empty()) {
            throw invalid_argument_error("clone: empty scope", {}, "give the copy a scope such as \"copy\"");
        }
        if (scope_in_use(dst_.graph, o_.scope)) {
            throw invalid_argument_error(detail::cat("clone: scope '", o_.scope, "' is already in use in the destination graph"),
                                         location::at_node(o_.scope), "choose an unused scope (graph::unique_name gives one)");
        }
        prefix_ = join_scope(o_.scope, "");
    }

    /// A boundary or output name: tensor "n:k" of an existing node, else node "n". Throws not_found_error.
    const node& src_node_of(const std::string& s, const char* what, endpoint& e, bool& whole) const {
        if (s.empty()) throw invalid_argument_error(detail::cat("clone: empty ", what, " name"));
        std::string_view v = s;
        if (v.front() == '^') v.remove_prefix(1);
        if (const node* n = src_.graph.find(v)) {
            e = {n->name, 0};
            whole = true;
            return *n;
        }
        endpoint t;
        if (endpoint::try_split(v, t)) {
            if (const node* n = src_.graph.find(t.node)) {
                auto k = n->try_num_outputs(src_.graph.registry());
                if (k && t.index >= *k) {
                    throw not_found_error(detail::cat("clone: ", what, " '", s, "' does not exist: ", n->op, " node '", n->name,
                                                      "' has ", *k, " output(s)"),
                                          location::at_tensor(s));
                }
                e = t;
                whole = false;
                return *n;
            }
        }
        throw not_found_error(detail::cat("clone: ", what, " '", s, "' names no node of the source graph"),
                              location::at_tensor(s), "give a tensor (\"add_4:0\") or node (\"add_4\") name that exists");
    }

    void parse_boundary() {
        auto add_input = [&](const std::string& s) {
            endpoint e;
            bool whole = false;
            src_node_of(s, "input", e, whole);
            if (whole) bnodes_.insert(e.node);
            else btensors_.insert(e);
        };
        for (auto& s : o_.inputs) add_input(s);
        for (auto& [k, v] : o_.input_map) {
            add_input(k);
            endpoint e;
            bool whole = false;
            src_node_of(k, "input_map key", e, whole);
            map_to_[e] = v;
        }
    }

    const node& output_node(const std::string& s) const {
        endpoint e;
        bool whole = false;
        const node& n = src_node_of(s, "output", e, whole);
        if (bnodes_.count(n.name) || btensors_.count(e)) {
            throw invalid_argument_error(detail::cat("clone: output '", s, "' is also a boundary input"),
                                         location::at_tensor(s), "the outputs must lie after the inputs");
        }
        return n;
    }

    [[nodiscard]] bool is_boundary(const endpoint& e) const {
        return bnodes_.count(e.node) != 0 || btensors_.count(e) != 0;
    }

    // ------------------------------------------------------------ walk

    std::string path_to(const node& n) const {
        std::string p = n.name;
        const node* cur = &n;
        for (int depth = 0; depth < 12; ++depth) {
            const node_facts* f = facts_.find(cur);
            if (!f || !f->walked || !f->parent) break;
            cur = f->parent;
            p = cur->name + " <- " + p;
        }
        return p;
    }

    /// Depth-first from `start` over data inputs, stopping at boundary tensors and variables;
    /// appends nodes to order_ after their inputs.
    void walk(const node& start, bool initializer) {
        if (walked(&start)) return;
        if (is_variable_op(start.op)) {
            reach_var(start);
            return;
        }
        struct frame {
            const node* n;
            std::size_t next;
            std::uint32_t codes;
        };
        std::vector<frame> stack;
        stack.push_back({&start, 0, visit(start, nullptr, initializer)});
        while (!stack.empty()) {
            frame& f = stack.back();
            if (f.next == f.n->inputs.size()) {
                order_.push_back(f.n);
                stack.pop_back();
                continue;
            }
            std::uint8_t& code = codes_[f.codes + f.next];
            const endpoint& e = f.n->inputs[f.next++];
            if (is_boundary(e)) {
                code = edge_boundary;
                use_boundary(e);
                continue;
            }
            const node* m = src_.graph.find(e.node);
            if (!m) {
                throw graph_error(detail::cat("clone: node '", f.n->name, "' reads '", e.str(), "', which is not in the graph"),
                                  location::at_node(f.n->name, f.n->op));
            }
            if (walked(m)) continue;  // edge_copied
            if (is_variable_op(m->op)) {
                if (o_.init == init_policy::share) code = edge_same;
                reach_var(*m, f.n);
                continue;
            }
            if (o_.init == init_policy::share) {
                if (auto it = snapshot_of_.find(m->name); it != snapshot_of_.end()) {
                    // share: the copies read the original's snapshot
                    if (!same_ && !dst_.graph.contains(m->name)) {
                        throw invalid_argument_error(
                            detail::cat("clone_into: share needs the original '", m->name, "' in the destination graph"),
                            location::at_node(m->name, m->op), "import the original first, or use copy/init");
                    }
                    set_part(*m, true);
                    code = edge_same;
                    if (const node* v = src_.graph.find(it->second)) reach_var(*v);
                    continue;
                }
            }
            if (m->op == "Placeholder" || m->op == "PlaceholderV2") {
                node_facts& pf = facts_[m];
                pf.walked = true;  // for path_to
                pf.parent = f.n;
                throw invalid_argument_error(
                    detail::cat("clone: the boundary does not separate the graph: walking back from the outputs reaches "
                                "placeholder '", m->name, "' (path ", path_to(*m), ")"),
                    location::at_node(m->name, m->op),
                    detail::cat("add '", m->name, "' or a tensor between it and '", f.n->name, "' to the inputs"));
            }
            const node* from = f.n;
            std::uint32_t codes = visit(*m, from, initializer);
            stack.push_back({m, 0, codes});
        }
    }

    [[nodiscard]] bool is_stateful(const std::string& op) {
        auto it = stateful_.find(op);
        if (it != stateful_.end()) return it->second;
        const op_def* d = src_.graph.registry().find(op);
        bool r = (d && d->is_stateful && !stateful_ok(op)) || mutates_variable(op);
        stateful_.emplace(op, r);
        return r;
    }

    /// Marks `n` for copying; returns the offset of its input edges' codes in codes_.
    std::uint32_t visit(const node& n, const node* parent, bool initializer) {
        auto at = static_cast<std::uint32_t>(codes_.size());
        codes_.resize(codes_.size() + n.inputs.size(), edge_copied);
        node_facts& f = facts_[&n];
        f.walked = true;
        f.parent = parent;
        f.codes = at;
        if (is_stateful(n.op)) {
            throw invalid_argument_error(
                detail::cat("clone: the subgraph holds stateful op '", n.name, "' (", n.op, "), path ", path_to(n)),
                location::at_node(n.name, n.op),
                "only variables, their reads and random ops can be copied (not updates); move the boundary past this op");
        }
        if (initializer && is_random_op(n.op)) f.reseed = true;
        return at;
    }

    [[nodiscard]] bool walked(const node* n) const {
        const node_facts* f = facts_.find(n);
        return f && f->walked;
    }

    void reach_var(const node& v, const node* from = nullptr) {
        node_facts& f = facts_[&v];
        if (!f.parent) f.parent = from;
        if (f.reached) return;
        f.reached = true;
        reached_vars_.push_back(&v);
    }

    [[nodiscard]] bool is_part(const node* n) const {
        const node_facts* f = facts_.find(n);
        return f && f->part;
    }

    /// Records source node `n` as part of the copy: `same` (share) uses `n` itself, else "<scope>/<n>".
    void set_part(const node& n, bool same) {
        node_facts& f = facts_[&n];
        if (!f.part) parts_.push_back(&n);
        f.part = true;
        f.same = same;
    }

    void use_boundary(const endpoint& e) {
        if (boundary_seen_.insert(e).second) boundary_used_.push_back(e);
    }

    // ------------------------------------------------------------ variables

    /// Variable facts of the source (VariableDefs, else the graph), found once.
    void vinfo_index() {
        if (indexed_) return;
        if (!found_) find_vinfo();
        indexed_ = true;
        const std::vector<const node*>& nodes = vnodes_;
        for (std::size_t i = 0; i < vinfo_.size(); ++i) {
            if (nodes[i]) facts_[nodes[i]].vinfo = static_cast<std::uint32_t>(i);
        }
        // each variable's VariableDefs, grouped by variable in collection order (pointers: the
        // source is not changed before emit() has made its copies)
        std::vector<std::pair<std::uint32_t, var_def_ref>> found;
        for (auto& [name, c] : src_.collections) {
            if (c.which != collection_def::kind::bytes_list || c.variables.size() != c.values.size()) continue;
            std::size_t guess = 0;  // the variable after the last one: collections mostly list them in vinfo_'s order
            for (auto& vd : c.variables) {
                std::string_view node_name = graft::detail::split_node(vd.variable_name);
                if (guess >= vinfo_.size() || vinfo_[guess].node != node_name || !nodes[guess]) {
                    // a node that is no variable of vinfo_ is never reached as one
                    const node* n = src_.graph.find(node_name);
                    const node_facts* f = n ? facts_.find(n) : nullptr;
                    if (!f || f->vinfo == node_facts::none) continue;
                    guess = f->vinfo;
                }
                found.push_back({static_cast<std::uint32_t>(guess), {&name, &vd}});
                ++guess;
            }
        }
        vdefs_start_.assign(vinfo_.size() + 1, 0);
        for (auto& fd : found) ++vdefs_start_[fd.first + 1];
        for (std::size_t i = 0; i < vinfo_.size(); ++i) vdefs_start_[i + 1] += vdefs_start_[i];
        std::vector<std::uint32_t> next(vdefs_start_.begin(), vdefs_start_.end() - 1);
        vdefs_.resize(found.size());
        for (auto& [i, ref] : found) vdefs_[next[i]++] = ref;
    }

    /// find_variables over the source into vinfo_ / vnodes_; touches nothing else of the cloner.
    void find_vinfo() {
        vinfo_ = graft::detail::find_variables(src_.graph, &src_, &vnodes_);
        found_ = true;
    }

    /// Whether this clone's independent parts run on two threads (clone_options::parallel_from: a
    /// thread costs tens of microseconds, a clone of 10k nodes ~15 ms).
    [[nodiscard]] bool parallel() const {
        return src_.graph.size() >= o_.parallel_from && std::thread::hardware_concurrency() > 1;
    }

    /// `f` started on a thread of its own; an invalid future (the caller runs `f` itself) when no
    /// thread can be started.
    template <class F>
    static std::future<void> beside(F&& f) {
        try {
            return std::async(std::launch::async, std::forward<F>(f));
        } catch (const std::system_error&) {
            return {};
        }
    }

    std::uint32_t info(const node& v) {
        vinfo_index();
        const node_facts* f = facts_.find(&v);
        if (!f || f->vinfo == node_facts::none) {
            throw graph_error("clone: no variable facts for '" + v.name + "'", location::at_node(v.name, v.op));
        }
        return f->vinfo;
    }

    struct var_plan {
        const node* v = nullptr;
        const node* assign = nullptr;
        const node* snapshot = nullptr;
        const node* initial = nullptr;  ///< init: the initializer's value input
        std::uint32_t vinfo = 0;
        const variable_info* vi = nullptr;
    };

    void prepare_variable(const node& v) {
        std::uint32_t vinfo = info(v);
        const variable_info& vi = vinfo_[vinfo];
        if (o_.init == init_policy::share) {
            if (!same_ && !dst_.graph.contains(v.name)) {
                throw invalid_argument_error(
                    detail::cat("clone_into: share needs the original variable '", v.name, "' in the destination graph"),
                    location::at_node(v.name, v.op), "import the original first, or use copy/init");
            }
            set_part(v, true);
            r_.variable_map[v.name] = v.name;
            return;
        }
        var_plan p;
        p.v = &v;
        p.vinfo = vinfo;
        p.vi = &vi;
        p.assign = vi.initializer_name.empty() ? nullptr : src_.graph.find(graft::detail::parse_node(vi.initializer_name));
        if (!p.assign || p.assign->inputs.size() < 2) {
            throw graph_error(detail::cat("clone: variable '", v.name, "' has no initializer (Assign) to copy"),
                              location::at_node(v.name, v.op), "give it an initializer, or clone with share");
        }
        if (!vi.snapshot_name.empty()) p.snapshot = src_node(graft::detail::parse_node(vi.snapshot_name), {facts_.find(&v)->parent});
        std::string nv = prefix_ + v.name;
        set_part(v, false);
        r_.variable_map[v.name] = nv;
        r_.variables.push_back(std::move(nv));
        for (const node* n : {p.assign, p.snapshot}) {
            if (n && !is_part(n)) set_part(*n, false);
        }
        if (o_.init == init_policy::init) {
            const endpoint& iv = p.assign->inputs[1];
            const node* in = src_.graph.find(iv.node);
            if (!in) throw graph_error("clone: initializer input '" + iv.str() + "' is missing", location::at_node(p.assign->name));
            walk(*in, true);
            p.initial = in;
        }
        plans_.push_back(p);
    }

    // ------------------------------------------------------------ emit

    std::string fresh(std::string base) {
        std::string n = base;
        auto copied = [&](const std::string& c) {
            if (c.compare(0, prefix_.size(), prefix_) != 0) return false;
            auto l = lookup(std::string_view(c).substr(prefix_.size()));
            return l && !*l;
        };
        for (int k = 1; taken_.count(n) || copied(n) || dst_.graph.contains(n); ++k) n = base + "_" + std::to_string(k);
        taken_.insert(n);
        return n;
    }

    graft::dtype src_dtype(const endpoint& e) const {
        const node& n = src_.graph.at(e.node);
        auto t = src_.graph.output_dtypes(n);
        if (e.index < 0 || static_cast<std::size_t>(e.index) >= t.size()) {
            throw not_found_error("clone: no tensor '" + e.str() + "'", location::at_tensor(e.str()));
        }
        return base_type(t[static_cast<std::size_t>(e.index)]);
    }

    std::optional<graft::shape> src_shape(const endpoint& e) const {
        const node& n = src_.graph.at(e.node);
        if ((n.op == "Placeholder" || n.op == "PlaceholderV2") && e.index == 0) {
            if (auto* a = n.attr("shape"); a && a->which() == attr_value::kind::shape) return a->shape();
        }
        if (auto* a = n.attr("_output_shapes"); a && a->is_list()) {
            if (auto* l = std::get_if<std::vector<graft::shape>>(&a->list()); l && static_cast<std::size_t>(e.index) < l->size()) {
                return (*l)[static_cast<std::size_t>(e.index)];
            }
        }
        return std::nullopt;
    }

    void make_replacements() {
        for (auto& e : boundary_used_) {
            auto it = map_to_.find(e);
            graft::dtype want = src_dtype(e);
            if (it != map_to_.end()) {
                endpoint t;
                if (!endpoint::try_split(it->second, t) || !dst_.graph.contains(t.node)) {
                    throw not_found_error(detail::cat("clone: input_map '", e.str(), "' -> '", it->second,
                                                      "': no such tensor in the destination graph"),
                                          location::at_tensor(it->second));
                }
                const node& tn = dst_.graph.at(t.node);
                graft::dtype got = graft::dtype::invalid;
                try {
                    auto ts = dst_.graph.output_dtypes(tn);
                    if (t.index < 0 || static_cast<std::size_t>(t.index) >= ts.size()) {
                        throw not_found_error(detail::cat("clone: input_map '", e.str(), "' -> '", it->second, "': ", tn.op,
                                                          " node '", tn.name, "' has ", ts.size(), " output(s)"),
                                              location::at_tensor(it->second));
                    }
                    got = base_type(ts[static_cast<std::size_t>(t.index)]);
                } catch (const not_found_error&) {
                    throw;
                } catch (const graph_error&) {
                    got = graft::dtype::invalid;  // unknown op: no check possible
                }
                if (got != graft::dtype::invalid && got != want) {
                    throw invalid_argument_error(
                        detail::cat("clone: input_map dtype mismatch: '", e.str(), "' is ", dtype_name(want), " but '",
                                    it->second, "' is ", dtype_name(got)),
                        location::at_tensor(e.str()), "map it to a tensor of the same dtype (or Cast first)");
                }
                repl_[e] = t;
                r_.inputs[e.str()] = t.str();
                continue;
            }
            std::string name = fresh(prefix_ + (e.index == 0 ? e.node : e.node + "_" + std::to_string(e.index)));
            node ph(name, "Placeholder");
            ph.attrs.set("dtype", want);
            ph.attrs.set("shape", src_shape(e).value_or(graft::shape::unknown_rank()));
            added_.push_back(std::move(ph));
            repl_[e] = endpoint{name, 0};
            r_.placeholders.push_back(name);
            r_.inputs[e.str()] = endpoint{name, 0}.str();
        }
    }

    /// false: source node `n` is copied as "<scope>/<n>"; true: the copy uses `n` itself (share);
    /// nullopt: not part of the copy.
    [[nodiscard]] std::optional<bool> lookup(std::string_view n) const {
        const node* m = src_.graph.find(n);
        return m ? lookup(*m) : std::nullopt;
    }
    /// As above for a node of the source graph.
    [[nodiscard]] std::optional<bool> lookup(const node& m) const {
        const node_facts* f = facts_.find(&m);
        if (!f) return std::nullopt;
        if (f->part) return f->same;
        if (f->walked) return false;
        return std::nullopt;
    }
    /// The source node `n`: one of `near` when it is among them, else found in the graph (nullptr
    /// when absent). The nodes at hand are compared first since on a large graph a lookup by name
    /// costs several cache misses, and a variable's names mostly name its own nodes.
    [[nodiscard]] const node* src_node(std::string_view n, std::initializer_list<const node*> near) const {
        for (const node* m : near) {
            if (m && m->name == n) return m;
        }
        return src_.graph.find(n);
    }
    /// "<scope>/<n>" in one allocation.
    [[nodiscard]] std::string scoped(std::string_view n) const {
        std::string r;
        r.reserve(prefix_.size() + n.size());
        r += prefix_;
        r += n;
        return r;
    }
    /// The copy's name of source node `n` (itself when shared or not copied).
    std::string mapped(std::string_view n) const {
        auto l = lookup(n);
        return !l || *l ? std::string(n) : scoped(n);
    }
    /// The copy's name of a node that must be copied or shared.
    std::string mapped_at(std::string_view n, std::initializer_list<const node*> near = {}) const {
        const node* m = src_node(n, near);
        auto l = m ? lookup(*m) : std::nullopt;
        if (!l) throw graph_error(detail::cat("clone: '", n, "' was not copied"), location::at_node(std::string(n)));
        return *l ? std::string(n) : scoped(n);
    }
    /// rename_tensor(t, mapped) in one allocation (a clone renames four tensors of each VariableDef),
    /// `near` as in src_node.
    std::string mapped_tensor(std::string_view t, std::initializer_list<const node*> near) const {
        if (t.empty()) return {};
        const auto [lead, name, tail] = split_tensor_name(t);
        const node* m = src_node(name, near);
        auto l = m ? lookup(*m) : std::nullopt;
        bool in_scope = l && !*l;
        std::string r;
        r.reserve(t.size() + (in_scope ? prefix_.size() : 0));
        r += lead;
        if (in_scope) r += prefix_;
        r += name;
        r += tail;
        return r;
    }

    node copy_node(const node& n) const {
        node c;
        copy_into(c, n);
        return c;
    }
    /// Makes the empty node `c` the copy of `n`, member by member rather than copied and then
    /// renamed: the copy of each name and input that would be replaced is an allocation, on every
    /// copied node. Throws graph_error only for a node that was not walked.
    void copy_into(node& c, const node& n) const {
        // every member named, so that one added to graft::node fails to compile here instead of being dropped
        const auto& [name, op, device, inputs, control_inputs, attrs, extra_fields] = n;
        c.name = scoped(name);
        c.op = op;
        if (!o_.clear_devices) c.device = device;
        const node_facts* f = facts_.find(&n);
        c.inputs.reserve(inputs.size());
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            const endpoint& e = inputs[i];
            std::uint8_t code = f && f->walked ? codes_[f->codes + i] : edge_unknown;
            if (code == edge_unknown) {
                if (repl_.count(e)) code = edge_boundary;
                else if (auto l = lookup(e.node)) code = *l ? edge_same : edge_copied;
                else throw graph_error(detail::cat("clone: '", name, "' reads '", e.str(), "', which was not copied"),
                                       location::at_node(name, op));
            }
            if (code == edge_copied) c.inputs.push_back(endpoint{scoped(e.node), e.index});
            else if (code == edge_boundary) c.inputs.push_back(repl_.at(e));
            else c.inputs.push_back(e);
        }
        for (auto& ci : control_inputs) {
            if (lookup(ci)) c.control_inputs.push_back(mapped(ci));
            else if (same_) c.control_inputs.push_back(ci);
        }
        c.attrs = attrs;  // shared until changed
        // one pass over the (sorted, few) attrs for the two this copy may change
        const attr_value* cls_in = nullptr;
        const attr_value* shared_in = nullptr;
        for (const auto& [k, v] : attrs) {
            if (k == "_class") cls_in = &v;
            else if (k == "shared_name") shared_in = &v;
        }
        if (auto* cls = cls_in ? c.attrs.find("_class") : nullptr; cls && cls->is_list()) {
            if (auto* l = std::get_if<std::vector<std::string>>(&cls->list())) {
                std::vector<std::string> items;
                for (auto& s : *l) {
                    if (s.rfind("loc:@", 0) != 0) { items.push_back(s); continue; }
                    std::string t = s.substr(5);
                    if (lookup(t)) items.push_back("loc:@" + mapped(t));
                    else if (same_) items.push_back(s);
                }
                if (items.empty()) c.attrs.erase("_class");
                else *cls = attr_value::list_of(std::move(items));
            }
        }
        // looked up in the original: a found attr of the copy would be unshared even when unchanged
        if (auto* sn = shared_in; sn && sn->which() == attr_value::kind::s && !sn->s().empty()) {
            c.attrs.set("shared_name", attr_value(prefix_ + sn->s()));
        }
        c.extra_fields = extra_fields;
        if (o_.reseed && f && f->reseed) {
            std::int64_t seed = int_attr(n, "seed"), seed2 = int_attr(n, "seed2");
            if (seed != 0 || seed2 != 0) {
                std::int64_t s2 = name_seed(c.name);
                if (s2 == seed2) s2 = (s2 % 0x7ffffffe) + 1;
                c.attrs.set("seed2", s2);
            }
        }
    }

    /// A VariableDef of the original renamed like rename(vd, mapped), with the copy's initial value
    /// `iv`, each name built in one allocation; `near` as in src_node.
    variable_def renamed(const variable_def& vd, const std::string& iv, std::initializer_list<const node*> near) const {
        // every member named, so that one added to variable_def fails to compile here instead of being dropped
        const auto& [variable_name, initial_value_name, initializer_name, snapshot_name, save_slice_info_def, is_resource,
                     trainable, has_trainable, synchronization, aggregation] = vd;
        variable_def d;
        d.variable_name = mapped_tensor(variable_name, near);
        d.initial_value_name = iv;  // replaces initial_value_name
        d.initializer_name = mapped_tensor(initializer_name, near);
        d.snapshot_name = mapped_tensor(snapshot_name, near);
        d.save_slice_info_def = save_slice_info_def;
        if (d.save_slice_info_def) d.save_slice_info_def->full_name = mapped_tensor(save_slice_info_def->full_name, near);
        d.is_resource = is_resource;
        d.trainable = trainable;
        d.has_trainable = has_trainable;
        d.synchronization = synchronization;
        d.aggregation = aggregation;
        return d;
    }

    void emit() {
        make_replacements();
        // the new placeholders come first in the graph, then the copies of walked nodes (made at
        // the commit below), then the variables' nodes
        const std::size_t placeholders = added_.size();
        added_.reserve(placeholders + 4 * plans_.size() + 1);
        std::vector<std::string> assigns;
        assigns.reserve(plans_.size());
        std::vector<std::pair<std::string_view, variable_def>> defs;  // collection name -> VariableDef
        defs.reserve(vdefs_.size() + plans_.size());
        for (auto& p : plans_) {
            const node& v = *p.v;
            added_.push_back(copy_node(v));
            node a = copy_node_partial(*p.assign, v);
            if (o_.init == init_policy::copy) {
                if (!o_.values) {
                    throw invalid_argument_error(
                        detail::cat("clone: init policy copy needs a value source (variable '", v.name, "')"),
                        location::at_node(v.name, v.op),
                        "set clone_options::values = session_values(s) or checkpoint_values(prefix), or use init");
                }
                std::optional<tensor> got = o_.values.read(*p.vi);
                if (!got) {
                    throw not_found_error(detail::cat("clone: no value in ", o_.values.description, " for variable '", v.name,
                                                      "' (checkpoint key '", p.vi->checkpoint_key, "')"),
                                          location::at_node(v.name, v.op),
                                          "initialize or restore the original first, or pass a checkpoint of the original model");
                }
                tensor val = *got;
                if (p.vi->dtype != graft::dtype::invalid && val.type() != p.vi->dtype) {
                    throw invalid_argument_error(detail::cat("clone: value for '", v.name, "' is ", dtype_name(val.type()),
                                                             ", the variable is ", dtype_name(p.vi->dtype)),
                                                 location::at_node(v.name, v.op));
                }
                if (p.vi->shape.rank_known() && !p.vi->shape.compatible_with(val.shape())) {
                    throw invalid_argument_error(detail::cat("clone: value for '", v.name, "' has shape ", val.shape().str(),
                                                             ", the variable is ", p.vi->shape.str()),
                                                 location::at_node(v.name, v.op));
                }
                std::string initial_name = fresh(prefix_ + v.name + "/initial_value");
                node c(initial_name, "Const");
                c.attrs.set("dtype", val.type());
                c.attrs.set("value", val);
                if (!o_.clear_devices) c.device = v.device;
                added_.push_back(std::move(c));
                a.inputs[1] = endpoint{initial_name, 0};
                r_.values[mapped_at(v.name, {&v})] = val;
            } else {
                a.inputs[1] = endpoint{mapped_at(p.assign->inputs[1].node, {p.initial}), p.assign->inputs[1].index};
            }
            std::string iv = a.inputs[1].str();
            std::string an = a.name;
            if (!walked(p.assign)) added_.push_back(std::move(a));
            if (p.snapshot && !walked(p.snapshot)) added_.push_back(copy_node(*p.snapshot));
            // VariableDefs: the collections the original is in
            if (vdefs_start_[p.vinfo] != vdefs_start_[p.vinfo + 1]) {
                for (std::uint32_t k = vdefs_start_[p.vinfo]; k < vdefs_start_[p.vinfo + 1]; ++k) {
                    defs.emplace_back(*vdefs_[k].collection, renamed(*vdefs_[k].def, iv, {&v, p.assign, p.snapshot}));
                }
            } else {
                variable_def d;
                d.variable_name = mapped_at(v.name, {&v}) + ":0";
                d.initializer_name = an;
                d.snapshot_name = p.snapshot ? mapped_at(p.snapshot->name, {p.snapshot}) + ":0" : d.variable_name;
                d.initial_value_name = iv;
                d.is_resource = v.op == "VarHandleOp";
                d.trainable = p.vi->trainable;
                d.has_trainable = true;
                defs.emplace_back("variables", d);
                if (d.trainable) defs.emplace_back("trainable_variables", d);
            }
            assigns.push_back(std::move(an));
        }
        if (!assigns.empty()) {
            node init(fresh(prefix_ + "init"), "NoOp");
            init.control_inputs = std::move(assigns);  // distinct names already; add_control_input's check is quadratic
            r_.init_op = init.name;
            added_.push_back(std::move(init));
        }
        // op definitions the destination lacks (clone_into from a graph with its own ops)
        if (!same_) {
            std::unordered_set<std::string> ops;
            for (std::size_t i = 0; i < placeholders; ++i) ops.insert(added_[i].op);
            for (const node* n : order_) ops.insert(n->op);
            for (std::size_t i = placeholders; i < added_.size(); ++i) ops.insert(added_[i].op);
            for (auto& op : ops) {
                if (dst_.graph.registry().contains(op)) continue;
                if (const function_def* fn = src_.graph.library.find(op)) dst_.graph.add_function(*fn);
                else if (const op_def* d = src_.graph.registry().find(op)) dst_.graph.registry().add(op_def(*d));
            }
        }
        // commit: nothing is added before every check above has passed. The walked nodes' copies,
        // which cannot fail (their edges were classified by the walk), are built in the graph
        // itself: staged and then moved, each would be written twice.
        // The result's names and the VariableDefs in the collections are filled beside the graph's
        // new nodes, on a second thread for a large clone: they write r_.names and
        // dst_.collections, which the nodes' commit does not touch, and read source nodes, whose
        // storage stays put while nodes are added (also when dst_ is src_).
        auto names_and_collections = [&] {
            std::size_t bytes = 0;
            for (const node* n : order_) bytes += n->name.size();
            for (const node* n : parts_) bytes += n->name.size();
            r_.names.start(prefix_, order_.size() + parts_.size(), bytes);
            for (const node* n : order_) r_.names.add(n->name);
            for (const node* n : parts_) {
                const node_facts* f = facts_.find(n);
                if (!f->same && !f->walked) r_.names.add(n->name);
            }
            // each collection looked up once, not once per VariableDef
            std::vector<std::pair<std::string_view, collection_def*>> colls;
            for (auto& [coll, d] : defs) {
                auto it = std::find_if(colls.begin(), colls.end(),
                                       [&coll = coll](const auto& c) { return c.first == coll; });
                if (it == colls.end()) {
                    auto& c = dst_.collections[std::string(coll)];
                    if (c.which == collection_def::kind::none) c.which = collection_def::kind::bytes_list;
                    c.values.reserve(c.values.size() + defs.size());
                    c.variables.reserve(c.variables.size() + defs.size());
                    it = colls.insert(colls.end(), {coll, &c});
                }
                it->second->values.push_back(tf::encode_variable_def(d));
                it->second->variables.push_back(std::move(d));
            }
        };
        std::future<void> side;  // waits in its destructor when the commit below throws
        if (parallel()) side = beside(names_and_collections);
        dst_.graph.reserve(dst_.graph.size() + added_.size() + order_.size());
        for (std::size_t i = 0; i < placeholders; ++i) dst_.graph.add_node(std::move(added_[i]));
        for (const node* n : order_) dst_.graph.add_node_with([&](node& c) { copy_into(c, *n); });
        for (std::size_t i = placeholders; i < added_.size(); ++i) dst_.graph.add_node(std::move(added_[i]));
        if (side.valid()) side.get();
        else names_and_collections();
    }

    /// The Assign of variable `v` copied with its variable input mapped and its value input
    /// (inputs[1]) left empty for the caller.
    node copy_node_partial(const node& a, const node& v) {
        // every member named, as in copy_node
        const auto& [name, op, device, inputs, control_inputs, attrs, extra_fields] = a;
        node c;
        c.name = mapped_at(name, {&a});
        c.op = op;
        if (!o_.clear_devices) c.device = device;
        c.inputs.reserve(inputs.size());
        c.inputs.push_back(endpoint{mapped_at(inputs[0].node, {&v}), inputs[0].index});
        c.inputs.emplace_back();
        c.inputs.insert(c.inputs.end(), inputs.begin() + 2, inputs.end());
        for (auto& ci : control_inputs) {
            if (lookup(ci)) c.control_inputs.push_back(mapped(ci));
            else if (same_) c.control_inputs.push_back(ci);
        }
        c.attrs = attrs;
        c.extra_fields = extra_fields;
        rename_colocation(c, [this](std::string_view s) { return mapped(s); });
        return c;
    }

    [[nodiscard]] static std::string store_key(const node& v) {
        if (auto* a = v.attr("shared_name"); a && a->which() == attr_value::kind::s && !a->s().empty()) return a->s();
        return v.name;
    }

    meta_graph& dst_;
    const meta_graph& src_;
    const clone_options& o_;
    bool same_;
    clone_result r_;
    std::string prefix_;

    std::unordered_set<std::string> bnodes_;
    std::unordered_set<endpoint> btensors_;
    std::unordered_map<endpoint, std::string> map_to_;
    std::unordered_set<endpoint> boundary_seen_;
    std::vector<endpoint> boundary_used_;
    std::unordered_map<endpoint, endpoint> repl_;

    /// How a copied node's input edge is rewritten.
    static constexpr std::uint8_t edge_copied = 0, edge_same = 1, edge_boundary = 2, edge_unknown = 3;
    /// Source nodes walked (to be copied), part of the copy, variables: see node_facts.
    facts_table facts_;
    std::vector<std::uint8_t> codes_;
    std::unordered_map<std::string, bool> stateful_;
    std::vector<const node*> order_, reached_vars_;
    /// Source nodes recorded with set_part, in that order.
    std::vector<const node*> parts_;
    std::unordered_set<std::string> taken_;  ///< new names not of the form "<scope>/<source name>"
    std::unordered_map<std::string, std::string> snapshot_of_;  ///< share: snapshot node -> variable

    bool indexed_ = false, found_ = false;
    std::vector<variable_info> vinfo_;
    std::vector<const node*> vnodes_;  ///< vinfo_[i]'s node in the source (nullptr: none)
    /// A VariableDef of the source and the collection holding it.
    struct var_def_ref {
        const std::string* collection = nullptr;
        const variable_def* def = nullptr;
    };
    /// The VariableDefs of vinfo_[i]: vdefs_[vdefs_start_[i]] up to vdefs_[vdefs_start_[i + 1]].
    std::vector<var_def_ref> vdefs_;
    std::vector<std::uint32_t> vdefs_start_;
    std::vector<var_plan> plans_;
    std::vector<node> added_;

public:
    /// share: index the variables' snapshots before walking.
    void index_snapshots() {
        if (o_.init != init_policy::share) return;
        vinfo_index();
        for (auto& v : vinfo_) {
            if (v.snapshot_name.empty()) continue;
            endpoint e;
            endpoint::try_split(v.snapshot_name, e);
            if (e.node != v.node) snapshot_of_[e.node] = v.node;
        }
    }
};

}  // namespace clone_detail

/// Clones the ops between o.inputs and o.outputs of `src` into `dst` under o.scope (see the top of
/// graft/surgery/clone.hpp). `dst` may be `src`. Throws like clone(); on a throw `dst` is unchanged
/// (except op definitions and functions registered for the copy).
GRAFT_INLINE clone_result clone_into(meta_graph& dst, const meta_graph& src, const clone_options& o) {
    clone_detail::cloner c(dst, src, o);
    c.index_snapshots();
    return c.run();
}

}  // namespace graft::surgery
