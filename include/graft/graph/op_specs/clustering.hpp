// graft/graph/op_specs/clustering.hpp — the clustering family's lines of graft's op table (op_table.hpp
// reads them into builtin_op_specs(); syntax and traits in op_def.hpp): TF's k-means ops
// (tf.contrib.factorization, used by TF1's KMeans graphs).
#pragma once

#include <string>
#include <vector>

namespace graft::detail {

inline void clustering_op_specs(std::vector<std::string>& s) {
    s.push_back("NearestNeighbors(points: float, centers: float, k: int64) -> "
                "(nearest_center_indices: int64, nearest_center_distances: float); nograd");
}

}  // namespace graft::detail
