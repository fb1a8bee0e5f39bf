#!/usr/bin/env bash
# Compile time of one translation unit that includes graft and binds a typed 2-model connect
# (typed_connect_tu.cpp), with g++ -O2 as a user would build it. Usage: time_typed_tu.sh [BUILD_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../.."
build="${1:-$root/build}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
cmd=(g++ -std=c++20 -O2 -I"$root/include" -isystem /usr/include/eigen3 -c "$here/typed_connect_tu.cpp" -o "$out/tu.o")
/usr/bin/time -f "typed 2-model connect TU, g++ -O2: %e s wall, %U s user, %M KB peak" "${cmd[@]}"
if [ -f "$build/libgraft_compiled.a" ]; then
  g++ "$out/tu.o" "$build/libgraft_compiled.a" -lprotobuf -lsnappy -lpthread -o "$out/tu" && echo "links against $build/libgraft_compiled.a"
fi
