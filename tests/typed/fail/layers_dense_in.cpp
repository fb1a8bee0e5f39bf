// EXPECT: dense<name, In, Out>: the layer takes In features but the layer before it gives another number.*dense_layer_takes_features_but_gets<[a-z:_]*fixed_string<4>{"fc2"}, 300, 256>
#include "graft/typed/layers_types.hpp"
using namespace graft::typed;
#ifdef GRAFT_FAIL
using Bad = sequential<"mlp", input<"x", float, shape<-1, 784>>, dense<"fc1", 784, 256>, relu, dense<"fc2", 300, 10>>;
#else
using Bad = sequential<"mlp", input<"x", float, shape<-1, 784>>, dense<"fc1", 784, 256>, relu, dense<"fc2", 256, 10>>;
#endif
static_assert(Bad::variables::size > 0);
int main() {}
