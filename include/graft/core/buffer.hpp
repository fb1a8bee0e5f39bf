// graft/core/buffer.hpp — reference-counted, 64-byte-aligned memory on a device, or a zero-copy
// window onto memory someone else owns (an mmap'd checkpoint shard, a user's array).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "graft/core/config.hpp"
#include "graft/core/error.hpp"
#include "graft/core/limits.hpp"

namespace graft {

/// Alignment of every buffer graft allocates (bytes); matches AVX-512 and Eigen's maximum.
inline constexpr std::size_t buffer_alignment = 64;

enum class device_kind : std::uint8_t { cpu = 0, cuda = 1 };

/// A device as TensorFlow names it: "/device:CPU:0", "/device:GPU:1".
struct device {
    device_kind kind = device_kind::cpu;
    int index = 0;

    [[nodiscard]] bool is_cpu() const { return kind == device_kind::cpu; }
    [[nodiscard]] std::string str() const {
        return std::string(kind == device_kind::cpu ? "/device:CPU:" : "/device:GPU:") +
               std::to_string(index);
    }
    friend bool operator==(const device&, const device&) = default;
};

namespace detail {

inline constexpr bool host_cache_enabled = !GRAFT_ASAN;  // reused blocks would hide use-after-free from ASan

/// Freed host blocks kept for reuse, by size. A program runs the same shapes again and again
/// (a session's steps), and a fresh large block is fresh pages: glibc serves big requests with
/// mmap when its heap cannot take them (as happens once libraries such as OpenBLAS have mapped
/// memory next to it), and every 4 KiB page then faults on first touch: a LeNet training step
/// took 1,200 such faults (+50% time) with libtorch loaded. Blocks of at least `min_bytes`, up to
/// `limit` bytes in all (graft::set_host_cache_limit); process-wide, thread-safe.
/// From 1 KiB: below that glibc serves aligned blocks cheaply, from there its large-bin path (and a
/// consolidation of its fast bins on each such request) cost more than this map's lookup. The
/// MLP's forward at batch 1 on 2 threads (outputs of 2 KiB), median of 100,000 runs, 5 rounds
/// alternating: 18.5-19.1 us with the cache from 128 KiB, 17.6-18.3 from 1 KiB; a chain of ten
/// ops on 4-byte tensors ran 3.4 us either way (3.6-3.75 with every size cached).
class host_block_cache {
public:
    static constexpr std::size_t min_bytes = 1024;

    static host_block_cache& instance() {
        static auto* c = new host_block_cache;  // never destroyed: tensors may outlive static destructors
        return *c;
    }
    void* take(std::size_t bytes) {
        const std::lock_guard<std::mutex> lock(m_);
        auto it = free_.find(bytes);
        if (it == free_.end() || it->second.empty()) return nullptr;
        void* p = it->second.back();
        it->second.pop_back();
        cached_ -= bytes;
        return p;
    }
    void put(void* p, std::size_t bytes) {
        {
            const std::lock_guard<std::mutex> lock(m_);
            if (cached_ + bytes <= limit_) {
                free_[bytes].push_back(p);
                cached_ += bytes;
                return;
            }
        }
        std::free(p);
    }
    /// Caps the bytes kept; 0 turns the cache off. Frees what is over.
    void set_limit(std::size_t bytes) {
        std::vector<void*> drop;
        {
            const std::lock_guard<std::mutex> lock(m_);
            limit_ = bytes;
            for (auto& [size, blocks] : free_) {
                while (cached_ > limit_ && !blocks.empty()) {
                    drop.push_back(blocks.back());
                    blocks.pop_back();
                    cached_ -= size;
                }
            }
        }
        for (void* p : drop) std::free(p);
    }
    [[nodiscard]] std::size_t cached_bytes() {
        const std::lock_guard<std::mutex> lock(m_);
        return cached_;
    }

private:
    std::mutex m_;
    std::unordered_map<std::size_t, std::vector<void*>> free_;
    std::size_t cached_ = 0;
    std::size_t limit_ = std::size_t{256} << 20;
};

}  // namespace detail

/// Bytes of freed host buffers graft keeps for reuse (default 256 MiB; 0: none). Buffers of
/// 1 KiB and more are cached; graft::host_cache_bytes() tells how much is held now.
inline void set_host_cache_limit(std::size_t bytes) { detail::host_block_cache::instance().set_limit(bytes); }
inline std::size_t host_cache_bytes() { return detail::host_block_cache::instance().cached_bytes(); }

/// One block of memory. Owns it (and frees it through its deleter) or keeps its owner alive.
class buffer {
public:
    using deleter_fn = std::function<void(void*)>;

    buffer(void* data, std::size_t size, device dev, deleter_fn deleter,
           std::shared_ptr<const void> owner = nullptr)
        : data_(data), size_(size), dev_(dev), deleter_(std::move(deleter)), owner_(std::move(owner)) {}
    buffer(const buffer&) = delete;
    buffer& operator=(const buffer&) = delete;
    ~buffer() {
        if (deleter_) deleter_(data_);
    }

    /// `size` bytes of host memory aligned to 64 bytes; zero-filled when `zero` is true.
    /// Throws error on allocation failure.
    static std::shared_ptr<buffer> allocate_host(std::size_t size, bool zero = true) {
        if (size > (SIZE_MAX >> 1)) throw error(detail::cat("cannot allocate ", size, " bytes of host memory"));
        load_scope::charge(size);
        std::size_t rounded = (size + buffer_alignment - 1) / buffer_alignment * buffer_alignment;
        if (rounded == 0) rounded = buffer_alignment;
        const bool cached = detail::host_cache_enabled && rounded >= detail::host_block_cache::min_bytes;
        void* p = cached ? detail::host_block_cache::instance().take(rounded) : nullptr;
        if (!p) p = std::aligned_alloc(buffer_alignment, rounded);
        if (!p) {
            throw error(detail::cat("out of host memory allocating ", size, " bytes"));
        }
        if (zero) std::memset(p, 0, rounded);
        if (cached) {
            auto give_back = [rounded](void* q) { detail::host_block_cache::instance().put(q, rounded); };
            return std::make_shared<buffer>(p, size, device{}, give_back);
        }
        return std::make_shared<buffer>(p, size, device{}, [](void* q) { std::free(q); });
    }

    /// Host memory holding `n` empty std::string objects, destroyed with the buffer.
    static std::shared_ptr<buffer> allocate_strings(std::size_t n) {
        if (n > SIZE_MAX / sizeof(std::string)) throw error(detail::cat("cannot allocate ", n, " strings"));
        std::size_t bytes = n * sizeof(std::string);
        load_scope::charge(bytes);
        std::size_t rounded = (bytes + buffer_alignment - 1) / buffer_alignment * buffer_alignment;
        if (rounded == 0) rounded = buffer_alignment;
        void* p = std::aligned_alloc(buffer_alignment, rounded);
        if (!p) throw error(detail::cat("out of host memory allocating ", n, " strings"));
        auto* sp = static_cast<std::string*>(p);
        for (std::size_t i = 0; i < n; ++i) new (sp + i) std::string();
        return std::make_shared<buffer>(p, bytes, device{}, [n](void* q) {
            auto* s = static_cast<std::string*>(q);
            for (std::size_t i = 0; i < n; ++i) s[i].~basic_string();
            std::free(q);
        });
    }

    /// A zero-copy view of `size` bytes at `data` that keeps `owner` alive while it lives.
    static std::shared_ptr<buffer> wrap(void* data, std::size_t size, std::shared_ptr<const void> owner,
                                        device dev = {}) {
        return std::make_shared<buffer>(data, size, dev, nullptr, std::move(owner));
    }

    [[nodiscard]] void* data() const { return data_; }
    [[nodiscard]] std::size_t size() const { return size_; }
    [[nodiscard]] const device& dev() const { return dev_; }
    /// True when this buffer frees its memory itself (false for wrapped/external memory).
    [[nodiscard]] bool owns_memory() const { return static_cast<bool>(deleter_); }

private:
    void* data_;
    std::size_t size_;
    device dev_;
    deleter_fn deleter_;
    std::shared_ptr<const void> owner_;
};

}  // namespace graft
