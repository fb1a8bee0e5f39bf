// graft/formats/tf/name_map.hpp — restore a checkpoint into another scope: which checkpoint key feeds which
// wanted variable name, and what is left over on both sides.
//
//   auto map = graft::tf::assignment_map::from({{"old_scope/", "new_scope/"}, {"step", "global_step"}});
//   graft::tf::name_match m = graft::tf::match_names(reader.keys(), wanted_names, map);
//   for (auto& [wanted, key] : m.pairs) vars[wanted] = reader.read(key);
//   if (!m.missing.empty()) ...;   // wanted names with no checkpoint key
//   m.unused_keys;                 // checkpoint keys nobody asked for
//
// Like tf.compat.v1.train.init_from_checkpoint's assignment_map: keys are checkpoint names, values are
// the names in the new model; an entry ending in '/' renames a whole scope, others rename one name.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graft/core/error.hpp"

namespace graft::tf {

/// Levenshtein distance (inputs longer than 256 bytes are compared on their first 256). Never throws.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
    a = a.substr(0, 256);
    b = b.substr(0, 256);
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

/// Up to `k` of `names` closest to `target`: smallest edit distance first, ties broken by the longer
/// common prefix, then alphabetically. Never throws (except bad_alloc).
inline std::vector<std::string> closest_names(std::string_view target, const std::vector<std::string>& names,
                                              std::size_t k = 5) {
    struct scored { std::size_t dist; std::size_t prefix; const std::string* name; };
    std::vector<scored> s;
    s.reserve(names.size());
    for (const auto& n : names) {
        std::size_t p = 0;
        while (p < n.size() && p < target.size() && n[p] == target[p]) ++p;
        s.push_back({edit_distance(target, n), p, &n});
    }
    const std::size_t m = std::min(k, s.size());
    std::partial_sort(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(m), s.end(), [](const scored& x, const scored& y) {
        if (x.dist != y.dist) return x.dist < y.dist;
        if (x.prefix != y.prefix) return x.prefix > y.prefix;
        return *x.name < *y.name;
    });
    std::vector<std::string> out;
    for (std::size_t i = 0; i < m; ++i) out.push_back(*s[i].name);
    return out;
}

/// "closest names: 'a', 'b'" (or a note that there are none). Never throws (except bad_alloc).
inline std::string closest_names_hint(std::string_view target, const std::vector<std::string>& names) {
    if (names.empty()) return "the checkpoint holds no tensors";
    std::string h = "closest names: ";
    auto c = closest_names(target, names);
    for (std::size_t i = 0; i < c.size(); ++i) h += (i ? ", '" : "'") + c[i] + "'";
    return h + " (" + std::to_string(names.size()) + " tensors in all; `graft ckpt ls` lists them)";
}

/// The keys in scope `scope`: equal to it, or starting with it followed by '/' (a scope given with a
/// trailing '/' matches only names under it). "" lists everything. Sorted. Never throws (except bad_alloc).
inline std::vector<std::string> list_scope(const std::vector<std::string>& keys, std::string_view scope) {
    std::vector<std::string> out;
    for (const auto& k : keys) {
        if (scope.empty()) { out.push_back(k); continue; }
        if (k.size() < scope.size() || std::string_view(k).substr(0, scope.size()) != scope) continue;
        if (k.size() == scope.size() || scope.back() == '/' || k[scope.size()] == '/') out.push_back(k);
    }
    std::sort(out.begin(), out.end());
    return out;
}

/// Checkpoint names -> wanted names.
struct assignment_map {
    /// Scope renames: checkpoint prefix -> wanted prefix (both usually end in '/').
    std::vector<std::pair<std::string, std::string>> prefix_renames;
    /// Exact renames: checkpoint key -> wanted name.
    std::map<std::string, std::string> exact;
    /// Wanted names no rule covers are looked up under their own name.
    bool identity = true;

    /// From TF-style pairs: a key ending in '/' is a scope rename (its value must end in '/' too; ""
    /// or "/" means the root scope), others are exact. Throws invalid_argument_error on a scope mapped
    /// to a non-scope.
    static assignment_map from(const std::vector<std::pair<std::string, std::string>>& pairs) {
        assignment_map m;
        for (const auto& [from, to] : pairs) {
            if (from.empty() || from.back() == '/') {
                std::string f = from == "/" ? "" : from;
                std::string t = to == "/" ? "" : to;
                if (!t.empty() && t.back() != '/') {
                    throw invalid_argument_error(graft::detail::cat("assignment map: scope '", from,
                                                                    "' is mapped to '", to, "', which is not a scope"),
                                                 {}, "end both names in '/' to rename a scope");
                }
                m.prefix_renames.emplace_back(f, t);
            } else {
                m.exact[from] = to;
            }
        }
        return m;
    }
};

/// What match_names found.
struct name_match {
    std::vector<std::pair<std::string, std::string>> pairs;  ///< (wanted name, checkpoint key), by wanted name
    std::vector<std::string> unused_keys;  ///< checkpoint keys not assigned to any wanted name
    std::vector<std::string> missing;      ///< wanted names without a checkpoint key
    [[nodiscard]] bool complete() const { return missing.empty(); }
};

/// The checkpoint key that `wanted` reads from under `map` (before checking that it exists). Never throws.
inline std::string source_key(const std::string& wanted, const assignment_map& map, bool* covered = nullptr) {
    for (const auto& [from, to] : map.exact) {
        if (to == wanted) { if (covered) *covered = true; return from; }
    }
    const std::pair<std::string, std::string>* best = nullptr;
    for (const auto& pr : map.prefix_renames) {
        if (wanted.compare(0, pr.second.size(), pr.second) == 0 && (!best || pr.second.size() > best->second.size()))
            best = &pr;
    }
    if (best) {
        if (covered) *covered = true;
        return best->first + wanted.substr(best->second.size());
    }
    if (covered) *covered = map.identity;
    return wanted;
}

/// Pairs each wanted name with its checkpoint key and reports both unmatched sides. Never throws
/// (except bad_alloc).
inline name_match match_names(const std::vector<std::string>& checkpoint_keys, const std::vector<std::string>& wanted,
                              const assignment_map& map) {
    std::set<std::string> have(checkpoint_keys.begin(), checkpoint_keys.end()), used;
    name_match m;
    std::vector<std::string> w = wanted;
    std::sort(w.begin(), w.end());
    w.erase(std::unique(w.begin(), w.end()), w.end());
    for (const auto& name : w) {
        bool covered = false;
        std::string key = source_key(name, map, &covered);
        if (covered && have.count(key)) {
            m.pairs.emplace_back(name, key);
            used.insert(key);
        } else {
            m.missing.push_back(name);
        }
    }
    for (const auto& k : have)
        if (!used.count(k)) m.unused_keys.push_back(k);
    return m;
}

}  // namespace graft::tf
