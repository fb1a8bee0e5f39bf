// graft/core/threads.hpp — the one Eigen ThreadPoolDevice that graft's CPU kernels share.
//
// Its size comes from set_num_threads(n), else the GRAFT_NUM_THREADS environment variable, else
// the number of hardware threads: n threads are the calling thread and n - 1 pool workers, so
// parallel loops run a share on the caller (graft::run_tasks). Resize only while no kernel runs.
#pragma once

#include "graft/core/config.hpp"
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <unsupported/Eigen/CXX11/Tensor>

#include "graft/core/error.hpp"

namespace graft {

namespace detail {
struct thread_state {
    std::mutex mu;
    int n = 0;
    std::unique_ptr<Eigen::ThreadPool> pool;
    std::unique_ptr<Eigen::ThreadPoolDevice> dev;

    static int default_threads() {
        if (const char* e = std::getenv("GRAFT_NUM_THREADS")) {
            int v = std::atoi(e);
            if (v > 0) return v;
        }
        auto h = static_cast<int>(std::thread::hardware_concurrency());
        return h > 0 ? h : 1;
    }
    void rebuild(int threads) {
        dev.reset();
        pool.reset();
        n = threads;
        // The caller of a parallel loop runs one share itself (run_tasks), so n threads are the
        // caller and n - 1 workers. A pool of n workers oversubscribes the cores: Eigen keeps one
        // idle worker spinning for new work, and on two cores that spinner and the caller pushed
        // the second worker off the CPU (measured on 2 cores: LeNet training step at batch 128,
        // 6.6-8.1 ms with 2 workers, 5.0-5.4 with 1; MLP forward at batch 1 57 -> 29 us).
        pool = std::make_unique<Eigen::ThreadPool>(std::max(1, threads - 1));
        dev = std::make_unique<Eigen::ThreadPoolDevice>(pool.get(), threads);
    }
};
/// A hint to the core that this thread is spinning.
inline void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

inline thread_state& threads() {
    static thread_state s;
    return s;
}
}  // namespace detail

/// Sets the number of CPU threads kernels use (>= 1). Call while no graph runs. Throws on n < 1.
inline void set_num_threads(int n) {
    if (n < 1) throw invalid_argument_error(detail::cat("set_num_threads(", n, "): need at least 1"));
    auto& s = detail::threads();
    std::lock_guard lock(s.mu);
    if (s.n != n) s.rebuild(n);
}

/// The number of CPU threads kernels use.
inline int num_threads() {
    auto& s = detail::threads();
    std::lock_guard lock(s.mu);
    if (!s.pool) s.rebuild(detail::thread_state::default_threads());
    return s.n;
}

/// The shared Eigen device for CPU kernels: `out.device(graft::cpu_device()) = a + b;`.
inline const Eigen::ThreadPoolDevice& cpu_device() {
    auto& s = detail::threads();
    std::lock_guard lock(s.mu);
    if (!s.pool) s.rebuild(detail::thread_state::default_threads());
    return *s.dev;
}

/// Runs fn(task) for task in [0, tasks) on the pool, the caller running task 0, and waits for all
/// of them; the first exception a task threw is rethrown then (after every task has finished).
/// The caller spins a while before it sleeps: the shares are near-equal, so the others are
/// usually done within microseconds, and waking a sleeping thread costs tens of microseconds on
/// a virtual machine (measured: a 1.6 MB matrix-vector product on 2 threads took 10 or 35 us
/// depending on whether the caller slept; Eigen::Barrier never spins).
inline void run_tasks(int tasks, const std::function<void(int)>& fn) {
    if (tasks <= 1) {
        if (tasks == 1) fn(0);
        return;
    }
    const auto& dev = cpu_device();
    if (dev.currentThreadId() >= 0) {  // called from a pool worker: nested, run the shares here
        for (int t = 0; t < tasks; ++t) fn(t);
        return;
    }
    struct shared {
        std::atomic<int> left;
        std::mutex mu;
        std::exception_ptr error;
        void keep(std::exception_ptr e) {
            std::lock_guard lock(mu);
            if (!error) error = std::move(e);
        }
    };
    // shared with the workers: the last one notifies after the caller may already have seen zero
    auto st = std::make_shared<shared>();
    st->left.store(tasks - 1);
    for (int t = 1; t < tasks; ++t) {
        dev.enqueueNoNotification([&fn, t, st] {
            try {
                fn(t);
            } catch (...) {
                st->keep(std::current_exception());
            }
            if (st->left.fetch_sub(1, std::memory_order_acq_rel) == 1) st->left.notify_one();
        });
    }
    try {
        fn(0);
    } catch (...) {
        st->keep(std::current_exception());
    }
    const auto start = std::chrono::steady_clock::now();
    for (int i = 1; st->left.load(std::memory_order_acquire) != 0; ++i) {
        if (i % 64 == 0 && std::chrono::steady_clock::now() - start > std::chrono::microseconds(100)) {
            for (int v = st->left.load(std::memory_order_acquire); v != 0; v = st->left.load(std::memory_order_acquire))
                st->left.wait(v, std::memory_order_acquire);
            break;
        }
        detail::spin_pause();
    }
    if (st->error) std::rethrow_exception(st->error);
}

}  // namespace graft
