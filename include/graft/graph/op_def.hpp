// graft/graph/op_def.hpp — what an op type looks like from outside (TF OpDef): its input and output
// arguments and attrs, and how many outputs of which dtypes a node of it has.
//
//   auto d = graft::op_def::parse(
//       "Split(split_dim: int32, value: T) -> (output: num_split * T); num_split: int >= 1; T: type");
//   d.outputs[0].number_attr == "num_split";
//
// Spec syntax (one op per string, like TF's REGISTER_OP written on one line):
//   Name(arg, ...) [-> (arg, ...)] {; attr} {; flag}
//   arg  = name ": " [N "*"] type-or-attr | name ": Ref(" ... ")"      (N = an int attr)
//   attr = name ": " type [">=" min] ["=" default]   type = type|int|float|bool|string|shape|tensor|func|list(...)
//   flag = stateful | commutative | aggregate                       (TF's OpDef flags)
//        | nograd | grad_missing | import_only | shape_preserving | random | fusable_activation
//        | run_early | run_late
//                                                                   (graft's traits, op_traits below)
// A type-or-attr that names a declared attr of type `type` / `list(type)` is a type_attr /
// type_list_attr; otherwise it is a dtype name (float, int32, string, resource, ...).
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graft/graph/attr.hpp"

namespace graft {

/// One input or output argument (OpDef.ArgDef).
struct arg_def {
    std::string name;
    graft::dtype type = dtype::invalid;  ///< fixed dtype, or invalid when type_attr/type_list_attr say it
    std::string type_attr;               ///< attr of type "type" giving the dtype
    std::string number_attr;             ///< attr of type "int": this arg is that many tensors
    std::string type_list_attr;          ///< attr of type "list(type)": one tensor per listed dtype
    bool is_ref = false;                 ///< TF1 reference edge (dtype + 100)
    std::string description;
    std::string extra;  ///< serialized ArgDef fields graft does not model (handle_data, full type), verbatim
    friend bool operator==(const arg_def&, const arg_def&) = default;
};

/// One attr an op declares (OpDef.AttrDef).
struct attr_def {
    std::string name;
    std::string type;  ///< "type", "int", "list(type)", ...
    std::optional<attr_value> default_value;
    bool has_minimum = false;
    std::int64_t minimum = 0;
    std::optional<attr_value> allowed_values;
    std::string description;
    friend bool operator==(const attr_def&, const attr_def&) = default;
};

/// What graft's passes know about an op beyond TF's OpDef, written as flags on its spec line so
/// every pass reads one table (never written to a GraphDef; not part of same_signature).
struct op_traits {
    /// Not differentiable: gradients stop here (tf.no_gradient); the consistency test asks every
    /// op for a gradient rule or this mark.
    bool nograd = false;
    /// Differentiable in TF, but graft has no rule yet: gradients() through it is an error naming
    /// the node (an explicit gap, listed in docs/OPS.md, instead of a silently missing rule).
    bool grad_missing = false;
    /// graft imports, edits and writes graphs holding it but has no kernel: `graft run` refuses
    /// it before running (an explicit gap, listed in docs/OPS.md).
    bool import_only = false;
    /// Output 0 has the shape of input 0 (surgery's static shapes follow it).
    bool shape_preserving = false;
    /// Draws random numbers from its seed attrs (clone reseeds copies of initializers).
    bool random = false;
    /// An activation the executor fuses after MatMul/Conv2D + BiasAdd (_FusedMatMul/_FusedConv2D).
    bool fusable_activation = false;
    /// The executor's order: among the steps ready at once, run this one before (run_early) or
    /// after (run_late) the others. The data-parallel gradient allreduce starts as soon as its
    /// gradient exists (early) and is waited for only when nothing else can run (late), so the
    /// transfer overlaps the rest of the backward pass.
    bool run_early = false;
    bool run_late = false;
    friend bool operator==(const op_traits&, const op_traits&) = default;
};

/// An op type (OpDef).
struct op_def {
    std::string name;
    std::vector<arg_def> inputs;
    std::vector<arg_def> outputs;
    std::vector<attr_def> attrs;
    std::vector<std::string> control_outputs;
    std::string summary, description;
    bool is_commutative = false, is_aggregate = false, is_stateful = false;
    bool allows_uninitialized_input = false, is_distributed_communication = false;
    op_traits traits;  ///< graft's own facts (spec flags); a decoded OpDef has none
    std::string extra;  ///< serialized OpDef fields graft does not model (deprecation, ...), verbatim

    /// The attr named `n`, or nullptr. Never throws.
    [[nodiscard]] const attr_def* find_attr(std::string_view n) const {
        for (auto& a : attrs) if (a.name == n) return &a;
        return nullptr;
    }
    /// Parses a one-line spec (syntax above). Throws invalid_argument_error naming the spec.
    static op_def parse(std::string_view spec);
    friend bool operator==(const op_def&, const op_def&) = default;
};

/// True when `a` and `b` give graft the same answers: the same input and output args (name, dtype,
/// type/number/type-list attr, ref-ness), the same attrs by name with equal types and defaults, and
/// the same stateful / uninitialized-input flags. Docs, allowed values and minimums (which graft
/// only carries to write them back) are not compared. Never throws.
inline bool same_signature(const op_def& a, const op_def& b) {
    auto same_args = [](const std::vector<arg_def>& x, const std::vector<arg_def>& y) {
        return std::equal(x.begin(), x.end(), y.begin(), y.end(), [](const arg_def& p, const arg_def& q) {
            return p.name == q.name && p.type == q.type && p.type_attr == q.type_attr &&
                   p.number_attr == q.number_attr && p.type_list_attr == q.type_list_attr && p.is_ref == q.is_ref;
        });
    };
    if (a.name != b.name || a.is_stateful != b.is_stateful ||
        a.allows_uninitialized_input != b.allows_uninitialized_input || !same_args(a.inputs, b.inputs) ||
        !same_args(a.outputs, b.outputs) || a.attrs.size() != b.attrs.size()) {
        return false;
    }
    for (auto& x : a.attrs) {
        const attr_def* y = b.find_attr(x.name);
        if (!y || y->type != x.type || y->default_value != x.default_value) return false;
    }
    return true;
}

namespace detail {

struct spec_lexer {
    std::string_view s;
    std::string_view whole;
    std::size_t p = 0;

    [[noreturn]] void fail(const std::string& what) const {
        throw invalid_argument_error(detail::cat("op spec: ", what, " at column ", p), {},
                                     detail::cat("in spec \"", whole, "\""));
    }
    void ws() { while (p < s.size() && (s[p] == ' ' || s[p] == '\t' || s[p] == '\n')) ++p; }
    bool eat(std::string_view t) {
        ws();
        if (s.substr(p, t.size()) == t) { p += t.size(); return true; }
        return false;
    }
    void expect(std::string_view t) { if (!eat(t)) fail(detail::cat("expected '", t, "'")); }
    std::string ident() {
        ws();
        auto b = p;
        while (p < s.size() && (std::isalnum(static_cast<unsigned char>(s[p])) || s[p] == '_')) ++p;
        if (b == p) fail("expected a name");
        return std::string(s.substr(b, p - b));
    }
    /// Text up to the next ';' at nesting depth 0 (or end), trimmed.
    std::string until_semicolon() {
        ws();
        auto b = p;
        int depth = 0;
        bool quoted = false;
        while (p < s.size()) {
            char c = s[p];
            if (c == '"') quoted = !quoted;
            if (!quoted) {
                if (c == '(' || c == '[') ++depth;
                if (c == ')' || c == ']') --depth;
                if (c == ';' && depth == 0) break;
            }
            ++p;
        }
        auto r = s.substr(b, p - b);
        while (!r.empty() && r.back() == ' ') r.remove_suffix(1);
        return std::string(r);
    }
};

/// Parses an attr default written in a spec for an attr of OpDef type `type`.
inline attr_value parse_spec_default(const std::string& type, std::string text, const spec_lexer& lx) {
    auto trim = [](std::string t) {
        while (!t.empty() && t.front() == ' ') t.erase(t.begin());
        while (!t.empty() && t.back() == ' ') t.pop_back();
        return t;
    };
    text = trim(text);
    auto unquote = [&](std::string t) {
        t = trim(t);
        if (t.size() < 2 || t.front() != '"' || t.back() != '"') lx.fail("expected a quoted string default");
        return t.substr(1, t.size() - 2);
    };
    auto split_list = [&](std::string t) {
        t = trim(t);
        if (t.size() < 2 || t.front() != '[' || t.back() != ']') lx.fail("expected a [list] default");
        std::vector<std::string> items;
        std::string cur;
        for (char c : t.substr(1, t.size() - 2)) {
            if (c == ',') { items.push_back(trim(cur)); cur.clear(); }
            else cur += c;
        }
        if (!trim(cur).empty()) items.push_back(trim(cur));
        return items;
    };
    try {
        if (type == "type") return parse_dtype(text);
        if (type == "int") return static_cast<std::int64_t>(std::stoll(text));
        if (type == "float") return std::stof(text);
        if (type == "bool") return text == "true";
        if (type == "string") return unquote(text);
        if (type == "shape") return shape::parse(text);
        if (type.rfind("list(", 0) == 0) {
            auto items = split_list(text);
            auto elem = type.substr(5, type.size() - 6);
            if (items.empty()) return attr_value::empty_list();
            if (elem == "int") {
                std::vector<std::int64_t> v;
                for (auto& i : items) v.push_back(std::stoll(i));
                return attr_value::list_of(std::move(v));
            }
            if (elem == "type") {
                std::vector<graft::dtype> v;
                for (auto& i : items) v.push_back(parse_dtype(i));
                return attr_value::list_of(std::move(v));
            }
            if (elem == "string") {
                std::vector<std::string> v;
                for (auto& i : items) v.push_back(unquote(i));
                return attr_value::list_of(std::move(v));
            }
            if (elem == "float") {
                std::vector<float> v;
                for (auto& i : items) v.push_back(std::stof(i));
                return attr_value::list_of(std::move(v));
            }
        }
    } catch (const invalid_argument_error&) {
        throw;
    } catch (const std::exception& e) {
        lx.fail(detail::cat("bad default '", text, "' for ", type, ": ", e.what()));
    }
    lx.fail(detail::cat("defaults of type ", type, " are not supported in specs"));
}

}  // namespace detail

inline op_def op_def::parse(std::string_view spec) {
    detail::spec_lexer lx{spec, spec};
    op_def d;
    d.name = lx.ident();
    struct raw_arg { std::string name, count, type; bool ref; };
    auto parse_args = [&](std::vector<raw_arg>& out) {
        lx.expect("(");
        if (lx.eat(")")) return;
        do {
            raw_arg a;
            a.name = lx.ident();
            lx.expect(":");
            a.ref = lx.eat("Ref(");
            a.type = lx.ident();
            if (!a.ref && lx.eat("*")) {
                a.count = a.type;
                a.ref = lx.eat("Ref(");
                a.type = lx.ident();
            }
            if (a.ref) lx.expect(")");
            out.push_back(std::move(a));
        } while (lx.eat(","));
        lx.expect(")");
    };
    std::vector<raw_arg> ins, outs;
    parse_args(ins);
    if (lx.eat("->")) parse_args(outs);
    while (lx.eat(";")) {
        auto name = lx.ident();
        if (!lx.eat(":")) {
            if (name == "stateful") d.is_stateful = true;
            else if (name == "commutative") d.is_commutative = true;
            else if (name == "aggregate") d.is_aggregate = true;
            else if (name == "nograd") d.traits.nograd = true;
            else if (name == "grad_missing") d.traits.grad_missing = true;
            else if (name == "import_only") d.traits.import_only = true;
            else if (name == "shape_preserving") d.traits.shape_preserving = true;
            else if (name == "random") d.traits.random = true;
            else if (name == "fusable_activation") d.traits.fusable_activation = true;
            else if (name == "run_early") d.traits.run_early = true;
            else if (name == "run_late") d.traits.run_late = true;
            else lx.fail(detail::cat("unknown flag '", name, "'"));
            continue;
        }
        attr_def a;
        a.name = name;
        lx.ws();
        a.type = lx.ident();
        if (a.type == "list") {
            lx.expect("(");
            a.type = "list(" + lx.ident() + ")";
            lx.expect(")");
        }
        if (lx.eat(">=")) {
            a.has_minimum = true;
            a.minimum = std::stoll(lx.ident());
        }
        if (lx.eat("=")) a.default_value = detail::parse_spec_default(a.type, lx.until_semicolon(), lx);
        d.attrs.push_back(std::move(a));
    }
    lx.ws();
    if (lx.p != spec.size()) lx.fail("unexpected text");
    auto resolve = [&](const raw_arg& r) {
        arg_def a;
        a.name = r.name;
        a.is_ref = r.ref;
        a.number_attr = r.count;
        if (!r.count.empty()) {
            auto* n = d.find_attr(r.count);
            if (!n || n->type != "int") lx.fail(detail::cat("'", r.count, "' must be a declared int attr"));
        }
        if (auto* t = d.find_attr(r.type)) {
            if (t->type == "type") a.type_attr = r.type;
            else if (t->type == "list(type)") a.type_list_attr = r.type;
            else lx.fail(detail::cat("attr '", r.type, "' used as a dtype must be type or list(type)"));
        } else {
            try {
                a.type = parse_dtype(r.type);
            } catch (const invalid_argument_error&) {
                lx.fail(detail::cat("'", r.type, "' is neither a declared attr nor a dtype name"));
            }
        }
        return a;
    };
    for (auto& r : ins) d.inputs.push_back(resolve(r));
    for (auto& r : outs) d.outputs.push_back(resolve(r));
    return d;
}

}  // namespace graft
