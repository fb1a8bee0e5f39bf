// graft/autodiff/rules/functional.hpp — gradients of the functional family (graft/exec/cpu_kernels/functional.hpp):
// TensorList ops as TF's python/ops/list_ops.py writes them (SetItem <-> GetItem, Stack <->
// FromTensor, PushBack <-> PopBack, Gather <-> Scatter), and TF2's functional control flow as
// while_v2 / cond_v2 build it, with one difference: the forward loop accumulates only each
// iteration's loop variables (TensorListPushBack) and the backward loop recomputes the body from
// them before differentiating it (graft's gradients() over the inlined body), instead of
// accumulating every intermediate.
//
//   If(c, x) -> If(c, x, dy) over grad(then) / grad(else): each recomputes its branch on x and
//   returns d(branch)/dx weighted by dy. Case(i, x) -> Case(i, x, dy) over each branch's gradient.
//   While(v) -> W' = While(v, 0, [empty lists]) whose body also counts the iterations and pushes
//   each iteration's v onto the lists; then While(N, dy, lists, invariants) whose body pops one
//   iteration's v and returns grad(body)(v, dv). Loop variables the body passes through unchanged
//   (through Identity nodes) are not accumulated: the backward loop reads them as invariants.
// Differentiable loop variables: floating, complex and variant (TensorList), and resource handles
// of variables (VarHandleOp) the body passes through unchanged: the gradient of the body's reads
// of the variable, summed over the iterations (Keras RNN weights). If branches give no gradient to
// resource inputs.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graft/autodiff/gradients.hpp"
#include "graft/autodiff/rules/support.hpp"
#include "graft/graph/inline.hpp"

namespace graft::autodiff {
struct gradient_options;
}  // namespace graft::autodiff

namespace graft::autodiff::rules {

namespace list_grad {

/// A list of zeros as long as list `l` (unset elements read as zeros): ZerosLike of a TensorList.
inline endpoint zeros_list(const grad_context& c, const endpoint& l, dtype element) {
    const auto& b = c.b();
    auto es = b.op("TensorListElementShape", {l}, {{"shape_type", dtype::int32}});
    auto n = b.op("TensorListLength", {l});
    return b.op("TensorListReserve", {es, n}, {{"element_dtype", element}});
}
inline dtype element_dtype(const grad_context& c) { return c.attr("element_dtype").type(); }
/// The gradient arriving at list output i, or a list of zeros.
inline endpoint list_grad_or_zeros(const grad_context& c, int i) {
    if (auto& g = c.grad(i)) return *g;
    return zeros_list(c, c.output(i), element_dtype(c));
}
/// Shape(t)[1:] (an element's shape when t stacks elements).
inline endpoint row_shape(const graph_builder& b, const endpoint& t) {
    return b.op("Slice", {shape_of(b, t), ints(b, {1}), ints(b, {-1})});
}

}  // namespace list_grad

namespace fgrad {

/// gradients() found at instantiation: rules/all.hpp may be read (through registry.hpp) before
/// gradients.hpp declares it.
template <class Options>
std::vector<std::optional<endpoint>> late_gradients(graph& s, const std::vector<endpoint>& ys,
                                                    const std::vector<endpoint>& xs, const std::vector<endpoint>& dys) {
    return gradients(s, ys, xs, dys, Options{});
}

/// The loop variables and branch inputs a gradient flows through (resource handles excluded).
inline bool flows(dtype t) {
    dtype b = base_type(t);
    return is_floating(b) || is_complex(b) || b == dtype::variant;
}

/// A scratch graph that sees the library of `g` (to inline its functions).
inline graph scratch_of(const graph& g) {
    graph s;
    s.versions.producer = 1000;
    s.library = g.library;
    s.register_library_ops();
    return s;
}

/// A fresh function name in g's library.
inline std::string fresh_function_name(const graph& g, const std::string& base) {
    std::string n = base;
    for (int k = 1; g.library.find(n); ++k) n = base + "_" + std::to_string(k);
    return n;
}

/// The function `name` whose arguments are the placeholders `args` of scratch graph `s` and whose
/// results are `outs`; added to g's library. Every other node of `s` becomes a body node.
inline void add_function_from(graph& g, const graph& s, const std::string& name,
                              const std::vector<std::pair<std::string, dtype>>& args,
                              const std::vector<endpoint>& outs) {
    function_def f;
    f.signature.name = name;
    for (auto& [n, t] : args) {
        arg_def a;
        a.name = n;
        a.type = t;
        f.signature.inputs.push_back(a);
    }
    for (std::size_t i = 0; i < outs.size(); ++i) {
        arg_def o;
        o.name = "out" + std::to_string(i);
        o.type = base_type(s.output_dtypes(s.at(outs[i].node)).at(static_cast<std::size_t>(outs[i].index)));
        f.signature.outputs.push_back(o);
        f.ret[o.name] = outs[i].str();
    }
    for (const auto& n : s) {
        bool is_arg = false;
        for (auto& a : args) is_arg = is_arg || a.first == n.name;
        if (!is_arg) f.nodes.push_back(n);
    }
    g.add_function(std::move(f));
}

/// Inlines a call of `f` on `inputs` into scratch graph `s`; returns the endpoints of its results.
inline std::vector<endpoint> inline_call_of(graph& s, const func_attr& f, const std::vector<endpoint>& inputs,
                                            const std::string& call_name) {
    node call(call_name, f.name, inputs);
    call.attrs = f.attrs;
    s.add_node(std::move(call));
    inline_functions(s);
    std::vector<endpoint> outs = s.at(call_name).inputs;
    s.remove_node(call_name);
    return outs;
}

/// A list of zeros as long as list `l` with its dtype and element shape (ZerosLike of a TensorList).
inline endpoint zeros_list_like(const graph_builder& b, const endpoint& l) {
    auto none = b.op("TensorListResize", {l, int_scalar(b, 0)});
    return b.op("TensorListResize", {none, b.op("TensorListLength", {l})});
}
/// Zeros like `e` of dtype t (a list of zeros for a TensorList).
inline endpoint zeros_like(const graph_builder& b, const endpoint& e, dtype t) {
    return base_type(t) == dtype::variant ? zeros_list_like(b, e) : b.op("ZerosLike", {e});
}

/// Adds to g's library the gradient function of `f`: arguments (x_0..x_{n-1}, dy_j for each result j
/// with flows(out_types[j]), dres_i for each resource input i with a var_types[i]), results dx_i for
/// each i with flows(in_types[i]) (zeros where no result depends on x_i), then dres_i + the
/// gradient of the variable's reads in f for each such resource input. Returns its name.
inline std::string grad_function(graph& g, const func_attr& f, const std::vector<dtype>& in_types,
                                 const std::vector<dtype>& out_types, const std::string& base,
                                 const std::vector<dtype>& var_types = {}) {
    auto var_type = [&](std::size_t i) { return i < var_types.size() ? var_types[i] : dtype::invalid; };
    graph s = scratch_of(g);
    graph_builder b(s);
    std::vector<std::pair<std::string, dtype>> args;
    std::vector<endpoint> xs;
    for (std::size_t i = 0; i < in_types.size(); ++i) {
        args.emplace_back("x" + std::to_string(i), in_types[i]);
        xs.push_back(b.placeholder(args.back().first, in_types[i]));
    }
    auto outs = inline_call_of(s, f, xs, "fwd");
    if (outs.size() != out_types.size()) {
        throw graph_error(graft::detail::cat("function '", f.name, "' binds ", outs.size(), " results for ", out_types.size(),
                                      " outputs"));
    }
    std::vector<endpoint> ys, dys, want;
    for (std::size_t j = 0; j < outs.size(); ++j) {
        if (!flows(out_types[j])) continue;
        args.emplace_back("dy" + std::to_string(j), out_types[j]);
        dys.push_back(b.placeholder(args.back().first, out_types[j]));
        ys.push_back(b.op("Identity", {outs[j]}, {}, "y" + std::to_string(j)));
    }
    std::vector<endpoint> dres;
    for (std::size_t i = 0; i < in_types.size(); ++i) {
        if (var_type(i) == dtype::invalid) continue;
        args.emplace_back("dres" + std::to_string(i), var_type(i));
        dres.push_back(b.placeholder(args.back().first, var_type(i)));
    }
    for (std::size_t i = 0; i < in_types.size(); ++i) if (flows(in_types[i])) want.push_back(xs[i]);
    for (std::size_t i = 0; i < in_types.size(); ++i) if (var_type(i) != dtype::invalid) want.push_back(xs[i]);
    std::vector<std::optional<endpoint>> dx;
    if (!ys.empty() && !want.empty()) dx = late_gradients<gradient_options>(s, ys, want, dys);
    std::vector<endpoint> results;
    std::size_t k = 0;
    for (std::size_t i = 0; i < in_types.size(); ++i) {
        if (!flows(in_types[i])) continue;
        std::optional<endpoint> d = k < dx.size() ? dx[k] : std::nullopt;
        results.push_back(d ? b.op("Identity", {*d}) : zeros_like(b, xs[i], in_types[i]));
        ++k;
    }
    for (std::size_t i = 0, r = 0; i < in_types.size(); ++i) {
        if (var_type(i) == dtype::invalid) continue;
        std::optional<endpoint> d = k < dx.size() ? dx[k] : std::nullopt;
        results.push_back(d ? b.op("AddV2", {dres[r], *d}) : b.op("Identity", {dres[r]}));
        ++k;
        ++r;
    }
    std::string name = fresh_function_name(g, base);
    add_function_from(g, s, name, args, results);
    return name;
}

/// True when result i of body `f` is its argument i (directly or through Identity nodes).
inline bool passes_through(const function_def& f, std::size_t i) {
    if (i >= f.signature.inputs.size() || i >= f.signature.outputs.size()) return false;
    auto it = f.ret.find(f.signature.outputs[i].name);
    if (it == f.ret.end()) return false;
    endpoint e;
    if (!endpoint::try_split(it->second, e)) return false;
    for (int hop = 0; hop < 16; ++hop) {
        auto r = split_function_ref(e);
        if (r.output_arg.empty() && r.node == f.signature.inputs[i].name) return r.index == 0;
        const node* n = f.find_node(r.node);
        if (!n || n->op != "Identity" || n->inputs.empty()) return false;
        e = n->inputs[0];
    }
    return false;
}

/// The dtypes of f's results.
inline std::vector<dtype> result_types(const graph& g, const func_attr& f, const std::string& who) {
    const function_def& fd = g.library.at(f.name);
    std::vector<dtype> t;
    for (auto& a : fd.signature.outputs) append_arg_dtypes(fd.signature, a, f.attrs, who, t);
    return t;
}

inline attr_value types_attr(const std::vector<dtype>& t) { return attr_value::list_of(t); }

/// If and Case: the same op over the branches' gradient functions, fed (selector, x, dy).
inline grad_list branch_grad(grad_context& c) {
    graph& g = c.g();
    const auto& b = c.b();
    const auto& tin = c.attr("Tin").list_of<dtype>();
    const auto& tout = c.attr("Tout").list_of<dtype>();
    grad_list out(static_cast<std::size_t>(c.num_inputs()));
    std::vector<dtype> dx_types;
    for (auto t : tin) if (flows(t)) dx_types.push_back(t);
    if (dx_types.empty()) return out;
    attr_list branch_attrs;
    bool is_case = c.find_attr("branches") != nullptr;
    if (is_case) {
        std::vector<func_attr> grads;
        for (const auto& f : c.attr("branches").list_of<func_attr>()) {
            grads.push_back(func_attr{grad_function(g, f, tin, tout, f.name + "_grad"), {}});
        }
        branch_attrs.emplace_back("branches", attr_value::list_of(grads));
    } else {
        const func_attr& then_f = c.attr("then_branch").func();
        const func_attr& else_f = c.attr("else_branch").func();
        branch_attrs.emplace_back("then_branch", func_attr{grad_function(g, then_f, tin, tout, then_f.name + "_grad"), {}});
        branch_attrs.emplace_back("else_branch", func_attr{grad_function(g, else_f, tin, tout, else_f.name + "_grad"), {}});
    }
    std::vector<endpoint> inputs{c.input(0)};
    for (std::size_t i = 0; i < tin.size(); ++i) inputs.push_back(c.input(static_cast<int>(i) + 1));
    for (std::size_t j = 0; j < tout.size(); ++j) {
        if (!flows(tout[j])) continue;
        auto& dy = c.grad(static_cast<int>(j));
        inputs.push_back(dy ? *dy : zeros_like(b, c.output(static_cast<int>(j)), tout[j]));
    }
    branch_attrs.emplace_back("Tout", types_attr(dx_types));
    auto r = b.op_n(c.op().op, inputs, branch_attrs);
    std::size_t k = 0;
    for (std::size_t i = 0; i < tin.size(); ++i) {
        if (flows(tin[i])) out[i + 1] = r.at(k++);
    }
    return out;
}

inline grad_list while_grad(grad_context& c) {
    graph& g = c.g();
    const auto& b = c.b();
    const std::vector<dtype> T = c.attr("T").list_of<dtype>();
    const func_attr cond = c.attr("cond").func();
    const func_attr body = c.attr("body").func();
    const std::size_t n = T.size();
    grad_list out(n);
    std::vector<std::size_t> diff;
    for (std::size_t i = 0; i < n; ++i) if (flows(T[i])) diff.push_back(i);
    const function_def& bf = g.library.at(body.name);
    std::vector<bool> pass(n);
    std::vector<std::size_t> acc;
    for (std::size_t i = 0; i < n; ++i) {
        pass[i] = passes_through(bf, i);
        if (pass[i]) continue;
        if (T[i] == dtype::resource) {
            c.fail(graft::detail::cat("loop variable ", i, " is a resource handle that body function '", body.name,
                               "' does not pass through unchanged"));
        }
        acc.push_back(i);
    }
    // resource loop variables the body passes through: the gradient of their reads accumulates
    // over the iterations (dtype from the VarHandleOp that feeds the loop)
    std::vector<dtype> var_types(n, dtype::invalid);
    std::vector<std::size_t> res;
    for (std::size_t i = 0; i < n; ++i) {
        if (T[i] != dtype::resource || !pass[i]) continue;
        endpoint e = c.input(static_cast<int>(i));
        for (int hop = 0; hop < 16; ++hop) {
            const node* h = g.find(e.node);
            if (!h) break;
            if (h->op == "VarHandleOp") {
                if (auto* t = h->attr("dtype")) var_types[i] = t->type();
                break;
            }
            if (h->op != "Identity" || h->inputs.empty()) break;
            e = h->inputs[0];
        }
        if (var_types[i] != dtype::invalid) res.push_back(i);
    }
    if (diff.empty() && res.empty()) return out;
    auto cond_types = result_types(g, cond, c.name());
    // forward loop that also counts iterations and accumulates each iteration's loop variables
    auto loop_args = [&](graph_builder& sb, std::vector<std::pair<std::string, dtype>>& args, std::vector<endpoint>& v,
                         endpoint& count, std::vector<endpoint>& lists) {
        for (std::size_t i = 0; i < n; ++i) {
            args.emplace_back("v" + std::to_string(i), T[i]);
            v.push_back(sb.placeholder(args.back().first, T[i]));
        }
        args.emplace_back("count", dtype::int32);
        count = sb.placeholder("count", dtype::int32);
        for (std::size_t k = 0; k < acc.size(); ++k) {
            args.emplace_back("acc" + std::to_string(k), dtype::variant);
            lists.push_back(sb.placeholder(args.back().first, dtype::variant));
        }
    };
    std::string fwd_body = fresh_function_name(g, body.name + "_accumulating");
    {
        graph s = scratch_of(g);
        graph_builder sb(s);
        std::vector<std::pair<std::string, dtype>> args;
        std::vector<endpoint> v, lists;
        endpoint count;
        loop_args(sb, args, v, count, lists);
        auto next = sb.op_n("StatefulPartitionedCall", v, {{"f", body}, {"Tout", types_attr(T)}});
        next.push_back(sb.op("AddV2", {count, int_scalar(sb, 1)}));
        for (std::size_t k = 0; k < acc.size(); ++k) next.push_back(sb.op("TensorListPushBack", {lists[k], v[acc[k]]}));
        add_function_from(g, s, fwd_body, args, next);
    }
    std::string fwd_cond = fresh_function_name(g, cond.name + "_accumulating");
    {
        graph s = scratch_of(g);
        graph_builder sb(s);
        std::vector<std::pair<std::string, dtype>> args;
        std::vector<endpoint> v, lists;
        endpoint count;
        loop_args(sb, args, v, count, lists);
        auto r = sb.op_n("StatefulPartitionedCall", v, {{"f", cond}, {"Tout", types_attr(cond_types)}});
        add_function_from(g, s, fwd_cond, args, {r.at(0)});
    }
    std::vector<endpoint> fwd_in;
    for (std::size_t i = 0; i < n; ++i) fwd_in.push_back(c.input(static_cast<int>(i)));
    fwd_in.push_back(int_scalar(b, 0));
    auto minus_one = int_scalar(b, -1);
    for (std::size_t k = 0; k < acc.size(); ++k) {
        fwd_in.push_back(b.op("EmptyTensorList", {minus_one, minus_one}, {{"element_dtype", T[acc[k]]}}));
    }
    attr_list loop_attrs{{"cond", func_attr{fwd_cond, {}}}, {"body", func_attr{fwd_body, {}}}};
    c.copy_attr(loop_attrs, "parallel_iterations");
    auto fwd = b.op_n(c.op().op, fwd_in, loop_attrs, "accumulating_loop");

    // backward loop: pops one iteration's loop variables and applies the body's gradient
    std::vector<dtype> diff_types;
    for (auto i : diff) diff_types.push_back(T[i]);
    for (auto i : res) diff_types.push_back(var_types[i]);
    std::string body_grad = grad_function(g, body, T, T, body.name + "_grad", var_types);
    auto back_args = [&](graph_builder& sb, std::vector<std::pair<std::string, dtype>>& args, endpoint& count,
                         std::vector<endpoint>& dv, std::vector<endpoint>& lists, std::vector<endpoint>& inv) {
        args.emplace_back("count", dtype::int32);
        count = sb.placeholder("count", dtype::int32);
        for (auto i : diff) {
            args.emplace_back("dv" + std::to_string(i), T[i]);
            dv.push_back(sb.placeholder(args.back().first, T[i]));
        }
        for (auto i : res) {
            args.emplace_back("dres" + std::to_string(i), var_types[i]);
            dv.push_back(sb.placeholder(args.back().first, var_types[i]));
        }
        for (std::size_t k = 0; k < acc.size(); ++k) {
            args.emplace_back("acc" + std::to_string(k), dtype::variant);
            lists.push_back(sb.placeholder(args.back().first, dtype::variant));
        }
        for (std::size_t i = 0; i < n; ++i) {
            if (!pass[i]) continue;
            args.emplace_back("inv" + std::to_string(i), T[i]);
            inv.push_back(sb.placeholder(args.back().first, T[i]));
        }
    };
    std::string back_body = fresh_function_name(g, body.name + "_backward");
    {
        graph s = scratch_of(g);
        graph_builder sb(s);
        std::vector<std::pair<std::string, dtype>> args;
        std::vector<endpoint> dv, lists, inv, x(n), rest;
        endpoint count;
        back_args(sb, args, count, dv, lists, inv);
        auto any_shape = int_scalar(sb, -1);
        for (std::size_t k = 0; k < acc.size(); ++k) {
            auto p = sb.op_n("TensorListPopBack", {lists[k], any_shape}, {{"element_dtype", T[acc[k]]}});
            rest.push_back(p[0]);
            x[acc[k]] = p[1];
        }
        for (std::size_t i = 0, p = 0; i < n; ++i) if (pass[i]) x[i] = inv[p++];
        std::vector<endpoint> call_in = x;
        for (auto& d : dv) call_in.push_back(d);
        auto dx = sb.op_n("StatefulPartitionedCall", call_in,
                          {{"f", func_attr{body_grad, {}}}, {"Tout", types_attr(diff_types)}});
        std::vector<endpoint> results{sb.op("Sub", {count, int_scalar(sb, 1)})};
        for (auto& d : dx) results.push_back(d);
        for (auto& l : rest) results.push_back(l);
        for (auto& v : inv) results.push_back(v);
        add_function_from(g, s, back_body, args, results);
    }
    std::string back_cond = fresh_function_name(g, cond.name + "_backward");
    {
        graph s = scratch_of(g);
        graph_builder sb(s);
        std::vector<std::pair<std::string, dtype>> args;
        std::vector<endpoint> dv, lists, inv;
        endpoint count;
        back_args(sb, args, count, dv, lists, inv);
        add_function_from(g, s, back_cond, args, {sb.op("Greater", {count, int_scalar(sb, 0)})});
    }
    std::vector<endpoint> back_in{fwd.at(n)};
    for (auto i : diff) {
        auto& dy = c.grad(static_cast<int>(i));
        back_in.push_back(dy ? *dy : zeros_like(b, c.output(static_cast<int>(i)), T[i]));
    }
    for (auto i : res) {
        auto& dy = c.grad(static_cast<int>(i));
        back_in.push_back(dy ? *dy
                             : b.op("ZerosLike", {b.op("ReadVariableOp", {c.input(static_cast<int>(i))},
                                                       {{"dtype", var_types[i]}})}));
    }
    for (std::size_t k = 0; k < acc.size(); ++k) back_in.push_back(fwd.at(n + 1 + k));
    for (std::size_t i = 0; i < n; ++i) if (pass[i]) back_in.push_back(c.input(static_cast<int>(i)));
    attr_list back_attrs{{"cond", func_attr{back_cond, {}}}, {"body", func_attr{back_body, {}}}};
    c.copy_attr(back_attrs, "parallel_iterations");
    auto back = b.op_n(c.op().op, back_in, back_attrs, "backward_loop");
    for (std::size_t k = 0; k < diff.size(); ++k) out[diff[k]] = back.at(1 + k);
    for (std::size_t k = 0; k < res.size(); ++k) out[res[k]] = back.at(1 + diff.size() + k);
    return out;
}

}  // namespace fgrad

inline void register_functional(gradient_registry& r) {
    using namespace list_grad;
    for (const char* op : {"If", "StatelessIf", "Case", "StatelessCase"}) r.add(op, fgrad::branch_grad);
    for (const char* op : {"While", "StatelessWhile"}) r.add(op, fgrad::while_grad);
    r.add("TensorListPushBack", [](grad_context& c) -> grad_list {
        auto popped = c.b().op_n("TensorListPopBack", {list_grad_or_zeros(c, 0), shape_of(c.b(), c.input(1))},
                                 {{"element_dtype", element_dtype(c)}});
        return {popped[0], popped[1]};
    });
    r.add("TensorListPopBack", [](grad_context& c) -> grad_list {
        endpoint dl = list_grad_or_zeros(c, 0);
        endpoint de = c.grad_or_zeros(1);
        return {c.b().op("TensorListPushBack", {dl, de}), std::nullopt};
    });
    r.add("TensorListStack", [](grad_context& c) -> grad_list {
        if (!c.grad(0)) return {std::nullopt, std::nullopt};
        const auto& b = c.b();
        return {b.op("TensorListFromTensor", {*c.grad(0), row_shape(b, *c.grad(0))}), std::nullopt};
    });
    r.add("TensorListFromTensor", [](grad_context& c) -> grad_list {
        const auto& b = c.b();
        endpoint dl = list_grad_or_zeros(c, 0);
        return {b.op("TensorListStack", {dl, row_shape(b, c.input(0))}, {{"element_dtype", element_dtype(c)}}),
                std::nullopt};
    });
    r.add("TensorListGetItem", [](grad_context& c) -> grad_list {
        if (!c.grad(0)) return {std::nullopt, std::nullopt, std::nullopt};
        auto zeros = zeros_list(c, c.input(0), element_dtype(c));
        return {c.b().op("TensorListSetItem", {zeros, c.input(1), *c.grad(0)}), std::nullopt, std::nullopt};
    });
    r.add("TensorListSetItem", [](grad_context& c) -> grad_list {
        const auto& b = c.b();
        endpoint dl = list_grad_or_zeros(c, 0);
        endpoint item = c.input(2);
        endpoint d_item = b.op("TensorListGetItem", {dl, c.input(1), shape_of(b, item)},
                               {{"element_dtype", element_dtype(c)}});
        endpoint d_list = b.op("TensorListSetItem", {dl, c.input(1), b.op("ZerosLike", {item})});
        if (c.attr("resize_if_index_out_of_bounds").b()) {
            d_list = b.op("TensorListResize", {d_list, b.op("TensorListLength", {c.input(0)})});
        }
        return {d_list, std::nullopt, d_item};
    });
    r.add("TensorListGather", [](grad_context& c) -> grad_list {
        if (!c.grad(0)) return {std::nullopt, std::nullopt, std::nullopt};
        auto zeros = zeros_list(c, c.input(0), element_dtype(c));
        return {c.b().op("TensorListScatterIntoExistingList", {zeros, *c.grad(0), c.input(1)}), std::nullopt,
                std::nullopt};
    });
    r.add("TensorListScatterV2", [](grad_context& c) -> grad_list {
        const auto& b = c.b();
        endpoint dl = list_grad_or_zeros(c, 0);
        return {b.op("TensorListGather", {dl, c.input(1), row_shape(b, c.input(0))},
                     {{"element_dtype", element_dtype(c)}}),
                std::nullopt, std::nullopt, std::nullopt};
    });
    r.add("TensorListScatterIntoExistingList", [](grad_context& c) -> grad_list {
        const auto& b = c.b();
        endpoint dl = list_grad_or_zeros(c, 0);
        endpoint t = c.input(1);
        endpoint dt = b.op("TensorListGather", {dl, c.input(2), row_shape(b, t)}, {{"element_dtype", element_dtype(c)}});
        endpoint d_list = b.op("TensorListScatterIntoExistingList", {dl, b.op("ZerosLike", {t}), c.input(2)});
        return {d_list, dt, std::nullopt};
    });
    r.add("TensorListConcatV2", [](grad_context& c) -> grad_list {
        if (!c.grad(0)) return {std::nullopt, std::nullopt, std::nullopt};
        const auto& b = c.b();
        auto es = b.op("TensorListElementShape", {c.input(0)}, {{"shape_type", dtype::int32}});
        return {b.op("TensorListSplit", {*c.grad(0), es, c.output(1)}), std::nullopt, std::nullopt};
    });
    r.add("TensorListSplit", [](grad_context& c) -> grad_list {
        const auto& b = c.b();
        endpoint dl = list_grad_or_zeros(c, 0);
        auto es = b.op("ConcatV2", {ints(b, {-1}), row_shape(b, c.input(0)), int_scalar(b, 0)});
        auto cat = b.op_n("TensorListConcatV2", {dl, es, c.input(2)}, {{"element_dtype", element_dtype(c)}});
        return {cat[0], std::nullopt, std::nullopt};
    });
    r.add("TensorListResize", [](grad_context& c) -> grad_list {
        if (!c.grad(0)) return {std::nullopt, std::nullopt};
        const auto& b = c.b();
        return {b.op("TensorListResize", {*c.grad(0), b.op("TensorListLength", {c.input(0)})}), std::nullopt};
    });
}

}  // namespace graft::autodiff::rules
