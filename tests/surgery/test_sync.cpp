// Job 5: an inference copy kept in sync with its trainer — in-process (sync into a replica while
// requests run) and across processes (a writer saving every few ms, a watcher swapping checkpoints
// in between requests). Weights encode the step that wrote them, so a torn read shows.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/surgery/sync.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/saver.hpp"
#include "graft/train/variables.hpp"
#include "support/fixtures.hpp"

namespace sync_t {

namespace fs = std::filesystem;
using graft::dtype;
using graft::tensor;
namespace train = graft::train;
namespace surgery = graft::surgery;

constexpr std::int64_t kIn = 4, kOut = 3;

/// y = x @ w + b, a squared loss against `t`, plain gradient descent.
struct model {
    graft::meta_graph mg;
    train::variable w, b;
    std::string train_op, init;
    explicit model(bool trainer = true) {
        graft::graph_builder bl(mg.graph);
        auto x = bl.placeholder("x", dtype::float32, graft::shape{-1, kIn});
        w = train::create_variable(mg, bl, "dense/kernel", tensor::from_vector<float>({kIn, kOut}, std::vector<float>(kIn * kOut, 0.1f)));
        b = train::create_variable(mg, bl, "dense/bias", tensor::from_vector<float>(std::vector<float>(kOut, 0.0f)));
        auto y = bl.op("BiasAdd", {bl.op("MatMul", {x, w.value}, {}, "dense/MatMul"), b.value}, {}, "dense/BiasAdd");
        bl.op("Identity", {y}, {}, "y");
        init = train::global_variables_initializer(mg);
        if (!trainer) return;
        auto t = bl.placeholder("t", dtype::float32, graft::shape{-1, kOut});
        auto d = bl.op("Sub", {y, t});
        auto loss = bl.op("Mean", {bl.op("Square", {d}), bl.constant(tensor::from_vector<std::int32_t>({0, 1}))}, {}, "loss");
        train_op = train::gradient_descent(0.1).minimize(mg, loss);
    }
};

tensor ones_batch() { return tensor::from_vector<float>({2, kIn}, std::vector<float>(2 * kIn, 1.0f)); }

/// Weights of step s: every kernel element s, every bias element 1000 s; y = 4 s + 1000 s.
void set_step(graft::exec::session& s, const model& m, float step) {
    s.variables().at(m.w.name)->assign(tensor::from_vector<float>({kIn, kOut}, std::vector<float>(kIn * kOut, step)));
    s.variables().at(m.b.name)->assign(tensor::from_vector<float>(std::vector<float>(kOut, 1000.0f * step)));
}

/// f() throws a graft::error whose message contains every part.
template <class F>
void expect_naming(F&& f, const std::vector<std::string>& parts) {
    auto e = graft::test::expect_error<graft::error>(f);
    for (const auto& p : parts) CHECK_MESSAGE(std::string(e.what()).find(p) != std::string::npos, e.what(), " lacks ", p);
}

/// The step every output element, kernel element and bias element of one answer agrees on; -1 when
/// they disagree (a torn read).
double step_of(const std::vector<tensor>& r) {
    const float s = r[1].flat<float>()(0);
    for (std::int64_t i = 0; i < r[1].num_elements(); ++i) if (r[1].flat<float>()(i) != s) return -1;
    for (std::int64_t i = 0; i < r[2].num_elements(); ++i) if (r[2].flat<float>()(i) != 1000.0f * s) return -1;
    for (std::int64_t i = 0; i < r[0].num_elements(); ++i) {
        if (r[0].flat<float>()(i) != static_cast<float>(kIn) * s + 1000.0f * s) return -1;
    }
    return s;
}

/// Forks a writer process that sets step 1, 2, ... and saves it with `o` every `every` until
/// killed: under "<prefix>-<step>" when `step_suffix`, else over `prefix` itself. Exits 3 when a
/// save fails.
pid_t fork_writer(const std::string& prefix, const train::saver_options& o, bool step_suffix,
                  std::chrono::milliseconds every) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid != 0) return pid;
    int rc = 0;
    try {
        model w(false);
        graft::exec::session s(w.mg.graph);
        s.run({}, {}, {w.init});
        train::saver saver(w.mg, o);
        for (std::int64_t step = 1; step < 10'000'000; ++step) {
            set_step(s, w, static_cast<float>(step));
            if (step_suffix) saver.save(s, prefix, step);
            else saver.save(s, prefix);
            std::this_thread::sleep_for(every);
        }
    } catch (...) {
        rc = 3;
    }
    ::_exit(rc);
}

}  // namespace sync_t

using namespace sync_t;

TEST_CASE("sync: inference_copy keeps the inference part, places it, and sync copies the trainer's weights") {
    model m;
    graft::exec::session trainer(m.mg.graph);
    trainer.run({}, {}, {m.init});
    graft::graph inf = surgery::inference_copy(m.mg.graph, {"y:0"}, "/device:CPU:1");
    CHECK(inf.find("dense/kernel") != nullptr);
    CHECK(inf.find("dense/kernel/read") != nullptr);
    CHECK(inf.find("loss") == nullptr);                       // training part gone
    CHECK(inf.find("dense/kernel/Assign") == nullptr);        // no initializers
    CHECK(inf.find(m.train_op) == nullptr);
    for (const auto& n : inf) CHECK(n.device == "/device:CPU:1");

    surgery::replica serving(std::move(inf));
    CHECK(serving.variables().size() == 2);
    auto x = tensor::from_vector<float>({2, kIn}, {1, 2, 3, 4, -1, 0.5f, 2, 0});
    auto t = tensor::from_vector<float>({2, kOut}, {1, 0, -1, 2, 1, 0});
    for (int i = 0; i < 5; ++i) trainer.run({{"x", x}, {"t", t}}, {}, {m.train_op});
    auto rep = surgery::sync(trainer, serving);
    CHECK(rep.variables == 2);
    CHECK(rep.bytes == (kIn * kOut + kOut) * 4);
    auto want = trainer.run({{"x", x}}, {"y:0"})[0];
    CHECK(graft::equal(serving.run({{"x", x}}, {"y:0"})[0], want));

    // Training on changes the trainer only; the replica follows at the next sync.
    trainer.run({{"x", x}, {"t", t}}, {}, {m.train_op});
    auto after = trainer.run({{"x", x}}, {"y:0"})[0];
    CHECK_FALSE(graft::equal(after, want));
    CHECK(graft::equal(serving.run({{"x", x}}, {"y:0"})[0], want));
    surgery::sync(trainer, serving);
    CHECK(graft::equal(serving.run({{"x", x}}, {"y:0"})[0], after));

    SUBCASE("bad maps leave the replica as it was") {
        expect_naming([&] { surgery::sync(trainer, serving, {{"dense/kernel", "dense/nope"}}); },
                                  {"dense/nope", "not a variable", "dense/kernel"});
        expect_naming([&] { surgery::sync(trainer, serving, {{"missing/var", "dense/bias"}}); },
                                  {"missing/var", "source session"});
        expect_naming([&] { surgery::sync(trainer, serving, {{"dense/bias", "dense/bias"}, {"dense/kernel", "dense/bias"}}); },
                                  {"dense/bias", "[4,3]", "[3]"});
        CHECK(graft::equal(serving.run({{"x", x}}, {"y:0"})[0], after));
        expect_naming([&] { surgery::inference_copy(m.mg.graph, {"logits:0"}); }, {"logits:0", "not a node"});
    }
}

TEST_CASE("sync: requests running while the trainer syncs every step each see exactly one step") {
    model m(false);
    graft::exec::session trainer(m.mg.graph);
    trainer.run({}, {}, {m.init});
    surgery::replica serving(surgery::inference_copy(m.mg.graph, {"y"}));
    set_step(trainer, m, 0);
    surgery::sync(trainer, serving);

    std::atomic<bool> done{false};
    std::atomic<int> torn{0}, answers{0}, backwards{0};
    auto reader = [&] {
        double last = 0;
        while (!done) {
            auto r = serving.run({{"x", ones_batch()}}, {"y:0", "dense/kernel/read:0", "dense/bias/read:0"});
            double s = step_of(r);
            if (s < 0) ++torn;
            if (s < last) ++backwards;
            last = std::max(last, s);
            ++answers;
        }
    };
    std::thread r1(reader), r2(reader);
    int step = 0;
    for (auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(400); std::chrono::steady_clock::now() < until;) {
        set_step(trainer, m, static_cast<float>(++step));
        surgery::sync(trainer, serving);
    }
    done = true;
    r1.join();
    r2.join();
    MESSAGE("in-process: ", step, " syncs, ", answers.load(), " answers");
    CHECK(torn == 0);
    CHECK(backwards == 0);
    CHECK(answers > 20);
    CHECK(step > 20);
    CHECK(serving.installs() == static_cast<std::size_t>(step) + 1);
}

TEST_CASE("sync: a watcher serves a writer process's checkpoints, never a mix of two, never a half-written one") {
    const fs::path dir = graft::test::scratch("sync_watch");
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string prefix = (dir / "model.ckpt").string();

    // the writer: steps 1, 2, ... every ~3 ms until killed; keeps the last 3 checkpoints
    train::saver_options o;
    o.max_to_keep = 3;
    o.write_meta_graph = false;
    const pid_t pid = fork_writer(prefix, o, true, std::chrono::milliseconds(3));

    model m(false);
    surgery::replica serving(surgery::inference_copy(m.mg.graph, {"y"}));
    surgery::checkpoint_watcher watcher(serving, dir.string(), {std::chrono::milliseconds(2)});
    // Wait for the first checkpoint.
    for (int i = 0; i < 2000 && !watcher.poll() && serving.installs() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    REQUIRE(serving.installs() == 1);
    watcher.start();

    std::atomic<bool> done{false};
    std::atomic<int> torn{0}, answers{0}, errors{0};
    std::mutex seen_mu;
    std::set<double> seen;
    auto client = [&] {
        while (!done) {
            try {
                auto r = serving.run({{"x", ones_batch()}}, {"y:0", "dense/kernel/read:0", "dense/bias/read:0"});
                double s = step_of(r);
                if (s < 1) ++torn;
                else {
                    std::lock_guard lock(seen_mu);
                    seen.insert(s);
                }
            } catch (...) {
                ++errors;
            }
            ++answers;
        }
    };
    std::thread c1(client), c2(client);
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    done = true;
    c1.join();
    c2.join();
    watcher.stop();
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK_FALSE((WIFEXITED(status) && WEXITSTATUS(status) != 0));  // the writer did not fail before the kill

    MESSAGE("cross-process: ", answers.load(), " answers from ", seen.size(), " checkpoints, ", serving.installs(),
            " installs, ", watcher.failures(), " unreadable polls");
    CHECK(errors == 0);
    CHECK(torn == 0);
    CHECK(answers > 100);
    CHECK(seen.size() > 10);  // the replica really followed the writer
    // Every served step was a checkpoint the writer saved: its prefix name carries the step.
    const std::string cur = watcher.current();
    CHECK(cur.rfind(prefix + "-", 0) == 0);
    fs::remove_all(dir);
}

TEST_CASE("sync: a watcher never installs a checkpoint it cannot read completely") {
    const fs::path dir = graft::test::scratch("sync_bad");
    fs::remove_all(dir);
    fs::create_directories(dir);
    model w(false);
    graft::exec::session s(w.mg.graph);
    s.run({}, {}, {w.init});
    train::saver_options o;
    o.write_meta_graph = false;
    train::saver saver(w.mg, o);
    set_step(s, w, 7);
    saver.save(s, (dir / "good").string());

    model m(false);
    surgery::replica serving(surgery::inference_copy(m.mg.graph, {"y"}));
    surgery::checkpoint_watcher watcher(serving, dir.string());
    REQUIRE(watcher.poll());
    CHECK_FALSE(watcher.poll());  // nothing new
    auto answer = [&] { return step_of(serving.run({{"x", ones_batch()}}, {"y:0", "dense/kernel/read:0", "dense/bias/read:0"})); };
    CHECK(answer() == 7);

    // A state naming a checkpoint whose data shard is cut short: not installed, the reason kept.
    set_step(s, w, 8);
    saver.save(s, (dir / "bad").string());
    for (auto& e : fs::directory_iterator(dir)) {
        if (e.path().filename().string().rfind("bad.data-", 0) == 0) fs::resize_file(e.path(), 10);
    }
    CHECK_FALSE(watcher.poll());
    CHECK(watcher.last_error().find("bad") != std::string::npos);
    CHECK(watcher.failures() == 1);
    CHECK(answer() == 7);
    CHECK(watcher.current() == (dir / "good").string());

    // Then a good one again.
    set_step(s, w, 9);
    saver.save(s, (dir / "fixed").string());
    CHECK(watcher.poll());
    CHECK(answer() == 9);
    fs::remove_all(dir);
}

namespace sync_t {
/// Resident set size of this process in bytes (Linux /proc/self/statm).
std::int64_t rss_bytes() {
    std::ifstream f("/proc/self/statm");
    std::int64_t pages = 0, resident = 0;
    f >> pages >> resident;
    return resident * static_cast<std::int64_t>(::sysconf(_SC_PAGESIZE));
}
}  // namespace sync_t

TEST_CASE("sync soak: a writer saving every few ms over the same prefix, a watcher swapping weights under load") {
    // Bounded: GRAFT_SOAK_SECONDS (default 20; 6 under ASan, whose quarantine makes RSS meaningless).
    const int seconds = [] {
        if (const char* e = std::getenv("GRAFT_SOAK_SECONDS")) return std::max(1, std::atoi(e));
        return GRAFT_ASAN ? 6 : 20;
    }();
    const fs::path dir = graft::test::scratch("sync_soak");
    const std::string prefix = (dir / "model.ckpt").string();
    // the writer: one prefix overwritten again and again (file sets), the state file after each
    const pid_t pid = fork_writer(prefix, {}, false, std::chrono::milliseconds(2));
    model m(false);
    surgery::replica serving(surgery::inference_copy(m.mg.graph, {"y"}));
    surgery::checkpoint_watcher watcher(serving, dir.string(), {std::chrono::milliseconds(1)});
    for (int i = 0; i < 5000 && serving.installs() == 0; ++i) {
        (void)watcher.poll();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    REQUIRE(serving.installs() >= 1);
    watcher.start();

    std::atomic<bool> done{false};
    std::atomic<int> torn{0}, answers{0}, errors{0};
    double last_seen = 0;
    int backwards = 0;
    auto client = [&] {
        while (!done) {
            try {
                const double s = step_of(serving.run({{"x", ones_batch()}}, {"y:0", "dense/kernel/read:0", "dense/bias/read:0"}));
                if (s < 1) ++torn;
            } catch (...) {
                ++errors;
            }
            ++answers;
        }
    };
    std::thread c1(client), c2(client);
    std::int64_t rss_warm = 0;
    std::vector<double> steps;
    for (int t = 0; t < seconds * 10; ++t) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (t == seconds * 10 / 3) rss_warm = rss_bytes();
        const double s = step_of(serving.run({{"x", ones_batch()}}, {"y:0", "dense/kernel/read:0", "dense/bias/read:0"}));
        if (s < last_seen) ++backwards;  // installs only move forward
        last_seen = s;
        steps.push_back(s);
    }
    const std::int64_t rss_end = rss_bytes();
    done = true;
    c1.join();
    c2.join();
    watcher.stop();
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK_FALSE((WIFEXITED(status) && WEXITSTATUS(status) != 0));

    MESSAGE("soak ", seconds, " s: ", answers.load(), " answers, ", serving.installs(), " installs, ", watcher.failures(),
            " unreadable polls, RSS ", rss_warm / 1024, " KiB after warm-up -> ", rss_end / 1024, " KiB at the end");
    CHECK(errors == 0);
    CHECK(torn == 0);
    CHECK(backwards == 0);
    CHECK(serving.installs() > static_cast<std::size_t>(seconds * 5));  // it kept following the writer
    CHECK(steps.back() > steps.front());
    if (!GRAFT_ASAN) CHECK(rss_end - rss_warm < (std::int64_t{16} << 20));  // no leak per install
}
