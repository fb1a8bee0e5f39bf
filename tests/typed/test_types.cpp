// typed/types.hpp: names, lookups and the composition rules, checked at compile time (the
// static_asserts) and their names read back at run time. The mistakes are in fail/*.cpp.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "graft/typed/types.hpp"

namespace types_t {
using namespace graft::typed;

using G1 = subgraph<"g1", inputs<port<"x", float, shape<-1, 10>>>,
                    outputs<port<"code", float, shape<-1, 256>, "dense/Relu">>,
                    variables<variable<"dense/kernel", float, shape<10, 256>>, variable<"dense/bias", float, shape<256>>>>;
using G2 = subgraph<"g2", inputs<port<"code", float, shape<-1, 256>>, port<"keep", float, shape<>>>,
                    outputs<port<"logits", float, shape<-1, 10>, "add:0">>, variables<variable<"w", float, shape<256, 10>>>>;
using Net = connect<G1, G2, wire<"g1/code", "g2/code">>;

static_assert(Net::inputs::size == 2 && Net::outputs::size == 2 && Net::variables::size == 3);
static_assert(Net::inputs::at<0>::name.view() == "g1/x" && Net::inputs::at<1>::name.view() == "g2/keep");
static_assert(G1::outputs::at<0>::tensor.view() == "g1/dense/Relu");
static_assert(std::is_same_v<find_variable<Net, "g1/dense/kernel">::shape_type, shape<10, 256>>);
static_assert(std::is_same_v<find_variable<Net, "w">::shape_type, shape<256, 10>>);  // a unique tail
static_assert(find_port<Net, "logits">::tensor.view() == "g2/add:0");
static_assert(Net::wires::at<0>::source::tensor.view() == "g1/dense/Relu" && Net::wires::at<0>::target::tensor.view() == "g2/code");

using C = graft::typed::clone<Net, "copy">;  // a scopeless composition: the root becomes "copy"
static_assert(C::leaves::at<0>::scope.view() == "copy/g1" && C::variables::at<2>::name.view() == "copy/g2/w");
using CG = graft::typed::clone<G1, "h1">;  // a leaf: its scope is replaced
static_assert(CG::variables::at<0>::name.view() == "h1/dense/kernel" && CG::inputs::at<0>::tensor.view() == "h1/x");
static_assert(std::is_same_v<CG::leaves::at<0>::subgraph_type, G1>);  // the same file, imported under h1
static_assert(CG::is_clone && CG::cloned_from.view() == "g1");

using Twice = connect<Net, graft::typed::clone<Net, "copy">, wire<"g2/logits", "copy/g1/x">, expose<"copy/g2/logits">>;
static_assert(Twice::outputs::size == 1 && Twice::inputs::size == 3 && Twice::wires::size == 3);
static_assert(Twice::variables::size == 6 && Twice::leaves::size == 4);

using S = scope<"a", G1>;
static_assert(S::variables::at<1>::name.view() == "a/g1/dense/bias" && S::scope_name.view() == "a/g1");
static_assert(graph_type<Twice> && graph_type<S> && graph_type<G1> && !graph_type<int>);
static_assert(join<"a", "b">.view() == "a/b" && join<"", "b">.view() == "b" && join<"a", "">.view() == "a");
static_assert(compatible_shapes_v<shape<-1, 3>, shape<5, -1>> && !compatible_shapes_v<shape<2>, shape<3>> &&
              !compatible_shapes_v<shape<2>, shape<2, 1>>);

template <class L, std::size_t... I>
std::vector<std::string> names(std::index_sequence<I...>) {
    return {std::string(L::template at<I>::name.view())...};
}
template <class L>
std::vector<std::string> names() {
    return names<L>(std::make_index_sequence<L::size>{});
}

}  // namespace types_t

TEST_CASE("typed: a two-model connect and its clone expose the names the surgery layer will use") {
    using namespace types_t;
    CHECK(names<Twice::inputs>() == std::vector<std::string>{"g1/x", "g2/keep", "copy/g2/keep"});
    CHECK(names<Twice::variables>() == std::vector<std::string>{"g1/dense/kernel", "g1/dense/bias", "g2/w",
                                                                "copy/g1/dense/kernel", "copy/g1/dense/bias", "copy/g2/w"});
    CHECK(std::string(Twice::wires::at<2>::source::tensor.view()) == "g2/add:0");
    CHECK(std::string(Twice::wires::at<2>::target::tensor.view()) == "copy/g1/x");
    CHECK(std::string(Twice::leaves::at<3>::scope.view()) == "copy/g2");
}
