// graft/ops/space_batch.hpp — moving space into batch or depth and back: SpaceToBatchND /
// BatchToSpaceND (the V1 SpaceToBatch / BatchToSpace are their 2-d square-block case),
// SpaceToDepth / DepthToSpace (NHWC, NCHW) and ExtractImagePatches. Every dtype: each is a pad or
// crop around a reshape + transpose of the elements.
//
//   tensor b = ops::space_to_batch_nd(x, {2, 2}, {{0, 0}, {0, 0}});   // [1,4,4,c] -> [4,2,2,c]
//   tensor y = ops::batch_to_space_nd(b, {2, 2}, {{0, 0}, {0, 0}});   // back to x
//   tensor d = ops::space_to_depth(x, 2, "NHWC");                     // [1,4,4,c] -> [1,2,2,4c]
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graft/ops/slicing.hpp"
#include "graft/ops/tile_pad.hpp"
#include "graft/ops/transpose.hpp"

namespace graft::ops {

namespace op_detail {

/// block_shape (M >= 1 positive values) checked against x (rank >= 1 + M).
inline std::vector<std::int64_t> read_block_shape(std::string_view op, const tensor& x, const tensor& block) {
    if (block.valid() && block.rank() != 1) {
        throw invalid_argument_error(cat(op, ": block_shape must be a vector but has shape ", block.shape().str()));
    }
    auto b = int_list(op, block, "block_shape");
    if (b.empty() || x.rank() < 1 + static_cast<int>(b.size())) {
        throw invalid_argument_error(cat(op, ": input ", x.shape().str(), " must have rank >= 1 + ", b.size(),
                                         " (the length of block_shape ", list_str(b), ") and block_shape must not be empty"));
    }
    for (auto v : b) {
        if (v < 1) throw invalid_argument_error(cat(op, ": block_shape ", list_str(b), " must be positive"));
    }
    return b;
}

/// paddings / crops: an [M, 2] int tensor of non-negative values.
inline paddings_t read_pairs(std::string_view op, const tensor& p, std::size_t m, std::string_view what) {
    require_input(op, p, what);
    if (p.rank() != 2 || p.dim(0) != static_cast<std::int64_t>(m) || p.dim(1) != 2) {
        throw invalid_argument_error(cat(op, ": ", what, " must have shape [", m, ",2] but has ", p.shape().str()));
    }
    auto flat = int_list(op, p.reshaped(shape{p.num_elements()}), what);
    paddings_t r;
    for (std::size_t i = 0; i + 1 < flat.size(); i += 2) {
        if (flat[i] < 0 || flat[i + 1] < 0) {
            throw invalid_argument_error(cat(op, ": ", what, " must be non-negative but has (", flat[i], ", ",
                                             flat[i + 1], ") for spatial dim ", i / 2));
        }
        r.emplace_back(flat[i], flat[i + 1]);
    }
    return r;
}

/// NHWC (true) or NCHW (false) from TF's data_format attr of the depth ops.
inline bool depth_nhwc(std::string_view op, std::string_view data_format) {
    if (data_format.empty() || data_format == "NHWC") return true;
    if (data_format == "NCHW") return false;
    throw invalid_argument_error(cat(op, ": data_format must be NHWC or NCHW but is '", data_format, "'"),
                                 {}, "NCHW_VECT_C (qint8) is not supported");
}

}  // namespace op_detail

/// SpaceToBatchND: x [batch, s_1..s_M, rest...] zero-padded by `paddings` on the spatial dims, each
/// cut into blocks of block_shape, the block offsets moved into the batch:
/// [batch * prod(block), (s_i + pads_i) / block_i..., rest...]. Throws invalid_argument_error when
/// a padded dim is not a multiple of its block.
inline tensor space_to_batch_nd(const tensor& x, const std::vector<std::int64_t>& block, const paddings_t& pads) {
    const char* op = "SpaceToBatchND";
    op_detail::require_input(op, x, "input");
    const std::size_t m = block.size(), r = static_cast<std::size_t>(x.rank());
    if (pads.size() != m || m == 0 || r < 1 + m) {
        throw invalid_argument_error(op_detail::cat(op, ": block_shape ", op_detail::list_str(block), " and ",
                                                    pads.size(), " paddings do not fit input ", x.shape().str()));
    }
    paddings_t full(r, {0, 0});
    for (std::size_t i = 0; i < m; ++i) full[1 + i] = pads[i];
    tensor padded = pad(x, full);
    const auto& d = padded.shape().dims();
    std::vector<std::int64_t> split{d[0]}, perm, out{d[0]};
    for (std::size_t i = 0; i < m; ++i) {
        if (d[1 + i] % block[i] != 0) {
            throw invalid_argument_error(op_detail::cat(op, ": padded spatial dim ", i, " (", d[1 + i],
                                                        ") is not a multiple of block_shape[", i, "] = ", block[i],
                                                        " for input ", x.shape().str()));
        }
        split.push_back(d[1 + i] / block[i]);
        split.push_back(block[i]);
        out[0] *= block[i];
        out.push_back(d[1 + i] / block[i]);
    }
    for (std::size_t i = 1 + m; i < r; ++i) {
        split.push_back(d[i]);
        out.push_back(d[i]);
    }
    for (std::size_t i = 0; i < m; ++i) perm.push_back(static_cast<std::int64_t>(2 + 2 * i));
    perm.push_back(0);
    for (std::size_t i = 0; i < m; ++i) perm.push_back(static_cast<std::int64_t>(1 + 2 * i));
    for (std::size_t i = 1 + 2 * m; i < split.size(); ++i) perm.push_back(static_cast<std::int64_t>(i));
    return transpose(padded.reshaped(shape(split)), perm).reshaped(shape(out));
}
/// SpaceToBatchND with block_shape [M] and paddings [M, 2] as int tensors. Throws as above.
inline tensor space_to_batch_nd(const tensor& x, const tensor& block_shape, const tensor& paddings) {
    const char* op = "SpaceToBatchND";
    op_detail::require_input(op, x, "input");
    auto b = op_detail::read_block_shape(op, x, block_shape);
    return space_to_batch_nd(x, b, op_detail::read_pairs(op, paddings, b.size(), "paddings"));
}

/// BatchToSpaceND: the inverse of SpaceToBatchND: x [prod(block) * n, s_1..s_M, rest...] to
/// [n, s_i * block_i - crops_i..., rest...]. Throws invalid_argument_error when the batch is not a
/// multiple of prod(block) or the crops exceed a dim.
inline tensor batch_to_space_nd(const tensor& x, const std::vector<std::int64_t>& block, const paddings_t& crops) {
    const char* op = "BatchToSpaceND";
    op_detail::require_input(op, x, "input");
    const std::size_t m = block.size(), r = static_cast<std::size_t>(x.rank());
    if (crops.size() != m || m == 0 || r < 1 + m) {
        throw invalid_argument_error(op_detail::cat(op, ": block_shape ", op_detail::list_str(block), " and ",
                                                    crops.size(), " crops do not fit input ", x.shape().str()));
    }
    const auto& d = x.shape().dims();
    const std::int64_t prod = op_detail::dim_product(block, 0, m);
    if (d[0] % prod != 0) {
        throw invalid_argument_error(op_detail::cat(op, ": input batch ", d[0], " of ", x.shape().str(),
                                                    " is not a multiple of prod(block_shape ",
                                                    op_detail::list_str(block), ") = ", prod));
    }
    std::vector<std::int64_t> split(block), perm{static_cast<std::int64_t>(m)}, out{d[0] / prod};
    split.push_back(d[0] / prod);
    for (std::size_t i = 0; i < m; ++i) split.push_back(d[1 + i]);
    for (std::size_t i = 1 + m; i < r; ++i) split.push_back(d[i]);
    for (std::size_t i = 0; i < m; ++i) {
        perm.push_back(static_cast<std::int64_t>(m + 1 + i));
        perm.push_back(static_cast<std::int64_t>(i));
        out.push_back(d[1 + i] * block[i]);
    }
    for (std::size_t i = 1 + m; i < r; ++i) {
        perm.push_back(static_cast<std::int64_t>(m + i));
        out.push_back(d[i]);
    }
    std::vector<std::int64_t> begin(r, 0), size(out);
    for (std::size_t i = 0; i < m; ++i) {
        const std::int64_t cut = crops[i].first + crops[i].second;
        if (cut > out[1 + i]) {
            throw invalid_argument_error(op_detail::cat(op, ": crops (", crops[i].first, ", ", crops[i].second,
                                                        ") exceed spatial dim ", i, " of size ", out[1 + i]));
        }
        begin[1 + i] = crops[i].first;
        size[1 + i] = out[1 + i] - cut;
    }
    tensor full = transpose(x.reshaped(shape(split)), perm).reshaped(shape(out));
    return slice(full, begin, size);
}
/// BatchToSpaceND with block_shape [M] and crops [M, 2] as int tensors. Throws as above.
inline tensor batch_to_space_nd(const tensor& x, const tensor& block_shape, const tensor& crops) {
    const char* op = "BatchToSpaceND";
    op_detail::require_input(op, x, "input");
    auto b = op_detail::read_block_shape(op, x, block_shape);
    return batch_to_space_nd(x, b, op_detail::read_pairs(op, crops, b.size(), "crops"));
}

/// SpaceToBatch (v1): SpaceToBatchND of a 4-d NHWC x with block [block_size, block_size].
/// Throws invalid_argument_error for another rank or block_size < 2, else as SpaceToBatchND.
inline tensor space_to_batch(const tensor& x, const tensor& paddings, std::int64_t block_size) {
    const char* op = "SpaceToBatch";
    op_detail::require_input(op, x, "input");
    if (x.rank() != 4 || block_size < 2) {
        throw invalid_argument_error(op_detail::cat(op, ": input must have rank 4 (NHWC) and block_size >= 2 but ",
                                                    "input is ", x.shape().str(), " and block_size ", block_size));
    }
    return space_to_batch_nd(x, {block_size, block_size}, op_detail::read_pairs(op, paddings, 2, "paddings"));
}
/// BatchToSpace (v1): BatchToSpaceND of a 4-d NHWC x with block [block_size, block_size].
inline tensor batch_to_space(const tensor& x, const tensor& crops, std::int64_t block_size) {
    const char* op = "BatchToSpace";
    op_detail::require_input(op, x, "input");
    if (x.rank() != 4 || block_size < 2) {
        throw invalid_argument_error(op_detail::cat(op, ": input must have rank 4 (NHWC) and block_size >= 2 but ",
                                                    "input is ", x.shape().str(), " and block_size ", block_size));
    }
    return batch_to_space_nd(x, {block_size, block_size}, op_detail::read_pairs(op, crops, 2, "crops"));
}

/// DepthToSpace: blocks of block_size x block_size pixels taken from the depth of a 4-d x
/// (NHWC: [n, h, w, c] -> [n, h*b, w*b, c/b^2]; NCHW likewise on dims 1..3). Throws
/// invalid_argument_error when the depth is not a multiple of block_size^2.
inline tensor depth_to_space(const tensor& x, std::int64_t block_size, std::string_view data_format = "NHWC") {
    const char* op = "DepthToSpace";
    op_detail::require_input(op, x, "input");
    const bool nhwc = op_detail::depth_nhwc(op, data_format);
    const std::int64_t b = block_size;
    if (x.rank() != 4 || b < 2) {
        throw invalid_argument_error(op_detail::cat(op, ": input must have rank 4 and block_size >= 2 but input is ",
                                                    x.shape().str(), " and block_size ", b));
    }
    const std::int64_t n = x.dim(0), c = x.dim(nhwc ? 3 : 1), h = x.dim(nhwc ? 1 : 2), w = x.dim(nhwc ? 2 : 3);
    if (c % (b * b) != 0) {
        throw invalid_argument_error(op_detail::cat(op, ": input depth ", c, " of ", x.shape().str(),
                                                    " is not a multiple of block_size^2 = ", b * b));
    }
    const std::int64_t oc = c / (b * b);
    if (nhwc) {
        return transpose(x.reshaped(shape{n, h, w, b, b, oc}), {0, 1, 3, 2, 4, 5}).reshaped(shape{n, h * b, w * b, oc});
    }
    return transpose(x.reshaped(shape{n, b, b, oc, h, w}), {0, 3, 4, 1, 5, 2}).reshaped(shape{n, oc, h * b, w * b});
}

/// SpaceToDepth: the inverse of DepthToSpace (NHWC: [n, h, w, c] -> [n, h/b, w/b, c*b^2]).
/// Throws invalid_argument_error when h or w is not a multiple of block_size.
inline tensor space_to_depth(const tensor& x, std::int64_t block_size, std::string_view data_format = "NHWC") {
    const char* op = "SpaceToDepth";
    op_detail::require_input(op, x, "input");
    const bool nhwc = op_detail::depth_nhwc(op, data_format);
    const std::int64_t b = block_size;
    if (x.rank() != 4 || b < 2) {
        throw invalid_argument_error(op_detail::cat(op, ": input must have rank 4 and block_size >= 2 but input is ",
                                                    x.shape().str(), " and block_size ", b));
    }
    const std::int64_t n = x.dim(0), c = x.dim(nhwc ? 3 : 1), h = x.dim(nhwc ? 1 : 2), w = x.dim(nhwc ? 2 : 3);
    if (h % b != 0 || w % b != 0) {
        throw invalid_argument_error(op_detail::cat(op, ": input height ", h, " and width ", w, " of ", x.shape().str(),
                                                    " must be multiples of block_size ", b));
    }
    if (nhwc) {
        return transpose(x.reshaped(shape{n, h / b, b, w / b, b, c}), {0, 1, 3, 2, 4, 5})
            .reshaped(shape{n, h / b, w / b, b * b * c});
    }
    return transpose(x.reshaped(shape{n, c, h / b, b, w / b, b}), {0, 3, 5, 1, 2, 4})
        .reshaped(shape{n, b * b * c, h / b, w / b});
}

/// ExtractImagePatches: for NHWC x, every ksize window (dilated by rates, moved by strides,
/// padding "SAME" or "VALID") flattened into the depth: [n, out_r, out_c, kr * kc * c], zeros where
/// the window leaves x. ksizes/strides/rates are [1, r, c, 1]. Throws invalid_argument_error for
/// bad attrs or rank.
inline tensor extract_image_patches(const tensor& x, const std::vector<std::int64_t>& ksizes,
                                    const std::vector<std::int64_t>& strides, const std::vector<std::int64_t>& rates,
                                    std::string_view padding) {
    const char* op = "ExtractImagePatches";
    op_detail::require_input(op, x, "images");
    if (x.rank() != 4) {
        throw invalid_argument_error(op_detail::cat(op, ": images must have rank 4 (NHWC) but has shape ",
                                                    x.shape().str()));
    }
    auto check = [&](const std::vector<std::int64_t>& v, const char* what) {
        if (v.size() != 4 || v[0] != 1 || v[3] != 1 || v[1] < 1 || v[2] < 1) {
            throw invalid_argument_error(op_detail::cat(op, ": ", what, " must be [1, rows, cols, 1] with positive ",
                                                        "rows and cols but is ", op_detail::list_str(v)));
        }
    };
    check(ksizes, "ksizes");
    check(strides, "strides");
    check(rates, "rates");
    const bool same = padding == "SAME";
    if (!same && padding != "VALID") {
        throw invalid_argument_error(op_detail::cat(op, ": padding must be SAME or VALID but is '", padding, "'"));
    }
    const std::int64_t n = x.dim(0), ih = x.dim(1), iw = x.dim(2), c = x.dim(3);
    const std::int64_t kr = ksizes[1], kc = ksizes[2], sr = strides[1], sc = strides[2];
    const std::int64_t er = (kr - 1) * rates[1] + 1, ec = (kc - 1) * rates[2] + 1;
    auto out_size = [&](std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t& pad_before) {
        if (same) {
            const std::int64_t o = (in + s - 1) / s;
            pad_before = std::max((o - 1) * s + k - in, std::int64_t{0}) / 2;
            return o;
        }
        pad_before = 0;
        return in >= k ? (in - k) / s + 1 : std::int64_t{0};
    };
    std::int64_t pt = 0, pl = 0;
    const std::int64_t oh = out_size(ih, er, sr, pt), ow = out_size(iw, ec, sc, pl);
    tensor out(x.type(), shape{n, oh, ow, kr * kc * c});
    op_detail::visit_element_bytes(x.type(), op, [&](auto tag) {
        using U = decltype(tag);
        const U* in = op_detail::elements_as<U>(x);
        U* o = op_detail::elements_as<U>(out);
        op_detail::parallel_for(n * oh, static_cast<double>(sizeof(U) * static_cast<std::size_t>(ow * kr * kc * c)), 8.0,
                                [&](std::int64_t p0, std::int64_t p1) {
            for (std::int64_t p = p0; p < p1; ++p) {
                const std::int64_t b = p / oh, i = p % oh;
                for (std::int64_t j = 0; j < ow; ++j) {
                    U* dst = o + (p * ow + j) * kr * kc * c;
                    for (std::int64_t a = 0; a < kr; ++a) {
                        const std::int64_t r = i * sr - pt + a * rates[1];
                        for (std::int64_t q = 0; q < kc; ++q, dst += c) {
                            const std::int64_t col = j * sc - pl + q * rates[2];
                            if (r < 0 || r >= ih || col < 0 || col >= iw) continue;
                            const U* src = in + ((b * ih + r) * iw + col) * c;
                            std::copy(src, src + c, dst);
                        }
                    }
                }
            }
        });
    });
    return out;
}

}  // namespace graft::ops
