"""A training step that never comes back from its synchronise, for the hang
finding's Python line (tests/test_collector_snapshots.py): the CUDA runtime
double holds cudaDeviceSynchronize until the file CT_DOUBLE_SYNC_BLOCK_FILE
names exists, as a sync on GPU work that never completes waits. A first call
before it gives the thread its ring (a thread's very first call is not yet
marked as in flight). Prints "done" once released."""
import ctypes

runtime = ctypes.CDLL("libcudart.so.13")


def step():
    runtime.cudaDeviceSynchronize()  # site: stuck


runtime.cudaGetDeviceCount(ctypes.byref(ctypes.c_int()))
step()
print("done")
