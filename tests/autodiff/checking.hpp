// Test helpers for gradient rules: run an op's graph through the public checker in float64 and
// float32 and report the worst Jacobian entry.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "graft/autodiff/check.hpp"

namespace graft::test {

/// Deterministic values in [lo, hi) (|v| >= min_abs, so kinks at 0 stay a step away).
inline tensor values(const shape& s, std::uint32_t seed, double lo = -2.0, double hi = 2.0, double min_abs = 0.05) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(lo, hi);
    std::vector<double> v(static_cast<std::size_t>(s.num_elements()));
    for (auto& e : v) {
        do e = u(rng);
        while (std::abs(e) < min_abs);
    }
    return tensor::from_vector<double>(s, v);
}
/// Values in (lo, hi) that are pairwise distinct by at least `gap` (no ties for Max/Min/MaxPool).
inline tensor distinct_values(const shape& s, std::uint32_t seed, double lo = -2.0, double gap = 0.01) {
    std::mt19937 rng(seed);
    std::vector<double> v(static_cast<std::size_t>(s.num_elements()));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = lo + gap * static_cast<double>(i + 1);
    std::shuffle(v.begin(), v.end(), rng);
    return tensor::from_vector<double>(s, v);
}

struct check_tolerances {
    double tol64 = 1e-6;
    double tol32 = 1e-3;
    double delta = 1e-6;
};

/// Checks f's gradients in float64 (rel err < tol64) and float32 against float64 FD (< tol32).
inline void check_both(const std::string& what, const autodiff::check_graph_fn& f, const std::vector<tensor>& xs,
                       check_tolerances t = {}) {
    autodiff::check_options o;
    o.delta = t.delta;
    auto r64 = autodiff::check_gradients(f, xs, o);
    INFO(what << " float64: " << r64.str());
    CHECK(r64.checked > 0);
    CHECK(r64.skipped * 10 <= r64.checked);  // kinks are rare by construction
    CHECK(r64.max_rel_error < t.tol64);
    o.type = dtype::float32;
    auto r32 = autodiff::check_gradients(f, xs, o);
    INFO(what << " float32: " << r32.str());
    CHECK(r32.max_rel_error < t.tol32);
}

/// An int32 vector constant.
inline endpoint ints(const graph_builder& b, std::vector<std::int32_t> v) {
    return b.constant(tensor::from_vector<std::int32_t>(v));
}

}  // namespace graft::test
