// graft/ops/nms.hpp — greedy non-maximum suppression as TF's CPU kernel does it
// (non_max_suppression_op.cc): NonMaxSuppression V1-V5, hard and soft (Gaussian) suppression.
//
//   auto r = ops::non_max_suppression(boxes, scores, 10, {.iou_threshold = 0.5f});
//   r.indices;   // int32 [k] (or [max_output_size] with pad_to_max_output_size)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <queue>
#include <string_view>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/ops/detail/op_support.hpp"

namespace graft::ops {

/// The thresholds of NonMaxSuppression: boxes overlapping a kept box by more than
/// iou_threshold are dropped (hard NMS) or have their score decayed by exp(-iou^2 / (2 sigma))
/// when soft_nms_sigma > 0; boxes scoring <= score_threshold are never kept.
struct nms_options {
    float iou_threshold = 0.5f;
    float score_threshold = -std::numeric_limits<float>::infinity();
    float soft_nms_sigma = 0.0f;
    bool pad_to_max_output_size = false;
};

/// What NonMaxSuppression selects: indices (int32), their final scores (the boxes' dtype) and
/// how many are valid (int32 scalar; the rest is padding).
struct nms_result {
    tensor indices, scores, valid;
};

namespace nms_detail {

/// Intersection over union of boxes i and j of [n, 4] (corners in any order); 0 for empty boxes.
inline float iou(const float* b, std::int64_t i, std::int64_t j) {
    const float* p = b + 4 * i;
    const float* q = b + 4 * j;
    const float ymin_i = std::min(p[0], p[2]), xmin_i = std::min(p[1], p[3]);
    const float ymax_i = std::max(p[0], p[2]), xmax_i = std::max(p[1], p[3]);
    const float ymin_j = std::min(q[0], q[2]), xmin_j = std::min(q[1], q[3]);
    const float ymax_j = std::max(q[0], q[2]), xmax_j = std::max(q[1], q[3]);
    const float area_i = (ymax_i - ymin_i) * (xmax_i - xmin_i);
    const float area_j = (ymax_j - ymin_j) * (xmax_j - xmin_j);
    if (area_i <= 0 || area_j <= 0) return 0.0f;
    const float iy0 = std::max(ymin_i, ymin_j), ix0 = std::max(xmin_i, xmin_j);
    const float iy1 = std::min(ymax_i, ymax_j), ix1 = std::min(xmax_i, xmax_j);
    const float inter = std::max(iy1 - iy0, 0.0f) * std::max(ix1 - ix0, 0.0f);
    return inter / (area_i + area_j - inter);
}

}  // namespace nms_detail

/// NonMaxSuppression(V1-V5): greedily picks boxes [n, 4] by descending score [n] (ties: lower
/// index first), at most max_output_size of them. Throws shape_error for bad shapes and
/// invalid_argument_error for a negative max_output_size or an iou_threshold outside [0, 1].
inline nms_result non_max_suppression(const tensor& boxes, const tensor& scores, std::int64_t max_output_size,
                                      const nms_options& o = {}) {
    using op_detail::cat;
    const char* op = "NonMaxSuppression";
    op_detail::require_input(op, boxes, "boxes");
    op_detail::require_input(op, scores, "scores");
    if (boxes.rank() != 2 || boxes.dim(1) != 4) {
        throw shape_error(cat(op, ": boxes must be [num_boxes, 4] but has shape ", boxes.shape().str()));
    }
    const std::int64_t n = boxes.dim(0);
    if (scores.rank() != 1 || scores.dim(0) != n) {
        throw shape_error(cat(op, ": scores must be [num_boxes] = [", n, "] but has shape ", scores.shape().str()));
    }
    if (max_output_size < 0) {
        throw invalid_argument_error(cat(op, ": max_output_size must be non-negative, got ", max_output_size));
    }
    if (!(o.iou_threshold >= 0.0f && o.iou_threshold <= 1.0f)) {
        throw invalid_argument_error(cat(op, ": iou_threshold must be in [0, 1], got ", o.iou_threshold));
    }
    if (!is_floating(boxes.type()) || !is_floating(scores.type())) {
        throw invalid_argument_error(cat(op, ": boxes and scores must be float but are ", boxes.describe(), " and ",
                                         scores.describe()));
    }
    const tensor bf = cast(boxes, dtype::float32), sf = cast(scores, dtype::float32);
    const float* bp = bf.data<float>();
    const float* sp = sf.data<float>();

    struct candidate {
        std::int64_t index;
        float score;
        std::size_t suppress_begin;
    };
    auto lower_priority = [](const candidate& a, const candidate& b) {
        return a.score < b.score || (a.score == b.score && a.index > b.index);
    };
    std::priority_queue<candidate, std::vector<candidate>, decltype(lower_priority)> queue(lower_priority);
    for (std::int64_t i = 0; i < n; ++i) {
        if (sp[i] > o.score_threshold) queue.push({i, sp[i], 0});
    }
    const bool soft = o.soft_nms_sigma > 0.0f;
    const float scale = soft ? -0.5f / o.soft_nms_sigma : 0.0f;
    std::vector<std::int64_t> picked;
    std::vector<float> picked_scores;
    while (static_cast<std::int64_t>(picked.size()) < max_output_size && !queue.empty()) {
        candidate c = queue.top();
        queue.pop();
        const float original = c.score;
        bool suppressed = false;
        for (std::size_t j = picked.size(); j-- > c.suppress_begin;) {
            const float sim = nms_detail::iou(bp, c.index, picked[j]);
            const float weight = std::exp(scale * sim * sim);
            c.score *= soft || sim <= o.iou_threshold ? weight : 0.0f;
            if (!soft && sim > o.iou_threshold) {
                suppressed = true;
                break;
            }
            if (c.score <= o.score_threshold) break;
        }
        c.suppress_begin = picked.size();
        if (suppressed) continue;
        if (c.score == original) {
            picked.push_back(c.index);
            picked_scores.push_back(c.score);
        } else if (c.score > o.score_threshold) {
            queue.push(c);  // decayed: competes again with its new score
        }
    }
    const auto k = static_cast<std::int64_t>(picked.size());
    const std::int64_t len = o.pad_to_max_output_size ? max_output_size : k;
    nms_result r;
    r.indices = tensor(dtype::int32, shape{len});
    tensor sc(dtype::float32, shape{len});
    for (std::int64_t i = 0; i < k; ++i) {
        r.indices.data<std::int32_t>()[i] = static_cast<std::int32_t>(picked[static_cast<std::size_t>(i)]);
        sc.data<float>()[i] = picked_scores[static_cast<std::size_t>(i)];
    }
    r.scores = base_type(scores.type()) == dtype::float32 ? sc : cast(sc, base_type(scores.type()));
    r.valid = tensor::scalar_of(static_cast<std::int32_t>(k));
    return r;
}

}  // namespace graft::ops
