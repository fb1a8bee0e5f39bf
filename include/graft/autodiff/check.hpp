// graft/autodiff/check.hpp — a gradient checker: the analytic Jacobian that gradients() builds
// against central finite differences in float64, for users who add ops and rules.
//
//   auto r = graft::autodiff::check_gradients(
//       [](const graft::graph_builder& b, const std::vector<graft::endpoint>& x) {
//           return std::vector<graft::endpoint>{b.op("Tanh", {b.op("MatMul", {x[0], x[1]})})};
//       },
//       {graft::tensor::from_vector<double>({2, 3}, {...}), graft::tensor::from_vector<double>({3, 2}, {...})});
//   CHECK(r.max_rel_error < 1e-6);   // r.str() says where the worst entry is
//
// The function builds the ys from the xs (placeholders) with any ops; it is called twice: once in
// float64 for the finite differences, once in options.type for the analytic Jacobian (one run per
// y element, grad_ys one-hot), so float32 rules are checked against float64 numbers. Entries where
// the forward and backward one-sided differences disagree (a kink such as Relu at 0 or a Max tie
// inside the step) are skipped and counted. Needs graft::compiled (it runs graft::exec::session).
#pragma once

#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "graft/autodiff/gradients.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"

namespace graft::autodiff {

struct check_options {
    /// dtype of the xs (and so of the analytic gradient graph): float64, float32, ...
    dtype type = dtype::float64;
    /// Finite-difference step (per op: larger for ops that lose precision, smaller near kinks).
    double delta = 1e-6;
    /// An entry is a kink, and skipped, when |forward - backward difference| exceeds
    /// kink_tolerance * max(1, |central difference|).
    double kink_tolerance = 1e-3;
};

struct check_result {
    double max_abs_error = 0;  ///< max |analytic - numeric| over the checked entries
    double max_rel_error = 0;  ///< max |analytic - numeric| / max(1, |numeric|)
    std::size_t y = 0, y_index = 0, x = 0, x_index = 0;  ///< the entry of max_rel_error (flat indices)
    double analytic = 0, numeric = 0;                     ///< its two values
    std::size_t checked = 0;  ///< Jacobian entries compared
    std::size_t skipped = 0;  ///< entries skipped as kinks

    /// "max rel error 1e-9 (abs 1e-9) at dy0[3]/dx1[2]: analytic 0.5 numeric 0.5; 24 checked, 0 skipped"
    [[nodiscard]] std::string str() const {
        std::ostringstream os;
        os.precision(6);
        os << "max rel error " << max_rel_error << " (abs " << max_abs_error << ") at dy" << y << "[" << y_index
           << "]/dx" << x << "[" << x_index << "]: analytic " << analytic << " numeric " << numeric << "; " << checked
           << " checked, " << skipped << " skipped";
        return os.str();
    }
};

/// Builds ys from the xs (placeholders of the checked dtype) with `b`.
using check_graph_fn = std::function<std::vector<endpoint>(const graph_builder& b, const std::vector<endpoint>& xs)>;

namespace detail {
struct checked_graph {
    graph g;
    std::vector<endpoint> xs, ys;
};
inline checked_graph build_checked(const check_graph_fn& f, const std::vector<tensor>& values, dtype t) {
    checked_graph c;
    graph_builder b(c.g);
    for (std::size_t i = 0; i < values.size(); ++i) {
        c.xs.push_back(b.placeholder(graft::detail::cat("x", i), t, values[i].shape()));
    }
    c.ys = f(b, c.xs);
    if (c.ys.empty()) throw invalid_argument_error("check_gradients: the graph function returned no ys");
    return c;
}
inline std::vector<std::string> names(const std::vector<endpoint>& es) {
    std::vector<std::string> r;
    for (auto& e : es) r.push_back(e.str());
    return r;
}
inline std::vector<double> as_doubles(const tensor& t) {
    tensor d = graft::cast(t, dtype::float64);
    const double* p = d.data<double>();
    return {p, p + d.num_elements()};
}
}  // namespace detail

/// Compares the Jacobian of f's ys w.r.t. its xs that gradients() builds (in options.type) with
/// central finite differences of the float64 graph at `x_values` (any float dtype; cast as
/// needed). Throws what building or running the graphs throws (e.g. graph_error for an op
/// without a gradient rule) and invalid_argument_error when f returns no ys.
inline check_result check_gradients(const check_graph_fn& f, const std::vector<tensor>& x_values,
                                    const check_options& options = {}) {
    // Numeric Jacobian in float64: column (x i, element j) from f(x + d e_j) - f(x - d e_j).
    std::vector<tensor> x64;
    for (auto& v : x_values) x64.push_back(graft::cast(v, dtype::float64).clone());
    auto num = detail::build_checked(f, x64, dtype::float64);
    exec::session s64{num.g};
    auto fetch = detail::names(num.ys);
    auto feeds_of = [&](const std::vector<tensor>& xs) {
        exec::session::feed_list fl;
        for (std::size_t i = 0; i < xs.size(); ++i) fl.emplace_back(num.xs[i].str(), xs[i]);
        return fl;
    };
    std::vector<tensor> y0 = s64.run(feeds_of(x64), fetch);
    std::vector<std::vector<double>> base;
    for (auto& y : y0) base.push_back(detail::as_doubles(y));
    // numeric[y][m][x][j]
    std::vector<std::vector<std::vector<std::vector<double>>>> numeric(y0.size());
    std::vector<std::vector<std::vector<std::vector<char>>>> kink(y0.size());
    for (std::size_t k = 0; k < y0.size(); ++k) {
        numeric[k].assign(base[k].size(), std::vector<std::vector<double>>(x64.size()));
        kink[k].assign(base[k].size(), std::vector<std::vector<char>>(x64.size()));
        for (std::size_t m = 0; m < base[k].size(); ++m) {
            for (std::size_t i = 0; i < x64.size(); ++i) {
                numeric[k][m][i].assign(static_cast<std::size_t>(x64[i].num_elements()), 0.0);
                kink[k][m][i].assign(static_cast<std::size_t>(x64[i].num_elements()), 0);
            }
        }
    }
    const double d = options.delta;
    for (std::size_t i = 0; i < x64.size(); ++i) {
        for (std::int64_t j = 0; j < x64[i].num_elements(); ++j) {
            auto at = [&](double step) {
                std::vector<tensor> xs = x64;
                xs[i] = x64[i].clone();
                xs[i].data<double>()[j] += step;
                auto ys = s64.run(feeds_of(xs), fetch);
                std::vector<std::vector<double>> r;
                for (auto& y : ys) r.push_back(detail::as_doubles(y));
                return r;
            };
            auto plus = at(d), minus = at(-d);
            for (std::size_t k = 0; k < y0.size(); ++k) {
                for (std::size_t m = 0; m < base[k].size(); ++m) {
                    double central = (plus[k][m] - minus[k][m]) / (2 * d);
                    double fwd = (plus[k][m] - base[k][m]) / d, bwd = (base[k][m] - minus[k][m]) / d;
                    auto ju = static_cast<std::size_t>(j);
                    numeric[k][m][i][ju] = central;
                    kink[k][m][i][ju] = std::abs(fwd - bwd) > options.kink_tolerance * std::max(1.0, std::abs(central));
                }
            }
        }
    }

    // Analytic Jacobian in options.type: row (y k, element m) from grad_ys one-hot at (k, m).
    std::vector<tensor> xt;
    for (auto& v : x64) xt.push_back(graft::cast(v, options.type));
    auto ana = detail::build_checked(f, xt, options.type);
    std::vector<endpoint> gys;
    {
        graph_builder b(ana.g);
        for (std::size_t k = 0; k < ana.ys.size(); ++k) {
            gys.push_back(b.placeholder(graft::detail::cat("grad_y", k), b.dtype_of(ana.ys[k]), y0[k].shape()));
        }
    }
    gradient_options go;
    go.zeros_for_unconnected = true;
    auto dx = gradients(ana.g, ana.ys, ana.xs, gys, go);
    std::vector<std::string> gfetch;
    for (auto& e : dx) gfetch.push_back(e->str());
    exec::session st{ana.g};
    check_result res;
    for (std::size_t k = 0; k < y0.size(); ++k) {
        for (std::size_t m = 0; m < base[k].size(); ++m) {
            exec::session::feed_list fl;
            for (std::size_t i = 0; i < xt.size(); ++i) fl.emplace_back(ana.xs[i].str(), xt[i]);
            for (std::size_t q = 0; q < gys.size(); ++q) {
                tensor onehot(dtype::float64, y0[q].shape());
                double* p = onehot.data<double>();
                std::fill(p, p + onehot.num_elements(), 0.0);
                if (q == k) p[m] = 1.0;
                fl.emplace_back(gys[q].str(), graft::cast(onehot, ana.g.at(gys[q].node).attr_at("dtype").type()));
            }
            auto rows = st.run(fl, gfetch);
            for (std::size_t i = 0; i < rows.size(); ++i) {
                auto a = detail::as_doubles(rows[i]);
                for (std::size_t j = 0; j < a.size(); ++j) {
                    if (kink[k][m][i][j]) {
                        ++res.skipped;
                        continue;
                    }
                    double n = numeric[k][m][i][j];
                    double err = std::abs(a[j] - n);
                    double rel = err / std::max(1.0, std::abs(n));
                    ++res.checked;
                    res.max_abs_error = std::max(res.max_abs_error, err);
                    if (rel > res.max_rel_error || (res.checked == 1)) {
                        if (rel >= res.max_rel_error) {
                            res.max_rel_error = rel;
                            res.y = k, res.y_index = m, res.x = i, res.x_index = j;
                            res.analytic = a[j], res.numeric = n;
                        }
                    }
                    if (std::isnan(a[j]) || std::isnan(n)) {
                        res.max_rel_error = res.max_abs_error = std::numeric_limits<double>::infinity();
                        res.y = k, res.y_index = m, res.x = i, res.x_index = j;
                        res.analytic = a[j], res.numeric = n;
                    }
                }
            }
        }
    }
    return res;
}

}  // namespace graft::autodiff
