// graft/exec/cpu_kernels/math_more.hpp — the math_more family's CPU kernels bound to their TF op types:
// the elementwise math of ops/math_more.hpp, special functions (ops/special_functions.hpp), bit ops
// and Bitcast (ops/bitwise.hpp), scans, histograms and LinSpace (ops/cumulative.hpp) and fake
// quantization (ops/fake_quant.hpp).
#pragma once

#include <string>
#include <vector>

#include "graft/exec/kernel.hpp"
#include "graft/ops/bitwise.hpp"
#include "graft/ops/cumulative.hpp"
#include "graft/ops/fake_quant.hpp"
#include "graft/ops/math_more.hpp"
#include "graft/ops/special_functions.hpp"

namespace graft::exec::kernels {

namespace math_more_detail {
inline kernel_def host(std::vector<int> inputs) {
    kernel_def d;
    d.host_inputs = std::move(inputs);
    return d;
}
/// The single float of a scalar (or one-element) float32 input.
inline float float_scalar(kernel_context& c, int i, const char* what) {
    tensor t = c.input(i);
    if (base_type(t.type()) != dtype::float32 || t.num_elements() != 1)
        c.fail(graft::detail::cat(what, " must be a float32 scalar but is ", t.describe()));
    return t.data<float>()[0];
}
}  // namespace math_more_detail

inline void register_math_more(kernel_registry& r) {
    using math_more_detail::host;
    for (auto name : ops::math_unary_op_names()) {
        std::string op(name);
        r.add(op, [op](kernel_context& c) { c.set_output(0, ops::math_unary(op, c.input(0))); });
    }
    for (const char* op : {"Lgamma", "Digamma", "Erfc"}) {
        std::string o(op);
        r.add(o, [o](kernel_context& c) { c.set_output(0, ops::special_unary(o, c.input(0))); });
    }
    for (auto name : ops::math_binary_op_names()) {
        std::string op(name);
        r.add(op, [op](kernel_context& c) { c.set_output(0, ops::math_binary(op, c.input(0), c.input(1))); });
    }
    for (const char* op : {"Igamma", "Igammac", "IgammaGradA", "Polygamma", "Zeta"}) {
        std::string o(op);
        r.add(o, [o](kernel_context& c) { c.set_output(0, ops::special_binary(o, c.input(0), c.input(1))); });
    }
    r.add("Betainc", [](kernel_context& c) { c.set_output(0, ops::betainc(c.input(0), c.input(1), c.input(2))); });
    r.add("ApproximateEqual", [](kernel_context& c) {
        c.set_output(0, ops::approximate_equal(c.input(0), c.input(1), c.attr_or<float>("tolerance", 1e-5f)));
    });
    r.add("AccumulateNV2", [](kernel_context& c) {
        std::vector<tensor> xs;
        for (int i = 0; i < c.num_inputs(); ++i) xs.push_back(c.input(i));
        c.set_output(0, ops::accumulate_n("AccumulateNV2", xs));
    });

    // bits
    r.add("Invert", [](kernel_context& c) { c.set_output(0, ops::invert(c.input(0))); });
    r.add("PopulationCount", [](kernel_context& c) { c.set_output(0, ops::population_count(c.input(0))); });
    for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor", "LeftShift", "RightShift"}) {
        std::string o(op);
        r.add(o, [o](kernel_context& c) { c.set_output(0, ops::bitwise_binary(o, c.input(0), c.input(1))); });
    }
    r.add("Bitcast", [](kernel_context& c) { c.set_output(0, ops::bitcast(c.input(0), c.attr_type("type"))); });
    r.add("CompareAndBitpack",
          [](kernel_context& c) { c.set_output(0, ops::compare_and_bitpack(c.input(0), c.input(1))); });

    // scans, counts, ranges
    for (const char* op : {"Cumsum", "Cumprod"}) {
        std::string o(op);
        r.add(o, [o](kernel_context& c) {
            auto axis = ops::op_detail::int_scalar(o, c.input(1), "axis");
            c.set_output(0, ops::cumulative(o, c.input(0), axis, c.attr_or<bool>("exclusive", false),
                                            c.attr_or<bool>("reverse", false)));
        }, host({1}));
    }
    r.add("CumulativeLogsumexp", [](kernel_context& c) {
        auto axis = ops::op_detail::int_scalar("CumulativeLogsumexp", c.input(1), "axis");
        c.set_output(0, ops::cumulative_logsumexp(c.input(0), axis, c.attr_or<bool>("exclusive", false),
                                                  c.attr_or<bool>("reverse", false)));
    }, host({1}));
    r.add("HistogramFixedWidth", [](kernel_context& c) {
        auto nbins = ops::op_detail::int_scalar("HistogramFixedWidth", c.input(2), "nbins");
        c.set_output(0, ops::histogram_fixed_width(c.input(0), c.input(1), nbins, c.attr_or("dtype", dtype::int32)));
    }, host({1, 2}));
    r.add("Bincount", [](kernel_context& c) {
        auto size = ops::op_detail::int_scalar("Bincount", c.input(1), "size");
        c.set_output(0, ops::bincount(c.input(0), size, c.input(2)));
    }, host({0, 1}));
    r.add("LinSpace", [](kernel_context& c) {
        auto num = ops::op_detail::int_scalar("LinSpace", c.input(2), "num");
        c.set_output(0, ops::linspace(c.input(0), c.input(1), num));
    }, host({0, 1, 2}));

    // fake quantization
    auto bits = [](kernel_context& c) { return static_cast<int>(c.attr_or<std::int64_t>("num_bits", 8)); };
    r.add("FakeQuantWithMinMaxArgs", [bits](kernel_context& c) {
        c.set_output(0, ops::fake_quant(c.input(0), c.attr_or<float>("min", -6.f), c.attr_or<float>("max", 6.f), bits(c),
                                        c.attr_or<bool>("narrow_range", false), false));
    });
    r.add("FakeQuantWithMinMaxArgsGradient", [bits](kernel_context& c) {
        c.set_output(0, ops::fake_quant_args_gradient(c.input(0), c.input(1), c.attr_or<float>("min", -6.f),
                                                      c.attr_or<float>("max", 6.f), bits(c),
                                                      c.attr_or<bool>("narrow_range", false)));
    });
    r.add("FakeQuantWithMinMaxVars", [bits](kernel_context& c) {
        using math_more_detail::float_scalar;
        c.set_output(0, ops::fake_quant(c.input(0), float_scalar(c, 1, "min"), float_scalar(c, 2, "max"), bits(c),
                                        c.attr_or<bool>("narrow_range", false), true));
    }, host({1, 2}));
    r.add("FakeQuantWithMinMaxVarsGradient", [bits](kernel_context& c) {
        using math_more_detail::float_scalar;
        auto [dx, dmin, dmax] = ops::fake_quant_vars_gradient(c.input(0), c.input(1), float_scalar(c, 2, "min"),
                                                              float_scalar(c, 3, "max"), bits(c),
                                                              c.attr_or<bool>("narrow_range", false));
        c.set_output(0, dx);
        c.set_output(1, dmin);
        c.set_output(2, dmax);
    }, host({2, 3}));
    r.add("FakeQuantWithMinMaxVarsPerChannel", [bits](kernel_context& c) {
        c.set_output(0, ops::fake_quant_per_channel(c.input(0), c.input(1), c.input(2), bits(c),
                                                    c.attr_or<bool>("narrow_range", false)));
    });
    r.add("FakeQuantWithMinMaxVarsPerChannelGradient", [bits](kernel_context& c) {
        auto [dx, dmin, dmax] = ops::fake_quant_per_channel_gradient(c.input(0), c.input(1), c.input(2), c.input(3),
                                                                     bits(c), c.attr_or<bool>("narrow_range", false));
        c.set_output(0, dx);
        c.set_output(1, dmin);
        c.set_output(2, dmax);
    });
}

}  // namespace graft::exec::kernels
