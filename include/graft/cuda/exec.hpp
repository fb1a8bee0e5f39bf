// graft/cuda/exec.hpp — what a GPU kernel (src/cuda/exec_*.cpp) uses inside graft::exec: the
// session's stream for the kernel's device and output tensors allocated on it.
//
//   r.add(graft::device_kind::cuda, "Relu", [](graft::exec::kernel_context& c) {
//       auto& s = graft::cuda::stream_of(c);
//       graft::tensor x = c.input(0);                         // already on this GPU
//       graft::tensor y = graft::cuda::output_like(c, x);     // device memory from the allocator
//       graft::cuda::launch_unary(...raw pointers..., s.native());
//       c.set_output(0, y);
//   }, graft::cuda::float_kernel());
#pragma once

#include "graft/device/cuda_runtime.hpp"
#include "graft/exec/kernel.hpp"

namespace graft::cuda {

/// The device context graft::cuda makes per session and device: one stream.
class context final : public exec::device_context {
public:
    explicit context(int index) : stream_(index), dev_{device_kind::cuda, index} {}
    [[nodiscard]] graft::device dev() const override { return dev_; }
    tensor to_device(const tensor& t) override { return cuda::to_device(t, stream_); }
    void synchronize() override { stream_.synchronize(); }
    [[nodiscard]] cuda::stream& stream() { return stream_; }

private:
    cuda::stream stream_;
    graft::device dev_;
};

/// The stream of the session for the kernel's device (the kernel must be placed on a GPU).
inline stream& stream_of(exec::kernel_context& c) {
    auto& ctx = c.device_ctx();
    auto* cc = dynamic_cast<context*>(&ctx);
    if (!cc) c.fail("GPU kernel runs without a CUDA context");
    cc->stream().activate();
    return cc->stream();
}

/// A new device tensor for output data of this kernel (contents undefined).
inline tensor output(exec::kernel_context& c, dtype t, const graft::shape& s) { return empty(t, s, stream_of(c)); }
inline tensor output_like(exec::kernel_context& c, const tensor& x) { return output(c, x.type(), x.shape()); }

/// The def of a kernel that handles float32 (and half/bfloat16/float64 when `more` says so) in
/// attr `attr`, reading inputs `host` on the host.
inline exec::kernel_def float_kernel(std::vector<int> host = {}, std::string attr = "T",
                                     std::vector<dtype> types = {dtype::float32}) {
    exec::kernel_def d;
    d.host_inputs = std::move(host);
    d.types = std::move(types);
    d.type_attr = std::move(attr);
    return d;
}

}  // namespace graft::cuda
