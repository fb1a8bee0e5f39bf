// The op table is the one home of what graft knows about an op: its traits are read by every pass,
// and the registries (CPU/GPU kernels, gradient rules, the embedded generator's list) must agree
// with it. docs/OPS.md is generated from them and must be current.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "graft/coverage.hpp"
#include "support/fixtures.hpp"

using graft::test::run_cli;

namespace {

bool has_problem(const std::vector<std::string>& problems, const std::string& text) {
    for (const auto& p : problems) {
        if (p.find(text) != std::string::npos) return true;
    }
    return false;
}

/// OPS.md with the GPU column and count blanked ("?"), for a program without the GPU kernel table.
std::string without_gpu(const std::string& md) {
    std::istringstream in(md);
    std::string line, out;
    while (std::getline(in, line)) {
        if (line.rfind("| ", 0) == 0 && line.find(" | op |") == std::string::npos && line.rfind("| op ", 0) != 0) {
            // | op | CPU | GPU | gradient | embedded |: cells 1..5
            std::size_t a = line.find(" | ", 2), b = line.find(" | ", a + 3), c = line.find(" | ", b + 3);
            if (a != std::string::npos && b != std::string::npos && c != std::string::npos) {
                line = line.substr(0, b + 3) + "?" + line.substr(c);
            }
        }
        if (auto k = line.find(" with a GPU kernel"); k != std::string::npos) {
            auto s = line.rfind(", ", k);
            if (s != std::string::npos) line = line.substr(0, s + 2) + "?" + line.substr(k);
        }
        out += line + "\n";
    }
    return out;
}

}  // namespace

TEST_CASE("op table: traits on the spec lines are what the passes read") {
    using graft::traits_of;
    CHECK(traits_of("Relu6").fusable_activation);
    CHECK(traits_of("LeakyRelu").fusable_activation);
    CHECK_FALSE(traits_of("Sigmoid").fusable_activation);
    CHECK(traits_of("Identity").shape_preserving);
    CHECK(traits_of("BiasAdd").shape_preserving);
    CHECK_FALSE(traits_of("MatMul").shape_preserving);
    CHECK(traits_of("TruncatedNormal").random);
    CHECK(traits_of("TruncatedNormal").nograd);
    CHECK_FALSE(traits_of("Add").random);
    CHECK(traits_of("Shape").nograd);
    CHECK(traits_of("_FusedMatMul").grad_missing);
    CHECK_FALSE(traits_of("Switch").grad_missing);
    CHECK_FALSE(traits_of("NoSuchOp").nograd);
    // The autodiff registry reads nograd from the table.
    CHECK(graft::autodiff::gradient_registry::global().not_differentiable("Shape"));
    CHECK(graft::autodiff::gradient_registry::global().not_differentiable("GreaterEqual"));
    CHECK(graft::autodiff::gradient_registry::global().find("MatMul") != nullptr);
    // A flag the parser does not know is an error naming it.
    CHECK_THROWS_WITH_AS(graft::op_def::parse("Foo(x: T) -> (y: T); T: type; shape_preservin"),
                         doctest::Contains("unknown flag 'shape_preservin'"), graft::error);
}

TEST_CASE("op table: every op has a CPU kernel and a gradient answer, and every kernel an op line") {
    auto problems = graft::op_table_problems();
    std::string all;
    for (const auto& p : problems) all += p + "\n";
    INFO(all);
    CHECK(problems.empty());
}

TEST_CASE("op table: a half-added op is caught, whichever part is missing") {
    auto& table = graft::op_registry::global();
    auto& kernels = graft::exec::kernel_registry::global();
    // A line in the table, nothing else: no kernel, no gradient answer.
    table.add("GraftTestHalfAdded(x: T) -> (y: T); T: type");
    auto p = graft::op_table_problems();
    CHECK(has_problem(p, "GraftTestHalfAdded: no CPU kernel"));
    CHECK(has_problem(p, "GraftTestHalfAdded: no gradient rule"));
    // The kernel added: still no gradient answer.
    kernels.add("GraftTestHalfAdded", [](graft::exec::kernel_context& c) { c.set_output(0, c.input(0)); });
    p = graft::op_table_problems();
    CHECK_FALSE(has_problem(p, "GraftTestHalfAdded: no CPU kernel"));
    CHECK(has_problem(p, "GraftTestHalfAdded: no gradient rule"));
    // Marked not differentiable: consistent.
    table.add("GraftTestHalfAdded(x: T) -> (y: T); T: type; nograd");
    graft::autodiff::no_gradient("GraftTestHalfAdded");
    CHECK_FALSE(has_problem(graft::op_table_problems(), "GraftTestHalfAdded"));
    // A kernel without a table line, and a stale import_only mark.
    kernels.add("GraftTestKernelOnly", [](graft::exec::kernel_context&) {});
    table.add("GraftTestStale() -> (y: float); nograd; import_only");
    kernels.add("GraftTestStale", [](graft::exec::kernel_context&) {});
    p = graft::op_table_problems();
    CHECK(has_problem(p, "GraftTestKernelOnly: has a CPU kernel but no line in the op table"));
    CHECK(has_problem(p, "GraftTestStale: marked import_only but has a CPU kernel"));
    table.remove("GraftTestHalfAdded");
    table.remove("GraftTestStale");
}

TEST_CASE("op table: docs/OPS.md is what `graft ops --markdown` prints, and `graft ops --check` passes") {
    std::string out;
    REQUIRE(run_cli("ops --check", out) == 0);
    CHECK(out.find("0 problems") != std::string::npos);
    auto r = run_cli("ops --markdown 2>/dev/null");
    REQUIRE(r.code == 0);
    std::ifstream f(std::string(GRAFT_SOURCE_DIR) + "/docs/OPS.md");
    REQUIRE_MESSAGE(f.good(), "docs/OPS.md is missing: build/tools/graft ops --markdown > docs/OPS.md");
    std::stringstream doc;
    doc << f.rdbuf();
    // A CLI built without graft::cuda prints "?" in the GPU column: compare the other columns then.
    bool cli_has_gpu = r.output.find(" with a GPU kernel") != std::string::npos &&
                       r.output.find(", ? with a GPU kernel") == std::string::npos;
    std::string want = cli_has_gpu ? doc.str() : without_gpu(doc.str());
    INFO("regenerate it: build/tools/graft ops --markdown > docs/OPS.md (from a build with CUDA)");
    CHECK(r.output == want);
}
