// graft/exec/cpu_kernels/saver_v1.hpp — TF's V1 Saver ops that write (Save, SaveSlices): one V1
// checkpoint file (TF's TensorSliceWriter table, graft/formats/tf/checkpoint_v1_writer.hpp) holding the
// given tensors, or the slices that shapes_and_slices names ("10 3 0,5:-"). Restore and
// RestoreSlice read V1 files back (checkpoint_ops.hpp; RestoreV2 falls back to V1 as TF does).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "graft/exec/kernel.hpp"
#include "graft/formats/tf/checkpoint_v1_writer.hpp"
#include "graft/formats/tf/tensor_slice.hpp"

namespace graft::exec::kernels {

namespace saver_v1_detail {

/// Input i as a string tensor of `n` elements (n < 0: a scalar). Throws graph_error naming the node.
inline std::vector<std::string> strings(kernel_context& c, int i, const char* what, std::int64_t n) {
    tensor t = c.input(i);
    if (t.type() != dtype::string || (n < 0 && t.rank() != 0) || (n >= 0 && t.num_elements() != n)) {
        c.fail(n < 0 ? detail::cat(what, " must be a string scalar, given ", t.describe())
                     : detail::cat(what, " must have ", n, " string elements (one per tensor saved), given ", t.describe()));
    }
    return {t.data<std::string>(), t.data<std::string>() + t.num_elements()};
}

/// Save (with_slices false) / SaveSlices: inputs filename, tensor_names[, shapes_and_slices], data...
inline void save(kernel_context& c, bool with_slices) {
    const int fixed = with_slices ? 3 : 2;
    const std::int64_t n = c.num_inputs() - fixed;
    const std::string filename = strings(c, 0, "filename", -1)[0];
    const auto names = strings(c, 1, "tensor_names", n);
    const auto specs = with_slices ? strings(c, 2, "shapes_and_slices", n) : std::vector<std::string>(names.size());
    try {
        auto dir = std::filesystem::path(filename).parent_path();
        if (!dir.empty()) std::filesystem::create_directories(dir);
        tf::v1_writer w(filename);
        for (std::size_t i = 0; i < names.size(); ++i) {
            tensor t = c.input(fixed + static_cast<int>(i));
            if (specs[i].empty()) {
                w.add(names[i], t);
                continue;
            }
            auto s = tf::parse_slice_spec(specs[i]);
            if (!(s.slice.slice_shape(s.full_shape) == t.shape())) {
                c.fail(detail::cat("Slice in shape_and_slice specification does not match the shape of the tensor to "
                                   "save: ", specs[i], ", tensor: ", t.describe(), " ('", names[i], "')"));
            }
            w.add_slice(names[i], s.full_shape, s.slice, t);
        }
        w.finish();
    } catch (const graph_error&) {
        throw;
    } catch (const std::filesystem::filesystem_error& e) {
        c.fail(detail::cat("cannot create the directory of '", filename, "': ", e.what()));
    } catch (const io_error& e) {
        throw io_error(e.message() + " (" + e.where().to_string() + ")", location::at_node(c.name(), c.n().op), e.hint());
    } catch (const unimplemented_error& e) {
        throw unimplemented_error(e.message(), location::at_node(c.name(), c.n().op), e.hint());
    } catch (const invalid_argument_error& e) {
        throw invalid_argument_error(e.message(), location::at_node(c.name(), c.n().op), e.hint());
    }
}

}  // namespace saver_v1_detail

inline void register_saver_v1(kernel_registry& r) {
    r.add("Save", [](kernel_context& c) { saver_v1_detail::save(c, false); });
    r.add("SaveSlices", [](kernel_context& c) { saver_v1_detail::save(c, true); });
}

}  // namespace graft::exec::kernels
