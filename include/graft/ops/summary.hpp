// graft/ops/summary.hpp — TF1's summary ops: serialized tensorflow.Summary protos, which a
// summary writer appends to an event file (graft::train::summary_writer::add_summary).
//
//   tensor s = graft::ops::scalar_summary(tensor::scalar_of<std::string>("loss"), loss);
//   tensor h = graft::ops::histogram_summary(tensor::scalar_of<std::string>("w"), w);
//   tensor m = graft::ops::merge_summary({s, h});            // one Summary with both values
//
// Field numbers from tensorflow/core/framework/summary.proto:
//   Summary { repeated Value value = 1; }
//   Value { string tag = 1; oneof value { float simple_value = 2; HistogramProto histo = 5; ... } }
//   HistogramProto { double min = 1; double max = 2; double num = 3; double sum = 4;
//                    double sum_squares = 5; repeated double bucket_limit = 6 [packed];
//                    repeated double bucket = 7 [packed]; }
// Histograms use TF's default buckets (edges +-1e-12 * 1.1^k up to 1e20, then DBL_MAX) and collapse
// each run of empty buckets into one, as TF's histogram encoder does.
#pragma once

#include "graft/core/config.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/formats/tf/wire.hpp"

namespace graft::ops {

namespace summary_detail {

inline constexpr std::uint32_t summary_value = 1, value_tag = 1, value_simple_value = 2, value_histo = 5;

/// TF's default histogram bucket edges: -DBL_MAX, then -1e20 .. -1e-12 and 0, 1e-12 .. 1e20 growing
/// by 1.1, then DBL_MAX (the edges are the upper limits of the buckets).
inline const std::vector<double>& default_bucket_limits() {
    static const std::vector<double> limits = [] {
        std::vector<double> pos;
        for (double v = 1e-12; v < 1e20; v *= 1.1) pos.push_back(v);
        pos.push_back(DBL_MAX);
        std::vector<double> r;
        for (auto it = pos.rbegin(); it != pos.rend(); ++it) r.push_back(-*it);
        r.push_back(0.0);
        r.insert(r.end(), pos.begin(), pos.end());
        return r;
    }();
    return limits;
}

inline void put_double(std::string& out, double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, 8);
    tf::wire::put_fixed64(out, bits);
}

/// The serialized HistogramProto of `values` (all finite).
inline std::string encode_histogram(const std::vector<double>& values) {
    const auto& limits = default_bucket_limits();
    std::vector<double> counts(limits.size(), 0.0);
    double mn = DBL_MAX, mx = -DBL_MAX, sum = 0, sum_sq = 0;
    for (double v : values) {
        // the bucket whose limit is the first one above v
        auto b = static_cast<std::size_t>(std::upper_bound(limits.begin(), limits.end(), v) - limits.begin());
        counts[std::min(b, counts.size() - 1)] += 1;
        mn = std::min(mn, v);
        mx = std::max(mx, v);
        sum += v;
        sum_sq += v * v;
    }
    std::string lim, cnt;
    for (std::size_t i = 0; i < limits.size();) {
        double end = limits[i], count = counts[i];
        ++i;
        if (count <= 0.0) {  // a run of empty buckets becomes one, ending at the run's last limit
            while (i < limits.size() && counts[i] <= 0.0) {
                end = limits[i];
                count = counts[i];
                ++i;
            }
        }
        put_double(lim, end);
        put_double(cnt, count);
    }
    tf::wire::writer w;
    auto dbl = [&](std::uint32_t field, double v) {
        std::uint64_t bits;
        std::memcpy(&bits, &v, 8);
        w.fixed64(field, bits);
    };
    dbl(1, mn);
    dbl(2, mx);
    dbl(3, static_cast<double>(values.size()));
    dbl(4, sum);
    dbl(5, sum_sq);
    w.bytes(6, lim);
    w.bytes(7, cnt);
    return std::move(w).str();
}

/// The tags of a serialized Summary's values. Throws format_error naming `what`.
inline std::vector<std::string> summary_tags(std::string_view bytes, std::string_view what) {
    using tf::wire::wire_type;
    std::vector<std::string> tags;
    tf::wire::reader r(bytes, what, 0, "tensorflow.Summary");
    std::uint32_t f;
    wire_type wt;
    while (r.next(f, wt)) {
        if (f != summary_value || wt != wire_type::bytes) {
            r.skip(wt);
            continue;
        }
        auto v = r.message("tensorflow.Summary.Value");
        std::uint32_t vf;
        wire_type vwt;
        std::string tag;
        while (v.next(vf, vwt)) {
            if (vf == value_tag && vwt == wire_type::bytes) tag = std::string(v.bytes());
            else v.skip(vwt);
        }
        tags.push_back(std::move(tag));
    }
    return tags;
}

/// The values of a real tensor as doubles (float16/bfloat16/ints included); throws for others.
inline std::vector<double> real_values(const tensor& t, std::string_view op) {
    if (!is_floating(t.type()) && !is_integer(t.type())) {
        throw invalid_argument_error(detail::cat(op, ": values must be a real number tensor, given ", t.describe()));
    }
    tensor d = cast(t, dtype::float64);
    return {d.data<double>(), d.data<double>() + d.num_elements()};
}

}  // namespace summary_detail

/// ScalarSummary: one Summary value {tag, simple_value} per element of `tags` (string) and
/// `values` (a real tensor of the same shape), as a scalar string tensor. Throws
/// invalid_argument_error when the shapes or dtypes differ from that.
inline tensor scalar_summary(const tensor& tags, const tensor& values) {
    const char* op = "ScalarSummary";
    if (!tags.valid() || tags.type() != dtype::string) {
        throw invalid_argument_error(detail::cat(op, ": tags must be a string tensor, given ",
                                                 tags.valid() ? tags.describe() : "nothing"));
    }
    if (!values.valid() || !(tags.shape() == values.shape())) {
        throw invalid_argument_error(detail::cat(op, ": tags and values must have the same shape, given tags ",
                                                 tags.shape().str(), " and values ",
                                                 values.valid() ? values.shape().str() : "nothing"));
    }
    auto v = summary_detail::real_values(values, op);
    tf::wire::writer s;
    const auto* t = tags.data<std::string>();
    for (std::size_t i = 0; i < v.size(); ++i) {
        tf::wire::writer val;
        val.bytes(summary_detail::value_tag, t[i]);
        float f = static_cast<float>(v[i]);
        std::uint32_t bits;
        std::memcpy(&bits, &f, 4);
        val.fixed32(summary_detail::value_simple_value, bits);
        s.message(summary_detail::summary_value, val.str());
    }
    return tensor::scalar_of<std::string>(std::move(s).str());
}

/// HistogramSummary: a Summary with one histogram value of every element of `values` under the
/// scalar string `tag`. Throws invalid_argument_error for a non-scalar tag, a non-real tensor, or a
/// NaN/infinite value ("Nan in summary histogram for: <tag>", as TF).
inline tensor histogram_summary(const tensor& tag, const tensor& values) {
    const char* op = "HistogramSummary";
    if (!tag.valid() || tag.type() != dtype::string || tag.num_elements() != 1) {
        throw invalid_argument_error(detail::cat(op, ": tag must be a string scalar, given ",
                                                 tag.valid() ? tag.describe() : "nothing"));
    }
    if (!values.valid()) throw invalid_argument_error(detail::cat(op, ": values is not a valid tensor"));
    const std::string& name = tag.data<std::string>()[0];
    auto v = summary_detail::real_values(values, op);
    for (double x : v) {
        if (!std::isfinite(x)) {
            throw invalid_argument_error(detail::cat("Nan in summary histogram for: ", name), {},
                                         "the values summarized hold NaN or infinity: check the tensor that feeds it");
        }
    }
    tf::wire::writer val;
    val.bytes(summary_detail::value_tag, name);
    val.message(summary_detail::value_histo, summary_detail::encode_histogram(v));
    tf::wire::writer s;
    s.message(summary_detail::summary_value, val.str());
    return tensor::scalar_of<std::string>(std::move(s).str());
}

/// MergeSummary: the values of every serialized Summary in `inputs` (string tensors of any shape),
/// in order, as one Summary. Throws invalid_argument_error for a non-string input or a tag that two
/// values share ("Duplicate tag ... found in summary inputs", as TF), format_error for bytes that are
/// not a Summary.
inline tensor merge_summary(const std::vector<tensor>& inputs) {
    const char* op = "MergeSummary";
    std::set<std::string> seen;
    std::string out;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const tensor& t = inputs[i];
        if (!t.valid() || t.type() != dtype::string) {
            throw invalid_argument_error(detail::cat(op, ": input ", i, " must be a string tensor, given ",
                                                     t.valid() ? t.describe() : "nothing"));
        }
        for (std::int64_t k = 0; k < t.num_elements(); ++k) {
            const std::string& bytes = t.data<std::string>()[k];
            for (auto& tag : summary_detail::summary_tags(bytes, detail::cat(op, " input ", i))) {
                if (!seen.insert(tag).second) {
                    throw invalid_argument_error(detail::cat(op, ": Duplicate tag ", tag, " found in summary inputs"));
                }
            }
            out += bytes;  // a Summary is a list of values: concatenated messages merge
        }
    }
    return tensor::scalar_of<std::string>(std::move(out));
}

}  // namespace graft::ops
