// Softmax, LogSoftmax and the two softmax cross-entropy ops: TF's figures (xent_op_test_base.py),
// stability, and finite differences of the loss against the backprop output.
#include <doctest/doctest.h>

#include "graft/ops/softmax.hpp"
#include "ops/nn_testing.hpp"

using namespace graft;
using graft::test::check_close;
using graft::test::from_values;
using graft::test::random_tensor;

namespace {

// xent_op_test_base.py _npXent: loss and backprop of one row set (labels already broadcast).
void np_xent(const std::vector<double>& labels, const std::vector<double>& logits, std::int64_t C, std::vector<double>& loss,
             std::vector<double>& bp) {
    const std::int64_t B = static_cast<std::int64_t>(logits.size()) / C;
    loss.assign(static_cast<std::size_t>(B), 0.0);
    bp.assign(logits.size(), 0.0);
    for (std::int64_t b = 0; b < B; ++b) {
        double mx = -INFINITY, s = 0;
        for (std::int64_t c = 0; c < C; ++c) mx = std::max(mx, logits[static_cast<std::size_t>(b * C + c)]);
        for (std::int64_t c = 0; c < C; ++c) s += std::exp(logits[static_cast<std::size_t>(b * C + c)] - mx);
        for (std::int64_t c = 0; c < C; ++c) {
            const auto i = static_cast<std::size_t>(b * C + c);
            const double p = std::exp(logits[i] - mx) / s;
            bp[i] = p - labels[i];
            loss[static_cast<std::size_t>(b)] -= labels[i] * std::log(p + 1e-20);
        }
    }
}

}  // namespace

TEST_CASE("nn Softmax / LogSoftmax: values, stability with large logits, any rank") {
    check_close(ops::softmax(tensor::from_vector<float>({1, 3}, {1, 2, 3})),
                from_values(dtype::float32, {1, 3}, {0.09003057317038046, 0.24472847105479767, 0.6652409557748219}), 1e-6,
                1e-7, "softmax");
    check_close(ops::softmax(tensor::from_vector<float>({2}, {1000, 1001})),
                from_values(dtype::float32, {2}, {0.2689414213699951, 0.7310585786300049}), 1e-6, 1e-7, "large");
    check_close(ops::log_softmax(tensor::from_vector<double>({2}, {1000, 1000})),
                from_values(dtype::float64, {2}, {-std::log(2.0), -std::log(2.0)}), 1e-14, 1e-14, "log large");
    check_close(ops::log_softmax(tensor::from_vector<float>({2}, {-1000, 0})),
                from_values(dtype::float32, {2}, {-1000, 0}), 1e-6, 1e-6, "log tiny");
    const tensor x = random_tensor(dtype::float64, {2, 3, 5}, 101, -5, 5);
    const tensor s = ops::softmax(x), l = ops::log_softmax(x);
    for (std::int64_t r = 0; r < 6; ++r) {
        double mx = -INFINITY, sum = 0;
        for (std::int64_t c = 0; c < 5; ++c) mx = std::max(mx, x.data<double>()[r * 5 + c]);
        for (std::int64_t c = 0; c < 5; ++c) sum += std::exp(x.data<double>()[r * 5 + c] - mx);
        for (std::int64_t c = 0; c < 5; ++c) {
            const double want = std::exp(x.data<double>()[r * 5 + c] - mx) / sum;
            CHECK(s.data<double>()[r * 5 + c] == doctest::Approx(want).epsilon(1e-12));
            CHECK(l.data<double>()[r * 5 + c] == doctest::Approx(std::log(want)).epsilon(1e-12));
        }
    }
    CHECK_THROWS_AS(ops::softmax(tensor::scalar_of(1.0f)), shape_error);
    CHECK_THROWS_AS(ops::softmax(tensor(dtype::int32, {3})), invalid_argument_error);
}

TEST_CASE("nn SoftmaxCrossEntropyWithLogits: TF's figures") {
    // xent_op_test_base.py testNpXent: loss [1.3862, 1.9401], gradient rows [0.25,0.25,0.25,-0.75] and
    // [0.0321,-0.4129,-0.2632,0.6439] (to 1e-3).
    for (dtype t : {dtype::float32, dtype::float64}) {
        const tensor logits = from_values(t, {2, 4}, {1, 1, 1, 1, 1, 2, 3, 4});
        const tensor labels = from_values(t, {2, 4}, {0, 0, 0, 1, 0, 0.5, 0.5, 0});
        const auto r = ops::softmax_cross_entropy_with_logits(logits, labels);
        check_close(r.loss, from_values(t, {2}, {1.3862, 1.9401}), 1e-3, 1e-3, "loss");
        check_close(r.backprop, from_values(t, {2, 4}, {0.25, 0.25, 0.25, -0.75, 0.0321, -0.4129, -0.2632, 0.6439}), 1e-3,
                    1e-3, "backprop");
        // testSingleClass: one class gives zero loss; the gradient is 1 - label.
        const auto s = ops::softmax_cross_entropy_with_logits(from_values(t, {4, 1}, {1, -1, 0, 1}),
                                                              from_values(t, {4, 1}, {-1, 0, 1, 1}));
        CHECK(test::values(s.loss) == std::vector<double>{0, 0, 0, 0});
        CHECK(test::values(s.backprop) == std::vector<double>{2, 1, 0, 0});
    }
}

TEST_CASE("nn SoftmaxCrossEntropyWithLogits: broadcast labels (TF's testLabelsBroadcast)") {
    std::vector<double> loss, bp;
    // labels [1,4] against logits [2,4]
    const std::vector<double> logits = {1, 1, 1, 1, 1, 2, 3, 4};
    const auto r1 = ops::softmax_cross_entropy_with_logits(from_values(dtype::float64, {2, 4}, logits),
                                                           from_values(dtype::float64, {1, 4}, {0, 0, 0, 1}));
    np_xent({0, 0, 0, 1, 0, 0, 0, 1}, logits, 4, loss, bp);
    check_close(r1.loss, tensor::from_vector<double>(loss), 1e-12, 1e-12, "loss [1,4]");
    check_close(r1.backprop, tensor::from_vector<double>({2, 4}, bp), 1e-12, 1e-12, "backprop [1,4]");
    // labels [3,1] against logits [3,4]: TF's uniform_labels_gradient (to 1e-3)
    const auto r2 = ops::softmax_cross_entropy_with_logits(
        from_values(dtype::float32, {3, 4}, {1, 1, 1, 1, 1, 2, 3, 4, 1, 2, 3, 4}),
        from_values(dtype::float32, {3, 1}, {0, 2, 0.25}));
    check_close(r2.backprop,
                from_values(dtype::float32, {3, 4},
                            {0.25, 0.25, 0.25, 0.25, -1.968, -1.913, -1.763, -1.355, -0.218, -0.163, -0.013, 0.394}),
                1e-3, 1e-3, "uniform labels gradient");
    // labels [1,1] against logits [2,1]
    const auto r3 = ops::softmax_cross_entropy_with_logits(from_values(dtype::float64, {2, 1}, {1, 2}),
                                                           from_values(dtype::float64, {1, 1}, {1}));
    CHECK(test::values(r3.loss) == std::vector<double>{0, 0});
    CHECK_THROWS_WITH_AS(ops::softmax_cross_entropy_with_logits(tensor(dtype::float32, {2, 2}), tensor(dtype::float32, {2, 3})),
                         doctest::Contains("logits and labels must be broadcastable: logits [2,2], labels [2,3]"),
                         shape_error);
    CHECK_THROWS_AS(ops::softmax_cross_entropy_with_logits(tensor(dtype::float32, {2, 2, 2}), tensor(dtype::float32, {2, 2, 2})),
                    shape_error);
}

TEST_CASE("nn softmax cross-entropy: backprop equals the finite-difference gradient of the loss") {
    const tensor logits = random_tensor(dtype::float64, {3, 5}, 111, -3, 3);
    // Rows of labels sum to 1 (backprop = softmax - labels is the gradient only then, as in TF's testGradient).
    tensor labels = random_tensor(dtype::float64, {3, 5}, 112, 0, 1);
    for (std::int64_t b = 0; b < 3; ++b) {
        double s = 0;
        for (std::int64_t c = 0; c < 5; ++c) s += labels.data<double>()[b * 5 + c];
        for (std::int64_t c = 0; c < 5; ++c) labels.data<double>()[b * 5 + c] /= s;
    }
    const tensor w = random_tensor(dtype::float64, {3}, 113);
    const auto r = ops::softmax_cross_entropy_with_logits(logits, labels);
    const tensor num = test::numeric_gradient(
        [&](const tensor& v) { return ops::softmax_cross_entropy_with_logits(v, labels).loss; }, logits, w);
    tensor want(dtype::float64, {3, 5});
    for (std::int64_t i = 0; i < 15; ++i) want.data<double>()[i] = r.backprop.data<double>()[i] * w.data<double>()[i / 5];
    check_close(want, num, 1e-6, 1e-8, "dense");
    // sparse: labels 4, 0, 2
    const tensor ids = tensor::from_vector<std::int64_t>({4, 0, 2});
    const auto s = ops::sparse_softmax_cross_entropy_with_logits(logits, ids);
    const tensor num_s = test::numeric_gradient(
        [&](const tensor& v) { return ops::sparse_softmax_cross_entropy_with_logits(v, ids).loss; }, logits, w);
    for (std::int64_t i = 0; i < 15; ++i) want.data<double>()[i] = s.backprop.data<double>()[i] * w.data<double>()[i / 5];
    check_close(want, num_s, 1e-6, 1e-8, "sparse");
}

TEST_CASE("nn SparseSoftmaxCrossEntropyWithLogits: TF's figures") {
    // tensorflow/python/kernel_tests/sparse_ops/sparse_xent_op_test_base.py testNpXent: labels [3, 0]
    // on logits [[1,1,1,1],[1,2,3,4]]: loss [1.3862, 3.4420], backprop rows [0.25,0.25,0.25,-0.75] and
    // [-0.968,0.087,0.237,0.6439] (to 1e-3).
    for (dtype t : {dtype::float32, dtype::float64})
        for (dtype lt : {dtype::int32, dtype::int64}) {
            const auto r = ops::sparse_softmax_cross_entropy_with_logits(from_values(t, {2, 4}, {1, 1, 1, 1, 1, 2, 3, 4}),
                                                                         from_values(lt, {2}, {3, 0}));
            check_close(r.loss, from_values(t, {2}, {1.3862, 3.4420}), 1e-3, 1e-3, "loss");
            check_close(r.backprop, from_values(t, {2, 4}, {0.25, 0.25, 0.25, -0.75, -0.968, 0.087, 0.237, 0.6439}), 1e-3,
                        1e-3, "backprop");
        }
}

TEST_CASE("nn SparseSoftmaxCrossEntropyWithLogits: equals the dense op on one-hot labels; label errors") {
    const tensor logits = random_tensor(dtype::float32, {4, 6}, 121, -4, 4);
    const std::vector<std::int32_t> ids = {5, 0, 3, 3};
    tensor onehot(dtype::float32, {4, 6});
    for (std::size_t b = 0; b < ids.size(); ++b) onehot.data<float>()[b * 6 + static_cast<std::size_t>(ids[b])] = 1;
    const auto dense = ops::softmax_cross_entropy_with_logits(logits, onehot);
    const auto sparse32 = ops::sparse_softmax_cross_entropy_with_logits(logits, tensor::from_vector<std::int32_t>(ids));
    check_close(sparse32.loss, dense.loss, 1e-6, 1e-6, "loss");
    check_close(sparse32.backprop, dense.backprop, 1e-6, 1e-6, "backprop");
    CHECK_THROWS_WITH_AS(
        ops::sparse_softmax_cross_entropy_with_logits(logits, tensor::from_vector<std::int64_t>({1, 6, 2, 0})),
        "SparseSoftmaxCrossEntropyWithLogits: received a label value of 6 at index 1, which is outside the valid range "
        "of [0, 6)",
        invalid_argument_error);
    CHECK_THROWS_WITH_AS(
        ops::sparse_softmax_cross_entropy_with_logits(logits, tensor::from_vector<std::int32_t>({1, 2, -1, 0})),
        doctest::Contains("label value of -1 at index 2"), invalid_argument_error);
    CHECK_THROWS_AS(ops::sparse_softmax_cross_entropy_with_logits(logits, tensor::from_vector<std::int32_t>({1, 2})),
                    shape_error);
    CHECK_THROWS_AS(ops::sparse_softmax_cross_entropy_with_logits(logits, tensor::from_vector<float>({1, 2, 3, 4})),
                    invalid_argument_error);
}
