#!/usr/bin/env python3
"""graft's speed on this machine against its CPU peers, as one table (make bench-report).

Runs bench_models (whole models: MLP 784-512-512-10, LeNet-5; batch 1 and 128; 1 and 2 threads;
and the roofline probes), bench_train (training steps) and bench_rnn (an LSTM layer: TF's BlockLSTM,
100 steps x batch 32, 128 -> 128, forward and training step) from a build folder, once per library
(graft, libtorch, OpenCV DNN, oneDNN), each library's cases in a process of its own (its threads
outlive its calls and would take cores from another library's; oneDNN's OpenMP runtime also wants
the spin-waiting policy libtorch's does not: see benchmarks/bench_support.hpp), then prints:

  - the machine: CPU model, its vector ISA, graft's kernel family, the ISA limits in force;
  - per model x batch x threads: each peer's time, graft / fastest peer, and the roofline: at batch 1
    the time to stream the model's weights once (BM_probe_read) over graft's time, at batch 128 the
    model's GFLOP/s over the machine's FMA peak (BM_probe_fma);
  - per training step: graft, libtorch, oneDNN, and graft / libtorch;
  - the LSTM: forward against libtorch, OpenCV DNN and oneDNN, training step against libtorch and
    oneDNN, with graft / fastest peer;
  - 2 threads over 1 thread for graft at batch 128.

  scripts/bench_report.py [--build build] [--isa native|avx2] [--min-time 0.3] [--repetitions 3]
                          [--rounds 2] [--json out.json]

Each figure is the median of --rounds x --repetitions runs (a read probe's floor: the fastest of
them): each process runs --rounds times, in turn with the others (the libraries' processes
alternate over the same minutes), and within a run the benchmarks' repetitions are interleaved in
random order, so a shared VM's slow minutes fall on graft and its peers alike.

--isa avx2 limits graft AND the peers to AVX2 (GRAFT_MAX_CPU_ISA=avx2, OPENBLAS_CORETYPE=Haswell,
ONEDNN_MAX_CPU_ISA=AVX2, OPENCV_CPU_DISABLE=the AVX-512 groups), so a developer on an AVX-512 machine
sees the ratios an AVX2 user sees. Exits 1 when a benchmark binary fails or is missing.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

AVX2_LIMITS = {
    "GRAFT_MAX_CPU_ISA": "avx2",
    "OPENBLAS_CORETYPE": "Haswell",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "OPENCV_CPU_DISABLE": "AVX512_SKX,AVX512_COMMON,AVX512_KNL,AVX512_KNM,AVX512_CNL,AVX512_CLX,AVX512_ICL",
}

MODEL_FLOPS = {  # forward multiply-adds per example x 2
    "mlp": 2.0 * (784 * 512 + 512 * 512 + 512 * 10),
    "lenet": 2.0 * (28 * 28 * 25 * 6 + 10 * 10 * 25 * 6 * 16 + 400 * 120 + 120 * 84 + 84 * 10),
}


def run(binary, flt, env, min_time, repetitions):
    """Runs one benchmark binary with a filter, its benchmarks' repetitions in random order
    (--benchmark_enable_random_interleaving: graft and the peers in one process see the same drift
    of a shared VM, instead of one of them running in a slow minute). Returns (context,
    {name: [one entry per repetition]})."""
    if not os.path.exists(binary):
        sys.exit(f"bench_report: {binary} is missing: build it first (make bench builds the benchmarks)")
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    cmd = [binary, f"--benchmark_filter={flt}", f"--benchmark_min_time={min_time}",
           f"--benchmark_repetitions={repetitions}", "--benchmark_enable_random_interleaving=true",
           "--benchmark_out_format=json", f"--benchmark_out={out}"]
    print("  running:", " ".join(cmd[:2]), file=sys.stderr, flush=True)
    r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"bench_report: {' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    with open(out) as f:
        data = json.load(f)
    os.unlink(out)
    samples = {}
    for b in data.get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration":
            continue  # the aggregates: the medians are taken over all rounds below
        samples.setdefault(b.get("run_name", b["name"]), []).append(b)
    return data.get("context", {}), samples


def run_rounds(jobs, env, min_time, repetitions, rounds):
    """Runs each job (binary, filter) `rounds` times, the jobs in turn (so the libraries' processes
    alternate over the same minutes), and returns per job (context, {name: median entry}) over all
    rounds' repetitions; for the read probes the fastest entry instead: the floor is the quickest
    read of the weights this machine gave (on 2 vCPUs a read split over both is bimodal, each half
    from its own core's L2 or, after the threads traded cores, from L3: 13-15 against 21-22 us for
    the MLP's 2.68 MB on one Xeon, so a median fell on either)."""
    ctxs, samples = {}, {key: {} for key in jobs}
    for _ in range(rounds):
        for key, (binary, flt) in jobs.items():
            ctx, got = run(binary, flt, env, min_time, repetitions)
            ctxs.setdefault(key, ctx)
            for name, entries in got.items():
                samples[key].setdefault(name, []).extend(entries)
    out = {}
    for key in jobs:
        medians = {}
        for name, entries in samples[key].items():
            entries = sorted(entries, key=lambda e: e["real_time"])
            if name.startswith("BM_probe_read/"):
                medians[name] = dict(entries[0])
                continue
            mid = dict(entries[(len(entries) - 1) // 2])  # its counters (GFLOP/s) go with it
            if len(entries) % 2 == 0:
                mid["real_time"] = (entries[len(entries) // 2 - 1]["real_time"] + entries[len(entries) // 2]["real_time"]) / 2
            medians[name] = mid
        out[key] = (ctxs.get(key, {}), medians)
    return out


def seconds(entry):
    if entry is None or entry.get("error_occurred"):
        return None
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[entry.get("time_unit", "ns")]
    return entry["real_time"] * scale


def fmt_ms(t):
    return "-" if t is None else f"{t * 1e3:.3f}"


def find(entries, pattern):
    rx = re.compile(pattern)
    for name, e in entries.items():
        if rx.fullmatch(re.sub(r"/(min_time:[0-9.]+|real_time)", "", name)):
            return e
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--isa", choices=["native", "avx2"], default="native")
    ap.add_argument("--min-time", default="0.3")
    ap.add_argument("--repetitions", type=int, default=3, help="repetitions of each benchmark per round")
    ap.add_argument("--rounds", type=int, default=2,
                    help="times each binary runs, in turn with the others; each figure is the median of "
                         "rounds x repetitions runs")
    ap.add_argument("--json", help="also write the table's figures here")
    args = ap.parse_args()

    env = dict(os.environ)
    if args.isa == "avx2":
        env.update(AVX2_LIMITS)
    bench = os.path.join(args.build, "benchmarks")
    models, train = os.path.join(bench, "bench_models"), os.path.join(bench, "bench_train")
    rnn = os.path.join(bench, "bench_rnn")

    # each library in a process of its own: a library's threads outlive its calls (libtorch's
    # OpenBLAS workers, OpenMP teams) and took cores from the next library's repetitions in a shared
    # process (graft's MLP at batch 128 on 2 threads: 567-573 us alone, beside OpenCV or beside
    # oneDNN, 584-601 beside libtorch); the processes take turns over the same minutes (run_rounds)
    res = run_rounds({
        "models": (models, "(mlp|lenet)_graft/|probe_"),
        "models_torch": (models, "(mlp|lenet)_torch/"),
        "models_cv": (models, "(mlp|lenet)_opencv/"),
        "models_dnn": (models, "(mlp|lenet)_onednn/"),
        "train": (train, "(mlp|lenet)_train(_products)?/"),
        "train_torch": (train, "(mlp|lenet)_train(_products)?_torch/"),
        "train_dnn": (train, "(mlp|lenet)_train_onednn/"),
        "rnn": (rnn, "lstm_(forward|train)/"),
        "rnn_torch": (rnn, "lstm_(forward|train)_torch/"),
        "rnn_cv": (rnn, "lstm_forward_opencv/"),
        "rnn_dnn": (rnn, "lstm_(forward|train)_onednn/"),
    }, env, args.min_time, args.repetitions, args.rounds)
    ctx, m = res["models"]
    ctx_dnn = res["models_dnn"][0]
    for key in ("models_torch", "models_cv", "models_dnn"):
        m.update(res[key][1])
    t = {**res["train"][1], **res["train_torch"][1], **res["train_dnn"][1]}
    lstm = {**res["rnn"][1], **res["rnn_torch"][1], **res["rnn_cv"][1], **res["rnn_dnn"][1]}

    print(f"\n# graft vs its CPU peers ({args.isa} run)\n")
    print(f"- CPU: {ctx.get('cpu_model', '?')}, {ctx.get('num_cpus', '?')} CPUs; ISA flags: {ctx.get('cpu_isa', '?')}")
    print(f"- graft's kernels: {ctx.get('graft_kernels', '?')}; ISA limits and environment: {ctx.get('isa_limits', 'none')} "
          f"(oneDNN's process: {ctx_dnn.get('isa_limits', 'none')})")
    if "onednn" in ctx:
        print(f"- {ctx['onednn']}")
    if "openblas_core" in ctx:
        core = ctx["openblas_core"]
        # an SSE-era core's kernels on a CPU with AVX2: OpenBLAS did not recognise the CPU
        pre_avx = core.lower() in ("prescott", "core2", "penryn", "dunnington", "nehalem", "atom", "katmai")
        note = " (pre-AVX kernels on an AVX2 CPU: OpenBLAS did not recognise it)" if pre_avx and " avx2" in " " + ctx.get("cpu_isa", "") else ""
        print(f"- libtorch's BLAS: OpenBLAS, kernels for core {core}{note}")
    print()

    peak = {th: (find(m, f"BM_probe_fma/threads:{th}") or {}).get("GFLOP/s") for th in (1, 2)}
    read = {}
    for name, e in m.items():
        mm = re.fullmatch(r"BM_probe_read/bytes:(\d+)/threads:(\d+)(/real_time)?", name)
        if mm:
            read[(int(mm.group(1)), int(mm.group(2)))] = e
    weight_bytes = {}
    for model in ("mlp", "lenet"):
        flops = MODEL_FLOPS[model]
        # the probe's sizes are the models' weight bytes: MLP's is the largest below 256 MiB
        sizes = sorted({b for b, _ in read if b < (256 << 20)})
        if sizes:
            weight_bytes[model] = sizes[-1] if model == "mlp" else sizes[0]
    print("| model | batch | threads | graft ms | libtorch ms | OpenCV ms | oneDNN ms | graft / fastest peer | roofline |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = []
    for model in ("mlp", "lenet"):
        for batch in (1, 128):
            for th in (1, 2):
                key = f"batch:{batch}/threads:{th}"
                ts = {p: seconds(find(m, f"BM_{model}_{p}/{key}")) for p in ("graft", "torch", "opencv", "onednn")}
                peers = [v for p, v in ts.items() if p != "graft" and v is not None]
                ratio = ts["graft"] / min(peers) if ts["graft"] and peers else None
                roof = "-"
                if ts["graft"]:
                    if batch == 1 and model in weight_bytes:
                        r = seconds(read.get((weight_bytes[model], th)))
                        if r:
                            roof = f"{r / ts['graft']:.2f} of weight-stream floor ({r * 1e6:.1f} us)"
                    elif batch > 1 and peak.get(th):
                        gf = MODEL_FLOPS[model] * batch / ts["graft"] * 1e-9
                        roof = f"{gf:.0f} GFLOP/s = {gf / peak[th]:.2f} of FMA peak"
                rows.append({"model": model, "batch": batch, "threads": th, **{k + "_s": v for k, v in ts.items()},
                             "ratio": ratio, "roofline": roof})
                print(f"| {model} | {batch} | {th} | {fmt_ms(ts['graft'])} | {fmt_ms(ts['torch'])} | {fmt_ms(ts['opencv'])} "
                      f"| {fmt_ms(ts['onednn'])} | {'-' if ratio is None else f'{ratio:.2f}'} | {roof} |")

    print("\n| training step | batch | threads | graft ms | libtorch ms | oneDNN ms | graft / libtorch | graft / oneDNN |")
    print("|---|---|---|---|---|---|---|---|")
    for model in ("mlp", "lenet"):
        for batch, th in ((128, 1), (128, 2), (32, 1)):
            key = f"batch:{batch}/threads:{th}"
            g = seconds(find(t, f"BM_{model}_train/{key}"))
            to = seconds(find(t, f"BM_{model}_train_torch/{key}"))
            dn = seconds(find(t, f"BM_{model}_train_onednn/{key}"))
            rows.append({"model": model + "_train", "batch": batch, "threads": th, "graft_s": g, "torch_s": to, "onednn_s": dn})
            r1 = f"{g / to:.2f}" if g and to else "-"
            r2 = f"{g / dn:.2f}" if g and dn else "-"
            print(f"| {model} | {batch} | {th} | {fmt_ms(g)} | {fmt_ms(to)} | {fmt_ms(dn)} | {r1} | {r2} |")

    # the MLP step's eight matrix products alone (bench_train's BM_mlp_train_products): the floor
    # under each library's step, and what is left of it for everything else
    print("\n| MLP step's 8 products alone | batch | threads | graft ms | libtorch ms | graft / libtorch "
          "| graft step - its products | libtorch step - its products | graft's products: FMA peak |")
    print("|---|---|---|---|---|---|---|---|---|")
    for batch, th in ((128, 1), (128, 2), (32, 1)):
        key = f"batch:{batch}/threads:{th}"
        pg = seconds(find(t, f"BM_mlp_train_products/{key}"))
        pt = seconds(find(t, f"BM_mlp_train_products_torch/{key}"))
        g = seconds(find(t, f"BM_mlp_train/{key}"))
        to = seconds(find(t, f"BM_mlp_train_torch/{key}"))
        rows.append({"model": "mlp_train_products", "batch": batch, "threads": th, "graft_s": pg, "torch_s": pt})
        fl = (find(t, f"BM_mlp_train_products/{key}") or {}).get("GFLOPs")
        frac = f"{fl:.0f} GFLOP/s = {fl / peak[th]:.2f}" if fl and peak.get(th) else "-"
        print(f"| mlp | {batch} | {th} | {fmt_ms(pg)} | {fmt_ms(pt)} | {f'{pg / pt:.2f}' if pg and pt else '-'} "
              f"| {fmt_ms(g - pg) if g and pg else '-'} | {fmt_ms(to - pt) if to and pt else '-'} | {frac} |")

    print("\n| LSTM (T 100, batch 32, 128 units) | threads | graft ms | libtorch ms | OpenCV ms | oneDNN ms | graft / fastest peer |")
    print("|---|---|---|---|---|---|---|")
    for what in ("forward", "train"):
        for th in (1, 2):
            ts = {p: seconds(find(lstm, f"BM_lstm_{what}{'' if p == 'graft' else '_' + p}/threads:{th}"))
                  for p in ("graft", "torch", "opencv", "onednn")}
            peers = [v for p, v in ts.items() if p != "graft" and v is not None]
            ratio = ts["graft"] / min(peers) if ts["graft"] and peers else None
            rows.append({"model": "lstm_" + what, "batch": 32, "threads": th, **{k + "_s": v for k, v in ts.items()}, "ratio": ratio})
            print(f"| {what} | {th} | {fmt_ms(ts['graft'])} | {fmt_ms(ts['torch'])} | {fmt_ms(ts['opencv'])} | {fmt_ms(ts['onednn'])} "
                  f"| {'-' if ratio is None else f'{ratio:.2f}'} |")

    print("\n| graft, batch 128 | 1 thread ms | 2 threads ms | speed-up |")
    print("|---|---|---|---|")
    for model in ("mlp", "lenet"):
        a = seconds(find(m, f"BM_{model}_graft/batch:128/threads:1"))
        b = seconds(find(m, f"BM_{model}_graft/batch:128/threads:2"))
        print(f"| {model} | {fmt_ms(a)} | {fmt_ms(b)} | {'-' if not (a and b) else f'{a / b:.2f}'} |")
    print("\nroofline probes:", ", ".join(f"FMA peak {th} thread(s) {peak[th]:.0f} GFLOP/s" for th in (1, 2) if peak.get(th)))
    for (b, th), e in sorted(read.items()):
        s = seconds(e)
        if s:
            print(f"  read {b / 1e6:.2f} MB on {th} thread(s): {s * 1e6:.1f} us ({b / s / 1e9:.1f} GB/s; the fastest run)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"context": ctx, "isa": args.isa, "rows": rows, "fma_peak_gflops": peak}, f, indent=1)


if __name__ == "__main__":
    main()
