// graft/core/io.hpp — files: whole-file reads, read-only memory maps, atomic writes.
//
// Every write graft does goes through atomic_file: bytes go to "<path>.tempstate<pid>-<random>", are
// flushed and fsync'd, then renamed over <path>; a crash before the rename leaves the old file
// untouched. Sets of files that must change together (a checkpoint's .index and .data, a SavedModel)
// go through graft::file_set_writer (core/file_set.hpp). The system calls writers make go through
// detail::file_ops, which tests replace to fail the N-th write, fsync or rename.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "graft/core/error.hpp"

namespace graft {

namespace detail {
inline std::string errno_text() { return std::strerror(errno); }

/// The system calls of graft's writers. Tests swap them (fault injection); nothing else should.
struct file_ops {
    ssize_t (*write)(int, const void*, std::size_t) = ::write;
    int (*fsync)(int) = ::fsync;
    int (*rename)(const char*, const char*) = ::rename;
    int (*link)(const char*, const char*) = ::link;
    int (*unlink)(const char*) = ::unlink;
};
inline file_ops& fops() {
    static file_ops o;
    return o;
}
}  // namespace detail

/// Reads a whole file. Throws io_error naming the file.
inline std::string read_file(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        throw io_error(detail::cat("cannot open: ", detail::errno_text()), location::in_file(path),
                       "check the path and permissions");
    }
    std::string out;
    struct stat st{};
    if (::fstat(fd, &st) == 0 && st.st_size > 0) out.reserve(static_cast<std::size_t>(st.st_size));
    char buf[1 << 16];
    for (;;) {
        auto n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            ::close(fd);
            throw io_error(detail::cat("read failed: ", detail::errno_text()), location::in_file(path));
        }
        if (n == 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return out;
}

/// A read-only memory map of a whole file; shared so tensors viewing it keep it alive.
class mapped_file {
public:
    /// Maps `path`. Throws io_error naming the file.
    explicit mapped_file(std::string path) : path_(std::move(path)) {
        int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            throw io_error(detail::cat("cannot open: ", detail::errno_text()), location::in_file(path_),
                           "check that the file exists (a checkpoint needs its .index and every .data shard)");
        }
        struct stat st{};
        if (::fstat(fd, &st) != 0) {
            ::close(fd);
            throw io_error(detail::cat("cannot stat: ", detail::errno_text()), location::in_file(path_));
        }
        size_ = static_cast<std::size_t>(st.st_size);
        if (size_ > 0) {
            void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
            if (p == MAP_FAILED) {
                ::close(fd);
                throw io_error(detail::cat("mmap failed: ", detail::errno_text()), location::in_file(path_));
            }
            data_ = static_cast<const char*>(p);
        }
        ::close(fd);
    }
    mapped_file(const mapped_file&) = delete;
    mapped_file& operator=(const mapped_file&) = delete;
    ~mapped_file() {
        if (data_) ::munmap(const_cast<char*>(data_), size_);
    }
    static std::shared_ptr<mapped_file> open(const std::string& path) {
        return std::make_shared<mapped_file>(path);
    }
    [[nodiscard]] const char* data() const { return data_; }
    [[nodiscard]] std::size_t size() const { return size_; }
    [[nodiscard]] std::string_view view() const { return {data_ ? data_ : "", size_}; }
    [[nodiscard]] const std::string& path() const { return path_; }
    /// Hints the kernel to read the whole file ahead.
    void will_need() const {
        if (data_) ::madvise(const_cast<char*>(data_), size_, MADV_WILLNEED);
    }

private:
    std::string path_;
    const char* data_ = nullptr;
    std::size_t size_ = 0;
};

/// Writes a file atomically: write() appends, commit() fsyncs and renames over the final path.
/// Destroyed without commit(), the temporary file is removed and the final path is untouched.
class atomic_file {
public:
    /// Opens "<path>.tmp<random>" for writing. Throws io_error.
    explicit atomic_file(std::string path) : path_(std::move(path)) {
        std::random_device rd;
        std::uint64_t r = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
        // The pid lets the next save of this file remove temporaries a killed writer left behind.
        tmp_ = path_ + temp_marker + std::to_string(::getpid()) + "-" + std::to_string(r);
        fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd_ < 0) {
            throw io_error(detail::cat("cannot create: ", detail::errno_text()), location::in_file(tmp_),
                           "check that the directory exists and is writable");
        }
    }
    atomic_file(const atomic_file&) = delete;
    atomic_file& operator=(const atomic_file&) = delete;
    ~atomic_file() {
        if (fd_ >= 0) ::close(fd_);
        if (!renamed_) ::unlink(tmp_.c_str());
    }
    /// What temporary names hold between the final name and the writer's pid.
    static constexpr const char* temp_marker = ".tempstate";

    /// Appends bytes. Throws io_error (disk full, ...).
    void write(const void* data, std::size_t n) {
        const char* p = static_cast<const char*>(data);
        while (n > 0) {
            auto w = detail::fops().write(fd_, p, n);
            if (w < 0) {
                if (errno == EINTR) continue;
                throw io_error(detail::cat("write failed: ", detail::errno_text()), location::in_file(tmp_, written_));
            }
            p += w;
            n -= static_cast<std::size_t>(w);
            written_ += static_cast<std::uint64_t>(w);
        }
    }
    void write(std::string_view s) { write(s.data(), s.size()); }
    [[nodiscard]] std::uint64_t bytes_written() const { return written_; }
    [[nodiscard]] const std::string& temp_path() const { return tmp_; }
    [[nodiscard]] const std::string& path() const { return path_; }

    /// fsyncs, closes and renames the temporary file to the final path. Throws io_error.
    void commit(bool sync = true) {
        stage(sync);
        rename_into_place();
    }

    /// First half of commit(): fsyncs (when `sync`) and closes the temporary file, which stays
    /// under its temporary name until rename_into_place(). Throws io_error.
    void stage(bool sync = true) {
        if (fd_ < 0) return;
        if (sync && detail::fops().fsync(fd_) != 0) {
            throw io_error(detail::cat("fsync failed: ", detail::errno_text()), location::in_file(tmp_));
        }
        if (::close(fd_) != 0) {
            fd_ = -1;
            throw io_error(detail::cat("close failed: ", detail::errno_text()), location::in_file(tmp_));
        }
        fd_ = -1;
    }
    /// Second half of commit(): renames the staged file over the final path. Throws io_error.
    void rename_into_place() {
        if (fd_ >= 0) stage(false);
        if (detail::fops().rename(tmp_.c_str(), path_.c_str()) != 0) {
            auto e = detail::errno_text();
            throw io_error(detail::cat("rename of ", tmp_, " failed: ", e), location::in_file(path_));
        }
        renamed_ = true;
    }
    /// True once the file stands under its final name. Never throws.
    [[nodiscard]] bool renamed() const { return renamed_; }

private:
    std::string path_, tmp_;
    int fd_ = -1;
    bool renamed_ = false;
    std::uint64_t written_ = 0;
};

/// Writes `bytes` to `path` atomically. Throws io_error.
inline void write_file_atomic(const std::string& path, std::string_view bytes, bool sync = true) {
    atomic_file f(path);
    f.write(bytes);
    f.commit(sync);
}

}  // namespace graft
