// graft/formats/tf/tfrecord.hpp — TFRecord files: the record framing of TensorBoard event files and
// tf.data.TFRecordDataset.
//
//   graft::train::tfrecord_writer w("data.tfrecord");        // truncates; each write() is on disk
//   w.write("first record");                                 //   (in the OS) when it returns
//   graft::train::tfrecord_reader r("data.tfrecord");
//   std::string rec;
//   while (r.next(rec)) use(rec);                             // both crcs checked
//
// A record on disk is
//   uint64 length (little-endian) | uint32 masked_crc32c(length bytes) | data | uint32 masked_crc32c(data)
// with mask(c) = ((c >> 15) | (c << 17)) + 0xA282EAD8 (graft::tf::crc32c::mask). Header-only; needs
// no protobuf library.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/io.hpp"
#include "graft/formats/tf/crc32c.hpp"
#include "graft/formats/tf/wire.hpp"

namespace graft::train {

/// Bytes of a record's header (length + its crc) and footer (data crc).
inline constexpr std::size_t tfrecord_header_bytes = 12;
inline constexpr std::size_t tfrecord_footer_bytes = 4;

/// Appends the framed bytes of one record holding `data` to `out`. Never throws (except bad_alloc).
inline void append_tfrecord(std::string& out, std::string_view data) {
    std::string len;
    tf::wire::put_fixed64(len, data.size());
    out += len;
    tf::wire::put_fixed32(out, tf::crc32c::mask(tf::crc32c::value(len)));
    out.append(data);
    tf::wire::put_fixed32(out, tf::crc32c::mask(tf::crc32c::value(data)));
}
/// The framed bytes of one record holding `data`. Never throws (except bad_alloc).
inline std::string frame_tfrecord(std::string_view data) {
    std::string out;
    out.reserve(data.size() + tfrecord_header_bytes + tfrecord_footer_bytes);
    append_tfrecord(out, data);
    return out;
}

/// Writes records to a file. Each write() hands the whole record to the OS in one write(2) call,
/// so a reader (TensorBoard) sees complete records while training runs; flush() also fsyncs.
/// Not an atomic_file: an event log grows in place.
class tfrecord_writer {
public:
    /// Creates (or truncates; with `append`, extends) `path`. Throws io_error naming the file.
    explicit tfrecord_writer(std::string path, bool append = false) : path_(std::move(path)) {
        int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
        fd_ = ::open(path_.c_str(), flags, 0644);
        if (fd_ < 0) {
            throw io_error(graft::detail::cat("cannot create: ", graft::detail::errno_text()), location::in_file(path_),
                           "check that the directory exists and is writable");
        }
        if (append) {
            struct stat st{};
            if (::fstat(fd_, &st) == 0) offset_ = static_cast<std::uint64_t>(st.st_size);
        }
    }
    tfrecord_writer(const tfrecord_writer&) = delete;
    tfrecord_writer& operator=(const tfrecord_writer&) = delete;
    tfrecord_writer(tfrecord_writer&& o) noexcept : path_(std::move(o.path_)), fd_(o.fd_), offset_(o.offset_) {
        o.fd_ = -1;
    }
    tfrecord_writer& operator=(tfrecord_writer&& o) noexcept {
        if (this != &o) {
            close_quietly();
            path_ = std::move(o.path_);
            fd_ = o.fd_;
            offset_ = o.offset_;
            o.fd_ = -1;
        }
        return *this;
    }
    ~tfrecord_writer() { close_quietly(); }

    /// Appends one record and returns its byte offset in the file. Throws io_error (disk full,
    /// closed writer) naming the file and offset.
    std::uint64_t write(std::string_view data) {
        if (fd_ < 0) throw io_error("write to a closed TFRecord writer", location::in_file(path_, offset_));
        scratch_.clear();
        append_tfrecord(scratch_, data);
        std::uint64_t at = offset_;
        const char* p = scratch_.data();
        std::size_t n = scratch_.size();
        while (n > 0) {
            auto w = ::write(fd_, p, n);
            if (w < 0) {
                if (errno == EINTR) continue;
                throw io_error(graft::detail::cat("write failed: ", graft::detail::errno_text()), location::in_file(path_, offset_));
            }
            p += w;
            n -= static_cast<std::size_t>(w);
            offset_ += static_cast<std::uint64_t>(w);
        }
        return at;
    }
    /// fsyncs the file (records are already visible to readers after write()). Throws io_error.
    void flush() {
        if (fd_ >= 0 && ::fsync(fd_) != 0) {
            throw io_error(graft::detail::cat("fsync failed: ", graft::detail::errno_text()), location::in_file(path_));
        }
    }
    /// Flushes and closes; later writes throw. Throws io_error.
    void close() {
        if (fd_ < 0) return;
        flush();
        int fd = fd_;
        fd_ = -1;
        if (::close(fd) != 0) {
            throw io_error(graft::detail::cat("close failed: ", graft::detail::errno_text()), location::in_file(path_));
        }
    }

    [[nodiscard]] const std::string& path() const { return path_; }
    /// Bytes in the file after the last write (its size). Never throws.
    [[nodiscard]] std::uint64_t bytes_written() const { return offset_; }

private:
    void close_quietly() noexcept {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }
    std::string path_;
    int fd_ = -1;
    std::uint64_t offset_ = 0;
    std::string scratch_;
};

/// Reads records of a file one by one, checking both crcs. Errors are format_error whose location
/// names the file and the byte offset of the record at fault (message: which part is bad).
class tfrecord_reader {
public:
    /// Opens `path`. Throws io_error naming the file.
    explicit tfrecord_reader(std::string path) : path_(std::move(path)) {
        fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd_ < 0) {
            throw io_error(graft::detail::cat("cannot open: ", graft::detail::errno_text()), location::in_file(path_),
                           "check the path and permissions");
        }
    }
    tfrecord_reader(const tfrecord_reader&) = delete;
    tfrecord_reader& operator=(const tfrecord_reader&) = delete;
    ~tfrecord_reader() {
        if (fd_ >= 0) ::close(fd_);
    }

    /// Reads the next record into `data`; false at a clean end of file (no byte after the last
    /// record). Throws format_error on a truncated record or a crc mismatch, io_error on read errors.
    bool next(std::string& data) {
        record_offset_ = offset_;
        char head[tfrecord_header_bytes];
        std::size_t got = read_up_to(head, sizeof head);
        if (got == 0) return false;
        if (got < sizeof head) {
            fail(graft::detail::cat("truncated record header: ", got, " of ", sizeof head, " bytes"));
        }
        std::string_view len_bytes(head, 8);
        std::uint32_t len_crc = tf::wire::load_fixed32(head + 8);
        if (len_crc != tf::crc32c::mask(tf::crc32c::value(len_bytes))) {
            fail(graft::detail::cat("corrupt record: length crc mismatch (stored 0x", hex(len_crc), ", computed 0x",
                             hex(tf::crc32c::mask(tf::crc32c::value(len_bytes))), ")"));
        }
        std::uint64_t len = tf::wire::load_fixed64(head);
        std::uint64_t left = remaining();
        if (len + tfrecord_footer_bytes > left) {
            fail(graft::detail::cat("truncated record: ", len, " data bytes + 4 crc bytes announced, ", left,
                             " bytes left in the file"));
        }
        data.resize(static_cast<std::size_t>(len));
        char foot[tfrecord_footer_bytes];
        if (read_up_to(data.data(), data.size()) < data.size() || read_up_to(foot, sizeof foot) < sizeof foot) {
            fail("truncated record (file shrank while reading)");
        }
        std::uint32_t stored = tf::wire::load_fixed32(foot);
        std::uint32_t computed = tf::crc32c::mask(tf::crc32c::value(data));
        if (stored != computed) {
            fail(graft::detail::cat("corrupt record: data crc mismatch over ", len, " bytes (stored 0x", hex(stored),
                             ", computed 0x", hex(computed), ")"));
        }
        return true;
    }

    /// Byte offset of the record next() returned last (or failed on). Never throws.
    [[nodiscard]] std::uint64_t record_offset() const { return record_offset_; }
    /// Byte offset where the next record starts. Never throws.
    [[nodiscard]] std::uint64_t offset() const { return offset_; }
    [[nodiscard]] const std::string& path() const { return path_; }

private:
    static std::string hex(std::uint32_t v) {
        static const char* d = "0123456789abcdef";
        std::string s(8, '0');
        for (int i = 7; i >= 0; --i, v >>= 4) s[static_cast<std::size_t>(i)] = d[v & 15];
        return s;
    }
    [[noreturn]] void fail(const std::string& msg) const {
        throw format_error("TFRecord: " + msg, location::in_file(path_, record_offset_),
                           "the file is truncated or corrupt (a writer may still be appending to it)");
    }
    std::uint64_t remaining() const {
        struct stat st{};
        if (::fstat(fd_, &st) != 0) {
            throw io_error(graft::detail::cat("cannot stat: ", graft::detail::errno_text()), location::in_file(path_));
        }
        auto size = static_cast<std::uint64_t>(st.st_size);
        return size > offset_ ? size - offset_ : 0;
    }
    std::size_t read_up_to(char* p, std::size_t n) {
        std::size_t done = 0;
        while (done < n) {
            auto r = ::read(fd_, p + done, n - done);
            if (r < 0) {
                if (errno == EINTR) continue;
                throw io_error(graft::detail::cat("read failed: ", graft::detail::errno_text()), location::in_file(path_, offset_));
            }
            if (r == 0) break;
            done += static_cast<std::size_t>(r);
            offset_ += static_cast<std::uint64_t>(r);
        }
        return done;
    }

    std::string path_;
    int fd_ = -1;
    std::uint64_t offset_ = 0;
    std::uint64_t record_offset_ = 0;
};

/// Every record of a TFRecord file. Throws like tfrecord_reader::next.
inline std::vector<std::string> read_tfrecords(const std::string& path) {
    tfrecord_reader r(path);
    std::vector<std::string> out;
    std::string rec;
    while (r.next(rec)) out.push_back(std::move(rec));
    return out;
}

}  // namespace graft::train
