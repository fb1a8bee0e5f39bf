// The two subgraph types the composition mistakes in this folder are made with.
#pragma once
#include "graft/typed/types.hpp"
using namespace graft::typed;
using G1 = subgraph<"g1", inputs<port<"x", float, shape<-1, 784>>>,
                    outputs<port<"g1_output", float, shape<-1, 256>, "dense/Relu">>,
                    variables<variable<"dense/kernel", float, shape<784, 256>>>>;
using G2 = subgraph<"g2", inputs<port<"g2_input", float, shape<-1, 256>>, port<"ids", int, shape<-1>>>,
                    outputs<port<"g2_output", float, shape<-1, 10>, "add">>,
                    variables<variable<"w", float, shape<256, 10>>>>;
