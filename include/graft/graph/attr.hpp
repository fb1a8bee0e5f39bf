// graft/graph/attr.hpp — node attributes as TensorFlow has them (AttrValue): a string, int, float,
// bool, dtype, shape, tensor, function (name + attrs), placeholder, or a list of one of those.
//
//   graft::attr_map a;
//   a.set("T", graft::dtype::float32);
//   a.set("num_split", std::int64_t{3});
//   a.set("ksize", graft::attr_value::list_of(std::vector<std::int64_t>{1, 2, 2, 1}));
//   a.at("T").type() == graft::dtype::float32;       // throws graph_error if "T" is not a type
//
// An attr_map keeps its entries sorted by name (the order TensorFlow prints and serializes them).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "graft/core/dtype.hpp"
#include "graft/core/error.hpp"
#include "graft/core/shape.hpp"
#include "graft/core/tensor.hpp"
#include "graft/formats/tf/tensor_proto.hpp"

namespace graft {

class attr_value;
struct func_attr;

/// Name -> attr_value, sorted by name, names unique. Copies share their entries until one of them
/// changes (copy-on-write): TF graphs repeat the same attrs on many nodes, and a loader gives all
/// of those nodes one shared set.
class attr_map {
public:
    using value_type = std::pair<std::string, attr_value>;
    using items_type = std::vector<value_type>;
    using const_iterator = items_type::const_iterator;
    using iterator = items_type::iterator;

    /// The value of `name`, or nullptr. Never throws.
    [[nodiscard]] const attr_value* find(std::string_view name) const;
    /// As above, for changing the value in place (unshares the entries). Never throws (except bad_alloc).
    [[nodiscard]] attr_value* find(std::string_view name);
    [[nodiscard]] bool contains(std::string_view name) const { return find(name) != nullptr; }
    /// The value of `name`. Throws not_found_error listing the names present.
    [[nodiscard]] const attr_value& at(std::string_view name) const;
    /// Inserts or replaces `name`. Never throws (except bad_alloc).
    attr_value& set(std::string name, attr_value v);
    /// Removes `name`; returns whether it was there. Never throws (except bad_alloc).
    bool erase(std::string_view name);
    /// Appends without keeping order; call sort() once after a batch of append(). Never throws.
    void append(std::string name, attr_value v);
    /// Restores name order after append(); a later duplicate name wins. Never throws.
    void sort();

    [[nodiscard]] std::size_t size() const;
    [[nodiscard]] bool empty() const { return size() == 0; }
    void clear() { items_.reset(); }
    void reserve(std::size_t n);
    [[nodiscard]] const_iterator begin() const;
    [[nodiscard]] const_iterator end() const;
    /// Mutable iteration unshares the entries first.
    [[nodiscard]] iterator begin();
    [[nodiscard]] iterator end();
    /// True when both maps share one set of entries (no copy was made). Never throws.
    [[nodiscard]] bool shares_with(const attr_map& o) const;
    /// Identity of the entry set (equal for maps that share it; null when empty). Never throws.
    [[nodiscard]] const void* shared_id() const;
    /// True when another attr_map shares these entries. Never throws.
    [[nodiscard]] bool is_shared() const { return items_.use_count() > 1; }
    friend bool operator==(const attr_map& a, const attr_map& b);

private:
    const items_type& view() const;
    items_type& mut();
    std::shared_ptr<items_type> items_;
};

/// A TensorProto held by an attr. Loaded values keep the serialized TensorProto (so a round trip is
/// byte-exact and a broadcast constant stays small) and decode on each tensor() call; values built
/// from a graft::tensor keep the tensor and encode on proto_bytes().
class tensor_value {
public:
    tensor_value() = default;
    /// A value holding `t`. Never throws.
    tensor_value(graft::tensor t) : t_(std::move(t)), type_(t_.type()), shape_(t_.shape()) {}  // NOLINT
    /// A value holding serialized TensorProto bytes. Throws format_error when the dtype/shape
    /// header cannot be read.
    static tensor_value from_proto(std::string bytes) {
        auto h = tf::proto::decode_tensor_header(tf::wire::reader(bytes, {}, 0, "TensorProto"));
        return from_proto(std::move(bytes), h.type, std::move(h.shape));
    }
    /// As above with the header already decoded. Never throws.
    static tensor_value from_proto(std::string bytes, graft::dtype type, graft::shape shape) {
        tensor_value v;
        v.proto_ = std::move(bytes);
        v.type_ = type;
        v.shape_ = std::move(shape);
        return v;
    }
    /// True when tensor() can produce a graft::tensor (numeric, bool or string dtype).
    [[nodiscard]] bool decodable() const { return t_.valid() || tf::proto::decodable_dtype(type_); }
    /// The values as a tensor (a fresh copy for loaded values). Throws unimplemented_error for
    /// dtypes graft cannot hold (variant, resource, newer types) and format_error for bad bytes.
    [[nodiscard]] graft::tensor tensor() const {
        if (t_.valid()) return t_;
        if (proto_.empty()) throw invalid_argument_error("empty tensor attr");
        return tf::proto::decode_tensor(proto_);
    }
    [[nodiscard]] graft::dtype type() const { return type_; }
    [[nodiscard]] const graft::shape& shape() const { return shape_; }
    /// The serialized TensorProto (encoded from the tensor when built from one). Throws
    /// unimplemented_error for a tensor of a dtype graft cannot encode.
    [[nodiscard]] std::string proto_bytes() const { return proto_.empty() && t_.valid() ? tf::proto::encode_tensor(t_) : proto_; }
    /// The stored serialized bytes (empty when built from a tensor). Never throws.
    [[nodiscard]] const std::string& raw_proto() const { return proto_; }
    /// Bytes this value holds (for memory reports). Never throws.
    [[nodiscard]] std::size_t held_bytes() const {
        return proto_.capacity() + (t_.valid() && t_.type() != dtype::string ? t_.nbytes() : 0);
    }
    friend bool operator==(const tensor_value& a, const tensor_value& b);

private:
    graft::tensor t_;
    graft::dtype type_ = dtype::invalid;
    graft::shape shape_;
    std::string proto_;
};

/// A function-valued attr (NameAttrList): a function name plus attrs to instantiate it with.
struct func_attr {
    std::string name;
    attr_map attrs;
    friend bool operator==(const func_attr& a, const func_attr& b) {
        return a.name == b.name && a.attrs == b.attrs;
    }
};

/// One attribute value (TF AttrValue).
class attr_value {
public:
    enum class kind : std::uint8_t { none, s, i, f, b, type, shape, tensor, func, placeholder, list };
    /// A list attr holds one of these vectors; monostate is the empty list of unknown element kind.
    using list_value = std::variant<std::monostate, std::vector<std::string>, std::vector<std::int64_t>,
                                    std::vector<float>, std::vector<bool>, std::vector<graft::dtype>,
                                    std::vector<graft::shape>, std::vector<tensor_value>,
                                    std::vector<func_attr>>;

    attr_value() = default;
    attr_value(std::string s) : v_(std::make_shared<const std::string>(std::move(s))) {}  // NOLINT: implicit by design
    attr_value(const char* s) : attr_value(std::string(s)) {}    // NOLINT
    attr_value(std::int64_t i) : v_(i) {}                        // NOLINT
    attr_value(int i) : v_(static_cast<std::int64_t>(i)) {}     // NOLINT
    attr_value(float f) : v_(f) {}                               // NOLINT
    attr_value(bool b) : v_(b) {}                                // NOLINT
    attr_value(graft::dtype t) : v_(t) {}                        // NOLINT
    attr_value(graft::shape s) : v_(std::make_shared<const graft::shape>(std::move(s))) {}  // NOLINT
    attr_value(graft::tensor t)                                  // NOLINT
        : v_(std::make_shared<const tensor_value>(std::move(t))) {}
    attr_value(tensor_value t) : v_(std::make_shared<const tensor_value>(std::move(t))) {}  // NOLINT
    attr_value(func_attr f) : v_(std::make_shared<const func_attr>(std::move(f))) {}       // NOLINT

    /// A function-body placeholder ("placeholder: T" — replaced by the caller's attr).
    static attr_value make_placeholder(std::string name) {
        attr_value a;
        a.v_ = std::make_shared<const placeholder_name>(placeholder_name{std::move(name)});
        return a;
    }
    /// A list attr: list_of(std::vector<std::int64_t>{1,2}), list_of(std::vector<dtype>{...}), ...
    template <class T>
    static attr_value list_of(std::vector<T> items) {
        attr_value a;
        a.v_ = std::make_shared<const list_value>(std::move(items));
        return a;
    }
    /// The empty list (element kind unknown, like TF's `list {}`).
    static attr_value empty_list() {
        attr_value a;
        a.v_ = std::make_shared<const list_value>();
        return a;
    }

    [[nodiscard]] kind which() const { return static_cast<kind>(v_.index()); }
    [[nodiscard]] bool is_list() const { return which() == kind::list; }
    [[nodiscard]] bool has_value() const { return which() != kind::none; }

    /// Typed access; each throws graph_error "attr is <kind>, expected <kind>" on a mismatch.
    [[nodiscard]] const std::string& s() const { return *get<std::shared_ptr<const std::string>>("string"); }
    [[nodiscard]] std::int64_t i() const { return get<std::int64_t>("int"); }
    [[nodiscard]] float f() const { return get<float>("float"); }
    [[nodiscard]] bool b() const { return get<bool>("bool"); }
    [[nodiscard]] graft::dtype type() const { return get<graft::dtype>("type"); }
    [[nodiscard]] const graft::shape& shape() const { return *get<std::shared_ptr<const graft::shape>>("shape"); }
    [[nodiscard]] const tensor_value& tensor() const {
        return *get<std::shared_ptr<const tensor_value>>("tensor");
    }
    [[nodiscard]] const func_attr& func() const { return *get<std::shared_ptr<const func_attr>>("func"); }
    [[nodiscard]] const std::string& placeholder() const {
        return get<std::shared_ptr<const placeholder_name>>("placeholder")->name;
    }
    [[nodiscard]] const list_value& list() const { return *get<std::shared_ptr<const list_value>>("list"); }

    /// Elements of a list attr of that element kind; the empty list gives an empty vector.
    /// Throws graph_error when the attr is not a list or holds another element kind.
    template <class T>
    [[nodiscard]] const std::vector<T>& list_of() const {
        static const std::vector<T> none;
        const auto& l = list();
        if (std::holds_alternative<std::monostate>(l)) return none;
        if (auto* p = std::get_if<std::vector<T>>(&l)) return *p;
        throw graph_error(detail::cat("attr is ", type_name(), ", expected a list of another kind"));
    }
    /// Number of elements of a list attr (0 for the empty list). Throws graph_error if not a list.
    [[nodiscard]] std::size_t list_size() const {
        return std::visit([](const auto& v) -> std::size_t {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) return 0;
            else return v.size();
        }, list());
    }

    /// The OpDef spelling of this value's kind: "string", "int", "list(type)", "list" (empty), "none".
    [[nodiscard]] std::string type_name() const {
        if (which() != kind::list) return std::string(kind_names()[v_.index()]);
        auto i = list().index();
        return i == 0 ? std::string("list") : "list(" + std::string(kind_names()[i]) + ")";
    }
    /// True when this value fits an OpDef attr type ("int", "list(type)", "func", ...). Never throws.
    [[nodiscard]] bool matches_type(std::string_view op_def_type) const {
        auto k = which();
        if (k == kind::placeholder) return true;  // resolved at instantiation
        if (k != kind::list) return op_def_type == kind_names()[v_.index()];
        if (op_def_type.size() < 6 || op_def_type.substr(0, 5) != "list(") return false;
        auto i = list().index();
        return i == 0 || op_def_type.substr(5, op_def_type.size() - 6) == kind_names()[i];
    }
    /// Short human-readable text: "float32", "3", "[1,2,2,1]", "\"SAME\"", "float32[2,3]", "f=fn".
    [[nodiscard]] std::string str() const;

    friend bool operator==(const attr_value& a, const attr_value& b);

private:
    /// Names by variant index; for list elements, index i of list_value has the same name.
    static const char* const* kind_names() {
        static const char* const n[] = {"none", "string", "int", "float", "bool", "type", "shape", "tensor",
                                        "func", "placeholder"};
        return n;
    }
    struct placeholder_name {
        std::string name;
        friend bool operator==(const placeholder_name&, const placeholder_name&) = default;
    };
    template <class T>
    const T& get(const char* want) const {
        if (auto* p = std::get_if<T>(&v_)) return *p;
        throw graph_error(detail::cat("attr is ", type_name(), ", expected ", want));
    }
    // Strings, shapes and everything larger sit behind a shared pointer: an attr_value is 24 bytes
    // (graphs hold one per node attr) and copies share the payload (values are immutable).
    std::variant<std::monostate, std::shared_ptr<const std::string>, std::int64_t, float, bool, graft::dtype,
                 std::shared_ptr<const graft::shape>, std::shared_ptr<const tensor_value>,
                 std::shared_ptr<const func_attr>, std::shared_ptr<const placeholder_name>,
                 std::shared_ptr<const list_value>>
        v_;
};

// ------------------------------------------------------------------ definitions

namespace detail {
inline bool tensors_equal(const graft::tensor& a, const graft::tensor& b) {
    if (a.type() != b.type() || !(a.shape() == b.shape())) return false;
    if (a.type() == dtype::string) {
        for (std::int64_t k = 0; k < a.num_elements(); ++k) {
            if (a.data<std::string>()[k] != b.data<std::string>()[k]) return false;
        }
        return true;
    }
    return a.nbytes() == b.nbytes() && (a.nbytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0);
}
}  // namespace detail

/// Equal dtype, shape and values (bitwise; NaN payloads compare by bits); TensorProtos graft cannot
/// decode compare by bytes.
inline bool operator==(const tensor_value& a, const tensor_value& b) {
    if (a.type_ != b.type_ || !(a.shape_ == b.shape_)) return false;
    if (!a.proto_.empty() && a.proto_ == b.proto_) return true;
    if (!a.decodable() || !b.decodable()) return false;
    return detail::tensors_equal(a.tensor(), b.tensor());
}

inline bool operator==(const attr_value& a, const attr_value& b) {
    if (a.v_.index() != b.v_.index()) return false;
    switch (a.which()) {
        case attr_value::kind::tensor: return a.tensor() == b.tensor();
        case attr_value::kind::func: return a.func() == b.func();
        case attr_value::kind::list: return a.list() == b.list();
        case attr_value::kind::s: return a.s() == b.s();
        case attr_value::kind::shape: return a.shape() == b.shape();
        case attr_value::kind::placeholder: return a.placeholder() == b.placeholder();
        case attr_value::kind::f: {
            float x = a.f(), y = b.f();
            return std::memcmp(&x, &y, sizeof x) == 0;
        }
        default: return a.v_ == b.v_;
    }
}

inline std::string attr_value::str() const {
    auto quote = [](const std::string& s) {
        std::string r = "\"";
        for (char c : s.substr(0, 60)) r += (static_cast<unsigned char>(c) < 32 || c == '"') ? '.' : c;
        return r + (s.size() > 60 ? "...\"" : "\"");
    };
    auto tstr = [](const tensor_value& t) { return dtype_name(t.type()) + t.shape().str(); };
    switch (which()) {
        case kind::none: return "<none>";
        case kind::s: return quote(s());
        case kind::i: return std::to_string(i());
        case kind::f: return detail::cat(f());
        case kind::b: return b() ? "true" : "false";
        case kind::type: return dtype_name(type());
        case kind::shape: return shape().str();
        case kind::tensor: return tstr(tensor());
        case kind::func: return "func " + func().name;
        case kind::placeholder: return "$" + placeholder();
        case kind::list: break;
    }
    std::string r = "[";
    std::visit([&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (!std::is_same_v<V, std::monostate>) {
            for (std::size_t k = 0; k < v.size(); ++k) {
                if (k) r += ",";
                using E = typename V::value_type;
                if constexpr (std::is_same_v<E, std::string>) r += quote(v[k]);
                else if constexpr (std::is_same_v<E, graft::dtype>) r += dtype_name(v[k]);
                else if constexpr (std::is_same_v<E, graft::shape>) r += v[k].str();
                else if constexpr (std::is_same_v<E, tensor_value>) r += tstr(v[k]);
                else if constexpr (std::is_same_v<E, func_attr>) r += v[k].name;
                else if constexpr (std::is_same_v<E, bool>) r += v[k] ? "true" : "false";
                else r += detail::cat(v[k]);
            }
        }
    }, list());
    return r + "]";
}

inline const attr_map::items_type& attr_map::view() const {
    static const items_type none;
    return items_ ? *items_ : none;
}
inline attr_map::items_type& attr_map::mut() {
    if (!items_) items_ = std::make_shared<items_type>();
    else if (items_.use_count() > 1) items_ = std::make_shared<items_type>(*items_);
    return *items_;
}
inline bool attr_map::shares_with(const attr_map& o) const { return items_ && items_.get() == o.items_.get(); }
inline const void* attr_map::shared_id() const { return static_cast<const void*>(items_.get()); }
inline std::size_t attr_map::size() const { return items_ ? items_->size() : 0; }
inline void attr_map::reserve(std::size_t n) { mut().reserve(n); }
inline attr_map::const_iterator attr_map::begin() const { return view().begin(); }
inline attr_map::const_iterator attr_map::end() const { return view().end(); }
inline attr_map::iterator attr_map::begin() { return mut().begin(); }
inline attr_map::iterator attr_map::end() { return mut().end(); }
inline const attr_value* attr_map::find(std::string_view name) const {
    const auto& v = view();
    auto it = std::lower_bound(v.begin(), v.end(), name,
                               [](const value_type& e, std::string_view n) { return e.first < n; });
    return it != v.end() && it->first == name ? &it->second : nullptr;
}
inline attr_value* attr_map::find(std::string_view name) {
    if (!static_cast<const attr_map*>(this)->find(name)) return nullptr;
    auto& v = mut();
    auto it = std::lower_bound(v.begin(), v.end(), name,
                               [](const value_type& e, std::string_view n) { return e.first < n; });
    return &it->second;
}
inline const attr_value& attr_map::at(std::string_view name) const {
    if (auto* v = find(name)) return *v;
    std::string have;
    for (auto& [k, v] : view()) have += (have.empty() ? "" : ", ") + k;
    throw not_found_error(detail::cat("no attr '", name, "'"), {},
                          have.empty() ? "the node has no attrs" : "attrs present: " + have);
}
inline attr_value& attr_map::set(std::string name, attr_value v) {
    auto& items = mut();
    auto it = std::lower_bound(items.begin(), items.end(), name,
                               [](const value_type& e, const std::string& n) { return e.first < n; });
    if (it != items.end() && it->first == name) {
        it->second = std::move(v);
        return it->second;
    }
    return items.insert(it, value_type(std::move(name), std::move(v)))->second;
}
inline bool attr_map::erase(std::string_view name) {
    if (!static_cast<const attr_map*>(this)->find(name)) return false;
    auto& items = mut();
    auto it = std::lower_bound(items.begin(), items.end(), name,
                               [](const value_type& e, std::string_view n) { return e.first < n; });
    items.erase(it);
    return true;
}
inline void attr_map::append(std::string name, attr_value v) { mut().emplace_back(std::move(name), std::move(v)); }
inline void attr_map::sort() {
    if (!items_) return;
    auto& items = mut();
    std::stable_sort(items.begin(), items.end(),
                     [](const value_type& a, const value_type& b) { return a.first < b.first; });
    // keep the last of equal names (protobuf map semantics: the later entry wins)
    auto out = items.begin();
    for (auto it = items.begin(); it != items.end(); ++it) {
        auto next = it + 1;
        if (next != items.end() && next->first == it->first) continue;
        if (out != it) *out = std::move(*it);
        ++out;
    }
    items.erase(out, items.end());
}
inline bool operator==(const attr_map& a, const attr_map& b) {
    return a.items_.get() == b.items_.get() || a.view() == b.view();
}

}  // namespace graft
