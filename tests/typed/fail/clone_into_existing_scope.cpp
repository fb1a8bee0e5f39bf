// EXPECT: clone.*lands in a scope that already exists.*clone_into_a_scope_that_exists<[^!]*"g2"[^!]*"g2"
#include "two_models.hpp"  // G1 (scope g1) and G2 (scope g2)
#ifdef GRAFT_FAIL
using Net = connect<connect<G1, G2, wire<"g1_output", "g2_input">>, clone<G1, "g2">>;
#else
using Net = connect<connect<G1, G2, wire<"g1_output", "g2_input">>, clone<G1, "g3">>;
#endif
static_assert(Net::variables::size >= 2);
int main() {}
