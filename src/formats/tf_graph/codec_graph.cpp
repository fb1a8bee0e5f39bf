// GraphDef, NodeDef, AttrValue, OpDef, FunctionDef <-> graft IR on the protobuf wire format.
#include <algorithm>
#include <bit>

#include "codec.hpp"

namespace graft::tf::codec {

using namespace graft::tf::wire;

namespace {

std::string to_string(std::string_view s) { return std::string(s); }

// A field read as a string must be LEN; anything else is corrupt.
std::string_view get_str(reader& r, wire_type type, std::uint32_t field) {
    r.expect(type, wire_type::bytes, field);
    return r.bytes();
}

func_attr decode_func(reader r) {
    func_attr f;
    std::uint32_t k;
    wire_type t;
    while (r.next(k, t)) {
        if (k == 1) f.name = to_string(get_str(r, t, k));
        else if (k == 2 && t == wire_type::bytes) decode_attr_entry(r.message("NameAttrList.attr"), f.attrs);
        else r.skip(t);
    }
    f.attrs.sort();
    return f;
}

void encode_func(std::string& o, const func_attr& f) {
    put_string(o, 1, f.name);
    encode_attr_map(o, 2, f.attrs);
}

template <class T>
void set_list_kind(attr_value::list_value& l, reader& r, const char* what) {
    if (std::holds_alternative<std::monostate>(l)) l = std::vector<T>{};
    else if (!std::holds_alternative<std::vector<T>>(l)) r.fail(graft::detail::cat("list attr mixes ", what, " with another kind"));
}

attr_value decode_list(reader r) {
    attr_value::list_value l;
    std::uint32_t k;
    wire_type t;
    while (r.next(k, t)) {
        switch (k) {
            case 2: set_list_kind<std::string>(l, r, "strings");
                std::get<std::vector<std::string>>(l).emplace_back(get_str(r, t, k));
                break;
            case 3: set_list_kind<std::int64_t>(l, r, "ints");
                r.varints(t, [&](std::uint64_t x) {
                    std::get<std::vector<std::int64_t>>(l).push_back(static_cast<std::int64_t>(x));
                });
                break;
            case 4: set_list_kind<float>(l, r, "floats");
                r.fixed32s(t, [&](std::uint32_t x) { std::get<std::vector<float>>(l).push_back(std::bit_cast<float>(x)); });
                break;
            case 5: set_list_kind<bool>(l, r, "bools");
                r.varints(t, [&](std::uint64_t x) { std::get<std::vector<bool>>(l).push_back(x != 0); });
                break;
            case 6: set_list_kind<graft::dtype>(l, r, "types");
                r.varints(t, [&](std::uint64_t x) {
                    std::get<std::vector<graft::dtype>>(l).push_back(
                        static_cast<graft::dtype>(static_cast<std::int32_t>(x)));
                });
                break;
            case 7: set_list_kind<graft::shape>(l, r, "shapes");
                r.expect(t, wire_type::bytes, k);
                std::get<std::vector<graft::shape>>(l).push_back(decode_shape(r.message("TensorShapeProto")));
                break;
            case 8: {
                set_list_kind<tensor_value>(l, r, "tensors");
                auto b = get_str(r, t, k);
                auto h = decode_tensor_header(r.nested(b, "TensorProto"));
                std::get<std::vector<tensor_value>>(l).push_back(
                    tensor_value::from_proto(std::string(b), h.type, std::move(h.shape)));
                break;
            }
            case 9: set_list_kind<func_attr>(l, r, "funcs");
                r.expect(t, wire_type::bytes, k);
                std::get<std::vector<func_attr>>(l).push_back(decode_func(r.message("NameAttrList")));
                break;
            default: r.skip(t);
        }
    }
    // one allocation for the list (no empty list made first and replaced)
    return std::visit([&](auto& vec) {
        if constexpr (std::is_same_v<std::decay_t<decltype(vec)>, std::monostate>) return attr_value::empty_list();
        else return attr_value::list_of(std::move(vec));
    }, l);
}

void encode_list(std::string& o, const attr_value::list_value& l) {
    std::visit([&](const auto& vec) {
        using V = std::decay_t<decltype(vec)>;
        if constexpr (std::is_same_v<V, std::monostate>) {
            return;
        } else {
            using E = typename V::value_type;
            if constexpr (std::is_same_v<E, std::string>) {
                for (auto& s : vec) put_bytes(o, 2, s);
            } else if constexpr (std::is_same_v<E, graft::shape>) {
                for (auto& s : vec) put_message(o, 7, [&](std::string& b) { encode_shape(b, s); });
            } else if constexpr (std::is_same_v<E, tensor_value>) {
                for (auto& x : vec) put_bytes(o, 8, x.proto_bytes());
            } else if constexpr (std::is_same_v<E, func_attr>) {
                for (auto& f : vec) put_message(o, 9, [&](std::string& b) { encode_func(b, f); });
            } else if constexpr (std::is_same_v<E, float>) {
                if (vec.empty()) return;
                std::string p;
                for (float f : vec) {
                    std::uint32_t u;
                    std::memcpy(&u, &f, 4);
                    put_fixed32(p, u);
                }
                put_bytes(o, 4, p);
            } else {
                if (vec.empty()) return;
                std::string p;
                for (auto x : vec) put_varint(p, static_cast<std::uint64_t>(static_cast<std::int64_t>(x)));
                std::uint32_t field = std::is_same_v<E, std::int64_t> ? 3 : std::is_same_v<E, bool> ? 5 : 6;
                put_bytes(o, field, p);
            }
        }
    }, l);
}

void decode_arg(reader r, arg_def& a) {
    std::uint32_t k;
    wire_type t;
    while (true) {
        const char* start = r.pos();
        if (!r.next(k, t)) break;
        switch (k) {
            case 1: a.name = to_string(get_str(r, t, k)); break;
            case 2: a.description = to_string(get_str(r, t, k)); break;
            case 3: r.expect(t, wire_type::varint, k); a.type = static_cast<graft::dtype>(static_cast<std::int32_t>(r.varint())); break;
            case 4: a.type_attr = to_string(get_str(r, t, k)); break;
            case 5: a.number_attr = to_string(get_str(r, t, k)); break;
            case 6: a.type_list_attr = to_string(get_str(r, t, k)); break;
            case 16: r.expect(t, wire_type::varint, k); a.is_ref = r.varint() != 0; break;
            default: keep_unknown(a.extra, r, start, t);
        }
    }
}

void encode_arg(std::string& o, const arg_def& a) {
    put_string(o, 1, a.name);
    put_string(o, 2, a.description);
    put_uint(o, 3, static_cast<std::uint32_t>(a.type));
    put_string(o, 4, a.type_attr);
    put_string(o, 5, a.number_attr);
    put_string(o, 6, a.type_list_attr);
    put_uint(o, 16, a.is_ref);
    o += a.extra;
}

attr_def decode_attr_def(reader r) {
    attr_def a;
    std::uint32_t k;
    wire_type t;
    while (r.next(k, t)) {
        switch (k) {
            case 1: a.name = to_string(get_str(r, t, k)); break;
            case 2: a.type = to_string(get_str(r, t, k)); break;
            case 3: r.expect(t, wire_type::bytes, k); a.default_value = decode_attr(r.message("AttrDef.default_value")); break;
            case 4: a.description = to_string(get_str(r, t, k)); break;
            case 5: r.expect(t, wire_type::varint, k); a.has_minimum = r.varint() != 0; break;
            case 6: r.expect(t, wire_type::varint, k); a.minimum = static_cast<std::int64_t>(r.varint()); break;
            case 7: r.expect(t, wire_type::bytes, k); a.allowed_values = decode_attr(r.message("AttrDef.allowed_values")); break;
            default: r.skip(t);
        }
    }
    return a;
}

void encode_attr_def(std::string& o, const attr_def& a) {
    put_string(o, 1, a.name);
    put_string(o, 2, a.type);
    if (a.default_value) put_message(o, 3, [&](std::string& b) { encode_attr(b, *a.default_value); });
    put_string(o, 4, a.description);
    put_uint(o, 5, a.has_minimum);
    put_int(o, 6, a.minimum);
    if (a.allowed_values) put_message(o, 7, [&](std::string& b) { encode_attr(b, *a.allowed_values); });
}

void encode_string_map(std::string& o, std::uint32_t field, const std::map<std::string, std::string>& m) {
    for (auto& kv : m) {  // named members, not [k, v]: clang 14 cannot capture structured bindings
        put_message(o, field, [&](std::string& e) {
            put_string(e, 1, kv.first);
            put_string(e, 2, kv.second);
        });
    }
}

std::pair<std::string, std::string> decode_string_entry(reader r) {
    std::pair<std::string, std::string> kv;
    std::uint32_t k;
    wire_type t;
    while (r.next(k, t)) {
        if (k == 1) kv.first = to_string(get_str(r, t, k));
        else if (k == 2) kv.second = to_string(get_str(r, t, k));
        else r.skip(t);
    }
    return kv;
}

// The name field of a (possibly truncated) length-prefixed NodeDef, or "".
std::string peek_node_name(std::string_view len_and_payload) {
    try {
        reader pk(len_and_payload);
        auto n = pk.varint();
        auto rest = pk.rest();
        reader body(rest.substr(0, std::min<std::size_t>(rest.size(), n)));
        std::uint32_t k;
        wire_type t;
        while (body.next(k, t)) {
            if (k == 1 && t == wire_type::bytes) return std::string(body.bytes());
            body.skip(t);
        }
    } catch (const format_error&) {
    }
    return {};
}

}  // namespace

// ------------------------------------------------------------------ AttrValue

attr_value decode_attr(reader r) {
    attr_value v;
    std::uint32_t k;
    wire_type t;
    while (r.next(k, t)) {
        switch (k) {
            case 1: r.expect(t, wire_type::bytes, k); v = decode_list(r.message("AttrValue.list")); break;
            case 2: v = std::string(get_str(r, t, k)); break;
            case 3: r.expect(t, wire_type::varint, k); v = static_cast<std::int64_t>(r.varint()); break;
            case 4: r.expect(t, wire_type::fixed32, k); v = r.float32(); break;
            case 5: r.expect(t, wire_type::varint, k); v = r.varint() != 0; break;
            case 6: r.expect(t, wire_type::varint, k); v = static_cast<graft::dtype>(static_cast<std::int32_t>(r.varint())); break;
            case 7: r.expect(t, wire_type::bytes, k); v = decode_shape(r.message("TensorShapeProto")); break;
            case 8: {
                auto b = get_str(r, t, k);
                auto h = decode_tensor_header(r.nested(b, "TensorProto"));
                v = tensor_value::from_proto(std::string(b), h.type, std::move(h.shape));
                break;
            }
            case 9: v = attr_value::make_placeholder(std::string(get_str(r, t, k))); break;
            case 10: r.expect(t, wire_type::bytes, k); v = decode_func(r.message("NameAttrList")); break;
            default: r.skip(t);
        }
    }
    return v;
}

void encode_attr(std::string& o, const attr_value& v) {
    using K = attr_value::kind;
    switch (v.which()) {
        case K::none: break;
        case K::s: put_bytes(o, 2, v.s()); break;
        case K::i: put_tag(o, 3, wire_type::varint); put_varint(o, static_cast<std::uint64_t>(v.i())); break;
        case K::f: {
            float f = v.f();
            std::uint32_t u;
            std::memcpy(&u, &f, 4);
            put_tag(o, 4, wire_type::fixed32);
            put_fixed32(o, u);
            break;
        }
        case K::b: put_tag(o, 5, wire_type::varint); put_varint(o, v.b() ? 1 : 0); break;
        case K::type: put_tag(o, 6, wire_type::varint); put_varint(o, static_cast<std::uint64_t>(static_cast<std::int64_t>(v.type()))); break;
        case K::shape: put_message(o, 7, [&](std::string& b) { encode_shape(b, v.shape()); }); break;
        case K::tensor: put_bytes(o, 8, v.tensor().proto_bytes()); break;
        case K::func: put_message(o, 10, [&](std::string& b) { encode_func(b, v.func()); }); break;
        case K::placeholder: put_bytes(o, 9, v.placeholder()); break;
        case K::list: put_message(o, 1, [&](std::string& b) { encode_list(b, v.list()); }); break;
    }
}

void decode_attr_entry(reader r, attr_map& into) {
    std::string key;
    attr_value value;
    std::uint32_t k;
    wire_type t;
    while (r.next(k, t)) {
        if (k == 1) key = to_string(get_str(r, t, k));
        else if (k == 2 && t == wire_type::bytes) value = decode_attr(r.message("AttrValue"));
        else r.skip(t);
    }
    into.append(std::move(key), std::move(value));
}

void encode_attr_map(std::string& o, std::uint32_t field, const attr_map& m) {
    for (auto& kv : m) {
        put_message(o, field, [&](std::string& e) {
            put_string(e, 1, kv.first);
            put_message(e, 2, [&](std::string& b) { encode_attr(b, kv.second); });
        });
    }
}

// ------------------------------------------------------------------ NodeDef

node decode_node(reader r, attr_cache* cache) {
    node n;
    decode_node_into(r, cache, n);
    return n;
}

namespace {

// The AttrValue bytes of one NodeDef.attr map entry (key 1, value 2), or has_value = false.
struct attr_entry {
    std::string_view key, value;
    bool has_value = false;
};
attr_entry read_attr_entry(reader entry) {
    attr_entry e;
    std::uint32_t a;
    wire_type b;
    while (entry.next(a, b)) {
        if (a == 1) {
            e.key = get_str(entry, b, a);
        } else if (a == 2 && b == wire_type::bytes) {
            e.value = entry.bytes();
            e.has_value = true;
        } else {
            entry.skip(b);
        }
    }
    return e;
}

// After the tag of the first of a run of `field` LEN entries: the reader past the whole run and how
// many entries it holds.
std::size_t skip_run(reader& r, std::uint32_t field, bool (*counts)(std::string_view) = nullptr) {
    std::size_t count = 0;
    const std::uint64_t tag = (field << 3) | static_cast<std::uint32_t>(wire_type::bytes);
    for (bool first = true; !r.done(); first = false) {
        reader save = r;
        if (!first && r.varint() != tag) {
            r = save;
            break;
        }
        auto b = r.bytes();
        if (!counts || counts(b)) ++count;
    }
    return count;
}

bool is_data_input(std::string_view s) { return s.empty() || s.front() != '^'; }

}  // namespace

void decode_node_into(reader r, attr_cache* cache, node& n) {
    std::uint32_t k;
    wire_type t;
    // attrs come as one run of map entries: a node whose run is byte-identical to an earlier node's
    // shares that node's attr set; otherwise equal values share their decoded payload
    std::string_view attr_bytes;  // the (first) run's bytes
    int attr_runs = 0;
    bool shareable = cache != nullptr;  // every value came from the value cache
    bool sorted = true;
    std::string_view prev_key;
    while (true) {
        const char* start = r.pos();
        if (!r.next(k, t)) break;
        switch (k) {
            case 1: n.name.assign(get_str(r, t, k)); break;
            case 2: n.op.assign(get_str(r, t, k)); break;
            case 3: {
                r.expect(t, wire_type::bytes, k);
                if (n.inputs.empty() && n.control_inputs.empty()) {
                    reader pre = r;
                    n.inputs.reserve(skip_run(pre, 3, is_data_input));
                }
                auto s = r.bytes();
                if (!s.empty() && s.front() == '^') {
                    n.control_inputs.emplace_back(s.substr(1));
                } else {
                    endpoint& e = n.inputs.emplace_back();
                    if (!endpoint::try_split(s, e)) r.fail(graft::detail::cat("bad input name '", s, "'"));
                }
                break;
            }
            case 4: n.device.assign(get_str(r, t, k)); break;
            case 5: {
                r.expect(t, wire_type::bytes, k);
                if (attr_runs == 0) {
                    ++attr_runs;
                    reader pre = r;
                    std::size_t count = skip_run(pre, 5);
                    attr_bytes = std::string_view(start, static_cast<std::size_t>(pre.pos() - start));
                    if (cache && attr_bytes.size() <= 1024) {
                        if (auto* m = cache->maps.find(attr_bytes, cache->maps.hash(attr_bytes))) {
                            n.attrs = *m;
                            r = pre;
                            break;
                        }
                    }
                    n.attrs.reserve(count);
                } else if (start >= attr_bytes.data() + attr_bytes.size()) {
                    ++attr_runs;  // attrs after other fields: merge by sorting
                    sorted = false;
                    shareable = false;
                }
                auto entry = read_attr_entry(r.message("NodeDef.attr"));
                attr_value v;
                if (entry.has_value) {
                    // big tensors are unique: not worth hashing
                    auto value = entry.value;
                    bool cacheable = cache && value.size() <= 160;
                    if (cacheable) {
                        auto h = cache->values.hash(value);
                        auto* c = cache->values.find(value, h);
                        if (!c) c = &cache->values.insert(value, h, decode_attr(r.nested(value, "AttrValue")));
                        v = *c;
                    } else {
                        shareable = false;
                        v = decode_attr(r.nested(value, "AttrValue"));
                    }
                }
                if (!n.attrs.empty() && !(prev_key < entry.key)) sorted = false;
                prev_key = entry.key;
                n.attrs.append(std::string(entry.key), std::move(v));
                break;
            }
            default: keep_unknown(n.extra_fields, r, start, t);
        }
    }
    if (!sorted) n.attrs.sort();
    if (shareable && attr_runs == 1 && attr_bytes.size() <= 1024 && !n.attrs.is_shared()) {
        cache->maps.insert(attr_bytes, cache->maps.hash(attr_bytes), n.attrs);
    }
}

void encode_node(std::string& o, const node& n) {
    put_string(o, 1, n.name);
    put_string(o, 2, n.op);
    for (auto& e : n.inputs) put_bytes(o, 3, e.input_str());
    for (auto& c : n.control_inputs) {
        put_tag(o, 3, wire_type::bytes);
        put_varint(o, c.size() + 1);
        o += '^';
        o += c;
    }
    put_string(o, 4, n.device);
    encode_attr_map(o, 5, n.attrs);
    o += n.extra_fields;
}

// ------------------------------------------------------------------ OpDef

op_def decode_op_def(reader r) {
    op_def d;
    std::uint32_t k;
    wire_type t;
    while (true) {
        const char* start = r.pos();
        if (!r.next(k, t)) break;
        switch (k) {
            case 1: d.name = to_string(get_str(r, t, k)); break;
            case 2: r.expect(t, wire_type::bytes, k); decode_arg(r.message("OpDef.ArgDef"), d.inputs.emplace_back()); break;
            case 3: r.expect(t, wire_type::bytes, k); decode_arg(r.message("OpDef.ArgDef"), d.outputs.emplace_back()); break;
            case 4: r.expect(t, wire_type::bytes, k); d.attrs.push_back(decode_attr_def(r.message("OpDef.AttrDef"))); break;
            case 5: d.summary = to_string(get_str(r, t, k)); break;
            case 6: d.description = to_string(get_str(r, t, k)); break;
            case 16: r.expect(t, wire_type::varint, k); d.is_aggregate = r.varint() != 0; break;
            case 17: r.expect(t, wire_type::varint, k); d.is_stateful = r.varint() != 0; break;
            case 18: r.expect(t, wire_type::varint, k); d.is_commutative = r.varint() != 0; break;
            case 19: r.expect(t, wire_type::varint, k); d.allows_uninitialized_input = r.varint() != 0; break;
            case 20: d.control_outputs.emplace_back(get_str(r, t, k)); break;
            case 21: r.expect(t, wire_type::varint, k); d.is_distributed_communication = r.varint() != 0; break;
            default: keep_unknown(d.extra, r, start, t);
        }
    }
    // op lists are kept for the graph's lifetime: no spare capacity
    d.inputs.shrink_to_fit();
    d.outputs.shrink_to_fit();
    d.attrs.shrink_to_fit();
    return d;
}

op_def decode_op_def_bytes(std::string_view bytes) { return decode_op_def(reader(bytes, {}, 0, "OpDef")); }

void encode_op_def(std::string& o, const op_def& d) {
    put_string(o, 1, d.name);
    for (auto& a : d.inputs) put_message(o, 2, [&](std::string& b) { encode_arg(b, a); });
    for (auto& a : d.outputs) put_message(o, 3, [&](std::string& b) { encode_arg(b, a); });
    for (auto& a : d.attrs) put_message(o, 4, [&](std::string& b) { encode_attr_def(b, a); });
    put_string(o, 5, d.summary);
    put_string(o, 6, d.description);
    put_uint(o, 16, d.is_aggregate);
    put_uint(o, 17, d.is_stateful);
    put_uint(o, 18, d.is_commutative);
    put_uint(o, 19, d.allows_uninitialized_input);
    for (auto& c : d.control_outputs) put_bytes(o, 20, c);
    put_uint(o, 21, d.is_distributed_communication);
    o += d.extra;
}

// ------------------------------------------------------------------ FunctionDef and library

function_def decode_function(reader r) {
    function_def f;
    std::uint32_t k;
    wire_type t;
    while (true) {
        const char* start = r.pos();
        if (!r.next(k, t)) break;
        switch (k) {
            case 1: r.expect(t, wire_type::bytes, k); f.signature = decode_op_def(r.message("FunctionDef.signature")); break;
            case 3: r.expect(t, wire_type::bytes, k); f.nodes.push_back(decode_node(r.message("FunctionDef.node_def"))); break;
            case 4: r.expect(t, wire_type::bytes, k); f.ret.insert(decode_string_entry(r.message("FunctionDef.ret"))); break;
            case 5: r.expect(t, wire_type::bytes, k); decode_attr_entry(r.message("FunctionDef.attr"), f.attrs); break;
            case 6: r.expect(t, wire_type::bytes, k); f.control_ret.insert(decode_string_entry(r.message("FunctionDef.control_ret"))); break;
            case 7: {
                r.expect(t, wire_type::bytes, k);
                auto e = r.message("FunctionDef.arg_attr");
                std::uint32_t idx = 0;
                attr_map m;
                std::uint32_t g;
                wire_type u;
                while (e.next(g, u)) {
                    if (g == 1 && u == wire_type::varint) {
                        idx = static_cast<std::uint32_t>(e.varint());
                    } else if (g == 2 && u == wire_type::bytes) {
                        auto a = e.message("FunctionDef.ArgAttrs");
                        std::uint32_t h;
                        wire_type w;
                        while (a.next(h, w)) {
                            if (h == 1 && w == wire_type::bytes) decode_attr_entry(a.message("ArgAttrs.attr"), m);
                            else a.skip(w);
                        }
                    } else {
                        e.skip(u);
                    }
                }
                m.sort();
                f.arg_attrs[idx] = std::move(m);
                break;
            }
            case 8: {
                r.expect(t, wire_type::bytes, k);
                auto e = r.message("FunctionDef.resource_arg_unique_id");
                std::uint32_t a = 0, b = 0, g;
                wire_type u;
                while (e.next(g, u)) {
                    if (g == 1 && u == wire_type::varint) a = static_cast<std::uint32_t>(e.varint());
                    else if (g == 2 && u == wire_type::varint) b = static_cast<std::uint32_t>(e.varint());
                    else e.skip(u);
                }
                f.resource_arg_unique_ids[a] = b;
                break;
            }
            default: keep_unknown(f.extra_fields, r, start, t);
        }
    }
    f.attrs.sort();
    return f;
}

void encode_function(std::string& o, const function_def& f) {
    put_message(o, 1, [&](std::string& b) { encode_op_def(b, f.signature); });
    for (auto& n : f.nodes) put_message(o, 3, [&](std::string& b) { encode_node(b, n); });
    encode_string_map(o, 4, f.ret);
    encode_attr_map(o, 5, f.attrs);
    encode_string_map(o, 6, f.control_ret);
    for (auto& arg : f.arg_attrs) {
        put_message(o, 7, [&](std::string& e) {
            put_uint(e, 1, arg.first);
            put_message(e, 2, [&](std::string& a) { encode_attr_map(a, 1, arg.second); });
        });
    }
    for (auto& ids : f.resource_arg_unique_ids) {
        put_message(o, 8, [&](std::string& e) {
            put_uint(e, 1, ids.first);
            put_uint(e, 2, ids.second);
        });
    }
    o += f.extra_fields;
}

void decode_library(reader r, function_library& lib) {
    std::uint32_t k;
    wire_type t;
    while (true) {
        const char* start = r.pos();
        if (!r.next(k, t)) break;
        if (k == 1 && t == wire_type::bytes) {
            lib.functions.push_back(decode_function(r.message("FunctionDef")));
        } else if ((k == 2 || k == 3) && t == wire_type::bytes) {
            auto [a, b] = decode_string_entry(r.message(k == 2 ? "GradientDef" : "RegisteredGradient"));
            if (k == 2) lib.gradients.push_back({a, b});
            else lib.registered_gradients.push_back({a, b});
        } else {
            keep_unknown(lib.extra_fields, r, start, t);
        }
    }
}

void encode_library(std::string& o, const function_library& lib) {
    for (auto& f : lib.functions) put_message(o, 1, [&](std::string& b) { encode_function(b, f); });
    for (auto& g : lib.gradients) {
        put_message(o, 2, [&](std::string& b) {
            put_string(b, 1, g.function_name);
            put_string(b, 2, g.gradient_func);
        });
    }
    for (auto& g : lib.registered_gradients) {
        put_message(o, 3, [&](std::string& b) {
            put_string(b, 1, g.gradient_func);
            put_string(b, 2, g.registered_op_type);
        });
    }
    o += lib.extra_fields;
}

// ------------------------------------------------------------------ GraphDef

void decode_graph(reader r, graph& g) {
    g.has_versions = false;
    g.has_library = false;
    attr_cache cache;
    {
        reader pre = r;
        std::size_t nodes = 0;
        std::uint32_t k;
        wire_type t;
        try {
            while (pre.next(k, t)) {
                nodes += k == 1;
                pre.skip(t);
            }
        } catch (const format_error&) {
            // a damaged GraphDef: the loop below reports where, naming the node
        }
        g.reserve(g.size() + nodes);
        cache.values.reserve(256);
        cache.maps.reserve(256);
    }
    std::uint32_t k;
    wire_type t;
    std::size_t count = 0;
    const node* prev = nullptr;
    while (true) {
        const char* start = r.pos();
        if (!r.next(k, t)) break;
        switch (k) {
            case 1: {
                r.expect(t, wire_type::bytes, k);
                const char* payload = r.pos();
                const node* added = nullptr;
                try {
                    added = &g.add_node_with([&](node& n) { decode_node_into(r.message("NodeDef"), &cache, n); });
                } catch (const format_error& e) {
                    // name the node: its name is usually the first field, readable even when cut off
                    std::string name = peek_node_name(std::string_view(payload, static_cast<std::size_t>(
                                                                                    r.rest().data() + r.rest().size() - payload)));
                    location l = e.where();
                    l.node = name.empty() ? graft::detail::cat("#", count) : name;
                    throw format_error(graft::detail::cat(e.message(), " (in node #", count, " of the GraphDef",
                                                   prev ? ", after node '" + prev->name + "'" : std::string(), ")"),
                                       l, e.hint());
                } catch (const graph_error& e) {
                    location l = e.where();
                    if (!r.file().empty()) l.file = std::string(r.file());
                    l.offset = r.offset_of(start);
                    throw graph_error(e.message(), l, e.hint());
                }
                ++count;
                prev = added;
                break;
            }
            case 2:
                r.expect(t, wire_type::bytes, k);
                g.has_library = true;
                decode_library(r.message("FunctionDefLibrary"), g.library);
                break;
            case 3: r.expect(t, wire_type::varint, k); g.legacy_version = static_cast<std::int32_t>(r.varint()); break;
            case 4: {
                r.expect(t, wire_type::bytes, k);
                g.has_versions = true;
                auto v = r.message("VersionDef");
                std::uint32_t a;
                wire_type b;
                while (v.next(a, b)) {
                    if (a == 1 && b == wire_type::varint) g.versions.producer = static_cast<std::int32_t>(v.varint());
                    else if (a == 2 && b == wire_type::varint) g.versions.min_consumer = static_cast<std::int32_t>(v.varint());
                    else if (a == 3) v.varints(b, [&](std::uint64_t x) {
                        g.versions.bad_consumers.push_back(static_cast<std::int32_t>(x));
                    });
                    else v.skip(b);
                }
                break;
            }
            case 5: g.debug_info.assign(get_str(r, t, k)); break;
            default: keep_unknown(g.extra_fields, r, start, t);
        }
    }
    g.register_library_ops();
}

void encode_graph(std::string& o, const graph& g) {
    std::string buf;
    for (const auto& n : g) {
        buf.clear();
        encode_node(buf, n);
        put_bytes(o, 1, buf);
    }
    if (g.has_library || !g.library.empty()) put_message(o, 2, [&](std::string& b) { encode_library(b, g.library); });
    put_int(o, 3, g.legacy_version);
    bool versions_set = g.versions.producer || g.versions.min_consumer || !g.versions.bad_consumers.empty();
    if (g.has_versions || versions_set) put_message(o, 4, [&](std::string& v) {
        put_int(v, 1, g.versions.producer);
        put_int(v, 2, g.versions.min_consumer);
        if (!g.versions.bad_consumers.empty()) {
            std::string p;
            for (auto c : g.versions.bad_consumers) put_varint(p, static_cast<std::uint64_t>(static_cast<std::int64_t>(c)));
            put_bytes(v, 3, p);
        }
    });
    if (!g.debug_info.empty()) put_bytes(o, 5, g.debug_info);
    o += g.extra_fields;
}

}  // namespace graft::tf::codec
