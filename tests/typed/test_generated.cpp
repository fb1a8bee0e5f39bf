// `graft codegen` at build time (tests/typed/CMakeLists.txt) wrote the typed declaration of the
// real mnist-softmax/train_model.ckpt.meta; here it is bound to the checkpoint with graft::load and
// classifies the MNIST test set at TF's 0.7357.
#include <doctest/doctest.h>

#include "graft/typed/bind.hpp"
#include "support/fixtures.hpp"
#include "support/mnist.hpp"

#if defined(GRAFT_HAVE_GENERATED_MNIST)
#include "mnist_softmax.hpp"  // generated::mnist

// What codegen declared: the ports by the names given, the variables with the checkpoint's shapes.
static_assert(generated::mnist::inputs::size == 1 && generated::mnist::outputs::size == 1);
static_assert(std::is_same_v<graft::typed::find_port<generated::mnist, "features">::shape_type, graft::typed::shape<-1, 784>>);
static_assert(std::is_same_v<graft::typed::find_variable<generated::mnist, "Variable">::shape_type, graft::typed::shape<784, 10>>);

TEST_CASE("codegen + load: the generated declaration of mnist-softmax classifies the MNIST test set at 7357/10000") {
    auto meta = graft::test::fixture("mnist-softmax/train_model.ckpt.meta");
    graft::test::mnist_set mnist;
    if (!graft::test::present_or_skip(meta) || !graft::test::mnist_test_set_or_skip(mnist)) return;
    auto net = graft::load<generated::mnist>(graft::typed::source{"mnist", meta.string()});
    auto logits = net.run<"logits">(mnist.features);  // tensor_of<float, shape<-1, 10>>
    REQUIRE(logits.dim(0) == 10000);
    CHECK(graft::test::argmax_hits(logits, mnist.labels) == 7357);
}
#else
TEST_CASE("codegen + load: the generated declaration of mnist-softmax (skipped)") {
    MESSAGE("SKIP: ../shared/tf-fixtures/mnist-softmax was absent at configure time, so no header was generated");
}
#endif
