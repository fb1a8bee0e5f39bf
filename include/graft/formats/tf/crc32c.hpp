// graft/formats/tf/crc32c.hpp — CRC-32C (Castagnoli), the checksum of TF's tables and tensor bundles.
//
//   std::uint32_t c = graft::tf::crc32c::value("123456789", 9);     // 0xE3069283
//   c = graft::tf::crc32c::extend(c, more.data(), more.size());     // streaming: value(A‖B)
//   std::uint32_t stored = graft::tf::crc32c::mask(c);              // what TF writes to disk
//
// On x86-64 CPUs with SSE4.2 (checked once at run time) three interleaved `crc32` instruction
// streams are combined with precomputed shift tables (~3x one stream); elsewhere a portable
// slicing-by-8 loop runs. Both give identical results; nothing here throws.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GRAFT_CRC32C_X86 1
#include <nmmintrin.h>
#endif

namespace graft::tf::crc32c {

namespace detail {

inline constexpr std::uint32_t poly = 0x82F63B78u;  // reflected Castagnoli polynomial

/// Bytes per lane of the interleaved SSE4.2 loop (long and medium inputs).
inline constexpr std::size_t long_lane = 4096;
inline constexpr std::size_t short_lane = 256;

struct tables_t {
    std::uint32_t slice[8][256];        // slicing-by-8
    std::uint32_t shift_long[4][256];   // register after `long_lane` zero bytes
    std::uint32_t shift_short[4][256];  // register after `short_lane` zero bytes
};

inline void build_shift(const std::uint32_t (&t0)[256], std::size_t lane, std::uint32_t (&out)[4][256]) {
    std::uint32_t col[32];
    for (int j = 0; j < 32; ++j) {
        std::uint32_t r = 1u << j;
        for (std::size_t i = 0; i < lane; ++i) r = t0[r & 0xFFu] ^ (r >> 8);
        col[j] = r;
    }
    for (int k = 0; k < 4; ++k) {
        for (std::uint32_t b = 0; b < 256; ++b) {
            std::uint32_t v = 0;
            for (int i = 0; i < 8; ++i) {
                if (b & (1u << i)) v ^= col[8 * k + i];
            }
            out[k][b] = v;
        }
    }
}

inline const tables_t& tables() {
    static const tables_t t = [] {
        tables_t r{};
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ poly : c >> 1;
            r.slice[0][i] = c;
        }
        for (int k = 1; k < 8; ++k) {
            for (std::uint32_t i = 0; i < 256; ++i) {
                std::uint32_t p = r.slice[k - 1][i];
                r.slice[k][i] = (p >> 8) ^ r.slice[0][p & 0xFFu];
            }
        }
        build_shift(r.slice[0], long_lane, r.shift_long);
        build_shift(r.slice[0], short_lane, r.shift_short);
        return r;
    }();
    return t;
}

inline std::uint64_t load64(const unsigned char* p) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    return v;  // little-endian hosts only use the word paths (see extend_portable)
}

/// Raw register update (no pre/post inversion), portable slicing-by-8.
inline std::uint32_t raw_portable(std::uint32_t reg, const unsigned char* p, std::size_t n) {
    const auto& t = tables();
    if constexpr (std::endian::native == std::endian::little) {
        while (n >= 8) {
            std::uint64_t w = load64(p) ^ reg;
            reg = t.slice[7][w & 0xFF] ^ t.slice[6][(w >> 8) & 0xFF] ^ t.slice[5][(w >> 16) & 0xFF] ^
                  t.slice[4][(w >> 24) & 0xFF] ^ t.slice[3][(w >> 32) & 0xFF] ^
                  t.slice[2][(w >> 40) & 0xFF] ^ t.slice[1][(w >> 48) & 0xFF] ^ t.slice[0][w >> 56];
            p += 8;
            n -= 8;
        }
    }
    while (n--) reg = t.slice[0][(reg ^ *p++) & 0xFFu] ^ (reg >> 8);
    return reg;
}

inline std::uint32_t apply_shift(const std::uint32_t (&s)[4][256], std::uint32_t r) {
    return s[0][r & 0xFF] ^ s[1][(r >> 8) & 0xFF] ^ s[2][(r >> 16) & 0xFF] ^ s[3][r >> 24];
}

#ifdef GRAFT_CRC32C_X86
template <std::size_t Lane>
__attribute__((target("sse4.2"))) inline std::uint32_t raw_sse42_lanes(
    std::uint32_t reg, const unsigned char*& p, std::size_t& n, const std::uint32_t (&shift)[4][256]) {
    while (n >= 3 * Lane) {
        std::uint64_t r0 = reg, r1 = 0, r2 = 0;
        const unsigned char* q = p;
        for (std::size_t i = 0; i < Lane; i += 8) {
            r0 = _mm_crc32_u64(r0, load64(q + i));
            r1 = _mm_crc32_u64(r1, load64(q + Lane + i));
            r2 = _mm_crc32_u64(r2, load64(q + 2 * Lane + i));
        }
        reg = apply_shift(shift, static_cast<std::uint32_t>(r0)) ^ static_cast<std::uint32_t>(r1);
        reg = apply_shift(shift, reg) ^ static_cast<std::uint32_t>(r2);
        p += 3 * Lane;
        n -= 3 * Lane;
    }
    return reg;
}

__attribute__((target("sse4.2"))) inline std::uint32_t raw_sse42(std::uint32_t reg, const unsigned char* p,
                                                                 std::size_t n) {
    while (n && (reinterpret_cast<std::uintptr_t>(p) & 7u)) {
        reg = _mm_crc32_u8(reg, *p++);
        --n;
    }
    const auto& t = tables();
    reg = raw_sse42_lanes<long_lane>(reg, p, n, t.shift_long);
    reg = raw_sse42_lanes<short_lane>(reg, p, n, t.shift_short);
    std::uint64_t r = reg;
    while (n >= 8) {
        r = _mm_crc32_u64(r, load64(p));
        p += 8;
        n -= 8;
    }
    reg = static_cast<std::uint32_t>(r);
    while (n--) reg = _mm_crc32_u8(reg, *p++);
    return reg;
}

inline bool have_sse42() {
    static const bool yes = __builtin_cpu_supports("sse4.2");
    return yes;
}
#endif

}  // namespace detail

/// CRC-32C of the bytes that followed a prefix whose CRC was `crc` (extend(value(A), B) == value(A‖B)).
/// Never throws.
inline std::uint32_t extend(std::uint32_t crc, const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
#ifdef GRAFT_CRC32C_X86
    if (detail::have_sse42()) return ~detail::raw_sse42(~crc, p, n);
#endif
    return ~detail::raw_portable(~crc, p, n);
}
/// extend() over a string_view. Never throws.
inline std::uint32_t extend(std::uint32_t crc, std::string_view s) { return extend(crc, s.data(), s.size()); }

/// CRC-32C of `n` bytes. Never throws.
inline std::uint32_t value(const void* data, std::size_t n) { return extend(0, data, n); }
/// CRC-32C of a string's bytes. Never throws.
inline std::uint32_t value(std::string_view s) { return extend(0, s.data(), s.size()); }

/// The portable path only (for tests that compare both implementations). Never throws.
inline std::uint32_t extend_portable(std::uint32_t crc, const void* data, std::size_t n) {
    return ~detail::raw_portable(~crc, static_cast<const unsigned char*>(data), n);
}

/// True when the SSE4.2 path is in use on this machine. Never throws.
inline bool hardware_accelerated() {
#ifdef GRAFT_CRC32C_X86
    return detail::have_sse42();
#else
    return false;
#endif
}

inline constexpr std::uint32_t mask_delta = 0xA282EAD8u;

/// The masked form TF stores (rotate right 15, add 0xA282EAD8). Never throws.
constexpr std::uint32_t mask(std::uint32_t crc) { return ((crc >> 15) | (crc << 17)) + mask_delta; }
/// Inverse of mask(). Never throws.
constexpr std::uint32_t unmask(std::uint32_t masked) {
    std::uint32_t r = masked - mask_delta;
    return (r >> 17) | (r << 15);
}

}  // namespace graft::tf::crc32c
