// Crash safety: a saver SIGKILLed in the middle of a large save leaves the previous checkpoint and the
// `checkpoint` state file readable and unchanged.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "graft/core/io.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/formats/tf/bundle_writer.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf/checkpoint_state.hpp"
#include "support/fixtures.hpp"

namespace fs = std::filesystem;
using graft::tensor;

namespace {
void save(const fs::path& dir, const std::string& name, const std::map<std::string, tensor>& vars) {
    graft::tf::bundle_writer w((dir / name).string());
    for (const auto& [k, v] : vars) w.add(k, v);
    w.finish();
    graft::tf::checkpoint_state st;
    st.model_checkpoint_path = name;
    st.all_model_checkpoint_paths = {"ckpt-1", name};
    graft::tf::write_checkpoint_state(dir.string(), st);
}
std::map<std::string, tensor> load(const fs::path& dir) {
    graft::tf::checkpoint_reader r(dir.string());
    std::map<std::string, tensor> out;
    for (const auto& k : r.keys()) out[k] = r.read(k).clone();
    return out;
}
}  // namespace

TEST_CASE("SIGKILL during a 200 MB save leaves the previous checkpoint and state intact") {
    auto dir = graft::test::scratch("ckpt_crash");
    std::map<std::string, tensor> v1;
    v1["w"] = tensor::from_vector<float>({1, 2, 3, 4});
    v1["step"] = tensor::scalar_of<std::int64_t>(100);
    v1["names"] = tensor::from_vector<std::string>({"a", "bc"});
    save(dir, "ckpt-1", v1);
    const std::string state_before = graft::read_file((dir / "checkpoint").string());
    const std::string index_before = graft::read_file((dir / "ckpt-1.index").string());
    const auto before = load(dir);

    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(ready[0]);
        std::map<std::string, tensor> v2 = v1;
        v2["big"] = tensor(graft::dtype::float32, {50 * 1024 * 1024});  // 200 MB
        v2["step"] = tensor::scalar_of<std::int64_t>(200);
        (void)!::write(ready[1], "x", 1);
        save(dir, "ckpt-2", v2);
        ::_exit(0);
    }
    ::close(ready[1]);
    char c;
    REQUIRE(::read(ready[0], &c, 1) == 1);  // the child starts saving now
    ::close(ready[0]);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    const bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    CHECK(killed);  // a 200 MB save with fsync takes longer than 50 ms
    if (killed) {
        CHECK(graft::read_file((dir / "checkpoint").string()) == state_before);
        CHECK(graft::read_file((dir / "ckpt-1.index").string()) == index_before);
        CHECK(!fs::exists(dir / "ckpt-2.index"));
        auto after = load(dir);
        REQUIRE(after.size() == before.size());
        for (const auto& [k, t] : before) CHECK(graft::equal(after.at(k), t));
        CHECK(*graft::tf::latest_checkpoint(dir.string()) == (dir / "ckpt-1").string());
    }
}
