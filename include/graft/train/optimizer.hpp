// graft/train/optimizer.hpp — TF1 optimizers (tf.compat.v1.train.*Optimizer) as graph ops, with
// TF1's update formulas, slot names and op names, so a checkpoint with optimizer state moves
// between TensorFlow and graft. Link graft::compiled.
//
//   graft::train::adam opt(0.001);                                       // name "Adam"
//   auto step = graft::train::get_or_create_global_step(mg);
//   std::string train = opt.minimize(mg, loss, graft::train::var_list::trainable(), step);
//   // nodes: w/Adam, w/Adam_1, beta1_power, beta2_power, Adam/update_w/ApplyAdam, Adam/update,
//   //        Adam (AssignAdd of global_step): run `train` as a target.
//
//   auto gv = opt.compute_gradients(mg, loss);                            // (grad, var) pairs
//   gv[0].grad = ...;                                                    // e.g. clip_by_global_norm
//   opt.apply_gradients(mg, gv, step);
//
// Names follow TF1: slots are variables "<var>/<optimizer name>" (then "_1", "_2" for the second
// and third slot), initialized under "<slot>/Initializer/"; hyperparameters are float32 Consts
// "<name>/learning_rate", ...; the update of each variable is "<name>/update_<var>/Apply<Op>";
// the train op is the NoOp "<name>" (no global step) or, with a global step, the NoOp
// "<name>/update" followed by the AssignAdd "<name>". Slots and non-slot variables (Adam's
// beta1_power/beta2_power) join the "variables" collection, not "trainable_variables".
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "graft/train/variables.hpp"

namespace graft::train {

/// A hyperparameter: a number (becomes a float32 Const as in TF's convert_to_tensor) or a tensor
/// of the graph (e.g. a learning-rate schedule).
class hyper {
public:
    hyper(double v) : v_(v) {}           // NOLINT: implicit by design
    hyper(float v) : v_(double(v)) {}    // NOLINT
    hyper(int v) : v_(double(v)) {}      // NOLINT
    hyper(endpoint e) : v_(std::move(e)) {}  // NOLINT
    [[nodiscard]] bool is_tensor() const { return std::holds_alternative<endpoint>(v_); }
    [[nodiscard]] double number() const { return std::get<double>(v_); }
    [[nodiscard]] const endpoint& tensor() const { return std::get<endpoint>(v_); }
    /// The tensor: the endpoint, or a float32 Const named `name` under `b`. Throws graph_error.
    [[nodiscard]] endpoint materialize(const graph_builder& b, std::string_view name) const {
        if (is_tensor()) return tensor();
        return b.constant(graft::tensor::scalar_of(static_cast<float>(number())), name);
    }

private:
    std::variant<double, endpoint> v_;
};

/// A gradient and the variable it updates; no gradient = the variable is left alone.
struct grad_and_var {
    std::optional<endpoint> grad;
    variable var;
};
using grads_and_vars = std::vector<grad_and_var>;

/// Which variables to train or save: all trainable ones, those under a scope, those of a
/// collection, or an explicit list (by name or handle).
class var_list {
public:
    /// The "trainable_variables" collection (TF's default).
    static var_list trainable() { return var_list(); }
    /// Trainable variables whose names start with `scope` ("dense" -> "dense/kernel", ...).
    static var_list scope(std::string s) {
        var_list v;
        v.scope_ = std::move(s);
        return v;
    }
    /// The variables of `collection` (optionally under `scope`).
    static var_list collection(std::string c, std::string s = {}) {
        var_list v;
        v.collection_ = std::move(c);
        v.scope_ = std::move(s);
        return v;
    }
    /// Exactly these variables (VariableV2 node names).
    static var_list names(std::vector<std::string> n) {
        var_list v;
        v.names_ = std::move(n);
        v.explicit_ = true;
        return v;
    }
    /// Exactly these variables.
    static var_list of(std::vector<variable> vs) {
        var_list v;
        for (auto& x : vs) v.names_.push_back(x.name);
        v.explicit_ = true;
        return v;
    }
    /// The variables selected in `mg`, in collection (or given) order. Throws not_found_error
    /// naming a variable that is not in the graph.
    [[nodiscard]] std::vector<variable> resolve(const meta_graph& mg) const {
        if (explicit_) {
            std::vector<variable> out;
            for (auto& n : names_) out.push_back(variable_by_name(mg.graph, n));
            return out;
        }
        return variables_in_collection(mg, collection_, scope_);
    }

private:
    std::string collection_ = keys::trainable_variables;
    std::string scope_;
    std::vector<std::string> names_;
    bool explicit_ = false;
};

/// The base of the TF1 optimizers. Holds the slot variables it created, per primary variable.
class optimizer {
public:
    virtual ~optimizer() = default;
    optimizer(const optimizer&) = default;
    optimizer& operator=(const optimizer&) = default;

    /// The optimizer's name ("Adam"): the suffix of its slot names and the scope of its ops.
    [[nodiscard]] const std::string& name() const { return name_; }

    /// tf.compat.v1.train.Optimizer.compute_gradients: d(loss)/d(var) for the variables of
    /// `vars` (through graft::gradients, nodes under "gradients/"), one pair per variable, no
    /// gradient where the loss does not depend on it. `grad_loss` weights the loss (default 1).
    /// Throws invalid_argument_error (no variables, non-float loss or variable), graph_error (an
    /// op on the path has no gradient rule).
    grads_and_vars compute_gradients(meta_graph& mg, const endpoint& loss, const var_list& vars = var_list::trainable(),
                                     const std::optional<endpoint>& grad_loss = std::nullopt);

    /// tf.compat.v1.train.Optimizer.minimize: compute_gradients then apply_gradients. Returns the
    /// train op's name. Throws like both; invalid_argument_error when no variable gets a gradient.
    std::string minimize(meta_graph& mg, const endpoint& loss, const var_list& vars = var_list::trainable(),
                         const std::optional<variable>& global_step = std::nullopt, std::string_view name = {});

    /// tf.compat.v1.train.Optimizer.apply_gradients: slots for every variable with a gradient,
    /// the update ops, and (with `global_step`) the AssignAdd after them. `name` overrides the op
    /// scope (default: the optimizer's name, made unique). Returns the train op's name. Throws
    /// invalid_argument_error when no pair has a gradient or a variable is not floating point,
    /// graph_error from building.
    std::string apply_gradients(meta_graph& mg, const grads_and_vars& gv,
                                const std::optional<variable>& global_step = std::nullopt,
                                std::string_view name = {});

    /// The slot `slot_name` ("m", "v", "momentum", "rms", "mg", "accumulator") of `var`, or
    /// nullopt. Never throws.
    [[nodiscard]] std::optional<variable> get_slot(const variable& var, std::string_view slot_name) const {
        auto it = slots_.find(var.name);
        if (it == slots_.end()) return std::nullopt;
        auto jt = it->second.find(std::string(slot_name));
        if (jt == it->second.end()) return std::nullopt;
        return jt->second;
    }
    /// The slot names this optimizer uses, in creation order. Never throws.
    [[nodiscard]] virtual std::vector<std::string> get_slot_names() const = 0;
    /// Every variable this optimizer created (slots, then non-slot variables), in creation order.
    [[nodiscard]] const std::vector<variable>& variables() const { return created_; }

protected:
    explicit optimizer(std::string name, bool use_locking) : name_(std::move(name)), use_locking_(use_locking) {}

    /// Creates the slots of `vars` (TF's _create_slots); runs at the top level of the graph.
    virtual void create_slots(meta_graph& mg, const std::vector<variable>& vars) = 0;
    /// Creates the hyperparameter tensors under the op scope `b` (TF's _prepare).
    virtual void prepare(const graph_builder& b) = 0;
    /// Adds the update of `var` by `grad` under `b` ("<name>/update_<var>"); returns the op name.
    virtual std::string apply_dense(const graph_builder& b, const endpoint& grad, const variable& var) = 0;
    /// Groups the updates into the NoOp with the full name `group_name` (TF's _finish); extra
    /// ops go under the op scope `b`. Returns the group's name.
    virtual std::string finish(const graph_builder& b, const std::vector<std::string>& updates,
                               const std::string& group_name) {
        return graph_builder(b.g()).group(updates, group_name);
    }

    /// A zero-filled slot "<var>/<name>[_k]" (TF's _zeros_slot). Throws graph_error.
    variable& zeros_slot(meta_graph& mg, const variable& var, const std::string& slot_name) {
        return filled_slot(mg, var, slot_name, fill_kind::zeros, 0);
    }
    /// A slot filled with `value` (ones: "Initializer/ones", other: "Initializer/Const").
    variable& filled_slot(meta_graph& mg, const variable& var, const std::string& slot_name, fill_kind k, double value) {
        auto& per_var = slots_[var.name];
        if (auto it = per_var.find(slot_name); it != per_var.end()) return it->second;
        auto [type, shp] = detail::variable_type(mg.graph, var.name);
        std::string slot = detail::free_scope(mg.graph, var.name + "/" + name_);
        variable_options o;
        o.trainable = false;
        o.collections = {keys::global_variables};
        o.use_resource = is_resource_variable(mg.graph, var);
        graph_builder top(mg.graph);
        variable v = create_filled_variable(mg, top, slot, type, shp, k, value, o);
        created_.push_back(v);
        return per_var.emplace(slot_name, v).first->second;
    }
    /// A scalar non-slot variable `base` (made unique) with initial value `value` in the dtype of
    /// `like` (TF's _create_non_slot_variable: "beta1_power"), a resource variable when
    /// `resource`. Reused when it exists.
    variable& non_slot(meta_graph& mg, const std::string& base, double value, dtype like, bool resource = false) {
        if (auto it = non_slot_.find(base); it != non_slot_.end() && mg.graph.contains(it->second.name)) return it->second;
        graph_builder top(mg.graph);
        variable_options o;
        o.trainable = false;
        o.collections = {keys::global_variables};
        o.use_resource = resource;
        variable v = create_variable(mg, top, base, graft::cast(graft::tensor::scalar_of(value), like), o);
        created_.push_back(v);
        non_slot_.insert_or_assign(base, v);
        return non_slot_.at(base);
    }
    /// `x` cast to `t` under `b` ("Cast"), or `x` itself when it already has dtype `t`.
    static endpoint cast_to(const graph_builder& b, const endpoint& x, dtype t) {
        if (b.dtype_of(x) == t) return x;
        return b.op("Cast", {x}, {{"DstT", t}}, "Cast");
    }
    /// The base dtype of variable `v`. Throws graph_error.
    static dtype type_of(const meta_graph& mg, const variable& v) { return detail::variable_type(mg.graph, v.name).first; }
    /// The base dtype of variable `v` in the graph `b` builds. Throws graph_error.
    static dtype type_of(const graph_builder& b, const variable& v) { return detail::variable_type(b.g(), v.name).first; }
    /// `op` ("ApplyAdam") for a ref variable, "Resource" + op for a resource variable.
    static std::string apply_op_for(const graph_builder& b, const variable& v, const std::string& op) {
        return is_resource_variable(b.g(), v) ? "Resource" + op : op;
    }

    std::string name_;
    bool use_locking_ = false;
    std::map<std::string, std::map<std::string, variable>> slots_;
    std::map<std::string, variable> non_slot_;
    std::vector<variable> created_;
};

inline std::string optimizer::apply_gradients(meta_graph& mg, const grads_and_vars& gv,
                                              const std::optional<variable>& global_step, std::string_view name) {
    std::vector<const grad_and_var*> todo;
    for (auto& p : gv) {
        dtype t = type_of(mg, p.var);
        if (t != dtype::float32 && t != dtype::float64 && t != dtype::float16 && t != dtype::bfloat16) {
            throw invalid_argument_error("cannot train variable '" + p.var.name + "' of dtype " + dtype_name(t),
                                         location::at_node(p.var.name, name_), "train floating-point variables only");
        }
        if (p.grad) todo.push_back(&p);
    }
    if (todo.empty()) {
        std::string names;
        for (auto& p : gv) names += (names.empty() ? "" : ", ") + p.var.name;
        throw invalid_argument_error("no gradients provided for any variable: [" + names + "]",
                                     location::at_node(std::string(name.empty() ? name_ : name), name_),
                                     "check that the loss depends on the variables");
    }
    std::vector<variable> vars;
    for (auto* p : todo) vars.push_back(p->var);
    create_slots(mg, vars);
    std::string scope = detail::free_scope(mg.graph, name.empty() ? name_ : name);
    graph_builder top(mg.graph);
    graph_builder in = top.at_scope(scope);
    prepare(in);
    std::vector<std::string> updates;
    for (auto* p : todo) {
        graph_builder upd = in.at_scope(detail::free_scope(mg.graph, scope + "/update_" + p->var.name));
        updates.push_back(apply_dense(upd, *p->grad, p->var));
    }
    std::string train;
    if (!global_step) {
        train = finish(in, updates, scope);  // TF's group(name="Adam/") is the op "Adam"
    } else {
        std::string update = finish(in, updates, scope + "/update");
        graph_builder after = top.with_control_dependencies({update});
        dtype st = type_of(mg, *global_step);
        endpoint one = after.at_scope(scope).constant(graft::cast(graft::tensor::scalar_of(std::int64_t{1}), st), "value");
        if (is_resource_variable(mg.graph, *global_step)) {
            train = after.add("AssignAddVariableOp", {global_step->ref, one}, {}, scope).name;
        } else {
            train = after.add("AssignAdd", {global_step->ref, one}, {{"use_locking", false}}, scope).name;
        }
    }
    return train;
}

}  // namespace graft::train

#include "graft/train/detail/optimizers.hpp"
#include "graft/train/detail/minimize.hpp"
