// graft/surgery/sync.hpp — job 5: an inference copy of a graph on another device, kept in sync with
// the trainer: in-process (sync() copies the weights of one session into a replica, all of them at
// once between two of its runs) or across processes (checkpoint_watcher notices a new `checkpoint`
// state, or a new checkpoint saved over the same prefix, reads that checkpoint completely into a
// standby set and swaps it in between requests).
// Link graft::compiled.
//
//   graft::graph inf = graft::surgery::inference_copy(trainer_mg.graph, {"logits"}, "/device:CPU:1");
//   graft::surgery::replica serving(std::move(inf));
//   graft::surgery::sync(trainer, serving);                     // every variable both graphs have
//   auto y = serving.run({{"x", x}}, {"logits:0"})[0];           // never sees half of a sync
//
//   graft::surgery::checkpoint_watcher w(serving, "train_dir");  // another process saves there
//   w.start();                                                   // polls every 20 ms in a thread
//
// Guarantees: a replica run sees the values of exactly one sync/install (runs hold a shared lock,
// installs swap every variable under the exclusive lock after all values are read and checked); a
// checkpoint is used only once the `checkpoint` state file names it (graft's Saver and TF's write
// the bundle first, then the state file atomically), and only when every variable was read and
// passed its crc, dtype and shape checks; a checkpoint deleted while being read (max_to_keep) is
// skipped and the next poll takes the newer one.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "graft/core/threads.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/variables.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf/checkpoint_state.hpp"

namespace graft::surgery {

/// The inference part of `g` for another device: the nodes `outputs` (node or tensor names) depend
/// on through data and control edges, with their variables (no initializers, savers or training
/// ops: nothing the outputs do not need), each placed on `device` ("" keeps the placement).
/// Throws not_found_error naming an output that is not in `g`.
inline graph inference_copy(const graph& g, const std::vector<std::string>& outputs, const std::string& device = {}) {
    std::vector<const node*> stack;
    std::unordered_set<std::string_view> keep;
    for (const auto& o : outputs) {
        std::string name = o.empty() || o.front() != '^' ? endpoint::parse(o).node : o.substr(1);
        const node* n = g.find(name);
        if (!n) {
            throw not_found_error("inference_copy: output '" + o + "' is not a node of the graph", location::at_tensor(o),
                                  "name an existing node or tensor (e.g. 'logits' or 'logits:0')");
        }
        if (keep.insert(n->name).second) stack.push_back(n);
    }
    while (!stack.empty()) {
        const node* n = stack.back();
        stack.pop_back();
        auto visit = [&](const std::string& name) {
            const node* m = g.find(name);
            if (m && keep.insert(m->name).second) stack.push_back(m);
        };
        for (const auto& e : n->inputs) visit(e.node);
        for (const auto& c : n->control_inputs) visit(c);
    }
    graph out = g;  // keeps versions, library and the unmodelled fields
    out.remove_if([&](const node& n) { return !keep.count(n.name); });
    if (!device.empty()) {
        for (auto& n : out) n.device = device;
    }
    return out;
}

/// A session whose variables can be replaced all at once between runs: the inference side of a
/// trainer/server pair. Runs may overlap each other; an install waits for the runs in progress and
/// holds new ones back only for the pointer swaps (values are read and checked before).
class replica {
public:
    /// A replica running `g` with its own variable store.
    explicit replica(graph g) : s_(std::move(g)) {
        for (const auto& v : find_variables(s_.g())) {
            const node* n = s_.g().find(v.node);
            by_name_[v.name] = exec::variable_key(*n);
            keys_[exec::variable_key(*n)] = {v.dtype, v.shape};
        }
    }
    replica(const replica&) = delete;
    replica& operator=(const replica&) = delete;

    /// session::run under the shared lock. Throws what session::run throws.
    std::vector<tensor> run(const exec::session::feed_list& feeds, const std::vector<std::string>& fetches,
                            const std::vector<std::string>& targets = {}) {
        std::shared_lock lock(mu_);
        return s_.run(feeds, fetches, targets);
    }

    /// Replaces the values of the given variables (store keys, as exec::variable_key; a TF variable
    /// name is accepted too) in one step: every value is checked against the variable's declared
    /// dtype and shape first, so on a throw nothing changed. `version` is what version() reports
    /// afterwards (e.g. the checkpoint prefix). Throws not_found_error (a name that is no variable
    /// of this graph, listing some that are), invalid_argument_error (dtype/shape, naming both).
    void install(const std::vector<std::pair<std::string, tensor>>& values, std::string version = {}) {
        std::vector<std::pair<std::shared_ptr<exec::variable>, tensor>> todo;
        todo.reserve(values.size());
        for (const auto& [name, t] : values) {
            std::string key = store_key(name);
            const auto& [type, shp] = keys_.at(key);
            if (type != dtype::invalid && t.type() != type) {
                throw invalid_argument_error(graft::detail::cat("sync: value for variable '", name, "' is ", t.describe(),
                                                         ", the variable is ", dtype_name(type)),
                                             location::at_tensor(name), "map it to a variable of the same dtype");
            }
            if (!shp.compatible_with(t.shape())) {
                throw invalid_argument_error(graft::detail::cat("sync: value for variable '", name, "' has shape ", t.shape().str(),
                                                         ", the variable is declared ", shp.str()),
                                             location::at_tensor(name), "map it to a variable of the same shape");
            }
            todo.emplace_back(s_.variables().get_or_create(key, type, shp), t);
        }
        std::unique_lock lock(mu_);
        for (auto& [v, t] : todo) {
            tensor old;
            {
                std::unique_lock vl(v->mu);
                old = std::exchange(v->value, t);
            }
            if (old.valid()) {
                std::lock_guard sl(spare_mu_);
                spare_[v->name] = std::move(old);
            }
        }
        version_ = std::move(version);
        ++installs_;
    }

    /// Memory to copy the next value of variable `key` into: the value an earlier install replaced,
    /// when nobody holds it any more (no run in progress reads it) and it has the right dtype and
    /// shape, else a new tensor. So repeated syncs write into warm memory instead of fresh pages.
    /// Never throws (except bad_alloc).
    tensor staging(const std::string& key, dtype type, const graft::shape& shp) {
        std::lock_guard lock(spare_mu_);  // not mu_: a replaced value is never handed to a new run
        if (auto it = spare_.find(key); it != spare_.end()) {
            tensor t = std::move(it->second);
            spare_.erase(it);
            // A value a GPU run moved onto its device is not reused: copies are staged on the host.
            if (t.type() == type && t.shape() == shp && t.buffer_unique() && t.on_host()) return t;
        }
        return tensor(type, shp);
    }

    /// What the last install() was given as its version. Never throws (except bad_alloc).
    [[nodiscard]] std::string version() const {
        std::shared_lock lock(mu_);
        return version_;
    }
    /// How many installs happened. Never throws.
    [[nodiscard]] std::size_t installs() const {
        std::shared_lock lock(mu_);
        return installs_;
    }
    /// TF variable name -> store key of every variable of the graph. Never throws.
    [[nodiscard]] const std::map<std::string, std::string>& variables() const { return by_name_; }
    /// The session (for setup; its runs bypass the replica's lock). Never throws.
    [[nodiscard]] exec::session& session() { return s_; }

private:
    [[nodiscard]] std::string store_key(const std::string& name) const {
        if (keys_.count(name)) return name;
        if (auto it = by_name_.find(name); it != by_name_.end()) return it->second;
        std::string some;
        int k = 0;
        for (auto& [n, _] : by_name_) {
            if (k++ == 8) { some += ", ..."; break; }
            some += (some.empty() ? "" : ", ") + n;
        }
        throw not_found_error("sync: '" + name + "' is not a variable of the replica's graph", location::at_tensor(name),
                              some.empty() ? "the replica's graph has no variables" : "its variables: " + some);
    }

    exec::session s_;
    mutable std::shared_mutex mu_;
    std::map<std::string, std::string> by_name_;
    std::map<std::string, std::pair<dtype, graft::shape>> keys_;
    std::mutex spare_mu_;
    std::map<std::string, tensor> spare_;  // values replaced by the last install, reused by staging()
    std::string version_;
    std::size_t installs_ = 0;
};

/// What one sync moved.
struct sync_report {
    std::size_t variables = 0;
    std::size_t bytes = 0;
};

namespace detail {

// t copied into `c` (same dtype and shape; another device's memory), one share per thread of
// graft's pool when it is large.
inline tensor device_copy(const tensor& t, tensor c) {
    if (t.type() == dtype::string) return t.clone();
    const std::size_t n = t.nbytes();
    const auto* src = static_cast<const char*>(t.raw_data());
    auto* dst = static_cast<char*>(c.raw_data());
    constexpr std::size_t grain = std::size_t{1} << 22;
    if (n < 2 * grain) {
        if (n) std::memcpy(dst, src, n);
        return c;
    }
    // one share per thread (the caller's included): copying is bound by memory bandwidth
    const int tasks = num_threads();
    const auto edge = [&](int t) {  // cache-line aligned share boundaries
        return t == tasks ? n : n * static_cast<std::size_t>(t) / static_cast<std::size_t>(tasks) / 64 * 64;
    };
    graft::run_tasks(tasks, [&](int t) { std::memcpy(dst + edge(t), src + edge(t), edge(t + 1) - edge(t)); });
    return c;
}

}  // namespace detail

/// Copies the weights of `from` into `to` in one install: `var_map` pairs (variable of `from`, variable
/// of `to`) by TF name or store key; empty = every variable of `to` by the same name in `from`. Values
/// are copied (the replica may live on another device), so training `from` afterwards never changes
/// `to`. Throws not_found_error (a variable missing on either side, or uninitialized in `from`, naming
/// it), invalid_argument_error (dtype/shape mismatch naming both); on a throw `to` is unchanged.
inline sync_report sync(exec::session& from, replica& to, const std::vector<std::pair<std::string, std::string>>& var_map = {}) {
    std::vector<std::pair<std::string, std::string>> pairs = var_map;
    std::unordered_map<std::string, std::string> by_name;  // filled only when a name needs it
    if (pairs.empty()) {
        for (const auto& [name, key] : to.variables()) pairs.emplace_back(name, name);
    }
    std::vector<std::pair<std::string, tensor>> values;
    values.reserve(pairs.size());
    sync_report rep;
    for (const auto& [src, dst] : pairs) {
        // A variable node's store key (its shared_name, if any), else `src` is a store key itself:
        // one lookup per variable, no pass over the trainer's graph on every sync.
        const node* n = from.g().find(src);
        auto v = from.variables().find(n && is_variable_op(n->op) ? exec::variable_key(*n) : src);
        if (!v) {  // a TF variable name that is not its node's name (TF2 object graphs): look it up once
            if (by_name.empty()) {
                for (const auto& vi : find_variables(from.g())) by_name[vi.name] = exec::variable_key(*from.g().find(vi.node));
            }
            if (auto it = by_name.find(src); it != by_name.end()) v = from.variables().find(it->second);
        }
        if (!v) {
            throw not_found_error("sync: variable '" + src + "' is not in the source session", location::at_tensor(src),
                                  "initialize or restore the trainer first, or pass a var_map naming its variables");
        }
        tensor t = exec::to_host(v->read());
        rep.bytes += t.nbytes();
        auto dst_key = to.variables().count(dst) ? to.variables().at(dst) : dst;
        values.emplace_back(dst, detail::device_copy(t, to.staging(dst_key, t.type(), t.shape())));
    }
    to.install(values, "sync");
    rep.variables = values.size();
    return rep;
}

/// How a checkpoint_watcher polls.
struct watcher_options {
    std::chrono::milliseconds interval{20};
    std::string state_file = "checkpoint";
};

/// Keeps a replica on the newest checkpoint another process writes to a directory.
class checkpoint_watcher {
public:
    /// Watches `<dir>/<state_file>`; each variable of `r` is read by its checkpoint key.
    checkpoint_watcher(replica& r, std::string dir, watcher_options o = {})
        : r_(&r), dir_(std::move(dir)), opt_(std::move(o)) {
        for (const auto& v : find_variables(r.session().g())) {
            if (!v.checkpoint_key.empty()) wanted_.emplace_back(v.checkpoint_key, exec::variable_key(*r.session().g().find(v.node)));
        }
    }
    checkpoint_watcher(const checkpoint_watcher&) = delete;
    checkpoint_watcher& operator=(const checkpoint_watcher&) = delete;
    ~checkpoint_watcher() { stop(); }

    /// Checks the state file once; when it names a checkpoint not installed yet, reads every variable
    /// of it and installs them. Returns true when it installed one. A checkpoint that cannot be read
    /// completely (deleted meanwhile, truncated, a missing key, a bad crc) is not installed: the
    /// reason is kept in last_error() and the next poll tries again (a newer state usually follows).
    /// Never throws (except bad_alloc).
    bool poll() {
        std::string prefix;
        try {
            auto st = tf::read_checkpoint_state(dir_, opt_.state_file);
            if (!st) return false;
            prefix = st->model_checkpoint_path;
            // A Saver without a global step saves over the same prefix: the index file's identity
            // (inode, mtime, size: each save renames a new index in) tells a new checkpoint there.
            const std::string id = index_identity(prefix);
            if (prefix == r_->version() && id == seen_id_) return false;
            tf::checkpoint_reader reader(prefix);
            std::vector<std::pair<std::string, tensor>> values;
            values.reserve(wanted_.size());
            for (const auto& [ckpt_key, store_key] : wanted_) {
                if (!reader.contains(ckpt_key)) {
                    throw not_found_error("checkpoint '" + prefix + "' has no tensor '" + ckpt_key + "'",
                                          location::in_file(prefix + ".index").with_tensor(ckpt_key),
                                          "the writer saves another model; watch its own directory");
                }
                values.emplace_back(store_key, reader.read(ckpt_key).clone());  // no view into a file the writer may delete
            }
            // Replaced while being read (each value passed its crc, but they may span two saves):
            // not installed; the next poll reads the new one.
            if (index_identity(prefix) != id) return false;
            r_->install(values, prefix);
            seen_id_ = id;
            std::lock_guard lock(err_mu_);
            last_error_.clear();
            return true;
        } catch (const graft::error& e) {
            std::lock_guard lock(err_mu_);
            last_error_ = e.what();
            ++failures_;
            return false;
        }
    }

    /// Polls in a background thread every `interval` until stop(). Never throws (except system_error).
    void start() {
        if (thread_.joinable()) return;
        {
            std::lock_guard lock(run_mu_);
            stopping_ = false;
        }
        thread_ = std::thread([this] {
            std::unique_lock lock(run_mu_);
            while (!stopping_) {
                lock.unlock();
                poll();
                lock.lock();
                cv_.wait_for(lock, opt_.interval, [this] { return stopping_; });
            }
        });
    }
    /// Stops the polling thread (waits for a poll in progress). Never throws.
    void stop() noexcept {
        {
            std::lock_guard lock(run_mu_);
            stopping_ = true;
        }
        cv_.notify_all();
        if (thread_.joinable()) thread_.join();
    }

    /// The prefix installed last ("" before the first). Never throws (except bad_alloc).
    [[nodiscard]] std::string current() const { return r_->version(); }
    /// Why the last poll did not install (empty after a successful one). Never throws (except bad_alloc).
    [[nodiscard]] std::string last_error() const {
        std::lock_guard lock(err_mu_);
        return last_error_;
    }
    /// Polls that found a checkpoint they could not read completely. Never throws.
    [[nodiscard]] std::size_t failures() const {
        std::lock_guard lock(err_mu_);
        return failures_;
    }

private:
    static std::string index_identity(const std::string& prefix) {
        struct stat st{};
        if (::stat((prefix + ".index").c_str(), &st) != 0) return {};
        return std::to_string(st.st_ino) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
               std::to_string(st.st_mtim.tv_nsec) + ":" + std::to_string(st.st_size);
    }

    replica* r_;
    std::string dir_;
    std::string seen_id_;  // index identity of the installed checkpoint (poll's thread only)
    watcher_options opt_;
    std::vector<std::pair<std::string, std::string>> wanted_;  // checkpoint key, store key
    std::thread thread_;
    std::mutex run_mu_;
    std::condition_variable cv_;
    bool stopping_ = false;
    mutable std::mutex err_mu_;
    std::string last_error_;
    std::size_t failures_ = 0;
};

}  // namespace graft::surgery
