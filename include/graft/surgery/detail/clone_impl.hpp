// graft/surgery/detail/clone_impl.hpp — the walk and the copy behind graft/surgery/clone.hpp.
// Include graft/surgery/clone.hpp instead.
#pragma once

#include "graft/surgery/clone.hpp"

namespace graft::surgery {
namespace clone_detail {

inline bool is_random_op(std::string_view op) {
    return op == "RandomUniform" || op == "RandomStandardNormal" || op == "TruncatedNormal" ||
           op == "RandomUniformInt" || op == "RandomGamma" || op == "RandomPoisson" || op == "RandomPoissonV2" ||
           op == "Multinomial" || op == "RandomShuffle" || op == "ParameterizedTruncatedNormal";
}

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

class cloner {
public:
    cloner(meta_graph& dst, const meta_graph& src, const clone_options& o)
        : dst_(dst), src_(src), o_(o), same_(&dst == &src) {}

    clone_result run() {
        r_.scope = o_.scope;
        check_scope();
        map_.reserve(src_.graph.size());
        parent_.reserve(src_.graph.size());
        parse_boundary();
        std::vector<const node*> out_nodes;
        for (auto& s : o_.outputs) out_nodes.push_back(&output_node(s));
        if (out_nodes.empty()) {
            throw invalid_argument_error("clone: no outputs given", {}, "name the tensors or nodes to copy in outputs");
        }
        for (auto* n : out_nodes) walk(*n, false);
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
            auto it = parent_.find(cur);
            if (it == parent_.end() || !it->second.parent) break;
            cur = it->second.parent;
            p = cur->name + " <- " + p;
        }
        return p;
    }

    /// Depth-first from `start` over data inputs, stopping at boundary tensors and variables;
    /// appends nodes to order_ after their inputs.
    void walk(const node& start, bool initializer) {
        if (parent_.count(&start)) return;
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
            if (parent_.count(m)) continue;  // edge_copied
            if (is_variable_op(m->op)) {
                if (o_.init == init_policy::share) code = edge_same;
                var_parent_.emplace(m, f.n);
                reach_var(*m);
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
                    map_[m->name] = true;
                    code = edge_same;
                    if (const node* v = src_.graph.find(it->second)) reach_var(*v);
                    continue;
                }
            }
            if (m->op == "Placeholder" || m->op == "PlaceholderV2") {
                parent_.emplace(m, visit_info{f.n, 0});
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
        parent_.emplace(&n, visit_info{parent, at});
        if (is_stateful(n.op)) {
            throw invalid_argument_error(
                detail::cat("clone: the subgraph holds stateful op '", n.name, "' (", n.op, "), path ", path_to(n)),
                location::at_node(n.name, n.op),
                "only variables, their reads and random ops can be copied (not updates); move the boundary past this op");
        }
        if (initializer && is_random_op(n.op)) reseed_.insert(&n);
        return at;
    }

    void reach_var(const node& v) {
        if (var_seen_.insert(&v).second) reached_vars_.push_back(&v);
    }

    void use_boundary(const endpoint& e) {
        if (boundary_seen_.insert(e).second) boundary_used_.push_back(e);
    }

    // ------------------------------------------------------------ variables

    /// Variable facts of the source (VariableDefs, else the graph), found once.
    void vinfo_index() {
        if (indexed_) return;
        indexed_ = true;
        for (auto& v : find_variables(src_)) {
            vindex_[v.node] = vinfo_.size();
            vinfo_.push_back(std::move(v));
        }
        for (auto& [name, c] : src_.collections) {
            if (c.which != collection_def::kind::bytes_list || c.variables.size() != c.values.size()) continue;
            for (auto& vd : c.variables) {
                endpoint e;
                endpoint::try_split(vd.variable_name, e);
                var_colls_[e.node].push_back({name, vd});
            }
        }
    }

    const variable_info& info(const node& v) {
        vinfo_index();
        auto it = vindex_.find(v.name);
        if (it == vindex_.end()) {
            throw graph_error("clone: no variable facts for '" + v.name + "'", location::at_node(v.name, v.op));
        }
        return vinfo_[it->second];
    }

    struct var_plan {
        const node* v = nullptr;
        const node* assign = nullptr;
        const node* snapshot = nullptr;
        endpoint initial;  ///< in the destination (copy: the new Const)
        const variable_info* vi = nullptr;
    };

    void prepare_variable(const node& v) {
        const variable_info& vi = info(v);
        if (o_.init == init_policy::share) {
            if (!same_ && !dst_.graph.contains(v.name)) {
                throw invalid_argument_error(
                    detail::cat("clone_into: share needs the original variable '", v.name, "' in the destination graph"),
                    location::at_node(v.name, v.op), "import the original first, or use copy/init");
            }
            map_[v.name] = true;
            r_.variable_map[v.name] = v.name;
            return;
        }
        var_plan p;
        p.v = &v;
        p.vi = &vi;
        p.assign = vi.initializer_name.empty() ? nullptr : src_.graph.find(endpoint::parse(vi.initializer_name).node);
        if (!p.assign || p.assign->inputs.size() < 2) {
            throw graph_error(detail::cat("clone: variable '", v.name, "' has no initializer (Assign) to copy"),
                              location::at_node(v.name, v.op), "give it an initializer, or clone with share");
        }
        if (!vi.snapshot_name.empty()) p.snapshot = src_.graph.find(endpoint::parse(vi.snapshot_name).node);
        std::string nv = prefix_ + v.name;
        map_[v.name] = false;
        r_.variable_map[v.name] = nv;
        r_.variables.push_back(nv);
        for (const node* n : {p.assign, p.snapshot}) {
            if (n && !map_.count(n->name)) map_[n->name] = false;
        }
        if (o_.init == init_policy::init) {
            const endpoint& iv = p.assign->inputs[1];
            const node* in = src_.graph.find(iv.node);
            if (!in) throw graph_error("clone: initializer input '" + iv.str() + "' is missing", location::at_node(p.assign->name));
            walk(*in, true);
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
        if (auto it = map_.find(n); it != map_.end()) return it->second;
        if (const node* m = src_.graph.find(n); m && parent_.count(m)) return false;
        return std::nullopt;
    }
    /// The copy's name of source node `n` (itself when shared or not copied).
    std::string mapped(std::string_view n) const {
        auto l = lookup(n);
        return !l || *l ? std::string(n) : prefix_ + std::string(n);
    }
    /// The copy's name of a node that must be copied or shared.
    std::string mapped_at(std::string_view n) const {
        auto l = lookup(n);
        if (!l) throw graph_error(detail::cat("clone: '", n, "' was not copied"), location::at_node(std::string(n)));
        return *l ? std::string(n) : prefix_ + std::string(n);
    }

    node copy_node(const node& n) {
        node c = n;
        c.name = prefix_ + n.name;
        auto vi = parent_.find(&n);
        for (std::size_t i = 0; i < c.inputs.size(); ++i) {
            endpoint& e = c.inputs[i];
            std::uint8_t code = vi != parent_.end() ? codes_[vi->second.codes + i] : edge_unknown;
            if (code == edge_unknown) {
                if (repl_.count(e)) code = edge_boundary;
                else if (auto l = lookup(e.node)) code = *l ? edge_same : edge_copied;
                else throw graph_error(detail::cat("clone: '", n.name, "' reads '", e.str(), "', which was not copied"),
                                       location::at_node(n.name, n.op));
            }
            if (code == edge_copied) e.node = prefix_ + e.node;
            else if (code == edge_boundary) e = repl_.at(e);
        }
        if (!n.control_inputs.empty()) {
            std::vector<std::string> ctl;
            for (auto& ci : n.control_inputs) {
                if (lookup(ci)) ctl.push_back(mapped(ci));
                else if (same_) ctl.push_back(ci);
            }
            c.control_inputs = std::move(ctl);
        }
        if (auto* cls = c.attrs.find("_class"); cls && cls->is_list()) {
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
        if (auto* sn = c.attrs.find("shared_name"); sn && sn->which() == attr_value::kind::s && !sn->s().empty()) {
            *sn = attr_value(prefix_ + sn->s());
        }
        if (o_.clear_devices) c.device.clear();
        if (o_.reseed && reseed_.count(&n)) {
            std::int64_t seed = int_attr(n, "seed"), seed2 = int_attr(n, "seed2");
            if (seed != 0 || seed2 != 0) {
                std::int64_t s2 = name_seed(c.name);
                if (s2 == seed2) s2 = (s2 % 0x7ffffffe) + 1;
                c.attrs.set("seed2", s2);
            }
        }
        return c;
    }

    void emit() {
        make_replacements();
        added_.reserve(order_.size() + 4 * plans_.size() + boundary_used_.size() + 1);
        for (const node* n : order_) added_.push_back(copy_node(*n));
        std::vector<std::string> assigns;
        std::vector<std::pair<std::string, variable_def>> defs;
        for (auto& p : plans_) {
            const node& v = *p.v;
            added_.push_back(copy_node(v));
            node a = copy_node_partial(*p.assign);
            std::string initial_name;
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
                initial_name = fresh(prefix_ + v.name + "/initial_value");
                node c(initial_name, "Const");
                c.attrs.set("dtype", val.type());
                c.attrs.set("value", val);
                if (!o_.clear_devices) c.device = v.device;
                added_.push_back(std::move(c));
                a.inputs[1] = endpoint{initial_name, 0};
                r_.values[mapped_at(v.name)] = val;
            } else {
                a.inputs[1] = endpoint{mapped_at(p.assign->inputs[1].node), p.assign->inputs[1].index};
                initial_name = a.inputs[1].node;
            }
            std::string an = a.name;
            if (!parent_.count(p.assign)) added_.push_back(std::move(a));
            assigns.push_back(an);
            if (p.snapshot && !parent_.count(p.snapshot)) added_.push_back(copy_node(*p.snapshot));
            // VariableDefs: the collections the original is in
            rename_fn f = [this](std::string_view s) { return mapped(s); };
            endpoint iv{initial_name, o_.init == init_policy::copy ? 0 : p.assign->inputs[1].index};
            auto cit = var_colls_.find(v.name);
            if (cit != var_colls_.end()) {
                for (auto& [coll, vd] : cit->second) {
                    variable_def d = rename(vd, f);
                    d.initial_value_name = iv.str();
                    defs.emplace_back(coll, std::move(d));
                }
            } else {
                variable_def d;
                d.variable_name = mapped_at(v.name) + ":0";
                d.initializer_name = an;
                d.snapshot_name = p.snapshot ? mapped_at(p.snapshot->name) + ":0" : d.variable_name;
                d.initial_value_name = iv.str();
                d.is_resource = v.op == "VarHandleOp";
                d.trainable = p.vi->trainable;
                d.has_trainable = true;
                defs.emplace_back("variables", d);
                if (d.trainable) defs.emplace_back("trainable_variables", d);
            }
        }
        if (!assigns.empty()) {
            node init(fresh(prefix_ + "init"), "NoOp");
            init.control_inputs = assigns;  // distinct names already; add_control_input's check is quadratic
            r_.init_op = init.name;
            added_.push_back(std::move(init));
        }
        // op definitions the destination lacks (clone_into from a graph with its own ops)
        if (!same_) {
            std::unordered_set<std::string> ops;
            for (auto& n : added_) ops.insert(n.op);
            for (auto& op : ops) {
                if (dst_.graph.registry().contains(op)) continue;
                if (const function_def* fn = src_.graph.library.find(op)) dst_.graph.add_function(*fn);
                else if (const op_def* d = src_.graph.registry().find(op)) dst_.graph.registry().add(op_def(*d));
            }
        }
        // commit: nothing is added before every check above has passed
        r_.names.reserve(order_.size() + map_.size());
        for (const node* n : order_) r_.names.emplace(n->name, prefix_ + n->name);
        for (auto& [from, same] : map_) {
            if (!same) r_.names.emplace(std::string(from), prefix_ + std::string(from));
        }
        dst_.graph.reserve(dst_.graph.size() + added_.size());
        for (auto& n : added_) dst_.graph.add_node(std::move(n));
        for (auto& [coll, d] : defs) {
            auto& c = dst_.collections[coll];
            if (c.which == collection_def::kind::none) c.which = collection_def::kind::bytes_list;
            c.values.push_back(tf::encode_variable_def(d));
            c.variables.push_back(std::move(d));
        }
    }

    /// The Assign copied with its variable input mapped and its value input left for the caller.
    node copy_node_partial(const node& a) {
        node c = a;
        c.name = mapped_at(a.name);
        c.inputs[0] = endpoint{mapped_at(a.inputs[0].node), a.inputs[0].index};
        std::vector<std::string> ctl;
        for (auto& ci : a.control_inputs) {
            if (lookup(ci)) ctl.push_back(mapped(ci));
            else if (same_) ctl.push_back(ci);
        }
        c.control_inputs = std::move(ctl);
        rename_colocation(c, [this](std::string_view s) { return mapped(s); });
        if (o_.clear_devices) c.device.clear();
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

    std::unordered_set<const node*> reseed_, var_seen_;
    /// How a copied node's input edge is rewritten.
    static constexpr std::uint8_t edge_copied = 0, edge_same = 1, edge_boundary = 2, edge_unknown = 3;
    struct visit_info {
        const node* parent;   ///< the consumer the walk came from (nullptr for a start node)
        std::uint32_t codes;  ///< offset of its input edges' codes in codes_
    };
    /// Nodes walked (to be copied).
    std::unordered_map<const node*, visit_info> parent_;
    std::unordered_map<const node*, const node*> var_parent_;
    std::vector<std::uint8_t> codes_;
    std::unordered_map<std::string, bool> stateful_;
    std::vector<const node*> order_, reached_vars_;
    /// Source nodes not walked but part of the copy (variables, their Assign and snapshot) -> false:
    /// copied as "<scope>/<name>"; true: the copy uses the original (share). Walked nodes: parent_.
    std::unordered_map<std::string_view, bool> map_;
    std::unordered_set<std::string> taken_;  ///< new names not of the form "<scope>/<source name>"
    std::unordered_map<std::string, std::string> snapshot_of_;  ///< share: snapshot node -> variable

    bool indexed_ = false;
    std::vector<variable_info> vinfo_;
    std::unordered_map<std::string, std::size_t> vindex_;
    std::unordered_map<std::string, std::vector<std::pair<std::string, variable_def>>> var_colls_;
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
inline clone_result clone_into(meta_graph& dst, const meta_graph& src, const clone_options& o) {
    clone_detail::cloner c(dst, src, o);
    c.index_snapshots();
    return c.run();
}

}  // namespace graft::surgery
