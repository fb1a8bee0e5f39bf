// graft/ops/crop_and_resize.hpp — CropAndResize and its two gradients as TF's CPU kernels compute
// them (crop_and_resize_op.cc): boxes [n, 4] of normalized (y1, x1, y2, x2) corners cut from image
// [batch, h, w, d] (box_ind picks the image) and sampled bilinearly or nearest onto
// [n, crop_h, crop_w, d]; samples outside the image get extrapolation_value. Float32 arithmetic.
//
//   tensor crops = ops::crop_and_resize(img, boxes, box_ind, 7, 7);
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/ops/detail/op_support.hpp"

namespace graft::ops {

namespace crop_detail {

using op_detail::cat;

/// Where crop row/column i of box coordinates (c1, c2) samples an image axis of `size` pixels.
inline float sample_at(float c1, float c2, std::int64_t i, std::int64_t crop, std::int64_t size) {
    const float extent = static_cast<float>(size - 1);
    if (crop > 1) return c1 * extent + static_cast<float>(i) * ((c2 - c1) * extent / static_cast<float>(crop - 1));
    return static_cast<float>(0.5 * (c1 + c2) * extent);
}

inline void require_method(std::string_view op, const std::string& method, bool nearest_ok = true) {
    if (method != "bilinear" && !(nearest_ok && method == "nearest")) {
        throw invalid_argument_error(cat(op, ": method must be 'bilinear'", nearest_ok ? " or 'nearest'" : "",
                                         ", got '", method, "'"));
    }
}

/// Checks boxes [n, 4] and box_ind [n] (each in [0, batch)); returns box_ind as int64s.
inline std::vector<std::int64_t> check_boxes(std::string_view op, const tensor& boxes, const tensor& box_ind,
                                             std::int64_t batch) {
    op_detail::require_input(op, boxes, "boxes");
    op_detail::require_input(op, box_ind, "box_ind");
    op_detail::require_dtype(op, boxes, "boxes", dtype::float32);
    if (boxes.rank() != 2 || boxes.dim(1) != 4) {
        throw shape_error(cat(op, ": boxes must be [num_boxes, 4] but has shape ", boxes.shape().str()));
    }
    if (box_ind.rank() != 1 || box_ind.dim(0) != boxes.dim(0)) {
        throw shape_error(cat(op, ": box_ind must be [num_boxes] = [", boxes.dim(0), "] but has shape ",
                              box_ind.shape().str()));
    }
    auto idx = op_detail::int_list(op, box_ind, "box_ind");
    for (std::size_t i = 0; i < idx.size(); ++i) {
        if (idx[i] < 0 || idx[i] >= batch) {
            throw invalid_argument_error(cat(op, ": box_ind[", i, "] = ", idx[i], " is outside [0, ", batch, ")"));
        }
    }
    return idx;
}

}  // namespace crop_detail

/// CropAndResize: float32 crops [num_boxes, crop_h, crop_w, depth] of image [batch, h, w, depth]
/// (any real dtype). Throws shape_error / invalid_argument_error for bad shapes, a box_ind out of
/// range, a non-positive crop size or an unknown method.
inline tensor crop_and_resize(const tensor& image, const tensor& boxes, const tensor& box_ind, std::int64_t crop_h,
                              std::int64_t crop_w, const std::string& method = "bilinear",
                              float extrapolation_value = 0.0f) {
    using namespace crop_detail;
    const char* op = "CropAndResize";
    require_method(op, method);
    op_detail::require_input(op, image, "image");
    if (image.rank() != 4) throw shape_error(cat(op, ": image must be 4-D but has shape ", image.shape().str()));
    const std::int64_t batch = image.dim(0), h = image.dim(1), w = image.dim(2), d = image.dim(3);
    if (h <= 0 || w <= 0) throw invalid_argument_error(cat(op, ": image dimensions must be positive, got ", image.shape().str()));
    if (crop_h <= 0 || crop_w <= 0) {
        throw invalid_argument_error(cat(op, ": crop_size must be positive, got [", crop_h, ",", crop_w, "]"));
    }
    const auto idx = check_boxes(op, boxes, box_ind, batch);
    const tensor img = base_type(image.type()) == dtype::float32 ? image : cast(image, dtype::float32);
    const float* src = img.data<float>();
    const float* bx = boxes.data<float>();
    const std::int64_t n = boxes.dim(0);
    tensor out = tensor::uninitialized(dtype::float32, shape{n, crop_h, crop_w, d});
    float* dst = out.data<float>();
    const bool nearest = method == "nearest";
    for (std::int64_t b = 0; b < n; ++b) {
        const float* q = bx + 4 * b;
        const float* im = src + idx[static_cast<std::size_t>(b)] * h * w * d;
        for (std::int64_t y = 0; y < crop_h; ++y) {
            const float iy = sample_at(q[0], q[2], y, crop_h, h);
            float* row = dst + (b * crop_h + y) * crop_w * d;
            if (iy < 0 || iy > static_cast<float>(h - 1)) {
                std::fill(row, row + crop_w * d, extrapolation_value);
                continue;
            }
            const auto top = static_cast<std::int64_t>(std::floor(iy)), bot = static_cast<std::int64_t>(std::ceil(iy));
            const float ly = iy - static_cast<float>(top);
            for (std::int64_t x = 0; x < crop_w; ++x) {
                const float ix = sample_at(q[1], q[3], x, crop_w, w);
                float* o = row + x * d;
                if (ix < 0 || ix > static_cast<float>(w - 1)) {
                    std::fill(o, o + d, extrapolation_value);
                    continue;
                }
                if (nearest) {
                    const auto cy = static_cast<std::int64_t>(std::round(iy)), cx = static_cast<std::int64_t>(std::round(ix));
                    std::copy(im + (cy * w + cx) * d, im + (cy * w + cx + 1) * d, o);
                    continue;
                }
                const auto l = static_cast<std::int64_t>(std::floor(ix)), r = static_cast<std::int64_t>(std::ceil(ix));
                const float lx = ix - static_cast<float>(l);
                for (std::int64_t c = 0; c < d; ++c) {
                    const float tl = im[(top * w + l) * d + c], tr = im[(top * w + r) * d + c];
                    const float bl = im[(bot * w + l) * d + c], br = im[(bot * w + r) * d + c];
                    const float t = tl + (tr - tl) * lx, bo = bl + (br - bl) * lx;
                    o[c] = t + (bo - t) * ly;
                }
            }
        }
    }
    return out;
}

/// CropAndResizeGradImage: grads [n, ch, cw, d] (float32) scattered back onto an image of
/// image_size [batch, h, w, d], in dtype `type` (float16/32/64). Throws as crop_and_resize.
inline tensor crop_and_resize_grad_image(const tensor& grads, const tensor& boxes, const tensor& box_ind,
                                         const std::vector<std::int64_t>& image_size, dtype type,
                                         const std::string& method = "bilinear") {
    using namespace crop_detail;
    const char* op = "CropAndResizeGradImage";
    require_method(op, method);
    op_detail::require_input(op, grads, "grads");
    op_detail::require_dtype(op, grads, "grads", dtype::float32);
    if (grads.rank() != 4) throw shape_error(cat(op, ": grads must be 4-D but has shape ", grads.shape().str()));
    if (image_size.size() != 4 || image_size[1] <= 0 || image_size[2] <= 0 || image_size[3] != grads.dim(3)) {
        throw invalid_argument_error(cat(op, ": image_size must be [batch, h > 0, w > 0, ", grads.dim(3), "], got ",
                                         op_detail::list_str(image_size)));
    }
    if (!is_floating(type)) throw invalid_argument_error(cat(op, ": T must be a float dtype, got ", dtype_name(type)));
    const std::int64_t h = image_size[1], w = image_size[2], d = image_size[3];
    const auto idx = check_boxes(op, boxes, box_ind, image_size[0]);
    if (grads.dim(0) != boxes.dim(0)) {
        throw shape_error(cat(op, ": grads ", grads.shape().str(), " must have one crop per box (", boxes.dim(0), ")"));
    }
    const std::int64_t n = grads.dim(0), crop_h = grads.dim(1), crop_w = grads.dim(2);
    tensor acc(dtype::float32, shape(image_size));
    float* a = acc.data<float>();
    const float* g = grads.data<float>();
    const float* bx = boxes.data<float>();
    for (std::int64_t b = 0; b < n; ++b) {
        const float* q = bx + 4 * b;
        float* im = a + idx[static_cast<std::size_t>(b)] * h * w * d;
        for (std::int64_t y = 0; y < crop_h; ++y) {
            const float iy = sample_at(q[0], q[2], y, crop_h, h);
            if (iy < 0 || iy > static_cast<float>(h - 1)) continue;
            const auto top = static_cast<std::int64_t>(std::floor(iy)), bot = static_cast<std::int64_t>(std::ceil(iy));
            const float ly = iy - static_cast<float>(top);
            for (std::int64_t x = 0; x < crop_w; ++x) {
                const float ix = sample_at(q[1], q[3], x, crop_w, w);
                if (ix < 0 || ix > static_cast<float>(w - 1)) continue;
                const float* gp = g + ((b * crop_h + y) * crop_w + x) * d;
                if (method == "nearest") {
                    const auto cy = static_cast<std::int64_t>(std::round(iy)), cx = static_cast<std::int64_t>(std::round(ix));
                    for (std::int64_t c = 0; c < d; ++c) im[(cy * w + cx) * d + c] += gp[c];
                    continue;
                }
                const auto l = static_cast<std::int64_t>(std::floor(ix)), r = static_cast<std::int64_t>(std::ceil(ix));
                const float lx = ix - static_cast<float>(l);
                for (std::int64_t c = 0; c < d; ++c) {
                    const float dt = (1 - ly) * gp[c], db = ly * gp[c];
                    im[(top * w + l) * d + c] += (1 - lx) * dt;
                    im[(top * w + r) * d + c] += lx * dt;
                    im[(bot * w + l) * d + c] += (1 - lx) * db;
                    im[(bot * w + r) * d + c] += lx * db;
                }
            }
        }
    }
    return base_type(type) == dtype::float32 ? acc : cast(acc, base_type(type));
}

/// CropAndResizeGradBoxes: the float32 gradient [n, 4] of the box coordinates through bilinear
/// sampling of image (any real dtype). Throws as crop_and_resize.
inline tensor crop_and_resize_grad_boxes(const tensor& grads, const tensor& image, const tensor& boxes,
                                         const tensor& box_ind) {
    using namespace crop_detail;
    const char* op = "CropAndResizeGradBoxes";
    op_detail::require_input(op, grads, "grads");
    op_detail::require_input(op, image, "image");
    op_detail::require_dtype(op, grads, "grads", dtype::float32);
    if (grads.rank() != 4 || image.rank() != 4 || grads.dim(3) != image.dim(3)) {
        throw shape_error(cat(op, ": grads ", grads.shape().str(), " and image ", image.shape().str(),
                              " must be 4-D with the same depth"));
    }
    const std::int64_t h = image.dim(1), w = image.dim(2), d = image.dim(3);
    if (h <= 0 || w <= 0) throw invalid_argument_error(cat(op, ": image dimensions must be positive, got ", image.shape().str()));
    const auto idx = check_boxes(op, boxes, box_ind, image.dim(0));
    if (grads.dim(0) != boxes.dim(0)) {
        throw shape_error(cat(op, ": grads ", grads.shape().str(), " must have one crop per box (", boxes.dim(0), ")"));
    }
    const std::int64_t n = grads.dim(0), crop_h = grads.dim(1), crop_w = grads.dim(2);
    const tensor img = base_type(image.type()) == dtype::float32 ? image : cast(image, dtype::float32);
    tensor out(dtype::float32, shape{n, 4});
    float* o = out.data<float>();
    const float* g = grads.data<float>();
    const float* bx = boxes.data<float>();
    const float hr = crop_h > 1 ? static_cast<float>(h - 1) / static_cast<float>(crop_h - 1) : 0.0f;
    const float wr = crop_w > 1 ? static_cast<float>(w - 1) / static_cast<float>(crop_w - 1) : 0.0f;
    for (std::int64_t b = 0; b < n; ++b) {
        const float* q = bx + 4 * b;
        const float* im = img.data<float>() + idx[static_cast<std::size_t>(b)] * h * w * d;
        float* ob = o + 4 * b;
        for (std::int64_t y = 0; y < crop_h; ++y) {
            const float iy = sample_at(q[0], q[2], y, crop_h, h);
            if (iy < 0 || iy > static_cast<float>(h - 1)) continue;
            const auto top = static_cast<std::int64_t>(std::floor(iy)), bot = static_cast<std::int64_t>(std::ceil(iy));
            const float ly = iy - static_cast<float>(top);
            for (std::int64_t x = 0; x < crop_w; ++x) {
                const float ix = sample_at(q[1], q[3], x, crop_w, w);
                if (ix < 0 || ix > static_cast<float>(w - 1)) continue;
                const auto l = static_cast<std::int64_t>(std::floor(ix)), r = static_cast<std::int64_t>(std::ceil(ix));
                const float lx = ix - static_cast<float>(l);
                for (std::int64_t c = 0; c < d; ++c) {
                    const float tl = im[(top * w + l) * d + c], tr = im[(top * w + r) * d + c];
                    const float bl = im[(bot * w + l) * d + c], br = im[(bot * w + r) * d + c];
                    const float gy = (1 - lx) * (bl - tl) + lx * (br - tr);  // d sample / d iy
                    const float gx = (1 - ly) * (tr - tl) + ly * (br - bl);  // d sample / d ix
                    const float gv = g[((b * crop_h + y) * crop_w + x) * d + c];
                    const float yv = gv * gy, xv = gv * gx;
                    if (crop_h > 1) {
                        ob[0] += yv * (static_cast<float>(h - 1) - static_cast<float>(y) * hr);
                        ob[2] += yv * (static_cast<float>(y) * hr);
                    } else {
                        ob[0] += yv * 0.5f * static_cast<float>(h - 1);
                        ob[2] += yv * 0.5f * static_cast<float>(h - 1);
                    }
                    if (crop_w > 1) {
                        ob[1] += xv * (static_cast<float>(w - 1) - static_cast<float>(x) * wr);
                        ob[3] += xv * (static_cast<float>(x) * wr);
                    } else {
                        ob[1] += xv * 0.5f * static_cast<float>(w - 1);
                        ob[3] += xv * 0.5f * static_cast<float>(w - 1);
                    }
                }
            }
        }
    }
    return out;
}

}  // namespace graft::ops
