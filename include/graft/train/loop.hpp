// graft/train/loop.hpp — the plumbing of a training loop: mini-batches and a progress bar.
//
//   graft::train::batches data({images, labels}, {.batch_size = 100, .shuffle = true, .seed = 7, .epochs = 5});
//   graft::train::progress_bar bar(data.total_steps());
//   for (const auto& b : data) {
//       auto loss = step(b[0], b[1]);              // feed the rows of this batch
//       bar.step(b.size, loss);                    // "[=====>    ] 120/250  loss 0.3121  9500 ex/s  ETA 0:04"
//   }
//   bar.finish();
//
// Rows are taken along dimension 0 of every tensor (all must have the same row count). Without
// shuffle a batch is a view that shares memory with the inputs (tensor::slice); shuffled batches
// are copies. The shuffle is graft's own Fisher-Yates over std::mt19937_64, so one seed gives the
// same order on every platform; each epoch has its own order.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"

namespace graft::train {

struct batch_options {
    std::int64_t batch_size = 32;
    bool shuffle = false;
    std::uint64_t seed = 0;       ///< shuffle seed: the same seed gives the same batches
    bool drop_remainder = false;  ///< leave out the last batch of an epoch when it is smaller
    std::int64_t epochs = 1;
};

/// One mini-batch: the same rows of every input tensor.
struct batch {
    std::vector<tensor> tensors;  ///< one per input, in the order given
    std::int64_t step = 0;        ///< 0-based over all epochs
    std::int64_t epoch = 0;       ///< 0-based
    std::int64_t index = 0;       ///< 0-based within the epoch
    std::int64_t size = 0;        ///< rows in this batch

    /// Input `i`'s rows. Throws invalid_argument_error when out of range.
    [[nodiscard]] const tensor& operator[](std::size_t i) const {
        if (i >= tensors.size()) {
            throw invalid_argument_error(graft::detail::cat("batch has ", tensors.size(), " tensors, asked for #", i));
        }
        return tensors[i];
    }
};

namespace detail {
/// Bits of `seed` spread out (splitmix64), so that nearby seeds and epochs give unrelated orders.
inline std::uint64_t mix_seed(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
/// Uniform in [0, n) without modulo bias.
inline std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t n) {
    std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % n);
    std::uint64_t r;
    do r = rng(); while (r >= limit);
    return r % n;
}
/// Rows `rows` of `t` (along dim 0) copied into a new tensor.
inline tensor gather_rows(const tensor& t, const std::int64_t* rows, std::int64_t n) {
    auto dims = t.shape().dims();
    std::int64_t per_row = 1;
    for (std::size_t i = 1; i < dims.size(); ++i) per_row *= dims[i];
    dims[0] = n;
    tensor out = tensor::uninitialized(t.type(), graft::shape(dims));
    if (t.type() == dtype::string) {
        const auto* s = t.data<std::string>();
        auto* d = out.data<std::string>();
        for (std::int64_t r = 0; r < n; ++r) {
            for (std::int64_t k = 0; k < per_row; ++k) d[r * per_row + k] = s[rows[r] * per_row + k];
        }
        return out;
    }
    auto row_bytes = static_cast<std::size_t>(per_row) * dtype_size(t.type());
    const char* s = static_cast<const char*>(t.raw_data());
    char* d = static_cast<char*>(out.raw_data());
    for (std::int64_t r = 0; r < n; ++r) {
        std::memcpy(d + static_cast<std::size_t>(r) * row_bytes, s + static_cast<std::size_t>(rows[r]) * row_bytes,
                    row_bytes);
    }
    return out;
}
}  // namespace detail

/// Mini-batches over tensors that share their first dimension, for a number of epochs. A range:
/// `for (const auto& b : batches(...))`; `at(step)` gives any batch directly.
class batches {
public:
    /// Throws invalid_argument_error for no tensors, a scalar, differing row counts, device tensors,
    /// batch_size < 1 or epochs < 0.
    batches(std::vector<tensor> tensors, batch_options opts) : tensors_(std::move(tensors)), opts_(opts) {
        if (tensors_.empty()) throw invalid_argument_error("batches: no tensors given");
        for (std::size_t i = 0; i < tensors_.size(); ++i) {
            const auto& t = tensors_[i];
            if (!t.valid() || t.rank() < 1) {
                throw invalid_argument_error(graft::detail::cat("batches: tensor #", i, " is ", t.valid() ? t.describe() : "empty",
                                                         ", expected rank >= 1 (rows along dimension 0)"));
            }
            if (!t.on_host()) {
                throw invalid_argument_error(graft::detail::cat("batches: tensor #", i, " lives on ", t.dev().str()), {},
                                             "copy it to the host first");
            }
            if (t.dim(0) != tensors_[0].dim(0)) {
                throw invalid_argument_error(graft::detail::cat("batches: tensor #", i, " ", t.describe(), " has ", t.dim(0),
                                                         " rows but tensor #0 ", tensors_[0].describe(), " has ",
                                                         tensors_[0].dim(0)));
            }
        }
        if (opts_.batch_size < 1) {
            throw invalid_argument_error(graft::detail::cat("batches: batch_size is ", opts_.batch_size, ", expected >= 1"));
        }
        if (opts_.epochs < 0) throw invalid_argument_error(graft::detail::cat("batches: epochs is ", opts_.epochs));
    }

    /// Rows per epoch. Never throws.
    [[nodiscard]] std::int64_t rows() const { return tensors_[0].dim(0); }
    /// Batches in one epoch (the smaller last one counts unless drop_remainder). Never throws.
    [[nodiscard]] std::int64_t batches_per_epoch() const {
        std::int64_t full = rows() / opts_.batch_size;
        return full + (!opts_.drop_remainder && rows() % opts_.batch_size ? 1 : 0);
    }
    /// Batches over all epochs (a progress bar's total). Never throws.
    [[nodiscard]] std::int64_t total_steps() const { return batches_per_epoch() * opts_.epochs; }
    [[nodiscard]] const batch_options& options() const { return opts_; }

    /// The row order of `epoch`: 0..rows-1, or its shuffle for this seed and epoch. Never throws
    /// (except bad_alloc).
    [[nodiscard]] std::vector<std::int64_t> order(std::int64_t epoch) const {
        std::vector<std::int64_t> idx(static_cast<std::size_t>(rows()));
        for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<std::int64_t>(i);
        if (opts_.shuffle && idx.size() > 1) {
            std::mt19937_64 rng(detail::mix_seed(opts_.seed ^ detail::mix_seed(static_cast<std::uint64_t>(epoch))));
            for (std::size_t i = idx.size() - 1; i > 0; --i) {
                std::swap(idx[i], idx[static_cast<std::size_t>(detail::uniform_below(rng, i + 1))]);
            }
        }
        return idx;
    }

    /// Batch number `step` (0 <= step < total_steps()). Throws invalid_argument_error out of range.
    [[nodiscard]] batch at(std::int64_t step) const {
        if (step < 0 || step >= total_steps()) {
            throw invalid_argument_error(graft::detail::cat("batches: step ", step, " out of range [0, ", total_steps(), ")"));
        }
        batch b;
        b.step = step;
        b.epoch = step / batches_per_epoch();
        b.index = step % batches_per_epoch();
        std::int64_t start = b.index * opts_.batch_size;
        b.size = std::min(opts_.batch_size, rows() - start);
        b.tensors.reserve(tensors_.size());
        if (!opts_.shuffle) {
            for (const auto& t : tensors_) b.tensors.push_back(t.slice(start, b.size));
            return b;
        }
        if (cached_epoch_ != b.epoch) {
            cached_order_ = order(b.epoch);
            cached_epoch_ = b.epoch;
        }
        const std::int64_t* rows_of_batch = cached_order_.data() + start;
        for (const auto& t : tensors_) b.tensors.push_back(detail::gather_rows(t, rows_of_batch, b.size));
        return b;
    }

    class iterator {
    public:
        using iterator_category = std::input_iterator_tag;
        using value_type = batch;
        using difference_type = std::ptrdiff_t;
        using pointer = const batch*;
        using reference = const batch&;

        iterator() = default;
        iterator(const batches* owner, std::int64_t step) : owner_(owner), step_(step) {}
        const batch& operator*() const {
            if (!current_ || current_->step != step_) current_ = owner_->at(step_);
            return *current_;
        }
        const batch* operator->() const { return &**this; }
        iterator& operator++() { ++step_; return *this; }
        void operator++(int) { ++step_; }
        friend bool operator==(const iterator& a, const iterator& b) { return a.step_ == b.step_; }

    private:
        const batches* owner_ = nullptr;
        std::int64_t step_ = 0;
        mutable std::optional<batch> current_;
    };
    [[nodiscard]] iterator begin() const { return {this, 0}; }
    [[nodiscard]] iterator end() const { return {this, total_steps()}; }

private:
    std::vector<tensor> tensors_;
    batch_options opts_;
    mutable std::int64_t cached_epoch_ = -1;
    mutable std::vector<std::int64_t> cached_order_;
};

struct progress_options {
    /// Where the bar goes (tests pass a std::ostringstream).
    std::ostream* out = &std::cerr;
    /// Redrawn single line (true) or plain lines (false). Default: isatty() of the stream's file
    /// descriptor when `out` is std::cout, std::cerr or std::clog, else plain lines.
    std::optional<bool> tty;
    /// Plain mode: one line every `every` steps (0: every tenth of the total, at least 1), plus the last.
    std::int64_t every = 0;
    /// TTY mode: the least seconds between redraws (the first and last step always draw).
    double redraw_seconds = 0.1;
    /// TTY mode: characters inside the [=====>   ] bar.
    int width = 24;
    /// Text before each line, e.g. "train".
    std::string label;
    /// A steady clock in seconds; default std::chrono::steady_clock. Tests pass a fake one.
    std::function<double()> clock;
};

/// Step / total, loss, examples per second and time left, as one redrawn line on a terminal or
/// periodic plain lines in a log. Output errors are the stream's (nothing here throws except
/// bad_alloc and what the clock throws).
class progress_bar {
public:
    explicit progress_bar(std::int64_t total_steps, progress_options opts = {})
        : total_(total_steps), opts_(std::move(opts)) {
        if (!opts_.out) opts_.out = &std::cerr;
        if (!opts_.clock) {
            opts_.clock = [] {
                using namespace std::chrono;
                return duration<double>(steady_clock::now().time_since_epoch()).count();
            };
        }
        tty_ = opts_.tty ? *opts_.tty : stream_is_tty(opts_.out);
        every_ = opts_.every > 0 ? opts_.every : std::max<std::int64_t>(1, total_ / 10);
        start_ = opts_.clock();
    }
    progress_bar(const progress_bar&) = delete;
    progress_bar& operator=(const progress_bar&) = delete;
    /// Ends the TTY line if finish() was not called.
    ~progress_bar() {
        if (tty_ && drawn_ && !finished_) *opts_.out << "\n" << std::flush;
    }

    /// One more step done that processed `examples` examples, with its loss if known.
    void step(std::int64_t examples, std::optional<double> loss = std::nullopt) {
        update(steps_ + 1, examples_ + examples, loss);
    }
    /// Sets the absolute progress: `steps` done of the total, `examples` so far, the latest loss.
    void update(std::int64_t steps, std::int64_t examples, std::optional<double> loss = std::nullopt) {
        steps_ = steps;
        examples_ = examples;
        if (loss) loss_ = loss;
        double now = opts_.clock();
        if (tty_) {
            if (!drawn_ || steps_ >= total_ || now - last_draw_ >= opts_.redraw_seconds) draw_tty(now, false);
        } else if (steps_ % every_ == 0 || steps_ == total_) {
            *opts_.out << plain_line(now) << "\n" << std::flush;
            last_plain_step_ = steps_;
        }
    }
    /// Draws the final state (TTY: the line with the elapsed time unless it is up to date, then a
    /// newline; plain: a last line if the latest step was not printed). Further calls do nothing.
    void finish() {
        if (finished_) return;
        finished_ = true;
        double now = opts_.clock();
        if (tty_) {
            if (!drawn_ || drawn_steps_ != steps_) draw_tty(now, true);
            *opts_.out << "\n" << std::flush;
        } else if (last_plain_step_ != steps_) {
            *opts_.out << plain_line(now) << "\n" << std::flush;
        }
    }

    [[nodiscard]] bool is_tty() const { return tty_; }
    [[nodiscard]] std::int64_t steps() const { return steps_; }
    [[nodiscard]] std::optional<double> loss() const { return loss_; }

    /// "1:05", "1:02:03"; "?" for negative or non-finite seconds. Never throws (except bad_alloc).
    static std::string format_duration(double seconds) {
        if (!std::isfinite(seconds) || seconds < 0) return "?";
        auto s = static_cast<long long>(std::llround(seconds));
        char buf[48];
        if (s >= 3600) std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
        else std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
        return buf;
    }

private:
    static bool stream_is_tty(const std::ostream* os) {
        if (os == &std::cout) return ::isatty(STDOUT_FILENO) == 1;
        if (os == &std::cerr || os == &std::clog) return ::isatty(STDERR_FILENO) == 1;
        return false;
    }
    std::string stats(double now, bool done) const {
        double elapsed = now - start_;
        std::string s;
        char buf[64];
        if (loss_) {
            std::snprintf(buf, sizeof buf, "  loss %.4f", *loss_);
            s += buf;
        }
        if (elapsed > 0) {
            std::snprintf(buf, sizeof buf, "  %.1f examples/s", static_cast<double>(examples_) / elapsed);
            s += buf;
        }
        if (done || steps_ >= total_) {
            s += "  done in " + format_duration(elapsed);
        } else if (steps_ > 0) {
            s += "  ETA " + format_duration(elapsed / static_cast<double>(steps_) * static_cast<double>(total_ - steps_));
        }
        return s;
    }
    std::string plain_line(double now) const {
        std::string s = opts_.label.empty() ? "" : opts_.label + " ";
        char buf[96];
        double pct = total_ > 0 ? 100.0 * static_cast<double>(steps_) / static_cast<double>(total_) : 100.0;
        std::snprintf(buf, sizeof buf, "step %lld/%lld (%.0f%%)", static_cast<long long>(steps_),
                      static_cast<long long>(total_), pct);
        return s + buf + stats(now, false);
    }
    void draw_tty(double now, bool done) {
        std::string s = "\r";
        if (!opts_.label.empty()) s += opts_.label + " ";
        int w = std::max(1, opts_.width);
        double frac = total_ > 0 ? std::min(1.0, static_cast<double>(steps_) / static_cast<double>(total_)) : 1.0;
        int fill = static_cast<int>(frac * w);
        s += "[";
        for (int i = 0; i < w; ++i) s += i < fill ? '=' : (i == fill ? '>' : ' ');
        s += "] ";
        s += std::to_string(steps_) + "/" + std::to_string(total_);
        s += stats(now, done);
        s += "\x1b[K";  // clear what a longer previous line left
        *opts_.out << s << std::flush;
        drawn_ = true;
        drawn_steps_ = steps_;
        last_draw_ = now;
    }

    std::int64_t total_;
    progress_options opts_;
    bool tty_ = false;
    std::int64_t every_ = 1;
    double start_ = 0;
    double last_draw_ = 0;
    bool drawn_ = false;
    bool finished_ = false;
    std::int64_t steps_ = 0;
    std::int64_t examples_ = 0;
    std::int64_t last_plain_step_ = -1;
    std::int64_t drawn_steps_ = -1;
    std::optional<double> loss_;
};

}  // namespace graft::train
