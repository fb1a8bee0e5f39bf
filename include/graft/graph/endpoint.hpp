// graft/graph/endpoint.hpp — one output of one node: TensorFlow's "name:index".
//
//   auto e = graft::endpoint::parse("dense/MatMul:1");   // {node "dense/MatMul", index 1}
//   e.str() == "dense/MatMul:1";  graft::endpoint{"x", 0}.input_str() == "x";
//
// Inside function bodies (FunctionDef) TensorFlow writes inputs as "node:output_arg:i"; graft keeps
// those as an endpoint whose `node` is "node:output_arg" (see split_function_ref) so they round-trip.
#pragma once

#include <charconv>
#include <compare>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "graft/core/error.hpp"

namespace graft {

struct endpoint {
    std::string node;
    int index = 0;

    /// Parses "n" (index 0) or "n:2". Throws invalid_argument_error for "", "^n" or a bad index.
    static endpoint parse(std::string_view text) {
        if (text.empty()) throw invalid_argument_error("empty tensor name", {}, "write a name like \"x\" or \"x:1\"");
        if (text.front() == '^') {
            throw invalid_argument_error(detail::cat("'", text, "' is a control input, not a tensor"),
                                         location::at_tensor(std::string(text)),
                                         "control inputs go in node::control_inputs without the '^'");
        }
        endpoint e;
        if (!try_split(text, e)) {
            throw invalid_argument_error(detail::cat("bad tensor name '", text, "'"),
                                         location::at_tensor(std::string(text)),
                                         "write \"node\" or \"node:index\" with a non-negative index");
        }
        return e;
    }
    /// Splits "n:k" at the last ':' when k is a decimal number; otherwise the whole text is the node.
    /// Returns false for an index that overflows int. Never throws (except bad_alloc).
    static bool try_split(std::string_view text, endpoint& out) {
        std::string_view node;
        bool ok = split_view(text, node, out.index);
        out.node = std::string(node);
        return ok;
    }
    /// try_split without copying: `node` views `text`. Never throws.
    static bool split_view(std::string_view text, std::string_view& node, int& index) noexcept {
        auto colon = text.rfind(':');
        if (colon != std::string_view::npos && colon + 1 < text.size()) {
            auto digits = text.substr(colon + 1);
            bool all_digits = true;
            for (char c : digits) all_digits = all_digits && c >= '0' && c <= '9';
            if (all_digits) {
                int v = 0;
                auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
                if (ec != std::errc() || p != digits.data() + digits.size()) return false;
                node = text.substr(0, colon);
                index = v;
                return !node.empty();
            }
        }
        node = text;
        index = 0;
        return true;
    }

    /// The tensor name: "n:0", "n:2". Never throws (except bad_alloc).
    [[nodiscard]] std::string str() const { return node + ":" + std::to_string(index); }
    /// The NodeDef input spelling: "n" for index 0 (unless the node part itself holds a ':', as in
    /// function bodies), "n:2" otherwise. Never throws (except bad_alloc).
    [[nodiscard]] std::string input_str() const {
        if (index == 0 && node.find(':') == std::string::npos) return node;
        return str();
    }

    friend bool operator==(const endpoint&, const endpoint&) = default;
    friend auto operator<=>(const endpoint&, const endpoint&) = default;
};

/// A function-body input "node:output_arg:i" split into its parts (output_arg empty for "arg" or
/// "node:i").
struct function_ref {
    std::string node;
    std::string output_arg;
    int index = 0;
};

/// Splits an endpoint read from a function body. Never throws (except bad_alloc).
inline function_ref split_function_ref(const endpoint& e) {
    function_ref r;
    auto colon = e.node.find(':');
    if (colon == std::string::npos) {
        r.node = e.node;
    } else {
        r.node = e.node.substr(0, colon);
        r.output_arg = e.node.substr(colon + 1);
    }
    r.index = e.index;
    return r;
}

}  // namespace graft

template <>
struct std::hash<graft::endpoint> {
    std::size_t operator()(const graft::endpoint& e) const noexcept {
        return std::hash<std::string>{}(e.node) * 31u + static_cast<std::size_t>(e.index);
    }
};
