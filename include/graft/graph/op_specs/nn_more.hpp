// graft/graph/op_specs/nn_more.hpp — the nn_more family's lines of graft's op table (op_table.hpp reads
// them into builtin_op_specs(); syntax and traits in op_def.hpp): 3-D convolution and pooling,
// MaxPoolWithArgmax, LRNGrad (LRN itself is in op_table.hpp) and TF's fused RNN cells.
#pragma once

#include <string>
#include <vector>

namespace graft::detail {

inline void nn_more_op_specs(std::vector<std::string>& s) {
    // 3-D convolution (tensorflow/core/ops/nn_ops.cc)
    const std::string conv3d = "; T: type; strides: list(int) >= 5; padding: string; data_format: string = \"NDHWC\"; "
                               "dilations: list(int) = [1, 1, 1, 1, 1]";
    s.push_back("Conv3D(input: T, filter: T) -> (output: T)" + conv3d);
    s.push_back("Conv3DBackpropInputV2(input_sizes: Tshape, filter: T, out_backprop: T) -> (output: T)" + conv3d +
                "; Tshape: type = int32");
    s.push_back("Conv3DBackpropFilterV2(input: T, filter_sizes: int32, out_backprop: T) -> (output: T)" + conv3d);

    // 3-D pooling
    const std::string pool3d = "; ksize: list(int) >= 5; strides: list(int) >= 5; padding: string; "
                               "data_format: string = \"NDHWC\"";
    s.push_back("MaxPool3D(input: T) -> (output: T)" + pool3d + "; T: type");
    s.push_back("AvgPool3D(input: T) -> (output: T)" + pool3d + "; T: type");
    s.push_back("MaxPool3DGrad(orig_input: TInput, orig_output: TInput, grad: T) -> (output: T)" + pool3d +
                "; T: type = float; TInput: type = float");
    s.push_back("MaxPool3DGradGrad(orig_input: T, orig_output: T, grad: T) -> (output: T)" + pool3d + "; T: type");
    s.push_back("AvgPool3DGrad(orig_input_shape: int32, grad: T) -> (output: T)" + pool3d + "; T: type");

    // 2-D max pooling with the argmax indices
    const std::string argmax = "; ksize: list(int) >= 4; strides: list(int) >= 4; padding: string; "
                               "include_batch_in_index: bool = false";
    s.push_back("MaxPoolWithArgmax(input: T) -> (output: T, argmax: Targmax)" + argmax +
                "; Targmax: type = int64; T: type");
    s.push_back("MaxPoolGradWithArgmax(input: T, grad: T, argmax: Targmax) -> (output: T)" + argmax +
                "; Targmax: type; T: type");
    s.push_back("MaxPoolGradGradWithArgmax(input: T, grad: T, argmax: Targmax) -> (output: T)" + argmax +
                "; Targmax: type; T: type; grad_missing");

    // local response normalization's gradient
    s.push_back("LRNGrad(input_grads: T, input_image: T, output_image: T) -> (output: T); depth_radius: int = 5; "
                "bias: float = 1; alpha: float = 1; beta: float = 0.5; T: type = float; grad_missing");

    // fused RNN cells (tensorflow/core/ops/rnn_ops.cc)
    const std::string lstm_in = "x: T, cs_prev: T, h_prev: T, w: T, wci: T, wcf: T, wco: T, b: T";
    const std::string lstm_out = "(i: T, cs: T, f: T, o: T, ci: T, co: T, h: T)";
    s.push_back("LSTMBlockCell(" + lstm_in + ") -> " + lstm_out +
                "; forget_bias: float = 1; cell_clip: float = 3; use_peephole: bool = false; T: type");
    s.push_back("LSTMBlockCellGrad(" + lstm_in + ", i: T, cs: T, f: T, o: T, ci: T, co: T, cs_grad: T, h_grad: T) -> "
                "(cs_prev_grad: T, dicfo: T, wci_grad: T, wcf_grad: T, wco_grad: T); use_peephole: bool; T: type; "
                "grad_missing");
    s.push_back("BlockLSTM(seq_len_max: int64, " + lstm_in + ") -> " + lstm_out +
                "; forget_bias: float = 1; cell_clip: float = 3; use_peephole: bool = false; T: type");
    s.push_back("BlockLSTMV2(seq_len_max: int64, " + lstm_in + ") -> " + lstm_out +
                "; cell_clip: float = 0; use_peephole: bool = false; T: type");
    for (const char* op : {"BlockLSTMGrad", "BlockLSTMGradV2"}) {
        s.push_back(std::string(op) + "(seq_len_max: int64, " + lstm_in +
                    ", i: T, cs: T, f: T, o: T, ci: T, co: T, h: T, cs_grad: T, h_grad: T) -> (x_grad: T, "
                    "cs_prev_grad: T, h_prev_grad: T, w_grad: T, wci_grad: T, wcf_grad: T, wco_grad: T, b_grad: T); "
                    "use_peephole: bool; T: type; grad_missing");
    }
    s.push_back("GRUBlockCell(x: T, h_prev: T, w_ru: T, w_c: T, b_ru: T, b_c: T) -> (r: T, u: T, c: T, h: T); "
                "T: type");
    s.push_back("GRUBlockCellGrad(x: T, h_prev: T, w_ru: T, w_c: T, b_ru: T, b_c: T, r: T, u: T, c: T, d_h: T) -> "
                "(d_x: T, d_h_prev: T, d_c_bar: T, d_r_bar_u_bar: T); T: type; grad_missing");
}

}  // namespace graft::detail
