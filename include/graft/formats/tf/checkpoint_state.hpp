// graft/formats/tf/checkpoint_state.hpp — the `checkpoint` file TF keeps beside its checkpoints (a
// CheckpointState in protobuf text format) and latest_checkpoint().
//
//   model_checkpoint_path: "ckpt-3"
//   all_model_checkpoint_paths: "ckpt-2"
//   all_model_checkpoint_paths: "ckpt-3"
//   all_model_checkpoint_timestamps: 1700000000.5
//
//   std::optional<std::string> p = graft::tf::latest_checkpoint("/train");   // "/train/ckpt-3"
//   graft::tf::write_checkpoint_state("/train", state);                        // atomic
#pragma once

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/io.hpp"
#include "graft/formats/tf/checkpoint_v1.hpp"

namespace graft::tf {

struct checkpoint_state {
    std::string model_checkpoint_path;                   ///< 1: the latest prefix
    std::vector<std::string> all_model_checkpoint_paths;  ///< 2: kept prefixes, oldest first
    std::vector<double> all_model_checkpoint_timestamps;  ///< 3: Unix seconds, one per path
    double last_preserved_timestamp = 0;                  ///< 4
    friend bool operator==(const checkpoint_state&, const checkpoint_state&) = default;
};

namespace detail {

class text_lexer {
public:
    text_lexer(std::string_view s, std::string file) : s_(s), file_(std::move(file)) {}

    void skip_space() {
        while (i_ < s_.size()) {
            char c = s_[i_];
            if (c == '#') { while (i_ < s_.size() && s_[i_] != '\n') ++i_; }
            else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') ++i_;
            else break;
        }
    }
    bool at_end() { skip_space(); return i_ >= s_.size(); }
    bool try_char(char c) {
        skip_space();
        if (i_ < s_.size() && s_[i_] == c) { ++i_; return true; }
        return false;
    }
    std::string identifier() {
        skip_space();
        std::size_t b = i_;
        while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
        if (b == i_) fail("expected a field name");
        return std::string(s_.substr(b, i_ - b));
    }
    /// One or more adjacent quoted strings, unescaped and concatenated.
    std::string string_value() {
        skip_space();
        if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\'')) fail("expected a quoted string");
        std::string out;
        while (i_ < s_.size() && (s_[i_] == '"' || s_[i_] == '\'')) {
            const char q = s_[i_++];
            for (;;) {
                if (i_ >= s_.size() || s_[i_] == '\n') fail("unterminated string");
                char c = s_[i_++];
                if (c == q) break;
                if (c != '\\') { out.push_back(c); continue; }
                escape(out);
            }
            skip_space();
        }
        return out;
    }
    double number() {
        skip_space();
        std::size_t b = i_;
        while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' || s_[i_] == '-' || s_[i_] == '+'))
            ++i_;
        std::string tok(s_.substr(b, i_ - b));
        std::string low;
        for (char c : tok) low.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
        bool neg = !low.empty() && low[0] == '-';
        std::string body = neg || (!low.empty() && low[0] == '+') ? low.substr(1) : low;
        if (body == "inf" || body == "infinity") return neg ? -INFINITY : INFINITY;
        if (body == "nan") return NAN;
        if (!body.empty() && body.back() == 'f') body.pop_back();  // 1.5f
        double v = 0;
        auto r = std::from_chars(body.data(), body.data() + body.size(), v);
        if (body.empty() || r.ec != std::errc() || r.ptr != body.data() + body.size()) fail("expected a number, got '" + tok + "'");
        return neg ? -v : v;
    }
    [[noreturn]] void fail(const std::string& msg) const {
        throw format_error("checkpoint state: " + msg, location::in_file(file_, i_),
                           "the file should hold lines like: model_checkpoint_path: \"model.ckpt-1000\"");
    }

private:
    void escape(std::string& out) {
        if (i_ >= s_.size()) fail("dangling backslash");
        char c = s_[i_++];
        switch (c) {
            case 'n': out.push_back('\n'); return;
            case 't': out.push_back('\t'); return;
            case 'r': out.push_back('\r'); return;
            case 'a': out.push_back('\a'); return;
            case 'b': out.push_back('\b'); return;
            case 'f': out.push_back('\f'); return;
            case 'v': out.push_back('\v'); return;
            case '\\': case '\'': case '"': case '?': out.push_back(c); return;
            case 'x': case 'X': {
                unsigned v = 0;
                int n = 0;
                while (n < 2 && i_ < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[i_]))) v = v * 16 + hexval(s_[i_++]), ++n;
                if (!n) fail("bad \\x escape");
                out.push_back(static_cast<char>(v));
                return;
            }
            case 'u': case 'U': {
                const int want = c == 'u' ? 4 : 8;
                std::uint32_t cp = 0;
                for (int k = 0; k < want; ++k) {
                    if (i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_]))) fail("bad \\u escape");
                    cp = cp * 16 + hexval(s_[i_++]);
                }
                utf8(out, cp);
                return;
            }
            default:
                if (c >= '0' && c <= '7') {
                    unsigned v = static_cast<unsigned>(c - '0');
                    for (int n = 1; n < 3 && i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '7'; ++n) v = v * 8 + static_cast<unsigned>(s_[i_++] - '0');
                    out.push_back(static_cast<char>(v & 0xFF));
                    return;
                }
                fail(std::string("unknown escape \\") + c);
        }
    }
    static unsigned hexval(char c) {
        return std::isdigit(static_cast<unsigned char>(c)) ? static_cast<unsigned>(c - '0')
                                                           : static_cast<unsigned>(std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
    }
    void utf8(std::string& out, std::uint32_t cp) {
        if (cp > 0x10FFFF) fail("code point out of range");
        if (cp < 0x80) out.push_back(static_cast<char>(cp));
        else if (cp < 0x800) { out.push_back(static_cast<char>(0xC0 | (cp >> 6))); out.push_back(static_cast<char>(0x80 | (cp & 0x3F))); }
        else if (cp < 0x10000) {
            out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else {
            out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        }
    }
    std::string_view s_;
    std::string file_;
    std::size_t i_ = 0;
};

/// Python text_format's C escaping (non-ASCII bytes as octal). Never throws (except bad_alloc).
inline std::string c_escape(std::string_view s) {
    std::string out;
    for (unsigned char c : s) {
        switch (c) {
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '"': out += "\\\""; break;
            case '\'': out += "\\'"; break;
            case '\\': out += "\\\\"; break;
            default:
                if (c < 0x20 || c >= 0x7F) {
                    char b[5];
                    std::snprintf(b, sizeof b, "\\%03o", c);
                    out += b;
                } else {
                    out.push_back(static_cast<char>(c));
                }
        }
    }
    return out;
}

/// Python's repr of a float: shortest round-trip digits, fixed notation for exponents in [-4, 16)
/// (with ".0" when integral), else like "1e+16". Never throws (except bad_alloc).
inline std::string format_double(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
    char b[64];
    auto r = std::to_chars(b, b + sizeof b, v, std::chars_format::scientific);
    std::string sci(b, r.ptr);  // "-1.2345e+09"
    std::string sign;
    if (sci[0] == '-') { sign = "-"; sci.erase(0, 1); }
    auto e = sci.find('e');
    int exp = std::stoi(sci.substr(e + 1));
    std::string digits = sci.substr(0, e);
    if (digits.size() > 1) digits.erase(1, 1);  // drop the '.'
    if (exp >= -4 && exp < 16) {
        std::string out;
        if (exp < 0) {
            out = "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
        } else if (static_cast<std::size_t>(exp) + 1 >= digits.size()) {
            out = digits + std::string(static_cast<std::size_t>(exp) + 1 - digits.size(), '0') + ".0";
        } else {
            out = digits.substr(0, static_cast<std::size_t>(exp) + 1) + "." + digits.substr(static_cast<std::size_t>(exp) + 1);
        }
        return sign + out;
    }
    std::string mant = digits.size() > 1 ? digits.substr(0, 1) + "." + digits.substr(1) : digits;
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    return sign + mant + eb;
}

}  // namespace detail

/// Parses CheckpointState text (comments, either quote style, adjacent strings, C escapes, optional
/// ',' or ';' separators). `file` names the source in errors. Throws format_error on syntax errors and
/// unknown fields.
inline checkpoint_state parse_checkpoint_state(std::string_view text, const std::string& file = "checkpoint") {
    checkpoint_state st;
    detail::text_lexer lx(text, file);
    while (!lx.at_end()) {
        std::string field = lx.identifier();
        if (!lx.try_char(':')) lx.fail("expected ':' after " + field);
        if (field == "model_checkpoint_path") st.model_checkpoint_path = lx.string_value();
        else if (field == "all_model_checkpoint_paths") st.all_model_checkpoint_paths.push_back(lx.string_value());
        else if (field == "all_model_checkpoint_timestamps") st.all_model_checkpoint_timestamps.push_back(lx.number());
        else if (field == "last_preserved_timestamp") st.last_preserved_timestamp = lx.number();
        else lx.fail("unknown field '" + field + "'");
        if (!lx.try_char(',')) lx.try_char(';');
    }
    return st;
}

/// The text TF's Python writes for `st` (text_format.MessageToString). Never throws (except bad_alloc).
inline std::string format_checkpoint_state(const checkpoint_state& st) {
    std::string out;
    if (!st.model_checkpoint_path.empty())
        out += "model_checkpoint_path: \"" + detail::c_escape(st.model_checkpoint_path) + "\"\n";
    for (const auto& p : st.all_model_checkpoint_paths) out += "all_model_checkpoint_paths: \"" + detail::c_escape(p) + "\"\n";
    for (double t : st.all_model_checkpoint_timestamps) out += "all_model_checkpoint_timestamps: " + detail::format_double(t) + "\n";
    if (st.last_preserved_timestamp != 0) out += "last_preserved_timestamp: " + detail::format_double(st.last_preserved_timestamp) + "\n";
    return out;
}

/// The state in `<dir>/<filename>` with relative paths joined to `dir` (like TF's get_checkpoint_state);
/// nullopt when the file does not exist. Throws format_error (bad syntax, empty model_checkpoint_path),
/// io_error (unreadable).
inline std::optional<checkpoint_state> read_checkpoint_state(const std::string& dir, const std::string& filename = "checkpoint") {
    namespace fs = std::filesystem;
    const fs::path file = fs::path(dir) / filename;
    std::error_code ec;
    if (!fs::exists(file, ec)) return std::nullopt;
    checkpoint_state st = parse_checkpoint_state(read_file(file.string()), file.string());
    if (st.model_checkpoint_path.empty()) {
        throw format_error("checkpoint state has an empty model_checkpoint_path", location::in_file(file.string()));
    }
    auto join = [&](std::string& p) { if (!fs::path(p).is_absolute()) p = (fs::path(dir) / p).string(); };
    join(st.model_checkpoint_path);
    for (auto& p : st.all_model_checkpoint_paths) join(p);
    return st;
}

/// Writes `<dir>/<filename>` atomically (temp file, fsync, rename); paths are written as given. Throws io_error.
inline void write_checkpoint_state(const std::string& dir, const checkpoint_state& st, const std::string& filename = "checkpoint") {
    write_file_atomic((std::filesystem::path(dir) / filename).string(), format_checkpoint_state(st));
}

/// The latest checkpoint prefix recorded in `<dir>/<filename>`, if its `<p>.index` (V2) or `<p>` (V1, a
/// file or a pattern such as `model-?????-of-00002`) exists; nullopt otherwise — also for a missing or unparsable state file, as TF does. Never throws
/// (except bad_alloc).
inline std::optional<std::string> latest_checkpoint(const std::string& dir, const std::string& filename = "checkpoint") {
    namespace fs = std::filesystem;
    try {
        auto st = read_checkpoint_state(dir, filename);
        if (!st) return std::nullopt;
        std::error_code ec;
        const std::string& p = st->model_checkpoint_path;
        if (fs::exists(p + ".index", ec) || !v1_files(p).empty()) return p;
    } catch (const graft::error&) {
    }
    return std::nullopt;
}

}  // namespace graft::tf
