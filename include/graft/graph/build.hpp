// graft/graph/build.hpp — building graphs from C++ the way TF's Python layer does: nodes named
// under a scope, type attrs (T, Tidx, N, ...) inferred from the inputs through the op's OpDef,
// the OpDef's defaults written out, control dependencies, constants, placeholders, TF1 variables.
//
//   graft::graph g;
//   graft::graph_builder b(g);
//   auto x = b.placeholder("x", graft::dtype::float32, graft::shape{-1, 784});
//   auto w = b.variable("dense/kernel", graft::tensor(graft::dtype::float32, {784, 10}));
//   auto y = b.op("MatMul", {x, w.value});                 // node "MatMul", attrs T, transpose_a/b
//   auto s = b.sub("loss");                                 // names under "loss/"
//   auto l = s.op("Mean", {y, s.constant(graft::tensor::from_vector<int>({0, 1}))});
//   b.dtype_of(l) == graft::dtype::float32;
//
// Every method throws graph_error naming the node and op when the op is unknown or an input names
// a missing node; the graph is unchanged then.
#pragma once
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
#include "graft/core/tensor.hpp"
#include "graft/graph/graph.hpp"

namespace graft {

/// Attrs given at a call site: {{"transpose_a", true}, {"T", graft::dtype::float32}}.
using attr_list = std::vector<std::pair<std::string, attr_value>>;

/// The nodes of a TF1 ref variable as tf.Variable builds them.
struct variable_nodes {
    std::string name;      ///< the VariableV2 node (its output is the ref)
    std::string assign;    ///< "<name>/Assign": initializer
    std::string read;      ///< "<name>/read": Identity of the value
    endpoint ref;          ///< {name, 0}: the ref edge, for Assign*/Apply* ops
    endpoint value;        ///< {read, 0}: the value, for everything else
};

class graph_builder {
public:
    /// Builds into `g`; names go under `scope` ("" = top level; no trailing '/').
    explicit graph_builder(graph& g, std::string scope = {}) : g_(&g), scope_(std::move(scope)) {}

    [[nodiscard]] graph& g() const { return *g_; }
    [[nodiscard]] const std::string& scope() const { return scope_; }

    /// A builder whose names go under "<scope>/<name>" (made unique like tf.name_scope, so two
    /// sub("dense") give "dense" and "dense_1"). Control dependencies carry over.
    [[nodiscard]] graph_builder sub(std::string_view name) const {
        graph_builder b(*this);
        b.scope_ = g_->unique_name(qualify(name));
        return b;
    }
    /// As sub() but the scope is used as given, not made unique (re-entering a scope).
    [[nodiscard]] graph_builder at_scope(std::string scope) const {
        graph_builder b(*this);
        b.scope_ = std::move(scope);
        return b;
    }
    /// A builder that adds "^dep" control inputs to every node it creates.
    [[nodiscard]] graph_builder with_control_dependencies(const std::vector<std::string>& deps) const {
        graph_builder b(*this);
        for (auto& d : deps) b.control_.push_back(d);
        return b;
    }
    /// A builder that places every node it creates on `device` ("/device:GPU:0").
    [[nodiscard]] graph_builder on_device(std::string device) const {
        graph_builder b(*this);
        b.device_ = std::move(device);
        return b;
    }

    /// A free full name for `base` under this scope. Never throws (except bad_alloc).
    [[nodiscard]] std::string unique(std::string_view base) const { return g_->unique_name(qualify(base)); }

    /// Adds a node of type `op` reading `inputs`. Attrs not given are filled from the op's OpDef:
    /// type attrs from the inputs' dtypes, number attrs (N) and type lists from the input count,
    /// the rest from the OpDef's defaults. `name` defaults to the op type; it is made unique under
    /// this scope. Throws graph_error naming the node when the op is unknown, an input names a
    /// missing node or a type attr cannot be inferred.
    node& add(std::string_view op, std::vector<endpoint> inputs, attr_list attrs = {},
              std::string_view name = {}) const;
    /// add() and its output 0.
    endpoint op(std::string_view op, std::vector<endpoint> inputs, attr_list attrs = {},
                std::string_view name = {}) const {
        return add(op, std::move(inputs), std::move(attrs), name).output(0);
    }
    /// add() and all its outputs.
    std::vector<endpoint> op_n(std::string_view op, std::vector<endpoint> inputs, attr_list attrs = {},
                               std::string_view name = {}) const {
        node& n = add(op, std::move(inputs), std::move(attrs), name);
        int k = g_->num_outputs(n);
        std::vector<endpoint> r;
        r.reserve(static_cast<std::size_t>(k));
        for (int i = 0; i < k; ++i) r.push_back(n.output(i));
        return r;
    }
    /// A NoOp depending on `deps` (tf.group). Returns its name.
    std::string group(const std::vector<std::string>& deps, std::string_view name = "group_deps") const {
        node n(unique(name), "NoOp");
        for (auto& d : deps) n.add_control_input(d);
        return finish(std::move(n)).name;
    }

    /// A Placeholder of `type`; `s` unknown rank when not given.
    endpoint placeholder(std::string_view name, graft::dtype type, std::optional<graft::shape> s = std::nullopt) const {
        return add("Placeholder", {}, {{"dtype", type}, {"shape", s ? *s : graft::shape::unknown_rank()}}, name).output(0);
    }
    /// A Const holding `value`.
    endpoint constant(const tensor& value, std::string_view name = "Const") const {
        return add("Const", {}, {{"dtype", value.type()}, {"value", value}}, name).output(0);
    }
    /// A scalar Const of T's dtype.
    template <class T>
    endpoint scalar(T v, std::string_view name = "Const") const {
        return constant(tensor::scalar_of(v), name);
    }
    /// A scalar Const of `type` with value v (converted), for rules that work in the input's dtype.
    endpoint scalar_as(graft::dtype type, double v, std::string_view name = "Const") const;

    /// A TF1 ref variable (VariableV2 + Assign of a Const initial value + Identity "read"), named
    /// under this scope as tf.Variable names it.
    variable_nodes variable(std::string_view name, const tensor& initial) const {
        variable_nodes v = declare_variable(name, initial.type(), initial.shape());
        endpoint init = at_scope(v.name).constant(initial, "initial_value");
        finish_variable(v, init);
        return v;
    }
    /// As above with the initial value computed by `initializer` (an endpoint in this graph).
    variable_nodes variable(std::string_view name, graft::dtype type, const graft::shape& s,
                            const endpoint& initializer) const {
        variable_nodes v = declare_variable(name, type, s);
        finish_variable(v, initializer);
        return v;
    }

    /// The dtype of `e` (ref types reported as their base type). Throws graph_error naming the node.
    [[nodiscard]] graft::dtype dtype_of(const endpoint& e) const {
        const node& n = g_->at(e.node);
        return base_type(n.output_dtype(e.index, g_->registry()));
    }
    /// True when `e` is a TF1 ref edge. Throws graph_error naming the node.
    [[nodiscard]] bool is_ref(const endpoint& e) const {
        const node& n = g_->at(e.node);
        return graft::is_ref(n.output_dtype(e.index, g_->registry()));
    }

private:
    [[nodiscard]] std::string qualify(std::string_view base) const {
        return scope_.empty() ? std::string(base) : scope_ + "/" + std::string(base);
    }
    node& finish(node n) const {
        for (auto& d : control_) n.add_control_input(d);
        if (!device_.empty() && n.device.empty()) n.device = device_;
        return g_->add_node(std::move(n));
    }
    variable_nodes declare_variable(std::string_view name, graft::dtype type, const graft::shape& s) const {
        variable_nodes v;
        v.name = add("VariableV2", {}, {{"dtype", type}, {"shape", s}, {"container", std::string()},
                                        {"shared_name", std::string()}}, name).name;
        v.ref = endpoint{v.name, 0};
        return v;
    }
    void finish_variable(variable_nodes& v, const endpoint& init) const {
        graph_builder in = at_scope(v.name);
        in.control_.clear();
        v.assign = in.add("Assign", {v.ref, init}, {{"validate_shape", true}, {"use_locking", true}}, "Assign").name;
        v.read = in.add("Identity", {v.ref}, {}, "read").name;
        v.value = endpoint{v.read, 0};
    }

    graph* g_;
    std::string scope_;
    std::vector<std::string> control_;
    std::string device_;
};

}  // namespace graft

#include "graft/graph/detail/build_impl.hpp"
