// graft/ops/detail/nn_util.hpp — shared pieces of the NN kernels: TF's window arithmetic (SAME / VALID /
// EXPLICIT), data_format parsing, dtype checks and a small fork-join helper on graft's thread pool.
//
//   auto g = graft::ops::nn_detail::window("Conv2D", 28, 5, 1, 1, "SAME");   // g.out == 28, g.pad_before == 2
#pragma once

#include "graft/core/config.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/core/threads.hpp"

namespace graft::ops::nn_detail {

/// Output extent and padding of one spatial dimension (TF's GetWindowedOutputSizeVerbose).
struct window_geom {
    std::int64_t out = 0;
    std::int64_t pad_before = 0;
    std::int64_t pad_after = 0;
};

/// Throws invalid_argument_error unless `padding` is SAME, VALID or (when allowed) EXPLICIT.
inline void check_padding(const char* op, const std::string& padding, bool allow_explicit) {
    if (padding == "SAME" || padding == "VALID" || (allow_explicit && padding == "EXPLICIT")) return;
    throw invalid_argument_error(detail::cat(op, ": padding '", padding, "' is not ",
                                             allow_explicit ? "SAME, VALID or EXPLICIT" : "SAME or VALID"));
}

/// Output size and padding of a window of size `k` (dilated by `d`) moved by `s` over `in`.
/// Throws invalid_argument_error for non-positive k/s/d, negative explicit pads or a negative output.
inline window_geom window(const char* op, std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d,
                          const std::string& padding, std::int64_t explicit_before = 0,
                          std::int64_t explicit_after = 0) {
    if (k < 1 || s < 1 || d < 1) {
        throw invalid_argument_error(detail::cat(op, ": window ", k, ", stride ", s, ", dilation ", d,
                                                 " must all be >= 1"));
    }
    const std::int64_t eff = (k - 1) * d + 1;
    window_geom g;
    if (padding == "VALID") {
        g.out = (in - eff + s) / s;
        if (in - eff + s < 0) g.out = -1;
    } else if (padding == "SAME") {
        g.out = (in + s - 1) / s;
        const std::int64_t need = std::max<std::int64_t>(0, (g.out - 1) * s + eff - in);
        g.pad_before = need / 2;
        g.pad_after = need - g.pad_before;
    } else if (padding == "EXPLICIT") {
        if (explicit_before < 0 || explicit_after < 0) {
            throw invalid_argument_error(detail::cat(op, ": explicit padding (", explicit_before, ", ",
                                                     explicit_after, ") must be >= 0"));
        }
        g.pad_before = explicit_before;
        g.pad_after = explicit_after;
        const std::int64_t span = in + explicit_before + explicit_after - eff + s;
        g.out = span < 0 ? -1 : span / s;
    } else {
        check_padding(op, padding, true);
    }
    if (g.out < 0) {
        throw invalid_argument_error(detail::cat(op, ": computed output size would be negative: input ", in,
                                                 ", effective window ", eff, ", stride ", s, ", padding ",
                                                 padding));
    }
    return g;
}

/// True for "NHWC", false for "NCHW"; throws invalid_argument_error otherwise.
inline bool is_nhwc(const char* op, const std::string& data_format) {
    if (data_format == "NHWC") return true;
    if (data_format == "NCHW") return false;
    throw invalid_argument_error(detail::cat(op, ": data_format '", data_format, "' is not NHWC or NCHW"));
}

/// The four dims of a rank-4 activation in NHWC order, whatever its layout.
struct dims4 {
    std::int64_t n = 0, h = 0, w = 0, c = 0;
};
inline dims4 activation_dims(const char* op, const char* what, const tensor& t, bool nhwc) {
    if (t.rank() != 4) {
        throw shape_error(detail::cat(op, ": ", what, " must be rank 4 (", nhwc ? "NHWC" : "NCHW", "), given ",
                                      t.shape().str()));
    }
    return nhwc ? dims4{t.dim(0), t.dim(1), t.dim(2), t.dim(3)} : dims4{t.dim(0), t.dim(2), t.dim(3), t.dim(1)};
}
inline shape activation_shape(const dims4& d, bool nhwc) {
    return nhwc ? shape{d.n, d.h, d.w, d.c} : shape{d.n, d.c, d.h, d.w};
}

/// A 4-entry attr list (strides, ksize, dilations) in data_format order -> {h, w}; throws unless the
/// batch and channel entries are 1 (`what` names the attr).
struct hw {
    std::int64_t h = 1, w = 1;
};
inline hw spatial_attr(const char* op, const char* what, const std::vector<std::int64_t>& v, bool nhwc) {
    if (v.size() != 4) {
        throw invalid_argument_error(detail::cat(op, ": ", what, " must have 4 entries, given ", v.size()));
    }
    const std::size_t hi = nhwc ? 1 : 2, wi = nhwc ? 2 : 3, ci = nhwc ? 3 : 1;
    if (v[0] != 1 || v[ci] != 1) {
        throw invalid_argument_error(detail::cat(op, ": ", what, " in the batch and depth dimensions must be 1, given [",
                                                 v[0], ",", v[1], ",", v[2], ",", v[3], "]"));
    }
    if (v[hi] < 1 || v[wi] < 1) {
        throw invalid_argument_error(detail::cat(op, ": ", what, " must be >= 1, given [", v[0], ",", v[1], ",",
                                                 v[2], ",", v[3], "]"));
    }
    return {v[hi], v[wi]};
}

/// explicit_paddings (8 values, data_format order) -> {top, bottom, left, right}; checks the
/// batch/depth entries are 0.
struct pads {
    std::int64_t top = 0, bottom = 0, left = 0, right = 0;
};
inline pads explicit_pads(const char* op, const std::string& padding, const std::vector<std::int64_t>& p, bool nhwc) {
    if (padding != "EXPLICIT") {
        if (!p.empty()) {
            throw invalid_argument_error(detail::cat(op, ": explicit_paddings given with padding ", padding),
                                         {}, "set padding to EXPLICIT or drop explicit_paddings");
        }
        return {};
    }
    if (p.size() != 8) {
        throw invalid_argument_error(detail::cat(op, ": EXPLICIT padding needs 8 explicit_paddings, given ",
                                                 p.size()));
    }
    const std::size_t h = nhwc ? 2 : 4, w = nhwc ? 4 : 6, c = nhwc ? 6 : 2;
    if (p[0] != 0 || p[1] != 0 || p[c] != 0 || p[c + 1] != 0) {
        throw invalid_argument_error(detail::cat(op, ": explicit_paddings in the batch and depth dimensions must be 0"));
    }
    return {p[h], p[h + 1], p[w], p[w + 1]};
}

/// Throws invalid_argument_error unless `t` is float32 or float64.
inline void check_float(const char* op, const char* what, const tensor& t) {
    if (t.type() != dtype::float32 && t.type() != dtype::float64) {
        throw invalid_argument_error(detail::cat(op, ": ", what, " must be float32 or float64, given ",
                                                 t.describe()));
    }
}
/// Throws invalid_argument_error unless a and b have the same dtype.
inline void check_same_dtype(const char* op, const char* an, const tensor& a, const char* bn, const tensor& b) {
    if (a.type() != b.type()) {
        throw invalid_argument_error(detail::cat(op, ": ", an, " is ", a.describe(), " but ", bn, " is ",
                                                 b.describe(), "; they must have the same dtype"));
    }
}

/// Reads a shape given as an int32/int64 vector tensor (TF's `shape` / `input_sizes` inputs).
inline shape shape_from_tensor(const char* op, const char* what, const tensor& t) {
    if (t.rank() != 1 || (t.type() != dtype::int32 && t.type() != dtype::int64)) {
        throw invalid_argument_error(detail::cat(op, ": ", what, " must be an int32/int64 vector, given ",
                                                 t.describe()));
    }
    std::vector<std::int64_t> d(static_cast<std::size_t>(t.num_elements()));
    for (std::size_t i = 0; i < d.size(); ++i) {
        d[i] = t.type() == dtype::int32 ? t.data<std::int32_t>()[i] : t.data<std::int64_t>()[i];
        if (d[i] < 0) {
            throw invalid_argument_error(detail::cat(op, ": ", what, " has a negative dimension ", d[i]));
        }
    }
    return shape(std::move(d));
}

/// Runs fn(task) for task in [0, tasks) on graft's thread pool (the caller runs task 0) and waits.
inline void run_tasks(int tasks, callable_ref<void(int)> fn) { graft::run_tasks(tasks, fn); }

/// Splits [0, n) into at most num_threads() contiguous chunks of >= `grain` items and runs
/// fn(begin, end) on each in parallel. Chunk boundaries depend only on n, grain and the thread count.
inline void parallel_for(std::int64_t n, std::int64_t grain, callable_ref<void(std::int64_t, std::int64_t)> fn) {
    if (n <= 0) return;
    grain = std::max<std::int64_t>(grain, 1);
    const std::int64_t max_tasks = std::max<std::int64_t>(1, n / grain);
    const int tasks = static_cast<int>(std::min<std::int64_t>(num_threads(), max_tasks));
    if (tasks <= 1) {
        fn(0, n);
        return;
    }
    const std::int64_t chunk = (n + tasks - 1) / tasks;
    run_tasks(tasks, [&](int t) {
        const std::int64_t b = t * chunk, e = std::min(n, b + chunk);
        if (b < e) fn(b, e);
    });
}

}  // namespace graft::ops::nn_detail
