// graft/ops/cumulative.hpp — scans and counting ops as TensorFlow defines them: Cumsum, Cumprod and
// CumulativeLogsumexp (exclusive, reverse), HistogramFixedWidth, Bincount and LinSpace.
//
//   tensor s = ops::cumulative("Cumsum", x, 1, /*exclusive=*/false, /*reverse=*/true);
//   tensor h = ops::histogram_fixed_width(values, range, 5, dtype::int32);
//   tensor l = ops::linspace(start, stop, 7);
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "graft/ops/math_more.hpp"

namespace graft::ops {

/// Cumsum or Cumprod (`op`) of x along `axis` (in [-rank, rank)): element i of each line is the
/// sum/product of elements 0..i (exclusive: 0..i-1, the first being 0/1; reverse: from the end).
/// Accumulates in x's dtype, in order along the axis, as TF's scan. float32/float64/float16/
/// bfloat16 and the integer types. Throws invalid_argument_error for a scalar x, a bad axis or an
/// unsupported dtype.
inline tensor cumulative(std::string_view op, const tensor& x, std::int64_t axis, bool exclusive, bool reverse) {
    using math_detail::cat;
    op_detail::require_input(op, x, "x");
    if (x.rank() < 1) throw invalid_argument_error(cat(op, ": x must have rank >= 1 but is a scalar"));
    const int ax = op_detail::normalize_axis(op, axis, x.rank());
    const bool prod = op == "Cumprod";
    const auto& d = x.shape().dims();
    const std::int64_t outer = op_detail::dim_product(d, 0, static_cast<std::size_t>(ax));
    const std::int64_t n = d[static_cast<std::size_t>(ax)];
    const std::int64_t inner = op_detail::dim_product(d, static_cast<std::size_t>(ax) + 1, d.size());
    return op_detail::dispatch<float, double, half, bfloat16, std::int8_t, std::int16_t, std::int32_t, std::int64_t,
                               std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t>(
        x.type(), op,
        [&](auto tag) {
            using T = decltype(tag);
            tensor out = tensor::uninitialized(dtype_of<T>, x.shape());
            const T* in = x.data<T>();
            T* o = out.data<T>();
            const T identity = static_cast<T>(prod ? 1 : 0);
            op_detail::parallel_for(outer, 2.0 * sizeof(T) * static_cast<double>(n * inner),
                                    static_cast<double>(n * inner), [&](std::int64_t a, std::int64_t b) {
                                        std::vector<T> acc(static_cast<std::size_t>(inner));
                                        for (std::int64_t q = a; q < b; ++q) {
                                            std::fill(acc.begin(), acc.end(), identity);
                                            for (std::int64_t s = 0; s < n; ++s) {
                                                const std::int64_t k = reverse ? n - 1 - s : s;
                                                const T* src = in + (q * n + k) * inner;
                                                T* dst = o + (q * n + k) * inner;
                                                for (std::int64_t i = 0; i < inner; ++i) {
                                                    T& r = acc[static_cast<std::size_t>(i)];
                                                    if (exclusive) dst[i] = r;
                                                    r = prod ? static_cast<T>(r * src[i]) : static_cast<T>(r + src[i]);
                                                    if (!exclusive) dst[i] = r;
                                                }
                                            }
                                        }
                                    });
            return out;
        },
        "x");
}

/// HistogramFixedWidth: counts of `values` in `nbins` equal bins spanning value_range = [lo, hi]
/// (values below lo go to bin 0, at or above hi to the last), as dtype `out` (int32/int64).
/// values int32/int64/float32/float64; value_range of values' dtype with 2 elements. Throws
/// invalid_argument_error when nbins <= 0, lo >= hi or the dtypes or shapes are wrong.
inline tensor histogram_fixed_width(const tensor& values, const tensor& value_range, std::int64_t nbins, dtype out) {
    using math_detail::cat;
    constexpr std::string_view op = "HistogramFixedWidth";
    op_detail::require_input(op, values, "values");
    op_detail::require_input(op, value_range, "value_range");
    op_detail::require_same_dtype(op, values, "values", value_range, "value_range");
    if (value_range.num_elements() != 2 || value_range.rank() != 1)
        throw invalid_argument_error(cat(op, ": value_range must have 2 elements but has shape ", value_range.shape().str()));
    if (nbins <= 0) throw invalid_argument_error(cat(op, ": nbins must be positive but is ", nbins));
    if (out != dtype::int32 && out != dtype::int64)
        throw invalid_argument_error(cat(op, ": dtype must be int32 or int64 but is ", dtype_name(out)));
    return op_detail::dispatch<std::int32_t, std::int64_t, float, double>(
        values.type(), op,
        [&](auto tag) {
            using T = decltype(tag);
            const T lo = value_range.data<T>()[0], hi = value_range.data<T>()[1];
            if (!(lo < hi))
                throw invalid_argument_error(cat(op, ": value_range must satisfy value_range[0] < value_range[1] but is [",
                                                 lo, ", ", hi, "]"));
            std::vector<std::int64_t> counts(static_cast<std::size_t>(nbins), 0);
            const T* v = values.data<T>();
            const std::int64_t total = values.num_elements();
            if (nbins == 1) {
                counts[0] = total;
            } else {
                // step from hi/n - lo/n, so hi - lo cannot overflow (TF's kernel)
                const double step = static_cast<double>(hi) / static_cast<double>(nbins) -
                                    static_cast<double>(lo) / static_cast<double>(nbins);
                const double last = static_cast<double>(nbins - 1);
                for (std::int64_t i = 0; i < total; ++i) {
                    const T shifted = static_cast<T>((v[i] < lo ? lo : v[i]) - lo);
                    double b = static_cast<double>(shifted) / step;
                    if (b != b) b = 0;  // NaN: bin 0 (TF's cast of NaN is undefined)
                    if (b > last) b = last;
                    ++counts[static_cast<std::size_t>(static_cast<std::int32_t>(b))];
                }
            }
            if (out == dtype::int32) {
                std::vector<std::int32_t> c32(counts.begin(), counts.end());
                return tensor::from_vector<std::int32_t>(shape{nbins}, c32);
            }
            return tensor::from_vector<std::int64_t>(shape{nbins}, counts);
        },
        "values");
}

/// Bincount: bins[v] += weights[i] (or 1 when weights is empty) for each v = arr[i] < size; arr
/// int32, size a non-negative int32 scalar, weights int32/int64/float32/float64 of arr's shape or
/// empty (then the result is `weights_type`). Throws invalid_argument_error for a negative value
/// in arr, a negative size, mismatched weights or wrong dtypes.
inline tensor bincount(const tensor& arr, std::int64_t size, const tensor& weights) {
    using math_detail::cat;
    constexpr std::string_view op = "Bincount";
    op_detail::require_input(op, arr, "arr");
    op_detail::require_input(op, weights, "weights");
    op_detail::require_dtype(op, arr, "arr", dtype::int32);
    if (size < 0) throw invalid_argument_error(cat(op, ": size must be non-negative but is ", size));
    const bool has_weights = weights.num_elements() > 0;
    if (has_weights && !(weights.shape() == arr.shape()))
        throw invalid_argument_error(cat(op, ": weights must have arr's shape ", arr.shape().str(), " or be empty, but has ",
                                         weights.shape().str()));
    const std::int32_t* a = arr.data<std::int32_t>();
    const std::int64_t n = arr.num_elements();
    for (std::int64_t i = 0; i < n; ++i) {
        if (a[i] < 0)
            throw invalid_argument_error(cat(op, ": arr must be non-negative but arr[", i, "] (flat) is ", a[i]));
    }
    return op_detail::dispatch<std::int32_t, std::int64_t, float, double>(
        weights.type(), op,
        [&](auto tag) {
            using T = decltype(tag);
            tensor out(dtype_of<T>, shape{size});  // zero-filled
            T* o = out.data<T>();
            const T* w = has_weights ? weights.data<T>() : nullptr;
            for (std::int64_t i = 0; i < n; ++i) {
                if (a[i] < size) o[a[i]] = static_cast<T>(o[a[i]] + (w ? w[i] : T(1)));
            }
            return out;
        },
        "weights");
}

/// LinSpace: `num` evenly spaced values from start to stop (the last exactly stop; num == 1 gives
/// [start]), float32/float64/float16/bfloat16 scalars. Throws invalid_argument_error when num <= 0,
/// start/stop are not scalars of one float dtype.
inline tensor linspace(const tensor& start, const tensor& stop, std::int64_t num) {
    using math_detail::cat;
    constexpr std::string_view op = "LinSpace";
    op_detail::require_input(op, start, "start");
    op_detail::require_input(op, stop, "stop");
    op_detail::require_same_dtype(op, start, "start", stop, "stop");
    if (start.num_elements() != 1 || start.rank() > 1)
        throw invalid_argument_error(cat(op, ": start must be a scalar but has shape ", start.shape().str()));
    if (stop.num_elements() != 1 || stop.rank() > 1)
        throw invalid_argument_error(cat(op, ": stop must be a scalar but has shape ", stop.shape().str()));
    if (num <= 0) throw invalid_argument_error(cat(op, ": num must be positive but is ", num));
    return op_detail::dispatch<float, double, half, bfloat16>(
        start.type(), op,
        [&](auto tag) {
            using T = decltype(tag);
            using C = math_detail::compute_t<T>;
            tensor out = tensor::uninitialized(dtype_of<T>, shape{num});
            T* o = out.data<T>();
            const C a = static_cast<C>(start.data<T>()[0]), b = static_cast<C>(stop.data<T>()[0]);
            if (num == 1) {
                o[0] = static_cast<T>(a);
            } else {
                const C step = (b - a) / static_cast<C>(num - 1);
                for (std::int64_t i = 0; i + 1 < num; ++i) o[i] = static_cast<T>(a + step * static_cast<C>(i));
                o[num - 1] = static_cast<T>(b);
            }
            return out;
        },
        "start");
}

/// CumulativeLogsumexp of x along `axis`: element i of each line is log(sum(exp(x[0..i]))) (exclusive:
/// 0..i-1, the first being -inf; reverse: from the end), accumulated pairwise as
/// max + log1p(exp(min - max)) like TF's scan. float32/float64/float16. Throws invalid_argument_error
/// for a scalar x, a bad axis or another dtype.
inline tensor cumulative_logsumexp(const tensor& x, std::int64_t axis, bool exclusive, bool reverse) {
    using math_detail::cat;
    constexpr std::string_view op = "CumulativeLogsumexp";
    op_detail::require_input(op, x, "x");
    if (x.rank() < 1) throw invalid_argument_error(cat(op, ": x must have rank >= 1 but is a scalar"));
    const int ax = op_detail::normalize_axis(op, axis, x.rank());
    const auto& d = x.shape().dims();
    const std::int64_t outer = op_detail::dim_product(d, 0, static_cast<std::size_t>(ax));
    const std::int64_t n = d[static_cast<std::size_t>(ax)];
    const std::int64_t inner = op_detail::dim_product(d, static_cast<std::size_t>(ax) + 1, d.size());
    return op_detail::dispatch<float, double, half>(
        x.type(), op,
        [&](auto tag) {
            using T = decltype(tag);
            using C = math_detail::compute_t<T>;
            tensor out = tensor::uninitialized(dtype_of<T>, x.shape());
            const T* in = x.data<T>();
            T* o = out.data<T>();
            const C ninf = -std::numeric_limits<C>::infinity();
            auto lse = [ninf](C a, C b) {
                if (a == ninf && b == ninf) return ninf;
                const C hi = a < b ? b : a, lo = a < b ? a : b;
                return static_cast<C>(hi + std::log1p(std::exp(lo - hi)));
            };
            for (std::int64_t q = 0; q < outer; ++q) {
                for (std::int64_t i = 0; i < inner; ++i) {
                    T acc = static_cast<T>(ninf);
                    for (std::int64_t s = 0; s < n; ++s) {
                        const std::int64_t k = reverse ? n - 1 - s : s;
                        const std::int64_t at = (q * n + k) * inner + i;
                        if (exclusive) o[at] = acc;
                        acc = static_cast<T>(lse(static_cast<C>(acc), static_cast<C>(in[at])));
                        if (!exclusive) o[at] = acc;
                    }
                }
            }
            return out;
        },
        "x");
}

}  // namespace graft::ops
