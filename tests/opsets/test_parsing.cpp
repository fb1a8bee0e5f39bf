// The parsing family (graft/ops/parse_example.hpp): tf.train.Example protos, written here with
// graft's wire writer, parsed by ParseExample / ParseExampleV2 / ParseSingleExample through a session,
// and TF Serving's own classify/regress signatures (a real TF1 SavedModel) fed serialized Examples.
#include <doctest/doctest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/exec/model.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "graft/formats/tf/wire.hpp"
#include "support/fixtures.hpp"
#include "support/tensors.hpp"

// One namespace per file: the opsets tests build as one binary in unity batches.
namespace graft_test_parsing {

using namespace graft::test;  // f32, f64, i32, i64, values

using graft::dtype;
using graft::shape;
using graft::tensor;

namespace {

/// One feature's value list, as tf.train.Feature: floats (packed), int64s (unpacked when asked) or bytes.
struct feat {
    std::vector<float> f;
    std::vector<std::int64_t> i;
    std::vector<std::string> s;
    int kind = 2;  // 1 bytes, 2 float, 3 int64
    bool packed = true;
};

std::string example(const std::map<std::string, feat>& features) {
    graft::tf::wire::writer fs;
    for (const auto& [key, v] : features) {
        graft::tf::wire::writer list;
        if (v.kind == 2) {
            std::string packed;
            for (float x : v.f) {
                std::uint32_t bits;
                std::memcpy(&bits, &x, 4);
                graft::tf::wire::put_fixed32(packed, bits);
            }
            list.bytes(1, packed);
        } else if (v.kind == 3) {
            if (v.packed) {
                std::string packed;
                for (auto x : v.i) graft::tf::wire::put_varint(packed, static_cast<std::uint64_t>(x));
                list.bytes(1, packed);
            } else {
                for (auto x : v.i) list.int64(1, x);
            }
        } else {
            for (const auto& x : v.s) list.bytes(1, x);
        }
        graft::tf::wire::writer feature;
        feature.message(static_cast<std::uint32_t>(v.kind), list.str());
        graft::tf::wire::writer entry;
        entry.bytes(1, key);
        entry.message(2, feature.str());
        fs.message(1, entry.str());
    }
    graft::tf::wire::writer ex;
    ex.message(1, fs.str());
    return std::move(ex).str();
}

feat floats(std::vector<float> v) { feat x; x.f = std::move(v); return x; }
feat ints(std::vector<std::int64_t> v, bool packed = true) { feat x; x.kind = 3; x.i = std::move(v); x.packed = packed; return x; }
feat strs(std::vector<std::string> v) { feat x; x.kind = 1; x.s = std::move(v); return x; }

tensor strings(std::vector<std::string> v) {
    auto n = static_cast<std::int64_t>(v.size());
    return tensor::from_vector<std::string>(shape{n}, v);
}

}  // namespace

TEST_CASE("ParseExample: dense features with defaults, a variable-length one, sparse features") {
    graft::graph g;
    graft::graph_builder b(g);
    auto ser = b.op("Placeholder", {}, {{"dtype", dtype::string}});
    auto names = b.constant(tensor::from_vector<std::string>(shape{0}, {}));
    auto k_sp = b.constant(tensor::scalar_of<std::string>("tags"));
    auto k_x = b.constant(tensor::scalar_of<std::string>("x"));
    auto k_id = b.constant(tensor::scalar_of<std::string>("id"));
    auto k_seq = b.constant(tensor::scalar_of<std::string>("seq"));
    auto d_x = b.constant(tensor::from_vector<float>(shape{0}, {}));          // required
    auto d_id = b.constant(tensor::from_vector<std::int64_t>(shape{1}, {-1}));  // default -1
    auto d_seq = b.constant(tensor::scalar_of<float>(0.5f));                  // padding value
    auto n = b.add("ParseExample", {ser, names, k_sp, k_x, k_id, k_seq, d_x, d_id, d_seq},
                   {{"Nsparse", std::int64_t{1}}, {"Ndense", std::int64_t{3}},
                    {"sparse_types", graft::attr_value::list_of(std::vector<dtype>{dtype::string})},
                    {"Tdense", graft::attr_value::list_of(std::vector<dtype>{dtype::float32, dtype::int64, dtype::float32})},
                    {"dense_shapes", graft::attr_value::list_of(std::vector<shape>{shape{2}, shape{1}, shape{-1}})}},
                   "parse");
    graft::exec::session s(g);
    tensor batch = strings({example({{"x", floats({1, 2})}, {"id", ints({7}, false)}, {"seq", floats({3})}, {"tags", strs({"a", "b"})}}),
                            example({{"x", floats({3, 4})}, {"seq", floats({5, 6, 7})}}),
                            example({{"x", floats({5, 6})}, {"tags", strs({"c"})}, {"id", ints({9})}})});
    auto out = s.run({{ser.str(), batch}}, {"parse:0", "parse:1", "parse:2", "parse:3", "parse:4", "parse:5"});
    // sparse "tags": indices [[0,0],[0,1],[2,0]], values, dense shape [3, 2]
    CHECK(out[0].shape() == shape{3, 2});
    CHECK(values(out[0]) == std::vector<double>{0, 0, 0, 1, 2, 0});
    CHECK(out[1].data<std::string>()[0] == "a");
    CHECK(out[1].data<std::string>()[2] == "c");
    CHECK(values(out[2]) == std::vector<double>{3, 2});
    CHECK(out[3].shape() == shape{3, 2});
    CHECK(values(out[3]) == std::vector<double>{1, 2, 3, 4, 5, 6});
    CHECK(out[4].type() == dtype::int64);
    CHECK(values(out[4]) == std::vector<double>{7, -1, 9});
    CHECK(out[5].shape() == shape{3, 3});  // padded to the longest row with the default 0.5
    CHECK(values(out[5]) == std::vector<double>{3, 0.5, 0.5, 5, 6, 7, 0.5, 0.5, 0.5});

    SUBCASE("a required feature that is missing, a wrong count and a wrong type are errors naming the key") {
        CHECK_THROWS_WITH(s.run({{ser.str(), strings({example({{"id", ints({1})}})})}}, {"parse:3"}),
                          doctest::Contains("Feature: x (data type: float32) is required"));
        CHECK_THROWS_WITH(s.run({{ser.str(), strings({example({{"x", floats({1, 2, 3})}})})}}, {"parse:3"}),
                          doctest::Contains("Values size: 3 but output shape: [2]"));
        CHECK_THROWS_WITH(s.run({{ser.str(), strings({example({{"x", ints({1, 2})}})})}}, {"parse:3"}),
                          doctest::Contains("Data types don't match"));
        CHECK_THROWS_WITH(s.run({{ser.str(), strings({std::string("\xff\xff\xff", 3)})}}, {"parse:3"}),
                          doctest::Contains("serialized Example 0"));
    }
}

TEST_CASE("ParseSingleExample and ParseExampleV2 (ragged features)") {
    graft::graph g;
    graft::graph_builder b(g);
    auto ser = b.op("Placeholder", {}, {{"dtype", dtype::string}});
    auto d_x = b.constant(tensor::from_vector<float>(shape{0}, {}));
    b.add("ParseSingleExample", {ser, d_x},
          {{"num_sparse", std::int64_t{1}},
           {"sparse_keys", graft::attr_value::list_of(std::vector<std::string>{"ids"})},
           {"dense_keys", graft::attr_value::list_of(std::vector<std::string>{"x"})},
           {"sparse_types", graft::attr_value::list_of(std::vector<dtype>{dtype::int64})},
           {"Tdense", graft::attr_value::list_of(std::vector<dtype>{dtype::float32})},
           {"dense_shapes", graft::attr_value::list_of(std::vector<shape>{shape{2}})}},
          "single");
    auto serv = b.op("Placeholder", {}, {{"dtype", dtype::string}});
    auto none = b.constant(tensor::from_vector<std::string>(shape{0}, {}));
    auto rk = b.constant(tensor::from_vector<std::string>(shape{1}, {"ids"}));
    auto dk = b.constant(tensor::from_vector<std::string>(shape{1}, {"x"}));
    b.add("ParseExampleV2", {serv, none, none, dk, rk, d_x},
          {{"num_sparse", std::int64_t{0}},
           {"sparse_types", graft::attr_value::empty_list()},
           {"ragged_value_types", graft::attr_value::list_of(std::vector<dtype>{dtype::int64})},
           {"ragged_split_types", graft::attr_value::list_of(std::vector<dtype>{dtype::int32})},
           {"Tdense", graft::attr_value::list_of(std::vector<dtype>{dtype::float32})},
           {"dense_shapes", graft::attr_value::list_of(std::vector<shape>{shape{2}})}},
          "v2");
    graft::exec::session s(g);
    auto one = tensor::scalar_of<std::string>(example({{"x", floats({1.5f, -2})}, {"ids", ints({4, 5, 6})}}));
    auto out = s.run({{ser.str(), one}}, {"single:0", "single:1", "single:2", "single:3"});
    CHECK(out[0].shape() == shape{3, 1});
    CHECK(values(out[0]) == std::vector<double>{0, 1, 2});
    CHECK(values(out[1]) == std::vector<double>{4, 5, 6});
    CHECK(values(out[2]) == std::vector<double>{3});
    CHECK(out[3].shape() == shape{2});
    CHECK(values(out[3]) == std::vector<double>{1.5, -2});

    auto two = strings({example({{"x", floats({1, 2})}, {"ids", ints({4, 5})}}), example({{"x", floats({3, 4})}}),
                        example({{"x", floats({5, 6})}, {"ids", ints({6})}})});
    auto v = s.run({{serv.str(), two}}, {"v2:0", "v2:1", "v2:2"});
    CHECK(values(v[0]) == std::vector<double>{1, 2, 3, 4, 5, 6});
    CHECK(values(v[1]) == std::vector<double>{4, 5, 6});  // ragged values
    CHECK(v[2].type() == dtype::int32);
    CHECK(values(v[2]) == std::vector<double>{0, 2, 2, 3});  // row splits
}

TEST_CASE("TF Serving's half_plus_two: classify and regress signatures fed serialized tf.Examples") {
    auto dir = graft::test::fixture("tf-serving/saved_model_half_plus_two_cpu/00000123");
    GRAFT_REQUIRE_PATH(dir);
    auto m = graft::exec::load_model(dir.string());
    auto r = m.runner();
    tensor batch = strings({example({{"x", floats({1})}}), example({{"x", floats({2})}}), example({{"x", floats({5})}})});
    auto y = r.call("regress_x_to_y", {{"inputs", batch}}).at("outputs");
    CHECK(y.shape() == shape{3, 1});
    CHECK(values(y) == std::vector<double>{2.5, 3.0, 4.5});  // y = 0.5 x + 2
    auto scores = r.call("classify_x_to_y", {{"inputs", batch}}).at("scores");
    CHECK(values(scores) == std::vector<double>{2.5, 3.0, 4.5});
    // y2 = 0.5 x + 3 from the same Examples (variable c)
    auto y2 = r.call("regress_x_to_y2", {{"inputs", batch}}).at("outputs");
    CHECK(values(y2) == std::vector<double>{3.5, 4.0, 5.5});
}

}  // namespace graft_test_parsing
