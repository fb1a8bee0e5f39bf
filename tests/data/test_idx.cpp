#include <doctest/doctest.h>

#include "graft/formats/idx.hpp"
#include "support/fixtures.hpp"

TEST_CASE("MNIST test set reads from the gzip'd IDX files") {
    auto img = graft::test::dataset("mnist/t10k-images-idx3-ubyte.gz");
    auto lab = graft::test::dataset("mnist/t10k-labels-idx1-ubyte.gz");
    GRAFT_REQUIRE_PATH(img);
    GRAFT_REQUIRE_PATH(lab);
    auto images = graft::data::read_idx(img.string());
    auto labels = graft::data::read_idx(lab.string());
    CHECK(images.shape() == graft::shape{10000, 28, 28});
    CHECK(labels.shape() == graft::shape{10000});
    // The first test digit is a 7, the second a 2 (the well-known start of t10k).
    CHECK(labels.flat<std::uint8_t>()(0) == 7);
    CHECK(labels.flat<std::uint8_t>()(1) == 2);
    CHECK(labels.flat<std::uint8_t>()(2) == 1);
    std::int64_t hist[10] = {};
    for (int i = 0; i < 10000; ++i) hist[labels.flat<std::uint8_t>()(i)]++;
    CHECK(hist[0] == 980);   // the published class counts of the MNIST test set
    CHECK(hist[1] == 1135);
    CHECK(hist[9] == 1009);
    auto x = graft::data::mnist_images_as_features(images);
    CHECK(x.shape() == graft::shape{10000, 784});
    float mx = 0;
    for (int i = 0; i < 784; ++i) mx = std::max(mx, x.matrix<float>()(0, i));
    CHECK(mx == 1.0f);
}

TEST_CASE("bad IDX input is a clear error") {
    CHECK_THROWS_AS(graft::data::parse_idx("\x01\x02", "x.idx"), graft::format_error);
    std::string hdr("\0\0\x08\x01\0\0\0\x05" "abc", 11);
    CHECK_THROWS_WITH_AS(graft::data::parse_idx(hdr, "short.idx"), doctest::Contains("short.idx"), graft::format_error);
    std::string ok("\0\0\x08\x01\0\0\0\x03" "abc", 11);
    auto t = graft::data::parse_idx(ok);
    CHECK(t.flat<std::uint8_t>()(2) == 'c');
    std::string i32("\0\0\x0C\x01\0\0\0\x01\x00\x00\x01\x02", 12);
    CHECK(graft::data::parse_idx(i32).flat<std::int32_t>()(0) == 258);
    CHECK_THROWS_AS(graft::data::read_idx("/nonexistent.gz"), graft::io_error);
}
