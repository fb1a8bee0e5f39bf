// graft/autodiff/rules/image.hpp — gradients of the image family (graft/exec/cpu_kernels/image.hpp), as
// TF's image_grad.py builds them.
#pragma once

#include "graft/autodiff/rules/support.hpp"

namespace graft::autodiff::rules {

inline void register_image(gradient_registry& r) {
    auto resize_attrs = [](const grad_context& c) {
        attr_list a;
        c.copy_attr(a, "align_corners");
        c.copy_attr(a, "half_pixel_centers");
        return a;
    };
    r.add("ResizeBilinear", [resize_attrs](grad_context& c) -> grad_list {
        grad_list out(2);
        if (auto& g = c.grad(0)) out[0] = c.b().op("ResizeBilinearGrad", {*g, c.input(0)}, resize_attrs(c));
        return out;
    });
    r.add("ResizeNearestNeighbor", [resize_attrs](grad_context& c) -> grad_list {
        grad_list out(2);
        if (auto& g = c.grad(0)) {
            const auto& b = c.b();
            endpoint hw = b.op("Slice", {shape_of(b, c.input(0)), ints(b, {1}), ints(b, {2})});
            out[0] = b.op("ResizeNearestNeighborGrad", {*g, hw}, resize_attrs(c));
        }
        return out;
    });
    // (x - mean) * f + mean per image and channel: dx = g f + (1 - f) mean(g), df = sum(g (x - mean)).
    r.add("AdjustContrastv2", [](grad_context& c) -> grad_list {
        grad_list out(2);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        endpoint x = c.input(0), f = c.input(1);
        const dtype t = c.dtype_of(x);
        endpoint ft = t == dtype::float32 ? f : b.op("Cast", {f}, {{"DstT", t}});
        endpoint rank = b.op("Rank", {x});
        endpoint axes = b.op("Range", {b.op("Sub", {rank, int_scalar(b, 3)}), b.op("Sub", {rank, int_scalar(b, 1)}),
                                       int_scalar(b, 1)});
        if (c.wants(0)) {
            endpoint gmean = b.op("Mean", {*g, axes}, {{"keep_dims", true}});
            out[0] = b.op("AddV2", {mul(b, *g, ft), mul(b, b.op("Sub", {b.scalar_as(t, 1.0), ft}), gmean)});
        }
        if (c.wants(1)) {
            endpoint mean = b.op("Mean", {x, axes}, {{"keep_dims", true}});
            auto f32 = [&](const endpoint& e) { return t == dtype::float32 ? e : b.op("Cast", {e}, {{"DstT", dtype::float32}}); };
            endpoint all = b.op("Range", {int_scalar(b, 0), rank, int_scalar(b, 1)});
            out[1] = b.op("Sum", {mul(b, f32(*g), b.op("Sub", {f32(x), f32(mean)})), all});
        }
        return out;
    });
    // The image gets the scattered samples (float images only); the boxes always get a gradient.
    r.add("CropAndResize", [](grad_context& c) -> grad_list {
        grad_list out(4);
        auto& g = c.grad(0);
        if (!g) return out;
        const auto& b = c.b();
        const dtype t = c.dtype_of(c.input(0));
        attr_list method;
        c.copy_attr(method, "method");
        if (c.wants(0) && is_floating(t)) {
            attr_list a = method;
            a.emplace_back("T", t);
            out[0] = b.op("CropAndResizeGradImage", {*g, c.input(1), c.input(2), shape_of(b, c.input(0))}, a);
        }
        if (c.wants(1)) out[1] = b.op("CropAndResizeGradBoxes", {*g, c.input(0), c.input(1), c.input(2)});
        return out;
    });
}

}  // namespace graft::autodiff::rules
