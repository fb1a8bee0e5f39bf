// EXPECT: sequential<>: two layers .or a layer and the input, or a layer and the "init" op. have the same name.*two_layers_named<[a-z:_]*fixed_string<4>{"fc1"}>
#include "graft/typed/layers_types.hpp"
using namespace graft::typed;
#ifdef GRAFT_FAIL
using Bad = sequential<"mlp", input<"x", float, shape<-1, 4>>, dense<"fc1", 4, 8>, relu, dense<"fc1", 8, 2>>;
#else
using Bad = sequential<"mlp", input<"x", float, shape<-1, 4>>, dense<"fc1", 4, 8>, relu, dense<"fc2", 8, 2>>;
#endif
static_assert(Bad::variables::size > 0);
int main() {}
