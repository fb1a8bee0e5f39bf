#!/usr/bin/env bash
# Issue 25's GPU checks in one command, on a machine with an NVIDIA GPU, ending in one table:
#   - the GPU suite (tests/cuda: every op body on the CPU and the GPU, 1e-5 relative with TF32 off;
#     the gradient ops; mnist-softmax at 0.7357; MLP and LeNet-5 training losses as the CPU's; the
#     duplicate-and-sync job; placement: a missing GPU, an op without a GPU kernel, out of memory),
#   - compute-sanitizer memcheck and racecheck over the op suite,
#   - bench_gpu and PyTorch (benchmarks/peers/torch_gpu.py) on the same workloads, with the ratios.
#
#   benchmarks/gpu/run_all.sh [bin-dir]
# bin-dir holds test_cuda_ops and bench_gpu: scripts/gpu_bundle.sh builds them on any machine with
# CUDA's compiler and packs them with their libraries and fixtures into .dev/ (then, on the GPU
# machine: benchmarks/gpu/run_all.sh .dev/bin). Without bin-dir they are built here for sm_90 into
# build-gpu/ first. Logs go to $OUT (default gpu-out/). Knobs: SUITE_S MEM_S RACE_S BENCH_S TORCH_S
# (time limits in s), SAN=0 (no compute-sanitizer), BENCH=0 (no timings), NCU=1 (one ncu-profiled
# ResNet-18 step, summed by kernel with scripts/ncu_summary.py), TORCH_PROFILE=1 (PyTorch's kernels).
set -u
R=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$R/gpu-out}
mkdir -p "$OUT"
if [ $# -ge 1 ]; then
  BIN=$(cd "$1" && pwd)
  TEST=$BIN/test_cuda_ops BENCH_BIN=$BIN/bench_gpu
  [ -d "$BIN/../lib" ] && export LD_LIBRARY_PATH=$BIN/../lib:${LD_LIBRARY_PATH:-}
  [ -d "$BIN/../shared" ] && export GRAFT_SHARED_DIR=${GRAFT_SHARED_DIR:-$BIN/../shared}
else
  echo "== build (build-gpu, sm_90)"
  cmake -S "$R" -B "$R/build-gpu" -DCMAKE_BUILD_TYPE=Release -DGRAFT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DGRAFT_BUILD_BENCHMARKS=ON >/dev/null || exit 1
  cmake --build "$R/build-gpu" -j "$(nproc)" --target test_cuda_ops bench_gpu >/dev/null || exit 1
  TEST=$R/build-gpu/tests/cuda/test_cuda_ops BENCH_BIN=$R/build-gpu/benchmarks/bench_gpu
fi
nvidia-smi -L || { echo "no NVIDIA GPU here: nothing to check"; exit 1; }
# CUDA's libraries where this machine keeps them (a toolkit, the distribution's, PyTorch's wheels).
for n in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcudnn.so.9; do
  f=$(find /usr/local/cuda* /usr/lib/x86_64-linux-gnu /opt -name "$n" 2>/dev/null | head -1)
  echo "$n -> ${f:-MISSING}"
  [ -n "$f" ] && export LD_LIBRARY_PATH=$(dirname "$f"):${LD_LIBRARY_PATH:-}
done
cd "$OUT"
declare -A result

echo "== suite"
t0=$(date +%s)
timeout "${SUITE_S:-150}" "$TEST" -d > "$OUT/suite.log" 2>&1
rc=$?
echo "suite rc=$rc in $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/suite.log"
grep -n -B3 -A12 "ERROR\|FATAL\|Segmentation\|what()" "$OUT/suite.log" | head -100
result[suite]="$(grep -o 'test cases: *[0-9]* | *[0-9]* passed | *[0-9]* failed' "$OUT/suite.log" | tr -s ' ') (rc $rc)"

if [ "${SAN:-1}" = 1 ] && command -v compute-sanitizer >/dev/null; then
  # (Not the model tests, which repeat the same kernels at length, nor the out-of-memory test, whose
  # deliberate 1 TiB cudaMalloc memcheck reports as an API error.)
  echo "== memcheck (the op suite)"
  timeout "${MEM_S:-150}" compute-sanitizer --tool memcheck --error-exitcode 9 "$TEST" \
    -tce='gpu models*,*running out of GPU memory*' \
    > "$OUT/memcheck.log" 2>&1
  rc=$?
  result[memcheck]="$(grep 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1 | sed 's/=* *//') (rc $rc)"
  # Racecheck looks at shared memory: graft's own kernels. Convolution algorithms from cuDNN's
  # heuristics alone (no timing of two dozen engines per shape, which racecheck slows 100-fold).
  echo "== racecheck"
  GRAFT_CUDNN_AUTOTUNE=0 timeout "${RACE_S:-90}" compute-sanitizer --tool racecheck --error-exitcode 9 "$TEST" \
    -tc='gpu reduce*,gpu nn*,gpu elementwise*,gpu array*,gpu training*' > "$OUT/racecheck.log" 2>&1
  rc=$?
  result[racecheck]="$(grep 'RACECHECK SUMMARY' "$OUT/racecheck.log" | tail -1 | sed 's/=* *//') (rc $rc)"
fi

if [ "${BENCH:-1}" = 1 ]; then
  echo "== bench_gpu"
  timeout "${BENCH_S:-120}" "$BENCH_BIN" 2>&1 | tee "$OUT/bench_gpu.txt"
  echo "== PyTorch"
  PYTHONUNBUFFERED=1 timeout "${TORCH_S:-90}" python3 "$R/benchmarks/peers/torch_gpu.py" 2>&1 | tee "$OUT/torch_gpu.txt"
fi
if [ "${NCU:-0}" = 1 ] && command -v ncu >/dev/null; then
  echo "== ncu: one ResNet-18 training step"
  GRAFT_BENCH_PROFILE=1 timeout "${NCU_S:-150}" ncu --profile-from-start off --metrics gpu__time_duration.sum --csv \
    --print-units base "$BENCH_BIN" resnet18 > "$OUT/ncu.csv" 2> "$OUT/ncu.err"
  python3 "$R/scripts/ncu_summary.py" "$OUT/ncu.csv" 30
fi

echo
echo "== summary ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
for k in suite memcheck racecheck; do [ -n "${result[$k]:-}" ] && printf '%-22s %s\n' "$k" "${result[$k]}"; done
if [ -f "$OUT/bench_gpu.txt" ] && [ -f "$OUT/torch_gpu.txt" ]; then
  python3 - "$OUT/bench_gpu.txt" "$OUT/torch_gpu.txt" <<'PY'
import re, sys
def read(p):
    d = {}
    for line in open(p):
        m = re.match(r"(\S+)\s+([0-9.]+) (ms|us)", line)
        if m: d[m.group(1)] = (float(m.group(2)), m.group(3))
    return d
g, t = read(sys.argv[1]), read(sys.argv[2])
print(f"{'workload':22s} {'graft':>12s} {'pytorch':>12s} {'graft/pytorch':>14s}")
for k, (v, unit) in g.items():
    if k in t: print(f"{k:22s} {v:9.3f} {unit} {t[k][0]:9.3f} {unit} {v / t[k][0]:13.2f}x")
    else: print(f"{k:22s} {v:9.3f} {unit}")
PY
fi
