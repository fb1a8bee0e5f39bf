// graft/exec/cpu_kernels/summary.hpp — the summary family's CPU kernels bound to their TF op types
// (graft/ops/summary.hpp): ScalarSummary, HistogramSummary, MergeSummary. What they make is written
// to an event file by graft::train::summary_writer::add_summary (`graft run --summary-dir`).
#pragma once

#include <vector>

#include "graft/exec/kernel.hpp"
#include "graft/ops/summary.hpp"

namespace graft::exec::kernels {

inline void register_summary(kernel_registry& r) {
    r.add("ScalarSummary", [](kernel_context& c) { c.set_output(0, ops::scalar_summary(c.input(0), c.input(1))); });
    r.add("HistogramSummary", [](kernel_context& c) { c.set_output(0, ops::histogram_summary(c.input(0), c.input(1))); });
    r.add("MergeSummary", [](kernel_context& c) {
        std::vector<tensor> in;
        for (int i = 0; i < c.num_inputs(); ++i) in.push_back(c.input(i));
        c.set_output(0, ops::merge_summary(in));
    });
}

}  // namespace graft::exec::kernels
