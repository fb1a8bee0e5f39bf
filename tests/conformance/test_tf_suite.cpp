// The dl4j-tf-graphs conformance suite through the library: ../shared/tf-fixtures/dl4j-tf-graphs holds
// 992 frozen graphs written by TensorFlow 1.x with the inputs it was fed and the values it computed
// (MANIFEST.md there). Each case is loaded with graft::exec::load_model, fed its placeholders and
// compared with TensorFlow's values (rtol 1e-3, atol 1e-4, NaN equal to NaN), like
// ../shared/scripts/tf-suite-run.py does through the CLI.
//
// Every case runs in a child process (fork) with a time limit, so a crash or a hang in one case is
// that case's failure, not the suite's. The per-case results go to tf_suite_<folder>.txt in the
// test's working directory. GRAFT_TF_SUITE_DIRS (colon-separated) runs further folders of the same
// format (the suite's held-out half) and reports them without a floor. GRAFT_TF_SUITE_FILTER
// (comma-separated substrings of a case's path, e.g. "reverse,rnn/") runs only the cases it names
// and prints each result.
#include <doctest/doctest.h>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/exec/model.hpp"
#include "support/fixtures.hpp"

namespace fs = std::filesystem;

namespace {

/// The suite's pass count when this floor was last raised: a change that makes fewer cases pass
/// fails the test (raise it when more pass).
constexpr int dev_suite_floor = 983;  // 989 pass on the machine that set it; a few cases sit near rtol on other ISAs
constexpr int case_seconds = 60;

struct csv_values {
    std::vector<double> v;
    std::vector<std::int64_t> dims;
    bool scalar = false;
};

/// One value per line (or comma-separated); "True"/"False" for bools, nan/inf as strtod reads them.
csv_values read_csv(const fs::path& csv) {
    csv_values r;
    std::ifstream in(csv);
    if (!in) throw graft::io_error("cannot open", graft::location::in_file(csv.string()));
    std::string tok;
    std::string line;
    while (std::getline(in, line)) {
        std::stringstream ls(line);
        while (std::getline(ls, tok, ',')) {
            auto b = tok.find_first_not_of(" \t\r");
            if (b == std::string::npos) continue;
            tok = tok.substr(b, tok.find_last_not_of(" \t\r") - b + 1);
            if (tok == "True" || tok == "true") r.v.push_back(1);
            else if (tok == "False" || tok == "false") r.v.push_back(0);
            else {
                char* end = nullptr;
                double x = std::strtod(tok.c_str(), &end);
                if (end == tok.c_str()) {
                    throw graft::format_error("'" + tok + "' is not a number", graft::location::in_file(csv.string()));
                }
                r.v.push_back(x);
            }
        }
    }
    fs::path shape_file = csv;
    shape_file.replace_extension(".shape");
    if (fs::exists(shape_file)) {
        std::ifstream s(shape_file);
        std::int64_t d = 0;
        while (s >> d) r.dims.push_back(d);
        std::int64_t n = 1;
        for (auto x : r.dims) n *= x;
        if (n != static_cast<std::int64_t>(r.v.size()) && r.v.size() == 1) {
            r.dims.clear();  // a scalar: its shape file says 0
            r.scalar = true;
        }
    } else {
        r.dims = {static_cast<std::int64_t>(r.v.size())};
    }
    if (r.dims.empty()) r.scalar = true;
    return r;
}

/// "a____b" -> "a/b" (the suite's spelling of '/' in file names).
std::string unescape(std::string s) {
    for (std::size_t p; (p = s.find("____")) != std::string::npos;) s.replace(p, 4, "/");
    return s;
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// "node.K" -> "node:K", "node" -> "node:0".
std::string tensor_name(const std::string& n) {
    auto dot = n.rfind('.');
    if (dot != std::string::npos && dot + 1 < n.size() &&
        std::all_of(n.begin() + static_cast<std::ptrdiff_t>(dot) + 1, n.end(), [](char c) { return std::isdigit(c); })) {
        return n.substr(0, dot) + ":" + n.substr(dot + 1);
    }
    return n + ":0";
}

/// Runs one case in this process; returns "ok" or "FAIL <why>". Throws nothing.
std::string run_case(const fs::path& dir) {
    try {
        auto m = graft::exec::load_model((dir / "frozen_model.pb").string());
        auto runner = m.runner();
        const graft::graph& g = runner.sess().g();
        graft::exec::session::feed_list feeds;
        std::vector<std::string> fetches;
        std::vector<fs::path> wants;
        std::vector<fs::path> inbw;
        for (const auto& e : fs::directory_iterator(dir)) {
            std::string f = e.path().filename().string();
            if (ends_with(f, ".placeholder.csv")) {
                std::string name = unescape(f.substr(0, f.size() - std::string(".placeholder.csv").size()));
                const graft::node* n = g.find(name);
                if (!n) return "FAIL no placeholder node '" + name + "'";
                graft::dtype t = graft::dtype::float32;
                if (auto* a = n->attr("dtype")) t = a->type();
                if (t == graft::dtype::string) continue;
                auto c = read_csv(e.path());
                auto d = graft::tensor::from_vector<double>(graft::shape(c.dims), c.v);
                feeds.emplace_back(name, graft::cast(d, t));
            } else if (ends_with(f, ".prediction.csv")) {
                fetches.push_back(tensor_name(unescape(f.substr(0, f.size() - std::string(".prediction.csv").size()))));
                wants.push_back(e.path());
            } else if (ends_with(f, ".prediction_inbw.csv")) {
                inbw.push_back(e.path());
            }
        }
        if (fetches.empty()) {  // no final outputs recorded: every node's value TF recorded
            for (const auto& p : inbw) {
                std::string f = p.filename().string();
                std::string n = unescape(f.substr(0, f.size() - std::string(".prediction_inbw.csv").size()));
                if (n.rfind("import/", 0) == 0) n = n.substr(7);
                auto dot = n.rfind('.');
                if (dot == std::string::npos) continue;
                // TF recorded nodes of the graph before freezing; some were folded away since.
                const graft::node* node = g.find(n.substr(0, dot));
                if (!node) continue;
                // A resource handle (a TensorArray's) has no values to compare.
                const auto k = static_cast<std::size_t>(std::strtoul(n.c_str() + dot + 1, nullptr, 10));
                const auto types = g.output_dtypes(*node);
                if (k < types.size() && types[k] == graft::dtype::resource) continue;
                fetches.push_back(tensor_name(n));
                wants.push_back(p);
            }
        }
        if (fetches.empty()) return "skip no-outputs";
        auto out = runner.run(feeds, fetches);
        std::string bad;
        for (std::size_t i = 0; i < fetches.size(); ++i) {
            auto want = read_csv(wants[i]);
            const graft::tensor& got = out[i];
            if (got.type() == graft::dtype::string) {
                bad += fetches[i] + ": string output; ";
                continue;
            }
            auto gd = graft::cast(got, graft::dtype::float64);
            if (gd.num_elements() != static_cast<std::int64_t>(want.v.size())) {
                bad += fetches[i] + ": " + std::to_string(gd.num_elements()) + " values " + got.shape().str() +
                       " vs " + std::to_string(want.v.size()) + "; ";
                continue;
            }
            const double* a = gd.data<double>();
            double worst = 0;
            bool ok = true;
            for (std::size_t k = 0; k < want.v.size(); ++k) {
                double x = a[k], w = want.v[k];
                if (std::isnan(x) && std::isnan(w)) continue;
                if (std::isinf(x) && std::isinf(w) && (x > 0) == (w > 0)) continue;
                double diff = std::abs(x - w);
                if (!(diff <= 1e-4 + 1e-3 * std::abs(w))) {
                    ok = false;
                    worst = std::max(worst, std::isnan(diff) ? INFINITY : diff);
                }
            }
            if (!ok) bad += fetches[i] + ": values maxdiff " + std::to_string(worst) + "; ";
        }
        return bad.empty() ? "ok" : "FAIL " + bad;
    } catch (const std::exception& e) {
        std::string w = e.what();
        std::replace(w.begin(), w.end(), '\n', ' ');
        if (w.size() > 300) {
            w.resize(300);
            while (!w.empty() && (static_cast<unsigned char>(w.back()) & 0xC0) == 0x80) w.pop_back();  // no cut UTF-8
            if (!w.empty() && static_cast<unsigned char>(w.back()) >= 0xC0) w.pop_back();
        }
        return "FAIL " + w;
    }
}

/// run_case in a child process, with a time limit.
std::string run_case_isolated(const fs::path& dir) {
    int fd[2];
    if (::pipe(fd) != 0) return "FAIL pipe";
    pid_t pid = ::fork();
    if (pid < 0) return "FAIL fork";
    if (pid == 0) {
        ::close(fd[0]);
        std::string r = run_case(dir) + "\n";
        auto w = ::write(fd[1], r.data(), r.size());
        (void)w;
        ::_exit(0);
    }
    ::close(fd[1]);
    std::string r;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(case_seconds);
    char buf[4096];
    bool timed_out = false;
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            timed_out = true;
            break;
        }
        pollfd p{fd[0], POLLIN, 0};
        int k = ::poll(&p, 1, static_cast<int>(left.count()));
        if (k <= 0) continue;
        auto n = ::read(fd[0], buf, sizeof buf);
        if (n <= 0) break;
        r.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd[0]);
    if (timed_out) ::kill(pid, SIGKILL);
    int st = 0;
    ::waitpid(pid, &st, 0);
    if (timed_out) return "FAIL timeout (" + std::to_string(case_seconds) + " s)";
    if (WIFSIGNALED(st)) return "FAIL crashed (signal " + std::to_string(WTERMSIG(st)) + ")";
    while (!r.empty() && r.back() == '\n') r.pop_back();
    return r.empty() ? "FAIL no result" : r;
}

struct suite_result {
    int pass = 0, total = 0;
};

/// GRAFT_TF_SUITE_FILTER's substrings; empty when it is unset (every case runs).
std::vector<std::string> case_filter() {
    std::vector<std::string> f;
    if (const char* v = std::getenv("GRAFT_TF_SUITE_FILTER")) {
        std::stringstream s(v);
        std::string part;
        while (std::getline(s, part, ',')) {
            if (!part.empty()) f.push_back(part);
        }
    }
    return f;
}

suite_result run_suite(const fs::path& root, const std::string& report) {
    const auto filter = case_filter();
    std::vector<fs::path> cases;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
        if (e.path().filename() != "frozen_model.pb") continue;
        const std::string rel = fs::relative(e.path().parent_path(), root).string();
        if (!filter.empty() && std::none_of(filter.begin(), filter.end(),
                                            [&](const std::string& f) { return rel.find(f) != std::string::npos; })) {
            continue;
        }
        cases.push_back(e.path().parent_path());
    }
    std::sort(cases.begin(), cases.end());
    suite_result r;
    std::ofstream out(report);
    std::map<std::string, int> reasons;
    for (const auto& c : cases) {
        auto res = run_case_isolated(c);
        ++r.total;
        if (res == "ok") ++r.pass;
        out << fs::relative(c, root).string() << " " << res << "\n";
        if (!filter.empty()) std::cout << fs::relative(c, root).string() << " " << res << "\n";
    }
    std::cout << root.string() << ": " << r.pass << " of " << r.total << " cases pass (per case: " << report << ")\n";
    return r;
}

}  // namespace

TEST_CASE("dl4j-tf-graphs: frozen TF graphs give TensorFlow's values") {
    auto root = graft::test::fixture("dl4j-tf-graphs");
    GRAFT_REQUIRE_PATH(root);
    auto r = run_suite(root, "tf_suite_dl4j-tf-graphs.txt");
    if (case_filter().empty()) CHECK(r.total == 992);
    CHECK(r.pass >= dev_suite_floor);
    if (const char* more = std::getenv("GRAFT_TF_SUITE_DIRS")) {
        std::stringstream s(more);
        std::string d;
        while (std::getline(s, d, ':')) {
            if (d.empty()) continue;
            auto name = fs::path(d).filename().string();
            run_suite(d, "tf_suite_" + name + ".txt");
        }
    }
}
