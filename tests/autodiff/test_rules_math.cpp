// Every elementwise rule through the gradient checker: unary ops, broadcasting binary ops and the
// activation-gradient ops (second order), in float64 and float32.
#include <doctest/doctest.h>

#include "checking.hpp"

using graft::endpoint;
using graft::graph_builder;
using graft::shape;
using graft::tensor;
using graft::test::check_both;
using graft::test::values;
using xs_t = std::vector<endpoint>;

TEST_CASE("rules: unary math and activations") {
    struct unary_case {
        const char* op;
        double lo, hi;
    };
    const std::vector<unary_case> cases = {
        {"Neg", -2, 2},     {"Abs", -2, 2},     {"Square", -2, 2},    {"Sqrt", 0.2, 3},   {"Rsqrt", 0.2, 3},
        {"Reciprocal", 0.3, 3}, {"Inv", -3, -0.3}, {"Exp", -2, 2},    {"Log", 0.2, 3},    {"Log1p", -0.5, 3},
        {"Tanh", -2, 2},    {"Sigmoid", -3, 3}, {"Relu", -2, 2},      {"Relu6", -2, 8},   {"Elu", -2, 2},
        {"Selu", -2, 2},    {"Softplus", -3, 3}, {"LeakyRelu", -2, 2}, {"Sin", -3, 3},    {"Cos", -3, 3},
        {"Erf", -2, 2},     {"Sign", -2, 2},
    };
    for (auto& c : cases) {
        for (auto s : {shape{}, shape{5}, shape{2, 3}}) {
            auto x = values(s, 11, c.lo, c.hi, 0.05);
            // Relu6: keep a step away from 6 as well.
            if (std::string(c.op) == "Relu6") {
                for (std::int64_t i = 0; i < x.num_elements(); ++i) {
                    double& v = x.data<double>()[i];
                    if (std::abs(v - 6) < 0.05) v = 5.5;
                }
            }
            check_both(std::string(c.op) + " " + s.str(),
                       [&](const graph_builder& b, const xs_t& in) { return xs_t{b.op(c.op, {in[0]})}; }, {x});
        }
    }
    // LeakyRelu with its own alpha.
    check_both("LeakyRelu alpha 0.3",
               [](const graph_builder& b, const xs_t& in) { return xs_t{b.op("LeakyRelu", {in[0]}, {{"alpha", 0.3f}})}; },
               {values(shape{4, 3}, 3)});
}

TEST_CASE("rules: broadcasting binary ops") {
    struct shapes {
        shape a, b;
    };
    const std::vector<shapes> bcast = {{{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{3}, {2, 3}}, {{2, 1, 3}, {4, 1}},
                                       {{}, {2, 2}},     {{2, 2}, {}},  {{1, 3}, {2, 1}}};
    for (const char* op : {"Add", "AddV2", "Sub", "Mul", "Div", "RealDiv", "Maximum", "Minimum", "SquaredDifference"}) {
        for (auto& s : bcast) {
            auto a = values(s.a, 1, -2, 2, 0.3);
            auto bv = values(s.b, 2, -2, 2, 0.3);
            if (std::string(op) == "Maximum" || std::string(op) == "Minimum") {
                // keep a and b apart (no ties within the step).
                a = graft::test::distinct_values(s.a, 5, -2.0, 0.37);
                bv = graft::test::distinct_values(s.b, 6, -1.98, 0.37);
            }
            check_both(std::string(op) + " " + s.a.str() + " " + s.b.str(),
                       [&](const graph_builder& b, const xs_t& in) { return xs_t{b.op(op, {in[0], in[1]})}; }, {a, bv});
        }
    }
    // Pow: positive base for the exponent's gradient.
    for (auto& s : bcast) {
        check_both("Pow " + s.a.str() + " " + s.b.str(),
                   [](const graph_builder& b, const xs_t& in) { return xs_t{b.op("Pow", {in[0], in[1]})}; },
                   {values(s.a, 3, 0.3, 2.0), values(s.b, 4, -1.5, 1.5)});
    }
    // FloorMod w.r.t. x (the y gradient is piecewise constant too; keep away from the jumps).
    check_both("FloorMod", [](const graph_builder& b, const xs_t& in) { return xs_t{b.op("FloorMod", {in[0], in[1]})}; },
               {tensor::from_vector<double>({4}, {1.3, 2.6, -0.7, 5.1}), tensor::from_vector<double>({4}, {1.0, 1.1, 0.9, 2.0})});
}

TEST_CASE("rules: activation-gradient ops (second order)") {
    // Checked as ops of two inputs (gradients/outputs, features).
    for (const char* op : {"ReluGrad", "Relu6Grad", "LeakyReluGrad", "EluGrad", "SeluGrad", "SoftplusGrad"}) {
        auto g = values(shape{2, 3}, 7);
        auto f = values(shape{2, 3}, 8, -2, 2, 0.1);
        check_both(op, [&](const graph_builder& b, const xs_t& in) { return xs_t{b.op(op, {in[0], in[1]})}; }, {g, f});
    }
    for (const char* op : {"SigmoidGrad", "TanhGrad", "RsqrtGrad", "SqrtGrad", "ReciprocalGrad", "InvGrad"}) {
        auto y = values(shape{2, 3}, 9, 0.2, 0.9);
        auto dy = values(shape{2, 3}, 10);
        check_both(op, [&](const graph_builder& b, const xs_t& in) { return xs_t{b.op(op, {in[0], in[1]})}; }, {y, dy});
    }
    // Gradient of a gradient end to end: d/dx of d tanh(x*w)/dw.
    check_both("grad of grad", [](const graph_builder& b, const xs_t& in) {
        auto y = b.op("Tanh", {b.op("Mul", {in[0], in[1]})});
        auto dw = graft::gradients(b.g(), {y}, {in[1]});
        return xs_t{*dw[0]};
    }, {values(shape{3}, 12, -1, 1), values(shape{3}, 13, -1, 1)});
}
