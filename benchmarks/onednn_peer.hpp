// oneDNN (2.x C++ API) as a peer for graft's benchmarks: the same functions bench_models.cpp and
// bench_train.cpp run, computed the way TensorFlow's oneDNN path computes them.
//
//   model    inference of MLP 784-512-512-10 or LeNet-5 at a fixed batch: primitives created once,
//            weights reordered once at setup into the layout each primitive prefers (format_tag::any),
//            ReLU fused as an eltwise post-op; per run: the input is reordered in where the first
//            primitive wants another layout, activations are reordered between primitives where the
//            producer's layout is not the consumer's (both counted in the run), the logits come back
//            as plain row-major [N,10].
//   trainer  one SGD step on mean softmax cross-entropy: forward_training (ReLU post-op, max pooling
//            with workspace), backward_data / backward_weights (bias diff included), eltwise ReLU
//            backward (from dst), pooling backward; the loss and its gradient (softmax - y) / N are
//            plain C++ as in TF; the update w -= lr * dw runs as oneDNN sum primitives in place on the
//            weights, which live in the forward primitive's layout throughout.
//   matmul   A[M,K] x B[K,N], plain row-major in and out, B reordered once (bench_ops_nn's MatMul).
//   conv2d   NHWC x HWIO (TF SAME/VALID, stride 1), plain NHWC in and out, weights reordered once.
//
// Weights are given as TensorFlow stores them: dense [in,out], conv [KH,KW,C,OC] (HWIO), bias [out];
// LeNet's input is [N,28,28,1] NHWC (C = 1: the same bytes as NCHW [N,1,28,28]) and its flatten
// follows TF's HWC order (fc1's weights are described to oneDNN as 4-D "hwio" over pool2's
// [N,16,5,5] output, so no permutation of data is needed).
//
// Threads: oneDNN here runs on OpenMP (libgomp); call set_threads(n) BEFORE building a model,
// trainer, matmul or conv2d: oneDNN fixes a primitive's thread partition when it creates it, so each
// object records the thread count it was built with and its run methods throw std::runtime_error
// when the current OpenMP thread count differs (build one object per thread count).
// ISA: oneDNN reads ONEDNN_MAX_CPU_ISA (and ONEDNN_VERBOSE) from the environment itself; this
// header never overrides it; isa_string() reports the ISA in force.
//
// Errors: every oneDNN failure surfaces as std::runtime_error("oneDNN peer: <what>: <message>").
// Depends on oneDNN and the standard library only. Link: -ldnnl (no -fopenmp needed).
#pragma once

#include <dlfcn.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <oneapi/dnnl/dnnl_debug.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace graft::bench::onednn {

// ---------------------------------------------------------------- threads, version, ISA

namespace detail {

using omp_set_fn = void (*)(int);
using omp_get_fn = int (*)();

inline omp_set_fn omp_setter() {
    static const auto f = reinterpret_cast<omp_set_fn>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
    return f;
}
inline omp_get_fn omp_getter() {
    static const auto f = reinterpret_cast<omp_get_fn>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
    return f;
}

}  // namespace detail

/// Sets OpenMP's thread count (oneDNN's threads) for parallel regions started from this thread.
inline void set_threads(int n) {
    if (n < 1) throw std::runtime_error("oneDNN peer: set_threads(" + std::to_string(n) + "): need at least 1");
    auto f = detail::omp_setter();
    if (f == nullptr) throw std::runtime_error("oneDNN peer: omp_set_num_threads not found (is -ldnnl, OpenMP build, linked?)");
    f(n);
}

/// OpenMP's current thread count (omp_get_max_threads), 1 when OpenMP is not loaded.
inline int threads() {
    auto f = detail::omp_getter();
    return f != nullptr ? f() : 1;
}

/// "oneDNN 2.6.3 (commit N/A, CPU runtime OpenMP)".
inline std::string version_string() {
    const dnnl_version_t* v = dnnl_version();
    std::string s = "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
    s += std::string(" (commit ") + (v->hash != nullptr ? v->hash : "?") + ", CPU runtime " + dnnl_runtime2str(v->cpu_runtime) + ")";
    return s;
}

/// The ISA oneDNN dispatches to (after ONEDNN_MAX_CPU_ISA), e.g. "avx2".
inline std::string isa_string() {
    switch (dnnl::get_effective_cpu_isa()) {
        case dnnl::cpu_isa::all: return "all";
        case dnnl::cpu_isa::sse41: return "sse41";
        case dnnl::cpu_isa::avx: return "avx";
        case dnnl::cpu_isa::avx2: return "avx2";
        case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
        case dnnl::cpu_isa::avx512_mic: return "avx512_mic";
        case dnnl::cpu_isa::avx512_mic_4ops: return "avx512_mic_4ops";
        case dnnl::cpu_isa::avx512_core: return "avx512_core";
        case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
        case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
        case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    }
    return dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa());
}

// ---------------------------------------------------------------- internals

namespace detail {

using dnnl::memory;
using tag = memory::format_tag;
using dims = memory::dims;

[[noreturn]] inline void fail(const std::string& what, const std::string& why) {
    throw std::runtime_error("oneDNN peer: " + what + ": " + why);
}

/// Runs f, turning a dnnl::error into std::runtime_error naming `what`.
template <class F>
decltype(auto) guard(const std::string& what, F&& f) {
    try {
        return f();
    } catch (const dnnl::error& e) {
        fail(what, std::string(e.what()) + " (" + dnnl_status2str(e.status) + ")");
    }
}

inline dnnl::engine& cpu_engine() {
    static dnnl::engine e = guard("creating the CPU engine", [] { return dnnl::engine(dnnl::engine::kind::cpu, 0); });
    return e;
}

inline memory::desc md(const dims& d, tag t) { return memory::desc(d, memory::data_type::f32, t); }
inline memory::desc any(const dims& d) { return md(d, tag::any); }

/// A layout as oneDNN's verbose mode writes it: dims outermost first, upper case where blocked,
/// then the inner blocks ("aBcd8b" = nChw8c, "acdb" = nhwc).
inline std::string layout(const memory::desc& d) {
    const dnnl_memory_desc_t& m = d.data;
    if (m.format_kind != dnnl_blocked) return dnnl_fmt_kind2str(m.format_kind);
    const auto& b = m.format_desc.blocking;
    const int n = m.ndims;
    std::vector<int> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return b.strides[x] > b.strides[y]; });
    std::vector<bool> blocked(static_cast<std::size_t>(n), false);
    for (int k = 0; k < b.inner_nblks; ++k) blocked[static_cast<std::size_t>(b.inner_idxs[k])] = true;
    std::string s;
    for (int i : order) s += static_cast<char>((blocked[static_cast<std::size_t>(i)] ? 'A' : 'a') + i);
    for (int k = 0; k < b.inner_nblks; ++k) s += std::to_string(b.inner_blks[k]) + static_cast<char>('a' + b.inner_idxs[k]);
    return s;
}

inline std::string impl_of(const dnnl::primitive& p) {
    const_dnnl_primitive_desc_t pd = nullptr;
    const char* info = nullptr;
    if (dnnl_primitive_get_primitive_desc(p.get(), &pd) != dnnl_success || pd == nullptr) return "?";
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &info) != dnnl_success || info == nullptr) return "?";
    return info;
}

/// A list of primitives run in order on one stream (oneDNN's "net" idiom).
class program {
public:
    void add(const dnnl::primitive& p, std::unordered_map<int, memory> args, std::string name) {
        names_.push_back(std::move(name) + " [" + impl_of(p) + "]");
        steps_.push_back({p, std::move(args)});
    }

    /// `m` in layout `want`: `m` itself when it already is, else a new memory that a reorder step
    /// (appended here, so it runs in order each time) fills from `m`. One reorder per (m, want).
    memory as(const memory& m, const memory::desc& want, const std::string& what) {
        if (m.get_desc() == want) return m;
        for (auto& c : converted_)
            if (c.from == m.get() && c.to.get_desc() == want) return c.to;
        memory r(want, cpu_engine());
        add(dnnl::reorder(m, r), {{DNNL_ARG_FROM, m}, {DNNL_ARG_TO, r}},
            "reorder " + what + " " + layout(m.get_desc()) + " -> " + layout(want));
        converted_.push_back({m.get(), r});
        return r;
    }

    /// Appends o's steps after this program's.
    void append(program&& o) {
        for (auto& st : o.steps_) steps_.push_back(std::move(st));
        for (auto& n : o.names_) names_.push_back(std::move(n));
        for (auto& c : o.converted_) converted_.push_back(std::move(c));
    }

    void run(const dnnl::stream& s) const {
        for (const auto& st : steps_) st.prim.execute(s, st.args);
    }

    const std::vector<std::string>& names() const { return names_; }
    std::size_t reorders() const {
        return static_cast<std::size_t>(std::count_if(names_.begin(), names_.end(),
                                                      [](const std::string& n) { return n.rfind("reorder", 0) == 0; }));
    }

private:
    struct step {
        dnnl::primitive prim;
        std::unordered_map<int, memory> args;
    };
    struct conversion {
        dnnl_memory_t from;
        memory to;
    };
    std::vector<step> steps_;
    std::vector<std::string> names_;
    std::vector<conversion> converted_;
};

/// A copy of `src` in layout `want`, made now (setup-time reorders: weights in, weights out).
inline memory reorder_now(const memory& src, const memory::desc& want, dnnl::stream& s) {
    memory from = src, dst(want, cpu_engine());
    dnnl::reorder(from, dst).execute(s, from, dst);
    s.wait();
    return dst;
}

/// A memory over the caller's buffer (read only by us; oneDNN's API takes void*).
inline memory wrap(const memory::desc& d, const float* p) { return memory(d, cpu_engine(), const_cast<float*>(p)); }

inline dnnl::primitive_attr relu_attr(bool relu) {
    dnnl::primitive_attr attr;
    if (relu) {
        dnnl::post_ops po;
        po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
        attr.set_post_ops(po);
    }
    return attr;
}

inline float* data_of(const memory& m) { return static_cast<float*>(m.get_data_handle()); }
inline std::size_t floats_of(const memory& m) { return m.get_desc().get_size() / sizeof(float); }

inline std::string shape_str(const std::vector<std::int64_t>& s) {
    std::string r = "[";
    for (std::size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
    return r + "]";
}

}  // namespace detail

// ---------------------------------------------------------------- models

enum class model_kind { mlp, lenet };

/// One layer's parameters as TF stores them: w dense [in,out] or conv [KH,KW,C,OC]; b [out].
/// Read (copied or reordered) during construction only.
struct layer_params {
    const float* w = nullptr;
    std::vector<std::int64_t> w_shape;
    const float* b = nullptr;
};

/// The weight shapes a model_kind takes, in layer order.
inline std::vector<std::vector<std::int64_t>> weight_shapes(model_kind k) {
    if (k == model_kind::mlp) return {{784, 512}, {512, 512}, {512, 10}};
    return {{5, 5, 1, 6}, {5, 5, 6, 16}, {400, 120}, {120, 84}, {84, 10}};
}

namespace detail {

/// What model and trainer share: the forward primitives of one model at one batch.
class net {
public:
    // Copies would share buffers (oneDNN handles are reference-counted); moves are fine.
    net(const net&) = delete;
    net& operator=(const net&) = delete;
    net(net&&) = default;
    net& operator=(net&&) = default;

    model_kind kind() const { return kind_; }
    std::int64_t batch() const { return batch_; }
    /// The OpenMP thread count this object was built for (and must run with).
    int built_threads() const { return threads_; }
    std::size_t layers() const { return layers_.size(); }

    /// One line per primitive run per call, in order, with oneDNN's implementation name, e.g.
    /// "conv1 forward (+relu), weights Acdb8a [jit:avx2]", "reorder conv2 src aBcd8b -> abcd [jit:uni]"
    /// (layouts as oneDNN's verbose mode writes them: aBcd8b = nChw8c, abcd = nchw, ba = TF's [in,out]).
    std::string describe() const {
        std::string s;
        for (const auto* p : {&fwd_, &bwd_})
            for (const auto& n : p->names()) s += n + "\n";
        return s;
    }
    /// Reorders per forward() / step() (activations, input, logits, gradients).
    std::size_t reorders_per_run() const { return fwd_.reorders() + bwd_.reorders(); }

protected:
    struct layer {
        std::string name;
        bool conv = false, relu = false, pool = false;
        dims src_dims, w_dims, dst_dims, strides, pad_l, pad_r;
        memory::desc user_w_md;  // TF's layout, as a oneDNN desc over logical dims
        dnnl::convolution_forward::primitive_desc conv_pd;
        dnnl::inner_product_forward::primitive_desc ip_pd;
        memory src, w, b, dst;  // as the forward primitive reads / writes them
        dnnl::pooling_forward::primitive_desc pool_pd;
        memory pool_dst, ws;
    };

    net(model_kind kind, const std::vector<layer_params>& params, std::int64_t batch, bool training)
        : kind_(kind), batch_(batch), threads_(threads()) {
        if (batch < 1) fail("building a model", "batch " + std::to_string(batch) + " < 1");
        const auto shapes = weight_shapes(kind);
        if (params.size() != shapes.size())
            fail("building a model", "expected " + std::to_string(shapes.size()) + " layers, got " + std::to_string(params.size()));
        for (std::size_t i = 0; i < shapes.size(); ++i) {
            if (params[i].w_shape != shapes[i])
                fail("building a model", "layer " + std::to_string(i) + " weights are " + shape_str(params[i].w_shape) + ", expected " +
                                             shape_str(shapes[i]));
            if (params[i].w == nullptr || params[i].b == nullptr) fail("building a model", "layer " + std::to_string(i) + ": null buffer");
        }
        guard("building the forward primitives", [&] {
            stream_ = dnnl::stream(cpu_engine());
            build_forward(params, training);
        });
    }

    void check_threads(const char* what) const {
        const int now = threads();
        if (now != threads_)
            fail(what, "built for " + std::to_string(threads_) + " OpenMP threads, called with " + std::to_string(now) +
                           " (oneDNN fixes the thread partition at primitive creation: build one object per thread count)");
    }

    void build_forward(const std::vector<layer_params>& params, bool training) {
        const auto prop = training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
        const std::int64_t N = batch_;
        // The caller's input; its buffer is attached per run. LeNet's [N,28,28,1] NHWC has C = 1, so
        // its bytes are NCHW [N,1,28,28]: described as nchw, the plain layout oneDNN's convolutions
        // ask for (nhwc with C = 1 has other strides for C and would cost a needless reorder).
        x_ = kind_ == model_kind::mlp ? memory(md({N, 784}, tag::nc), cpu_engine(), nullptr)
                                      : memory(md({N, 1, 28, 28}, tag::nchw), cpu_engine(), nullptr);
        static const char* mlp_names[] = {"dense", "dense_1", "dense_2"};
        static const char* lenet_names[] = {"conv1", "conv2", "fc1", "fc2", "fc3"};
        memory cur = x_;
        for (std::size_t i = 0; i < params.size(); ++i) {
            const auto& p = params[i];
            layer L;
            L.name = kind_ == model_kind::mlp ? mlp_names[i] : lenet_names[i];
            L.relu = i + 1 < params.size();
            L.src_dims = cur.get_desc().dims();
            const std::string what = L.name + " forward";
            if (p.w_shape.size() == 4) {  // conv, HWIO
                const std::int64_t K = p.w_shape[0], C = p.w_shape[2], OC = p.w_shape[3];
                const std::int64_t H = L.src_dims[2], W = L.src_dims[3];
                const std::int64_t pad = i == 0 ? (K - 1) / 2 : 0;  // conv1 SAME, conv2 VALID (stride 1)
                const std::int64_t pad_r = i == 0 ? K - 1 - pad : 0;
                L.conv = L.pool = true;
                L.w_dims = {OC, C, K, K};
                L.dst_dims = {N, OC, H + pad + pad_r - K + 1, W + pad + pad_r - K + 1};
                L.strides = {1, 1};
                L.pad_l = {pad, pad};
                L.pad_r = {pad_r, pad_r};
                L.user_w_md = md(L.w_dims, tag::hwio);
                dnnl::convolution_forward::desc d(prop, dnnl::algorithm::convolution_direct, any(L.src_dims), any(L.w_dims),
                                                  md({OC}, tag::x), any(L.dst_dims), L.strides, L.pad_l, L.pad_r);
                L.conv_pd = dnnl::convolution_forward::primitive_desc(d, relu_attr(L.relu), cpu_engine());
                L.src = fwd_.as(cur, L.conv_pd.src_desc(), L.name + " src");
                L.w = reorder_now(wrap(L.user_w_md, p.w), L.conv_pd.weights_desc(), stream_);
                L.b = reorder_now(wrap(md({OC}, tag::x), p.b), L.conv_pd.bias_desc(), stream_);
                L.dst = memory(L.conv_pd.dst_desc(), cpu_engine());
                fwd_.add(dnnl::convolution_forward(L.conv_pd),
                         {{DNNL_ARG_SRC, L.src}, {DNNL_ARG_WEIGHTS, L.w}, {DNNL_ARG_BIAS, L.b}, {DNNL_ARG_DST, L.dst}},
                         what + " (+relu), weights " + layout(L.w.get_desc()));
                const dims pool_dims = {N, OC, L.dst_dims[2] / 2, L.dst_dims[3] / 2};
                dnnl::pooling_forward::desc pd(prop, dnnl::algorithm::pooling_max, L.conv_pd.dst_desc(), any(pool_dims), {2, 2},
                                               {2, 2}, {0, 0}, {0, 0});
                L.pool_pd = dnnl::pooling_forward::primitive_desc(pd, cpu_engine());
                L.pool_dst = memory(L.pool_pd.dst_desc(), cpu_engine());
                std::unordered_map<int, memory> args{{DNNL_ARG_SRC, L.dst}, {DNNL_ARG_DST, L.pool_dst}};
                if (training) {
                    L.ws = memory(L.pool_pd.workspace_desc(), cpu_engine());
                    args.insert({DNNL_ARG_WORKSPACE, L.ws});
                }
                fwd_.add(dnnl::pooling_forward(L.pool_pd), std::move(args), (i == 0 ? "pool1" : "pool2") + std::string(" forward"));
                cur = L.pool_dst;
            } else {  // dense [in,out]: an inner product over logical weights {out, in} ("io")
                const std::int64_t in = p.w_shape[0], out = p.w_shape[1];
                if (L.src_dims.size() == 4) {
                    // LeNet's fc1 reads pool2's [N,16,5,5] directly: TF's flatten index (h*5+w)*16+c
                    // makes its [400,120] rows exactly oneDNN's 4-D weights {120,16,5,5} in "hwio".
                    L.w_dims = {out, L.src_dims[1], L.src_dims[2], L.src_dims[3]};
                    L.user_w_md = md(L.w_dims, tag::hwio);
                } else {
                    L.w_dims = {out, in};
                    L.user_w_md = md(L.w_dims, tag::io);
                }
                L.dst_dims = {N, out};
                dnnl::inner_product_forward::desc d(prop, any(L.src_dims), any(L.w_dims), md({out}, tag::x), any(L.dst_dims));
                L.ip_pd = dnnl::inner_product_forward::primitive_desc(d, relu_attr(L.relu), cpu_engine());
                L.src = fwd_.as(cur, L.ip_pd.src_desc(), L.name + " src");
                L.w = reorder_now(wrap(L.user_w_md, p.w), L.ip_pd.weights_desc(), stream_);
                L.b = reorder_now(wrap(md({out}, tag::x), p.b), L.ip_pd.bias_desc(), stream_);
                L.dst = memory(L.ip_pd.dst_desc(), cpu_engine());
                fwd_.add(dnnl::inner_product_forward(L.ip_pd),
                         {{DNNL_ARG_SRC, L.src}, {DNNL_ARG_WEIGHTS, L.w}, {DNNL_ARG_BIAS, L.b}, {DNNL_ARG_DST, L.dst}},
                         what + (L.relu ? " (+relu)" : "") + ", weights " + layout(L.w.get_desc()));
                cur = L.dst;
            }
            layers_.push_back(std::move(L));
        }
        logits_ = fwd_.as(cur, md({N, 10}, tag::nc), "logits");
    }

    /// Runs the forward program on the caller's input (whose buffer the program reads in place
    /// where its layout already suits, else reorders from).
    void run_forward(const float* x) {
        x_.set_data_handle(const_cast<float*>(x));
        fwd_.run(stream_);
    }

    model_kind kind_;
    std::int64_t batch_;
    int threads_;
    dnnl::stream stream_;
    memory x_, logits_;
    std::vector<layer> layers_;
    program fwd_, bwd_;
};

}  // namespace detail

/// Inference: logits [N,10] of an MLP or LeNet at a fixed batch.
///
///   onednn::set_threads(2);
///   onednn::model m(onednn::model_kind::mlp, {{w0, {784,512}, b0}, {w1, {512,512}, b1}, {w2, {512,10}, b2}}, 128);
///   const float* logits = m.forward(x);   // x: [128,784]; logits: [128,10], valid until the next call
class model : public detail::net {
public:
    model(model_kind kind, const std::vector<layer_params>& params, std::int64_t batch) : net(kind, params, batch, false) {}

    /// One forward pass of the batch. x: [N,784] or [N,28,28,1] NHWC, plain float32. Returns the
    /// plain row-major [N,10] logits (owned by the model, overwritten by the next call).
    const float* forward(const float* x) {
        check_threads("model::forward");
        detail::guard("model::forward", [&] {
            run_forward(x);
            stream_.wait();
        });
        return detail::data_of(logits_);
    }
};

/// Training: SGD steps on mean softmax cross-entropy with one-hot (or any) labels y [N,10].
///
///   onednn::trainer t(onednn::model_kind::lenet, params, 128, 0.01f);
///   t.step(x, y);  float l = t.loss();  std::vector<float> w0 = t.weights(0);
class trainer : public detail::net {
public:
    trainer(model_kind kind, const std::vector<layer_params>& params, std::int64_t batch, float learning_rate)
        : net(kind, params, batch, true), lr_(learning_rate) {
        detail::guard("building the backward primitives", [&] { build_backward(); });
    }

    /// Forward (training), loss, backward, update of every weight and bias. x as model::forward;
    /// y: [N,10] labels (rows summing to 1).
    void step(const float* x, const float* y) {
        check_threads("trainer::step");
        detail::guard("trainer::step", [&] {
            run_forward(x);
            stream_.wait();
            loss_ = softmax_xent(y);
            bwd_.run(stream_);
            stream_.wait();
        });
    }

    /// Mean cross-entropy of the batch before the last step's update.
    float loss() const { return loss_; }
    /// The last step's logits [N,10] (before its update).
    const float* logits() const { return detail::data_of(logits_); }
    float learning_rate() const { return lr_; }

    /// Layer i's current weights in TF's layout (dense [in,out], conv HWIO).
    std::vector<float> weights(std::size_t i) {
        const auto& L = layers_.at(i);
        std::vector<float> r(L.user_w_md.get_size() / sizeof(float));
        detail::guard("trainer::weights", [&] {
            detail::memory from = L.w, dst = detail::wrap(L.user_w_md, r.data());
            dnnl::reorder(from, dst).execute(stream_, from, dst);
            stream_.wait();
        });
        return r;
    }
    /// Layer i's current bias [out].
    std::vector<float> bias(std::size_t i) {
        const auto& L = layers_.at(i);
        const float* p = detail::data_of(L.b);
        return std::vector<float>(p, p + L.w_dims[0]);
    }

private:
    float softmax_xent(const float* y) {
        const auto n = static_cast<std::size_t>(batch_);
        const float* z = detail::data_of(logits_);
        float* g = detail::data_of(grad_);
        const double inv_n = 1.0 / static_cast<double>(n);
        double total = 0;
        for (std::size_t r = 0; r < n; ++r) {
            const float* zr = z + r * 10;
            const float* yr = y + r * 10;
            float* gr = g + r * 10;
            const double m = *std::max_element(zr, zr + 10);
            double sum = 0;
            for (int j = 0; j < 10; ++j) sum += std::exp(static_cast<double>(zr[j]) - m);
            const double lse = m + std::log(sum);
            for (int j = 0; j < 10; ++j) {
                total += static_cast<double>(yr[j]) * (lse - static_cast<double>(zr[j]));
                gr[j] = static_cast<float>((std::exp(static_cast<double>(zr[j]) - lse) - static_cast<double>(yr[j])) * inv_n);
            }
        }
        return static_cast<float>(total * inv_n);
    }

    /// The primitive descriptor for `first` when an implementation other than oneDNN's reference
    /// one takes it, else for `fallback`.
    template <class PD, class D, class Hint>
    static PD prefer(const D& first, const D& fallback, const Hint& hint) {
        PD pd(first, detail::cpu_engine(), hint, true);
        if (pd && std::string(pd.impl_info_str()).rfind("ref", 0) != 0) return pd;
        return PD(fallback, detail::cpu_engine(), hint);
    }

    void build_backward() {
        using namespace dnnl;
        using detail::any;
        using detail::md;
        using detail::memory;
        using detail::tag;
        auto& eng = detail::cpu_engine();
        grad_ = memory(md({batch_, 10}, tag::nc), eng);
        detail::program updates;
        memory gd = grad_;  // gradient of the loss w.r.t. the current layer's output (after its pool)
        for (std::size_t k = layers_.size(); k-- > 0;) {
            auto& L = layers_[k];
            if (L.pool) {
                pooling_backward::desc d(algorithm::pooling_max, L.dst.get_desc(), L.pool_dst.get_desc(), {2, 2}, {2, 2}, {0, 0},
                                         {0, 0});
                pooling_backward::primitive_desc pd(d, eng, L.pool_pd);
                memory dd = bwd_.as(gd, pd.diff_dst_desc(), L.name + " pool diff_dst");
                memory ds(pd.diff_src_desc(), eng);
                bwd_.add(pooling_backward(pd), {{DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_DIFF_SRC, ds}, {DNNL_ARG_WORKSPACE, L.ws}},
                         L.name + " pool backward");
                gd = ds;
            }
            if (L.relu) {  // ReLU was the forward primitive's post-op: its mask comes from dst > 0
                eltwise_forward::primitive_desc hint(
                    eltwise_forward::desc(prop_kind::forward_training, algorithm::eltwise_relu_use_dst_for_bwd, L.dst.get_desc()), eng);
                eltwise_backward::desc d(algorithm::eltwise_relu_use_dst_for_bwd, L.dst.get_desc(), L.dst.get_desc());
                eltwise_backward::primitive_desc pd(d, eng, hint);
                memory dd = bwd_.as(gd, pd.diff_dst_desc(), L.name + " relu diff_dst");
                memory ds(pd.diff_src_desc(), eng);
                bwd_.add(eltwise_backward(pd), {{DNNL_ARG_DST, L.dst}, {DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_DIFF_SRC, ds}},
                         L.name + " relu backward");
                gd = ds;
            }
            memory dw, db, diff_src;
            const detail::dims bias_dims = {L.w_dims[0]};
            if (L.conv) {
                convolution_backward_weights::desc wd(algorithm::convolution_direct, any(L.src_dims), any(L.w_dims), md(bias_dims, tag::x),
                                                      any(L.dst_dims), L.strides, L.pad_l, L.pad_r);
                convolution_backward_weights::primitive_desc wpd(wd, eng, L.conv_pd);
                memory src = bwd_.as(L.src, wpd.src_desc(), L.name + " bwd_weights src");
                memory dd = bwd_.as(gd, wpd.diff_dst_desc(), L.name + " bwd_weights diff_dst");
                dw = memory(wpd.diff_weights_desc(), eng);
                db = memory(wpd.diff_bias_desc(), eng);
                bwd_.add(convolution_backward_weights(wpd),
                         {{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_DIFF_WEIGHTS, dw}, {DNNL_ARG_DIFF_BIAS, db}},
                         L.name + " backward_weights");
                if (k > 0) {
                    convolution_backward_data::desc dd_desc(algorithm::convolution_direct, any(L.src_dims), any(L.w_dims),
                                                            any(L.dst_dims), L.strides, L.pad_l, L.pad_r);
                    convolution_backward_data::primitive_desc dpd(dd_desc, eng, L.conv_pd);
                    memory w = bwd_.as(L.w, dpd.weights_desc(), L.name + " bwd_data weights");
                    memory d2 = bwd_.as(gd, dpd.diff_dst_desc(), L.name + " bwd_data diff_dst");
                    diff_src = memory(dpd.diff_src_desc(), eng);
                    bwd_.add(convolution_backward_data(dpd), {{DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DIFF_DST, d2}, {DNNL_ARG_DIFF_SRC, diff_src}},
                             L.name + " backward_data");
                }
            } else {
                // Weight gradients straight in the weights' layout where a non-reference
                // implementation takes it (the gemm one does: no reorder before the update), else any.
                auto wpd = prefer<inner_product_backward_weights::primitive_desc>(
                    inner_product_backward_weights::desc(any(L.src_dims), L.w.get_desc(), md(bias_dims, tag::x), any(L.dst_dims)),
                    inner_product_backward_weights::desc(any(L.src_dims), any(L.w_dims), md(bias_dims, tag::x), any(L.dst_dims)), L.ip_pd);
                memory src = bwd_.as(L.src, wpd.src_desc(), L.name + " bwd_weights src");
                memory dd = bwd_.as(gd, wpd.diff_dst_desc(), L.name + " bwd_weights diff_dst");
                dw = memory(wpd.diff_weights_desc(), eng);
                db = memory(wpd.diff_bias_desc(), eng);
                bwd_.add(inner_product_backward_weights(wpd),
                         {{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_DIFF_WEIGHTS, dw}, {DNNL_ARG_DIFF_BIAS, db}},
                         L.name + " backward_weights");
                if (k > 0) {
                    // The forward's weights as they are where a non-reference implementation reads
                    // them (gemm transposes for free), else any (and a reorder per step).
                    auto dpd = prefer<inner_product_backward_data::primitive_desc>(
                        inner_product_backward_data::desc(any(L.src_dims), L.w.get_desc(), any(L.dst_dims)),
                        inner_product_backward_data::desc(any(L.src_dims), any(L.w_dims), any(L.dst_dims)), L.ip_pd);
                    memory w = bwd_.as(L.w, dpd.weights_desc(), L.name + " bwd_data weights");
                    memory d2 = bwd_.as(gd, dpd.diff_dst_desc(), L.name + " bwd_data diff_dst");
                    diff_src = memory(dpd.diff_src_desc(), eng);
                    bwd_.add(inner_product_backward_data(dpd), {{DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DIFF_DST, d2}, {DNNL_ARG_DIFF_SRC, diff_src}},
                             L.name + " backward_data");
                }
            }
            // SGD, after every gradient is computed (TF's ApplyGradientDescent): w = 1*w + (-lr)*dw
            // in place, with dw reordered into the weights' layout where backward_weights chose another.
            memory dw_w = bwd_.as(dw, L.w.get_desc(), L.name + " diff_weights");
            memory db_b = bwd_.as(db, L.b.get_desc(), L.name + " diff_bias");
            for (auto [p, d, what] : {std::tuple{L.w, dw_w, "weights"}, std::tuple{L.b, db_b, "bias"}}) {
                sum::primitive_desc spd(p.get_desc(), {1.f, -lr_}, {p.get_desc(), d.get_desc()}, eng);
                updates.add(sum(spd), {{DNNL_ARG_DST, p}, {DNNL_ARG_MULTIPLE_SRC, p}, {DNNL_ARG_MULTIPLE_SRC + 1, d}},
                            L.name + " sgd " + what);
            }
            gd = diff_src;
        }
        bwd_.append(std::move(updates));
    }

    float lr_;
    float loss_ = 0;
    detail::memory grad_;  // (softmax(logits) - y) / N, plain [N,10]
};

// ---------------------------------------------------------------- single ops

/// C[M,N] = A[M,K] x B[K,N], all plain row-major float32; B reordered once into the layout the
/// matmul primitive prefers.
class matmul {
public:
    matmul(const matmul&) = delete;
    matmul& operator=(const matmul&) = delete;
    matmul(matmul&&) = default;
    matmul& operator=(matmul&&) = default;

    matmul(std::int64_t m, std::int64_t k, std::int64_t n, const float* b) : threads_(threads()) {
        using detail::md;
        using detail::tag;
        detail::guard("building a matmul", [&] {
            stream_ = dnnl::stream(detail::cpu_engine());
            dnnl::matmul::desc d(md({m, k}, tag::ab), detail::any({k, n}), md({m, n}, tag::ab));
            pd_ = dnnl::matmul::primitive_desc(d, detail::cpu_engine());
            a_ = dnnl::memory(pd_.src_desc(), detail::cpu_engine(), nullptr);
            b_ = detail::reorder_now(detail::wrap(md({k, n}, tag::ab), b), pd_.weights_desc(), stream_);
            c_ = dnnl::memory(pd_.dst_desc(), detail::cpu_engine());
            prim_ = dnnl::matmul(pd_);
        });
    }
    /// C for this A (A: [M,K] row-major); C is owned, overwritten by the next call.
    const float* run(const float* a) {
        if (threads() != threads_) detail::fail("matmul::run", "built for " + std::to_string(threads_) + " threads, called with " + std::to_string(threads()));
        detail::guard("matmul::run", [&] {
            a_.set_data_handle(const_cast<float*>(a));
            prim_.execute(stream_, {{DNNL_ARG_SRC, a_}, {DNNL_ARG_WEIGHTS, b_}, {DNNL_ARG_DST, c_}});
            stream_.wait();
        });
        return detail::data_of(c_);
    }
    std::string impl() const { return pd_.impl_info_str(); }
    std::string weights_layout() const { return detail::layout(b_.get_desc()); }

private:
    int threads_;
    dnnl::stream stream_;
    dnnl::matmul::primitive_desc pd_;
    dnnl::primitive prim_;
    dnnl::memory a_, b_, c_;
};

/// TF Conv2D, stride 1, NHWC x HWIO -> NHWC (SAME or VALID), optional bias and fused ReLU; weights
/// reordered once; the input and output are reordered per run where the primitive wants another
/// layout (as TF does at its graph's boundary).
class conv2d {
public:
    conv2d(const conv2d&) = delete;
    conv2d& operator=(const conv2d&) = delete;
    conv2d(conv2d&&) = default;
    conv2d& operator=(conv2d&&) = default;

    conv2d(std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c, std::int64_t oc, std::int64_t k, bool same,
           const float* w_hwio, const float* bias = nullptr, bool relu = false)
        : threads_(threads()) {
        using detail::any;
        using detail::md;
        using detail::tag;
        const std::int64_t pl = same ? (k - 1) / 2 : 0, pr = same ? k - 1 - pl : 0;
        oh_ = h + pl + pr - k + 1;
        ow_ = w + pl + pr - k + 1;
        detail::guard("building a conv2d", [&] {
            auto& eng = detail::cpu_engine();
            stream_ = dnnl::stream(eng);
            const detail::dims src_dims{n, c, h, w}, w_dims{oc, c, k, k}, dst_dims{n, oc, oh_, ow_};
            const auto bias_md = bias != nullptr ? md({oc}, tag::x) : dnnl::memory::desc();
            dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, any(src_dims),
                                              any(w_dims), bias_md, any(dst_dims), {1, 1}, {pl, pl}, {pr, pr});
            dnnl::convolution_forward::primitive_desc pd(d, detail::relu_attr(relu), eng);
            impl_ = pd.impl_info_str();
            // C = 1: NHWC's bytes are NCHW's; describe them as nchw (see net::build_forward).
            x_ = dnnl::memory(md(src_dims, c == 1 ? tag::nchw : tag::nhwc), eng, nullptr);
            dnnl::memory src = prog_.as(x_, pd.src_desc(), "x");
            dnnl::memory wm = detail::reorder_now(detail::wrap(md(w_dims, tag::hwio), w_hwio), pd.weights_desc(), stream_);
            dnnl::memory dst(pd.dst_desc(), eng);
            std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, dst}};
            if (bias != nullptr) args.insert({DNNL_ARG_BIAS, detail::reorder_now(detail::wrap(bias_md, bias), pd.bias_desc(), stream_)});
            prog_.add(dnnl::convolution_forward(pd), std::move(args), "conv");
            y_ = prog_.as(dst, md(dst_dims, oc == 1 ? tag::nchw : tag::nhwc), "y");
        });
    }
    /// y [N,OH,OW,OC] NHWC for this x [N,H,W,C] NHWC; y is owned, overwritten by the next call.
    const float* run(const float* x) {
        if (threads() != threads_) detail::fail("conv2d::run", "built for " + std::to_string(threads_) + " threads, called with " + std::to_string(threads()));
        detail::guard("conv2d::run", [&] {
            x_.set_data_handle(const_cast<float*>(x));
            prog_.run(stream_);
            stream_.wait();
        });
        return detail::data_of(y_);
    }
    std::int64_t out_h() const { return oh_; }
    std::int64_t out_w() const { return ow_; }
    std::string impl() const { return impl_; }
    std::string describe() const {
        std::string s;
        for (const auto& nm : prog_.names()) s += nm + "\n";
        return s;
    }

private:
    int threads_;
    std::int64_t oh_ = 0, ow_ = 0;
    std::string impl_;
    dnnl::stream stream_;
    detail::program prog_;
    dnnl::memory x_, y_;
};

// ---------------------------------------------------------------- LSTM

/// An LSTM layer as TensorFlow's BlockLSTM computes it: w [I+H, 4H] (rows: x's I, then h's H;
/// column blocks of H: gates i, c, f, o), b [4H] with forget_bias added to the f gate, a zero
/// initial state, no peepholes, no cell clip; x [T, N, I] time-major. Read during construction
/// only.
struct lstm_params {
    std::int64_t steps = 0, batch = 0, input = 0, units = 0;
    const float* w = nullptr;
    const float* b = nullptr;
    float forget_bias = 1.f;
};

namespace detail {

/// TF's column block for oneDNN's gate g: oneDNN orders an LSTM's gates i, f, c, o; TF i, c, f, o.
constexpr std::int64_t tf_block(std::int64_t g) {
    return g == 1 ? 2 : g == 2 ? 1 : g;
}

/// Rows [r0, r0 + rows) of TF's w as oneDNN's plain ldigo [1, 1, rows, 4, H].
inline std::vector<float> ldigo_of_tf(const float* w, std::int64_t r0, std::int64_t rows,
                                      std::int64_t H) {
    std::vector<float> r(static_cast<std::size_t>(rows * 4 * H));
    for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t g = 0; g < 4; ++g)
            std::copy_n(w + (r0 + i) * 4 * H + tf_block(g) * H, H, r.data() + (i * 4 + g) * H);
    return r;
}

/// The inverse: plain ldigo [1, 1, rows, 4, H] into rows [r0, r0 + rows) of a TF-layout w.
inline void tf_of_ldigo(const float* src, std::int64_t r0, std::int64_t rows, std::int64_t H,
                        float* w) {
    for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t g = 0; g < 4; ++g)
            std::copy_n(src + (i * 4 + g) * H, H, w + (r0 + i) * 4 * H + tf_block(g) * H);
}

/// The dims of an LSTM's tensors: x tnc, weights ldigo, bias ldgo, h tnc.
struct lstm_dims {
    dims x, wl, wi, b, h, state;
    explicit lstm_dims(const lstm_params& p)
        : x{p.steps, p.batch, p.input},
          wl{1, 1, p.input, 4, p.units},
          wi{1, 1, p.units, 4, p.units},
          b{1, 1, 4, p.units},
          h{p.steps, p.batch, p.units},
          state{1, 1, p.batch, p.units} {}
};

inline void check_lstm(const lstm_params& p, const std::string& what) {
    if (p.steps <= 0 || p.batch <= 0 || p.input <= 0 || p.units <= 0)
        fail(what, "steps, batch, input and units must be positive, got " +
                       shape_str({p.steps, p.batch, p.input, p.units}));
    if (p.w == nullptr || p.b == nullptr) fail(what, "w and b are required");
}

/// The master copies of an LSTM's parameters: plain ldigo / ldgo, TF's gates reordered, the
/// forget bias folded into the f gate's bias.
struct lstm_master {
    memory wl, wi, b;
    lstm_master(const lstm_params& p, const lstm_dims& d) {
        auto& eng = cpu_engine();
        wl = memory(md(d.wl, tag::ldigo), eng);
        wi = memory(md(d.wi, tag::ldigo), eng);
        b = memory(md(d.b, tag::ldgo), eng);
        const auto xl = ldigo_of_tf(p.w, 0, p.input, p.units),
                   hl = ldigo_of_tf(p.w, p.input, p.units, p.units);
        std::copy(xl.begin(), xl.end(), data_of(wl));
        std::copy(hl.begin(), hl.end(), data_of(wi));
        float* pb = data_of(b);
        for (std::int64_t g = 0; g < 4; ++g)
            for (std::int64_t o = 0; o < p.units; ++o)
                pb[g * p.units + o] =
                    p.b[tf_block(g) * p.units + o] + (g == 1 ? p.forget_bias : 0.f);
    }
};

}  // namespace detail

/// LSTM inference (oneDNN's lstm_forward, forward_inference): weights reordered once at setup
/// into the layout the primitive prefers (format_tag::any); per run x [T, N, I] -> h [T, N, H],
/// both plain tnc.
class lstm {
  public:
    lstm(const lstm&) = delete;
    lstm& operator=(const lstm&) = delete;

    explicit lstm(const lstm_params& p) : threads_(threads()) {
        using namespace dnnl;
        using detail::any;
        using detail::md;
        using detail::tag;
        detail::check_lstm(p, "building an lstm");
        detail::guard("building an lstm", [&] {
            auto& eng = detail::cpu_engine();
            stream_ = dnnl::stream(eng);
            const detail::lstm_dims d(p);
            const detail::lstm_master m(p, d);
            lstm_forward::desc desc(
                prop_kind::forward_inference, rnn_direction::unidirectional_left2right,
                md(d.x, tag::tnc), memory::desc(), memory::desc(), any(d.wl), any(d.wi),
                md(d.b, tag::ldgo), md(d.h, tag::tnc), memory::desc(), memory::desc());
            lstm_forward::primitive_desc pd(desc, eng);
            impl_ = pd.impl_info_str();
            args_ = {
                {DNNL_ARG_SRC_LAYER, memory(pd.src_layer_desc(), eng, nullptr)},
                {DNNL_ARG_WEIGHTS_LAYER,
                 detail::reorder_now(m.wl, pd.weights_layer_desc(), stream_)},
                {DNNL_ARG_WEIGHTS_ITER, detail::reorder_now(m.wi, pd.weights_iter_desc(), stream_)},
                {DNNL_ARG_BIAS, detail::reorder_now(m.b, pd.bias_desc(), stream_)},
                {DNNL_ARG_DST_LAYER, memory(pd.dst_layer_desc(), eng)}};
            prim_ = lstm_forward(pd);
        });
    }

    /// h [T, N, H] for this x [T, N, I]; h is owned, overwritten by the next call.
    const float* run(const float* x) {
        if (threads() != threads_)
            detail::fail("lstm::run", "built for " + std::to_string(threads_) +
                                          " threads, called with " + std::to_string(threads()));
        detail::guard("lstm::run", [&] {
            args_.at(DNNL_ARG_SRC_LAYER).set_data_handle(const_cast<float*>(x));
            prim_.execute(stream_, args_);
            stream_.wait();
        });
        return detail::data_of(args_.at(DNNL_ARG_DST_LAYER));
    }
    std::string impl() const { return impl_; }

  private:
    int threads_;
    std::string impl_;
    dnnl::stream stream_;
    dnnl::primitive prim_;
    std::unordered_map<int, dnnl::memory> args_;
};

/// One SGD step of an LSTM layer on loss = Sum(h^2) / N: lstm_forward (forward_training, with its
/// workspace), the loss and its gradient 2h / N in plain C++, lstm_backward, then w -= lr * dw as
/// oneDNN sum primitives in place on plain ldigo / ldgo master weights, which each step reorders
/// into the layouts the forward and the backward primitive prefer (all of it counted in step()).
class lstm_trainer {
  public:
    lstm_trainer(const lstm_trainer&) = delete;
    lstm_trainer& operator=(const lstm_trainer&) = delete;

    lstm_trainer(const lstm_params& p, float learning_rate)
        : p_(p),
          threads_(threads()),
          lr_(learning_rate),
          master_((detail::check_lstm(p, "building an lstm_trainer"), p), detail::lstm_dims(p)) {
        detail::guard("building an lstm_trainer", [&] { build(); });
    }

    /// One training step on x [T, N, I]: forward, backward, update.
    void step(const float* x) {
        run_backward(x, "lstm_trainer::step");
        detail::guard("lstm_trainer::step", [&] {
            update_.run(stream_);
            stream_.wait();
        });
    }
    /// The loss before the last step's update (or of the last gradients() call).
    float loss() const { return loss_; }

    /// d(loss)/dw [I+H, 4H] and d(loss)/db [4H] in TF's layout at the current weights (no update).
    std::pair<std::vector<float>, std::vector<float>> gradients(const float* x) {
        run_backward(x, "lstm_trainer::gradients");
        const std::int64_t I = p_.input, H = p_.units;
        std::vector<float> dw(static_cast<std::size_t>((I + H) * 4 * H)),
            db(static_cast<std::size_t>(4 * H));
        detail::tf_of_ldigo(detail::data_of(dwl_), 0, I, H, dw.data());
        detail::tf_of_ldigo(detail::data_of(dwi_), I, H, H, dw.data());
        const float* g = detail::data_of(db_);
        for (std::int64_t k = 0; k < 4; ++k)
            std::copy_n(g + k * H, H, db.data() + detail::tf_block(k) * H);
        return {std::move(dw), std::move(db)};
    }
    std::string impl() const { return impl_; }

  private:
    void run_backward(const float* x, const char* what) {
        if (threads() != threads_)
            detail::fail(what, "built for " + std::to_string(threads_) + " threads, called with " +
                                   std::to_string(threads()));
        detail::guard(what, [&] {
            x_.set_data_handle(const_cast<float*>(x));
            fwd_.run(stream_);
            stream_.wait();
            // loss = Sum(h^2) / N; d(loss)/dh = 2h / N
            const float* h = detail::data_of(h_);
            float* dh = detail::data_of(dh_);
            const std::size_t n = detail::floats_of(h_);
            const float scale = 2.f / static_cast<float>(p_.batch);
            double total = 0;
            for (std::size_t k = 0; k < n; ++k) {
                total += static_cast<double>(h[k]) * static_cast<double>(h[k]);
                dh[k] = scale * h[k];
            }
            loss_ = static_cast<float>(total / static_cast<double>(p_.batch));
            // the RNN backward primitive adds into its weight gradients
            for (const auto& m : {dwl_, dwi_, db_})
                std::fill_n(detail::data_of(m), detail::floats_of(m), 0.f);
            bwd_.run(stream_);
            stream_.wait();
        });
    }

    void build() {
        using namespace dnnl;
        using detail::any;
        using detail::md;
        using detail::tag;
        auto& eng = detail::cpu_engine();
        stream_ = dnnl::stream(eng);
        const detail::lstm_dims d(p_);
        const auto dir = rnn_direction::unidirectional_left2right;
        const memory::desc none;
        // The zero initial state as a memory of zeros: with src_iter left out (a zero desc, which
        // the API documents as "zero state"), oneDNN 2.6's backward gave weights_iter gradients
        // 17-107% off graft's and libtorch's, while the forward's h and the weights_layer gradients
        // agreed.
        const auto st = md(d.state, tag::ldnc);
        lstm_forward::primitive_desc fpd(
            lstm_forward::desc(prop_kind::forward_training, dir, md(d.x, tag::tnc), st, st,
                               any(d.wl), any(d.wi), md(d.b, tag::ldgo), md(d.h, tag::tnc), none,
                               none),
            eng);
        lstm_backward::primitive_desc bpd(
            lstm_backward::desc(prop_kind::backward, dir, md(d.x, tag::tnc), st, st, any(d.wl),
                                any(d.wi), md(d.b, tag::ldgo), md(d.h, tag::tnc), none, none,
                                md(d.x, tag::tnc), st, st, md(d.wl, tag::ldigo),
                                md(d.wi, tag::ldigo), md(d.b, tag::ldgo), md(d.h, tag::tnc), none,
                                none),
            eng, fpd);
        impl_ = std::string(fpd.impl_info_str()) + " / " + bpd.impl_info_str();
        x_ = memory(fpd.src_layer_desc(), eng, nullptr);
        h_ = memory(fpd.dst_layer_desc(), eng);
        dh_ = memory(bpd.diff_dst_layer_desc(), eng);
        dx_ = memory(bpd.diff_src_layer_desc(), eng);
        dwl_ = memory(bpd.diff_weights_layer_desc(), eng);
        dwi_ = memory(bpd.diff_weights_iter_desc(), eng);
        db_ = memory(bpd.diff_bias_desc(), eng);
        ws_ = memory(fpd.workspace_desc(), eng);
        s0_ = memory(st, eng);
        ds0_ = memory(st, eng);
        dc0_ = memory(st, eng);
        std::fill_n(detail::data_of(s0_), detail::floats_of(s0_), 0.f);
        // each step: the master weights into the forward's and the backward's layouts
        memory fwl = fwd_.as(master_.wl, fpd.weights_layer_desc(), "weights_layer fwd");
        memory fwi = fwd_.as(master_.wi, fpd.weights_iter_desc(), "weights_iter fwd");
        fwd_.add(lstm_forward(fpd),
                 {{DNNL_ARG_SRC_LAYER, x_},
                  {DNNL_ARG_WEIGHTS_LAYER, fwl},
                  {DNNL_ARG_WEIGHTS_ITER, fwi},
                  {DNNL_ARG_BIAS, master_.b},
                  {DNNL_ARG_SRC_ITER, s0_},
                  {DNNL_ARG_SRC_ITER_C, s0_},
                  {DNNL_ARG_DST_LAYER, h_},
                  {DNNL_ARG_WORKSPACE, ws_}},
                 "lstm forward_training");
        memory bwl = bwd_.as(master_.wl, bpd.weights_layer_desc(), "weights_layer bwd");
        memory bwi = bwd_.as(master_.wi, bpd.weights_iter_desc(), "weights_iter bwd");
        bwd_.add(lstm_backward(bpd),
                 {{DNNL_ARG_SRC_LAYER, x_},
                  {DNNL_ARG_WEIGHTS_LAYER, bwl},
                  {DNNL_ARG_WEIGHTS_ITER, bwi},
                  {DNNL_ARG_BIAS, master_.b},
                  {DNNL_ARG_SRC_ITER, s0_},
                  {DNNL_ARG_SRC_ITER_C, s0_},
                  {DNNL_ARG_DIFF_SRC_ITER, ds0_},
                  {DNNL_ARG_DIFF_SRC_ITER_C, dc0_},
                  {DNNL_ARG_DST_LAYER, h_},
                  {DNNL_ARG_DIFF_DST_LAYER, dh_},
                  {DNNL_ARG_WORKSPACE, ws_},
                  {DNNL_ARG_DIFF_SRC_LAYER, dx_},
                  {DNNL_ARG_DIFF_WEIGHTS_LAYER, dwl_},
                  {DNNL_ARG_DIFF_WEIGHTS_ITER, dwi_},
                  {DNNL_ARG_DIFF_BIAS, db_}},
                 "lstm backward");
        for (auto [w, g, what] :
             {std::tuple{master_.wl, dwl_, "weights_layer"},
              std::tuple{master_.wi, dwi_, "weights_iter"}, std::tuple{master_.b, db_, "bias"}}) {
            sum::primitive_desc spd(w.get_desc(), {1.f, -lr_}, {w.get_desc(), g.get_desc()}, eng);
            update_.add(
                sum(spd),
                {{DNNL_ARG_DST, w}, {DNNL_ARG_MULTIPLE_SRC, w}, {DNNL_ARG_MULTIPLE_SRC + 1, g}},
                std::string("sgd ") + what);
        }
    }

    lstm_params p_;
    int threads_;
    float lr_;
    float loss_ = 0;
    detail::lstm_master master_;
    std::string impl_;
    dnnl::stream stream_;
    detail::program fwd_, bwd_, update_;
    detail::memory x_, h_, dh_, dx_, dwl_, dwi_, db_, ws_, s0_, ds0_, dc0_;  // ds0_, dc0_: the initial state's gradients (unread)
};

}  // namespace graft::bench::onednn
