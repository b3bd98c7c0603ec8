"""A training loop fed by a worker process, for the step findings
(tests/test_report_python_steps.py): a stand-in for PyTorch's DataLoader with
one worker, which makes batches in a process of its own and hands them over a
queue a few ahead, so the loop waits at the line that asks for the next batch.
Usage: step_script.py STEPS SLOW_EVERY_S SLOW_S. The worker makes each batch in
BATCH_S; the first batch it begins SLOW_EVERY_S or more after it started, or
after the last slow batch began, takes SLOW_S more (a log flush or a
checkpoint on a timer; SLOW_S 0: never). A timer that fires halfway through a
batch keeps the slow batches' spacing the same on a loaded machine.
Each step copies its batch to the device, launches two kernels and
synchronises, through ctypes on the runtime (the CPU double), with no NVTX:
the steps are found from the calls. Prints each step's own time as
"step N NS", from one synchronise's return to the next (step 1's from the
synchronise before the loop), as the steps found in the calls are measured,
and "slow" after the steps whose batch was a slow one.
"""
import ctypes
import multiprocessing
import sys
import time

BATCH_S = 0.05
BATCH_BYTES = 4096
PREFETCH = 2  # batches the worker makes ahead, as the DataLoader's prefetch_factor

runtime = ctypes.CDLL("libcudart.so.13")
KERNEL = ctypes.cast(ctypes.CDLL(None).abs, ctypes.c_void_p)
H2D = 1


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


runtime.cudaLaunchKernel.argtypes = [ctypes.c_void_p, Dim3, Dim3, ctypes.c_void_p,
                                     ctypes.c_size_t, ctypes.c_void_p]
runtime.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def check(rc, what):
    if rc != 0:
        sys.exit(f"step_script: {what} returned {rc}")


def worker(batches, steps, slow_every_s, slow_s):
    next_slow = time.monotonic() + slow_every_s
    for _ in range(steps):
        begun = time.monotonic()
        slow = slow_s > 0 and begun >= next_slow
        if slow:
            next_slow = begun + slow_every_s
        time.sleep(BATCH_S + (slow_s if slow else 0))
        batches.put((bytes(BATCH_BYTES), slow))


def train(steps, batches, device):
    grid, block = Dim3(1, 1, 1), Dim3(32, 1, 1)
    check(runtime.cudaDeviceSynchronize(), "cudaDeviceSynchronize")
    last = time.monotonic_ns()
    for n in range(1, steps + 1):
        batch, slow = batches.get()  # site: wait
        check(runtime.cudaMemcpy(device, batch, len(batch), H2D), "cudaMemcpy")
        for _ in range(2):
            check(runtime.cudaLaunchKernel(KERNEL, grid, block, None, 0, None), "launch")
        check(runtime.cudaDeviceSynchronize(), "cudaDeviceSynchronize")
        now = time.monotonic_ns()
        print(f"step {n} {now - last}{' slow' if slow else ''}")
        last = now


def main():
    steps, slow_every_s, slow_s = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    device = ctypes.c_void_p()
    check(runtime.cudaMalloc(ctypes.byref(device), BATCH_BYTES), "cudaMalloc")
    context = multiprocessing.get_context("fork")
    batches = context.Queue(PREFETCH)
    loader = context.Process(target=worker, args=(batches, steps, slow_every_s, slow_s))
    loader.start()
    train(steps, batches, device)
    loader.join()
    check(runtime.cudaFree(device), "cudaFree")


if __name__ == "__main__":
    main()
