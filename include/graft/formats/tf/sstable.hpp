// graft/formats/tf/sstable.hpp — TensorFlow's LevelDB-style table (the `.index` of a V2 checkpoint, a whole V1
// checkpoint): reader and builder, byte-compatible with tsl/lib/io/table{,_builder}.
//
//   auto t = graft::tf::sstable::table_reader::open("model.ckpt.index");
//   for (auto it = t.begin(); it.valid(); it.next()) use(it.key(), it.value());
//   std::optional<std::string> v = t.get("weights_0");
//
//   graft::tf::sstable::table_builder b;       // TF defaults: 256 KiB blocks, restart interval 16
//   b.add("", header); b.add("a", entry_a);    // keys strictly increasing (bytewise)
//   std::string file_bytes = b.finish();
//
// Layout: data blocks, metaindex block, index block (each + 5-byte trailer: type, masked crc32c of
// contents+type), 48-byte footer ending in the magic 0xdb4775248b80fb57. Block checksums are always
// verified; snappy blocks (type 1) are decompressed through graft/formats/tf/snappy.hpp. Every problem with
// the bytes is a graft::format_error naming the file and the byte offset. No block cache: an iterator
// holds one data block at a time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/io.hpp"
#include "graft/formats/tf/crc32c.hpp"
#include "graft/formats/tf/wire.hpp"
#ifndef GRAFT_TF_NO_SNAPPY
#include "graft/formats/tf/snappy.hpp"
#endif

namespace graft::tf::sstable {

inline constexpr std::uint64_t table_magic = 0xdb4775248b80fb57ull;
inline constexpr std::size_t footer_size = 48;
inline constexpr std::size_t trailer_size = 5;
inline constexpr std::size_t max_handle_size = 20;

struct block_handle {
    std::uint64_t offset = 0;
    std::uint64_t size = 0;  ///< excluding the 5-byte trailer
};

/// Appends a BlockHandle (two varint64). Never throws (except bad_alloc).
inline void encode_handle(std::string& out, const block_handle& h) {
    wire::put_varint(out, h.offset);
    wire::put_varint(out, h.size);
}

namespace detail {

[[noreturn]] inline void corrupt(const std::string& file, std::uint64_t off, const std::string& msg) {
    throw format_error(msg, location::in_file(file, off),
                       "the table (.index / V1 checkpoint) is truncated or corrupt");
}

inline block_handle decode_handle(const char*& p, const char* end, const std::string& file, std::uint64_t off) {
    block_handle h;
    if (!wire::get_varint(p, end, h.offset) || !wire::get_varint(p, end, h.size)) {
        corrupt(file, off, "bad block handle");
    }
    return h;
}

/// One parsed block: entries + restart array, over bytes that stay alive while the block lives.
struct block {
    std::string_view data;      // whole block contents (without trailer)
    std::string owned;          // backing store when decompressed
    std::uint32_t num_restarts = 0;
    std::size_t restarts_at = 0;  // offset of the restart array
    std::string file;
    std::uint64_t file_offset = 0;  // where the block starts in the file
    bool compressed = false;

    [[nodiscard]] std::uint64_t where(std::size_t pos) const { return compressed ? file_offset : file_offset + pos; }
    [[nodiscard]] std::uint32_t restart(std::uint32_t i) const {
        return wire::load_fixed32(data.data() + restarts_at + 4 * static_cast<std::size_t>(i));
    }
};

/// Reads, checks and (if needed) decompresses the block at `h` of `file_bytes`.
inline std::shared_ptr<block> read_block(std::string_view file_bytes, const std::string& file, const block_handle& h) {
    auto b = std::make_shared<block>();
    b->file = file;
    b->file_offset = h.offset;
    const std::uint64_t fsize = file_bytes.size();
    if (h.offset > fsize || h.size > fsize - h.offset || trailer_size > fsize - h.offset - h.size) {
        corrupt(file, h.offset, graft::detail::cat("block handle (offset ", h.offset, ", size ", h.size,
                                            ") points past the end of the ", fsize, "-byte file"));
    }
    std::string_view contents = file_bytes.substr(h.offset, h.size);
    const char* trailer = file_bytes.data() + h.offset + h.size;
    std::uint32_t stored = crc32c::unmask(wire::load_fixed32(trailer + 1));
    std::uint32_t actual = crc32c::extend(crc32c::value(contents), trailer, 1);
    if (stored != actual) corrupt(file, h.offset + h.size, "block checksum mismatch");
    auto type = static_cast<unsigned char>(trailer[0]);
    if (type == 1) {
#ifndef GRAFT_TF_NO_SNAPPY
        b->owned = snappy::uncompress(contents, file, h.offset);
        b->data = b->owned;
        b->compressed = true;
#else
        throw unimplemented_error("snappy-compressed table block", location::in_file(file, h.offset),
                                  "build without GRAFT_TF_NO_SNAPPY and link graft::compiled to read it");
#endif
    } else if (type == 0) {
        b->data = contents;
    } else {
        corrupt(file, h.offset + h.size, graft::detail::cat("unknown block compression type ", int(type)));
    }
    const auto n = b->data.size();
    if (n < 4) corrupt(file, h.offset, "block shorter than 4 bytes");
    b->num_restarts = wire::load_fixed32(b->data.data() + n - 4);
    if (b->num_restarts == 0 || b->num_restarts > (n - 4) / 4) {
        corrupt(file, b->where(n - 4), graft::detail::cat("bad restart count ", b->num_restarts, " in a ", n, "-byte block"));
    }
    b->restarts_at = n - 4 - 4 * static_cast<std::size_t>(b->num_restarts);
    return b;
}

/// Walks the entries of one block.
class block_iter {
public:
    block_iter() = default;
    explicit block_iter(std::shared_ptr<block> b) : b_(std::move(b)) {}

    [[nodiscard]] bool valid() const { return valid_; }
    [[nodiscard]] std::string_view key() const { return key_; }
    [[nodiscard]] std::string_view value() const { return value_; }
    [[nodiscard]] const std::shared_ptr<block>& blk() const { return b_; }
    /// Offset of the current value in the file (the block's offset when it was decompressed).
    [[nodiscard]] std::uint64_t value_offset() const { return b_->where(value_pos_); }

    void seek_to_first() {
        seek_restart(0);
        next();
    }
    void next() { parse_at(next_); }

    /// Positions at the first entry with key >= target.
    void seek(std::string_view target) {
        std::uint32_t left = 0, right = b_->num_restarts - 1;
        while (left < right) {
            std::uint32_t mid = left + (right - left + 1) / 2;
            seek_restart(mid);
            parse_at(next_);
            if (!valid_ || shared_ != 0) {
                corrupt(b_->file, b_->where(restart_pos_), "bad entry at a restart point");
            }
            if (key_ < target) left = mid;
            else right = mid - 1;
        }
        seek_restart(left);
        for (next(); valid_ && key_ < target; next()) {}
    }

private:
    void seek_restart(std::uint32_t i) {
        restart_pos_ = b_->restart(i);
        if (restart_pos_ > b_->restarts_at) {
            corrupt(b_->file, b_->where(b_->restarts_at), graft::detail::cat("restart offset ", restart_pos_, " out of range"));
        }
        key_.clear();
        next_ = restart_pos_;
    }
    void parse_at(std::size_t pos) {
        const char* base = b_->data.data();
        const char* limit = base + b_->restarts_at;
        const char* p = base + pos;
        if (p >= limit) {
            valid_ = false;
            return;
        }
        std::uint64_t shared, non_shared, vlen;
        if (!wire::get_varint(p, limit, shared, 5) || !wire::get_varint(p, limit, non_shared, 5) ||
            !wire::get_varint(p, limit, vlen, 5)) {
            corrupt(b_->file, b_->where(pos), "bad entry header in block");
        }
        auto left = static_cast<std::uint64_t>(limit - p);
        if (shared > key_.size() || non_shared > left || vlen > left - non_shared) {
            corrupt(b_->file, b_->where(pos), "entry runs past the end of its block");
        }
        shared_ = shared;
        key_.resize(static_cast<std::size_t>(shared));
        key_.append(p, static_cast<std::size_t>(non_shared));
        p += non_shared;
        value_ = std::string_view(p, static_cast<std::size_t>(vlen));
        value_pos_ = static_cast<std::size_t>(p - base);
        next_ = value_pos_ + static_cast<std::size_t>(vlen);
        valid_ = true;
    }

    std::shared_ptr<block> b_;
    std::string key_;
    std::string_view value_;
    std::uint64_t shared_ = 0;
    std::size_t next_ = 0, restart_pos_ = 0, value_pos_ = 0;
    bool valid_ = false;
};

}  // namespace detail

/// Read-only view of a whole table file (memory-mapped or in memory).
class table_reader {
public:
    /// Opens a table over `bytes` (kept alive by `owner`); `file` names it in errors. Checks the footer,
    /// magic and index block. Throws format_error.
    table_reader(std::string_view bytes, std::string file, std::shared_ptr<const void> owner = nullptr)
        : bytes_(bytes), file_(std::move(file)), owner_(std::move(owner)) {
        if (bytes_.size() < footer_size) {
            detail::corrupt(file_, 0, graft::detail::cat("file of ", bytes_.size(), " bytes is too short to be an sstable (needs ",
                                                  footer_size, ")"));
        }
        const std::uint64_t foot = bytes_.size() - footer_size;
        const char* f = bytes_.data() + foot;
        std::uint64_t magic = wire::load_fixed64(f + 40);
        if (magic != table_magic) detail::corrupt(file_, foot + 40, "bad magic number (not an sstable)");
        const char* p = f;
        metaindex_ = detail::decode_handle(p, f + 40, file_, foot);
        index_handle_ = detail::decode_handle(p, f + 40, file_, foot);
        index_ = detail::read_block(bytes_, file_, index_handle_);
    }

    /// Opens the table file at `path` (memory-mapped). Throws io_error or format_error.
    static table_reader open(const std::string& path) {
        auto m = mapped_file::open(path);
        return table_reader(m->view(), path, m);
    }

    /// Ordered iteration over all entries, one data block in memory at a time. key()/value() stay valid
    /// until next(); the accessors never throw.
    class iterator {
    public:
        [[nodiscard]] bool valid() const { return data_.valid(); }
        [[nodiscard]] std::string_view key() const { return data_.key(); }
        [[nodiscard]] std::string_view value() const { return data_.value(); }
        /// Byte offset of value() in the file (of its block when the block was compressed).
        [[nodiscard]] std::uint64_t value_offset() const { return data_.value_offset(); }
        /// Advances to the next entry. Throws format_error on corrupt blocks.
        void next() {
            data_.next();
            skip_empty();
        }

    private:
        friend class table_reader;
        explicit iterator(const table_reader* t) : t_(t), index_(t->index_) {}
        void load_block() {
            if (!index_.valid()) {
                data_ = detail::block_iter();
                return;
            }
            std::string_view hv = index_.value();
            const char* p = hv.data();
            block_handle h = detail::decode_handle(p, hv.data() + hv.size(), t_->file_, t_->index_handle_.offset);
            data_ = detail::block_iter(detail::read_block(t_->bytes_, t_->file_, h));
        }
        void skip_empty() {
            while (!data_.valid() && index_.valid()) {
                index_.next();
                load_block();
                if (data_.blk()) data_.seek_to_first();
            }
        }
        const table_reader* t_;
        detail::block_iter index_;
        detail::block_iter data_;
    };

    /// Iterator at the first entry. Throws format_error on corrupt blocks.
    [[nodiscard]] iterator begin() const {
        iterator it(this);
        it.index_.seek_to_first();
        it.load_block();
        if (it.data_.blk()) it.data_.seek_to_first();
        it.skip_empty();
        return it;
    }
    /// Iterator at the first entry with key >= target. Throws format_error on corrupt blocks.
    [[nodiscard]] iterator seek(std::string_view target) const {
        iterator it(this);
        it.index_.seek(target);
        it.load_block();
        if (it.data_.blk()) it.data_.seek(target);
        it.skip_empty();
        return it;
    }
    /// The value stored under `key`, if any. Throws format_error on corrupt blocks.
    [[nodiscard]] std::optional<std::string> get(std::string_view key) const {
        auto it = seek(key);
        if (it.valid() && it.key() == key) return std::string(it.value());
        return std::nullopt;
    }

    /// Number of data blocks stored snappy-compressed (trailer type 1). Throws format_error on a bad index.
    [[nodiscard]] std::size_t compressed_blocks() const {
        std::size_t n = 0;
        detail::block_iter it(index_);
        for (it.seek_to_first(); it.valid(); it.next()) {
            std::string_view hv = it.value();
            const char* p = hv.data();
            block_handle h = detail::decode_handle(p, hv.data() + hv.size(), file_, index_handle_.offset);
            if (h.offset > bytes_.size() || h.size >= bytes_.size() - h.offset) detail::corrupt(file_, h.offset, "bad block handle");
            n += bytes_[h.offset + h.size] == 1;
        }
        return n;
    }

    /// The file name and its bytes. Never throw.
    [[nodiscard]] const std::string& file() const { return file_; }
    [[nodiscard]] std::string_view bytes() const { return bytes_; }

private:
    std::string_view bytes_;
    std::string file_;
    std::shared_ptr<const void> owner_;
    block_handle metaindex_, index_handle_;
    std::shared_ptr<detail::block> index_;
};

/// Options of table_builder; the defaults are TensorFlow's for checkpoint indexes.
struct table_options {
    std::size_t block_size = 262144;  ///< flush a data block once its size estimate reaches this
    int restart_interval = 16;        ///< data blocks; the index block always uses 1
    bool snappy = false;              ///< compress blocks when it saves >= 1/8 (TF checkpoints: off)
};

namespace detail {
class block_builder {
public:
    explicit block_builder(int interval) : interval_(interval) { restarts_.push_back(0); }
    void add(std::string_view key, std::string_view value) {
        std::size_t shared = 0;
        if (counter_ < interval_) {
            const std::size_t m = std::min(last_.size(), key.size());
            while (shared < m && last_[shared] == key[shared]) ++shared;
        } else {
            restarts_.push_back(static_cast<std::uint32_t>(buf_.size()));
            counter_ = 0;
        }
        wire::put_varint(buf_, shared);
        wire::put_varint(buf_, key.size() - shared);
        wire::put_varint(buf_, value.size());
        buf_.append(key.substr(shared));
        buf_.append(value);
        last_.assign(key);
        ++counter_;
    }
    [[nodiscard]] std::size_t size_estimate() const { return buf_.size() + restarts_.size() * 4 + 4; }
    [[nodiscard]] bool empty() const { return buf_.empty(); }
    std::string finish() {
        for (auto r : restarts_) wire::put_fixed32(buf_, r);
        wire::put_fixed32(buf_, static_cast<std::uint32_t>(restarts_.size()));
        std::string out = std::move(buf_);
        buf_.clear();
        restarts_.assign(1, 0);
        counter_ = 0;
        last_.clear();
        return out;
    }

private:
    int interval_;
    int counter_ = 0;
    std::string buf_, last_;
    std::vector<std::uint32_t> restarts_;
};

inline void shortest_separator(std::string& start, std::string_view limit) {
    const std::size_t m = std::min(start.size(), limit.size());
    std::size_t i = 0;
    while (i < m && start[i] == limit[i]) ++i;
    if (i >= m) return;  // one is a prefix of the other
    auto b = static_cast<unsigned char>(start[i]);
    if (b < 0xFF && b + 1 < static_cast<unsigned char>(limit[i])) {
        start[i] = static_cast<char>(b + 1);
        start.resize(i + 1);
    }
}
inline void short_successor(std::string& key) {
    for (std::size_t i = 0; i < key.size(); ++i) {
        if (static_cast<unsigned char>(key[i]) != 0xFF) {
            key[i] = static_cast<char>(static_cast<unsigned char>(key[i]) + 1);
            key.resize(i + 1);
            return;
        }
    }
}
}  // namespace detail

/// Builds a table in memory, byte-identical to TF's TableBuilder with the same options.
class table_builder {
public:
    explicit table_builder(table_options o = {}) : opt_(o), data_(o.restart_interval), index_(1) {}

    /// Adds an entry; keys must be strictly increasing (bytewise). Throws invalid_argument_error.
    void add(std::string_view key, std::string_view value) {
        if (finished_) throw invalid_argument_error("table_builder::add after finish()");
        if (entries_ > 0) {
            if (!(std::string_view(last_key_) < key)) {
                throw invalid_argument_error(graft::detail::cat("table keys must be strictly increasing: '", key,
                                                         "' after '", last_key_, "'"));
            }
            if (key.size() + value.size() >= 2 * opt_.block_size) flush();
        }
        if (pending_index_) {
            detail::shortest_separator(last_key_, key);
            add_index_entry();
        }
        last_key_.assign(key);
        ++entries_;
        data_.add(key, value);
        if (data_.size_estimate() >= opt_.block_size) flush();
    }

    /// Writes the remaining blocks, metaindex, index and footer; returns the whole file. Throws
    /// invalid_argument_error if called twice.
    std::string finish() {
        if (finished_) throw invalid_argument_error("table_builder::finish called twice");
        flush();
        finished_ = true;
        detail::block_builder meta(opt_.restart_interval);
        block_handle meta_h = write_block(meta.finish());
        if (pending_index_) {
            detail::short_successor(last_key_);
            add_index_entry();
        }
        block_handle index_h = write_block(index_.finish());
        std::string footer;
        encode_handle(footer, meta_h);
        encode_handle(footer, index_h);
        footer.resize(2 * max_handle_size, '\0');
        wire::put_fixed64(footer, table_magic);
        out_ += footer;
        return std::move(out_);
    }

    /// Entries added so far. Never throws.
    [[nodiscard]] std::uint64_t num_entries() const { return entries_; }

private:
    void add_index_entry() {
        std::string h;
        encode_handle(h, pending_handle_);
        index_.add(last_key_, h);
        pending_index_ = false;
    }
    void flush() {
        if (data_.empty()) return;
        pending_handle_ = write_block(data_.finish());
        pending_index_ = true;
    }
    block_handle write_block(std::string raw) {
        char type = 0;
#ifndef GRAFT_TF_NO_SNAPPY
        if (opt_.snappy) {
            std::string c = snappy::compress(raw);
            if (c.size() < raw.size() - raw.size() / 8) {
                raw = std::move(c);
                type = 1;
            }
        }
#endif
        block_handle h{out_.size(), raw.size()};
        out_ += raw;
        std::uint32_t crc = crc32c::extend(crc32c::value(raw), &type, 1);
        out_.push_back(type);
        wire::put_fixed32(out_, crc32c::mask(crc));
        return h;
    }

    table_options opt_;
    detail::block_builder data_, index_;
    std::string out_, last_key_;
    std::uint64_t entries_ = 0;
    bool pending_index_ = false, finished_ = false;
    block_handle pending_handle_;
};

}  // namespace graft::tf::sstable
