#!/usr/bin/env bash
# The whole GPU suite in one go, on a machine with an NVIDIA GPU (the H200 via the device tool):
# build (sm_90), run the op/model suite (GPU vs CPU), compute-sanitizer memcheck + racecheck on the op
# suite where available, then time graft (bench_gpu) and PyTorch (peers/torch_gpu.py) on the same
# workloads and print one table with the ratios.
#   scripts/gpu_suite.sh [build-dir]
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-gpu}
J=$(nproc)
log() { printf '\n== %s\n' "$*"; }

log "configure + build ($B, sm_90, $J jobs)"
t0=$(date +%s)
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DGRAFT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DGRAFT_BUILD_BENCHMARKS=ON -DGRAFT_BUILD_EXAMPLES=OFF >/dev/null || exit 1
cmake --build "$B" -j "$J" --target test_cuda_ops bench_gpu >/dev/null || { cmake --build "$B" -j 1 --target test_cuda_ops 2>&1 | tail -40; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"

log "op + model suite on the GPU against the CPU"
t0=$(date +%s)
"$B/tests/cuda/test_cuda_ops" -d 2>&1 | tail -60
suite_rc=${PIPESTATUS[0]}
echo "suite: rc=$suite_rc in $(( $(date +%s) - t0 )) s"

if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    log "compute-sanitizer --tool $tool (op suite)"
    compute-sanitizer --tool "$tool" --error-exitcode 9 "$B/tests/cuda/test_cuda_ops" -tc='gpu elementwise*,gpu reduce*,gpu array*,gpu training*,gpu nn*' 2>&1 | tail -8
    echo "$tool: rc=${PIPESTATUS[0]}"
  done
else
  echo "compute-sanitizer not found: skipped"
fi

log "timings"
"$B/benchmarks/bench_gpu" | tee /tmp/graft_gpu.txt
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  python3 benchmarks/peers/torch_gpu.py | tee /tmp/torch_gpu.txt
  log "graft / pytorch (lower is better for graft)"
  python3 - <<'PY'
import re
def read(p):
    d = {}
    for line in open(p):
        m = re.match(r"(\S+)\s+([0-9.]+) (ms|us)", line)
        if m: d[m.group(1)] = float(m.group(2))
    return d
g, t = read("/tmp/graft_gpu.txt"), read("/tmp/torch_gpu.txt")
print(f"{'workload':22s} {'graft':>10s} {'pytorch':>10s} {'ratio':>7s}")
for k in g:
    if k in t: print(f"{k:22s} {g[k]:10.3f} {t[k]:10.3f} {g[k] / t[k]:7.2f}x")
PY
else
  echo "PyTorch with CUDA not importable: peer timings skipped"
fi
exit $suite_rc
