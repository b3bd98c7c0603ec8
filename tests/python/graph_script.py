"""A CUDA graph captured from Python, as torch.cuda.graph captures a step: the capture begins at
one line (site: begin), the step's five kernel launches are made at another (site: launch), and
the graph is then replayed REPLAYS times (argv[1]). Through ctypes on the runtime (the CPU double
in the tests); any host function pointer serves as a kernel there."""
import ctypes
import sys

runtime = ctypes.CDLL("libcudart.so.13")
KERNEL = ctypes.cast(ctypes.CDLL(None).abs, ctypes.c_void_p)


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


runtime.cudaLaunchKernel.argtypes = [ctypes.c_void_p, Dim3, Dim3, ctypes.c_void_p,
                                     ctypes.c_size_t, ctypes.c_void_p]


def check(rc, what):
    if rc != 0:
        sys.exit(f"graph_script: {what} returned {rc}")


def step(stream):
    grid, block = Dim3(1, 1, 1), Dim3(32, 1, 1)
    for _ in range(5):
        check(runtime.cudaLaunchKernel(KERNEL, grid, block, None, 0, stream), "launch")  # site: launch


def capture(stream):
    graph = ctypes.c_void_p()
    check(runtime.cudaStreamBeginCapture(stream, 0), "cudaStreamBeginCapture")  # site: begin
    step(stream)
    check(runtime.cudaStreamEndCapture(stream, ctypes.byref(graph)), "cudaStreamEndCapture")
    return graph


def main():
    replays = int(sys.argv[1])
    stream, graph_exec = ctypes.c_void_p(), ctypes.c_void_p()
    check(runtime.cudaStreamCreate(ctypes.byref(stream)), "cudaStreamCreate")
    graph = capture(stream)
    check(runtime.cudaGraphInstantiate(ctypes.byref(graph_exec), graph, ctypes.c_ulonglong(0)),
          "cudaGraphInstantiate")
    for _ in range(replays):
        check(runtime.cudaGraphLaunch(graph_exec, stream), "cudaGraphLaunch")
    check(runtime.cudaStreamSynchronize(stream), "cudaStreamSynchronize")


main()
