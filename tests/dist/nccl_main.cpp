// test_dist_nccl: the NCCL communicator on GPUs, one rank per GPU (ctest runs it under mpirun -np 1;
// on a machine with N GPUs run it with -np N by hand). Skips with a message where there is no GPU.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "graft/device/cuda_runtime.hpp"
#include "graft/dist/nccl.hpp"

namespace gd = graft::dist;

int main(int argc, char** argv) {
    auto mpi = gd::init_mpi(&argc, &argv);
    if (graft::cuda::device_count() == 0) {
        std::printf("SKIP: no CUDA device: the NCCL communicator is compiled but not run here\n");
        return 0;
    }
    int failures = 0;
    auto check = [&](bool ok, const std::string& what) {
        if (!ok) {
            ++failures;
            std::printf("FAIL rank %d: %s\n", mpi->comm()->rank(), what.c_str());
        }
    };
    try {
        auto nccl = std::make_shared<gd::nccl_communicator>(*mpi->comm());
        const int r = nccl->rank(), n = nccl->size();
        graft::cuda::stream s(nccl->device());
        std::vector<float> v(1 << 20);
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(r + 1) * float(i % 97);
        auto dev = graft::cuda::to_device(graft::tensor::from_vector<float>({static_cast<std::int64_t>(v.size())}, v), s);
        s.synchronize();
        nccl->allreduce(dev, gd::reduce_op::sum, "sum");
        auto host = graft::cuda::to_host(dev);
        const float tri = float(n * (n + 1) / 2);
        bool ok = true;
        for (std::size_t i = 0; i < v.size(); ++i) ok &= host.data<float>()[i] == tri * float(i % 97);
        check(ok, "allreduce sum of device tensors");
        nccl->allreduce(dev, gd::reduce_op::mean, "mean");
        host = graft::cuda::to_host(dev);
        check(host.data<float>()[5] == tri * 5.0f / float(n), "allreduce mean (ncclAvg)");
        auto b = graft::cuda::to_device(graft::tensor::from_vector<float>({4}, {float(r), float(r), float(r), float(r)}), s);
        s.synchronize();
        nccl->broadcast(b, n - 1, "b");
        check(graft::cuda::to_host(b).data<float>()[3] == float(n - 1), "broadcast from the last rank");
        auto hostside = graft::tensor::from_vector<float>({2}, {1.0f, 2.0f});
        nccl->allreduce(hostside, gd::reduce_op::sum, "host");
        check(hostside.data<float>()[1] == 2.0f * float(n), "host tensors through MPI");
        std::printf("rank %d of %d on GPU %d: NCCL checks done, %d failure(s)\n", r, n, nccl->device(), failures);
    } catch (const std::exception& e) {
        std::printf("FAIL: %s\n", e.what());
        return 1;
    }
    return failures ? 1 : 0;
}
