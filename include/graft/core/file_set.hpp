// graft/core/file_set.hpp — replacing several files as one: a checkpoint's .index + .data (+ .meta),
// a SavedModel's saved_model.pb + variables/.
//
//   graft::file_set_writer set("/ckpt/model.ckpt-10");      // the set's anchor: its marker is
//   set.add("/ckpt/model.ckpt-10.index").write(index_bytes); //   "<anchor>.graft-txn"
//   set.add("/ckpt/model.ckpt-10.data-00000-of-00001").write(data_bytes);
//   set.commit();                                            // all new files, or (on error) all old
//
//   graft::recover_file_set("/ckpt/model.ckpt-10");          // readers: before opening the set
//
// The protocol. commit() fsyncs every new file under its temporary name, then, holding an exclusive
// flock on the anchor's directory:
//   1. rolls back an earlier commit that died half-way (its marker is still there, see below) and
//      removes what killed writers left: "<name>.graft-backup" files no marker refers to and
//      "<name>.tempstate<pid>-<n>" files whose process is gone;
//   2. hard-links every existing final name to "<name>.graft-backup";
//   3. writes the marker "<anchor>.graft-txn" (atomically, fsync'd): the list of names in the set;
//   4. renames every new file over its final name (and removes the names the set drops);
//   5. removes the marker — the commit point — then the backups.
// At every instant the old set or the new set is loadable: before the marker exists the final names
// are untouched; while it exists, the backups hold the complete old set; once it is gone, the final
// names hold the complete new set. The recovery rule: a marker on disk means the commit did not
// finish, and whoever sees it (the next reader through recover_file_set, or the next writer) renames
// every backup over its final name, removes the names the set added, then the marker. A failure
// inside commit() does the same before it throws. A writer still alive holds the flock, so a reader
// that meets its marker waits for it instead of undoing its work.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/io.hpp"

namespace graft {

namespace detail {

inline constexpr const char* file_set_marker_suffix = ".graft-txn";
inline constexpr const char* file_set_backup_suffix = ".graft-backup";

inline bool path_exists(const std::string& p) {
    struct stat st{};
    return ::lstat(p.c_str(), &st) == 0;
}

inline std::string dir_of(const std::string& p) {
    auto d = std::filesystem::path(p).parent_path().string();
    return d.empty() ? "." : d;
}

/// fsyncs a directory so the renames in it are durable. Best effort; never throws.
inline void fsync_dir(const std::string& dir) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)detail::fops().fsync(fd);
        ::close(fd);
    }
}

/// An exclusive flock on a directory, held while alive. Throws io_error.
class dir_lock {
public:
    explicit dir_lock(const std::string& dir) {
        fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd_ < 0) {
            throw io_error(cat("cannot open directory to lock it: ", errno_text()), location::in_file(dir),
                           "check that the directory exists and is readable");
        }
        while (::flock(fd_, LOCK_EX) != 0) {
            if (errno == EINTR) continue;
            auto e = errno_text();
            ::close(fd_);
            throw io_error(cat("cannot lock directory: ", e), location::in_file(dir));
        }
    }
    dir_lock(const dir_lock&) = delete;
    dir_lock& operator=(const dir_lock&) = delete;
    ~dir_lock() { ::close(fd_); }  // closing releases the flock

private:
    int fd_ = -1;
};

/// One line of a marker: 'b' = the name existed before (its backup restores it), 'n' = new name.
struct file_set_entry {
    char kind = 'n';
    std::string path;  // relative to the marker's directory
};

inline std::vector<file_set_entry> parse_marker(const std::string& marker) {
    std::string text = read_file(marker);
    std::vector<file_set_entry> out;
    std::size_t at = 0;
    while (at < text.size()) {
        auto nl = text.find('\n', at);
        if (nl == std::string::npos) {
            throw format_error("unterminated line in a file-set marker", location::in_file(marker, at),
                               "the marker was not written by graft; restore the files from their "
                               ".graft-backup copies by hand, then remove the marker");
        }
        std::string line = text.substr(at, nl - at);
        bool escapes = line.size() < 3 || line[2] == '/';
        for (const auto& part : std::filesystem::path(line.size() < 3 ? "" : line.substr(2))) escapes |= part == "..";
        if (escapes || (line[0] != 'b' && line[0] != 'n') || line[1] != ' ') {
            throw format_error("bad line in a file-set marker", location::in_file(marker, at),
                               "the marker was not written by graft; restore the files from their "
                               ".graft-backup copies by hand, then remove the marker");
        }
        out.push_back({line[0], line.substr(2)});
        at = nl + 1;
    }
    return out;
}

/// Undoes the half-done commit `marker` describes. Call with the directory locked. Throws io_error.
inline void roll_back_file_set(const std::string& marker) {
    const std::string dir = dir_of(marker);
    const auto entries = parse_marker(marker);
    std::set<std::string> dirs{dir};
    for (const auto& e : entries) {
        const std::string final_name = (std::filesystem::path(dir) / e.path).string();
        dirs.insert(dir_of(final_name));
        if (e.kind == 'b') {
            const std::string backup = final_name + file_set_backup_suffix;
            if (path_exists(backup)) {
                if (fops().rename(backup.c_str(), final_name.c_str()) != 0) {
                    throw io_error(cat("cannot restore ", backup, ": ", errno_text()), location::in_file(final_name),
                                   cat("an interrupted save left this file set half replaced; rename '", backup,
                                       "' over it by hand, then remove '", marker, "'"));
                }
                ::unlink(backup.c_str());  // rename onto another link of the same file keeps both names
            }
        } else if (fops().unlink(final_name.c_str()) != 0 && errno != ENOENT) {
            throw io_error(cat("cannot remove ", final_name, ": ", errno_text()), location::in_file(final_name),
                           cat("an interrupted save added this file; remove it and '", marker, "' by hand"));
        }
    }
    for (const auto& d : dirs) fsync_dir(d);
    if (fops().unlink(marker.c_str()) != 0 && errno != ENOENT) {
        throw io_error(cat("cannot remove the file-set marker: ", errno_text()), location::in_file(marker),
                       "the old files are back in place; remove the marker by hand");
    }
    fsync_dir(dir);
}

/// Removes "<name>.tempstate<pid>-..." files of `final_name` whose writer process is gone.
inline void remove_stale_temps(const std::string& final_name) {
    const std::string dir = dir_of(final_name);
    const std::string stem = std::filesystem::path(final_name).filename().string() + atomic_file::temp_marker;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    while (dirent* ent = ::readdir(d)) {
        std::string n = ent->d_name;
        if (n.compare(0, stem.size(), stem) != 0) continue;
        std::size_t dash = n.find('-', stem.size());
        if (dash == std::string::npos || dash == stem.size()) continue;
        long pid = 0;
        bool digits = true;
        for (std::size_t i = stem.size(); i < dash; ++i) {
            if (n[i] < '0' || n[i] > '9' || pid > 1'000'000'000) { digits = false; break; }
            pid = pid * 10 + (n[i] - '0');
        }
        if (!digits || pid <= 0) continue;
        if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
            ::unlink((std::filesystem::path(dir) / n).c_str());
        }
    }
    ::closedir(d);
}

}  // namespace detail

/// Puts back the complete old set when a save of the set anchored at `anchor` died half-way (see the
/// protocol above); waits for a save still running. One stat when there is nothing to do. Throws
/// io_error when the files cannot be put back (read-only directory: the message says what to rename).
inline void recover_file_set(const std::string& anchor) {
    const std::string marker = anchor + detail::file_set_marker_suffix;
    if (!detail::path_exists(marker)) return;
    detail::dir_lock lock(detail::dir_of(marker));
    if (detail::path_exists(marker)) detail::roll_back_file_set(marker);
}

/// Writes a set of files that replace the old ones together: add() each file, write it, commit().
/// Destroyed without commit(), the temporary files are removed and nothing under a final name changes.
class file_set_writer {
public:
    /// `anchor` names the set (a checkpoint prefix, "<dir>/saved_model"); every file of the set lies
    /// in the anchor's directory or below it. `sync`: fsync files and directories.
    explicit file_set_writer(std::string anchor, bool sync = true) : anchor_(std::move(anchor)), sync_(sync) {
        dir_ = detail::dir_of(anchor_);
    }
    file_set_writer(const file_set_writer&) = delete;
    file_set_writer& operator=(const file_set_writer&) = delete;

    /// A new file of the set, written to a temporary name until commit(). Throws io_error,
    /// invalid_argument_error (a path outside the anchor's directory, or added twice).
    atomic_file& add(const std::string& final_path) {
        check_path(final_path);
        files_.push_back(std::make_unique<atomic_file>(final_path));
        return *files_.back();
    }
    /// Takes over a file already being written (its final name must lie under the anchor's directory).
    void adopt(std::unique_ptr<atomic_file> f) {
        check_path(f->path());
        files_.push_back(std::move(f));
    }
    /// The set no longer has `final_path`: it is removed at commit() (and restored on roll-back).
    void remove(const std::string& final_path) {
        check_path(final_path);
        removed_.push_back(final_path);
    }

    /// Puts the whole set in place (the protocol above). Throws io_error; after a throw the old set is
    /// in place (or, when even the roll-back failed, the marker is left for the next reader).
    void commit() {
        if (committed_) throw invalid_argument_error("file_set_writer::commit called twice");
        committed_ = true;
        for (auto& f : files_) f->stage(sync_);
        const std::string marker = anchor_ + detail::file_set_marker_suffix;
        detail::dir_lock lock(dir_);
        if (detail::path_exists(marker)) detail::roll_back_file_set(marker);

        // Clean what killed writers left, then back up the names that exist.
        std::vector<detail::file_set_entry> entries;
        std::vector<std::string> finals;
        for (auto& f : files_) finals.push_back(f->path());
        for (auto& r : removed_) finals.push_back(r);
        std::set<std::string> dirs{dir_};
        detail::remove_stale_temps(marker);
        for (auto& p : finals) {
            dirs.insert(detail::dir_of(p));
            const std::string backup = p + detail::file_set_backup_suffix;
            ::unlink(backup.c_str());
            detail::remove_stale_temps(p);
        }
        std::vector<std::string> backups;
        auto drop_backups = [&] {
            for (auto& b : backups) ::unlink(b.c_str());
        };
        for (auto& p : finals) {
            bool existed = detail::path_exists(p);
            if (existed) {
                const std::string backup = p + detail::file_set_backup_suffix;
                if (detail::fops().link(p.c_str(), backup.c_str()) != 0) {
                    auto e = detail::errno_text();
                    drop_backups();
                    throw io_error(detail::cat("cannot keep a backup of the old file: ", e), location::in_file(p),
                                   "the directory must allow hard links and be writable; nothing was replaced");
                }
                backups.push_back(backup);
            }
            entries.push_back({existed ? 'b' : 'n', relative(p)});
        }
        if (backups.empty()) {
            // Nothing to replace: a new set. Renames in add order (a checkpoint's index last).
            try {
                rename_all();
            } catch (...) {
                remove_renamed();
                throw;
            }
            for (auto& d : dirs) if (sync_) detail::fsync_dir(d);
            return;
        }
        for (auto& d : dirs) if (sync_) detail::fsync_dir(d);
        std::string text;
        for (auto& e : entries) text += detail::cat(e.kind, ' ', e.path, '\n');
        try {
            write_file_atomic(marker, text, sync_);
        } catch (...) {
            drop_backups();
            throw;
        }
        if (sync_) detail::fsync_dir(dir_);
        try {
            rename_all();
            for (auto& r : removed_) {
                if (detail::fops().unlink(r.c_str()) != 0 && errno != ENOENT) {
                    throw io_error(detail::cat("cannot remove: ", detail::errno_text()), location::in_file(r));
                }
            }
            for (auto& d : dirs) if (sync_) detail::fsync_dir(d);
            if (detail::fops().unlink(marker.c_str()) != 0) {
                throw io_error(detail::cat("cannot remove the file-set marker: ", detail::errno_text()),
                               location::in_file(marker));
            }
        } catch (...) {
            detail::roll_back_file_set(marker);  // throws when even that fails: the marker stays
            throw;
        }
        if (sync_) detail::fsync_dir(dir_);
        drop_backups();
    }

    [[nodiscard]] const std::string& anchor() const { return anchor_; }

private:
    void check_path(const std::string& p) const {
        auto rel = relative(p);
        if (rel.empty() || rel.compare(0, 2, "..") == 0 || std::filesystem::path(p).is_absolute() !=
                                                             std::filesystem::path(anchor_).is_absolute()) {
            throw invalid_argument_error(detail::cat("file_set_writer: '", p, "' is not under the directory of '",
                                                     anchor_, "'"));
        }
        for (auto& f : files_) {
            if (f->path() == p) throw invalid_argument_error(detail::cat("file_set_writer: '", p, "' added twice"));
        }
    }
    [[nodiscard]] std::string relative(const std::string& p) const {
        return std::filesystem::path(p).lexically_normal().lexically_relative(
            std::filesystem::path(dir_).lexically_normal()).string();
    }
    void rename_all() {
        for (auto& f : files_) f->rename_into_place();
    }
    void remove_renamed() {
        for (auto& f : files_) {
            if (f->renamed()) ::unlink(f->path().c_str());
        }
    }

    std::string anchor_, dir_;
    bool sync_ = true;
    bool committed_ = false;
    std::vector<std::unique_ptr<atomic_file>> files_;
    std::vector<std::string> removed_;
};

}  // namespace graft
