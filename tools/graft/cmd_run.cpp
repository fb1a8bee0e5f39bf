// `graft run MODEL` — execute a graph file, MetaGraph or SavedModel with feeds from .npy files or
// inline lists, print the fetched tensors and write them as .npy. Started by mpirun (a graft built with
// MPI), every rank runs the graph and its collective ops (CollectiveReduceV2, HorovodAllreduce, ...)
// run across the ranks.
#include <chrono>
#include <cctype>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "graft/core.hpp"
#include "graft/exec/model.hpp"
#include "graft/ops/reduce.hpp"
#include "graft/formats/tf_graph/events.hpp"
#if defined(GRAFT_WITH_MPI)
#include "graft/dist/mpi.hpp"
#endif

namespace graft_cmd_run {  // named, not anonymous: the CLI builds as one unity translation unit

struct run_args {
    std::string model, ckpt, signature, out_dir, labels, summary_dir;
    std::int64_t step = 0;
    std::vector<std::string> feeds, fetches, targets, tags;
    int repeat = 1;
    bool init = false;
};

// A nested list literal "[[1,2],[3,4]]" (or a scalar "3"): its leaves as text and its shape.
// Throws invalid_argument_error naming the feed for ragged or unbalanced brackets.
struct literal {
    std::vector<std::string> leaves;
    std::vector<std::int64_t> dims;
};

literal parse_literal(const std::string& name, const std::string& text) {
    literal r;
    std::size_t i = 0;
    auto fail = [&](const std::string& why) -> void {
        throw graft::invalid_argument_error("--feed " + name + ": " + why + " in '" + text + "'", {},
                                            "write a nested list of equal-length rows, e.g. [[1,2],[3,4]]");
    };
    auto skip = [&] { while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i; };
    // Parses one element at depth `d`; records the length of each depth's lists and checks it.
    std::function<void(std::size_t)> element = [&](std::size_t d) {
        skip();
        if (i < text.size() && text[i] == '[') {
            ++i;
            std::int64_t n = 0;
            skip();
            if (i < text.size() && text[i] == ']') {
                ++i;
            } else {
                for (;;) {
                    element(d + 1);
                    ++n;
                    skip();
                    if (i < text.size() && text[i] == ',') { ++i; continue; }
                    if (i < text.size() && text[i] == ']') { ++i; break; }
                    fail("expected ',' or ']' at offset " + std::to_string(i));
                }
            }
            if (r.dims.size() <= d) r.dims.resize(d + 1, -1);
            if (r.dims[d] == -1) r.dims[d] = n;
            else if (r.dims[d] != n) fail("rows of different lengths (" + std::to_string(r.dims[d]) + " and " +
                                          std::to_string(n) + ") at depth " + std::to_string(d));
            return;
        }
        std::size_t b = i;
        bool quoted = i < text.size() && (text[i] == '"' || text[i] == '\'');
        if (quoted) {
            char q = text[i++];
            while (i < text.size() && text[i] != q) ++i;
            if (i >= text.size()) fail("unterminated string");
            r.leaves.push_back(text.substr(b + 1, i - b - 1));
            ++i;
        } else {
            while (i < text.size() && text[i] != ',' && text[i] != ']') ++i;
            auto tok = text.substr(b, i - b);
            while (!tok.empty() && std::isspace(static_cast<unsigned char>(tok.back()))) tok.pop_back();
            if (tok.empty()) fail("an empty value at offset " + std::to_string(b));
            r.leaves.push_back(tok);
        }
        if (r.dims.size() > d) fail("a value where a list was expected at depth " + std::to_string(d));
    };
    element(0);
    skip();
    if (i != text.size()) fail("unexpected text at offset " + std::to_string(i));
    std::int64_t n = 1;
    for (auto& x : r.dims) {
        if (x < 0) x = 0;
        n *= x;
    }
    if (n != static_cast<std::int64_t>(r.leaves.size())) fail("rows of different depths");
    return r;
}

// "x=@file.npy", "x=[[1,2],[3,4]]" (float32, any nesting), "x=3" (a float32 scalar); a trailing
// ":dtype" picks the dtype: "n=[1,2]:int32", "flag=true:bool" (true/false/1/0), "s=[a,\"b c\"]:string",
// "p=some/text:string" (a scalar string, e.g. a checkpoint prefix for a Saver's save/Const).
std::pair<std::string, graft::tensor> parse_feed(const std::string& spec) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
        throw graft::invalid_argument_error("--feed '" + spec + "' is not NAME=@file.npy or NAME=[values]", {},
                                            "write e.g. --feed x=@x.npy or --feed x=[[1,2],[3,4]]");
    }
    std::string name = spec.substr(0, eq), val = spec.substr(eq + 1);
    if (!val.empty() && val[0] == '@') return {name, graft::read_npy(val.substr(1))};
    graft::dtype t = graft::dtype::float32;
    if (auto colon = val.rfind(':'); colon != std::string::npos &&
        (val.rfind(']') == std::string::npos || val.rfind(']') < colon)) {
        t = graft::parse_dtype(val.substr(colon + 1));
        val = val.substr(0, colon);
    }
    if (t == graft::dtype::string && (val.empty() || val.front() != '[')) return {name, graft::tensor::scalar_of(val)};
    auto lit = parse_literal(name, val);
    graft::shape s(lit.dims);
    if (t == graft::dtype::string) return {name, graft::tensor::from_vector<std::string>(s, lit.leaves)};
    std::vector<double> nums;
    nums.reserve(lit.leaves.size());
    for (const auto& tok : lit.leaves) {
        if (tok == "true" || tok == "True") nums.push_back(1);
        else if (tok == "false" || tok == "False") nums.push_back(0);
        else {
            try {
                std::size_t used = 0;
                nums.push_back(std::stod(tok, &used));
                if (used != tok.size()) throw std::invalid_argument(tok);
            } catch (...) {
                throw graft::invalid_argument_error("--feed " + name + ": '" + tok + "' is not a number", {},
                                                    "append :string for text values");
            }
        }
    }
    auto d = graft::tensor::from_vector<double>(s, nums);
    return {name, graft::cast(d, t)};
}

// Classification accuracy of the first fetch: argmax over its last axis against labels (class ids
// of any integer dtype, or one-hot rows).
void report_accuracy(const graft::tensor& logits, const std::string& labels_path, const std::string& fetch) {
    graft::tensor labels = graft::read_npy(labels_path);
    if (logits.shape().rank() != 2) {
        throw graft::shape_error("--labels: fetch '" + fetch + "' is " + logits.describe() + ", expected [batch, classes]",
                                 graft::location::at_tensor(fetch));
    }
    if (labels.shape().rank() == 2) labels = graft::ops::arg_max(labels, 1);
    const std::int64_t n = logits.shape().dim(0);
    if (labels.num_elements() != n) {
        throw graft::shape_error(graft::detail::cat("--labels ", labels_path, " has ", labels.num_elements(),
                                                    " labels but '", fetch, "' has ", n, " rows"),
                                 graft::location::in_file(labels_path));
    }
    graft::tensor pred = graft::ops::arg_max(logits, 1);
    graft::tensor want = graft::cast(labels, graft::dtype::int64);
    std::int64_t correct = 0;
    for (std::int64_t i = 0; i < n; ++i) correct += pred.flat<std::int64_t>()(i) == want.flat<std::int64_t>()(i);
    std::cout << "accuracy " << static_cast<double>(correct) / static_cast<double>(n) << " (" << correct << "/" << n
              << " argmax of " << fetch << " equal to " << labels_path << ")\n";
}

void run_model(const run_args& a) {
#if defined(GRAFT_WITH_MPI)
    std::unique_ptr<graft::dist::mpi_session> mpi;  // graft::dist::world() is the job's until run_model returns
    if (graft::dist::launched_by_mpi()) mpi = graft::dist::init_mpi(nullptr, nullptr);
#endif
    auto m = graft::exec::load_model(a.model, a.tags);
    auto runner = m.runner(a.signature);
    if (!a.ckpt.empty()) {
        auto rep = runner.restore(a.ckpt, false);
        std::cout << "restored " << rep.restored.size() << " variables from " << a.ckpt;
        if (!rep.missing_in_checkpoint.empty()) std::cout << " (" << rep.missing_in_checkpoint.size() << " not in it)";
        std::cout << "\n";
    }
    if (a.init) {
        // What tf.compat.v1.global_variables_initializer() builds: every variable's initializer.
        std::vector<std::string> inits;
        for (const auto& v : m.variables) {
            if (!v.initializer_name.empty()) inits.push_back(v.initializer_name);
        }
        if (inits.empty()) {
            throw graft::not_found_error("--init: the graph records no variable initializers", graft::location::in_file(a.model),
                                         "its variables collections are empty: run its own init op with --target");
        }
        runner.run({}, {}, inits);
        std::cout << "initialized " << inits.size() << " variables\n";
    }
    graft::exec::session::feed_list feeds;
    for (auto& f : a.feeds) feeds.push_back(parse_feed(f));
    std::vector<std::string> fetches = a.fetches;
    if (fetches.empty() && a.targets.empty() && a.init) return;
    if (fetches.empty() && a.targets.empty()) {
        for (auto& [k, _] : runner.outputs()) fetches.push_back(k);
        if (fetches.empty()) {
            throw graft::invalid_argument_error("nothing to run", {}, "give --fetch NAME or --target OP (or --signature S)");
        }
    }
    // --summary-dir: the fetches made by TF's summary ops go to an event file, one event per run.
    std::vector<std::size_t> summaries;
    std::optional<graft::train::summary_writer> events;
    if (!a.summary_dir.empty()) {
        for (std::size_t k = 0; k < fetches.size(); ++k) {
            const graft::node* n = runner.sess().g().find(graft::endpoint::parse(fetches[k]).node);
            if (n && (n->op == "ScalarSummary" || n->op == "HistogramSummary" || n->op == "MergeSummary")) summaries.push_back(k);
        }
        if (summaries.empty()) {
            throw graft::invalid_argument_error("--summary-dir: no fetch is made by a summary op", {},
                                                "fetch the graph's ScalarSummary/HistogramSummary/MergeSummary output");
        }
        events.emplace(a.summary_dir);
    }
    std::vector<graft::tensor> out;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < std::max(1, a.repeat); ++i) {
        out = runner.run(feeds, fetches, a.targets);
        for (auto k : summaries) events->add_summary(out[k].data<std::string>()[0], a.step + i);
    }
    auto dt = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (events) std::cout << "summaries of " << summaries.size() << " fetches -> " << events->path() << "\n";
    if (!a.out_dir.empty()) std::filesystem::create_directories(a.out_dir);
    for (std::size_t i = 0; i < out.size(); ++i) {
        std::cout << fetches[i] << " " << out[i].describe() << "\n" << graft::to_string(out[i]) << "\n";
        if (!a.out_dir.empty()) {
            std::string file = fetches[i];
            for (auto& ch : file) if (ch == '/' || ch == ':') ch = '_';
            auto p = (std::filesystem::path(a.out_dir) / (file + ".npy")).string();
            bool widened = false;
            graft::write_npy(p, graft::npy_storable(out[i], &widened));
            std::cout << "  -> " << p << "\n";
            if (widened) {
                std::cout << "  note: " << fetches[i]
                          << " is bfloat16, which .npy has no dtype for: written as float32 (exact)\n";
            }
        }
    }
    if (!a.labels.empty()) report_accuracy(out.at(0), a.labels, fetches.at(0));
    if (a.repeat > 1) std::cout << "mean run time: " << dt / a.repeat << " ms over " << a.repeat << " runs\n";
}

void add_run(CLI::App& app) {
    static run_args a;
    auto* cmd = app.add_subcommand("run", "Run a graph file, MetaGraph or SavedModel: feed, fetch, print, write .npy");
    cmd->add_option("model", a.model, "Graph file (.pb/.pbtxt/.meta) or SavedModel directory")->required();
    cmd->add_option("--ckpt", a.ckpt, "Checkpoint prefix to restore variables from first");
    cmd->add_option("--signature", a.signature, "SavedModel signature key (feeds/fetches may then use its keys)");
    cmd->add_option("--feed", a.feeds,
                    "NAME=@file.npy, NAME=[[1,2],[3,4]] (float32; append :int32, :bool, :string... for another dtype)");
    cmd->add_option("--fetch", a.fetches, "Tensor to fetch (name:index or signature output key)");
    cmd->add_option("--target", a.targets, "Op to run for its effect (e.g. init, train)");
    cmd->add_flag("--init", a.init, "Run every variable's initializer first (for graphs without an init op)");
    cmd->add_option("--tag", a.tags, "SavedModel MetaGraph tag (default serve)");
    cmd->add_option("--out", a.out_dir, "Folder to write each fetched tensor as <name>.npy");
    cmd->add_option("--labels", a.labels, "Class labels .npy: print the argmax accuracy of the first fetch");
    cmd->add_option("--repeat", a.repeat, "Run N times and report the mean time")->capture_default_str();
    cmd->add_option("--summary-dir", a.summary_dir,
                    "Append the fetched outputs of summary ops (ScalarSummary, HistogramSummary, MergeSummary) to "
                    "an event file there, one event per run (TensorBoard reads it)");
    cmd->add_option("--step", a.step, "Global step of the first run's summary events")->capture_default_str();
    cmd->callback([] { run_model(a); });
}

graft::cli::registrar reg(40, &add_run);

}  // namespace
