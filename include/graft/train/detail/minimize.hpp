// graft/train/detail/minimize.hpp — optimizer::compute_gradients and minimize through graft's
// autodiff. Include graft/train/optimizer.hpp.
#pragma once

#include "graft/autodiff/gradients.hpp"
#include "graft/train/optimizer.hpp"

namespace graft::train {

inline grads_and_vars optimizer::compute_gradients(meta_graph& mg, const endpoint& loss, const var_list& vars,
                                                   const std::optional<endpoint>& grad_loss) {
    std::vector<variable> vs = vars.resolve(mg);
    if (vs.empty()) {
        throw invalid_argument_error("no variables to optimize", location::at_tensor(loss.str()),
                                     "create trainable variables, or pass a var_list");
    }
    graph_builder b(mg.graph);
    dtype lt = b.dtype_of(loss);
    if (lt != dtype::float32 && lt != dtype::float64 && lt != dtype::float16 && lt != dtype::bfloat16) {
        throw invalid_argument_error("loss '" + loss.str() + "' has dtype " + dtype_name(lt) + "; it must be floating point",
                                     location::at_tensor(loss.str()));
    }
    std::vector<endpoint> xs;
    for (auto& v : vs) {
        dtype t = type_of(mg, v);
        if (t != dtype::float32 && t != dtype::float64 && t != dtype::float16 && t != dtype::bfloat16) {
            throw invalid_argument_error("cannot train variable '" + v.name + "' of dtype " + dtype_name(t),
                                         location::at_node(v.name, name_), "leave it out of var_list");
        }
        xs.push_back(v.ref);
    }
    std::vector<endpoint> gys;
    if (grad_loss) gys.push_back(*grad_loss);
    auto grads = graft::autodiff::gradients(mg.graph, {loss}, xs, gys);
    grads_and_vars out;
    for (std::size_t i = 0; i < vs.size(); ++i) out.push_back({grads[i], vs[i]});
    return out;
}

inline std::string optimizer::minimize(meta_graph& mg, const endpoint& loss, const var_list& vars,
                                       const std::optional<variable>& global_step, std::string_view name) {
    grads_and_vars gv = compute_gradients(mg, loss, vars);
    bool any = false;
    for (auto& p : gv) any = any || p.grad.has_value();
    if (!any) {
        std::string names;
        for (auto& p : gv) names += (names.empty() ? "" : ", ") + p.var.name;
        throw invalid_argument_error("no gradients provided for any variable: no path from [" + names + "] to loss '" +
                                         loss.str() + "'",
                                     location::at_tensor(loss.str()),
                                     "check that the loss is computed from the variables' values");
    }
    return apply_gradients(mg, gv, global_step, name);
}

}  // namespace graft::train
