// EXPECT: static shapes differ.*wire_shape_mismatch<[^!]*"g1/g1_output".*shape<-1, 256>.*"h/g2_input".*shape<-1, 128>
#include "two_models.hpp"  // G1 (scope g1) and G2 (scope g2)
#ifdef GRAFT_FAIL
using Net = connect<G1, subgraph<"h", inputs<port<"g2_input", float, shape<-1, 128>>>, outputs<>, variables<variable<"v", float, shape<1>>>>, wire<"g1_output", "g2_input">>;
#else
using Net = connect<G1, subgraph<"h", inputs<port<"g2_input", float, shape<any, 256>>>, outputs<>, variables<variable<"v", float, shape<1>>>>, wire<"g1_output", "g2_input">>;
#endif
static_assert(Net::variables::size >= 2);
int main() {}
