// graft/train/detail/names.hpp — TF's name_scope uniquifying for names graft must know before it
// creates the node (a variable whose initializer lives under "<name>/Initializer/").
#pragma once

#include <string>
#include <string_view>

#include "graft/graph/graph.hpp"

namespace graft::train::detail {

/// True when `s` names no node and no node lives under "s/". Never throws.
inline bool scope_is_free(const graph& g, std::string_view s) {
    if (g.contains(s)) return false;
    std::string p = std::string(s) + "/";
    for (const auto& n : g) {
        if (n.name.compare(0, p.size(), p) == 0) return false;
    }
    return true;
}

/// `base`, or `base_1`, `base_2`, ...: the first name free as a node and as a scope. Does not
/// reserve it (so a node can then be added under exactly this name). Never throws (except bad_alloc).
inline std::string free_scope(const graph& g, std::string_view base) {
    if (scope_is_free(g, base)) return std::string(base);
    for (int k = 1;; ++k) {
        std::string c = std::string(base) + "_" + std::to_string(k);
        if (scope_is_free(g, c)) return c;
    }
}

}  // namespace graft::train::detail
