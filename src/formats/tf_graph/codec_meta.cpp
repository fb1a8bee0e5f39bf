// MetaGraphDef, SavedModel, VariableDef, SavedObjectGraph, TrackableObjectGraph <-> graft IR on the
// protobuf wire format.
#include <bit>

#include "codec.hpp"

namespace graft::tf::codec {

using namespace graft::tf::wire;

namespace {

std::string_view get_str(reader& r, wire_type type, std::uint32_t field) {
    r.expect(type, wire_type::bytes, field);
    return r.bytes();
}

any_value decode_any(reader r) {
    any_value a;
    std::uint32_t k;
    wire_type t;
    while (r.next(k, t)) {
        if (k == 1) a.type_url = std::string(get_str(r, t, k));
        else if (k == 2) a.value = std::string(get_str(r, t, k));
        else r.skip(t);
    }
    return a;
}
void encode_any(std::string& o, const any_value& a) {
    put_string(o, 1, a.type_url);
    put_string(o, 2, a.value);
}

tensor_info decode_tensor_info(reader r) {
    tensor_info ti;
    std::uint32_t k;
    wire_type t;
    while (true) {
        const char* start = r.pos();
        if (!r.next(k, t)) break;
        switch (k) {
            case 1: ti.name = std::string(get_str(r, t, k)); break;
            case 2: r.expect(t, wire_type::varint, k); ti.dtype = static_cast<graft::dtype>(static_cast<std::int32_t>(r.varint())); break;
            case 3: r.expect(t, wire_type::bytes, k); ti.shape = decode_shape(r.message("TensorShapeProto")); break;
            case 4: {
                r.expect(t, wire_type::bytes, k);
                auto c = r.message("TensorInfo.CooSparse");
                std::uint32_t a;
                wire_type b;
                while (c.next(a, b)) {
                    if (a == 1) ti.coo_values = std::string(get_str(c, b, a));
                    else if (a == 2) ti.coo_indices = std::string(get_str(c, b, a));
                    else if (a == 3) ti.coo_dense_shape = std::string(get_str(c, b, a));
                    else c.skip(b);
                }
                break;
            }
            case 5: ti.composite_tensor = std::string(get_str(r, t, k)); break;
            default: keep_unknown(ti.extra_fields, r, start, t);
        }
    }
    return ti;
}

void encode_tensor_info(std::string& o, const tensor_info& ti) {
    put_string(o, 1, ti.name);
    put_uint(o, 2, static_cast<std::uint32_t>(ti.dtype));
    if (ti.shape) put_message(o, 3, [&](std::string& b) { encode_shape(b, *ti.shape); });
    if (!ti.coo_values.empty() || !ti.coo_indices.empty() || !ti.coo_dense_shape.empty()) {
        put_message(o, 4, [&](std::string& b) {
            put_string(b, 1, ti.coo_values);
            put_string(b, 2, ti.coo_indices);
            put_string(b, 3, ti.coo_dense_shape);
        });
    }
    if (!ti.composite_tensor.empty()) put_bytes(o, 5, ti.composite_tensor);
    o += ti.extra_fields;
}

signature_def decode_signature(reader r) {
    signature_def s;
    std::uint32_t k;
    wire_type t;
    while (true) {
        const char* start = r.pos();
        if (!r.next(k, t)) break;
        if ((k == 1 || k == 2 || k == 4) && t == wire_type::bytes) {
            auto e = r.message("SignatureDef map entry");
            std::string key;
            std::uint32_t a;
            wire_type b;
            while (e.next(a, b)) {
                if (a == 1) {
                    key = std::string(get_str(e, b, a));
                } else if (a == 2 && b == wire_type::bytes) {
                    if (k == 4) {
                        auto bytes = e.bytes();
                        auto h = decode_tensor_header(e.nested(bytes, "TensorProto"));
                        s.defaults[key] = tensor_value::from_proto(std::string(bytes), h.type, std::move(h.shape));
                    } else {
                        (k == 1 ? s.inputs : s.outputs)[key] = decode_tensor_info(e.message("TensorInfo"));
                    }
                } else {
                    e.skip(b);
                }
            }
        } else if (k == 3) {
            s.method_name = std::string(get_str(r, t, k));
        } else {
            keep_unknown(s.extra_fields, r, start, t);
        }
    }
    return s;
}

void encode_signature(std::string& o, const signature_def& s) {
    for (int which = 1; which <= 2; ++which) {
        // named members, not [key, ti]: clang 14 cannot capture structured bindings
        for (auto& in : which == 1 ? s.inputs : s.outputs) {
            put_message(o, static_cast<std::uint32_t>(which), [&](std::string& e) {
                put_string(e, 1, in.first);
                put_message(e, 2, [&](std::string& b) { encode_tensor_info(b, in.second); });
            });
        }
    }
    put_string(o, 3, s.method_name);
    for (auto& d : s.defaults) {
        put_message(o, 4, [&](std::string& e) {
            put_string(e, 1, d.first);
            put_bytes(e, 2, d.second.proto_bytes());
        });
    }
    o += s.extra_fields;
}

collection_def decode_collection(reader r) {
    collection_def c;
    std::uint32_t k;
    wire_type t;
    while (true) {
        const char* start = r.pos();
        if (!r.next(k, t)) break;
        if (k >= 1 && k <= 5 && t == wire_type::bytes) {
            c.which = static_cast<collection_def::kind>(k);
            auto l = r.message("CollectionDef list");
            std::uint32_t a;
            wire_type b;
            while (l.next(a, b)) {
                if (a != 1) { l.skip(b); continue; }
                switch (k) {
                    case 1: case 2: c.values.emplace_back(get_str(l, b, a)); break;
                    case 3: l.varints(b, [&](std::uint64_t x) { c.int64s.push_back(static_cast<std::int64_t>(x)); }); break;
                    case 4: l.fixed32s(b, [&](std::uint32_t x) { c.floats.push_back(std::bit_cast<float>(x)); }); break;
                    case 5: l.expect(b, wire_type::bytes, a); c.anys.push_back(decode_any(l.message("Any"))); break;
                }
            }
        } else {
            keep_unknown(c.extra_fields, r, start, t);
        }
    }
    return c;
}

void encode_collection(std::string& o, const collection_def& c) {
    using K = collection_def::kind;
    if (c.which != K::none) {
        put_message(o, static_cast<std::uint32_t>(c.which), [&](std::string& l) {
            switch (c.which) {
                case K::node_list: case K::bytes_list: for (auto& v : c.values) put_bytes(l, 1, v); break;
                case K::int64_list:
                    if (!c.int64s.empty()) {
                        std::string p;
                        for (auto v : c.int64s) put_varint(p, static_cast<std::uint64_t>(v));
                        put_bytes(l, 1, p);
                    }
                    break;
                case K::float_list:
                    if (!c.floats.empty()) {
                        std::string p;
                        for (float f : c.floats) {
                            std::uint32_t u;
                            std::memcpy(&u, &f, 4);
                            put_fixed32(p, u);
                        }
                        put_bytes(l, 1, p);
                    }
                    break;
                case K::any_list: for (auto& a : c.anys) put_message(l, 1, [&](std::string& b) { encode_any(b, a); }); break;
                case K::none: break;
            }
        });
    }
    o += c.extra_fields;
}

saver_def decode_saver(reader r) {
    saver_def s;
    std::uint32_t k;
    wire_type t;
    while (true) {
        const char* start = r.pos();
        if (!r.next(k, t)) break;
        switch (k) {
            case 1: s.filename_tensor_name = std::string(get_str(r, t, k)); break;
            case 2: s.save_tensor_name = std::string(get_str(r, t, k)); break;
            case 3: s.restore_op_name = std::string(get_str(r, t, k)); break;
            case 4: r.expect(t, wire_type::varint, k); s.max_to_keep = static_cast<std::int32_t>(r.varint()); break;
            case 5: r.expect(t, wire_type::varint, k); s.sharded = r.varint() != 0; break;
            case 6: r.expect(t, wire_type::fixed32, k); s.keep_checkpoint_every_n_hours = r.float32(); break;
            case 7: r.expect(t, wire_type::varint, k); s.version = static_cast<int>(r.varint()); break;
            default: keep_unknown(s.extra_fields, r, start, t);
        }
    }
    return s;
}

void encode_saver(std::string& o, const saver_def& s) {
    put_string(o, 1, s.filename_tensor_name);
    put_string(o, 2, s.save_tensor_name);
    put_string(o, 3, s.restore_op_name);
    put_int(o, 4, s.max_to_keep);
    put_uint(o, 5, s.sharded);
    put_float(o, 6, s.keep_checkpoint_every_n_hours);
    put_uint(o, 7, static_cast<std::uint32_t>(s.version));
    o += s.extra_fields;
}

/// Decodes MetaInfoDef into `mi`. Each stripped OpDef is kept as its bytes (op_list decodes on
/// access); the ones whose signature differs from graft's own table stay decoded and their
/// indices go to `own_ops`: only those need a place in the graph's registry.
void decode_meta_info(reader r, meta_info& mi, std::vector<std::size_t>& own_ops) {
    std::uint32_t k;
    wire_type t;
    while (true) {
        const char* start = r.pos();
        if (!r.next(k, t)) break;
        switch (k) {
            case 1: mi.meta_graph_version = std::string(get_str(r, t, k)); break;
            case 2: {
                r.expect(t, wire_type::bytes, k);
                mi.has_stripped_op_list = true;
                auto l = r.message("OpList");
                std::uint32_t a;
                wire_type b;
                while (l.next(a, b)) {
                    if (a != 1 || b != wire_type::bytes) {
                        l.skip(b);
                        continue;
                    }
                    auto sub = l.message("OpDef");
                    std::string bytes(sub.rest());
                    auto d = std::make_shared<op_def>(decode_op_def(sub));
                    const op_def* known = op_registry::global().find(d->name);
                    bool own = !known || !same_signature(*known, *d);
                    if (own) own_ops.push_back(mi.stripped_op_list.size());
                    auto name = d->name;
                    mi.stripped_op_list.push_back_serialized(std::move(name), std::move(bytes), &decode_op_def_bytes,
                                                             own ? std::move(d) : nullptr);
                }
                break;
            }
            case 3: r.expect(t, wire_type::bytes, k); mi.any_info = decode_any(r.message("Any")); break;
            case 4: mi.tags.emplace_back(get_str(r, t, k)); break;
            case 5: mi.tensorflow_version = std::string(get_str(r, t, k)); break;
            case 6: mi.tensorflow_git_version = std::string(get_str(r, t, k)); break;
            case 7: r.expect(t, wire_type::varint, k); mi.stripped_default_attrs = r.varint() != 0; break;
            case 8: {
                r.expect(t, wire_type::bytes, k);
                auto e = r.message("MetaInfoDef.function_aliases");
                std::string a, b;
                std::uint32_t f;
                wire_type u;
                while (e.next(f, u)) {
                    if (f == 1) a = std::string(get_str(e, u, f));
                    else if (f == 2) b = std::string(get_str(e, u, f));
                    else e.skip(u);
                }
                mi.function_aliases[a] = b;
                break;
            }
            default: keep_unknown(mi.extra_fields, r, start, t);
        }
    }
}

void encode_meta_info(std::string& o, const meta_info& mi) {
    put_string(o, 1, mi.meta_graph_version);
    if (mi.has_stripped_op_list || !mi.stripped_op_list.empty()) {
        put_message(o, 2, [&](std::string& l) {
            const auto& ops = mi.stripped_op_list;
            for (std::size_t i = 0; i < ops.size(); ++i) {
                if (auto bytes = ops.serialized(i); !bytes.empty()) put_bytes(l, 1, bytes);
                else put_message(l, 1, [&](std::string& b) { encode_op_def(b, ops[i]); });
            }
        });
    }
    if (mi.any_info) put_message(o, 3, [&](std::string& b) { encode_any(b, *mi.any_info); });
    for (auto& tag : mi.tags) put_bytes(o, 4, tag);
    put_string(o, 5, mi.tensorflow_version);
    put_string(o, 6, mi.tensorflow_git_version);
    put_uint(o, 7, mi.stripped_default_attrs);
    for (auto& alias : mi.function_aliases) {
        put_message(o, 8, [&](std::string& e) {
            put_string(e, 1, alias.first);
            put_string(e, 2, alias.second);
        });
    }
    o += mi.extra_fields;
}

}  // namespace

// ------------------------------------------------------------------ VariableDef

variable_def decode_variable_def(reader r) {
    variable_def v;
    std::uint32_t k;
    wire_type t;
    while (r.next(k, t)) {
        switch (k) {
            case 1: v.variable_name = std::string(get_str(r, t, k)); break;
            case 2: v.initializer_name = std::string(get_str(r, t, k)); break;
            case 3: v.snapshot_name = std::string(get_str(r, t, k)); break;
            case 4: {
                r.expect(t, wire_type::bytes, k);
                save_slice_info s;
                auto e = r.message("SaveSliceInfoDef");
                std::uint32_t a;
                wire_type b;
                while (e.next(a, b)) {
                    auto ints = [&](std::vector<std::int64_t>& into) {
                        e.varints(b, [&](std::uint64_t x) { into.push_back(static_cast<std::int64_t>(x)); });
                    };
                    if (a == 1) s.full_name = std::string(get_str(e, b, a));
                    else if (a == 2) ints(s.full_shape);
                    else if (a == 3) ints(s.var_offset);
                    else if (a == 4) ints(s.var_shape);
                    else e.skip(b);
                }
                v.save_slice_info_def = std::move(s);
                break;
            }
            case 5: r.expect(t, wire_type::varint, k); v.is_resource = r.varint() != 0; break;
            case 6: v.initial_value_name = std::string(get_str(r, t, k)); break;
            case 7: r.expect(t, wire_type::varint, k); v.trainable = r.varint() != 0; v.has_trainable = true; break;
            case 8: r.expect(t, wire_type::varint, k); v.synchronization = static_cast<int>(r.varint()); break;
            case 9: r.expect(t, wire_type::varint, k); v.aggregation = static_cast<int>(r.varint()); break;
            default: r.skip(t);
        }
    }
    return v;
}

std::string encode_variable_def(const variable_def& v) {
    std::string o;
    // the four names plus a few bytes of tags and flags: one allocation (clone encodes one per variable)
    o.reserve(v.variable_name.size() + v.initializer_name.size() + v.snapshot_name.size() +
              v.initial_value_name.size() + 32);
    put_string(o, 1, v.variable_name);
    put_string(o, 2, v.initializer_name);
    put_string(o, 3, v.snapshot_name);
    if (v.save_slice_info_def) {
        put_message(o, 4, [&](std::string& e) {
            const auto& s = *v.save_slice_info_def;
            put_string(e, 1, s.full_name);
            auto ints = [&](std::uint32_t f, const std::vector<std::int64_t>& xs) {
                if (xs.empty()) return;
                std::string p;
                for (auto x : xs) put_varint(p, static_cast<std::uint64_t>(x));
                put_bytes(e, f, p);
            };
            ints(2, s.full_shape);
            ints(3, s.var_offset);
            ints(4, s.var_shape);
        });
    }
    put_uint(o, 5, v.is_resource);
    put_string(o, 6, v.initial_value_name);
    put_uint(o, 7, v.trainable);
    put_uint(o, 8, static_cast<std::uint32_t>(v.synchronization));
    put_uint(o, 9, static_cast<std::uint32_t>(v.aggregation));
    return o;
}

// ------------------------------------------------------------------ object graphs

saved_object_graph decode_object_graph(reader r) {
    saved_object_graph g;
    std::uint32_t k;
    wire_type t;
    while (r.next(k, t)) {
        if (k == 1 && t == wire_type::bytes) {
            auto o = r.message("SavedObject");
            saved_object so;
            std::uint32_t a;
            wire_type b;
            while (o.next(a, b)) {
                if (a == 1 && b == wire_type::bytes) {
                    auto c = o.message("ObjectReference");
                    std::pair<int, std::string> ref;
                    std::uint32_t f;
                    wire_type u;
                    while (c.next(f, u)) {
                        if (f == 1 && u == wire_type::varint) ref.first = static_cast<int>(c.varint());
                        else if (f == 2) ref.second = std::string(get_str(c, u, f));
                        else c.skip(u);
                    }
                    so.children.push_back(std::move(ref));
                } else if (a >= 4 && a <= 12 && a != 11 && b == wire_type::bytes) {
                    so.which = a == 12 ? saved_object::kind::captured_tensor : static_cast<saved_object::kind>(a - 3);
                    auto m = o.message("SavedObject kind");
                    std::uint32_t f;
                    wire_type u;
                    while (m.next(f, u)) {
                        if (a == 4 && f == 1) so.identifier = std::string(get_str(m, u, f));
                        else if (a == 6 && f == 1) so.concrete_functions.emplace_back(get_str(m, u, f));
                        else if (a == 8 && f == 1) so.concrete_functions.emplace_back(get_str(m, u, f));
                        else if (a == 9 && f == 1) so.name = std::string(get_str(m, u, f));
                        else if (a == 7 && f == 1 && u == wire_type::varint) so.dtype = static_cast<graft::dtype>(static_cast<std::int32_t>(m.varint()));
                        else if (a == 7 && f == 2 && u == wire_type::bytes) so.shape = decode_shape(m.message("TensorShapeProto"));
                        else if (a == 7 && f == 3 && u == wire_type::varint) so.trainable = m.varint() != 0;
                        else if (a == 7 && f == 6) so.name = std::string(get_str(m, u, f));
                        else if (a == 7 && f == 7) so.device = std::string(get_str(m, u, f));
                        else m.skip(u);
                    }
                } else {
                    o.skip(b);
                }
            }
            g.nodes.push_back(std::move(so));
        } else if (k == 2 && t == wire_type::bytes) {
            auto e = r.message("concrete_functions entry");
            std::string key;
            std::vector<int> bound;
            std::uint32_t a;
            wire_type b;
            while (e.next(a, b)) {
                if (a == 1) {
                    key = std::string(get_str(e, b, a));
                } else if (a == 2 && b == wire_type::bytes) {
                    auto c = e.message("SavedConcreteFunction");
                    std::uint32_t f;
                    wire_type u;
                    while (c.next(f, u)) {
                        if (f == 2) c.varints(u, [&](std::uint64_t x) { bound.push_back(static_cast<int>(x)); });
                        else c.skip(u);
                    }
                } else {
                    e.skip(b);
                }
            }
            g.bound_inputs[key] = std::move(bound);
        } else {
            r.skip(t);
        }
    }
    return g;
}

std::vector<trackable_object> decode_trackable_object_graph(reader r) {
    std::vector<trackable_object> nodes;
    std::uint32_t k;
    wire_type t;
    while (r.next(k, t)) {
        if (k != 1 || t != wire_type::bytes) { r.skip(t); continue; }
        auto o = r.message("TrackableObject");
        trackable_object to;
        std::uint32_t a;
        wire_type b;
        while (o.next(a, b)) {
            if ((a == 1 || a == 2) && b == wire_type::bytes) {
                auto c = o.message(a == 1 ? "ObjectReference" : "SerializedTensor");
                int id = 0;
                std::string s1, s3;
                std::uint32_t f;
                wire_type u;
                while (c.next(f, u)) {
                    if (a == 1 && f == 1 && u == wire_type::varint) id = static_cast<int>(c.varint());
                    else if (f == (a == 1 ? 2u : 1u)) s1 = std::string(get_str(c, u, f));
                    else if (a == 2 && f == 3) s3 = std::string(get_str(c, u, f));
                    else c.skip(u);
                }
                if (a == 1) to.children.emplace_back(id, std::move(s1));
                else to.attributes.emplace_back(std::move(s1), std::move(s3));
            } else {
                o.skip(b);
            }
        }
        nodes.push_back(std::move(to));
    }
    return nodes;
}

// ------------------------------------------------------------------ MetaGraphDef, SavedModel

void decode_meta_graph(reader r, meta_graph& mg) {
    std::vector<std::size_t> own_ops;
    std::uint32_t k;
    wire_type t;
    while (true) {
        const char* start = r.pos();
        if (!r.next(k, t)) break;
        switch (k) {
            case 1: r.expect(t, wire_type::bytes, k); decode_meta_info(r.message("MetaInfoDef"), mg.info, own_ops); break;
            case 2: r.expect(t, wire_type::bytes, k); decode_graph(r.message("GraphDef"), mg.graph); break;
            case 3: r.expect(t, wire_type::bytes, k); mg.saver = decode_saver(r.message("SaverDef")); break;
            case 4: case 5: {
                r.expect(t, wire_type::bytes, k);
                auto e = r.message(k == 4 ? "collection_def entry" : "signature_def entry");
                std::string key;
                std::uint32_t a;
                wire_type b;
                while (e.next(a, b)) {
                    if (a == 1) {
                        key = std::string(get_str(e, b, a));
                    } else if (a == 2 && b == wire_type::bytes) {
                        if (k == 4) mg.collections[key] = decode_collection(e.message("CollectionDef"));
                        else mg.signatures[key] = decode_signature(e.message("SignatureDef"));
                    } else {
                        e.skip(b);
                    }
                }
                break;
            }
            case 6: {
                r.expect(t, wire_type::bytes, k);
                auto a = r.message("AssetFileDef");
                asset_file af;
                std::uint32_t f;
                wire_type u;
                while (a.next(f, u)) {
                    if (f == 1 && u == wire_type::bytes) af.tensor = decode_tensor_info(a.message("TensorInfo"));
                    else if (f == 2) af.filename = std::string(get_str(a, u, f));
                    else a.skip(u);
                }
                mg.assets.push_back(std::move(af));
                break;
            }
            case 7: {
                auto bytes = get_str(r, t, k);
                mg.object_graph_bytes.assign(bytes);
                mg.objects = decode_object_graph(r.nested(bytes, "SavedObjectGraph"));
                break;
            }
            default: keep_unknown(mg.extra_fields, r, start, t);
        }
    }
    // the ops this MetaGraph declares win over graft's table for this graph where they differ from
    // it (sharing the op_defs: the registry holds the list's own objects, not copies)
    const auto& ops = mg.info.stripped_op_list;
    for (std::size_t i : own_ops) {
        if (!mg.graph.library.find(ops.name(i))) mg.graph.registry().add(ops.shared(i));
    }
    // decode VariableDef items of the variable collections
    for (auto& [name, c] : mg.collections) {
        if (c.which != collection_def::kind::bytes_list) continue;
        bool var_coll = name == "variables" || name == "trainable_variables" || name == "local_variables" ||
                        name == "model_variables" || name == "moving_average_variables" ||
                        name == "global_step" || name == "metric_variables";
        if (!var_coll) continue;
        for (auto& b : c.values) c.variables.push_back(decode_variable_def(reader(b, r.file(), 0, "VariableDef")));
    }
}

void encode_meta_graph(std::string& o, const meta_graph& mg) {
    put_message(o, 1, [&](std::string& b) { encode_meta_info(b, mg.info); });
    put_message(o, 2, [&](std::string& b) { encode_graph(b, mg.graph); });
    if (mg.saver) put_message(o, 3, [&](std::string& b) { encode_saver(b, *mg.saver); });
    for (auto& c : mg.collections) {
        put_message(o, 4, [&](std::string& e) {
            put_string(e, 1, c.first);
            put_message(e, 2, [&](std::string& b) { encode_collection(b, c.second); });
        });
    }
    for (auto& s : mg.signatures) {
        put_message(o, 5, [&](std::string& e) {
            put_string(e, 1, s.first);
            put_message(e, 2, [&](std::string& b) { encode_signature(b, s.second); });
        });
    }
    for (auto& a : mg.assets) {
        put_message(o, 6, [&](std::string& b) {
            put_message(b, 1, [&](std::string& x) { encode_tensor_info(x, a.tensor); });
            put_string(b, 2, a.filename);
        });
    }
    if (!mg.object_graph_bytes.empty()) put_bytes(o, 7, mg.object_graph_bytes);
    o += mg.extra_fields;
}

void decode_saved_model(reader r, saved_model& sm) {
    std::uint32_t k;
    wire_type t;
    while (r.next(k, t)) {
        if (k == 1 && t == wire_type::varint) sm.schema_version = static_cast<std::int64_t>(r.varint());
        else if (k == 2 && t == wire_type::bytes) decode_meta_graph(r.message("MetaGraphDef"), sm.meta_graphs.emplace_back());
        else r.skip(t);
    }
}

void encode_saved_model(std::string& o, const saved_model& sm) {
    put_int(o, 1, sm.schema_version);
    for (auto& mg : sm.meta_graphs) put_message(o, 2, [&](std::string& b) { encode_meta_graph(b, mg); });
}

}  // namespace graft::tf::codec
