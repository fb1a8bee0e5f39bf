// EXPECT: overlapping variable scopes.*overlapping_variable_scopes<[^!]*"g1"[^!]*"g1/inner"
#include "two_models.hpp"  // G1 (scope g1) and G2 (scope g2)
#ifdef GRAFT_FAIL
using Net = connect<G1, scope<"g1", subgraph<"inner", inputs<>, outputs<>, variables<variable<"v", float, shape<1>>>>>>;
#else
using Net = connect<G1, scope<"g9", subgraph<"inner", inputs<>, outputs<>, variables<variable<"v", float, shape<1>>>>>>;
#endif
static_assert(Net::variables::size >= 2);
int main() {}
