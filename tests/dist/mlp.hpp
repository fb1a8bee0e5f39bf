// The MLP 784-512-512-10 that the distributed tests and benchmarks train: a TF1 graph built with
// graft's builder (x: float32 [-1,784], y: int64 [-1], loss = mean sparse softmax cross-entropy),
// Glorot-uniform initial values from one seed, and its training data (the MNIST test set when
// ../shared has it, else a deterministic synthetic set of the same shape).
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/formats/idx.hpp"
#include "graft/train/variables.hpp"

namespace graft::test::dist {

struct mlp_graph {
    graft::meta_graph mg;
    graft::endpoint x, y, logits, loss;
    std::vector<std::string> vars;  ///< variable names, first layer first
    std::string init;
};

/// Glorot-uniform [rows, cols] from `seed` (graft's own draw: the same bits everywhere).
inline graft::tensor glorot(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const double lim = std::sqrt(6.0 / static_cast<double>(rows + cols));
    std::vector<float> v(static_cast<std::size_t>(rows * cols));
    for (auto& e : v) e = static_cast<float>((static_cast<double>(rng() >> 11) * 0x1.0p-53 * 2 - 1) * lim);
    return graft::tensor::from_vector<float>({rows, cols}, v);
}

/// The MLP with layers `sizes` (784, 512, 512, 10); `seed` picks the initial values.
inline mlp_graph build_mlp(std::vector<std::int64_t> sizes = {784, 512, 512, 10}, std::uint64_t seed = 42) {
    mlp_graph m;
    graft::graph_builder b(m.mg.graph);
    m.x = b.placeholder("x", graft::dtype::float32, graft::shape{-1, sizes.front()});
    m.y = b.placeholder("y", graft::dtype::int64, graft::shape{-1});
    graft::endpoint h = m.x;
    for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
        graft::graph_builder d = b.sub(l == 0 ? "dense" : "dense_" + std::to_string(l));
        auto w = graft::train::create_variable(m.mg, d, "kernel", glorot(sizes[l], sizes[l + 1], seed + l));
        auto bias = graft::train::create_variable(m.mg, d, "bias", graft::tensor(graft::dtype::float32, graft::shape{sizes[l + 1]}));
        m.vars.push_back(w.name);
        m.vars.push_back(bias.name);
        h = d.op("BiasAdd", {d.op("MatMul", {h, w.value}), bias.value});
        if (l + 2 < sizes.size()) h = d.op("Relu", {h});
    }
    m.logits = h;
    auto xent = b.op_n("SparseSoftmaxCrossEntropyWithLogits", {m.logits, m.y});
    m.loss = b.op("Mean", {xent[0], b.constant(graft::tensor::from_vector<std::int32_t>({0}))}, {}, "loss");
    m.init = graft::train::global_variables_initializer(m.mg);
    return m;
}

struct dataset {
    graft::tensor features;  ///< float32 [n, 784]
    graft::tensor labels;    ///< int64 [n]
    bool mnist = false;
};

/// `rows` rows of MNIST's test set (../shared), else synthetic rows (uniform pixels, labels from a
/// fixed linear rule, so a model can learn them).
inline dataset training_rows(std::int64_t rows, const std::string& shared_dir) {
    dataset d;
    namespace fs = std::filesystem;
    const fs::path images = fs::path(shared_dir) / "datasets/mnist/t10k-images-idx3-ubyte.gz";
    const fs::path labels = fs::path(shared_dir) / "datasets/mnist/t10k-labels-idx1-ubyte.gz";
    if (fs::exists(images) && fs::exists(labels)) {
        auto f = graft::data::mnist_images_as_features(graft::data::read_idx(images.string()));
        auto l = graft::cast(graft::data::read_idx(labels.string()), graft::dtype::int64);
        d.features = f.slice(0, rows).clone();
        d.labels = l.slice(0, rows).clone();
        d.mnist = true;
        return d;
    }
    std::mt19937_64 rng(7);
    d.features = graft::tensor(graft::dtype::float32, graft::shape{rows, 784});
    d.labels = graft::tensor(graft::dtype::int64, graft::shape{rows});
    for (std::int64_t i = 0; i < rows; ++i) {
        double score = 0;
        for (std::int64_t j = 0; j < 784; ++j) {
            float p = static_cast<float>(rng() >> 40) / static_cast<float>(1 << 24);
            d.features.data<float>()[i * 784 + j] = p;
            score += (j % 10) * p;
        }
        d.labels.data<std::int64_t>()[i] = static_cast<std::int64_t>(score) % 10;
    }
    return d;
}

}  // namespace graft::test::dist
