// `graft inspect PATH` — what is in a .pb/.pbtxt/.meta file, a SavedModel directory or a checkpoint
// prefix: format, nodes, op histogram, inputs, likely outputs, variables, collections, signatures,
// the ops graft cannot run yet, and the device strings (a graph written for a distributed TF job, e.g. a
// TF1 parameter-server graph, says which jobs and tasks). `--nodes` lists every node; `--json` prints
// one JSON object.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "commands.hpp"
#include "graft/exec/kernel.hpp"
#include "graft/graph/variables.hpp"
#include "graft/formats/tf/checkpoint.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "graft/formats/tf_graph/saved_model.hpp"

namespace graft_cmd_inspect {  // named, not anonymous: the CLI builds as one unity translation unit

namespace fs = std::filesystem;

struct options {
    std::string path;
    bool nodes = false;
    bool json = false;
    std::string tags;
};

// ---------------------------------------------------------------- a small JSON writer

std::string jstr(std::string_view s) {
    std::string r = "\"";
    for (unsigned char c : s) {
        switch (c) {
            case '"': r += "\\\""; break;
            case '\\': r += "\\\\"; break;
            case '\n': r += "\\n"; break;
            case '\t': r += "\\t"; break;
            default:
                if (c < 0x20) {
                    char b[8];
                    std::snprintf(b, sizeof b, "\\u%04x", c);
                    r += b;
                } else {
                    r += static_cast<char>(c);
                }
        }
    }
    return r + "\"";
}

template <class C, class F>
std::string jarr(const C& items, F&& f) {
    std::string r = "[";
    bool first = true;
    for (auto& x : items) {
        if (!first) r += ",";
        first = false;
        r += f(x);
    }
    return r + "]";
}

std::string shape_str(const std::optional<graft::shape>& s) { return s ? s->str() : std::string("<none>"); }

// ---------------------------------------------------------------- what the report holds

bool is_saver_scope(const std::string& name) {
    if (name.rfind("save/", 0) == 0) return true;
    if (name.rfind("save_", 0) == 0) {
        auto slash = name.find('/');
        return slash != std::string::npos &&
               std::all_of(name.begin() + 5, name.begin() + static_cast<std::ptrdiff_t>(slash), ::isdigit);
    }
    return false;
}

std::vector<const graft::node*> likely_outputs(const graft::meta_graph& mg) {
    const auto& g = mg.graph;
    std::set<std::string> saver_nodes;
    if (mg.saver) {
        for (auto* t : {&mg.saver->save_tensor_name, &mg.saver->restore_op_name}) {
            if (!t->empty()) saver_nodes.insert(graft::endpoint::parse(*t).node);
        }
    }
    std::vector<const graft::node*> r;
    for (const auto& n : g) {
        if (g.has_consumers(n.name)) continue;
        if (n.op == "NoOp" || is_saver_scope(n.name) || saver_nodes.count(n.name)) continue;
        if ((n.op == "Assign" || n.op == "AssignVariableOp") && !n.inputs.empty()) {
            const auto* v = g.find(n.inputs[0].node);
            if (v && graft::is_variable_op(v->op)) continue;  // an initializer
        }
        if (n.op == "VarIsInitializedOp" || n.op == "IsVariableInitialized" || n.op == "Const") continue;
        if ((n.op == "ReadVariableOp" || n.op == "Identity") && !n.inputs.empty()) {
            const auto* v = g.find(n.inputs[0].node);
            if (v && graft::is_variable_op(v->op)) continue;  // a variable's snapshot
        }
        auto ends = [&](std::string_view s) { return n.name.size() >= s.size() && n.name.ends_with(s); };
        if (ends("/switch_t") || ends("/switch_f") || ends("/pred_id")) continue;  // tf.cond bookkeeping
        r.push_back(&n);
    }
    return r;
}

/// The ops `graft run` would refuse, with node counts (graph + function bodies): no CPU kernel is
/// registered for them (an op the table lacks has none either). Calls of library functions
/// (PartitionedCall, StatefulPartitionedCall, a function's own name) run by inlining, and _Arg /
/// _Retval inside bodies become Identity nodes then; a kernel registered by the user counts.
std::map<std::string, int> unknown_ops(const graft::graph& g) {
    std::map<std::string, int> r;
    auto& kernels = graft::exec::kernel_registry::global();
    auto look = [&](const graft::node& n, bool in_body) {
        if (g.library.find(n.op) || n.op == "PartitionedCall" || n.op == "StatefulPartitionedCall") return;
        if (in_body && (n.op == "_Arg" || n.op == "_Retval")) return;
        if (!kernels.find(n.op)) ++r[n.op];
    };
    for (const auto& n : g) look(n, false);
    for (auto& f : g.library.functions) for (auto& n : f.nodes) look(n, true);
    return r;
}

/// Ops of nodes placed on a GPU that have no GPU kernel there (they run on the CPU through soft
/// placement), with node counts. Empty in a program without graft::cuda's kernel table.
std::map<std::string, int> gpu_fallback_ops(const graft::graph& g) {
    std::map<std::string, int> r;
    auto& kernels = graft::exec::kernel_registry::global();
    for (const auto& n : g) {
        std::string d(n.device.view());
        for (auto& ch : d) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (d.find("gpu") == std::string::npos) continue;
        if (!kernels.find_entry(graft::device_kind::cuda, n.op)) ++r[n.op];
    }
    return r;
}

/// The distinct device strings of the graph's nodes (function bodies not included), with node
/// counts; nodes without a device are counted under "".
std::map<std::string, int> device_counts(const graft::graph& g) {
    std::map<std::string, int> r;
    for (const auto& n : g) ++r[std::string(n.device.view())];
    return r;
}

/// The jobs the device strings name, each with its tasks (-1: no task given), e.g. a TF1
/// parameter-server graph (tf.train.replica_device_setter: "/job:ps/task:0", "/job:worker/...").
/// "localhost" (a one-process TF session) is not a distributed job. graft places such nodes by
/// their device type and index only (exec::parse_device ignores job, replica and task).
std::map<std::string, std::set<int>> distributed_jobs(const std::map<std::string, int>& devices) {
    std::map<std::string, std::set<int>> r;
    for (const auto& [spec, count] : devices) {
        std::string job;
        int task = -1;
        std::stringstream ss(spec);
        for (std::string part; std::getline(ss, part, '/');) {
            if (part.rfind("job:", 0) == 0) job = part.substr(4);
            else if (part.rfind("task:", 0) == 0 && part.size() > 5 && part.size() < 12 &&
                     std::all_of(part.begin() + 5, part.end(), ::isdigit)) {
                task = std::stoi(part.substr(5));
            }
        }
        if (!job.empty() && job != "localhost") r[job].insert(task);
    }
    return r;
}

/// "ps (task 0), worker (tasks 0, 1)".
std::string jobs_text(const std::map<std::string, std::set<int>>& jobs) {
    std::string r;
    for (const auto& [job, tasks] : jobs) {
        if (!r.empty()) r += ", ";
        r += job;
        std::string list;
        int shown = 0;
        for (int t : tasks) {
            if (t < 0) continue;
            list += (shown++ ? ", " : "") + std::to_string(t);
        }
        if (shown) r += (shown == 1 ? " (task " : " (tasks ") + list + ")";
    }
    return r;
}

std::string collection_summary(const graft::collection_def& c) {
    using K = graft::collection_def::kind;
    switch (c.which) {
        case K::node_list: return graft::detail::cat("node_list (", c.values.size(), ")");
        case K::bytes_list:
            return c.variables.empty() ? graft::detail::cat("bytes_list (", c.values.size(), ")")
                                       : graft::detail::cat("bytes_list (", c.variables.size(), " VariableDef)");
        case K::int64_list: return graft::detail::cat("int64_list (", c.int64s.size(), ")");
        case K::float_list: return graft::detail::cat("float_list (", c.floats.size(), ")");
        case K::any_list: return graft::detail::cat("any_list (", c.anys.size(), ")");
        case K::none: break;
    }
    return "empty";
}

/// The checkpoint that goes with a graph file, if any: a SavedModel's variables, or <prefix>.meta's prefix.
std::unique_ptr<graft::tf::checkpoint_reader> companion_checkpoint(const std::string& path, graft::tf::file_format f) {
    std::string prefix;
    if (f == graft::tf::file_format::saved_model || f == graft::tf::file_format::saved_model_text) {
        fs::path dir = fs::is_directory(path) ? fs::path(path) : fs::path(path).parent_path();
        prefix = (dir / "variables" / "variables").string();
    } else if (path.size() > 5 && path.ends_with(".meta")) {
        prefix = path.substr(0, path.size() - 5);
    }
    if (prefix.empty() || !fs::exists(prefix + ".index")) return nullptr;
    try {
        return std::make_unique<graft::tf::checkpoint_reader>(prefix);
    } catch (const graft::error&) {
        return nullptr;
    }
}

// ---------------------------------------------------------------- checkpoints

void inspect_checkpoint(const options& o) {
    graft::tf::checkpoint_reader r(o.path);
    auto keys = r.keys();
    if (o.json) {
        std::cout << "{\"path\":" << jstr(o.path) << ",\"format\":\"checkpoint\",\"version\":" << r.format_version()
                  << ",\"prefix\":" << jstr(r.prefix()) << ",\"tensors\":" << jarr(keys, [&](const std::string& k) {
                         return "{\"key\":" + jstr(k) + ",\"dtype\":" + jstr(graft::dtype_name(r.dtype_of(k))) +
                                ",\"shape\":" + jstr(r.shape_of(k).str()) + "}";
                     }) << "}\n";
        return;
    }
    std::cout << "format:    checkpoint V" << r.format_version() << " (" << r.prefix() << ")\n"
              << "tensors:   " << keys.size() << "\n";
    for (auto& k : keys) std::cout << "    " << k << "  " << graft::dtype_name(r.dtype_of(k)) << r.shape_of(k).str() << "\n";
}

// ---------------------------------------------------------------- graphs

void inspect_graph(const options& o, graft::tf::file_format f) {
    graft::tf::load_options lo;
    if (!o.tags.empty()) {
        std::stringstream ss(o.tags);
        for (std::string t; std::getline(ss, t, ',');) lo.tags.push_back(t);
    }
    lo.validate = false;  // show what is there, even a graph that would not validate
    auto mg = graft::tf::load_meta_graph(o.path, lo);
    const auto& g = mg.graph;
    std::map<std::string, int> hist;
    for (const auto& n : g) ++hist[n.op];
    std::vector<std::pair<std::string, int>> ops(hist.begin(), hist.end());
    std::stable_sort(ops.begin(), ops.end(), [](auto& a, auto& b) { return a.second > b.second; });
    std::vector<const graft::node*> inputs;
    for (const auto& n : g) if (n.op == "Placeholder" || n.op == "PlaceholderWithDefault" || n.op == "PlaceholderV2") inputs.push_back(&n);
    auto outs = likely_outputs(mg);
    auto ckpt = companion_checkpoint(o.path, f);
    auto vars = ckpt ? graft::tf::find_variables(mg, *ckpt) : graft::find_variables(mg);
    auto unknown = unknown_ops(g);
    auto devices = device_counts(g);
    if (devices.size() == 1 && devices.begin()->first.empty()) devices.clear();  // no node names a device
    auto jobs = distributed_jobs(devices);
    auto in_dtype = [](const graft::node& n) {
        auto* d = n.attr("dtype");
        return d && d->which() == graft::attr_value::kind::type ? graft::dtype_name(d->type()) : std::string("?");
    };
    auto in_shape = [](const graft::node& n) {
        auto* s = n.attr("shape");
        return s && s->which() == graft::attr_value::kind::shape ? s->shape().str() : std::string("<unknown>");
    };

    if (o.json) {
        std::ostringstream j;
        j << "{\"path\":" << jstr(o.path) << ",\"format\":" << jstr(graft::tf::format_name(f))
          << ",\"tags\":" << jarr(mg.info.tags, jstr) << ",\"tensorflow_version\":" << jstr(mg.info.tensorflow_version)
          << ",\"producer\":" << g.versions.producer << ",\"nodes\":" << g.size()
          << ",\"functions\":" << g.library.functions.size()
          << ",\"ops\":{" ;
        for (std::size_t i = 0; i < ops.size(); ++i) j << (i ? "," : "") << jstr(ops[i].first) << ":" << ops[i].second;
        j << "},\"inputs\":" << jarr(inputs, [&](const graft::node* n) {
            return "{\"name\":" + jstr(n->name) + ",\"dtype\":" + jstr(in_dtype(*n)) + ",\"shape\":" + jstr(in_shape(*n)) + "}";
        });
        j << ",\"outputs\":" << jarr(outs, [&](const graft::node* n) { return "{\"name\":" + jstr(n->name) + ",\"op\":" + jstr(n->op) + "}"; });
        j << ",\"variables\":" << jarr(vars, [](const graft::variable_info& v) {
            return "{\"name\":" + jstr(v.name) + ",\"node\":" + jstr(v.node) + ",\"dtype\":" + jstr(graft::dtype_name(v.dtype)) +
                   ",\"shape\":" + jstr(v.shape.str()) + ",\"trainable\":" + (v.trainable ? "true" : "false") +
                   ",\"kind\":" + jstr(v.kind == graft::variable_kind::ref ? "ref" : "resource") +
                   ",\"checkpoint_key\":" + jstr(v.checkpoint_key) + "}";
        });
        j << ",\"collections\":{";
        bool first = true;
        for (auto& [k, c] : mg.collections) {
            j << (first ? "" : ",") << jstr(k) << ":" << jstr(collection_summary(c));
            first = false;
        }
        j << "},\"signatures\":{";
        first = true;
        for (auto& [k, s] : mg.signatures) {
            auto ti = [](const auto& kv) {
                return "{\"key\":" + jstr(kv.first) + ",\"name\":" + jstr(kv.second.name) + ",\"dtype\":" +
                       jstr(graft::dtype_name(kv.second.dtype)) + ",\"shape\":" + jstr(shape_str(kv.second.shape)) + "}";
            };
            j << (first ? "" : ",") << jstr(k) << ":{\"method_name\":" << jstr(s.method_name)
              << ",\"inputs\":" << jarr(s.inputs, ti) << ",\"outputs\":" << jarr(s.outputs, ti) << "}";
            first = false;
        }
        j << "},\"unsupported_ops\":{";
        first = true;
        for (auto& [op, count] : unknown) {
            j << (first ? "" : ",") << jstr(op) << ":" << count;
            first = false;
        }
        j << "},\"gpu_fallback_ops\":{";
        first = true;
        for (auto& [op, count] : gpu_fallback_ops(g)) {
            j << (first ? "" : ",") << jstr(op) << ":" << count;
            first = false;
        }
        j << "},\"devices\":{";
        first = true;
        for (auto& [dev, count] : devices) {
            j << (first ? "" : ",") << jstr(dev) << ":" << count;
            first = false;
        }
        j << "},\"distributed_jobs\":{";
        first = true;
        for (auto& [job, tasks] : jobs) {
            j << (first ? "" : ",") << jstr(job) << ":" << jarr(tasks, [](int t) { return std::to_string(t); });
            first = false;
        }
        j << "}";
        if (o.nodes) {
            j << ",\"node_list\":" << jarr(g, [](const graft::node& n) {
                return "{\"name\":" + jstr(n.name) + ",\"op\":" + jstr(n.op) + ",\"inputs\":" + jarr(n.input_strings(), jstr) + "}";
            });
        }
        j << "}\n";
        std::cout << j.str();
        return;
    }

    std::cout << "format:    " << graft::tf::format_name(f) << "\n";
    if (!mg.info.tags.empty()) {
        std::cout << "tags:      ";
        for (auto& t : mg.info.tags) std::cout << t << " ";
        std::cout << "\n";
    }
    if (!mg.info.tensorflow_version.empty()) std::cout << "written by TensorFlow " << mg.info.tensorflow_version << "\n";
    std::cout << "nodes:     " << g.size() << "  (GraphDef producer " << g.versions.producer << ")\n";
    if (!g.library.functions.empty()) std::cout << "functions: " << g.library.functions.size() << "\n";
    std::cout << "ops:       " << ops.size() << " types\n";
    for (auto& [op, c] : ops) std::cout << "    " << c << "\t" << op << "\n";
    std::cout << "inputs (placeholders): " << inputs.size() << "\n";
    for (auto* n : inputs) std::cout << "    " << n->name << "  " << in_dtype(*n) << in_shape(*n) << "\n";
    std::cout << "likely outputs (nothing consumes them): " << outs.size() << "\n";
    for (auto* n : outs) std::cout << "    " << n->name << "  (" << n->op << ")\n";
    std::cout << "variables: " << vars.size() << (ckpt ? "  (keys checked against " + ckpt->prefix() + ")" : std::string()) << "\n";
    for (auto& v : vars) {
        std::cout << "    " << v.name << "  " << graft::dtype_name(v.dtype) << v.shape.str()
                  << (v.trainable ? "  trainable" : "  not-trainable")
                  << (v.kind == graft::variable_kind::ref ? "  ref" : "  resource")
                  << "  key=" << (v.checkpoint_key.empty() ? "(not saved)" : v.checkpoint_key)
                  << (ckpt && !v.checkpoint_key.empty() && !ckpt->contains(v.checkpoint_key) ? "  MISSING in checkpoint" : "")
                  << "\n";
    }
    if (!mg.collections.empty()) {
        std::cout << "collections: " << mg.collections.size() << "\n";
        for (auto& [k, c] : mg.collections) std::cout << "    " << k << ": " << collection_summary(c) << "\n";
    }
    if (!mg.signatures.empty()) {
        std::cout << "signatures: " << mg.signatures.size() << "\n";
        for (auto& [k, s] : mg.signatures) {
            std::cout << "    " << k << (s.method_name.empty() ? "" : "  (" + s.method_name + ")") << "\n";
            for (auto& [ik, ti] : s.inputs) {
                std::cout << "        in  " << ik << ": " << ti.name << "  " << graft::dtype_name(ti.dtype) << shape_str(ti.shape) << "\n";
            }
            for (auto& [ok, ti] : s.outputs) {
                std::cout << "        out " << ok << ": " << ti.name << "  " << graft::dtype_name(ti.dtype) << shape_str(ti.shape) << "\n";
            }
        }
    }
    std::cout << "ops graft cannot run yet (no CPU kernel): " << unknown.size() << "\n";
    for (auto& [op, c] : unknown) std::cout << "    " << op << "  (" << c << " node" << (c == 1 ? "" : "s") << ")\n";
    if (auto gpu = gpu_fallback_ops(g); !gpu.empty()) {
        std::cout << "ops placed on a GPU without a GPU kernel (run on the CPU): " << gpu.size() << "\n";
        for (auto& [op, c] : gpu) std::cout << "    " << op << "  (" << c << " node" << (c == 1 ? "" : "s") << ")\n";
    }
    if (!devices.empty()) {
        std::cout << "devices:   " << devices.size() << " distinct\n";
        for (auto& [dev, c] : devices) std::cout << "    " << c << "\t" << (dev.empty() ? "(none)" : dev) << "\n";
    }
    if (!jobs.empty()) {
        std::cout << "written for a distributed job: " << jobs_text(jobs)
                  << "; graft runs it in one process (job, replica and task are ignored for placement; each node "
                     "keeps its device type and index, with soft placement to the CPU)\n";
    }
    if (o.nodes) {
        std::cout << "nodes:\n";
        for (const auto& n : g) {
            std::cout << "    " << n.name << "  " << n.op;
            for (auto& i : n.input_strings()) std::cout << "  " << i;
            std::cout << "\n";
        }
    }
}

void run_inspect(const options& o) {
    auto f = graft::tf::detect_format(o.path);
    if (f == graft::tf::file_format::checkpoint) inspect_checkpoint(o);
    else inspect_graph(o, f);
}

void add_inspect(CLI::App& app) {
    static options o;
    auto* cmd = app.add_subcommand("inspect", "What is in a .pb/.pbtxt/.meta file, a SavedModel dir or a checkpoint");
    cmd->add_option("path", o.path, "Graph file, SavedModel directory or checkpoint prefix")->required();
    cmd->add_flag("--nodes", o.nodes, "List every node: name, op, inputs");
    cmd->add_flag("--json", o.json, "Print one JSON object");
    cmd->add_option("--tags", o.tags, "SavedModel MetaGraph tags, comma-separated (default: serve)");
    cmd->callback([] { run_inspect(o); });
}

graft::cli::registrar reg(20, &add_inspect);

}  // namespace
