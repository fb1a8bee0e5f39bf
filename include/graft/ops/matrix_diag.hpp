// graft/ops/matrix_diag.hpp — diagonals of (batches of) matrices: MatrixDiag / MatrixDiagPart /
// MatrixSetDiag in their V1, V2 and V3 forms (a band of diagonals k = [lower, upper], the short ones
// aligned LEFT or RIGHT), MatrixBandPart, and Diag / DiagPart (tensor diagonals). Every dtype.
//
//   tensor m = ops::matrix_diag(d, {-1, 1}, -1, -1, tensor::scalar_of(0.f), ops::diag_align::right_left);
//   tensor p = ops::matrix_diag_part(m, {-1, 1}, tensor::scalar_of(0.f), ops::diag_align::right_left);
//   tensor b = ops::matrix_band_part(x, 1, 0);                  // the main and first lower diagonal
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graft/ops/detail/op_support.hpp"

namespace graft::ops {

/// How diagonals shorter than the longest one sit in their row of the packed form (V3's align
/// attr: superdiagonal side first). V1 and V2 pack LEFT_LEFT.
struct diag_align {
    bool super_left = true;  ///< superdiagonals (k >= 0) start at column 0
    bool sub_left = true;    ///< subdiagonals (k <= 0) start at column 0
    static constexpr diag_align left_left() { return {true, true}; }
    static constexpr diag_align right_left() { return {false, true}; }
    /// The align attr ("RIGHT_LEFT", ...). Throws invalid_argument_error naming `op` otherwise.
    static diag_align parse(std::string_view op, std::string_view s) {
        if (s == "LEFT_LEFT") return {true, true};
        if (s == "LEFT_RIGHT") return {true, false};
        if (s == "RIGHT_LEFT") return {false, true};
        if (s == "RIGHT_RIGHT") return {false, false};
        throw invalid_argument_error(op_detail::cat(op, ": align must be LEFT_LEFT, LEFT_RIGHT, RIGHT_LEFT or ",
                                                    "RIGHT_RIGHT but is '", s, "'"));
    }
};

namespace op_detail {

/// The diagonal band [lower, upper] from a k input of one or two values.
struct diag_band {
    std::int64_t lower = 0, upper = 0;
    [[nodiscard]] std::int64_t count() const { return upper - lower + 1; }
};

inline diag_band read_band(std::string_view op, const std::vector<std::int64_t>& k) {
    if (k.empty() || k.size() > 2) {
        throw invalid_argument_error(cat(op, ": k must hold one or two values but holds ", list_str(k)));
    }
    diag_band b{k[0], k.size() == 2 ? k[1] : k[0]};
    if (b.lower > b.upper) {
        throw invalid_argument_error(cat(op, ": k's lower diagonal ", b.lower, " is above its upper diagonal ",
                                         b.upper));
    }
    return b;
}

/// Length of diagonal d of an m x n matrix.
inline std::int64_t diag_length(std::int64_t d, std::int64_t m, std::int64_t n) {
    return std::min(m + std::min(d, std::int64_t{0}), n - std::max(d, std::int64_t{0}));
}

/// Where element 0 of diagonal d sits in its packed row of `width`.
inline std::int64_t diag_offset(std::int64_t d, std::int64_t width, std::int64_t m, std::int64_t n, diag_align a) {
    const bool left = (d >= 0 && a.super_left) || (d <= 0 && a.sub_left);
    return left ? 0 : width - diag_length(d, m, n);
}

/// The single element of a padding_value input as U (an invalid tensor reads as zero bytes).
template <class U>
U padding_as(std::string_view op, const tensor& pad, dtype want) {
    if (!pad.valid()) return U{};
    require_input(op, pad, "padding_value");
    if (base_type(pad.type()) != base_type(want)) {
        throw invalid_argument_error(cat(op, ": padding_value is ", pad.describe(), " but the diagonal is ",
                                         dtype_name(want)));
    }
    if (pad.num_elements() != 1) {
        throw invalid_argument_error(cat(op, ": padding_value must hold one value but has shape ", pad.shape().str()));
    }
    return elements_as<U>(pad)[0];
}

/// For each matrix of `x` [..., m, n] and each diagonal d of the band, calls f(matrix index,
/// packed row index, d, element j, row, col). The packed row of d is upper - d.
template <class F>
void for_band(std::int64_t m, std::int64_t n, const diag_band& band, F&& f) {
    for (std::int64_t d = band.upper; d >= band.lower; --d) {
        const std::int64_t len = diag_length(d, m, n);
        const std::int64_t r0 = std::max(-d, std::int64_t{0}), c0 = std::max(d, std::int64_t{0});
        for (std::int64_t j = 0; j < len; ++j) f(band.upper - d, d, j, r0 + j, c0 + j);
    }
}

/// Checks that each end of the band is 0 or lies in an m x n matrix (-m < k < n), as TF does.
inline void check_band(std::string_view op, const diag_band& b, std::int64_t m, std::int64_t n) {
    for (std::int64_t k : {b.lower, b.upper}) {
        if (k != 0 && (k <= -m || k >= n)) {
            throw invalid_argument_error(cat(op, ": diagonal ", k, " of k [", b.lower, ", ", b.upper,
                                             "] is outside a ", m, " x ", n, " matrix (expected 0 or ", -m,
                                             " < k < ", n, ")"));
        }
    }
}

}  // namespace op_detail

/// MatrixDiagPart (V2/V3): diagonals `k` (one value or [lower, upper]) of each matrix of x
/// [..., m, n], packed as [..., num_diags, max_len] ([..., max_len] for one diagonal) with
/// `padding` (a scalar of x's dtype; invalid: 0) around the short ones. Throws
/// invalid_argument_error for rank < 2, a bad k, padding or align.
inline tensor matrix_diag_part(const tensor& x, const std::vector<std::int64_t>& k, const tensor& padding,
                               diag_align align, std::string_view op = "MatrixDiagPartV3") {
    op_detail::require_input(op, x, "input");
    if (x.rank() < 2) {
        throw invalid_argument_error(op_detail::cat(op, ": input must have rank >= 2 but has shape ", x.shape().str()));
    }
    const auto band = op_detail::read_band(op, k);
    const std::int64_t m = x.dim(-2), n = x.dim(-1);
    op_detail::check_band(op, band, m, n);
    const std::int64_t width = std::max(std::min(m + std::min(band.upper, std::int64_t{0}),
                                                 n - std::max(band.lower, std::int64_t{0})),
                                        std::int64_t{0});
    auto od = x.shape().dims();
    od.pop_back();
    od.pop_back();
    const std::int64_t batch = op_detail::dim_product(od, 0, od.size());
    if (band.count() > 1) od.push_back(band.count());
    od.push_back(width);
    tensor out = tensor::uninitialized(x.type(), shape(od));
    op_detail::visit_element_bytes(x.type(), op, [&](auto tag) {
        using U = decltype(tag);
        const U pad = op_detail::padding_as<U>(op, padding, x.type());
        const U* in = op_detail::elements_as<U>(x);
        U* o = op_detail::elements_as<U>(out);
        const std::int64_t per_out = band.count() * width;
        std::fill(o, o + batch * per_out, pad);
        for (std::int64_t b = 0; b < batch; ++b) {
            const U* mat = in + b * m * n;
            U* dst = o + b * per_out;
            op_detail::for_band(m, n, band, [&](std::int64_t row, std::int64_t d, std::int64_t j, std::int64_t r,
                                                std::int64_t c) {
                dst[row * width + op_detail::diag_offset(d, width, m, n, align) + j] = mat[r * n + c];
            });
        }
    });
    return out;
}

/// MatrixDiag (V2/V3): matrices [..., rows, cols] holding `diagonal` ([..., num_diags, max_len],
/// or [..., max_len] for one diagonal) on the band k and `padding` elsewhere; rows/cols -1 are
/// inferred as TF does. Throws invalid_argument_error for shapes that disagree with k, rows, cols.
inline tensor matrix_diag(const tensor& diagonal, const std::vector<std::int64_t>& k, std::int64_t rows,
                          std::int64_t cols, const tensor& padding, diag_align align,
                          std::string_view op = "MatrixDiagV3") {
    op_detail::require_input(op, diagonal, "diagonal");
    const auto band = op_detail::read_band(op, k);
    const int need = band.count() > 1 ? 2 : 1;
    if (diagonal.rank() < need) {
        throw invalid_argument_error(op_detail::cat(op, ": diagonal must have rank >= ", need, " for k [", band.lower,
                                                    ", ", band.upper, "] but has shape ", diagonal.shape().str()));
    }
    if (band.count() > 1 && diagonal.dim(-2) != band.count()) {
        throw invalid_argument_error(op_detail::cat(op, ": diagonal ", diagonal.shape().str(), " must hold ",
                                                    band.count(), " diagonals (k [", band.lower, ", ", band.upper,
                                                    "]) in its second-to-last dim"));
    }
    const std::int64_t width = diagonal.dim(-1);
    const std::int64_t min_rows = width - std::min(band.upper, std::int64_t{0});
    const std::int64_t min_cols = width + std::max(band.lower, std::int64_t{0});
    if (rows == -1 && cols == -1) {
        rows = cols = std::max(min_rows, min_cols);
    } else if (rows == -1) {
        rows = min_rows;
    } else if (cols == -1) {
        cols = min_cols;
    }
    if (rows < min_rows || cols < min_cols || (rows != min_rows && cols != min_cols)) {
        throw invalid_argument_error(op_detail::cat(op, ": a ", rows, " x ", cols, " matrix does not fit diagonals",
                                                    " of length ", width, " for k [", band.lower, ", ", band.upper,
                                                    "] (it needs num_rows ", min_rows, " or num_cols ", min_cols, ")"));
    }
    auto od = diagonal.shape().dims();
    for (int i = 0; i < need; ++i) od.pop_back();
    const std::int64_t batch = op_detail::dim_product(od, 0, od.size());
    od.push_back(rows);
    od.push_back(cols);
    tensor out = tensor::uninitialized(diagonal.type(), shape(od));
    op_detail::visit_element_bytes(diagonal.type(), op, [&](auto tag) {
        using U = decltype(tag);
        const U pad = op_detail::padding_as<U>(op, padding, diagonal.type());
        const U* in = op_detail::elements_as<U>(diagonal);
        U* o = op_detail::elements_as<U>(out);
        std::fill(o, o + batch * rows * cols, pad);
        const std::int64_t per_in = band.count() * width;
        for (std::int64_t b = 0; b < batch; ++b) {
            const U* src = in + b * per_in;
            U* mat = o + b * rows * cols;
            op_detail::for_band(rows, cols, band, [&](std::int64_t row, std::int64_t d, std::int64_t j, std::int64_t r,
                                                      std::int64_t c) {
                const std::int64_t at = op_detail::diag_offset(d, width, rows, cols, align) + j;
                if (at >= 0 && at < width) mat[r * cols + c] = src[row * width + at];
            });
        }
    });
    return out;
}

/// MatrixSetDiag (V2/V3): x [..., m, n] with the band k replaced by `diagonal` (packed as
/// matrix_diag_part returns it). Throws invalid_argument_error when the shapes disagree.
inline tensor matrix_set_diag(const tensor& x, const tensor& diagonal, const std::vector<std::int64_t>& k,
                              diag_align align, std::string_view op = "MatrixSetDiagV3") {
    op_detail::require_input(op, x, "input");
    op_detail::require_input(op, diagonal, "diagonal");
    op_detail::require_same_dtype(op, x, "input", diagonal, "diagonal");
    if (x.rank() < 2) {
        throw invalid_argument_error(op_detail::cat(op, ": input must have rank >= 2 but has shape ", x.shape().str()));
    }
    const auto band = op_detail::read_band(op, k);
    const std::int64_t m = x.dim(-2), n = x.dim(-1);
    op_detail::check_band(op, band, m, n);
    const std::int64_t width = std::max(std::min(m + std::min(band.upper, std::int64_t{0}),
                                                 n - std::max(band.lower, std::int64_t{0})),
                                        std::int64_t{0});
    auto want = x.shape().dims();
    want.pop_back();
    want.pop_back();
    const std::int64_t batch = op_detail::dim_product(want, 0, want.size());
    if (band.count() > 1) want.push_back(band.count());
    want.push_back(width);
    if (!(diagonal.shape() == shape(want))) {
        throw invalid_argument_error(op_detail::cat(op, ": diagonal must have shape ", shape(want).str(),
                                                    " for input ", x.shape().str(), " and k [", band.lower, ", ",
                                                    band.upper, "] but has shape ", diagonal.shape().str()));
    }
    tensor out = tensor::uninitialized(x.type(), x.shape());
    out.copy_from(x);
    op_detail::visit_element_bytes(x.type(), op, [&](auto tag) {
        using U = decltype(tag);
        const U* src = op_detail::elements_as<U>(diagonal);
        U* o = op_detail::elements_as<U>(out);
        const std::int64_t per = band.count() * width;
        for (std::int64_t b = 0; b < batch; ++b) {
            U* mat = o + b * m * n;
            op_detail::for_band(m, n, band, [&](std::int64_t row, std::int64_t d, std::int64_t j, std::int64_t r,
                                                std::int64_t c) {
                mat[r * n + c] = src[b * per + row * width + op_detail::diag_offset(d, width, m, n, align) + j];
            });
        }
    });
    return out;
}

/// MatrixBandPart: x [..., m, n] with the elements outside the band zeroed: kept where
/// (lower < 0 or r - c <= lower) and (upper < 0 or c - r <= upper). Throws invalid_argument_error
/// for rank < 2 or lower > m, upper > n.
inline tensor matrix_band_part(const tensor& x, std::int64_t lower, std::int64_t upper) {
    const char* op = "MatrixBandPart";
    op_detail::require_input(op, x, "input");
    if (x.rank() < 2) {
        throw invalid_argument_error(op_detail::cat(op, ": input must have rank >= 2 but has shape ", x.shape().str()));
    }
    const std::int64_t m = x.dim(-2), n = x.dim(-1);
    if (lower > m || upper > n) {
        throw invalid_argument_error(op_detail::cat(op, ": num_lower ", lower, " must be <= ", m, " and num_upper ",
                                                    upper, " <= ", n, " for input ", x.shape().str()));
    }
    tensor out(x.type(), x.shape());
    const std::int64_t batch = m * n == 0 ? 0 : x.num_elements() / (m * n);
    op_detail::visit_element_bytes(x.type(), op, [&](auto tag) {
        using U = decltype(tag);
        const U* in = op_detail::elements_as<U>(x);
        U* o = op_detail::elements_as<U>(out);
        for (std::int64_t b = 0; b < batch; ++b) {
            for (std::int64_t r = 0; r < m; ++r) {
                const std::int64_t c0 = lower < 0 ? 0 : std::max(r - lower, std::int64_t{0});
                const std::int64_t c1 = upper < 0 ? n : std::min(r + upper + 1, n);
                const std::int64_t at = (b * m + r) * n;
                if (c0 < c1) std::copy(in + at + c0, in + at + c1, o + at + c0);
            }
        }
    });
    return out;
}

/// Diag: for x of shape D (rank k >= 1), the tensor of shape D + D with x on its diagonal
/// (out[i..., i...] = x[i...]) and zeros elsewhere. Throws invalid_argument_error for a scalar.
inline tensor diag(const tensor& x) {
    const char* op = "Diag";
    op_detail::require_input(op, x, "diagonal");
    if (x.rank() < 1) throw invalid_argument_error(op_detail::cat(op, ": diagonal must have rank >= 1 but is a scalar"));
    auto od = x.shape().dims();
    od.insert(od.end(), x.shape().dims().begin(), x.shape().dims().end());
    tensor out(x.type(), shape(od));
    const std::int64_t n = x.num_elements();
    op_detail::visit_element_bytes(x.type(), op, [&](auto tag) {
        using U = decltype(tag);
        const U* in = op_detail::elements_as<U>(x);
        U* o = op_detail::elements_as<U>(out);
        for (std::int64_t i = 0; i < n; ++i) o[i * n + i] = in[i];
    });
    return out;
}

/// DiagPart: for x of shape D + D, the tensor of shape D with out[i...] = x[i..., i...]. Throws
/// invalid_argument_error for an odd rank or halves that differ.
inline tensor diag_part(const tensor& x) {
    const char* op = "DiagPart";
    op_detail::require_input(op, x, "input");
    const int r = x.rank();
    const auto& d = x.shape().dims();
    bool ok = r >= 2 && r % 2 == 0;
    for (int i = 0; ok && i < r / 2; ++i) ok = d[static_cast<std::size_t>(i)] == d[static_cast<std::size_t>(i + r / 2)];
    if (!ok) {
        throw invalid_argument_error(op_detail::cat(op, ": input must have an even rank >= 2 with shape D + D but has ",
                                                    x.shape().str()));
    }
    tensor out = tensor::uninitialized(x.type(), shape(std::vector<std::int64_t>(d.begin(), d.begin() + r / 2)));
    const std::int64_t n = out.num_elements();
    op_detail::visit_element_bytes(x.type(), op, [&](auto tag) {
        using U = decltype(tag);
        const U* in = op_detail::elements_as<U>(x);
        U* o = op_detail::elements_as<U>(out);
        for (std::int64_t i = 0; i < n; ++i) o[i] = in[i * n + i];
    });
    return out;
}

}  // namespace graft::ops
