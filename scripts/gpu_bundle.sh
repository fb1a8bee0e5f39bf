#!/usr/bin/env bash
# Builds the GPU suite here (no GPU needed: CUDA's compiler and libraries suffice) and packs what a
# GPU machine without graft's build dependencies needs to run it into one folder: the sm_90 test and
# benchmark binaries, the Debian libraries they link besides CUDA's (protobuf, snappy) and the
# fixtures the model tests read (mnist-softmax, the MNIST test set). With the repository beside it
# (the device tool: name the folder in `carry`), the GPU machine runs every check in one command and
# builds nothing:  benchmarks/gpu/run_all.sh .dev/bin
# That machine needs CUDA 13's cudart/cuBLAS and cuDNN 9.
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
rm -f "$D/run.sh"  # (older bundles ran their own copy of the checks)
du -sh "$D"
