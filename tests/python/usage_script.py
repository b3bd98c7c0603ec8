"""A training-loop stand-in that reaches the CUDA runtime from Python, for the
usage findings' call sites (tests/test_report_usage_findings.py). Usage:
usage_script.py ctypes|extension STEPS [EXTENSION_DIR]. Each step synchronises
once, through ctypes (which releases the GIL around the call) or through the
small C extension tests/python/cuext.c (which releases it itself), so the
tracer reads this thread's frames while the GIL is not held. The lines the
report must name carry a "site:" comment.
"""
import ctypes
import sys


class Trainer:
    def __init__(self, sync):
        self.sync = sync

    def step(self):
        return self.sync()  # site: step


def run(how, steps, extension_dir=None):
    if how == "ctypes":
        cudart = ctypes.CDLL("libcudart.so.13")
        sync = cudart.cudaDeviceSynchronize
    else:
        sys.path.insert(0, extension_dir)
        import cuext
        sync = cuext.synchronize
    trainer = Trainer(sync)
    for _ in range(steps):
        if trainer.step() != 0:
            sys.exit("a synchronize failed")


if __name__ == "__main__":
    run(sys.argv[1], int(sys.argv[2]), *sys.argv[3:])
