// graft/surgery/detail/import_impl.hpp — import_meta_graph()'s definition, behind graft/surgery/import.hpp.
#pragma once

#include "graft/surgery/import.hpp"

namespace graft::surgery {

GRAFT_INLINE import_result import_meta_graph(meta_graph& into, const meta_graph& src, const import_options& o) {
    import_result r;
    r.scope = o.scope;
    while (!r.scope.empty() && r.scope.back() == '/') r.scope.pop_back();
    const std::string& scope = r.scope;
    const graph& sg = src.graph;
    graph& tg = into.graph;

    // 1. the scope
    if (!scope.empty() && scope_in_use(tg, scope)) {
        throw invalid_argument_error("import: scope '" + scope + "' is already used in the target graph",
                                     location::at_node(scope),
                                     "import under another scope: two models may not share (or nest into) one scope");
    }

    // 2. the input map
    std::unordered_map<endpoint, endpoint> data_map;
    std::unordered_map<std::string, std::string> control_map;  // src node -> target node
    for (const auto& [k, v] : o.input_map) {
        bool kc = !k.empty() && k.front() == '^', vc = !v.empty() && v.front() == '^';
        if (kc != vc) {
            throw invalid_argument_error("import: input_map entry '" + k + "' -> '" + v + "' mixes a control input and a tensor",
                                         location::at_tensor(k), "map \"^x\" to \"^y\", or \"x:0\" to \"y:0\"");
        }
        if (kc) {
            std::string sn = k.substr(1), tn = v.substr(1);
            if (!sg.contains(sn)) {
                throw invalid_argument_error("import: input_map key '" + k + "' names no node of the imported graph",
                                             location::at_node(sn), detail::close_nodes_hint(sg, sn, "the imported graph"));
            }
            if (!tg.contains(tn)) {
                throw invalid_argument_error("import: input_map value '" + v + "' (for '" + k + "') names no node of the target graph",
                                             location::at_node(tn), detail::close_nodes_hint(tg, tn, "the target graph"));
            }
            control_map[sn] = tn;
            continue;
        }
        endpoint ke = endpoint::parse(k), ve = endpoint::parse(v);
        const node* sn = sg.find(ke.node);
        int sc = sn ? detail::output_count(sg, *sn) : 0;
        if (!sn || ke.index < 0 || (sc >= 0 && ke.index >= sc)) {
            throw invalid_argument_error(
                "import: input_map key '" + k + "' names no tensor of the imported graph" +
                    (sn ? graft::detail::cat(" (node '", ke.node, "' has ", sc, " outputs)") : std::string()),
                location::at_tensor(k), detail::close_nodes_hint(sg, ke.node, "the imported graph"));
        }
        const node* tn = tg.find(ve.node);
        int tc = tn ? detail::output_count(tg, *tn) : 0;
        if (!tn || ve.index < 0 || (tc >= 0 && ve.index >= tc)) {
            throw invalid_argument_error(
                "import: input_map value '" + v + "' (for '" + k + "') names no tensor of the target graph" +
                    (tn ? graft::detail::cat(" (node '", ve.node, "' has ", tc, " outputs)") : std::string()),
                location::at_tensor(v), detail::close_nodes_hint(tg, ve.node, "the target graph"));
        }
        if (o.check_seams) {
            dtype st = graft::dtype::invalid;
            if (auto* a = sn->attr("dtype"); a && sn->op.rfind("Placeholder", 0) == 0 && a->which() == attr_value::kind::type)
                st = base_type(a->type());
            else
                st = detail::output_type(sg, *sn, ke.index);
            dtype tt = detail::output_type(tg, *tn, ve.index);
            if (st != graft::dtype::invalid && tt != graft::dtype::invalid && st != tt) {
                throw invalid_argument_error(graft::detail::cat("import: dtype mismatch at the seam '", k, "' <- '", v, "': '", k,
                                                                "' is ", dtype_name(st), ", '", v, "' is ", dtype_name(tt)),
                                             location::at_tensor(k), "map a tensor of the same dtype (add a Cast first)");
            }
            graft::shape ss = detail::static_shape(sg, ke), ts = detail::static_shape(tg, ve);
            if (!ss.compatible_with(ts)) {
                throw invalid_argument_error(graft::detail::cat("import: shape mismatch at the seam '", k, "' <- '", v, "': '", k,
                                                                "' is ", ss.str(), ", '", v, "' is ", ts.str()),
                                             location::at_tensor(k), "map a tensor of a compatible shape (add a Reshape first)");
            }
        }
        data_map[ke] = ve;
    }
    // Placeholders whose outputs are all mapped disappear; references to them go to the mapped node.
    std::unordered_map<std::string, std::string> removed;  // src node -> target node
    for (const auto& [ke, ve] : data_map) {
        const node* sn = sg.find(ke.node);
        if (sn->op == "Placeholder" || sn->op == "PlaceholderWithDefault" || sn->op == "PlaceholderV2") {
            if (sn->op == "PlaceholderWithDefault" || ke.index == 0) {
                removed[ke.node] = control_map.count(ke.node) ? control_map[ke.node] : ve.node;
            }
        }
    }
    auto f = [&](std::string_view n) -> std::string {
        if (!removed.empty()) {
            if (auto it = removed.find(std::string(n)); it != removed.end()) return it->second;
        }
        return join_scope(scope, n);
    };
    rename_fn fn = f;
    auto tensor_name = [&](const std::string& t) -> std::string {
        if (t.empty() || t.front() == '^' || data_map.empty()) return rename_tensor(t, fn);
        endpoint e;
        if (endpoint::try_split(t, e)) {
            if (auto it = data_map.find(e); it != data_map.end()) return it->second.str();
        }
        return rename_tensor(t, fn);
    };

    // 3. names and functions must be free
    if (scope.empty()) {
        for (const auto& n : sg) {
            if (!removed.count(n.name) && tg.contains(n.name)) {
                throw invalid_argument_error("import: node '" + n.name + "' is already in the target graph",
                                             location::at_node(n.name, n.op), "import under a scope (import_options::scope)");
            }
        }
    }
    std::vector<const function_def*> new_functions;
    {
        std::unordered_map<std::string_view, const function_def*> have;
        for (auto& fd : tg.library.functions) have.emplace(fd.name(), &fd);
        for (auto& fd : sg.library.functions) {
            auto it = have.find(fd.name());
            if (it == have.end()) {
                new_functions.push_back(&fd);
            } else if (!(*it->second == fd)) {
                throw graph_error("import: function '" + fd.name() + "' of the imported graph differs from the target's function of that name",
                                  location::at_node(fd.name()), "rename one of the functions before importing");
            }
        }
    }
    for (auto& e : o.return_elements) {
        std::string_view nm = e;
        if (!nm.empty() && nm.front() == '^') nm.remove_prefix(1);
        endpoint ep;
        std::string node_name = endpoint::try_split(nm, ep) ? ep.node : std::string(nm);
        if (!sg.contains(node_name)) {
            throw not_found_error("import: return element '" + e + "' is not in the imported graph", location::at_tensor(e),
                                  detail::close_nodes_hint(sg, node_name, "the imported graph"));
        }
    }

    // 4. collections, renamed on copies (before touching the target)
    std::map<std::string, collection_def> colls;
    if (o.import_collections) {
        for (const auto& [name, c] : src.collections) {
            collection_def cc = c;
            if (cc.which == collection_def::kind::node_list && !removed.empty()) {
                std::erase_if(cc.values, [&](const std::string& v) {
                    std::string_view t = v;
                    if (t.starts_with('^')) t.remove_prefix(1);
                    endpoint e;
                    return endpoint::try_split(t, e) && removed.count(e.node) != 0;
                });
            }
            if (!rename_collection(cc, fn)) {
                r.dropped_collections.push_back(name);
                continue;
            }
            auto it = into.collections.find(name);
            if (it != into.collections.end() && it->second.which != cc.which && it->second.which != collection_def::kind::none &&
                cc.which != collection_def::kind::none) {
                r.dropped_collections.push_back(name);
                continue;
            }
            colls.emplace(name, std::move(cc));
        }
    }

    // 5. nodes
    tg.reserve(tg.size() + sg.size());
    for (const auto& sn : sg) {
        if (removed.count(sn.name)) {
            r.removed.push_back(sn.name);
            continue;
        }
        node n = sn;
        n.name = join_scope(scope, sn.name);
        for (auto& in : n.inputs) {
            if (!data_map.empty()) {
                if (auto it = data_map.find(in); it != data_map.end()) {
                    in = it->second;
                    continue;
                }
            }
            in.node = f(in.node);
        }
        for (auto& c : n.control_inputs) {
            if (!control_map.empty()) {
                if (auto it = control_map.find(c); it != control_map.end()) {
                    c = it->second;
                    continue;
                }
            }
            c = f(c);
        }
        rename_colocation(n, fn);
        if (!scope.empty() && (n.op == "VarHandleOp" || n.op == "VariableV2" || n.op == "Variable" ||
                               n.op.find("Table") != std::string::npos)) {
            if (auto* a = n.attrs.find("shared_name"); a && a->which() == attr_value::kind::s && !a->s().empty()) {
                *a = attr_value(join_scope(scope, a->s()));
            }
        }
        if (o.clear_devices) n.device.clear();
        tg.add_node(std::move(n));
        ++r.imported_nodes;
    }
    for (auto* fd : new_functions) tg.add_function(*fd);
    if (src.info.has_stripped_op_list) {
        const auto& mine = std::as_const(into.info.stripped_op_list);
        const auto& theirs = src.info.stripped_op_list;
        std::unordered_set<std::string> have;
        for (std::size_t i = 0; i < mine.size(); ++i) have.insert(mine.name(i));
        for (std::size_t i = 0; i < theirs.size(); ++i) {
            const auto& name = theirs.name(i);
            if (!tg.registry().find(name)) tg.registry().add(theirs.shared(i));
            if (have.insert(name).second && into.info.has_stripped_op_list) into.info.stripped_op_list.push_back_from(theirs, i);
        }
    }

    // 6. collections, saver, signatures, results
    for (auto& [name, cc] : colls) {
        auto& dst = into.collections[name];
        if (dst.which == collection_def::kind::none) {
            dst = std::move(cc);
            continue;
        }
        dst.values.insert(dst.values.end(), cc.values.begin(), cc.values.end());
        dst.variables.insert(dst.variables.end(), cc.variables.begin(), cc.variables.end());
        dst.int64s.insert(dst.int64s.end(), cc.int64s.begin(), cc.int64s.end());
        dst.floats.insert(dst.floats.end(), cc.floats.begin(), cc.floats.end());
        dst.anys.insert(dst.anys.end(), cc.anys.begin(), cc.anys.end());
    }
    if (src.saver) {
        r.saver = rename(*src.saver, fn);
        if (o.replace_saver || (!into.saver && scope.empty())) into.saver = r.saver;
    }
    for (const auto& [key, sig] : src.signatures) {
        signature_def s = rename(sig, fn);
        for (auto* m : {&s.inputs, &s.outputs}) {
            for (auto& [k, ti] : *m) {
                auto orig = (m == &s.inputs ? sig.inputs : sig.outputs).at(k).name;
                ti.name = tensor_name(orig);
            }
        }
        r.signatures[key] = s;
        if (o.import_signatures) into.signatures[join_scope(scope, key)] = std::move(s);
    }
    for (auto& e : o.return_elements) r.return_elements.push_back(tensor_name(e));
    for (auto& v : detail::variable_names(src, "variables", true)) r.variables.push_back(f(v));
    for (auto& v : detail::variable_names(src, "trainable_variables", false)) r.trainable_variables.push_back(f(v));
    if (sg.contains("init") && !removed.count("init")) r.init_op = join_scope(scope, "init");
    tg.touch();
    return r;
}

}  // namespace graft::surgery
