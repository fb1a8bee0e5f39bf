// graft/dist/nccl.hpp — the NCCL backend of graft::dist::communicator: allreduce, broadcast and
// allgather of GPU tensors between ranks (one GPU per rank), bootstrapped over MPI. Link graft::nccl
// (built when graft::cuda and graft::mpi are, and the CUDA toolkit ships libnccl).
//
//   auto mpi = graft::dist::init_mpi(&argc, &argv);
//   auto nccl = std::make_shared<graft::dist::nccl_communicator>(*mpi->comm());  // GPU = local rank
//   graft::dist::set_world(nccl);        // graph collectives and data-parallel training use it
//   nccl->allreduce(grad_on_gpu, graft::dist::reduce_op::mean, "dense/kernel");   // ncclAvg, in place
//
// Rank 0 makes the ncclUniqueId and broadcasts it over MPI; every rank then joins with
// ncclCommInitRank on its device (`device` option, else its node-local rank modulo the visible GPUs).
// Device tensors go through NCCL on the communicator's own stream (the call returns when the result
// is in place: the stream is synchronized, polling against the MPI timeout so a dead peer is an
// error, not a hang: ncclCommAbort then frees the communicator). Host tensors and the small host
// agreements (shapes, counts) go through the MPI communicator. Mean is NCCL's ncclAvg.
//
// Status: compiled in CI (no GPU there); run on hardware only where a GPU machine is lent (tests
// skip without a CUDA device).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "graft/dist/mpi.hpp"

namespace graft::dist {

struct nccl_options {
    /// CUDA device of this rank; -1: the node-local rank (OMPI_COMM_WORLD_LOCAL_RANK, ...) modulo
    /// the visible devices.
    int device = -1;
};

class nccl_communicator final : public communicator {
public:
    /// Joins every rank of `bootstrap` into one NCCL communicator. Collective over `bootstrap`.
    /// Throws dist_error (no GPU, NCCL failure: naming this rank and the call).
    explicit nccl_communicator(mpi_communicator& bootstrap, nccl_options o = {}) : mpi_(&bootstrap) {
        int count = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
            throw dist_error(graft::detail::cat("rank ", bootstrap.rank(), ": the NCCL communicator needs a CUDA device and there is none"),
                             {}, "use the MPI communicator (graft::dist::init_mpi) on machines without GPUs");
        }
        device_ = o.device >= 0 ? o.device : local_rank() % count;
        cuda(cudaSetDevice(device_), "cudaSetDevice");
        cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
        ncclUniqueId id{};
        if (bootstrap.rank() == 0) nccl(ncclGetUniqueId(&id), "ncclGetUniqueId", {});
        bootstrap.broadcast_raw(&id, sizeof id, 0, "ncclUniqueId");
        nccl(ncclCommInitRank(&comm_, bootstrap.size(), id, bootstrap.rank()), "ncclCommInitRank", {});
    }
    nccl_communicator(const nccl_communicator&) = delete;
    nccl_communicator& operator=(const nccl_communicator&) = delete;
    ~nccl_communicator() override {
        if (comm_) ncclCommDestroy(comm_);
        if (stream_) cudaStreamDestroy(stream_);
    }

    [[nodiscard]] int rank() const override { return mpi_->rank(); }
    [[nodiscard]] int size() const override { return mpi_->size(); }
    [[nodiscard]] std::string backend() const override { return "nccl"; }
    [[nodiscard]] int device() const { return device_; }
    void barrier() override { mpi_->barrier(); }

    void allreduce_raw(void* data, std::size_t count, dtype t, reduce_op op, std::string_view name) override {
        if (on_host(data)) {
            mpi_->allreduce_raw(data, count, t, op == reduce_op::mean ? reduce_op::sum : op, name);
            return;
        }
        std::lock_guard lock(mu_);
        cuda(cudaSetDevice(device_), "cudaSetDevice");
        nccl(ncclAllReduce(data, data, count, nccl_type(t, name), nccl_op(op), comm_, stream_), "ncclAllReduce", name);
        sync("allreduce", name);
    }
    void broadcast_raw(void* data, std::size_t bytes, int root, std::string_view name) override {
        if (on_host(data)) {
            mpi_->broadcast_raw(data, bytes, root, name);
            return;
        }
        std::lock_guard lock(mu_);
        cuda(cudaSetDevice(device_), "cudaSetDevice");
        nccl(ncclBroadcast(data, data, bytes, ncclUint8, root, comm_, stream_), "ncclBroadcast", name);
        sync("broadcast", name);
    }
    void allgatherv_raw(const void* mine, const std::vector<std::size_t>& bytes, void* out, std::string_view name) override {
        if (on_host(out)) {
            mpi_->allgatherv_raw(mine, bytes, out, name);
            return;
        }
        // NCCL's allgather takes equal counts: uneven rows go as one broadcast per rank (grouped).
        std::lock_guard lock(mu_);
        cuda(cudaSetDevice(device_), "cudaSetDevice");
        std::size_t at = 0;
        nccl(ncclGroupStart(), "ncclGroupStart", name);
        for (int r = 0; r < size(); ++r) {
            const auto n = bytes[static_cast<std::size_t>(r)];
            const void* src = r == rank() ? mine : static_cast<char*>(out) + at;
            nccl(ncclBroadcast(src, static_cast<char*>(out) + at, n, ncclUint8, r, comm_, stream_), "ncclBroadcast", name);
            at += n;
        }
        nccl(ncclGroupEnd(), "ncclGroupEnd", name);
        sync("allgather", name);
    }

protected:
    [[nodiscard]] bool takes(const tensor& t) const override { return t.on_host() || t.dev().index == device_; }
    [[nodiscard]] bool native_mean(const tensor& t) const override { return !t.on_host(); }

private:
    static int local_rank() {
        for (const char* v : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "LOCAL_RANK"}) {
            if (const char* e = std::getenv(v)) return std::atoi(e);
        }
        return 0;
    }
    static bool on_host(const void* p) {
        cudaPointerAttributes a{};
        if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
            cudaGetLastError();
            return true;
        }
        return a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged;
    }
    void cuda(cudaError_t e, const char* call) const {
        if (e == cudaSuccess) return;
        throw dist_error(graft::detail::cat("rank ", mpi_->rank(), ": ", call, " failed: ", cudaGetErrorString(e)));
    }
    void nccl(ncclResult_t r, const char* call, std::string_view name) const {
        if (r == ncclSuccess || r == ncclInProgress) return;
        throw dist_error(graft::detail::cat("rank ", mpi_->rank(), " of ", mpi_->size(), ": ", call, " failed: ", ncclGetErrorString(r)),
                         where(name), "a peer rank may have died; see mpirun's report and NCCL_DEBUG=INFO");
    }
    /// Waits for the stream, polling NCCL's async error state against the MPI timeout.
    void sync(const char* what, std::string_view name) {
        using clock = std::chrono::steady_clock;
        const auto start = clock::now();
        const double limit = mpi_->options().timeout_seconds;
        for (;;) {
            cudaError_t q = cudaStreamQuery(stream_);
            if (q == cudaSuccess) return;
            if (q != cudaErrorNotReady) cuda(q, "cudaStreamQuery");
            ncclResult_t async = ncclSuccess;
            ncclCommGetAsyncError(comm_, &async);
            if (async != ncclSuccess && async != ncclInProgress) {
                ncclCommAbort(comm_);
                comm_ = nullptr;
                nccl(async, what, name);
            }
            if (limit > 0 && std::chrono::duration<double>(clock::now() - start).count() > limit) {
                ncclCommAbort(comm_);
                comm_ = nullptr;
                throw dist_error(graft::detail::cat("rank ", rank(), " of ", size(), ": NCCL ", what, " did not complete within ", limit,
                                                    " s: a peer rank has died or stalled"),
                                 where(name), "check the other ranks' output; raise GRAFT_DIST_TIMEOUT for very long steps");
            }
            std::this_thread::yield();
        }
    }
    ncclDataType_t nccl_type(dtype t, std::string_view name) const {
        switch (base_type(t)) {
            case dtype::float32: return ncclFloat32;
            case dtype::float64: return ncclFloat64;
            case dtype::float16: return ncclFloat16;
            case dtype::bfloat16: return ncclBfloat16;
            case dtype::int32: return ncclInt32;
            case dtype::int64: return ncclInt64;
            default:
                throw invalid_argument_error(graft::detail::cat("NCCL allreduce of ", dtype_name(t), " is not supported"), where(name));
        }
    }
    static ncclRedOp_t nccl_op(reduce_op op) {
        switch (op) {
            case reduce_op::sum: return ncclSum;
            case reduce_op::mean: return ncclAvg;
            case reduce_op::min: return ncclMin;
            case reduce_op::max: return ncclMax;
            case reduce_op::product: return ncclProd;
        }
        return ncclSum;
    }

    mpi_communicator* mpi_;
    int device_ = 0;
    cudaStream_t stream_ = nullptr;
    ncclComm_t comm_ = nullptr;
    std::mutex mu_;
};

}  // namespace graft::dist
