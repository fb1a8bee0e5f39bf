// Embedded inference (graft codegen --embedded) against graft's own executor and OpenCV DNN, one
// image per call, on the same LeNet-size frozen graph (gen_embedded_bench writes lenet_bench.pb
// and lenet_bench.hpp at build time, random weights from fixed seeds):
//   Conv2D 5x5x6 SAME + BiasAdd + Relu, MaxPool 2, Conv2D 5x5x16 VALID + BiasAdd + Relu, MaxPool 2,
//   Reshape [-1,400], dense 120 relu, dense 84 relu, dense 10.
// One thread everywhere (the embedded forward is single-threaded). At setup the three outputs are
// compared (max abs diff < 1e-4); a benchmark whose peers disagree stops with SkipWithError.
//
//   build-bench/benchmarks/bench_embedded
#include <benchmark/benchmark.h>

// libtorch is not a peer here (its headers take long to compile and bench_models covers it)
#undef GRAFT_HAVE_TORCH
#ifdef GRAFT_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "bench_support.hpp"
#include "graft/exec/session.hpp"
#include "graft/formats/tf_graph/graph_io.hpp"
#include "lenet_bench.hpp"

namespace {

struct fixture {
    graft::tensor x;
    std::unique_ptr<graft::exec::session> session;
    float in[lenet_bench::net::input_size];
    float out[lenet_bench::net::output_size];
    std::string error, cv_error;  // non-empty: embedded or OpenCV disagree with graft (or failed)
#ifdef GRAFT_HAVE_OPENCV
    cv::dnn::Net net;
    cv::Mat blob;
#endif
};

float max_diff(const float* a, const float* b, int n) {
    float d = 0;
    for (int i = 0; i < n; ++i) d = std::max(d, std::fabs(a[i] - b[i]));
    return d;
}

fixture& get() {
    static fixture f = [] {
        fixture f;
        graft::bench::set_threads(1);
        f.x = graft::bench::random_f32({1, 28, 28, 1}, 7, 1.f);
        std::copy_n(f.x.data<float>(), 784, f.in);
        const std::string pb = std::string(GRAFT_EMBEDDED_DIR) + "/lenet_bench.pb";
        f.session = std::make_unique<graft::exec::session>(graft::tf::load_graph(pb));
        graft::tensor want = f.session->run({{"x", f.x}}, {"logits:0"})[0];
        lenet_bench::net::forward(f.in, f.out);
        float d = max_diff(want.data<float>(), f.out, 10);
        std::fprintf(stderr, "lenet batch 1: max |logits - graft's|: embedded %.2g", static_cast<double>(d));
        if (!(d < 1e-4f)) f.error = "embedded logits differ from graft's by " + std::to_string(d);
#ifdef GRAFT_HAVE_OPENCV
        try {
            f.net = cv::dnn::readNetFromTensorflow(pb);
            f.net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
            f.net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
            int dims[4] = {1, 1, 28, 28};  // NCHW; one channel: the same bytes as NHWC
            f.blob = cv::Mat(4, dims, CV_32F);
            std::copy_n(f.in, 784, f.blob.ptr<float>());
            f.net.setInput(f.blob);
            cv::Mat o = f.net.forward();  // the last layer (OpenCV fuses MatMul + BiasAdd under the MatMul's name)
            float dc = max_diff(want.data<float>(), o.ptr<float>(), 10);
            std::fprintf(stderr, ", OpenCV %.2g", static_cast<double>(dc));
            if (!(dc < 1e-4f)) f.cv_error = "OpenCV logits differ from graft's by " + std::to_string(dc);
        } catch (const std::exception& e) {
            f.cv_error = std::string("OpenCV: ") + e.what();
        }
#endif
        std::fprintf(stderr, "\n");
        return f;
    }();
    return f;
}

fixture* start(benchmark::State& st, bool opencv = false) {
    fixture& f = get();
    const std::string& e = opencv ? f.cv_error : f.error;
    if (!e.empty()) {
        st.SkipWithError(e.c_str());
        return nullptr;
    }
    return &f;
}

void BM_lenet_embedded(benchmark::State& st) {
    fixture* f = start(st);
    if (!f) return;
    for (auto _ : st) {
        lenet_bench::net::forward(f->in, f->out);
        benchmark::DoNotOptimize(f->out);
        benchmark::ClobberMemory();
    }
    st.SetItemsProcessed(st.iterations());
}

void BM_lenet_graft_session(benchmark::State& st) {
    fixture* f = start(st);
    if (!f) return;
    graft::exec::session::feed_list feeds{{"x", f->x}};
    std::vector<std::string> fetches{"logits:0"};
    for (auto _ : st) benchmark::DoNotOptimize(f->session->run(feeds, fetches)[0].raw_data());
    st.SetItemsProcessed(st.iterations());
}

#ifdef GRAFT_HAVE_OPENCV
void BM_lenet_opencv_dnn(benchmark::State& st) {
    fixture* f = start(st, true);
    if (!f) return;
    for (auto _ : st) {
        f->net.setInput(f->blob);
        benchmark::DoNotOptimize(f->net.forward().data);
    }
    st.SetItemsProcessed(st.iterations());
}
#endif

}  // namespace

BENCHMARK(BM_lenet_embedded)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_lenet_graft_session)->UseRealTime()->Unit(benchmark::kMicrosecond);
#ifdef GRAFT_HAVE_OPENCV
BENCHMARK(BM_lenet_opencv_dnn)->UseRealTime()->Unit(benchmark::kMicrosecond);
#endif
BENCHMARK_MAIN();
