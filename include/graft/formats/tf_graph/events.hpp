// graft/formats/tf_graph/events.hpp — TensorBoard event files, written and read back.
//
//   graft::train::summary_writer w("logs/run1");        // logs/run1/events.out.tfevents.<secs>.<host>
//   w.add_graph(g);                                     // the Graphs tab (needs graft::compiled linked)
//   for (int step = 0; step < n; ++step) w.add_scalar("loss", loss, step);   // the Scalars tab
//   w.add_summary(merged.data<std::string>()[0], step);  // what a graph's MergeSummary op made
//
//   for (const auto& e : graft::train::read_events(w.path()))
//       if (auto v = e.scalar("loss")) std::cout << e.step << " " << *v << "\n";
//
// The file is a TFRecord file (tfrecord.hpp) of tensorflow.Event messages, encoded with graft's own
// wire codec. Field numbers from tensorflow/core/util/event.proto and framework/summary.proto:
//   Event { double wall_time = 1; int64 step = 2; oneof what { string file_version = 3;
//           bytes graph_def = 4; Summary summary = 5; ... bytes meta_graph_def = 9; } }
//   Summary { repeated Value value = 1; }   Value { string tag = 1; float simple_value = 2; ... }
// As TF's EventsWriter does, the first record is an Event with only wall_time and
// file_version "brain.Event:2". Every record reaches the file when its add_* call returns.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/graph/graph.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/formats/tf/wire.hpp"
#include "graft/formats/tf/tfrecord.hpp"

namespace graft::train {

/// The file_version of the first record ("brain.Event:" + version 2).
inline constexpr std::string_view event_file_version = "brain.Event:2";

/// One tensorflow.Event as graft models it. Fields graft does not model (log_message,
/// session_log, images, histograms, ...) are kept only as `other_fields` bytes on read.
struct event {
    double wall_time = 0;
    std::int64_t step = 0;
    std::string file_version;                           ///< set on a file's first event
    std::string graph_def;                              ///< serialized GraphDef, when the event carries one
    std::string meta_graph_def;                         ///< serialized MetaGraphDef, when it carries one
    std::vector<std::pair<std::string, float>> scalars; ///< summary values with a simple_value, in order
    bool has_summary = false;                           ///< the event carries a Summary (maybe empty)
    std::string other_fields;                           ///< unmodelled fields, as wire bytes

    /// The simple_value of `tag` in this event's summary, if present. Never throws.
    [[nodiscard]] std::optional<float> scalar(std::string_view tag) const {
        for (const auto& [t, v] : scalars) {
            if (t == tag) return v;
        }
        return std::nullopt;
    }
};

namespace detail {
inline constexpr std::uint32_t event_wall_time = 1, event_step = 2, event_file_version = 3, event_graph_def = 4,
                               event_summary = 5, event_meta_graph_def = 9;
inline constexpr std::uint32_t summary_value = 1;
inline constexpr std::uint32_t value_tag = 1, value_simple_value = 2;

inline std::string encode_summary_value(std::string_view tag, float v) {
    tf::wire::writer w;
    w.opt_bytes(value_tag, tag);
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    w.fixed32(value_simple_value, bits);  // a oneof member: written even when 0
    return std::move(w).str();
}
}  // namespace detail

/// The serialized tensorflow.Event (fields in field-number order, like protoc). Never throws
/// (except bad_alloc).
inline std::string encode_event(const event& e) {
    tf::wire::writer w;
    w.opt_double(detail::event_wall_time, e.wall_time);
    w.opt_int64(detail::event_step, e.step);
    // `what` is a oneof: the members present are written even when empty.
    if (!e.file_version.empty()) w.bytes(detail::event_file_version, e.file_version);
    if (!e.graph_def.empty()) w.bytes(detail::event_graph_def, e.graph_def);
    if (e.has_summary || !e.scalars.empty()) {
        tf::wire::writer s;
        for (const auto& [tag, v] : e.scalars) s.message(detail::summary_value, detail::encode_summary_value(tag, v));
        w.message(detail::event_summary, s.str());
    }
    if (!e.meta_graph_def.empty()) w.bytes(detail::event_meta_graph_def, e.meta_graph_def);
    w.buffer() += e.other_fields;
    return std::move(w).str();
}

/// Decodes a serialized Event whose first byte is at `base` in `file` (for errors). Summary values
/// other than simple_value are skipped. Throws format_error naming the file and offset.
inline event decode_event(std::string_view bytes, std::string_view file = {}, std::uint64_t base = 0) {
    using tf::wire::wire_type;
    event e;
    tf::wire::reader r(bytes, file, base, "tensorflow.Event");
    std::uint32_t f;
    wire_type wt;
    while (r.next(f, wt)) {
        std::uint64_t field_start = r.offset();
        if (f == detail::event_wall_time && wt == wire_type::fixed64) {
            std::uint64_t bits = r.fixed64();
            std::memcpy(&e.wall_time, &bits, 8);
        } else if (f == detail::event_step && wt == wire_type::varint) {
            e.step = r.int64();
        } else if (f == detail::event_file_version && wt == wire_type::bytes) {
            e.file_version = std::string(r.bytes());
        } else if (f == detail::event_graph_def && wt == wire_type::bytes) {
            e.graph_def = std::string(r.bytes());
        } else if (f == detail::event_meta_graph_def && wt == wire_type::bytes) {
            e.meta_graph_def = std::string(r.bytes());
        } else if (f == detail::event_summary && wt == wire_type::bytes) {
            e.has_summary = true;
            auto s = r.message("tensorflow.Summary");
            std::uint32_t sf;
            wire_type swt;
            while (s.next(sf, swt)) {
                if (sf != detail::summary_value || swt != wire_type::bytes) {
                    s.skip(swt);
                    continue;
                }
                auto v = s.message("tensorflow.Summary.Value");
                std::string tag;
                std::optional<float> value;
                std::uint32_t vf;
                wire_type vwt;
                while (v.next(vf, vwt)) {
                    if (vf == detail::value_tag && vwt == wire_type::bytes) {
                        tag = std::string(v.bytes());
                    } else if (vf == detail::value_simple_value && vwt == wire_type::fixed32) {
                        std::uint32_t bits = v.fixed32();
                        float x;
                        std::memcpy(&x, &bits, 4);
                        value = x;
                    } else {
                        v.skip(vwt);
                    }
                }
                if (value) e.scalars.emplace_back(std::move(tag), *value);
            }
        } else {
            // keep the unmodelled field's tag and value bytes as they were
            std::uint64_t tag_len = tf::wire::varint_size((static_cast<std::uint64_t>(f) << 3) |
                                                          static_cast<std::uint32_t>(wt));
            r.skip(wt);
            auto from = static_cast<std::size_t>(field_start - base - tag_len);
            e.other_fields.append(bytes.substr(from, static_cast<std::size_t>(r.offset() - base) - from));
        }
    }
    return e;
}

/// Every event of an event file, crcs checked. Throws io_error, and format_error naming the file and
/// the byte offset of a bad record or field.
inline std::vector<event> read_events(const std::string& path) {
    load_scope budget(path);
    tfrecord_reader r(path);
    std::vector<event> out;
    std::string rec;
    while (r.next(rec)) out.push_back(decode_event(rec, path, r.record_offset() + tfrecord_header_bytes));
    return out;
}

struct summary_options {
    /// Appended to the file name (TF's filename_suffix), e.g. ".train".
    std::string filename_suffix;
    /// Seconds since the epoch for wall_time; default: the system clock. Tests set a fixed clock.
    std::function<double()> clock;
};

/// Writes one event file in a log directory, as tf.summary.FileWriter does.
class summary_writer {
public:
    /// Creates `log_dir` if needed and the file events.out.tfevents.<unix seconds, 10 digits>.<hostname>
    /// (".<n>" added when that name is taken), then writes the file_version event. Throws io_error.
    explicit summary_writer(const std::string& log_dir, summary_options opts = {})
        : opts_(std::move(opts)), start_(now()), writer_(new_file_name(log_dir, opts_.filename_suffix, start_)) {
        event first;
        first.wall_time = static_cast<double>(static_cast<long long>(start_));  // whole seconds, like TF
        first.file_version = std::string(event_file_version);
        add_event(first);
    }

    /// Appends an event as it is. Throws io_error.
    void add_event(const event& e) { writer_.write(encode_event(e)); }

    /// A scalar for the Scalars tab: Event{wall_time, step, summary{value{tag, simple_value}}}.
    /// Throws io_error.
    void add_scalar(std::string_view tag, float value, std::int64_t step) {
        event e = stamped(step);
        e.scalars.emplace_back(std::string(tag), value);
        add_event(e);
    }
    /// Several scalars of one step in one event. Throws io_error.
    void add_scalars(const std::vector<std::pair<std::string, float>>& values, std::int64_t step) {
        event e = stamped(step);
        e.scalars = values;
        e.has_summary = true;
        add_event(e);
    }
    /// A serialized tensorflow.Summary as TF's summary ops make it (ScalarSummary, HistogramSummary,
    /// MergeSummary: a scalar string tensor's value), as FileWriter.add_summary does. Throws io_error.
    void add_summary(std::string_view summary_bytes, std::int64_t step) {
        event e = stamped(step);
        std::string bytes = encode_event(e);
        tf::wire::writer w;
        w.message(detail::event_summary, summary_bytes);  // `what` is a oneof: written even when empty
        writer_.write(bytes + w.str());
    }
    /// A serialized GraphDef for the Graphs tab. Throws io_error.
    void add_graph_def(std::string graph_def_bytes, std::int64_t step = 0) {
        event e = stamped(step);
        e.graph_def = std::move(graph_def_bytes);
        add_event(e);
    }
    /// `g` as a GraphDef for the Graphs tab (calls graft::tf::serialize_graph_def: link graft::compiled).
    /// Throws io_error, unimplemented_error for a tensor attr graft cannot encode.
    void add_graph(const graft::graph& g, std::int64_t step = 0) { add_graph_def(tf::serialize_graph_def(g), step); }

    /// fsyncs the file. Throws io_error.
    void flush() { writer_.flush(); }
    /// Flushes and closes; later adds throw. Throws io_error.
    void close() { writer_.close(); }
    /// The event file's path. Never throws.
    [[nodiscard]] const std::string& path() const { return writer_.path(); }

private:
    static std::string new_file_name(const std::string& log_dir, const std::string& suffix, double t) {
        std::error_code ec;
        std::filesystem::create_directories(log_dir, ec);
        if (ec) {
            throw io_error("cannot create the log directory: " + ec.message(), location::in_file(log_dir));
        }
        char host[256] = {};
        if (::gethostname(host, sizeof host - 1) != 0 || !host[0]) std::strcpy(host, "localhost");
        char secs[32];
        std::snprintf(secs, sizeof secs, "%010lld", static_cast<long long>(t));
        std::string base = (std::filesystem::path(log_dir) / "events.out.tfevents.").string() + secs + "." + host;
        std::string name = base + suffix;
        for (int n = 1; std::filesystem::exists(name); ++n) name = base + "." + std::to_string(n) + suffix;
        return name;
    }
    double now() const {
        if (opts_.clock) return opts_.clock();
        using namespace std::chrono;
        return duration<double>(system_clock::now().time_since_epoch()).count();
    }
    event stamped(std::int64_t step) const {
        event e;
        e.wall_time = now();
        e.step = step;
        return e;
    }

    summary_options opts_;
    double start_;
    tfrecord_writer writer_;
};

}  // namespace graft::train
