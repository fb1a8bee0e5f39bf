// graft/ops/parse_example.hpp — tf.train.Example protos into tensors: the ParseExample family that
// TF Serving's classify/regress signatures and TF1 input pipelines put in front of a model.
//
//   graft::ops::example_spec spec;
//   spec.dense.push_back({"x", dtype::float32, shape{1}, tensor{}});  // required: no default
//   auto r = graft::ops::parse_examples(serialized, spec);           // r.dense[0] is float32 [batch, 1]
//
// Wire layout (tensorflow/core/example/example.proto, feature.proto):
//   Example { Features features = 1; }   Features { map<string, Feature> feature = 1; }
//   Feature { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2; Int64List int64_list = 3; } }
//   BytesList { repeated bytes value = 1; }  FloatList { repeated float value = 1 [packed]; }
//   Int64List { repeated int64 value = 1 [packed]; }
// Packed and unpacked encodings are both read; a key given twice keeps its last value (map rules).
#pragma once

#include "graft/core/config.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/formats/tf/wire.hpp"

namespace graft::ops {

/// One dense feature to read: its key, dtype (float32, int64 or string), shape per example (a
/// leading -1 means variable length, padded with the default's value) and default (invalid or
/// empty: the feature is required).
struct dense_feature {
    std::string key;
    dtype type = dtype::float32;
    shape dims;
    tensor default_value;
};
/// One sparse (variable length) feature to read: its key and dtype.
struct sparse_feature {
    std::string key;
    dtype type = dtype::float32;
};
struct example_spec {
    std::vector<sparse_feature> sparse;
    std::vector<dense_feature> dense;
};
/// What parse_examples returns: per sparse feature its indices [n, rank + 1] int64, values [n] and
/// dense shape [rank + 1] int64; per dense feature its values [batch..., shape...].
struct parsed_examples {
    std::vector<tensor> sparse_indices, sparse_values, sparse_shapes, dense;
};

namespace parse_detail {

/// The values of one feature of one Example, as the wire holds them.
struct feature_values {
    dtype type = dtype::invalid;  ///< float32, int64 or string; invalid: the Feature had no kind set
    std::vector<float> f;
    std::vector<std::int64_t> i;
    std::vector<std::string_view> s;
    [[nodiscard]] std::size_t size() const {
        return type == dtype::float32 ? f.size() : type == dtype::int64 ? i.size() : s.size();
    }
};

inline feature_values read_feature(tf::wire::reader r) {
    using tf::wire::wire_type;
    feature_values v;
    std::uint32_t f;
    wire_type wt;
    while (r.next(f, wt)) {
        if (wt != wire_type::bytes || f < 1 || f > 3) {
            r.skip(wt);
            continue;
        }
        auto list = r.message(f == 1 ? "tensorflow.BytesList" : f == 2 ? "tensorflow.FloatList" : "tensorflow.Int64List");
        v = feature_values{};  // oneof: the last kind set wins
        v.type = f == 1 ? dtype::string : f == 2 ? dtype::float32 : dtype::int64;
        std::uint32_t lf;
        wire_type lwt;
        while (list.next(lf, lwt)) {
            if (lf != 1) {
                list.skip(lwt);
                continue;
            }
            if (f == 1 && lwt == wire_type::bytes) {
                v.s.push_back(list.bytes());
            } else if (f == 2 && lwt == wire_type::fixed32) {
                std::uint32_t bits = list.fixed32();
                float x;
                std::memcpy(&x, &bits, 4);
                v.f.push_back(x);
            } else if (f == 2 && lwt == wire_type::bytes) {  // packed floats
                auto b = list.bytes();
                if (b.size() % 4) throw format_error("tensorflow.FloatList: packed values are not a multiple of 4 bytes");
                for (std::size_t k = 0; k < b.size(); k += 4) {
                    float x;
                    std::memcpy(&x, b.data() + k, 4);
                    v.f.push_back(x);
                }
            } else if (f == 3 && lwt == wire_type::varint) {
                v.i.push_back(list.int64());
            } else if (f == 3 && lwt == wire_type::bytes) {  // packed varints
                tf::wire::reader p(list.bytes(), {}, 0, "tensorflow.Int64List");
                while (!p.done()) v.i.push_back(p.int64());
            } else {
                list.skip(lwt);
            }
        }
    }
    return v;
}

/// The features of one serialized Example whose keys `wanted` holds. Throws format_error.
inline std::unordered_map<std::string_view, feature_values> read_example(
    std::string_view bytes, const std::unordered_map<std::string_view, int>& wanted, std::int64_t index) {
    using tf::wire::wire_type;
    std::unordered_map<std::string_view, feature_values> out;
    const std::string where = detail::cat("serialized Example ", index);  // the readers keep a view of it
    tf::wire::reader ex(bytes, where, 0, "tensorflow.Example");
    std::uint32_t f;
    wire_type wt;
    while (ex.next(f, wt)) {
        if (f != 1 || wt != wire_type::bytes) {
            ex.skip(wt);
            continue;
        }
        auto feats = ex.message("tensorflow.Features");
        while (feats.next(f, wt)) {
            if (f != 1 || wt != wire_type::bytes) {
                feats.skip(wt);
                continue;
            }
            auto entry = feats.message("tensorflow.Features.FeatureEntry");
            std::string_view key;
            std::string_view value;
            bool has_value = false;
            while (entry.next(f, wt)) {
                if (f == 1 && wt == wire_type::bytes) key = entry.bytes();
                else if (f == 2 && wt == wire_type::bytes) {
                    value = entry.bytes();
                    has_value = true;
                } else entry.skip(wt);
            }
            if (!wanted.count(key)) continue;
            out[key] = has_value ? read_feature(tf::wire::reader(value, {}, 0, "tensorflow.Feature")) : feature_values{};
        }
    }
    return out;
}

inline void check_type(dtype t, const std::string& key, const char* what) {
    if (t != dtype::float32 && t != dtype::int64 && t != dtype::string) {
        throw invalid_argument_error(detail::cat("ParseExample: ", what, " feature '", key, "' has dtype ",
                                                 dtype_name(t), "; tf.Example holds float32, int64 or string"));
    }
}

/// Copies values [from, from + n) of `v` into out's elements starting at `at`.
inline void copy_values(const feature_values& v, std::size_t from, std::size_t n, tensor& out, std::int64_t at) {
    if (v.type == dtype::float32) std::memcpy(out.data<float>() + at, v.f.data() + from, n * sizeof(float));
    else if (v.type == dtype::int64) std::memcpy(out.data<std::int64_t>() + at, v.i.data() + from, n * sizeof(std::int64_t));
    else {
        for (std::size_t k = 0; k < n; ++k) out.data<std::string>()[at + static_cast<std::int64_t>(k)] = std::string(v.s[from + k]);
    }
}

/// Fills out's elements [at, at + n) with `def`'s elements, repeated from its start.
inline void copy_default(const tensor& def, tensor& out, std::int64_t at, std::int64_t n, std::int64_t def_from = 0) {
    const std::int64_t m = def.num_elements();
    visit_dtype(out.type(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::string>) {
            for (std::int64_t k = 0; k < n; ++k) out.data<T>()[at + k] = def.data<T>()[(def_from + k) % m];
        }
    });
}

}  // namespace parse_detail

/// Parses serialized tf.Example protos (`serialized`: a string scalar or vector, one Example each)
/// into the features `spec` names, with TF's rules: a dense feature must hold exactly its shape's
/// element count (or, with a leading -1, whole rows: padded to the longest with the default), a
/// missing one takes its default or is an error when it has none; sparse features give
/// (indices, values, dense_shape) over the batch. Throws invalid_argument_error naming the
/// example index, the key and what differs (TF's messages), format_error for bytes that are not an
/// Example.
inline parsed_examples parse_examples(const tensor& serialized, const example_spec& spec) {
    if (!serialized.valid() || serialized.type() != dtype::string || serialized.rank() > 1) {
        throw invalid_argument_error(detail::cat("ParseExample: serialized must be a string scalar or vector, given ",
                                                 serialized.valid() ? serialized.describe() : "nothing"));
    }
    const bool scalar = serialized.rank() == 0;
    const std::int64_t batch = serialized.num_elements();
    std::unordered_map<std::string_view, int> wanted;
    for (const auto& s : spec.sparse) {
        parse_detail::check_type(s.type, s.key, "sparse");
        wanted[s.key] = 0;
    }
    for (const auto& d : spec.dense) {
        parse_detail::check_type(d.type, d.key, "dense");
        wanted[d.key] = 0;
    }
    std::vector<std::unordered_map<std::string_view, parse_detail::feature_values>> examples;
    examples.reserve(static_cast<std::size_t>(batch));
    for (std::int64_t b = 0; b < batch; ++b) {
        try {
            examples.push_back(parse_detail::read_example(serialized.data<std::string>()[b], wanted, b));
        } catch (const format_error& e) {
            throw invalid_argument_error(detail::cat("ParseExample: serialized Example ", b,
                                                     " is not a tf.train.Example: ", e.message()),
                                         {}, "feed Example protos serialized with SerializeToString()");
        }
    }
    auto mismatch = [](std::int64_t b, const std::string& key, dtype got, dtype want) {
        return invalid_argument_error(detail::cat("Name: <unknown>, Key: ", key, ", Index: ", b,
                                                  ".  Data types don't match. Data type: ", dtype_name(got),
                                                  " but expected type: ", dtype_name(want)));
    };
    parsed_examples r;
    for (const auto& d : spec.dense) {
        const bool var_len = d.dims.rank() > 0 && d.dims.dim(0) < 0;
        std::vector<std::int64_t> inner(d.dims.dims().begin() + (var_len ? 1 : 0), d.dims.dims().end());
        std::int64_t row = 1;
        for (auto x : inner) {
            if (x < 0) throw invalid_argument_error(detail::cat("ParseExample: dense feature '", d.key, "' has shape ", d.dims.str(), ": only the first dimension may be unknown"));
            row *= x;
        }
        const bool has_default = d.default_value.valid() && d.default_value.num_elements() > 0;
        if (has_default && d.default_value.type() != d.type) {
            throw invalid_argument_error(detail::cat("ParseExample: the default of dense feature '", d.key, "' is ",
                                                     d.default_value.describe(), " but the feature is ", dtype_name(d.type)));
        }
        std::int64_t rows = 1;  // per example; for variable length the longest
        if (var_len) {
            rows = 0;
            for (std::int64_t b = 0; b < batch; ++b) {
                auto it = examples[static_cast<std::size_t>(b)].find(d.key);
                if (it == examples[static_cast<std::size_t>(b)].end() || it->second.type == dtype::invalid) continue;
                const auto n = static_cast<std::int64_t>(it->second.size());
                if (row == 0 || n % row) {
                    throw invalid_argument_error(detail::cat("Name: <unknown>, Key: ", d.key, ", Index: ", b,
                                                             ".  Number of values is not a multiple of stride ", row));
                }
                rows = std::max(rows, n / row);
            }
        }
        const std::int64_t per = var_len ? rows * row : row;
        std::vector<std::int64_t> out_dims;
        if (!scalar) out_dims.push_back(batch);
        if (var_len) out_dims.push_back(rows);
        out_dims.insert(out_dims.end(), inner.begin(), inner.end());
        tensor out(d.type, shape(out_dims));
        for (std::int64_t b = 0; b < batch; ++b) {
            auto& ex = examples[static_cast<std::size_t>(b)];
            auto it = ex.find(d.key);
            const bool present = it != ex.end() && it->second.type != dtype::invalid;
            if (!present) {
                if (!has_default) {
                    throw invalid_argument_error(detail::cat("Name: <unknown>, Feature: ", d.key, " (data type: ",
                                                             dtype_name(d.type), ") is required but could not be found."),
                                                 {}, "give the feature in every Example, or a default for it");
                }
                parse_detail::copy_default(d.default_value, out, b * per, per);
                continue;
            }
            const auto& v = it->second;
            if (v.type != d.type) throw mismatch(b, d.key, v.type, d.type);
            const auto n = static_cast<std::int64_t>(v.size());
            if (!var_len && n != per) {
                throw invalid_argument_error(detail::cat("Name: <unknown>, Key: ", d.key, ", Index: ", b, ".  Number of ",
                                                         dtype_name(d.type), " values != expected.  Values size: ", n,
                                                         " but output shape: ", shape(inner).str()));
            }
            parse_detail::copy_values(v, 0, static_cast<std::size_t>(n), out, b * per);
            if (n < per) {  // variable length: pad with the default value
                if (!has_default) {
                    throw invalid_argument_error(detail::cat("ParseExample: variable-length dense feature '", d.key,
                                                             "' needs a default value to pad with"));
                }
                parse_detail::copy_default(d.default_value, out, b * per + n, per - n);
            }
        }
        r.dense.push_back(std::move(out));
    }
    for (const auto& s : spec.sparse) {
        std::int64_t total = 0, longest = 0;
        for (std::int64_t b = 0; b < batch; ++b) {
            auto& ex = examples[static_cast<std::size_t>(b)];
            auto it = ex.find(s.key);
            if (it == ex.end() || it->second.type == dtype::invalid) continue;
            if (it->second.type != s.type) throw mismatch(b, s.key, it->second.type, s.type);
            const auto n = static_cast<std::int64_t>(it->second.size());
            total += n;
            longest = std::max(longest, n);
        }
        const std::int64_t rank = scalar ? 1 : 2;
        tensor idx(dtype::int64, shape{total, rank});
        tensor vals(s.type, shape{total});
        std::int64_t k = 0;
        for (std::int64_t b = 0; b < batch; ++b) {
            auto& ex = examples[static_cast<std::size_t>(b)];
            auto it = ex.find(s.key);
            if (it == ex.end() || it->second.type == dtype::invalid) continue;
            const auto n = static_cast<std::int64_t>(it->second.size());
            parse_detail::copy_values(it->second, 0, static_cast<std::size_t>(n), vals, k);
            for (std::int64_t j = 0; j < n; ++j, ++k) {
                auto* p = idx.data<std::int64_t>() + k * rank;
                if (!scalar) *p++ = b;
                *p = j;
            }
        }
        tensor shp = scalar ? tensor::from_vector<std::int64_t>(shape{1}, {longest})
                            : tensor::from_vector<std::int64_t>(shape{2}, {batch, longest});
        r.sparse_indices.push_back(std::move(idx));
        r.sparse_values.push_back(std::move(vals));
        r.sparse_shapes.push_back(std::move(shp));
    }
    return r;
}

}  // namespace graft::ops
