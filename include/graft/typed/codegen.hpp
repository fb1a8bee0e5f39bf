// The typed declaration of a real graph: `graft codegen MODEL -o model.hpp` writes the
// subgraph<...> type (ports with dtypes and static shapes, variables, scope) for users to include
// and bind with graft::load<T>(...).
//
//   graft::meta_graph mg = graft::tf::load_meta_graph("mnist-softmax/train_model.ckpt.meta");
//   graft::typed::declaration_options o;
//   o.scope = "mnist";
//   o.inputs = {"features"};
//   o.outputs = {"logits=add:0"};            // PORT=TENSOR[@d0,d1,...]
//   std::string header = graft::typed::declaration(mg, o);
//   // using mnist = graft::typed::subgraph<"mnist", inputs<port<"features", float, shape<-1, 784>>>,
//   //                                      outputs<port<"logits", float, shape<-1, 10>, "add:0">>,
//   //                                      variables<variable<"Variable", float, shape<784, 10>>, ...>>;
//
// Ports come from a signature (`signature`, or serving_default when neither a signature nor
// inputs/outputs are given) or from `inputs`/`outputs`, each `[PORT=]TENSOR[@d0,d1,...]`: the port
// name defaults to the tensor's op name, the shape to the graph's static shape (Placeholder and
// variable attrs, _output_shapes, unary/broadcasting/MatMul rules); `@` declares it where the
// graph does not say. Variables: every variable of the MetaGraph (graph/variables.hpp).
#pragma once

#include <cctype>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/graph/meta_graph.hpp"
#include "graft/graph/variables.hpp"
#include "graft/surgery/import.hpp"

namespace graft::typed {

struct declaration_options {
    std::string scope;                         ///< the subgraph's scope (required)
    std::string type_name;                     ///< the C++ alias; default: the scope as an identifier
    std::string cpp_namespace;                 ///< optional namespace around the alias
    std::string signature;                     ///< take the ports from this signature
    std::vector<std::string> inputs, outputs;  ///< `[PORT=]TENSOR[@d0,d1,...]`
    std::string source;                        ///< what the header says it was made from
    bool with_variables = true;                ///< list the variables (a frozen graph has none)
};

namespace detail {

/// "features" -> "features"; "dense/kernel" -> "dense_kernel"; "1x" -> "_1x". Never throws
/// (except bad_alloc).
inline std::string identifier(std::string_view s) {
    std::string r;
    for (char c : s) r += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (r.empty() || std::isdigit(static_cast<unsigned char>(r[0]))) r.insert(r.begin(), '_');
    return r;
}

/// A C++ string literal of `s`. Never throws (except bad_alloc).
inline std::string literal(std::string_view s) {
    std::string r = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') r += '\\';
        r += c;
    }
    return r + "\"";
}

/// The C++ element type graft::typed uses for `t`. Throws invalid_argument_error naming `what`.
inline std::string cpp_type(graft::dtype t, const std::string& what) {
    switch (t) {
        case graft::dtype::float32: return "float";
        case graft::dtype::float64: return "double";
        case graft::dtype::int32: return "std::int32_t";
        case graft::dtype::int64: return "std::int64_t";
        case graft::dtype::int16: return "std::int16_t";
        case graft::dtype::int8: return "std::int8_t";
        case graft::dtype::uint8: return "std::uint8_t";
        case graft::dtype::uint16: return "std::uint16_t";
        case graft::dtype::bool_: return "bool";
        case graft::dtype::string: return "std::string";
        default: break;
    }
    throw invalid_argument_error(graft::detail::cat("codegen: ", what, " has dtype ", dtype_name(t),
                                                    ", which typed ports do not express"),
                                 location::at_tensor(what), "declare the port through a Cast to float32 or int32/int64");
}

struct decl_port_spec {
    std::string port, tensor;
    std::optional<graft::shape> shape;
};

/// `[PORT=]TENSOR[@d0,d1,...]`. Throws invalid_argument_error on a malformed shape.
inline decl_port_spec parse_decl_port_spec(const std::string& s) {
    decl_port_spec p;
    std::string rest = s;
    if (auto at = rest.find('@'); at != std::string::npos) {
        std::vector<std::int64_t> dims;
        std::string d = rest.substr(at + 1);
        rest = rest.substr(0, at);
        std::stringstream ss(d);
        std::string item;
        while (std::getline(ss, item, ',')) {
            try {
                std::size_t used = 0;
                dims.push_back(std::stoll(item, &used));
                if (used != item.size()) throw std::invalid_argument(item);
            } catch (const std::exception&) {
                throw invalid_argument_error(graft::detail::cat("codegen: bad dimension '", item, "' in '", s, "'"), {},
                                             "write shapes as NAME@d0,d1,... with -1 for an unknown dimension");
            }
        }
        p.shape = graft::shape(std::move(dims));
    }
    if (auto eq = rest.find('='); eq != std::string::npos) {
        p.port = rest.substr(0, eq);
        p.tensor = rest.substr(eq + 1);
    } else {
        p.tensor = rest;
    }
    if (p.tensor.empty()) throw invalid_argument_error(graft::detail::cat("codegen: empty tensor name in '", s, "'"));
    if (p.port.empty()) p.port = p.tensor.substr(0, p.tensor.find(':'));
    return p;
}

inline std::string shape_type(const graft::shape& s) {
    std::string r = "graft::typed::shape<";
    for (int i = 0; i < s.rank(); ++i) r += (i ? ", " : "") + std::to_string(s.dim(i));
    return r + ">";
}

struct decl_port {
    std::string port, tensor, type;
    graft::shape shape;
};

/// The dtype and static shape of tensor `p.tensor` in `g`. Throws not_found_error for a missing
/// node (listing close names), invalid_argument_error for an unknown rank without `@`.
inline decl_port resolve_decl_port(const graph& g, const decl_port_spec& p) {
    endpoint e = endpoint::parse(p.tensor);
    const node* n = g.find(e.node);
    if (!n) {
        throw not_found_error(graft::detail::cat("codegen: no node '", e.node, "' for port '", p.port, "'"),
                              location::at_tensor(p.tensor), surgery::detail::close_nodes_hint(g, e.node, "the graph"));
    }
    if (e.index < 0 || e.index >= surgery::detail::output_count(g, *n)) {
        throw invalid_argument_error(graft::detail::cat("codegen: node '", e.node, "' (", n->op, ") has no output ", e.index),
                                     location::at_node(e.node, n->op), "name one of its outputs as NAME:INDEX");
    }
    decl_port d{p.port, p.tensor, cpp_type(surgery::detail::output_type(g, *n, e.index), p.tensor), {}};
    d.shape = p.shape ? *p.shape : surgery::detail::static_shape(g, e);
    if (!d.shape.rank_known()) {
        throw invalid_argument_error(graft::detail::cat("codegen: the graph does not say the rank of '", p.tensor, "' (",
                                                        n->op, ")"),
                                     location::at_node(e.node, n->op),
                                     "declare its shape: --outputs " + p.port + "=" + p.tensor + "@-1,10 (-1: unknown)");
    }
    return d;
}

}  // namespace detail

/// The header text declaring `mg`'s interface as a graft::typed::subgraph. Throws
/// invalid_argument_error (no scope, no ports, an inexpressible dtype or unknown rank),
/// not_found_error (a tensor or signature that is not there).
inline std::string declaration(const meta_graph& mg, const declaration_options& o) {
    using namespace detail;
    if (o.scope.empty()) {
        throw invalid_argument_error("codegen: no scope given", {}, "pass --scope NAME (the scope the model is imported under)");
    }
    std::vector<decl_port_spec> ins, outs;
    if (!o.signature.empty() || (o.inputs.empty() && o.outputs.empty())) {
        const std::string key = o.signature.empty() ? "serving_default" : o.signature;
        if (o.signature.empty() && !mg.signatures.count(key)) {
            std::string keys;
            for (auto& [k, v] : mg.signatures) keys += (keys.empty() ? "" : ", ") + k;
            throw invalid_argument_error(
                "codegen: no --inputs/--outputs and no serving_default signature", {},
                "name the ports: --inputs TENSOR... --outputs TENSOR..." +
                    (keys.empty() ? std::string(" (the graph has no signatures)") : " or --signature KEY (signatures: " + keys + ")"));
        }
        const signature_def& sig = mg.signature(key);
        for (auto& [k, t] : sig.inputs) ins.push_back({k, t.name, t.shape});
        for (auto& [k, t] : sig.outputs) outs.push_back({k, t.name, t.shape});
    }
    for (auto& s : o.inputs) ins.push_back(parse_decl_port_spec(s));
    for (auto& s : o.outputs) outs.push_back(parse_decl_port_spec(s));
    if (outs.empty()) throw invalid_argument_error("codegen: no outputs", {}, "name at least one with --outputs TENSOR");

    std::vector<decl_port> in_d, out_d;
    for (auto& p : ins) in_d.push_back(resolve_decl_port(mg.graph, p));
    for (auto& p : outs) out_d.push_back(resolve_decl_port(mg.graph, p));
    std::vector<variable_info> vars;
    if (o.with_variables) vars = find_variables(mg);

    const std::string ns = "graft::typed::";
    std::ostringstream h;
    h << "// Generated by `graft codegen`" << (o.source.empty() ? "" : " from " + o.source)
      << ": the typed interface of the model.\n// Bind it with graft::load<" << (o.type_name.empty() ? identifier(o.scope) : o.type_name)
      << ">(...) (graft/typed/bind.hpp). Regenerate rather than edit.\n#pragma once\n\n#include <cstdint>\n#include <string>\n\n"
      << "#include \"graft/typed/types.hpp\"\n\n";
    if (!o.cpp_namespace.empty()) h << "namespace " << o.cpp_namespace << " {\n\n";
    auto ports = [&](const char* list, const std::vector<decl_port>& v) {
        h << "    " << ns << list << "<";
        for (std::size_t i = 0; i < v.size(); ++i) {
            const auto& p = v[i];
            h << (i ? ",\n        " : "\n        ") << ns << "port<" << literal(p.port) << ", " << p.type << ", "
              << shape_type(p.shape);
            if (p.tensor != p.port) h << ", " << literal(p.tensor);
            h << ">";
        }
        h << ">";
    };
    h << "using " << (o.type_name.empty() ? identifier(o.scope) : o.type_name) << " = " << ns << "subgraph<"
      << literal(o.scope) << ",\n";
    ports("inputs", in_d);
    h << ",\n";
    ports("outputs", out_d);
    h << ",\n    " << ns << "variables<";
    for (std::size_t i = 0; i < vars.size(); ++i) {
        const auto& v = vars[i];
        if (!v.shape.rank_known()) {
            throw invalid_argument_error(graft::detail::cat("codegen: variable '", v.name, "' has no static shape"),
                                         location::at_node(v.node, ""), "give the variable a shape when it is created");
        }
        h << (i ? ",\n        " : "\n        ") << ns << "variable<" << literal(v.name) << ", " << cpp_type(v.dtype, v.name)
          << ", " << shape_type(v.shape) << ">";
    }
    h << ">>;\n";
    if (!o.cpp_namespace.empty()) h << "\n}  // namespace " << o.cpp_namespace << "\n";
    return h.str();
}

}  // namespace graft::typed
