// Sharded checkpoints in one process: the plan's rules, a save and restore on the local communicator
// (one shard), and, where MPI is built, mpirun jobs whose rank dies in the middle of a sharded save
// (its shard half written; rank 0 half-way through the commit): the next one-process reader finds
// the previous checkpoint whole, and the next save clears what the dead job left.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "dist/support.hpp"
#include "dist/launch.hpp"
#include "dist/mlp.hpp"
#include "graft/dist/sharded_checkpoint.hpp"
#include "graft/exec/session.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/train/optimizer.hpp"

namespace graft_test_sharded_local {

using graft::tensor;
namespace gd = graft::dist;
namespace td = graft::test::dist;
namespace fs = std::filesystem;

struct small_model {
    td::mlp_graph m;
    std::unique_ptr<graft::exec::session> s;
    std::vector<graft::variable_info> vars;
    explicit small_model(std::uint64_t seed) : m(td::build_mlp({784, 16, 10}, seed)) {
        graft::train::momentum opt(0.1, 0.9);
        (void)opt.minimize(m.mg, m.loss);
        const std::string init = graft::train::global_variables_initializer(m.mg);
        s = std::make_unique<graft::exec::session>(m.mg.graph);
        s->run({}, {}, {init});
        vars = graft::find_variables(m.mg);
    }
};

bool same_checkpoints(const std::string& a, const std::string& b) {
    graft::tf::checkpoint_reader ra(a), rb(b);
    if (ra.keys() != rb.keys() || ra.keys().empty()) return false;
    for (auto& k : ra.keys()) {
        tensor x = ra.read(k), y = rb.read(k);
        if (x.type() != y.type() || !(x.shape() == y.shape()) || std::memcmp(x.raw_data(), y.raw_data(), x.nbytes()) != 0)
            return false;
    }
    return true;
}

using graft::test::dist::leftovers;

}  // namespace graft_test_sharded_local

TEST_CASE("plan_shards: greedy by bytes (largest first, to the lightest rank) or round-robin, sorted by key") {
    using graft::dist::shard_item;
    std::vector<shard_item> items;
    const std::vector<std::pair<std::string, std::uint64_t>> sizes{{"e", 10}, {"a", 100}, {"c", 60}, {"b", 50}, {"d", 40}};
    for (auto& [k, b] : sizes) items.push_back({k, "", k, b, -1, 0});
    auto g = graft::dist::plan_shards(items, 2, graft::dist::shard_assignment::greedy_bytes);
    std::vector<std::string> keys;
    std::vector<int> ranks;
    for (auto& it : g) {
        keys.push_back(it.key);
        ranks.push_back(it.rank);
    }
    CHECK(keys == std::vector<std::string>{"a", "b", "c", "d", "e"});
    // a(100) -> 0; c(60) -> 1; b(50) -> 1 (60 < 100); d(40) -> 0 (100 < 110); e(10) -> 1 (110 < 140)
    CHECK(ranks == std::vector<int>{0, 1, 1, 0, 1});
    auto r = graft::dist::plan_shards(items, 3, graft::dist::shard_assignment::round_robin);
    for (std::size_t i = 0; i < r.size(); ++i) CHECK(r[i].rank == static_cast<int>(i % 3));
    CHECK(graft::dist::sharded_filename("part", 2, 3) == "part-00002-of-00003");
    CHECK_THROWS_AS(graft::dist::plan_shards(items, 0, graft::dist::shard_assignment::round_robin), graft::invalid_argument_error);
}

TEST_CASE("sharded save and restore on one rank (the local communicator): a one-shard TF checkpoint") {
    using namespace graft_test_sharded_local;
    const auto dir = fs::absolute("scratch/sharded_local");
    fs::remove_all(dir);
    fs::create_directories(dir);
    small_model a(1);
    auto rep = gd::sharded_save(*a.s, a.vars, (dir / "m").string());
    CHECK(rep.num_shards == 1);
    CHECK(rep.keys.size() == a.vars.size());
    CHECK(fs::exists(dir / "m.data-00000-of-00001"));
    CHECK(leftovers(dir.string()).empty());
    small_model b(2);
    auto rr = gd::sharded_restore(*b.s, b.vars, (dir / "m").string());
    CHECK(rr.restored.size() == a.vars.size());
    for (auto& v : a.vars) {
        tensor x = a.s->variable_value(v.node), y = b.s->variable_value(v.node);
        CHECK(std::memcmp(x.raw_data(), y.raw_data(), x.nbytes()) == 0);
    }
    // An uninitialized variable: the save fails, naming it; nothing is written.
    small_model c(3);
    graft::exec::session fresh(c.m.mg.graph);
    try {
        gd::sharded_save(fresh, c.vars, (dir / "u").string());
        FAIL("saving uninitialized variables must fail");
    } catch (const gd::dist_error& e) {
        CHECK(std::string(e.what()).find("rank 0: ") != std::string::npos);
        CHECK(std::string(e.what()).find("uninitialized variable") != std::string::npos);
    }
    CHECK_FALSE(fs::exists(dir / "u.index"));
    CHECK(leftovers(dir.string()).empty());
}

#if defined(GRAFT_MPIEXEC) && defined(GRAFT_DIST_MPI_TEST)
TEST_CASE("a rank that dies mid sharded save leaves the previous checkpoint whole for the next reader") {
    using namespace graft_test_sharded_local;
    // rank 1 at its first file operation of the third save (its shard unwritten); rank 0 at the
    // 7th operation from the end of its part (the commit: marker written, 2 of 4 renames done).
    struct scenario {
        int victim;
        long at;
    };
    for (scenario sc : {scenario{1, 1}, scenario{0, -7}}) {
        const auto dir = fs::absolute("scratch/sharded_dying_rank" + std::to_string(sc.victim));
        fs::remove_all(dir);
        fs::create_directories(dir);
        const std::string cmd = "GRAFT_TEST_SHARD_KILL_DIR=" + dir.string() + " GRAFT_TEST_SHARD_KILL_RANK=" +
                                std::to_string(sc.victim) + " GRAFT_TEST_SHARD_KILL_AT=" + std::to_string(sc.at) +
                                " GRAFT_DIST_TIMEOUT=60 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
                                " timeout -s KILL 60 " GRAFT_MPIEXEC " --oversubscribe -np 3 " GRAFT_DIST_MPI_TEST
                                " --test-case='*dying mid-save*'";
        const auto job = graft::test::dist::launch(cmd);
        REQUIRE(job.status != -1);  // the shell started
        const std::string& out = job.out;
        const int status = job.status;
        const double secs = job.secs;
        INFO("victim rank ", sc.victim, " at ", sc.at, ": mpirun ended after ", secs, " s with status ", status, ":\n", out);
        CHECK(out.find("dying at my file operation") != std::string::npos);
        CHECK(out.find("the last save finished") == std::string::npos);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) != 0);
        CHECK(secs < 50);
        const std::string prefix = (dir / "model.ckpt").string();
        if (sc.victim == 0) CHECK(fs::exists(prefix + ".graft-txn"));  // died inside the commit
        // The one-process reader: the previous checkpoint (copied aside by the job), whole.
        CHECK(same_checkpoints(prefix, (dir / "expected" / "model.ckpt").string()));
        CHECK_FALSE(fs::exists(prefix + ".graft-txn"));
        CHECK(graft::tf::bundle_reader(prefix).num_shards() == 3);
        // The next save (one process here) clears what the dead job left, once its processes are
        // gone (mpirun may return while a rank it signalled still runs its exit): rank 0's pid is in
        // the temporary folder's name.
        const auto left = leftovers(dir.string());
        CHECK_FALSE(left.empty());
        for (auto& n : left) {
            const auto at = n.find("_temp_");
            if (at == std::string::npos) continue;
            const long pid = std::atol(n.c_str() + at + 6);
            for (int i = 0; i < 100 && pid > 0 && ::kill(static_cast<pid_t>(pid), 0) == 0; ++i) ::usleep(100'000);
        }
        small_model m(4);
        gd::sharded_save(*m.s, m.vars, prefix);
        CHECK(leftovers(dir.string()).empty());
        CHECK_FALSE(fs::exists(prefix + ".data-00000-of-00003"));
        CHECK(fs::exists(prefix + ".data-00000-of-00001"));
    }
}
#endif
