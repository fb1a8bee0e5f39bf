// graft/autodiff/rules/all.hpp — graft's built-in gradient rules, one header per op family.
#pragma once

#include "graft/graph/op_registry.hpp"
#include "graft/autodiff/rules/array.hpp"
#include "graft/autodiff/rules/core.hpp"
#include "graft/autodiff/rules/math.hpp"
#include "graft/autodiff/rules/nn.hpp"
#include "graft/autodiff/rules/reduce.hpp"
#include "graft/autodiff/rules/tensor_array.hpp"
#include "graft/autodiff/rules/math_more.hpp"
#include "graft/autodiff/rules/array_more.hpp"
#include "graft/autodiff/rules/nn_more.hpp"
#include "graft/autodiff/rules/image.hpp"
#include "graft/autodiff/rules/linalg.hpp"
#include "graft/autodiff/rules/functional.hpp"
#include "graft/autodiff/rules/indexing.hpp"
#include "graft/autodiff/rules/clustering.hpp"
#include "graft/autodiff/rules/summary.hpp"
#include "graft/autodiff/rules/parsing.hpp"
#include "graft/autodiff/rules/collective.hpp"

namespace graft::autodiff::rules {

/// Declares not differentiable every op whose line of graft's op table carries `nograd`
/// (TF's ops.NotDifferentiable), unless a rule was registered for it.
inline void register_nograd_traits(gradient_registry& r) {
    for (const auto& op : op_registry::global().names()) {
        if (!r.known(op) && traits_of(op).nograd) r.add_none(op);
    }
}

/// Registers every built-in rule into `r`, then the op table's `nograd` marks.
inline void register_all(gradient_registry& r) {
    register_core(r);
    register_math(r);
    register_reduce(r);
    register_array(r);
    register_nn(r);
    register_tensor_array(r);
    register_math_more(r);
    register_array_more(r);
    register_nn_more(r);
    register_image(r);
    register_linalg(r);
    register_functional(r);
    register_indexing(r);
    register_clustering(r);
    register_summary(r);
    register_parsing(r);
    register_collective(r);
    register_nograd_traits(r);
}

/// The registry gradient_registry::global() returns: every built-in rule, registered on first use.
inline gradient_registry& builtin_registry() {
    static gradient_registry r = [] {
        gradient_registry g;
        register_all(g);
        return g;
    }();
    return r;
}

}  // namespace graft::autodiff::rules
