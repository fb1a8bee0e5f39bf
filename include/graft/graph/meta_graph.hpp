// graft/graph/meta_graph.hpp — everything a MetaGraphDef carries besides the graph: meta info
// (tags, TF version, stripped op list), saver, collections, signatures, assets and, for TF2
// SavedModels, the object graph. Protobuf-free; graft/formats/tf_graph/graph_io.hpp reads and writes it.
//
//   graft::meta_graph mg = graft::tf::load_meta_graph("model.ckpt.meta");
//   mg.graph.size();  mg.collections.at("variables").variables[0].variable_name == "w:0";
//   const auto& sig = mg.signature("serving_default");   // throws not_found_error listing the keys
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graft/graph/graph.hpp"

namespace graft {

/// google.protobuf.Any, kept as is.
struct any_value {
    std::string type_url;
    std::string value;
    friend bool operator==(const any_value&, const any_value&) = default;
};

/// SaveSliceInfoDef of a partitioned variable.
struct save_slice_info {
    std::string full_name;
    std::vector<std::int64_t> full_shape, var_offset, var_shape;
    friend bool operator==(const save_slice_info&, const save_slice_info&) = default;
};

/// VariableDef (decoded from the bytes of the variable collections).
struct variable_def {
    std::string variable_name;       ///< "w:0"
    std::string initial_value_name;  ///< "w/initial_value:0"
    std::string initializer_name;    ///< "w/Assign"
    std::string snapshot_name;       ///< "w/read:0"
    std::optional<save_slice_info> save_slice_info_def;
    bool is_resource = false;
    bool trainable = false;
    bool has_trainable = false;  ///< false in TF <= 1.4 files, which lack the field
    int synchronization = 0, aggregation = 0;
    friend bool operator==(const variable_def&, const variable_def&) = default;
};

/// CollectionDef. Exactly one list is used, as `kind` says. For bytes lists, `values` holds the
/// bytes (authoritative, written back); `variables` holds them decoded when they are VariableDefs.
struct collection_def {
    enum class kind { none, node_list, bytes_list, int64_list, float_list, any_list };
    kind which = kind::none;
    std::vector<std::string> values;  ///< node_list names or bytes_list items
    std::vector<std::int64_t> int64s;
    std::vector<float> floats;
    std::vector<any_value> anys;
    std::vector<variable_def> variables;  ///< decoded VariableDef items (variable collections only)
    std::string extra_fields;
    friend bool operator==(const collection_def& a, const collection_def& b) {
        return a.which == b.which && a.values == b.values && a.int64s == b.int64s && a.floats == b.floats &&
               a.anys == b.anys && a.extra_fields == b.extra_fields;
    }
};

/// TensorInfo: a signature input or output.
struct tensor_info {
    std::string name;  ///< "op:index" for a dense tensor (or an op name, as in __saved_model_init_op)
    graft::dtype dtype = graft::dtype::invalid;
    std::optional<graft::shape> shape;  ///< absent when the TensorInfo has no tensor_shape
    /// Sparse (COO) tensors: the three component names; composite tensors: the serialized
    /// CompositeTensor. Empty for dense tensors.
    std::string coo_values, coo_indices, coo_dense_shape;
    std::string composite_tensor;
    std::string extra_fields;

    [[nodiscard]] bool is_dense() const { return !name.empty(); }
    /// The tensor as an endpoint. Throws invalid_argument_error for a sparse/composite tensor.
    [[nodiscard]] endpoint tensor() const {
        if (name.empty()) {
            throw invalid_argument_error("signature tensor is sparse or composite, not one named tensor",
                                         location::at_tensor(coo_values), "use its component names");
        }
        return endpoint::parse(name);
    }
    friend bool operator==(const tensor_info&, const tensor_info&) = default;
};

/// SignatureDef.
struct signature_def {
    std::map<std::string, tensor_info> inputs, outputs;
    std::string method_name;
    std::map<std::string, tensor_value> defaults;
    std::string extra_fields;
    friend bool operator==(const signature_def&, const signature_def&) = default;
};

/// SaverDef.
struct saver_def {
    std::string filename_tensor_name;  ///< "save/Const:0"
    std::string save_tensor_name;      ///< "save/control_dependency:0"
    std::string restore_op_name;       ///< "save/restore_all"
    std::int32_t max_to_keep = 0;
    bool sharded = false;
    float keep_checkpoint_every_n_hours = 0;
    int version = 0;  ///< 0 LEGACY, 1 V1, 2 V2
    std::string extra_fields;
    friend bool operator==(const saver_def&, const saver_def&) = default;
};

/// AssetFileDef.
struct asset_file {
    tensor_info tensor;    ///< the tensor to feed with the asset's absolute path
    std::string filename;  ///< basename inside assets/
    friend bool operator==(const asset_file&, const asset_file&) = default;
};

/// MetaInfoDef.stripped_op_list: op_defs in file order, used like a std::vector<op_def>.
///
/// A loaded list keeps each OpDef as its serialized bytes and decodes it on first access (so an
/// unread list costs about its file bytes, not ~6x that decoded), and writes unedited entries back
/// byte for byte. Elements are shared with copies of the list and with a graph's op_registry; a
/// non-const access gives this list its own decoded copy first (copy-on-write), so editing the list
/// never changes a registry or another list.
class op_list {
public:
    /// Decodes one serialized OpDef; the TF codec (graft::compiled) supplies it with the bytes.
    using decoder = op_def (*)(std::string_view bytes);

private:
    struct item {
        std::string name;    // OpDef.name, known without decoding
        std::string bytes;   // serialized OpDef as read; empty when built or edited in memory
        decoder decode = nullptr;
        mutable std::once_flag once;
        mutable std::shared_ptr<op_def> def;  // null until decoded (set at once when built in memory)
    };
    using ptr = std::shared_ptr<item>;
    using store = std::vector<ptr>;

    static ptr make(op_def d) {
        auto it = std::make_shared<item>();
        it->name = d.name;
        it->def = std::make_shared<op_def>(std::move(d));
        return it;
    }
    /// The decoded op_def of `it` (decoding it once, thread-safe: a loaded item's `def` is only read
    /// after call_once). Throws what the decoder throws.
    static op_def& decoded(const item& it) {
        if (it.decode) {
            std::call_once(it.once, [&] {
                if (!it.def) it.def = std::make_shared<op_def>(it.decode(it.bytes));
            });
        }
        return *it.def;
    }

    template <class Ref, class It>
    class iter {
    public:
        using value_type = op_def;
        using difference_type = std::ptrdiff_t;
        using reference = Ref&;
        using pointer = Ref*;
        using iterator_category = std::random_access_iterator_tag;
        iter() = default;
        explicit iter(It it) : it_(it) {}
        Ref& operator*() const { return decoded(**it_); }
        Ref* operator->() const { return &decoded(**it_); }
        Ref& operator[](difference_type n) const { return decoded(*it_[n]); }
        iter& operator++() { ++it_; return *this; }
        iter operator++(int) { auto t = *this; ++it_; return t; }
        iter& operator--() { --it_; return *this; }
        iter operator--(int) { auto t = *this; --it_; return t; }
        iter& operator+=(difference_type n) { it_ += n; return *this; }
        iter& operator-=(difference_type n) { it_ -= n; return *this; }
        friend iter operator+(iter a, difference_type n) { return a += n; }
        friend iter operator+(difference_type n, iter a) { return a += n; }
        friend iter operator-(iter a, difference_type n) { return a -= n; }
        friend difference_type operator-(const iter& a, const iter& b) { return a.it_ - b.it_; }
        friend bool operator==(const iter& a, const iter& b) { return a.it_ == b.it_; }
        friend auto operator<=>(const iter& a, const iter& b) { return a.it_ <=> b.it_; }
        It base() const { return it_; }

    private:
        It it_{};
    };

public:
    using value_type = op_def;
    using size_type = std::size_t;
    using iterator = iter<op_def, store::iterator>;
    using const_iterator = iter<const op_def, store::const_iterator>;

    op_list() = default;
    op_list(std::initializer_list<op_def> l) { for (auto& d : l) push_back(d); }
    op_list(const std::vector<op_def>& v) { for (auto& d : v) push_back(d); }  // NOLINT: implicit by design
    op_list(const op_list&) = default;
    op_list(op_list&&) noexcept = default;
    op_list& operator=(const op_list&) = default;
    op_list& operator=(op_list&&) noexcept = default;

    [[nodiscard]] std::size_t size() const { return items_.size(); }
    [[nodiscard]] bool empty() const { return items_.empty(); }
    void reserve(std::size_t n) { items_.reserve(n); }
    void clear() { items_.clear(); }
    void push_back(op_def d) { items_.push_back(make(std::move(d))); }
    template <class... A>
    op_def& emplace_back(A&&... a) {
        items_.push_back(make(op_def(std::forward<A>(a)...)));
        return *items_.back()->def;
    }
    /// Appends the OpDef named `name` serialized as `bytes`, decoded by `decode` on first access;
    /// `decoded` (may be null) is that decoding when the caller already made it. Never throws
    /// (except bad_alloc).
    void push_back_serialized(std::string name, std::string bytes, decoder decode,
                              std::shared_ptr<op_def> decoded = nullptr) {
        auto it = std::make_shared<item>();
        it->name = std::move(name);
        it->bytes = std::move(bytes);
        it->decode = decode;
        it->def = std::move(decoded);
        items_.push_back(std::move(it));
    }
    /// Appends element i of `other`, shared (not decoded, not copied). Never throws (except bad_alloc).
    void push_back_from(const op_list& other, std::size_t i) { items_.push_back(other.items_[i]); }
    void pop_back() { items_.pop_back(); }
    iterator erase(const_iterator it) { return iterator(items_.erase(it.base())); }

    /// The name of element i, without decoding it. Never throws.
    [[nodiscard]] const std::string& name(std::size_t i) const { return items_[i]->name; }
    /// The serialized bytes element i was read from, or empty when it was built or edited in
    /// memory (writers emit these as they are). Never throws.
    [[nodiscard]] std::string_view serialized(std::size_t i) const { return items_[i]->bytes; }

    /// Element access decodes a loaded element on first use (format_error for bad bytes).
    [[nodiscard]] const op_def& operator[](std::size_t i) const { return decoded(*items_[i]); }
    [[nodiscard]] op_def& operator[](std::size_t i) { return own(i); }
    [[nodiscard]] const op_def& front() const { return (*this)[0]; }
    [[nodiscard]] const op_def& back() const { return (*this)[items_.size() - 1]; }
    [[nodiscard]] op_def& front() { return own(0); }
    [[nodiscard]] op_def& back() { return own(items_.size() - 1); }

    [[nodiscard]] const_iterator begin() const { return const_iterator(items_.begin()); }
    [[nodiscard]] const_iterator end() const { return const_iterator(items_.end()); }
    [[nodiscard]] const_iterator cbegin() const { return begin(); }
    [[nodiscard]] const_iterator cend() const { return end(); }
    /// Mutable iteration gives every element its own copy first.
    [[nodiscard]] iterator begin() {
        for (std::size_t i = 0; i < items_.size(); ++i) own(i);
        return iterator(items_.begin());
    }
    [[nodiscard]] iterator end() { return iterator(items_.end()); }

    /// Element i for sharing (read-only; decoded first). Throws like operator[].
    [[nodiscard]] std::shared_ptr<const op_def> shared(std::size_t i) const {
        decoded(*items_[i]);
        return items_[i]->def;
    }
    /// A copy as a plain vector. Throws like operator[].
    [[nodiscard]] std::vector<op_def> to_vector() const {
        std::vector<op_def> r;
        r.reserve(items_.size());
        for (auto& p : items_) r.push_back(decoded(*p));
        return r;
    }

    friend bool operator==(const op_list& a, const op_list& b) {
        if (a.items_.size() != b.items_.size()) return false;
        for (std::size_t i = 0; i < a.items_.size(); ++i) {
            const item& x = *a.items_[i];
            const item& y = *b.items_[i];
            if (&x == &y || (!x.bytes.empty() && x.bytes == y.bytes)) continue;
            if (!(decoded(x) == decoded(y))) return false;
        }
        return true;
    }

private:
    /// Element i, decoded and unshared (copied when a registry or another list holds it too); its
    /// serialized bytes are dropped, since the caller may edit it.
    op_def& own(std::size_t i) {
        auto& p = items_[i];
        const op_def& d = decoded(*p);
        if (p.use_count() > 1 || p->def.use_count() > 1 || !p->bytes.empty()) p = make(d);
        return *p->def;
    }
    store items_;
};

/// MetaInfoDef.
struct meta_info {
    std::string meta_graph_version;
    op_list stripped_op_list;
    bool has_stripped_op_list = false;
    std::optional<any_value> any_info;
    std::vector<std::string> tags;
    std::string tensorflow_version, tensorflow_git_version;
    bool stripped_default_attrs = false;
    std::map<std::string, std::string> function_aliases;
    std::string extra_fields;
    friend bool operator==(const meta_info&, const meta_info&) = default;
};

/// The parts of a TF2 SavedObjectGraph graft uses (node ids = TrackableObjectGraph ids).
struct saved_object {
    enum class kind { other, user_object, asset, function, variable, bare_concrete_function, constant, resource,
                      captured_tensor };
    kind which = kind::other;
    std::vector<std::pair<int, std::string>> children;  ///< (node id, local name)
    std::string identifier;                             ///< user_object: "_tf_keras_sequential", ...
    // variable
    graft::dtype dtype = graft::dtype::invalid;
    graft::shape shape;
    bool trainable = false;
    std::string name;    ///< variable: its TF name ("dense/kernel"); constant: the op name
    std::string device;
    // function / bare_concrete_function
    std::vector<std::string> concrete_functions;
};

struct saved_object_graph {
    std::vector<saved_object> nodes;
    std::map<std::string, std::vector<int>> bound_inputs;  ///< concrete function -> captured node ids
    [[nodiscard]] bool empty() const { return nodes.empty(); }
};

/// A MetaGraphDef.
struct meta_graph {
    meta_info info;
    graft::graph graph;
    std::optional<saver_def> saver;
    std::map<std::string, collection_def> collections;
    std::map<std::string, signature_def> signatures;
    std::vector<asset_file> assets;
    std::string object_graph_bytes;  ///< serialized SavedObjectGraph (TF2), written back verbatim
    saved_object_graph objects;      ///< decoded from object_graph_bytes
    std::string extra_fields;

    /// The signature `key`. Throws not_found_error listing the keys there are.
    [[nodiscard]] const signature_def& signature(std::string_view key) const {
        if (auto it = signatures.find(std::string(key)); it != signatures.end()) return it->second;
        std::string keys;
        for (auto& [k, v] : signatures) keys += (keys.empty() ? "" : ", ") + k;
        throw not_found_error(detail::cat("no signature '", key, "'"), {},
                              keys.empty() ? "this MetaGraph has no signatures" : "signatures: " + keys);
    }
    /// The collection `name`, or nullptr. Never throws.
    [[nodiscard]] const collection_def* collection(std::string_view name) const {
        auto it = collections.find(std::string(name));
        return it == collections.end() ? nullptr : &it->second;
    }
};

/// A SavedModel directory: its MetaGraphs and where it lives.
struct saved_model {
    std::string dir;
    std::int64_t schema_version = 1;
    std::vector<meta_graph> meta_graphs;

    /// The variables checkpoint prefix "<dir>/variables/variables". Never throws.
    [[nodiscard]] std::string variables_prefix() const { return dir + "/variables/variables"; }
    /// Where an asset of one of the MetaGraphs lives: "<dir>/assets/<filename>". Never throws.
    [[nodiscard]] std::string asset_path(const asset_file& a) const { return dir + "/assets/" + a.filename; }
};

}  // namespace graft
