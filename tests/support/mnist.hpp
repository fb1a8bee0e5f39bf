// The MNIST test set as the mnist-softmax tests feed it (../shared/datasets/mnist), and the
// accuracy count they check against TF's 0.7357. Link ZLIB::ZLIB (the files are gzip'd).
#pragma once

#include <cstdint>

#include "graft/core/tensor_util.hpp"
#include "graft/formats/idx.hpp"
#include "support/fixtures.hpp"

namespace graft::test {

struct mnist_set {
    graft::tensor features;  ///< float32 [10000, 784] in [0, 1]
    graft::tensor labels;    ///< int64 [10000]
};

/// Reads the MNIST test set into `out`; false (after the SKIP line) when it is absent.
inline bool mnist_test_set_or_skip(mnist_set& out) {
    auto images = dataset("mnist/t10k-images-idx3-ubyte.gz"), labels = dataset("mnist/t10k-labels-idx1-ubyte.gz");
    if (!present_or_skip(images) || !present_or_skip(labels)) return false;
    out.features = graft::data::mnist_images_as_features(graft::data::read_idx(images.string()));
    out.labels = graft::cast(graft::data::read_idx(labels.string()), graft::dtype::int64);
    return true;
}

/// How many rows of float32 `logits` [N, K] have their largest entry (the first, on ties) at the label.
inline std::int64_t argmax_hits(const graft::tensor& logits, const graft::tensor& labels) {
    const std::int64_t n = logits.dim(0), k = logits.dim(1);
    const float* l = logits.data<float>();
    std::int64_t hits = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        std::int64_t best = 0;
        for (std::int64_t j = 1; j < k; ++j) best = l[i * k + j] > l[i * k + best] ? j : best;
        hits += best == labels.data<std::int64_t>()[i];
    }
    return hits;
}

}  // namespace graft::test
