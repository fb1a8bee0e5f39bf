// graft/core/compact_string.hpp — a string that costs one pointer while empty.
//
//   graft::compact_string d;          // sizeof(d) == sizeof(void*), no allocation
//   d = "/device:GPU:0";              // one allocation holding the size and the bytes
//   std::string_view v = d;  d.empty();  d == "/device:GPU:0";  d.str();
//
// For fields that are empty on almost every object but must be kept when set: a node's device and
// its unmodelled NodeDef bytes. A std::string spends 32 bytes on each of them even when empty; a
// graph of 100k nodes pays 6 MB for two such fields. Holds any bytes (embedded NULs included).
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <utility>

namespace graft {

class compact_string {
public:
    compact_string() noexcept = default;
    compact_string(std::string_view s) { assign(s); }                      // NOLINT: implicit by design
    compact_string(const std::string& s) { assign(std::string_view(s)); }  // NOLINT
    compact_string(const char* s) { assign(std::string_view(s)); }         // NOLINT
    compact_string(const compact_string& o) { assign(o.view()); }
    compact_string(compact_string&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
    compact_string& operator=(const compact_string& o) {
        if (this != &o) assign(o.view());
        return *this;
    }
    compact_string& operator=(compact_string&& o) noexcept {
        if (this != &o) {
            clear();
            p_ = std::exchange(o.p_, nullptr);
        }
        return *this;
    }
    compact_string& operator=(std::string_view s) { assign(s); return *this; }
    compact_string& operator=(const std::string& s) { assign(std::string_view(s)); return *this; }
    compact_string& operator=(const char* s) { assign(std::string_view(s)); return *this; }
    ~compact_string() { clear(); }

    /// Replaces the contents (empty `s` frees the storage). Never throws (except bad_alloc).
    void assign(std::string_view s) {
        char* p = nullptr;
        if (!s.empty()) {
            const std::size_t n = s.size();
            p = static_cast<char*>(::operator new(sizeof(std::size_t) + n + 1));
            std::memcpy(p, &n, sizeof(std::size_t));  // header: the size, then the bytes and a NUL
            std::memcpy(p + sizeof(std::size_t), s.data(), s.size());
            p[sizeof(std::size_t) + s.size()] = '\0';
        }
        clear();
        p_ = p;
    }
    void clear() noexcept {
        ::operator delete(p_);
        p_ = nullptr;
    }

    [[nodiscard]] bool empty() const noexcept { return p_ == nullptr; }
    [[nodiscard]] std::size_t size() const noexcept {
        std::size_t n = 0;
        if (p_) std::memcpy(&n, p_, sizeof(std::size_t));
        return n;
    }
    /// The bytes, NUL-terminated ("" when empty). Never throws.
    [[nodiscard]] const char* c_str() const noexcept { return p_ ? p_ + sizeof(std::size_t) : ""; }
    [[nodiscard]] const char* data() const noexcept { return c_str(); }
    [[nodiscard]] std::string_view view() const noexcept { return {c_str(), size()}; }
    operator std::string_view() const noexcept { return view(); }  // NOLINT: implicit by design
    [[nodiscard]] std::string str() const { return std::string(view()); }

    friend bool operator==(const compact_string& a, const compact_string& b) noexcept { return a.view() == b.view(); }
    friend bool operator==(const compact_string& a, std::string_view b) noexcept { return a.view() == b; }
    friend bool operator==(const compact_string& a, const char* b) noexcept { return a.view() == b; }
    friend bool operator==(const compact_string& a, const std::string& b) noexcept { return a.view() == b; }

private:
    char* p_ = nullptr;
};

}  // namespace graft
