// The translation unit whose compile time issue 9 asks for: it includes graft's typed binding and
// binds a typed 2-model connect (an encoder and a classifier saved as TF files), runs it and reads
// a variable. benchmarks/compile/time_typed_tu.sh times `g++ -O2 -c` of this file.
// Usage of the program: typed_connect_tu ENC.meta CLS.meta
#include <cstdio>

#include "graft/typed/bind.hpp"

namespace typed = graft::typed;
using typed::inputs, typed::outputs, typed::port, typed::shape, typed::variable, typed::variables, typed::wire;

using Encoder = typed::subgraph<"enc", inputs<port<"x", float, shape<-1, 4>>>, outputs<port<"code", float, shape<-1, 3>>>,
                                variables<variable<"w", float, shape<4, 3>>, variable<"b", float, shape<3>>>>;
using Classifier = typed::subgraph<"cls", inputs<port<"code", float, shape<-1, 3>>>, outputs<port<"logits", float, shape<-1, 2>>>,
                                   variables<variable<"w", float, shape<3, 2>>, variable<"b", float, shape<2>>>>;
using Net = typed::connect<Encoder, Classifier, wire<"enc/code", "cls/code">>;

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s ENC.meta CLS.meta\n", argv[0]);
        return 2;
    }
    try {
        auto net = graft::load<Net>(typed::source{"enc", argv[1]}, typed::source{"cls", argv[2]});
        graft::tensor x(graft::dtype::float32, graft::shape{2, 4});
        for (int i = 0; i < 8; ++i) x.data<float>()[i] = 0.1f * static_cast<float>(i);
        auto y = net.run<"logits">(x);
        std::printf("logits [%lld, %lld]: %g %g / %g %g; enc/w[0][0] = %g\n", static_cast<long long>(y.dim(0)),
                    static_cast<long long>(y.dim(1)), y(0, 0), y(0, 1), y(1, 0), y(1, 1), net.var<"enc/w">()(0, 0));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}
