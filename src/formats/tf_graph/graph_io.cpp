// graft::compiled graph files: format detection, loading, SavedModel MetaGraph selection, writing, and
// protobuf text format through graft's own generated messages.
#include "graft/formats/tf_graph/graph_io.hpp"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <set>

#include "codec.hpp"
#include "graft/core/file_set.hpp"
#include "graft/core/io.hpp"
#include "graft/core/limits.hpp"
#include "graft_tf/graph.pb.h"
#include "graft_tf/meta_graph.pb.h"
#include "graft_tf/saved_model.pb.h"

namespace graft::tf {

namespace fs = std::filesystem;

std::string format_name(file_format f) {
    switch (f) {
        case file_format::graph_def: return "GraphDef (binary)";
        case file_format::graph_def_text: return "GraphDef (text)";
        case file_format::meta_graph: return "MetaGraphDef (binary)";
        case file_format::meta_graph_text: return "MetaGraphDef (text)";
        case file_format::saved_model: return "SavedModel";
        case file_format::saved_model_text: return "SavedModel (text saved_model.pbtxt)";
        case file_format::checkpoint: return "checkpoint";
        case file_format::unknown: break;
    }
    return "unknown";
}

namespace {

/// libprotobuf reports some problems only through its log (stderr), not through a return value.
/// While graft calls into it, this thread's messages are kept for graft's error; the messages of
/// other callers go on to the handler installed before graft's.
class protobuf_log_capture {
public:
    protobuf_log_capture() {
        static std::once_flag once;
        std::call_once(once, [] { previous() = google::protobuf::SetLogHandler(&handle); });
        sink() = &text_;
    }
    protobuf_log_capture(const protobuf_log_capture&) = delete;
    protobuf_log_capture& operator=(const protobuf_log_capture&) = delete;
    ~protobuf_log_capture() { sink() = nullptr; }
    /// "; libprotobuf said: ..." or empty.
    [[nodiscard]] std::string said() const { return text_.empty() ? std::string() : "; libprotobuf said: " + text_; }

private:
    static void handle(google::protobuf::LogLevel level, const char* file, int line, const std::string& msg) {
        if (std::string* s = sink()) {
            if (!s->empty()) *s += " | ";
            *s += msg;
            return;
        }
        if (auto* p = previous()) p(level, file, line, msg);
    }
    static std::string*& sink() {
        thread_local std::string* s = nullptr;
        return s;
    }
    static google::protobuf::LogHandler*& previous() {
        static google::protobuf::LogHandler* p = nullptr;
        return p;
    }
    std::string text_;
};

std::string read_file_head(const std::string& path, std::size_t n) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw io_error("cannot open", location::in_file(path), "check the path and permissions");
    std::string s(n, '\0');
    in.read(s.data(), static_cast<std::streamsize>(n));
    s.resize(static_cast<std::size_t>(in.gcount()));
    return s;
}

/// True when the file ends with the LevelDB/TF table magic (V1 checkpoints, .index files).
bool is_sstable(const std::string& path) {
    std::error_code ec;
    auto size = fs::file_size(path, ec);
    if (ec || size < 48) return false;
    std::ifstream in(path, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(size - 8));
    unsigned char m[8] = {};
    in.read(reinterpret_cast<char*>(m), 8);
    static const unsigned char magic[8] = {0x57, 0xFB, 0x80, 0x8B, 0x24, 0x75, 0x47, 0xDB};
    return in.gcount() == 8 && std::equal(m, m + 8, magic);
}

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

/// The message kind a text file holds, from its first field name; unknown if not text.
file_format sniff_text(std::string_view b) {
    std::size_t i = 0;
    auto n = std::min<std::size_t>(b.size(), 4096);
    for (std::size_t k = 0; k < n; ++k) {
        auto c = static_cast<unsigned char>(b[k]);
        if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') return file_format::unknown;
    }
    for (;;) {
        while (i < b.size() && std::isspace(static_cast<unsigned char>(b[i]))) ++i;
        if (i < b.size() && b[i] == '#') {
            while (i < b.size() && b[i] != '\n') ++i;
            continue;
        }
        break;
    }
    std::size_t j = i;
    while (j < b.size() && (std::isalnum(static_cast<unsigned char>(b[j])) || b[j] == '_')) ++j;
    std::string_view id = b.substr(i, j - i);
    while (j < b.size() && (b[j] == ' ' || b[j] == '\t' || b[j] == '\n' || b[j] == '\r')) ++j;
    if (id.empty() || j >= b.size() || (b[j] != ':' && b[j] != '{' && b[j] != '<')) return file_format::unknown;
    if (id == "node" || id == "library" || id == "versions" || id == "version" || id == "debug_info") {
        return file_format::graph_def_text;
    }
    if (id == "saved_model_schema_version" || id == "meta_graphs") return file_format::saved_model_text;
    if (id == "meta_info_def" || id == "graph_def" || id == "saver_def" || id == "collection_def" ||
        id == "signature_def" || id == "asset_file_def" || id == "object_graph_def") {
        return file_format::meta_graph_text;
    }
    return file_format::unknown;
}

/// Top-level fields of a binary message, as (field, wire type, payload) for the first few.
struct field_peek {
    std::uint32_t field;
    wire::wire_type type;
    std::string_view payload;
};
std::vector<field_peek> peek_fields(std::string_view b, std::size_t max) {
    std::vector<field_peek> r;
    try {
        wire::reader rd(b);
        std::uint32_t k;
        wire::wire_type t;
        while (r.size() < max && rd.next(k, t)) {
            if (t == wire::wire_type::bytes) r.push_back({k, t, rd.bytes()});
            else { rd.skip(t); r.push_back({k, t, {}}); }
        }
    } catch (const format_error&) {
        r.push_back({0, wire::wire_type::varint, {}});  // not well formed here: leave the decision to the extension
    }
    return r;
}

/// Which binary message `b` most likely is; `guess` (from the extension) when unsure.
file_format sniff_binary(std::string_view b, file_format guess) {
    auto top = peek_fields(b, 64);
    if (top.empty()) return guess;
    int ones = 0;
    for (auto& f : top) {
        if (f.field == 0) return guess;
        if (f.field == 1 && f.type == wire::wire_type::varint) return file_format::saved_model;
        if ((f.field == 3 || f.field == 6 || f.field == 7) && f.type == wire::wire_type::bytes) return file_format::meta_graph;
        if (f.field == 3 && f.type == wire::wire_type::varint) return file_format::graph_def;
        if (f.field == 1) ++ones;
        if (f.field > 7) return guess;
    }
    if (ones > 1) return file_format::graph_def;
    // a single field 1: a NodeDef (op is a printable name) or a MetaInfoDef (OpList, bool, version)
    for (auto& f : top) {
        if (f.field != 1) continue;
        for (auto& g : peek_fields(f.payload, 16)) {
            if (g.field == 7 && g.type == wire::wire_type::varint) return file_format::meta_graph;
            if (g.field == 2 && g.type == wire::wire_type::bytes && !g.payload.empty()) {
                return g.payload[0] == '\n' ? file_format::meta_graph : file_format::graph_def;
            }
            if (g.field == 5 && g.type == wire::wire_type::bytes && !g.payload.empty()) {
                return g.payload[0] == '\n' ? file_format::graph_def : file_format::meta_graph;
            }
        }
    }
    return guess;
}

std::string saved_model_file(const std::string& dir) {
    for (const char* n : {"saved_model.pb", "saved_model.pbtxt"}) {
        auto p = fs::path(dir) / n;
        if (fs::exists(p)) return p.string();
    }
    return {};
}

template <class Msg>
std::string text_to_binary(std::string_view text, const std::string& file) {
    struct collector : google::protobuf::io::ErrorCollector {
        std::string first;
        void AddError(int line, int col, const std::string& msg) override {
            if (first.empty()) first = graft::detail::cat("line ", line + 1, " column ", col + 1, ": ", msg);
        }
    } errors;
    if (text.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
        throw format_error(graft::detail::cat("a text ", Msg::descriptor()->name(), " of ", text.size(),
                                              " bytes: libprotobuf reads at most 2 GiB of text"),
                           location::in_file(file), "store the graph in the binary format");
    }
    protobuf_log_capture log;
    Msg m;
    google::protobuf::TextFormat::Parser parser;
    parser.RecordErrorsTo(&errors);
    google::protobuf::io::ArrayInputStream in(text.data(), static_cast<int>(text.size()));
    if (!parser.Parse(&in, &m)) {
        throw format_error(graft::detail::cat("not a valid text ", Msg::descriptor()->name(), ": ", errors.first, log.said()),
                           location::in_file(file), "check the protobuf text syntax at that line");
    }
    std::string out;
    {
        google::protobuf::io::StringOutputStream so(&out);
        google::protobuf::io::CodedOutputStream co(&so);
        co.SetSerializationDeterministic(true);  // maps sorted by key: the same text gives the same bytes
        if (!m.SerializeToCodedStream(&co)) {
            throw format_error(graft::detail::cat("text ", Msg::descriptor()->name(), " too large to serialize", log.said()),
                               location::in_file(file));
        }
    }
    return out;
}

template <class Msg>
std::string binary_to_text(std::string_view bin) {
    if (bin.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
        throw format_error(graft::detail::cat("a ", Msg::descriptor()->name(), " of ", bin.size(),
                                              " bytes has no text form: libprotobuf handles at most 2 GiB"));
    }
    protobuf_log_capture log;
    Msg m;
    google::protobuf::io::ArrayInputStream in(bin.data(), static_cast<int>(bin.size()));
    google::protobuf::io::CodedInputStream cin(&in);
    cin.SetTotalBytesLimit(std::numeric_limits<int>::max());
    if (!m.ParseFromCodedStream(&cin)) {
        throw format_error(graft::detail::cat("graft produced bytes protobuf cannot parse as ", Msg::descriptor()->name(),
                                              log.said()));
    }
    std::string out;
    google::protobuf::TextFormat::Printer p;
    p.SetUseUtf8StringEscaping(true);
    p.PrintToString(m, &out);
    return out;
}

/// File bytes: mapped when binary (no copy), converted to binary when text.
struct loaded_bytes {
    std::shared_ptr<mapped_file> map;
    std::string converted;
    std::string_view view() const { return map ? map->view() : std::string_view(converted); }
};

loaded_bytes read_as_binary(const std::string& file, file_format f) {
    loaded_bytes lb;
    switch (f) {
        case file_format::graph_def_text:
            lb.converted = text_to_binary<graft::proto::GraphDef>(read_file(file), file);
            break;
        case file_format::meta_graph_text:
            lb.converted = text_to_binary<graft::proto::MetaGraphDef>(read_file(file), file);
            break;
        case file_format::saved_model_text:
            lb.converted = text_to_binary<graft::proto::SavedModel>(read_file(file), file);
            break;
        default:
            lb.map = mapped_file::open(file);
            lb.map->will_need();
    }
    return lb;
}

/// Checks a graph after loading; errors name `file`.
void check(const graft::graph& g, const std::string& file) { g.validate(file); }

std::string join_tags(std::vector<std::string> t) {
    std::sort(t.begin(), t.end());
    std::string s = "{";
    for (std::size_t i = 0; i < t.size(); ++i) s += (i ? ", " : "") + t[i];
    return s + "}";
}

}  // namespace

file_format detect_format(const std::string& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        auto f = saved_model_file(path);
        if (f.empty()) {
            throw format_error("directory holds no saved_model.pb or saved_model.pbtxt", location::in_file(path),
                               "pass a SavedModel directory, a .pb/.pbtxt/.meta file or a checkpoint prefix");
        }
        return ends_with(f, ".pbtxt") ? file_format::saved_model_text : file_format::saved_model;
    }
    if (!fs::exists(path, ec)) {
        if (fs::exists(path + ".index", ec)) return file_format::checkpoint;
        throw io_error("no such file or directory", location::in_file(path), "check the path");
    }
    if (ends_with(path, ".index") || ends_with(path, ".data-00000-of-00001")) return file_format::checkpoint;
    if (is_sstable(path)) return file_format::checkpoint;  // a V1 checkpoint file
    auto head = read_file_head(path, 4096);
    auto name = fs::path(path).filename().string();
    if (auto t = sniff_text(head); t != file_format::unknown) return t;
    file_format guess = file_format::graph_def;
    if (ends_with(name, ".meta")) guess = file_format::meta_graph;
    if (name == "saved_model.pb") guess = file_format::saved_model;
    if (ends_with(name, ".pbtxt") || ends_with(name, ".txt")) {
        throw format_error("file has a text extension but does not start like protobuf text", location::in_file(path),
                           "expected a first field such as `node {` or `meta_info_def {`");
    }
    if (head.size() < 4096) return sniff_binary(head, guess);
    auto m = mapped_file::open(path);
    return sniff_binary(m->view(), guess);
}

graft::saved_model parse_saved_model(std::string_view bytes, const std::string& file, bool validate) {
    graft::load_scope budget(file.empty() ? std::string("<SavedModel bytes>") : file);
    graft::saved_model sm;
    codec::decode_saved_model(wire::reader(bytes, file, 0, "SavedModel"), sm);
    if (validate) for (auto& mg : sm.meta_graphs) check(mg.graph, file);
    return sm;
}

graft::meta_graph parse_meta_graph_def(std::string_view bytes, const std::string& file, bool validate) {
    graft::load_scope budget(file.empty() ? std::string("<MetaGraphDef bytes>") : file);
    graft::meta_graph mg;
    codec::decode_meta_graph(wire::reader(bytes, file, 0, "MetaGraphDef"), mg);
    if (validate) check(mg.graph, file);
    return mg;
}

graft::graph parse_graph_def(std::string_view bytes, const std::string& file, bool validate) {
    graft::load_scope budget(file.empty() ? std::string("<GraphDef bytes>") : file);
    graft::graph g;
    codec::decode_graph(wire::reader(bytes, file, 0, "GraphDef"), g);
    if (validate) check(g, file);
    return g;
}

std::string serialize_graph_def(const graft::graph& g) {
    std::string o;
    codec::encode_graph(o, g);
    return o;
}
std::string serialize_meta_graph_def(const graft::meta_graph& mg) {
    std::string o;
    codec::encode_meta_graph(o, mg);
    return o;
}
std::string serialize_saved_model(const graft::saved_model& sm) {
    std::string o;
    codec::encode_saved_model(o, sm);
    return o;
}

std::string to_text(std::string_view binary, file_format kind) {
    switch (kind) {
        case file_format::graph_def: case file_format::graph_def_text: return binary_to_text<graft::proto::GraphDef>(binary);
        case file_format::meta_graph: case file_format::meta_graph_text: return binary_to_text<graft::proto::MetaGraphDef>(binary);
        case file_format::saved_model: case file_format::saved_model_text: return binary_to_text<graft::proto::SavedModel>(binary);
        default: throw invalid_argument_error("to_text: kind must be a GraphDef, MetaGraphDef or SavedModel");
    }
}

std::string from_text(std::string_view text, file_format kind, const std::string& file) {
    switch (kind) {
        case file_format::graph_def: case file_format::graph_def_text: return text_to_binary<graft::proto::GraphDef>(text, file);
        case file_format::meta_graph: case file_format::meta_graph_text: return text_to_binary<graft::proto::MetaGraphDef>(text, file);
        case file_format::saved_model: case file_format::saved_model_text: return text_to_binary<graft::proto::SavedModel>(text, file);
        default: throw invalid_argument_error("from_text: kind must be a GraphDef, MetaGraphDef or SavedModel");
    }
}

graft::saved_model load_saved_model(const std::string& path, const load_options& opts) {
    auto f = detect_format(path);
    std::string file = path;
    std::string dir = path;
    if (fs::is_directory(path)) {
        recover_file_set((fs::path(path) / "saved_model").string());  // a save over it that died half-way
        file = saved_model_file(path);
    } else {
        dir = fs::path(path).parent_path().string();
    }
    if (f != file_format::saved_model && f != file_format::saved_model_text) {
        throw format_error(graft::detail::cat("not a SavedModel but a ", format_name(f)), location::in_file(path),
                           "use load_meta_graph or load_graph for this file");
    }
    auto lb = read_as_binary(file, f);
    auto sm = parse_saved_model(lb.view(), file, opts.validate);
    sm.dir = dir.empty() ? "." : dir;
    return sm;
}

graft::meta_graph& select_meta_graph(graft::saved_model& sm, const std::vector<std::string>& tags) {
    auto want = tags.empty() ? std::vector<std::string>{"serve"} : tags;
    std::set<std::string> w(want.begin(), want.end());
    for (auto& mg : sm.meta_graphs) {
        if (std::set<std::string>(mg.info.tags.begin(), mg.info.tags.end()) == w) return mg;
    }
    if (tags.empty() && sm.meta_graphs.size() == 1) return sm.meta_graphs.front();
    std::string have;
    for (auto& mg : sm.meta_graphs) have += (have.empty() ? "" : ", ") + join_tags(mg.info.tags);
    throw not_found_error(graft::detail::cat("no MetaGraph with tags ", join_tags(want)), location::in_file(sm.dir),
                          have.empty() ? "the SavedModel holds no MetaGraph" : "tag sets present: " + have);
}

graft::meta_graph load_meta_graph(const std::string& path, const load_options& opts) {
    if (ends_with(path, ".meta")) recover_file_set(path.substr(0, path.size() - 5));  // a Saver's set
    auto f = detect_format(path);
    switch (f) {
        case file_format::saved_model:
        case file_format::saved_model_text: {
            auto sm = load_saved_model(path, opts);
            return std::move(select_meta_graph(sm, opts.tags));
        }
        case file_format::meta_graph:
        case file_format::meta_graph_text: {
            auto lb = read_as_binary(path, f);
            return parse_meta_graph_def(lb.view(), path, opts.validate);
        }
        case file_format::graph_def:
        case file_format::graph_def_text: {
            auto lb = read_as_binary(path, f);
            graft::meta_graph mg;
            mg.graph = parse_graph_def(lb.view(), path, opts.validate);
            return mg;
        }
        default:
            throw format_error(graft::detail::cat("a ", format_name(f), " holds no graph"), location::in_file(path),
                               "a checkpoint's graph is in <prefix>.meta");
    }
}

graft::graph load_graph(const std::string& path, const load_options& opts) {
    auto f = detect_format(path);
    if (f == file_format::graph_def || f == file_format::graph_def_text) {
        auto lb = read_as_binary(path, f);
        return parse_graph_def(lb.view(), path, opts.validate);
    }
    return std::move(load_meta_graph(path, opts).graph);
}

namespace {
bool wants_text(const std::string& path, file_format fmt, file_format text_kind) {
    if (fmt != file_format::unknown) return fmt == text_kind;
    return ends_with(path, ".pbtxt") || ends_with(path, ".txt");
}
}  // namespace

void write_graph(const graft::graph& g, const std::string& path, file_format fmt) {
    auto bin = serialize_graph_def(g);
    write_file_atomic(path, wants_text(path, fmt, file_format::graph_def_text) ? to_text(bin, file_format::graph_def) : bin);
}

void write_meta_graph(const graft::meta_graph& mg, const std::string& path, file_format fmt) {
    auto bin = serialize_meta_graph_def(mg);
    write_file_atomic(path, wants_text(path, fmt, file_format::meta_graph_text) ? to_text(bin, file_format::meta_graph) : bin);
}

void convert(const std::string& in, const std::string& out) {
    auto f = detect_format(in);
    bool text = ends_with(out, ".pbtxt") || ends_with(out, ".txt");
    switch (f) {
        case file_format::graph_def:
        case file_format::graph_def_text:
            write_graph(load_graph(in, {{}, false}), out, text ? file_format::graph_def_text : file_format::graph_def);
            return;
        case file_format::meta_graph:
        case file_format::meta_graph_text:
            write_meta_graph(load_meta_graph(in, {{}, false}), out,
                             text ? file_format::meta_graph_text : file_format::meta_graph);
            return;
        case file_format::saved_model:
        case file_format::saved_model_text: {
            auto sm = load_saved_model(in, {{}, false});
            auto bin = serialize_saved_model(sm);
            write_file_atomic(out, text ? to_text(bin, file_format::saved_model) : bin);
            return;
        }
        default:
            throw format_error(graft::detail::cat("cannot convert a ", format_name(f)), location::in_file(in),
                               "convert reads .pb, .pbtxt, .meta and SavedModel directories");
    }
}

graft::variable_def decode_variable_def(std::string_view bytes) {
    return codec::decode_variable_def(wire::reader(bytes, {}, 0, "VariableDef"));
}
std::string encode_variable_def(const graft::variable_def& v) { return codec::encode_variable_def(v); }

std::vector<std::string> variable_keys_from_object_graph(std::string_view bytes) {
    auto nodes = codec::decode_trackable_object_graph(wire::reader(bytes, {}, 0, "TrackableObjectGraph"));
    std::vector<std::string> keys(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        for (auto& [name, key] : nodes[i].attributes) {
            if (name == "VARIABLE_VALUE") keys[i] = key;
        }
    }
    return keys;
}

}  // namespace graft::tf
