// graft/device/cuda_runtime.hpp — the host side of graft::cuda: devices, streams, the caching allocator,
// host<->device copies, and install() (which lets sessions place nodes on GPUs). Link graft::cuda.
// This header includes no CUDA header: handles are passed as void* (cudaStream_t,
// cublasHandle_t, cudnnHandle_t) so host code compiles with any compiler.
//
//   graft::cuda::install();                          // once; sessions then honour /device:GPU:0
//   graft::exec::session s{g, {.default_device = "/gpu:0"}};
//
// Memory: device buffers come from a caching allocator (cudaMalloc'd blocks kept per device and
// reused by size class; no managed memory). A block freed while work that uses it is still queued
// on a stream is reused by that stream directly, and by another stream only after that stream
// waits for an event recorded at the free.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "graft/core/buffer.hpp"
#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"

namespace graft::cuda {

/// Number of CUDA devices this process can use; 0 when there is no GPU or no driver. Never throws.
int device_count() noexcept;

struct device_properties {
    std::string name;
    int major = 0, minor = 0;             ///< compute capability
    std::size_t total_memory = 0;         ///< bytes
    int multiprocessors = 0;
};
/// What device `index` is. Throws error naming the call when it cannot be queried.
device_properties properties(int index);

/// Throws graft::error "CALL failed: CODE (MESSAGE) at FILE:LINE" with a hint; used by
/// GRAFT_CUDA_CHECK and its cuBLAS/cuDNN siblings (graft/cuda/check.hpp).
[[noreturn]] void throw_cuda_error(const char* call, const char* library, int code, const char* message,
                                   const char* file, int line);

/// One ordered queue of work on one device, with its cuBLAS and cuDNN handles (made on first use)
/// and a scratch workspace. Created blocking with respect to the legacy default stream, so a
/// synchronous cudaMemcpy on that device waits for the work queued here. Not thread-safe: one
/// session runs one step at a time on it.
class stream {
public:
    /// A stream on device `index`. Throws error when the device cannot be used.
    explicit stream(int index);
    ~stream();
    stream(const stream&) = delete;
    stream& operator=(const stream&) = delete;

    [[nodiscard]] int device_index() const;
    [[nodiscard]] void* native() const;   ///< cudaStream_t
    [[nodiscard]] void* cublas();         ///< cublasHandle_t bound to this stream
    [[nodiscard]] void* cublas_lt();      ///< cublasLtHandle_t
    [[nodiscard]] void* cudnn();          ///< cudnnHandle_t bound to this stream
    /// At least `bytes` of device scratch, valid for work queued on this stream until the next
    /// workspace() call. Throws on allocation failure.
    [[nodiscard]] void* workspace(std::size_t bytes);
    /// Waits for all work queued on this stream. Throws on an asynchronous device error.
    void synchronize();
    /// Makes the device current on the calling thread.
    void activate() const;

    /// TF32 tensor-core math for float32 GEMMs and convolutions (off: exact float32, TF's default
    /// for tests; on: faster on Ampere and later).
    bool allow_tf32 = false;

    struct state;  ///< implementation (runtime.cpp)
    [[nodiscard]] const std::shared_ptr<state>& impl() const { return p_; }

private:
    std::shared_ptr<state> p_;
};

/// `bytes` of device memory on `s`'s device from the caching allocator, for work on `s`.
/// Throws error ("out of GPU memory ... ", with the allocator's figures) when even after
/// releasing cached blocks cudaMalloc fails.
std::shared_ptr<buffer> allocate(std::size_t bytes, stream& s);
/// A device tensor (contents undefined) for work on `s`. Throws like allocate().
tensor empty(dtype t, const graft::shape& sh, stream& s);
/// A device tensor of zeros (memset queued on `s`).
tensor zeros(dtype t, const graft::shape& sh, stream& s);

/// `t` copied onto `s`'s device: from the host through pinned staging, from another device peer
/// to peer (after the work that wrote it), from the same device as a device-to-device copy.
/// Strings cannot go to a device (invalid_argument_error).
tensor to_device(const tensor& t, stream& s);
/// A host copy of device tensor `t`, after all work queued on its device's blocking streams.
tensor to_host(const tensor& t);
/// A private device copy of device tensor `t` on `s` (tensor::clone() is host-only).
tensor clone(const tensor& t, stream& s);
/// Queues a device-to-device copy of `bytes` on `s`.
void copy_async(void* dst, const void* src, std::size_t bytes, stream& s);

struct memory_stats {
    std::size_t in_use = 0;          ///< bytes handed out and not yet freed
    std::size_t cached = 0;          ///< bytes held by the allocator for reuse
    std::size_t peak_in_use = 0;
    std::size_t device_mallocs = 0;  ///< cudaMalloc calls so far
};
/// The caching allocator's figures for device `index`.
memory_stats stats(int index);
/// Returns every cached block to the driver (blocks in use stay).
void empty_cache();

/// Registers the CUDA backend and graft's GPU kernels with graft::exec (idempotent, thread-safe).
/// After it, sessions place nodes on GPUs by their device attr or the default_device option.
void install();

}  // namespace graft::cuda
