// `graft ckpt ls|dump|rewrite|diff` — inspect, export, copy and compare TF checkpoints. PREFIX may be a
// V2 prefix, a V1 file, a SavedModel directory or a training directory with a `checkpoint` file.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "commands.hpp"
#include "graft/core.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf/checkpoint_rewrite.hpp"

namespace graft_cmd_ckpt {  // named, not anonymous: the CLI builds as one unity translation unit

std::string json_escape(const std::string& s) {
    std::string o;
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') { o += '\\'; o += static_cast<char>(c); }
        else if (c < 0x20) { char b[8]; std::snprintf(b, sizeof b, "\\u%04x", c); o += b; }
        else o += static_cast<char>(c);
    }
    return o;
}

/// Control bytes (and, for values, all non-ASCII bytes) as \xNN.
std::string printable(const std::string& s, bool ascii_only = false) {
    std::string o;
    for (unsigned char c : s) {
        if (c < 0x20 || c == 0x7F || (ascii_only && c > 0x7F)) { char b[8]; std::snprintf(b, sizeof b, "\\x%02x", c); o += b; }
        else o += static_cast<char>(c);
    }
    return o;
}

void cmd_ls(const std::string& path, bool json) {
    graft::tf::checkpoint_reader r(path);
    auto keys = r.keys();
    if (json) {
        std::cout << "{\"prefix\": \"" << json_escape(r.prefix()) << "\", \"format_version\": " << r.format_version()
                  << ", \"tensors\": [";
        for (std::size_t i = 0; i < keys.size(); ++i) {
            auto s = r.shape_of(keys[i]);
            std::cout << (i ? ",\n  " : "\n  ") << "{\"name\": \"" << json_escape(keys[i]) << "\", \"dtype\": \""
                      << graft::dtype_name(r.dtype_of(keys[i])) << "\", \"shape\": [";
            for (std::size_t d = 0; d < s.dims().size(); ++d) std::cout << (d ? ", " : "") << s.dims()[d];
            std::cout << "]}";
        }
        std::cout << (keys.empty() ? "]}\n" : "\n]}\n");
        return;
    }
    for (const auto& k : keys) {
        std::cout << printable(k) << " " << graft::dtype_name(r.dtype_of(k)) << " " << r.shape_of(k).str() << "\n";
    }
}

void cmd_dump(const std::string& path, const std::vector<std::string>& names, const std::string& npy_dir) {
    graft::tf::checkpoint_reader r(path);
    auto keys = names.empty() ? r.keys() : names;
    if (!npy_dir.empty()) std::filesystem::create_directories(npy_dir);
    for (const auto& k : keys) {
        graft::tensor t = r.read(k);
        if (!npy_dir.empty()) {
            std::string file = k;
            for (std::size_t p = 0; (p = file.find('/', p)) != std::string::npos; p += 2) file.replace(p, 1, "__");
            auto out = (std::filesystem::path(npy_dir) / (file + ".npy")).string();
            graft::write_npy(out, t);
            std::cout << printable(k) << " " << t.describe() << " -> " << out << "\n";
        } else {
            if (t.type() == graft::dtype::string) {  // escape control bytes (e.g. serialized protos)
                graft::tensor e(graft::dtype::string, t.shape());
                for (std::int64_t i = 0; i < t.num_elements(); ++i) e.data<std::string>()[i] = printable(t.data<std::string>()[i], true);
                t = e;
            }
            std::cout << printable(k) << " " << graft::dtype_name(t.type()) << " " << t.shape().str() << "\n"
                      << graft::to_string(t) << "\n";
        }
    }
}

void cmd_rewrite(const std::string& in, const std::string& out) {
    graft::tf::checkpoint_reader r(in);
    auto n = graft::tf::rewrite_checkpoint(r, out);
    std::cout << "wrote " << n << " entries of " << r.prefix() << " to " << out << "\n";
}

/// Prints what differs; returns true when the checkpoints hold the same tensors.
bool cmd_diff(const std::string& a_path, const std::string& b_path) {
    graft::tf::checkpoint_reader a(a_path), b(b_path);
    auto ka = a.keys(), kb = b.keys();
    std::set<std::string> sa(ka.begin(), ka.end()), sb(kb.begin(), kb.end());
    bool same = true;
    for (const auto& k : ka)
        if (!sb.count(k)) { std::cout << "only in A: " << printable(k) << "\n"; same = false; }
    for (const auto& k : kb)
        if (!sa.count(k)) { std::cout << "only in B: " << printable(k) << "\n"; same = false; }
    std::size_t equal_count = 0;
    for (const auto& k : ka) {
        if (!sb.count(k)) continue;
        auto da = a.dtype_of(k), db = b.dtype_of(k);
        auto sha = a.shape_of(k), shb = b.shape_of(k);
        if (da != db || !(sha == shb)) {
            std::cout << "differs: " << printable(k) << ": " << graft::dtype_name(da) << sha.str() << " vs "
                      << graft::dtype_name(db) << shb.str() << "\n";
            same = false;
            continue;
        }
        graft::tensor x = a.read(k), y = b.read(k);
        if (graft::equal(x, y)) { ++equal_count; continue; }
        same = false;
        if (da == graft::dtype::string) {
            std::int64_t n = 0;
            for (std::int64_t i = 0; i < x.num_elements(); ++i) n += x.data<std::string>()[i] != y.data<std::string>()[i];
            std::cout << "differs: " << printable(k) << ": " << n << " of " << x.num_elements() << " strings differ\n";
        } else {
            auto c = graft::compare_close(x, y, 0.0, 0.0);
            std::cout << "differs: " << printable(k) << ": max abs diff " << c.max_abs_diff << " at flat index "
                      << c.worst_index << "\n";
        }
    }
    std::cout << (same ? "identical: " : "checkpoints differ; ") << equal_count << " tensors equal\n";
    return same;
}

void add_ckpt(CLI::App& app) {
    auto* ck = app.add_subcommand("ckpt", "Inspect, export, rewrite and compare TensorFlow checkpoints");
    ck->require_subcommand(1);
    static std::string path, path2, npy_dir;
    static std::vector<std::string> names;
    static bool json = false;
    const char* where = "checkpoint: V2 prefix, V1 file, SavedModel dir or dir with a `checkpoint` file";

    auto* ls = ck->add_subcommand("ls", "List tensors: name dtype shape, sorted");
    ls->add_option("PREFIX", path, where)->required();
    ls->add_flag("--json", json, "Print JSON instead of lines");
    ls->callback([] { cmd_ls(path, json); });

    auto* dump = ck->add_subcommand("dump", "Print tensor values (numpy-like) or write them as .npy files");
    dump->add_option("PREFIX", path, where)->required();
    dump->add_option("NAME", names, "Tensors to dump (default: all)");
    dump->add_option("--npy", npy_dir, "Write DIR/<name with / as __>.npy instead of printing");
    dump->callback([] { cmd_dump(path, names, npy_dir); });

    auto* rw = ck->add_subcommand("rewrite", "Read every tensor and write a new V2 bundle (byte-identical for TF bundles)");
    rw->add_option("IN", path, where)->required();
    rw->add_option("OUT", path2, "Output prefix")->required();
    rw->callback([] { cmd_rewrite(path, path2); });

    auto* diff = ck->add_subcommand("diff", "Compare names, dtypes, shapes and values; exit 1 when they differ");
    diff->add_option("A", path, where)->required();
    diff->add_option("B", path2, where)->required();
    diff->callback([] {
        if (!cmd_diff(path, path2)) throw CLI::RuntimeError(1);
    });
}

graft::cli::registrar reg(200, &add_ckpt);

}  // namespace
