// graft/autodiff/detail/tf1_loops.hpp — gradients through TF1 while loops (tf.while_loop,
// dynamic_rnn: Enter/Merge/Switch/LoopCond/NextIteration/Exit frames), built the way TF's
// control_flow_grad.py and control_flow_state.py build them:
//
//   forward frame F (one per loop, as the executor assigns frames): a counter loop variable is
//   added (Enter(0) -> Merge -> Switch(LoopCond) -> +1 -> NextIteration, Exit = N iterations); every
//   forward value inside F that the gradient needs is pushed on a StackV2 each iteration.
//   backward frame: a new loop runs N times; its loop variables are the counter (N, N-1, ..., 1),
//   one gradient per float loop variable (from the gradient of its Exit) and one accumulator per
//   float loop invariant (is_constant Enter). Its body is the forward body's gradient (the ordinary
//   rules, built by the walker of gradients_impl.hpp over the body), reading each forward value
//   from a StackV2Pop (LIFO: iteration N-1 first) and each invariant from outside the loop.
//   The Exits give the gradients of the Enters' inputs.
//
// TensorArrays crossing the frame work as in TF: a handle is an invariant, a flow a loop variable
// (or an invariant whose accumulated "gradient" only orders the grad array's reads).
//
// Nested loops: a loop G inside the body of a loop F is walked as one unit of F's body, so its
// backward loop is built inside F's backward loop, once per backward iteration of F. G's forward
// nodes that the gradient adds (its counter, the stacks of its values, their pushes) live in F's
// frame and G's: each of G's stacks is created anew in every iteration of F, and that handle, G's
// iteration count and every other F-frame value G's backward loop reads are themselves F-frame
// values, pushed in F and popped in F's backward loop, as TF's control_flow_state keeps a
// "history" per outer iteration. Pushes and pops then pair up whatever order the executor gives
// the iterations of F.
// Not covered: xs or ys inside a loop.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "graft/autodiff/rule.hpp"
#include "graft/graph/build.hpp"

namespace graft::autodiff::detail {

inline bool is_enter_op(std::string_view op) { return op == "Enter" || op == "RefEnter"; }
inline bool is_exit_op(std::string_view op) { return op == "Exit" || op == "RefExit"; }
inline bool is_next_iteration_op(std::string_view op) { return op == "NextIteration" || op == "RefNextIteration"; }
inline bool is_merge_op(std::string_view op) { return op == "Merge" || op == "RefMerge"; }
inline bool is_switch_op(std::string_view op) { return op == "Switch" || op == "RefSwitch"; }

/// The while-loop frame of each node as the executor assigns it: an Enter opens the frame named by
/// its frame_name inside its input's frame, an Exit's consumers are back in the parent frame, any
/// other node is in the innermost frame of its (data and control) inputs; NextIteration edges are
/// ignored. Frame 0 is the top level. Computed on demand and memoized.
class frame_map {
public:
    struct frame {
        int parent = 0;
        int depth = 0;
        std::string name;
    };
    explicit frame_map(const graph& g) : g_(&g) {}

    /// The frame of node n. Never throws (except bad_alloc); a node on a cycle that does not pass
    /// through NextIteration is put at the top level.
    int of(const node& n) {
        if (auto it = of_.find(n.name); it != of_.end()) return it->second;
        // iterative post-order over the inputs
        std::vector<std::pair<const node*, bool>> stack{{&n, false}};
        std::unordered_set<std::string_view> open;
        while (!stack.empty()) {
            auto [cur, expanded] = stack.back();
            stack.pop_back();
            if (of_.count(cur->name)) continue;
            if (!expanded) {
                if (!open.insert(cur->name).second) {
                    of_[cur->name] = 0;  // a cycle without NextIteration: malformed, top level
                    continue;
                }
                stack.emplace_back(cur, true);
                for_each_source(*cur, [&](const node& s) {
                    if (!of_.count(s.name) && !open.count(s.name)) stack.emplace_back(&s, false);
                });
                continue;
            }
            int f = 0;
            for_each_source(*cur, [&](const node& s) {
                auto it = of_.find(s.name);
                int sf = it == of_.end() ? 0 : value_frame_of(s, it->second);
                if (frames_[static_cast<std::size_t>(sf)].depth > frames_[static_cast<std::size_t>(f)].depth) f = sf;
            });
            if (is_enter_op(cur->op)) {
                const attr_value* fn = cur->attr("frame_name");
                std::string name = fn ? fn->s() : std::string();
                auto [it, fresh] = ids_.try_emplace({f, name}, static_cast<int>(frames_.size()));
                if (fresh) frames_.push_back(frame{f, frames_[static_cast<std::size_t>(f)].depth + 1, name});
                f = it->second;
            }
            of_[cur->name] = f;
            open.erase(cur->name);
        }
        return of_.at(n.name);
    }
    /// The frame whose nodes see the value of node n's outputs (an Exit's parent frame).
    int value_frame(const node& n) { return value_frame_of(n, of(n)); }
    [[nodiscard]] const frame& at(int f) const { return frames_.at(static_cast<std::size_t>(f)); }
    /// The child of `level` that contains frame f, 0 when f == level, -1 when f is outside level.
    [[nodiscard]] int child_of(int f, int level) const {
        if (f == level) return 0;
        while (f != 0 && at(f).parent != level) f = at(f).parent;
        return f == 0 ? -1 : f;
    }
    /// Drops the memo of nodes whose inputs were edited. Never throws.
    void forget(std::string_view name) { of_.erase(name); }
    /// Whether frame f is `ancestor` or nested inside it.
    [[nodiscard]] bool within(int f, int ancestor) const {
        while (f != ancestor && f > 0) f = at(f).parent;
        return f == ancestor;
    }
    /// The frame named `name` inside frame `parent`, or -1 when no node is in it yet.
    [[nodiscard]] int find(int parent, const std::string& name) const {
        auto it = ids_.find({parent, name});
        return it == ids_.end() ? -1 : it->second;
    }
    /// Names of the nodes a loop's gradient added to the forward side (counters, stacks, pushes):
    /// the gradient of an enclosing loop leaves them where they are.
    std::unordered_set<std::string> forward_added;
    /// The backward frame's name of each differentiated loop (by its forward frame), and the
    /// backward frame each backward frame is nested in ("" for the top level).
    std::unordered_map<int, std::string> backward_name;
    std::unordered_map<std::string, std::string> backward_parent;
    [[nodiscard]] bool empty_graph_of_loops() const { return frames_.size() == 1; }

private:
    template <class Fn>
    void for_each_source(const node& n, Fn&& fn) const {
        for (const auto& e : n.inputs) {
            const node* s = g_->find(e.node);
            if (s && !is_next_iteration_op(s->op)) fn(*s);
        }
        for (const auto& c : n.control_inputs) {
            const node* s = g_->find(c);
            if (s && !is_next_iteration_op(s->op)) fn(*s);
        }
    }
    [[nodiscard]] int value_frame_of(const node& n, int f) const {
        return is_exit_op(n.op) && f != 0 ? at(f).parent : f;
    }
    const graph* g_;
    std::vector<frame> frames_{frame{-1, 0, {}}};
    std::map<std::pair<int, std::string>, int> ids_;
    std::unordered_map<std::string_view, int> of_;
};

/// The body walk of a loop: gradients of ys (seeded with `seeds`) w.r.t. xs over the nodes of
/// frame `level`, not crossing the nodes in `barrier`. Defined in gradients_impl.hpp.
inline std::vector<std::optional<endpoint>> walk(graph& g, const std::vector<endpoint>& ys,
                                          const std::vector<endpoint>& seeds, const std::vector<endpoint>& xs,
                                          const graph_builder& root, frame_map* frames, int level,
                                          const std::unordered_set<std::string_view>* barrier);

/// One gradient for the input of an Enter of the loop.
struct enter_grad {
    endpoint target;  ///< the Enter's input (outside the loop)
    endpoint grad;
};

/// Builds the backward loop of frame F (a child of the top level) given the gradients arriving at
/// its Exit nodes (by Exit name; absent: none). Returns the gradients of the Enters' inputs.
/// Throws graph_error naming the node when the frame is not a well-formed TF1 while loop.
inline std::vector<enter_grad> loop_gradient(graph& g, const graph_builder& root, frame_map& fm, int F,
                                             const std::unordered_map<std::string, endpoint>& exit_grads) {
    using graft::detail::cat;
    const std::string frame_name = fm.at(F).name;
    auto bad = [&](const node& n, const std::string& what) -> graph_error {
        return graph_error(cat("gradients: while loop '", frame_name, "': ", what), location::at_node(n.name, n.op),
                           "graft differentiates loops built by tf.while_loop (Enter/Merge/Switch/LoopCond/"
                           "NextIteration/Exit)");
    };
    // The loop's own nodes, and who reads what inside it.
    std::vector<node*> members;
    for (node& n : g) if (fm.of(n) == F) members.push_back(&n);
    std::map<endpoint, std::vector<node*>> readers;
    for (node* n : members) for (auto& e : n->inputs) readers[e].push_back(n);
    node* loop_cond = nullptr;
    for (node* n : members) {
        if (n->op != "LoopCond") continue;
        if (loop_cond) throw bad(*n, "two LoopCond nodes");
        loop_cond = n;
    }
    if (!loop_cond) throw bad(*members.front(), "no LoopCond node");
    struct loop_var {
        node* enter = nullptr;
        node* merge = nullptr;
        node* sw = nullptr;
        node* exit = nullptr;
        node* next = nullptr;
        dtype t = dtype::invalid;
    };
    std::vector<loop_var> vars;
    std::vector<node*> invariants;
    std::unordered_set<std::string_view> barrier{loop_cond->name};
    for (node* n : members) {
        if (is_enter_op(n->op)) {
            const attr_value* c = n->attr("is_constant");
            if (c && c->b()) {
                invariants.push_back(n);
            } else {
                barrier.insert(n->name);
            }
            continue;
        }
        if (!is_merge_op(n->op)) continue;
        loop_var v;
        v.merge = n;
        for (auto& e : n->inputs) {
            node& s = g.at(e.node);
            if (is_enter_op(s.op)) v.enter = &s;
            if (is_next_iteration_op(s.op)) v.next = &s;
        }
        if (!v.enter || !v.next || n->inputs.size() != 2) throw bad(*n, "a Merge that is not Merge(Enter, NextIteration)");
        for (node* r : readers[endpoint{n->name, 0}]) {
            if (is_switch_op(r->op) && r->inputs.size() == 2 && r->inputs[1].node == loop_cond->name) v.sw = r;
        }
        if (!v.sw) throw bad(*n, "a loop variable without a Switch on the LoopCond");
        for (node* r : readers[endpoint{v.sw->name, 0}]) if (is_exit_op(r->op)) v.exit = r;
        v.t = base_type(n->output_dtype(0, g.registry()));
        for (auto* p : {v.merge, v.sw, v.next}) barrier.insert(p->name);
        if (v.exit) barrier.insert(v.exit->name);
        vars.push_back(v);
    }
    auto accumulable = [](dtype t) { return is_floating(base_type(t)) || is_complex(base_type(t)); };
    const attr_value* pi_attr = vars.empty() ? nullptr : vars.front().enter->attr("parallel_iterations");
    std::int64_t pi = pi_attr ? pi_attr->i() : 10;

    std::string label = loop_cond->name;
    label = label.rfind('/') == std::string::npos ? std::string("while") : label.substr(0, label.rfind('/'));
    graph_builder lb = root.sub(label);
    auto enter_attrs = [&](const std::string& frame, bool constant) {
        return attr_list{{"frame_name", frame}, {"is_constant", constant}, {"parallel_iterations", pi}};
    };
    // A loop variable of a new frame: Enter(init) -> Merge(Enter, NextIteration later) -> Switch(pred).
    struct new_var {
        std::string merge;
        std::vector<endpoint> sw;
        endpoint id;
    };
    auto make_var = [&](const graph_builder& sb, const endpoint& init, const std::string& frame,
                        const endpoint& pred_or_empty, const std::string& base) {
        new_var v;
        endpoint en = sb.op("Enter", {init}, enter_attrs(frame, false), base + "_enter");
        node& m = sb.add("Merge", {en, en}, {}, base + "_merge");
        v.merge = m.name;
        if (!pred_or_empty.node.empty()) {
            v.sw = sb.op_n("Switch", {endpoint{v.merge, 0}, pred_or_empty}, {}, base + "_switch");
            v.id = sb.op("Identity", {v.sw[1]}, {}, base);
        }
        return v;
    };
    auto close_var = [&](const graph_builder& sb, const new_var& v, const endpoint& next_value, const std::string& base) {
        endpoint nx = sb.op("NextIteration", {next_value}, {}, base + "_next");
        g.at(v.merge).inputs[1] = nx;
        g.touch();
        fm.forget(v.merge);
    };

    // In a loop nested in another (parent frame P), what the gradient adds beside F's forward
    // nodes must be in P, once per iteration of P: constants and stacks take a control input from
    // a value of P, the input of one of F's Enters (a loop variable's initial value first: it is
    // dead, as F is, in P's last, false iteration; an invariant's is not).
    const int P = fm.at(F).parent;
    std::vector<std::string> in_parent;
    if (P != 0) {
        for (const auto& v : vars) {
            if (!v.enter->inputs.empty()) {
                in_parent.push_back(v.enter->inputs.front().node);
                break;
            }
        }
        for (node* n : members) {
            if (!in_parent.empty()) break;
            if (is_enter_op(n->op) && !n->inputs.empty()) in_parent.push_back(n->inputs.front().node);
        }
        if (in_parent.empty()) throw bad(*loop_cond, "a nested loop without an Enter");
    }
    auto names_now = [&] {
        std::unordered_set<std::string> r;
        for (const node& n : g) r.insert(n.name);
        return r;
    };
    auto mark_forward_since = [&](const std::unordered_set<std::string>& old) {
        for (const node& n : g) if (!old.count(n.name)) fm.forward_added.insert(n.name);
    };

    // forward counter in F (its increment waits for the pushes added below)
    graph_builder fb = lb.sub("forward");
    auto names_before_counter = names_now();
    new_var fcount = make_var(fb, fb.with_control_dependencies(in_parent).scalar(std::int32_t{0}), frame_name,
                              endpoint{loop_cond->name, 0}, "count");
    endpoint n_iter = fb.op("Exit", {fcount.sw[0]}, {}, "count_exit");
    mark_forward_since(names_before_counter);

    // backward loop
    graph_builder bb = lb.sub("backward");
    const std::string bframe = g.unique_name(bb.scope() + "/while_context");
    fm.backward_name[F] = bframe;
    fm.backward_parent[bframe] = P != 0 && fm.backward_name.count(P) ? fm.backward_name.at(P) : std::string();
    new_var bcount = make_var(bb, n_iter, bframe, {}, "count");
    endpoint bcond = bb.op("LoopCond", {bb.op("Greater", {endpoint{bcount.merge, 0}, bb.scalar(std::int32_t{0})})});
    bcount.sw = bb.op_n("Switch", {endpoint{bcount.merge, 0}, bcond}, {}, "count_switch");
    bcount.id = bb.op("Identity", {bcount.sw[1]}, {}, "count");
    close_var(bb, bcount, bb.op("Sub", {bcount.id, bb.scalar(std::int32_t{1})}), "count");

    std::vector<std::size_t> diff;
    std::vector<new_var> dvars;
    std::vector<endpoint> ys, seeds, xs;
    for (std::size_t i = 0; i < vars.size(); ++i) {
        auto& v = vars[i];
        if (!accumulable(v.t)) continue;
        std::optional<endpoint> init;
        if (v.exit) {
            auto it = exit_grads.find(v.exit->name);
            init = it != exit_grads.end() ? it->second : bb.op("ZerosLike", {endpoint{v.exit->name, 0}});
        } else {
            init = bb.op("ZerosLike", {v.enter->inputs.at(0)});
        }
        diff.push_back(i);
        dvars.push_back(make_var(bb, *init, bframe, bcond, "grad_" + std::to_string(i)));
        ys.push_back(v.next->inputs.at(0));
        seeds.push_back(dvars.back().id);
        xs.push_back(endpoint{v.sw->name, 1});
    }
    std::vector<node*> inv_x;
    for (node* e : invariants) {
        if (!accumulable(e->output_dtype(0, g.registry()))) continue;
        inv_x.push_back(e);
        xs.push_back(endpoint{e->name, 0});
    }
    // the body's gradient, then its reads of forward values turned into stack pops
    std::unordered_set<std::string> before;
    for (const node& n : g) before.insert(n.name);
    auto dx = walk(g, ys, seeds, xs, root, &fm, F, &barrier);
    std::vector<node*> fresh;
    for (node& n : g) if (!before.count(n.name)) fresh.push_back(&n);
    std::map<endpoint, endpoint> pops;
    std::vector<std::string> pushes;
    graph_builder sb = lb.sub("stacks");
    auto pop_of = [&](const endpoint& e) -> endpoint {
        if (auto it = pops.find(e); it != pops.end()) return it->second;
        dtype t = base_type(g.at(e.node).output_dtype(e.index, g.registry()));
        const graph_builder sp = sb.with_control_dependencies(in_parent);
        endpoint stack = sp.op("StackV2", {sp.scalar(std::int32_t{-1})}, {{"elem_type", t}, {"stack_name", sb.unique("stack")}});
        endpoint h = sb.op("Enter", {stack}, enter_attrs(frame_name, true));
        node& push = sb.with_control_dependencies({fcount.id.node}).add("StackPushV2", {h, e});
        pushes.push_back(push.name);
        for (const std::string& nm : {stack.node, g.at(stack.node).inputs.front().node, h.node, push.name}) {
            fm.forward_added.insert(nm);
        }
        endpoint p = sb.with_control_dependencies({bcount.id.node}).op("StackPopV2", {stack}, {{"elem_type", t}});
        pops.emplace(e, p);
        return p;
    };
    // Backward nodes read values of F (not an Exit of F; the Exit of a loop nested in F is one):
    // each becomes a pop. The forward nodes a nested loop's gradient added stay as they are.
    // Frames are recomputed as the inputs change (in creation order, so a node's inputs are done
    // before it): a frame remembered from before, e.g. while a nested loop's gradient was built,
    // may still see this loop's forward values.
    for (node* n : fresh) fm.forget(n->name);
    for (node* n : fresh) {
        if (fm.forward_added.count(n->name)) continue;
        bool edited = false;
        for (auto& e : n->inputs) {
            const node& p = g.at(e.node);
            if (fm.value_frame(p) != F) continue;
            const attr_value* c = p.attr("is_constant");
            e = is_enter_op(p.op) && c && c->b() ? p.inputs.at(0) : pop_of(e);
            edited = true;
        }
        std::erase_if(n->control_inputs, [&](const std::string& c) {
            const node* p = g.find(c);
            bool drop = p && fm.value_frame(*p) == F;
            edited |= drop;
            return drop;
        });
        if (edited) fm.forget(n->name);
    }
    for (node* n : fresh) fm.forget(n->name);
    g.touch();
    // close the loops
    auto names_before_close = names_now();
    close_var(fb, fcount, fb.with_control_dependencies(pushes).op("AddV2", {fcount.id, fb.scalar(std::int32_t{1})}), "count");
    mark_forward_since(names_before_close);
    std::vector<enter_grad> out;
    for (std::size_t k = 0; k < diff.size(); ++k) {
        const auto& d = dx.at(k);
        std::string base = "grad_" + std::to_string(diff[k]);
        close_var(bb, dvars[k], d ? *d : bb.op("ZerosLike", {dvars[k].id}), base);
        out.push_back({vars[diff[k]].enter->inputs.at(0), bb.op("Exit", {dvars[k].sw[0]}, {}, base + "_exit")});
    }
    for (std::size_t k = 0; k < inv_x.size(); ++k) {
        const auto& d = dx.at(diff.size() + k);
        if (!d) continue;
        const endpoint& outer = inv_x[k]->inputs.at(0);
        std::string base = "acc_" + std::to_string(k);
        new_var acc = make_var(bb, bb.op("ZerosLike", {outer}), bframe, bcond, base);
        close_var(bb, acc, bb.op("AddV2", {acc.id, *d}), base);
        out.push_back({outer, bb.op("Exit", {acc.sw[0]}, {}, base + "_exit")});
    }
    return out;
}

/// TensorFlow runs a node only when all its inputs are in its own frame: a value from an enclosing
/// frame reaches it through Enter nodes (is_constant), one per frame crossed, as tf.while_loop
/// captures tensors. The gradient builds its nodes reading such values directly (graft's executor
/// takes them, its iterations run one after another); this pass gives every node not in `before`
/// those Enters, shared per (value, frame), so the graph gradients() leaves runs in TensorFlow too.
inline void enter_outer_reads(graph& g, frame_map& fm, const std::unordered_set<std::string>& before) {
    std::vector<node*> added;
    for (node& n : g) if (!before.count(n.name)) added.push_back(&n);
    // parallel_iterations of each frame, as its own Enters say (a frame's Enters agree in TF)
    std::unordered_map<std::string, std::int64_t> pi_of;
    for (const node& n : g) {
        if (!is_enter_op(n.op)) continue;
        const attr_value* fn = n.attr("frame_name");
        const attr_value* pi = n.attr("parallel_iterations");
        if (fn && pi) pi_of.emplace(fn->s(), pi->i());
    }
    std::map<std::pair<endpoint, int>, endpoint> entered;
    // the value e (of frame `from`) inside frame `to`, nested in `from`
    std::function<endpoint(const endpoint&, int, int)> enter_into = [&](const endpoint& e, int from, int to) -> endpoint {
        if (to == from) return e;
        if (auto it = entered.find({e, to}); it != entered.end()) return it->second;
        const int parent = fm.at(to).parent;
        endpoint outer = enter_into(e, from, parent);
        const std::string& name = fm.at(to).name;
        auto pi = pi_of.find(name);
        const std::size_t slash = outer.node.rfind('/');  // beside the value it enters
        graph_builder at(g, slash == std::string::npos ? std::string() : outer.node.substr(0, slash));
        endpoint r = at.op("Enter", {outer},
                           {{"frame_name", name}, {"is_constant", true},
                            {"parallel_iterations", pi == pi_of.end() ? std::int64_t{10} : pi->second}},
                           "enter_outer");
        entered.emplace(std::make_pair(e, to), r);
        return r;
    };
    // An Enter of a backward frame reads from the backward frame it is nested in: a value of a
    // frame further out (an invariant's outer input, a top-level constant) comes in through Enters.
    std::function<int(const std::string&)> backward_id = [&](const std::string& name) -> int {
        if (name.empty()) return 0;
        auto it = fm.backward_parent.find(name);
        if (it == fm.backward_parent.end()) return -1;
        const int parent = backward_id(it->second);
        return parent < 0 ? -1 : fm.find(parent, name);
    };
    for (node* n : added) {
        if (!is_enter_op(n->op) || n->inputs.empty()) continue;
        const attr_value* fn = n->attr("frame_name");
        auto bp = fn ? fm.backward_parent.find(fn->s()) : fm.backward_parent.end();
        if (bp == fm.backward_parent.end()) continue;
        const int target = backward_id(bp->second);
        const node* p = g.find(n->inputs.front().node);
        if (target < 0 || !p) continue;
        const int from = fm.value_frame(*p);
        if (from != target && fm.within(target, from)) n->inputs.front() = enter_into(n->inputs.front(), from, target);
    }
    for (node* n : added) fm.forget(n->name);
    for (node* n : added) {
        if (is_enter_op(n->op)) continue;
        const int f = fm.of(*n);
        if (f == 0) continue;
        for (auto& e : n->inputs) {
            const node* p = g.find(e.node);
            if (!p || is_next_iteration_op(p->op)) continue;
            const int from = fm.value_frame(*p);
            if (from == f || !fm.within(f, from)) continue;
            e = enter_into(e, from, f);
        }
    }
    g.touch();
}

}  // namespace graft::autodiff::detail
