// typed/codegen.hpp: the typed declaration of real graphs — mnist-softmax's .meta and a graft-made
// graph with a signature — and its errors. The header built into a program and bound to the
// checkpoint is test_bind's MNIST case.
#include <doctest/doctest.h>

#include "graft/graph/build.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/typed/codegen.hpp"
#include "graft/embedded/exporter.hpp"
#include "support/fixtures.hpp"

namespace codegen_t {
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
template <class E, class F>
void fails(F&& f, const std::string& part) {
    E e = graft::test::expect_error<E>(std::forward<F>(f));
    CHECK_MESSAGE(contains(e.what(), part), e.what());
}
}  // namespace codegen_t

TEST_CASE("codegen: the typed declaration of mnist-softmax/train_model.ckpt.meta") {
    using codegen_t::contains;
    auto meta = graft::test::fixture("mnist-softmax/train_model.ckpt.meta");
    if (!graft::test::present_or_skip(meta)) return;
    graft::meta_graph mg = graft::tf::load_meta_graph(meta.string());
    graft::typed::declaration_options o;
    o.scope = "mnist";
    o.cpp_namespace = "models";
    o.inputs = {"features=Placeholder"};
    o.outputs = {"logits=Add:0"};
    std::string h = graft::typed::declaration(mg, o);
    CHECK(contains(h, "namespace models {"));
    CHECK(contains(h, "using mnist = graft::typed::subgraph<\"mnist\","));
    CHECK(contains(h, "graft::typed::port<\"features\", float, graft::typed::shape<-1, 784>, \"Placeholder\">"));
    CHECK(contains(h, "graft::typed::port<\"logits\", float, graft::typed::shape<-1, 10>, \"Add:0\">"));
    CHECK(contains(h, "graft::typed::variable<\"Variable\", float, graft::typed::shape<784, 10>>"));
    CHECK(contains(h, "graft::typed::variable<\"Variable_1\", float, graft::typed::shape<10>>"));

    // The labels placeholder as a second input, its shape declared by hand; a port named by tensor.
    o.inputs = {"Placeholder_1@-1,10", "Placeholder"};
    o.type_name = "Mnist";
    h = graft::typed::declaration(mg, o);
    CHECK(contains(h, "using Mnist = "));
    CHECK(contains(h, "graft::typed::port<\"Placeholder_1\", float, graft::typed::shape<-1, 10>>"));
    CHECK(contains(h, "graft::typed::port<\"Placeholder\", float, graft::typed::shape<-1, 784>>"));

    // Mistakes: a node that is not there (the closest names listed), an output index past the end,
    // a tensor whose rank the graph does not say, no scope, no ports at all.
    o.outputs = {"logits=Add_9:0"};
    codegen_t::fails<graft::not_found_error>([&] { (void)graft::typed::declaration(mg, o); }, "Add_9");
    o.outputs = {"Add:3"};
    codegen_t::fails<graft::invalid_argument_error>([&] { (void)graft::typed::declaration(mg, o); }, "no output 3");
    o.outputs = {"gradients/Add_grad/Sum"};
    codegen_t::fails<graft::invalid_argument_error>([&] { (void)graft::typed::declaration(mg, o); },
                                                             "does not say the rank of 'gradients/Add_grad/Sum'");
    o.outputs = {"g=gradients/Add_grad/Sum@-1,10"};  // declared by hand
    CHECK(contains(graft::typed::declaration(mg, o),
                   "graft::typed::port<\"g\", float, graft::typed::shape<-1, 10>, \"gradients/Add_grad/Sum\">"));
    o.outputs = {"Mean"};  // a scalar (the graph's _output_shapes say so)
    CHECK(contains(graft::typed::declaration(mg, o), "graft::typed::port<\"Mean\", float, graft::typed::shape<>>"));
    o.outputs = {"Mean@-1,x"};
    codegen_t::fails<graft::invalid_argument_error>([&] { (void)graft::typed::declaration(mg, o); }, "bad dimension 'x'");
    o.scope.clear();
    codegen_t::fails<graft::invalid_argument_error>([&] { (void)graft::typed::declaration(mg, o); }, "no scope");
    o.scope = "mnist";
    o.inputs.clear();
    o.outputs.clear();
    codegen_t::fails<graft::invalid_argument_error>([&] { (void)graft::typed::declaration(mg, o); },
                                                             "no serving_default signature");
}

TEST_CASE("codegen: ports from a signature; dtypes int64 and bool") {
    using codegen_t::contains;
    graft::meta_graph mg;
    graft::graph_builder b(mg.graph);
    auto ids = b.placeholder("ids", graft::dtype::int64, graft::shape{-1, 5});
    auto mask = b.placeholder("mask", graft::dtype::bool_, graft::shape{-1, 5});
    auto n = b.op("Identity", {ids}, {}, "ids_out");
    graft::signature_def sig;
    sig.inputs["ids"].name = "ids:0";
    sig.inputs["mask"].name = "mask:0";
    sig.outputs["out"].name = "ids_out:0";
    mg.signatures["serving_default"] = sig;
    (void)mask;
    (void)n;
    graft::typed::declaration_options o;
    o.scope = "m";
    std::string h = graft::typed::declaration(mg, o);
    CHECK(contains(h, "graft::typed::port<\"ids\", std::int64_t, graft::typed::shape<-1, 5>, \"ids:0\">"));
    CHECK(contains(h, "graft::typed::port<\"mask\", bool, graft::typed::shape<-1, 5>, \"mask:0\">"));
    // the output's shape is not in the signature: the graph's (Identity of ids) is used
    CHECK(contains(h, "graft::typed::port<\"out\", std::int64_t, graft::typed::shape<-1, 5>, \"ids_out:0\">"));
    CHECK(contains(h, "graft::typed::variables<>>;"));
    o.signature = "predict";
    codegen_t::fails<graft::not_found_error>([&] { (void)graft::typed::declaration(mg, o); }, "serving_default");
}

TEST_CASE("codegen: both modes spell a port's shape NAME@d0,d1,... (embedded also takes NAME:dims)") {
    auto a = graft::embedded::parse_embedded_input("x@-1,28,28,1");
    CHECK(a.name == "x");
    CHECK(a.shape == std::vector<std::int64_t>{-1, 28, 28, 1});
    auto b = graft::embedded::parse_embedded_input("x:-1,784");
    CHECK(b.name == "x");
    CHECK(b.shape == std::vector<std::int64_t>{-1, 784});
    auto c = graft::embedded::parse_embedded_input("serving_default_x:0");  // a tensor, not a shape
    CHECK(c.name == "serving_default_x:0");
    CHECK(c.shape.empty());
    auto d = graft::embedded::parse_embedded_input("in:0@1,3");
    CHECK(d.name == "in:0");
    CHECK(d.shape == std::vector<std::int64_t>{1, 3});
    auto p = graft::typed::detail::parse_decl_port_spec("img=in:0@1,3");
    CHECK(p.port == "img");
    CHECK(p.tensor == "in:0");
    CHECK(p.shape->dims() == std::vector<std::int64_t>{1, 3});
}
