// graft/embedded/detail/emit.hpp — the ports, the header text and the public entry points
// of graft::embedded::generate_embedded. Internal: include graft/embedded/exporter.hpp.
#pragma once

#include <filesystem>

#include "graft/embedded/exporter.hpp"

namespace graft::embedded::detail {

/// Nodes nobody consumes: the likely outputs, for error messages.
inline std::vector<std::string> unconsumed(const graph& g) {
    std::set<std::string> used;
    for (auto& n : g) {
        for (auto& e : n.inputs) used.insert(e.node);
    }
    std::vector<std::string> r;
    for (auto& n : g) {
        if (!used.count(n.name) && n.op != "NoOp" && n.op != "Const") r.push_back(n.name);
    }
    return r;
}

/// Output specs ("a", "a:1", "a,b") as endpoints. Throws invalid_argument_error for none.
inline std::vector<endpoint> output_endpoints(const std::vector<std::string>& specs) {
    std::vector<endpoint> r;
    for (auto& spec : specs) {
        std::size_t i = 0;
        while (i <= spec.size()) {
            auto j = spec.find(',', i);
            if (j == std::string::npos) j = spec.size();
            std::string t = spec.substr(i, j - i);
            auto b = t.find_first_not_of(" \t"), e = t.find_last_not_of(" \t");
            if (b != std::string::npos) r.push_back(endpoint::parse(t.substr(b, e - b + 1)));
            i = j + 1;
        }
    }
    if (r.empty()) {
        throw invalid_argument_error("embedded codegen: no outputs given", {},
                                     "name the tensors forward() returns: --outputs probs (or probs:0,logits)");
    }
    return r;
}

inline void planner::setup_ports() {
    auto outs = output_endpoints(o_.outputs);
    for (auto& e : outs) {
        if (!g_.contains(e.node)) {
            auto cand = unconsumed(g_);
            throw not_found_error(graft::detail::cat("embedded codegen: output '", e.str(), "' is not in the graph"),
                                  location::at_tensor(e.str()),
                                  cand.empty() ? std::string("check the name (graft inspect MODEL)")
                                               : "nodes nobody consumes (likely outputs): " + surgery::freeze_detail::join_names(cand));
        }
    }
    std::vector<embedded::embedded_input> specs = o_.inputs;
    if (specs.empty()) {  // every Placeholder the outputs reach
        std::set<std::string> seen;
        std::vector<std::string> todo;
        for (auto& e : outs) todo.push_back(e.node);
        while (!todo.empty()) {
            std::string name = todo.back();
            todo.pop_back();
            if (!seen.insert(name).second) continue;
            const node* n = g_.find(name);
            if (!n) continue;
            if (n->op == "Placeholder") specs.push_back({n->name, {}});
            for (auto& e : n->inputs) todo.push_back(e.node);
        }
        std::sort(specs.begin(), specs.end(), [](const embedded::embedded_input& a, const embedded::embedded_input& b) { return a.name < b.name; });
    }
    for (auto& in : specs) {
        endpoint e = endpoint::parse(in.name);
        const node* n = g_.find(e.node);
        if (!n) {
            std::vector<std::string> ph;
            for (auto& m : g_) if (m.op == "Placeholder") ph.push_back(m.name);
            throw not_found_error(graft::detail::cat("embedded codegen: input '", in.name, "' is not in the graph"),
                                  location::at_tensor(in.name),
                                  ph.empty() ? std::string("the graph has no Placeholder") : "placeholders: " + surgery::freeze_detail::join_names(ph));
        }
        std::vector<std::int64_t> dims = in.shape;
        if (dims.empty() && n->op == "Placeholder") {
            // TF 1.0 wrote [] (rank 0) for an unknown shape: a scalar input is given explicitly
            if (auto* s = n->attr("shape"); s && s->shape().rank() > 0) dims = s->shape().dims();
            else {
                throw shape_error("embedded codegen: the input's shape is unknown (its shape attr is " +
                                      (s ? s->shape().str() : std::string("absent")) + ")",
                                  location::at_node(n->name, n->op),
                                  "give it: --inputs " + n->name + ":-1,d1,... (or embedded::embedded_input::shape)");
            }
        } else if (dims.empty()) {
            throw shape_error("embedded codegen: an input that is not a Placeholder needs its shape",
                              location::at_node(n->name, n->op), "give it: --inputs " + in.name + ":d0,d1,...");
        }
        for (std::size_t i = 0; i < dims.size(); ++i) {
            if (dims[i] >= 0) continue;
            if (i == 0) { dims[i] = 1; continue; }  // batch: one sample per call
            throw shape_error(graft::detail::cat("embedded codegen: dim ", i, " of input shape ", dims_str(in.shape.empty() ? dims : in.shape),
                                          " is unknown; only the batch dim (0) may be"),
                              location::at_node(n->name, n->op),
                              "give the static shape: --inputs " + n->name + ":-1,...");
        }
        if (n->op == "Placeholder") {
            if (auto* t = n->attr("dtype"); t && t->type() != dtype::float32) {
                throw invalid_argument_error(graft::detail::cat("embedded codegen: input is ", dtype_name(t->type()), ", only float32 is generated"),
                                             location::at_node(n->name, n->op));
            }
        }
        embedded::embedded_port p;
        p.tensor = e.str();
        p.shape = dims;
        p.size = numel(dims);
        p.param = specs.size() == 1 ? "in" : "in_" + identifier(e.node) + (e.index ? "_" + std::to_string(e.index) : "");
        if (input_index_.count(p.tensor)) {
            throw invalid_argument_error("embedded codegen: input given twice", location::at_tensor(p.tensor));
        }
        input_index_[p.tensor] = static_cast<int>(inputs_.size());
        inputs_.push_back(std::move(p));
    }
    for (auto& e : outs) {
        const value& v = get(e);
        ref r = v.is_const ? weight_of(g_.at(e.node), v, e.str(), e.str() + " (constant output)", graft::cast(v.c, v.c.type())) : v.at;
        embedded::embedded_port p;
        p.tensor = e.str();
        p.shape = v.shape;
        p.size = numel(v.shape);
        p.param = outs.size() == 1 ? "out" : "out_" + identifier(e.node) + (e.index ? "_" + std::to_string(e.index) : "");
        step s;
        s.comment = "output " + p.tensor + " " + dims_str(p.shape);
        s.fn = "copy";
        s.args = {r};
        s.out_param = static_cast<int>(outputs_.size());
        s.ints = std::to_string(p.size);
        kernels_.insert("copy");
        steps_.push_back(std::move(s));
        outputs_.push_back(std::move(p));
    }
}

inline std::string planner::emit() const {
    std::ostringstream h;
    const std::string& S = o_.struct_name;
    std::int64_t wf = 0;
    for (auto& w : weights_) wf += w.data.num_elements();
    auto port_line = [](const embedded::embedded_port& p) { return p.param + ": " + p.tensor + " float" + dims_str(p.shape); };
    h << "// " << o_.ns << "::" << S << " — embedded inference, generated by graft (graft codegen --embedded"
      << (o_.source.empty() ? "" : " " + o_.source) << ").\n"
      << "// Self-contained: no graft, no protobuf, no exceptions or RTTI needed, no heap. Weights: " << wf
      << " floats (" << wf * 4 << " bytes) of constant data, bit-exact hex-float literals. Intermediates: one static arena of "
      << arena_floats_ << " floats (" << arena_floats_ * 4 << " bytes). One sample per call; forward() is not reentrant.\n";
    for (auto& p : inputs_) h << "//   input  " << port_line(p) << "\n";
    for (auto& p : outputs_) h << "//   output " << port_line(p) << "\n";
    h << "//   ops: " << join(std::vector<std::string>(ops_.begin(), ops_.end())) << "\n//\n"
      << "//   float in[" << o_.ns << "::" << S << "::" << (inputs_.size() == 1 ? "input_size" : inputs_[0].param + "_size") << "] = {...};\n"
      << "//   float out[" << o_.ns << "::" << S << "::" << (outputs_.size() == 1 ? "output_size" : outputs_[0].param + "_size") << "];\n"
      << "//   " << o_.ns << "::" << S << "::forward(in" << (inputs_.size() > 1 ? ", ..." : "") << ", out"
      << (outputs_.size() > 1 ? ", ..." : "") << ");\n"
      << "#pragma once\n\n#include <cmath>\n#include <cstring>\n" << (need_limits_ ? "#include <limits>\n" : "") << "\nnamespace " << o_.ns << " {\n\n";
    h << "namespace weights {\n";
    for (auto& w : weights_) {
        auto n = w.data.num_elements();
        h << "// " << w.comment << "\nalignas(64) inline constexpr float " << w.name << "[" << std::max<std::int64_t>(n, 1) << "] = {";
        const float* d = w.data.data<float>();
        for (std::int64_t i = 0; i < n; ++i) h << (i % 8 ? " " : "\n    ") << float_literal(d[i]) << ",";
        h << "\n};\n";
    }
    h << "}  // namespace weights\n\nnamespace kernels {\n";
    const auto& src = kernel_sources();
    std::set<std::string> written;
    std::vector<std::string> order(kernels_.begin(), kernels_.end());
    std::stable_partition(order.begin(), order.end(), [](const std::string& k) { return k == "f4"; });  // used by others
    for (auto& k : order) {
        if (k.rfind("unary:", 0) == 0) {
            std::string op = k.substr(6), fn = identifier(op);
            std::transform(fn.begin(), fn.end(), fn.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            h << unary_kernel("u_" + fn, unary_expression(op));
        } else if (k.rfind("binary:", 0) == 0) {
            std::string op = k.substr(7);
            std::string fn = identifier(op == "AddV2" || op == "BiasAdd" ? std::string("Add") : op);
            std::transform(fn.begin(), fn.end(), fn.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            if (written.insert("b_" + fn).second) h << binary_kernel("b_" + fn, binary_expression(op));
        } else {
            h << src.at(k);
        }
    }
    h << "}  // namespace kernels\n\nstruct " << S << " {\n";
    if (inputs_.size() == 1) h << "    static constexpr int input_size = " << inputs_[0].size << ";  // " << port_line(inputs_[0]) << "\n";
    if (outputs_.size() == 1) h << "    static constexpr int output_size = " << outputs_[0].size << ";  // " << port_line(outputs_[0]) << "\n";
    if (inputs_.size() > 1) for (auto& p : inputs_) h << "    static constexpr int " << p.param << "_size = " << p.size << ";  // " << port_line(p) << "\n";
    if (outputs_.size() > 1) for (auto& p : outputs_) h << "    static constexpr int " << p.param << "_size = " << p.size << ";  // " << port_line(p) << "\n";
    h << "    static constexpr long weight_floats = " << wf << ";\n"
      << "    static constexpr long arena_floats = " << arena_floats_ << ";\n";
    std::string sig;
    for (auto& p : inputs_) sig += (sig.empty() ? "" : ", ") + std::string("const float (&") + p.param + ")[" + std::to_string(p.size) + "]";
    for (auto& p : outputs_) sig += (sig.empty() ? "" : ", ") + std::string("float (&") + p.param + ")[" + std::to_string(p.size) + "]";
    h << "    /// Runs one sample through the graph.\n    static void forward(" << sig << ");\n};\n\n"
      << "inline void " << S << "::forward(" << sig << ") {\n";
    if (arena_floats_ > 0) h << "    alignas(64) static float arena[" << arena_floats_ << "];\n";
    for (auto& s : steps_) {
        h << "    // " << s.comment << "\n    kernels::" << s.fn << (s.templated ? "<" + s.ints + ">(" : std::string("("));
        for (auto& a : s.args) h << ref_expr(a) << ", ";
        h << (s.out >= 0 ? ref_expr({ref::arena, s.out}) : outputs_[static_cast<std::size_t>(s.out_param)].param)
          << (s.templated ? std::string(");\n") : ", " + s.ints + ");\n");
    }
    h << "}\n\n}  // namespace " << o_.ns << "\n";
    return h.str();
}

inline embedded::embedded_code planner::run() {
    setup_ports();
    fuse();
    allocate();
    for (auto& w : weights_) {
        const float* d = w.data.data<float>();
        for (std::int64_t i = 0; i < w.data.num_elements(); ++i) need_limits_ = need_limits_ || !std::isfinite(d[i]);
    }
    embedded::embedded_code c;
    c.header = emit();
    c.inputs = inputs_;
    c.outputs = outputs_;
    for (auto& w : weights_) c.weight_floats += w.data.num_elements();
    c.arena_floats = arena_floats_;
    for (auto& b : buffers_) c.naive_floats += b.floats;
    c.steps = static_cast<int>(steps_.size());
    c.ops.assign(ops_.begin(), ops_.end());
    return c;
}

/// Throws invalid_argument_error unless `s` is a C++ identifier (or, with `scoped`, a::b).
inline void check_identifier(const std::string& s, bool scoped, const char* what) {
    bool ok = !s.empty();
    std::size_t i = 0;
    while (ok && i < s.size()) {
        auto j = scoped ? s.find("::", i) : std::string::npos;
        std::string part = s.substr(i, j == std::string::npos ? std::string::npos : j - i);
        ok = !part.empty() && !std::isdigit(static_cast<unsigned char>(part[0])) &&
             std::all_of(part.begin(), part.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
        if (j == std::string::npos) break;
        i = j + 2;
    }
    if (!ok) throw invalid_argument_error(graft::detail::cat("embedded codegen: ", what, " '", s, "' is not a C++ identifier"));
}

}  // namespace graft::embedded::detail

namespace graft::embedded {

/// The embedded header of a frozen graph (weights are Consts). Throws unimplemented_error naming
/// the node and op of an op it cannot generate (listing those it can), shape_error for an unknown
/// non-batch dim or shapes that do not fit (naming the node), not_found_error for an input or
/// output not in the graph (listing candidates), invalid_argument_error for non-float32 tensors,
/// no outputs, or a namespace/struct name that is not an identifier.
inline embedded_code generate_embedded(const graft::graph& frozen, const embedded_options& o) {
    graft::embedded::detail::check_identifier(o.ns, true, "namespace");
    graft::embedded::detail::check_identifier(o.struct_name, false, "struct name");
    graft::embedded::detail::planner p(frozen, o);
    return p.run();
}

/// A MetaGraph whose variables take their values from `src` (frozen first, pruned to the
/// outputs). Throws what graft::surgery::freeze throws (missing values, listed) and what the frozen
/// overload throws.
inline embedded_code generate_embedded(const graft::meta_graph& mg, const graft::surgery::value_source& src, const embedded_options& o) {
    auto vars = graft::find_variables(mg);
    if (vars.empty()) return generate_embedded(mg.graph, o);
    std::vector<std::string> outs;
    for (auto& e : graft::embedded::detail::output_endpoints(o.outputs)) outs.push_back(e.str());
    return generate_embedded(graft::surgery::freeze(mg.graph, vars, src, outs), o);
}

/// A MetaGraph + its checkpoint (prefix, directory, SavedModel dir). Throws io_error /
/// format_error when the checkpoint cannot be read, and what the overloads above throw.
inline embedded_code generate_embedded(const graft::meta_graph& mg, const std::string& checkpoint, const embedded_options& o) {
    if (graft::find_variables(mg).empty()) return generate_embedded(mg.graph, o);
    return generate_embedded(mg, graft::surgery::checkpoint_values(checkpoint), o);
}

/// MODEL as a file: a frozen .pb/.pbtxt, a .meta (checkpoint: `checkpoint`, else the prefix beside
/// it) or a SavedModel directory (its variables/variables). Throws invalid_argument_error when the
/// graph has variables and no checkpoint is found, io_error/format_error for unreadable files, and
/// what the overloads above throw.
inline embedded_code generate_embedded_file(const std::string& model, const std::string& checkpoint, embedded_options o) {
    graft::meta_graph mg = graft::tf::load_meta_graph(model);
    if (o.source.empty()) o.source = std::filesystem::path(model).filename().string();
    auto vars = graft::find_variables(mg);
    if (vars.empty()) return generate_embedded(mg.graph, o);
    std::string ckpt = checkpoint.empty() ? graft::tf::checkpoint_beside(model) : checkpoint;
    if (ckpt.empty()) {
        throw graft::invalid_argument_error(graft::detail::cat("embedded codegen: the graph has ", vars.size(), " variables and no checkpoint was found"),
                                     graft::location::in_file(model), "give the checkpoint prefix: --ckpt PREFIX");
    }
    return generate_embedded(mg, graft::surgery::checkpoint_values(ckpt), o);
}

}  // namespace graft::embedded
