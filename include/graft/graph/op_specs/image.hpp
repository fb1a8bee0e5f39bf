// graft/graph/op_specs/image.hpp — the image family's lines of graft's op table (op_table.hpp reads
// them into builtin_op_specs(); syntax and traits in op_def.hpp). Signatures of TF's image_ops.cc;
// ops TF gives no gradient are grad_missing (tf.gradients fails through them too), the ones TF
// declares not differentiable (or whose outputs are selections) nograd.
#pragma once

#include <string>
#include <vector>

namespace graft::detail {

inline void image_op_specs(std::vector<std::string>& s) {
    const std::string resize = "; T: type; align_corners: bool = false; half_pixel_centers: bool = false";
    s.push_back("ResizeBilinear(images: T, size: int32) -> (resized_images: float)" + resize);
    s.push_back("ResizeBilinearGrad(grads: float, original_image: T) -> (output: T)" + resize + "; nograd");
    s.push_back("ResizeNearestNeighbor(images: T, size: int32) -> (resized_images: T)" + resize);
    s.push_back("ResizeNearestNeighborGrad(grads: T, size: int32) -> (output: T)" + resize + "; grad_missing");
    s.push_back("ResizeBicubic(images: T, size: int32) -> (resized_images: float)" + resize + "; grad_missing");
    s.push_back("ResizeArea(images: T, size: int32) -> (resized_images: float); T: type; align_corners: bool = false; "
                "grad_missing");
    s.push_back("AdjustContrastv2(images: T, contrast_factor: float) -> (output: T); T: type = float");
    s.push_back("AdjustSaturation(images: T, scale: float) -> (output: T); T: type = float; grad_missing");
    s.push_back("AdjustHue(images: T, delta: float) -> (output: T); T: type = float; grad_missing");
    s.push_back("RGBToHSV(images: T) -> (output: T); T: type = float; shape_preserving; grad_missing");
    s.push_back("HSVToRGB(images: T) -> (output: T); T: type = float; shape_preserving; nograd");
    s.push_back("DrawBoundingBoxes(images: T, boxes: float) -> (output: T); T: type = float; shape_preserving; nograd");
    s.push_back("DrawBoundingBoxesV2(images: T, boxes: float, colors: float) -> (output: T); T: type = float; "
                "shape_preserving; nograd");
    s.push_back("NonMaxSuppression(boxes: float, scores: float, max_output_size: int32) -> (selected_indices: int32); "
                "iou_threshold: float = 0.5; nograd");
    s.push_back("NonMaxSuppressionV2(boxes: T, scores: T, max_output_size: int32, iou_threshold: T_threshold) -> "
                "(selected_indices: int32); T: type = float; T_threshold: type = float; nograd");
    const std::string v3_in = "(boxes: T, scores: T, max_output_size: int32, iou_threshold: T_threshold, "
                              "score_threshold: T_threshold)";
    s.push_back("NonMaxSuppressionV3" + v3_in + " -> (selected_indices: int32); T: type = float; "
                "T_threshold: type = float; nograd");
    s.push_back("NonMaxSuppressionV4" + v3_in + " -> (selected_indices: int32, valid_outputs: int32); T: type = float; "
                "T_threshold: type = float; pad_to_max_output_size: bool = false; nograd");
    s.push_back("NonMaxSuppressionV5(boxes: T, scores: T, max_output_size: int32, iou_threshold: T, score_threshold: T, "
                "soft_nms_sigma: T) -> (selected_indices: int32, selected_scores: T, valid_outputs: int32); "
                "T: type = float; pad_to_max_output_size: bool = false; nograd");
    s.push_back("CropAndResize(image: T, boxes: float, box_ind: int32, crop_size: int32) -> (crops: float); T: type; "
                "method: string = \"bilinear\"; extrapolation_value: float = 0");
    s.push_back("CropAndResizeGradImage(grads: float, boxes: float, box_ind: int32, image_size: int32) -> (output: T); "
                "T: type; method: string = \"bilinear\"; grad_missing");
    s.push_back("CropAndResizeGradBoxes(grads: float, image: T, boxes: float, box_ind: int32) -> (output: float); "
                "T: type; method: string = \"bilinear\"; grad_missing");
}

}  // namespace graft::detail
