// EXPECT: not an input port of B.*no_input_port_named<[^!]*"g2_inptu"[^!]*"g2"
#include "two_models.hpp"  // G1 (scope g1) and G2 (scope g2)
#ifdef GRAFT_FAIL
using Net = connect<G1, G2, wire<"g1_output", "g2_inptu">>;
#else
using Net = connect<G1, G2, wire<"g1_output", "g2_input">>;
#endif
static_assert(Net::variables::size >= 2);
int main() {}
