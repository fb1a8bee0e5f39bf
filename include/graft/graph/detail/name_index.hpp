// graft/graph/detail/name_index.hpp — internal: an open-addressing hash table from a node's name to
// its position in the graph's node vector. 8-byte slots (32-bit hash tag + 32-bit position), linear
// probing from the tag's low bits, power-of-two capacity, load factor <= 1/2, backward-shift
// deletion (no tombstones). The key of a slot is read from the node itself, so the table holds no
// strings; growing and deleting work from the tags alone and never touch the nodes.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace graft::detail {

class name_index {
public:
    static constexpr std::uint32_t npos = 0xFFFFFFFFu;

    /// 64-bit hash, 8 bytes at a time (names are short ASCII paths).
    static std::uint64_t hash(std::string_view s) noexcept {
        const std::uint64_t m = 0x9E3779B97F4A7C15ull;
        std::uint64_t h = s.size() * m;
        const char* p = s.data();
        std::size_t n = s.size();
        while (n >= 8) {
            std::uint64_t w;
            std::memcpy(&w, p, 8);
            h = (h ^ w) * m;
            h ^= h >> 29;
            p += 8;
            n -= 8;
        }
        std::uint64_t w = 0;
        std::memcpy(&w, p, n);
        h = (h ^ w) * m;
        h ^= h >> 32;
        h *= 0xbf58476d1ce4e5b9ull;
        return h ^ (h >> 31);
    }

    template <class Key>
    void reserve(std::size_t n, const Key& key) {
        std::size_t cap = 16;
        while (cap < 2 * n) cap <<= 1;
        (void)key;
        if (cap > slots_.size()) grow_to(cap);
    }
    /// Position of `name`, or npos. `key(pos)` gives the name of the node at a position.
    template <class Key>
    [[nodiscard]] std::uint32_t find(std::string_view name, const Key& key) const noexcept {
        if (slots_.empty()) return npos;
        auto h = hash(name);
        auto tag = static_cast<std::uint32_t>(h >> 32);
        auto mask = slots_.size() - 1;
        for (auto i = tag & mask;; i = (i + 1) & mask) {
            const auto& s = slots_[i];
            if (s.pos == npos) return npos;
            if (s.tag == tag && key(s.pos) == name) return s.pos;
        }
    }
    /// Inserts name -> pos; false (and no change) when the name is present.
    template <class Key>
    bool insert(std::string_view name, std::uint32_t pos, const Key& key) {
        if (2 * (size_ + 1) > slots_.size()) grow_to(slots_.empty() ? 16 : slots_.size() * 2);
        auto h = hash(name);
        auto tag = static_cast<std::uint32_t>(h >> 32);
        auto mask = slots_.size() - 1;
        for (auto i = tag & mask;; i = (i + 1) & mask) {
            auto& s = slots_[i];
            if (s.pos == npos) {
                s = {tag, pos};
                ++size_;
                return true;
            }
            if (s.tag == tag && key(s.pos) == name) return false;
        }
    }
    /// Removes `name`; returns whether it was present.
    template <class Key>
    bool erase(std::string_view name, const Key& key) noexcept {
        if (slots_.empty()) return false;
        auto h = hash(name);
        auto tag = static_cast<std::uint32_t>(h >> 32);
        auto mask = slots_.size() - 1;
        auto i = tag & mask;
        for (;; i = (i + 1) & mask) {
            if (slots_[i].pos == npos) return false;
            if (slots_[i].tag == tag && key(slots_[i].pos) == name) break;
        }
        // backward-shift the rest of the cluster so lookups need no tombstones
        auto j = i;
        for (;;) {
            slots_[i].pos = npos;
            for (;;) {
                j = (j + 1) & mask;
                if (slots_[j].pos == npos) {
                    --size_;
                    return true;
                }
                auto home = slots_[j].tag & mask;
                bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
                if (!stays) break;
            }
            slots_[i] = slots_[j];
            i = j;
        }
    }
    void clear() noexcept {
        slots_.assign(slots_.size(), slot{});
        size_ = 0;
    }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    /// Bytes held by the table (for memory reports).
    [[nodiscard]] std::size_t bytes() const noexcept { return slots_.capacity() * sizeof(slot); }

private:
    struct slot {
        std::uint32_t tag = 0;
        std::uint32_t pos = npos;
    };
    // a slot's home is its tag's low bits: growing rehomes entries without reading their keys
    void grow_to(std::size_t cap) {
        std::vector<slot> old(cap);
        old.swap(slots_);
        auto mask = cap - 1;
        for (auto& s : old) {
            if (s.pos == npos) continue;
            for (auto i = s.tag & mask;; i = (i + 1) & mask) {
                if (slots_[i].pos == npos) {
                    slots_[i] = s;
                    break;
                }
            }
        }
    }
    std::vector<slot> slots_;
    std::size_t size_ = 0;
};

}  // namespace graft::detail
