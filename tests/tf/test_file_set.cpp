// Crash-safe replacement of whole file sets (core/file_set.hpp): a checkpoint prefix, a SavedModel
// directory and a frozen graph, saved new and over an existing set, with the N-th file operation
// failing (every N) and with the process ending at the N-th operation (every N: what a crash there
// leaves), plus a SIGKILL loop at random instants onto an existing prefix.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "graft/core/file_set.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/graph/build.hpp"
#include "graft/formats/tf/bundle_writer.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/formats/tf_graph/saved_model.hpp"
#include "support/faults.hpp"
#include "support/fixtures.hpp"

namespace fs = std::filesystem;
using graft::tensor;
using graft::test::fault;
using graft::test::fault_injector;

namespace {

using values = std::map<std::string, tensor>;

values old_values() {
    values v;
    v["a"] = tensor::from_vector<float>({1, 2, 3});
    v["b"] = tensor::scalar_of<std::int64_t>(7);
    return v;
}
values new_values() {
    values v;
    v["a"] = tensor::from_vector<float>({10, 20, 30, 40, 50});
    v["b"] = tensor::scalar_of<std::int64_t>(8);
    v["c"] = tensor::from_vector<std::string>({"new", "set"});
    return v;
}

void save_bundle(const std::string& prefix, const values& v) {
    graft::tf::bundle_writer w(prefix);
    for (const auto& [k, t] : v) w.add(k, t);
    w.finish();
}

/// The checkpoint's values, or nothing when no checkpoint stands at `prefix`.
std::optional<values> read_bundle(const std::string& prefix) {
    if (!fs::exists(prefix + ".index")) return std::nullopt;
    graft::tf::checkpoint_reader r(prefix);
    values out;
    for (const auto& k : r.keys()) out[k] = r.read(k).clone();
    return out;
}

bool same(const std::optional<values>& got, const values& want) {
    if (!got || got->size() != want.size()) return false;
    for (const auto& [k, t] : want) {
        auto it = got->find(k);
        if (it == got->end() || !graft::equal(it->second, t)) return false;
    }
    return true;
}

/// Files a writer must never leave behind after it returned or threw.
std::vector<std::string> leftovers(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        auto n = e.path().filename().string();
        if (n.find(".tempstate") != std::string::npos || n.find(".graft-txn") != std::string::npos ||
            n.find(".graft-backup") != std::string::npos) {
            out.push_back(e.path().string());
        }
    }
    return out;
}

/// Runs `save` in a child whose `n`-th file operation ends it. True when the child died there,
/// false when it finished (n is past the save's last operation).
template <class F>
bool crash_at(long n, F&& save) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        fault_injector f(n, fault::exit);
        try {
            save();
        } catch (...) {
            ::_exit(2);
        }
        ::_exit(1);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) != 2);
    return WEXITSTATUS(status) == 0;
}

}  // namespace

TEST_CASE("checkpoint save, the N-th write/fsync/rename/link/unlink failing for every N: the old set stays, nothing partial") {
    for (bool over_existing : {false, true}) {
        CAPTURE(over_existing);
        auto dir = graft::test::scratch("file_set_fail");
        const std::string prefix = (dir / "model.ckpt").string();
        long n = 1, failures = 0;
        for (;; ++n) {
            CAPTURE(n);
            fs::remove_all(dir);
            fs::create_directories(dir);
            if (over_existing) save_bundle(prefix, old_values());
            bool threw = false;
            bool fired = false;
            {
                fault_injector f(n);
                try {
                    save_bundle(prefix, new_values());
                } catch (const graft::io_error&) {
                    threw = true;
                }
                fired = f.fired();
            }
            CHECK(leftovers(dir).empty());
            if (threw) {
                ++failures;
                CHECK(fired);
                if (over_existing) {
                    CHECK(same(read_bundle(prefix), old_values()));
                } else {
                    CHECK(!fs::exists(prefix + ".index"));  // nothing under a final name
                    CHECK(!fs::exists(prefix + ".data-00000-of-00001"));
                }
            } else {
                // the failed call was a best-effort directory fsync, or n is past the last call
                CHECK(same(read_bundle(prefix), new_values()));
                if (!fired) break;
            }
        }
        CHECK(failures >= 5);  // writes, fsyncs, the renames (and the links and the marker over an old set)
        MESSAGE("over_existing=" << over_existing << ": " << n - 1 << " file operations, " << failures
                                 << " failures tried");
    }
}

TEST_CASE("checkpoint save over an existing prefix, the process ending at every file operation: old or new, whole") {
    auto dir = graft::test::scratch("file_set_crash");
    const std::string prefix = (dir / "model.ckpt").string();
    int old_seen = 0, new_seen = 0;
    for (long n = 1;; ++n) {
        CAPTURE(n);
        fs::remove_all(dir);
        fs::create_directories(dir);
        save_bundle(prefix, old_values());
        const bool crashed = crash_at(n, [&] { save_bundle(prefix, new_values()); });
        auto got = read_bundle(prefix);  // the reader puts the old set back when the save died half-way
        const bool is_old = same(got, old_values()), is_new = same(got, new_values());
        CHECK((is_old || is_new));
        old_seen += is_old;
        new_seen += is_new;
        CHECK(!fs::exists(prefix + ".graft-txn"));
        // the next save removes what the killed writer left (its temporaries, stale backups)
        save_bundle(prefix, new_values());
        CHECK(leftovers(dir).empty());
        CHECK(same(read_bundle(prefix), new_values()));
        if (!crashed) break;
    }
    CHECK(old_seen > 2);
    CHECK(new_seen > 1);
}

TEST_CASE("a new checkpoint prefix, the process ending at every file operation: the new set or none") {
    auto dir = graft::test::scratch("file_set_crash_new");
    const std::string prefix = (dir / "model.ckpt").string();
    for (long n = 1;; ++n) {
        CAPTURE(n);
        fs::remove_all(dir);
        fs::create_directories(dir);
        const bool crashed = crash_at(n, [&] { save_bundle(prefix, new_values()); });
        if (fs::exists(prefix + ".index")) CHECK(same(read_bundle(prefix), new_values()));
        if (!crashed) {
            CHECK(same(read_bundle(prefix), new_values()));
            break;
        }
    }
}

TEST_CASE("a marker left by a dead writer: the reader restores the old files; a live writer's lock is waited for") {
    auto dir = graft::test::scratch("file_set_marker");
    const std::string prefix = (dir / "m").string();
    save_bundle(prefix, old_values());
    // What a writer killed between its renames leaves: backups, the marker, a new data file.
    for (auto n : {".index", ".data-00000-of-00001"}) fs::create_hard_link(prefix + n, prefix + n + ".graft-backup");
    graft::write_file_atomic(prefix + ".graft-txn", "b m.data-00000-of-00001\nb m.index\n");
    graft::write_file_atomic(prefix + ".data-00000-of-00001", std::string(64, 'x'));
    CHECK(same(read_bundle(prefix), old_values()));
    CHECK(leftovers(dir).empty());

    // A marker that is not graft's is refused with an error that says what to do, not guessed at.
    graft::write_file_atomic(prefix + ".graft-txn", "b ../../etc/passwd\n");
    try {
        graft::recover_file_set(prefix);
        FAIL("a hostile marker was followed");
    } catch (const graft::format_error& e) {
        CHECK(std::string(e.what()).find("by hand") != std::string::npos);
    }
    fs::remove(prefix + ".graft-txn");
}

TEST_CASE("SavedModel saved over an existing one: every N failing, and the process ending at every N") {
    auto dir = graft::test::scratch("file_set_saved_model");
    auto model = [](const std::string& tag, const values& v) {
        graft::meta_graph mg;
        graft::graph_builder b(mg.graph);
        b.constant(v.at("a"), tag);
        return mg;
    };
    const auto old_mg = model("old_marker", old_values()), new_mg = model("new_marker", new_values());
    auto state = [&]() -> int {  // 1: old model, 2: new model, 0: neither or mixed
        auto sm = graft::tf::load_saved_model(dir.string());  // puts back the old set after a crash
        auto vars = read_bundle((dir / "variables" / "variables").string());
        const auto& g = sm.meta_graphs.at(0).graph;
        if (g.find("old_marker") && same(vars, old_values())) return 1;
        if (g.find("new_marker") && same(vars, new_values())) return 2;
        return 0;
    };
    int tried = 0;
    for (long n = 1;; ++n) {
        CAPTURE(n);
        fs::remove_all(dir);
        graft::tf::write_saved_model(dir.string(), old_mg, old_values());
        bool threw = false, fired = false;
        {
            fault_injector f(n);
            try {
                graft::tf::write_saved_model(dir.string(), new_mg, new_values());
            } catch (const graft::io_error&) {
                threw = true;
            }
            fired = f.fired();
        }
        CHECK(leftovers(dir).empty());
        CHECK(state() == (threw ? 1 : 2));
        ++tried;
        if (!fired) break;
    }
    CHECK(tried > 8);
    for (long n = 1;; ++n) {
        CAPTURE(n);
        fs::remove_all(dir);
        graft::tf::write_saved_model(dir.string(), old_mg, old_values());
        const bool crashed = crash_at(n, [&] { graft::tf::write_saved_model(dir.string(), new_mg, new_values()); });
        CHECK(state() != 0);
        if (!crashed) break;
    }
    // Without variables, only saved_model.pb is replaced: variables/ stays as the caller saved it.
    graft::tf::write_saved_model(dir.string(), old_mg, {});
    CHECK(graft::tf::load_saved_model(dir.string()).meta_graphs.at(0).graph.find("old_marker"));
    CHECK(same(read_bundle((dir / "variables" / "variables").string()), new_values()));
    CHECK(leftovers(dir).empty());
}

TEST_CASE("a frozen graph written over an old one: every N failing, and the process ending at every N") {
    auto dir = graft::test::scratch("file_set_frozen");
    const std::string path = (dir / "frozen.pb").string();
    graft::graph g_old, g_new;
    graft::graph_builder(g_old).constant(old_values().at("a"), "old_marker");
    graft::graph_builder(g_new).constant(new_values().at("a"), "new_marker");
    auto which = [&] {
        auto g = graft::tf::load_graph(path);
        return g.find("old_marker") ? 1 : g.find("new_marker") ? 2 : 0;
    };
    for (long n = 1;; ++n) {
        graft::tf::write_graph(g_old, path);
        bool threw = false, fired = false;
        {
            fault_injector f(n);
            try {
                graft::tf::write_graph(g_new, path);
            } catch (const graft::io_error&) {
                threw = true;
            }
            fired = f.fired();
        }
        CHECK(leftovers(dir).empty());
        CHECK(which() == (threw ? 1 : 2));
        if (!fired) break;
    }
    for (long n = 1;; ++n) {
        graft::tf::write_graph(g_old, path);
        const bool crashed = crash_at(n, [&] { graft::tf::write_graph(g_new, path); });
        CHECK(which() != 0);
        if (!crashed) break;
    }
}

TEST_CASE("SIGKILL at random instants while a process saves over the same prefix again and again") {
    auto dir = graft::test::scratch("file_set_sigkill");
    const std::string prefix = (dir / "loop.ckpt").string();
    auto version = [](std::int64_t k) {
        values v;
        tensor big(graft::dtype::float32, {1 << 16});  // 256 KB + fsyncs: a save takes a few milliseconds
        float* p = big.data<float>();
        for (std::int64_t i = 0; i < big.num_elements(); ++i) p[i] = static_cast<float>(k);
        v["big"] = big;
        v["k"] = tensor::scalar_of<std::int64_t>(k);
        return v;
    };
    save_bundle(prefix, version(0));
    std::mt19937 rng(20261126);
    std::uniform_int_distribution<int> delay_us(0, 20000);
    int killed = 0;
    std::int64_t last = 0;
    for (int round = 0; round < 100; ++round) {
        CAPTURE(round);
        const std::int64_t first = last + 1;
        pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            for (std::int64_t k = first;; ++k) save_bundle(prefix, version(k));
        }
        std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
        ::kill(pid, SIGKILL);
        int status = 0;
        ::waitpid(pid, &status, 0);
        killed += WIFSIGNALED(status) ? 1 : 0;
        graft::tf::checkpoint_reader r(prefix);
        const auto k = r.read("k").data<std::int64_t>()[0];
        const tensor big = r.read("big");  // crc checked
        CHECK(k >= last);
        const float* p = big.data<float>();
        bool uniform = true;
        for (std::int64_t i = 0; i < big.num_elements(); ++i) uniform = uniform && p[i] == static_cast<float>(k);
        CHECK(uniform);  // one save's values, never two saves mixed
        last = k;
    }
    CHECK(killed == 100);
    save_bundle(prefix, version(-1));  // cleans what the killed writers left
    CHECK(leftovers(dir).empty());
}
