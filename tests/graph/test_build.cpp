// graph_builder: names, inferred attrs, variables, control dependencies, errors.
#include <doctest/doctest.h>
#include "graft/graph/build.hpp"

using graft::dtype;
using graft::endpoint;

TEST_CASE("graph_builder infers type attrs, N and defaults from the OpDef") {
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.placeholder("x", dtype::float32, graft::shape{-1, 3});
    auto w = b.variable("w", graft::tensor(dtype::float32, graft::shape{3, 2}));
    auto y = b.op("MatMul", {x, w.value});
    CHECK(y == endpoint{"MatMul", 0});
    const auto& mm = g.at("MatMul");
    CHECK(mm.attr_at("T").type() == dtype::float32);
    CHECK(mm.attr_at("transpose_a").b() == false);
    CHECK(b.dtype_of(y) == dtype::float32);
    CHECK(b.is_ref(w.ref));
    CHECK(!b.is_ref(w.value));
    CHECK(w.assign == "w/Assign");
    CHECK(w.read == "w/read");
    CHECK(g.at("w/Assign").inputs[1] == endpoint{"w/initial_value", 0});

    auto s = b.sub("loss");
    auto axes = s.constant(graft::tensor::from_vector<std::int32_t>({0, 1}), "axes");
    auto m = s.op("Mean", {y, axes});
    CHECK(m.node == "loss/Mean");
    CHECK(g.at("loss/Mean").attr_at("Tidx").type() == dtype::int32);
    CHECK(g.at("loss/Mean").attr_at("keep_dims").b() == false);
    CHECK(b.sub("loss").scope() == "loss_1");

    auto n = b.op("AddN", {y, y, y});
    CHECK(g.at(n.node).attr_at("N").i() == 3);
    auto c = b.op("ConcatV2", {y, y, b.scalar(std::int32_t{1})});
    CHECK(g.at(c.node).attr_at("N").i() == 2);
    CHECK(g.at(c.node).attr_at("Tidx").type() == dtype::int32);
    auto id = b.op_n("IdentityN", {y, axes});
    REQUIRE(id.size() == 2);
    CHECK(b.dtype_of(id[1]) == dtype::int32);
    auto half = b.scalar_as(dtype::float64, 0.5);
    CHECK(b.dtype_of(half) == dtype::float64);
}

TEST_CASE("graph_builder control dependencies, devices and groups") {
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.placeholder("x", dtype::float32);
    auto d = b.with_control_dependencies({"x"}).on_device("/device:CPU:0");
    auto y = d.op("Identity", {x}, {}, "y");
    CHECK(g.at("y").control_inputs == std::vector<std::string>{"x"});
    CHECK(g.at("y").device == "/device:CPU:0");
    auto grp = b.group({"x", y.node}, "init");
    CHECK(grp == "init");
    CHECK(g.at("init").control_inputs.size() == 2);
}

TEST_CASE("graph_builder errors name the node and leave the graph unchanged") {
    graft::graph g;
    graft::graph_builder b(g);
    auto x = b.placeholder("x", dtype::float32);
    auto before = g.size();
    CHECK_THROWS_AS(b.op("NoSuchOp", {x}), graft::graph_error);
    CHECK_THROWS_AS(b.op("Identity", {endpoint{"missing", 0}}), graft::graph_error);
    CHECK_THROWS_AS(b.op("MatMul", {x}), graft::graph_error);
    try {
        (void)b.op("MatMul", {x}, {}, "mm");
    } catch (const graft::graph_error& e) {
        CHECK(std::string(e.what()).find("mm") != std::string::npos);
    }
    CHECK(g.size() == before);
}
