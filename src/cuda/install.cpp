// graft::cuda::install(): the CUDA backend for graft::exec (device count, a stream per session and
// device, host copies) and every GPU kernel family, registered once.
#include <mutex>

#include "families.hpp"
#include "graft/cuda/exec.hpp"

namespace graft::cuda {

namespace {
class cuda_backend final : public exec::device_backend {
public:
    [[nodiscard]] device_kind kind() const override { return device_kind::cuda; }
    [[nodiscard]] int count() const noexcept override {
        static const int n = device_count();
        return n;
    }
    std::unique_ptr<exec::device_context> make_context(int index) override { return std::make_unique<context>(index); }
    tensor to_host(const tensor& t) override { return cuda::to_host(t); }
};
}  // namespace

void install() {
    static std::once_flag once;
    std::call_once(once, [] {
        auto& r = exec::kernel_registry::global();  // the CPU kernels first: core reuses some
        families::register_core(r);
        families::register_elementwise(r);
        families::register_reduce(r);
        families::register_array(r);
        families::register_training(r);
        families::register_nn(r);
        static cuda_backend backend;
        exec::set_backend(&backend);
    });
}

}  // namespace graft::cuda
