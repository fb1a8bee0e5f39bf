// EXPECT: no input or output port of this name.*no_port_named<[^!]*"g2_outptu"
#include "two_models.hpp"  // G1 (scope g1) and G2 (scope g2)
#ifdef GRAFT_FAIL
using Net = connect<G1, G2>; using P = find_port<Net, "g2_outptu">; static_assert(P::rank == 2);
#else
using Net = connect<G1, G2>; using P = find_port<Net, "g2_output">; static_assert(P::rank == 2);
#endif
static_assert(Net::variables::size >= 2);
int main() {}
