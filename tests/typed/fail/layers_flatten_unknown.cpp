// EXPECT: flatten: every dimension but the batch must be known to flatten.*flatten_needs_known_dims_but_gets_unknown_dim<[a-z:_]*fixed_string<8>{"flatten"}, 1>
#include "graft/typed/layers_types.hpp"
using namespace graft::typed;
#ifdef GRAFT_FAIL
using Bad = sequential<"mlp", input<"x", float, shape<-1, -1, 28, 1>>, flatten, dense<"fc1", 784, 10>>;
#else
using Bad = sequential<"mlp", input<"x", float, shape<-1, 28, 28, 1>>, flatten, dense<"fc1", 784, 10>>;
#endif
static_assert(Bad::variables::size > 0);
int main() {}
