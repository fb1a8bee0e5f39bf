// graft/dist/sharded_checkpoint.hpp — TensorFlow's sharded V2 checkpoints from a multi-rank job:
// every rank writes the variables it owns, rank 0 merges the shards' entries into one .index (TF's
// MergeV2Checkpoints step), and the result is what TF's sharded Saver writes:
//
//   <prefix>.index                       one index, header num_shards = N (the number of ranks)
//   <prefix>.data-0000k-of-0000N         rank k's tensors (k = 0 .. N-1)
//
//   auto vars = graft::find_variables(mg);                       // model + optimizer slots
//   graft::dist::sharded_save(s, vars, "run/model.ckpt-100");    // every rank calls it
//   graft::dist::sharded_restore(s, vars, "run/model.ckpt-100"); // every rank reads what it needs
//
// Who writes what: the variables with a checkpoint key, sorted by (key, slice), are dealt out to the
// ranks deterministically: shard_assignment::greedy_bytes (default) takes them largest first (ties
// in key order) and gives each to the rank with the fewest bytes so far (ties: the lowest rank);
// round_robin gives the i-th in key order to rank i % N. Every rank computes the same plan from its
// own variables; the ranks compare a hash of it first, so a rank whose graph differs is an error on
// every rank, not a silently wrong checkpoint.
//
// The save, step by step (each step ends with an agreement: every rank's error message is gathered
// by every rank, so a failure anywhere is a dist_error on every rank that names the failing rank and
// what it was writing; no rank waits forever for one that gave up):
//   1. rank 0 picks a temporary folder "<prefix>_temp_<pid>-<hex>" (TF1's Saver: "<prefix>_temp_<uuid>")
//      and removes the folders and "*.tempstate<pid>-*" files that dead saves of this prefix left;
//   2. rank k writes its bundle "<tmp>/part-0000k-of-0000N" (.index + .data-00000-of-00001; TF's
//      ShardedFilename names), fsync'd; a rank without variables writes an empty one, so there are
//      always N data files and num_shards = N;
//   3. rank 0 reads the N part indexes (small), gives rank k's entries shard_id k (TF's merge gives
//      each input's data file an id in input order: the same ids), and puts the whole set in place
//      with a file_set_writer anchored at the prefix (graft/core/file_set.hpp): each part's data file
//      is renamed into the set's temporary name for its final name, the merged index is written, the
//      data files of an older checkpoint with another shard count are dropped, then commit().
// So until commit() nothing under the final names changes, and commit() replaces an existing
// checkpoint crash-safely: a rank (rank 0 included) that dies anywhere in the save leaves the
// previous checkpoint whole for the next reader (bundle_reader runs the recovery rule), and the next
// save removes what the dead one left. Rank 0 also updates the `checkpoint` state file, as the Saver
// does (sharded_save_options::write_state). The files live on a file system every rank sees
// (one machine, or a shared mount); the stale-folder rule compares pids, so it assumes rank 0 runs
// on the same host from save to save.
//
// Restore: each rank opens the index and reads only the entries of the variables it is given
// (bundle_reader opens data files lazily and preads each entry's bytes: no data file is read whole);
// the report counts the bytes read and the shards opened. Variables are assigned only when every
// rank read all of its own. Checkpoints TF wrote with any number of shards restore the same way.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graft/core/file_set.hpp"
#include "graft/core/io.hpp"
#include "graft/dist/communicator.hpp"
#include "graft/exec/session.hpp"
#include "graft/exec/variable_store.hpp"
#include "graft/graph/variables.hpp"
#include "graft/formats/tf/bundle.hpp"
#include "graft/formats/tf/bundle_writer.hpp"
#include "graft/formats/tf/checkpoint_state.hpp"
#include "graft/formats/tf/ckpt_proto.hpp"
#include "graft/formats/tf/sstable.hpp"
#include "graft/formats/tf/tensor_slice.hpp"

namespace graft::dist {

/// How sharded_save deals the variables out to the ranks (see the header comment).
enum class shard_assignment { greedy_bytes, round_robin };

struct sharded_save_options {
    shard_assignment assignment = shard_assignment::greedy_bytes;
    bool sync = true;                          ///< fsync files and folders (off: faster, not crash-safe)
    bool write_state = true;                   ///< rank 0 names the prefix in <dir>/<latest_filename>
    std::string latest_filename = "checkpoint";
};

/// One variable (or one partition of a partitioned variable) of a sharded save, and its writer.
struct shard_item {
    std::string key;         ///< checkpoint key (a partition's full name)
    std::string slice;       ///< TF's slice spec of a partition ("0,5:-"), "" for a whole tensor
    std::string variable;    ///< variable node
    std::uint64_t bytes = 0; ///< element count x element size (strings: element count)
    int rank = 0;            ///< the rank that writes it
    std::size_t var = 0;     ///< index into the caller's variable list
};

/// What sharded_save did on this rank.
struct save_report {
    std::string prefix;
    int num_shards = 0;              ///< = the number of ranks
    int rank = 0;
    std::vector<shard_item> plan;    ///< every item of the save with its rank, sorted by key (same on every rank)
    std::vector<std::string> keys;   ///< the keys this rank wrote
    std::uint64_t bytes = 0;         ///< tensor data bytes this rank wrote
    std::vector<std::string> files;  ///< the checkpoint's files: the index, then data files by shard id
};

/// What sharded_restore did on this rank.
struct sharded_restore_report {
    std::string prefix;                  ///< the checkpoint read
    int num_shards = 0;                  ///< data files of the checkpoint
    std::vector<std::string> restored;   ///< variable names set
    std::vector<std::string> missing;    ///< variables whose key the checkpoint lacks (non-strict)
    std::uint64_t bytes_read = 0;        ///< stored bytes of the entries read
    std::set<int> shards_read;           ///< shard ids whose data file was read
};

/// TF's ShardedFilename: "<base>-0000k-of-0000N". Never throws (except bad_alloc).
inline std::string sharded_filename(const std::string& base, int shard, int num_shards) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "-%05d-of-%05d", shard, num_shards);
    return base + buf;
}

/// Deals `items` out to `ranks` ranks (sets each item's rank) and returns them sorted by (key,
/// slice). Deterministic: the same items give the same plan on every rank. Throws
/// invalid_argument_error when ranks < 1.
inline std::vector<shard_item> plan_shards(std::vector<shard_item> items, int ranks, shard_assignment how) {
    if (ranks < 1) throw invalid_argument_error(graft::detail::cat("plan_shards: ", ranks, " ranks"));
    auto by_key = [](const shard_item& a, const shard_item& b) {
        return a.key != b.key ? a.key < b.key : a.slice < b.slice;
    };
    std::sort(items.begin(), items.end(), by_key);
    if (how == shard_assignment::round_robin) {
        for (std::size_t i = 0; i < items.size(); ++i) items[i].rank = static_cast<int>(i % static_cast<std::size_t>(ranks));
        return items;
    }
    std::vector<std::size_t> order(items.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return items[a].bytes > items[b].bytes; });
    std::vector<std::uint64_t> load(static_cast<std::size_t>(ranks), 0);
    for (auto i : order) {
        auto r = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
        items[i].rank = static_cast<int>(r);
        load[r] += items[i].bytes;
    }
    return items;
}

namespace detail {

/// The slice of a partition variable, from its SaveSliceInfoDef.
inline tf::tensor_slice slice_of(const save_slice_info& si) {
    std::vector<std::pair<std::int64_t, std::int64_t>> ext;
    for (std::size_t i = 0; i < si.var_offset.size() && i < si.var_shape.size(); ++i) ext.emplace_back(si.var_offset[i], si.var_shape[i]);
    return tf::tensor_slice(ext);
}

/// The host value of variable `v` in the session. Throws not_found_error, graph_error (uninitialized).
inline tensor variable_value(exec::session& s, const variable_info& v) {
    const node* n = s.g().find(v.node);
    if (!n) {
        throw not_found_error(graft::detail::cat("variable '", v.node, "' is not in the session's graph"),
                              location::at_node(v.node), "pass the variables of the graph the session runs");
    }
    auto var = s.variables().find(exec::variable_key(*n));
    if (!var || !var->initialized()) {
        throw graph_error(graft::detail::cat("cannot save uninitialized variable '", v.node, "'"), location::at_tensor(v.node),
                          "run the init op or restore the variables before saving");
    }
    return var->read();
}

/// The items of a save: every variable with a checkpoint key. Throws like variable_value().
inline std::vector<shard_item> save_items(exec::session& s, const std::vector<variable_info>& vars) {
    std::vector<shard_item> items;
    for (std::size_t i = 0; i < vars.size(); ++i) {
        const auto& v = vars[i];
        if (v.checkpoint_key.empty()) continue;
        tensor t = variable_value(s, v);
        shard_item it;
        it.key = v.checkpoint_key;
        it.slice = v.save_slice ? slice_of(*v.save_slice).str() : std::string();
        it.variable = v.node;
        it.bytes = static_cast<std::uint64_t>(t.num_elements()) * (t.type() == dtype::string ? 1 : dtype_size(t.type()));
        it.var = i;
        items.push_back(std::move(it));
    }
    return items;
}

/// FNV-1a over the plan, so the ranks can check that they agree on it.
inline std::int64_t plan_hash(const std::vector<shard_item>& plan) {
    std::uint64_t h = 1469598103934665603ull;
    auto mix = [&](const void* p, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 1099511628211ull;
    };
    for (const auto& it : plan) {
        mix(it.key.data(), it.key.size() + 0);
        mix("\0", 1);
        mix(it.slice.data(), it.slice.size());
        mix("\0", 1);
        mix(&it.bytes, sizeof it.bytes);
        mix(&it.rank, sizeof it.rank);
    }
    return static_cast<std::int64_t>(h);
}

/// Every rank's message ("" = this rank is fine), gathered by every rank, rank order. Throws dist_error.
inline std::vector<std::string> gather_messages(communicator& c, const std::string& mine, const std::string& label) {
    tensor len = tensor::from_vector<std::int64_t>({1}, {static_cast<std::int64_t>(mine.size())});
    tensor lens = c.allgather(len, label);
    std::vector<std::string> out(static_cast<std::size_t>(c.size()));
    std::int64_t total = 0;
    for (int r = 0; r < c.size(); ++r) total += lens.data<std::int64_t>()[r];
    if (total == 0) return out;
    tensor bytes(dtype::uint8, graft::shape{static_cast<std::int64_t>(mine.size())});
    if (!mine.empty()) std::memcpy(bytes.raw_data(), mine.data(), mine.size());
    tensor all = c.allgather(bytes, label);
    const char* p = static_cast<const char*>(all.raw_data());
    for (int r = 0; r < c.size(); ++r) {
        auto n = static_cast<std::size_t>(lens.data<std::int64_t>()[r]);
        out[static_cast<std::size_t>(r)].assign(p, n);
        p += n;
    }
    return out;
}

/// Throws the same dist_error on every rank when any rank's `mine` is not empty; the message names
/// each failed rank and what it said. Throws dist_error.
inline void agree(communicator& c, const std::string& mine, const std::string& what, const std::string& file,
                  const std::string& hint) {
    auto all = gather_messages(c, mine, what);
    std::string msg;
    for (int r = 0; r < c.size(); ++r) {
        const auto& m = all[static_cast<std::size_t>(r)];
        if (!m.empty()) msg += graft::detail::cat(msg.empty() ? "" : "; ", "rank ", r, ": ", m);
    }
    if (msg.empty()) return;
    throw dist_error(graft::detail::cat(what, " failed (seen by rank ", c.rank(), " of ", c.size(), ") on ", msg),
                     location::in_file(file), hint);
}

/// True when `pid` names no process on this host. Never throws.
inline bool process_gone(long pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

/// Rank 0, before a save of `prefix`: removes "<base>_temp_<pid>-*" folders and "<base>.*.tempstate<pid>-*"
/// files whose process is gone (what killed saves left). Best effort; never throws.
inline void remove_dead_saves(const std::string& prefix) {
    namespace fs = std::filesystem;
    const fs::path dir = graft::detail::dir_of(prefix);
    const std::string base = fs::path(prefix).filename().string();
    const std::string temp_stem = base + "_temp_";
    std::error_code ec;
    std::vector<fs::path> dead_dirs;
    std::set<std::string> finals;
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        const std::string n = it->path().filename().string();
        if (n.compare(0, temp_stem.size(), temp_stem) == 0) {
            long pid = 0;
            std::size_t i = temp_stem.size();
            for (; i < n.size() && n[i] >= '0' && n[i] <= '9' && pid < 1'000'000'000; ++i) pid = pid * 10 + (n[i] - '0');
            if (i < n.size() && n[i] == '-' && process_gone(pid)) dead_dirs.push_back(it->path());
        } else if (n.compare(0, base.size() + 1, base + ".") == 0) {
            auto at = n.find(atomic_file::temp_marker, base.size());
            if (at != std::string::npos) finals.insert((dir / n.substr(0, at)).string());
        }
    }
    for (auto& d : dead_dirs) fs::remove_all(d, ec);
    for (auto& f : finals) graft::detail::remove_stale_temps(f);
}

/// Rank 0's merge and commit: the N part bundles in `tmp` become the checkpoint at `prefix` (one file
/// set). Returns the final files. Throws io_error, format_error, invalid_argument_error.
inline std::vector<std::string> merge_parts(const std::string& tmp, const std::string& prefix, int n, bool sync) {
    namespace fs = std::filesystem;
    std::map<std::string, tf::proto::bundle_entry> entries;
    std::optional<tf::proto::bundle_header> first;
    for (int k = 0; k < n; ++k) {
        const std::string part = (fs::path(tmp) / sharded_filename("part", k, n)).string();
        const std::string index = tf::bundle_index_filename(part);
        auto table = tf::sstable::table_reader::open(index);
        auto it = table.begin();
        if (!it.valid() || !it.key().empty()) throw format_error("missing header entry", location::in_file(index, 0));
        auto h = tf::proto::decode_header(tf::wire::reader(it.value(), index, it.value_offset(), "BundleHeaderProto"));
        if (h.num_shards != 1) {
            throw format_error(graft::detail::cat("a part of a sharded save has ", h.num_shards, " shards, not 1"),
                               location::in_file(index));
        }
        if (!first) {
            first = h;
        } else if (h.endianness != first->endianness || !(h.version == first->version)) {
            throw invalid_argument_error("the parts of a sharded save disagree on endianness or format version",
                                         location::in_file(index));
        }
        for (it.next(); it.valid(); it.next()) {
            std::string key(it.key());
            auto e = tf::proto::decode_entry(tf::wire::reader(it.value(), index, it.value_offset(), "BundleEntryProto"));
            e.shard_id = k;
            auto found = entries.find(key);
            if (found == entries.end()) {
                entries.emplace(std::move(key), std::move(e));
                continue;
            }
            auto& have = found->second;  // a partitioned tensor whose partitions several ranks wrote
            if (have.slices.empty() || e.slices.empty() || have.type != e.type || !(have.shape == e.shape)) {
                throw invalid_argument_error(graft::detail::cat("tensor '", key, "' is written by more than one rank (last: rank ", k, ")"),
                                             location::at_tensor(key), "give each variable one checkpoint key");
            }
            have.slices.insert(have.slices.end(), e.slices.begin(), e.slices.end());
        }
    }
    tf::proto::bundle_header out = first ? *first : tf::proto::bundle_header{};
    out.num_shards = n;
    tf::sstable::table_builder b;
    b.add("", tf::proto::encode(out));
    for (const auto& [k, e] : entries) b.add(k, tf::proto::encode(e));

    file_set_writer set(prefix, sync);
    std::vector<std::string> files{tf::bundle_index_filename(prefix)};
    std::set<std::string> keep{files[0]};
    for (int k = 0; k < n; ++k) {
        const std::string from = tf::bundle_data_filename((fs::path(tmp) / sharded_filename("part", k, n)).string(), 0, 1);
        const std::string to = tf::bundle_data_filename(prefix, k, n);
        atomic_file& f = set.add(to);
        // The part's data (fsync'd by its writer) takes the place of the set's empty temporary file:
        // commit() renames it over the final name with the rest of the set.
        if (graft::detail::fops().rename(from.c_str(), f.temp_path().c_str()) != 0) {
            throw io_error(graft::detail::cat("cannot move rank ", k, "'s shard into place: ", graft::detail::errno_text()),
                           location::in_file(from), "the temporary folder and the checkpoint must be on one file system");
        }
        files.push_back(to);
        keep.insert(to);
    }
    set.add(files[0]).write(b.finish());
    // An older checkpoint at this prefix with another shard count: its data files go with it.
    const std::string data_stem = fs::path(prefix).filename().string() + ".data-";
    std::error_code ec;
    const fs::path dir = graft::detail::dir_of(prefix);
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        const std::string full = (fs::path(prefix).parent_path() / name).string();
        if (name.compare(0, data_stem.size(), data_stem) != 0 || keep.count(full)) continue;
        if (name.find(atomic_file::temp_marker) != std::string::npos || name.find(".graft-") != std::string::npos) continue;
        set.remove(full);
    }
    set.commit();
    return files;
}

/// Rank 0: names `prefix` as the latest checkpoint in its folder's state file. Throws io_error, format_error.
inline void record_state(const std::string& prefix, const std::string& filename) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(prefix).parent_path();
    const std::string d = dir.empty() ? "." : dir.string();
    auto rel = [&](const std::string& p) {
        return fs::path(p).parent_path() == dir ? fs::path(p).filename().string() : p;
    };
    tf::checkpoint_state st;
    std::optional<tf::checkpoint_state> old;
    try {
        old = tf::read_checkpoint_state(d, filename);
    } catch (const format_error&) {
        // an unreadable state file is rewritten from scratch, as the Saver's would be
    }
    if (old) {
        for (auto& p : old->all_model_checkpoint_paths) {
            if (rel(p) != rel(prefix)) st.all_model_checkpoint_paths.push_back(rel(p));
        }
    }
    st.model_checkpoint_path = rel(prefix);
    st.all_model_checkpoint_paths.push_back(rel(prefix));
    tf::write_checkpoint_state(d, st, filename);
}

}  // namespace detail

/// Saves `vars` (those with a checkpoint key; partition variables as slices of their full tensor)
/// from the session as one TF V2 checkpoint at `prefix` with one data file per rank. Every rank of
/// `comm` (default: world()) calls it with the same variables. Throws dist_error on every rank when
/// any rank fails (the message names the rank and the variable or file); the checkpoint at `prefix`
/// is then the previous one, unchanged.
inline save_report sharded_save(exec::session& s, const std::vector<variable_info>& vars, const std::string& prefix,
                                communicator* comm = nullptr, const sharded_save_options& opt = {}) {
    namespace fs = std::filesystem;
    std::shared_ptr<communicator> keep;
    if (!comm) {
        keep = world();
        comm = keep.get();
    }
    communicator& c = *comm;
    const int n = c.size(), me = c.rank();
    const std::string what = graft::detail::cat("sharded save of '", prefix, "'");
    const std::string unchanged = "the checkpoint at this prefix is unchanged (the previous one, if any, stays readable)";
    save_report rep;
    rep.prefix = prefix;
    rep.num_shards = n;
    rep.rank = me;

    // 1. the plan, and every rank's agreement on it
    std::string err;
    try {
        rep.plan = plan_shards(detail::save_items(s, vars), n, opt.assignment);
    } catch (const std::exception& e) {
        err = e.what();
    }
    detail::agree(c, err, what, prefix, unchanged);
    tensor h = tensor::from_vector<std::int64_t>({1}, {detail::plan_hash(rep.plan)});
    tensor hashes = c.allgather(h, "sharded save plan");
    for (int r = 1; r < n; ++r) {
        if (hashes.data<std::int64_t>()[r] != hashes.data<std::int64_t>()[0]) {
            throw dist_error(graft::detail::cat(what, ": rank ", r, " saves other variables (keys, shapes or dtypes) than rank 0"),
                             location::in_file(prefix), "every rank must save the same variables of the same graph");
        }
    }

    // 2. the temporary folder, named by rank 0
    tensor token = tensor::from_vector<std::int64_t>({2}, {0, 0});
    if (me == 0) {
        detail::remove_dead_saves(prefix);
        std::random_device rd;
        token.data<std::int64_t>()[0] = static_cast<std::int64_t>(::getpid());
        token.data<std::int64_t>()[1] = static_cast<std::int64_t>(((static_cast<std::uint64_t>(rd()) << 32) ^ rd()) >> 1);
    }
    c.broadcast(token, 0, "sharded save folder");
    char hex[24];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(token.data<std::int64_t>()[1]));
    const std::string tmp = graft::detail::cat(prefix, "_temp_", token.data<std::int64_t>()[0], "-", hex);
    auto drop_tmp = [&] {
        std::error_code ec;
        if (me == 0) fs::remove_all(tmp, ec);
    };

    // 3. each rank's part bundle
    std::string writing;
    try {
        fs::create_directories(tmp);
        tf::bundle_writer w((fs::path(tmp) / sharded_filename("part", me, n)).string(), {.sync = opt.sync});
        for (const auto& it : rep.plan) {
            if (it.rank != me) continue;
            writing = graft::detail::cat("variable '", it.variable, "' (key '", it.key, "'): ");
            const variable_info& v = vars[it.var];
            tensor t = exec::to_host(detail::variable_value(s, v));
            if (v.save_slice) {
                w.add_slice(it.key, graft::shape(v.save_slice->full_shape), detail::slice_of(*v.save_slice), t);
            } else {
                w.add(it.key, t);
            }
            rep.keys.push_back(it.key);
            rep.bytes += t.nbytes();
        }
        writing = "writing its shard: ";
        w.finish();
        writing.clear();
    } catch (const std::exception& e) {
        err = writing + e.what();
    }
    try {
        detail::agree(c, err, what, prefix, unchanged);
    } catch (...) {
        drop_tmp();
        throw;
    }

    // 4. rank 0 merges and commits; every rank learns how it went
    std::vector<std::string> files;
    if (me == 0) {
        try {
            files = detail::merge_parts(tmp, prefix, n, opt.sync);
            if (opt.write_state) detail::record_state(prefix, opt.latest_filename);
        } catch (const std::exception& e) {
            err = graft::detail::cat("merging the shards: ", e.what());
        }
        drop_tmp();
    }
    detail::agree(c, err, what, prefix,
                  "rank 0's commit is all or nothing: the old checkpoint or the new one is in place, never a mix");
    rep.files.push_back(tf::bundle_index_filename(prefix));
    for (int k = 0; k < n; ++k) rep.files.push_back(tf::bundle_data_filename(prefix, k, n));
    return rep;
}

/// Sets `vars` (those with a checkpoint key and a node in the session's graph) from the checkpoint
/// at `prefix` (any shard count, TF's or graft's; a folder: the latest checkpoint its state file
/// names), reading only their entries. Every rank of `comm`
/// calls it (with its own list: a rank may restore fewer variables); variables are assigned only when
/// every rank read all of its own. strict: a missing key is an error. Throws dist_error on every rank
/// when any rank fails, naming it and the variable or file.
inline sharded_restore_report sharded_restore(exec::session& s, const std::vector<variable_info>& vars, const std::string& prefix,
                                              communicator* comm = nullptr, bool strict = true) {
    std::shared_ptr<communicator> keep;
    if (!comm) {
        keep = world();
        comm = keep.get();
    }
    communicator& c = *comm;
    sharded_restore_report rep;
    rep.prefix = prefix;
    std::vector<std::pair<std::size_t, tensor>> todo;
    std::string err, reading;
    try {
        std::error_code ec;
        if (std::filesystem::is_directory(prefix, ec)) {  // a folder: its state file's latest checkpoint
            auto latest = tf::latest_checkpoint(prefix);
            if (!latest) {
                throw not_found_error(graft::detail::cat("no checkpoint in folder '", prefix, "'"), location::in_file(prefix),
                                      "its 'checkpoint' file is missing or names no existing checkpoint");
            }
            rep.prefix = *latest;
        }
        tf::bundle_reader r(rep.prefix, {.verify_crc = true, .zero_copy = false});
        rep.num_shards = r.num_shards();
        auto count = [&](const tf::bundle_entry& e) {
            rep.bytes_read += static_cast<std::uint64_t>(std::max<std::int64_t>(e.size, 0));
            rep.shards_read.insert(e.shard_id);
        };
        for (std::size_t i = 0; i < vars.size(); ++i) {
            const auto& v = vars[i];
            if (v.checkpoint_key.empty() || !s.g().find(v.node)) continue;
            reading = graft::detail::cat("variable '", v.node, "' (key '", v.checkpoint_key, "'): ");
            const tf::bundle_entry* e = r.find(v.checkpoint_key);
            if (!e) {
                rep.missing.push_back(v.node);
                continue;
            }
            tensor t;
            if (v.save_slice || e->partitioned()) {
                const tf::tensor_slice want = v.save_slice ? detail::slice_of(*v.save_slice) : tf::tensor_slice(e->shape.rank());
                t = r.read_slice(v.checkpoint_key, want);
                if (!e->partitioned()) {
                    count(*e);
                } else {
                    for (const auto& sl : e->slices) {
                        if (tf::detail::overlap_count(sl, want, e->shape) == 0) continue;
                        if (auto* pe = r.find(tf::encode_slice_key(v.checkpoint_key, sl))) count(*pe);
                    }
                }
            } else {
                t = r.read(v.checkpoint_key);
                count(*e);
            }
            if (v.dtype != dtype::invalid && t.type() != v.dtype) {
                throw invalid_argument_error(graft::detail::cat("the checkpoint has ", t.describe(), ", the variable is ", dtype_name(v.dtype)),
                                             location::at_tensor(v.node).with_tensor(v.checkpoint_key));
            }
            if (!v.shape.compatible_with(t.shape())) {
                throw invalid_argument_error(graft::detail::cat("the checkpoint has shape ", t.shape().str(), ", the variable is ", v.shape.str()),
                                             location::at_tensor(v.node).with_tensor(v.checkpoint_key));
            }
            todo.emplace_back(i, t);
        }
        reading.clear();
        if (strict && !rep.missing.empty()) {
            std::string names;
            for (auto& m : rep.missing) names += (names.empty() ? "" : ", ") + m;
            throw not_found_error(graft::detail::cat("checkpoint '", rep.prefix, "' lacks variables: ", names), location::in_file(rep.prefix),
                                  "restore with strict = false to skip them");
        }
    } catch (const std::exception& e) {
        err = reading + e.what();
    }
    detail::agree(c, err, graft::detail::cat("sharded restore of '", prefix, "'"), prefix, "no variable was changed on any rank");
    for (auto& [i, t] : todo) {
        const auto& v = vars[i];
        const node* n = s.g().find(v.node);
        auto var = s.variables().get_or_create(exec::variable_key(*n), v.dtype, v.shape);
        var->assign(t, v.shape.rank_known());
        rep.restored.push_back(v.node);
    }
    return rep;
}

}  // namespace graft::dist
