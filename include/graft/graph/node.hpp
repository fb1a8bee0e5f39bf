// graft/graph/node.hpp — one operation in a graph (TF NodeDef).
//
//   graft::node n;
//   n.name = "dense/MatMul"; n.op = "MatMul";
//   n.inputs = {graft::endpoint{"x", 0}, graft::endpoint{"dense/kernel/read", 0}};
//   n.attrs.set("T", graft::dtype::float32);
//   n.num_outputs() == 1;  n.output_dtypes()[0] == graft::dtype::float32;
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graft/core/compact_string.hpp"
#include "graft/graph/attr.hpp"
#include "graft/graph/endpoint.hpp"
#include "graft/graph/op_registry.hpp"

namespace graft {

class node {
public:
    std::string name;
    std::string op;
    compact_string device;                    ///< e.g. "/device:GPU:0"; empty = unplaced
    std::vector<endpoint> inputs;             ///< data inputs in order
    std::vector<std::string> control_inputs;  ///< names of nodes that must run first ("^n" without '^')
    attr_map attrs;
    /// Serialized NodeDef fields graft does not model (experimental_debug_info,
    /// experimental_type, fields of newer TF), written back verbatim.
    compact_string extra_fields;

    node() = default;
    node(std::string name_, std::string op_, std::vector<endpoint> inputs_ = {})
        : name(std::move(name_)), op(std::move(op_)), inputs(std::move(inputs_)) {}

    /// Output i of this node as an endpoint. Never throws (except bad_alloc).
    [[nodiscard]] endpoint output(int i = 0) const { return endpoint{name, i}; }

    /// The attr `n`, or nullptr. Never throws.
    [[nodiscard]] const attr_value* attr(std::string_view n) const { return attrs.find(n); }
    /// The attr `n`. Throws graph_error naming this node and the attrs it has.
    [[nodiscard]] const attr_value& attr_at(std::string_view n) const {
        if (auto* v = attrs.find(n)) return *v;
        std::string have;
        for (auto& [k, v] : attrs) have += (have.empty() ? "" : ", ") + k;
        throw graph_error(detail::cat("node has no attr '", n, "'"), location::at_node(name, op),
                          have.empty() ? "it has no attrs" : "attrs present: " + have);
    }
    /// The attr `n`, else the default its op_def declares. Throws graph_error when neither exists.
    [[nodiscard]] const attr_value& attr_or_default(std::string_view n,
                                                    const op_registry& r = op_registry::global()) const {
        if (auto* v = attrs.find(n)) return *v;
        if (auto* d = r.find(op)) return resolve_attr(*d, attrs, n, name);
        return attr_at(n);
    }

    /// Number of outputs. Throws graph_error naming the op, this node and how to register the op.
    [[nodiscard]] int num_outputs(const op_registry& r = op_registry::global()) const {
        return r.num_outputs(op, attrs, name);
    }
    /// Number of outputs, or nullopt when the op is unknown to `r`. Never throws (except bad_alloc).
    [[nodiscard]] std::optional<int> try_num_outputs(const op_registry& r = op_registry::global()) const {
        return r.try_num_outputs(op, attrs);
    }
    /// Output dtypes (refs as dtype + 100). Throws graph_error like num_outputs.
    [[nodiscard]] std::vector<graft::dtype> output_dtypes(const op_registry& r = op_registry::global()) const {
        return r.output_dtypes(op, attrs, name);
    }
    /// Dtype of output i. Throws graph_error like num_outputs, or when i is out of range.
    [[nodiscard]] graft::dtype output_dtype(int i, const op_registry& r = op_registry::global()) const {
        auto t = output_dtypes(r);
        if (i < 0 || static_cast<std::size_t>(i) >= t.size()) {
            throw graph_error(detail::cat("output index ", i, " out of range: op ", op, " has ", t.size(), " outputs"),
                              location::at_node(name, op));
        }
        return t[static_cast<std::size_t>(i)];
    }

    /// Inputs in NodeDef spelling: data inputs, then "^control" inputs. Never throws (except bad_alloc).
    [[nodiscard]] std::vector<std::string> input_strings() const {
        std::vector<std::string> r;
        r.reserve(inputs.size() + control_inputs.size());
        for (auto& e : inputs) r.push_back(e.input_str());
        for (auto& c : control_inputs) r.push_back("^" + c);
        return r;
    }
    /// Adds "^n" unless already present. Never throws (except bad_alloc).
    void add_control_input(std::string n) {
        for (auto& c : control_inputs) if (c == n) return;
        control_inputs.push_back(std::move(n));
    }
    /// Parses one NodeDef input string ("n", "n:1", "^n") and appends it. Throws invalid_argument_error.
    void add_input_string(std::string_view s) {
        if (!s.empty() && s.front() == '^') control_inputs.emplace_back(s.substr(1));
        else inputs.push_back(endpoint::parse(s));
    }

    friend bool operator==(const node&, const node&) = default;
};

}  // namespace graft
