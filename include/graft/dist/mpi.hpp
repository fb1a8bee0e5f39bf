// graft/dist/mpi.hpp — the MPI backend of graft::dist::communicator (Open MPI, MPICH: any MPI-3).
// Link graft::mpi (CMake: -DGRAFT_MPI=ON or AUTO, found with FindMPI).
//
//   int main(int argc, char** argv) {
//       auto mpi = graft::dist::init_mpi(&argc, &argv);   // MPI_Init_thread, set_world(), finalize at exit
//       auto comm = graft::dist::world();                   // rank(), size() of mpirun's job
//       ...
//   }
//   // mpirun -np 4 ./train
//
// Collectives are MPI's blocking calls (its tuned algorithms; the non-blocking ones progress only
// when polled and run several times slower). A watchdog thread bounds each call by
// mpi_options::timeout_seconds (GRAFT_DIST_TIMEOUT, default 600 s): a collective that a peer never
// joins (a rank stuck, or dead while the launcher keeps the job alive) prints an error naming this
// rank, the collective and the tensor, and aborts the job (MPI_Abort) instead of hanging. When a
// rank dies, Open MPI's mpirun ends the others itself and names the dead rank. Calls are
// serialized by a mutex, so any thread may call (the data-parallel engine's thread does).
#pragma once

// The MPI C API only (the deprecated C++ bindings stay out).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "graft/dist/communicator.hpp"

namespace graft::dist {

struct mpi_options {
    /// Seconds a collective may wait for its peers before the watchdog aborts the job (0 = wait
    /// forever). Default: the GRAFT_DIST_TIMEOUT environment variable, else 600.
    double timeout_seconds = -1;
};

namespace detail {
inline double default_timeout() {
    if (const char* e = std::getenv("GRAFT_DIST_TIMEOUT")) {
        char* end = nullptr;
        double v = std::strtod(e, &end);
        if (end != e && v >= 0) return v;
    }
    return 600;
}
inline std::string mpi_error_text(int code) {
    char buf[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS) return graft::detail::cat("MPI error ", code);
    return std::string(buf, static_cast<std::size_t>(len));
}
}  // namespace detail

class mpi_communicator final : public communicator {
public:
    /// A communicator over a duplicate of `comm` (MPI must be initialized). Throws dist_error.
    explicit mpi_communicator(MPI_Comm comm = MPI_COMM_WORLD, mpi_options o = {}) : opt_(o) {
        if (opt_.timeout_seconds < 0) opt_.timeout_seconds = detail::default_timeout();
        int init = 0;
        MPI_Initialized(&init);
        if (!init) throw dist_error("MPI is not initialized", {}, "call graft::dist::init_mpi(&argc, &argv) first");
        check(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup", {});
        MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
        MPI_Comm_rank(comm_, &rank_);
        MPI_Comm_size(comm_, &size_);
    }
    mpi_communicator(const mpi_communicator&) = delete;
    mpi_communicator& operator=(const mpi_communicator&) = delete;
    ~mpi_communicator() override {
        {
            std::lock_guard lock(watch_mu_);
            watch_stop_ = true;
        }
        watch_cv_.notify_all();
        if (watchdog_.joinable()) watchdog_.join();
        int fin = 0;
        MPI_Finalized(&fin);
        if (!fin && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    }

    [[nodiscard]] int rank() const override { return rank_; }
    [[nodiscard]] int size() const override { return size_; }
    [[nodiscard]] std::string backend() const override { return "mpi"; }
    [[nodiscard]] MPI_Comm handle() const { return comm_; }
    [[nodiscard]] const mpi_options& options() const { return opt_; }

    void barrier() override {
        std::lock_guard lock(mu_);
        guard g(*this, "barrier", {});
        check(MPI_Barrier(comm_), "barrier", {});
    }

    void allreduce_raw(void* data, std::size_t count, dtype t, reduce_op op, std::string_view name) override {
        std::lock_guard lock(mu_);
        const MPI_Datatype mt = mpi_type(t, name);
        const MPI_Op mo = mpi_op(op);
        const std::size_t esize = dtype_size(t);
        for (std::size_t done = 0; done < count;) {
            const std::size_t n = std::min<std::size_t>(count - done, std::size_t{1} << 30);
            guard g(*this, "allreduce", name);
            check(MPI_Allreduce(MPI_IN_PLACE, static_cast<char*>(data) + done * esize, static_cast<int>(n), mt, mo, comm_),
                  "allreduce", name);
            done += n;
        }
    }

    void broadcast_raw(void* data, std::size_t bytes, int root, std::string_view name) override {
        check_root(root, name);
        std::lock_guard lock(mu_);
        for (std::size_t done = 0; done < bytes;) {
            const std::size_t n = std::min<std::size_t>(bytes - done, std::size_t{1} << 30);
            guard g(*this, "broadcast", name);
            check(MPI_Bcast(static_cast<char*>(data) + done, static_cast<int>(n), MPI_BYTE, root, comm_), "broadcast", name);
            done += n;
        }
    }

    void allgatherv_raw(const void* mine, const std::vector<std::size_t>& bytes, void* out, std::string_view name) override {
        std::lock_guard lock(mu_);
        std::vector<int> counts(bytes.size()), displs(bytes.size());
        std::size_t at = 0;
        for (std::size_t r = 0; r < bytes.size(); ++r) {
            if (bytes[r] > static_cast<std::size_t>(INT_MAX) || at > static_cast<std::size_t>(INT_MAX)) {
                throw dist_error(graft::detail::cat("rank ", rank_, ": allgather of more than 2 GiB is not supported"), where(name),
                                 "gather smaller tensors");
            }
            counts[r] = static_cast<int>(bytes[r]);
            displs[r] = static_cast<int>(at);
            at += bytes[r];
        }
        guard g(*this, "allgather", name);
        check(MPI_Allgatherv(mine, counts[static_cast<std::size_t>(rank_)], MPI_BYTE, out, counts.data(), displs.data(), MPI_BYTE,
                             comm_),
              "allgather", name);
    }

private:
    void check(int code, const char* what, std::string_view name) const {
        if (code == MPI_SUCCESS) return;
        throw dist_error(graft::detail::cat("rank ", rank_, " of ", size_, ": MPI ", what, " failed: ", detail::mpi_error_text(code)),
                         where(name), "a peer rank may have died; see mpirun's report");
    }
    /// Marks one blocking collective for the watchdog (started on first use).
    struct guard {
        mpi_communicator& c;
        guard(mpi_communicator& cc, const char* what, std::string_view name) : c(cc) { c.watch_begin(what, name); }
        ~guard() { c.watch_end(); }
        guard(const guard&) = delete;
        guard& operator=(const guard&) = delete;
    };
    void watch_begin(const char* what, std::string_view name) {
        if (opt_.timeout_seconds <= 0) return;
        std::lock_guard lock(watch_mu_);
        watch_what_ = graft::detail::cat(what, name.empty() ? "" : " of tensor '", name, name.empty() ? "" : "'");
        watch_start_ = std::chrono::steady_clock::now();
        watch_active_ = true;
        if (!watchdog_.joinable()) watchdog_ = std::thread([this] { watch(); });
    }
    void watch_end() {
        if (opt_.timeout_seconds <= 0) return;
        std::lock_guard lock(watch_mu_);
        watch_active_ = false;
    }
    void watch() {
        std::unique_lock lock(watch_mu_);
        while (!watch_stop_) {
            watch_cv_.wait_for(lock, std::chrono::milliseconds(200));
            if (!watch_active_) continue;
            const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - watch_start_).count();
            if (waited <= opt_.timeout_seconds) continue;
            std::fprintf(stderr,
                         "graft: rank %d of %d: %s did not complete within %g s: a peer rank has died, stalled or called "
                         "another collective; aborting the job (raise GRAFT_DIST_TIMEOUT for very long steps)\n",
                         rank_, size_, error::printable(watch_what_).c_str(), opt_.timeout_seconds);
            std::fflush(stderr);
            MPI_Abort(comm_, 70);
            std::_Exit(70);
        }
    }
    MPI_Datatype mpi_type(dtype t, std::string_view name) const {
        switch (base_type(t)) {
            case dtype::float32: return MPI_FLOAT;
            case dtype::float64: return MPI_DOUBLE;
            case dtype::int32: return MPI_INT32_T;
            case dtype::int64: return MPI_INT64_T;
            default:
                throw invalid_argument_error(graft::detail::cat("MPI allreduce of ", dtype_name(t), " is not supported"), where(name));
        }
    }
    static MPI_Op mpi_op(reduce_op op) {
        switch (op) {
            case reduce_op::min: return MPI_MIN;
            case reduce_op::max: return MPI_MAX;
            case reduce_op::product: return MPI_PROD;
            case reduce_op::sum: case reduce_op::mean: break;
        }
        return MPI_SUM;
    }

    MPI_Comm comm_ = MPI_COMM_NULL;
    int rank_ = 0, size_ = 1;
    mpi_options opt_;
    std::mutex mu_;
    // the watchdog
    std::mutex watch_mu_;
    std::condition_variable watch_cv_;
    std::thread watchdog_;
    bool watch_stop_ = false, watch_active_ = false;
    std::string watch_what_;
    std::chrono::steady_clock::time_point watch_start_;
};

/// Owns MPI's lifetime: init_mpi() makes one; its destruction uninstalls the world communicator
/// and calls MPI_Finalize (when this object initialized MPI).
class mpi_session {
public:
    mpi_session(int* argc, char*** argv, mpi_options o = {}) {
        int init = 0;
        MPI_Initialized(&init);
        if (!init) {
            int provided = 0;
            int rc = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
            if (rc != MPI_SUCCESS) throw dist_error("MPI_Init_thread failed: " + detail::mpi_error_text(rc));
            if (provided < MPI_THREAD_SERIALIZED) {
                MPI_Finalize();
                throw dist_error("this MPI library offers no MPI_THREAD_SERIALIZED support", {},
                                 "build Open MPI with thread support (Debian's openmpi has it)");
            }
            owns_ = true;
        }
        comm_ = std::make_shared<mpi_communicator>(MPI_COMM_WORLD, o);
        set_world(comm_);
    }
    mpi_session(const mpi_session&) = delete;
    mpi_session& operator=(const mpi_session&) = delete;
    ~mpi_session() {
        set_world(nullptr);
        comm_.reset();
        if (owns_) {
            int fin = 0;
            MPI_Finalized(&fin);
            if (!fin) MPI_Finalize();
        }
    }
    [[nodiscard]] const std::shared_ptr<mpi_communicator>& comm() const { return comm_; }

private:
    std::shared_ptr<mpi_communicator> comm_;
    bool owns_ = false;
};

/// Initializes MPI (thread support: serialized or better), installs MPI_COMM_WORLD as graft's world
/// communicator; keep the result alive for as long as collectives run. Throws dist_error.
[[nodiscard]] inline std::unique_ptr<mpi_session> init_mpi(int* argc, char*** argv, mpi_options o = {}) {
    return std::make_unique<mpi_session>(argc, argv, o);
}

/// True when this process was started by mpirun/srun/mpiexec (Open MPI, MPICH/PMI, Slurm variables).
[[nodiscard]] inline bool launched_by_mpi() {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"}) {
        if (std::getenv(v)) return true;
    }
    return false;
}

}  // namespace graft::dist
