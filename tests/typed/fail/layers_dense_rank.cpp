// EXPECT: dense<name, In, Out>: the layer takes a matrix .batch, In. but gets a tensor of another rank. put flatten before it.*dense_layer_needs_rank_2_but_gets_rank<[a-z:_]*fixed_string<4>{"fc1"}, 4>
#include "graft/typed/layers_types.hpp"
using namespace graft::typed;
#ifdef GRAFT_FAIL
using Bad = sequential<"cnn", input<"x", float, shape<-1, 28, 28, 1>>, conv2d<"conv1", 5, 5, 1, 4, 2>, max_pool<2>,
                       dense<"fc1", 196, 10>>;
#else
using Bad = sequential<"cnn", input<"x", float, shape<-1, 28, 28, 1>>, conv2d<"conv1", 5, 5, 1, 4, 2>, max_pool<2>, flatten,
                       dense<"fc1", 196, 10>>;
#endif
static_assert(Bad::variables::size > 0);
int main() {}
