// graft/exec/cpu_kernels/parsing.hpp — the parsing family's CPU kernels bound to their TF op types
// (graft/ops/parse_example.hpp): ParseExample, ParseExampleV2 (sparse, dense and ragged features),
// ParseSingleExample.
#pragma once

#include <string>
#include <vector>

#include "graft/exec/kernel.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/ops/parse_example.hpp"

namespace graft::exec::kernels {

namespace impl {

/// The keys a string tensor input holds (ParseExampleV2's key vectors, V1's scalar keys).
inline std::vector<std::string> string_values(kernel_context& c, int i, const char* what) {
    tensor t = c.input(i);
    if (t.type() != dtype::string) c.fail(detail::cat(what, " must be strings, given ", t.describe()));
    return {t.data<std::string>(), t.data<std::string>() + t.num_elements()};
}

/// The spec's dense features from the node's attrs, keys and default inputs.
inline void dense_features(kernel_context& c, ops::example_spec& spec, const std::vector<std::string>& keys,
                           int first_default) {
    const auto& types = c.attr("Tdense").list_of<dtype>();
    const auto& shapes = c.attr("dense_shapes").list_of<graft::shape>();
    if (types.size() != keys.size() || shapes.size() != keys.size()) {
        c.fail(detail::cat(keys.size(), " dense keys but ", types.size(), " Tdense and ", shapes.size(), " dense_shapes"));
    }
    for (std::size_t j = 0; j < keys.size(); ++j) {
        spec.dense.push_back({keys[j], types[j], shapes[j], c.input(first_default + static_cast<int>(j))});
    }
}

inline void sparse_features(kernel_context& c, ops::example_spec& spec, const std::vector<std::string>& keys,
                            const char* types_attr = "sparse_types") {
    const auto& types = c.attr(types_attr).list_of<dtype>();
    if (types.size() != keys.size()) c.fail(detail::cat(keys.size(), " sparse keys but ", types.size(), " ", types_attr));
    for (std::size_t j = 0; j < keys.size(); ++j) spec.sparse.push_back({keys[j], types[j]});
}

/// Outputs in TF's order: sparse indices, values, shapes, then dense values; returns the next index.
inline int set_parsed(kernel_context& c, const ops::parsed_examples& r) {
    int o = 0;
    for (const auto& t : r.sparse_indices) c.set_output(o++, t);
    for (const auto& t : r.sparse_values) c.set_output(o++, t);
    for (const auto& t : r.sparse_shapes) c.set_output(o++, t);
    for (const auto& t : r.dense) c.set_output(o++, t);
    return o;
}

}  // namespace impl

inline void register_parsing(kernel_registry& r) {
    r.add("ParseExample", [](kernel_context& c) {
        const auto ns = static_cast<int>(c.attr("Nsparse").i()), nd = static_cast<int>(c.attr("Ndense").i());
        std::vector<std::string> sparse_keys, dense_keys;
        for (int j = 0; j < ns; ++j) sparse_keys.push_back(impl::string_values(c, 2 + j, "sparse_keys").at(0));
        for (int j = 0; j < nd; ++j) dense_keys.push_back(impl::string_values(c, 2 + ns + j, "dense_keys").at(0));
        ops::example_spec spec;
        impl::sparse_features(c, spec, sparse_keys);
        impl::dense_features(c, spec, dense_keys, 2 + ns + nd);
        impl::set_parsed(c, ops::parse_examples(c.input(0), spec));
    });
    r.add("ParseExampleV2", [](kernel_context& c) {
        auto sparse_keys = impl::string_values(c, 2, "sparse_keys");
        auto dense_keys = impl::string_values(c, 3, "dense_keys");
        auto ragged_keys = impl::string_values(c, 4, "ragged_keys");
        tensor serialized = c.input(0);
        ops::example_spec spec;
        impl::sparse_features(c, spec, sparse_keys);
        impl::sparse_features(c, spec, ragged_keys, "ragged_value_types");  // parsed as sparse, split below
        impl::dense_features(c, spec, dense_keys, 5);
        auto parsed = ops::parse_examples(serialized, spec);
        ops::parsed_examples plain = parsed;
        const std::size_t nsp = sparse_keys.size();
        plain.sparse_indices.resize(nsp);
        plain.sparse_values.resize(nsp);
        plain.sparse_shapes.resize(nsp);
        int o = impl::set_parsed(c, plain);
        const auto& split_types = c.attr("ragged_split_types").list_of<dtype>();
        if (split_types.size() != ragged_keys.size()) c.fail("ragged_split_types does not match ragged_keys");
        for (std::size_t j = 0; j < ragged_keys.size(); ++j) c.set_output(o++, parsed.sparse_values[nsp + j]);
        const std::int64_t batch = serialized.rank() == 0 ? 1 : serialized.num_elements();
        for (std::size_t j = 0; j < ragged_keys.size(); ++j) {
            // row_splits from the batch column of the indices: row b ends after its last value
            const tensor& idx = parsed.sparse_indices[nsp + j];
            std::vector<std::int64_t> splits(static_cast<std::size_t>(batch) + 1, 0);
            const std::int64_t rank = idx.shape().dim(1), n = idx.shape().dim(0);
            for (std::int64_t k = 0; k < n; ++k) {
                const std::int64_t b = rank == 2 ? idx.data<std::int64_t>()[k * 2] : 0;
                ++splits[static_cast<std::size_t>(b) + 1];
            }
            for (std::size_t b = 1; b < splits.size(); ++b) splits[b] += splits[b - 1];
            tensor s = tensor::from_vector<std::int64_t>(graft::shape{batch + 1}, splits);
            c.set_output(o++, split_types[j] == dtype::int64 ? s : cast(s, split_types[j]));
        }
    });
    r.add("ParseSingleExample", [](kernel_context& c) {
        tensor serialized = c.input(0);
        if (serialized.rank() != 0) c.fail("serialized must be a scalar, given " + serialized.describe());
        ops::example_spec spec;
        impl::sparse_features(c, spec, c.attr("sparse_keys").list_of<std::string>());
        impl::dense_features(c, spec, c.attr("dense_keys").list_of<std::string>(), 1);
        impl::set_parsed(c, ops::parse_examples(serialized, spec));
    });
}

}  // namespace graft::exec::kernels
