// graft/exec/cpu_kernels/array_more.hpp — the array_more family's CPU kernels bound to their TF op types:
// reversing and rolling (ops/array_more.hpp), matrix diagonals (ops/matrix_diag.hpp), space/batch/depth
// moves and image patches (ops/space_batch.hpp), BroadcastTo / BroadcastArgs (ops/broadcast.hpp),
// ConcatOffset, ParallelConcat, Empty and DeepCopy.
#pragma once

#include <string>
#include <vector>

#include "graft/exec/kernel.hpp"
#include "graft/ops/array_more.hpp"
#include "graft/ops/broadcast.hpp"
#include "graft/ops/matrix_diag.hpp"
#include "graft/ops/space_batch.hpp"

namespace graft::exec::kernels {

namespace array_more_detail {
inline std::vector<tensor> all_inputs(kernel_context& c, int first, int count) {
    std::vector<tensor> v;
    v.reserve(static_cast<std::size_t>(count));
    for (int i = first; i < first + count; ++i) v.push_back(c.input(i));
    return v;
}
inline kernel_def host(std::vector<int> inputs) {
    kernel_def d;
    d.host_inputs = std::move(inputs);
    return d;
}
inline ops::diag_align align_of(kernel_context& c) {
    return ops::diag_align::parse(c.n().op, c.attr_or<std::string>("align", "RIGHT_LEFT"));
}
inline std::vector<std::int64_t> k_of(kernel_context& c, int i) {
    return ops::op_detail::int_list(c.n().op, c.input(i), "k");
}
inline std::int64_t int_of(kernel_context& c, int i, const char* what) {
    return ops::op_detail::int_scalar(c.n().op, c.input(i), what);
}
}  // namespace array_more_detail

inline void register_array_more(kernel_registry& r) {
    using namespace array_more_detail;
    r.add("ReverseV2", [](kernel_context& c) { c.set_output(0, ops::reverse(c.input(0), c.input(1))); }, host({1}));
    r.add("Reverse", [](kernel_context& c) { c.set_output(0, ops::reverse_dims(c.input(0), c.input(1))); }, host({1}));
    r.add("Roll", [](kernel_context& c) { c.set_output(0, ops::roll(c.input(0), c.input(1), c.input(2))); },
          host({1, 2}));
    r.add("ReverseSequence", [](kernel_context& c) {
        c.set_output(0, ops::reverse_sequence(c.input(0), c.input(1), c.attr_int("seq_dim"),
                                              c.attr_or<std::int64_t>("batch_dim", 0)));
    }, host({1}));

    // diagonals: V1 is k = 0 packed LEFT_LEFT, V2 packs LEFT_LEFT, V3 reads align
    const tensor no_padding;
    r.add("MatrixDiag", [no_padding](kernel_context& c) {
        c.set_output(0, ops::matrix_diag(c.input(0), {0}, -1, -1, no_padding, ops::diag_align::left_left(), "MatrixDiag"));
    });
    for (const char* op : {"MatrixDiagV2", "MatrixDiagV3"}) {
        const bool v3 = std::string(op) == "MatrixDiagV3";
        r.add(op, [v3](kernel_context& c) {
            c.set_output(0, ops::matrix_diag(c.input(0), k_of(c, 1), int_of(c, 2, "num_rows"), int_of(c, 3, "num_cols"),
                                             c.input(4), v3 ? align_of(c) : ops::diag_align::left_left(), c.n().op));
        }, host({1, 2, 3}));
    }
    r.add("MatrixDiagPart", [no_padding](kernel_context& c) {
        c.set_output(0, ops::matrix_diag_part(c.input(0), {0}, no_padding, ops::diag_align::left_left(), "MatrixDiagPart"));
    });
    for (const char* op : {"MatrixDiagPartV2", "MatrixDiagPartV3"}) {
        const bool v3 = std::string(op) == "MatrixDiagPartV3";
        r.add(op, [v3](kernel_context& c) {
            c.set_output(0, ops::matrix_diag_part(c.input(0), k_of(c, 1), c.input(2),
                                                  v3 ? align_of(c) : ops::diag_align::left_left(), c.n().op));
        }, host({1}));
    }
    r.add("MatrixSetDiag", [](kernel_context& c) {
        c.set_output(0, ops::matrix_set_diag(c.input(0), c.input(1), {0}, ops::diag_align::left_left(), "MatrixSetDiag"));
    });
    for (const char* op : {"MatrixSetDiagV2", "MatrixSetDiagV3"}) {
        const bool v3 = std::string(op) == "MatrixSetDiagV3";
        r.add(op, [v3](kernel_context& c) {
            c.set_output(0, ops::matrix_set_diag(c.input(0), c.input(1), k_of(c, 2),
                                                 v3 ? align_of(c) : ops::diag_align::left_left(), c.n().op));
        }, host({2}));
    }
    r.add("MatrixBandPart", [](kernel_context& c) {
        c.set_output(0, ops::matrix_band_part(c.input(0), int_of(c, 1, "num_lower"), int_of(c, 2, "num_upper")));
    }, host({1, 2}));
    r.add("Diag", [](kernel_context& c) { c.set_output(0, ops::diag(c.input(0))); });
    r.add("DiagPart", [](kernel_context& c) { c.set_output(0, ops::diag_part(c.input(0))); });

    // space <-> batch <-> depth
    r.add("SpaceToBatchND", [](kernel_context& c) {
        c.set_output(0, ops::space_to_batch_nd(c.input(0), c.input(1), c.input(2)));
    }, host({1, 2}));
    r.add("BatchToSpaceND", [](kernel_context& c) {
        c.set_output(0, ops::batch_to_space_nd(c.input(0), c.input(1), c.input(2)));
    }, host({1, 2}));
    r.add("SpaceToBatch", [](kernel_context& c) {
        c.set_output(0, ops::space_to_batch(c.input(0), c.input(1), c.attr_int("block_size")));
    }, host({1}));
    r.add("BatchToSpace", [](kernel_context& c) {
        c.set_output(0, ops::batch_to_space(c.input(0), c.input(1), c.attr_int("block_size")));
    }, host({1}));
    r.add("SpaceToDepth", [](kernel_context& c) {
        c.set_output(0, ops::space_to_depth(c.input(0), c.attr_int("block_size"),
                                            c.attr_or<std::string>("data_format", "NHWC")));
    });
    r.add("DepthToSpace", [](kernel_context& c) {
        c.set_output(0, ops::depth_to_space(c.input(0), c.attr_int("block_size"),
                                            c.attr_or<std::string>("data_format", "NHWC")));
    });
    r.add("ExtractImagePatches", [](kernel_context& c) {
        c.set_output(0, ops::extract_image_patches(c.input(0), c.attr_ints("ksizes"), c.attr_ints("strides"),
                                                   c.attr_ints("rates"), c.attr_string("padding")));
    });

    // broadcasting, joining, construction
    r.add("BroadcastTo", [](kernel_context& c) { c.set_output(0, ops::broadcast_to(c.input(0), c.input(1))); },
          host({1}));
    r.add("BroadcastArgs", [](kernel_context& c) { c.set_output(0, ops::broadcast_args(c.input(0), c.input(1))); },
          host({0, 1}));
    r.add("ConcatOffset", [](kernel_context& c) {
        auto outs = ops::concat_offset(int_of(c, 0, "concat_dim"), all_inputs(c, 1, c.num_inputs() - 1));
        for (std::size_t i = 0; i < outs.size(); ++i) c.set_output(static_cast<int>(i), outs[i]);
    }, [&] {
        kernel_def d;
        for (int i = 0; i < 64; ++i) d.host_inputs.push_back(i);
        return d;
    }());
    r.add("ParallelConcat", [](kernel_context& c) {
        const auto* s = c.find_attr("shape");
        c.set_output(0, ops::parallel_concat(all_inputs(c, 0, c.num_inputs()), s ? s->shape() : shape::unknown_rank()));
    });
    r.add("Empty", [](kernel_context& c) { c.set_output(0, ops::empty(c.input(0), c.attr_type("dtype"))); }, host({0}));
    r.add("DeepCopy", [](kernel_context& c) { c.set_output(0, ops::deep_copy(c.input(0))); });
}

}  // namespace graft::exec::kernels
