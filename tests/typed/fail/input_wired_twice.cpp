// EXPECT: wired twice.*input_wired_twice<[^!]*"g2/g2_input"
#include "two_models.hpp"  // G1 (scope g1) and G2 (scope g2)
#ifdef GRAFT_FAIL
using Net = connect<G1, G2, wire<"g1_output", "g2_input">, wire<"g1/g1_output", "g2/g2_input">>;
#else
using Net = connect<G1, G2, wire<"g1_output", "g2_input">>;
#endif
static_assert(Net::variables::size >= 2);
int main() {}
