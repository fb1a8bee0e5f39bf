// The training family on the GPU against the CPU (op_case): every Apply* optimizer op and its
// Resource* form runs 3 steps on variables initialized on the GPU or on the CPU (the GPU kernel
// then moves the value), and var plus every slot are compared after the steps.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "op_case.hpp"

using graft::dtype;
using graft::shape;
using graft::tensor;

namespace gpu_training_test {

const shape var_shape{3, 5};

tensor values(float lo, float hi, std::uint32_t seed) {
    return graft::test_cuda::ramp(var_shape, lo, hi, seed);
}

/// Builds `op` (or Resource`op`) over variables with initial values `vars` (var first, then its
/// slots) and further inputs `rest` (constants, in the op's order), runs the initializers, then 3
/// steps, on the CPU and on the GPU, and compares var and the slots. Returns the GPU run's values.
std::vector<tensor> check_apply(const std::string& op, bool resource, bool init_on_cpu,
                                const std::vector<tensor>& vars, const std::vector<tensor>& rest,
                                graft::attr_list attrs = {}) {
    INFO(op << (resource ? " (resource)" : " (ref)")
            << (init_on_cpu ? ", initialized on the CPU" : ""));
    graft::graph g;
    graft::graph_builder b(g);
    const graft::graph_builder init_b = init_on_cpu ? b.on_device("/device:CPU:0") : b;
    std::vector<std::string> inits, fetches;
    std::vector<graft::endpoint> in;
    for (std::size_t i = 0; i < vars.size(); ++i) {
        const std::string name = "v" + std::to_string(i);
        if (!resource) {
            auto v = init_b.variable(name, vars[i]);
            inits.push_back(v.assign);
            in.push_back(v.ref);
            // v.value (name/read) sits on the init device; read the variable where the step ran.
            fetches.push_back(init_on_cpu ? b.op("Identity", {v.ref}, {}, name + "/fetch").str() : v.value.str());
        } else {
            auto h = init_b.op(
                "VarHandleOp", {},
                {{"dtype", dtype::float32}, {"shape", vars[i].shape()}, {"shared_name", name}},
                name);
            auto c = init_b.constant(vars[i], name + "/initial_value");
            inits.push_back(
                init_b
                    .add("AssignVariableOp", {h, c}, {{"dtype", dtype::float32}}, name + "/Assign")
                    .name);
            in.push_back(h);
            fetches.push_back(
                b.op("ReadVariableOp", {h}, {{"dtype", dtype::float32}}, name + "/Read").str());
        }
    }
    for (const auto& t : rest) in.push_back(b.constant(t));
    attrs.emplace_back("T", dtype::float32);
    b.add(resource ? "Resource" + op : op, in, std::move(attrs), "apply");
    graft::test_cuda::op_case c;
    c.g = std::move(g);
    c.fetches = fetches;
    c.targets = inits;
    c.steps = 3;
    c.step_targets = {"apply"};
    return graft::test_cuda::check_cpu_vs_gpu(c);
}

tensor scalar(float v) {
    return tensor::scalar_of(v);
}

/// Runs `f(resource, init_on_cpu)` for the four combinations.
template <class F>
void each_form(F&& f) {
    for (bool resource : {false, true}) {
        for (bool init_on_cpu : {false, true}) f(resource, init_on_cpu);
    }
}

TEST_CASE("gpu training: ApplyGradientDescent / ResourceApplyGradientDescent") {
    each_form([](bool resource, bool cpu) {
        const tensor v0 = values(-1, 1, 1), g = values(-1, 1, 2);
        auto r = check_apply("ApplyGradientDescent", resource, cpu, {v0}, {scalar(0.1f), g});
        // var = v0 - 3 * 0.1 * g
        CHECK(r[0].data<float>()[4] ==
              doctest::Approx(v0.data<float>()[4] - 0.3 * g.data<float>()[4]).epsilon(1e-5));
    });
}

TEST_CASE("gpu training: ApplyMomentum / ResourceApplyMomentum, plain and Nesterov") {
    each_form([](bool resource, bool cpu) {
        for (bool nesterov : {false, true}) {
            CAPTURE(nesterov);
            check_apply("ApplyMomentum", resource, cpu, {values(-1, 1, 1), values(-0.5f, 0.5f, 3)},
                        {scalar(0.05f), values(-1, 1, 2), scalar(0.9f)},
                        {{"use_nesterov", nesterov}});
        }
    });
}

TEST_CASE("gpu training: ApplyAdam / ResourceApplyAdam (fused), plain and Nesterov") {
    each_form([](bool resource, bool cpu) {
        for (bool nesterov : {false, true}) {
            CAPTURE(nesterov);
            check_apply("ApplyAdam", resource, cpu,
                        {values(-1, 1, 1), values(-0.1f, 0.1f, 3), values(0.01f, 0.1f, 4)},
                        {scalar(0.9f), scalar(0.999f), scalar(0.01f), scalar(0.9f), scalar(0.999f),
                         scalar(1e-7f), values(-1, 1, 2)},
                        {{"use_nesterov", nesterov}});
        }
    });
}

TEST_CASE("gpu training: ApplyRMSProp / ResourceApplyRMSProp") {
    each_form([](bool resource, bool cpu) {
        check_apply("ApplyRMSProp", resource, cpu,
                    {values(-1, 1, 1), values(0.1f, 1, 3), values(-0.1f, 0.1f, 4)},
                    {scalar(0.01f), scalar(0.9f), scalar(0.5f), scalar(1e-6f), values(-1, 1, 2)});
    });
}

TEST_CASE("gpu training: ApplyCenteredRMSProp / ResourceApplyCenteredRMSProp") {
    each_form([](bool resource, bool cpu) {
        check_apply(
            "ApplyCenteredRMSProp", resource, cpu,
            {values(-1, 1, 1), values(-0.1f, 0.1f, 5), values(0.5f, 1, 3), values(-0.1f, 0.1f, 4)},
            {scalar(0.01f), scalar(0.9f), scalar(0.5f), scalar(1e-6f), values(-1, 1, 2)});
    });
}

TEST_CASE("gpu training: ApplyAdagrad / ResourceApplyAdagrad, with and without update_slots") {
    each_form([](bool resource, bool cpu) {
        for (bool update : {true, false}) {
            CAPTURE(update);
            check_apply("ApplyAdagrad", resource, cpu, {values(-1, 1, 1), values(0.1f, 1, 3)},
                        {scalar(0.1f), values(-1, 1, 2)}, {{"update_slots", update}});
        }
    });
}

TEST_CASE("gpu training: ResourceApplyAdagradV2, with and without update_slots") {
    // graft's op table has only the resource form of AdagradV2 (as TF's Python API uses).
    for (bool cpu : {false, true}) {
        for (bool update : {true, false}) {
            CAPTURE(update);
            check_apply("ApplyAdagradV2", true, cpu, {values(-1, 1, 1), values(0.1f, 1, 3)},
                        {scalar(0.1f), scalar(1e-6f), values(-1, 1, 2)},
                        {{"update_slots", update}});
        }
    }
}

}  // namespace gpu_training_test
