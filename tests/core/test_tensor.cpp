#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "graft/core/tensor_util.hpp"

using graft::dtype;
using graft::shape;
using graft::tensor;

TEST_CASE("new tensors are zero-filled, 64-byte aligned, row-major") {
    tensor t(dtype::float32, {3, 5});
    CHECK(t.valid());
    CHECK(t.is_aligned());
    CHECK(t.nbytes() == 60);
    for (int i = 0; i < 15; ++i) CHECK(t.flat<float>()(i) == 0.f);
    auto m = t.matrix<float>();
    m(1, 2) = 7.f;
    CHECK(t.data<float>()[1 * 5 + 2] == 7.f);
    auto t3 = t.reshaped({3, 5, 1}).nd<float, 3>();
    CHECK(t3(1, 2, 0) == 7.f);
}

TEST_CASE("typed access checks dtype and rank") {
    tensor t(dtype::int32, {4});
    CHECK_THROWS_AS((void)t.data<float>(), graft::invalid_argument_error);
    CHECK_THROWS_AS((void)t.matrix<std::int32_t>(), graft::invalid_argument_error);
    CHECK_THROWS_AS(tensor(dtype::float32, shape{-1, 2}), graft::shape_error);
    CHECK_THROWS_AS(tensor(dtype::resource, shape{1}), graft::unimplemented_error);
    tensor q(dtype::qint8, {2});
    CHECK_NOTHROW((void)q.data<std::int8_t>());
    tensor empty;
    CHECK_FALSE(empty.valid());
    CHECK_THROWS_AS((void)empty.data<float>(), graft::invalid_argument_error);
}

TEST_CASE("copies alias; clone is deep; reshape and slice are views") {
    auto a = tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
    tensor b = a;
    CHECK(b.shares_buffer_with(a));
    b.flat<float>()(0) = 10.f;
    CHECK(a.flat<float>()(0) == 10.f);

    tensor c = a.clone();
    CHECK_FALSE(c.shares_buffer_with(a));
    c.flat<float>()(0) = -1.f;
    CHECK(a.flat<float>()(0) == 10.f);
    CHECK(c.is_aligned());

    tensor r = a.reshaped({3, 2});
    CHECK(r.shares_buffer_with(a));
    CHECK(r.matrix<float>()(2, 1) == 6.f);
    CHECK_THROWS_AS(a.reshaped({4}), graft::shape_error);

    tensor row = a.slice(1, 1);
    CHECK(row.shape() == shape{1, 3});
    CHECK(row.flat<float>()(0) == 4.f);
    row.flat<float>()(2) = 60.f;
    CHECK(a.matrix<float>()(1, 2) == 60.f);
    CHECK_THROWS_AS(a.slice(1, 2), graft::shape_error);
}

TEST_CASE("views over external memory keep their owner alive") {
    auto owner = std::make_shared<std::vector<double>>(std::vector<double>{1.5, 2.5, 3.5, 4.5});
    std::weak_ptr<std::vector<double>> weak = owner;
    tensor v = tensor::view(dtype::float64, {2, 2}, owner->data(), owner);
    CHECK(v.raw_data() == owner->data());
    CHECK_FALSE(v.buf()->owns_memory());
    owner.reset();
    CHECK_FALSE(weak.expired());
    CHECK(v.matrix<double>()(1, 0) == 3.5);
    v = tensor();
    CHECK(weak.expired());
}

TEST_CASE("from_buffer checks bounds") {
    auto buf = graft::buffer::allocate_host(64);
    CHECK_NOTHROW(tensor::from_buffer(dtype::float32, {4}, buf, 48));
    CHECK_THROWS_AS(tensor::from_buffer(dtype::float32, {4}, buf, 52), graft::invalid_argument_error);
}

TEST_CASE("string tensors") {
    auto s = tensor::from_vector<std::string>({2, 2}, {"a", "", std::string(1000, 'x'), "d\0e"});
    CHECK(s.type() == dtype::string);
    CHECK(s.data<std::string>()[2].size() == 1000);
    tensor c = s.clone();
    c.data<std::string>()[0] = "changed";
    CHECK(s.data<std::string>()[0] == "a");
    CHECK(graft::equal(s, s.clone()));
    CHECK_FALSE(graft::equal(s, c));
    auto sc = tensor::scalar_of("hello");
    CHECK(sc.rank() == 0);
    CHECK(sc.scalar<std::string>()() == "hello");
    tensor z(dtype::string, {3});
    CHECK(z.data<std::string>()[1].empty());
}

TEST_CASE("casts") {
    auto f = tensor::from_vector<float>({2.7f, -1.2f, 0.f});
    auto i = graft::cast(f, dtype::int32);
    CHECK(i.type() == dtype::int32);
    CHECK(i.flat<std::int32_t>()(0) == 2);
    CHECK(i.flat<std::int32_t>()(1) == -1);
    auto b = graft::cast(f, dtype::bool_);
    CHECK(b.flat<bool>()(0));
    CHECK_FALSE(b.flat<bool>()(2));
    auto h = graft::cast(f, dtype::float16);
    CHECK(static_cast<float>(h.flat<graft::half>()(0)) == doctest::Approx(2.7).epsilon(1e-3));
    auto bf = graft::cast(h, dtype::bfloat16);
    CHECK(static_cast<float>(bf.flat<graft::bfloat16>()(1)) == doctest::Approx(-1.2).epsilon(1e-2));
    auto c = graft::cast(f, dtype::complex64);
    CHECK(c.flat<std::complex<float>>()(0).real() == 2.7f);
    auto back = graft::cast(c, dtype::float32);
    CHECK(graft::equal(back, f));
    CHECK_THROWS_AS(graft::cast(f, dtype::string), graft::unimplemented_error);
}

TEST_CASE("equal and allclose") {
    auto a = tensor::from_vector<float>({1.f, 2.f, NAN});
    auto b = tensor::from_vector<float>({1.f, 2.0000001f, NAN});
    CHECK(graft::equal(a, a.clone()));
    CHECK(graft::allclose(a, b));
    auto c = tensor::from_vector<float>({1.f, 2.1f, NAN});
    auto cc = graft::compare_close(a, c);
    CHECK_FALSE(cc.close);
    CHECK(cc.worst_index == 1);
    CHECK(cc.max_abs_diff == doctest::Approx(0.1).epsilon(1e-4));
    CHECK_FALSE(graft::allclose(a, tensor::from_vector<float>({1, 3}, {1.f, 2.f, 3.f})));
    CHECK_FALSE(graft::equal(a, graft::cast(a, dtype::float64)));
}

TEST_CASE("numpy-like printing") {
    auto t = tensor::from_vector<std::int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
    CHECK(graft::to_string(t) == "[[1 2 3]\n [4 5 6]]");
    std::vector<float> v(10);
    std::iota(v.begin(), v.end(), 0.f);
    CHECK(graft::to_string(tensor::from_vector<float>(v), 2) == "[0 1 ... 8 9]");
    CHECK(graft::to_string(tensor::scalar_of(true)) == "True");
}

TEST_CASE("host buffers of 1 KiB and more are reused after free, zeroed when asked, within the cache limit") {
    if (!graft::detail::host_cache_enabled) {
        MESSAGE("skipped: the host block cache is off under AddressSanitizer (reuse would hide use-after-free)");
        return;
    }
    graft::set_host_cache_limit(std::size_t{256} << 20);
    const std::size_t big = std::size_t{1} << 20;
    void* first = nullptr;
    {
        auto b = graft::buffer::allocate_host(big, false);
        first = b->data();
        std::memset(b->data(), 0xAB, big);
    }
    CHECK(graft::host_cache_bytes() >= big);
    {
        auto b = graft::buffer::allocate_host(big, true);  // the same block back, zeroed
        CHECK(b->data() == first);
        const auto* bytes = static_cast<const unsigned char*>(b->data());
        CHECK(std::all_of(bytes, bytes + big, [](unsigned char c) { return c == 0; }));
        auto other = graft::buffer::allocate_host(big, false);  // the cache had one: a fresh block
        CHECK(other->data() != first);
    }
    // buffers under 1 KiB are malloc's business; from 1 KiB a freed block waits for the next of its size
    const std::size_t before = graft::host_cache_bytes();
    { auto small = graft::buffer::allocate_host(512); (void)small; }
    CHECK(graft::host_cache_bytes() == before);
    void* kib = nullptr;
    {
        auto b = graft::buffer::allocate_host(2048, false);
        kib = b->data();
    }
    CHECK(graft::host_cache_bytes() == before + 2048);
    {
        auto b = graft::buffer::allocate_host(2048, false);
        CHECK(b->data() == kib);
    }
    // a limit frees what is over it; 0 keeps nothing
    graft::set_host_cache_limit(0);
    CHECK(graft::host_cache_bytes() == 0);
    { auto b = graft::buffer::allocate_host(big, false); (void)b; }
    CHECK(graft::host_cache_bytes() == 0);
    graft::set_host_cache_limit(std::size_t{256} << 20);
    // tensors go through it: a [512,512] float32 tensor's buffer comes back for the next one
    const void* t1 = nullptr;
    {
        auto t = graft::tensor(graft::dtype::float32, {512, 512});
        t1 = t.raw_data();
    }
    auto t = graft::tensor(graft::dtype::float32, {512, 512});
    CHECK(t.raw_data() == t1);
    CHECK(t.data<float>()[12345] == 0.f);  // tensor(dtype, shape) is zero-filled
}
