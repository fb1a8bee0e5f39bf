// graft/dist/communicator.hpp — collectives between the processes (ranks) of one training job:
// allreduce, broadcast, allgather and barrier on graft tensors, behind one interface with three
// backends: local (one process, no library), MPI (graft/dist/mpi.hpp, link graft::mpi) and NCCL
// (graft/dist/nccl.hpp, GPUs, bootstrapped over MPI). This header needs no MPI.
//
//   auto comm = graft::dist::world();                  // the job's communicator (local: size 1)
//   graft::tensor g = ...;                              // host tensor, same shape on every rank
//   comm->allreduce(g, graft::dist::reduce_op::mean, "dense/kernel/grad");   // in place
//   comm->broadcast(w, /*root=*/0, "dense/kernel");     // every rank gets rank 0's w
//   graft::tensor all = comm->allgather(rows, "labels"); // rows of every rank, rank order, along dim 0
//   comm->barrier();
//
// Every rank must call the same collectives in the same order with the same dtypes and shapes (as
// with MPI): a mismatch is a dist_error naming the rank and the tensor where it can be detected
// (shapes are checked by the tensor-level calls), else undefined. Tensors are on the host for the
// local and MPI backends; the NCCL backend takes device tensors. `name` only labels errors.
//
// The process-wide communicator (world(), set_world()) is what the collective kernels of an
// imported graph (CollectiveReduceV2, HorovodAllreduce, ...) and graft's data-parallel training
// run on: graft::dist::init_mpi() installs the MPI one.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"

namespace graft::dist {

/// A collective failed: a peer died or stalled past the timeout, shapes or dtypes disagreed across
/// ranks, or the transport reported an error. what() names this rank and the tensor.
class dist_error : public error { using error::error; };

/// How allreduce combines the ranks' values. mean = sum / size (integer division for integers,
/// as TF's CollectiveReduceV2 final_op "Div").
enum class reduce_op { sum, mean, min, max, product };

[[nodiscard]] inline const char* reduce_op_name(reduce_op op) {
    switch (op) {
        case reduce_op::sum: return "sum";
        case reduce_op::mean: return "mean";
        case reduce_op::min: return "min";
        case reduce_op::max: return "max";
        case reduce_op::product: return "product";
    }
    return "?";
}

/// The dtypes the reductions handle (broadcast and allgather move any fixed-size dtype).
[[nodiscard]] inline bool reducible(dtype t) {
    switch (base_type(t)) {
        case dtype::float32: case dtype::float64: case dtype::int32: case dtype::int64: return true;
        default: return false;
    }
}

/// The collectives of one group of ranks. Backends implement the raw byte-level calls; the tensor
/// calls above them check arguments, agree on shapes and name what failed.
class communicator {
public:
    virtual ~communicator() = default;

    /// This process's rank, 0 .. size()-1.
    [[nodiscard]] virtual int rank() const = 0;
    /// The number of ranks.
    [[nodiscard]] virtual int size() const = 0;
    /// "local", "mpi", "nccl".
    [[nodiscard]] virtual std::string backend() const = 0;

    /// Replaces `t` (host, fixed-size reducible dtype) by the reduction of every rank's `t` in place
    /// (when `t` shares its buffer with another tensor, `t` gets a fresh buffer first). Throws
    /// dist_error (peer failure, timeout), invalid_argument_error (dtype, device).
    void allreduce(tensor& t, reduce_op op, std::string_view name = {}) {
        check_host(t, "allreduce", name);
        if (!reducible(t.type())) {
            throw invalid_argument_error(detail::cat("allreduce of ", dtype_name(t.type()), " is not supported"),
                                         where(name), "reduce float32, float64, int32 or int64 tensors");
        }
        make_writable(t);
        const bool backend_mean = op == reduce_op::mean && native_mean(t);
        if (t.num_elements() > 0) {
            allreduce_raw(t.raw_data(), static_cast<std::size_t>(t.num_elements()), t.type(),
                          backend_mean || op != reduce_op::mean ? op : reduce_op::sum, name);
        }
        if (op == reduce_op::mean && !backend_mean) divide_by_size(t);
    }

    /// Replaces `t` on every rank by root's `t`. The dtype and shape must agree on every rank
    /// (checked: dist_error naming the rank whose shape differs). Throws dist_error.
    void broadcast(tensor& t, int root = 0, std::string_view name = {}) {
        check_host(t, "broadcast", name);
        check_root(root, name);
        if (t.type() == dtype::string) {
            throw invalid_argument_error("broadcast of string tensors is not supported", where(name));
        }
        // Agree on the shape first: root's dims, every rank compares its own.
        std::vector<std::int64_t> dims(static_cast<std::size_t>(t.rank()) + 2);
        dims[0] = static_cast<std::int64_t>(t.type());
        dims[1] = t.rank();
        for (int i = 0; i < t.rank(); ++i) dims[static_cast<std::size_t>(i) + 2] = t.dim(i);
        std::int64_t n = static_cast<std::int64_t>(dims.size());
        broadcast_raw(&n, sizeof n, root, name);
        std::vector<std::int64_t> theirs(static_cast<std::size_t>(n));
        if (rank() == root) theirs = dims;
        broadcast_raw(theirs.data(), theirs.size() * sizeof(std::int64_t), root, name);
        std::int32_t bad = theirs != dims ? 1 : 0;
        allreduce_raw(&bad, 1, dtype::int32, reduce_op::max, name);
        if (theirs != dims) {
            throw dist_error(detail::cat("rank ", rank(), " broadcasts ", t.describe(), " but root rank ", root,
                                         " sends another dtype or shape"),
                             where(name), "every rank must hold the same variables (same graph, same shapes)");
        }
        if (bad) {
            throw dist_error(detail::cat("rank ", rank(), ": another rank's ", name.empty() ? "tensor" : std::string(name),
                                         " differs in dtype or shape from root rank ", root, "'s"),
                             where(name), "every rank must hold the same variables (same graph, same shapes)");
        }
        make_writable(t);
        if (t.nbytes()) broadcast_raw(t.raw_data(), t.nbytes(), root, name);
    }

    /// Every rank's `t` concatenated along dimension 0 in rank order (dims 1.. and the dtype must
    /// agree; dim 0 may differ). A scalar counts as one row. Throws dist_error, invalid_argument_error.
    [[nodiscard]] tensor allgather(const tensor& t, std::string_view name = {}) {
        check_host(t, "allgather", name);
        if (t.type() == dtype::string) throw invalid_argument_error("allgather of string tensors is not supported", where(name));
        const int n = size();
        // Each rank's (dtype, rank, dim0, inner elements), gathered through allreduce(max) on a
        // zero-filled table (no separate gather call needed from the backend).
        const std::int64_t rows = t.rank() == 0 ? 1 : t.dim(0);
        const std::int64_t inner = rows == 0 ? 0 : t.num_elements() / rows;
        std::vector<std::int64_t> table(static_cast<std::size_t>(n) * 4, std::numeric_limits<std::int64_t>::min());
        auto* mine = &table[static_cast<std::size_t>(rank()) * 4];
        mine[0] = static_cast<std::int64_t>(t.type());
        mine[1] = t.rank();
        mine[2] = rows;
        mine[3] = inner;
        allreduce_raw(table.data(), table.size(), dtype::int64, reduce_op::max, name);
        // The row width every rank with rows agrees on (a rank with 0 rows cannot know it).
        std::int64_t width = inner;
        for (int r = 0; r < n; ++r) {
            auto* e = &table[static_cast<std::size_t>(r) * 4];
            if (e[2] > 0) width = e[3];
        }
        std::int64_t total = 0;
        std::vector<std::size_t> bytes(static_cast<std::size_t>(n));
        for (int r = 0; r < n; ++r) {
            auto* e = &table[static_cast<std::size_t>(r) * 4];
            const bool inner_ok = e[3] == width || e[2] == 0;
            if (e[0] != mine[0] || (t.rank() > 0 && e[1] != mine[1]) || (t.rank() == 0 && e[1] > 1) || !inner_ok) {
                throw dist_error(detail::cat("allgather: rank ", r, " sends ", e[2], " rows of ", e[3], " elements (dtype ",
                                             dtype_name(static_cast<dtype>(e[0])), ", rank ", e[1], "); rank ", rank(),
                                             " sends ", t.describe()),
                                 where(name), "allgather needs the same dtype and the same dimensions after the first on every rank");
            }
            total += e[2];
            bytes[static_cast<std::size_t>(r)] = static_cast<std::size_t>(e[2] * width) * dtype_size(t.type());
        }
        std::vector<std::int64_t> dims{total};
        for (int i = 1; i < t.rank(); ++i) dims.push_back(t.dim(i));
        tensor out(t.type(), graft::shape(dims));
        allgatherv_raw(t.raw_data(), bytes, out.raw_data(), name);
        return out;
    }

    /// Returns when every rank has called barrier(). Throws dist_error.
    virtual void barrier() = 0;

    // ------------------------------------------------------------------ what a backend implements
    /// Reduces `count` elements of dtype `t` at `data` across ranks, in place (a backend sees mean
    /// only where native_mean() says it computes it; else the tensor-level call sums and divides).
    virtual void allreduce_raw(void* data, std::size_t count, dtype t, reduce_op op, std::string_view name) = 0;
    /// Root's `bytes` bytes at `data` replace every other rank's.
    virtual void broadcast_raw(void* data, std::size_t bytes, int root, std::string_view name) = 0;
    /// Rank r's bytes[r] bytes (this rank's at `mine`) are laid out in rank order at `out`.
    virtual void allgatherv_raw(const void* mine, const std::vector<std::size_t>& bytes, void* out, std::string_view name) = 0;

protected:
    /// Whether this backend takes tensors on `t`'s device (host: every backend; the NCCL one also
    /// its GPU's tensors).
    [[nodiscard]] virtual bool takes(const tensor& t) const { return t.on_host(); }
    /// Whether allreduce_raw computes reduce_op::mean itself for `t` (NCCL's ncclAvg); else the
    /// tensor-level call sums and divides on the host.
    [[nodiscard]] virtual bool native_mean(const tensor&) const { return false; }

    [[nodiscard]] location where(std::string_view name) const {
        return name.empty() ? location{} : location::at_tensor(std::string(name));
    }
    void check_root(int root, std::string_view name) const {
        if (root < 0 || root >= size()) {
            throw invalid_argument_error(detail::cat("broadcast root ", root, " is not a rank of this ", size(), "-rank group"),
                                         where(name));
        }
    }

private:
    void check_host(const tensor& t, const char* what, std::string_view name) const {
        if (!t.valid()) throw invalid_argument_error(detail::cat(what, ": the tensor is empty (no buffer)"), where(name));
        if (!takes(t)) {
            throw invalid_argument_error(detail::cat(what, " on the ", backend(), " backend takes host tensors; this one is on ", t.dev().str()),
                                         where(name), "copy it to the host, or use the NCCL communicator for device tensors");
        }
    }
    /// A host tensor that shares its buffer gets its own copy first; a device tensor is reduced in
    /// place (its buffer is the caller's).
    static void make_writable(tensor& t) {
        if (t.on_host() && (!t.buffer_unique() || t.byte_offset() != 0)) t = t.clone();
    }
    void divide_by_size(tensor& t) const {
        const auto n = size();
        if (n == 1) return;
        const auto k = static_cast<std::size_t>(t.num_elements());
        switch (base_type(t.type())) {
            case dtype::float32: { auto* p = t.data<float>(); const float s = 1.0f / static_cast<float>(n); for (std::size_t i = 0; i < k; ++i) p[i] *= s; break; }
            case dtype::float64: { auto* p = t.data<double>(); for (std::size_t i = 0; i < k; ++i) p[i] /= n; break; }
            case dtype::int32: { auto* p = t.data<std::int32_t>(); for (std::size_t i = 0; i < k; ++i) p[i] /= n; break; }
            case dtype::int64: { auto* p = t.data<std::int64_t>(); for (std::size_t i = 0; i < k; ++i) p[i] /= n; break; }
            default: break;
        }
    }
};

/// One rank alone: every collective is the identity (what TF computes for group_size 1).
class local_communicator final : public communicator {
public:
    [[nodiscard]] int rank() const override { return 0; }
    [[nodiscard]] int size() const override { return 1; }
    [[nodiscard]] std::string backend() const override { return "local"; }
    void barrier() override {}
    void allreduce_raw(void*, std::size_t, dtype, reduce_op, std::string_view) override {}
    void broadcast_raw(void*, std::size_t, int, std::string_view) override {}
    void allgatherv_raw(const void* mine, const std::vector<std::size_t>& bytes, void* out, std::string_view) override {
        if (!bytes.empty() && bytes[0]) std::memmove(out, mine, bytes[0]);
    }
};

namespace detail {
struct world_slot {
    std::mutex mu;
    std::shared_ptr<communicator> comm;
};
inline world_slot& world_state() {
    static world_slot s;
    return s;
}
}  // namespace detail

/// The process-wide communicator: the one set_world() installed, else a local_communicator (size 1).
[[nodiscard]] inline std::shared_ptr<communicator> world() {
    auto& s = detail::world_state();
    std::lock_guard lock(s.mu);
    if (!s.comm) s.comm = std::make_shared<local_communicator>();
    return s.comm;
}

/// Installs `c` as the process-wide communicator (nullptr: back to local). Not while a step that
/// uses it runs.
inline void set_world(std::shared_ptr<communicator> c) {
    auto& s = detail::world_state();
    std::lock_guard lock(s.mu);
    s.comm = std::move(c);
}

}  // namespace graft::dist
