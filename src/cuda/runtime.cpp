// graft::cuda's host side: errors, devices, streams with their library handles, the caching
// allocator, host<->device copies, and the exec backend. Plain C++ against the CUDA runtime API.
#include "graft/device/cuda_runtime.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include <cublasLt.h>

#include "graft/cuda/check.hpp"

namespace graft::cuda {

void throw_cuda_error(const char* call, const char* library, int code, const char* message, const char* file,
                      int line) {
    std::ostringstream m;
    m << call << " failed: " << library << " error " << code << " (" << (message ? message : "?") << ") at " << file
      << ":" << line;
    std::string hint;
    std::string msg = message ? message : "";
    if (msg.find("out of memory") != std::string::npos || msg.find("ALLOC") != std::string::npos) {
        hint = "the GPU is out of memory: use a smaller batch, or call graft::cuda::empty_cache() to return cached blocks";
    } else if (code == cudaErrorNoDevice || code == cudaErrorInsufficientDriver) {
        hint = "no usable CUDA device/driver: run on the CPU (clear the device or use soft placement)";
    } else {
        hint = "CUDA errors are often reported by a later call than the one that caused them; run with "
               "CUDA_LAUNCH_BLOCKING=1 (and compute-sanitizer) to find the first failing kernel";
    }
    throw error(m.str(), {}, hint);
}

int device_count() noexcept {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();  // clear the sticky "no device" error
        return 0;
    }
    return n;
}

device_properties properties(int index) {
    cudaDeviceProp p{};
    GRAFT_CUDA_CHECK(cudaGetDeviceProperties(&p, index));
    device_properties r;
    r.name = p.name;
    r.major = p.major;
    r.minor = p.minor;
    r.total_memory = p.totalGlobalMem;
    r.multiprocessors = p.multiProcessorCount;
    return r;
}

// ------------------------------------------------------------------------------------------ stream

struct stream::state {
    int device = 0;
    cudaStream_t s = nullptr;
    cublasHandle_t cublas = nullptr;
    cublasLtHandle_t lt = nullptr;
    cudnnHandle_t cudnn = nullptr;
    void* workspace = nullptr;
    std::size_t workspace_bytes = 0;
    // Pinned staging for host -> device copies; reused after its last copy completed.
    void* pinned = nullptr;
    std::size_t pinned_bytes = 0;
    cudaEvent_t pinned_done = nullptr;

    ~state() {
        // Never throws: a destructor during unwinding or at exit (driver possibly gone).
        cudaSetDevice(device);
        if (s) cudaStreamSynchronize(s);
        if (cudnn) cudnnDestroy(cudnn);
        if (lt) cublasLtDestroy(lt);
        if (cublas) cublasDestroy(cublas);
        if (workspace) cudaFree(workspace);
        if (pinned) cudaFreeHost(pinned);
        if (pinned_done) cudaEventDestroy(pinned_done);
        if (s) cudaStreamDestroy(s);
        cudaGetLastError();
    }
};

stream::stream(int index) : p_(std::make_shared<state>()) {
    int n = device_count();
    if (index < 0 || index >= n) {
        throw invalid_argument_error(detail::cat("no CUDA device ", index, " (", n, " present)"), {},
                                     "place the graph on an existing device or on the CPU");
    }
    p_->device = index;
    GRAFT_CUDA_CHECK(cudaSetDevice(index));
    // Blocking with respect to the legacy default stream: a synchronous cudaMemcpy waits for us.
    GRAFT_CUDA_CHECK(cudaStreamCreateWithFlags(&p_->s, cudaStreamDefault));
}

stream::~stream() = default;

int stream::device_index() const { return p_->device; }
void* stream::native() const { return p_->s; }
void stream::activate() const { GRAFT_CUDA_CHECK(cudaSetDevice(p_->device)); }

void* stream::cublas() {
    if (!p_->cublas) {
        activate();
        GRAFT_CUBLAS_CHECK(cublasCreate(&p_->cublas));
        GRAFT_CUBLAS_CHECK(cublasSetStream(p_->cublas, p_->s));
    }
    GRAFT_CUBLAS_CHECK(cublasSetMathMode(p_->cublas, allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
    return p_->cublas;
}

void* stream::cublas_lt() {
    if (!p_->lt) {
        activate();
        GRAFT_CUBLAS_CHECK(cublasLtCreate(&p_->lt));
    }
    return p_->lt;
}

void* stream::cudnn() {
    if (!p_->cudnn) {
        activate();
        GRAFT_CUDNN_CHECK(cudnnCreate(&p_->cudnn));
        GRAFT_CUDNN_CHECK(cudnnSetStream(p_->cudnn, p_->s));
    }
    return p_->cudnn;
}

void* stream::workspace(std::size_t bytes) {
    if (bytes <= p_->workspace_bytes && p_->workspace) return p_->workspace;
    activate();
    if (p_->workspace) {
        // Work queued earlier may still read the old workspace.
        GRAFT_CUDA_CHECK(cudaStreamSynchronize(p_->s));
        GRAFT_CUDA_CHECK(cudaFree(p_->workspace));
        p_->workspace = nullptr;
        p_->workspace_bytes = 0;
    }
    std::size_t want = std::max<std::size_t>(bytes, 1 << 20);
    GRAFT_CUDA_CHECK(cudaMalloc(&p_->workspace, want));
    p_->workspace_bytes = want;
    return p_->workspace;
}

void stream::synchronize() {
    activate();
    GRAFT_CUDA_CHECK(cudaStreamSynchronize(p_->s));
}

// ------------------------------------------------------------------------------- caching allocator

namespace {

/// Sizes are rounded so that blocks are reusable across nearby requests: 512-byte steps below
/// 1 MiB, 2 MiB steps above.
std::size_t round_size(std::size_t bytes) {
    if (bytes == 0) bytes = 1;
    if (bytes < (1u << 20)) return (bytes + 511) / 512 * 512;
    return (bytes + (2u << 20) - 1) / (2u << 20) * (2u << 20);
}

struct block {
    void* ptr = nullptr;
    std::size_t size = 0;
    int device = 0;
    cudaEvent_t freed = nullptr;                 ///< recorded on the last user's stream at free
    std::weak_ptr<stream::state> last_user;      ///< that stream (expired: it was synchronized and destroyed)
};

class caching_allocator {
public:
    std::shared_ptr<buffer> allocate(std::size_t bytes, stream& s) {
        std::size_t size = round_size(bytes);
        int dev = s.device_index();
        block* b = nullptr;
        {
            std::lock_guard lock(mu_);
            auto& pool = free_[dev];
            auto it = pool.lower_bound(size);
            // Reuse a block no more than twice the request (large ones: plus 2 MiB), else allocate.
            if (it != pool.end() && it->first <= std::max(2 * size, size + (2u << 20))) {
                b = it->second;
                pool.erase(it);
                cached_[dev] -= b->size;
            }
        }
        if (b) {
            auto owner = b->last_user.lock();
            if (b->freed && owner && owner.get() != s.impl().get()) {
                // Last used on another stream that still lives: order our use after its work.
                GRAFT_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(s.native()), b->freed, 0));
            }
        } else {
            b = new block;
            b->size = size;
            b->device = dev;
            s.activate();
            cudaError_t e = cudaMalloc(&b->ptr, size);
            if (e == cudaErrorMemoryAllocation) {
                cudaGetLastError();
                release_cached(dev);
                e = cudaMalloc(&b->ptr, size);
            }
            if (e != cudaSuccess) {
                cudaGetLastError();
                delete b;
                auto st = stats(dev);
                throw error(detail::cat("out of GPU memory on /device:GPU:", dev, " allocating ", bytes, " bytes (",
                                        st.in_use, " bytes in use, ", st.peak_in_use, " at peak): ",
                                        cudaGetErrorString(e)),
                            {}, "use a smaller batch or free tensors that hold device memory");
            }
            std::lock_guard lock(mu_);
            ++mallocs_[dev];
        }
        {
            std::lock_guard lock(mu_);
            in_use_[dev] += b->size;
            peak_[dev] = std::max(peak_[dev], in_use_[dev]);
        }
        b->last_user = s.impl();
        std::weak_ptr<stream::state> user = s.impl();
        return std::make_shared<buffer>(b->ptr, bytes, graft::device{device_kind::cuda, dev},
                                        [this, b, user](void*) { release(b, user); });
    }

    /// Back to the pool; never throws (runs in buffer destructors).
    void release(block* b, const std::weak_ptr<stream::state>& user) noexcept {
        if (auto s = user.lock()) {
            int cur = 0;
            cudaGetDevice(&cur);
            cudaSetDevice(b->device);
            if (!b->freed) cudaEventCreateWithFlags(&b->freed, cudaEventDisableTiming);
            if (b->freed) cudaEventRecord(b->freed, s->s);
            cudaSetDevice(cur);
            cudaGetLastError();
        }
        b->last_user = user;
        std::lock_guard lock(mu_);
        in_use_[b->device] -= b->size;
        cached_[b->device] += b->size;
        free_[b->device].emplace(b->size, b);
    }

    /// Frees every cached block of `dev` (after the device finished the work that used them).
    void release_cached(int dev) {
        std::multimap<std::size_t, block*> pool;
        {
            std::lock_guard lock(mu_);
            pool.swap(free_[dev]);
            cached_[dev] = 0;
        }
        if (pool.empty()) return;
        int cur = 0;
        cudaGetDevice(&cur);
        cudaSetDevice(dev);
        cudaDeviceSynchronize();
        for (auto& [_, b] : pool) {
            cudaFree(b->ptr);
            if (b->freed) cudaEventDestroy(b->freed);
            delete b;
        }
        cudaSetDevice(cur);
        cudaGetLastError();
    }

    void release_all() {
        std::vector<int> devs;
        {
            std::lock_guard lock(mu_);
            for (auto& [d, _] : free_) devs.push_back(d);
        }
        for (int d : devs) release_cached(d);
    }

    memory_stats stats(int dev) {
        std::lock_guard lock(mu_);
        memory_stats s;
        s.in_use = in_use_[dev];
        s.cached = cached_[dev];
        s.peak_in_use = peak_[dev];
        s.device_mallocs = mallocs_[dev];
        return s;
    }

private:
    std::mutex mu_;
    std::map<int, std::multimap<std::size_t, block*>> free_;
    std::map<int, std::size_t> in_use_, cached_, peak_, mallocs_;
};

/// Lives until exit and is never destroyed: buffers freed by static destructors still find it.
caching_allocator& allocator() {
    static auto* a = new caching_allocator();
    return *a;
}

}  // namespace

std::shared_ptr<buffer> allocate(std::size_t bytes, stream& s) { return allocator().allocate(bytes, s); }

tensor empty(dtype t, const graft::shape& sh, stream& s) {
    if (base_type(t) == dtype::string) {
        throw invalid_argument_error("string tensors cannot live on a GPU", {}, "keep string ops on the CPU");
    }
    if (!sh.fully_defined()) throw invalid_argument_error("device tensor of unknown shape " + sh.str());
    std::size_t bytes = static_cast<std::size_t>(sh.num_elements()) * dtype_size(t);
    return tensor::from_buffer(t, sh, allocate(bytes, s));
}

tensor zeros(dtype t, const graft::shape& sh, stream& s) {
    tensor r = empty(t, sh, s);
    if (r.nbytes() > 0) {
        s.activate();
        GRAFT_CUDA_CHECK(cudaMemsetAsync(r.raw_data(), 0, r.nbytes(), static_cast<cudaStream_t>(s.native())));
    }
    return r;
}

void copy_async(void* dst, const void* src, std::size_t bytes, stream& s) {
    if (bytes == 0) return;
    s.activate();
    GRAFT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(s.native())));
}

tensor clone(const tensor& t, stream& s) {
    if (t.on_host()) return to_device(t, s);
    tensor r = empty(t.type(), t.shape(), s);
    copy_async(r.raw_data(), t.raw_data(), t.nbytes(), s);
    return r;
}

tensor to_device(const tensor& t, stream& s) {
    if (!t.valid()) throw invalid_argument_error("to_device: empty tensor");
    if (base_type(t.type()) == dtype::string) {
        throw invalid_argument_error("string tensor " + t.describe() + " cannot be copied to a GPU", {},
                                     "keep string ops (file names, SaveV2) on the CPU");
    }
    auto cs = static_cast<cudaStream_t>(s.native());
    tensor r = empty(t.type(), t.shape(), s);
    std::size_t bytes = t.nbytes();
    if (bytes == 0) return r;
    s.activate();
    if (t.on_host()) {
        auto& st = *s.impl();
        // Pinned staging: wait until the previous copy out of it finished, grow it if needed.
        if (st.pinned_done) GRAFT_CUDA_CHECK(cudaEventSynchronize(st.pinned_done));
        else GRAFT_CUDA_CHECK(cudaEventCreateWithFlags(&st.pinned_done, cudaEventDisableTiming));
        if (st.pinned_bytes < bytes) {
            if (st.pinned) GRAFT_CUDA_CHECK(cudaFreeHost(st.pinned));
            st.pinned = nullptr;
            st.pinned_bytes = 0;
            std::size_t want = std::max<std::size_t>(bytes, 1 << 20);
            GRAFT_CUDA_CHECK(cudaMallocHost(&st.pinned, want));
            st.pinned_bytes = want;
        }
        std::memcpy(st.pinned, t.raw_data(), bytes);
        GRAFT_CUDA_CHECK(cudaMemcpyAsync(r.raw_data(), st.pinned, bytes, cudaMemcpyHostToDevice, cs));
        GRAFT_CUDA_CHECK(cudaEventRecord(st.pinned_done, cs));
        return r;
    }
    int src = t.dev().index;
    if (src == s.device_index()) {
        GRAFT_CUDA_CHECK(cudaMemcpyAsync(r.raw_data(), t.raw_data(), bytes, cudaMemcpyDeviceToDevice, cs));
        return r;
    }
    // Another GPU: wait for the work queued there (its blocking streams), then copy peer to peer.
    GRAFT_CUDA_CHECK(cudaSetDevice(src));
    GRAFT_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
    s.activate();
    GRAFT_CUDA_CHECK(cudaMemcpyPeerAsync(r.raw_data(), s.device_index(), t.raw_data(), src, bytes, cs));
    return r;
}

tensor to_host(const tensor& t) {
    if (!t.valid() || t.on_host()) return t;
    if (t.dev().kind != device_kind::cuda) throw invalid_argument_error("to_host: tensor on " + t.dev().str());
    tensor r = tensor::uninitialized(t.type(), t.shape());
    if (t.nbytes() == 0) return r;
    GRAFT_CUDA_CHECK(cudaSetDevice(t.dev().index));
    // Synchronous on the legacy default stream: waits for the work queued on the blocking streams.
    GRAFT_CUDA_CHECK(cudaMemcpy(r.raw_data(), t.raw_data(), t.nbytes(), cudaMemcpyDeviceToHost));
    return r;
}

memory_stats stats(int index) { return allocator().stats(index); }
void empty_cache() { allocator().release_all(); }

}  // namespace graft::cuda
