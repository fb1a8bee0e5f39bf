// `graft ops [--markdown] [--check] [--missing]` — what graft can do with each op (graft/coverage.hpp):
// CPU / GPU kernels, gradient, embedded code generation. `--markdown` prints docs/OPS.md; `--check`
// lists where the registries disagree (a half-added op) and exits 1 if they do.
#include <iostream>

#include "commands.hpp"
#include "graft/coverage.hpp"
#include "graft/exec/session.hpp"

namespace graft_cmd_ops {  // named, not anonymous: the CLI builds as one unity translation unit

void add_ops(CLI::App& app) {
    static bool markdown = false, check = false, missing = false;
    auto* cmd = app.add_subcommand("ops", "List the ops graft knows: CPU/GPU kernels, gradients, embedded codegen");
    cmd->add_flag("--markdown", markdown, "Print docs/OPS.md (the whole table as Markdown)");
    cmd->add_flag("--check", check, "List where the op table, kernels and gradient rules disagree; exit 1 if they do");
    cmd->add_flag("--missing", missing, "Only the ops of the table that `graft run` refuses (no CPU kernel)");
    cmd->callback([] {
        bool with_gpu = !graft::exec::kernel_registry::global().ops(graft::device_kind::cuda).empty();
        if (check) {
            auto problems = graft::op_table_problems();
            for (const auto& p : problems) std::cout << p << "\n";
            std::cerr << problems.size() << " problems\n";
            if (!problems.empty()) throw graft::error("the op registries disagree (see above)");
            return;
        }
        if (markdown) {
            std::cout << graft::ops_markdown(with_gpu);
            return;
        }
        int shown = 0;
        for (const auto& c : graft::op_coverage_table()) {
            if (!c.in_table || (missing && c.cpu)) continue;
            std::string g = c.grad_rule ? "rule" : c.not_differentiable ? "none" : "missing";
            std::cout << c.op << "  cpu=" << (c.cpu ? "yes" : "no") << "  gpu=" << (with_gpu ? (c.gpu ? "yes" : "no") : "?")
                      << "  gradient=" << g << (c.embedded ? "  embedded" : "") << "\n";
            ++shown;
        }
        std::cerr << shown << " ops\n";
    });
}

graft::cli::registrar reg(25, &add_ops);

}  // namespace graft_cmd_ops
