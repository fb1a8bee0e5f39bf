// Running real TensorFlow files (../shared/tf-fixtures) with figures TensorFlow printed.
#include <doctest/doctest.h>

#include <cstdio>
#include <random>

#include "graft/formats/npy.hpp"
#include "graft/core/tensor_util.hpp"
#include "graft/formats/idx.hpp"
#include "graft/exec/model.hpp"
#include "graft/ops/reduce.hpp"
#include "support/fixtures.hpp"

using graft::tensor;

TEST_CASE("mnist-softmax/train_model.ckpt: restored, MNIST test accuracy is TensorFlow's 0.7357") {
    auto meta = graft::test::fixture("mnist-softmax/train_model.ckpt.meta");
    auto images = graft::test::dataset("mnist/t10k-images-idx3-ubyte.gz");
    auto labels = graft::test::dataset("mnist/t10k-labels-idx1-ubyte.gz");
    GRAFT_REQUIRE_PATH(meta);
    GRAFT_REQUIRE_PATH(images);
    auto m = graft::exec::load_model(meta.string());
    auto r = m.runner();
    auto rep = r.restore(graft::test::fixture("mnist-softmax/train_model.ckpt").string());
    CHECK(rep.restored.size() == 2);
    auto x = graft::data::mnist_images_as_features(graft::data::read_idx(images.string()));
    auto y = graft::data::read_idx(labels.string());
    auto logits = r.run({{"Placeholder:0", x}}, {"Add:0"})[0];
    REQUIRE(logits.shape() == graft::shape{10000, 10});
    auto pred = graft::ops::arg_max(logits, 1);
    int correct = 0;
    for (int i = 0; i < 10000; ++i) correct += pred.flat<std::int64_t>()(i) == y.flat<std::uint8_t>()(i);
    CHECK(correct == 7357);
}

TEST_CASE("half_plus_two / half_plus_three SavedModels (TF1 and TF2) predict like TensorFlow") {
    struct row { const char* dir; const char* in; const char* out; float add; };
    for (auto c : {row{"tf-serving/saved_model_half_plus_two_cpu/00000123", "x", "y", 2.f},
                   row{"tf-serving/saved_model_half_plus_two_tf2_cpu/00000123", "x", "y", 2.f},
                   row{"tf-serving/saved_model_half_plus_three/00000123", "x", "y", 3.f}}) {
        auto p = graft::test::fixture(c.dir);
        GRAFT_REQUIRE_PATH(p);
        CAPTURE(c.dir);
        auto m = graft::exec::load_model(p.string());
        auto r = m.runner("serving_default");
        // The TF2 export's signature takes float32[1]: predict each value on its own there.
        bool batch = r.inputs().empty() || !m.mg.signature("serving_default").inputs.begin()->second.shape ||
                     m.mg.signature("serving_default").inputs.begin()->second.shape->compatible_with(graft::shape{3});
        std::vector<float> got;
        if (batch) {
            auto y = r.run({{c.in, tensor::from_vector<float>({3}, {1.f, 2.f, 5.f})}}, {c.out})[0];
            REQUIRE(y.num_elements() == 3);
            for (int i = 0; i < 3; ++i) got.push_back(y.flat<float>()(i));
        } else {
            for (float v : {1.f, 2.f, 5.f}) got.push_back(r.run({{c.in, tensor::from_vector<float>({v})}}, {c.out})[0].flat<float>()(0));
        }
        CHECK(got[0] == doctest::Approx(0.5 + c.add));
        CHECK(got[1] == doctest::Approx(1.0 + c.add));
        CHECK(got[2] == doctest::Approx(2.5 + c.add));
    }
}

TEST_CASE("tf-rust/addition: z = x + y on int32") {
    auto p = graft::test::fixture("tf-rust/addition/model.pb");
    GRAFT_REQUIRE_PATH(p);
    auto r = graft::exec::load_model(p.string()).runner();
    auto z = r.run({{"x", tensor::scalar_of<std::int32_t>(2)}, {"y", tensor::scalar_of<std::int32_t>(3)}}, {"z"})[0];
    CHECK(z.type() == graft::dtype::int32);
    CHECK(z.flat<std::int32_t>()(0) == 5);
}

TEST_CASE("tf-rust/regression: TF's own gradient ops train w -> 0.1, b -> 0.3") {
    auto p = graft::test::fixture("tf-rust/regression/model.pb");
    GRAFT_REQUIRE_PATH(p);
    auto r = graft::exec::load_model(p.string()).runner();
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    std::vector<float> xs(100), ys(100);
    for (int i = 0; i < 100; ++i) { xs[i] = u(rng); ys[i] = 0.1f * xs[i] + 0.3f; }
    auto x = tensor::from_vector<float>(xs), y = tensor::from_vector<float>(ys);
    r.run({}, {}, {"init"});
    for (int step = 0; step < 200; ++step) r.run({{"x", x}, {"y", y}}, {}, {"train"});
    auto wb = r.run({}, {"w", "b"});
    CHECK(wb[0].flat<float>()(0) == doctest::Approx(0.1).epsilon(0.01 / 0.1));
    CHECK(std::abs(wb[0].flat<float>()(0) - 0.1f) < 0.01f);
    CHECK(std::abs(wb[1].flat<float>()(0) - 0.3f) < 0.01f);
}

TEST_CASE("tfnet-graphs/cond_test.meta: tf.cond takes the branch the predicate picks") {
    // The graph: x = Const 2, y = Const 5; cond(x < y, lambda: x * 17, lambda: y + 23).
    auto p = graft::test::fixture("tfnet-graphs/cond_test.meta");
    GRAFT_REQUIRE_PATH(p);
    auto r = graft::exec::load_model(p.string()).runner();
    auto out = r.run({}, {"cond/Merge:0", "cond/Merge:1"});
    CHECK(out[0].scalar<std::int32_t>()() == 2 * 17);
    CHECK(out[1].scalar<std::int32_t>()() == 1);  // value_index: the second Merge input (Mul) was taken
    // Feeding x = 7 makes the predicate false: the false branch computes y + 23.
    out = r.run({{"Const:0", tensor::scalar_of<std::int32_t>(7)}}, {"cond/Merge:0", "cond/Merge:1"});
    CHECK(out[0].scalar<std::int32_t>()() == 5 + 23);
    CHECK(out[1].scalar<std::int32_t>()() == 0);
    // A tensor on the untaken branch is dead: fetching it is an error naming it.
    CHECK_THROWS_WITH_AS(r.run({{"Const:0", tensor::scalar_of<std::int32_t>(7)}}, {"cond/Mul:0"}),
                         doctest::Contains("cond/Mul:0"), graft::error);
}

TEST_CASE("saved_model_counter: the counter variable changes across calls in one session") {
    auto p = graft::test::fixture("tf-serving/saved_model_counter/00000123");
    GRAFT_REQUIRE_PATH(p);
    auto m = graft::exec::load_model(p.string());
    auto r = m.runner();  // whole graph: every signature in one session, variables restored (0.0)
    auto value = [&](const char* sig) { return r.call(sig).at("output").scalar<float>()(); };
    CHECK(value("get_counter") == 0.f);
    CHECK(value("incr_counter") == 1.f);
    CHECK(value("incr_counter") == 2.f);
    CHECK(value("incr_counter") == 3.f);
    CHECK(r.call("incr_counter_by", {{"delta", tensor::scalar_of(2.5f)}}).at("output").scalar<float>()() == 5.5f);
    CHECK(value("get_counter") == 5.5f);
    CHECK(value("reset_counter") == 0.f);
    CHECK(value("incr_counter") == 1.f);
    CHECK_THROWS_WITH_AS(r.call("incr_counter_by", {{"step", tensor::scalar_of(1.f)}}), doctest::Contains("delta"),
                         graft::not_found_error);
    CHECK_THROWS_WITH_AS(r.call("decr_counter"), doctest::Contains("incr_counter_by"), graft::not_found_error);
}

TEST_CASE("tf-rust/regression_checkpoint: its own SaveV2/RestoreV2 ops save and restore w and b") {
    auto p = graft::test::fixture("tf-rust/regression_checkpoint/model.pb");
    GRAFT_REQUIRE_PATH(p);
    auto prefix = (graft::test::scratch("exec_regression_ckpt") / "model.ckpt").string();
    auto r = graft::exec::load_model(p.string()).runner();
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    std::vector<float> xs(100), ys(100);
    for (int i = 0; i < 100; ++i) { xs[i] = u(rng); ys[i] = 0.1f * xs[i] + 0.3f; }
    auto x = tensor::from_vector<float>(xs), y = tensor::from_vector<float>(ys);
    r.run({}, {}, {"init"});
    for (int step = 0; step < 20; ++step) r.run({{"x", x}, {"y", y}}, {}, {"train"});
    auto saved = r.run({}, {"w", "b"});
    // TF's Saver: feed the prefix into save/Const, fetch save/control_dependency (runs SaveV2).
    auto path = r.run({{"save/Const:0", tensor::scalar_of(prefix)}}, {"save/control_dependency:0"})[0];
    CHECK(path.scalar<std::string>()() == prefix);
    graft::tf::checkpoint_reader ck(prefix);
    CHECK(ck.keys() == std::vector<std::string>{"b", "w"});
    CHECK(ck.read("w").flat<float>()(0) == saved[0].flat<float>()(0));
    CHECK(ck.read("b").flat<float>()(0) == saved[1].flat<float>()(0));

    // Train on, then restore_all brings the saved values back.
    for (int step = 0; step < 20; ++step) r.run({{"x", x}, {"y", y}}, {}, {"train"});
    CHECK(r.run({}, {"w"})[0].flat<float>()(0) != saved[0].flat<float>()(0));
    r.run({{"save/Const:0", tensor::scalar_of(prefix)}}, {}, {"save/restore_all"});
    auto back = r.run({}, {"w", "b"});
    CHECK(back[0].flat<float>()(0) == saved[0].flat<float>()(0));
    CHECK(back[1].flat<float>()(0) == saved[1].flat<float>()(0));

    // A fresh session over the same file restores without running init.
    auto r2 = graft::exec::load_model(p.string()).runner();
    r2.run({{"save/Const:0", tensor::scalar_of(prefix)}}, {}, {"save/restore_all"});
    CHECK(r2.run({}, {"w"})[0].flat<float>()(0) == saved[0].flat<float>()(0));
}

using graft::test::run_cli;

TEST_CASE("cli: graft run reproduces the MNIST accuracy; graft ckpt ls reads what the Saver ops wrote") {
    auto meta = graft::test::fixture("mnist-softmax/train_model.ckpt.meta");
    auto images = graft::test::dataset("mnist/t10k-images-idx3-ubyte.gz");
    auto labels = graft::test::dataset("mnist/t10k-labels-idx1-ubyte.gz");
    GRAFT_REQUIRE_PATH(meta);
    GRAFT_REQUIRE_PATH(images);
    auto dir = graft::test::scratch("exec_cli_mnist");
    std::string out;
    REQUIRE(run_cli("idx2npy --features " + images.string() + " " + (dir / "x.npy").string(), out) == 0);
    CHECK(out.find("float32[10000,784]") != std::string::npos);
    REQUIRE(run_cli("idx2npy " + labels.string() + " " + (dir / "labels.npy").string(), out) == 0);
    REQUIRE(run_cli("run " + meta.string() + " --ckpt " + graft::test::fixture("mnist-softmax/train_model.ckpt").string() +
                        " --feed Placeholder=@" + (dir / "x.npy").string() + " --fetch Add:0 --labels " +
                        (dir / "labels.npy").string() + " --out " + (dir / "out").string(),
                    out) == 0);
    CAPTURE(out);
    CHECK(out.find("accuracy 0.7357 (7357/10000") != std::string::npos);
    CHECK(graft::read_npy((dir / "out" / "Add_0.npy").string()).shape() == graft::shape{10000, 10});

    // regression_checkpoint's save ops, driven by graft run with the prefix fed as a string.
    auto rc = graft::test::fixture("tf-rust/regression_checkpoint/model.pb");
    GRAFT_REQUIRE_PATH(rc);
    auto r = graft::exec::load_model(rc.string()).runner();
    r.run({}, {}, {"init"});
    auto prefix = (dir / "reg.ckpt").string();
    r.run({{"save/Const", tensor::scalar_of(prefix)}}, {}, {"save/control_dependency"});
    REQUIRE(run_cli("ckpt ls " + prefix, out) == 0);
    CHECK(out == "b float32 [1]\nw float32 [1]\n");
    // ... and the restore op run from the CLI, fetching the restored value.
    REQUIRE(run_cli("run " + rc.string() + " --feed save/Const=" + prefix + ":string --fetch save/RestoreV2:1", out) == 0);
    CHECK(out.find(graft::to_string(r.run({}, {"w"})[0])) != std::string::npos);
}
