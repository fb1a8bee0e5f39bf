// EXPECT: no input or output port of this name.*no_port_named<[^!]*"g2_outptu"
#include "graft/typed/types.hpp"
using namespace graft::typed;
using G1 = subgraph<"g1", inputs<port<"x", float, shape<-1, 784>>>,
                    outputs<port<"g1_output", float, shape<-1, 256>, "dense/Relu">>,
                    variables<variable<"dense/kernel", float, shape<784, 256>>>>;
using G2 = subgraph<"g2", inputs<port<"g2_input", float, shape<-1, 256>>, port<"ids", int, shape<-1>>>,
                    outputs<port<"g2_output", float, shape<-1, 10>, "add">>,
                    variables<variable<"w", float, shape<256, 10>>>>;
#ifdef GRAFT_FAIL
using Net = connect<G1, G2>; using P = find_port<Net, "g2_outptu">; static_assert(P::rank == 2);
#else
using Net = connect<G1, G2>; using P = find_port<Net, "g2_output">; static_assert(P::rank == 2);
#endif
static_assert(Net::variables::size >= 2);
int main() {}
