// graft/train/schedules.hpp — learning-rate schedules over the global step and gradient clipping,
// as graph ops with TF1's formulas and names.
//
//   auto step = graft::train::get_or_create_global_step(mg);
//   graft::graph_builder b(mg.graph);
//   auto lr = graft::train::exponential_decay(b, 0.1, step.value, 1000, 0.96, /*staircase=*/true);
//   auto lr2 = graft::train::piecewise_constant(b, step.value, {100, 200}, {1.0, 0.5, 0.1});
//   auto [clipped, norm] = graft::train::clip_by_global_norm(b, grads, 5.0);
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/graph/build.hpp"
#include "graft/train/detail/names.hpp"

namespace graft::train {

/// tf.compat.v1.train.exponential_decay: learning_rate * decay_rate ^ (global_step / decay_steps)
/// (the exponent floored when `staircase`), in float32 under "ExponentialDecay/"; the result is the
/// Mul "ExponentialDecay". `global_step` is any integer or float scalar tensor. Throws
/// invalid_argument_error for decay_steps <= 0, graph_error from building.
inline endpoint exponential_decay(const graph_builder& b, double learning_rate, const endpoint& global_step,
                                  double decay_steps, double decay_rate, bool staircase = false) {
    if (!(decay_steps > 0)) {
        throw invalid_argument_error(graft::detail::cat("exponential_decay: decay_steps must be positive, got ", decay_steps),
                                     location::at_tensor(global_step.str()));
    }
    std::string scope = detail::free_scope(b.g(), b.scope().empty() ? "ExponentialDecay" : b.scope() + "/ExponentialDecay");
    graph_builder s = b.at_scope(scope);
    endpoint lr = s.scalar(static_cast<float>(learning_rate), "initial_learning_rate");
    endpoint steps = s.scalar(static_cast<float>(decay_steps), "Cast/x");
    endpoint rate = s.scalar(static_cast<float>(decay_rate), "Cast_1/x");
    endpoint step = global_step;
    if (s.dtype_of(step) != dtype::float32) step = s.op("Cast", {step}, {{"DstT", dtype::float32}}, "Cast_2");
    endpoint p = s.op("RealDiv", {step, steps}, {}, "truediv");
    if (staircase) p = s.op("Floor", {p}, {}, "Floor");
    endpoint pw = s.op("Pow", {rate, p}, {}, "Pow");
    return graph_builder(b.g()).add("Mul", {lr, pw}, {}, scope).output(0);
}

/// tf.compat.v1.train.piecewise_constant: values[0] while x <= boundaries[0], values[i] while
/// boundaries[i-1] < x <= boundaries[i], values.back() after the last boundary. Boundaries take
/// x's dtype, values are float32. Built as a chain of LessEqual + Select under "PiecewiseConstant/".
/// Throws invalid_argument_error unless values.size() == boundaries.size() + 1.
inline endpoint piecewise_constant(const graph_builder& b, const endpoint& x, const std::vector<double>& boundaries,
                                   const std::vector<double>& values) {
    if (values.size() != boundaries.size() + 1) {
        throw invalid_argument_error(graft::detail::cat("piecewise_constant: ", values.size(), " values for ", boundaries.size(),
                                                        " boundaries"),
                                     location::at_tensor(x.str()), "give one value more than boundaries");
    }
    graph_builder s = b.sub("PiecewiseConstant");
    dtype xt = s.dtype_of(x);
    endpoint r = s.scalar(static_cast<float>(values.back()), "Const");
    for (std::size_t k = boundaries.size(); k-- > 0;) {
        endpoint bound = s.scalar_as(xt, boundaries[k], "Const");
        endpoint le = s.op("LessEqual", {x, bound}, {}, "LessEqual");
        endpoint v = s.scalar(static_cast<float>(values[k]), "Const");
        r = s.op("Select", {le, v, r}, {}, "Select");
    }
    return s.op("Identity", {r}, {}, "value");
}

/// tf.linalg.global_norm: sqrt(sum_i 2 * L2Loss(t_i)) under "<scope>/global_norm/". Entries
/// without a tensor are skipped. Throws invalid_argument_error when none is given.
inline endpoint global_norm(const graph_builder& b, const std::vector<std::optional<endpoint>>& ts) {
    graph_builder s = b.sub("global_norm");
    std::vector<endpoint> halves;
    for (auto& t : ts) {
        if (t) halves.push_back(s.op("L2Loss", {*t}, {}, "L2Loss"));
    }
    if (halves.empty()) {
        throw invalid_argument_error("global_norm of no tensors", location::at_node(s.scope()),
                                     "pass at least one gradient");
    }
    endpoint stack = s.op("Pack", halves, {{"axis", 0}}, "stack");
    endpoint sum = s.op("Sum", {stack, s.constant(tensor::from_vector<std::int32_t>({0}), "Const")},
                        {}, "Sum");
    endpoint two = s.scalar_as(s.dtype_of(sum), 2.0, "Const_1");
    endpoint prod = s.op("Mul", {sum, two}, {}, "mul");
    return s.op("Sqrt", {prod}, {}, "global_norm");
}

/// tf.clip_by_global_norm: t_i * clip_norm / max(global_norm, clip_norm), as TF computes it
/// (scale = clip_norm * min(1/norm, 1/clip_norm) + (norm - norm), so a non-finite norm gives NaN).
/// Returns the clipped list (same positions; missing stay missing) and the global norm. Throws
/// invalid_argument_error for clip_norm <= 0 or no tensors.
inline std::pair<std::vector<std::optional<endpoint>>, endpoint> clip_by_global_norm(
    const graph_builder& b, const std::vector<std::optional<endpoint>>& ts, double clip_norm) {
    if (!(clip_norm > 0)) {
        throw invalid_argument_error(graft::detail::cat("clip_by_global_norm: clip_norm must be positive, got ", clip_norm));
    }
    graph_builder s = b.sub("clip_by_global_norm");
    endpoint norm = global_norm(s, ts);
    dtype t = s.dtype_of(norm);
    endpoint cn = s.scalar_as(t, clip_norm, "Const");
    endpoint inv_norm = s.op("RealDiv", {s.scalar_as(t, 1.0, "truediv/x"), norm}, {}, "truediv");
    endpoint inv_clip = s.op("RealDiv", {s.scalar_as(t, 1.0, "Const_1"), cn}, {}, "truediv_1");
    endpoint mn = s.op("Minimum", {inv_norm, inv_clip}, {}, "Minimum");
    endpoint scale0 = s.op("Mul", {cn, mn}, {}, "mul");
    endpoint nan_if_inf = s.op("Sub", {norm, norm}, {}, "sub");
    endpoint scale = s.op("Add", {scale0, nan_if_inf}, {}, "add");
    std::vector<std::optional<endpoint>> out;
    for (std::size_t i = 0; i < ts.size(); ++i) {
        if (!ts[i]) {
            out.emplace_back();
            continue;
        }
        endpoint sc = s.dtype_of(*ts[i]) == t ? scale : s.op("Cast", {scale}, {{"DstT", s.dtype_of(*ts[i])}}, "Cast");
        endpoint m = s.op("Mul", {*ts[i], sc}, {}, "mul");
        out.emplace_back(s.op("Identity", {m}, {}, s.scope() + "/_" + std::to_string(i)));
    }
    return {std::move(out), norm};
}

}  // namespace graft::train
