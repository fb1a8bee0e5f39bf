// graft/ops/nary.hpp — elementwise ops of more than two inputs: AddN, Select (TF1) and SelectV2.
//
//   tensor s = ops::add_n({a, b, c});                  // a + b + c, one pass over memory
//   tensor y = ops::select_v2(ops::greater(x, zero), x, zero);   // cond, t, e broadcast together
//   tensor z = ops::select(row_mask, t, e);            // TF1: cond a vector over dim 0
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "graft/ops/broadcast.hpp"
#include "graft/ops/unary.hpp"
#include "graft/ops/detail/widen.hpp"

namespace graft::ops {

namespace op_detail {

/// AddN for a T that computes in C = compute_t<T>: each block of the inputs is summed in C and
/// rounded (or, for integers, wrapped) back to T once.
template <class T>
void add_n_widened(const std::vector<tensor>& inputs, const tensor& out) {
    using C = compute_t<T>;
    T* o = out.data<T>();
    const double k = static_cast<double>(inputs.size());
    parallel_for(out.num_elements(), sizeof(T) * (k + 1), 2 * k,
                 [&](std::int64_t a, std::int64_t b) {
                     C acc[widen_block], xb[widen_block];
                     for (std::int64_t s = a; s < b; s += widen_block) {
                         const std::int64_t len = std::min(widen_block, b - s);
                         widen_run(inputs[0].data<T>() + s, acc, len);
                         for (std::size_t i = 1; i < inputs.size(); ++i) {
                             widen_run(inputs[i].data<T>() + s, xb, len);
                             for (std::int64_t j = 0; j < len; ++j) acc[j] += xb[j];
                         }
                         narrow_run(acc, o + s, len);
                     }
                 });
}

/// AddN for the types that compute in themselves: one Eigen pass per block of 2048 elements.
template <class T>
void add_n_direct(const std::vector<tensor>& inputs, const tensor& out) {
    std::vector<const T*> src;
    for (const auto& t : inputs) src.push_back(t.data<T>());
    T* o = out.data<T>();
    const double k = static_cast<double>(inputs.size());
    op_detail::parallel_for(out.num_elements(), sizeof(T) * (k + 1), k,
                            [&](std::int64_t a, std::int64_t b) {
                                constexpr std::int64_t block =
                                    2048;  // keep the running sum in cache between inputs
                                for (std::int64_t s = a; s < b; s += block) {
                                    const std::int64_t len = std::min(block, b - s);
                                    tensor_map<T, 1> om(o + s, len);
                                    const_tensor_map<T, 1> x0(src[0] + s, len);
                                    if (src.size() == 1) {
                                        om = x0;
                                        continue;
                                    }
                                    const_tensor_map<T, 1> x1(src[1] + s, len);
                                    om = x0 + x1;
                                    for (std::size_t i = 2; i < src.size(); ++i)
                                        om += const_tensor_map<T, 1>(src[i] + s, len);
                                }
                            });
}

}  // namespace op_detail

/// AddN: the elementwise sum of N >= 1 tensors of one shape and dtype (every real type;
/// float16/bfloat16 sum in float32, integers wrap). Throws invalid_argument_error (no inputs,
/// dtype) or shape_error (shapes differ).
inline tensor add_n(const std::vector<tensor>& inputs) {
    const char* op = "AddN";
    if (inputs.empty())
        throw invalid_argument_error(op_detail::cat(op, ": needs at least one input"));
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        op_detail::require_input(op, inputs[k], op_detail::cat("input ", k));
        op_detail::require_same_dtype(op, inputs[k], op_detail::cat("input ", k), inputs[0],
                                      "input 0");
        if (!(inputs[k].shape() == inputs[0].shape())) {
            throw shape_error(op_detail::cat(op, ": input ", k, " has shape ",
                                             inputs[k].shape().str(), " but input 0 has ",
                                             inputs[0].shape().str(), ": all must match"));
        }
    }
    return op_detail::dispatch_list(
        op_detail::all_real_types{}, inputs[0].type(), op,
        [&](auto tag) {
            using T = decltype(tag);
            tensor out = tensor::uninitialized(dtype_of<T>, inputs[0].shape());
            if constexpr (op_detail::is_widened<T>) {
                op_detail::add_n_widened<T>(inputs, out);
            } else {
                op_detail::add_n_direct<T>(inputs, out);
            }
            return out;
        },
        "input 0");
}

namespace op_detail {

/// out = cond ? t : e over the broadcast of the three shapes (any dense dtype for t/e).
inline tensor select_broadcast(std::string_view op, const tensor& cond, const tensor& t,
                               const tensor& e, const shape& cond_shape) {
    require_dtype(op, cond, "condition", dtype::bool_);
    require_same_dtype(op, t, "t", e, "e");
    auto plan = make_broadcast(op, {cond_shape, t.shape(), e.shape()});
    tensor out = tensor::uninitialized(t.type(), std::move(plan.out_shape));  // (the runs read dims, strides)
    visit_element_bytes(t.type(), op, [&](auto tag) {
        using U = decltype(tag);
        const bool* pc = cond.data<bool>();
        const U* pt = elements_as<U>(t);
        const U* pe = elements_as<U>(e);
        U* po = elements_as<U>(out);
        for_each_run<3>(plan, 2.0 * sizeof(U) + 1, 1.0,
                        [&](std::int64_t i, std::int64_t len, const auto& off, const auto& contig) {
                            const std::int64_t sc = contig[0], st = contig[1], se = contig[2];
                            for (std::int64_t j = 0; j < len; ++j) {
                                po[i + j] =
                                    pc[off[0] + j * sc] ? pt[off[1] + j * st] : pe[off[2] + j * se];
                            }
                        });
    });
    return out;
}

}  // namespace op_detail

/// SelectV2: elementwise cond ? t : e with cond (bool), t and e broadcast together (NumPy rules).
/// Any dense dtype for t/e. Throws shape_error when they do not broadcast, invalid_argument_error
/// for a non-bool cond or t/e dtypes that differ.
inline tensor select_v2(const tensor& cond, const tensor& t, const tensor& e) {
    const char* op = "SelectV2";
    op_detail::require_input(op, cond, "condition");
    op_detail::require_input(op, t, "t");
    op_detail::require_input(op, e, "e");
    return op_detail::select_broadcast(op, cond, t, e, cond.shape());
}

/// Select (TF1): t and e have one shape; cond is a scalar, has that shape, or is a vector over
/// dim 0 choosing whole rows. Throws shape_error for other shapes, invalid_argument_error for
/// dtypes as select_v2().
inline tensor select(const tensor& cond, const tensor& t, const tensor& e) {
    const char* op = "Select";
    op_detail::require_input(op, cond, "condition");
    op_detail::require_input(op, t, "t");
    op_detail::require_input(op, e, "e");
    if (!(t.shape() == e.shape())) {
        throw shape_error(op_detail::cat(op, ": t has shape ", t.shape().str(), " but e has ",
                                         e.shape().str(), ": they must be equal"));
    }
    shape cs = cond.shape();
    if (cond.rank() == 1 && t.rank() > 1) {
        if (cond.dim(0) != t.dim(0)) {
            throw shape_error(op_detail::cat(op, ": condition ", cond.shape().str(),
                                             " must have one entry per row of t ",
                                             t.shape().str()));
        }
        std::vector<std::int64_t> d(static_cast<std::size_t>(t.rank()), 1);
        d[0] = cond.dim(0);
        cs = shape(d);
    } else if (cond.rank() != 0 && !(cond.shape() == t.shape())) {
        throw shape_error(op_detail::cat(op, ": condition ", cond.shape().str(),
                                         " must be a scalar, a vector over dim 0 of t ",
                                         t.shape().str(), ", or have t's shape"));
    }
    return op_detail::select_broadcast(op, cond, t, e, cs);
}

}  // namespace graft::ops
