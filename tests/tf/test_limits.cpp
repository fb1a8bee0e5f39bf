// The limits that hold on hostile files (core/limits.hpp) and error text on hostile bytes: nested
// messages past load_limits::max_message_depth, a constant whose shape asks for more than
// load_limits::max_load_bytes, names with NULs and invalid UTF-8 printed escaped.
#include <doctest/doctest.h>

#include <string>

#include "graft/core/limits.hpp"
#include "graft/formats/tf/wire.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"

namespace wire = graft::tf::wire;

namespace {

/// A GraphDef with one Const node "c" whose "value" attr is `attr_value` (AttrValue bytes).
std::string graph_with_attr(const std::string& node_name, const std::string& attr_value, const std::string& input = {}) {
    std::string entry, node, g;
    wire::put_string(entry, 1, "value");
    wire::put_bytes(entry, 2, attr_value);
    wire::put_string(node, 1, node_name);
    wire::put_string(node, 2, "Const");
    if (!input.empty()) wire::put_string(node, 3, input);
    wire::put_bytes(node, 5, entry);
    wire::put_bytes(g, 1, node);
    return g;
}

/// An AttrValue nesting `levels` NameAttrLists (func attrs inside func attrs), 3 messages a level.
std::string nested_func_attr(int levels) {
    std::string v;
    wire::put_int(v, 3, 1);  // i: 1
    for (int i = 0; i < levels; ++i) {
        std::string entry, list, av;
        wire::put_string(entry, 1, "x");
        wire::put_bytes(entry, 2, v);
        wire::put_string(list, 1, "f");
        wire::put_bytes(list, 2, entry);
        wire::put_bytes(av, 10, list);
        v = std::move(av);
    }
    return v;
}

/// An AttrValue holding a float TensorProto of shape [n] with one float_val (TF's "fill" form).
std::string fill_tensor_attr(std::int64_t n) {
    std::string dim, shape, t, av;
    wire::put_int(dim, 1, n);
    wire::put_bytes(shape, 2, dim);
    wire::put_int(t, 1, 1);  // DT_FLOAT
    wire::put_bytes(t, 2, shape);
    wire::put_float(t, 5, 2.5f);
    wire::put_bytes(av, 8, t);
    return av;
}

struct limits_guard {
    graft::load_limits saved = graft::get_load_limits();
    ~limits_guard() { graft::set_load_limits(saved); }
};

}  // namespace

TEST_CASE("messages nested past load_limits::max_message_depth are a format_error, not a stack overflow") {
    CHECK_NOTHROW(graft::tf::parse_graph_def(graph_with_attr("c", nested_func_attr(20)), "shallow.pb", false));
    try {
        (void)graft::tf::parse_graph_def(graph_with_attr("c", nested_func_attr(5000)), "deep.pb", false);
        FAIL("5000 nested NameAttrLists were accepted");
    } catch (const graft::format_error& e) {
        const std::string w = e.what();
        CHECK(w.find("deep.pb") != std::string::npos);
        CHECK(w.find("max_message_depth") != std::string::npos);
    }
    // Groups (wire type 3) of an unknown field, a million deep: skipped with the same limit.
    std::string groups;
    for (int i = 0; i < 1'000'000; ++i) wire::put_tag(groups, 15, wire::wire_type::start_group);
    CHECK_THROWS_AS(graft::tf::parse_graph_def(groups, "groups.pb", false), graft::format_error);

    limits_guard keep;
    auto l = graft::get_load_limits();
    l.max_message_depth = 300;
    graft::set_load_limits(l);
    CHECK_NOTHROW(graft::tf::parse_graph_def(graph_with_attr("c", nested_func_attr(90)), "deeper.pb", false));
    l.max_message_depth = 0;
    CHECK_THROWS_AS(graft::set_load_limits(l), graft::invalid_argument_error);
}

TEST_CASE("a constant whose shape asks for more than load_limits::max_load_bytes is a limit_error naming the file") {
    limits_guard keep;
    // TF's fill form: 4 floats from one float_val, well inside any limit.
    auto g = graft::tf::parse_graph_def(graph_with_attr("c", fill_tensor_attr(4)), "small.pb", false);
    REQUIRE(g.find("c"));
    auto l = graft::get_load_limits();
    l.max_load_bytes = std::uint64_t{64} << 20;
    graft::set_load_limits(l);
    // Loading keeps the TensorProto serialized (a broadcast constant stays small); decoding it, as
    // the Const kernel, freezing or static shapes do, is charged against the limit.
    auto big = graft::tf::parse_graph_def(graph_with_attr("c", fill_tensor_attr(std::int64_t{1} << 31)), "fill.pb", false);
    REQUIRE(big.find("c"));
    CHECK(big.find("c")->attrs.at("value").tensor().shape().num_elements() == std::int64_t{1} << 31);
    try {
        (void)big.find("c")->attrs.at("value").tensor().tensor();
        FAIL("an 8 GiB constant from 40 bytes of file was allocated");
    } catch (const graft::limit_error& e) {
        const std::string w = e.what();
        CHECK(w.find("TensorProto") != std::string::npos);
        CHECK(w.find("max_load_bytes") != std::string::npos);
        CHECK(w.find("GRAFT_MAX_LOAD_BYTES") != std::string::npos);
    }
    {
        graft::load_scope file_scope("fill.pb");  // inside a load, the file's name is the one given
        try {
            (void)big.find("c")->attrs.at("value").tensor().tensor();
            FAIL("an 8 GiB constant from 40 bytes of file was allocated");
        } catch (const graft::limit_error& e) {
            CHECK(std::string(e.what()).find("fill.pb") != std::string::npos);
        }
    }
    const auto small = g.find("c")->attrs.at("value").tensor().tensor();
    REQUIRE(small.num_elements() == 4);
    for (std::int64_t i = 0; i < 4; ++i) CHECK(small.data<float>()[i] == 2.5f);
    // a shape whose element count overflows int64 is an error too, limit or not
    l.max_load_bytes = 0;
    graft::set_load_limits(l);
    std::string dims, shape, t, av;
    for (int i = 0; i < 3; ++i) {
        std::string d;
        wire::put_int(d, 1, std::int64_t{1} << 40);
        wire::put_bytes(shape, 2, d);
    }
    wire::put_int(t, 1, 1);
    wire::put_bytes(t, 2, shape);
    wire::put_bytes(av, 8, t);
    auto decode = [&] {
        auto g2 = graft::tf::parse_graph_def(graph_with_attr("c", av), "overflow.pb", false);
        (void)g2.find("c")->attrs.at("value").tensor().tensor();
    };
    CHECK_THROWS_AS(decode(), graft::shape_error);
}

TEST_CASE("names with NULs, control bytes and invalid UTF-8 are printed escaped and whole") {
    const std::string name("a\0b\x01\xff\xc3\xa9z", 8);  // NUL, SOH, a stray 0xFF, then a valid "é"
    graft::error e("bad thing", graft::location::at_node(name, "Op"));
    const std::string w = e.what();
    CHECK(w.find(std::string("a\\x00b\\x01\\xFF\xc3\xa9z")) != std::string::npos);
    CHECK(w.find('\0') == std::string::npos);
    CHECK(w.find("bad thing") == 0);

    // The same name from a graph file reaches the error of a dangling input, escaped.
    const std::string bytes = graph_with_attr(name, fill_tensor_attr(1), std::string("no\0where", 8));
    try {
        (void)graft::tf::parse_graph_def(bytes, "names.pb", true);
        FAIL("a dangling input was accepted");
    } catch (const graft::error& err) {
        const std::string m = err.what();
        CHECK(m.find('\0') == std::string::npos);
        CHECK(m.find("\\x00") != std::string::npos);
        CHECK(m.find("\xff") == std::string::npos);
    }
}
