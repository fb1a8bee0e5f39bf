// graft/exec/cpu_kernels/nn_params.hpp — a Conv2D-like or pooling node's attrs as ops:: params, read the
// same way by the CPU kernels (nn.hpp) and the GPU ones (graft::cuda, src/cuda/exec_nn.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "graft/exec/kernel.hpp"
#include "graft/ops/detail/conv_geom.hpp"
#include "graft/ops/pool.hpp"

namespace graft::exec::kernels::impl {

/// strides, padding, explicit_paddings, data_format (default NHWC), dilations. Throws graph_error
/// naming the node when a required attr is missing.
inline ops::conv2d_params read_conv_params(const kernel_context& c) {
    ops::conv2d_params p;
    p.strides = c.attr_ints("strides");
    p.padding = c.attr_string("padding");
    if (auto* a = c.find_attr("explicit_paddings")) p.explicit_paddings = a->list_of<std::int64_t>();
    p.data_format = c.attr_or<std::string>("data_format", "NHWC");
    if (auto* a = c.find_attr("dilations")) p.dilations = a->list_of<std::int64_t>();
    return p;
}
/// The same, parsed once per plan step (kernel_context::memo).
inline std::shared_ptr<const ops::conv2d_params> conv_params(kernel_context& c) {
    return c.memo<ops::conv2d_params>([&] { return read_conv_params(c); });
}

/// ksize, strides, padding, explicit_paddings, data_format (default NHWC). Throws like conv_params.
inline std::shared_ptr<const ops::pool_params> pool_params(kernel_context& c) {
    return c.memo<ops::pool_params>([&] {  // parsed once per plan step
        ops::pool_params p;
        p.ksize = c.attr_ints("ksize");
        p.strides = c.attr_ints("strides");
        p.padding = c.attr_string("padding");
        if (auto* a = c.find_attr("explicit_paddings")) p.explicit_paddings = a->list_of<std::int64_t>();
        p.data_format = c.attr_or<std::string>("data_format", "NHWC");
        return p;
    });
}

}  // namespace graft::exec::kernels::impl
