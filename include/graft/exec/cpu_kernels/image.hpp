// graft/exec/cpu_kernels/image.hpp — the image family's CPU kernels bound to their TF op types
// (graft/ops/resize.hpp, image.hpp, nms.hpp).
#pragma once

#include "graft/exec/kernel.hpp"
#include "graft/ops/crop_and_resize.hpp"
#include "graft/ops/image.hpp"
#include "graft/ops/nms.hpp"
#include "graft/ops/resize.hpp"

namespace graft::exec::kernels {

namespace image_impl {
inline ops::resize_options resize_options_of(const kernel_context& c) {
    return {c.attr_or<bool>("align_corners", false), c.attr_or<bool>("half_pixel_centers", false)};
}
/// A float scalar input (thresholds) as float.
inline float float_input(const kernel_context& c, int i, const char* what) {
    tensor t = c.input(i);
    if (t.num_elements() != 1 || t.rank() > 1) {
        c.fail(detail::cat(what, " must be a scalar but has shape ", t.shape().str()));
    }
    return static_cast<float>(cast(t, dtype::float64).data<double>()[0]);
}
inline std::int64_t max_output_size(const kernel_context& c) {
    tensor t = c.input(2);
    if (t.num_elements() != 1 || t.rank() > 1) {
        c.fail(detail::cat("max_output_size must be a scalar but has shape ", t.shape().str()));
    }
    return ops::op_detail::int_scalar("NonMaxSuppression", t, "max_output_size");
}
}  // namespace image_impl

inline void register_image(kernel_registry& r) {
    kernel_def size_on_host;
    size_on_host.host_inputs = {1};
    r.add("ResizeBilinear", [](kernel_context& c) {
        c.set_output(0, ops::resize_bilinear(c.input(0), c.input(1), image_impl::resize_options_of(c)));
    }, size_on_host);
    r.add("ResizeBilinearGrad", [](kernel_context& c) {
        c.set_output(0, ops::resize_bilinear_grad(c.input(0), c.input(1), image_impl::resize_options_of(c)));
    });
    r.add("ResizeNearestNeighbor", [](kernel_context& c) {
        c.set_output(0, ops::resize_nearest_neighbor(c.input(0), c.input(1), image_impl::resize_options_of(c)));
    }, size_on_host);
    r.add("ResizeNearestNeighborGrad", [](kernel_context& c) {
        c.set_output(0, ops::resize_nearest_neighbor_grad(c.input(0), c.input(1), image_impl::resize_options_of(c)));
    }, size_on_host);
    r.add("ResizeBicubic", [](kernel_context& c) {
        c.set_output(0, ops::resize_bicubic(c.input(0), c.input(1), image_impl::resize_options_of(c)));
    }, size_on_host);
    r.add("ResizeArea", [](kernel_context& c) {
        c.set_output(0, ops::resize_area(c.input(0), c.input(1), c.attr_or<bool>("align_corners", false)));
    }, size_on_host);
    r.add("AdjustContrastv2", [](kernel_context& c) { c.set_output(0, ops::adjust_contrast(c.input(0), c.input(1))); });
    r.add("AdjustSaturation", [](kernel_context& c) { c.set_output(0, ops::adjust_saturation(c.input(0), c.input(1))); });
    r.add("AdjustHue", [](kernel_context& c) { c.set_output(0, ops::adjust_hue(c.input(0), c.input(1))); });
    r.add("RGBToHSV", [](kernel_context& c) { c.set_output(0, ops::rgb_to_hsv(c.input(0))); });
    r.add("HSVToRGB", [](kernel_context& c) { c.set_output(0, ops::hsv_to_rgb(c.input(0))); });
    r.add("DrawBoundingBoxes", [](kernel_context& c) { c.set_output(0, ops::draw_bounding_boxes(c.input(0), c.input(1))); });
    r.add("DrawBoundingBoxesV2", [](kernel_context& c) {
        c.set_output(0, ops::draw_bounding_boxes(c.input(0), c.input(1), c.input(2)));
    });
    kernel_def nms_host;
    nms_host.host_inputs = {2, 3, 4, 5};
    // V1 reads its IoU threshold from an attr, V2-V5 from inputs; V3+ add a score threshold,
    // V4 the padded valid count, V5 soft-NMS scores.
    r.add("NonMaxSuppression", [](kernel_context& c) {
        ops::nms_options o;
        o.iou_threshold = c.attr_or<float>("iou_threshold", 0.5f);
        c.set_output(0, ops::non_max_suppression(c.input(0), c.input(1), image_impl::max_output_size(c), o).indices);
    }, nms_host);
    r.add("NonMaxSuppressionV2", [](kernel_context& c) {
        ops::nms_options o;
        o.iou_threshold = image_impl::float_input(c, 3, "iou_threshold");
        c.set_output(0, ops::non_max_suppression(c.input(0), c.input(1), image_impl::max_output_size(c), o).indices);
    }, nms_host);
    r.add("NonMaxSuppressionV3", [](kernel_context& c) {
        ops::nms_options o;
        o.iou_threshold = image_impl::float_input(c, 3, "iou_threshold");
        o.score_threshold = image_impl::float_input(c, 4, "score_threshold");
        c.set_output(0, ops::non_max_suppression(c.input(0), c.input(1), image_impl::max_output_size(c), o).indices);
    }, nms_host);
    r.add("NonMaxSuppressionV4", [](kernel_context& c) {
        ops::nms_options o;
        o.iou_threshold = image_impl::float_input(c, 3, "iou_threshold");
        o.score_threshold = image_impl::float_input(c, 4, "score_threshold");
        o.pad_to_max_output_size = c.attr_or<bool>("pad_to_max_output_size", false);
        auto res = ops::non_max_suppression(c.input(0), c.input(1), image_impl::max_output_size(c), o);
        c.set_output(0, res.indices);
        c.set_output(1, res.valid);
    }, nms_host);
    r.add("NonMaxSuppressionV5", [](kernel_context& c) {
        ops::nms_options o;
        o.iou_threshold = image_impl::float_input(c, 3, "iou_threshold");
        o.score_threshold = image_impl::float_input(c, 4, "score_threshold");
        o.soft_nms_sigma = image_impl::float_input(c, 5, "soft_nms_sigma");
        if (o.soft_nms_sigma < 0) c.fail(detail::cat("soft_nms_sigma must be non-negative, got ", o.soft_nms_sigma));
        o.pad_to_max_output_size = c.attr_or<bool>("pad_to_max_output_size", false);
        auto res = ops::non_max_suppression(c.input(0), c.input(1), image_impl::max_output_size(c), o);
        c.set_output(0, res.indices);
        c.set_output(1, res.scores);
        c.set_output(2, res.valid);
    }, nms_host);
    kernel_def crop_host;
    crop_host.host_inputs = {2, 3};
    r.add("CropAndResize", [](kernel_context& c) {
        auto size = ops::op_detail::int_list("CropAndResize", c.input(3), "crop_size");
        if (size.size() != 2) c.fail(detail::cat("crop_size must hold 2 values, got ", size.size()));
        c.set_output(0, ops::crop_and_resize(c.input(0), c.input(1), c.input(2), size[0], size[1],
                                             c.attr_or<std::string>("method", "bilinear"),
                                             c.attr_or<float>("extrapolation_value", 0.0f)));
    }, crop_host);
    r.add("CropAndResizeGradImage", [](kernel_context& c) {
        c.set_output(0, ops::crop_and_resize_grad_image(
                            c.input(0), c.input(1), c.input(2), ops::op_detail::int_list("CropAndResizeGradImage", c.input(3), "image_size"),
                            c.attr_type("T"), c.attr_or<std::string>("method", "bilinear")));
    }, crop_host);
    r.add("CropAndResizeGradBoxes", [](kernel_context& c) {
        c.set_output(0, ops::crop_and_resize_grad_boxes(c.input(0), c.input(1), c.input(2), c.input(3)));
    });
}

}  // namespace graft::exec::kernels
