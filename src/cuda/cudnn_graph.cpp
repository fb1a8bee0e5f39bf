// cuDNN's graph API for float32 convolutions: see cudnn_graph.hpp.
#include "cudnn_graph.hpp"

#include <cudnn.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "graft/cuda/check.hpp"

namespace graft::cuda::cudnn_graph {

namespace {

/// One backend descriptor, destroyed with its owner.
class desc {
public:
    explicit desc(cudnnBackendDescriptorType_t t) {
        if (cudnnBackendCreateDescriptor(t, &d_) != CUDNN_STATUS_SUCCESS) d_ = nullptr;
    }
    ~desc() {
        if (d_) cudnnBackendDestroyDescriptor(d_);
    }
    desc(const desc&) = delete;
    desc& operator=(const desc&) = delete;
    [[nodiscard]] cudnnBackendDescriptor_t get() const { return d_; }
    [[nodiscard]] bool ok() const { return d_ != nullptr; }

private:
    cudnnBackendDescriptor_t d_ = nullptr;
};

/// Building a plan stops at the first call cuDNN refuses: the problem is then not supported here.
struct refused {};

void must(cudnnStatus_t s) {
    if (s != CUDNN_STATUS_SUCCESS) throw refused{};
}

template <class T>
void set(const desc& d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, std::int64_t count,
         const T* values) {
    if (!d.ok()) throw refused{};
    must(cudnnBackendSetAttribute(d.get(), name, type, count, values));
}

void set_desc(const desc& d, cudnnBackendAttributeName_t name, const desc& value) {
    cudnnBackendDescriptor_t v = value.get();
    set(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v);
}

/// Tensor dims in cuDNN's logical order (n, c, spatial...) with the memory order's strides.
std::unique_ptr<desc> tensor_desc(std::int64_t uid, const std::array<std::int64_t, 4>& dims, bool channels_last,
                                  std::int64_t alignment) {
    auto t = std::make_unique<desc>(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const std::int64_t c = dims[1], h = dims[2], w = dims[3];
    const std::array<std::int64_t, 4> strides =
        channels_last ? std::array<std::int64_t, 4>{h * w * c, 1, w * c, c} : std::array<std::int64_t, 4>{c * h * w, h * w, w, 1};
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    set(*t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32);
    set(*t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data());
    set(*t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data());
    set(*t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    set(*t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
    must(cudnnBackendFinalize(t->get()));
    return t;
}

constexpr std::int64_t uid_x = 1, uid_w = 2, uid_y = 3;

/// An execution plan and the scratch it needs.
struct plan {
    std::unique_ptr<desc> d;
    std::int64_t workspace = 0;
};

/// Largest workspace a plan may ask for (as the legacy path's limit).
constexpr std::int64_t max_workspace = std::int64_t{1} << 30;

/// Whether FFT and Winograd engines are excluded (GRAFT_CUDNN_EXACT=1): their transforms round
/// differently from a direct sum. TensorFlow's and PyTorch's autotuners consider them.
bool exact_only() {
    static const bool on = [] {
        const char* e = std::getenv("GRAFT_CUDNN_EXACT");
        return e && std::string(e) == "1";
    }();
    return on;
}

/// The engine's numerical notes allow it: FP32 arithmetic (no TF32 tensor cores unless allowed, no
/// down-converted inputs or reduced-precision sums), and no FFT or Winograd under exact_only().
bool notes_allow(cudnnBackendDescriptor_t engine, bool tf32) {
    std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> notes{};
    std::int64_t count = 0;
    if (cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                 static_cast<std::int64_t>(notes.size()), &count, notes.data()) != CUDNN_STATUS_SUCCESS) {
        return false;
    }
    for (std::int64_t i = 0; i < count; ++i) {
        switch (notes[static_cast<std::size_t>(i)]) {
            case CUDNN_NUMERICAL_NOTE_TENSOR_CORE:
                if (!tf32) return false;
                break;
            case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS:
            case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION:
                return false;
            case CUDNN_NUMERICAL_NOTE_FFT:
            case CUDNN_NUMERICAL_NOTE_WINOGRAD:
            case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4:
            case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6:
            case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13:
                if (exact_only()) return false;
                break;
            default:
                break;
        }
    }
    return true;
}

/// How a plan is chosen among those cuDNN's heuristics rank: by default the fastest of up to 24, each
/// timed on the step's own buffers the first time a shape runs (as TF's and PyTorch's autotuners do);
/// with GRAFT_CUDNN_AUTOTUNE=0 the first that builds (no trial runs; on the H200 that cost ResNet-18's
/// step 167 ms against 51).
int autotune_mode() {
    static const int mode = [] {
        const char* e = std::getenv("GRAFT_CUDNN_AUTOTUNE");
        return e && std::string(e) == "0" ? 0 : 1;
    }();
    return mode;
}

/// Builds the operation graph of `p`'s pass and the plans its heuristics rank (mode A's list, then
/// the fallback list) and the notes allow, in that order, at most `limit`.
std::vector<plan> build_plans(cudnnHandle_t h, pass ps, const conv_problem& p, std::int64_t alignment,
                              std::size_t limit) {
    const bool cl = p.nhwc;
    auto x = tensor_desc(uid_x, {p.n, p.c, p.h, p.w}, cl, alignment);
    auto w = tensor_desc(uid_w, {p.k, p.c, p.r, p.s}, cl, alignment);
    auto y = tensor_desc(uid_y, {p.n, p.k, p.oh, p.ow}, cl, alignment);

    desc conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    const std::int64_t dims = 2;
    const std::array<std::int64_t, 2> pre{p.pad_top, p.pad_left}, post{p.pad_bottom, p.pad_right},
        strides{p.stride_h, p.stride_w}, dil{p.dilation_h, p.dilation_w};
    set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32);
    set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims);
    set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pre.data());
    set(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, post.data());
    set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, strides.data());
    set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil.data());
    must(cudnnBackendFinalize(conv.get()));

    // Each pass's operation and its attributes for x, w, y, the convolution, alpha and beta.
    struct op_attrs {
        cudnnBackendDescriptorType_t type;
        cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
    };
    static constexpr op_attrs by_pass[3] = {
        {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA},
        {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA},
        {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA},
    };
    const op_attrs& a = by_pass[static_cast<int>(ps)];
    const float alpha = 1.0f, beta = 0.0f;
    auto op = std::make_unique<desc>(a.type);
    set_desc(*op, a.x, *x);
    set_desc(*op, a.w, *w);
    set_desc(*op, a.y, *y);
    set_desc(*op, a.conv, conv);
    set(*op, a.alpha, CUDNN_TYPE_FLOAT, 1, &alpha);
    set(*op, a.beta, CUDNN_TYPE_FLOAT, 1, &beta);
    must(cudnnBackendFinalize(op->get()));

    desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    cudnnBackendDescriptor_t ops = op->get();
    set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &ops);
    set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    must(cudnnBackendFinalize(graph.get()));

    std::vector<plan> plans;
    for (cudnnBackendHeurMode_t hm : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
        desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
        cudnnBackendDescriptor_t g = graph.get();
        set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
        set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &hm);
        if (cudnnBackendFinalize(heur.get()) != CUDNN_STATUS_SUCCESS) continue;
        std::int64_t count = 0;
        if (cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                     &count, nullptr) != CUDNN_STATUS_SUCCESS || count <= 0) {
            continue;
        }
        std::vector<std::unique_ptr<desc>> cfgs;
        std::vector<cudnnBackendDescriptor_t> raw;
        for (std::int64_t i = 0; i < count; ++i) {
            cfgs.push_back(std::make_unique<desc>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
            if (!cfgs.back()->ok()) throw refused{};
            raw.push_back(cfgs.back()->get());
        }
        std::int64_t got = 0;
        if (cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                     &got, raw.data()) != CUDNN_STATUS_SUCCESS) {
            continue;
        }
        for (std::int64_t i = 0; i < got && plans.size() < limit; ++i) {
            desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
            cudnnBackendDescriptor_t e = engine.get();
            std::int64_t one = 0;
            if (!engine.ok() || cudnnBackendGetAttribute(raw[static_cast<std::size_t>(i)], CUDNN_ATTR_ENGINECFG_ENGINE,
                                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &one, &e) != CUDNN_STATUS_SUCCESS ||
                !notes_allow(e, p.tf32)) {
                continue;
            }
            plan pl;
            pl.d = std::make_unique<desc>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
            cudnnBackendDescriptor_t cfg = raw[static_cast<std::size_t>(i)];
            if (!pl.d->ok() ||
                cudnnBackendSetAttribute(pl.d->get(), CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h) !=
                    CUDNN_STATUS_SUCCESS ||
                cudnnBackendSetAttribute(pl.d->get(), CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg) != CUDNN_STATUS_SUCCESS ||
                cudnnBackendFinalize(pl.d->get()) != CUDNN_STATUS_SUCCESS ||
                cudnnBackendGetAttribute(pl.d->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                         &one, &pl.workspace) != CUDNN_STATUS_SUCCESS ||
                pl.workspace > max_workspace) {
                continue;
            }
            plans.push_back(std::move(pl));
        }
    }
    return plans;
}

/// Queues `pl` on the handle's stream with the pass's three buffers.
cudnnStatus_t execute(cudnnHandle_t h, const plan& pl, void* workspace, const void* x, const void* w, const void* y) {
    desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    if (!pack.ok()) return CUDNN_STATUS_ALLOC_FAILED;
    const std::array<std::int64_t, 3> uids{uid_x, uid_w, uid_y};
    std::array<void*, 3> ptrs{const_cast<void*>(x), const_cast<void*>(w), const_cast<void*>(y)};
    cudnnStatus_t s = cudnnBackendSetAttribute(pack.get(), CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3,
                                               uids.data());
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnBackendSetAttribute(pack.get(), CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3,
                                     ptrs.data());
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnBackendSetAttribute(pack.get(), CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
    if (s == CUDNN_STATUS_SUCCESS) s = cudnnBackendFinalize(pack.get());
    if (s == CUDNN_STATUS_SUCCESS) s = cudnnBackendExecute(h, pl.d->get(), pack.get());
    return s;
}

/// The fastest of `plans` on these buffers (each run once to warm up, then timed over three runs),
/// or plans.size() where none ran.
std::size_t fastest(stream& st, cudnnHandle_t h, const std::vector<plan>& plans, const void* x, const void* w,
                    const void* y) {
    auto cs = static_cast<cudaStream_t>(st.native());
    cudaEvent_t t0 = nullptr, t1 = nullptr;
    GRAFT_CUDA_CHECK(cudaEventCreate(&t0));
    GRAFT_CUDA_CHECK(cudaEventCreate(&t1));
    std::size_t best = plans.size();
    float best_ms = -1.0f;
    for (std::size_t i = 0; i < plans.size(); ++i) {
        void* ws = plans[i].workspace ? st.workspace(static_cast<std::size_t>(plans[i].workspace)) : nullptr;
        if (execute(h, plans[i], ws, x, w, y) != CUDNN_STATUS_SUCCESS) continue;
        cudaEventRecord(t0, cs);
        bool ran = true;
        for (int r = 0; r < 3 && ran; ++r) ran = execute(h, plans[i], ws, x, w, y) == CUDNN_STATUS_SUCCESS;
        cudaEventRecord(t1, cs);
        GRAFT_CUDA_CHECK(cudaEventSynchronize(t1));
        float ms = 0.0f;
        if (!ran || cudaEventElapsedTime(&ms, t0, t1) != cudaSuccess) continue;
        if (best_ms < 0.0f || ms < best_ms) best = i, best_ms = ms;
    }
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    return best;
}

}  // namespace

bool enabled() {
    static const bool on = [] {
        const char* e = std::getenv("GRAFT_CUDNN_GRAPH");
        return !(e && std::string(e) == "0");
    }();
    return on;
}

bool run_conv(stream& st, pass ps, const conv_problem& p, const void* x, const void* w, const void* y) {
    auto h = static_cast<cudnnHandle_t>(st.cudnn());
    auto aligned16 = [](const void* q) { return reinterpret_cast<std::uintptr_t>(q) % 16 == 0; };
    const std::int64_t alignment = aligned16(x) && aligned16(w) && aligned16(y) ? 16 : 4;
    // Plans are built on the stream's cuDNN handle and kept per (stream, pass, problem): an entry
    // whose stream has died is stale (its handle is gone; a new stream may reuse the address) and is
    // dropped. An entry with no plan: no engine, the legacy path.
    const std::vector<std::int64_t> key{static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(st.impl().get())),
                                        static_cast<std::int64_t>(ps), p.nhwc, p.n, p.c, p.h, p.w, p.k, p.r, p.s, p.oh,
                                        p.ow, p.pad_top, p.pad_left, p.pad_bottom, p.pad_right, p.stride_h, p.stride_w,
                                        p.dilation_h, p.dilation_w, p.tf32, alignment};
    struct entry {
        std::weak_ptr<stream::state> owner;
        std::shared_ptr<plan> chosen;
    };
    static std::mutex mu;
    static std::map<std::vector<std::int64_t>, entry> cache;
    std::shared_ptr<plan> chosen;
    {
        std::lock_guard<std::mutex> lock(mu);
        auto it = cache.find(key);
        if (it == cache.end() || it->second.owner.expired()) {
            std::erase_if(cache, [](const auto& kv) { return kv.second.owner.expired(); });
            std::vector<plan> plans;
            try {
                plans = build_plans(h, ps, p, alignment, autotune_mode() == 1 ? 24 : 1);
            } catch (const refused&) {
                plans.clear();
            }
            if (!plans.empty()) {
                const std::size_t i = plans.size() > 1 ? fastest(st, h, plans, x, w, y) : 0;
                if (i < plans.size()) chosen = std::make_shared<plan>(std::move(plans[i]));
            }
            it = cache.insert_or_assign(key, entry{st.impl(), chosen}).first;
        }
        chosen = it->second.chosen;
    }
    if (!chosen) return false;
    void* ws = chosen->workspace ? st.workspace(static_cast<std::size_t>(chosen->workspace)) : nullptr;
    GRAFT_CUDNN_CHECK(execute(h, *chosen, ws, x, w, y));
    return true;
}

}  // namespace graft::cuda::cudnn_graph
