// `graft run MODEL` — execute a graph file, MetaGraph or SavedModel with feeds from .npy files or
// inline lists, print the fetched tensors and write them as .npy.
#include <chrono>
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "graft/core.hpp"
#include "graft/exec/model.hpp"
#include "graft/ops/reduce.hpp"

namespace graft_cmd_run {  // named, not anonymous: the CLI builds as one unity translation unit

struct run_args {
    std::string model, ckpt, signature, out_dir, labels;
    std::vector<std::string> feeds, fetches, targets, tags;
    int repeat = 1;
};

// "x=@file.npy" or "x=[1,2,5]" (float32) or "x=3" (float32 scalar); an int literal list with a
// trailing ":int32"/":int64" picks that dtype: "n=[1,2]:int32"; "p=some/text:string" is a scalar
// string (e.g. a checkpoint prefix for a Saver's save/Const).
std::pair<std::string, graft::tensor> parse_feed(const std::string& spec) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
        throw graft::invalid_argument_error("--feed '" + spec + "' is not NAME=@file.npy or NAME=[values]", {},
                                            "write e.g. --feed x=@x.npy or --feed x=[1,2,5]");
    }
    std::string name = spec.substr(0, eq), val = spec.substr(eq + 1);
    if (!val.empty() && val[0] == '@') return {name, graft::read_npy(val.substr(1))};
    if (val.size() >= 7 && val.compare(val.size() - 7, 7, ":string") == 0) {
        return {name, graft::tensor::scalar_of(val.substr(0, val.size() - 7))};
    }
    graft::dtype t = graft::dtype::float32;
    if (auto colon = val.rfind(':'); colon != std::string::npos &&
        (val.find(']') == std::string::npos || val.find(']') < colon)) {
        t = graft::parse_dtype(val.substr(colon + 1));
        val = val.substr(0, colon);
    }
    bool list = !val.empty() && val.front() == '[';
    std::string body = list ? val.substr(1, val.size() - 2) : val;
    std::vector<double> nums;
    std::size_t i = 0;
    while (i < body.size()) {
        auto j = body.find(',', i);
        if (j == std::string::npos) j = body.size();
        auto tok = body.substr(i, j - i);
        if (!tok.empty()) {
            try { nums.push_back(std::stod(tok)); } catch (...) {
                throw graft::invalid_argument_error("--feed " + name + ": '" + tok + "' is not a number");
            }
        }
        i = j + 1;
    }
    graft::shape s = list ? graft::shape{static_cast<std::int64_t>(nums.size())} : graft::shape{};
    if (!list && nums.size() != 1) throw graft::invalid_argument_error("--feed " + name + ": expected one number");
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
    auto m = graft::exec::load_model(a.model, a.tags);
    auto runner = m.runner(a.signature);
    if (!a.ckpt.empty()) {
        auto rep = runner.restore(a.ckpt, false);
        std::cout << "restored " << rep.restored.size() << " variables from " << a.ckpt;
        if (!rep.missing_in_checkpoint.empty()) std::cout << " (" << rep.missing_in_checkpoint.size() << " not in it)";
        std::cout << "\n";
    }
    graft::exec::session::feed_list feeds;
    for (auto& f : a.feeds) feeds.push_back(parse_feed(f));
    std::vector<std::string> fetches = a.fetches;
    if (fetches.empty() && a.targets.empty()) {
        for (auto& [k, _] : runner.outputs()) fetches.push_back(k);
        if (fetches.empty()) {
            throw graft::invalid_argument_error("nothing to run", {}, "give --fetch NAME or --target OP (or --signature S)");
        }
    }
    std::vector<graft::tensor> out;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < std::max(1, a.repeat); ++i) out = runner.run(feeds, fetches, a.targets);
    auto dt = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!a.out_dir.empty()) std::filesystem::create_directories(a.out_dir);
    for (std::size_t i = 0; i < out.size(); ++i) {
        std::cout << fetches[i] << " " << out[i].describe() << "\n" << graft::to_string(out[i]) << "\n";
        if (!a.out_dir.empty()) {
            std::string file = fetches[i];
            for (auto& ch : file) if (ch == '/' || ch == ':') ch = '_';
            auto p = (std::filesystem::path(a.out_dir) / (file + ".npy")).string();
            graft::write_npy(p, out[i]);
            std::cout << "  -> " << p << "\n";
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
    cmd->add_option("--feed", a.feeds, "NAME=@file.npy or NAME=[1,2,5] (float32; append :int32 etc. for another dtype)");
    cmd->add_option("--fetch", a.fetches, "Tensor to fetch (name:index or signature output key)");
    cmd->add_option("--target", a.targets, "Op to run for its effect (e.g. init, train)");
    cmd->add_option("--tag", a.tags, "SavedModel MetaGraph tag (default serve)");
    cmd->add_option("--out", a.out_dir, "Folder to write each fetched tensor as <name>.npy");
    cmd->add_option("--labels", a.labels, "Class labels .npy: print the argmax accuracy of the first fetch");
    cmd->add_option("--repeat", a.repeat, "Run N times and report the mean time")->capture_default_str();
    cmd->callback([] { run_model(a); });
}

graft::cli::registrar reg(40, &add_run);

}  // namespace
