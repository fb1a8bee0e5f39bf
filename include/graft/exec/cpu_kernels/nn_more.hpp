// graft/exec/cpu_kernels/nn_more.hpp — the nn_more family's CPU kernels bound to their TF op types: 3-D
// convolution and pooling (ops/conv3d.hpp, ops/pool3d.hpp), MaxPoolWithArgmax (ops/pool_argmax.hpp),
// LRN / LRNGrad (ops/lrn.hpp) and the fused RNN cells (ops/rnn_cells.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "graft/exec/kernel.hpp"
#include "graft/ops/conv3d.hpp"
#include "graft/ops/lrn.hpp"
#include "graft/ops/pool3d.hpp"
#include "graft/ops/pool_argmax.hpp"
#include "graft/ops/rnn_cells.hpp"

namespace graft::exec::kernels {

namespace nn_more_detail {

/// strides, padding, data_format (default NDHWC), dilations of a Conv3D-like node (once per step).
inline std::shared_ptr<const ops::conv3d_params> conv3d_params(kernel_context& c) {
    return c.memo<ops::conv3d_params>([&] {
        ops::conv3d_params p;
        p.strides = c.attr_ints("strides");
        p.padding = c.attr_string("padding");
        p.data_format = c.attr_or<std::string>("data_format", "NDHWC");
        if (auto* a = c.find_attr("dilations")) p.dilations = a->list_of<std::int64_t>();
        return p;
    });
}
/// ksize, strides, padding, data_format of a 3-D pooling node (once per step).
inline std::shared_ptr<const ops::pool3d_params> pool3d_params(kernel_context& c) {
    return c.memo<ops::pool3d_params>([&] {
        return ops::pool3d_params{c.attr_ints("ksize"), c.attr_ints("strides"), c.attr_string("padding"),
                                  c.attr_or<std::string>("data_format", "NDHWC")};
    });
}
/// ksize, strides, padding (NHWC) and include_batch_in_index of the argmax pooling ops.
struct argmax_spec {
    ops::pool_params pool;
    bool include_batch = false;
};
inline std::shared_ptr<const argmax_spec> argmax_params(kernel_context& c) {
    return c.memo<argmax_spec>([&] {
        argmax_spec s;
        s.pool.ksize = c.attr_ints("ksize");
        s.pool.strides = c.attr_ints("strides");
        s.pool.padding = c.attr_string("padding");
        s.include_batch = c.attr_or<bool>("include_batch_in_index", false);
        return s;
    });
}
inline ops::lrn_params lrn_params(const kernel_context& c) {
    return {c.attr_or<std::int64_t>("depth_radius", 5), c.attr_or<float>("bias", 1.0f), c.attr_or<float>("alpha", 1.0f),
            c.attr_or<float>("beta", 0.5f)};
}
/// A scalar int64 seq_len_max input. Throws graph_error naming the node otherwise.
inline std::int64_t seq_len_max(const kernel_context& c) {
    const tensor t = c.input(0);
    if (t.rank() != 0 || (t.type() != dtype::int64 && t.type() != dtype::int32)) {
        c.fail(detail::cat("seq_len_max must be an int64 scalar, given ", t.describe()));
    }
    return t.type() == dtype::int64 ? t.data<std::int64_t>()[0] : t.data<std::int32_t>()[0];
}
inline void set_lstm(kernel_context& c, const ops::lstm_result& r) {
    const tensor* outs[] = {&r.i, &r.cs, &r.f, &r.o, &r.ci, &r.co, &r.h};
    for (int k = 0; k < 7; ++k)
        if (outs[k]->valid()) c.set_output(k, *outs[k]);  // (block_lstm keeps only what is read)
}

}  // namespace nn_more_detail

inline void register_nn_more(kernel_registry& r) {
    using namespace nn_more_detail;
    kernel_def host0, host1;
    host0.host_inputs = {0};
    host1.host_inputs = {1};

    r.add("Conv3D", [](kernel_context& c) { c.set_output(0, ops::conv3d(c.input(0), c.input(1), *conv3d_params(c))); });
    r.add("Conv3DBackpropInputV2", [](kernel_context& c) {
        const shape s = ops::nn_detail::shape_from_tensor("Conv3DBackpropInputV2", "input_sizes", c.input(0));
        c.set_output(0, ops::conv3d_backprop_input(s, c.input(1), c.input(2), *conv3d_params(c)));
    }, host0);
    r.add("Conv3DBackpropFilterV2", [](kernel_context& c) {
        const shape s = ops::nn_detail::shape_from_tensor("Conv3DBackpropFilterV2", "filter_sizes", c.input(1));
        c.set_output(0, ops::conv3d_backprop_filter(c.input(0), s, c.input(2), *conv3d_params(c)));
    }, host1);

    r.add("MaxPool3D", [](kernel_context& c) { c.set_output(0, ops::max_pool3d(c.input(0), *pool3d_params(c))); });
    r.add("AvgPool3D", [](kernel_context& c) { c.set_output(0, ops::avg_pool3d(c.input(0), *pool3d_params(c))); });
    r.add("MaxPool3DGrad", [](kernel_context& c) {
        c.set_output(0, ops::max_pool3d_grad(c.input(0), c.input(1), c.input(2), *pool3d_params(c)));
    });
    r.add("MaxPool3DGradGrad", [](kernel_context& c) {
        c.set_output(0, ops::max_pool3d_grad_grad(c.input(0), c.input(1), c.input(2), *pool3d_params(c)));
    });
    r.add("AvgPool3DGrad", [](kernel_context& c) {
        const shape s = ops::nn_detail::shape_from_tensor("AvgPool3DGrad", "orig_input_shape", c.input(0));
        c.set_output(0, ops::avg_pool3d_grad(s, c.input(1), *pool3d_params(c)));
    }, host0);

    r.add("MaxPoolWithArgmax", [](kernel_context& c) {
        const auto s = argmax_params(c);
        auto res = ops::max_pool_with_argmax(c.input(0), s->pool, c.attr_or("Targmax", dtype::int64), s->include_batch);
        c.set_output(0, res.output);
        c.set_output(1, res.argmax);
    });
    r.add("MaxPoolGradWithArgmax", [](kernel_context& c) {
        const auto s = argmax_params(c);
        c.set_output(0, ops::max_pool_grad_with_argmax(c.input(0), c.input(1), c.input(2), s->pool, s->include_batch));
    });
    r.add("MaxPoolGradGradWithArgmax", [](kernel_context& c) {
        const auto s = argmax_params(c);
        c.set_output(0,
                     ops::max_pool_grad_grad_with_argmax(c.input(0), c.input(1), c.input(2), s->pool, s->include_batch));
    });

    r.add("LRN", [](kernel_context& c) { c.set_output(0, ops::lrn(c.input(0), lrn_params(c))); });
    r.add("LRNGrad", [](kernel_context& c) {
        c.set_output(0, ops::lrn_grad(c.input(0), c.input(1), c.input(2), lrn_params(c)));
    });

    r.add("LSTMBlockCell", [](kernel_context& c) {
        ops::lstm_params p{c.attr_or<float>("forget_bias", 1.0f), c.attr_or<float>("cell_clip", 3.0f),
                           c.attr_or<bool>("use_peephole", false), false};
        set_lstm(c, ops::lstm_block_cell(c.input(0), c.input(1), c.input(2), c.input(3), c.input(4), c.input(5),
                                         c.input(6), c.input(7), p));
    });
    for (bool v2 : {false, true}) {
        r.add(v2 ? "BlockLSTMV2" : "BlockLSTM", [v2](kernel_context& c) {
            ops::lstm_params p{v2 ? 0.0 : c.attr_or<float>("forget_bias", 1.0f),
                               c.attr_or<float>("cell_clip", v2 ? 0.0f : 3.0f), c.attr_or<bool>("use_peephole", false),
                               v2};
            ops::lstm_kernels::kept_steps read{};
            for (int k = 0; k < 7; ++k) read[static_cast<std::size_t>(k)] = c.output_read(k);
            set_lstm(c, ops::block_lstm(seq_len_max(c), c.input(1), c.input(2), c.input(3), c.input(4), c.input(5),
                                        c.input(6), c.input(7), c.input(8), p, read));
        }, host0);
        r.add(v2 ? "BlockLSTMGradV2" : "BlockLSTMGrad", [v2](kernel_context& c) {
            const ops::lstm_result saved{c.input(9), c.input(10), c.input(11), c.input(12),
                                         c.input(13), c.input(14), c.input(15)};
            auto g = ops::block_lstm_grad(seq_len_max(c), c.input(1), c.input(2), c.input(3), c.input(4), c.input(5),
                                          c.input(6), c.input(7), c.input(8), saved, c.input(16), c.input(17),
                                          c.attr_or<bool>("use_peephole", false), v2);
            const tensor* outs[] = {&g.x_grad, &g.cs_prev_grad, &g.h_prev_grad, &g.w_grad,
                                    &g.wci_grad, &g.wcf_grad,    &g.wco_grad,    &g.b_grad};
            for (int k = 0; k < 8; ++k) c.set_output(k, *outs[k]);
        }, host0);
    }
    r.add("LSTMBlockCellGrad", [](kernel_context& c) {
        const ops::lstm_result saved{c.input(8), c.input(9), c.input(10), c.input(11), c.input(12), c.input(13), {}};
        auto g = ops::lstm_block_cell_grad(c.input(0), c.input(1), c.input(2), c.input(3), c.input(4), c.input(5),
                                           c.input(6), c.input(7), saved, c.input(14), c.input(15),
                                           c.attr_or<bool>("use_peephole", false));
        c.set_output(0, g.cs_prev_grad);
        c.set_output(1, g.dicfo);
        c.set_output(2, g.wci_grad);
        c.set_output(3, g.wcf_grad);
        c.set_output(4, g.wco_grad);
    });
    r.add("GRUBlockCell", [](kernel_context& c) {
        auto g = ops::gru_block_cell(c.input(0), c.input(1), c.input(2), c.input(3), c.input(4), c.input(5));
        c.set_output(0, g.r);
        c.set_output(1, g.u);
        c.set_output(2, g.c);
        c.set_output(3, g.h);
    });
    r.add("GRUBlockCellGrad", [](kernel_context& c) {
        auto g = ops::gru_block_cell_grad(c.input(0), c.input(1), c.input(2), c.input(3), c.input(4), c.input(5),
                                          c.input(6), c.input(7), c.input(8), c.input(9));
        c.set_output(0, g.d_x);
        c.set_output(1, g.d_h_prev);
        c.set_output(2, g.d_c_bar);
        c.set_output(3, g.d_r_bar_u_bar);
    });
}

}  // namespace graft::exec::kernels
