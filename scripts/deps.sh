#!/usr/bin/env bash
# Installs what graft needs from Debian 12, only when something is missing.
# Usage: scripts/deps.sh [--peers]   (--peers adds the benchmarks' peers: libtorch + OpenBLAS, oneDNN)
set -euo pipefail
pkgs=(cmake g++ make libeigen3-dev libprotobuf-dev protobuf-compiler doctest-dev libsnappy-dev
      libcli11-dev libbenchmark-dev zlib1g-dev python3-numpy python3-protobuf
      libopencv-dnn-dev   # the re-frozen graphs of test_surgery also run through OpenCV DNN
      clang-14 libclang-rt-14-dev   # make asan compiles with clang (half g++'s time); its sanitizer runtimes
      lld   # graft's binaries link with it (CMakeLists.txt: GRAFT_LLD), the sanitizer tree's 6x faster
      libopenmpi-dev openmpi-bin)  # graft::mpi: distributed training and its mpirun tests
if [[ "${1:-}" == "--peers" ]]; then
  pkgs+=(libtorch-dev libopenblas0-pthread libdnnl-dev)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "graft deps: installing ${missing[*]}"
  sudo_cmd=""
  [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
