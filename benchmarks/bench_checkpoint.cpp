// Checkpoint I/O speed: restoring and saving a ~1 GiB V2 bundle (64 float tensors of 16 MiB) against
// plain read()/write() of the same bytes, in the same run, from/to the page cache; plus crc32c speed.
//
//   ./bench_checkpoint --benchmark_counters_tabular=true
//
// Peak memory: ~1 GiB of page cache for the bundle, 1 GiB more for a written copy, and one 1 GiB
// buffer (plain read) or 1 GiB of restored tensors at a time.
// The bundle lives in a fresh /tmp/graft-bench-ckpt-XXXXXX folder, deleted at exit. Goals: restore with
// crc on >= 0.7x the plain read() rate; zero-copy lookup+view < 1 ms per tensor; bundle_writer >= 0.7x
// the plain write() rate.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "graft/formats/tf/bundle.hpp"
#include "graft/formats/tf/bundle_writer.hpp"
#include "graft/formats/tf/crc32c.hpp"

namespace fs = std::filesystem;

namespace {

constexpr int num_tensors = 64;
constexpr std::int64_t floats_per_tensor = 4 * 1024 * 1024;  // 16 MiB
constexpr std::size_t tensor_bytes = floats_per_tensor * sizeof(float);
constexpr std::size_t total_bytes = num_tensors * tensor_bytes;

struct bench_files {
    fs::path dir;
    std::string prefix;
    std::unique_ptr<graft::tf::bundle_reader> source;
    std::vector<graft::tensor> values;  // the write benchmarks' input: zero-copy views of the page cache

    bench_files() {
        char tmpl[] = "/tmp/graft-bench-ckpt-XXXXXX";
        if (!::mkdtemp(tmpl)) std::abort();
        dir = tmpl;
        prefix = (dir / "model.ckpt").string();
        std::mt19937 rng(3);
        {
            graft::tf::bundle_writer w(prefix, {true, 1});  // fsync'd: no pending writeback during the runs
            graft::tensor t = graft::tensor::uninitialized(graft::dtype::float32, {floats_per_tensor});
            for (int i = 0; i < num_tensors; ++i) {
                auto* f = t.data<float>();
                for (std::int64_t k = 0; k < floats_per_tensor; ++k) f[k] = static_cast<float>(rng() >> 8) * 1e-6f;
                w.add("layer_" + std::to_string(i) + "/kernel", t);
            }
            w.finish();
        }
        warm();
        source = std::make_unique<graft::tf::bundle_reader>(prefix, graft::tf::bundle_read_options{false, true});
        for (const auto& k : source->keys()) values.push_back(source->read(k));
    }
    ~bench_files() {
        values.clear();
        source.reset();
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    [[nodiscard]] std::string data_path() const { return prefix + ".data-00000-of-00001"; }
    void warm() const {  // make sure the files are in the page cache
        std::vector<char> buf(1 << 20);
        int fd = ::open(data_path().c_str(), O_RDONLY);
        while (::read(fd, buf.data(), buf.size()) > 0) {}
        ::close(fd);
    }
};

bench_files& files() {
    static bench_files f;
    return f;
}

/// A page-aligned, pre-faulted buffer for the plain read() peer.
struct big_buffer {
    char* p;
    std::size_t n;
    explicit big_buffer(std::size_t size) : n(size) {
        p = static_cast<char*>(::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        std::memset(p, 1, n);
    }
    ~big_buffer() { ::munmap(p, n); }
};

void BM_PlainRead(benchmark::State& st) {
    auto& f = files();
    big_buffer buf(total_bytes);
    for (auto _ : st) {
        int fd = ::open(f.data_path().c_str(), O_RDONLY);
        std::size_t done = 0;
        while (done < total_bytes) {
            auto r = ::read(fd, buf.p + done, std::min<std::size_t>(total_bytes - done, 16u << 20));
            if (r <= 0) break;
            done += static_cast<std::size_t>(r);
        }
        ::close(fd);
        benchmark::DoNotOptimize(buf.p[done - 1]);
    }
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(total_bytes));
}

/// Restore every tensor with crc32c verified. zero_copy: views into the mmap'd shard; else one pread copy.
void BM_Restore(benchmark::State& st) {
    auto& f = files();
    const bool zero_copy = st.range(0) != 0;
    for (auto _ : st) {
        graft::tf::bundle_reader r(f.prefix, {true, zero_copy});
        std::vector<graft::tensor> out;
        out.reserve(num_tensors);
        for (const auto& k : r.keys()) out.push_back(r.read(k));
        benchmark::DoNotOptimize(out.back().raw_data());
    }
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(total_bytes));
    st.SetLabel(zero_copy ? "crc on, zero-copy mmap views" : "crc on, pread copy");
}

/// Restore into already-allocated tensors (a model's variables), crc on: pread straight into them.
void BM_RestoreInto(benchmark::State& st) {
    auto& f = files();
    std::vector<graft::tensor> vars;
    for (int i = 0; i < num_tensors; ++i) vars.emplace_back(graft::dtype::float32, graft::shape{floats_per_tensor});
    for (auto _ : st) {
        graft::tf::bundle_reader r(f.prefix, {true, false});
        int i = 0;
        for (const auto& k : r.keys()) r.read_into(k, vars[static_cast<std::size_t>(i++)]);
        benchmark::DoNotOptimize(vars.back().raw_data());
    }
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(total_bytes));
    st.SetLabel("crc on, pread into existing tensors");
}

/// Open the index, look every tensor up and view it (zero-copy, crc off): the cost per tensor.
void BM_LookupView(benchmark::State& st) {
    auto& f = files();
    for (auto _ : st) {
        graft::tf::bundle_reader r(f.prefix, {false, true});
        for (const auto& k : r.keys()) {
            graft::tf::read_info info;
            auto t = r.read(k, &info);
            if (!info.zero_copy) st.SkipWithError("not zero-copy");
            benchmark::DoNotOptimize(t.raw_data());
        }
    }
    // Seconds per tensor (printed with an SI suffix: "5u" = 5 microseconds).
    st.counters["s_per_tensor"] = benchmark::Counter(static_cast<double>(num_tensors) * static_cast<double>(st.iterations()),
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(total_bytes));
}

/// The peer: write() of the same 1 GiB to a new file, range(0) bytes per call (16 MiB: one call per tensor).
void BM_PlainWrite(benchmark::State& st) {
    auto& f = files();
    const std::string out = (f.dir / "plain.bin").string();
    const auto per_call = static_cast<std::size_t>(st.range(0));
    for (auto _ : st) {
        int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        for (const auto& t : f.values) {
            const char* p = static_cast<const char*>(t.raw_data());
            std::size_t left = tensor_bytes;
            while (left) {
                auto w = ::write(fd, p, std::min(left, per_call));
                if (w <= 0) break;
                p += w;
                left -= static_cast<std::size_t>(w);
            }
        }
        ::close(fd);
        st.PauseTiming();
        ::unlink(out.c_str());
        st.ResumeTiming();
    }
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(total_bytes));
}

/// bundle_writer: data (crc32c of every tensor) + sorted index, temp files renamed; no fsync (like the
/// plain write() peer). range(0) = 1 adds TF's durability (fsync of both files and the directory).
void BM_BundleWrite(benchmark::State& st) {
    auto& f = files();
    const std::string out = (f.dir / "out").string();
    const bool sync = st.range(0) != 0;
    for (auto _ : st) {
        graft::tf::bundle_writer w(out, {sync, 1});
        int i = 0;
        for (const auto& t : f.values) w.add("layer_" + std::to_string(i++) + "/kernel", t);
        w.finish();
        st.PauseTiming();
        fs::remove(out + ".index");
        fs::remove(out + ".data-00000-of-00001");
        st.ResumeTiming();
    }
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(total_bytes));
    st.SetLabel(sync ? "fsync" : "no fsync");
}

void BM_Crc32c(benchmark::State& st) {
    const auto n = static_cast<std::size_t>(st.range(0));
    std::vector<char> buf(n);
    for (std::size_t i = 0; i < n; ++i) buf[i] = static_cast<char>(i * 31);
    std::uint32_t c = 0;
    for (auto _ : st) c = graft::tf::crc32c::extend(c, buf.data(), n);
    benchmark::DoNotOptimize(c);
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(n));
    st.SetLabel(graft::tf::crc32c::hardware_accelerated() ? "sse4.2" : "portable");
}

void BM_Crc32cPortable(benchmark::State& st) {
    const auto n = static_cast<std::size_t>(st.range(0));
    std::vector<char> buf(n, 7);
    std::uint32_t c = 0;
    for (auto _ : st) c = graft::tf::crc32c::extend_portable(c, buf.data(), n);
    benchmark::DoNotOptimize(c);
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(n));
}

}  // namespace

BENCHMARK(BM_PlainRead)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_Restore)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_RestoreInto)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_LookupView)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_PlainWrite)->Arg(16 << 20)->Arg(512 << 10)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_BundleWrite)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_BundleWrite)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);
BENCHMARK(BM_Crc32c)->Arg(64 << 10)->Arg(16 << 20);
BENCHMARK(BM_Crc32cPortable)->Arg(64 << 10);

BENCHMARK_MAIN();
