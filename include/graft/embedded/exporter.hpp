// graft/embedded/exporter.hpp — embedded inference: a real graph + its weights -> one self-contained
// C++ header with a typed forward function (graft codegen --embedded). Link graft::compiled.
//
//   graft::embedded::embedded_options o;
//   o.inputs = {graft::embedded::parse_embedded_input("Placeholder:-1,784")};  // batch -1 -> 1
//   o.outputs = {"Add"};
//   o.ns = "mnist";
//   auto code = graft::embedded::generate_embedded(graft::tf::load_meta_graph("train_model.ckpt.meta"),
//                                               std::string("train_model.ckpt"), o);
//   graft::write_file_atomic("mnist.hpp", code.header);  // graft/core/io.hpp
//   // then, in firmware built with -fno-exceptions -fno-rtti and no graft at all:
//   //   #include "mnist.hpp"
//   //   float x[mnist::net::input_size], logits[mnist::net::output_size];
//   //   mnist::net::forward(x, logits);
//
// The header holds the weights as constant float arrays (hex-float literals: bit-exact; Conv2D and
// MatMul weights with their output channels padded to a multiple of 4), the kernels the graph
// needs as plain loops (NHWC, HWIO filters, output channel innermost; MatMul, convolutions and
// pools are templates over their constant dims whose accumulators are 4-float vectors where the
// compiler has vector extensions, a struct elsewhere), and one forward() that runs one sample
// through them. A BiasAdd and a Relu/Relu6 after a Conv2D or MatMul run in its epilogue. Every intermediate tensor lives in one static
// arena whose size the generator computes: buffers are reused once their last reader has run, and
// elementwise ops run in place when their input dies there. Shapes are static: the generator
// infers them from the input shapes (given, or the Placeholder's shape attr; an unknown batch dim
// becomes 1) through the graph; subgraphs of constants (and Shape/Size/Rank of computed tensors)
// are evaluated by graft at generation time. forward() is not reentrant (one arena).
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graft/exec/session.hpp"
#include "graft/graph/graph.hpp"
#include "graft/graph/meta_graph.hpp"
#include "graft/graph/variables.hpp"
#include "graft/surgery/freeze.hpp"
#include "graft/surgery/values.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/embedded/detail/kernels_text.hpp"

namespace graft::embedded {

/// One input of the generated function: a Placeholder (or any tensor, which is then fed instead
/// of computed) and its shape; an empty shape takes the Placeholder's shape attr.
struct embedded_input {
    std::string name;
    std::vector<std::int64_t> shape;
};

struct embedded_options {
    std::vector<embedded_input> inputs;  ///< empty: every Placeholder the outputs need
    std::vector<std::string> outputs;    ///< tensors or nodes ("probs", "probs:0"); required
    std::string ns = "graft_embedded";   ///< C++ namespace of the generated code ("a::b" allowed)
    std::string struct_name = "net";     ///< the struct holding forward()
    std::string source;                  ///< where the model came from, for the header's comment
};

/// A port of the generated function: the graph tensor, the C++ parameter, its static shape.
struct embedded_port {
    std::string tensor;
    std::string param;
    std::vector<std::int64_t> shape;
    std::int64_t size = 0;
};

/// What generate_embedded wrote, and its figures.
struct embedded_code {
    std::string header;
    std::vector<embedded_port> inputs, outputs;
    std::int64_t weight_floats = 0;  ///< constant data in the header
    std::int64_t arena_floats = 0;   ///< the one static arena
    std::int64_t naive_floats = 0;   ///< what the intermediates would take without reuse
    int steps = 0;                   ///< kernel calls in forward()
    std::vector<std::string> ops;    ///< op types of the graph's nodes that forward() runs
};

/// The op types the generator turns into code (the rest must be constant-foldable). Never throws.
inline const std::vector<std::string>& embedded_supported_ops() {
    static const std::vector<std::string> ops = {
        "Placeholder", "PlaceholderWithDefault", "Const", "Identity", "Snapshot", "StopGradient",
        "MatMul", "Add", "AddV2", "BiasAdd", "Sub", "Mul", "RealDiv", "Maximum", "Minimum",
        "SquaredDifference", "Relu", "Relu6", "Tanh", "Sigmoid", "Exp", "Neg", "Square", "Sqrt",
        "Rsqrt", "Elu", "Softplus", "Abs", "Softmax", "LogSoftmax", "Conv2D", "DepthwiseConv2dNative",
        "MaxPool", "AvgPool", "Reshape", "Squeeze", "ExpandDims", "Shape", "Size", "Rank",
        "FusedBatchNorm", "FusedBatchNormV3"};
    return ops;
}

/// "name", "name@d0,d1,..." (the same spelling as the typed declaration's ports) or the older
/// "name:d0,d1,..." (-1, ? or None for the batch dim); "name:0" names output 0.
/// Throws invalid_argument_error for an empty name or a bad dim.
inline embedded_input parse_embedded_input(std::string_view spec) {
    embedded_input in;
    std::string_view name = spec, tail;
    bool is_shape = false;
    if (auto at = spec.rfind('@'); at != std::string_view::npos) {
        name = spec.substr(0, at);
        tail = spec.substr(at + 1);
        is_shape = true;
    } else if (auto colon = spec.rfind(':'); colon != std::string_view::npos) {
        tail = spec.substr(colon + 1);
        is_shape = !tail.empty() && tail != "0" && tail.find_first_not_of("0123456789-,?Noe ") == std::string_view::npos;
        if (is_shape) name = spec.substr(0, colon);
    }
    in.name = std::string(name);
    if (in.name.empty()) {
        throw graft::invalid_argument_error(graft::detail::cat("input spec '", spec, "' has no name"), {},
                                            "write name or name@d0,d1,... (e.g. x@-1,28,28,1)");
    }
    if (is_shape) {
        graft::shape s = graft::shape::parse(std::string(tail));
        in.shape = s.dims();
    }
    return in;
}

}  // namespace graft::embedded

// The implementation lives outside graft::typed, whose type-level names (shape, step, value, ...)
// would hide graft's own.
namespace graft::embedded::detail {

inline std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
    std::string r;
    for (auto& s : v) r += (r.empty() ? "" : sep) + s;
    return r;
}
inline std::string dims_str(const std::vector<std::int64_t>& d) {
    std::string r = "[";
    for (std::size_t i = 0; i < d.size(); ++i) r += (i ? "," : "") + std::to_string(d[i]);
    return r + "]";
}
inline std::int64_t numel(const std::vector<std::int64_t>& d) {
    std::int64_t n = 1;
    for (auto x : d) n *= x;
    return n;
}
/// A C++ identifier from a graph name: other characters -> '_', a leading digit prefixed.
inline std::string identifier(std::string_view s) {
    std::string r;
    for (char c : s) r += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
    if (r.empty() || std::isdigit(static_cast<unsigned char>(r[0]))) r = "t_" + r;
    return r;
}

/// Where a tensor lives in forward(): an arena buffer, an input parameter or a weight array.
struct ref {
    enum kind_t { arena, input, weight, none } kind = arena;
    int id = -1;
};

/// A tensor of the graph: a constant (known now) or computed at run time (then `at` says where).
struct value {
    bool is_const = false;
    tensor c;
    std::vector<std::int64_t> shape;
    ref at;
};

struct buffer_use {
    std::int64_t floats = 0;
    int last_use = -1;
    int alias_of = -1;  ///< in place: the buffer this one reuses
    std::int64_t offset = -1;
};

/// One kernel call; `args` are the pointer arguments (inputs), `out` the arena buffer written
/// (-1: the output parameter `out_param`), `ints` the rest of the call.
struct step {
    std::string comment, fn;
    std::vector<ref> args;
    int out = -1;
    int out_param = -1;
    std::string ints;
    int in_place = -1;  ///< an arena buffer that may become `out` when this step is its last reader
    bool templated = false;  ///< `ints` are template arguments (kernels with constant dims)
    std::int64_t channels = -1;   ///< conv2d/matmul: output channels (a bias fuses when it has as many)
    std::int64_t bias_cols = -1;  ///< b_add of a full operand and a constant along the last dim: its length
};

struct weight {
    std::string name, comment;
    tensor data;  // float32, flat
};

class planner {
public:
    planner(const graph& g, const embedded::embedded_options& o) : g_(g), o_(o) {}

    embedded::embedded_code run();

private:
    const graph& g_;
    const embedded::embedded_options& o_;
    std::unordered_map<std::string, value> values_;       // "node:i"
    std::unordered_map<std::string, int> state_;          // node -> 1 visiting, 2 done
    std::map<std::string, int> input_index_;              // "node:i" -> input port
    std::vector<embedded::embedded_port> inputs_, outputs_;
    std::vector<buffer_use> buffers_;
    std::vector<step> steps_;
    std::vector<weight> weights_;
    std::map<std::string, int> weight_index_;
    std::set<std::string> kernels_, ops_;
    bool need_limits_ = false;
    std::int64_t arena_floats_ = 0;

    [[noreturn]] void fail_unsupported(const node& n, const std::string& why = {}) const {
        throw unimplemented_error(
            graft::detail::cat("embedded codegen: ", why.empty() ? "op " + n.op + " is not supported" : why),
            location::at_node(n.name, n.op),
            "supported ops: " + join(embedded::embedded_supported_ops()) +
                " (and any subgraph of constants); choose --outputs before this node or give it as an --input");
    }
    [[noreturn]] void fail_shape(const node& n, const std::string& why) const {
        throw shape_error("embedded codegen: " + why, location::at_node(n.name, n.op));
    }

    const value& get(const endpoint& e);
    void compute(const node& n);
    value& set(const node& n, int i, value v) { return values_[endpoint{n.name, i}.str()] = std::move(v); }

    int new_buffer(std::int64_t floats) {
        buffers_.push_back({floats, -1, -1, -1});
        return static_cast<int>(buffers_.size()) - 1;
    }
    /// A runtime value produced by a new step writing a new buffer; returns the step.
    step& add_step(const node& n, value& out, std::string fn, std::vector<ref> args, std::string ints) {
        out.at = {ref::arena, new_buffer(numel(out.shape))};
        step s;
        s.comment = graft::detail::cat(n.name, " (", n.op, ") -> ", dims_str(out.shape));
        s.fn = std::move(fn);
        s.args = std::move(args);
        s.out = out.at.id;
        s.ints = std::move(ints);
        steps_.push_back(std::move(s));
        ops_.insert(n.op);
        return steps_.back();
    }
    /// A weight array of `t` (float32 const) under `key`, converted by `layout` when new.
    ref weight_of(const node& n, const value& v, const std::string& key, const std::string& what, tensor data) {
        (void)v;
        if (auto it = weight_index_.find(key); it != weight_index_.end()) return {ref::weight, it->second};
        if (data.type() != dtype::float32) {
            throw invalid_argument_error(graft::detail::cat("embedded codegen: ", what, " is ", dtype_name(data.type()),
                                                     ", only float32 is generated"),
                                         location::at_node(n.name, n.op));
        }
        weight w;
        w.name = "w" + std::to_string(weights_.size());
        w.comment = what + " " + dims_str(data.shape().dims());
        w.data = data;
        weights_.push_back(std::move(w));
        int id = static_cast<int>(weights_.size()) - 1;
        weight_index_[key] = id;
        return {ref::weight, id};
    }
    /// `t` (float32) with its last dim rounded up to a multiple of 4, zero-filled.
    static tensor pad_last_dim(const tensor& t) {
        auto d = t.shape().dims();
        std::int64_t n = d.back(), np = (n + 3) / 4 * 4, rows = t.num_elements() / std::max<std::int64_t>(n, 1);
        d.back() = np;
        tensor r(dtype::float32, graft::shape(d));
        for (std::int64_t i = 0; i < rows; ++i) {
            for (std::int64_t j = 0; j < n; ++j) r.data<float>()[i * np + j] = t.data<float>()[i * n + j];
        }
        return r;
    }
    ref float_operand(const node& n, int i) {
        const value& v = get(n.inputs[static_cast<std::size_t>(i)]);
        if (!v.is_const) return v.at;
        return weight_of(n, v, n.inputs[static_cast<std::size_t>(i)].str(), n.inputs[static_cast<std::size_t>(i)].str(), v.c);
    }
    void require_float(const node& n, int i) {
        const endpoint& e = n.inputs[static_cast<std::size_t>(i)];
        const value& v = get(e);
        if (!v.is_const) return;  // runtime values are float32 by construction
        if (v.c.type() != dtype::float32) {
            throw invalid_argument_error(graft::detail::cat("embedded codegen: input ", e.str(), " is ",
                                                     dtype_name(v.c.type()), ", only float32 is generated"),
                                         location::at_node(n.name, n.op));
        }
    }

    void fold(const node& n, const std::vector<const value*>& in);
    void binary(const node& n, const std::string& op, int a, int b);
    void binary_refs(const node& n, const std::string& op, const value& va, ref ra, const value& vb, ref rb,
                     value& out);
    void conv_or_pool(const node& n);
    void matmul(const node& n);
    void batch_norm(const node& n);
    std::vector<std::int64_t> int_list(const node& n, const value& v, const std::string& what) const;
    void fuse();
    void allocate();
    std::string emit() const;
    std::string ref_expr(const ref& r) const;
    void setup_ports();
};

inline std::vector<std::int64_t> planner::int_list(const node& n, const value& v, const std::string& what) const {
    if (!v.is_const) fail_unsupported(n, what + " must be a constant (known when the header is generated)");
    tensor t = v.c;
    if (t.type() != dtype::int32 && t.type() != dtype::int64) {
        fail_unsupported(n, what + " must be int32 or int64, got " + dtype_name(t.type()));
    }
    tensor c = graft::cast(t, dtype::int64);
    return std::vector<std::int64_t>(c.data<std::int64_t>(), c.data<std::int64_t>() + c.num_elements());
}

inline const value& planner::get(const endpoint& e) {
    const std::string key = e.str();
    if (auto it = values_.find(key); it != values_.end()) return it->second;
    const node* n = g_.find(e.node);
    if (!n) {
        throw not_found_error(graft::detail::cat("embedded codegen: no node '", e.node, "' in the graph"),
                              location::at_tensor(key), "check the --inputs/--outputs names (graft inspect MODEL)");
    }
    int& st = state_[n->name];
    if (st == 1) throw graph_error("embedded codegen: the graph has a cycle through this node", location::at_node(n->name, n->op));
    if (st == 0) {
        st = 1;
        compute(*n);
        state_[n->name] = 2;
    }
    auto it = values_.find(key);
    if (it == values_.end()) {
        throw graph_error(graft::detail::cat("embedded codegen: output ", e.index, " of this node is not generated"),
                          location::at_node(n->name, n->op), "use output 0");
    }
    return it->second;
}

inline void planner::fold(const node& n, const std::vector<const value*>& in) {
    graph g2;
    node copy = n;
    copy.control_inputs.clear();
    for (std::size_t i = 0; i < in.size(); ++i) {
        node c("embedded_fold_in" + std::to_string(i), "Const");
        c.attrs.set("dtype", in[i]->c.type());
        c.attrs.set("value", in[i]->c);
        g2.add_node(std::move(c));
        copy.inputs[i] = endpoint{"embedded_fold_in" + std::to_string(i), 0};
    }
    int k = copy.num_outputs(g_.registry());
    std::string name = copy.name;
    g2.add_node(std::move(copy));
    std::vector<std::string> fetch;
    for (int i = 0; i < k; ++i) fetch.push_back(name + ":" + std::to_string(i));
    std::vector<tensor> r;
    try {
        exec::session s(std::move(g2));
        r = s.run({}, fetch);
    } catch (const error& e) {
        throw graph_error(graft::detail::cat("embedded codegen: cannot evaluate this node of constants: ", e.message()),
                          location::at_node(n.name, n.op));
    }
    for (int i = 0; i < k; ++i) {
        value v;
        v.is_const = true;
        v.c = r[static_cast<std::size_t>(i)];
        v.shape = v.c.shape().dims();
        set(n, i, std::move(v));
    }
}

inline void planner::compute(const node& n) {
    // a fed tensor
    bool fed = false;
    for (auto& [k, idx] : input_index_) fed = fed || endpoint::parse(k).node == n.name;
    if (fed) {
        for (auto& [k, idx] : input_index_) {
            endpoint e = endpoint::parse(k);
            if (e.node != n.name) continue;
            value v;
            v.shape = inputs_[static_cast<std::size_t>(idx)].shape;
            v.at = {ref::input, idx};
            set(n, e.index, std::move(v));
        }
        return;
    }
    const std::string& op = n.op;
    if (op == "Const") {
        value v;
        v.is_const = true;
        v.c = n.attr_at("value").tensor().tensor();
        v.shape = v.c.shape().dims();
        set(n, 0, std::move(v));
        return;
    }
    if (op == "Placeholder") {
        throw not_found_error("embedded codegen: the outputs need this Placeholder, which is not an input",
                              location::at_node(n.name, n.op),
                              "add it to the inputs (--inputs " + n.name + ":d0,d1,...)");
    }
    if (op == "PlaceholderWithDefault") {
        set(n, 0, get(n.inputs.at(0)));
        return;
    }
    if (op == "VariableV2" || op == "VarHandleOp" || op == "Variable" || op == "ReadVariableOp") {
        fail_unsupported(n, "a variable (" + op + ") in the graph: it must be frozen first (give the checkpoint)");
    }
    std::vector<const value*> in;
    bool all_const = !n.inputs.empty();
    for (auto& e : n.inputs) {
        in.push_back(&get(e));
        all_const = all_const && in.back()->is_const;
    }
    // values_ may rehash while inputs are computed: take the pointers again
    in.clear();
    for (auto& e : n.inputs) in.push_back(&values_.at(e.str()));

    if (op == "Identity" || op == "Snapshot" || op == "StopGradient") {
        set(n, 0, *in.at(0));
        return;
    }
    if (op == "Shape" || op == "Size" || op == "Rank") {
        const auto& s = in.at(0)->shape;
        const attr_value* ot = n.attr("out_type");
        dtype t = ot ? ot->type() : dtype::int32;
        std::vector<std::int64_t> r;
        if (op == "Shape") r = s;
        else if (op == "Size") r = {numel(s)};
        else r = {static_cast<std::int64_t>(s.size())};
        value v;
        v.is_const = true;
        tensor c = tensor::from_vector<std::int64_t>(op == "Shape" ? graft::shape{static_cast<std::int64_t>(r.size())} : graft::shape{}, r);
        v.c = graft::cast(c, t);
        v.shape = v.c.shape().dims();
        set(n, 0, std::move(v));
        return;
    }
    if (all_const) {
        const op_def* d = g_.registry().find(op);
        if (d && d->is_stateful) fail_unsupported(n, "stateful op " + op + " over constants cannot be evaluated ahead");
        fold(n, in);
        return;
    }
    if (op == "Reshape" || op == "Squeeze" || op == "ExpandDims") {
        value v = *in[0];
        const auto& s = in[0]->shape;
        std::vector<std::int64_t> out;
        if (op == "Reshape") {
            out = int_list(n, *in.at(1), "the shape input of Reshape");
            std::int64_t known = 1;
            int unknown = -1;
            for (std::size_t i = 0; i < out.size(); ++i) {
                if (out[i] == -1) {
                    if (unknown >= 0) fail_shape(n, "Reshape shape " + dims_str(out) + " has two -1 dims");
                    unknown = static_cast<int>(i);
                } else {
                    known *= out[i];
                }
            }
            if (unknown >= 0 && known > 0) out[static_cast<std::size_t>(unknown)] = numel(s) / known;
            if (numel(out) != numel(s)) {
                fail_shape(n, "cannot reshape " + dims_str(s) + " (" + std::to_string(numel(s)) + " elements) to " +
                                  dims_str(out));
            }
        } else if (op == "Squeeze") {
            std::vector<std::int64_t> axes;
            if (auto* a = n.attr("squeeze_dims")) axes = a->list_of<std::int64_t>();
            auto r = static_cast<std::int64_t>(s.size());
            for (std::int64_t i = 0; i < r; ++i) {
                bool listed = axes.empty() ? s[static_cast<std::size_t>(i)] == 1
                                           : std::any_of(axes.begin(), axes.end(), [&](std::int64_t a) { return (a < 0 ? a + r : a) == i; });
                if (listed && s[static_cast<std::size_t>(i)] != 1) fail_shape(n, "cannot squeeze dim " + std::to_string(i) + " of " + dims_str(s));
                if (!listed) out.push_back(s[static_cast<std::size_t>(i)]);
            }
        } else {
            auto ax = int_list(n, *in.at(1), "the axis input of ExpandDims");
            if (ax.size() != 1) fail_shape(n, "ExpandDims wants one axis");
            auto r = static_cast<std::int64_t>(s.size());
            std::int64_t a = ax[0] < 0 ? ax[0] + r + 1 : ax[0];
            if (a < 0 || a > r) fail_shape(n, "ExpandDims axis " + std::to_string(ax[0]) + " out of range for " + dims_str(s));
            out = s;
            out.insert(out.begin() + a, 1);
        }
        v.shape = out;
        ops_.insert(op);
        set(n, 0, std::move(v));
        return;
    }
    if (!unary_expression(op).empty()) {
        value v;
        v.shape = in[0]->shape;
        std::string fn = identifier(op);
        std::transform(fn.begin(), fn.end(), fn.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        fn = "u_" + fn;
        kernels_.insert("unary:" + op);
        ref a = in[0]->at;
        step& s = add_step(n, v, fn, {a}, std::to_string(numel(v.shape)));
        if (a.kind == ref::arena) s.in_place = a.id;
        set(n, 0, std::move(v));
        return;
    }
    if (!binary_expression(op).empty()) {
        require_float(n, 0);
        require_float(n, 1);
        binary(n, op, 0, 1);
        return;
    }
    if (op == "Softmax" || op == "LogSoftmax") {
        value v;
        v.shape = in[0]->shape;
        if (v.shape.empty()) fail_shape(n, op + " of a scalar");
        std::int64_t cols = v.shape.back();
        std::string fn = op == "Softmax" ? "softmax" : "log_softmax";
        kernels_.insert(fn);
        ref a = in[0]->at;
        step& s = add_step(n, v, fn, {a}, graft::detail::cat(numel(v.shape) / std::max<std::int64_t>(cols, 1), ", ", cols));
        if (a.kind == ref::arena) s.in_place = a.id;
        set(n, 0, std::move(v));
        return;
    }
    if (op == "MatMul") return matmul(n);
    if (op == "Conv2D" || op == "DepthwiseConv2dNative" || op == "MaxPool" || op == "AvgPool") return conv_or_pool(n);
    if (op == "FusedBatchNorm" || op == "FusedBatchNormV3") return batch_norm(n);
    fail_unsupported(n);
}

}  // namespace graft::embedded::detail

#include "graft/embedded/detail/plan.hpp"
