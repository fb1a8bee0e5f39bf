// matmul, convolution, pooling, batch norm, bias add, softmax and cross-entropy rules through the
// gradient checker: strides, SAME/VALID, transposes, broadcasting batch dims.
#include <doctest/doctest.h>

#include "checking.hpp"

using graft::attr_value;
using graft::dtype;
using graft::endpoint;
using graft::graph_builder;
using graft::shape;
using graft::tensor;
using graft::test::check_both;
using graft::test::ints;
using graft::test::values;
using xs_t = std::vector<endpoint>;

namespace {
attr_value list4(std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
    return attr_value::list_of<std::int64_t>({a, b, c, d});
}
}  // namespace

TEST_CASE("rules: MatMul with every transpose combination") {
    for (bool ta : {false, true}) {
        for (bool tb : {false, true}) {
            shape sa = ta ? shape{3, 2} : shape{2, 3};
            shape sb = tb ? shape{4, 3} : shape{3, 4};
            check_both(std::string("MatMul ta ") + (ta ? "1" : "0") + " tb " + (tb ? "1" : "0"),
                       [&](const graph_builder& b, const xs_t& x) {
                           return xs_t{b.op("MatMul", {x[0], x[1]}, {{"transpose_a", ta}, {"transpose_b", tb}})};
                       },
                       {values(sa, 1), values(sb, 2)});
        }
    }
}

TEST_CASE("rules: BatchMatMul, BatchMatMulV2 with broadcast batch dims") {
    for (bool adj_x : {false, true}) {
        for (bool adj_y : {false, true}) {
            shape sa = adj_x ? shape{2, 3, 2} : shape{2, 2, 3};
            shape sb = adj_y ? shape{1, 4, 3} : shape{1, 3, 4};
            check_both("BatchMatMulV2 adj", [&](const graph_builder& b, const xs_t& x) {
                return xs_t{b.op("BatchMatMulV2", {x[0], x[1]}, {{"adj_x", adj_x}, {"adj_y", adj_y}})};
            }, {values(sa, 3), values(sb, 4)});
        }
    }
    check_both("BatchMatMulV2 rank 2 x rank 4", [](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("BatchMatMulV2", {x[0], x[1]})};
    }, {values(shape{2, 3}, 5), values(shape{2, 1, 3, 2}, 6)});
    check_both("BatchMatMul", [](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("BatchMatMul", {x[0], x[1]}, {{"adj_y", true}})};
    }, {values(shape{2, 2, 3}, 7), values(shape{2, 2, 3}, 8)});
}

TEST_CASE("rules: BiasAdd, BiasAddV1, BiasAddGrad") {
    check_both("BiasAdd NHWC", [](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("BiasAdd", {x[0], x[1]})};
    }, {values(shape{2, 2, 3}, 1), values(shape{3}, 2)});
    check_both("BiasAdd NCHW", [](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("BiasAdd", {x[0], x[1]}, {{"data_format", std::string("NCHW")}})};
    }, {values(shape{2, 3, 2, 2}, 3), values(shape{3}, 4)});
    check_both("BiasAddV1", [](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("BiasAddV1", {x[0], x[1]})};
    }, {values(shape{4, 3}, 5), values(shape{3}, 6)});
    for (const char* fmt : {"NHWC", "NCHW"}) {
        check_both(std::string("BiasAddGrad ") + fmt, [&](const graph_builder& b, const xs_t& x) {
            return xs_t{b.op("BiasAddGrad", {x[0]}, {{"data_format", std::string(fmt)}})};
        }, {values(shape{2, 3, 2, 2}, 7)});
    }
}

TEST_CASE("rules: Conv2D and its backprop ops, strides and paddings") {
    struct conv_case {
        shape in, filter;
        int stride;
        const char* padding;
        int dilation;
    };
    const std::vector<conv_case> cases = {
        {{1, 5, 5, 2}, {3, 3, 2, 3}, 1, "SAME", 1}, {{1, 5, 5, 2}, {3, 3, 2, 3}, 1, "VALID", 1},
        {{2, 5, 4, 2}, {3, 2, 2, 2}, 2, "SAME", 1}, {{1, 6, 6, 1}, {2, 2, 1, 2}, 2, "VALID", 1},
        {{1, 5, 5, 2}, {2, 2, 2, 2}, 1, "SAME", 2},
    };
    for (auto& c : cases) {
        auto attrs = graft::attr_list{{"strides", list4(1, c.stride, c.stride, 1)},
                                      {"padding", std::string(c.padding)},
                                      {"dilations", list4(1, c.dilation, c.dilation, 1)}};
        std::string what = "Conv2D " + c.in.str() + " " + c.filter.str() + " stride " + std::to_string(c.stride) + " " +
                           c.padding + " dilation " + std::to_string(c.dilation);
        check_both(what, [&](const graph_builder& b, const xs_t& x) {
            return xs_t{b.op("Conv2D", {x[0], x[1]}, attrs)};
        }, {values(c.in, 1), values(c.filter, 2)});
    }
    check_both("Conv2D NCHW", [](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("Conv2D", {x[0], x[1]}, {{"strides", list4(1, 1, 2, 2)}, {"padding", std::string("SAME")},
                                                 {"data_format", std::string("NCHW")}})};
    }, {values(shape{1, 2, 5, 5}, 3), values(shape{3, 3, 2, 2}, 4)});
    // The backprop ops as forward ops (second order of conv nets).
    graft::attr_list a{{"strides", list4(1, 2, 2, 1)}, {"padding", std::string("SAME")}};
    check_both("Conv2DBackpropInput", [&](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("Conv2DBackpropInput", {ints(b, {1, 5, 5, 2}), x[0], x[1]}, a)};
    }, {values(shape{3, 3, 2, 3}, 5), values(shape{1, 3, 3, 3}, 6)});
    check_both("Conv2DBackpropFilter", [&](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("Conv2DBackpropFilter", {x[0], ints(b, {3, 3, 2, 3}), x[1]}, a)};
    }, {values(shape{1, 5, 5, 2}, 7), values(shape{1, 3, 3, 3}, 8)});
}

TEST_CASE("rules: DepthwiseConv2dNative") {
    for (auto [stride_, padding_] : {std::pair{1, "SAME"}, std::pair{2, "VALID"}, std::pair{2, "SAME"}}) {
        const int stride = stride_;  // clang 14 cannot capture structured bindings in a lambda
        const char* padding = padding_;
        check_both(std::string("DepthwiseConv2dNative ") + padding, [&](const graph_builder& b, const xs_t& x) {
            return xs_t{b.op("DepthwiseConv2dNative", {x[0], x[1]},
                             {{"strides", list4(1, stride, stride, 1)}, {"padding", std::string(padding)}})};
        }, {values(shape{1, 5, 5, 2}, 1), values(shape{3, 3, 2, 2}, 2)});
    }
}

TEST_CASE("rules: MaxPool, AvgPool, AvgPoolGrad") {
    struct pool_case {
        shape in;
        int k, s;
        const char* padding;
    };
    const std::vector<pool_case> cases = {{{1, 4, 4, 2}, 2, 2, "VALID"}, {{1, 5, 5, 1}, 3, 2, "SAME"},
                                          {{2, 5, 4, 2}, 2, 1, "VALID"}, {{1, 5, 5, 2}, 3, 2, "VALID"}};
    for (auto& c : cases) {
        graft::attr_list a{{"ksize", list4(1, c.k, c.k, 1)}, {"strides", list4(1, c.s, c.s, 1)},
                           {"padding", std::string(c.padding)}};
        std::string what = c.in.str() + " k " + std::to_string(c.k) + " s " + std::to_string(c.s) + " " + c.padding;
        check_both("MaxPool " + what, [&](const graph_builder& b, const xs_t& x) {
            return xs_t{b.op("MaxPool", {x[0]}, a)};
        }, {graft::test::distinct_values(c.in, 9, -1.0, 0.037)});
        check_both("AvgPool " + what, [&](const graph_builder& b, const xs_t& x) {
            return xs_t{b.op("AvgPool", {x[0]}, a)};
        }, {values(c.in, 10)});
    }
    graft::attr_list a{{"ksize", list4(1, 3, 3, 1)}, {"strides", list4(1, 2, 2, 1)}, {"padding", std::string("SAME")}};
    check_both("AvgPoolGrad", [&](const graph_builder& b, const xs_t& x) {
        return xs_t{b.op("AvgPoolGrad", {ints(b, {1, 5, 5, 2}), x[0]}, a)};
    }, {values(shape{1, 3, 3, 2}, 11)});
}

TEST_CASE("rules: FusedBatchNorm (training) V1, V2, V3") {
    for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}) {
        for (const char* fmt : {"NHWC", "NCHW"}) {
            check_both(std::string(op) + " " + fmt, [&](const graph_builder& b, const xs_t& x) {
                auto empty = b.constant(graft::cast(tensor(dtype::float64, shape{0}), b.dtype_of(x[0])));
                auto o = b.op_n(op, {x[0], x[1], x[2], empty, empty},
                                {{"epsilon", 0.001f}, {"is_training", true}, {"data_format", std::string(fmt)}});
                return xs_t{o[0]};
            }, {values(shape{2, 3, 2, 2}, 1), values(shape{std::string(fmt) == "NHWC" ? 2 : 3}, 2, 0.5, 1.5),
                values(shape{std::string(fmt) == "NHWC" ? 2 : 3}, 3)},
               {1e-6, 2e-3, 1e-6});
        }
    }
    // Inference mode: normalised by the given mean and variance.
    check_both("FusedBatchNormV3 inference", [](const graph_builder& b, const xs_t& x) {
        auto o = b.op_n("FusedBatchNormV3", {x[0], x[1], x[2], x[3], x[4]}, {{"is_training", false}});
        return xs_t{o[0]};
    }, {values(shape{2, 2, 2, 3}, 4), values(shape{3}, 5, 0.5, 1.5), values(shape{3}, 6), values(shape{3}, 7),
        values(shape{3}, 8, 0.5, 1.5)});
}

TEST_CASE("rules: Softmax, LogSoftmax, cross-entropy") {
    for (auto s : {shape{5}, shape{2, 4}, shape{2, 2, 3}}) {
        check_both("Softmax " + s.str(), [](const graph_builder& b, const xs_t& x) { return xs_t{b.op("Softmax", {x[0]})}; },
                   {values(s, 1)});
        check_both("LogSoftmax " + s.str(), [](const graph_builder& b, const xs_t& x) {
            return xs_t{b.op("LogSoftmax", {x[0]})};
        }, {values(s, 2)});
    }
    // Both outputs: the loss and the backprop (second order through the backprop). Labels are
    // distributions (rows sum to 1), as the op's backprop = softmax - labels assumes.
    auto labels = values(shape{3, 4}, 4, 0.05, 1.0);
    for (int r = 0; r < 3; ++r) {
        double sum = 0;
        for (int k = 0; k < 4; ++k) sum += labels.data<double>()[r * 4 + k];
        for (int k = 0; k < 4; ++k) labels.data<double>()[r * 4 + k] /= sum;
    }
    check_both("SoftmaxCrossEntropyWithLogits", [](const graph_builder& b, const xs_t& x) {
        auto o = b.op_n("SoftmaxCrossEntropyWithLogits", {x[0], x[1]});
        return xs_t{o[0], o[1]};
    }, {values(shape{3, 4}, 3), labels});
    check_both("SparseSoftmaxCrossEntropyWithLogits", [](const graph_builder& b, const xs_t& x) {
        auto labels = b.constant(tensor::from_vector<std::int64_t>({2, 0, 3}));
        auto o = b.op_n("SparseSoftmaxCrossEntropyWithLogits", {x[0], labels});
        return xs_t{o[0], o[1]};
    }, {values(shape{3, 4}, 5)});
}
