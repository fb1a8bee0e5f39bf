// graft/graph/detail/build_impl.hpp — graph_builder::add: attrs inferred through the OpDef.
#pragma once
#include "graft/core/tensor_util.hpp"
#include "graft/graph/build.hpp"

namespace graft {

inline node& graph_builder::add(std::string_view op, std::vector<endpoint> inputs, attr_list attrs,
                                std::string_view name) const {
    node n(unique(name.empty() ? op : name), std::string(op), std::move(inputs));
    for (auto& [k, v] : attrs) n.attrs.set(std::move(k), std::move(v));
    const op_def* d = g_->registry().find(op);
    if (!d) {
        throw graph_error(detail::cat("unknown op '", op, "'"), location::at_node(n.name, n.op), detail::register_op_hint(op));
    }
    auto input_type = [&](std::size_t i) -> graft::dtype {
        const endpoint& e = n.inputs[i];
        const node* src = g_->find(e.node);
        if (!src) {
            throw graph_error(detail::cat("input ", i, " names missing node '", e.node, "'"),
                              location::at_node(n.name, n.op), "add the input's node first");
        }
        return src->output_dtype(e.index, g_->registry());
    };
    // Walk the OpDef's input args over the given inputs. At most one variadic arg takes what the
    // fixed ones leave (ConcatV2's values, AddN's inputs, IdentityN's input).
    std::size_t fixed = 0;
    int variadic = 0;
    for (auto& a : d->inputs) {
        bool var = (!a.number_attr.empty() && !n.attrs.contains(a.number_attr)) ||
                   (!a.type_list_attr.empty() && !n.attrs.contains(a.type_list_attr));
        if (var) ++variadic;
        else fixed += static_cast<std::size_t>(arg_size(*d, a, n.attrs, n.name));
    }
    if (variadic > 1 || fixed > n.inputs.size() || (variadic == 0 && fixed != n.inputs.size())) {
        throw graph_error(detail::cat("op ", op, " takes ", fixed, variadic ? "+" : "", " inputs, got ", n.inputs.size()),
                          location::at_node(n.name, n.op), "check the inputs against the op's signature");
    }
    std::size_t rest = n.inputs.size() - fixed;
    std::size_t pos = 0;
    for (auto& a : d->inputs) {
        std::size_t count = 1;
        if (!a.type_list_attr.empty()) {
            if (!n.attrs.contains(a.type_list_attr)) {
                std::vector<graft::dtype> ts;
                for (std::size_t i = 0; i < rest; ++i) ts.push_back(base_type(input_type(pos + i)));
                n.attrs.set(a.type_list_attr, attr_value::list_of(std::move(ts)));
            }
            count = n.attrs.find(a.type_list_attr)->list_size();
        } else if (!a.number_attr.empty()) {
            if (!n.attrs.contains(a.number_attr)) n.attrs.set(a.number_attr, static_cast<std::int64_t>(rest));
            count = static_cast<std::size_t>(n.attrs.find(a.number_attr)->i());
        }
        if (!a.type_attr.empty() && !n.attrs.contains(a.type_attr) && count > 0) {
            n.attrs.set(a.type_attr, base_type(input_type(pos)));
        }
        pos += count;
    }
    for (auto& ad : d->attrs) {
        if (!n.attrs.contains(ad.name) && ad.default_value) n.attrs.set(ad.name, *ad.default_value);
    }
    for (auto& ad : d->attrs) {
        if (!n.attrs.contains(ad.name)) {
            throw graph_error(detail::cat("attr '", ad.name, "' of op ", op, " not given and not inferable"),
                              location::at_node(n.name, n.op), detail::cat("pass {\"", ad.name, "\", ...} in attrs"));
        }
    }
    return finish(std::move(n));
}

inline endpoint graph_builder::scalar_as(graft::dtype type, double v, std::string_view name) const {
    return constant(graft::cast(tensor::scalar_of(v), type), name);
}

}  // namespace graft
