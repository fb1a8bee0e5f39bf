// src/formats/tf_graph/codec.hpp — internal to graft::compiled: the binary wire codec between TensorFlow's graph protos
// (GraphDef, NodeDef, AttrValue, OpDef, FunctionDef, MetaGraphDef, SavedModel, ...) and graft's
// IR. Written by hand on the wire format: one pass, no intermediate protobuf objects, errors with
// file offsets, and every field graft does not model kept verbatim in `extra_fields`.
#pragma once

#include <cstring>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graft/graph/meta_graph.hpp"
#include "graft/formats/tf/tensor_proto.hpp"
#include "graft/formats/tf/wire.hpp"

namespace graft::tf::codec {

using wire::reader;
using wire::wire_type;
// TensorShapeProto / TensorProto: tensor_proto.hpp
using graft::tf::proto::decode_shape;
using graft::tf::proto::decode_tensor_header;
using graft::tf::proto::encode_shape;

// ---- graph.cpp
attr_value decode_attr(reader r);
void encode_attr(std::string& o, const attr_value& v);
void decode_attr_entry(reader r, attr_map& into);
void encode_attr_map(std::string& o, std::uint32_t field, const attr_map& m);
/// An insert-only hash table from byte strings (views into the file, which outlives it) to T:
/// open addressing with linear probing, full 64-bit hashes kept in the slots, load <= 1/2.
template <class T>
class bytes_table {
public:
    static std::uint64_t hash(std::string_view s) noexcept { return graft::detail::name_index::hash(s); }
    /// The value stored under `key` (whose hash is `h`), or nullptr.
    T* find(std::string_view key, std::uint64_t h) noexcept {
        if (slots_.empty()) return nullptr;
        auto mask = slots_.size() - 1;
        for (auto i = h & mask;; i = (i + 1) & mask) {
            const slot& s = slots_[i];
            if (!s.data) return nullptr;
            if (s.hash == h && s.size == key.size() && std::memcmp(s.data, key.data(), key.size()) == 0) {
                return &values_[s.value];
            }
        }
    }
    /// Stores `v` under `key` (absent); returns the stored value.
    T& insert(std::string_view key, std::uint64_t h, T v) {
        if (2 * (values_.size() + 1) > slots_.size()) grow();
        auto mask = slots_.size() - 1;
        auto i = h & mask;
        while (slots_[i].data) i = (i + 1) & mask;
        slots_[i] = {h, key.data() ? key.data() : "", key.size(), values_.size()};
        values_.push_back(std::move(v));
        return values_.back();
    }
    void reserve(std::size_t n) {
        while (slots_.size() < 2 * n) grow();
    }

private:
    struct slot {
        std::uint64_t hash = 0;
        const char* data = nullptr;
        std::size_t size = 0;
        std::size_t value = 0;
    };
    void grow() {
        std::vector<slot> old(slots_.empty() ? 64 : slots_.size() * 2);
        old.swap(slots_);
        auto mask = slots_.size() - 1;
        for (auto& s : old) {
            if (!s.data) continue;
            auto i = s.hash & mask;
            while (slots_[i].data) i = (i + 1) & mask;
            slots_[i] = s;
        }
    }
    std::vector<slot> slots_;
    std::deque<T> values_;  // stable addresses
};

/// Decoded attr values by their serialized bytes, shared across the nodes of one GraphDef: equal
/// attrs (T, _output_shapes, data_format, _class, small tensors, ...) are decoded once and share
/// their payload, and nodes whose attrs are byte-identical share one attr set.
struct attr_cache {
    bytes_table<attr_value> values;
    bytes_table<attr_map> maps;  ///< all attrs of a node, by their bytes
};
node decode_node(reader r, attr_cache* cache = nullptr);
/// As decode_node, filling `n` (a fresh node) in place.
void decode_node_into(reader r, attr_cache* cache, node& n);
void encode_node(std::string& o, const node& n);
op_def decode_op_def(reader r);
/// decode_op_def of serialized OpDef bytes (an op_list::decoder).
op_def decode_op_def_bytes(std::string_view bytes);
void encode_op_def(std::string& o, const op_def& d);
function_def decode_function(reader r);
void encode_function(std::string& o, const function_def& f);
void decode_library(reader r, function_library& lib);
void encode_library(std::string& o, const function_library& lib);
/// Fills `g` from GraphDef bytes (nodes, library, versions, debug info). Does not validate.
void decode_graph(reader r, graph& g);
void encode_graph(std::string& o, const graph& g);

// ---- meta.cpp
void decode_meta_graph(reader r, meta_graph& mg);
void encode_meta_graph(std::string& o, const meta_graph& mg);
void decode_saved_model(reader r, saved_model& sm);
void encode_saved_model(std::string& o, const saved_model& sm);
variable_def decode_variable_def(reader r);
std::string encode_variable_def(const variable_def& v);
saved_object_graph decode_object_graph(reader r);

/// TrackableObjectGraph, the parts used to map object ids to checkpoint keys.
struct trackable_object {
    std::vector<std::pair<int, std::string>> children;
    std::vector<std::pair<std::string, std::string>> attributes;  ///< (name, checkpoint_key)
};
std::vector<trackable_object> decode_trackable_object_graph(reader r);

/// Appends the raw bytes of the field that started at `field_start` (tag included) and ends at
/// r.pos() after the caller skipped it.
inline void keep_unknown(std::string& extra, reader& r, const char* field_start, wire_type type) {
    r.skip(type);
    extra.append(field_start, static_cast<std::size_t>(r.pos() - field_start));
}
/// keep_unknown for a compact_string field (rarely set: one allocation per field kept).
inline void keep_unknown(compact_string& extra, reader& r, const char* field_start, wire_type type) {
    r.skip(type);
    std::string all(extra.view());
    all.append(field_start, static_cast<std::size_t>(r.pos() - field_start));
    extra = all;
}

}  // namespace graft::tf::codec
