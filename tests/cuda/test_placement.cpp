// Placement: TF's device spellings, the placement rule (device attr, default device, dtype and
// kernel availability, soft placement), and GPU-placed graphs running on a machine without a GPU.
#include <doctest/doctest.h>

#include <sstream>

#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "op_case.hpp"

using graft::device;
using graft::device_kind;
using graft::exec::parse_device;

TEST_CASE("placement: TF's device spellings parse to a kind and an index") {
    auto gpu = [](int i) { return device{device_kind::cuda, i}; };
    auto cpu = [](int i) { return device{device_kind::cpu, i}; };
    CHECK(parse_device("/device:GPU:0") == gpu(0));
    CHECK(parse_device("/gpu:1") == gpu(1));
    CHECK(parse_device("GPU:2") == gpu(2));
    CHECK(parse_device("/GPU:0") == gpu(0));
    CHECK(parse_device("/job:localhost/replica:0/task:0/device:GPU:3") == gpu(3));
    CHECK(parse_device("/job:worker/task:1/gpu:0") == gpu(0));
    CHECK(parse_device("/device:GPU:*") == gpu(0));
    CHECK(parse_device("gpu") == gpu(0));
    CHECK(parse_device("/cpu:0") == cpu(0));
    CHECK(parse_device("/device:CPU:0") == cpu(0));
    CHECK(parse_device("/job:localhost/replica:0/task:0/device:XLA_CPU:0") == cpu(0));
    CHECK_FALSE(parse_device("").has_value());
    CHECK_FALSE(parse_device("/job:localhost/replica:0/task:0").has_value());
    CHECK(parse_device("/device:GPU:0")->str() == "/device:GPU:0");
    CHECK_THROWS_WITH_AS(parse_device("/device:TPU:0"), doctest::Contains("not TPU"), graft::invalid_argument_error);
    CHECK_THROWS_WITH_AS(parse_device("/gpu:x"), doctest::Contains("malformed index"), graft::invalid_argument_error);
}

namespace {
/// A registry with GPU kernels for Relu (float32 only) and MatMul (any dtype), CPU kernels for all.
void fill_placement_registry(graft::exec::kernel_registry& r) {
    auto nothing = [](graft::exec::kernel_context&) {};
    for (const char* op : {"Relu", "MatMul", "Const", "Placeholder", "RandomUniform"}) r.add(op, nothing);
    graft::exec::kernel_def f32;
    f32.types = {graft::dtype::float32};
    r.add(device_kind::cuda, "Relu", nothing, f32);
    r.add(device_kind::cuda, "MatMul", nothing);
    r.add("Cast", nothing);
    graft::exec::kernel_def cast;
    cast.type_attr = "SrcT";
    cast.types = {graft::dtype::float32, graft::dtype::int32};
    cast.more_types.emplace_back("DstT", std::vector<graft::dtype>{graft::dtype::float32, graft::dtype::int32});
    r.add(device_kind::cuda, "Cast", nothing, cast);
}
graft::node make_node(std::string name, std::string op, graft::dtype t, std::string dev = {}) {
    graft::node n;
    n.name = std::move(name);
    n.op = std::move(op);
    n.device = std::move(dev);
    n.attrs.set("T", graft::attr_value(t));
    return n;
}
}  // namespace

TEST_CASE("placement: device attr, default device, dtype, missing kernel, missing device, soft placement") {
    graft::exec::kernel_registry r;
    fill_placement_registry(r);
    const auto& ops = graft::op_registry::global();
    auto one_gpu = [](device_kind k) { return k == device_kind::cpu ? 1 : 1; };
    graft::exec::session_options o;

    // The node's own device attr.
    auto d = graft::exec::place_node(make_node("a", "Relu", graft::dtype::float32, "/gpu:0"), ops, r, o, one_gpu);
    CHECK(d.dev == device{device_kind::cuda, 0});
    CHECK(d.note.empty());
    CHECK(d.kernel == r.find_entry(device_kind::cuda, "Relu"));

    // No attr and no default: the CPU.
    d = graft::exec::place_node(make_node("b", "Relu", graft::dtype::float32), ops, r, o, one_gpu);
    CHECK(d.dev.is_cpu());
    CHECK(d.kernel == r.find_entry(device_kind::cpu, "Relu"));

    // The session's default device, and an explicit /cpu:0 that overrides it.
    o.default_device = "/device:GPU:0";
    d = graft::exec::place_node(make_node("c", "Relu", graft::dtype::float32), ops, r, o, one_gpu);
    CHECK(d.dev == device{device_kind::cuda, 0});
    d = graft::exec::place_node(make_node("c2", "Relu", graft::dtype::float32, "/cpu:0"), ops, r, o, one_gpu);
    CHECK(d.dev.is_cpu());

    // int32 stays on the host (the GPU kernel handles float32 only) — even without soft placement.
    o.allow_soft_placement = false;
    d = graft::exec::place_node(make_node("i", "Relu", graft::dtype::int32), ops, r, o, one_gpu);
    CHECK(d.dev.is_cpu());
    CHECK(d.note.find("does not handle int32") != std::string::npos);
    // A kernel without a dtype list takes any dtype.
    d = graft::exec::place_node(make_node("m", "MatMul", graft::dtype::float64), ops, r, o, one_gpu);
    CHECK(d.dev == device{device_kind::cuda, 0});

    // Every type attr the kernel restricts counts (Cast: SrcT and DstT).
    auto cast_node = [](graft::dtype from, graft::dtype to) {
        graft::node n("cast", "Cast");
        n.attrs.set("SrcT", graft::attr_value(from));
        n.attrs.set("DstT", graft::attr_value(to));
        return n;
    };
    d = graft::exec::place_node(cast_node(graft::dtype::float32, graft::dtype::int32), ops, r, o, one_gpu);
    CHECK(d.dev == device{device_kind::cuda, 0});
    d = graft::exec::place_node(cast_node(graft::dtype::float32, graft::dtype::complex64), ops, r, o, one_gpu);
    CHECK(d.dev.is_cpu());
    CHECK(d.note.find("does not handle complex64") != std::string::npos);

    // No GPU kernel: an error naming the node without soft placement, the CPU with it.
    CHECK_THROWS_WITH_AS(graft::exec::place_node(make_node("rnd", "RandomUniform", graft::dtype::float32), ops, r, o, one_gpu),
                         doctest::Contains("no GPU kernel for op RandomUniform"), graft::invalid_argument_error);
    try {
        (void)graft::exec::place_node(make_node("rnd", "RandomUniform", graft::dtype::float32), ops, r, o, one_gpu);
    } catch (const graft::error& e) {
        CHECK(e.where().node == "rnd");
    }
    o.allow_soft_placement = true;
    d = graft::exec::place_node(make_node("rnd", "RandomUniform", graft::dtype::float32), ops, r, o, one_gpu);
    CHECK(d.dev.is_cpu());
    CHECK(d.note == "/device:GPU:0 -> CPU: graft has no GPU kernel for op RandomUniform");

    // A device that is not there.
    d = graft::exec::place_node(make_node("g3", "Relu", graft::dtype::float32, "/gpu:3"), ops, r, o, one_gpu);
    CHECK(d.dev.is_cpu());
    CHECK(d.note.find("only 1 GPUs") != std::string::npos);
    auto no_gpu = [](device_kind k) { return k == device_kind::cpu ? 1 : 0; };
    o.allow_soft_placement = false;
    CHECK_THROWS_WITH_AS(graft::exec::place_node(make_node("g0", "Relu", graft::dtype::float32, "/gpu:0"), ops, r, o, no_gpu),
                         doctest::Contains("there is no GPU"), graft::invalid_argument_error);
    // A malformed device attr names the node.
    try {
        (void)graft::exec::place_node(make_node("bad", "Relu", graft::dtype::float32, "/device:TPU:0"), ops, r, o, one_gpu);
        FAIL("expected an error");
    } catch (const graft::invalid_argument_error& e) {
        CHECK(e.where().node == "bad");
    }
}

TEST_CASE("placement: a graph placed on /device:GPU:0 runs here and matches the CPU (soft placement)") {
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.placeholder("x", graft::dtype::float32, graft::shape{4, 3});
    auto w = b.constant(graft::tensor::from_vector<float>(graft::shape{3, 2}, {1, -2, 3, 0.5f, -1, 2}), "w");
    auto y = b.op("MatMul", {x, w});
    auto z = b.op("Relu", {y});
    for (auto& n : g) n.device = "/job:localhost/replica:0/task:0/device:GPU:0";
    auto xv = graft::test_cuda::ramp(graft::shape{4, 3});
    graft::test_cuda::op_case c;
    c.g = g;
    c.feeds = {{"x", xv}};
    c.fetches = {z.str()};
    auto got = graft::test_cuda::check_cpu_vs_gpu(c);
    REQUIRE(got.size() == 1);
    // Row 0 by hand: relu(x0 · w).
    const float* px = xv.data<float>();
    float c0 = px[0] * 1 + px[1] * 3 + px[2] * -1, c1 = px[0] * -2 + px[1] * 0.5f + px[2] * 2;
    CHECK(got[0].data<float>()[0] == doctest::Approx(std::max(c0, 0.f)));
    CHECK(got[0].data<float>()[1] == doctest::Approx(std::max(c1, 0.f)));

    if (!graft::test_cuda::gpu_present()) {
        // Without a GPU and without soft placement the plan names the first node and the reason.
        graft::exec::session_options o;
        o.allow_soft_placement = false;
        graft::exec::session s(g, o);
        // (with graft::cuda: "there is no GPU"; without it no GPU kernel is registered at all)
        CHECK_THROWS_WITH_AS(s.run({{"x", xv}}, {z.str()}), doctest::Contains("cannot be placed on /device:GPU:0"),
                             graft::invalid_argument_error);
    }
}

TEST_CASE("placement: log_device_placement says where each node runs and why") {
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.placeholder("x", graft::dtype::float32, graft::shape{2});
    b.op("Relu", {x}, {}, "r");
    auto pads = b.constant(graft::tensor::from_vector<std::int32_t>(graft::shape{1, 2}, {1, 0}), "pads");
    b.op("PadV2", {x, pads, b.constant(graft::tensor::scalar_of(7.f), "fill")}, {}, "padded");
    b.op("Reshape", {b.op("Relu", {x}, {}, "r2"), b.constant(graft::tensor::from_vector<std::int32_t>({1, 2}), "shape")}, {},
         "reshaped");
    graft::exec::session_options o;
    o.default_device = "/gpu:0";
    o.log_device_placement = true;
    graft::exec::session s(g, o);
    std::stringstream captured;
    auto* old = std::cerr.rdbuf(captured.rdbuf());
    auto out = s.run({{"x", graft::tensor::from_vector<float>({-1.f, 2.f})}}, {"r:0", "reshaped:0", "padded:0"});
    CHECK(out[1].shape() == graft::shape{1, 2});
    CHECK(out[2].data<float>()[0] == 7.f);
    CHECK(out[2].data<float>()[2] == 2.f);
    std::cerr.rdbuf(old);
    CHECK(out[0].data<float>()[0] == 0.f);
    CHECK(out[0].data<float>()[1] == 2.f);
    std::string log = captured.str();
    if (graft::test_cuda::gpu_present()) {
        CHECK(log.find("r (Relu) -> /device:GPU:0") != std::string::npos);
        // Reshape's shape is read on the host: its int32 Const never goes to the GPU; PadV2 reads its
        // float fill value on the host, so that Const stays there too instead of a round trip.
        CHECK(log.find("shape (Const) -> /device:CPU:0") != std::string::npos);
        CHECK(log.find("fill (Const) -> /device:CPU:0  [kept on the host") != std::string::npos);
        CHECK(log.find("padded (PadV2) -> /device:GPU:0") != std::string::npos);
    } else {
        CHECK(log.find("r (Relu) -> /device:CPU:0  [/device:GPU:0 -> CPU: ") != std::string::npos);
    }
}

TEST_CASE("placement: this machine's devices: /device:GPU:1 with one GPU or none, an op without a GPU kernel, "
          "running out of GPU memory") {
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.placeholder("x", graft::dtype::float32, graft::shape{3});
    b.op("Relu", {x}, {}, "r");
    b.op("RandomUniform", {b.constant(graft::tensor::from_vector<std::int32_t>({2, 2}), "dims")},
         {{"dtype", graft::dtype::float32}, {"seed", std::int64_t{7}}, {"seed2", std::int64_t{4}}}, "rnd");
    for (auto& n : g) {
        if (n.name == "r") n.device = "/device:GPU:1";
        if (n.name == "rnd") n.device = "/device:GPU:0";
    }
    const auto xv = graft::tensor::from_vector<float>({-1.f, 0.5f, 2.f});
    const int gpus = graft::test_cuda::gpu_present() ? 1 : 0;  // the lent machines have one
    {  // Soft placement (the default): both run on what the machine has, with the right values.
        graft::exec::session s(g);
        auto out = s.run({{"x", xv}}, {"r:0", "rnd:0"});
        CHECK(out[0].data<float>()[0] == 0.f);
        CHECK(out[0].data<float>()[2] == 2.f);
        CHECK(out[1].shape() == graft::shape{2, 2});
        for (int i = 0; i < 4; ++i) CHECK((out[1].data<float>()[i] >= 0.f && out[1].data<float>()[i] < 1.f));
    }
    {  // Without it: errors naming the node and the reason, never a crash.
        graft::exec::session_options o;
        o.allow_soft_placement = false;
        graft::exec::session s(g, o);
        try {
            (void)s.run({{"x", xv}}, {"r:0"});
            FAIL("expected a placement error");
        } catch (const graft::invalid_argument_error& e) {
            CHECK(e.where().node == "r");
            const std::string what = e.what();
            CHECK(what.find("cannot be placed on /device:GPU:1") != std::string::npos);
            // (Without graft::cuda in the build no GPU kernel is registered at all: that is the reason given.)
            if (gpus > 0) CHECK(what.find("there are only 1 GPUs") != std::string::npos);
        }
        if (gpus > 0) {
            CHECK_THROWS_WITH_AS((void)s.run({}, {"rnd:0"}), doctest::Contains("no GPU kernel for op RandomUniform"),
                                 graft::invalid_argument_error);
        }
    }
    if (gpus == 0) return;  // (1 TiB on the host is not a test to run)
    // Out of GPU memory: a 2^38-float Fill on the GPU fails naming the node, the bytes and what to
    // do; the session (and the GPU) still run the next step.
    graft::graph h;
    graft::graph_builder hb(h);
    auto dims = hb.constant(graft::tensor::from_vector<std::int32_t>({1 << 19, 1 << 19}), "huge_dims");
    hb.op("Fill", {dims, hb.constant(graft::tensor::scalar_of(1.f), "one")}, {}, "huge");
    auto y = hb.placeholder("y", graft::dtype::float32, graft::shape{2});
    hb.op("Neg", {y}, {}, "neg");
    graft::exec::session_options o;
    o.default_device = "/device:GPU:0";
    graft::exec::session s(h, o);
    try {
        (void)s.run({}, {"huge:0"});
        FAIL("expected an out-of-memory error");
    } catch (const graft::error& e) {
        CHECK(e.where().node == "huge");
        CHECK(std::string(e.what()).find("out of GPU memory on /device:GPU:0 allocating 1099511627776 bytes") !=
              std::string::npos);
        CHECK(!e.hint().empty());
    }
    auto out = s.run({{"y", graft::tensor::from_vector<float>({1.f, -2.f})}}, {"neg:0"});
    CHECK(out[0].data<float>()[0] == -1.f);
    CHECK(out[0].data<float>()[1] == 2.f);
}
