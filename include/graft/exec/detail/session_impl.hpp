// Implementation of graft::exec::session (planning and running). Include graft/exec/session.hpp.
#pragma once

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace graft::exec {

namespace impl {

inline endpoint parse_fetch(const std::string& name) {
    std::string_view s = name;
    if (!s.empty() && s.front() == '^') s.remove_prefix(1);
    return endpoint::parse(s);
}

inline std::string target_name(const std::string& t) {
    std::string_view s = t;
    if (!s.empty() && s.front() == '^') s.remove_prefix(1);
    endpoint e;
    endpoint::try_split(s, e);
    return e.node;
}

inline bool is_enter(std::string_view op) { return op == "Enter" || op == "RefEnter"; }
inline bool is_exit(std::string_view op) { return op == "Exit" || op == "RefExit"; }
inline bool is_next_iteration(std::string_view op) { return op == "NextIteration" || op == "RefNextIteration"; }

/// "in the fused step of a (MatMul), b (BiasAdd), c (Relu): " for a step fuse_chains made, else "".
inline std::string fused_prefix(const node& n) {
    const attr_value* from = n.attr("_fused_from");
    if (!from || !from->is_list()) return {};
    std::string s = "in the fused step of ";
    for (const auto& f : from->list_of<std::string>()) s += f + ", ";
    s.resize(s.size() - 2);
    return s + " (session_options::fuse_ops = false runs them apart): ";
}

/// `fusable_activation` on the op's line of the op table (Relu, Relu6, Elu, LeakyRelu).
inline bool is_fusable_activation(std::string_view op) { return traits_of(op).fusable_activation; }

/// The remapper (session_options::fuse_ops): in `topo`, each MatMul / Conv2D (float32, on the
/// CPU) whose only reader is a BiasAdd, and that BiasAdd's only reader an activation, become one
/// _FusedMatMul / _FusedConv2D node (kept in p.fused_nodes) at the place of the last node of the
/// chain and named as it. A node that is fetched, fed past, a target or a control input stays.
/// `replaced` maps the chain's last node to its fused node.
template <class FeedIndex, class Placed>
std::vector<const node*> fuse_chains(const graph& g, const std::vector<const node*>& topo, const FeedIndex& feed_index,
                                     const std::vector<endpoint>& fetches, const std::vector<const node*>& targets,
                                     const Placed& placed, plan& p,
                                     std::unordered_map<const node*, const node*>& replaced) {
    std::unordered_map<const node*, int> readers;  // data edges, fetches, control edges, targets
    std::unordered_map<const node*, const node*> only_reader;
    for (const node* n : topo) {
        for (auto& in : n->inputs) {
            if (feed_index.count(in)) continue;
            const node* src = g.find(in.node);
            ++readers[src];
            only_reader[src] = n;
        }
        for (auto& c : n->control_inputs) readers[g.find(c)] += 2;
    }
    for (auto& e : fetches) readers[g.find(e.node)] += 2;
    for (const node* t : targets) readers[t] += 2;
    auto on_cpu_float = [&](const node* n) {
        auto it = placed.find(n);
        const attr_value* t = n->attr("T");
        return it != placed.end() && it->second.dev.is_cpu() && t && t->which() == attr_value::kind::type &&
               t->type() == dtype::float32;
    };
    // the single data reader of n's output 0, reading it as input 0, or null
    auto sole_reader = [&](const node* n) -> const node* {
        auto r = readers.find(n);
        if (r == readers.end() || r->second != 1) return nullptr;
        const node* next = only_reader.at(n);
        if (next->inputs.empty() || next->inputs[0] != endpoint{n->name, 0} || feed_index.count(next->inputs[0]))
            return nullptr;
        for (std::size_t i = 1; i < next->inputs.size(); ++i)
            if (next->inputs[i].node == n->name) return nullptr;
        return next;
    };
    auto format = [](const node* n) {
        const attr_value* f = n->attr("data_format");
        return f && f->which() == attr_value::kind::s ? f->s() : std::string("NHWC");
    };
    std::unordered_set<const node*> absorbed;
    std::unordered_map<const node*, const node*> fused_at;  // last node of a chain -> fused node
    for (const node* a : topo) {
        if ((a->op != "MatMul" && a->op != "Conv2D") || !on_cpu_float(a) || a->inputs.size() != 2) continue;
        const node* b = sole_reader(a);
        if (!b || b->op != "BiasAdd" || b->inputs.size() != 2 || !on_cpu_float(b)) continue;
        if (format(b) != (a->op == "Conv2D" ? format(a) : std::string("NHWC"))) continue;
        const node* c = sole_reader(b);
        if (c && (!is_fusable_activation(c->op) || c->inputs.size() != 1 || !on_cpu_float(c))) c = nullptr;
        const node* last = c ? c : b;
        node f(last->name, a->op == "MatMul" ? "_FusedMatMul" : "_FusedConv2D",
               {a->inputs[0], a->inputs[1], b->inputs[1]});
        f.device = a->device;
        f.attrs = a->attrs;
        std::vector<std::string> ops{"BiasAdd"};
        if (c) ops.push_back(c->op);
        f.attrs.set("fused_ops", attr_value::list_of(std::move(ops)));
        f.attrs.set("num_args", attr_value(std::int64_t{1}));
        if (c && c->op == "LeakyRelu") {
            const attr_value* alpha = c->attr("alpha");
            f.attrs.set("leakyrelu_alpha", attr_value(alpha ? alpha->f() : 0.2f));
        }
        std::vector<std::string> from;  // for error messages: the step runs these nodes
        for (const node* n : {a, b, c}) {
            if (!n) continue;
            f.control_inputs.insert(f.control_inputs.end(), n->control_inputs.begin(), n->control_inputs.end());
            from.push_back(n->name + " (" + n->op + ")");
        }
        f.attrs.set("_fused_from", attr_value::list_of(std::move(from)));
        p.fused_nodes.push_back(std::move(f));
        absorbed.insert(a);
        if (c) absorbed.insert(b);
        fused_at[last] = &p.fused_nodes.back();
        replaced[last] = &p.fused_nodes.back();
    }
    // A MatMul whose only reader is an Apply/ResourceApplyGradientDescent taking it as delta (a
    // weight gradient straight into plain SGD) becomes one _MatMul[Resource]ApplyGradientDescent at
    // the update's place (ops::apply_gradient_descent_of_product: the same bits, no gradient tensor).
    for (const node* a : topo) {
        if (a->op != "MatMul" || !on_cpu_float(a) || a->inputs.size() != 2 || absorbed.count(a)) continue;
        auto r = readers.find(a);
        if (r == readers.end() || r->second != 1) continue;
        const node* u = only_reader.at(a);
        const bool resource = u->op == "ResourceApplyGradientDescent";
        if ((!resource && u->op != "ApplyGradientDescent") || u->inputs.size() != 3 || !on_cpu_float(u) ||
            u->inputs[2] != endpoint{a->name, 0} || u->inputs[0].node == a->name || u->inputs[1].node == a->name ||
            fused_at.count(u))
            continue;
        node f(u->name, resource ? "_MatMulResourceApplyGradientDescent" : "_MatMulApplyGradientDescent",
               {u->inputs[0], u->inputs[1], a->inputs[0], a->inputs[1]});
        f.device = u->device;
        f.attrs = u->attrs;
        for (const char* t : {"transpose_a", "transpose_b"}) {
            if (const attr_value* v = a->attr(t)) f.attrs.set(t, *v);
        }
        f.control_inputs = a->control_inputs;
        f.control_inputs.insert(f.control_inputs.end(), u->control_inputs.begin(), u->control_inputs.end());
        f.attrs.set("_fused_from", attr_value::list_of(std::vector<std::string>{a->name + " (" + a->op + ")",
                                                                              u->name + " (" + u->op + ")"}));
        p.fused_nodes.push_back(std::move(f));
        absorbed.insert(a);
        fused_at[u] = &p.fused_nodes.back();
        replaced[u] = &p.fused_nodes.back();
    }
    if (fused_at.empty()) return topo;
    std::vector<const node*> out;
    out.reserve(topo.size());
    for (const node* n : topo) {
        if (absorbed.count(n)) continue;
        auto it = fused_at.find(n);
        out.push_back(it == fused_at.end() ? n : it->second);
    }
    return out;
}

/// Kahn's algorithm over items 0..n-1 with edges succ; among the ready items the one with the
/// smallest rank (`rank[i]`, 1 when absent: 0 = the op's trait run_early, 2 = run_late) goes
/// first, ties to the smaller item. Returns the order, shorter than n when the items form a cycle
/// (indeg then says which are on it).
inline std::vector<int> kahn_order(std::size_t n, const std::vector<std::vector<int>>& succ, std::vector<int>& indeg,
                                   const std::vector<std::uint8_t>* rank = nullptr) {
    auto key = [&](int i) { return std::pair<int, int>{rank ? (*rank)[static_cast<std::size_t>(i)] : 1, i}; };
    std::set<std::pair<int, int>> ready;
    for (std::size_t i = 0; i < n; ++i) if (indeg[i] == 0) ready.insert(key(static_cast<int>(i)));
    std::vector<int> order;
    order.reserve(n);
    while (!ready.empty()) {
        int i = ready.begin()->second;
        ready.erase(ready.begin());
        order.push_back(i);
        for (int s : succ[static_cast<std::size_t>(i)]) if (--indeg[static_cast<std::size_t>(s)] == 0) ready.insert(key(s));
    }
    return order;
}

/// Groups the nodes of each while loop (TF frame) into one contiguous step range, nested loops
/// inside their parent's range, and fills p.loops. `topo` is a valid order of the needed nodes
/// with back edges ignored. Frames follow TF: an Enter opens the frame named by its frame_name
/// (within its input's frame), an Exit's consumers are back in the parent frame, every other node
/// is in the innermost frame of its inputs. Throws graph_error for a loop without a LoopCond or
/// a loop whose collapsed dependencies form a cycle.
template <class FeedIndex>
std::vector<const node*> order_loops(const graph& g, const std::vector<const node*>& topo, const FeedIndex& feed_index,
                                     plan& p) {
    struct frame { int parent = -1; int depth = 0; std::string name; const node* first_enter = nullptr; };
    std::vector<frame> frames{frame{}};
    std::map<std::pair<int, std::string>, int> frame_ids;
    std::unordered_map<const node*, int> frame_of, pos;
    for (std::size_t i = 0; i < topo.size(); ++i) pos[topo[i]] = static_cast<int>(i);
    auto source_frame = [&](const node* src) -> int {
        auto it = frame_of.find(src);
        if (it == frame_of.end()) return 0;
        int f = it->second;
        return is_exit(src->op) ? std::max(frames[static_cast<std::size_t>(f)].parent, 0) : f;
    };
    for (const node* n : topo) {
        int f = 0;
        auto consider = [&](const node* src) {
            if (!src || is_next_iteration(src->op)) return;
            int sf = source_frame(src);
            if (frames[static_cast<std::size_t>(sf)].depth > frames[static_cast<std::size_t>(f)].depth) f = sf;
        };
        for (auto& in : n->inputs) if (!feed_index.count(in)) consider(g.find(in.node));
        for (auto& c : n->control_inputs) consider(g.find(c));
        if (is_enter(n->op)) {
            const attr_value* fn = n->attr("frame_name");
            std::string name = fn ? fn->s() : std::string();
            auto [it, fresh] = frame_ids.try_emplace({f, name}, static_cast<int>(frames.size()));
            if (fresh) frames.push_back(frame{f, frames[static_cast<std::size_t>(f)].depth + 1, name, n});
            f = it->second;
        }
        frame_of[n] = f;
    }
    // The item of frame F that node n belongs to: the node itself (n directly in F), the child
    // frame of F containing n (as -(child+1)), or nullopt when n is outside F.
    auto item_in = [&](const node* n, int F) -> std::optional<int> {
        int f = frame_of.at(n);
        if (f == F) return pos.at(n);
        while (f > 0 && frames[static_cast<std::size_t>(f)].parent != F) f = frames[static_cast<std::size_t>(f)].parent;
        if (f <= 0) return std::nullopt;
        return -(f + 1);
    };
    std::vector<const node*> out;
    out.reserve(topo.size());
    std::unordered_map<int, int> loop_of_frame;
    auto emit = [&](auto&& self, int F, int parent_loop) -> void {
        // Items of F in first-appearance order; edges between them from every member's inputs.
        std::vector<int> items;
        std::unordered_map<int, int> index;
        std::vector<std::vector<const node*>> members;
        for (const node* n : topo) {
            auto it = item_in(n, F);
            if (!it) continue;
            auto [e, fresh] = index.try_emplace(*it, static_cast<int>(items.size()));
            if (fresh) { items.push_back(*it); members.emplace_back(); }
            members[static_cast<std::size_t>(e->second)].push_back(n);
        }
        std::vector<std::vector<int>> succ(items.size());
        std::vector<int> indeg(items.size(), 0);
        for (std::size_t k = 0; k < items.size(); ++k) {
            std::set<int> preds;
            for (const node* n : members[k]) {
                auto add = [&](const node* src) {
                    if (!src || is_next_iteration(src->op) || !frame_of.count(src)) return;
                    auto si = item_in(src, F);
                    if (!si) return;
                    int from = index.at(*si);
                    if (from != static_cast<int>(k)) preds.insert(from);
                };
                for (auto& in : n->inputs) if (!feed_index.count(in)) add(g.find(in.node));
                for (auto& c : n->control_inputs) add(g.find(c));
            }
            for (int from : preds) { succ[static_cast<std::size_t>(from)].push_back(static_cast<int>(k)); ++indeg[k]; }
        }
        auto order = kahn_order(items.size(), succ, indeg);
        if (order.size() != items.size()) {
            const auto& fr = frames[static_cast<std::size_t>(F)];
            throw graph_error("the while loop '" + fr.name + "' and the nodes around it depend on each other in a cycle",
                              location::at_node(fr.first_enter ? fr.first_enter->name : std::string()),
                              "a loop's inputs may not depend on its outputs");
        }
        for (int k : order) {
            int item = items[static_cast<std::size_t>(k)];
            if (item >= 0) { out.push_back(topo[static_cast<std::size_t>(item)]); continue; }
            int child = -item - 1;
            plan::loop lp;
            lp.frame = frames[static_cast<std::size_t>(child)].name;
            lp.parent = parent_loop;
            lp.begin = static_cast<int>(out.size());
            int L = static_cast<int>(p.loops.size());
            p.loops.push_back(lp);
            loop_of_frame[child] = L;
            self(self, child, L);
            p.loops[static_cast<std::size_t>(L)].end = static_cast<int>(out.size());
        }
    };
    emit(emit, 0, -1);
    // What each loop needs at run time, by step index (= position in `out`).
    for (std::size_t i = 0; i < out.size(); ++i) {
        const node* n = out[i];
        int f = frame_of.at(n);
        if (f == 0) continue;
        auto& lp = p.loops[static_cast<std::size_t>(loop_of_frame.at(f))];
        int step = static_cast<int>(i);
        if (n->op == "LoopCond") {
            if (lp.cond_step >= 0) {
                throw graph_error("while loop '" + lp.frame + "' has two LoopCond nodes", location::at_node(n->name, n->op));
            }
            lp.cond_step = step;
        } else if (is_enter(n->op)) {
            const attr_value* c = n->attr("is_constant");
            (c && c->b() ? lp.constant_enter_steps : lp.enter_steps).push_back(step);
        } else if (is_next_iteration(n->op)) {
            lp.next_iteration_steps.push_back(step);
        }
    }
    p.loop_starting_at.assign(out.size(), -1);
    for (std::size_t L = p.loops.size(); L-- > 0;) {
        auto& lp = p.loops[L];
        if (lp.cond_step < 0) {
            const auto* first = lp.begin < lp.end ? out[static_cast<std::size_t>(lp.begin)] : nullptr;
            throw graph_error("while loop '" + lp.frame + "' has no LoopCond node in this run",
                              location::at_node(first ? first->name : lp.frame, first ? first->op : ""),
                              "fetch the loop's Exit outputs so its condition is part of the run");
        }
        p.loop_starting_at[static_cast<std::size_t>(lp.begin)] = static_cast<int>(L);
    }
    return out;
}

/// session::prepare's phases, in order; each reads what the ones before it left in the members.
///   resolve       feeds, fetches and targets as endpoints / nodes, checked against the graph
///   prune         the nodes the fetches and targets need, stopping at fed tensors
///   place         a device and kernel per needed node (every missing kernel reported at once)
///   order         Kahn order (loops laid out as frames), then the remapper's fused chains
///   assign_slots  one value slot per output, each step's input slots and last uses
class plan_builder {
public:
    plan_builder(const graph& g, session_state& state, const std::vector<std::string>& feed_names,
                 const std::vector<std::string>& fetches, const std::vector<std::string>& targets)
        : g_(g), state_(state), kernels_(kernel_registry::global()), opts_(state.options), feed_names_(feed_names),
          fetches_(fetches), targets_(targets), p_(std::make_unique<plan>()) {}

    /// The plan, or what the first failing phase throws.
    std::unique_ptr<plan> build() {
        resolve();
        prune();
        place();
        order();
        assign_slots();
        hoist_constants();
        return std::move(p_);
    }

private:
    void resolve() {
        // Feeds and fetches as endpoints, checked against the graph.
        auto check_endpoint = [&](const endpoint& e, const char* what) {
            const node* n = g_.find(e.node);
            if (!n) {
                (void)g_.at(e.node);  // throws not_found_error with close names
            }
            auto k = n->try_num_outputs(g_.registry());
            if (k && (e.index < 0 || e.index >= *k)) {
                throw not_found_error(detail::cat(what, " '", e.str(), "': op ", n->op, " has ", *k, " outputs"),
                                      location::at_node(n->name, n->op).with_tensor(e.str()));
            }
        };
        for (std::size_t i = 0; i < feed_names_.size(); ++i) {
            auto e = endpoint::parse(feed_names_[i]);
            check_endpoint(e, "feed");
            if (!feed_index_.emplace(e, static_cast<int>(i)).second) {
                throw invalid_argument_error(detail::cat("tensor '", e.str(), "' is fed twice"), location::at_tensor(e.str()));
            }
        }
        for (auto& f : fetches_) {
            fetch_eps_.push_back(impl::parse_fetch(f));
            check_endpoint(fetch_eps_.back(), "fetch");
        }
        for (auto& t : targets_) target_nodes_.push_back(&g_.at(impl::target_name(t)));
    }

    void prune() {
        // Prune: everything the fetches and targets reach, stopping at fed tensors.
        std::vector<const node*> stack;
        auto visit = [&](const node* n) {
            if (needed_.insert(n).second) stack.push_back(n);
        };
        for (auto& e : fetch_eps_) {
            if (!feed_index_.count(e)) visit(g_.find(e.node));
        }
        for (auto* n : target_nodes_) visit(n);
        while (!stack.empty()) {
            const node* n = stack.back();
            stack.pop_back();
            for (auto& in : n->inputs) {
                if (feed_index_.count(in)) continue;
                const node* src = g_.find(in.node);
                if (!src) {
                    throw graph_error(detail::cat("input '", in.input_str(), "' names a node that is not in the graph"),
                                      location::at_node(n->name, n->op), "fix the graph or feed that tensor");
                }
                visit(src);
            }
            for (auto& c : n->control_inputs) {
                const node* src = g_.find(c);
                if (!src) {
                    throw graph_error(detail::cat("control input '^", c, "' names a node that is not in the graph"),
                                      location::at_node(n->name, n->op));
                }
                visit(src);
            }
        }
    }

    void place() {
        // Placement and kernels, all missing ones reported at once.
        std::map<std::string, std::vector<std::string>> missing;
        for (auto& n : g_) {
            if (!needed_.count(&n)) continue;
            auto d = place_node(n, g_.registry(), kernels_, opts_, [](device_kind k) { return device_count(k); });
            if (!d.kernel) missing[n.op].push_back(n.name);
            placed_.emplace(&n, std::move(d));
        }
        // A constant placed on a device whose every reader wants it on the host (shapes, axes, an
        // optimizer's scalars: kernel_def::host_inputs) or runs on the CPU stays on the host, as TF's
        // placer keeps host-memory constants there: no device copy, no synchronizing copy back.
        {
            std::unordered_map<const node*, bool> host_only;
            for (auto& n : g_) {
                if (!needed_.count(&n)) continue;
                const auto& rd = placed_.at(&n);
                for (std::size_t k = 0; k < n.inputs.size(); ++k) {
                    const node* src = g_.find(n.inputs[k].node);
                    if (!src || src->op != "Const" || feed_index_.count(n.inputs[k])) continue;
                    auto it = placed_.find(src);
                    if (it == placed_.end() || it->second.dev.is_cpu()) continue;
                    bool on_host = rd.dev.is_cpu() || (rd.kernel && rd.kernel->def.reads_on_host(static_cast<int>(k)));
                    auto [h, fresh] = host_only.try_emplace(src, on_host);
                    if (!fresh) h->second = h->second && on_host;
                }
            }
            for (auto& [src, only_host] : host_only) {
                if (!only_host) continue;
                auto& d = placed_.at(src);
                if (const auto* cpu = kernels_.find_entry(device_kind::cpu, src->op)) {
                    d.dev = device{};
                    d.kernel = cpu;
                    d.note = "kept on the host: every reader takes it in host memory";
                }
            }
        }
        if (opts_.log_device_placement) {
            for (auto& n : g_) {
                if (!needed_.count(&n)) continue;
                const auto& d = placed_.at(&n);
                std::cerr << "graft: " << n.name << " (" << n.op << ") -> " << d.dev.str()
                          << (d.note.empty() ? "" : "  [" + d.note + "]") << "\n";
            }
        }
        if (!missing.empty()) {
            std::string msg = "graft has no CPU kernel for ";
            std::string first_node, first_op;
            for (auto& [op, nodes] : missing) {
                msg += "op " + op + " (node" + (nodes.size() > 1 ? "s " : " ");
                for (std::size_t i = 0; i < nodes.size() && i < 5; ++i) msg += (i ? ", '" : "'") + nodes[i] + "'";
                if (nodes.size() > 5) msg += detail::cat(", ... ", nodes.size() - 5, " more");
                msg += "); ";
                if (first_node.empty()) { first_node = nodes[0]; first_op = op; }
            }
            msg.resize(msg.size() - 2);
            throw unimplemented_error(msg, location::at_node(first_node, first_op), register_kernel_hint());
        }
    }

    void order() {
        // Order: Kahn's algorithm over the needed nodes, ties in graph insertion order. A while loop's
        // back edges (NextIteration -> Merge) are not ordering edges.
        std::unordered_map<const node*, int> order_pos;
        std::vector<const node*> in_order;
        for (auto& n : g_) if (needed_.count(&n)) { order_pos[&n] = static_cast<int>(in_order.size()); in_order.push_back(&n); }
        auto for_each_source = [&](const node* n, auto&& fn) {
            for (auto& in : n->inputs) {
                if (feed_index_.count(in)) continue;
                const node* src = g_.find(in.node);
                if (!impl::is_next_iteration(src->op)) fn(src);
            }
            for (auto& c : n->control_inputs) {
                const node* src = g_.find(c);
                if (!impl::is_next_iteration(src->op)) fn(src);
            }
        };
        std::vector<int> indeg(in_order.size(), 0);
        std::vector<std::vector<int>> succ(in_order.size());
        bool has_loops = false;
        for (std::size_t i = 0; i < in_order.size(); ++i) {
            has_loops |= impl::is_enter(in_order[i]->op);
            for_each_source(in_order[i], [&](const node* src) {
                auto it = order_pos.find(src);
                if (it == order_pos.end()) return;
                succ[static_cast<std::size_t>(it->second)].push_back(static_cast<int>(i));
                ++indeg[i];
            });
        }
        // Ops marked run_early / run_late (op_traits) go before / after the other ready steps.
        std::vector<std::uint8_t> sched(in_order.size(), 1);
        bool any_sched = false;
        for (std::size_t i = 0; i < in_order.size(); ++i) {
            if (const op_def* od = g_.registry().find(in_order[i]->op)) {
                if (od->traits.run_early) sched[i] = 0;
                if (od->traits.run_late) sched[i] = 2;
                any_sched |= sched[i] != 1;
            }
        }
        for (int i : impl::kahn_order(in_order.size(), succ, indeg, any_sched ? &sched : nullptr)) {
            topo_.push_back(in_order[static_cast<std::size_t>(i)]);
        }
        if (topo_.size() != in_order.size()) {
            std::string cyc;
            for (std::size_t i = 0; i < in_order.size() && cyc.size() < 300; ++i)
                if (indeg[i] > 0) cyc += (cyc.empty() ? "" : ", ") + in_order[i]->name;
            throw graph_error("the nodes needed for this run form a cycle: " + cyc,
                              location::at_node(topo_.empty() ? in_order[0]->name : cyc.substr(0, cyc.find(','))),
                              "break the cycle (only while loops may have back edges, through NextIteration)");
        }
        if (has_loops) topo_ = impl::order_loops(g_, topo_, feed_index_, *p_);
        if (opts_.fuse_ops && !has_loops && kernels_.find_entry(device_kind::cpu, "_FusedMatMul") &&
            kernels_.find_entry(device_kind::cpu, "_FusedConv2D") &&
            kernels_.find_entry(device_kind::cpu, "_MatMulApplyGradientDescent") &&
            kernels_.find_entry(device_kind::cpu, "_MatMulResourceApplyGradientDescent")) {
            topo_ = impl::fuse_chains(g_, topo_, feed_index_, fetch_eps_, target_nodes_, placed_, *p_, fused_);
            for (auto [last, f] : fused_) {
                placement_decision d = placed_.at(last);
                d.kernel = kernels_.find_entry(device_kind::cpu, f->op);
                placed_.emplace(f, std::move(d));
            }
        }
    }

    void assign_slots() {
        // Slots: feeds first, then every step's outputs.
        std::unordered_map<const node*, int> step_of, first_slot;
        int slots = static_cast<int>(feed_names_.size());
        for (std::size_t i = 0; i < feed_names_.size(); ++i) {
            p_->feeds.emplace_back(static_cast<int>(i), static_cast<int>(i));
            const node* n = g_.find(endpoint::parse(feed_names_[i]).node);
            p_->fed_placeholders.push_back(n && (n->op == "Placeholder" || n->op == "PlaceholderWithDefault") ? n : nullptr);
        }
        for (const node* n : topo_) {
            plan::step s;
            s.n = n;
            const auto& pd = placed_.at(n);
            s.kernel = &pd.kernel->fn;
            s.def = &pd.kernel->def;
            s.dev = pd.dev;
            if (!s.dev.is_cpu()) s.ctx = &state_.context(s.dev);  // looked up once, not per kernel call
            s.num_outputs = g_.num_outputs(*n);
            s.first_output = slots;
            s.is_merge = n->op == "Merge" || n->op == "RefMerge";
            slots += s.num_outputs;
            step_of[n] = static_cast<int>(p_->steps.size());
            first_slot[n] = s.first_output;
            p_->steps.push_back(std::move(s));
        }
        for (auto [last, f] : fused_) {  // readers name the chain's last node
            step_of[last] = step_of.at(f);
            first_slot[last] = first_slot.at(f);
        }
        p_->num_slots = slots;
        auto slot_of = [&](const endpoint& e, const node* reader) -> int {
            if (auto it = feed_index_.find(e); it != feed_index_.end()) return it->second;
            const node* src = g_.find(e.node);
            auto it = first_slot.find(src);
            if (it == first_slot.end()) {
                throw graph_error(detail::cat("input '", e.str(), "' is not computed in this run"),
                                  location::at_node(reader ? reader->name : e.node));
            }
            const auto& st = p_->steps[static_cast<std::size_t>(step_of[src])];
            if (e.index < 0 || e.index >= st.num_outputs) {
                throw graph_error(detail::cat("input '", e.str(), "' asks for output ", e.index, " but op ", src->op,
                                              " has ", st.num_outputs),
                                  location::at_node(reader ? reader->name : src->name, reader ? reader->op : src->op));
            }
            return it->second + e.index;
        };
        // A Const's value, read directly or through Identity nodes, with no feed on the way: the same
        // tensor on every run (kernels may keep what they derive from it: kernel_context::memo).
        auto from_constant = [&](endpoint e) {
            for (int hop = 0; hop < 64; ++hop) {
                if (feed_index_.count(e)) return false;
                const node* src = g_.find(e.node);
                if (!src) return false;
                if (src->op == "Const") return true;
                if (src->op != "Identity" || src->inputs.size() != 1) return false;
                e = src->inputs[0];
            }
            return false;
        };
        std::vector<int> last_reader(static_cast<std::size_t>(slots), -1);
        for (std::size_t i = 0; i < p_->steps.size(); ++i) {
            auto& s = p_->steps[i];
            for (auto& in : s.n->inputs) {
                int sl = slot_of(in, s.n);
                s.inputs.push_back(sl);
                s.constant_inputs.push_back(from_constant(in) ? 1 : 0);
                last_reader[static_cast<std::size_t>(sl)] = static_cast<int>(i);
            }
            for (auto& c : s.n->control_inputs) s.control.push_back(step_of.at(g_.find(c)));
        }
        // Steps inside a loop run many times: they never release what they read.
        const std::vector<char> in_loop = steps_in_loops();
        p_->pinned.assign(static_cast<std::size_t>(slots), 0);
        for (std::size_t i = 0; i < feed_names_.size(); ++i) p_->pinned[i] = 1;
        for (auto& e : fetch_eps_) {
            int sl = slot_of(e, nullptr);
            p_->fetches.push_back(sl);
            p_->pinned[static_cast<std::size_t>(sl)] = 1;
        }
        p_->fetch_names = fetches_;
        // Outputs nothing reads (no step, no fetch, not a loop's condition): their kernels may skip them.
        std::vector<char> read(static_cast<std::size_t>(slots), 0);
        for (std::size_t sl = 0; sl < read.size(); ++sl) read[sl] = last_reader[sl] >= 0 || p_->pinned[sl];
        for (auto& lp : p_->loops) {
            if (lp.cond_step < 0) continue;
            read[static_cast<std::size_t>(p_->steps[static_cast<std::size_t>(lp.cond_step)].first_output)] = 1;
        }
        for (auto& s : p_->steps) {
            const auto first = read.begin() + s.first_output, last = first + s.num_outputs;
            if (std::all_of(first, last, [](char r) { return r != 0; })) continue;
            s.unread_outputs.resize(static_cast<std::size_t>(s.num_outputs));
            std::transform(first, last, s.unread_outputs.begin(), [](char r) { return static_cast<char>(r == 0); });
        }
        for (std::size_t i = 0; i < p_->steps.size(); ++i) {
            auto& s = p_->steps[i];
            s.last_use.resize(s.inputs.size());
            for (std::size_t k = 0; k < s.inputs.size(); ++k) {
                auto sl = static_cast<std::size_t>(s.inputs[k]);
                bool dup = std::count(s.inputs.begin(), s.inputs.end(), s.inputs[k]) > 1;
                s.last_use[k] = !p_->pinned[sl] && !dup && last_reader[sl] == static_cast<int>(i) && !in_loop[i];
            }
        }
    }

    /// Per step: 1 inside a while loop's range (its steps run once per iteration).
    [[nodiscard]] std::vector<char> steps_in_loops() const {
        std::vector<char> in_loop(p_->steps.size(), 0);
        for (auto& lp : p_->loops) for (int i = lp.begin; i < lp.end; ++i) in_loop[static_cast<std::size_t>(i)] = 1;
        return in_loop;
    }

    /// Consts outside loops, with no control inputs, not fetched, on the CPU and read only by CPU
    /// steps: computed now, their readers' inputs moved to plan::constants. On the MLP forward at
    /// batch 1 the six weight and bias Consts cost a kernel call, a tensor copy and a slot release
    /// each per run. A Const whose kernel throws here stays a step (and throws when it runs).
    void hoist_constants() {
        const std::vector<char> in_loop = steps_in_loops();
        std::vector<int> step_at_slot(static_cast<std::size_t>(p_->num_slots), -1);
        for (std::size_t i = 0; i < p_->steps.size(); ++i) {
            const auto& s = p_->steps[i];
            if (s.n->op == "Const" && s.num_outputs == 1 && s.dev.is_cpu() && s.n->control_inputs.empty() &&
                !in_loop[i] && !p_->pinned[static_cast<std::size_t>(s.first_output)])
                step_at_slot[static_cast<std::size_t>(s.first_output)] = static_cast<int>(i);
        }
        for (const auto& s : p_->steps) {  // every reader on the CPU
            if (s.dev.is_cpu()) continue;
            for (int sl : s.inputs) step_at_slot[static_cast<std::size_t>(sl)] = -1;
        }
        std::vector<int> constant_of(static_cast<std::size_t>(p_->num_slots), -1);
        for (std::size_t sl = 0; sl < step_at_slot.size(); ++sl) {
            if (step_at_slot[sl] < 0) continue;
            auto& s = p_->steps[static_cast<std::size_t>(step_at_slot[sl])];
            std::vector<value> outs(1);
            std::vector<value*> none;
            kernel_context ctx(*s.n, g_.registry(), none, outs, state_);
            try {
                (*s.kernel)(ctx);
            } catch (const std::exception&) {
                continue;
            }
            if (outs[0].dead || outs[0].var || !outs[0].t.valid() || !outs[0].t.dev().is_cpu()) continue;
            constant_of[sl] = static_cast<int>(p_->constants.size());
            p_->constants.push_back(std::move(outs[0]));
            s.hoisted = true;
        }
        if (p_->constants.empty()) return;
        for (auto& s : p_->steps) {
            for (std::size_t k = 0; k < s.inputs.size(); ++k) {
                const int c = constant_of[static_cast<std::size_t>(s.inputs[k])];
                if (c < 0) continue;
                s.inputs[k] = -1 - c;
                s.last_use[k] = 0;
            }
        }
    }

    const graph& g_;
    session_state& state_;
    kernel_registry& kernels_;
    const session_options& opts_;
    const std::vector<std::string>& feed_names_;
    const std::vector<std::string>& fetches_;
    const std::vector<std::string>& targets_;
    std::unique_ptr<plan> p_;
    std::unordered_map<endpoint, int> feed_index_;   // resolve: fed endpoint -> feed position
    std::vector<endpoint> fetch_eps_;                // resolve
    std::vector<const node*> target_nodes_;          // resolve
    std::unordered_set<const node*> needed_;         // prune
    std::unordered_map<const node*, placement_decision> placed_;  // place (and order, for fused nodes)
    std::vector<const node*> topo_;                  // order
    std::unordered_map<const node*, const node*> fused_;  // order: a chain's last node -> its fused node
};

}  // namespace impl

GRAFT_INLINE const plan& session::prepare(const std::vector<std::string>& feed_names,
                                    const std::vector<std::string>& fetches,
                                    const std::vector<std::string>& targets) {
    std::string key;
    for (auto& f : feed_names) key += f + '\x01';
    key += '\x02';
    for (auto& f : fetches) key += f + '\x01';
    key += '\x02';
    for (auto& t : targets) key += t + '\x01';
    {
        std::lock_guard lock(plans_mu_);
        if (auto it = plans_.find(key); it != plans_.end()) return *it->second;
    }
    std::unique_ptr<plan> p = impl::plan_builder(*graph_, state_, feed_names, fetches, targets).build();
    std::lock_guard lock(plans_mu_);
    auto& slot = plans_[key];
    if (!slot) slot = std::move(p);
    return *slot;
}

GRAFT_INLINE const plan& session::plan_for(const feed_list& feeds, const std::vector<std::string>& fetches,
                                           const std::vector<std::string>& targets) {
    {
        std::lock_guard lock(plans_mu_);
        const bool same = last_.p && last_.feeds.size() == feeds.size() && last_.fetches == fetches &&
                          last_.targets == targets &&
                          std::equal(feeds.begin(), feeds.end(), last_.feeds.begin(),
                                     [](const auto& f, const std::string& name) { return f.first == name; });
        if (same) return *last_.p;
    }
    std::vector<std::string> feed_names;
    feed_names.reserve(feeds.size());
    for (auto& f : feeds) feed_names.push_back(f.first);
    const plan& p = prepare(feed_names, fetches, targets);
    std::lock_guard lock(plans_mu_);
    last_ = signature{std::move(feed_names), fetches, targets, &p};
    return p;
}

GRAFT_INLINE std::vector<tensor> session::run(const feed_list& feeds, const std::vector<std::string>& fetches,
                                        const std::vector<std::string>& targets) {
    const plan& p = plan_for(feeds, fetches, targets);
    const graph& g = *graph_;

    // The run's working vectors come from the plan's free list and go back to it, every slot
    // released (a fetched tensor lives on in the result), also when a kernel throws.
    std::unique_ptr<plan::run_scratch> scratch;
    {
        std::lock_guard lock(p.scratch_mu);
        if (!p.scratch_free.empty()) {
            scratch = std::move(p.scratch_free.back());
            p.scratch_free.pop_back();
        }
    }
    if (!scratch) scratch = std::make_unique<plan::run_scratch>();
    struct give_back {
        const plan& p;
        std::unique_ptr<plan::run_scratch>& s;
        ~give_back() {
            for (auto& v : s->slots) v = value{};
            for (auto& v : s->outs) v = value{};
            s->in_ptrs.clear();
            try {
                std::lock_guard lock(p.scratch_mu);
                p.scratch_free.push_back(std::move(s));
            } catch (...) {  // out of memory growing the free list: the scratch is simply dropped
            }
        }
    } give_back_on_exit{p, scratch};
    std::vector<value>& slots = scratch->slots;
    slots.resize(static_cast<std::size_t>(p.num_slots));
    for (auto [slot, idx] : p.feeds) {
        const auto& [name, t] = feeds[static_cast<std::size_t>(idx)];
        if (!t.valid()) throw invalid_argument_error("feed '" + name + "' is an empty tensor", location::at_tensor(name));
        // A fed placeholder must get its declared dtype and a compatible shape.
        if (const node* n = p.fed_placeholders[static_cast<std::size_t>(idx)]) {
            if (auto* dt = n->attr("dtype"); dt && dt->type() != t.type()) {
                throw invalid_argument_error(detail::cat("feed '", name, "' is ", t.describe(), " but placeholder wants ",
                                                         dtype_name(dt->type())),
                                             location::at_node(n->name, n->op).with_tensor(name), "cast the value before feeding it");
            }
            // Before GraphDef version 22 a Placeholder shape with no dims meant "unconstrained".
            bool legacy_any = g.versions.producer < 22;
            if (auto* sh = n->attr("shape"); sh && sh->which() == attr_value::kind::shape &&
                                               !(legacy_any && sh->shape().rank() == 0) &&
                                               !sh->shape().compatible_with(t.shape())) {
                throw invalid_argument_error(detail::cat("feed '", name, "' has shape ", t.shape().str(),
                                                         " but placeholder wants ", sh->shape().str()),
                                             location::at_node(n->name, n->op).with_tensor(name));
            }
        }
        slots[static_cast<std::size_t>(slot)] = value::of(t);
    }

    std::vector<char>& dead = scratch->dead;
    dead.assign(p.steps.size(), 0);
    std::vector<value*>& in_ptrs = scratch->in_ptrs;
    std::vector<value>& outs = scratch->outs;
    auto exec_step = [&](std::size_t i) {
        const auto& s = p.steps[i];
        if (s.hoisted) return;  // its readers read plan::constants
        in_ptrs.clear();
        bool any_dead = false, all_dead = !s.inputs.empty();
        for (int sl : s.inputs) {
            value* v = sl >= 0 ? &slots[static_cast<std::size_t>(sl)] : &p.constants[static_cast<std::size_t>(-1 - sl)];
            in_ptrs.push_back(v);
            any_dead |= v->dead;
            all_dead &= v->dead;
        }
        bool ctrl_dead = false;
        for (int c : s.control) ctrl_dead |= dead[static_cast<std::size_t>(c)] != 0;
        bool is_dead = s.is_merge ? (all_dead || ctrl_dead) : (any_dead || ctrl_dead);
        dead[i] = is_dead ? 1 : 0;
        if (is_dead) {
            for (int k = 0; k < s.num_outputs; ++k) slots[static_cast<std::size_t>(s.first_output + k)] = value::dead_value();
        } else {
            outs.assign(static_cast<std::size_t>(s.num_outputs), value{});
            kernel_context ctx(*s.n, g.registry(), in_ptrs, outs, state_);
            ctx.set_forwardable(s.last_use);
            ctx.set_constant_inputs(s.constant_inputs);
            ctx.set_unread_outputs(s.unread_outputs);
            ctx.set_memo(s.memo.get());
            ctx.set_placement(s.dev, s.def, &state_, s.ctx);
            try {
                if (state_.options.collect_step_stats) {
                    const auto t0 = std::chrono::steady_clock::now();
                    (*s.kernel)(ctx);
                    state_.add_step_time(*s.n, s.dev, std::chrono::steady_clock::now() - t0);
                } else {
                    (*s.kernel)(ctx);
                }
            } catch (const graft::error& e) {
                if (!e.where().node.empty()) throw;
                throw graph_error(impl::fused_prefix(*s.n) + e.message(), location::at_node(s.n->name, s.n->op),
                                  e.hint());
            } catch (const std::bad_alloc&) {
                throw;
            } catch (const std::exception& e) {
                throw graph_error(impl::fused_prefix(*s.n) + "kernel failed: " + e.what(),
                                  location::at_node(s.n->name, s.n->op));
            }
            for (int k = 0; k < s.num_outputs; ++k) {
                auto& o = outs[static_cast<std::size_t>(k)];
                if (!o.present()) {
                    if (static_cast<std::size_t>(k) < s.unread_outputs.size() && s.unread_outputs[static_cast<std::size_t>(k)])
                        continue;  // nothing reads it (kernel_context::output_read)
                    throw graph_error(detail::cat("kernel for ", s.n->op, " did not produce output ", k),
                                      location::at_node(s.n->name, s.n->op));
                }
                slots[static_cast<std::size_t>(s.first_output + k)] = std::move(o);
            }
        }
        for (std::size_t k = 0; k < s.inputs.size(); ++k) {
            if (s.last_use[k]) slots[static_cast<std::size_t>(s.inputs[k])] = value{};
        }
    };
    // Steps [begin, end) of loop `current` (-1: the top level); loops starting inside run whole.
    std::vector<int>& enter_of = scratch->enter_of;
    auto run_range = [&](auto&& self, int begin, int end, int current) -> void {
        for (int i = begin; i < end;) {
            int L = p.loops.empty() ? -1 : p.loop_starting_at[static_cast<std::size_t>(i)];
            if (L >= 0 && L != current) {
                const auto& lp = p.loops[static_cast<std::size_t>(L)];
                auto kill = [&](int step) {
                    const auto& st = p.steps[static_cast<std::size_t>(step)];
                    dead[static_cast<std::size_t>(step)] = 1;
                    for (int k = 0; k < st.num_outputs; ++k)
                        slots[static_cast<std::size_t>(st.first_output + k)] = value::dead_value();
                };
                for (int st : lp.next_iteration_steps) kill(st);
                if (enter_of.empty()) {  // step -> 1 + the loop whose Enter it is
                    enter_of.assign(p.steps.size(), 0);
                    for (std::size_t l = 0; l < p.loops.size(); ++l) {
                        for (int st : p.loops[l].enter_steps) enter_of[static_cast<std::size_t>(st)] = static_cast<int>(l) + 1;
                        for (int st : p.loops[l].constant_enter_steps) enter_of[static_cast<std::size_t>(st)] = static_cast<int>(l) + 1;
                    }
                }
                // Iteration 0 runs every step; later ones skip the Enters (invariants keep their
                // value, the others turn dead so each Merge takes its NextIteration input).
                self(self, lp.begin, lp.end, L);
                for (;;) {
                    const value& c = slots[static_cast<std::size_t>(p.steps[static_cast<std::size_t>(lp.cond_step)].first_output)];
                    if (c.dead || !c.t.valid() || c.t.num_elements() != 1 || c.t.type() != dtype::bool_ ||
                        !c.t.data<bool>()[0]) {
                        break;
                    }
                    for (int st : lp.enter_steps) kill(st);
                    int j = lp.begin;
                    while (j < lp.end) {
                        int k = j;
                        while (k < lp.end && enter_of[static_cast<std::size_t>(k)] != L + 1) ++k;  // up to this loop's next Enter
                        self(self, j, k, L);
                        j = k + 1;
                    }
                }
                i = lp.end;
                continue;
            }
            exec_step(static_cast<std::size_t>(i));
            ++i;
        }
    };
    run_range(run_range, 0, static_cast<int>(p.steps.size()), -1);

    std::vector<tensor> result;
    result.reserve(p.fetches.size());
    for (std::size_t i = 0; i < p.fetches.size(); ++i) {
        value& v = slots[static_cast<std::size_t>(p.fetches[i])];
        const auto& name = p.fetch_names[i];
        if (v.dead) {
            throw graph_error("fetched tensor '" + name + "' is on an untaken branch of a cond (dead)",
                              location::at_tensor(name), "fetch the Merge output instead");
        }
        if (v.is_resource) {
            throw invalid_argument_error("fetched tensor '" + name + "' is a resource handle", location::at_tensor(name),
                                         "fetch a ReadVariableOp of it instead");
        }
        result.push_back(to_host(v.is_ref ? v.var->read() : v.t));
    }
    return result;
}

}  // namespace graft::exec
