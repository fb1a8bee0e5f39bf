// EXPECT: conv2d<name, KH, KW, Cin, Cout>: the layer takes Cin channels but the layer before it gives another number.*conv2d_layer_takes_channels_but_gets<[a-z:_]*fixed_string<6>{"conv2"}, 8, 6>
#include "graft/typed/layers_types.hpp"
using namespace graft::typed;
#ifdef GRAFT_FAIL
using Bad = sequential<"cnn", input<"x", float, shape<-1, 28, 28, 1>>, conv2d<"conv1", 5, 5, 1, 6>, relu, max_pool<2>,
                       conv2d<"conv2", 5, 5, 8, 16>>;
#else
using Bad = sequential<"cnn", input<"x", float, shape<-1, 28, 28, 1>>, conv2d<"conv1", 5, 5, 1, 6>, relu, max_pool<2>,
                       conv2d<"conv2", 5, 5, 6, 16>>;
#endif
static_assert(Bad::variables::size > 0);
int main() {}
