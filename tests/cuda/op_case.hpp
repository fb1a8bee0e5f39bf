// tests/cuda/op_case.hpp — one test body per op, run on the CPU and on the GPU and compared.
//
//   graft::graph g; graft::graph_builder b(g);
//   auto x = b.placeholder("x", graft::dtype::float32, graft::shape{2, 3});
//   b.op("Relu", {x});
//   graft::test_cuda::check_cpu_vs_gpu({std::move(g), {{"x", some_tensor}}, {"Relu:0"}});
//
// The GPU run places every node on /device:GPU:0 (soft placement on, as in TF: initializers and
// int32 shape tensors stay on the host), requires every fetched node and step target to have
// landed on the GPU, and must match the CPU to `rtol` (1e-5: float32 without TF32). Without a GPU the GPU run still happens: every node asks
// for the GPU and soft placement runs it on the CPU, so the test body, the placement fallback and
// the comparison are exercised everywhere; the first such case prints one SKIP line.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "graft/exec/session.hpp"
#include "graft/graph/build.hpp"
#ifdef GRAFT_WITH_CUDA
#include "graft/device/cuda_runtime.hpp"
#endif

namespace graft::test_cuda {

/// True when a CUDA device is present and graft::cuda is installed (installs it on first call).
inline bool gpu_present() {
#ifdef GRAFT_WITH_CUDA
    static const bool present = [] {
        graft::cuda::install();
        return graft::cuda::device_count() > 0;
    }();
    return present;
#else
    return false;
#endif
}

inline void note_skip_once() {
    static bool said = false;
    if (!said && !gpu_present()) {
        said = true;
        std::cout << "SKIP: no CUDA device: GPU runs of the op suite fall back to the CPU (soft placement); "
                     "GPU-vs-CPU comparisons need a GPU\n";
    }
}

struct op_case {
    graph g;
    exec::session::feed_list feeds;
    std::vector<std::string> fetches;
    std::vector<std::string> targets;  ///< run first (e.g. "init"), in the same session
    double rtol = 1e-5;
    double atol = 1e-6;
    /// Extra runs of `targets` before the fetch (training steps).
    int steps = 0;
    /// Per step targets (e.g. an optimizer op) run `steps` times after `targets`.
    std::vector<std::string> step_targets;
    /// Optional, per fetch: the index of another fetch that holds, element by element, the sum of
    /// the absolute values of the terms this fetch sums (the same op on |inputs|), or -1. Such a
    /// fetch's error is measured against that magnitude, not its own value: a float32 sum whose
    /// terms cancel is exact only to the rounding of its terms, in whatever order they are added.
    std::vector<int> magnitude_of;
};

/// Max over elements of |a-b| / max(|a|,|b|,atol/rtol): the relative error used by the suite.
/// With `magnitude` (float32, a's shape), each element's denominator also takes magnitude's.
inline double relative_error(const tensor& a, const tensor& b, double atol, double rtol, const tensor& magnitude = {}) {
    REQUIRE(a.type() == b.type());
    REQUIRE(a.shape() == b.shape());
    double worst = 0;
    visit_dtype(a.type(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
            const T* pa = a.data<T>();
            const T* pb = b.data<T>();
            for (std::int64_t i = 0; i < a.num_elements(); ++i) {
                double x = static_cast<double>(pa[i]), y = static_cast<double>(pb[i]);
                if (std::isnan(x) && std::isnan(y)) continue;
                double den = std::max({std::fabs(x), std::fabs(y), atol / rtol});
                if (magnitude.valid()) den = std::max(den, static_cast<double>(magnitude.data<float>()[i]));
                worst = std::max(worst, std::fabs(x - y) / den);
            }
        }
    });
    return worst;
}

/// Runs `c` with everything on `device` ("" = CPU), soft placement on (initializers such as
/// RandomUniform have no GPU kernel, as in TF). With `require_gpu` every fetched node must have
/// been placed on the GPU. Returns the fetches (host tensors).
inline std::vector<tensor> run_on(const op_case& c, const std::string& device, bool require_gpu) {
    exec::session_options o;
    o.default_device = device;
    exec::session s(c.g, o);
    if (!c.targets.empty()) s.run({}, {}, c.targets);
    for (int i = 0; i < c.steps; ++i) s.run(c.feeds, {}, c.step_targets);
    if (require_gpu) {
        std::vector<std::string> feed_names;
        for (auto& f : c.feeds) feed_names.push_back(f.first);
        const auto& p = s.prepare(feed_names, c.fetches, {});
        for (const auto& f : c.fetches) {
            std::string node = f.substr(0, f.find(':'));
            for (const auto& st : p.steps) {
                if (st.n->name == node) {
                    INFO("fetched node " << node << " (" << st.n->op << ") must run on the GPU");
                    CHECK(!st.dev.is_cpu());
                }
            }
        }
        if (c.steps > 0) {
            const auto& tp = s.prepare(feed_names, {}, c.step_targets);
            for (const auto& st : tp.steps) {
                for (const auto& t : c.step_targets) {
                    if (st.n->name == t) {
                        INFO("step target " << t << " (" << st.n->op << ") must run on the GPU");
                        CHECK(!st.dev.is_cpu());
                    }
                }
            }
        }
    }
    return s.run(c.feeds, c.fetches);
}

/// The CPU's and the GPU's results of `c`, compared fetch by fetch. Returns the GPU run's.
inline std::vector<tensor> check_cpu_vs_gpu(const op_case& c) {
    note_skip_once();
    auto cpu = run_on(c, "", false);
    bool gpu = gpu_present();
    auto dev = run_on(c, "/device:GPU:0", gpu);
    REQUIRE(cpu.size() == dev.size());
    for (std::size_t i = 0; i < cpu.size(); ++i) {
        INFO("fetch " << c.fetches[i] << (gpu ? " (GPU vs CPU)" : " (GPU placement fell back to CPU)"));
        CHECK(dev[i].on_host());
        tensor magnitude;
        if (i < c.magnitude_of.size() && c.magnitude_of[i] >= 0) {
            magnitude = cpu[static_cast<std::size_t>(c.magnitude_of[i])];
            REQUIRE(magnitude.type() == dtype::float32);
            REQUIRE(magnitude.shape() == cpu[i].shape());
        }
        double err = relative_error(cpu[i], dev[i], c.atol, c.rtol, magnitude);
        CHECK(err <= c.rtol);
    }
    return dev;
}

/// A float32 tensor of `s` with deterministic values in [lo, hi) (a fixed LCG).
inline tensor ramp(const graft::shape& s, float lo = -1.f, float hi = 1.f, std::uint32_t seed = 1) {
    tensor t(dtype::float32, s);
    std::uint32_t x = seed * 2654435761u + 12345u;
    float* p = t.data<float>();
    for (std::int64_t i = 0; i < t.num_elements(); ++i) {
        x = x * 1664525u + 1013904223u;
        p[i] = lo + (hi - lo) * static_cast<float>(x >> 8) / static_cast<float>(1u << 24);
    }
    return t;
}

}  // namespace graft::test_cuda
