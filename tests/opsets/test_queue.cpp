// TF1 input-pipeline queues (FIFOQueueV2, RandomShuffleQueueV2, PaddingFIFOQueueV2, PriorityQueueV2
// and their enqueue / dequeue / close / size ops) run through graft::exec::session on graphs built with graft::graph_builder: elements
// enqueued by one run are dequeued by later runs, in FIFO order or shuffled (a permutation of what
// went in, the same for the same seeds), capacity and min_after_dequeue respected, TF's messages for a
// closed queue, and graft's "would block" error naming the node where TF would wait.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/exec/queues.hpp"
#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#include "support/tensors.hpp"

// One namespace per file: the opsets tests build as one binary in unity batches.
namespace graft_test_queue {

using namespace graft::test;  // f32, f64, i32, i64, values, elements

using graft::attr_value;
using graft::dtype;
using graft::endpoint;
using graft::shape;
using graft::tensor;

namespace {

/// A queue of (int32 scalar, float32[2]) elements with its ops, named as tf.train builds them.
struct pipeline {
    graft::graph g;
    endpoint handle;
    pipeline(const std::string& queue_op, graft::attr_list extra = {}) {
        graft::graph_builder b(g);
        graft::attr_list attrs = {
            {"component_types", attr_value::list_of(std::vector<dtype>{dtype::int32, dtype::float32})},
            {"shapes", attr_value::list_of(std::vector<shape>{shape{}, shape{2}})}};
        for (auto& a : extra) attrs.push_back(a);
        handle = b.op(queue_op, {}, attrs, "q");
        auto ids = b.placeholder("ids", dtype::int32), xs = b.placeholder("xs", dtype::float32);
        b.add("QueueEnqueueManyV2", {handle, ids, xs}, {}, "enqueue_many");
        b.add("QueueEnqueueV2", {handle, ids, xs}, {}, "enqueue");
        const attr_value types = attr_value::list_of(std::vector<dtype>{dtype::int32, dtype::float32});
        b.add("QueueDequeueV2", {handle}, {{"component_types", types}}, "dequeue");
        auto n = b.placeholder("n", dtype::int32, shape{});
        b.add("QueueDequeueManyV2", {handle, n}, {{"component_types", types}}, "dequeue_many");
        b.add("QueueDequeueUpToV2", {handle, n}, {{"component_types", types}}, "dequeue_up_to");
        b.add("QueueCloseV2", {handle}, {}, "close");
        b.add("QueueSizeV2", {handle}, {}, "size");
        b.add("QueueIsClosedV2", {handle}, {}, "is_closed");
    }
};

/// Enqueues ids first..first+count-1 with xs = (id, -id) in one EnqueueMany run.
void fill(graft::exec::session& s, int first, int count) {
    std::vector<std::int32_t> ids;
    std::vector<float> xs;
    for (int i = first; i < first + count; ++i) {
        ids.push_back(i);
        xs.push_back(static_cast<float>(i));
        xs.push_back(-static_cast<float>(i));
    }
    s.run({{"ids", i32({count}, ids)}, {"xs", f32({count, 2}, xs)}}, {}, {"enqueue_many"});
}
std::int32_t size(graft::exec::session& s) { return s.run({}, {"size:0"})[0].data<std::int32_t>()[0]; }
std::vector<tensor> take(graft::exec::session& s, const std::string& op, int n) {
    return s.run({{"n", tensor::scalar_of(n)}}, {op + ":0", op + ":1"});
}

}  // namespace

TEST_CASE("FIFOQueueV2: elements enqueued by one run come out of later runs in order") {
    pipeline p("FIFOQueueV2", {{"capacity", std::int64_t{5}}});
    graft::exec::session s(p.g);
    CHECK(size(s) == 0);
    fill(s, 1, 3);
    CHECK(size(s) == 3);
    s.run({{"ids", tensor::scalar_of(std::int32_t{4})}, {"xs", f32({2}, {4, -4})}}, {}, {"enqueue"});
    CHECK(size(s) == 4);

    auto one = s.run({}, {"dequeue:0", "dequeue:1"});
    CHECK(one[0].shape() == shape{});
    CHECK(one[0].data<std::int32_t>()[0] == 1);
    CHECK(elements<float>(one[1]) == std::vector<float>{1, -1});
    auto two = take(s, "dequeue_many", 2);
    CHECK(two[0].shape() == shape{2});
    CHECK(two[1].shape() == shape{2, 2});
    CHECK(elements<std::int32_t>(two[0]) == std::vector<std::int32_t>{2, 3});
    CHECK(elements<float>(two[1]) == std::vector<float>{2, -2, 3, -3});
    CHECK(size(s) == 1);
    auto none = take(s, "dequeue_many", 0);
    CHECK(none[1].shape() == shape{0, 2});

    // Capacity 5: one held + 5 more would block (TF waits for a dequeue).
    CHECK_THROWS_AS(fill(s, 10, 5), graft::exec::queue_blocked_error);
    CHECK(size(s) == 1);
    // More than it holds: TF blocks; graft says what it holds and needs, naming the node.
    try {
        take(s, "dequeue_many", 3);
        FAIL("expected a blocked dequeue");
    } catch (const graft::exec::queue_blocked_error& e) {
        const std::string w = e.what();
        CHECK(w.find("'dequeue_many'") != std::string::npos);
        CHECK(w.find("holds 1 elements; dequeuing 3 needs 3") != std::string::npos);
        CHECK(w.find("enqueue op must run first") != std::string::npos);
    }
    CHECK(size(s) == 1);  // a refused dequeue takes nothing

    CHECK_FALSE(s.run({}, {"is_closed:0"})[0].data<bool>()[0]);
    s.run({}, {}, {"close"});
    CHECK(s.run({}, {"is_closed:0"})[0].data<bool>()[0]);
    // Closed: an enqueue is cancelled, DequeueUpTo takes what is left, then OutOfRange.
    try {
        fill(s, 20, 1);
        FAIL("expected a closed-queue error");
    } catch (const graft::exec::queue_closed_error& e) {
        CHECK(std::string(e.what()).find("FIFOQueue 'q' is closed.") != std::string::npos);
    }
    CHECK_THROWS_AS(take(s, "dequeue_many", 2), graft::exec::queue_closed_error);
    auto rest = take(s, "dequeue_up_to", 2);
    CHECK(elements<std::int32_t>(rest[0]) == std::vector<std::int32_t>{4});
    try {
        take(s, "dequeue_up_to", 2);
        FAIL("expected OutOfRange");
    } catch (const graft::exec::queue_closed_error& e) {
        CHECK(std::string(e.what()).find("FIFOQueue 'q' is closed and has insufficient elements (requested 2, "
                                         "current size 0)") != std::string::npos);
    }
}

TEST_CASE("RandomShuffleQueueV2: a seeded permutation of what went in, keeping min_after_dequeue") {
    auto drain = [](std::int64_t seed) {
        pipeline p("RandomShuffleQueueV2", {{"capacity", std::int64_t{20}},
                                             {"min_after_dequeue", std::int64_t{4}},
                                             {"seed", seed},
                                             {"seed2", std::int64_t{7}}});
        graft::exec::session s(p.g);
        fill(s, 0, 10);
        fill(s, 10, 10);
        auto a = take(s, "dequeue_many", 16);
        CHECK(size(s) == 4);
        // One more would leave 3 < min_after_dequeue: TF waits; graft says so.
        try {
            s.run({}, {"dequeue:0"});
            FAIL("expected a blocked dequeue");
        } catch (const graft::exec::queue_blocked_error& e) {
            CHECK(std::string(e.what()).find("needs 5 (min_after_dequeue 4)") != std::string::npos);
        }
        s.run({}, {}, {"close"});  // closed: min_after_dequeue no longer holds elements back
        auto b = take(s, "dequeue_up_to", 10);
        CHECK(b[0].shape() == shape{4});
        std::vector<std::int32_t> ids = elements<std::int32_t>(a[0]);
        for (auto v : elements<std::int32_t>(b[0])) ids.push_back(v);
        // Components stay together: xs row k is (id, -id).
        auto xa = elements<float>(a[1]);
        for (std::size_t k = 0; k < 16; ++k) {
            CHECK(xa[2 * k] == static_cast<float>(ids[k]));
            CHECK(xa[2 * k + 1] == -static_cast<float>(ids[k]));
        }
        return ids;
    };
    auto ids = drain(42);
    auto sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::int32_t> all(20);
    for (int i = 0; i < 20; ++i) all[static_cast<std::size_t>(i)] = i;
    CHECK(sorted == all);
    CHECK(ids != all);             // shuffled
    CHECK(drain(42) == ids);       // the same seeds give the same order
    CHECK(drain(43) != ids);
}

TEST_CASE("queues: shared_name makes two queue nodes one queue; a missing shape stops DequeueMany") {
    graft::graph g;
    graft::graph_builder b(g);
    const attr_value types = attr_value::list_of(std::vector<dtype>{dtype::float32});
    auto q1 = b.op("FIFOQueueV2", {}, {{"component_types", types}, {"shared_name", std::string("shared")}}, "q1");
    auto q2 = b.op("FIFOQueueV2", {}, {{"component_types", types}, {"shared_name", std::string("shared")}}, "q2");
    b.add("QueueEnqueueV2", {q1, b.constant(f32({3}, {1, 2, 3}))}, {}, "put");
    b.add("QueueDequeueV2", {q2}, {{"component_types", types}}, "get");
    b.add("QueueDequeueManyV2", {q2, b.scalar(std::int32_t{1})}, {{"component_types", types}}, "get_many");
    graft::exec::session s(g);
    s.run({}, {}, {"put"});
    // No shapes: elements may differ in shape, and only one at a time comes out (as in TF).
    CHECK_THROWS_WITH_AS(s.run({}, {"get_many:0"}), doctest::Contains("require the components to have specified shapes"),
                         graft::invalid_argument_error);
    auto out = s.run({}, {"get:0"});
    CHECK(elements<float>(out[0]) == std::vector<float>{1, 2, 3});
}

TEST_CASE("queues: enqueued tuples of the wrong dtype, shape or batch size are errors naming the node") {
    pipeline p("FIFOQueueV2");
    graft::graph_builder b(p.g);
    b.add("QueueEnqueueV2", {p.handle, b.scalar(1.0f), b.constant(f32({2}, {1, 2}))}, {}, "enqueue_float_id");
    graft::exec::session s(p.g);
    auto run_many = [&](tensor ids, tensor xs) { s.run({{"ids", ids}, {"xs", xs}}, {}, {"enqueue_many"}); };
    auto run_one = [&](tensor ids, tensor xs) { s.run({{"ids", ids}, {"xs", xs}}, {}, {"enqueue"}); };
    CHECK_THROWS_WITH_AS(s.run({}, {}, {"enqueue_float_id"}),
                         doctest::Contains("Type mismatch in tuple component 0. Expected int32, got float32 [at node "
                                           "'enqueue_float_id'"),
                         graft::invalid_argument_error);
    CHECK_THROWS_WITH_AS(run_one(tensor::scalar_of(std::int32_t{1}), f32({3}, {1, 2, 3})),
                         doctest::Contains("Shape mismatch in tuple component 1. Expected [2], got [3]"),
                         graft::invalid_argument_error);
    try {
        run_many(i32({2}, {1, 2}), f32({3, 2}, {1, 2, 3, 4, 5, 6}));
        FAIL("expected a batch-size error");
    } catch (const graft::invalid_argument_error& e) {
        const std::string w = e.what();
        CHECK(w.find("Component 0 has 2, component 1 has 3") != std::string::npos);
        CHECK(w.find("'enqueue_many'") != std::string::npos);
    }
    CHECK(size(s) == 0);  // nothing of a refused tuple went in
    CHECK_THROWS_AS(take(s, "dequeue_many", -1), graft::invalid_argument_error);
}

TEST_CASE("PaddingFIFOQueueV2: dims of -1 vary per element and DequeueMany pads them with zeros") {
    // What tf.train.batch(dynamic_pad=True) builds: (string token, int32 ids[-1], float32 m[-1, 2]).
    graft::graph g;
    graft::graph_builder b(g);
    const attr_value types = attr_value::list_of(std::vector<dtype>{dtype::string, dtype::int32, dtype::float32});
    auto q = b.op("PaddingFIFOQueueV2", {},
                  {{"component_types", types},
                   {"shapes", attr_value::list_of(std::vector<shape>{shape{}, shape{-1}, shape{-1, 2}})},
                   {"capacity", std::int64_t{8}}},
                  "q");
    auto tok = b.placeholder("tok", dtype::string), ids = b.placeholder("ids", dtype::int32),
         m = b.placeholder("m", dtype::float32);
    b.add("QueueEnqueueV2", {q, tok, ids, m}, {}, "enqueue");
    auto n = b.placeholder("n", dtype::int32, shape{});
    b.add("QueueDequeueManyV2", {q, n}, {{"component_types", types}}, "dequeue_many");
    b.add("QueueDequeueV2", {q}, {{"component_types", types}}, "dequeue");
    graft::exec::session s(g);
    auto put = [&](const std::string& t, std::vector<std::int32_t> v, std::int64_t rows) {
        std::vector<float> mv;
        for (std::int64_t r = 0; r < rows; ++r) {
            mv.push_back(static_cast<float>(10 * r + 1));
            mv.push_back(static_cast<float>(10 * r + 2));
        }
        tensor tt(dtype::string, shape{});
        tt.data<std::string>()[0] = t;
        const auto len = static_cast<std::int64_t>(v.size());
        s.run({{"tok", tt}, {"ids", i32({len}, v)}, {"m", f32({rows, 2}, mv)}}, {}, {"enqueue"});
    };
    put("a", {1, 2, 3}, 1);
    put("bb", {4}, 3);
    put("c", {}, 0);
    put("d", {5, 6}, 2);
    auto out = s.run({{"n", tensor::scalar_of(std::int32_t{3})}},
                     {"dequeue_many:0", "dequeue_many:1", "dequeue_many:2"});
    REQUIRE(out[0].shape() == shape{3});
    CHECK(out[0].data<std::string>()[1] == "bb");
    CHECK(out[1].shape() == shape{3, 3});  // padded to the longest of the three
    CHECK(elements<std::int32_t>(out[1]) == std::vector<std::int32_t>{1, 2, 3, 4, 0, 0, 0, 0, 0});
    CHECK(out[2].shape() == shape{3, 3, 2});
    CHECK(elements<float>(out[2]) ==
          std::vector<float>{1, 2, 0, 0, 0, 0, 1, 2, 11, 12, 21, 22, 0, 0, 0, 0, 0, 0});
    // One element comes out at its own shape; an empty DequeueMany has the unknown dims at 0.
    auto last = s.run({}, {"dequeue:1", "dequeue:2"});
    CHECK(elements<std::int32_t>(last[0]) == std::vector<std::int32_t>{5, 6});
    CHECK(last[1].shape() == shape{2, 2});
    auto none = s.run({{"n", tensor::scalar_of(std::int32_t{0})}}, {"dequeue_many:2"});
    CHECK(none[0].shape() == shape{0, 0, 2});
    // The known dims still bind: m must have 2 columns.
    CHECK_THROWS_WITH_AS(s.run({{"tok", tensor(dtype::string, shape{})}, {"ids", i32({1}, {1})},
                                {"m", f32({1, 3}, {1, 2, 3})}},
                               {}, {"enqueue"}),
                         doctest::Contains("Shape mismatch in tuple component 2. Expected [?,2], got [1,3]"),
                         graft::invalid_argument_error);
}

TEST_CASE("PriorityQueueV2: tuples leave by ascending int64 priority, equal priorities in arrival order") {
    graft::graph g;
    graft::graph_builder b(g);
    auto q = b.op("PriorityQueueV2", {},
                  {{"component_types", attr_value::list_of(std::vector<dtype>{dtype::float32})},
                   {"shapes", attr_value::list_of(std::vector<shape>{shape{}})}},
                  "q");
    auto pri = b.placeholder("pri", dtype::int64), x = b.placeholder("x", dtype::float32);
    b.add("QueueEnqueueManyV2", {q, pri, x}, {}, "enqueue_many");
    b.add("QueueEnqueueV2", {q, pri, x}, {}, "enqueue");
    // the dequeue ops' component_types include the priority, as TF's priority_queue builds them
    const attr_value out_types = attr_value::list_of(std::vector<dtype>{dtype::int64, dtype::float32});
    b.add("QueueDequeueManyV2", {q, b.scalar(std::int32_t{4})}, {{"component_types", out_types}}, "dequeue_4");
    b.add("QueueDequeueV2", {q}, {{"component_types", out_types}}, "dequeue");
    graft::exec::session s(g);
    s.run({{"pri", i64({4}, {5, -2, 9, 5})}, {"x", f32({4}, {50, -20, 90, 51})}}, {}, {"enqueue_many"});
    s.run({{"pri", tensor::scalar_of(std::int64_t{0})}, {"x", tensor::scalar_of(0.5f)}}, {}, {"enqueue"});
    auto four = s.run({}, {"dequeue_4:0", "dequeue_4:1"});
    CHECK(elements<std::int64_t>(four[0]) == std::vector<std::int64_t>{-2, 0, 5, 5});
    CHECK(elements<float>(four[1]) == std::vector<float>{-20, 0.5f, 50, 51});
    CHECK(elements<float>(s.run({}, {"dequeue:1"})[0]) == std::vector<float>{90});
    // The priority must be an int64 scalar per element.
    CHECK_THROWS_WITH_AS(s.run({{"pri", i64({1}, {1})}, {"x", tensor::scalar_of(1.0f)}}, {}, {"enqueue"}),
                         doctest::Contains("component 0 must be an int64 scalar priority"),
                         graft::invalid_argument_error);
}

TEST_CASE("TF1's first queue ops (Ref(string) handles: FIFOQueue, QueueEnqueue, ...) run as the V2 ones") {
    pipeline v1("FIFOQueueV2");  // every op renamed below: the same graph in TF1's first forms
    for (auto& n : v1.g) {
        if (n.op.size() > 2 && n.op.compare(n.op.size() - 2, 2, "V2") == 0) n.op.resize(n.op.size() - 2);
    }
    REQUIRE(v1.g.at("enqueue_many").op == "QueueEnqueueMany");
    graft::exec::session s(v1.g);
    fill(s, 7, 3);
    CHECK(size(s) == 3);
    auto two = take(s, "dequeue_many", 2);
    CHECK(elements<std::int32_t>(two[0]) == std::vector<std::int32_t>{7, 8});
    CHECK(elements<float>(two[1]) == std::vector<float>{7, -7, 8, -8});
    s.run({}, {}, {"close"});
    CHECK(s.run({}, {"is_closed:0"})[0].data<bool>()[0]);
    CHECK(elements<std::int32_t>(take(s, "dequeue_up_to", 5)[0]) == std::vector<std::int32_t>{9});
}

}  // namespace graft_test_queue
