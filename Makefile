# graft — top-level convenience targets. Each one installs what is missing first.
#   make demo    build and run the demo and the examples (no downloaded data needed)
#   make test    build everything and run the whole test suite (ctest)
#   make asan    the test suite again, Debug with ASan + UBSan: the binaries that read files, parse,
#                run the executor and edit graphs (not test_ops, typed, cuda, autodiff,
#                train_models: see tests/CMakeLists.txt; no graft::cuda: ASan does not see device code),
#                compiled with clang 14 where present (ASAN_CXX): it builds that tree in about half
#                g++ 12's CPU time (1,480 s vs 2,869 s measured), which keeps .ci/run inside its budget;
#                with clang it also runs every fuzz target ASAN_FUZZ_SECONDS and its regression inputs
#   make fuzz    the libFuzzer targets of tests/fuzz (clang, ASan + UBSan), FUZZ_SECONDS each
#   make bench   build the benchmarks (and the libtorch/OpenCV/oneDNN peers) and run them
#   make bench-report   the table of graft against its peers on this machine (models x batch x
#                threads, ratios, roofline fractions, ISA): a native run, then one limited to AVX2
#                (graft and the peers alike) when this CPU has AVX-512
JOBS  ?= $(shell nproc)
BUILD ?= build
CMAKE_FLAGS ?=
ASAN_CXX ?= $(shell command -v clang++-14 || command -v clang++ || command -v c++)
# make asan also builds the libFuzzer targets when ASAN_CXX is clang, and runs each for
# ASAN_FUZZ_SECONDS from its seeds (plus every regression input): CI's bounded share of `make fuzz`.
ASAN_FUZZ ?= $(if $(findstring clang,$(notdir $(ASAN_CXX))),ON,OFF)
ASAN_FUZZ_SECONDS ?= 8

.PHONY: deps deps-peers configure build test demo asan fuzz bench bench-build bench-report clean

deps:
	@bash scripts/deps.sh

deps-peers:
	@bash scripts/deps.sh --peers

# The test build leaves the benchmarks (and their libtorch/OpenCV peers) to `make bench`.
configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DGRAFT_BUILD_BENCHMARKS=OFF $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The demo and the examples run inside the build folder, so the files they write (graft-demo/,
# example_w.npy, ...) land there and not in the source tree.
demo: build
	@cd $(BUILD) && ./tools/graft demo --dir graft-demo
	@cd $(BUILD) && for e in examples/example_*; do echo; echo "== $$(basename $$e)"; ./$$e || exit 1; done

asan: deps
	@cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug -DGRAFT_SANITIZE=ON -DGRAFT_FUZZ=$(ASAN_FUZZ) -DGRAFT_FUZZ_SECONDS=$(ASAN_FUZZ_SECONDS) -DCMAKE_CXX_COMPILER=$(ASAN_CXX) -DGRAFT_BUILD_BENCHMARKS=OFF -DGRAFT_BUILD_EXAMPLES=OFF -DGRAFT_BUILD_OP_TESTS=OFF -DGRAFT_CUDA=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)-asan -j $(JOBS)
	@cd $(BUILD)-asan && ctest --output-on-failure -j $(JOBS) -LE no-asan

# The libFuzzer targets of tests/fuzz in the sanitizer tree (clang), each run FUZZ_SECONDS from the
# seeds make_seeds.py copies out of ../shared/tf-fixtures, plus every saved regression input.
FUZZ_SECONDS ?= 120
fuzz: deps
	@cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug -DGRAFT_SANITIZE=ON -DGRAFT_FUZZ=ON -DGRAFT_FUZZ_SECONDS=$(FUZZ_SECONDS) -DCMAKE_CXX_COMPILER=$(ASAN_CXX) -DGRAFT_BUILD_BENCHMARKS=OFF -DGRAFT_BUILD_EXAMPLES=OFF -DGRAFT_BUILD_OP_TESTS=OFF -DGRAFT_CUDA=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)-asan -j $(JOBS) --target fuzz_npy fuzz_graph_def fuzz_meta_graph fuzz_checkpoint fuzz_events fuzz_import
	@cd $(BUILD)-asan && ctest --output-on-failure -j $(JOBS) -L fuzz

bench-build: deps-peers
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DGRAFT_BUILD_BENCHMARKS=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

bench: bench-build
	@for b in $(BUILD)/benchmarks/bench_*; do echo "== $$b"; $$b; done

bench-report: bench-build
	@python3 scripts/bench_report.py --build $(BUILD) --isa native
	@if grep -qw avx512f /proc/cpuinfo; then python3 scripts/bench_report.py --build $(BUILD) --isa avx2; \
	 else echo; echo "(this CPU has no AVX-512: the native run is the AVX2 run)"; fi

clean:
	rm -rf $(BUILD) $(BUILD)-asan
