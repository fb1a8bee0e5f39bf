// GPU kernels of the array family: Transpose, ConcatV2, Pack, Unpack, Slice, StridedSlice, Split,
// SplitV, Pad, PadV2, Tile (all one strided copy, kernels/array.cu), Fill, GatherV2 and OneHot.
// float32 data on the device; shapes, perms, begins, sizes, paddings, multiples and axes are read
// on the host (TF's HostMemory inputs). Shapes and attrs are checked on the host with the CPU
// kernels' errors (graft/ops/*.hpp) before anything is queued.
#include <cstdint>
#include <string>
#include <vector>

#include "families.hpp"
#include "graft/cuda/exec.hpp"
#include "graft/ops/array_all.hpp"
#include "launch_array.hpp"

namespace graft::cuda::families {

namespace {

namespace od = graft::ops::op_detail;
using dims_t = std::vector<std::int64_t>;

/// Row-major strides (in elements) of dims.
dims_t strides_of(const dims_t& d) {
    dims_t s(d.size(), 1);
    for (std::size_t i = d.size(); i-- > 1;) s[i - 1] = s[i] * d[i];
    return s;
}

int elem_bytes(exec::kernel_context& c, const tensor& t) {
    const auto b = static_cast<int>(dtype_size(t.type()));
    if (b != 1 && b != 2 && b != 4 && b != 8)
        c.fail(detail::cat("the GPU kernel cannot move ", t.describe()));
    return b;
}

char* bytes_of(const tensor& t) {
    return static_cast<char*>(t.raw_data());
}

/// Copies the box `extents` of `src` (element strides `ss`, starting `src_off` elements in) to
/// `dst` (strides `ds`, starting `dst_off` elements in), queued on the kernel's stream.
void copy_box(exec::kernel_context& c, const tensor& dst, std::int64_t dst_off, const dims_t& ds,
              const tensor& src, std::int64_t src_off, const dims_t& ss, const dims_t& extents) {
    for (auto e : extents) {
        if (e == 0) return;
    }
    const int eb = elem_bytes(c, src);
    launch::strided_copy(bytes_of(dst) + dst_off * eb, ds.data(), bytes_of(src) + src_off * eb,
                         ss.data(), extents.data(), static_cast<int>(extents.size()), eb,
                         stream_of(c).native());
}

/// Input i read on the host when the kernel_def cannot name it (ConcatV2's axis is input N).
tensor host_input(exec::kernel_context& c, int i) {
    const exec::value& v = c.raw_input(i);
    if (v.is_resource) c.fail(detail::cat("input ", i, " is a resource handle, not a tensor"));
    return exec::to_host(v.is_ref ? v.var->read() : v.t);
}

void set_outputs(exec::kernel_context& c, const std::vector<tensor>& outs) {
    if (static_cast<int>(outs.size()) != c.num_outputs()) {
        c.fail(
            detail::cat("op produced ", outs.size(), " tensors for ", c.num_outputs(), " outputs"));
    }
    for (std::size_t i = 0; i < outs.size(); ++i) c.set_output(static_cast<int>(i), outs[i]);
}

/// ConcatV2 / Pack on device tensors, with the CPU's checks and errors (concat_impl).
tensor concat_device(exec::kernel_context& c, const char* op, const std::vector<tensor>& values,
                     std::int64_t axis) {
    if (values.empty()) c.fail(detail::cat(op, ": needs at least one input"));
    const tensor& v0 = values[0];
    if (v0.rank() == 0)
        c.fail(detail::cat(op, ": cannot concatenate scalars"), "use Pack (ops::pack) instead");
    const int ax = od::normalize_axis(op, axis, v0.rank());
    const auto& d0 = v0.shape().dims();
    dims_t out_dims = d0;
    out_dims[static_cast<std::size_t>(ax)] = 0;
    for (std::size_t k = 0; k < values.size(); ++k) {
        const auto& v = values[k];
        if (base_type(v.type()) != base_type(v0.type())) {
            c.fail(detail::cat(op, ": input ", k, " is ", v.describe(), " but input 0 is ",
                               v0.describe(), ": the dtypes must match"));
        }
        if (v.rank() != v0.rank()) {
            c.fail(detail::cat(op, ": input ", k, " has shape ", v.shape().str(),
                               " but input 0 has ", v0.shape().str(), ": the ranks must match"));
        }
        for (int i = 0; i < v.rank(); ++i) {
            if (i != ax && v.dim(i) != v0.dim(i)) {
                c.fail(detail::cat(op, ": input ", k, " has shape ", v.shape().str(),
                                   " but input 0 has ", v0.shape().str(), ": all dims but axis ",
                                   ax, " must match"));
            }
        }
        out_dims[static_cast<std::size_t>(ax)] += v.dim(ax);
    }
    if (values.size() == 1) return v0;
    tensor out = output(c, v0.type(), shape(out_dims));
    const std::int64_t outer = od::dim_product(d0, 0, static_cast<std::size_t>(ax));
    const std::int64_t inner = od::dim_product(d0, static_cast<std::size_t>(ax) + 1, d0.size());
    const std::int64_t total = out_dims[static_cast<std::size_t>(ax)] * inner;
    std::int64_t col = 0;
    for (const auto& v : values) {
        const std::int64_t width = v.dim(ax) * inner;
        copy_box(c, out, col, {total, 1}, v, 0, {width, 1}, {outer, width});
        col += width;
    }
    return out;
}

/// x cut along `axis` into pieces of `sizes` (validated): views of x's buffer when the pieces are
/// contiguous (as on the CPU), else strided copies.
std::vector<tensor> split_device(exec::kernel_context& c, const tensor& x, int axis,
                                 const dims_t& sizes) {
    const auto& d = x.shape().dims();
    const auto ax = static_cast<std::size_t>(axis);
    const std::int64_t outer = od::dim_product(d, 0, ax);
    const std::int64_t inner = od::dim_product(d, ax + 1, d.size());
    const std::int64_t total = d[ax] * inner;
    std::vector<tensor> out;
    std::size_t off_bytes = x.byte_offset();
    std::int64_t col = 0;
    for (auto s : sizes) {
        auto piece_dims = d;
        piece_dims[ax] = s;
        const std::int64_t width = s * inner;
        if (outer == 1) {
            out.push_back(tensor::from_buffer(x.type(), shape(piece_dims), x.buf(), off_bytes));
        } else {
            tensor p = output(c, x.type(), shape(piece_dims));
            copy_box(c, p, 0, {width, 1}, x, col, {total, 1}, {outer, width});
            out.push_back(p);
        }
        off_bytes += static_cast<std::size_t>(width) * dtype_size(x.type());
        col += width;
    }
    return out;
}

void transpose_kernel(exec::kernel_context& c) {
    const char* op = "Transpose";
    tensor x = c.input(0);
    const auto p = od::check_perm(op, od::int_list(op, c.input(1), "perm"), x.rank());
    const auto& d = x.shape().dims();
    dims_t out_dims(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) out_dims[i] = d[static_cast<std::size_t>(p[i])];
    // A permutation that keeps the order of the dims larger than 1 moves no data.
    bool identity = true;
    int last = -1;
    for (int a : p) {
        if (d[static_cast<std::size_t>(a)] == 1) continue;
        identity = identity && a > last;
        last = a;
    }
    if (identity) {
        c.set_output(0, x.reshaped(shape(out_dims)));
        return;
    }
    tensor out = output(c, x.type(), shape(out_dims));
    const auto in_strides = strides_of(d);
    dims_t ss(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) ss[i] = in_strides[static_cast<std::size_t>(p[i])];
    copy_box(c, out, 0, strides_of(out_dims), x, 0, ss, out_dims);
    c.set_output(0, out);
}

void slice_kernel(exec::kernel_context& c) {
    const char* op = "Slice";
    tensor x = c.input(0);
    const auto begin = od::int_list(op, c.input(1), "begin");
    const auto size = od::int_list(op, c.input(2), "size");
    const auto r = static_cast<std::size_t>(x.rank());
    if (begin.size() != r || size.size() != r) {
        c.fail(detail::cat(op, ": begin ", od::list_str(begin), " and size ", od::list_str(size),
                           " must have one entry per dim of ", x.shape().str()));
    }
    dims_t extent = size;
    bool whole = true;
    for (std::size_t i = 0; i < r; ++i) {
        const std::int64_t dim = x.shape().dims()[i];
        if (extent[i] == -1) extent[i] = dim - begin[i];
        if (begin[i] < 0 || begin[i] > dim || extent[i] < 0 || begin[i] + extent[i] > dim) {
            c.fail(detail::cat(op, ": expected 0 <= begin[", i, "] <= begin[", i, "] + size[", i,
                               "] <= ", dim, " but got begin ", begin[i], ", size ", size[i],
                               " for input ", x.shape().str()));
        }
        whole = whole && begin[i] == 0 && extent[i] == dim;
    }
    if (whole) {
        c.set_output(0, x);
        return;
    }
    tensor out = output(c, x.type(), shape(extent));
    const auto in_strides = strides_of(x.shape().dims());
    std::int64_t off = 0;
    for (std::size_t i = 0; i < r; ++i) off += begin[i] * in_strides[i];
    copy_box(c, out, 0, strides_of(extent), x, off, in_strides, extent);
    c.set_output(0, out);
}

void strided_slice_kernel(exec::kernel_context& c) {
    const char* op = "StridedSlice";
    tensor x = c.input(0);
    ops::strided_slice_masks m;
    m.begin_mask = c.attr_or<std::int32_t>("begin_mask", 0);
    m.end_mask = c.attr_or<std::int32_t>("end_mask", 0);
    m.ellipsis_mask = c.attr_or<std::int32_t>("ellipsis_mask", 0);
    m.new_axis_mask = c.attr_or<std::int32_t>("new_axis_mask", 0);
    m.shrink_axis_mask = c.attr_or<std::int32_t>("shrink_axis_mask", 0);
    const auto begin = od::int_list(op, c.input(1), "begin");
    const auto end = od::int_list(op, c.input(2), "end");
    const auto strides = od::int_list(op, c.input(3), "strides");
    const auto plan = od::plan_strided_slice(op, x.shape().dims(), begin, end, strides, m);
    if (plan.identity) {
        c.set_output(0, x.reshaped(plan.final_shape));
        return;
    }
    tensor out = output(c, x.type(), plan.final_shape);
    const auto in_strides = strides_of(x.shape().dims());
    const auto& box = plan.box;
    std::int64_t off = 0;
    dims_t ss(box.extent.size());
    for (std::size_t i = 0; i < ss.size(); ++i) {
        off += box.begin[i] * in_strides[i];
        ss[i] = box.step[i] * in_strides[i];
    }
    copy_box(c, out, 0, strides_of(box.extent), x, off, ss, box.extent);
    c.set_output(0, out);
}

void pad_kernel(exec::kernel_context& c, bool v2) {
    const char* op = v2 ? "PadV2" : "Pad";
    tensor x = c.input(0);
    const auto pads = od::read_paddings(op, c.input(1), x.rank());
    const auto out_dims = od::padded_dims(op, x, pads);
    auto& s = stream_of(c);
    tensor out;
    if (v2) {
        tensor value = c.input(2);
        od::require_input(op, value, "constant_values");
        od::require_same_dtype(op, x, "input", value, "constant_values");
        if (value.num_elements() != 1 || value.rank() > 0) {
            c.fail(detail::cat(op, ": constant_values must be a scalar, got shape ",
                               value.shape().str()));
        }
        if (x.type() != dtype::float32)
            c.fail(detail::cat(op, ": the GPU kernel pads float32, not ", x.describe()));
        out = output(c, x.type(), shape(out_dims));
        launch::fill_f32(static_cast<float*>(out.raw_data()), out.num_elements(),
                         *value.data<float>(), s.native());
    } else {
        out = zeros(x.type(), shape(out_dims), s);
    }
    if (x.num_elements() > 0) {
        const auto out_strides = strides_of(out_dims);
        std::int64_t off = 0;
        for (std::size_t i = 0; i < pads.size(); ++i) off += pads[i].first * out_strides[i];
        copy_box(c, out, off, out_strides, x, 0, strides_of(x.shape().dims()), x.shape().dims());
    }
    c.set_output(0, out);
}

void tile_kernel(exec::kernel_context& c) {
    const char* op = "Tile";
    tensor x = c.input(0);
    const auto multiples = od::int_list(op, c.input(1), "multiples");
    const auto r = static_cast<std::size_t>(x.rank());
    if (multiples.size() != r) {
        c.fail(detail::cat(op, ": multiples ", od::list_str(multiples), " must have ", r,
                           " entries for input ", x.shape().str()));
    }
    const auto& d = x.shape().dims();
    dims_t out_dims(r);
    for (std::size_t i = 0; i < r; ++i) {
        if (multiples[i] < 0)
            c.fail(
                detail::cat(op, ": multiples ", od::list_str(multiples), " has a negative entry"));
        out_dims[i] = d[i] * multiples[i];
    }
    tensor out = output(c, x.type(), shape(out_dims));
    if (out.num_elements() == 0) {
        c.set_output(0, out);
        return;
    }
    // The output seen as [m0, d0, m1, d1, ...]: the source ignores the copy index m_i.
    const auto in_strides = strides_of(d);
    const auto out_strides = strides_of(out_dims);
    dims_t ext, ds, ss;
    for (std::size_t i = 0; i < r; ++i) {
        ext.push_back(multiples[i]);
        ds.push_back(d[i] * out_strides[i]);
        ss.push_back(0);
        ext.push_back(d[i]);
        ds.push_back(out_strides[i]);
        ss.push_back(in_strides[i]);
    }
    copy_box(c, out, 0, ds, x, 0, ss, ext);
    c.set_output(0, out);
}

launch::index_kind index_kind_of(exec::kernel_context& c, const char* op, const tensor& t,
                                 const char* what, bool allow_uint8) {
    switch (base_type(t.type())) {
        case dtype::int32:
            return launch::index_kind::int32;
        case dtype::int64:
            return launch::index_kind::int64;
        case dtype::uint8:
            if (allow_uint8) return launch::index_kind::uint8;
            break;
        default:
            break;
    }
    c.fail(detail::cat(op, ": ", what, " must be int32 or int64 but is ", t.describe()));
}

void gather_kernel(exec::kernel_context& c) {
    const char* op = "GatherV2";
    tensor params = c.input(0);
    tensor indices = c.input(1);
    const std::int64_t axis = od::int_scalar(op, c.input(2), "axis");
    std::int64_t batch_dims = c.attr_or<std::int64_t>("batch_dims", 0);
    const auto kind = index_kind_of(c, op, indices, "indices", false);
    if (params.rank() == 0) c.fail(detail::cat(op, ": params must be at least 1-D, got a scalar"));
    const int ax = od::normalize_axis(op, axis, params.rank());
    if (batch_dims < 0) batch_dims += indices.rank();
    if (batch_dims < 0 || batch_dims > indices.rank() || batch_dims > ax) {
        c.fail(detail::cat(op, ": batch_dims ", batch_dims, " must be in [0, min(axis ", ax,
                           ", rank(indices) ", indices.rank(), ")]"));
    }
    const auto bd = static_cast<std::size_t>(batch_dims);
    const auto& pd = params.shape().dims();
    const auto& id = indices.shape().dims();
    for (std::size_t i = 0; i < bd; ++i) {
        if (pd[i] != id[i]) {
            c.fail(detail::cat(op, ": params ", params.shape().str(), " and indices ",
                               indices.shape().str(), " differ in batch dim ", i));
        }
    }
    const auto uax = static_cast<std::size_t>(ax);
    dims_t out_dims(pd.begin(), pd.begin() + ax);
    out_dims.insert(out_dims.end(), id.begin() + batch_dims, id.end());
    out_dims.insert(out_dims.end(), pd.begin() + ax + 1, pd.end());
    tensor out = output(c, params.type(), shape(out_dims));
    if (out.num_elements() > 0) {
        launch::gather_f32(static_cast<const float*>(params.raw_data()), indices.raw_data(), kind,
                           static_cast<float*>(out.raw_data()), od::dim_product(pd, 0, bd),
                           od::dim_product(pd, bd, uax), pd[uax],
                           od::dim_product(pd, uax + 1, pd.size()),
                           od::dim_product(id, bd, id.size()), stream_of(c).native());
    }
    c.set_output(0, out);
}

void one_hot_kernel(exec::kernel_context& c) {
    const char* op = "OneHot";
    tensor indices = c.input(0);
    const std::int64_t depth = od::int_scalar(op, c.input(1), "depth");
    tensor on = c.input(2), off = c.input(3);
    const std::int64_t axis = c.attr_or<std::int64_t>("axis", -1);
    od::require_same_dtype(op, on, "on_value", off, "off_value");
    if (on.rank() != 0 || off.rank() != 0) {
        c.fail(detail::cat(op, ": on_value and off_value must be scalars, got ", on.shape().str(),
                           " and ", off.shape().str()));
    }
    if (depth < 0) c.fail(detail::cat(op, ": depth must be non-negative, got ", depth));
    const int r = indices.rank();
    if (axis < -1 || axis > r)
        c.fail(detail::cat(op, ": axis must be -1 or in [0, ", r, "], got ", axis));
    const auto kind = index_kind_of(c, op, indices, "indices", true);
    const auto ax = static_cast<std::size_t>(axis == -1 ? r : axis);
    auto out_dims = indices.shape().dims();
    out_dims.insert(out_dims.begin() + static_cast<std::ptrdiff_t>(ax), depth);
    const auto& id = indices.shape().dims();
    tensor out = output(c, on.type(), shape(out_dims));
    if (out.num_elements() > 0) {
        launch::one_hot_f32(indices.raw_data(), kind, static_cast<float*>(out.raw_data()),
                            od::dim_product(id, 0, ax), depth, od::dim_product(id, ax, id.size()),
                            static_cast<const float*>(on.raw_data()),
                            static_cast<const float*>(off.raw_data()), stream_of(c).native());
    }
    c.set_output(0, out);
}

void fill_kernel(exec::kernel_context& c) {
    const char* op = "Fill";
    const auto dims = od::int_list(op, c.input(0), "dims");
    tensor value = c.input(1);
    if (value.rank() != 0)
        c.fail(detail::cat(op, ": value must be a scalar but has shape ", value.shape().str()));
    for (auto d : dims) {
        if (d < 0) c.fail(detail::cat(op, ": dims ", od::list_str(dims), " has a negative dim"));
    }
    tensor out = output(c, value.type(), shape(dims));
    launch::fill_from_device_f32(static_cast<float*>(out.raw_data()), out.num_elements(),
                                 static_cast<const float*>(value.raw_data()),
                                 stream_of(c).native());
    c.set_output(0, out);
}

}  // namespace

void register_array(exec::kernel_registry& r) {
    const auto cuda = device_kind::cuda;
    r.add(cuda, "Transpose", transpose_kernel, float_kernel({1}));
    r.add(
        cuda, "ConcatV2",
        [](exec::kernel_context& c) {
            const int n = c.num_inputs() - 1;
            const std::int64_t axis = od::int_scalar("ConcatV2", host_input(c, n), "axis");
            std::vector<tensor> values;
            for (int i = 0; i < n; ++i) values.push_back(c.input(i));
            c.set_output(0, concat_device(c, "ConcatV2", values, axis));
        },
        float_kernel());  // the axis (input N) is read on the host by the kernel itself
    r.add(
        cuda, "Pack",
        [](exec::kernel_context& c) {
            const char* op = "Pack";
            std::vector<tensor> values;
            for (int i = 0; i < c.num_inputs(); ++i) values.push_back(c.input(i));
            if (values.empty()) c.fail(detail::cat(op, ": needs at least one input"));
            for (std::size_t k = 0; k < values.size(); ++k) {
                if (!(values[k].shape() == values[0].shape())) {
                    c.fail(detail::cat(op, ": input ", k, " has shape ", values[k].shape().str(),
                                       " but input 0 has ", values[0].shape().str(),
                                       ": all must match"));
                }
            }
            const int ax =
                od::normalize_axis(op, c.attr_or<std::int64_t>("axis", 0), values[0].rank() + 1);
            for (auto& v : values) {
                auto d = v.shape().dims();
                d.insert(d.begin() + ax, 1);
                v = v.reshaped(shape(d));
            }
            c.set_output(0, values.size() == 1 ? values[0] : concat_device(c, op, values, ax));
        },
        float_kernel());
    r.add(
        cuda, "Unpack",
        [](exec::kernel_context& c) {
            const char* op = "Unpack";
            tensor x = c.input(0);
            const std::int64_t num = c.attr_or<std::int64_t>("num", -1);
            if (x.rank() == 0) c.fail(detail::cat(op, ": cannot unpack a scalar"));
            const int ax = od::normalize_axis(op, c.attr_or<std::int64_t>("axis", 0), x.rank());
            const std::int64_t n = x.dim(ax);
            if (num >= 0 && num != n) {
                c.fail(detail::cat(op, ": num is ", num, " but value ", x.shape().str(), " has ", n,
                                   " slices along axis ", ax));
            }
            auto parts = split_device(c, x, ax, dims_t(static_cast<std::size_t>(n), 1));
            auto d = x.shape().dims();
            d.erase(d.begin() + ax);
            for (auto& p : parts) p = p.reshaped(shape(d));
            set_outputs(c, parts);
        },
        float_kernel());
    r.add(cuda, "Slice", slice_kernel, float_kernel({1, 2}));
    r.add(cuda, "StridedSlice", strided_slice_kernel, float_kernel({1, 2, 3}));
    r.add(
        cuda, "Split",
        [](exec::kernel_context& c) {
            const char* op = "Split";
            const std::int64_t axis = od::int_scalar(op, c.input(0), "split_dim");
            tensor x = c.input(1);
            const std::int64_t num_split = c.attr_int("num_split");
            const int ax = od::normalize_axis(op, axis, x.rank(), "split_dim");
            const std::int64_t n = x.dim(ax);
            if (num_split < 1 || n % num_split != 0) {
                c.fail(detail::cat(op, ": num_split ", num_split, " does not evenly divide dim ",
                                   ax, " (", n, ") of ", x.shape().str()));
            }
            set_outputs(
                c,
                split_device(c, x, ax, dims_t(static_cast<std::size_t>(num_split), n / num_split)));
        },
        float_kernel({0}));
    r.add(
        cuda, "SplitV",
        [](exec::kernel_context& c) {
            const char* op = "SplitV";
            tensor x = c.input(0);
            const auto size_splits = od::int_list(op, c.input(1), "size_splits");
            const std::int64_t axis = od::int_scalar(op, c.input(2), "split_dim");
            const int ax = od::normalize_axis(op, axis, x.rank(), "split_dim");
            set_outputs(c, split_device(c, x, ax, od::resolve_split_sizes(op, size_splits, x, ax)));
        },
        float_kernel({1, 2}));
    r.add(
        cuda, "Pad", [](exec::kernel_context& c) { pad_kernel(c, false); }, float_kernel({1}));
    r.add(
        cuda, "PadV2", [](exec::kernel_context& c) { pad_kernel(c, true); }, float_kernel({1, 2}));
    r.add(cuda, "Tile", tile_kernel, float_kernel({1}));
    r.add(cuda, "GatherV2", gather_kernel, float_kernel({2}, "Tparams"));
    r.add(cuda, "OneHot", one_hot_kernel, float_kernel({1}));
    r.add(cuda, "Fill", fill_kernel, float_kernel({0}));
}

}  // namespace graft::cuda::families
