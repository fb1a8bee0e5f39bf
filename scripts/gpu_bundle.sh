#!/usr/bin/env bash
# Builds the GPU suite here (no GPU needed: CUDA's compiler and libraries suffice) and packs what a
# GPU machine without graft's build dependencies needs to run it into one folder: the sm_90 test and
# benchmark binaries, the Debian libraries they link besides CUDA's (protobuf, snappy), the fixtures
# the model tests read (mnist-softmax, the MNIST test set) and run.sh. Copy the folder to the GPU
# machine (the device tool: name it in `carry`) and run `<dir>/run.sh`: the suite against the CPU,
# compute-sanitizer memcheck and racecheck, bench_gpu and PyTorch's timings (benchmarks/peers/
# torch_gpu.py, when the repo is beside it), and optionally one ncu-profiled ResNet-18 step (NCU=1).
# Nothing is built on the GPU machine. That machine needs CUDA 13's cudart/cuBLAS and cuDNN 9.
#   scripts/gpu_bundle.sh [build-dir] [bundle-dir]      (defaults: build, .dev)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
D=${2:-.dev}
SHARED=${GRAFT_SHARED_DIR:-../shared}
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DGRAFT_CUDA=ON -DGRAFT_BUILD_BENCHMARKS=ON >/dev/null
cmake --build "$B" -j "$(nproc)" --target test_cuda_ops bench_gpu
mkdir -p "$D/bin" "$D/lib" "$D/shared/tf-fixtures" "$D/shared/datasets"
cp "$B/tests/cuda/test_cuda_ops" "$B/benchmarks/bench_gpu" "$D/bin/"
strip "$D/bin/"*
for lib in libprotobuf.so.32 libsnappy.so.1; do cp -L "/lib/x86_64-linux-gnu/$lib" "$D/lib/"; done
cp -r "$SHARED/tf-fixtures/mnist-softmax" "$D/shared/tf-fixtures/"
cp -r "$SHARED/datasets/mnist" "$D/shared/datasets/"
cat > "$D/run.sh" <<'RUN'
#!/usr/bin/env bash
# The GPU checks on the GPU machine, in one call. Logs go to $OUT (default: ./gpu-out).
# Knobs: SUITE_S MEM_S RACE_S BENCH_S TORCH_S (time limits, s), SAN=0, RACE=0, BENCH=0, NCU=1.
set -u
cd "$(dirname "$0")"
D=$PWD
OUT=${OUT:-$D/gpu-out}
mkdir -p "$OUT"
nvidia-smi -L
libdirs=$D/lib
for n in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcudnn.so.9; do
  f=$(find /usr/local/cuda* /usr/lib/x86_64-linux-gnu /opt -name "$n" 2>/dev/null | head -1)
  echo "$n -> ${f:-MISSING}"
  [ -n "$f" ] && libdirs=$libdirs:$(dirname "$f")
done
export LD_LIBRARY_PATH=$libdirs:${LD_LIBRARY_PATH:-}
export GRAFT_SHARED_DIR=$D/shared
mkdir -p /tmp/graft-gpu && cd /tmp/graft-gpu
echo "== suite"; t0=$(date +%s)
timeout "${SUITE_S:-150}" "$D/bin/test_cuda_ops" > "$OUT/suite.log" 2>&1
echo "suite rc=$? in $(( $(date +%s) - t0 )) s"; tail -4 "$OUT/suite.log"
grep -n -B3 -A12 "ERROR\|FATAL\|Segmentation\|what()" "$OUT/suite.log" | head -150
if [ "${SAN:-1}" = 1 ] && command -v compute-sanitizer >/dev/null; then
  echo "== memcheck"
  timeout "${MEM_S:-120}" compute-sanitizer --tool memcheck --error-exitcode 9 "$D/bin/test_cuda_ops" > "$OUT/memcheck.log" 2>&1
  echo "memcheck rc=$?"; grep "ERROR SUMMARY" "$OUT/memcheck.log" | tail -1
  if [ "${RACE:-1}" = 1 ]; then
    echo "== racecheck"
    timeout "${RACE_S:-60}" compute-sanitizer --tool racecheck --error-exitcode 9 "$D/bin/test_cuda_ops" \
      -tc='gpu reduce*,gpu nn*,gpu elementwise*' > "$OUT/racecheck.log" 2>&1
    echo "racecheck rc=$?"; grep "RACECHECK SUMMARY" "$OUT/racecheck.log" | tail -1
  fi
fi
if [ "${BENCH:-1}" = 1 ]; then
  echo "== bench_gpu"; timeout "${BENCH_S:-90}" "$D/bin/bench_gpu" 2>&1 | tee "$OUT/bench_gpu.txt"
  if [ -f "$D/../benchmarks/peers/torch_gpu.py" ]; then
    echo "== PyTorch"; PYTHONUNBUFFERED=1 timeout "${TORCH_S:-60}" python3 "$D/../benchmarks/peers/torch_gpu.py" 2>&1 | tee "$OUT/torch_gpu.txt"
  fi
fi
if [ "${NCU:-0}" = 1 ] && command -v ncu >/dev/null; then
  echo "== ncu: one ResNet-18 training step"
  GRAFT_BENCH_PROFILE=1 timeout "${NCU_S:-150}" ncu --profile-from-start off --metrics gpu__time_duration.sum --csv \
    --print-units base "$D/bin/bench_gpu" resnet18 > "$OUT/ncu.csv" 2> "$OUT/ncu.err"
  echo "ncu rc=$?, $(wc -l < "$OUT/ncu.csv") lines in $OUT/ncu.csv"
fi
RUN
chmod +x "$D/run.sh"
du -sh "$D"
