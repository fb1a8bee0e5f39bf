#!/usr/bin/env python3
"""PyTorch (CUDA) on bench_gpu's workloads, same models and shapes, printed like bench_gpu.

Run on the GPU machine next to build/benchmarks/bench_gpu (benchmarks/gpu/run_all.sh does both).
float32 with TF32 off (torch.backends.*.allow_tf32 = False), channels-last for the CNN like TF's NHWC.
"""
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True
dev = torch.device("cuda")


def ms_per(warmup, reps, f):
    for _ in range(warmup):
        f()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        f()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3 / reps


def train_step_ms(model, x_host, y_host, opt, reps):
    def step():
        x = x_host.to(dev, non_blocking=False)
        y = y_host.to(dev, non_blocking=False)
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return ms_per(3, reps, step)


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout, eps=1e-3)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout, eps=1e-3)
        self.sc = None
        if stride != 1 or cin != cout:
            self.sc = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout, eps=1e-3))

    def forward(self, x):
        y = self.b2(self.c2(F.relu(self.b1(self.c1(x)))))
        return F.relu(y + (self.sc(x) if self.sc is not None else x))


class ResNet18(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64, eps=1e-3), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        layers, c = [], 64
        for cout in (64, 128, 256, 512):
            layers += [Block(c, cout, 1 if cout == 64 else 2), Block(cout, cout, 1)]
            c = cout
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(512, 1000)

    def forward(self, x):
        return self.fc(self.layers(self.stem(x)).mean(dim=(2, 3)))


def main():
    print(f"device: {torch.cuda.get_device_name(0)} (torch {torch.__version__})")
    print(f"{'workload':22s} {'pytorch':>12s}")
    mlp = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)).to(dev)
    x = torch.rand(1024, 784)
    y = torch.arange(1024) % 10
    ms = train_step_ms(mlp, x, y, torch.optim.SGD(mlp.parameters(), lr=0.01), 50)
    print(f"{'mlp_train_b1024':22s} {ms:10.3f} ms")

    net = ResNet18().to(dev).to(memory_format=torch.channels_last)
    x = torch.rand(128, 3, 224, 224).contiguous(memory_format=torch.channels_last)
    y = torch.arange(128) % 1000
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    ms = train_step_ms(net, x, y, opt, 10)
    print(f"{'resnet18_train_b128':22s} {ms:10.3f} ms")
    if os.environ.get("TORCH_PROFILE") == "1":  # the kernels by GPU time, over 4 steps (3 warm-up + 1)
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            train_step_ms(net, x, y, opt, 1)
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=30, max_name_column_width=90))

    n = 8192
    a = torch.rand(n, n, device=dev)
    b = torch.rand(n, n, device=dev)
    ms = ms_per(2, 10, lambda: torch.mm(a, b))
    print(f"{'gemm_8192':22s} {ms:10.3f} ms  ({2 * n ** 3 / (ms * 1e-3) / 1e12:.1f} TFLOP/s float32, TF32 off)")

    a16, b16 = a.bfloat16(), b.bfloat16()
    ms = ms_per(3, 20, lambda: torch.mm(a16, b16))
    print(f"{'gemm_8192_bf16':22s} {ms:10.3f} ms  ({2 * n ** 3 / (ms * 1e-3) / 1e12:.1f} TFLOP/s bf16)")

    xs = torch.rand(16)

    def ten():
        t = xs.to(dev)
        for i in range(10):
            t = torch.relu(t) if i % 2 else torch.neg(t)
        return t.cpu()
    ms = ms_per(100, 2000, ten)
    print(f"{'launch_10_nodes':22s} {ms * 1e3:10.1f} us per run (feed + 10 kernels + fetch)")


if __name__ == "__main__":
    main()
