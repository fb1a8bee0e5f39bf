#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>
#include <string>
#include <vector>

#include "graft/core/callable_ref.hpp"
#include "graft/core/tensor.hpp"
#include "graft/core/threads.hpp"

TEST_CASE("one shared thread pool, resizable, used by Eigen expressions") {
    graft::set_num_threads(2);
    CHECK(graft::num_threads() == 2);
    CHECK(graft::cpu_device().numThreads() == 2);
    graft::tensor a = graft::tensor::from_vector<float>({1.f, 2.f, 3.f});
    graft::tensor b(graft::dtype::float32, {3});
    b.flat<float>().device(graft::cpu_device()) = a.flat<float>() * 2.f + 1.f;
    CHECK(b.flat<float>()(2) == 7.f);
    graft::set_num_threads(1);
    CHECK(graft::num_threads() == 1);
    CHECK_THROWS_AS(graft::set_num_threads(0), graft::invalid_argument_error);
}

TEST_CASE("run_tasks: every share runs once, the caller's included; a throwing share is rethrown after all end") {
    for (int threads : {1, 2, 3}) {
        graft::set_num_threads(threads);
        std::vector<std::atomic<int>> runs(5);
        graft::run_tasks(5, [&](int t) { runs[static_cast<std::size_t>(t)].fetch_add(1); });
        for (auto& r : runs) CHECK(r.load() == 1);
        // share 3 throws; the others still run to the end before run_tasks rethrows
        std::vector<std::atomic<int>> done(4);
        try {
            graft::run_tasks(4, [&](int t) {
                if (t == 3) throw graft::invalid_argument_error("share 3 failed");
                done[static_cast<std::size_t>(t)].store(1);
            });
            FAIL("run_tasks must rethrow");
        } catch (const graft::invalid_argument_error& e) {
            CHECK(std::string(e.what()).find("share 3 failed") != std::string::npos);
        }
        CHECK(done[0].load() + done[1].load() + done[2].load() == 3);
        // a share that itself runs tasks (from a pool worker: they run inline there)
        std::atomic<int> inner{0};
        graft::run_tasks(2, [&](int) { graft::run_tasks(3, [&](int) { inner.fetch_add(1); }); });
        CHECK(inner.load() == 6);
    }
    graft::set_num_threads(2);
}

TEST_CASE("callable_ref: calls the callable it was bound to, never a copy; lambdas of any capture size run as shares") {
    // a lambda capturing more than std::function keeps inline (five references)
    std::int64_t a = 1, b = 10, c = 100, d = 1000, e = 10000;
    std::vector<std::int64_t> got(4, 0);
    for (int threads : {1, 2}) {
        graft::set_num_threads(threads);
        std::fill(got.begin(), got.end(), 0);
        graft::run_tasks(4, [&, a, b, c, d, e](int t) { got[static_cast<std::size_t>(t)] = (a + b + c + d + e) * t; });
        CHECK(got == std::vector<std::int64_t>{0, 11111, 22222, 33333});
    }
    graft::set_num_threads(2);
    // state the callable keeps is the bound object's: calls through a copy of the reference count there
    int calls = 0;
    auto counter = [&calls, n = 0](int x) mutable { ++n; calls = n; return x * 2; };
    graft::callable_ref<int(int)> r = counter;
    const graft::callable_ref<int(int)> copy = r;
    CHECK(r(3) == 6);
    CHECK(copy(4) == 8);
    CHECK(calls == 2);
    // a std::function, and a result converted to the declared return type
    std::function<double(int)> half = [](int x) { return x / 2.0; };
    graft::callable_ref<double(int)> h = half;
    CHECK(h(5) == 2.5);
    const auto next = [](int x) { return static_cast<short>(x + 1); };
    graft::callable_ref<long(int)> widened = next;
    CHECK(widened(41) == 42L);
    // a function through a pointer to it (a function name itself does not bind)
    int (*const negate)(int) = [](int x) { return -x; };
    graft::callable_ref<int(int)> neg = negate;
    CHECK(neg(7) == -7);
    static_assert(!std::is_constructible_v<graft::callable_ref<int(int)>, int(int)>);
    static_assert(!std::is_constructible_v<graft::callable_ref<int(int)>, std::string>);
}

TEST_CASE("run_tasks: a worker waiting from the last call takes the next one's share; Eigen work and a resize in between") {
    // Share 0 (the caller's) waits until share 1 has started on another thread, so every call
    // below needs a pool worker: one still spinning from the call before (back to back), one
    // sent back to the pool by an Eigen expression (cpu_device()), or one parked after a pause
    // longer than the spin (GRAFT_SPIN_US, 200 us by default) and woken, or one giving up its spin
    // just as the call posts its job (it must still see that job).
    for (int threads : {2, 3}) {
        graft::set_num_threads(threads);
        graft::tensor a = graft::tensor::from_vector<float>({1.f, 2.f, 3.f, 4.f});
        graft::tensor b(graft::dtype::float32, {4});
        long total = 0;
        for (int call = 0; call < 300; ++call) {
            std::atomic<bool> started{false};
            std::atomic<bool> waited_out{false};
            std::vector<std::atomic<int>> runs(static_cast<std::size_t>(threads));
            graft::run_tasks(threads, [&](int t) {
                runs[static_cast<std::size_t>(t)].fetch_add(1);
                if (t == 1) started.store(true);
                if (t != 0) return;
                const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
                while (!started.load()) {
                    if (std::chrono::steady_clock::now() > until) {
                        waited_out.store(true);
                        return;
                    }
                }
            });
            CHECK_FALSE(waited_out.load());
            for (auto& r : runs) total += r.load() == 1;
            if (call % 3 == 1) {  // Eigen work between two calls
                b.flat<float>().device(graft::cpu_device()) = a.flat<float>() * static_cast<float>(call);
                CHECK(b.flat<float>()(3) == 4.f * static_cast<float>(call));
            }
            if (call % 7 == 2) std::this_thread::sleep_for(std::chrono::microseconds(400));
            if (call % 5 == 3) {  // busy for about the spin's length: the worker gives up as the next call posts
                const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(190 + call % 20);
                while (std::chrono::steady_clock::now() < until) {
                }
            }
            if (call == 150) {  // a rebuilt pool, while a worker may still be spinning in the old one
                graft::set_num_threads(1);
                graft::set_num_threads(threads);
            }
        }
        CHECK(total == 300L * threads);
    }
    graft::set_num_threads(2);
}

TEST_CASE("spin_lock: mutual exclusion under contention, and a holder that sleeps past the waiter's spin") {
    graft::detail::spin_lock lock;
    long counter = 0;  // guarded by lock, not atomic: a lost update shows a broken lock
    constexpr int kThreads = 3, kRounds = 20000;
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; ++t) {
        ts.emplace_back([&] {
            for (int i = 0; i < kRounds; ++i) {
                std::lock_guard g(lock);
                const long v = counter;
                if (i % 997 == 0) std::this_thread::yield();  // held across a reschedule now and then
                counter = v + 1;
            }
        });
    }
    for (auto& t : ts) t.join();
    CHECK(counter == static_cast<long>(kThreads) * kRounds);
    // A holder that sleeps: the waiter spins, then yields its core, and gets the lock once released.
    std::atomic<bool> held{false}, got{false};
    std::thread holder([&] {
        std::lock_guard g(lock);
        held.store(true);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    });
    while (!held.load()) std::this_thread::yield();
    std::thread waiter([&] {
        std::lock_guard g(lock);
        got.store(true);
    });
    holder.join();
    waiter.join();
    CHECK(got.load());
}
