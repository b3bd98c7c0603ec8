"""A small PyTorch training loop for the GPU check (tests/gpu/run.sh).

Usage: torch_loop.py MODE WARMUP STEPS [OUT.json]
  plain    eager model, WARMUP steps then STEPS timed ones
  compile  the same model through torch.compile (Triton kernels, launched
           through the driver API)
  profile  eager, with torch.profiler around the STEPS timed steps; writes
           the GPU kernels it saw to OUT.json (run it untraced: a profiler
           takes CUPTI, and cudatrace would hand CUPTI over to it)

Prints one line: the mode, the mean wall time per timed step, the loss.
"""
import json
import sys
import time

import torch


def build(mode):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    run = torch.compile(model) if mode == "compile" else model
    return run, opt


def step(run, opt, x, y):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(run(x), y)
    loss.backward()
    opt.step()
    return loss.item()  # a sync every step, as real loops do


def gpu_kernels(prof):
    """{kernel name: count} of the GPU kernels the profiler saw."""
    counts = {}
    for e in prof.events():
        if str(e.device_type).endswith("CUDA") and not e.name.startswith(("Memcpy", "Memset")):
            counts[e.name] = counts.get(e.name, 0) + 1
    return counts


def main():
    mode, warmup, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    run, opt = build(mode)
    x = torch.randn(64, 256, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    for _ in range(warmup):
        step(run, opt, x, y)
    torch.cuda.synchronize()
    prof = None
    if mode == "profile":
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.__enter__()
    start = time.perf_counter()
    for _ in range(steps):
        loss = step(run, opt, x, y)
    torch.cuda.synchronize()
    per_step_ms = (time.perf_counter() - start) * 1000 / steps
    if prof:
        prof.__exit__(None, None, None)
        with open(sys.argv[4], "w") as f:
            json.dump(gpu_kernels(prof), f, indent=1, sort_keys=True)
    print(f"torch_loop {mode}: {per_step_ms:.3f} ms per step, loss {loss:.4f}")


if __name__ == "__main__":
    main()
