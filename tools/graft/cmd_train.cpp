// `graft train MODEL` — fine-tune a MetaGraph (+ checkpoint) or a SavedModel on .npy features and
// labels, on one process or data-parallel under `mpirun -np N graft train ...`.
//
//   graft train model.meta --ckpt model.ckpt --feed x=x.npy --feed y=y.npy --loss loss:0
//               --optimizer sgd --lr 0.5 --batch 100 --epochs 1 --save tuned/model.ckpt
//
// The loss is a tensor of the graph (--loss), the mean softmax cross-entropy of --logits against a
// labels feed (--labels-feed: a placeholder of the graph, or a new one), or the graph's own train op
// (--train-op, one process only). Batches are global: every rank walks the same batches (same
// seed) and feeds its own rows of each (graft::dist::local_rows); the gradients are averaged across
// ranks (graft::dist::distributed_optimizer), so N ranks make the updates of one process on the
// same global batch. Rank 0 alone prints, writes summaries and saves.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "commands.hpp"
#include "graft/core.hpp"
#include "graft/formats/npy.hpp"
#include "graft/dist/data_parallel.hpp"
#include "graft/exec/model.hpp"
#include "graft/graph/inline.hpp"
#include "graft/train/loop.hpp"
#include "graft/train/optimizer.hpp"
#include "graft/train/saver.hpp"
#include "graft/formats/tf_graph/events.hpp"
#include "graft/train/variables.hpp"
#if defined(GRAFT_WITH_MPI)
#include "graft/dist/mpi.hpp"
#endif

namespace graft_cmd_train {  // named, not anonymous: the CLI builds as one unity translation unit

struct train_args {
    std::string model, ckpt, loss, logits, labels_feed, labels_kind, train_op, optimizer = "sgd", scope, save,
        summary_dir;
    std::vector<std::string> feeds, tags;
    double lr = 0.01, momentum = 0.9;
    bool lr_given = false;
    std::int64_t batch = 32, epochs = 1, steps = 0, save_every = 0, seed = 0;
    std::size_t bucket_bytes = std::size_t{4} << 20;
    int threads = 0;
    bool shuffle = false, drop_remainder = false, quiet = false;
};

/// One --feed: the tensor name it feeds and the .npy it came from.
struct feed {
    std::string name;  ///< as the session takes it ("x" or "x:0")
    std::string file;
    graft::tensor value;
};

std::string hint_placeholders(const graft::graph& g) {
    std::string list;
    int n = 0;
    for (const auto& nd : g) {
        if (nd.op != "Placeholder" && nd.op != "PlaceholderV2") continue;
        if (n++ < 12) list += (list.empty() ? "" : ", ") + nd.name;
    }
    if (n > 12) list += graft::detail::cat(", ... (", n, " in all)");
    return list.empty() ? "the graph has no placeholders" : "the graph's placeholders: " + list;
}

/// `name` as a tensor of mg's graph: a tensor name, else a signature's input/output key. Throws
/// not_found_error naming `what` (the option) and the name.
std::string resolve_tensor(const graft::meta_graph& mg, const std::string& name, const std::string& what,
                           const std::string& hint) {
    graft::endpoint e;
    if (graft::endpoint::try_split(name, e) && mg.graph.find(e.node)) return name;
    if (mg.graph.find(name)) return name;
    for (const auto& [key, sig] : mg.signatures) {
        if (auto it = sig.inputs.find(name); it != sig.inputs.end()) return it->second.tensor().str();
        if (auto it = sig.outputs.find(name); it != sig.outputs.end()) return it->second.tensor().str();
    }
    throw graft::not_found_error(what + " '" + name + "': no such tensor in the graph", graft::location::at_tensor(name), hint);
}

/// Reads every --feed NAME=FILE.npy (or NAME=@FILE.npy). Throws invalid_argument_error for a
/// malformed spec or a repeated name, and what read_npy throws (naming the file).
std::vector<feed> read_feeds(const std::vector<std::string>& specs) {
    std::vector<feed> out;
    for (const auto& spec : specs) {
        auto eq = spec.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
            throw graft::invalid_argument_error("--feed '" + spec + "' is not NAME=FILE.npy", {},
                                                "write e.g. --feed features=x.npy --feed labels=y.npy");
        }
        feed f;
        f.name = spec.substr(0, eq);
        f.file = spec.substr(eq + 1);
        if (f.file.front() == '@') f.file.erase(0, 1);
        for (const auto& o : out) {
            if (graft::endpoint::parse(o.name).str() == graft::endpoint::parse(f.name).str()) {
                throw graft::invalid_argument_error("--feed " + f.name + " is given twice", {}, "give each placeholder one file");
            }
        }
        f.value = graft::read_npy(f.file);
        out.push_back(std::move(f));
    }
    return out;
}

/// The rows every batched feed shares. Throws invalid_argument_error naming the feeds that differ.
std::int64_t common_rows(const std::vector<feed>& feeds) {
    const feed* first = nullptr;
    for (const auto& f : feeds) {
        if (f.value.rank() == 0) continue;  // a scalar is fed whole every step
        if (!first) {
            first = &f;
            continue;
        }
        if (f.value.dim(0) != first->value.dim(0)) {
            throw graft::invalid_argument_error(
                graft::detail::cat("--feed ", f.name, " (", f.file, ") has ", f.value.dim(0), " rows but --feed ", first->name,
                                   " (", first->file, ") has ", first->value.dim(0)),
                graft::location::in_file(f.file), "every batched feed needs one row per example, in the same order");
        }
    }
    if (!first) {
        throw graft::invalid_argument_error("no --feed has rows to batch", {},
                                            "give the training data as .npy files with one row per example: --feed NAME=FILE.npy");
    }
    return first->value.dim(0);
}

/// The placeholders that running `targets` needs and `fed` does not give.
std::vector<std::string> unfed_placeholders(const graft::graph& g, const std::vector<std::string>& targets,
                                            const std::set<std::string>& fed) {
    std::vector<std::string> missing, todo;
    std::set<std::string> seen;
    for (const auto& t : targets) todo.push_back(graft::endpoint::parse(t).node);
    while (!todo.empty()) {
        std::string n = std::move(todo.back());
        todo.pop_back();
        if (!seen.insert(n).second || fed.count(n)) continue;
        const graft::node* nd = g.find(n);
        if (!nd) continue;
        if (nd->op == "Placeholder" || nd->op == "PlaceholderV2") missing.push_back(n);
        for (const auto& in : nd->inputs) todo.push_back(in.node);
        for (const auto& c : nd->control_inputs) todo.push_back(c);
    }
    std::sort(missing.begin(), missing.end());
    return missing;
}

std::unique_ptr<graft::train::optimizer> make_optimizer(const train_args& a) {
    namespace tr = graft::train;
    const double lr = a.lr_given ? a.lr : a.optimizer == "adam" ? 0.001 : 0.01;
    if (a.optimizer == "sgd") return std::make_unique<tr::gradient_descent>(lr);
    if (a.optimizer == "momentum") return std::make_unique<tr::momentum>(lr, a.momentum);
    if (a.optimizer == "adam") return std::make_unique<tr::adam>(lr);
    if (a.optimizer == "rmsprop") return std::make_unique<tr::rmsprop>(lr);
    if (a.optimizer == "adagrad") return std::make_unique<tr::adagrad>(lr);
    throw graft::invalid_argument_error("--optimizer '" + a.optimizer + "' is not known", {},
                                        "use sgd, momentum, adam, rmsprop or adagrad");
}

/// The training step built into a MetaGraph: its train op and the loss it reports (may be empty).
struct training_graph {
    std::string train_op, loss;
    std::vector<std::string> trained;  ///< variables the optimizer updates
    std::string optimizer_name;
};

/// The loss of --logits against the labels feed (mean softmax cross-entropy), built into mg.
/// `labels` is the labels feed: its value is cast to the dtype of the placeholder it feeds.
std::string build_logits_loss(graft::meta_graph& mg, const train_args& a, feed& labels) {
    graft::graph_builder top(mg.graph);
    const std::string logits_name =
        resolve_tensor(mg, a.logits, "--logits", "name the classifier's output, e.g. --logits dense/BiasAdd:0");
    const graft::endpoint logits = graft::endpoint::parse(logits_name);
    const graft::dtype ltype = top.dtype_of(logits);
    if (!graft::is_floating(ltype)) {
        throw graft::invalid_argument_error("--logits " + a.logits + " is " + graft::dtype_name(ltype) + ", expected floating point",
                                            graft::location::at_tensor(logits_name));
    }
    // sparse: class ids [batch]; onehot: rows of class probabilities [batch, classes].
    std::string kind = a.labels_kind;
    graft::endpoint y;
    const graft::node* existing = mg.graph.find(graft::endpoint::parse(labels.name).node);
    if (existing) {
        y = graft::endpoint::parse(labels.name);
        const graft::dtype ytype = top.dtype_of(y);
        if (kind.empty()) kind = graft::is_integer(ytype) ? "sparse" : "onehot";
        if ((kind == "sparse") != graft::is_integer(ytype)) {
            throw graft::invalid_argument_error(
                "--labels-feed " + labels.name + " is " + graft::dtype_name(ytype) + ", which cannot hold " +
                    (kind == "sparse" ? "class ids" : "one-hot rows"),
                graft::location::at_tensor(labels.name), "use --labels-kind " + std::string(kind == "sparse" ? "onehot" : "sparse"));
        }
    } else {
        if (kind.empty()) {
            kind = graft::is_integer(labels.value.type()) || labels.value.rank() == 1 ? "sparse" : "onehot";
        }
        const graft::dtype ytype = kind == "sparse" ? (labels.value.type() == graft::dtype::int32 ? graft::dtype::int32 : graft::dtype::int64)
                                                    : ltype;
        y = top.placeholder(labels.name, ytype);
    }
    graft::graph_builder b = top.sub("train_loss");
    std::vector<graft::endpoint> xent;
    if (kind == "sparse") {
        if (labels.value.rank() != 1) {
            throw graft::shape_error("--labels-feed " + labels.name + " (" + labels.file + ") is " + labels.value.describe() +
                                         ": sparse labels are one class id per row",
                                     graft::location::in_file(labels.file), "give [N] class ids, or --labels-kind onehot for [N, classes]");
        }
        xent = b.op_n("SparseSoftmaxCrossEntropyWithLogits", {logits, y});
    } else {
        if (labels.value.rank() != 2) {
            throw graft::shape_error("--labels-feed " + labels.name + " (" + labels.file + ") is " + labels.value.describe() +
                                         ": one-hot labels are [N, classes]",
                                     graft::location::in_file(labels.file), "give [N] class ids with --labels-kind sparse");
        }
        xent = b.op_n("SoftmaxCrossEntropyWithLogits", {logits, y});
    }
    return b.op("Mean", {xent[0], b.constant(graft::tensor::from_vector<std::int32_t>({0}))}, {}, "mean").str();
}

/// Builds the loss (if asked) and the training step into `mg`. `labels` is the labels feed for
/// --logits (nullptr otherwise). `dist` adds the gradient allreduce (distributed_optimizer).
training_graph build_training(graft::meta_graph& mg, const train_args& a, feed* labels, bool dist,
                              graft::dist::bucket_plan* plan) {
    training_graph t;
    if (!a.train_op.empty()) {
        const graft::endpoint op = graft::endpoint::parse(a.train_op);
        if (!mg.graph.find(op.node)) {
            throw graft::not_found_error("--train-op '" + a.train_op + "': no such op in the graph", graft::location::at_node(a.train_op),
                                         "TF1 graphs list theirs in the train_op collection (graft inspect MODEL)");
        }
        t.train_op = op.node;
        if (!a.loss.empty()) t.loss = resolve_tensor(mg, a.loss, "--loss", "name the scalar loss tensor, e.g. --loss Mean:0");
        t.optimizer_name = "the graph's own train op";
        return t;
    }
    if (!a.loss.empty()) {
        t.loss = resolve_tensor(mg, a.loss, "--loss", "name the scalar loss tensor, e.g. --loss Mean:0 (graft inspect MODEL lists outputs)");
    } else {
        t.loss = build_logits_loss(mg, a, *labels);
    }
    const graft::endpoint loss = graft::endpoint::parse(t.loss);
    const graft::dtype ltype = graft::graph_builder(mg.graph).dtype_of(loss);
    if (!graft::is_floating(ltype)) {
        throw graft::invalid_argument_error("--loss " + t.loss + " is " + graft::dtype_name(ltype) + ", expected a floating-point scalar",
                                            graft::location::at_tensor(t.loss));
    }
    // The variables to train: the trainable_variables collection (under --scope), else every
    // trainable variable the model records (TF2 SavedModels have no collections).
    graft::train::var_list vars = graft::train::var_list::scope(a.scope);
    std::vector<graft::train::variable> chosen;
    if (mg.collection(graft::train::keys::trainable_variables)) {
        chosen = vars.resolve(mg);
    } else {
        std::vector<std::string> names;
        for (const auto& v : graft::find_variables(mg)) {
            if (v.trainable && v.node.compare(0, a.scope.size(), a.scope) == 0) names.push_back(v.node);
        }
        vars = graft::train::var_list::names(names);
        chosen = vars.resolve(mg);
    }
    if (chosen.empty()) {
        std::string all;
        for (const auto& v : graft::find_variables(mg)) {
            if (v.trainable) all += (all.empty() ? "" : ", ") + v.node;
        }
        throw graft::not_found_error(
            a.scope.empty() ? "the model has no trainable variables" : "no trainable variable under --scope '" + a.scope + "'", {},
            all.empty() ? "nothing to fine-tune" : "trainable variables: " + all);
    }
    for (const auto& v : chosen) t.trained.push_back(v.name);
    auto opt = make_optimizer(a);
    t.optimizer_name = opt->name();
    auto step = graft::train::get_global_step(mg);
    if (dist) {
        graft::dist::distributed_optimizer d(*opt, {.bucket_bytes = a.bucket_bytes});
        t.train_op = d.minimize(mg, loss, vars, step);
        if (plan) *plan = d.plan();
    } else {
        t.train_op = opt->minimize(mg, loss, vars, step);
    }
    return t;
}

/// Default CPU threads under mpirun: the machine's threads shared by the ranks on this host.
void share_threads(int requested) {
    if (requested > 0) {
        graft::set_num_threads(requested);
        return;
    }
    if (std::getenv("GRAFT_NUM_THREADS")) return;
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (!local) local = std::getenv("MPI_LOCALNRANKS");
    const int ranks = local ? std::atoi(local) : 0;
    if (ranks > 1) {
        const int hw = static_cast<int>(std::thread::hardware_concurrency());
        graft::set_num_threads(std::max(1, hw / ranks));
    }
}

std::string fmt(double v, int precision = 4) {
    std::ostringstream s;
    s.precision(precision);
    s << v;
    return s.str();
}

/// Everything up to the first collective. Deterministic given the files, so every rank fails here
/// alike; the caller still agrees on success across ranks before training.
struct setup {
    graft::exec::model m;
    graft::meta_graph train_mg, save_mg;  ///< the graph that runs; the one saved (no allreduce ops)
    training_graph built;
    graft::dist::bucket_plan plan;
    std::vector<feed> feeds;
    std::int64_t rows = 0;
    std::unique_ptr<graft::exec::session> s;
    std::string restored_from;
    std::size_t restored = 0, initialized = 0;
    std::vector<std::string> not_restored;
    std::optional<graft::train::summary_writer> events;  ///< rank 0's, with --summary-dir
};

void prepare(setup& u, const train_args& a, const graft::dist::communicator& comm) {
    const int ranks = comm.size();
    // Options first: cheap checks before any file is read.
    const int modes = !a.loss.empty() + !a.logits.empty() + !a.train_op.empty();
    if (modes == 0 || (modes > 1 && !(modes == 2 && !a.train_op.empty() && !a.loss.empty()))) {
        throw graft::invalid_argument_error("give one of --loss TENSOR, --logits TENSOR --labels-feed NAME, or --train-op OP", {},
                                            "--loss may come with --train-op, to report the loss it minimizes");
    }
    if (!a.logits.empty() && a.labels_feed.empty()) {
        throw graft::invalid_argument_error("--logits needs --labels-feed NAME (and --feed NAME=labels.npy)");
    }
    if (a.batch < 1) {
        throw graft::invalid_argument_error(graft::detail::cat("--batch is ", a.batch, ", expected at least 1"), {},
                                            "--batch is the global batch: the rows of one step over all ranks");
    }
    if (a.batch % ranks != 0) {
        throw graft::invalid_argument_error(
            graft::detail::cat("--batch ", a.batch, " does not split evenly over ", ranks, " ranks"), {},
            graft::detail::cat("use a multiple of ", ranks, ": the gradient averaged over ranks is the global batch's mean "
                                                            "gradient only when every rank has as many rows"));
    }
    if (a.epochs < 1 && a.steps < 1) throw graft::invalid_argument_error("--epochs and --steps are both 0: nothing to train");
    if (a.save_every > 0 && a.save.empty()) {
        throw graft::invalid_argument_error("--save-every needs --save PREFIX", {}, "checkpoints go to PREFIX-<step>");
    }
    if (!a.train_op.empty() && ranks > 1) {
        throw graft::invalid_argument_error(
            graft::detail::cat("--train-op runs the graph's own update, which cannot average gradients over ", ranks, " ranks"), {},
            "give --loss (or --logits) instead: graft then builds the training step with the allreduce");
    }

    u.feeds = read_feeds(a.feeds);
    u.rows = common_rows(u.feeds);
    u.m = graft::exec::load_model(a.model, a.tags);
    u.train_mg = u.m.mg;
    graft::inline_functions(u.train_mg.graph);
    u.save_mg = u.train_mg;

    // Every feed must name a tensor of the graph.
    for (auto& f : u.feeds) {
        if (!a.labels_feed.empty() && graft::endpoint::parse(f.name).node == graft::endpoint::parse(a.labels_feed).node &&
            !u.train_mg.graph.find(graft::endpoint::parse(f.name).node)) {
            continue;  // the labels placeholder build_logits_loss adds
        }
        f.name = resolve_tensor(u.train_mg, f.name, "--feed", hint_placeholders(u.train_mg.graph));
    }
    feed* labels = nullptr;
    if (!a.logits.empty()) {
        for (auto& f : u.feeds) {
            if (graft::endpoint::parse(f.name).node == graft::endpoint::parse(a.labels_feed).node) labels = &f;
        }
        if (!labels) {
            throw graft::invalid_argument_error("--labels-feed " + a.labels_feed + " has no --feed " + a.labels_feed + "=FILE.npy", {},
                                                "give the labels' file: --feed " + a.labels_feed + "=labels.npy");
        }
    }
    // The same steps into both graphs: the same node and variable names in each.
    u.built = build_training(u.train_mg, a, labels, /*dist=*/true, &u.plan);
    build_training(u.save_mg, a, labels, /*dist=*/false, nullptr);

    // Feeds: every placeholder the step needs has one; values take the placeholder's dtype.
    std::set<std::string> fed;
    for (const auto& f : u.feeds) fed.insert(graft::endpoint::parse(f.name).node);
    std::vector<std::string> targets{u.built.train_op};
    if (!u.built.loss.empty()) targets.push_back(u.built.loss);
    auto missing = unfed_placeholders(u.train_mg.graph, targets, fed);
    if (!missing.empty()) {
        std::string list, flags;
        for (const auto& p : missing) {
            list += (list.empty() ? "'" : ", '") + p + "'";
            flags += " --feed " + p + "=FILE.npy";
        }
        throw graft::invalid_argument_error("the training step needs placeholder " + list + " but no --feed gives it",
                                            graft::location::at_node(missing.front()), "add" + flags);
    }
    graft::graph_builder b(u.train_mg.graph);
    for (auto& f : u.feeds) {
        const graft::endpoint e = graft::endpoint::parse(f.name);
        const graft::dtype want = b.dtype_of(e);
        if (want != f.value.type() && graft::is_pod_dtype(want) && graft::is_pod_dtype(f.value.type())) {
            f.value = graft::cast(f.value, want);
        }
    }

    // The rows of the last batch of an epoch must split evenly too.
    const std::int64_t rest = u.rows % a.batch;
    if (ranks > 1 && rest != 0 && !a.drop_remainder && rest % ranks != 0) {
        throw graft::invalid_argument_error(
            graft::detail::cat("the last batch of each epoch has ", rest, " rows (", u.rows, " % ", a.batch,
                               "), which do not split evenly over ", ranks, " ranks"),
            {}, "add --drop-remainder, or pick a --batch whose remainder is a multiple of the rank count");
    }

    // The session: variables from the checkpoint (or the SavedModel's), the rest initialized.
    u.s = std::make_unique<graft::exec::session>(u.train_mg.graph);
    std::string prefix = !a.ckpt.empty() ? a.ckpt : u.m.is_saved_model() && u.m.has_variables() ? u.m.variables_prefix : "";
    std::set<std::string> restored;
    if (!prefix.empty()) {
        auto rep = graft::exec::restore_variables(*u.s, u.m.variables, prefix, /*strict=*/false);
        restored.insert(rep.restored.begin(), rep.restored.end());
        u.restored = rep.restored.size();
        u.not_restored = rep.missing_in_checkpoint;
        u.restored_from = prefix;
    }
    std::vector<std::string> inits;
    for (const auto& v : graft::find_variables(u.train_mg)) {
        if (!restored.count(v.name) && !v.initializer_name.empty()) inits.push_back(v.initializer_name);
    }
    if (!inits.empty()) u.s->run({}, {}, inits);
    u.initialized = inits.size();

    // Rank 0's output places, made now so that a bad path fails before training starts.
    if (comm.rank() == 0) {
        const auto dir = std::filesystem::path(a.save).parent_path();
        std::error_code ec;
        if (!a.save.empty() && !dir.empty() && !std::filesystem::create_directories(dir, ec) && ec) {
            throw graft::io_error("--save " + a.save + ": cannot make the folder " + dir.string() + ": " + ec.message(),
                                  graft::location::in_file(dir.string()), "give --save a prefix in a writable folder");
        }
        if (!a.summary_dir.empty()) u.events.emplace(a.summary_dir);
    }
}

void train(const train_args& a) {
#if defined(GRAFT_WITH_MPI)
    std::unique_ptr<graft::dist::mpi_session> mpi;
    if (graft::dist::launched_by_mpi()) mpi = graft::dist::init_mpi(nullptr, nullptr);
#else
    // N copies of a one-process trainer would each train alone and all write --save.
    if (const char* n = std::getenv("OMPI_COMM_WORLD_SIZE"); n && std::atoi(n) > 1) {
        throw graft::invalid_argument_error("graft train was started by mpirun, but this graft is built without MPI", {},
                                            "install Open MPI (make deps) and rebuild: graft::mpi is found at configure time");
    }
#endif
    auto comm = graft::dist::world();
    const int rank = comm->rank(), ranks = comm->size();
    const bool talk = rank == 0;
    share_threads(a.threads);

    // Set-up: every rank learns whether all ranks succeeded before the first broadcast.
    setup u;
    std::exception_ptr failed;
    try {
        prepare(u, a, *comm);
    } catch (...) {
        failed = std::current_exception();
    }
    if (ranks > 1) {
        auto ok = graft::tensor::scalar_of<std::int32_t>(failed ? 0 : 1);
        comm->allreduce(ok, graft::dist::reduce_op::min, "train set-up status");
        if (!failed && *ok.data<std::int32_t>() == 0) {
            throw graft::dist::dist_error(graft::detail::cat("rank ", rank, ": another rank could not set up training (see its error)"));
        }
    }
    if (failed) std::rethrow_exception(failed);

    try {
        graft::dist::broadcast_variables(*u.s, 0, comm.get());
        if (talk) {
            if (!u.restored_from.empty()) {
                std::cout << "restored " << u.restored << " variables from " << u.restored_from;
                if (!u.not_restored.empty()) {
                    std::cout << " (" << u.not_restored.size() << " not in it, initialized instead: "
                              << graft::train::detail::join(u.not_restored) << ")";
                }
                std::cout << "\n";
            }
            if (u.initialized > 0) std::cout << "initialized " << u.initialized << " variables from their initializers\n";
            std::cout << "training ";
            if (!u.built.trained.empty()) {
                std::cout << u.built.trained.size() << " variables (" << graft::train::detail::join(u.built.trained) << ") with ";
            }
            std::cout << u.built.optimizer_name;
            if (a.train_op.empty()) std::cout << ", loss " << u.built.loss;
            std::cout << "; " << u.rows << " examples, global batch " << a.batch;
            if (ranks > 1) std::cout << " over " << ranks << " ranks (" << a.batch / ranks << " each)";
            std::cout << "\n";
        }

        std::vector<graft::tensor> batched;
        std::vector<std::size_t> which;
        graft::exec::session::feed_list fixed;
        for (std::size_t i = 0; i < u.feeds.size(); ++i) {
            if (u.feeds[i].value.rank() == 0) {
                fixed.emplace_back(u.feeds[i].name, u.feeds[i].value);
            } else {
                batched.push_back(u.feeds[i].value);
                which.push_back(i);
            }
        }
        graft::train::batch_options bo{.batch_size = a.batch, .shuffle = a.shuffle, .seed = static_cast<std::uint64_t>(a.seed),
                                       .drop_remainder = a.drop_remainder, .epochs = std::max<std::int64_t>(a.epochs, 1)};
        {
            graft::train::batches probe(batched, bo);
            if (probe.batches_per_epoch() == 0) {
                throw graft::invalid_argument_error(
                    graft::detail::cat("--drop-remainder leaves no batch: ", u.rows, " rows, --batch ", a.batch), {},
                    "use a smaller --batch");
            }
            if (a.steps > 0) bo.epochs = (a.steps + probe.batches_per_epoch() - 1) / probe.batches_per_epoch();
        }
        graft::train::batches data(batched, bo);
        const std::int64_t total = a.steps > 0 ? std::min(a.steps, data.total_steps()) : data.total_steps();

        std::unique_ptr<graft::train::saver> saver;
        std::optional<graft::train::summary_writer>& events = u.events;
        std::optional<graft::train::progress_bar> bar;
        if (talk) {
            if (!a.save.empty()) saver = std::make_unique<graft::train::saver>(u.save_mg);
            if (!a.quiet) {
                graft::train::progress_options po;
                po.label = "train";
                bar.emplace(total, std::move(po));
            }
        }

        std::vector<std::string> fetches;
        if (!u.built.loss.empty()) fetches.push_back(u.built.loss);
        const std::vector<std::string> targets{u.built.train_op};
        std::optional<double> loss;
        std::int64_t examples = 0;
        std::vector<std::string> periodic;
        const auto t0 = std::chrono::steady_clock::now();
        for (std::int64_t step = 0; step < total; ++step) {
            const graft::train::batch b = data.at(step);
            graft::exec::session::feed_list feeds = fixed;
            for (std::size_t k = 0; k < which.size(); ++k) {
                feeds.emplace_back(u.feeds[which[k]].name, graft::dist::local_rows(b[k], *comm));
            }
            auto out = u.s->run(feeds, fetches, targets);
            if (!out.empty()) {
                // The global batch's loss: the mean of the ranks' means (equal rows per rank).
                graft::tensor l = graft::cast(out[0], graft::dtype::float64);
                if (l.num_elements() != 1) {
                    throw graft::shape_error("--loss " + u.built.loss + " is " + out[0].describe() + ", expected a scalar",
                                             graft::location::at_tensor(u.built.loss), "reduce it to its mean");
                }
                if (ranks > 1) comm->allreduce(l, graft::dist::reduce_op::mean, "loss");
                loss = l.data<double>()[0];
            }
            examples += b.size;
            if (!talk) continue;
            if (bar) bar->step(b.size, loss);
            if (events && loss) events->add_scalar("loss", static_cast<float>(*loss), step + 1);
            if (saver && a.save_every > 0 && (step + 1) % a.save_every == 0 && step + 1 < total) {
                periodic.push_back(saver->save(*u.s, a.save, step + 1));
            }
        }
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (bar) bar->finish();
        std::string saved;
        if (saver) saved = saver->save(*u.s, a.save);
        if (events) events->flush();
        comm->barrier();
        if (talk) {
            std::cout << "trained " << total << " steps (" << fmt(static_cast<double>(total) / data.batches_per_epoch(), 3)
                      << " epochs)";
            if (loss) std::cout << ", final loss " << fmt(*loss, 6);
            std::cout << ", " << std::llround(static_cast<double>(examples) / std::max(secs, 1e-9)) << " examples/s (" << examples
                      << " in " << fmt(secs, 3)
                      << " s";
            if (ranks > 1) std::cout << " on " << ranks << " ranks";
            std::cout << ")\n";
            if (!periodic.empty()) std::cout << "checkpoints every " << a.save_every << " steps: " << periodic.size() << "\n";
            if (events) std::cout << "summaries -> " << events->path() << "\n";
            if (!saved.empty()) std::cout << "saved -> " << saved << "\n";
        }
    } catch (const std::exception& e) {
#if defined(GRAFT_WITH_MPI)
        // Past set-up the other ranks may wait in a collective for this one: end the job.
        if (mpi && ranks > 1) {
            std::cerr << "graft: error: rank " << rank << " of " << ranks << ": " << e.what() << "\n" << std::flush;
            MPI_Abort(MPI_COMM_WORLD, graft::cli::exit_user_error);
        }
#endif
        throw;
    }
}

void add_train(CLI::App& app) {
    static train_args a;
    auto* cmd = app.add_subcommand(
        "train", "Fine-tune a MetaGraph + checkpoint or a SavedModel on .npy data (data-parallel under mpirun -np N)");
    cmd->add_option("model", a.model, "MetaGraph (.meta) or SavedModel directory")->required();
    cmd->add_option("--ckpt", a.ckpt, "Checkpoint prefix to start from (else the SavedModel's variables, else the initializers)");
    cmd->add_option("--tag", a.tags, "SavedModel MetaGraph tag (default serve)");
    cmd->add_option("--feed", a.feeds, "NAME=FILE.npy: a placeholder's data, one row per example (a scalar .npy is fed whole)");
    cmd->add_option("--loss", a.loss, "Scalar loss tensor to minimize (e.g. Mean:0)");
    cmd->add_option("--logits", a.logits, "Logits tensor: minimize its mean softmax cross-entropy against --labels-feed");
    cmd->add_option("--labels-feed", a.labels_feed, "Placeholder of the labels (made when the graph has none of that name)");
    cmd->add_option("--labels-kind", a.labels_kind, "sparse (class ids) or onehot (default: from the labels' dtype and rank)")
        ->check(CLI::IsMember({"sparse", "onehot"}));
    cmd->add_option("--train-op", a.train_op, "Run the graph's own train op instead (one process only)");
    cmd->add_option("--optimizer", a.optimizer, "sgd, momentum, adam, rmsprop or adagrad")
        ->check(CLI::IsMember({"sgd", "momentum", "adam", "rmsprop", "adagrad"}))
        ->capture_default_str();
    cmd->add_option("--lr", a.lr, "Learning rate (default 0.01; adam 0.001)");
    cmd->add_option("--momentum", a.momentum, "Momentum of --optimizer momentum")->capture_default_str();
    cmd->add_option("--batch", a.batch, "Global batch: rows per step over all ranks")->capture_default_str();
    cmd->add_option("--epochs", a.epochs, "Passes over the data")->capture_default_str();
    cmd->add_option("--steps", a.steps, "Train this many steps instead (epochs as needed)");
    cmd->add_option("--scope", a.scope, "Train only the trainable variables whose names start with this");
    cmd->add_flag("--shuffle", a.shuffle, "Shuffle the rows every epoch (the same order on every rank)");
    cmd->add_option("--seed", a.seed, "Shuffle seed")->capture_default_str();
    cmd->add_flag("--drop-remainder", a.drop_remainder, "Leave out each epoch's last, smaller batch");
    cmd->add_option("--save", a.save, "Checkpoint prefix to save the trained variables to (with PREFIX.meta)");
    cmd->add_option("--save-every", a.save_every, "Also save PREFIX-<step> every N steps (the last 5 kept)");
    cmd->add_option("--summary-dir", a.summary_dir, "Write the loss of every step as a TensorBoard scalar there");
    cmd->add_option("--bucket-bytes", a.bucket_bytes, "Gradient allreduce bucket size in bytes (0: one per gradient)")
        ->capture_default_str();
    cmd->add_option("--threads", a.threads, "CPU threads per process (default: all, shared by the ranks of a host)");
    cmd->add_flag("--quiet", a.quiet, "No progress bar");
    cmd->callback([cmd] {
        a.lr_given = cmd->count("--lr") > 0;
        train(a);
    });
}

graft::cli::registrar reg(45, &add_train);

}  // namespace graft_cmd_train
