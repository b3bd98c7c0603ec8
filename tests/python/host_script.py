"""A training loop with an input pipeline, for the host sampler
(tests/test_report_host.py). Usage: host_script.py MODE STEPS. Each step
takes one batch and synchronises once through ctypes (the CUDA runtime
double; CT_DOUBLE_SYNC_NS sets how long the GPU takes). MODE says where the
batches come from:
  workers-busy  a multiprocessing pool of one worker whose transform burns
                the CPU for TRANSFORM_S: the loop waits for the pipeline;
  workers-io    the same worker sleeps instead, as a slow read does;
  in-thread     the loop runs the transform itself, between its CUDA calls;
  loader-in-thread  the same transform as a dataset's, run by a DataLoader with
                no workers (fake_torch/: a stand-in at the real one's path);
  healthy       a worker with a cheap transform keeps ahead of a loop whose
                synchronise is the slow part;
  churn         threads that come and go by the hundred and pools whose
                workers exit, around each step, for the sampler's bookkeeping;
  storm         STORM threads alive at once, each in Python, through all the
                steps: more than the sampler reads stacks of in one round.
It prints the loop's own CPU time and wall time (the truth for the shares)
as "loop cpu_s wall_s", and in churn mode the threads and workers started.
"""
import contextlib
import ctypes
import multiprocessing
import os
import sys
import threading
import time

TRANSFORM_S = 0.03
STORM = 150


def burn(seconds):
    end = time.perf_counter() + seconds
    total = 0
    while time.perf_counter() < end:
        total += sum(range(2000))  # site: transform
    return total


def slow_read(seconds):
    time.sleep(seconds)  # site: read
    return 0


def transform(i):
    return burn(TRANSFORM_S)


def read(i):
    return slow_read(TRANSFORM_S)


def cheap(i):
    return burn(0.001)


class Dataset:
    def __init__(self, steps):
        self.steps = steps

    def __len__(self):
        return self.steps

    def __getitem__(self, i):
        return transform(i)


def batches(mode, steps, pool):
    if mode == "in-thread":
        return (transform(i) for i in range(steps))
    if mode == "loader-in-thread":
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_torch"))
        from torch.utils.data.dataloader import DataLoader
        return DataLoader(Dataset(steps))
    work = {"workers-busy": transform, "workers-io": read, "healthy": cheap}[mode]
    return pool.imap(work, range(steps))


def churn(steps, sync):
    threads = workers = 0
    for _ in range(steps):
        started = [threading.Thread(target=burn, args=(0.002,)) for _ in range(20)]
        for t in started:
            t.start()
        with multiprocessing.get_context("fork").Pool(2) as pool:
            pool.map(burn, [0.15] * 8)  # workers that live for a few scans, then exit
        for t in started:
            t.join()
        threads += len(started)
        workers += 2
        sync()
    print("churn", threads, workers)


def storm(steps, sync):
    done = threading.Event()

    def idle():
        while not done.wait(0.005):  # in Python, without holding the GIL long
            pass
    started = [threading.Thread(target=idle) for _ in range(STORM)]
    for t in started:
        t.start()
    for _ in range(steps):
        time.sleep(0.01)
        sync()
    done.set()
    for t in started:
        t.join()
    print("storm", len(started))


def run(mode, steps):
    cudart = ctypes.CDLL("libcudart.so.13")
    sync = cudart.cudaDeviceSynchronize
    sync()
    cpu, wall = time.thread_time(), time.perf_counter()
    if mode in ("churn", "storm"):
        {"churn": churn, "storm": storm}[mode](steps, sync)
        return
    pooled = mode != "loader-in-thread"  # a DataLoader without workers has no pool
    with multiprocessing.get_context("fork").Pool(1) if pooled else contextlib.nullcontext() as pool:
        for _ in batches(mode, steps, pool):  # site: wait
            if sync() != 0:  # site: step
                sys.exit("a synchronize failed")
    print("loop", time.thread_time() - cpu, time.perf_counter() - wall)


if __name__ == "__main__":
    run(sys.argv[1], int(sys.argv[2]))
