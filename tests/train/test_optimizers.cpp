// Optimizers: one or two steps of each on a fixed problem equal the closed-form update, and the
// slot, non-slot and op names equal TF1's.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "graft/exec/session.hpp"
#include "graft/train/optimizer.hpp"

using graft::dtype;
using graft::endpoint;
using graft::tensor;
namespace train = graft::train;

namespace {

// float32-rounded hyperparameters: TF makes float32 Consts of Python floats
double f32(double x) { return static_cast<double>(static_cast<float>(x)); }

const std::vector<double> w0 = {1.0, 2.0, -3.0};
const std::vector<double> g0 = {0.1, -0.2, 0.3};

struct problem {
    graft::meta_graph mg;
    train::variable w;
    endpoint grad;
    explicit problem(dtype t) {
        graft::graph_builder b(mg.graph);
        w = train::create_variable(mg, b, "w", graft::cast(tensor::from_vector<double>(w0), t));
        grad = b.constant(graft::cast(tensor::from_vector<double>(g0), t), "grad");
    }
};

std::vector<double> values(graft::exec::session& s, const std::string& var) {
    tensor t = graft::cast(s.variable_value(var), dtype::float64);
    return {t.data<double>(), t.data<double>() + t.num_elements()};
}

void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(std::abs(got[i] - want[i]) <= tol * std::max(1.0, std::abs(want[i])));
}

bool has(const graft::graph& g, const std::string& n, const std::string& op = {}) {
    const graft::node* x = g.find(n);
    return x && (op.empty() || x->op == op);
}

std::vector<std::string> collection_names(const graft::meta_graph& mg, const std::string& c) {
    std::vector<std::string> r;
    if (auto* col = mg.collection(c)) for (auto& v : col->variables) r.push_back(v.variable_name);
    return r;
}

/// Runs init then `steps` times `train`, returns w.
std::vector<double> run_steps(problem& p, const std::string& train, int steps) {
    std::string init = train::global_variables_initializer(p.mg);
    graft::exec::session s(p.mg.graph);
    s.run({}, {}, {init});
    for (int i = 0; i < steps; ++i) s.run({}, {}, {train});
    return values(s, "w");
}

}  // namespace

TEST_CASE("GradientDescent: one step is w - lr * g, ops named as TF1") {
    for (dtype t : {dtype::float32, dtype::float64}) {
        problem p(t);
        train::gradient_descent opt(0.5);
        std::string op = opt.apply_gradients(p.mg, {{p.grad, p.w}});
        CHECK(op == "GradientDescent");
        CHECK(has(p.mg.graph, "GradientDescent", "NoOp"));
        CHECK(has(p.mg.graph, "GradientDescent/learning_rate", "Const"));
        CHECK(has(p.mg.graph, "GradientDescent/update_w/ApplyGradientDescent", "ApplyGradientDescent"));
        if (t == dtype::float64) CHECK(has(p.mg.graph, "GradientDescent/update_w/Cast", "Cast"));
        auto w = run_steps(p, op, 1);
        std::vector<double> want;
        for (int i = 0; i < 3; ++i) want.push_back(w0[i] - f32(0.5) * g0[i]);
        check_close(w, want, t == dtype::float64 ? 1e-12 : 1e-6);
    }
}

TEST_CASE("Momentum: two steps (plain and Nesterov) equal the closed form; slot <var>/Momentum") {
    for (bool nesterov : {false, true}) {
        problem p(dtype::float64);
        train::momentum opt(0.1, 0.9, false, "Momentum", nesterov);
        std::string op = opt.apply_gradients(p.mg, {{p.grad, p.w}});
        CHECK(has(p.mg.graph, "w/Momentum", "VariableV2"));
        CHECK(has(p.mg.graph, "w/Momentum/Initializer/zeros", "Const"));
        CHECK(has(p.mg.graph, "Momentum/update_w/ApplyMomentum"));
        CHECK(opt.get_slot(p.w, "momentum")->name == "w/Momentum");
        auto w = run_steps(p, op, 2);
        const double lr = f32(0.1), mu = f32(0.9);
        std::vector<double> want;
        for (int i = 0; i < 3; ++i) {
            double x = w0[i], a = 0;
            for (int k = 0; k < 2; ++k) {
                a = a * mu + g0[i];
                x -= nesterov ? g0[i] * lr + a * mu * lr : lr * a;
            }
            want.push_back(x);
        }
        check_close(w, want, 1e-12);
    }
}

TEST_CASE("Adam: two steps with bias correction; slots, beta powers and update ops named as TF1") {
    problem p(dtype::float32);
    graft::graph_builder b(p.mg.graph);
    auto bias = train::create_variable(p.mg, b, "b", tensor::from_vector<float>({0.5f}));
    auto gb = b.constant(tensor::from_vector<float>({-1.0f}), "grad_b");
    auto step = train::get_or_create_global_step(p.mg);
    train::adam opt(0.01);
    std::string op = opt.apply_gradients(p.mg, {{p.grad, p.w}, {gb, bias}}, step);
    const auto& g = p.mg.graph;
    CHECK(op == "Adam");
    CHECK(has(g, "Adam", "AssignAdd"));
    CHECK(has(g, "Adam/update", "NoOp"));
    CHECK(has(g, "Adam/value", "Const"));
    for (const char* n : {"w/Adam", "w/Adam_1", "b/Adam", "b/Adam_1", "beta1_power", "beta2_power"}) {
        CAPTURE(n);
        CHECK(has(g, n, "VariableV2"));
    }
    CHECK(has(g, "beta1_power/initial_value", "Const"));
    CHECK(has(g, "w/Adam/Initializer/zeros"));
    CHECK(has(g, "Adam/update_w/ApplyAdam", "ApplyAdam"));
    CHECK(has(g, "Adam/update_b/ApplyAdam", "ApplyAdam"));
    for (const char* n : {"Adam/learning_rate", "Adam/beta1", "Adam/beta2", "Adam/epsilon"}) CHECK(has(g, n, "Const"));
    CHECK(has(g, "Adam/mul", "Mul"));
    CHECK(has(g, "Adam/Assign", "Assign"));
    CHECK(has(g, "Adam/mul_1", "Mul"));
    CHECK(has(g, "Adam/Assign_1", "Assign"));
    CHECK(g.find("Adam/Assign")->inputs[0].node == "beta1_power");
    CHECK(g.find("Adam/Assign_1")->inputs[0].node == "beta2_power");
    CHECK(g.find("Adam/update_w/ApplyAdam")->inputs[3].node == "beta1_power/read");
    CHECK(opt.get_slot(p.w, "m")->name == "w/Adam");
    CHECK(opt.get_slot(p.w, "v")->name == "w/Adam_1");
    // collections: slots and powers are global, not trainable; global_step in its own collection
    auto global = collection_names(p.mg, "variables");
    CHECK(global == std::vector<std::string>{"w:0", "b:0", "global_step:0", "beta1_power:0", "beta2_power:0", "w/Adam:0",
                                             "w/Adam_1:0", "b/Adam:0", "b/Adam_1:0"});
    CHECK(collection_names(p.mg, "trainable_variables") == std::vector<std::string>{"w:0", "b:0"});
    CHECK(collection_names(p.mg, "global_step") == std::vector<std::string>{"global_step:0"});
    auto* vd = &p.mg.collection("variables")->variables[5];
    CHECK(vd->initializer_name == "w/Adam/Assign");
    CHECK(vd->snapshot_name == "w/Adam/read:0");
    CHECK(vd->initial_value_name == "w/Adam/Initializer/zeros:0");

    std::string init = train::global_variables_initializer(p.mg);
    graft::exec::session s(p.mg.graph);
    s.run({}, {}, {init});
    s.run({}, {}, {op});
    s.run({}, {}, {op});
    const double lr = f32(0.01), b1 = f32(0.9), b2 = f32(0.999), eps = f32(1e-8);
    std::vector<double> want;
    for (int i = 0; i < 3; ++i) {
        double x = w0[i], m = 0, v = 0, b1p = b1, b2p = b2;
        for (int k = 0; k < 2; ++k) {
            m += (g0[i] - m) * (1 - b1);
            v += (g0[i] * g0[i] - v) * (1 - b2);
            x -= lr * std::sqrt(1 - b2p) / (1 - b1p) * m / (std::sqrt(v) + eps);
            b1p *= b1;
            b2p *= b2;
        }
        want.push_back(x);
    }
    check_close(values(s, "w"), want, 1e-6);
    check_close(values(s, "beta1_power"), {b1 * b1 * b1}, 1e-6);
    check_close(values(s, "beta2_power"), {b2 * b2 * b2}, 1e-6);
    CHECK(s.variable_value("global_step").data<std::int64_t>()[0] == 2);
    check_close(values(s, "w/Adam"), {(1 - b1) * g0[0] * (1 + b1), (1 - b1) * g0[1] * (1 + b1), (1 - b1) * g0[2] * (1 + b1)}, 1e-6);
}

TEST_CASE("RMSProp (plain and centered): one step equals the closed form; rms starts at ones") {
    for (bool centered : {false, true}) {
        problem p(dtype::float64);
        train::rmsprop opt(0.01, 0.9, 0.5, 1e-10, false, centered);
        std::string op = opt.apply_gradients(p.mg, {{p.grad, p.w}});
        CHECK(has(p.mg.graph, "w/RMSProp/Initializer/ones", "Const"));
        CHECK(opt.get_slot(p.w, "rms")->name == "w/RMSProp");
        if (centered) {
            CHECK(opt.get_slot(p.w, "mg")->name == "w/RMSProp_1");
            CHECK(opt.get_slot(p.w, "momentum")->name == "w/RMSProp_2");
            CHECK(has(p.mg.graph, "RMSProp/update_w/ApplyCenteredRMSProp"));
        } else {
            CHECK(opt.get_slot(p.w, "momentum")->name == "w/RMSProp_1");
            CHECK(has(p.mg.graph, "RMSProp/update_w/ApplyRMSProp"));
        }
        auto w = run_steps(p, op, 2);
        const double lr = f32(0.01), rho = f32(0.9), mu = f32(0.5), eps = f32(1e-10);
        std::vector<double> want;
        for (int i = 0; i < 3; ++i) {
            double x = w0[i], ms = 1, mg = 0, mom = 0, g = g0[i];
            for (int k = 0; k < 2; ++k) {
                ms += (g * g - ms) * (1 - rho);
                mg += (g - mg) * (1 - rho);
                double denom = centered ? ms - mg * mg + eps : ms + eps;
                mom = mom * mu + lr * g / std::sqrt(denom);
                x -= mom;
            }
            want.push_back(x);
        }
        check_close(w, want, 1e-12);
    }
}

TEST_CASE("Adagrad: accumulator starts at 0.1 (<var>/Adagrad/Initializer/Const); one step") {
    problem p(dtype::float32);
    train::adagrad opt(0.1);
    std::string op = opt.apply_gradients(p.mg, {{p.grad, p.w}});
    CHECK(has(p.mg.graph, "w/Adagrad", "VariableV2"));
    CHECK(has(p.mg.graph, "w/Adagrad/Initializer/Const", "Const"));
    CHECK(has(p.mg.graph, "Adagrad/update_w/ApplyAdagrad"));
    auto w = run_steps(p, op, 1);
    std::vector<double> want;
    for (int i = 0; i < 3; ++i) want.push_back(w0[i] - f32(0.1) * g0[i] / std::sqrt(f32(0.1) + g0[i] * g0[i]));
    check_close(w, want, 1e-6);
}

TEST_CASE("apply_gradients: learning rate as a tensor, missing gradients skipped, second call scoped _1") {
    problem p(dtype::float32);
    graft::graph_builder b(p.mg.graph);
    auto other = train::create_variable(p.mg, b, "unused", tensor::from_vector<float>({1.0f}));
    auto lr = b.placeholder("lr", dtype::float32, graft::shape{});
    train::gradient_descent opt(lr);
    std::string op = opt.apply_gradients(p.mg, {{p.grad, p.w}, {std::nullopt, other}});
    CHECK(!has(p.mg.graph, "GradientDescent/learning_rate"));
    CHECK(!has(p.mg.graph, "GradientDescent/update_unused/ApplyGradientDescent"));
    std::string op2 = opt.apply_gradients(p.mg, {{p.grad, p.w}});
    CHECK(op2 == "GradientDescent_1");
    CHECK(has(p.mg.graph, "GradientDescent_1/update_w/ApplyGradientDescent"));
    std::string init = train::global_variables_initializer(p.mg);
    graft::exec::session s(p.mg.graph);
    s.run({}, {}, {init});
    s.run({{"lr:0", tensor::scalar_of(2.0f)}}, {}, {op});
    check_close(values(s, "w"), {w0[0] - 2 * g0[0], w0[1] - 2 * g0[1], w0[2] - 2 * g0[2]}, 1e-6);
    check_close(values(s, "unused"), {1.0}, 0);
    CHECK_THROWS_AS(opt.apply_gradients(p.mg, {{std::nullopt, p.w}}), graft::invalid_argument_error);
}

TEST_CASE("variables: VariableDefs, scopes, global step and init as TF1 writes them") {
    graft::meta_graph mg;
    graft::graph_builder b(mg.graph);
    auto k = train::create_variable(mg, b.sub("dense"), "kernel", tensor(dtype::float32, {2, 2}));
    auto c = train::create_variable(mg, b.sub("dense_1"), "kernel", tensor(dtype::float32, {2}));
    train::variable_options frozen;
    frozen.trainable = false;
    train::create_variable(mg, b, "frozen", tensor(dtype::float32, {1}), frozen);
    CHECK(k.name == "dense/kernel");
    CHECK(c.name == "dense_1/kernel");
    const auto& vd = mg.collection("trainable_variables")->variables[0];
    CHECK(vd.variable_name == "dense/kernel:0");
    CHECK(vd.initializer_name == "dense/kernel/Assign");
    CHECK(vd.snapshot_name == "dense/kernel/read:0");
    CHECK(vd.initial_value_name == "dense/kernel/initial_value:0");
    CHECK(vd.trainable);
    CHECK(graft::tf::decode_variable_def(mg.collection("trainable_variables")->values[0]) == vd);
    CHECK(train::trainable_variables(mg).size() == 2);
    CHECK(train::trainable_variables(mg, "dense/").size() == 1);
    CHECK(train::global_variables(mg).size() == 3);
    CHECK(train::var_list::scope("dense_1").resolve(mg)[0].name == "dense_1/kernel");
    CHECK(train::var_list::collection("variables").resolve(mg).size() == 3);
    CHECK(train::var_list::names({"frozen"}).resolve(mg)[0].read == "frozen/read");
    CHECK_THROWS_AS(train::var_list::names({"nope"}).resolve(mg), graft::not_found_error);

    auto gs = train::get_or_create_global_step(mg);
    CHECK(gs.name == "global_step");
    CHECK(train::get_or_create_global_step(mg).name == "global_step");  // not created twice
    CHECK(has(mg.graph, "global_step/Initializer/zeros", "Const"));
    const auto& gvd = mg.collection("global_step")->variables.at(0);
    CHECK(gvd.initial_value_name == "global_step/Initializer/zeros:0");
    CHECK(!gvd.trainable);
    CHECK(gvd.aggregation == 3);
    std::string init = train::global_variables_initializer(mg);
    CHECK(init == "init");
    CHECK(mg.graph.find("init")->control_inputs.size() == 4);
    graft::exec::session s(mg.graph);
    s.run({}, {}, {init});
    CHECK(s.variable_value("global_step").type() == dtype::int64);
}

TEST_CASE("slot initializers of large variables use Fill, as array_ops.zeros does") {
    graft::meta_graph mg;
    graft::graph_builder b(mg.graph);
    auto w = train::create_variable(mg, b, "big", tensor(dtype::float32, {40, 30}));
    auto g = b.constant(tensor(dtype::float32, {40, 30}), "g");
    train::adam opt;
    std::string op = opt.apply_gradients(mg, {{g, w}});
    CHECK(has(mg.graph, "big/Adam/Initializer/zeros", "Fill"));
    CHECK(has(mg.graph, "big/Adam/Initializer/zeros/shape_as_tensor", "Const"));
    std::string init = train::global_variables_initializer(mg);
    graft::exec::session s(mg.graph);
    s.run({}, {}, {init});
    s.run({}, {}, {op});
    CHECK(s.variable_value("big/Adam").shape() == graft::shape{40, 30});
}

TEST_CASE("resource variables: VarHandleOp slots and ResourceApply* ops give the numbers ref variables give") {
    std::vector<std::vector<double>> results;
    for (bool resource : {false, true}) {
        CAPTURE(resource);
        graft::meta_graph mg;
        graft::graph_builder b(mg.graph);
        train::variable_options o;
        o.use_resource = resource;
        auto w = train::create_variable(mg, b, "w", tensor::from_vector<float>({1, 2, -3}), o);
        auto g = b.constant(tensor::from_vector<float>({0.1f, -0.2f, 0.3f}), "grad");
        auto step = train::get_or_create_global_step(mg);
        train::adam opt(0.01);
        std::string op = opt.apply_gradients(mg, {{g, w}}, step);
        if (resource) {
            CHECK(has(mg.graph, "w", "VarHandleOp"));
            CHECK(has(mg.graph, "w/Assign", "AssignVariableOp"));
            CHECK(has(mg.graph, "w/Read/ReadVariableOp", "ReadVariableOp"));
            CHECK(has(mg.graph, "w/Adam", "VarHandleOp"));
            CHECK(has(mg.graph, "w/Adam_1", "VarHandleOp"));
            CHECK(has(mg.graph, "beta1_power", "VarHandleOp"));
            CHECK(has(mg.graph, "Adam/update_w/ResourceApplyAdam", "ResourceApplyAdam"));
            CHECK(has(mg.graph, "Adam/AssignVariableOp", "AssignVariableOp"));
            const auto& vd = mg.collection("trainable_variables")->variables.at(0);
            CHECK(vd.is_resource);
            CHECK(vd.snapshot_name == "w/Read/ReadVariableOp:0");
            CHECK(vd.initial_value_name == "w/Initializer/initial_value:0");
        }
        std::string init = train::global_variables_initializer(mg);
        graft::exec::session s(mg.graph);
        s.run({}, {}, {init});
        s.run({}, {}, {op});
        s.run({}, {}, {op});
        results.push_back(values(s, "w"));
        CHECK(values(s, "beta1_power")[0] == doctest::Approx(0.9 * 0.9 * 0.9).epsilon(1e-6));
    }
    CHECK(results[0] == results[1]);
}
