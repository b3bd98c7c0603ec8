"""A small PyTorch training loop for the GPU check (tests/gpu/run.sh).

Run under libcudatrace.so with torch.profiler active in the same process
(cudatrace does not use CUPTI here, so both can watch the same calls), it
prints the CUDA runtime calls torch.profiler counted, as JSON, for run.sh to
compare with `cudatrace report`. Usage: torch_loop.py STEPS OUT.json
"""
import json
import sys

import torch
from torch.profiler import ProfilerActivity, profile


def main():
    steps, out = int(sys.argv[1]), sys.argv[2]
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 256, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            loss.item()  # a sync every step, as real loops do
        torch.cuda.synchronize()
    counts = {e.key: e.count for e in prof.key_averages() if e.key.startswith("cuda")}
    with open(out, "w") as f:
        json.dump(counts, f, indent=1, sort_keys=True)
    print(f"torch_loop: {steps} steps, loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
