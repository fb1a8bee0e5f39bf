#include <doctest/doctest.h>

#include "graft/core/tensor_util.hpp"
#include "graft/exec/session.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "support/fixtures.hpp"

using graft::dtype;
using graft::node;
using graft::tensor;

namespace {
node constant(std::string name, tensor v) {
    node n(std::move(name), "Const");
    n.attrs.set("dtype", v.type());
    n.attrs.set("value", std::move(v));
    return n;
}
}  // namespace

TEST_CASE("SaveV2 then RestoreV2 through graph ops, with a sliced variable") {
    auto dir = graft::test::scratch("exec_saverestore");
    auto prefix = (dir / "model.ckpt").string();
    graft::graph g;
    g.add_node(constant("prefix", tensor::scalar_of(prefix)));
    g.add_node(constant("names", tensor::from_vector<std::string>({"a", "b", "emb"})));
    g.add_node(constant("specs", tensor::from_vector<std::string>({"", "", "4 2 0,2:-"})));
    g.add_node(constant("a", tensor::from_vector<float>({1.5f, -2.f})));
    g.add_node(constant("b", tensor::scalar_of<std::int64_t>(42)));
    g.add_node(constant("emb_part", tensor::from_vector<float>({2, 2}, {1, 2, 3, 4})));
    node save("save", "SaveV2", {{"prefix", 0}, {"names", 0}, {"specs", 0}, {"a", 0}, {"b", 0}, {"emb_part", 0}});
    save.attrs.set("dtypes", graft::attr_value::list_of(std::vector<dtype>{dtype::float32, dtype::int64, dtype::float32}));
    g.add_node(save);
    g.add_node(constant("rnames", tensor::from_vector<std::string>({"b", "a", "emb"})));
    g.add_node(constant("rspecs", tensor::from_vector<std::string>({"", "", "4 2 0,2:-"})));
    node restore("restore", "RestoreV2", {{"prefix", 0}, {"rnames", 0}, {"rspecs", 0}});
    restore.attrs.set("dtypes", graft::attr_value::list_of(std::vector<dtype>{dtype::int64, dtype::float32, dtype::float32}));
    g.add_node(restore);

    graft::exec::session s(g);
    s.run({}, {}, {"save"});
    graft::tf::checkpoint_reader r(prefix);
    CHECK(r.keys() == std::vector<std::string>{"a", "b", "emb"});
    CHECK(r.shape_of("emb") == graft::shape{4, 2});
    auto out = s.run({}, {"restore:0", "restore:1", "restore:2"});
    CHECK(out[0].scalar<std::int64_t>()() == 42);
    CHECK(out[1].flat<float>()(0) == 1.5f);
    CHECK(out[2].matrix<float>()(1, 1) == 4.f);

    // Restoring a name the checkpoint lacks names it.
    graft::graph g2;
    g2.add_node(constant("prefix", tensor::scalar_of(prefix)));
    g2.add_node(constant("n", tensor::from_vector<std::string>({"missing"})));
    g2.add_node(constant("sp", tensor::from_vector<std::string>({""})));
    node bad("bad", "RestoreV2", {{"prefix", 0}, {"n", 0}, {"sp", 0}});
    bad.attrs.set("dtypes", graft::attr_value::list_of(std::vector<dtype>{dtype::float32}));
    g2.add_node(bad);
    graft::exec::session s2(g2);
    CHECK_THROWS_WITH_AS(s2.run({}, {"bad:0"}), doctest::Contains("missing"), graft::error);
}

TEST_CASE("ShardedFilename and StringJoin format like TF") {
    graft::graph g;
    g.add_node(constant("base", tensor::scalar_of("/tmp/m_temp/part")));
    g.add_node(constant("i", tensor::scalar_of<std::int32_t>(0)));
    g.add_node(constant("n", tensor::scalar_of<std::int32_t>(1)));
    g.add_node(node("sf", "ShardedFilename", {{"base", 0}, {"i", 0}, {"n", 0}}));
    g.add_node(constant("p", tensor::scalar_of("model")));
    g.add_node(constant("suffix", tensor::scalar_of("_temp_abc/part")));
    node j("join", "StringJoin", {{"p", 0}, {"suffix", 0}});
    j.attrs.set("N", 2);
    g.add_node(j);
    graft::exec::session s(g);
    auto out = s.run({}, {"sf:0", "join:0"});
    CHECK(out[0].scalar<std::string>()() == "/tmp/m_temp/part-00000-of-00001");
    CHECK(out[1].scalar<std::string>()() == "model_temp_abc/part");
}
