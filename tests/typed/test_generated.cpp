// `graft codegen` at build time (tests/typed/CMakeLists.txt) wrote the typed declaration of the
// real mnist-softmax/train_model.ckpt.meta; here it is bound to the checkpoint with graft::load and
// classifies the MNIST test set at TF's 0.7357.
#include <doctest/doctest.h>

#include "graft/core/tensor_util.hpp"
#include "graft/data/idx.hpp"
#include "graft/typed/bind.hpp"
#include "support/fixtures.hpp"

#if defined(GRAFT_HAVE_GENERATED_MNIST)
#include "mnist_softmax.hpp"  // generated::mnist

// What codegen declared: the ports by the names given, the variables with the checkpoint's shapes.
static_assert(generated::mnist::inputs::size == 1 && generated::mnist::outputs::size == 1);
static_assert(std::is_same_v<graft::typed::find_port<generated::mnist, "features">::shape_type, graft::typed::shape<-1, 784>>);
static_assert(std::is_same_v<graft::typed::find_variable<generated::mnist, "Variable">::shape_type, graft::typed::shape<784, 10>>);

TEST_CASE("codegen + load: the generated declaration of mnist-softmax classifies the MNIST test set at 7357/10000") {
    auto meta = graft::test::fixture("mnist-softmax/train_model.ckpt.meta");
    auto images = graft::test::dataset("mnist/t10k-images-idx3-ubyte.gz");
    auto labels = graft::test::dataset("mnist/t10k-labels-idx1-ubyte.gz");
    if (!graft::test::present_or_skip(meta) || !graft::test::present_or_skip(images)) return;
    auto net = graft::load<generated::mnist>(graft::typed::source{"mnist", meta.string()});
    graft::tensor pixels = graft::cast(graft::data::read_idx(images.string()), graft::dtype::float32).reshaped({10000, 784});
    for (std::int64_t i = 0; i < pixels.num_elements(); ++i) pixels.data<float>()[i] /= 255.f;
    graft::tensor lab = graft::cast(graft::data::read_idx(labels.string()), graft::dtype::int64);
    auto logits = net.run<"logits">(pixels);  // tensor_of<float, shape<-1, 10>>
    REQUIRE(logits.dim(0) == 10000);
    std::int64_t correct = 0;
    for (std::int64_t i = 0; i < 10000; ++i) {
        std::int64_t best = 0;
        for (std::int64_t j = 1; j < 10; ++j) best = logits(i, j) > logits(i, best) ? j : best;
        correct += best == lab.data<std::int64_t>()[i];
    }
    CHECK(correct == 7357);
}
#else
TEST_CASE("codegen + load: the generated declaration of mnist-softmax (skipped)") {
    MESSAGE("SKIP: ../shared/tf-fixtures/mnist-softmax was absent at configure time, so no header was generated");
}
#endif
