// graft/train/detail/optimizers.hpp — the five TF1 optimizers. Include graft/train/optimizer.hpp.
//
// Each class mirrors tensorflow/python/training/<name>.py: constructor arguments and defaults,
// slots (_create_slots), hyperparameter Consts (_prepare) and the Apply* op (_apply_dense).
#pragma once

#include "graft/train/optimizer.hpp"

namespace graft::train {

/// tf.compat.v1.train.GradientDescentOptimizer: var -= lr * grad (ApplyGradientDescent).
class gradient_descent : public optimizer {
public:
    explicit gradient_descent(hyper learning_rate, bool use_locking = false, std::string name = "GradientDescent")
        : optimizer(std::move(name), use_locking), lr_(std::move(learning_rate)) {}
    [[nodiscard]] std::vector<std::string> get_slot_names() const override { return {}; }

protected:
    void create_slots(meta_graph&, const std::vector<variable>&) override {}
    void prepare(const graph_builder& b) override { lr_t_ = lr_.materialize(b, "learning_rate"); }
    std::string apply_dense(const graph_builder& b, const endpoint& grad, const variable& var) override {
        dtype t = type_of(b, var);
        return b.add(apply_op_for(b, var, "ApplyGradientDescent"), {var.ref, cast_to(b, lr_t_, t), grad}, {{"use_locking", use_locking_}}).name;
    }

private:
    hyper lr_;
    endpoint lr_t_;
};

/// tf.compat.v1.train.MomentumOptimizer: accum = accum * momentum + grad; var -= lr * accum
/// (Nesterov: var -= lr * grad + lr * momentum * accum). Slot "momentum" = "<var>/Momentum".
class momentum : public optimizer {
public:
    momentum(hyper learning_rate, hyper momentum_value, bool use_locking = false, std::string name = "Momentum",
             bool use_nesterov = false)
        : optimizer(std::move(name), use_locking), lr_(std::move(learning_rate)), mom_(std::move(momentum_value)),
          nesterov_(use_nesterov) {}
    [[nodiscard]] std::vector<std::string> get_slot_names() const override { return {"momentum"}; }

protected:
    void create_slots(meta_graph& mg, const std::vector<variable>& vars) override {
        for (auto& v : vars) zeros_slot(mg, v, "momentum");
    }
    void prepare(const graph_builder& b) override {
        lr_t_ = lr_.materialize(b, "learning_rate");
        mom_t_ = mom_.materialize(b, "momentum");
    }
    std::string apply_dense(const graph_builder& b, const endpoint& grad, const variable& var) override {
        dtype t = type_of(b, var);
        auto accum = *get_slot(var, "momentum");
        return b.add(apply_op_for(b, var, "ApplyMomentum"), {var.ref, accum.ref, cast_to(b, lr_t_, t), grad, cast_to(b, mom_t_, t)},
                     {{"use_locking", use_locking_}, {"use_nesterov", nesterov_}}).name;
    }

private:
    hyper lr_, mom_;
    bool nesterov_;
    endpoint lr_t_, mom_t_;
};

/// tf.compat.v1.train.AdamOptimizer: m, v slots ("<var>/Adam", "<var>/Adam_1"), non-slot
/// "beta1_power"/"beta2_power" (initial beta1/beta2, updated after the variables:
/// "<name>/mul", "<name>/Assign", "<name>/mul_1", "<name>/Assign_1").
class adam : public optimizer {
public:
    explicit adam(hyper learning_rate = 0.001, double beta1 = 0.9, double beta2 = 0.999, double epsilon = 1e-8,
                  bool use_locking = false, std::string name = "Adam")
        : optimizer(std::move(name), use_locking), lr_(std::move(learning_rate)), beta1_(beta1), beta2_(beta2),
          epsilon_(epsilon) {}
    [[nodiscard]] std::vector<std::string> get_slot_names() const override { return {"m", "v"}; }
    /// beta1_power and beta2_power, once apply_gradients made them. Never throws.
    [[nodiscard]] std::optional<std::pair<variable, variable>> beta_accumulators() const {
        auto a = non_slot_.find("beta1_power"), b = non_slot_.find("beta2_power");
        if (a == non_slot_.end() || b == non_slot_.end()) return std::nullopt;
        return std::pair{a->second, b->second};
    }

protected:
    void create_slots(meta_graph& mg, const std::vector<variable>& vars) override {
        // colocated with the alphabetically first variable; the dtype is that variable's
        const variable* first = &vars.front();
        for (auto& v : vars) {
            if (v.name < first->name) first = &v;
        }
        dtype t = type_of(mg, *first);
        bool resource = is_resource_variable(mg.graph, *first);
        b1p_ = non_slot(mg, "beta1_power", beta1_, t, resource);
        b2p_ = non_slot(mg, "beta2_power", beta2_, t, resource);
        for (auto& v : vars) {
            zeros_slot(mg, v, "m");
            zeros_slot(mg, v, "v");
        }
    }
    void prepare(const graph_builder& b) override {
        lr_t_ = lr_.materialize(b, "learning_rate");
        b1_t_ = b.scalar(static_cast<float>(beta1_), "beta1");
        b2_t_ = b.scalar(static_cast<float>(beta2_), "beta2");
        eps_t_ = b.scalar(static_cast<float>(epsilon_), "epsilon");
    }
    std::string apply_dense(const graph_builder& b, const endpoint& grad, const variable& var) override {
        dtype t = type_of(b, var);
        auto m = *get_slot(var, "m");
        auto v = *get_slot(var, "v");
        return b.add(apply_op_for(b, var, "ApplyAdam"),
                     {var.ref, m.ref, v.ref, cast_to(b, b1p_.value, t), cast_to(b, b2p_.value, t), cast_to(b, lr_t_, t),
                      cast_to(b, b1_t_, t), cast_to(b, b2_t_, t), cast_to(b, eps_t_, t), grad},
                     {{"use_locking", use_locking_}, {"use_nesterov", false}}).name;
    }
    std::string finish(const graph_builder& b, const std::vector<std::string>& updates,
                       const std::string& group_name) override {
        graph_builder after = b.with_control_dependencies(updates);
        dtype t = type_of(b, b1p_);
        auto assign = [&](const variable& v, const endpoint& x) {
            if (is_resource_variable(b.g(), v)) return after.add("AssignVariableOp", {v.ref, x}, {}, "AssignVariableOp").name;
            return after.add("Assign", {v.ref, x}, {{"use_locking", use_locking_}, {"validate_shape", true}}, "Assign").name;
        };
        endpoint m1 = after.op("Mul", {b1p_.value, cast_to(after, b1_t_, t)}, {}, "mul");
        std::string a1 = assign(b1p_, m1);
        endpoint m2 = after.op("Mul", {b2p_.value, cast_to(after, b2_t_, t)}, {}, "mul");
        std::string a2 = assign(b2p_, m2);
        std::vector<std::string> all = updates;
        all.push_back(a1);
        all.push_back(a2);
        return graph_builder(b.g()).group(all, group_name);
    }

private:
    hyper lr_;
    double beta1_, beta2_, epsilon_;
    variable b1p_, b2p_;
    endpoint lr_t_, b1_t_, b2_t_, eps_t_;
};

/// tf.compat.v1.train.RMSPropOptimizer: slots rms (initialized to ones, "<var>/RMSProp"), mg
/// (centered only) and momentum ("<var>/RMSProp_1", "<var>/RMSProp_2"). ApplyRMSProp or
/// ApplyCenteredRMSProp.
class rmsprop : public optimizer {
public:
    explicit rmsprop(hyper learning_rate, double decay = 0.9, double momentum_value = 0.0, double epsilon = 1e-10,
                     bool use_locking = false, bool centered = false, std::string name = "RMSProp")
        : optimizer(std::move(name), use_locking), lr_(std::move(learning_rate)), decay_(decay),
          mom_(momentum_value), epsilon_(epsilon), centered_(centered) {}
    [[nodiscard]] std::vector<std::string> get_slot_names() const override {
        if (centered_) return {"rms", "mg", "momentum"};
        return {"rms", "momentum"};
    }

protected:
    void create_slots(meta_graph& mg, const std::vector<variable>& vars) override {
        for (auto& v : vars) {
            filled_slot(mg, v, "rms", fill_kind::ones, 1.0);
            if (centered_) zeros_slot(mg, v, "mg");
            zeros_slot(mg, v, "momentum");
        }
    }
    void prepare(const graph_builder& b) override {
        lr_t_ = lr_.materialize(b, "learning_rate");
        decay_t_ = b.scalar(static_cast<float>(decay_), "decay");
        mom_t_ = b.scalar(static_cast<float>(mom_), "momentum");
        eps_t_ = b.scalar(static_cast<float>(epsilon_), "epsilon");
    }
    std::string apply_dense(const graph_builder& b, const endpoint& grad, const variable& var) override {
        dtype t = type_of(b, var);
        auto rms = *get_slot(var, "rms");
        auto mom = *get_slot(var, "momentum");
        attr_list attrs{{"use_locking", use_locking_}};
        if (centered_) {
            auto mg = *get_slot(var, "mg");
            return b.add(apply_op_for(b, var, "ApplyCenteredRMSProp"),
                         {var.ref, mg.ref, rms.ref, mom.ref, cast_to(b, lr_t_, t), cast_to(b, decay_t_, t),
                          cast_to(b, mom_t_, t), cast_to(b, eps_t_, t), grad}, attrs).name;
        }
        return b.add(apply_op_for(b, var, "ApplyRMSProp"),
                     {var.ref, rms.ref, mom.ref, cast_to(b, lr_t_, t), cast_to(b, decay_t_, t), cast_to(b, mom_t_, t),
                      cast_to(b, eps_t_, t), grad}, attrs).name;
    }

private:
    hyper lr_;
    double decay_, mom_, epsilon_;
    bool centered_;
    endpoint lr_t_, decay_t_, mom_t_, eps_t_;
};

/// tf.compat.v1.train.AdagradOptimizer: slot accumulator ("<var>/Adagrad", initialized to
/// initial_accumulator_value by "<slot>/Initializer/Const"); accum += g^2; var -= lr g / sqrt(accum).
class adagrad : public optimizer {
public:
    explicit adagrad(hyper learning_rate, double initial_accumulator_value = 0.1, bool use_locking = false,
                     std::string name = "Adagrad")
        : optimizer(std::move(name), use_locking), lr_(std::move(learning_rate)), init_(initial_accumulator_value) {
        if (init_ <= 0) {
            throw invalid_argument_error(graft::detail::cat("initial_accumulator_value must be positive: ", init_), {},
                                         "pass a value > 0 (TF's default is 0.1)");
        }
    }
    [[nodiscard]] std::vector<std::string> get_slot_names() const override { return {"accumulator"}; }

protected:
    void create_slots(meta_graph& mg, const std::vector<variable>& vars) override {
        for (auto& v : vars) filled_slot(mg, v, "accumulator", fill_kind::constant, init_);
    }
    void prepare(const graph_builder& b) override { lr_t_ = lr_.materialize(b, "learning_rate"); }
    std::string apply_dense(const graph_builder& b, const endpoint& grad, const variable& var) override {
        dtype t = type_of(b, var);
        auto acc = *get_slot(var, "accumulator");
        return b.add(apply_op_for(b, var, "ApplyAdagrad"), {var.ref, acc.ref, cast_to(b, lr_t_, t), grad},
                     {{"use_locking", use_locking_}, {"update_slots", true}}).name;
    }

private:
    hyper lr_;
    double init_;
    endpoint lr_t_;
};

}  // namespace graft::train
