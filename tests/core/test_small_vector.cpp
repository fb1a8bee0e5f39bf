#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graft/core/small_vector.hpp"

using graft::small_vector;
using ivec = std::vector<std::int64_t>;

TEST_CASE("small_vector: in place up to N, on the heap past it, the same elements either way") {
    small_vector<std::int64_t, 4> v;
    CHECK(v.empty());
    CHECK(v.is_inline());
    CHECK(v.capacity() == 4);
    for (std::int64_t i = 0; i < 4; ++i) v.push_back(i * 10);
    CHECK(v.is_inline());
    CHECK(v == ivec{0, 10, 20, 30});
    v.push_back(40);  // the fifth: moves to a heap block of twice the room
    CHECK_FALSE(v.is_inline());
    CHECK(v.capacity() == 8);
    CHECK(v == ivec{0, 10, 20, 30, 40});
    CHECK(v.front() == 0);
    CHECK(v.back() == 40);
    CHECK(v[2] == 20);
    v.pop_back();
    CHECK(v.size() == 4);
    CHECK_FALSE(v == ivec{0, 10, 20, 30, 40});
    CHECK_FALSE(v == ivec{0, 10, 20, 31});

    SUBCASE("push_back of its own element while growing") {
        small_vector<std::int64_t, 2> w{7, 8};
        w.push_back(w[0]);  // the argument lives in the block being replaced
        w.push_back(w[2]);
        CHECK(w == ivec{7, 8, 7, 7});
        w.resize(9, w[1]);
        CHECK(w == ivec{7, 8, 7, 7, 8, 8, 8, 8, 8});
    }
    SUBCASE("resize, assign, reserve, clear") {
        small_vector<std::int64_t, 3> w;
        w.resize(2);
        CHECK(w == ivec{0, 0});
        w.resize(5, 9);
        CHECK(w == ivec{0, 0, 9, 9, 9});
        w.resize(1);
        CHECK(w == ivec{0});
        w.assign(3, 4);
        CHECK(w == ivec{4, 4, 4});
        const ivec src{1, 2, 3, 4, 5, 6};
        w.assign(src.begin(), src.end());
        CHECK(w == ivec{1, 2, 3, 4, 5, 6});
        w.clear();
        CHECK(w.empty());
        CHECK(w.capacity() >= 6);  // clear keeps the block, as std::vector does
        small_vector<std::int64_t, 3> r;
        r.reserve(10);
        CHECK(r.capacity() == 10);
        CHECK_FALSE(r.is_inline());
        CHECK(r.empty());
        r = {5, 6};
        CHECK(r == ivec{5, 6});
    }
}

TEST_CASE("small_vector: copies are deep, moves steal a heap block or move the elements held in place") {
    small_vector<std::int64_t, 2> in_place{1, 2};
    small_vector<std::int64_t, 2> on_heap{1, 2, 3};
    REQUIRE(in_place.is_inline());
    REQUIRE_FALSE(on_heap.is_inline());

    auto c1 = in_place, c2 = on_heap;
    c1[0] = 100;
    c2[0] = 100;
    CHECK(in_place == ivec{1, 2});
    CHECK(on_heap == ivec{1, 2, 3});
    CHECK(c1 == ivec{100, 2});
    CHECK(c2 == ivec{100, 2, 3});

    const std::int64_t* block = on_heap.data();
    auto m2 = std::move(on_heap);
    CHECK(m2.data() == block);  // the block itself
    CHECK(m2 == ivec{1, 2, 3});
    CHECK(on_heap.empty());  // NOLINT(bugprone-use-after-move): left empty and in place, usable
    CHECK(on_heap.is_inline());
    on_heap.push_back(5);
    CHECK(on_heap == ivec{5});

    auto m1 = std::move(in_place);
    CHECK(m1.is_inline());
    CHECK(m1.data() != in_place.data());
    CHECK(m1 == ivec{1, 2});

    // assignments across the two forms, both ways
    c1 = c2;  // in place <- heap
    CHECK(c1 == ivec{100, 2, 3});
    c2 = small_vector<std::int64_t, 2>{9};  // heap <- in place (moved)
    CHECK(c2 == ivec{9});
    CHECK(c2.is_inline());
    const auto& same = c2;
    c2 = same;  // self-assignment keeps the elements
    CHECK(c2 == ivec{9});
}

TEST_CASE("small_vector: elements with their own resources are constructed and destroyed once") {
    // a shared_ptr's use count tells every copy that is alive; a leaked or twice-destroyed element
    // shows in the count (and under ASan)
    auto token = std::make_shared<int>(1);
    {
        small_vector<std::shared_ptr<int>, 2> v;
        for (int i = 0; i < 5; ++i) v.push_back(token);  // grows twice, moving the elements
        CHECK(token.use_count() == 6);
        v.pop_back();
        CHECK(token.use_count() == 5);
        auto copy = v;
        CHECK(token.use_count() == 9);
        auto moved = std::move(copy);
        CHECK(token.use_count() == 9);
        v.resize(1);
        CHECK(token.use_count() == 6);
        v.clear();
        CHECK(token.use_count() == 5);
    }
    CHECK(token.use_count() == 1);

    // nested, as a broadcast plan's per-input strides are
    small_vector<small_vector<std::string, 2>, 2> nested;
    nested.emplace_back(std::initializer_list<std::string>{"a", "b", "a long string past the small-string buffer"});
    nested.emplace_back();
    nested[1].push_back("c");
    nested.push_back(nested[0]);  // grows with a copy of its own element
    REQUIRE(nested.size() == 3);
    CHECK(nested[2][2] == "a long string past the small-string buffer");
    CHECK(nested[1][0] == "c");
    auto other = nested;
    CHECK(other == nested);
    other[0][0] = "z";
    CHECK_FALSE(other == nested);
}
