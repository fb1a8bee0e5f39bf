// EXPECT: copy's scope is G's own scope.*clone_into_its_own_scope<[^!]*"g1"
#include "two_models.hpp"  // G1 (scope g1) and G2 (scope g2)
#ifdef GRAFT_FAIL
using Net = connect<G2, clone<G1, "g1">>;
#else
using Net = connect<G2, clone<G1, "g1_copy">>;
#endif
static_assert(Net::variables::size >= 2);
int main() {}
