// Saver: TF's names for optimizer state in checkpoints, max_to_keep and the `checkpoint` file,
// strict / exact / lenient restore, prefix renames, init_from_checkpoint, the .meta with working
// save/restore ops, and SIGKILL during save.
#include <doctest/doctest.h>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf/checkpoint_state.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/saver.hpp"
#include "support/fixtures.hpp"

namespace fs = std::filesystem;
using graft::dtype;
using graft::tensor;
namespace train = graft::train;

namespace {

/// w [2,2], b [2], global_step, an Adam train op on constant gradients.
struct model {
    graft::meta_graph mg;
    train::variable w, b, step;
    std::string train_op, init;
    explicit model(bool with_adam = true) {
        graft::graph_builder bl(mg.graph);
        w = train::create_variable(mg, bl, "w", tensor::from_vector<float>({2, 2}, {1, 2, 3, 4}));
        b = train::create_variable(mg, bl, "b", tensor::from_vector<float>({0.5f, -0.5f}));
        step = train::get_or_create_global_step(mg);
        if (with_adam) {
            auto gw = bl.constant(tensor::from_vector<float>({2, 2}, {0.1f, 0.2f, -0.3f, 0.4f}), "gw");
            auto gb = bl.constant(tensor::from_vector<float>({1.0f, -1.0f}), "gb");
            train::adam opt(0.1);
            train_op = opt.apply_gradients(mg, {{gw, w}, {gb, b}}, step);
        }
        init = train::global_variables_initializer(mg);
    }
};

std::vector<std::string> keys_of(const std::string& prefix) { return graft::tf::checkpoint_reader(prefix).keys(); }

bool same(graft::exec::session& a, graft::exec::session& b, const std::string& var) {
    return graft::equal(a.variable_value(var), b.variable_value(var));
}

}  // namespace

TEST_CASE("Saver: a checkpoint with Adam state lists TF's names; restore in a new session is bit-exact") {
    auto dir = graft::test::scratch("train_saver_names");
    model m;
    train::saver sv(m.mg);
    graft::exec::session s(m.mg.graph);
    s.run({}, {}, {m.init});
    for (int i = 0; i < 3; ++i) s.run({}, {}, {m.train_op});
    std::string p = sv.save(s, (dir / "model.ckpt").string(), m.step);
    CHECK(p == (dir / "model.ckpt-3").string());
    CHECK(keys_of(p) == std::vector<std::string>{"b", "b/Adam", "b/Adam_1", "beta1_power", "beta2_power", "global_step", "w",
                                                 "w/Adam", "w/Adam_1"});
    CHECK(fs::exists(p + ".meta"));
    auto st = graft::tf::read_checkpoint_state(dir.string());
    REQUIRE(st);
    CHECK(st->model_checkpoint_path == p);
    CHECK(graft::read_file((dir / "checkpoint").string()) ==
          "model_checkpoint_path: \"model.ckpt-3\"\nall_model_checkpoint_paths: \"model.ckpt-3\"\n");

    graft::exec::session s2(m.mg.graph);
    auto rep = sv.restore(s2, dir.string());
    CHECK(rep.prefix == p);
    CHECK(rep.restored.size() == 9);
    CHECK(rep.unused.empty());
    for (auto& k : keys_of(p)) CHECK(same(s, s2, k));
    // training continues identically from the restored state
    s.run({}, {}, {m.train_op});
    s2.run({}, {}, {m.train_op});
    for (auto& k : keys_of(p)) CHECK(same(s, s2, k));
}

TEST_CASE("Saver: max_to_keep deletes the oldest bundles and updates `checkpoint`") {
    auto dir = graft::test::scratch("train_saver_keep");
    model m(false);
    train::saver_options o;
    o.max_to_keep = 2;
    train::saver sv(m.mg, o);
    graft::exec::session s(m.mg.graph);
    s.run({}, {}, {m.init});
    std::string base = (dir / "model.ckpt").string();
    for (int step = 1; step <= 4; ++step) sv.save(s, base, std::int64_t{step * 100});
    for (int step : {100, 200}) {
        std::string p = base + "-" + std::to_string(step);
        CHECK(!fs::exists(p + ".index"));
        CHECK(!fs::exists(p + ".data-00000-of-00001"));
        CHECK(!fs::exists(p + ".meta"));
    }
    for (int step : {300, 400}) CHECK(fs::exists(base + "-" + std::to_string(step) + ".index"));
    auto st = graft::tf::read_checkpoint_state(dir.string());
    REQUIRE(st);
    CHECK(st->model_checkpoint_path == base + "-400");
    CHECK(st->all_model_checkpoint_paths == std::vector<std::string>{base + "-300", base + "-400"});
    CHECK(sv.last_checkpoints() == std::vector<std::string>{base + "-300", base + "-400"});
    CHECK(*train::latest_checkpoint(dir.string()) == base + "-400");

    SUBCASE("keep_checkpoint_every_n_hours keeps checkpoints max_to_keep would delete") {
        auto dir2 = graft::test::scratch("train_saver_keep_hours");
        o.keep_checkpoint_every_n_hours = 1e-12;  // every checkpoint is "hours" after the last kept one
        model m2(false);
        train::saver sv2(m2.mg, o);
        graft::exec::session s2(m2.mg.graph);
        s2.run({}, {}, {m2.init});
        std::string base2 = (dir2 / "model.ckpt").string();
        for (int step = 1; step <= 4; ++step) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            sv2.save(s2, base2, std::int64_t{step});
        }
        for (int step = 1; step <= 4; ++step) CHECK(fs::exists(base2 + "-" + std::to_string(step) + ".index"));
        CHECK(graft::tf::read_checkpoint_state(dir2.string())->all_model_checkpoint_paths.size() == 2);
    }
}

TEST_CASE("Saver: strict restore names the missing variables and the unused keys; lenient reports them") {
    auto dir = graft::test::scratch("train_saver_strict");
    std::string p;
    {
        graft::meta_graph mg;
        graft::graph_builder b(mg.graph);
        train::create_variable(mg, b, "w", tensor::from_vector<float>({1, 2}));
        train::create_variable(mg, b, "old_name", tensor::from_vector<float>({3}));
        std::string init = train::global_variables_initializer(mg);
        train::saver sv(mg);
        graft::exec::session s(mg.graph);
        s.run({}, {}, {init});
        p = sv.save(s, (dir / "a.ckpt").string());
    }
    graft::meta_graph mg;
    graft::graph_builder b(mg.graph);
    train::create_variable(mg, b, "w", tensor::from_vector<float>({0, 0}));
    train::create_variable(mg, b, "new_name", tensor::from_vector<float>({0}));
    std::string init = train::global_variables_initializer(mg);
    train::saver sv(mg);
    graft::exec::session s(mg.graph);
    s.run({}, {}, {init});
    try {
        sv.restore(s, p);
        FAIL("strict restore should fail");
    } catch (const graft::not_found_error& e) {
        std::string msg = e.what();
        CHECK(msg.find("new_name") != std::string::npos);
        CHECK(msg.find("old_name") != std::string::npos);
        CHECK(msg.find("missing") != std::string::npos);
        CHECK(msg.find("unused") != std::string::npos);
    }
    CHECK(s.variable_value("w").data<float>()[0] == 0);  // nothing assigned by a failed strict restore
    auto rep = sv.restore(s, p, train::restore_mode::lenient);
    CHECK(rep.restored == std::vector<std::string>{"w"});
    CHECK(rep.missing == std::vector<std::string>{"new_name"});
    CHECK(rep.unused == std::vector<std::string>{"old_name"});
    CHECK(s.variable_value("w").data<float>()[1] == 2);

    // explicit name map: the new variable from the old key; exact mode then passes
    train::saver_options o;
    o.name_map = {{"w", "w"}, {"old_name", "new_name"}};
    o.build_ops = false;
    train::saver mapped(mg, o);
    auto rep2 = mapped.restore(s, p, train::restore_mode::exact);
    CHECK(rep2.complete());
    CHECK(s.variable_value("new_name").data<float>()[0] == 3);
    // a var_list of only w: strict passes (old_name unused), exact fails naming it
    train::saver_options only_w;
    only_w.var_list = {"w"};
    only_w.build_ops = false;
    train::saver sw(mg, only_w);
    CHECK(sw.restore(s, p).unused == std::vector<std::string>{"old_name"});
    CHECK_THROWS_WITH_AS(sw.restore(s, p, train::restore_mode::exact), doctest::Contains("old_name"),
                         graft::invalid_argument_error);
    // a shape mismatch is an error naming the variable
    graft::meta_graph mg3;
    graft::graph_builder b3(mg3.graph);
    train::create_variable(mg3, b3, "w", tensor::from_vector<float>({0, 0, 0}));
    train::saver s3(mg3);
    graft::exec::session ss3(mg3.graph);
    CHECK_THROWS_WITH_AS(s3.restore(ss3, p), doctest::Contains("w: checkpoint has shape [2]"), graft::invalid_argument_error);
}

TEST_CASE("Saver: resource variables save and restore, through graft and through the graph's ops") {
    auto dir = graft::test::scratch("train_saver_resource");
    graft::meta_graph mg;
    graft::graph_builder b(mg.graph);
    train::variable_options o;
    o.use_resource = true;
    train::create_variable(mg, b.sub("dense"), "kernel", tensor::from_vector<float>({2}, {1.5f, -2.5f}), o);
    std::string init = train::global_variables_initializer(mg);
    train::saver sv(mg);
    CHECK(mg.graph.find("save/AssignVariableOp") != nullptr);
    graft::exec::session s(mg.graph);
    s.run({}, {}, {init});
    std::string p = sv.save(s, (dir / "r.ckpt").string());
    CHECK(keys_of(p) == std::vector<std::string>{"dense/kernel"});
    graft::exec::session s2(mg.graph);
    CHECK(sv.restore(s2, p).restored == std::vector<std::string>{"dense/kernel"});
    CHECK(same(s, s2, "dense/kernel"));
    graft::exec::session s3(mg.graph);
    s3.run({{"save/Const:0", tensor::scalar_of(p)}}, {}, {"save/restore_all"});
    CHECK(same(s, s3, "dense/kernel"));
}

TEST_CASE("Saver: prefix renames and scope selection") {
    auto dir = graft::test::scratch("train_saver_renames");
    graft::meta_graph mg;
    graft::graph_builder b(mg.graph);
    train::create_variable(mg, b.sub("new"), "w", tensor::from_vector<float>({1, 2}));
    train::create_variable(mg, b.sub("other"), "v", tensor::from_vector<float>({3}));
    std::string init = train::global_variables_initializer(mg);
    train::saver_options o;
    o.scope = "new/";
    o.renames = {{"new/", "old/"}};
    train::saver sv(mg, o);
    graft::exec::session s(mg.graph);
    s.run({}, {}, {init});
    std::string p = sv.save(s, (dir / "r.ckpt").string());
    CHECK(keys_of(p) == std::vector<std::string>{"old/w"});
    graft::exec::session s2(mg.graph);
    CHECK(sv.restore(s2, p).restored == std::vector<std::string>{"new/w"});
    CHECK(same(s, s2, "new/w"));
}

TEST_CASE("Saver and init_from_checkpoint: TF's model_names.ckpt into a differently scoped graph") {
    auto ckpt = graft::test::fixture("mnist-softmax/model_names.ckpt");
    GRAFT_REQUIRE_PATH(ckpt.string() + ".index");
    graft::tf::checkpoint_reader reader(ckpt.string());
    graft::meta_graph mg;
    graft::graph_builder b(mg.graph);
    auto net = b.sub("net");
    train::create_variable(mg, net, "weights_0", tensor(dtype::float32, {2, 3}));
    train::create_variable(mg, net, "bias_0", tensor(dtype::float32, {3}));
    train::create_variable(mg, b, "w", tensor(dtype::float32, {2, 3}));
    std::string init = train::global_variables_initializer(mg);
    graft::exec::session s(mg.graph);
    s.run({}, {}, {init});

    auto set = train::init_from_checkpoint(s, ckpt.string(), {{"/", "net/"}, {"weights_0", "w"}});
    REQUIRE(set.size() == 3);
    CHECK(set[0].variable == "net/bias_0");
    CHECK(set[0].key == "bias_0");
    CHECK(graft::equal(s.variable_value("net/weights_0"), reader.read("weights_0")));
    CHECK(graft::equal(s.variable_value("net/bias_0"), reader.read("bias_0")));
    CHECK(graft::equal(s.variable_value("w"), reader.read("weights_0")));
    CHECK_THROWS_WITH_AS(train::init_from_checkpoint(s, ckpt.string(), {{"nope/", "net/"}}),
                         doctest::Contains("nope/bias_0"), graft::not_found_error);
    CHECK_THROWS_AS(train::init_from_checkpoint(s, ckpt.string(), {{"bias_0", "w"}}), graft::invalid_argument_error);

    // the same through a Saver with a prefix rename
    graft::exec::session s2(mg.graph);
    train::saver_options o;
    o.scope = "net/";
    o.renames = {{"net/", ""}};
    o.build_ops = false;
    train::saver sv(mg, o);
    auto rep = sv.restore(s2, ckpt.string(), train::restore_mode::exact);
    CHECK(rep.restored.size() == 2);
    CHECK(graft::equal(s2.variable_value("net/bias_0"), reader.read("bias_0")));
}

TEST_CASE("Saver: the .meta reloads with graft's loader and its own save/restore ops work") {
    auto dir = graft::test::scratch("train_saver_meta");
    model m;
    train::saver sv(m.mg);
    CHECK(sv.def().filename_tensor_name == "save/Const:0");
    CHECK(sv.def().save_tensor_name == "save/control_dependency:0");
    CHECK(sv.def().restore_op_name == "save/restore_all");
    CHECK(m.mg.graph.find("save/SaveV2")->op == "SaveV2");
    CHECK(m.mg.graph.find("save/RestoreV2_8")->op == "RestoreV2");
    CHECK(m.mg.graph.find("save/Assign_8")->op == "Assign");
    graft::exec::session s(m.mg.graph);
    s.run({}, {}, {m.init});
    s.run({}, {}, {m.train_op});
    std::string p = sv.save(s, (dir / "model.ckpt").string(), std::int64_t{1});

    graft::meta_graph mg2 = graft::tf::load_meta_graph(p + ".meta");
    REQUIRE(mg2.saver);
    CHECK(mg2.saver->restore_op_name == "save/restore_all");
    CHECK(mg2.saver->max_to_keep == 5);
    CHECK(mg2.saver->version == 2);
    CHECK(mg2.collection("trainable_variables")->variables.size() == 2);
    CHECK(mg2.collection("variables")->variables.size() == 9);
    CHECK(graft::find_variables(mg2).size() == 9);
    graft::exec::session s2(mg2.graph);
    s2.run({{mg2.saver->filename_tensor_name, tensor::scalar_of(p)}}, {}, {mg2.saver->restore_op_name});
    for (auto& k : keys_of(p)) CHECK(same(s, s2, k));
    // its save op writes a checkpoint graft's reader reads back
    std::string p2 = (dir / "by_graph_ops").string();
    auto out = s2.run({{mg2.saver->filename_tensor_name, tensor::scalar_of(p2)}}, {mg2.saver->save_tensor_name});
    CHECK(out[0].data<std::string>()[0] == p2);
    CHECK(keys_of(p2) == keys_of(p));
    graft::tf::checkpoint_reader r(p2);
    CHECK(graft::equal(r.read("w/Adam_1"), s.variable_value("w/Adam_1")));
    // a second saver in the same graph gets the scope save_1
    train::saver second(m.mg);
    CHECK(second.def().restore_op_name == "save_1/restore_all");
}

TEST_CASE("Saver: SIGKILL during save leaves the previous checkpoint restorable") {
    auto dir = graft::test::scratch("train_saver_crash");
    graft::meta_graph mg;
    graft::graph_builder b(mg.graph);
    train::create_variable(mg, b, "big", tensor(dtype::float32, {8 * 1024 * 1024}));  // 32 MB
    train::create_variable(mg, b, "marker", tensor::scalar_of<std::int64_t>(0));
    std::string init = train::global_variables_initializer(mg);
    train::saver_options o;
    o.max_to_keep = 2;
    train::saver sv(mg, o);
    graft::exec::session s(mg.graph);
    s.run({}, {}, {init});
    std::string base = (dir / "model.ckpt").string();
    sv.save(s, base, std::int64_t{0});

    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(ready[0]);
        try {
            for (std::int64_t step = 1; step < 1000; ++step) {
                s.variables().at("marker")->assign(tensor::scalar_of(step));
                sv.save(s, base, step);
                (void)!::write(ready[1], "x", 1);
            }
        } catch (...) {
            ::_exit(1);  // never return into the test runner from the child
        }
        ::_exit(0);
    }
    ::close(ready[1]);
    pollfd pfd{ready[0], POLLIN, 0};
    bool saved_once = ::poll(&pfd, 1, 60000) == 1;  // one save done: the child is in the middle of the next
    char c;
    saved_once = saved_once && ::read(ready[0], &c, 1) == 1;
    if (saved_once) std::this_thread::sleep_for(std::chrono::milliseconds(15));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(ready[0]);
    REQUIRE_MESSAGE(saved_once, "the child never finished a save within 60 s");
    CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));

    auto latest = train::latest_checkpoint(dir.string());
    REQUIRE(latest);
    graft::exec::session s2(mg.graph);
    auto rep = sv.restore(s2, dir.string(), train::restore_mode::exact);
    CHECK(rep.prefix == *latest);
    std::int64_t marker = s2.variable_value("marker").data<std::int64_t>()[0];
    CHECK(*latest == base + "-" + std::to_string(marker));
    CHECK(marker >= 1);
    auto st = graft::tf::read_checkpoint_state(dir.string());
    REQUIRE(st);
    for (auto& p : st->all_model_checkpoint_paths) {
        CAPTURE(p);
        CHECK(fs::exists(p + ".index"));
        graft::exec::session s3(mg.graph);
        CHECK(sv.restore(s3, p).complete());
    }
}
