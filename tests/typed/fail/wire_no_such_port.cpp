// EXPECT: not an output port of A.*no_output_port_named<[^!]*"g1_outptu"
#include "two_models.hpp"  // G1 (scope g1) and G2 (scope g2)
#ifdef GRAFT_FAIL
using Net = connect<G1, G2, wire<"g1_outptu", "g2_input">>;
#else
using Net = connect<G1, G2, wire<"g1_output", "g2_input">>;
#endif
static_assert(Net::variables::size >= 2);
int main() {}
