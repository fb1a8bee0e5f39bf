// graft/formats/tf/bundle_detail.hpp — internals of bundle_reader (bundle.hpp): data shards, reading the bytes
// of one entry (fixed-size dtypes zero-copy or with one pread copy; strings with TF's length checksum),
// byte swapping. Include graft/formats/tf/bundle.hpp instead.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graft/core/io.hpp"
#include "graft/core/tensor.hpp"
#include "graft/formats/tf/ckpt_proto.hpp"
#include "graft/formats/tf/crc32c.hpp"

namespace graft::tf {

struct bundle_read_options {
    bool verify_crc = true;  ///< check each tensor's crc32c (and string length checksums)
    bool zero_copy = true;   ///< return views into the mmap'd shard when the data is element-aligned
};

/// How one read() was served.
struct read_info {
    bool zero_copy = false;    ///< the tensor views the memory-mapped shard
    bool crc_checked = false;  ///< its crc32c was verified
};

namespace detail {

/// One open data shard: fd for pread, plus a lazily created private (copy-on-write) mapping.
class shard_file {
public:
    std::string path;
    std::uint64_t size = 0;

    /// Opens `path`. Throws io_error naming the missing data file, the checkpoint and the tensor.
    static std::shared_ptr<shard_file> open(const std::string& path, const std::string& prefix, const std::string& tensor) {
        auto s = std::make_shared<shard_file>();
        s->path = path;
        s->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (s->fd_ < 0) {
            auto why = graft::detail::errno_text();
            auto slash = path.find_last_of('/');
            throw io_error(graft::detail::cat("cannot open data file '", path.substr(slash == std::string::npos ? 0 : slash + 1),
                                              "' of checkpoint '", prefix, "': ", why),
                           location::in_file(path).with_tensor(tensor),
                           "a V2 checkpoint needs its .index and every .data-SSSSS-of-NNNNN shard beside it");
        }
        struct stat st {};
        if (::fstat(s->fd_, &st) != 0) throw io_error("cannot stat data file", location::in_file(path));
        s->size = static_cast<std::uint64_t>(st.st_size);
        return s;
    }
    shard_file() = default;
    shard_file(const shard_file&) = delete;
    shard_file& operator=(const shard_file&) = delete;
    ~shard_file() {
        if (map_ && map_ != MAP_FAILED) ::munmap(map_, size);
        if (fd_ >= 0) ::close(fd_);
    }

    /// The whole file mapped privately (writes stay in memory); nullptr when mapping fails. Never throws.
    char* map() {
        std::call_once(map_once_, [&] {
            if (size == 0) return;
            void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd_, 0);
            map_ = p == MAP_FAILED ? nullptr : p;
        });
        return static_cast<char*>(map_);
    }

    /// Reads exactly n bytes at off. Throws io_error (short read: the file shrank).
    void pread_all(void* dst, std::size_t n, std::uint64_t off) const {
        auto* d = static_cast<char*>(dst);
        while (n) {
            auto r = ::pread(fd_, d, n, static_cast<off_t>(off));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) {
                throw io_error(graft::detail::cat("read failed: ", r < 0 ? graft::detail::errno_text() : "unexpected end of file"),
                               location::in_file(path, off));
            }
            d += r;
            n -= static_cast<std::size_t>(r);
            off += static_cast<std::uint64_t>(r);
        }
    }

private:
    int fd_ = -1;
    void* map_ = nullptr;
    std::once_flag map_once_;
};

/// Alignment a pointer to elements of t needs (the C++ element type's alignof).
constexpr std::size_t element_alignment(dtype t) {
    if (is_complex(t)) return dtype_size(t) / 2;
    return dtype_size(t) > 8 ? 8 : dtype_size(t);
}

/// Reverses the bytes of each element (each component for complex types). Never throws.
inline void byte_swap(void* data, std::size_t bytes, dtype t) {
    std::size_t w = is_complex(t) ? dtype_size(t) / 2 : dtype_size(t);
    if (w <= 1) return;
    auto* p = static_cast<unsigned char*>(data);
    for (std::size_t i = 0; i + w <= bytes; i += w) std::reverse(p + i, p + i + w);
}

[[noreturn]] inline void crc_mismatch(const std::string& tensor, const std::string& file, std::uint64_t off,
                                      std::uint32_t stored, std::uint32_t actual, const char* what = "checksum") {
    char buf[64];
    std::snprintf(buf, sizeof buf, "stored %08x, computed %08x", stored, actual);
    throw format_error(graft::detail::cat(what, " mismatch for tensor '", tensor, "' (", buf, ")"),
                       location::in_file(file, off).with_tensor(tensor),
                       "the data file is corrupt (or read with the wrong index); restore it from a good copy");
}

/// preads the (range- and size-checked) bytes of `e` into dst, checking the crc chunk by chunk while the
/// data is still in cache. Throws format_error on a crc mismatch, io_error on a short read.
inline void copy_pod_bytes(const shard_file& sh, const proto::bundle_entry& e, const std::string& name, bool verify,
                           bool swap, void* dst_ptr) {
    auto* dst = static_cast<char*>(dst_ptr);
    const auto off = static_cast<std::uint64_t>(e.offset);
    const auto bytes = static_cast<std::size_t>(e.size);
    constexpr std::size_t chunk = 512u << 10;  // crc each chunk while it is still in L2
    std::uint32_t crc = 0;
    for (std::size_t done = 0; done < bytes;) {
        std::size_t k = std::min(chunk, bytes - done);
        sh.pread_all(dst + done, k, off + done);
        if (verify) crc = crc32c::extend(crc, dst + done, k);
        done += k;
    }
    const std::uint32_t stored = crc32c::unmask(e.crc32c);
    if (verify && crc != stored) crc_mismatch(name, sh.path, off, stored, crc);
    if (swap) byte_swap(dst, bytes, e.type);
}

/// Throws format_error unless a fixed-size entry's stored size equals elements x element size.
inline void check_pod_size(const proto::bundle_entry& e, const location& at_index) {
    const std::size_t esz = dtype_size(e.type);
    const std::uint64_t n = static_cast<std::uint64_t>(e.shape.num_elements());
    std::uint64_t need = 0;
    if (__builtin_mul_overflow(n, esz, &need) || need != static_cast<std::uint64_t>(e.size)) {
        throw format_error(graft::detail::cat("entry stores ", e.size, " bytes but ", dtype_name(e.type), e.shape.str(),
                                              " needs ", n, " x ", esz),
                           at_index, "the index entry is corrupt");
    }
}

/// Reads a fixed-size-dtype entry (already range-checked against the file). Throws format_error on a
/// size or crc mismatch.
inline tensor read_pod_tensor(const std::shared_ptr<shard_file>& sh, const proto::bundle_entry& e, const std::string& name,
                              bool verify, bool zero_copy, bool swap, const location& at_index, read_info* info) {
    check_pod_size(e, at_index);
    const auto off = static_cast<std::uint64_t>(e.offset);
    const std::size_t bytes = static_cast<std::size_t>(e.size);
    const std::uint32_t stored = crc32c::unmask(e.crc32c);
    if (info) *info = read_info{false, verify};
    if (zero_copy && !swap && bytes > 0 && off % element_alignment(e.type) == 0) {
        if (char* base = sh->map()) {
            const char* p = base + off;
            if (verify) {
                auto actual = crc32c::value(p, bytes);
                if (actual != stored) crc_mismatch(name, sh->path, off, stored, actual);
            }
            if (info) info->zero_copy = true;
            return tensor::view(e.type, e.shape, p, std::shared_ptr<const void>(sh));
        }
    }
    tensor t = tensor::uninitialized(e.type, e.shape);
    copy_pod_bytes(*sh, e, name, verify, swap, t.raw_data());
    return t;
}

/// Reads a DT_STRING entry: varint64 lengths, masked length checksum, bytes. Throws format_error.
inline tensor read_string_tensor(const shard_file& sh, const proto::bundle_entry& e, const std::string& name,
                                 bool verify, bool file_big_endian, const location& at_index, read_info* info) {
    const std::uint64_t n = static_cast<std::uint64_t>(e.shape.num_elements());
    const auto off = static_cast<std::uint64_t>(e.offset);
    const auto size = static_cast<std::uint64_t>(e.size);
    if (size < n) {
        throw format_error(graft::detail::cat("string entry stores ", size, " bytes, too few for ", n, " strings"), at_index,
                           "the index entry is corrupt");
    }
    if (info) *info = read_info{false, verify};
    tensor t(dtype::string, e.shape);
    const std::uint32_t stored = crc32c::unmask(e.crc32c);
    if (size == 0) {
        if (verify && stored != 0) crc_mismatch(name, sh.path, off, stored, 0);
        return t;
    }
    std::string buf(static_cast<std::size_t>(size), '\0');
    sh.pread_all(buf.data(), buf.size(), off);
    const char* p = buf.data();
    const char* end = p + buf.size();
    std::vector<std::uint64_t> lens(static_cast<std::size_t>(n));
    std::uint32_t crc = 0;
    auto feed = [&](std::uint64_t v, int w) {
        unsigned char b[8];
        for (int i = 0; i < w; ++i) {
            int shift = file_big_endian ? 8 * (w - 1 - i) : 8 * i;
            b[i] = static_cast<unsigned char>(v >> shift);
        }
        crc = crc32c::extend(crc, b, static_cast<std::size_t>(w));
    };
    for (auto& l : lens) {
        if (!wire::get_varint(p, end, l)) {
            throw format_error(graft::detail::cat("string lengths of tensor '", name, "' run past its ", size, " bytes"),
                               location::in_file(sh.path, off).with_tensor(name), "the data file is corrupt");
        }
        feed(l, l <= 0xFFFFFFFFull ? 4 : 8);
    }
    if (end - p < 4) {
        throw format_error(graft::detail::cat("string tensor '", name, "' is missing its length checksum"),
                           location::in_file(sh.path, off).with_tensor(name), "the data file is corrupt");
    }
    std::uint32_t raw = 0;
    for (int i = 0; i < 4; ++i) {
        auto b = static_cast<std::uint32_t>(static_cast<unsigned char>(p[i]));
        raw |= file_big_endian ? b << (8 * (3 - i)) : b << (8 * i);
    }
    if (verify && crc32c::unmask(raw) != crc) {
        crc_mismatch(name, sh.path, off + static_cast<std::uint64_t>(p - buf.data()), crc32c::unmask(raw), crc,
                     "string length checksum");
    }
    crc = crc32c::extend(crc, p, 4);
    p += 4;
    auto* d = t.data<std::string>();
    for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t l = lens[static_cast<std::size_t>(i)];
        if (l > static_cast<std::uint64_t>(end - p)) {
            throw format_error(graft::detail::cat("string ", i, " of tensor '", name, "' runs past its ", size, " bytes"),
                               location::in_file(sh.path, off).with_tensor(name), "the data file is corrupt");
        }
        d[i].assign(p, static_cast<std::size_t>(l));
        crc = crc32c::extend(crc, p, static_cast<std::size_t>(l));
        p += l;
    }
    if (verify && crc != stored) crc_mismatch(name, sh.path, off, stored, crc);
    return t;
}

/// Elements in the overlap of two slices of `full` (0 when disjoint), saturating at INT64_MAX. Never throws.
inline std::int64_t overlap_count(const tensor_slice& a, const tensor_slice& b, const graft::shape& full) {
    if (a.rank() != full.rank() || b.rank() != full.rank()) return 0;
    std::int64_t count = 1;
    for (int d = 0; d < full.rank(); ++d) {
        std::int64_t lo = std::max(a.start_in(d), b.start_in(d));
        std::int64_t hi = std::min(a.start_in(d) + a.length_in(d, full), b.start_in(d) + b.length_in(d, full));
        if (hi <= lo) return 0;
        if (__builtin_mul_overflow(count, hi - lo, &count)) return INT64_MAX;
    }
    return count;
}

}  // namespace detail
}  // namespace graft::tf
