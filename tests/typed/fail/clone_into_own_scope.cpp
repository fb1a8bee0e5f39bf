// EXPECT: copy's scope is G's own scope.*clone_into_its_own_scope<[^!]*"g1"
#include "graft/typed/types.hpp"
using namespace graft::typed;
using G1 = subgraph<"g1", inputs<port<"x", float, shape<-1, 784>>>,
                    outputs<port<"g1_output", float, shape<-1, 256>, "dense/Relu">>,
                    variables<variable<"dense/kernel", float, shape<784, 256>>>>;
using G2 = subgraph<"g2", inputs<port<"g2_input", float, shape<-1, 256>>, port<"ids", int, shape<-1>>>,
                    outputs<port<"g2_output", float, shape<-1, 10>, "add">>,
                    variables<variable<"w", float, shape<256, 10>>>>;
#ifdef GRAFT_FAIL
using Net = connect<G2, clone<G1, "g1">>;
#else
using Net = connect<G2, clone<G1, "g1_copy">>;
#endif
static_assert(Net::variables::size >= 2);
int main() {}
