// graft/ops/clustering.hpp — TF's k-means building block (tf.contrib.factorization / TF1's
// KMeans estimator graph): the k nearest centers of each point.
//
//   auto [idx, dist] = graft::ops::nearest_neighbors(points, centers, 2);  // [n, 2] int64, float32
#pragma once

#include "graft/core/config.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/ops/detail/nn_util.hpp"

namespace graft::ops {

struct nearest_centers {
    tensor indices;    ///< int64 [points, k]
    tensor distances;  ///< float32 [points, k]: squared Euclidean distances
};

/// NearestNeighbors: for each row of `points` [n, d] (float32) the min(k, m) rows of `centers`
/// [m, d] nearest to it, nearest first (ties: the lower index), with their squared distances computed
/// as TF's kernel does: 2 * (|p|^2 / 2 + (|c|^2 / 2 - <p, c>)), so they may be slightly negative for a
/// point on a center. Throws invalid_argument_error for other ranks, dtypes, n == 0 or d mismatch.
inline nearest_centers nearest_neighbors(const tensor& points, const tensor& centers, std::int64_t k) {
    const char* op = "NearestNeighbors";
    auto need_matrix = [&](const tensor& t, const char* what) {
        if (!t.valid() || t.rank() != 2 || t.type() != dtype::float32) {
            throw invalid_argument_error(detail::cat(op, ": ", what, " should be a float32 matrix, given ",
                                                     t.valid() ? t.describe() : "nothing"));
        }
    };
    need_matrix(points, "points");
    need_matrix(centers, "centers");
    const std::int64_t n = points.shape().dim(0), d = points.shape().dim(1);
    const std::int64_t m = centers.shape().dim(0);
    if (n <= 0) throw invalid_argument_error(detail::cat(op, ": expected points.rows() > 0, given ", points.describe()));
    if (centers.shape().dim(1) != d) {
        throw invalid_argument_error(detail::cat(op, ": expected point_dimensions == center_dimensions: ", d, " vs ",
                                                 centers.shape().dim(1)));
    }
    if (k < 0) throw invalid_argument_error(detail::cat(op, ": k must be non-negative, given ", k));
    k = std::min(k, m);
    nearest_centers r{tensor(dtype::int64, shape{n, k}), tensor(dtype::float32, shape{n, k})};
    if (k == 0) return r;
    const float* p = points.data<float>();
    const float* c = centers.data<float>();
    std::vector<float> half_c(static_cast<std::size_t>(m));
    for (std::int64_t j = 0; j < m; ++j) {
        float s = 0;
        for (std::int64_t t = 0; t < d; ++t) s += c[j * d + t] * c[j * d + t];
        half_c[static_cast<std::size_t>(j)] = 0.5f * s;
    }
    auto* out_i = r.indices.data<std::int64_t>();
    auto* out_d = r.distances.data<float>();
    nn_detail::parallel_for(n, std::max<std::int64_t>(1, 4096 / std::max<std::int64_t>(1, m * d)), [&](std::int64_t begin, std::int64_t end) {
        std::vector<std::pair<float, std::int64_t>> cand(static_cast<std::size_t>(m));
        for (std::int64_t i = begin; i < end; ++i) {
            const float* pi = p + i * d;
            float half_p = 0;
            for (std::int64_t t = 0; t < d; ++t) half_p += pi[t] * pi[t];
            half_p *= 0.5f;
            for (std::int64_t j = 0; j < m; ++j) {
                float dot = 0;
                for (std::int64_t t = 0; t < d; ++t) dot += pi[t] * c[j * d + t];
                cand[static_cast<std::size_t>(j)] = {half_c[static_cast<std::size_t>(j)] - dot, j};
            }
            std::partial_sort(cand.begin(), cand.begin() + k, cand.end());
            for (std::int64_t j = 0; j < k; ++j) {
                out_d[i * k + j] = 2.0f * (half_p + cand[static_cast<std::size_t>(j)].first);
                out_i[i * k + j] = cand[static_cast<std::size_t>(j)].second;
            }
        }
    });
    return r;
}

}  // namespace graft::ops
