// graft/exec/cpu_kernels/checkpoint_ops.hpp — TensorFlow's save/restore ops run through graft's
// checkpoint module, so a TF graph's `save/restore_all` and `save/control_dependency` work as in TF:
// SaveV2, RestoreV2, MergeV2Checkpoints, ShardedFilename, ShardedFilespec, StringJoin,
// StaticRegexFullMatch, and the V1 Restore / RestoreSlice readers (graft writes no V1 files: Save and
// SaveSlices are import_only).
#pragma once

#include <cstdio>
#include <filesystem>
#include <regex>

#include "graft/exec/kernel.hpp"
#include "graft/formats/tf/bundle_merge.hpp"
#include "graft/formats/tf/bundle_writer.hpp"
#include "graft/formats/tf/checkpoint.hpp"

namespace graft::exec::kernels {

namespace impl {
inline const std::string& scalar_string(kernel_context& c, int i, const char* what) {
    tensor t = c.input(i);
    if (t.type() != dtype::string || t.num_elements() != 1) {
        c.fail(detail::cat(what, " must be a string scalar, got ", t.describe()));
    }
    return t.data<std::string>()[0];
}
inline std::vector<std::string> string_list(kernel_context& c, int i, const char* what) {
    tensor t = c.input(i);
    if (t.type() != dtype::string) c.fail(detail::cat(what, " must be strings, got ", t.describe()));
    return {t.data<std::string>(), t.data<std::string>() + t.num_elements()};
}
}  // namespace impl

inline void register_checkpoint_ops(kernel_registry& r) {
    r.add("SaveV2", [](kernel_context& c) {
        std::string prefix = impl::scalar_string(c, 0, "SaveV2 prefix");
        auto names = impl::string_list(c, 1, "SaveV2 tensor_names");
        auto specs = impl::string_list(c, 2, "SaveV2 shape_and_slices");
        if (names.size() != specs.size() || static_cast<int>(names.size()) != c.num_inputs() - 3) {
            c.fail(detail::cat("SaveV2 got ", names.size(), " names, ", specs.size(), " slice specs and ",
                               c.num_inputs() - 3, " tensors; they must match"));
        }
        auto dir = std::filesystem::path(prefix).parent_path();
        if (!dir.empty()) std::filesystem::create_directories(dir);
        tf::bundle_writer w(prefix);
        for (std::size_t i = 0; i < names.size(); ++i) {
            tensor t = c.input(static_cast<int>(i) + 3);
            if (specs[i].empty()) {
                w.add(names[i], t);
            } else {
                auto s = tf::parse_slice_spec(specs[i]);
                w.add_slice(names[i], s.full_shape, s.slice, t);
            }
        }
        w.finish();
    });
    r.add("RestoreV2", [](kernel_context& c) {
        std::string prefix = impl::scalar_string(c, 0, "RestoreV2 prefix");
        auto names = impl::string_list(c, 1, "RestoreV2 tensor_names");
        auto specs = impl::string_list(c, 2, "RestoreV2 shape_and_slices");
        if (names.size() != specs.size() || static_cast<int>(names.size()) != c.num_outputs()) {
            c.fail(detail::cat("RestoreV2 got ", names.size(), " names and ", specs.size(), " slice specs for ",
                               c.num_outputs(), " outputs"));
        }
        const auto& dtypes = c.attr("dtypes").list_of<dtype>();
        tf::checkpoint_reader reader(prefix);
        for (std::size_t i = 0; i < names.size(); ++i) {
            tensor t;
            if (specs[i].empty()) {
                t = reader.read(names[i]);
            } else if (auto* b = reader.bundle()) {
                t = b->read_slice(names[i], tf::parse_slice_spec(specs[i]).slice);
            } else {
                c.fail("RestoreV2 of a slice from a V1 checkpoint is not supported", "restore the whole tensor");
            }
            if (i < dtypes.size() && t.type() != dtypes[i]) {
                c.fail(detail::cat("tensor '", names[i], "' in checkpoint '", prefix, "' is ", t.describe(),
                                   " but the graph expects ", dtype_name(dtypes[i])));
            }
            c.set_output(static_cast<int>(i), t);
        }
    });
    r.add("MergeV2Checkpoints", [](kernel_context& c) {
        auto inputs = impl::string_list(c, 0, "MergeV2Checkpoints checkpoint_prefixes");
        std::string dest = impl::scalar_string(c, 1, "MergeV2Checkpoints destination_prefix");
        tf::merge_bundles(inputs, dest);
        if (c.attr_or<bool>("delete_old_dirs", true)) {
            for (auto& p : inputs) {
                std::error_code ec;
                auto d = std::filesystem::path(p).parent_path();
                if (!d.empty() && d != std::filesystem::path(dest).parent_path()) std::filesystem::remove(d, ec);
            }
        }
    });
    r.add("ShardedFilename", [](kernel_context& c) {
        std::string base = impl::scalar_string(c, 0, "ShardedFilename basename");
        auto shard = c.input(1).flat<std::int32_t>()(0), n = c.input(2).flat<std::int32_t>()(0);
        char buf[64];
        std::snprintf(buf, sizeof buf, "-%05d-of-%05d", shard, n);
        c.set_output(0, tensor::scalar_of(base + buf));
    });
    r.add("ShardedFilespec", [](kernel_context& c) {
        std::string base = impl::scalar_string(c, 0, "ShardedFilespec basename");
        char buf[64];
        std::snprintf(buf, sizeof buf, "-of-%05d", c.input(1).flat<std::int32_t>()(0));
        c.set_output(0, tensor::scalar_of(base + "-" + std::string(5, '?') + buf));
    });
    r.add("StringJoin", [](kernel_context& c) {
        std::string sep = c.attr_or<std::string>("separator", "");
        std::int64_t n = 1;
        graft::shape out_shape;
        for (int i = 0; i < c.num_inputs(); ++i) {
            tensor t = c.input(i);
            if (t.num_elements() != 1) {
                if (n != 1 && n != t.num_elements()) c.fail("StringJoin inputs must be scalars or of one shape");
                n = t.num_elements();
                out_shape = t.shape();
            }
        }
        tensor out(dtype::string, out_shape);
        for (std::int64_t k = 0; k < n; ++k) {
            std::string s;
            for (int i = 0; i < c.num_inputs(); ++i) {
                tensor t = c.input(i);
                if (i) s += sep;
                s += t.data<std::string>()[t.num_elements() == 1 ? 0 : k];
            }
            out.data<std::string>()[k] = std::move(s);
        }
        c.set_output(0, out);
    });
    // TF2 Savers test whether the prefix is a remote path ("^s3://.*"): ECMAScript regexes cover the
    // RE2 patterns TF writes there; a pattern std::regex rejects is an error naming the node.
    r.add("StaticRegexFullMatch", [](kernel_context& c) {
        const std::string& pattern = c.attr_string("pattern");
        auto re = c.memo<std::regex>([&] {
            try {
                return std::regex(pattern, std::regex::ECMAScript);
            } catch (const std::regex_error& e) {
                c.fail("pattern '" + pattern + "' is not a regex graft can read: " + e.what(),
                       "StaticRegexFullMatch reads ECMAScript syntax (RE2's common subset)");
            }
        });
        tensor in = c.input(0);
        if (in.type() != dtype::string) c.fail("input must be string, given " + in.describe());
        tensor out(dtype::bool_, in.shape());
        for (std::int64_t k = 0; k < in.num_elements(); ++k) {
            out.data<bool>()[k] = std::regex_match(in.data<std::string>()[k], *re);
        }
        c.set_output(0, out);
    });
    auto restore_v1 = [](bool sliced) {
        return [sliced](kernel_context& c) {
            std::string pattern = impl::scalar_string(c, 0, "Restore file_pattern");
            std::string name = impl::scalar_string(c, 1, "Restore tensor_name");
            tf::checkpoint_reader reader(pattern);
            tensor t;
            if (sliced) {
                std::string spec = impl::scalar_string(c, 2, "RestoreSlice shape_and_slice");
                if (!spec.empty()) {
                    auto s = tf::parse_slice_spec(spec);
                    tensor full = reader.read(name);
                    if (full.shape() != s.full_shape) {
                        c.fail(detail::cat("tensor '", name, "' in '", pattern, "' is ", full.describe(),
                                           " but shape_and_slice '", spec, "' says its full shape is ",
                                           s.full_shape.str()),
                               "the slice spec must name the saved tensor's whole shape first");
                    }
                    tensor part(full.type(), s.slice.slice_shape(s.full_shape));
                    tf::copy_slice_overlap(s.full_shape, tf::tensor_slice(s.full_shape.rank()), full, s.slice, part);
                    t = part;
                }
            }
            if (!t.valid()) t = reader.read(name);
            dtype want = c.attr_type("dt");
            if (t.type() != want) {
                c.fail(detail::cat("tensor '", name, "' in '", pattern, "' is ", t.describe(), " but dt is ",
                                   dtype_name(want)));
            }
            c.set_output(0, t);
        };
    };
    r.add("Restore", restore_v1(false));
    r.add("RestoreSlice", restore_v1(true));
}

}  // namespace graft::exec::kernels
