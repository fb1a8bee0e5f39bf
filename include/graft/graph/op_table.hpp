// graft/graph/op_table.hpp — graft's own op definitions, written as one-line specs (op_def.hpp):
// inputs, outputs and the attrs (with TensorFlow's defaults) that decide output counts and dtypes.
// Included by op_registry.hpp; op_registry::global() parses it once on first use.
//
// graft::compiled compiles it once (src/compiled/op_table.cpp); programs without graft::compiled get it inline
// through op_registry.hpp.
//
// It lists the ops graft means to run. Ops a MetaGraph declares in its stripped_op_list are known
// for that graph even when they are not here.
#pragma once

#include <string>
#include <vector>

#include "graft/graph/op_specs/tensor_array.hpp"
#include "graft/graph/op_specs/math_more.hpp"
#include "graft/graph/op_specs/array_more.hpp"
#include "graft/graph/op_specs/nn_more.hpp"
#include "graft/graph/op_specs/image.hpp"
#include "graft/graph/op_specs/linalg.hpp"
#include "graft/graph/op_specs/functional.hpp"
#include "graft/graph/op_specs/indexing.hpp"
#include "graft/graph/op_specs/clustering.hpp"
#include "graft/graph/op_specs/summary.hpp"
#include "graft/graph/op_specs/collective.hpp"
#include "graft/graph/op_specs/parsing.hpp"
#include "graft/graph/op_specs/queue.hpp"

namespace graft::detail {

GRAFT_INLINE const std::vector<std::string>& builtin_op_specs() {
    static const std::vector<std::string> specs = [] {
        std::vector<std::string> s = {
            // ---- sources, identity, control
            "Const() -> (output: dtype); value: tensor; dtype: type; nograd",
            "Placeholder() -> (output: dtype); dtype: type; shape: shape = <unknown>; nograd",
            "PlaceholderV2() -> (output: dtype); dtype: type; shape: shape; nograd",
            "PlaceholderWithDefault(input: dtype) -> (output: dtype); dtype: type; shape: shape",
            "Identity(input: T) -> (output: T); T: type; shape_preserving",
            "IdentityN(input: T) -> (output: T); T: list(type) >= 1",
            "NoOp(); nograd",
            "ControlTrigger(); nograd",
            "StopGradient(input: T) -> (output: T); T: type; shape_preserving; nograd",
            "PreventGradient(input: T) -> (output: T); T: type; message: string = \"\"; shape_preserving",
            "Snapshot(input: T) -> (output: T); T: type; shape_preserving",
            "EnsureShape(input: T) -> (output: T); shape: shape; T: type; shape_preserving",
            "DebugIdentity(input: T) -> (output: T); T: type; device_name: string = \"\"; tensor_name: string = \"\"; "
            "debug_urls: list(string) = []; gated_grpc: bool = false; shape_preserving; stateful",
            "RefIdentity(input: Ref(T)) -> (output: Ref(T)); T: type; shape_preserving",
            "CheckNumerics(tensor: T) -> (output: T); T: type; message: string; shape_preserving",
            "Assert(condition: bool, data: T); T: list(type) >= 1; summarize: int = 3; stateful; nograd",
            "Print(input: T, data: U) -> (output: T); T: type; U: list(type) >= 0; message: string = \"\"; "
            "first_n: int = -1; summarize: int = 3; stateful",
            // ---- shapes and layout
            "Shape(input: T) -> (output: out_type); T: type; out_type: type = int32; nograd",
            "ShapeN(input: N * T) -> (output: N * out_type); N: int >= 1; T: type; out_type: type = int32; nograd",
            "Size(input: T) -> (output: out_type); T: type; out_type: type = int32; nograd",
            "Rank(input: T) -> (output: int32); T: type; nograd",
            "Reshape(tensor: T, shape: Tshape) -> (output: T); T: type; Tshape: type = int32",
            "Squeeze(input: T) -> (output: T); T: type; squeeze_dims: list(int) >= 0 = []",
            "ExpandDims(input: T, dim: Tdim) -> (output: T); T: type; Tdim: type = int32",
            "Transpose(x: T, perm: Tperm) -> (y: T); T: type; Tperm: type = int32",
            "ConcatV2(values: N * T, axis: Tidx) -> (output: T); N: int >= 2; T: type; Tidx: type = int32",
            "Concat(concat_dim: int32, values: N * T) -> (output: T); N: int >= 2; T: type",
            "ConcatOffset(concat_dim: int32, shape: N * shape_type) -> (offset: N * shape_type); N: int >= 2; "
            "shape_type: type = int32; nograd",
            "Pack(values: N * T) -> (output: T); N: int >= 1; T: type; axis: int = 0",
            "Unpack(value: T) -> (output: num * T); num: int >= 0; T: type; axis: int = 0",
            "Slice(input: T, begin: Index, size: Index) -> (output: T); T: type; Index: type",
            "StridedSlice(input: T, begin: Index, end: Index, strides: Index) -> (output: T); T: type; Index: type; "
            "begin_mask: int = 0; end_mask: int = 0; ellipsis_mask: int = 0; new_axis_mask: int = 0; "
            "shrink_axis_mask: int = 0",
            "StridedSliceGrad(shape: Index, begin: Index, end: Index, strides: Index, dy: T) -> (output: T); "
            "T: type; Index: type; begin_mask: int = 0; end_mask: int = 0; ellipsis_mask: int = 0; "
            "new_axis_mask: int = 0; shrink_axis_mask: int = 0",
            "Split(split_dim: int32, value: T) -> (output: num_split * T); num_split: int >= 1; T: type",
            "SplitV(value: T, size_splits: Tlen, split_dim: int32) -> (output: num_split * T); num_split: int >= 1; "
            "T: type; Tlen: type = int64",
            "Tile(input: T, multiples: Tmultiples) -> (output: T); T: type; Tmultiples: type = int32",
            "Fill(dims: index_type, value: T) -> (output: T); T: type; index_type: type = int32; nograd",
            "ZerosLike(x: T) -> (y: T); T: type; nograd",
            "OnesLike(x: T) -> (y: T); T: type; nograd",
            "Range(start: Tidx, limit: Tidx, delta: Tidx) -> (output: Tidx); Tidx: type = int32; nograd",
            "Cast(x: SrcT) -> (y: DstT); SrcT: type; DstT: type; Truncate: bool = false; shape_preserving",
            "Pad(input: T, paddings: Tpaddings) -> (output: T); T: type; Tpaddings: type = int32",
            "PadV2(input: T, paddings: Tpaddings, constant_values: T) -> (output: T); T: type; "
            "Tpaddings: type = int32",
            "MirrorPad(input: T, paddings: Tpaddings) -> (output: T); T: type; Tpaddings: type = int32; mode: string",
            "MirrorPadGrad(input: T, paddings: Tpaddings) -> (output: T); T: type; Tpaddings: type = int32; "
            "mode: string",
            "BroadcastTo(input: T, shape: Tidx) -> (output: T); T: type; Tidx: type = int32",
            "BroadcastArgs(s0: T, s1: T) -> (r0: T); T: type = int32",
            "BroadcastGradientArgs(s0: T, s1: T) -> (r0: T, r1: T); T: type = int32; nograd",
            "InvertPermutation(x: T) -> (y: T); T: type = int32; nograd",
            "Reverse(tensor: T, dims: bool) -> (output: T); T: type",
            "ReverseV2(tensor: T, axis: Tidx) -> (output: T); Tidx: type = int32; T: type",
            // ---- gather, select, indices
            "GatherV2(params: Tparams, indices: Tindices, axis: Taxis) -> (output: Tparams); batch_dims: int = 0; "
            "Tparams: type; Tindices: type; Taxis: type",
            "Gather(params: Tparams, indices: Tindices) -> (output: Tparams); validate_indices: bool = true; "
            "Tparams: type; Tindices: type",
            "GatherNd(params: Tparams, indices: Tindices) -> (output: Tparams); Tparams: type; Tindices: type",
            "OneHot(indices: TI, depth: int32, on_value: T, off_value: T) -> (output: T); axis: int = -1; T: type; "
            "TI: type = int64; nograd",
            "Select(condition: bool, t: T, e: T) -> (output: T); T: type",
            "SelectV2(condition: bool, t: T, e: T) -> (output: T); T: type",
            "Where(input: T) -> (index: int64); T: type = bool; nograd",
            "DynamicStitch(indices: N * int32, data: N * T) -> (merged: T); N: int >= 1; T: type",
            "ParallelDynamicStitch(indices: N * int32, data: N * T) -> (merged: T); N: int >= 1; T: type",
            "DynamicPartition(data: T, partitions: int32) -> (outputs: num_partitions * T); "
            "num_partitions: int >= 1; T: type",
            "UnsortedSegmentSum(data: T, segment_ids: Tindices, num_segments: Tnumsegments) -> (output: T); "
            "T: type; Tindices: type; Tnumsegments: type = int32",
            "Unique(x: T) -> (y: T, idx: out_idx); T: type; out_idx: type = int32",
            // ---- reductions
            "All(input: bool, reduction_indices: Tidx) -> (output: bool); keep_dims: bool = false; Tidx: type = int32; nograd",
            "Any(input: bool, reduction_indices: Tidx) -> (output: bool); keep_dims: bool = false; Tidx: type = int32; nograd",
            "ArgMax(input: T, dimension: Tidx) -> (output: output_type); T: type; Tidx: type = int32; "
            "output_type: type = int64; nograd",
            "ArgMin(input: T, dimension: Tidx) -> (output: output_type); T: type; Tidx: type = int32; "
            "output_type: type = int64; nograd",
            "L2Loss(t: T) -> (output: T); T: type",
            "AddN(inputs: N * T) -> (sum: T); N: int >= 1; T: type; aggregate; commutative",
            // ---- linear algebra and nn
            "MatMul(a: T, b: T) -> (product: T); transpose_a: bool = false; transpose_b: bool = false; T: type",
            "BatchMatMul(x: T, y: T) -> (output: T); T: type; adj_x: bool = false; adj_y: bool = false",
            "BatchMatMulV2(x: T, y: T) -> (output: T); T: type; adj_x: bool = false; adj_y: bool = false",
            "BatchMatMulV3(x: Ta, y: Tb) -> (output: Tout); Ta: type; Tb: type; Tout: type; adj_x: bool = false; "
            "adj_y: bool = false",
            "BiasAdd(value: T, bias: T) -> (output: T); T: type; data_format: string = \"NHWC\"; shape_preserving",
            "BiasAddV1(value: T, bias: T) -> (output: T); T: type",
            "BiasAddGrad(out_backprop: T) -> (output: T); T: type; data_format: string = \"NHWC\"",
            "Softmax(logits: T) -> (softmax: T); T: type; shape_preserving",
            "LogSoftmax(logits: T) -> (logsoftmax: T); T: type; shape_preserving",
            "SoftmaxCrossEntropyWithLogits(features: T, labels: T) -> (loss: T, backprop: T); T: type",
            "SparseSoftmaxCrossEntropyWithLogits(features: T, labels: Tlabels) -> (loss: T, backprop: T); T: type; "
            "Tlabels: type = int64",
            "LRN(input: T) -> (output: T); depth_radius: int = 5; bias: float = 1; alpha: float = 1; "
            "beta: float = 0.5; T: type = float",
        };
        // convolutions and pooling share their attrs
        const std::string conv = "; T: type; strides: list(int); use_cudnn_on_gpu: bool = true; padding: string; "
                                 "explicit_paddings: list(int) = []; data_format: string = \"NHWC\"; "
                                 "dilations: list(int) = [1, 1, 1, 1]";
        const std::string dw = "; T: type; strides: list(int); padding: string; explicit_paddings: list(int) = []; "
                               "data_format: string = \"NHWC\"; dilations: list(int) = [1, 1, 1, 1]";
        const std::string pool = "; ksize: list(int) >= 4; strides: list(int) >= 4; padding: string; "
                                 "data_format: string = \"NHWC\"";
        s.push_back("Conv2D(input: T, filter: T) -> (output: T)" + conv);
        // what TF's grappler remapper writes (and graft's executor fuses): Conv2D/MatMul + BiasAdd
        // (+ activation) as one node
        const std::string fused = "; num_args: int >= 0; fused_ops: list(string) = []; epsilon: float = 0.0001; "
                                  "leakyrelu_alpha: float = 0.2";
        s.push_back("_FusedConv2D(input: T, filter: T, args: num_args * T, host_args: num_host_args * float) -> "
                    "(output: T)" + conv + fused + "; num_host_args: int >= 0 = 0; filter_format: string = \"HWIO\"; "
                    "grad_missing");
        s.push_back("_FusedMatMul(a: T, b: T, args: num_args * T) -> (product: T); transpose_a: bool = false; "
                    "transpose_b: bool = false; T: type" + fused + "; grad_missing");
        s.push_back("Conv2DBackpropInput(input_sizes: int32, filter: T, out_backprop: T) -> (output: T)" + conv);
        s.push_back("Conv2DBackpropFilter(input: T, filter_sizes: int32, out_backprop: T) -> (output: T)" + conv);
        s.push_back("DepthwiseConv2dNative(input: T, filter: T) -> (output: T)" + dw);
        s.push_back("DepthwiseConv2dNativeBackpropInput(input_sizes: int32, filter: T, out_backprop: T) -> "
                    "(output: T)" + dw);
        s.push_back("DepthwiseConv2dNativeBackpropFilter(input: T, filter_sizes: int32, out_backprop: T) -> "
                    "(output: T)" + dw);
        s.push_back("MaxPool(input: T) -> (output: T); T: type = float" + pool);
        s.push_back("AvgPool(value: T) -> (output: T); T: type" + pool);
        s.push_back("MaxPoolGrad(orig_input: T, orig_output: T, grad: T) -> (output: T); T: type = float" + pool +
                    "; grad_missing");
        s.push_back("AvgPoolGrad(orig_input_shape: int32, grad: T) -> (output: T); T: type" + pool);
        s.push_back("MaxPoolV2(input: T, ksize: int32, strides: int32) -> (output: T); T: type = float; "
                    "padding: string; data_format: string = \"NHWC\"");
        s.push_back("MaxPoolGradV2(orig_input: T, orig_output: T, grad: T, ksize: int32, strides: int32) -> "
                    "(output: T); padding: string; data_format: string = \"NHWC\"; T: type = float; grad_missing");
        // batch norm: V1 all T; V2/V3 statistics in U; V3 has a sixth output
        const std::string bn = "; epsilon: float = 0.0001; exponential_avg_factor: float = 1; "
                               "data_format: string = \"NHWC\"; is_training: bool = true";
        s.push_back("FusedBatchNorm(x: T, scale: T, offset: T, mean: T, variance: T) -> (y: T, batch_mean: T, "
                    "batch_variance: T, reserve_space_1: T, reserve_space_2: T); T: type" + bn);
        s.push_back("FusedBatchNormV2(x: T, scale: U, offset: U, mean: U, variance: U) -> (y: T, batch_mean: U, "
                    "batch_variance: U, reserve_space_1: U, reserve_space_2: U); T: type; U: type" + bn);
        s.push_back("FusedBatchNormV3(x: T, scale: U, offset: U, mean: U, variance: U) -> (y: T, batch_mean: U, "
                    "batch_variance: U, reserve_space_1: U, reserve_space_2: U, reserve_space_3: U); T: type; "
                    "U: type" + bn);
        const std::string bng = "; epsilon: float = 0.0001; data_format: string = \"NHWC\"; is_training: bool = true; "
                                "grad_missing";
        s.push_back("FusedBatchNormGrad(y_backprop: T, x: T, scale: T, reserve_space_1: T, reserve_space_2: T) -> "
                    "(x_backprop: T, scale_backprop: T, offset_backprop: T, reserve_space_3: T, "
                    "reserve_space_4: T); T: type" + bng);
        s.push_back("FusedBatchNormGradV2(y_backprop: T, x: T, scale: float, reserve_space_1: U, "
                    "reserve_space_2: U) -> (x_backprop: T, scale_backprop: U, offset_backprop: U, "
                    "reserve_space_3: U, reserve_space_4: U); T: type; U: type" + bng);
        s.push_back("FusedBatchNormGradV3(y_backprop: T, x: T, scale: float, reserve_space_1: U, "
                    "reserve_space_2: U, reserve_space_3: U) -> (x_backprop: T, scale_backprop: U, "
                    "offset_backprop: U, reserve_space_4: U, reserve_space_5: U); T: type; U: type" + bng);

        // element-wise math
        for (const char* op : {"Abs", "Neg", "Reciprocal", "Inv", "Square", "Sqrt", "Rsqrt", "Exp", "Expm1", "Log",
                               "Log1p", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Tanh", "Asinh",
                               "Acosh", "Atanh", "Sigmoid", "Sign", "Erf", "Erfc",
                               "Lgamma", "Digamma", "Invert"}) {
            s.push_back(std::string(op) + "(x: T) -> (y: T); T: type; shape_preserving");
        }
        for (const char* op : {"Floor", "Ceil", "Round", "Rint"}) {
            s.push_back(std::string(op) + "(x: T) -> (y: T); T: type; shape_preserving; nograd");
        }
        for (const char* op : {"Relu", "Relu6", "Elu"}) {
            s.push_back(std::string(op) + "(features: T) -> (activations: T); T: type; shape_preserving; "
                                          "fusable_activation");
        }
        for (const char* op : {"Selu", "Softplus", "Softsign"}) {
            s.push_back(std::string(op) + "(features: T) -> (activations: T); T: type; shape_preserving");
        }
        s.push_back("LeakyRelu(features: T) -> (activations: T); alpha: float = 0.2; T: type = float; "
                    "shape_preserving; fusable_activation");
        for (const char* op : {"IsNan", "IsInf", "IsFinite"}) s.push_back(std::string(op) + "(x: T) -> (y: bool); T: type");
        s.push_back("LogicalNot(x: bool) -> (y: bool); nograd");
        for (const char* op : {"LogicalAnd", "LogicalOr"}) {
            s.push_back(std::string(op) + "(x: bool, y: bool) -> (z: bool); commutative; nograd");
        }
        for (const char* op : {"Add", "AddV2", "Sub", "Mul", "Div", "RealDiv", "DivNoNan", "MulNoNan",
                               "FloorMod", "Mod", "TruncateDiv", "TruncateMod", "Maximum", "Minimum", "Pow",
                               "SquaredDifference", "Atan2", "Xdivy", "Xlogy", "BitwiseAnd", "BitwiseOr",
                               "BitwiseXor", "LeftShift", "RightShift"}) {
            s.push_back(std::string(op) + "(x: T, y: T) -> (z: T); T: type");
        }
        s.push_back("FloorDiv(x: T, y: T) -> (z: T); T: type; nograd");
        for (const char* op : {"Less", "LessEqual", "Greater", "GreaterEqual"}) {
            s.push_back(std::string(op) + "(x: T, y: T) -> (z: bool); T: type; nograd");
        }
        for (const char* op : {"Equal", "NotEqual"}) {
            s.push_back(std::string(op) + "(x: T, y: T) -> (z: bool); T: type; incompatible_shape_error: bool = true; "
                                          "commutative; nograd");
        }
        s.push_back("ApproximateEqual(x: T, y: T) -> (z: bool); T: type; tolerance: float = 1e-05");
        for (const char* op : {"ReluGrad", "Relu6Grad", "SoftplusGrad", "SoftsignGrad"}) {
            s.push_back(std::string(op) + "(gradients: T, features: T) -> (backprops: T); T: type");
        }
        s.push_back("LeakyReluGrad(gradients: T, features: T) -> (backprops: T); alpha: float = 0.2; T: type = float");
        for (const char* op : {"EluGrad", "SeluGrad"}) {
            s.push_back(std::string(op) + "(gradients: T, outputs: T) -> (backprops: T); T: type");
        }
        for (const char* op : {"SigmoidGrad", "TanhGrad", "RsqrtGrad", "SqrtGrad", "ReciprocalGrad", "InvGrad"}) {
            s.push_back(std::string(op) + "(y: T, dy: T) -> (z: T); T: type");
        }
        for (const char* op : {"Sum", "Mean", "Max", "Min", "Prod", "EuclideanNorm"}) {
            s.push_back(std::string(op) + "(input: T, reduction_indices: Tidx) -> (output: T); keep_dims: bool = false; "
                                          "T: type; Tidx: type = int32");
        }

        // random
        const std::string seeds = "; seed: int = 0; seed2: int = 0; stateful; random; nograd";
        for (const char* op : {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"}) {
            s.push_back(std::string(op) + "(shape: T) -> (output: dtype); dtype: type; T: type" + seeds);
        }
        s.push_back("RandomUniformInt(shape: T, minval: Tout, maxval: Tout) -> (output: Tout); Tout: type; T: type" + seeds);
        s.push_back("RandomShuffle(value: T) -> (output: T); T: type" + seeds);
        s.push_back("Multinomial(logits: T, num_samples: int32) -> (output: output_dtype); T: type; "
                    "output_dtype: type = int64" + seeds);
        // RandomGamma is differentiable in alpha (RandomGammaGrad); the Poisson samplers are not.
        s.push_back("RandomGamma(shape: S, alpha: T) -> (output: T); seed: int = 0; seed2: int = 0; S: type; T: type; "
                    "stateful; random");
        s.push_back("RandomGammaGrad(alpha: T, sample: T) -> (output: T); T: type; nograd");
        s.push_back("RandomPoisson(shape: S, rate: dtype) -> (output: dtype); S: type; dtype: type" + seeds);
        s.push_back("RandomPoissonV2(shape: S, rate: R) -> (output: dtype); S: type; R: type = double; "
                    "dtype: type = int64" + seeds);
        // candidate samplers (candidate_sampling_ops.cc; ops/candidate_sampling.hpp): not differentiable
        const std::string sampler = "(true_classes: int64) -> (sampled_candidates: int64, true_expected_count: float, "
                                    "sampled_expected_count: float); num_true: int >= 1; num_sampled: int >= 1; unique: bool";
        for (const char* op : {"UniformCandidateSampler", "LogUniformCandidateSampler", "LearnedUnigramCandidateSampler",
                               "ThreadUnsafeUnigramCandidateSampler"}) {
            s.push_back(std::string(op) + sampler + "; range_max: int >= 1" + seeds);
        }
        s.push_back("FixedUnigramCandidateSampler" + sampler + "; range_max: int >= 1; vocab_file: string = \"\"; "
                    "distortion: float = 1; num_reserved_ids: int = 0; num_shards: int >= 1 = 1; shard: int >= 0 = 0; "
                    "unigrams: list(float) = []" + seeds);
        s.push_back("AllCandidateSampler" + sampler + seeds);
        s.push_back("ComputeAccidentalHits(true_classes: int64, sampled_candidates: int64) -> (indices: int32, ids: int64, "
                    "weights: float); num_true: int; seed: int = 0; seed2: int = 0; nograd");

        // ref variables and their optimizers
        s.push_back("VariableV2() -> (ref: Ref(dtype)); shape: shape; dtype: type; container: string = \"\"; "
                    "shared_name: string = \"\"; stateful; nograd");
        s.push_back("Variable() -> (ref: Ref(dtype)); shape: shape; dtype: type; container: string = \"\"; "
                    "shared_name: string = \"\"; stateful; nograd");
        s.push_back("Assign(ref: Ref(T), value: T) -> (output_ref: Ref(T)); T: type; validate_shape: bool = true; "
                    "use_locking: bool = true; nograd");
        for (const char* op : {"AssignAdd", "AssignSub"}) {
            s.push_back(std::string(op) + "(ref: Ref(T), value: T) -> (output_ref: Ref(T)); T: type; "
                                          "use_locking: bool = false; nograd");
        }
        for (const char* op : {"ScatterAdd", "ScatterSub", "ScatterUpdate", "ScatterMul", "ScatterDiv"}) {
            s.push_back(std::string(op) + "(ref: Ref(T), indices: Tindices, updates: T) -> (output_ref: Ref(T)); "
                                          "T: type; Tindices: type; use_locking: bool = false");
        }
        s.push_back("IsVariableInitialized(ref: Ref(dtype)) -> (is_initialized: bool); dtype: type; stateful; nograd");
        const std::string lock = "; T: type; use_locking: bool = false; nograd";
        s.push_back("ApplyGradientDescent(var: Ref(T), alpha: T, delta: T) -> (out: Ref(T))" + lock);
        // the executor's fusion of MatMul into the update (fuse_chains): delta = MatMul(a, b)
        const std::string product = "; transpose_a: bool = false; transpose_b: bool = false";
        s.push_back("_MatMulApplyGradientDescent(var: Ref(T), alpha: T, a: T, b: T) -> (out: Ref(T))" + lock + product);
        s.push_back("ApplyMomentum(var: Ref(T), accum: Ref(T), lr: T, grad: T, momentum: T) -> (out: Ref(T))" + lock +
                    "; use_nesterov: bool = false");
        s.push_back("ApplyAdam(var: Ref(T), m: Ref(T), v: Ref(T), beta1_power: T, beta2_power: T, lr: T, beta1: T, "
                    "beta2: T, epsilon: T, grad: T) -> (out: Ref(T))" + lock + "; use_nesterov: bool = false");
        s.push_back("ApplyAdagrad(var: Ref(T), accum: Ref(T), lr: T, grad: T) -> (out: Ref(T))" + lock +
                    "; update_slots: bool = true");
        s.push_back("ApplyAdagradV2(var: Ref(T), accum: Ref(T), lr: T, epsilon: T, grad: T) -> (out: Ref(T))" + lock +
                    "; update_slots: bool = true");
        s.push_back("ApplyRMSProp(var: Ref(T), ms: Ref(T), mom: Ref(T), lr: T, rho: T, momentum: T, epsilon: T, "
                    "grad: T) -> (out: Ref(T))" + lock);
        s.push_back("ApplyCenteredRMSProp(var: Ref(T), mg: Ref(T), ms: Ref(T), mom: Ref(T), lr: T, rho: T, "
                    "momentum: T, epsilon: T, grad: T) -> (out: Ref(T))" + lock);
        s.push_back("ApplyAdadelta(var: Ref(T), accum: Ref(T), accum_update: Ref(T), lr: T, rho: T, epsilon: T, "
                    "grad: T) -> (out: Ref(T))" + lock);
        s.push_back("ApplyFtrl(var: Ref(T), accum: Ref(T), linear: Ref(T), grad: T, lr: T, l1: T, l2: T, "
                    "lr_power: T) -> (out: Ref(T))" + lock + "; multiply_linear_by_lr: bool = false");

        // resource variables and their optimizers
        s.push_back("VarHandleOp() -> (resource: resource); container: string = \"\"; shared_name: string = \"\"; "
                    "debug_name: string = \"\"; dtype: type; shape: shape; allowed_devices: list(string) = []; "
                    "stateful; nograd");
        s.push_back("ReadVariableOp(resource: resource) -> (value: dtype); dtype: type; stateful");
        s.push_back("AssignVariableOp(resource: resource, value: dtype); dtype: type; validate_shape: bool = false; "
                    "stateful; nograd");
        for (const char* op : {"AssignAddVariableOp", "AssignSubVariableOp"}) {
            s.push_back(std::string(op) + "(resource: resource, value: dtype); dtype: type; stateful; nograd");
        }
        s.push_back("VarIsInitializedOp(resource: resource) -> (is_initialized: bool); stateful; nograd");
        s.push_back("DestroyResourceOp(resource: resource); ignore_lookup_error: bool = true; stateful; nograd");
        s.push_back("DisableCopyOnRead(resource: resource); stateful; nograd");
        s.push_back("ResourceGather(resource: resource, indices: Tindices) -> (output: dtype); batch_dims: int = 0; "
                    "validate_indices: bool = true; dtype: type; Tindices: type; stateful");
        const std::string rlock = "; T: type; use_locking: bool = false; stateful; nograd";
        s.push_back("ResourceApplyGradientDescent(var: resource, alpha: T, delta: T)" + rlock);
        s.push_back("_MatMulResourceApplyGradientDescent(var: resource, alpha: T, a: T, b: T)" + rlock +
                    "; transpose_a: bool = false; transpose_b: bool = false");
        s.push_back("ResourceApplyMomentum(var: resource, accum: resource, lr: T, grad: T, momentum: T)" + rlock +
                    "; use_nesterov: bool = false");
        s.push_back("ResourceApplyKerasMomentum(var: resource, accum: resource, lr: T, grad: T, momentum: T)" + rlock +
                    "; use_nesterov: bool = false");
        s.push_back("ResourceApplyAdam(var: resource, m: resource, v: resource, beta1_power: T, beta2_power: T, "
                    "lr: T, beta1: T, beta2: T, epsilon: T, grad: T)" + rlock + "; use_nesterov: bool = false");
        s.push_back("ResourceApplyAdagrad(var: resource, accum: resource, lr: T, grad: T)" + rlock +
                    "; update_slots: bool = true");
        s.push_back("ResourceApplyAdagradV2(var: resource, accum: resource, lr: T, epsilon: T, grad: T)" + rlock +
                    "; update_slots: bool = true");
        s.push_back("ResourceApplyRMSProp(var: resource, ms: resource, mom: resource, lr: T, rho: T, momentum: T, "
                    "epsilon: T, grad: T)" + rlock);
        s.push_back("ResourceApplyCenteredRMSProp(var: resource, mg: resource, ms: resource, mom: resource, lr: T, "
                    "rho: T, momentum: T, epsilon: T, grad: T)" + rlock);
        s.push_back("ResourceApplyAdadelta(var: resource, accum: resource, accum_update: resource, lr: T, rho: T, "
                    "epsilon: T, grad: T)" + rlock);
        s.push_back("ResourceApplyFtrl(var: resource, accum: resource, linear: resource, grad: T, lr: T, l1: T, "
                    "l2: T, lr_power: T)" + rlock + "; multiply_linear_by_lr: bool = false");

        // TF1 control flow
        s.push_back("Switch(data: T, pred: bool) -> (output_false: T, output_true: T); T: type");
        s.push_back("RefSwitch(data: Ref(T), pred: bool) -> (output_false: Ref(T), output_true: Ref(T)); T: type");
        s.push_back("Merge(inputs: N * T) -> (output: T, value_index: int32); T: type; N: int >= 1");
        s.push_back("RefMerge(inputs: N * Ref(T)) -> (output: Ref(T), value_index: int32); T: type; N: int >= 1");
        const std::string frame = "; T: type; frame_name: string; is_constant: bool = false; "
                                  "parallel_iterations: int = 10";
        s.push_back("Enter(data: T) -> (output: T)" + frame);
        s.push_back("RefEnter(data: Ref(T)) -> (output: Ref(T))" + frame);
        s.push_back("Exit(data: T) -> (output: T); T: type");
        s.push_back("RefExit(data: Ref(T)) -> (output: Ref(T)); T: type");
        s.push_back("NextIteration(data: T) -> (output: T); T: type");
        s.push_back("RefNextIteration(data: Ref(T)) -> (output: Ref(T)); T: type");
        s.push_back("LoopCond(input: bool) -> (output: bool); nograd");

        // checkpoints and strings
        s.push_back("SaveV2(prefix: string, tensor_names: string, shape_and_slices: string, tensors: dtypes); "
                    "dtypes: list(type) >= 1; stateful; nograd");
        s.push_back("RestoreV2(prefix: string, tensor_names: string, shape_and_slices: string) -> (tensors: dtypes); "
                    "dtypes: list(type) >= 1; stateful; nograd");
        s.push_back("MergeV2Checkpoints(checkpoint_prefixes: string, destination_prefix: string); "
                    "delete_old_dirs: bool = true; allow_missing_files: bool = false; stateful; nograd");
        s.push_back("Save(filename: string, tensor_names: string, data: T); T: list(type) >= 1; stateful; nograd");
        s.push_back("SaveSlices(filename: string, tensor_names: string, shapes_and_slices: string, data: T); "
                    "T: list(type) >= 1; stateful; nograd");
        s.push_back("Restore(file_pattern: string, tensor_name: string) -> (tensor: dt); dt: type; "
                    "preferred_shard: int = -1; stateful; nograd");
        s.push_back("RestoreSlice(file_pattern: string, tensor_name: string, shape_and_slice: string) -> "
                    "(tensor: dt); dt: type; preferred_shard: int = -1; stateful; nograd");
        s.push_back("ShardedFilename(basename: string, shard: int32, num_shards: int32) -> (filename: string); nograd");
        s.push_back("ShardedFilespec(basename: string, num_shards: int32) -> (filename: string); nograd");
        s.push_back("StringJoin(inputs: N * string) -> (output: string); N: int >= 0; separator: string = \"\"; nograd");
        s.push_back("StaticRegexFullMatch(input: string) -> (output: bool); pattern: string; nograd");

        // function calls
        const std::string call = "(args: Tin) -> (output: Tout); Tin: list(type) >= 0; Tout: list(type) >= 0; "
                                 "f: func; config: string = \"\"; config_proto: string = \"\"; "
                                 "executor_type: string = \"\"";
        s.push_back("PartitionedCall" + call + "; grad_missing; import_only");
        s.push_back("StatefulPartitionedCall" + call + "; stateful; grad_missing; import_only");
        // a function body's arguments and results: inlining turns them into Identity nodes
        s.push_back("_Arg() -> (output: T); T: type; index: int >= 0; nograd; import_only");
        s.push_back("_Retval(input: T); T: type; index: int >= 0; nograd; import_only");
        // families added one header each (graph/op_specs/)
        tensor_array_op_specs(s);
        math_more_op_specs(s);
        array_more_op_specs(s);
        nn_more_op_specs(s);
        image_op_specs(s);
        linalg_op_specs(s);
        functional_op_specs(s);
        indexing_op_specs(s);
        clustering_op_specs(s);
        summary_op_specs(s);
        parsing_op_specs(s);
        queue_op_specs(s);
        collective_op_specs(s);
        return s;
    }();
    return specs;
}

}  // namespace graft::detail
