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
#include "graft/core/callable_ref.hpp"

namespace graft {

namespace detail {
/// One run_tasks call's shares: whoever takes part (the caller, a pool worker it enqueued, a worker
/// still spinning from an earlier call) claims the next unclaimed share until none is left, so the
/// caller finishes the job alone if no worker comes.
struct task_job {
    const callable_ref<void(int)>* fn = nullptr;
    int tasks = 0;
    std::uint64_t seq = 0;
    std::atomic<int> next{1};  // share 0 is the caller's
    std::atomic<int> left{0};  // shares [1, tasks) not finished yet
    std::mutex mu;
    std::exception_ptr error;
    void work() {
        for (int t = next.fetch_add(1, std::memory_order_acq_rel); t < tasks;
             t = next.fetch_add(1, std::memory_order_acq_rel)) {
            try {
                (*fn)(t);
            } catch (...) {
                std::lock_guard lock(mu);
                if (!error) error = std::current_exception();
            }
            if (left.fetch_sub(1, std::memory_order_acq_rel) == 1) left.notify_one();
        }
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
/// A lock for critical sections of a few instructions that a caller and spinning workers take at
/// the same moment (task_hub::current): std::mutex parks a thread that finds it held in the kernel,
/// and the futex sleep and wake cost microseconds on a VM. A waiter spins, and yields its core
/// after a while in case the holder was preempted. run_tasks(2) with trivial shares, 2 vCPUs
/// (Emerald Rapids): median 0.75-1.1 -> 0.53-0.58 us; the MLP's forward at batch 1 on 2 threads
/// (two parallel layers) 18.5-18.9 -> 17.5-18.1 us.
class spin_lock {
public:
    void lock() noexcept {
        for (int i = 1; flag_.exchange(true, std::memory_order_acquire);) {
            for (; flag_.load(std::memory_order_relaxed); ++i) {
                if (i % 1024 == 0) std::this_thread::yield();
                spin_pause();
            }
        }
    }
    void unlock() noexcept { flag_.store(false, std::memory_order_release); }

private:
    std::atomic<bool> flag_{false};
};
/// Where a pool worker that finished its shares waits, spinning, for the next run_tasks call: a
/// parked worker takes ~35 us to wake on a virtual machine (measured on 2 vCPUs: two 30 us shares
/// took 31 us back to back and 65-69 us once the caller had spent 50 us or more between calls),
/// which the products of an LSTM step or a training step pay once each.
struct task_hub {
    spin_lock mu;                           // guards current
    std::shared_ptr<task_job> current;      // the latest job posted
    std::atomic<std::uint64_t> posted{0};   // its seq
    std::atomic<int> spinning{0};           // workers waiting here
    std::atomic<std::uint64_t> released{0};  // bumped when they must go back to the pool at once
};
inline task_hub& hub() {
    static task_hub& h = *new task_hub;  // never destroyed: a worker may still spin at exit
    return h;
}
/// How long a worker spins for the next call (GRAFT_SPIN_US, default 200; 0: it never waits).
inline std::chrono::microseconds task_spin() {
    static const std::chrono::microseconds us = [] {
        const char* e = std::getenv("GRAFT_SPIN_US");
        return std::chrono::microseconds(e ? std::max(0, std::atoi(e)) : 200);
    }();
    return us;
}
/// How many workers are spinning for the next run_tasks call now (each takes a share within a
/// microsecond or two; a parked one takes tens to wake).
inline int spinning_workers() { return hub().spinning.load(std::memory_order_relaxed); }
/// Sends the spinning workers back to the pool: Eigen's own tasks (cpu_device()) and a pool rebuild
/// must not wait for them.
inline void release_spinners() { hub().released.fetch_add(1, std::memory_order_acq_rel); }

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
        release_spinners();
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

namespace detail {
/// The pool's device, as run_tasks uses it.
inline const Eigen::ThreadPoolDevice& pool_device() {
    auto& s = threads();
    std::lock_guard lock(s.mu);
    if (!s.pool) s.rebuild(thread_state::default_threads());
    return *s.dev;
}
}  // namespace detail

/// The shared Eigen device for CPU kernels: `out.device(graft::cpu_device()) = a + b;`. Workers
/// waiting for graft's next parallel loop go back to the pool first, so Eigen's tasks find them.
inline const Eigen::ThreadPoolDevice& cpu_device() {
    detail::release_spinners();
    return detail::pool_device();
}

namespace detail {
/// A pool worker's part in run_tasks: the job's shares, then, while jobs keep coming within
/// task_spin() of each other and nothing else needs the pool, the next job's.
inline void task_worker(std::shared_ptr<task_job> job) {
    auto& h = hub();
    for (;;) {
        // read before this worker's last share can let its caller go on to Eigen work
        const std::uint64_t released = h.released.load(std::memory_order_acquire);
        job->work();
        const std::uint64_t seq = job->seq;
        job.reset();
        if (task_spin().count() == 0) return;
        h.spinning.fetch_add(1, std::memory_order_seq_cst);
        const auto start = std::chrono::steady_clock::now();
        for (int i = 1;; ++i) {
            if (h.posted.load(std::memory_order_acquire) != seq) {
                std::lock_guard lock(h.mu);
                job = h.current;
                break;
            }
            if (h.released.load(std::memory_order_acquire) != released) break;
            if (i % 64 == 0 && std::chrono::steady_clock::now() - start > task_spin()) break;
            spin_pause();
        }
        // Leaving: a caller that counted this worker among the spinners enqueued no pool task for
        // it, so look once more after leaving the count. Both sides are sequentially consistent
        // (the caller publishes the job, then reads the count; this worker leaves the count, then
        // reads the job), so either the caller saw it leave or it sees the job.
        h.spinning.fetch_sub(1, std::memory_order_seq_cst);
        if (!job && h.posted.load(std::memory_order_seq_cst) != seq) {
            std::lock_guard lock(h.mu);
            job = h.current;  // null once that job has ended
        }
        if (!job) return;
    }
}
}  // namespace detail

/// Runs fn(task) for task in [0, tasks) on the pool, the caller running task 0 (and any share no
/// worker has claimed by then), and waits for all of them; the first exception a task threw is
/// rethrown then (after every task has finished). The caller spins a while before it sleeps: the
/// shares are near-equal, so the others are usually done within microseconds, and waking a
/// sleeping thread costs tens of microseconds on a virtual machine (measured: a 1.6 MB
/// matrix-vector product on 2 threads took 10 or 35 us depending on whether the caller slept;
/// Eigen::Barrier never spins). The workers spin too, for the next call (detail::task_worker).
inline void run_tasks(int tasks, callable_ref<void(int)> fn) {
    if (tasks <= 1) {
        if (tasks == 1) fn(0);
        return;
    }
    const auto& dev = detail::pool_device();
    if (dev.currentThreadId() >= 0) {  // called from a pool worker: nested, run the shares here
        for (int t = 0; t < tasks; ++t) fn(t);
        return;
    }
    auto& h = detail::hub();
    auto job = std::make_shared<detail::task_job>();
    job->fn = &fn;
    job->tasks = tasks;
    job->left.store(tasks - 1);
    {
        std::lock_guard lock(h.mu);
        job->seq = h.posted.load(std::memory_order_relaxed) + 1;
        h.current = job;
        h.posted.store(job->seq, std::memory_order_seq_cst);
    }
    // workers spinning from the last call take shares on their own (one leaving the spin as this
    // job is posted still sees it: task_worker); wake pool workers for the rest
    for (int t = h.spinning.load(std::memory_order_seq_cst); t < std::min(tasks - 1, dev.numThreads() - 1); ++t)
        dev.enqueueNoNotification([job] { detail::task_worker(job); });
    try {
        fn(0);
    } catch (...) {
        std::lock_guard lock(job->mu);
        if (!job->error) job->error = std::current_exception();
    }
    job->work();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 1; job->left.load(std::memory_order_acquire) != 0; ++i) {
        if (i % 64 == 0 && std::chrono::steady_clock::now() - start > std::chrono::microseconds(100)) {
            for (int v = job->left.load(std::memory_order_acquire); v != 0; v = job->left.load(std::memory_order_acquire))
                job->left.wait(v, std::memory_order_acquire);
            break;
        }
        detail::spin_pause();
    }
    {
        std::lock_guard lock(h.mu);
        if (h.current == job) h.current.reset();
    }
    if (job->error) std::rethrow_exception(job->error);
}

}  // namespace graft
