// graft/core/error.hpp — one exception hierarchy for everything graft throws.
//
// Every error says what went wrong, where (file + byte offset, node + op type, tensor name) and, when
// graft knows it, what to do about it. Catch `graft::error` for all of them; catch a subclass to
// react to one kind.
#pragma once

#include <cstdint>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace graft {

/// Where an error happened. Every field is optional; `to_string()` prints the ones that are set.
struct location {
    std::string file;                 ///< file path
    std::optional<std::uint64_t> offset;  ///< byte offset in `file`
    std::string node;                 ///< graph node name
    std::string op;                   ///< op type of `node`
    std::string tensor;               ///< tensor / checkpoint key / endpoint name

    /// Shorthands: location::in_file("a.index", 120), location::at_node("dense/MatMul", "MatMul"),
    /// location::at_tensor("w:0").
    static location in_file(std::string f) { location l; l.file = std::move(f); return l; }
    static location in_file(std::string f, std::uint64_t off) {
        location l; l.file = std::move(f); l.offset = off; return l;
    }
    static location at_node(std::string n, std::string op = {}) {
        location l; l.node = std::move(n); l.op = std::move(op); return l;
    }
    static location at_tensor(std::string t) { location l; l.tensor = std::move(t); return l; }
    /// This location with the tensor name set (keeps the others).
    [[nodiscard]] location with_tensor(std::string t) const { location l = *this; l.tensor = std::move(t); return l; }

    [[nodiscard]] bool empty() const {
        return file.empty() && !offset && node.empty() && op.empty() && tensor.empty();
    }
    [[nodiscard]] std::string to_string() const {
        std::ostringstream os;
        const char* sep = "";
        if (!file.empty()) { os << sep << "file '" << file << "'"; sep = ", "; }
        if (offset) { os << sep << "offset " << *offset; sep = ", "; }
        if (!node.empty()) {
            os << sep << "node '" << node << "'";
            if (!op.empty()) os << " (op " << op << ")";
            sep = ", ";
        } else if (!op.empty()) {
            os << sep << "op " << op; sep = ", ";
        }
        if (!tensor.empty()) { os << sep << "tensor '" << tensor << "'"; }
        return os.str();
    }
};

/// Base of every exception graft throws. what() = "<message> [at <location>]. <hint>".
class error : public std::runtime_error {
public:
    explicit error(std::string message, location where = {}, std::string hint = {})
        : std::runtime_error(compose(message, where, hint)),
          message_(std::move(message)), where_(std::move(where)), hint_(std::move(hint)) {}

    [[nodiscard]] const std::string& message() const noexcept { return message_; }
    [[nodiscard]] const location& where() const noexcept { return where_; }
    [[nodiscard]] const std::string& hint() const noexcept { return hint_; }

private:
    static std::string compose(const std::string& m, const location& w, const std::string& h) {
        std::string s = m;
        if (!w.empty()) s += " [at " + w.to_string() + "]";
        if (!h.empty()) s += ". " + h;
        return printable(s);
    }
public:
    /// Names from hostile files reach messages: control bytes (but newline and tab), DEL and bytes
    /// that are not valid UTF-8 are written as \xNN, so what() is always whole, printable UTF-8.
    static std::string printable(const std::string& s) {
        std::string o;
        o.reserve(s.size());
        auto hex = [&o](unsigned char c) {
            static constexpr char digits[] = "0123456789ABCDEF";
            o += "\\x";
            o += digits[c >> 4];
            o += digits[c & 15];
        };
        for (std::size_t i = 0; i < s.size();) {
            const auto c = static_cast<unsigned char>(s[i]);
            if (c < 0x80) {
                if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) hex(c); else o += static_cast<char>(c);
                ++i;
                continue;
            }
            // A UTF-8 sequence: lead byte, its length, continuation bytes, no overlong or surrogate form.
            std::size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
            bool ok = n != 0 && i + n <= s.size();
            for (std::size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
            if (ok && n >= 3) {
                const auto c1 = static_cast<unsigned char>(s[i + 1]);
                if (c == 0xE0 && c1 < 0xA0) ok = false;          // overlong
                if (c == 0xED && c1 >= 0xA0) ok = false;         // surrogates
                if (c == 0xF0 && c1 < 0x90) ok = false;          // overlong
                if (c == 0xF4 && c1 >= 0x90) ok = false;         // past U+10FFFF
            }
            if (!ok) {
                hex(c);
                ++i;
                continue;
            }
            o.append(s, i, n);
            i += n;
        }
        return o;
    }

private:
    std::string message_;
    location where_;
    std::string hint_;
};

/// A file could not be opened, read, written or renamed.
class io_error : public error { using error::error; };
/// Bytes that do not follow the format: truncated, corrupt (crc), bad magic, bad protobuf.
class format_error : public error { using error::error; };
/// A name (tensor, node, key, signature, port) that is not there.
class not_found_error : public error { using error::error; };
/// Wrong dtype, shape or argument given by the caller or found in a graph.
class invalid_argument_error : public error { using error::error; };
/// Shapes that do not fit together (broadcasting, reshape, matmul inner dims, ...).
class shape_error : public invalid_argument_error { using invalid_argument_error::invalid_argument_error; };
/// A graph that is not well formed: missing input, duplicate name, cycle, attr of the wrong type.
class graph_error : public error { using error::error; };
/// An op, dtype or feature graft does not support (yet); the hint says how to add it.
class unimplemented_error : public error { using error::error; };
/// A limit of graft::load_limits (or another named option) was reached: the input asks for more
/// than the limit allows; the hint names the option that raises it.
class limit_error : public error { using error::error; };
/// A failure reported by a device runtime (CUDA, cuBLAS, cuDNN).
class device_error : public error { using error::error; };

namespace detail {
/// Streams all arguments into one string: detail::cat("expected ", n, " got ", m).
template <class... Args>
std::string cat(Args&&... args) {
    std::ostringstream os;
    (os << ... << std::forward<Args>(args));
    return os.str();
}
}  // namespace detail

}  // namespace graft
