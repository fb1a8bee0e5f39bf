// graft/exec/device.hpp — devices as the executor sees them: TF's device spellings, the backend a
// device kind is run by (graft::cuda installs the CUDA one), a per-session device context (a
// stream), and host copies of tensors that live on a device.
//
//   graft::exec::parse_device("/job:localhost/replica:0/task:0/device:GPU:1")  // {cuda, 1}
//   graft::exec::to_host(t)                   // t itself on the host, else a synchronous copy
//
// This header needs no CUDA: a program without graft::cuda sees no backend for GPUs, and the
// executor's soft placement runs GPU-placed nodes on the CPU.
#pragma once

#include <atomic>
#include <cctype>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"

namespace graft::exec {

/// TF's device spellings -> a device: "/device:GPU:0", "/gpu:0", "GPU:1", "/cpu:0", "/CPU:0",
/// "/job:localhost/replica:0/task:0/device:GPU:0", "/device:GPU:*" (index 0), "gpu" (index 0).
/// Returns nullopt for "" and for a spec that names only a job/replica/task (no device type).
/// Throws invalid_argument_error naming the spec for an unknown device type (TPU, XLA_GPU is
/// taken as GPU) or a malformed index.
inline std::optional<device> parse_device(std::string_view spec) {
    std::string_view s = spec;
    std::string_view type_part;
    // The last "/"-separated component that is not job:/replica:/task: names the device.
    while (!s.empty()) {
        auto slash = s.find('/');
        std::string_view comp = s.substr(0, slash);
        s = slash == std::string_view::npos ? std::string_view{} : s.substr(slash + 1);
        if (comp.empty()) continue;
        auto lower_starts = [&](std::string_view pre) {
            if (comp.size() < pre.size()) return false;
            for (std::size_t i = 0; i < pre.size(); ++i)
                if (std::tolower(static_cast<unsigned char>(comp[i])) != pre[i]) return false;
            return true;
        };
        if (lower_starts("job:") || lower_starts("replica:") || lower_starts("task:")) continue;
        if (lower_starts("device:")) comp.remove_prefix(7);
        type_part = comp;
    }
    if (type_part.empty()) return std::nullopt;
    auto colon = type_part.find(':');
    std::string type(type_part.substr(0, colon));
    for (auto& ch : type) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    device d;
    if (type == "GPU" || type == "XLA_GPU" || type == "CUDA") d.kind = device_kind::cuda;
    else if (type == "CPU" || type == "XLA_CPU") d.kind = device_kind::cpu;
    else {
        throw invalid_argument_error("device '" + std::string(spec) + "': graft runs CPU and GPU devices, not " + type,
                                     {}, "clear the device (import with clear_devices) or place it on /device:CPU:0");
    }
    if (colon != std::string_view::npos) {
        std::string_view idx = type_part.substr(colon + 1);
        if (idx != "*") {
            int v = 0;
            if (idx.empty() || idx.size() > 6) {
                throw invalid_argument_error("device '" + std::string(spec) + "' has a malformed index");
            }
            for (char ch : idx) {
                if (ch < '0' || ch > '9') throw invalid_argument_error("device '" + std::string(spec) + "' has a malformed index");
                v = v * 10 + (ch - '0');
            }
            d.index = v;
        }
    }
    return d;
}

/// What a session keeps per device while it runs: for CUDA one stream with its cuBLAS/cuDNN
/// handles. Kernels placed on the device reach it through kernel_context::device_ctx().
class device_context {
public:
    virtual ~device_context() = default;
    [[nodiscard]] virtual graft::device dev() const = 0;
    /// `t` (on the host or another device) copied onto this device, ordered on this context's
    /// stream. Throws error naming the call on a device failure.
    virtual tensor to_device(const tensor& t) = 0;
    /// Waits for everything queued on this context.
    virtual void synchronize() = 0;
};

/// Runs one device kind: how many devices there are, a context per session, host copies.
class device_backend {
public:
    virtual ~device_backend() = default;
    [[nodiscard]] virtual device_kind kind() const = 0;
    /// Devices present (0 when there is no driver or no device). Never throws.
    [[nodiscard]] virtual int count() const noexcept = 0;
    /// A new context (stream) on device `index`. Throws error when the device cannot be used.
    virtual std::unique_ptr<device_context> make_context(int index) = 0;
    /// A host copy of `t` (which lives on this backend's kind), after the work that writes it.
    virtual tensor to_host(const tensor& t) = 0;
};

namespace device_detail {
inline std::atomic<device_backend*>& backend_slot(device_kind k) {
    static std::atomic<device_backend*> slots[2] = {nullptr, nullptr};
    return slots[static_cast<int>(k) & 1];
}
}  // namespace device_detail

/// Installs the backend for its kind (graft::cuda::install() does this for CUDA). The backend
/// must live for the rest of the program. Never throws.
inline void set_backend(device_backend* b) { device_detail::backend_slot(b->kind()).store(b); }
/// The backend for `k`, or nullptr when none is linked/installed. Never throws.
inline device_backend* find_backend(device_kind k) {
    return k == device_kind::cpu ? nullptr : device_detail::backend_slot(k).load();
}
/// How many devices of kind `k` this process can run on (CPU: 1). Never throws.
inline int device_count(device_kind k) {
    if (k == device_kind::cpu) return 1;
    auto* b = find_backend(k);
    return b ? b->count() : 0;
}

/// `t` when it lives on the host; otherwise a host copy made by its device's backend (after the
/// work queued to produce it). Throws error when no backend for t's device is installed.
inline tensor to_host(const tensor& t) {
    if (!t.valid() || t.on_host()) return t;
    auto* b = find_backend(t.dev().kind);
    if (!b) {
        throw error("tensor " + t.describe() + " lives on " + t.dev().str() + " but no backend for it is installed",
                    {}, "link graft::cuda and call graft::cuda::install()");
    }
    return b->to_host(t);
}

}  // namespace graft::exec
