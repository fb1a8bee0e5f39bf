// Mini-batches (coverage per epoch, seeded shuffle, remainder) and the progress bar's plain lines.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "graft/train/loop.hpp"

using graft::tensor;
using graft::train::batch_options;
using graft::train::batches;

namespace {

/// features [n, 3] with row r = (r, r + 0.25, r + 0.5); labels [n] = r * 10.
std::pair<tensor, tensor> rows_data(std::int64_t n) {
    tensor f(graft::dtype::float32, {n, 3});
    tensor l(graft::dtype::int64, {n});
    for (std::int64_t r = 0; r < n; ++r) {
        for (int k = 0; k < 3; ++k) f.matrix<float>()(r, k) = static_cast<float>(r) + 0.25f * static_cast<float>(k);
        l.flat<std::int64_t>()(r) = r * 10;
    }
    return {f, l};
}

/// The source row of every row of a batch, checking features and labels agree.
std::vector<std::int64_t> rows_of(const graft::train::batch& b) {
    std::vector<std::int64_t> out;
    REQUIRE(b.tensors.size() == 2);
    REQUIRE(b[0].dim(0) == b.size);
    REQUIRE(b[1].dim(0) == b.size);
    CHECK(b[0].shape() == graft::shape{b.size, 3});
    for (std::int64_t i = 0; i < b.size; ++i) {
        auto r = static_cast<std::int64_t>(b[0].matrix<float>()(i, 0));
        CHECK(b[0].matrix<float>()(i, 2) == static_cast<float>(r) + 0.5f);
        CHECK(b[1].flat<std::int64_t>()(i) == r * 10);
        out.push_back(r);
    }
    return out;
}

}  // namespace

TEST_CASE("batches: every row once per epoch, in order without shuffle, views into the inputs") {
    auto [f, l] = rows_data(10);
    batches data({f, l}, {.batch_size = 4, .epochs = 2});
    CHECK(data.rows() == 10);
    CHECK(data.batches_per_epoch() == 3);
    CHECK(data.total_steps() == 6);
    std::vector<std::int64_t> sizes, seen;
    std::int64_t n = 0;
    for (const auto& b : data) {
        CHECK(b.step == n);
        CHECK(b.epoch == n / 3);
        CHECK(b.index == n % 3);
        sizes.push_back(b.size);
        auto r = rows_of(b);
        seen.insert(seen.end(), r.begin(), r.end());
        CHECK(b[0].shares_buffer_with(f));  // a view, no copy
        ++n;
    }
    CHECK(n == 6);
    CHECK(sizes == std::vector<std::int64_t>{4, 4, 2, 4, 4, 2});
    std::vector<std::int64_t> once{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    std::vector<std::int64_t> twice = once;
    twice.insert(twice.end(), once.begin(), once.end());
    CHECK(seen == twice);
    CHECK_THROWS_AS((void)data.at(6), graft::invalid_argument_error);
}

TEST_CASE("batches: drop_remainder leaves out the last partial batch; an exact fit has none") {
    auto [f, l] = rows_data(10);
    batches dropped({f, l}, {.batch_size = 4, .drop_remainder = true, .epochs = 3});
    CHECK(dropped.batches_per_epoch() == 2);
    CHECK(dropped.total_steps() == 6);
    for (const auto& b : dropped) CHECK(b.size == 4);

    batches exact({f, l}, {.batch_size = 5});
    CHECK(exact.total_steps() == 2);
    batches big({f, l}, {.batch_size = 64});
    CHECK(big.total_steps() == 1);
    CHECK(big.at(0).size == 10);
    batches none({f, l}, {.batch_size = 64, .drop_remainder = true});
    CHECK(none.total_steps() == 0);
    CHECK(none.begin() == none.end());
}

TEST_CASE("batches: shuffle covers every row once per epoch, is fixed by the seed, differs per epoch") {
    const auto fl = rows_data(23);
    const tensor &f = fl.first,
                 &l = fl.second;  // captured by the lambda below: plain names, not bindings
    auto epochs_of = [&](std::uint64_t seed) {
        batches data({f, l}, {.batch_size = 5, .shuffle = true, .seed = seed, .epochs = 3});
        std::vector<std::vector<std::int64_t>> per_epoch(3);
        std::vector<std::int64_t> sizes;
        for (const auto& b : data) {
            auto r = rows_of(b);
            CHECK_FALSE(b[0].shares_buffer_with(f));  // shuffled batches are copies
            per_epoch[static_cast<std::size_t>(b.epoch)].insert(per_epoch[static_cast<std::size_t>(b.epoch)].end(),
                                                                r.begin(), r.end());
            sizes.push_back(b.size);
        }
        CHECK(sizes == std::vector<std::int64_t>{5, 5, 5, 5, 3, 5, 5, 5, 5, 3, 5, 5, 5, 5, 3});
        return per_epoch;
    };
    auto a = epochs_of(42), b = epochs_of(42), c = epochs_of(43);
    CHECK(a == b);
    CHECK(a != c);
    std::vector<std::int64_t> all(23);
    for (int i = 0; i < 23; ++i) all[static_cast<std::size_t>(i)] = i;
    for (auto e : a) {
        CHECK(e != all);  // shuffled (23! orders: the identity is not a plausible draw)
        std::sort(e.begin(), e.end());
        CHECK(e == all);
    }
    CHECK(a[0] != a[1]);
    CHECK(a[1] != a[2]);
    // random access gives the same batch as iteration
    batches data({f, l}, {.batch_size = 5, .shuffle = true, .seed = 42, .epochs = 3});
    auto b7 = rows_of(data.at(7));
    CHECK(std::vector<std::int64_t>(a[1].begin() + 10, a[1].begin() + 15) == b7);
}

TEST_CASE("batches: string tensors and higher ranks; bad inputs are named") {
    auto s = tensor::from_vector<std::string>({4}, {"a", "b", "c", "d"});
    tensor img(graft::dtype::uint8, {4, 2, 2});
    for (int i = 0; i < 16; ++i) img.flat<std::uint8_t>()(i) = static_cast<std::uint8_t>(i);
    batches data({img, s}, {.batch_size = 3, .shuffle = true, .seed = 1});
    std::multiset<std::string> got;
    for (const auto& b : data) {
        for (std::int64_t i = 0; i < b.size; ++i) {
            const auto& str = b[1].flat<std::string>()(i);
            got.insert(str);
            auto row = str[0] - 'a';
            CHECK(b[0].nd<std::uint8_t, 3>()(i, 1, 1) == row * 4 + 3);
        }
    }
    CHECK(got == std::multiset<std::string>{"a", "b", "c", "d"});

    auto [f, l] = rows_data(10);
    auto [f2, l2] = rows_data(9);
    CHECK_THROWS_WITH_AS(batches({f, l2}, {}), doctest::Contains("has 9 rows"), graft::invalid_argument_error);
    CHECK_THROWS_AS(batches({}, {}), graft::invalid_argument_error);
    CHECK_THROWS_AS(batches({f}, {.batch_size = 0}), graft::invalid_argument_error);
    CHECK_THROWS_AS(batches({tensor::scalar_of(1.f)}, {}), graft::invalid_argument_error);
}

TEST_CASE("progress_bar: plain lines when not a TTY, every N steps and the last") {
    std::ostringstream out;
    double now = 100;
    graft::train::progress_options o;
    o.out = &out;
    o.every = 4;
    o.clock = [&] { return now; };
    graft::train::progress_bar bar(10, o);
    CHECK_FALSE(bar.is_tty());  // a stringstream is never a terminal
    for (int i = 0; i < 10; ++i) {
        now += 0.5;  // 32 examples per half second: 64 examples/s
        bar.step(32, 2.0 - 0.1 * i);
    }
    bar.finish();
    CHECK(out.str() ==
          "step 4/10 (40%)  loss 1.7000  64.0 examples/s  ETA 0:03\n"
          "step 8/10 (80%)  loss 1.3000  64.0 examples/s  ETA 0:01\n"
          "step 10/10 (100%)  loss 1.1000  64.0 examples/s  done in 0:05\n");
}

TEST_CASE("progress_bar: default period, a label, finish after a partial run, no loss") {
    std::ostringstream out;
    double now = 0;
    graft::train::progress_options o;
    o.out = &out;
    o.label = "epoch 1";
    o.clock = [&] { return now; };
    graft::train::progress_bar bar(100, o);
    for (int i = 0; i < 25; ++i) {
        now += 1;
        bar.step(10);
    }
    bar.finish();
    bar.finish();  // only once
    CHECK(out.str() ==
          "epoch 1 step 10/100 (10%)  10.0 examples/s  ETA 1:30\n"
          "epoch 1 step 20/100 (20%)  10.0 examples/s  ETA 1:20\n"
          "epoch 1 step 25/100 (25%)  10.0 examples/s  ETA 1:15\n");
    CHECK(graft::train::progress_bar::format_duration(3723) == "1:02:03");
    CHECK(graft::train::progress_bar::format_duration(-1) == "?");
}

TEST_CASE("progress_bar: TTY mode redraws one line, throttled, and ends it") {
    std::ostringstream out;
    double now = 0;
    graft::train::progress_options o;
    o.out = &out;
    o.tty = true;
    o.width = 10;
    o.redraw_seconds = 1.0;
    o.clock = [&] { return now; };
    graft::train::progress_bar bar(4, o);
    now = 0.5; bar.step(8, 0.5);   // first draw
    now = 0.7; bar.step(8, 0.4);   // throttled
    now = 2.0; bar.step(8, 0.3);   // drawn
    now = 2.5; bar.step(8, 0.2);   // last step: drawn
    bar.finish();
    std::string s = out.str();
    CHECK(std::count(s.begin(), s.end(), '\r') == 3);
    CHECK(std::count(s.begin(), s.end(), '\n') == 1);
    CHECK(s.find("\r[==>       ] 1/4  loss 0.5000  16.0 examples/s  ETA 0:02\x1b[K") == 0);
    CHECK(s.find("2/4") == std::string::npos);
    CHECK(s.find("\r[=======>  ] 3/4  loss 0.3000  12.0 examples/s  ETA 0:01\x1b[K") != std::string::npos);
    CHECK(s.find("\r[==========] 4/4  loss 0.2000  12.8 examples/s  done in 0:03\x1b[K\n") != std::string::npos);
}
